"""Per-group one-sided limits and the dual bounds of many pairs read off a grid of normal quantiles.

OFI's score limits (Tango's, per group, combined by MOVER-D), DI's Miettinen–Nurminen score statistic
and its root-found bounds, MOVER-R from Clopper–Pearson limits, and :class:`_GridBounds`, which makes
every p-value exactly the dual of its interval (docs/methods.md)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import special, stats

from .common import FloatArray


def _mn_z(x1: FloatArray, n1: FloatArray, x2: FloatArray, n2: FloatArray, theta: FloatArray) -> FloatArray:
    """Miettinen–Nurminen score statistic for H0: p1/p2 = theta (decreasing in theta)."""
    big_n = n1 + n2
    a = big_n * theta
    b = -(n1 * theta + x1 + n2 + x2 * theta)
    c = x1 + x2
    disc = np.sqrt(np.maximum(b * b - 4 * a * c, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        p2 = np.where(a > 0, (-b - disc) / (2 * a), 0.0)
        p1 = theta * p2
        var = (p1 * (1 - p1) / n1 + theta ** 2 * p2 * (1 - p2) / n2) * big_n / (big_n - 1)
        diff = x1 / n1 - theta * x2 / n2
        return np.where(var > 0, diff / np.sqrt(var), np.sign(diff) * np.inf)


def _score_bounds(x1: FloatArray, n1: FloatArray, x2: FloatArray, n2: FloatArray, q: float | FloatArray,
                  iterations: int = 60, tol: float = 1e-9) -> tuple[FloatArray, FloatArray]:
    """Roots of z(θ) = ±q in log θ, all pairs and both bounds at once, by the Illinois variant of
    regula falsi on the bracket [1e-10, 1e10] (about a dozen evaluations instead of bisection's 30+).
    ``q``: one quantile for all pairs or one per pair (several levels searched together; each root's
    search is its own, so it does not depend on what else is searched)."""
    shape = x1.shape
    xx1, nn1, xx2, nn2 = (np.concatenate([a.ravel(), a.ravel()]) for a in (x1, n1, x2, n2))
    q_each = np.broadcast_to(np.asarray(q, dtype=float), shape).ravel()
    target = np.concatenate([q_each, -q_each])
    theta, _ = _in_blocks(lambda *a: _score_roots(*a, iterations=iterations, tol=tol), xx1, nn1, xx2, nn2, target)
    low, high = theta[: x1.size].reshape(shape), theta[x1.size:].reshape(shape)
    low = np.where(x1 == 0, 0.0, low)
    high = np.where(x2 == 0, np.inf, high)
    return low, high


def _score_roots(xx1: FloatArray, nn1: FloatArray, xx2: FloatArray, nn2: FloatArray, target: FloatArray,
                 iterations: int, tol: float) -> tuple[FloatArray, FloatArray]:
    """θ with z(θ) = ``target`` for 1-D arrays of one size (:func:`_score_bounds`); the second result is unused."""
    q = np.abs(target)

    def f(u: FloatArray, idx: npt.NDArray[np.intp]) -> FloatArray:
        return np.clip(_mn_z(xx1[idx], nn1[idx], xx2[idx], nn2[idx], np.exp(u)) - target[idx], -1e6, 1e6)

    every = np.arange(target.size)
    # Bracket around the Katz log interval (0.5 added to each count), widened to [1e-10, 1e10]
    # wherever it fails to bracket the root: z decreases in θ, so f(a) >= 0 >= f(b).
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = np.log((xx1 + 0.5) / (nn1 + 0.5)) - np.log((xx2 + 0.5) / (nn2 + 0.5))
        se = np.sqrt(1 / (xx1 + 0.5) - 1 / (nn1 + 0.5) + 1 / (xx2 + 0.5) - 1 / (nn2 + 0.5))
    guess = np.clip(log_ratio - np.sign(target) * abs(q) * se, -22.0, 22.0)
    a, b = np.clip(guess - 0.5 - se, -23.0, 23.0), np.clip(guess + 0.5 + se, -23.0, 23.0)
    fa, fb = f(a, every), f(b, every)
    wide_a, wide_b = fa < 0, fb > 0
    a[wide_a], b[wide_b] = -23.0, 23.0
    fa[wide_a], fb[wide_b] = f(a[wide_a], every[wide_a]), f(b[wide_b], every[wide_b])
    root = np.where(fa <= 0, a, np.where(fb >= 0, b, np.nan))
    # The search keeps only its unsettled elements, packed: each step works on them alone, no gathers.
    active = np.flatnonzero(np.isnan(root))
    a, b, fa, fb = a[active], b[active], fa[active], fb[active]
    x1, n1, x2, n2, goal = xx1[active], nn1[active], xx2[active], nn2[active], target[active]
    side = np.zeros(active.size, dtype=np.int8)
    for _ in range(iterations):
        if active.size == 0:
            break
        c = b - fb * (b - a) / (fb - fa)
        c = np.where(np.isfinite(c) & (c > a) & (c < b), c, 0.5 * (a + b))
        fc = np.clip(_mn_z(x1, n1, x2, n2, np.exp(c)) - goal, -1e6, 1e6)
        left = fc > 0                      # root lies in [c, b]
        right = ~left
        np.copyto(fa, fa / 2, where=side == -1)    # Illinois: the end kept twice running is halved ...
        np.copyto(fb, fb / 2, where=side == 1)
        np.copyto(a, c, where=left)               # ... unless it is the end replaced now
        np.copyto(fa, fc, where=left)
        np.copyto(b, c, where=right)
        np.copyto(fb, fc, where=right)
        side = np.where(left, 1, -1).astype(np.int8)
        done = (np.abs(fc) < 1e-12) | (b - a < tol)
        if done.any():
            root[active[done]] = c[done]
            keep = ~done
            active, a, b, fa, fb, side = active[keep], a[keep], b[keep], fa[keep], fb[keep], side[keep]
            x1, n1, x2, n2, goal = x1[keep], n1[keep], x2[keep], n2[keep], goal[keep]
    root[active] = 0.5 * (a + b)
    theta = np.exp(root)
    return theta, theta


def _mover_ratio(p1: FloatArray, p2: FloatArray, l1: FloatArray, u1: FloatArray, l2: FloatArray, u2: FloatArray,
                 zero1: npt.NDArray[np.bool_], zero2: npt.NDArray[np.bool_]) -> tuple[FloatArray, FloatArray]:
    """MOVER-R bounds of p1/p2 from each rate's limits (Donner & Zou 2012); ``zero1``/``zero2``: no selections."""
    with np.errstate(divide="ignore", invalid="ignore"):
        # Rationalized (A − √(A² − B)) / D = B / (D·(A + √(A² − B))): no 0/0 when u2 reaches 2·p2.
        low = l1 * (2 * p1 - l1) / (
            p1 * p2 + np.sqrt(np.maximum((p1 * p2) ** 2 - l1 * u2 * (2 * p1 - l1) * (2 * p2 - u2), 0)))
        high = (p1 * p2 + np.sqrt(np.maximum((p1 * p2) ** 2 - u1 * l2 * (2 * p1 - u1) * (2 * p2 - l2), 0))) / (
            l2 * (2 * p2 - l2))
        low = np.where(zero1, 0.0, np.where(zero2, l1 / u2, low))
        high = np.where(zero2, np.inf, np.where(zero1, u1 / np.maximum(l2, 1e-300), high))
    return np.maximum(low, 0.0), high

# --------------------------------------------------------------------------- dual bounds of many pairs

#: Per-group one-sided limits are tabulated at z_k = k·Z_STEP, k = 0 … Z_MAX/Z_STEP; a pair's bound is linear in
#: z between grid points, so each p-value is exactly the dual of its interval (p < γ ⟺ the bound at one-sided
#: level γ excludes the null value). p-values below the normal tail at Z_MAX are reported at that floor.
Z_STEP, Z_MAX = 0.05, 8.0
_Z_GRID = np.arange(0.0, Z_MAX + Z_STEP / 2, Z_STEP)
_K = _Z_GRID.size - 1
#: The smallest one-sided p-value the tables resolve (the normal tail beyond Z_MAX, about 6.2e-16).
P_FLOOR = float(stats.norm.sf(Z_MAX))
#: Continuity correction of the per-group score limits for B, in counts: the smallest of 0, ⅛, ¼ and ½ whose
#: exact one-sided misses stay within 0.035 at nominal 0.025 on the coverage grid (docs/methods.md;
#: ``bench/inference_coverage.py --cc`` measures another).
SCORE_CC = 0.25


def _tango_var(fp: FloatArray, fn: FloatArray, n: FloatArray, d: FloatArray) -> FloatArray:
    """Var(FP − FN) under H0: π_FP − π_FN = d at the constrained maximum-likelihood estimate (Tango's score
    statistic for a difference of two cells of one multinomial: the paired-difference structure)."""
    return _TangoVar(fp, fn, n)(d)


class _TangoVar:
    """:func:`_tango_var` of fixed groups at any d: what does not depend on d is computed once (the same
    operations in the same order, so the same bits), for the limits' bisection that asks at 76 values of d."""

    def __init__(self, fp: FloatArray, fn: FloatArray, n: FloatArray) -> None:
        self.n = n
        self.w0 = -fp - fn
        self.w1 = 2 * n - fp + fn
        self.root = 8 * n * fn
        self.denominator = 4 * n

    def __call__(self, d: FloatArray) -> FloatArray:
        w = self.w0 + self.w1 * d
        x = (-w + np.sqrt(np.maximum(w * w + self.root * d * (1 - d), 0.0))) / self.denominator
        x = np.clip(x, np.maximum(0.0, -d), np.maximum((1 - d) / 2, 0.0))
        return np.maximum(self.n * (2 * x + d - d * d), 0.0)


#: Elements per block of the element-wise searches (the limits' bisection, the score roots): a block's arrays
#: stay in the core's cache across the iterations, which makes a search of 10^5 elements about twice as fast as
#: one pass over all of them; each element's search is its own, so blocks change no result.
BLOCK = 16_384


def _in_blocks(search, *arrays: FloatArray) -> tuple[FloatArray, FloatArray]:  # type: ignore[no-untyped-def]
    """``search(*arrays)`` (element-wise, two results) over the flattened, broadcast ``arrays`` a block at a time."""
    arrays = np.broadcast_arrays(*arrays)
    shape = arrays[0].shape
    flat = [np.ravel(a) for a in arrays]
    size = flat[0].size
    if size <= BLOCK:
        first, second = search(*flat)
    else:
        first, second = np.empty(size), np.empty(size)
        for start in range(0, size, BLOCK):
            part = slice(start, start + BLOCK)
            first[part], second[part] = search(*(a[part] for a in flat))
    return first.reshape(shape), second.reshape(shape)


def _b_limits(fp: FloatArray, fn: FloatArray, n: FloatArray, z: FloatArray,
              iterations: int = 38) -> tuple[FloatArray, FloatArray]:
    """One-sided score limits of B = π_FP − π_FN for groups at normal quantiles ``z`` (broadcast together).

    The lower limit is the smallest d with (FP − FN − cc − n·d) ≤ z·sd(d), the upper the largest d with
    (FP − FN + cc − n·d) ≥ −z·sd(d), sd from :func:`_tango_var`, cc = :data:`SCORE_CC`. The statistic is
    monotone in d and sd(d) ≤ √n, so each limit lies within cc/n + z/√n ≤ 3.7 of B̂: bisection there (38
    halvings leave under 2e-11).
    """
    return _in_blocks(lambda *a: _b_limits_block(*a, iterations=iterations), fp, fn, n, z)


def _b_limits_block(fp: FloatArray, fn: FloatArray, n: FloatArray, z: FloatArray,
                    iterations: int) -> tuple[FloatArray, FloatArray]:
    """:func:`_b_limits` of 1-D arrays of one size."""
    diff = fp - fn
    est = diff / n
    reach = SCORE_CC / n + z / np.sqrt(n) + 1e-12
    lo_a, lo_b = np.maximum(est - reach, -1.0), est.copy()
    hi_a, hi_b = est.copy(), np.minimum(est + reach, 1.0)
    var, zz = _TangoVar(fp, fn, n), z * z
    below, above = diff - SCORE_CC, diff + SCORE_CC
    for _ in range(iterations):
        m = (lo_a + lo_b) / 2
        num = below - n * m
        ok = (num > 0) & (num * num > zz * var(m))   # m is still below the limit
        np.copyto(lo_a, m, where=ok)
        np.copyto(lo_b, m, where=~ok)
        m = (hi_a + hi_b) / 2
        num = above - n * m
        ok = (num < 0) & (num * num > zz * var(m))   # m is already above the limit
        np.copyto(hi_b, m, where=ok)
        np.copyto(hi_a, m, where=~ok)
    return lo_a, hi_b


def cell_difference_limits(x: npt.ArrayLike, y: npt.ArrayLike, n: npt.ArrayLike,
                           z: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """One-sided score limits, at normal quantiles ``z``, of π_x − π_y, the difference of two cells of one
    multinomial of ``n`` rows with counts ``x`` and ``y``: a group's B = π_FP − π_FN, or the difference
    between two models' selection rates on the same individuals (x: selected by the first only, y: by the
    second only). Tango's score limits with the continuity correction :data:`SCORE_CC` (see
    :func:`_b_limits`), whose exact coverage docs/methods.md reports.

    >>> low, high = cell_difference_limits(0, 0, 40, 1.96)    # no discordant row among 40
    >>> bool(low[()] < 0 < high[()]) and bool(high[()] > 0.05)
    True
    """
    arrays = [np.asarray(v, dtype=float) for v in (x, y, n, z)]
    return _b_limits(*arrays)


def _cp_limits(x: FloatArray, n: FloatArray, z: FloatArray) -> tuple[FloatArray, FloatArray]:
    """One-sided Clopper–Pearson limits of x/n at normal quantiles ``z`` (broadcast together)."""
    x, n, z = np.broadcast_arrays(x, n, z)
    g = stats.norm.sf(z)
    with np.errstate(invalid="ignore"):
        low = np.where(x <= 0, 0.0, special.betaincinv(np.maximum(x, 1e-300), n - x + 1, g))
        high = np.where(x >= n, 1.0, special.betaincinv(x + 1, np.maximum(n - x, 1e-300), 1 - g))
    return low, high


class _Limits:
    """Each distinct group's one-sided limits at the grid's z values: tabulated once when the groups are few
    against the pairs (an audit's verdicts), else computed for the groups and grid points asked for (a
    simulation, where nearly every pair brings two new groups)."""

    def __init__(self, limits, keys: FloatArray, pairs: int) -> None:  # type: ignore[no-untyped-def]
        self.limits, self.keys = limits, keys
        self.table = keys.shape[0] * _Z_GRID.size <= max(24 * pairs, 400_000)
        if self.table:
            low, high = limits(*(c[:, None] for c in keys.T), _Z_GRID[None, :])
            self.low, self.high = low.ravel(), high.ravel()

    def __call__(self, groups: npt.NDArray[np.intp], k: npt.NDArray[np.intp]) -> tuple[FloatArray, FloatArray]:
        if self.table:
            at = groups * _Z_GRID.size + k
            return self.low[at], self.high[at]
        return self.limits(*(c[groups] for c in self.keys.T), _Z_GRID[k])


def _group_index(*columns: FloatArray) -> tuple[FloatArray, npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """Distinct groups among both sides of the pairs: (rows of distinct values, index of side i, of side j).
    ``columns`` are the i-side columns followed by the j-side ones."""
    half = len(columns) // 2
    side_i = np.stack([c.ravel() for c in columns[:half]], axis=1)
    side_j = np.stack([c.ravel() for c in columns[half:]], axis=1)
    both = np.concatenate([side_i, side_j])
    base = float(both.max(initial=0)) + 1
    if base ** both.shape[1] < 2 ** 52:      # one exact float key per row: hashed, no sort of the pairs
        code = np.zeros(both.shape[0])
        for column in both.T:
            code = code * base + column
        inverse, distinct = pd.factorize(code)
        first = np.empty(distinct.size, dtype=np.intp)
        first[inverse[::-1]] = np.arange(inverse.size - 1, -1, -1)
        keys = both[first]
    else:
        keys, inverse = np.unique(both, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    return keys, inverse[: side_i.shape[0]], inverse[side_i.shape[0]:]


class _GridBounds:
    """Lower and upper bounds of many pairs as functions of z, given at the grid indices by ``at(k, rows, side)``
    (the lower and upper bound of those rows at grid index k; ``side`` "low" or "high" may leave the other
    one out), linear in z between grid points.
    The lower bound falls and the upper rises with z."""

    def __init__(self, at, size: int, log: bool = False, prepare=None) -> None:  # type: ignore[no-untyped-def]
        """``log``: the bounds are positive (a ratio) and linear in z on the log scale, so that swapping the
        two groups gives exactly reciprocal bounds and the same p-values. ``prepare(rows)``, optional: ``at``
        for fixed rows, as a function of (k, side) that gathers what the rows need once (a search asks the
        same rows at many k)."""
        self.size, self.log = size, log
        self._ends: dict[int, tuple[FloatArray, FloatArray]] = {}   # each side's bound at the grid's two ends
        if prepare is None:
            def prepare(rows):  # type: ignore[no-untyped-def]
                return lambda k, side="both": at(k, rows, side)
        if log:
            def log_at(k, rows, side="both"):  # type: ignore[no-untyped-def]
                with np.errstate(divide="ignore"):
                    return tuple(None if b is None else np.log(b) for b in at(k, rows, side))

            def log_prepare(rows):  # type: ignore[no-untyped-def]
                at_k = prepare(rows)

                def log_at_k(k, side="both"):  # type: ignore[no-untyped-def]
                    with np.errstate(divide="ignore"):
                        return tuple(None if b is None else np.log(b) for b in at_k(k, side))
                return log_at_k
            self.at, self.prepare = log_at, log_prepare
        else:
            self.at, self.prepare = at, prepare

    def bounds(self, gamma: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Lower and upper bounds, each one-sided at level 1 − ``gamma`` (a scalar or one value per pair)."""
        z_asked = np.broadcast_to(stats.norm.isf(np.asarray(gamma, dtype=float)), (self.size,))
        z = np.clip(z_asked, 0.0, Z_MAX)
        k = np.minimum(np.floor(z / Z_STEP).astype(np.intp), _K - 1)
        t = z / Z_STEP - k
        rows = np.arange(self.size)
        lo0, hi0 = self.at(k, rows)
        lo1, hi1 = self.at(k + 1, rows)
        with np.errstate(invalid="ignore"):      # an infinite bound (DI with P̂_j = 0) stays infinite
            low = np.where((lo0 == lo1) | (t == 0), lo0, lo0 + t * (lo1 - lo0))
            high = np.where((hi0 == hi1) | (t == 0), hi0, hi0 + t * (hi1 - hi0))
        # Past the grid (a level beyond 1 − P_FLOOR) the tables cannot say: no bound, so no claim.
        beyond = z_asked > Z_MAX
        low, high = np.where(beyond, -np.inf, low), np.where(beyond, np.inf, high)
        return (np.exp(low), np.exp(high)) if self.log else (low, high)

    def p_value(self, null: npt.ArrayLike, side: str) -> FloatArray:
        """One-sided p-value, the dual of :meth:`bounds`: ``side="above"`` tests H0: θ ≤ null (small when the
        lower bound lies above ``null``), ``"below"`` H0: θ ≥ null. At most 0.5; at least :data:`P_FLOOR`."""
        null = np.broadcast_to(np.asarray(null, dtype=float), (self.size,))
        if self.log:
            with np.errstate(divide="ignore"):
                null = np.log(null)
        pick = 0 if side == "above" else 1
        sign = 1.0 if side == "above" else -1.0


        rows = np.arange(self.size)
        if pick not in self._ends:     # the same for every null: computed once per side
            side_name = ("low", "high")[pick]
            self._ends[pick] = (self.at(np.zeros(self.size, dtype=np.intp), rows, side_name)[pick],
                                self.at(np.full(self.size, _K, dtype=np.intp), rows, side_name)[pick])
        first, last = self._ends[pick]
        e0, e_end = sign * (first - null), sign * (last - null)
        p = np.where(e_end > 0, P_FLOOR, 0.5)
        searched = np.flatnonzero((e0 > 0) & (e_end <= 0))
        for start in range(0, searched.size, BLOCK):    # blocks that stay in cache through the search
            todo = searched[start:start + BLOCK]
            at_k, null_todo, side_name = self.prepare(todo), null[todo], ("low", "high")[pick]
            lo, hi = np.zeros(todo.size, dtype=np.intp), np.full(todo.size, _K, dtype=np.intp)
            e_lo, e_hi = e0[todo], e_end[todo]
            while np.any(hi - lo > 1):                  # excess(lo) > 0 >= excess(hi); excess falls with k
                mid = (lo + hi) // 2
                e_mid = sign * (at_k(mid, side_name)[pick] - null_todo)
                above = e_mid > 0
                lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
                e_lo, e_hi = np.where(above, e_mid, e_lo), np.where(above, e_hi, e_mid)
            with np.errstate(invalid="ignore"):
                z = _Z_GRID[lo] + Z_STEP * np.where(np.isinf(e_hi), 0.0, e_lo / (e_lo - e_hi))
            p[todo] = stats.norm.sf(z)
        return np.where(np.isnan(e0), np.nan, p)


def _t_side(centre: FloatArray, se: FloatArray, df: FloatArray, null: FloatArray, side: str) -> FloatArray:
    """One-sided p-value of a t (or z, df = inf) statistic (centre − null)/se."""
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = centre - null if side == "above" else null - centre
        t = np.where(se > 0, diff / se, np.where(diff > 0, np.inf, np.where(diff < 0, -np.inf, 0.0)))
    return np.where(np.isinf(df), stats.norm.sf(t), stats.t.sf(t, np.minimum(df, 1e300)))
