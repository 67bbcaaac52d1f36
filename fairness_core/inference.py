"""Uncertainty of a pairwise verdict: intervals and tests for OFI and DI when both groups are samples.

Per individual, d = ŷ − y is −1 (a false negative), 0 (TP or TN) or +1 (a false
positive), so a group's marginal benefit B = (FP − FN)/n is the mean of d and
OFI = B_i − B_j estimates Δ = (π_FP − π_FN)_i − (π_FP − π_FN)_j (docs/methods.md).
d has variance v = π_FP + π_FN − (π_FP − π_FN)² per individual.

OFI methods (:data:`OFI_METHODS`), chosen by their simulated coverage (see
``bench/inference_coverage.py`` and ``docs/methods.md``):

``"adjusted"``
    Small-sample method. Pseudo-counts of ½ false positive, ½ false negative and one
    correct prediction per group (Agresti–Min's paired-difference adjustment, one group
    at a time), then Welch's t with Satterthwaite's degrees of freedom (n_g − 1 per
    group). Exact coverage, enumerated over multinomials from the demo data and a
    grid of cell rates, is ≥ 93 % at 95 % for groups of 5 and more; the plain Wald
    interval covers as little as 10 % at n = 5 vs 3,000.
``"wald"``
    The asymptotic interval B̂_i − B̂_j ± z·sqrt(v̂_i/n_i + v̂_j/n_j).
``"permutation"``
    The exact conditional p-value: given the pooled counts of FP, FN and correct
    predictions, group i's counts are multivariate hypergeometric under the *strong*
    null that both groups share one outcome distribution. Exact for that null (tests
    compare it with brute-force enumeration of every assignment) but not for the weak
    null Δ = 0 with different spreads, where its size can be far above α; the interval
    is the adjusted one. Offered for reference, never chosen by ``"auto"``.
``"auto"``
    ``"wald"`` when both groups have at least :data:`LARGE_N` rows and at least
    :data:`MIN_SPREAD` individuals outside their most common outcome (so v̂ > 0 is
    well estimated), else ``"adjusted"``. The result says which.

Every p-value is the dual of its interval: p < 1 − level exactly when the interval
excludes 0, so a verdict and the interval shown beside it never disagree.

DI methods (:data:`DI_METHODS`) for the ratio of selection rates PPR_i / PPR_j:

``"score"``
    Miettinen–Nurminen score interval for a ratio of two independent proportions
    (the score test inverted; variance with the N/(N − 1) correction), and the score
    test of DI = 1; identical to statsmodels' ``confint_proportions_2indep(...,
    method="score", compare="ratio")``, vectorized here over all pairs.
``"exact"``
    MOVER-R (Donner & Zou) built from Clopper–Pearson limits of each rate, with
    Fisher's exact test of DI = 1 (two-sided, twice the smaller tail). Conservative;
    the score interval covers only 90 % at n = 5 when a rate is near 0.
``"auto"``
    ``"score"`` when both groups have at least :data:`SMALL_N_DI` rows, else ``"exact"``.

>>> from fairness_core import ConfusionMatrix, inference
>>> r = inference.ofi_test(ConfusionMatrix(5, 1, 9, 20), ConfusionMatrix(30, 12, 4, 60))
>>> round(r.estimate, 3), r.method, r.ci_low < r.estimate < r.ci_high
(0.304, 'adjusted', True)
>>> d = inference.di_interval(ConfusionMatrix(5, 1, 9, 20), ConfusionMatrix(30, 12, 4, 60))
>>> round(d.estimate, 3), d.method
(1.247, 'score')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import special, stats

from .confusion import ConfusionMatrix

FloatArray = npt.NDArray[np.float64]

OFI_METHODS = ("auto", "adjusted", "wald", "permutation")
DI_METHODS = ("auto", "score", "exact")
ADJUSTMENTS = ("holm", "bh", "none")
#: How an adjusted p-value is introduced in text ("Holm-adjusted p = ...").
ADJUSTED_LABEL = {"holm": "Holm-adjusted ", "bh": "BH-adjusted ", "none": ""}

#: "auto" uses the Wald interval for OFI only when both groups have at least this many rows ...
LARGE_N = 1000
#: ... and at least this many individuals outside their most common outcome (FP, FN or correct).
MIN_SPREAD = 10
#: "auto" uses the score interval for DI when both groups have at least this many rows.
SMALL_N_DI = 30
#: OFI lies in [−2, 2]; intervals are clipped to it.
OFI_RANGE = 2.0
#: Pseudo-counts of the adjusted OFI method: FP, FN, correct predictions.
PSEUDO_FP, PSEUDO_FN, PSEUDO_CORRECT = 0.5, 0.5, 1.0
#: Largest number of (FP, FN) outcomes the exact permutation p-value enumerates.
MAX_PERMUTATION_CELLS = 4_000_000


def _check_level(level: float) -> None:
    if not (isinstance(level, (int, float)) and 0.5 <= level < 1):
        raise ValueError(f"level must be in [0.5, 1), got {level!r}")


def _check_method(method: str, allowed: tuple[str, ...], what: str) -> None:
    if method not in allowed:
        raise ValueError(f"unknown {what} method {method!r}; expected one of {', '.join(allowed)}")


def _check_pair(cm_i: ConfusionMatrix, cm_j: ConfusionMatrix, level: float, method: str,
                allowed: tuple[str, ...], what: str) -> None:
    """Validate a scalar call: the method, the level, and two non-empty confusion matrices."""
    _check_method(method, allowed, what)
    _check_level(level)
    for label, cm in (("i", cm_i), ("j", cm_j)):
        if not isinstance(cm, ConfusionMatrix):
            raise ValueError(f"cm_{label} must be a ConfusionMatrix, got {type(cm).__name__}")
        if cm.n == 0:
            raise ValueError(f"group {label} is empty (n = 0): {what} is undefined")


# --------------------------------------------------------------------------- OFI


@dataclass(frozen=True)
class OFIResult:
    """An OFI estimate with its interval and the test of H0: Δ = 0.

    ``estimate`` is the observed OFI = B_i − B_j; ``ci_low``/``ci_high`` the
    interval at ``level``; ``p_value`` two-sided; ``se`` and ``df`` the standard
    error and degrees of freedom behind them (``df`` is inf for a z interval);
    ``method`` the method used (``"auto"`` resolved).
    """

    estimate: float
    ci_low: float
    ci_high: float
    p_value: float
    method: str
    level: float
    se: float
    df: float
    n_i: int
    n_j: int
    note: str = ""


def _round_df(df: FloatArray) -> FloatArray:
    """Degrees of freedom on a grid of 0.6 % steps (inf beyond 10^5), so Student-t quantiles are
    computed once per distinct value; intervals and p-values use the same rounded df."""
    with np.errstate(divide="ignore", invalid="ignore"):
        rounded = 10 ** (np.round(np.log10(np.maximum(df, 1.0)) * 400) / 400)
    return np.where(df > 1e5, np.inf, rounded)


def _t_ppf(q: float, df: FloatArray) -> FloatArray:
    """Student-t quantile for many (rounded) df at once: one scipy call per distinct df."""
    values, inverse = np.unique(df, return_inverse=True)
    return np.where(np.isinf(values), stats.norm.ppf(q), stats.t.ppf(q, np.minimum(values, 1e300)))[inverse].reshape(df.shape)


def _ofi_parts(fp: FloatArray, fn: FloatArray, n: FloatArray, pseudo: bool) -> tuple[FloatArray, FloatArray]:
    """(B, Var(B̂)) of one group, with or without the pseudo-counts."""
    if pseudo:
        m = n + PSEUDO_FP + PSEUDO_FN + PSEUDO_CORRECT
        pp, pm = (fp + PSEUDO_FP) / m, (fn + PSEUDO_FN) / m
    else:
        m = n
        pp, pm = fp / m, fn / m
    b = pp - pm
    return b, np.maximum(pp + pm - b * b, 0.0) / m


def _spread(fp: FloatArray, fn: FloatArray, n: FloatArray) -> FloatArray:
    """Individuals outside the group's most common outcome (FP, FN or correct)."""
    return n - np.maximum(np.maximum(fp, fn), n - fp - fn)


def ofi_methods_auto(fp_i: npt.ArrayLike, fn_i: npt.ArrayLike, n_i: npt.ArrayLike,
                     fp_j: npt.ArrayLike, fn_j: npt.ArrayLike, n_j: npt.ArrayLike) -> npt.NDArray[np.str_]:
    """What ``method="auto"`` picks for each pair: ``"wald"`` or ``"adjusted"``."""
    fp_i, fn_i, n_i, fp_j, fn_j, n_j = (np.asarray(a, dtype=float) for a in (fp_i, fn_i, n_i, fp_j, fn_j, n_j))
    large = ((n_i >= LARGE_N) & (n_j >= LARGE_N)
             & (_spread(fp_i, fn_i, n_i) >= MIN_SPREAD) & (_spread(fp_j, fn_j, n_j) >= MIN_SPREAD))
    return np.where(large, "wald", "adjusted")


def ofi_arrays(fp_i: npt.ArrayLike, fn_i: npt.ArrayLike, n_i: npt.ArrayLike,
               fp_j: npt.ArrayLike, fn_j: npt.ArrayLike, n_j: npt.ArrayLike,
               levels: tuple[float, ...] = (0.95,), method: str = "auto") -> dict[str, FloatArray]:
    """Vectorized OFI intervals and p-values over arrays of pairs (any broadcastable shapes).

    Returns a dict with ``estimate``, ``p_value``, ``se``, ``df``, ``method`` (per pair)
    and ``ci_low_{level}``/``ci_high_{level}`` for each requested level. ``"permutation"``
    is scalar-only (:func:`ofi_test`).
    """
    _check_method(method, ("auto", "adjusted", "wald"), "vectorized OFI")
    for level in levels:
        _check_level(level)
    fp_i, fn_i, n_i, fp_j, fn_j, n_j = np.broadcast_arrays(
        *(np.asarray(a, dtype=float) for a in (fp_i, fn_i, n_i, fp_j, fn_j, n_j)))
    if np.any(n_i < 1) or np.any(n_j < 1):
        raise ValueError("every group needs at least one row for an OFI interval")
    chosen = (ofi_methods_auto(fp_i, fn_i, n_i, fp_j, fn_j, n_j) if method == "auto"
              else np.full(fp_i.shape, method))
    wald = chosen == "wald"
    raw = (fp_i - fn_i) / n_i - (fp_j - fn_j) / n_j
    b_ai, v_ai = _ofi_parts(fp_i, fn_i, n_i, True)
    b_aj, v_aj = _ofi_parts(fp_j, fn_j, n_j, True)
    _, v_wi = _ofi_parts(fp_i, fn_i, n_i, False)
    _, v_wj = _ofi_parts(fp_j, fn_j, n_j, False)
    centre = np.where(wald, raw, b_ai - b_aj)
    var = np.where(wald, v_wi + v_wj, v_ai + v_aj)
    se = np.sqrt(var)
    with np.errstate(divide="ignore", invalid="ignore"):
        df_adj = (v_ai + v_aj) ** 2 / (v_ai ** 2 / np.maximum(n_i - 1, 1) + v_aj ** 2 / np.maximum(n_j - 1, 1))
        df = np.where(wald, np.inf, _round_df(df_adj))
        t = np.where(se > 0, centre / se, np.where(centre == 0, 0.0, np.sign(centre) * np.inf))
    p = 2 * stats.t.sf(np.abs(t), df)
    out: dict[str, FloatArray] = {"estimate": raw, "p_value": np.minimum(p, 1.0), "se": se, "df": df,
                                  "centre": centre, "method": chosen}
    for level in levels:
        q = _t_ppf(0.5 + level / 2, df)
        out[f"ci_low_{level:g}"] = np.clip(centre - q * se, -OFI_RANGE, OFI_RANGE)
        out[f"ci_high_{level:g}"] = np.clip(centre + q * se, -OFI_RANGE, OFI_RANGE)
    return out


def permutation_p_value(cm_i: ConfusionMatrix, cm_j: ConfusionMatrix) -> float:
    """Exact conditional two-sided p-value of OFI = 0 under the strong null (both groups share one
    distribution of d), twice the smaller tail of FP_s − FN_s for the smaller group s given the pooled counts.

    Raises ValueError when the enumeration would exceed :data:`MAX_PERMUTATION_CELLS` outcomes.
    """
    small, other = (cm_i, cm_j) if cm_i.n <= cm_j.n else (cm_j, cm_i)
    n_plus, n_minus = small.fp + other.fp, small.fn + other.fn
    n_total = small.n + other.n
    n_zero = n_total - n_plus - n_minus
    k = small.n
    xs = np.arange(max(0, k - n_minus - n_zero), min(k, n_plus) + 1)
    ys = np.arange(0, min(k, n_minus) + 1)
    if xs.size * ys.size > MAX_PERMUTATION_CELLS:
        raise ValueError(f"the exact permutation p-value would enumerate {xs.size * ys.size:,} outcomes "
                         f"(limit {MAX_PERMUTATION_CELLS:,}); use method='adjusted'")
    x, y = np.meshgrid(xs, ys, indexing="ij")
    z = k - x - y
    ok = (z >= 0) & (z <= n_zero)
    x, y, z = x[ok], y[ok], z[ok]
    log_p = (_log_comb(n_plus, x) + _log_comb(n_minus, y) + _log_comb(n_zero, z) - _log_comb(n_total, k))
    prob = np.exp(log_p)
    stat = x - y
    observed = small.fp - small.fn
    lower = prob[stat <= observed].sum()
    upper = prob[stat >= observed].sum()
    return float(min(1.0, 2 * min(lower, upper)))


def _log_comb(n: npt.ArrayLike, k: npt.ArrayLike) -> FloatArray:
    n, k = np.asarray(n, dtype=float), np.asarray(k, dtype=float)
    return special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)


def ofi_test(cm_i: ConfusionMatrix, cm_j: ConfusionMatrix, level: float = 0.95,
             method: Literal["auto", "adjusted", "wald", "permutation"] = "auto") -> OFIResult:
    """Interval for Δ = OFI and the two-sided test of H0: Δ = 0, both groups treated as samples.

    Parameters
    ----------
    cm_i, cm_j : the two groups' confusion matrices (non-empty).
    level : confidence level of the interval, in [0.5, 1).
    method : see the module docstring; ``"auto"`` picks ``"adjusted"`` or ``"wald"`` by size.

    Examples
    --------
    >>> from fairness_core import ConfusionMatrix
    >>> r = ofi_test(ConfusionMatrix(1, 0, 0, 5), ConfusionMatrix(7, 0, 1, 10))
    >>> round(r.estimate, 4), round(r.p_value, 2) > 0.05
    (-0.0556, True)
    """
    _check_pair(cm_i, cm_j, level, method, OFI_METHODS, "OFI")
    core = "adjusted" if method == "permutation" else method
    r = ofi_arrays(cm_i.fp, cm_i.fn, cm_i.n, cm_j.fp, cm_j.fn, cm_j.n, (level,), core)
    p, used, note = float(r["p_value"]), str(r["method"]), ""
    if method == "permutation":
        p = permutation_p_value(cm_i, cm_j)
        used = "permutation"
        note = ("exact conditional p-value under the strong null (identical outcome distributions); "
                "interval from the adjusted method")
    return OFIResult(float(r["estimate"]), float(r[f"ci_low_{level:g}"]), float(r[f"ci_high_{level:g}"]), p,
                     used, level, float(r["se"]), float(r["df"]), cm_i.n, cm_j.n, note)


# --------------------------------------------------------------------------- DI


@dataclass(frozen=True)
class DIResult:
    """A DI = PPR_i / PPR_j estimate with its interval and the test of H0: DI = 1.

    Undefined DI (group j selects nobody) has ``estimate`` NaN and ``note`` saying
    why; the interval can still be informative (``ci_high`` = inf when only group j
    selects nobody), and is NaN when neither group selects anyone.
    """

    estimate: float
    ci_low: float
    ci_high: float
    p_value: float
    method: str
    level: float
    note: str = ""


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


def _score_bounds(x1: FloatArray, n1: FloatArray, x2: FloatArray, n2: FloatArray, q: float,
                  iterations: int = 60, tol: float = 1e-9) -> tuple[FloatArray, FloatArray]:
    """Roots of z(θ) = ±q in log θ, all pairs and both bounds at once, by the Illinois variant of
    regula falsi on the bracket [1e-10, 1e10] (about a dozen evaluations instead of bisection's 30+)."""
    shape = x1.shape
    xx1, nn1, xx2, nn2 = (np.concatenate([a.ravel(), a.ravel()]) for a in (x1, n1, x2, n2))
    target = np.concatenate([np.full(x1.size, q), np.full(x1.size, -q)])

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
    active = np.flatnonzero(np.isnan(root))
    side = np.zeros(target.shape, dtype=np.int8)
    for _ in range(iterations):
        if active.size == 0:
            break
        aa, bb, ffa, ffb = a[active], b[active], fa[active], fb[active]
        c = bb - ffb * (bb - aa) / (ffb - ffa)
        c = np.where(np.isfinite(c) & (c > aa) & (c < bb), c, 0.5 * (aa + bb))
        fc = f(c, active)
        left = fc > 0                      # root lies in [c, b]
        a[active] = np.where(left, c, aa)
        fa[active] = np.where(left, fc, np.where(side[active] == -1, ffa / 2, ffa))
        b[active] = np.where(left, bb, c)
        fb[active] = np.where(left, np.where(side[active] == 1, ffb / 2, ffb), fc)
        side[active] = np.where(left, 1, -1)
        done = (np.abs(fc) < 1e-12) | (b[active] - a[active] < tol)
        root[active[done]] = c[done]
        active = active[~done]
    root[active] = 0.5 * (a[active] + b[active])
    theta = np.exp(root)
    low, high = theta[: x1.size].reshape(shape), theta[x1.size:].reshape(shape)
    low = np.where(x1 == 0, 0.0, low)
    high = np.where(x2 == 0, np.inf, high)
    return low, high


def _clopper_pearson(x: FloatArray, n: FloatArray, level: float) -> tuple[FloatArray, FloatArray]:
    """Clopper–Pearson limits, computed once per distinct (x, n) (pairs repeat each group's counts)."""
    base = float(np.max(n, initial=0)) + 1
    keys, inverse = np.unique(x.ravel() * base + n.ravel(), return_inverse=True)
    low, high = _clopper_pearson_unique(np.floor(keys / base), keys % base, level)
    inverse = inverse.ravel()
    return low[inverse].reshape(x.shape), high[inverse].reshape(x.shape)


def _clopper_pearson_unique(x: FloatArray, n: FloatArray, level: float) -> tuple[FloatArray, FloatArray]:
    a = (1 - level) / 2
    with np.errstate(invalid="ignore"):
        low = np.where(x <= 0, 0.0, special.betaincinv(np.maximum(x, 1e-300), n - x + 1, a))
        high = np.where(x >= n, 1.0, special.betaincinv(x + 1, np.maximum(n - x, 1e-300), 1 - a))
    return low, high


def _mover_ratio(x1: FloatArray, n1: FloatArray, x2: FloatArray, n2: FloatArray,
                 level: float) -> tuple[FloatArray, FloatArray]:
    """MOVER-R interval for p1/p2 from Clopper–Pearson limits (Donner & Zou 2012)."""
    p1, p2 = x1 / n1, x2 / n2
    l1, u1 = _clopper_pearson(x1, n1, level)
    l2, u2 = _clopper_pearson(x2, n2, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        low = (p1 * p2 - np.sqrt(np.maximum((p1 * p2) ** 2 - l1 * u2 * (2 * p1 - l1) * (2 * p2 - u2), 0))) / (
            u2 * (2 * p2 - u2))
        high = (p1 * p2 + np.sqrt(np.maximum((p1 * p2) ** 2 - u1 * l2 * (2 * p1 - u1) * (2 * p2 - l2), 0))) / (
            l2 * (2 * p2 - l2))
        low = np.where(x1 == 0, 0.0, np.where(x2 == 0, l1 / u2, low))
        high = np.where(x2 == 0, np.inf, np.where(x1 == 0, u1 / np.maximum(l2, 1e-300), high))
    return np.maximum(low, 0.0), high


def _fisher_p(x1: FloatArray, n1: FloatArray, x2: FloatArray, n2: FloatArray) -> FloatArray:
    """Fisher's exact test of p1 = p2, two-sided as twice the smaller tail.

    The hypergeometric count is the smaller group's, so each pair sums at most
    min(n1, n2) + 1 terms (the "exact" DI method serves pairs with a group under
    :data:`SMALL_N_DI` rows): one array operation over all pairs.
    """
    swap = n1 > n2
    k, x = np.where(swap, n2, n1), np.where(swap, x2, x1)
    total, selected = n1 + n2, x1 + x2
    low = np.maximum(0, k - (total - selected))
    width = int(np.max(np.minimum(k, selected) - low)) + 1 if k.size else 1
    if k.size * width > 4_000_000:  # large groups forced onto "exact": bounded memory, scipy's CDF
        lower = stats.hypergeom.cdf(x1, total, selected, n1)
        upper = stats.hypergeom.sf(x1 - 1, total, selected, n1)
        return np.minimum(1.0, 2 * np.minimum(lower, upper))
    high = np.minimum(k, selected)
    # pmf at the lowest support point, then the ratio recurrence
    # pmf(s + 1)/pmf(s) = (K − s)(k − s) / ((s + 1)(N − K − k + s + 1)) along the support.
    log_first = (_log_comb(selected, low) + _log_comb(total - selected, k - low) - _log_comb(total, k))
    s = low[..., None] + np.arange(width - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = ((selected[..., None] - s) * (k[..., None] - s)
                 / ((s + 1) * ((total - selected - k)[..., None] + s + 1)))
    ratio = np.where(s < high[..., None], ratio, 0.0)
    pmf = np.exp(log_first)[..., None] * np.concatenate(
        [np.ones(low.shape + (1,)), np.cumprod(ratio, axis=-1)], axis=-1)
    support = low[..., None] + np.arange(width)
    lower = np.where(support <= x[..., None], pmf, 0.0).sum(axis=-1)
    upper = np.where(support >= x[..., None], pmf, 0.0).sum(axis=-1)
    return np.minimum(1.0, 2 * np.minimum(lower, upper))


def di_methods_auto(n_i: npt.ArrayLike, n_j: npt.ArrayLike) -> npt.NDArray[np.str_]:
    """What ``method="auto"`` picks for DI: ``"score"`` or ``"exact"``."""
    n_i, n_j = np.asarray(n_i), np.asarray(n_j)
    return np.where((n_i >= SMALL_N_DI) & (n_j >= SMALL_N_DI), "score", "exact")


def di_arrays(sel_i: npt.ArrayLike, n_i: npt.ArrayLike, sel_j: npt.ArrayLike, n_j: npt.ArrayLike,
              levels: tuple[float, ...] = (0.95,), method: str = "auto") -> dict[str, FloatArray]:
    """Vectorized DI intervals and p-values over arrays of pairs; ``sel`` = predicted positives TP + FP.

    Returns ``estimate`` (NaN where undefined), ``p_value`` (H0: DI = 1; NaN when nobody is
    selected in either group), ``method`` and ``ci_low_{level}``/``ci_high_{level}``.
    """
    _check_method(method, DI_METHODS, "DI")
    for level in levels:
        _check_level(level)
    x1, n1, x2, n2 = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (sel_i, n_i, sel_j, n_j)))
    if np.any(n1 < 1) or np.any(n2 < 1):
        raise ValueError("every group needs at least one row for a DI interval")
    chosen = di_methods_auto(n1, n2) if method == "auto" else np.full(x1.shape, method)
    score = chosen == "score"
    none_selected = (x1 == 0) & (x2 == 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = np.where(x2 > 0, (x1 / n1) / (x2 / n2), np.nan)
    p = np.full(x1.shape, np.nan)
    if score.any():
        z = _mn_z(x1[score], n1[score], x2[score], n2[score], np.ones(int(score.sum())))
        p[score] = 2 * stats.norm.sf(np.abs(z))
    if (~score).any():
        p[~score] = _fisher_p(x1[~score], n1[~score], x2[~score], n2[~score])
    p = np.where(none_selected, np.nan, np.minimum(p, 1.0))
    out: dict[str, FloatArray] = {"estimate": estimate, "p_value": p, "method": chosen}
    for level in levels:
        low, high = np.full(x1.shape, np.nan), np.full(x1.shape, np.nan)
        if score.any():
            low[score], high[score] = _score_bounds(x1[score], n1[score], x2[score], n2[score],
                                                    float(stats.norm.ppf(0.5 + level / 2)))
        if (~score).any():
            low[~score], high[~score] = _mover_ratio(x1[~score], n1[~score], x2[~score], n2[~score], level)
        out[f"ci_low_{level:g}"] = np.where(none_selected, np.nan, low)
        out[f"ci_high_{level:g}"] = np.where(none_selected, np.nan, high)
    return out


def di_within(sel_i: npt.ArrayLike, n_i: npt.ArrayLike, sel_j: npt.ArrayLike, n_j: npt.ArrayLike,
              level: float, band: tuple[float, float], method: str = "auto") -> npt.NDArray[np.bool_]:
    """Whether DI's interval at ``level`` lies inside ``band`` (the equivalence claim), per pair.

    For the score method this needs no root finding: the score statistic decreases in θ, so the
    lower limit is >= band[0] exactly when z(band[0]) >= q, and the upper limit <= band[1] when
    z(band[1]) <= −q. False where nobody is selected in either group.
    """
    _check_method(method, DI_METHODS, "DI")
    _check_level(level)
    x1, n1, x2, n2 = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (sel_i, n_i, sel_j, n_j)))
    chosen = di_methods_auto(n1, n2) if method == "auto" else np.full(x1.shape, method)
    score = chosen == "score"
    out = np.zeros(x1.shape, dtype=bool)
    q = float(stats.norm.ppf(0.5 + level / 2))
    if score.any():
        s1, m1, s2, m2 = x1[score], n1[score], x2[score], n2[score]
        low_ok = _mn_z(s1, m1, s2, m2, np.full(s1.shape, band[0])) >= q
        high_ok = _mn_z(s1, m1, s2, m2, np.full(s1.shape, band[1])) <= -q
        out[score] = low_ok & high_ok & (s1 > 0) & (s2 > 0)
    if (~score).any():
        low, high = _mover_ratio(x1[~score], n1[~score], x2[~score], n2[~score], level)
        out[~score] = (low >= band[0]) & (high <= band[1])
    return out & ~((x1 == 0) & (x2 == 0))


def di_interval(cm_i: ConfusionMatrix, cm_j: ConfusionMatrix, level: float = 0.95,
                method: Literal["auto", "score", "exact"] = "auto") -> DIResult:
    """Interval for DI = PPR_i / PPR_j and the two-sided test of H0: DI = 1.

    Examples
    --------
    >>> from fairness_core import ConfusionMatrix
    >>> d = di_interval(ConfusionMatrix(1, 0, 0, 5), ConfusionMatrix(7, 0, 1, 10))
    >>> round(d.estimate, 3), d.method, d.ci_low < d.estimate < d.ci_high
    (0.375, 'exact', True)
    >>> di_interval(ConfusionMatrix(0, 1, 0, 5), ConfusionMatrix(0, 7, 0, 11)).note
    'neither group has predicted positives, 0/0'
    """
    _check_pair(cm_i, cm_j, level, method, DI_METHODS, "DI")
    r = di_arrays(cm_i.predicted_positives, cm_i.n, cm_j.predicted_positives, cm_j.n, (level,), method)
    note = ""
    if cm_j.predicted_positives == 0:
        note = ("neither group has predicted positives, 0/0" if cm_i.predicted_positives == 0
                else "group j has no predicted positives, P^_j = 0")
    return DIResult(float(r["estimate"]), float(r[f"ci_low_{level:g}"]), float(r[f"ci_high_{level:g}"]),
                    float(r["p_value"]), str(r["method"]), level, note)


# --------------------------------------------------------------------------- many pairs


def adjust_p_values(p_values: npt.ArrayLike, method: str = "holm") -> FloatArray:
    """Multiplicity-adjusted p-values: ``"holm"`` (family-wise error, step-down), ``"bh"``
    (Benjamini–Hochberg false discovery rate, step-up) or ``"none"``. NaN stays NaN and
    does not count as a test; results are monotone in the raw p and capped at 1.

    >>> adjust_p_values([0.01, 0.04, 0.03, float("nan")], "holm").round(3).tolist()
    [0.03, 0.06, 0.06, nan]
    >>> adjust_p_values([0.01, 0.04, 0.03], "bh").round(3).tolist()
    [0.03, 0.04, 0.04]
    """
    _check_method(method, ADJUSTMENTS, "p-value adjustment")
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size == 0:
        return out
    if method == "none":
        out[ok] = p[ok]
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    m = order.size
    ranks = np.arange(1, m + 1)
    if method == "holm":
        adjusted = np.maximum.accumulate((m - ranks + 1) * p[order])
    else:
        adjusted = np.minimum.accumulate((m / ranks * p[order])[::-1])[::-1]
    out[order] = np.minimum(adjusted, 1.0)
    return out


def multiplier(p_values: npt.ArrayLike, method: str = "holm") -> FloatArray:
    """The factor each test's level is divided by under ``method`` (Holm: m − rank + 1,
    BH: m / rank, none: 1), for power and sample-size statements at the adjusted level."""
    _check_method(method, ADJUSTMENTS, "p-value adjustment")
    p = np.asarray(p_values, dtype=float)
    out = np.ones(p.shape)
    ok = np.flatnonzero(~np.isnan(p))
    if method == "none" or ok.size == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    m = order.size
    ranks = np.arange(1, m + 1)
    out[order] = (m - ranks + 1) if method == "holm" else m / ranks
    return out


def minimum_detectable_ofi(se: npt.ArrayLike, alpha: npt.ArrayLike = 0.05, power: float = 0.8) -> FloatArray:
    """Smallest |Δ| detected with probability ``power`` by a two-sided level-``alpha`` test whose
    standard error is ``se``: (z_{1−α/2} + z_{power})·se (docs/methods.md)."""
    alpha = np.asarray(alpha, dtype=float)
    return (stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) * np.asarray(se, dtype=float)


def _t_ppf_approx(q: FloatArray, df: FloatArray) -> FloatArray:
    """Student-t quantile by the Cornish–Fisher expansion in 1/df (three terms; relative error under
    1 % for df >= 3 at two-sided levels down to 0.001, growing to ~35 % at df = 3 and 1e-5): for sample-size projections, where each pair has its
    own adjusted level and an exact quantile per pair would cost more than the whole table."""
    z = stats.norm.ppf(q)
    with np.errstate(divide="ignore", invalid="ignore"):
        g1 = (z ** 3 + z) / 4
        g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
        g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
        return np.where(np.isinf(df), z, z + g1 / df + g2 / df ** 2 + g3 / df ** 3)


def scale_to_settle(estimate: npt.ArrayLike, se: npt.ArrayLike, tolerance: float,
                    alpha: npt.ArrayLike = 0.05, df: npt.ArrayLike = np.inf) -> FloatArray:
    """By what factor both groups must grow (same rates) for the OFI verdict to settle.

    Settled means significant (|estimate| > q_{1−α/2}·se/√k) or equivalent to 0 within
    ``tolerance`` (|estimate| + q_{1−α}·se/√k < tolerance, the TOST at level α), with q
    Student's t quantiles at the current ``df`` (conservative: df grows with the groups).
    Returns the smaller k (1 when already settled, inf when neither can happen, e.g.
    estimate exactly 0 with tolerance 0). Pass the interval's centre as ``estimate``.

    >>> float(scale_to_settle(0.1, 0.1, 0.0, 0.05).round(2))  # (1.96 · 0.1 / 0.1)^2
    3.84
    """
    est, se = np.abs(np.asarray(estimate, dtype=float)), np.asarray(se, dtype=float)
    alpha, df = np.asarray(alpha, dtype=float), np.asarray(df, dtype=float)
    df = np.broadcast_to(_round_df(df), np.broadcast(est, se, alpha).shape)
    alpha = np.broadcast_to(alpha, df.shape)
    q_two = _t_ppf_approx(1 - alpha / 2, df)
    q_one = _t_ppf_approx(1 - alpha, df)
    with np.errstate(divide="ignore", invalid="ignore"):
        k_sig = np.where(est > 0, (q_two * se / est) ** 2, np.inf)
        k_eq = np.where(est < tolerance, (q_one * se / (tolerance - est)) ** 2, np.inf)
    return np.maximum(np.minimum(k_sig, k_eq), 1.0)
