"""The threshold search: each group's candidate thresholds as curves over the count selected, the bands a target
asks every group's quantity to lie in, the exact (or strided) search over band positions, and the best randomized
rule's value: concave envelopes over k (over TP for equal opportunity), a linear program over each group's ROC hull
for equalized odds (the package docstring explains each)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import sparse
from scipy.optimize import linprog
from scipy.spatial import ConvexHull, QhullError

from .inputs import FOUR_FIFTHS, ROUNDING, FloatArray, IntArray, _Rows

# ----------------------------------------------------------------------------------- per-group curves

@dataclass
class _Curves:
    """Every group's candidate thresholds, flattened group after group (``start`` gives the offsets)."""

    rows: _Rows
    n: FloatArray          # rows per group
    pos: FloatArray        # actual positives per group
    neg: FloatArray
    start: IntArray        # group g's candidates are flat[start[g]:start[g + 1]], k increasing
    group: IntArray        # group of each flat entry
    k: FloatArray
    tp: FloatArray
    fp: FloatArray
    threshold: FloatArray  # +inf for k = 0
    value: FloatArray      # the objective's contribution (larger is better; see _objective_values)
    objective: str
    cost_fp: float
    cost_fn: float
    by_score: IntArray     # every row, highest score first
    _table: FloatArray | None = None
    _hulls: list[tuple[FloatArray, FloatArray]] | None = None      # envelope of the objective over k
    _tp_hulls: list[tuple[FloatArray, FloatArray]] | None = None   # ... over TP (equal opportunity)
    _roc: IntArray | None = None  # flat indices of every group's ROC hull vertices, group after group
    _positions: dict[str, FloatArray] = field(default_factory=dict)
    _quantities: dict[str, FloatArray] = field(default_factory=dict)

    @property
    def groups(self) -> int:
        return len(self.n)

    def table(self) -> FloatArray:
        if self._table is None:
            self._table = _sparse_table(self.value, int(np.diff(self.start).max()))
        return self._table

    def best_in(self, lo: IntArray, hi: IntArray) -> FloatArray:
        """The largest objective value over flat[lo..hi] (inclusive; lo <= hi)."""
        t = self.table()
        level = np.frexp((hi - lo + 1).astype(float))[1] - 1
        return np.maximum(t[level, lo], t[level, hi - (1 << level) + 1])

    def quantity(self, name: str) -> FloatArray:
        if name not in self._quantities:
            g = self.group
            with np.errstate(divide="ignore", invalid="ignore"):
                self._quantities[name] = {"B": lambda: (self.k - self.pos[g]) / self.n[g],
                                          "rate": lambda: self.k / self.n[g], "TPR": lambda: self.tp / self.pos[g],
                                          "FPR": lambda: self.fp / self.neg[g]}[name]()
        return self._quantities[name]

    def unique_values(self, name: str) -> FloatArray:
        if name not in self._positions:
            self._positions[name] = np.unique(self.quantity(name))
        return self._positions[name]

    def report(self, total: float | FloatArray) -> Any:
        """An objective total (sum of ``value``) in the objective's units: accuracy and balanced accuracy
        as fractions, cost per row."""
        n_rows = self.n.sum()
        if self.objective == "accuracy":
            return total / n_rows
        if self.objective == "balanced_accuracy":
            return total / (2 * self.pos.sum() * self.neg.sum())
        return -total / n_rows

    def gain(self, better: float, worse: float) -> float:
        """How much ``better`` (a total) improves on ``worse``, in the objective's units (> 0 = better)."""
        return float(abs(self.report(1.0) - self.report(0.0)) * (better - worse))


def objective_value(y: npt.ArrayLike, pred: npt.ArrayLike, objective: str, cost_fp: float = 1.0,
                    cost_fn: float = 1.0) -> float:
    """What decisions ``pred`` score on labels ``y`` (both boolean, positive = the favourable outcome) by the
    objective a rule is fitted for: accuracy (TP + TN)/n; balanced accuracy ½(TP/P + TN/N) (NaN without both
    classes); cost (cost_fp·FP + cost_fn·FN)/n, the mean cost per row (lower is better).

    >>> objective_value([1, 1, 0, 0], [1, 0, 1, 0], "accuracy"), objective_value([1, 1, 0, 0], [1, 0, 0, 0], "cost", 2, 5)
    (0.5, 1.25)
    """
    y, pred = np.asarray(y, dtype=bool), np.asarray(pred, dtype=bool)
    tp, fp = float((y & pred).sum()), float((~y & pred).sum())
    pos, neg = float(y.sum()), float((~y).sum())
    if objective == "accuracy":
        return (tp + neg - fp) / len(y)
    if objective == "balanced_accuracy":
        return 0.5 * (tp / pos + (neg - fp) / neg) if pos and neg else math.nan
    return (cost_fp * fp + cost_fn * (pos - tp)) / len(y)


def _objective_values(tp: FloatArray, fp: FloatArray, pos: FloatArray, neg: FloatArray, objective: str,
                      cost_fp: float, cost_fn: float, pos_all: float, neg_all: float) -> FloatArray:
    """Each candidate's contribution to the objective, larger is better, in integers where possible so that
    totals compare exactly: accuracy TP + TN; balanced accuracy TP·N + TN·P (N, P over all rows: a
    multiple of ½(ΣTP/P + ΣTN/N)); cost −(cost_fp·FP + cost_fn·FN)."""
    if objective == "accuracy":
        return tp + (neg - fp)
    if objective == "balanced_accuracy":
        return tp * neg_all + (neg - fp) * pos_all
    return -(cost_fp * fp + cost_fn * (pos - tp))


def _curves(rows: _Rows, objective: str, cost_fp: float, cost_fn: float) -> _Curves:
    s, y, codes = rows.scores, rows.y, rows.codes
    n_groups = len(rows.names)
    by_score = np.argsort(-s)  # then a stable (radix) sort by group: group after group, scores descending
    order = by_score[np.argsort(codes.astype(np.int16)[by_score], kind="stable")]
    s_sorted, y_sorted, c_sorted = s[order], y[order].astype(np.int64), codes[order]
    n = np.bincount(codes, minlength=n_groups).astype(float)
    pos = np.bincount(codes, weights=y, minlength=n_groups)
    neg = n - pos
    if objective == "balanced_accuracy" and (pos.sum() == 0 or neg.sum() == 0):
        raise ValueError("balanced_accuracy needs both labels in y_true; these rows have only "
                         + ("negatives" if pos.sum() == 0 else "positives"))
    # A candidate ends each run of tied scores within a group.
    last = np.ones(len(s), bool)
    last[:-1] = (c_sorted[1:] != c_sorted[:-1]) | (s_sorted[1:] != s_sorted[:-1])
    first_row = np.concatenate([[0], np.cumsum(n)[:-1]]).astype(np.intp)
    cum_tp = np.cumsum(y_sorted)
    ends = np.flatnonzero(last)
    g_end = c_sorted[ends]
    k_end = ends + 1 - first_row[g_end]
    tp_end = cum_tp[ends] - (cum_tp[first_row] - y_sorted[first_row])[g_end]
    counts = np.bincount(g_end, minlength=n_groups) + 1
    start = np.concatenate([[0], np.cumsum(counts)]).astype(np.intp)
    zero = np.zeros(start[-1], bool)
    zero[start[:-1]] = True
    k, tp = np.zeros(start[-1]), np.zeros(start[-1])
    threshold = np.full(start[-1], np.inf)
    k[~zero], tp[~zero], threshold[~zero] = k_end, tp_end, s_sorted[ends]
    group = np.repeat(np.arange(n_groups), counts)
    fp = k - tp
    value = _objective_values(tp, fp, pos[group], neg[group], objective, cost_fp, cost_fn, pos.sum(), neg.sum())
    return _Curves(rows, n, pos, neg, start, group, k, tp, fp, threshold, value, objective, float(cost_fp),
                   float(cost_fn), by_score)


def _sparse_table(values: FloatArray, longest: int) -> FloatArray:
    """Row j holds the maximum of values[i : i + 2**j] (−inf where the window runs off the end)."""
    size = len(values)
    table = np.empty((max(1, int(longest).bit_length()), size))
    table[0] = values
    for j in range(1, len(table)):
        m, half = size - (1 << j) + 1, 1 << (j - 1)
        np.maximum(table[j - 1, :m], table[j - 1, half:half + m], out=table[j, :m])
        table[j, m:] = -np.inf
    return table


# ------------------------------------------------------------------------------------- band searches

@dataclass(frozen=True)
class _Band:
    """One target's band on one quantity: a group's value v is admissible at position c when
    c − ROUNDING <= v <= upper(c) + ROUNDING."""

    quantity: str
    width: float
    ratio: bool = False  # four-fifths: [c, c / 0.8]

    def upper(self, c: FloatArray) -> FloatArray:
        return c / FOUR_FIFTHS if self.ratio else c + self.width

    def lower_for(self, v: FloatArray) -> FloatArray:
        """The smallest position c at which value v is admissible."""
        return FOUR_FIFTHS * (v - ROUNDING) if self.ratio else v - self.width - ROUNDING


def _bands(target: str, tolerance: float) -> list[_Band]:
    return {"ofi": [_Band("B", tolerance)], "demographic_parity": [_Band("rate", tolerance)],
            "four_fifths": [_Band("rate", 0.0, ratio=True)], "equal_opportunity": [_Band("TPR", tolerance)],
            "equalized_odds": [_Band("TPR", tolerance), _Band("FPR", tolerance)]}[target]


def _admissible(cv: _Curves, band: _Band, positions: FloatArray, g: int) -> tuple[IntArray, IntArray]:
    """Flat index range [lo, hi] of group g's admissible candidates at each position (empty when lo > hi)."""
    a, b = cv.start[g], cv.start[g + 1]
    q = cv.quantity(band.quantity)[a:b]
    lo = a + np.searchsorted(q, positions - ROUNDING, "left")
    hi = a + np.searchsorted(q, band.upper(positions) + ROUNDING, "right") - 1
    return lo, hi


def _feasible_positions(cv: _Curves, band: _Band) -> FloatArray:
    """The achievable values (candidate lower edges) at which every group has an admissible candidate.

    Group g admits position c when one of its values v has lower_for(v) <= c <= v + ROUNDING; those
    intervals are merged per group and counted over all groups at once (feasible: covered G times)."""
    q = cv.quantity(band.quantity)
    ok = ~np.isnan(q)
    q, g = q[ok], cv.group[ok]
    low, high = band.lower_for(q), q + ROUNDING
    new = np.ones(len(q), bool)
    new[1:] = (g[1:] != g[:-1]) | (low[1:] > high[:-1])
    begins = np.flatnonzero(new)
    finish = np.append(begins[1:] - 1, len(q) - 1)
    values = cv.unique_values(band.quantity)
    values = values[~np.isnan(values)]
    # Intervals covering each value: those started at or before it minus those ended before it, counted by a
    # histogram of where the (few) interval ends fall among the (many) sorted values.
    started = np.bincount(np.searchsorted(values, low[begins], "left"), minlength=len(values) + 1).cumsum()
    ended = np.bincount(np.searchsorted(values, high[finish], "right"), minlength=len(values) + 1).cumsum()
    return values[(started - ended)[:len(values)] == cv.groups]


def _totals(cv: _Curves, bands: list[_Band], grids: list[FloatArray]) -> FloatArray:
    """The best objective total at every combination of band positions (shape of the grids' outer
    product; −inf where some group has no admissible candidate)."""
    shape = tuple(len(x) for x in grids)
    total = np.zeros(shape)
    feasible = np.ones(shape, bool)
    last = len(cv.value) - 1
    for g in range(cv.groups):
        lo, hi = None, None
        for axis, (band, grid) in enumerate(zip(bands, grids)):
            a, b = _admissible(cv, band, grid, g)
            index = [None] * len(grids)
            index[axis] = slice(None)
            a, b = a[tuple(index)], b[tuple(index)]
            lo = a if lo is None else np.maximum(lo, a)
            hi = b if hi is None else np.minimum(hi, b)
        lo, hi = np.broadcast_to(lo, shape), np.broadcast_to(hi, shape)
        ok = lo <= hi
        feasible &= ok
        lo_c = np.minimum(lo, last)
        total += np.where(ok, cv.best_in(lo_c, np.maximum(lo_c, np.minimum(hi, last))), 0.0)
    return np.where(feasible, total, -np.inf)


def _search(cv: _Curves, bands: list[_Band], candidates: list[FloatArray],
            budget: int) -> tuple[float, list[float], bool]:
    """Best total over the grid of candidate positions: exhaustive when it fits in ``budget`` (positions × groups;
    :data:`fairness_core.mitigation.SEARCH_BUDGET`), else a strided pass then every position around the best,
    repeated until the stride is 1."""
    per_axis = max(2, int((budget / cv.groups) ** (1 / len(candidates))))
    ranges = [(0, len(c) - 1) for c in candidates]
    exhaustive = all(len(c) <= per_axis for c in candidates)
    best_total, best_at = -np.inf, [float(c[0]) for c in candidates]
    while True:
        strides = [max(1, math.ceil((hi - lo + 1) / per_axis)) for lo, hi in ranges]
        picks = [np.union1d(np.arange(lo, hi + 1, st), [hi]) for (lo, hi), st in zip(ranges, strides)]
        totals = _totals(cv, bands, [c[p] for c, p in zip(candidates, picks)])
        where = np.unravel_index(int(np.argmax(totals)), totals.shape)
        if totals[where] > best_total:
            best_total = float(totals[where])
            best_at = [float(c[p[i]]) for c, p, i in zip(candidates, picks, where)]
        if all(st == 1 for st in strides):
            return best_total, best_at, exhaustive
        ranges = [(max(0, int(p[i]) - st + 1), min(len(c) - 1, int(p[i]) + st - 1))
                  for c, p, i, st in zip(candidates, picks, where, strides)]


def _choose(cv: _Curves, bands: list[_Band], at: list[float]) -> IntArray:
    """Each group's best admissible candidate at the positions ``at`` (the first, i.e. highest threshold,
    among equals)."""
    chosen = np.empty(cv.groups, np.intp)
    for g in range(cv.groups):
        lo, hi = cv.start[g], cv.start[g + 1] - 1
        for band, c in zip(bands, at):
            a, b = _admissible(cv, band, np.array([c]), g)
            lo, hi = max(lo, int(a[0])), min(hi, int(b[0]))
        chosen[g] = lo + int(np.argmax(cv.value[lo:hi + 1]))
    return chosen


def _smallest_tolerance(cv: _Curves, band: _Band) -> float:
    """The smallest band width with a feasible position (bisection to 1e-6, rounded up)."""
    low, high = 0.0, 2.0
    while high - low > 1e-7:
        mid = (low + high) / 2
        if _feasible_positions(cv, _Band(band.quantity, mid)).size:
            high = mid
        else:
            low = mid
    return math.ceil(high * 1e6) / 1e6


# ---------------------------------------------------------------------------------- randomized rules

def _upper_hull(x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Vertices of the upper concave envelope of points with increasing x."""
    # Points where the slope rises (locally convex) are never vertices: drop them in a few vectorized passes,
    # then let Qhull settle the rest.
    for _ in range(4):
        if len(x) <= 2:
            return x, y
        slope = np.diff(y) / np.diff(x)
        keep = np.ones(len(x), bool)
        keep[1:-1] = slope[:-1] >= slope[1:]
        if keep.all():
            break
        x, y = x[keep], y[keep]
    if len(x) <= 2:
        return x, y
    span_x, span_y = x[-1] - x[0], max(float(np.ptp(y)), 1.0)
    pts = np.column_stack([(x - x[0]) / span_x, (y - y.min()) / span_y])
    try:
        vertices = np.sort(ConvexHull(pts).vertices)
    except QhullError:  # all points on one line
        vertices = np.arange(len(x))
    first, final = vertices[0], vertices[-1]
    line = pts[first, 1] + (pts[final, 1] - pts[first, 1]) * (pts[vertices, 0] - pts[first, 0]) / (
        pts[final, 0] - pts[first, 0])
    keep = (pts[vertices, 1] > line) | (vertices == first) | (vertices == final)
    v = vertices[keep]
    return x[v], y[v]


def _randomized_total(cv: _Curves, target: str, width: float) -> float:
    """The best expected objective total over rules that randomize between thresholds within each group,
    with the band holding for expected counts: max over c of Σ_g hull_g(clip(k*_g, klo_g(c), khi_g(c))).

    Equal opportunity is the same problem over the expected TP instead of k: the objective is linear in
    (FP, TP), so at a given expected TP the best mixture lies on the upper envelope of the points (TP, value)
    (at each TP the candidate with the fewest FP, the first), and the band is pos·c <= TP <= pos·(c + T)."""
    if target == "equal_opportunity":
        if cv._tp_hulls is None:
            first = np.ones(len(cv.tp), bool)
            first[1:] = (cv.tp[1:] != cv.tp[:-1]) | (cv.group[1:] != cv.group[:-1])
            cv._tp_hulls = [_upper_hull(cv.tp[a:b][first[a:b]], cv.value[a:b][first[a:b]])
                            for a, b in zip(cv.start[:-1], cv.start[1:])]
        hulls, n, pos = cv._tp_hulls, cv.pos, np.zeros_like(cv.pos)
        target = "demographic_parity"  # a band [c, c + T] on TP / pos, as on k / n
    else:
        if cv._hulls is None:
            cv._hulls = [_upper_hull(cv.k[a:b], cv.value[a:b]) for a, b in zip(cv.start[:-1], cv.start[1:])]
        hulls, n, pos = cv._hulls, cv.n, cv.pos
    if target == "ofi":
        klo_of = lambda c: n[:, None] * c + pos[:, None]                       # noqa: E731
        khi_of = lambda c: n[:, None] * (c + width) + pos[:, None]             # noqa: E731
        at_lo = lambda x, g: (x - pos[g]) / n[g]                               # noqa: E731
        at_hi = lambda x, g: (x - pos[g]) / n[g] - width                       # noqa: E731
        c_min, c_max = float(np.max(-pos / n - width)), float(np.min(1 - pos / n))
    else:
        ratio = 1 / FOUR_FIFTHS if target == "four_fifths" else None
        klo_of = lambda c: n[:, None] * c                                      # noqa: E731
        khi_of = (lambda c: n[:, None] * c * ratio) if ratio else (lambda c: n[:, None] * (c + width))  # noqa: E731
        at_lo = lambda x, g: x / n[g]                                          # noqa: E731
        at_hi = (lambda x, g: x / n[g] / ratio) if ratio else (lambda x, g: x / n[g] - width)  # noqa: E731
        c_min, c_max = (0.0 if ratio else -width), 1.0
    peaks = np.array([hx[int(np.argmax(hy))] for hx, hy in hulls])
    breaks = np.concatenate([np.concatenate([at_lo(hx, g), at_hi(hx, g)]) for g, (hx, _) in enumerate(hulls)]
                            + [[c_min, c_max]])
    breaks = np.unique(breaks[(breaks >= c_min) & (breaks <= c_max)])

    def total(c: FloatArray) -> FloatArray:
        k = np.clip(peaks[:, None], np.maximum(klo_of(c), 0), np.minimum(khi_of(c), n[:, None]))
        return sum(np.interp(k[g], hx, hy) for g, (hx, hy) in enumerate(hulls))

    # The total is concave in c (each group's term is a concave envelope maximized over a window that
    # slides linearly with c) and linear between breakpoints: narrow in on the best breakpoint.
    lo, hi = 0, len(breaks) - 1
    while True:
        idx = np.unique(np.linspace(lo, hi, min(hi - lo + 1, 65)).astype(np.intp))
        vals = total(breaks[idx])
        i = int(np.argmax(vals))
        if len(idx) == hi - lo + 1:
            return float(vals[i])
        lo, hi = int(idx[max(i - 1, 0)]), int(idx[min(i + 1, len(idx) - 1)])


def _roc_hull(cv: _Curves) -> IntArray:
    """Flat indices of the vertices of every group's ROC hull (the convex hull of its (FP, TP) points),
    group after group.

    Along a group's candidates FP and TP never decrease, so the points are in lexicographic order and the
    hull is an upper chain and a lower chain between the first point (0, 0) and the last (N, P). A point
    that does not turn clockwise from its neighbours in the chain kept so far lies on or below the segment
    joining them (or is hidden behind one of them on a vertical line) and is not an upper vertex; every
    such point is dropped at once, repeatedly, until the chain turns clockwise everywhere: that is the upper
    chain. The lower chain likewise with the turns reversed. Counts are integers, so the turns are exact."""
    ends = np.zeros(len(cv.k), bool)
    ends[cv.start[:-1]] = ends[cv.start[1:] - 1] = True
    chains = []
    for sign in (1.0, -1.0):  # upper chain: drop cross >= 0; lower chain: drop cross <= 0
        keep = np.arange(len(cv.k))
        while True:
            x, y = cv.fp[keep], cv.tp[keep]
            cross = (x[1:-1] - x[:-2]) * (y[2:] - y[1:-1]) - (y[1:-1] - y[:-2]) * (x[2:] - x[1:-1])
            drop = np.zeros(len(keep), bool)
            drop[1:-1] = (sign * cross >= 0) & ~ends[keep[1:-1]]
            if not drop.any():
                break
            keep = keep[~drop]
        chains.append(keep)
    return np.union1d(*chains)


@dataclass(frozen=True)
class _Mixed:
    """The best randomized rule: its gain over the deterministic candidates (objective units; NaN if the solver
    failed), the mixing weight of each hull vertex (flat candidate indices ``vertices``) and the band positions."""

    gain: float
    vertices: IntArray
    weights: FloatArray
    positions: dict[str, float]


#: Each target's band quantities for the linear program: (quantity, ratio of the upper edge to the position).
_LP_BANDS = {"ofi": (("B", None),), "demographic_parity": (("rate", None),), "four_fifths": (("rate", FOUR_FIFTHS),),
             "equal_opportunity": (("TPR", None),), "equalized_odds": (("TPR", None), ("FPR", None))}


def _randomized_lp(cv: _Curves, target: str, width: float, chosen: IntArray) -> _Mixed:
    """The best rule randomizing between thresholds within each group, for any target, as a linear program.

    Mixing a group's thresholds reaches exactly the convex hull of its ROC points (FP, TP), and the objective and
    every target's quantity (B, selection rate, TPR, FPR) are linear in (FP, TP) within a group, so the optimum is
    a linear program over mixing weights λ of each group's hull vertices (Σ λ = 1 per group) and the free band
    positions c: c <= E q_g <= c + T for every group (E q_g <= c / 0.8 for four-fifths; TPR and FPR with a
    position each under equalized odds; Hardt et al., 2016), solved by HiGHS, whose basic solution mixes at most
    one vertex more per group than there are band constraints on it (two thresholds, three for equalized odds).
    The objective is measured from the candidates ``chosen``, which are feasible, so the optimum is the gain
    itself (>= 0). For the targets linear in k the tests check it against :func:`_randomized_total`."""
    if cv._roc is None:
        cv._roc = _roc_hull(cv)
    v = cv._roc
    g = cv.group[v]
    m, groups = len(v), cv.groups
    bands = _LP_BANDS[target]
    unit = abs(cv.report(1.0) - cv.report(0.0))
    cost = np.concatenate([-unit * (cv.value[v] - cv.value[chosen][g]), np.zeros(len(bands))])
    rows, cols, vals, bound = [], [], [], []
    for i, (name, ratio) in enumerate(bands):  # rows 2·(i·G + g): c − E q <= 0; 2·(i·G + g) + 1: E q − c·r <= T
        q = cv.quantity(name)[v]
        low = 2 * (i * groups + g)
        rows += [low, low + 1, 2 * (i * groups + np.arange(groups)), 2 * (i * groups + np.arange(groups)) + 1]
        cols += [np.arange(m), np.arange(m), np.full(groups, m + i), np.full(groups, m + i)]
        vals += [-q, q, np.ones(groups), np.full(groups, -1.0 / ratio if ratio else -1.0)]
        bound += [np.tile([0.0, 0.0 if ratio else width], groups)]
    shape = (2 * groups * len(bands), m + len(bands))
    a_ub = sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=shape)
    a_eq = sparse.csr_matrix((np.ones(m), (g, np.arange(m))), shape=(groups, m + len(bands)))
    c_low = -1.0 - width if target == "ofi" else 0.0 if target == "four_fifths" else -width
    bounds = [(0.0, None)] * m + [(c_low, 1.0)] * len(bands)
    lp = linprog(cost, A_ub=a_ub, b_ub=np.concatenate(bound), A_eq=a_eq, b_eq=np.ones(groups), bounds=bounds,
                 method="highs")
    if lp.status != 0:
        return _Mixed(math.nan, v, np.zeros(m), {})
    return _Mixed(max(0.0, float(-lp.fun)), v, np.clip(lp.x[:m], 0.0, None),
                  {name: float(c) for (name, _), c in zip(bands, lp.x[m:])})


def _randomized_roc_gain(cv: _Curves, target: str, width: float, chosen: IntArray) -> float:
    """The best randomized rule's gain over the deterministic candidates ``chosen`` (:func:`_randomized_lp`)."""
    return _randomized_lp(cv, target, width, chosen).gain
