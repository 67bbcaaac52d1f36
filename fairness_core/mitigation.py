"""Per-group decision thresholds from a score: the best performance subject to a fairness target.

**Direction.** A higher score means the positive outcome — the *beneficial* one (hired, released,
approved; docs/methods.md) — is more likely. Where a model scores a harm (COMPAS's risk of
reoffending), pass ``-scores`` and labels with positive = the beneficial outcome, as the audit does
when it flips a harm. A row is predicted positive when its score is at or above its group's threshold.

**Why a band.** In a group of n rows with P actual positives, thresholded so that k rows are predicted
positive, TP_k + FP_k = k, so the marginal benefit B = (FP − FN)/n = (k − P)/n rises with k; so do
the selection rate k/n, the true positive rate TP_k/P and the false positive rate FP_k/N. Every target
asks one such quantity to lie, for every group, in a band whose position c is free:

=====================  ====================  ==============  =============================================
target                 quantity per group    band            constraint on the fitting rows
=====================  ====================  ==============  =============================================
``"ofi"``              B = (k − P)/n         [c, c + T]      every pair's \\|OFI\\| = \\|B_i − B_j\\| ≤ T
``"demographic_parity"`` selection rate k/n  [c, c + T]      max rate − min rate ≤ T
``"four_fifths"``      selection rate k/n    [c, c / 0.8]    min rate ≥ 0.8 · max rate (DI ≥ 4/5; T unused)
``"equal_opportunity"`` TPR                  [c, c + T]      max TPR − min TPR ≤ T
``"equalized_odds"``   TPR and FPR           two bands       both ranges ≤ T
``"none"``             —                     —               one threshold shared by every group
=====================  ====================  ==============  =============================================

**How.** Each group's scores are sorted once (descending); cumulative counts give TP_k and FP_k at
every threshold. Only k at the end of a run of tied scores is achievable (tied rows move together), so a
group with m distinct scores has m + 1 candidate thresholds (+inf: nobody selected). For a band position
c each group's admissible candidates form an interval of indices (its quantity is monotone in k), and
the best candidate in it is a range-maximum query on a sparse table, O(1) per query and vectorized over
many positions. The objective is additive over groups — accuracy, balanced accuracy
½(ΣTP/P + ΣTN/N) over all rows, or expected cost ``cost_fp``·FP + ``cost_fn``·FN (minimized) — so the
best total at c is the sum of the groups' maxima. The optimal band has its lower edge at some group's
achievable value, so searching those positions (the feasible ones, found exactly by an interval sweep)
is exact. When there are more than :data:`SEARCH_BUDGET` (positions × groups), the search takes an
evenly strided subset of the positions and then every position around the best (``exhaustive`` is then
False: the result satisfies the constraint exactly and is optimal among the positions searched).

**Exactness.** The returned thresholds satisfy the constraint on the fitting rows exactly (quantities
are ratios of counts, compared with a slack of :data:`ROUNDING` for floating point). Fit on one part of
the rows and measure on the rest (:func:`split_rows`): a constraint met exactly where it was tuned is
only estimated elsewhere.

**Infeasible.** Every target but ``"ofi"`` is always feasible (selecting nobody equalizes rates). OFI
within T needs, in every group, an achievable k near P + n·c; ties in the scores can make a small T
impossible. Then :func:`fit_thresholds` raises :class:`InfeasibleTarget`, whose message and
``smallest`` attribute give the smallest tolerance these rows allow (the page can offer it), rather than
returning thresholds that break the user's target.

**Randomized rules.** A rule that mixes two thresholds at random within a group reaches any expected k
and the upper concave envelope of the group's objective over k. For the targets linear in k (``"ofi"``,
``"demographic_parity"``, ``"four_fifths"``, constraints holding in expectation) the best randomized
rule is the maximum over c of the sum of the envelopes over each group's band, a concave function of c
found exactly; ``randomized_gain`` is its advantage over the deterministic thresholds, in the
objective's units. For TPR and FPR targets it is NaN with a reason.

>>> import numpy as np
>>> from fairness_core import mitigation
>>> scores = np.array([.9, .8, .7, .6, .3, .2,   .6, .5, .45, .4, .35, .1])
>>> y_true = np.array([1,  1,  0,  1,  0,  0,    1,  1,  0,   1,  0,   0])
>>> groups = np.array(["a"] * 6 + ["b"] * 6)         # the model scores group b lower
>>> shared = mitigation.fit_thresholds(scores, y_true, groups, target="none")
>>> shared.thresholds, round(shared.objective_value, 3), round(shared.max_abs_ofi, 3)
({'a': 0.5, 'b': 0.5}, 0.833, 0.333)
>>> rule = mitigation.fit_thresholds(scores, y_true, groups, target="ofi", tolerance=0.1)
>>> rule.thresholds, round(rule.objective_value, 3), rule.max_abs_ofi
({'a': 0.8, 'b': 0.5}, 0.833, 0.0)
>>> rule.predict(scores, groups).tolist()
[1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0]
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.spatial import ConvexHull, QhullError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
BoolArray = npt.NDArray[np.bool_]

#: Fairness targets :func:`fit_thresholds` can hold (see the module's table).
TARGETS = ("ofi", "demographic_parity", "four_fifths", "equal_opportunity", "equalized_odds", "none")
#: Targets whose quantity is linear in the count selected (the randomized optimum is computed for these).
LINEAR_TARGETS = ("ofi", "demographic_parity", "four_fifths")
#: Performance measures, additive over groups; "cost" is minimized, the others maximized.
OBJECTIVES = ("accuracy", "balanced_accuracy", "cost")
#: Most groups one fit takes.
MAX_GROUPS = 500
#: The four-fifths rule's smallest impact ratio.
FOUR_FIFTHS = 0.8
#: Tolerance when none is given (the OFI tolerance the audit uses by default).
DEFAULT_TOLERANCE = 0.05
#: Tolerances :func:`frontier` sweeps when none are given: 0, 0.01, …, 0.20.
DEFAULT_TOLERANCES = tuple(round(0.01 * i, 2) for i in range(21))
#: Slack for comparing ratios of counts in floating point.
ROUNDING = 1e-12
#: Most (band positions × groups) evaluated at once; beyond, the search is strided, then refined.
SEARCH_BUDGET = 250_000


class InfeasibleTarget(ValueError):
    """No deterministic thresholds meet the target on these rows; ``smallest`` is the smallest tolerance
    that can be met (rounded up to 1e-6)."""

    def __init__(self, message: str, smallest: float) -> None:
        super().__init__(message)
        self.smallest = smallest


# --------------------------------------------------------------------------------------------- inputs

@dataclass(frozen=True)
class _Rows:
    scores: FloatArray
    y: BoolArray
    codes: IntArray
    names: list[Any]


def _vector(values: Any, name: str) -> np.ndarray:
    if isinstance(values, (pd.DataFrame, dict)):
        raise ValueError(f"{name} must be one column (one value per row); for several sensitive attributes "
                         "join them into one group name per row first")
    arr = np.asarray(values.to_numpy() if isinstance(values, pd.Series) else values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one value per row); got shape {arr.shape}")
    return arr


def _scores(values: Any) -> FloatArray:
    arr = _vector(values, "scores")
    try:
        s = arr.astype(float)
    except (TypeError, ValueError):
        raise ValueError(f"scores must be numbers; found {arr.dtype} values such as {arr[:3].tolist()!r}") from None
    bad = np.flatnonzero(~np.isfinite(s))
    if bad.size:
        raise ValueError(f"scores must be finite; {bad.size:,} are not (first at position {bad[0]}: {s[bad[0]]!r})")
    return s


def _labels(values: Any) -> BoolArray:
    arr = _vector(values, "y_true")
    if arr.dtype == bool:
        return arr
    try:
        f = arr.astype(float)
    except (TypeError, ValueError):
        f = None
    bad = np.ones(len(arr), bool) if f is None else ~((f == 0) | (f == 1))
    if bad.any():
        found = pd.unique(arr[bad])[:5].tolist()
        raise ValueError(f"y_true must hold only 0 and 1 (or True and False), 1 the beneficial outcome; found {found!r}")
    return f == 1


def _groups(values: Any) -> tuple[IntArray, list[Any]]:
    arr = _vector(values, "groups")
    try:
        codes, uniques = pd.factorize(arr, sort=True)
    except TypeError:  # values of several types cannot be sorted
        codes, uniques = pd.factorize(arr, sort=False)
    missing = np.flatnonzero(codes < 0)
    if missing.size:
        raise ValueError(f"groups has {missing.size:,} missing values (first at position {missing[0]}); "
                         "name a group for every row")
    names = list(uniques.tolist() if hasattr(uniques, "tolist") else uniques)
    if len(names) < 2:
        raise ValueError(f"groups must name at least two groups; every row is in {names[0]!r}" if names
                         else "groups must name at least two groups")
    if len(names) > MAX_GROUPS:
        raise ValueError(f"groups names {len(names):,} groups; at most {MAX_GROUPS} can be fitted")
    return codes.astype(np.intp), names


def _rows(scores: Any, y_true: Any, groups: Any) -> _Rows:
    s, y, g = _vector(scores, "scores"), _vector(y_true, "y_true"), _vector(groups, "groups")
    sizes = {"scores": len(s), "y_true": len(y), "groups": len(g)}
    if len(set(sizes.values())) != 1:
        raise ValueError("scores, y_true and groups need one value per row: "
                         + ", ".join(f"{k} has {v:,}" for k, v in sizes.items()))
    if len(s) == 0:
        raise ValueError("scores is empty: there are no rows to fit")
    codes, names = _groups(g)
    return _Rows(_scores(s), _labels(y), codes, names)


def _check_options(target: str, tolerance: float, objective: str, cost_fp: float, cost_fn: float) -> float:
    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(map(repr, TARGETS))}; got {target!r}")
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(map(repr, OBJECTIVES))}; got {objective!r}")
    for name, v in (("cost_fp", cost_fp), ("cost_fn", cost_fn)):
        if not (isinstance(v, (int, float, np.integer, np.floating)) and math.isfinite(v) and v >= 0):
            raise ValueError(f"{name} must be a finite number >= 0; got {v!r}")
    if objective == "cost" and cost_fp == 0 and cost_fn == 0:
        raise ValueError("cost_fp and cost_fn are both 0: every threshold costs nothing; give a positive weight")
    try:
        t = float(tolerance)
    except (TypeError, ValueError):
        raise ValueError(f"tolerance must be a number; got {tolerance!r}") from None
    top = 2.0 if target == "ofi" else 1.0
    if not (0 <= t <= top):
        raise ValueError(f"tolerance must be in [0, {top:g}] for target {target!r}; got {tolerance!r}")
    return t


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
    _hulls: list[tuple[FloatArray, FloatArray]] | None = None
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


def _search(cv: _Curves, bands: list[_Band], candidates: list[FloatArray]) -> tuple[float, list[float], bool]:
    """Best total over the grid of candidate positions: exhaustive when it fits in SEARCH_BUDGET, else a
    strided pass then every position around the best, repeated until the stride is 1."""
    per_axis = max(2, int((SEARCH_BUDGET / cv.groups) ** (1 / len(candidates))))
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
    with the band holding for expected counts: max over c of Σ_g hull_g(clip(k*_g, klo_g(c), khi_g(c)))."""
    if cv._hulls is None:
        cv._hulls = [_upper_hull(cv.k[a:b], cv.value[a:b]) for a, b in zip(cv.start[:-1], cv.start[1:])]
    n, pos = cv.n, cv.pos
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
    peaks = np.array([hx[int(np.argmax(hy))] for hx, hy in cv._hulls])
    breaks = np.concatenate([np.concatenate([at_lo(hx, g), at_hi(hx, g)]) for g, (hx, _) in enumerate(cv._hulls)]
                            + [[c_min, c_max]])
    breaks = np.unique(breaks[(breaks >= c_min) & (breaks <= c_max)])

    def total(c: FloatArray) -> FloatArray:
        k = np.clip(peaks[:, None], np.maximum(klo_of(c), 0), np.minimum(khi_of(c), n[:, None]))
        return sum(np.interp(k[g], hx, hy) for g, (hx, hy) in enumerate(cv._hulls))

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


# ---------------------------------------------------------------------------------------- the result

@dataclass(frozen=True)
class ThresholdRule:
    """Per-group decision thresholds: predict positive (the beneficial outcome) when score >= the group's
    threshold (+inf: nobody in the group is selected).

    ``objective_value``, ``disparity`` and ``max_abs_ofi`` are measured on the fitting rows, where the
    constraint holds exactly; :meth:`measure` gives the same numbers on any other rows.
    ``disparity`` is the target's: the largest |OFI| ("ofi", "none"), the largest difference in selection
    rate, TPR, or max(TPR, FPR differences), or for "four_fifths" the smallest impact ratio.
    ``groups_table`` has one row per group: threshold, n, positives, selected, TP, FP, FN, TN, selection
    rate, TPR, FPR, B. ``exhaustive`` says whether every band position was searched (see the module).
    ``randomized_gain``: how much a randomized rule would improve the objective under the same target
    (NaN with ``randomized_note`` where not computed).
    """

    thresholds: dict[Any, float]
    target: str
    tolerance: float
    objective: str
    cost_fp: float
    cost_fn: float
    objective_value: float
    disparity: float
    max_abs_ofi: float
    groups_table: pd.DataFrame
    exhaustive: bool
    randomized_gain: float
    randomized_note: str
    fitted_rows: int

    def predict(self, scores: Any, groups: Any) -> npt.NDArray[np.int8]:
        """0/1 predictions: 1 where the score is at or above its group's threshold. Every group must be one
        the thresholds were fitted for."""
        s, g = _vector(scores, "scores"), _vector(groups, "groups")
        if len(s) != len(g):
            raise ValueError(f"scores and groups need one value per row: scores has {len(s):,}, groups has {len(g):,}")
        s = _scores(s)
        names = list(self.thresholds)
        index = pd.Index(names).get_indexer(g)
        if (index < 0).any():
            unknown = pd.unique(g[index < 0])[:5].tolist()
            raise ValueError(f"groups holds groups the thresholds were not fitted for: {unknown!r}; "
                             f"fitted: {names[:10]!r}")
        cut = np.array([self.thresholds[name] for name in names], dtype=float)
        return (s >= cut[index]).astype(np.int8)

    def measure(self, scores: Any, y_true: Any, groups: Any) -> dict[str, float]:
        """The objective, the target's disparity and the largest |OFI| of :meth:`predict` on these rows (held-out
        rows: the honest numbers)."""
        rows = _rows(scores, y_true, groups)
        y_pred = self.predict(rows.scores, np.asarray(rows.names, dtype=object)[rows.codes])
        return _measure(rows.y, y_pred.astype(bool), rows.codes, len(rows.names), self.target, self.objective,
                        self.cost_fp, self.cost_fn)

    def to_json(self) -> str:
        """The rule as JSON: thresholds by group name (null: nobody selected) with the settings that made it."""
        return json.dumps({
            "rule": "predict the positive (beneficial) outcome when score >= the group's threshold; null: never",
            "thresholds": {str(k): (None if math.isinf(v) else v) for k, v in self.thresholds.items()},
            "target": self.target, "tolerance": self.tolerance, "objective": self.objective,
            "cost_fp": self.cost_fp, "cost_fn": self.cost_fn,
            "fitted_rows": self.fitted_rows, "objective_value_on_fitting_rows": self.objective_value,
            "disparity_on_fitting_rows": self.disparity}, indent=2)


def _group_counts(y: BoolArray, y_pred: BoolArray, codes: IntArray, n_groups: int) -> tuple[FloatArray, ...]:
    tp = np.bincount(codes, weights=y & y_pred, minlength=n_groups)
    fp = np.bincount(codes, weights=~y & y_pred, minlength=n_groups)
    n = np.bincount(codes, minlength=n_groups).astype(float)
    pos = np.bincount(codes, weights=y, minlength=n_groups)
    return tp, fp, n, pos


def _disparities(tp: FloatArray, fp: FloatArray, n: FloatArray, pos: FloatArray) -> dict[str, float]:
    """Every target's disparity from per-group counts (NaN where no group defines it)."""
    k, neg = tp + fp, n - pos
    with np.errstate(divide="ignore", invalid="ignore"):
        b, rate = (k - pos) / n, k / n
        tpr = np.where(pos > 0, tp / pos, np.nan)
        fpr = np.where(neg > 0, fp / neg, np.nan)

    def spread(x: FloatArray) -> float:
        x = x[~np.isnan(x)]
        return float(x.max() - x.min()) if x.size else math.nan

    ofi = spread(b)
    return {"ofi": ofi, "none": ofi, "demographic_parity": spread(rate),
            "four_fifths": float(rate.min() / rate.max()) if rate.max() > 0 else math.nan,
            "equal_opportunity": spread(tpr), "equalized_odds": max(spread(tpr), spread(fpr))}


def _measure(y: BoolArray, y_pred: BoolArray, codes: IntArray, n_groups: int, target: str, objective: str,
             cost_fp: float, cost_fn: float) -> dict[str, float]:
    return _measure_counts(*_group_counts(y, y_pred, codes, n_groups), target, objective, cost_fp, cost_fn)


def _measure_counts(tp: FloatArray, fp: FloatArray, n: FloatArray, pos: FloatArray, target: str, objective: str,
                    cost_fp: float, cost_fn: float) -> dict[str, float]:
    d = _disparities(tp, fp, n, pos)
    big_p, big_n = pos.sum(), n.sum() - pos.sum()
    tp_all, fp_all = tp.sum(), fp.sum()
    value = {"accuracy": (tp_all + big_n - fp_all) / n.sum(),
             "balanced_accuracy": 0.5 * (tp_all / big_p + (big_n - fp_all) / big_n) if big_p and big_n else math.nan,
             "cost": (cost_fp * fp_all + cost_fn * (big_p - tp_all)) / n.sum()}[objective]
    return {"objective": float(value), "disparity": d[target], "max_abs_ofi": d["ofi"],
            "min_di": d["four_fifths"], "rows": int(n.sum())}


def disparity(y_true: Any, y_pred: Any, groups: Any, target: str = "ofi") -> float:
    """A target's disparity of 0/1 predictions on any rows (as :class:`ThresholdRule` reports it).

    The largest |OFI| over pairs ("ofi"), the range of selection rates ("demographic_parity"), the smallest
    impact ratio ("four_fifths"; NaN when nobody is selected), the range of TPRs ("equal_opportunity") or
    the larger of the TPR and FPR ranges ("equalized_odds"); groups where a rate is undefined are left out.

    >>> disparity([1, 0, 1, 0], [1, 1, 0, 0], ["a", "a", "b", "b"])   # B_a = 1/2, B_b = −1/2
    1.0
    """
    if target not in TARGETS or target == "none":
        raise ValueError(f"target must be one of {', '.join(map(repr, TARGETS[:-1]))}; got {target!r}")
    y, pred, g = _labels(y_true), _vector(y_pred, "y_pred"), _vector(groups, "groups")
    if not len(y) == len(pred) == len(g):
        raise ValueError(f"y_true, y_pred and groups need one value per row: they have {len(y):,}, {len(pred):,} "
                         f"and {len(g):,}")
    try:
        pred_f = pred.astype(float)
    except (TypeError, ValueError):
        pred_f = np.full(len(pred), np.nan)
    if not np.isin(pred_f, (0.0, 1.0)).all():
        raise ValueError("y_pred must hold only 0 and 1 (or True and False)")
    codes, names = _groups(g)
    tp, fp, n, pos = _group_counts(y, pred_f == 1, codes, len(names))
    return _disparities(tp, fp, n, pos)[target]


# ------------------------------------------------------------------------------------------- fitting

def _shared_threshold(rows: _Rows, cv: _Curves) -> float:
    """The one threshold for everyone that maximizes the objective (the highest among equals)."""
    s, y = rows.scores[cv.by_score], rows.y[cv.by_score]
    last = np.ones(len(s), bool)
    last[:-1] = s[1:] != s[:-1]
    ends = np.flatnonzero(last)
    tp = np.concatenate([[0.0], np.cumsum(y)[ends]])
    fp = np.concatenate([[0.0], ends + 1.0]) - tp
    pos, neg = cv.pos.sum(), cv.neg.sum()
    value = _objective_values(tp, fp, pos, neg, cv.objective, cv.cost_fp, cv.cost_fn, pos, neg)
    best = int(np.argmax(value))
    return math.inf if best == 0 else float(s[ends[best - 1]])


def _solve(cv: _Curves, target: str, tolerance: float) -> ThresholdRule:
    rows = cv.rows
    exhaustive = True
    if target == "none":
        t = _shared_threshold(rows, cv)
        cut = np.full(cv.groups, t)
        randomized, note = 0.0, "unconstrained: one shared threshold is optimal, randomizing cannot help"
    else:
        bands = _bands(target, tolerance)
        for band in bands:
            need = cv.pos if band.quantity == "TPR" else cv.neg if band.quantity == "FPR" else None
            if need is not None and (need == 0).any():
                which = [rows.names[g] for g in np.flatnonzero(need == 0)[:5]]
                kind = "actual positives" if band.quantity == "TPR" else "actual negatives"
                raise ValueError(f"target {target!r} compares each group's {band.quantity}, undefined in groups "
                                 f"without {kind}: {which!r} have none in these rows")
        candidates = [_feasible_positions(cv, band) for band in bands]
        if any(c.size == 0 for c in candidates):
            smallest = _smallest_tolerance(cv, bands[0])
            raise InfeasibleTarget(
                f"no thresholds keep every pair's |OFI| within {tolerance:g} on these rows (tied scores make "
                f"some counts unreachable); the smallest tolerance they allow is {smallest:.6f}", smallest)
        best_total, at, exhaustive = _search(cv, bands, candidates)
        chosen = _choose(cv, bands, at)
        cut = cv.threshold[chosen]
        if target in LINEAR_TARGETS:
            randomized = cv.gain(_randomized_total(cv, target, tolerance), float(cv.value[chosen].sum()))
            note = ("the best rule mixing two thresholds at random within groups (the constraint holding in "
                    "expectation) would do this much better" + ("" if exhaustive else
                                                                 "; measured against a strided search"))
        else:
            randomized = math.nan
            note = (f"not computed for {target!r}: TPR and FPR are not linear in the number selected, so the "
                    "randomized optimum is a linear program over each group's ROC hull (Hardt et al., 2016)")
    if target == "none":
        tp, fp, n, pos = _group_counts(rows.y, rows.scores >= cut[rows.codes], rows.codes, cv.groups)
    else:  # the chosen candidates' counts are the fitting rows' counts under these thresholds
        tp, fp, n, pos = cv.tp[chosen], cv.fp[chosen], cv.n, cv.pos
    m = _measure_counts(tp, fp, n, pos, target, cv.objective, cv.cost_fp, cv.cost_fn)
    with np.errstate(divide="ignore", invalid="ignore"):
        table = pd.DataFrame({
            "group": rows.names, "threshold": cut, "n": n.astype(np.int64), "positives": pos.astype(np.int64),
            "selected": (tp + fp).astype(np.int64), "TP": tp.astype(np.int64), "FP": fp.astype(np.int64),
            "FN": (pos - tp).astype(np.int64), "TN": (n - pos - fp).astype(np.int64),
            "selection_rate": (tp + fp) / n, "TPR": np.where(pos > 0, tp / pos, np.nan),
            "FPR": np.where(n > pos, fp / (n - pos), np.nan), "B": (tp + fp - pos) / n})
    return ThresholdRule(
        thresholds=dict(zip(rows.names, map(float, cut))), target=target, tolerance=tolerance,
        objective=cv.objective, cost_fp=cv.cost_fp, cost_fn=cv.cost_fn, objective_value=m["objective"],
        disparity=m["disparity"], max_abs_ofi=m["max_abs_ofi"], groups_table=table, exhaustive=exhaustive,
        randomized_gain=max(randomized, 0.0) if not math.isnan(randomized) else randomized,
        randomized_note=note, fitted_rows=len(rows.scores))


def fit_thresholds(scores: Any, y_true: Any, groups: Any, target: str = "ofi",
                   tolerance: float = DEFAULT_TOLERANCE, objective: str = "accuracy", *,
                   cost_fp: float = 1.0, cost_fn: float = 1.0) -> ThresholdRule:
    """Per-group thresholds on ``scores`` that maximize ``objective`` subject to ``target`` on these rows.

    Parameters
    ----------
    scores : array-like of finite numbers
        Higher = the beneficial positive outcome more likely (negate a harm's score first).
    y_true : array-like of 0/1 or bool
        1 = the beneficial outcome happened.
    groups : array-like
        Each row's group (2 to :data:`MAX_GROUPS` groups; join several attributes into one name first).
    target : str
        One of :data:`TARGETS` (the module's table gives each constraint).
    tolerance : float
        The band width T: the largest |OFI| over pairs, or the largest difference in selection rate / TPR /
        FPR. Unused by "four_fifths" (impact ratio >= 0.8) and "none".
    objective : str
        "accuracy", "balanced_accuracy" (½(TPR + TNR) over all rows) or "cost" (cost_fp·FP + cost_fn·FN per
        row, minimized).

    Returns
    -------
    ThresholdRule
        ``.thresholds`` ({group: threshold}), ``.predict(scores, groups)`` and the fitting rows' numbers.

    Raises
    ------
    InfeasibleTarget
        "ofi" only: no achievable thresholds meet the tolerance (ties); the message gives the smallest that can.
    ValueError
        Bad inputs, named; "equal_opportunity" / "equalized_odds" with a group without actual positives
        (negatives), whose TPR (FPR) is undefined.
    """
    tolerance = _check_options(target, tolerance, objective, cost_fp, cost_fn)
    rows = _rows(scores, y_true, groups)
    return _solve(_curves(rows, objective, cost_fp, cost_fn), target, tolerance)


def frontier(scores: Any, y_true: Any, groups: Any, target: str = "ofi",
             tolerances: Any = DEFAULT_TOLERANCES, objective: str = "accuracy", *,
             cost_fp: float = 1.0, cost_fn: float = 1.0) -> pd.DataFrame:
    """The trade-off as the tolerance varies, on the fitting rows: one row per tolerance with the best
    ``objective``, the target's ``disparity``, ``max_abs_ofi`` (the largest |OFI| over pairs), ``min_di``,
    ``exhaustive``, ``randomized_gain``, ``feasible`` and a ``note`` (why a tolerance is infeasible), and
    ``thresholds``. The groups are sorted and the objective precomputed once for all tolerances.
    ``attrs["unconstrained"]`` holds the shared threshold's numbers (target "none"), the reference point.
    "four_fifths" has no tolerance to vary: use "demographic_parity" for its frontier.
    """
    if target in ("four_fifths", "none"):
        raise ValueError(f"target {target!r} has no tolerance to vary; frontier takes "
                         + ", ".join(repr(t) for t in TARGETS if t not in ("four_fifths", "none")))
    tols = np.atleast_1d(np.asarray(tolerances, dtype=float))
    if tols.size == 0:
        raise ValueError("tolerances is empty; give at least one")
    for t in tols:
        _check_options(target, t, objective, cost_fp, cost_fn)
    rows = _rows(scores, y_true, groups)
    cv = _curves(rows, objective, cost_fp, cost_fn)
    out = []
    for t in tols:
        try:
            r = _solve(cv, target, float(t))
        except InfeasibleTarget as exc:
            out.append({"tolerance": float(t), "objective": math.nan, "disparity": math.nan,
                        "max_abs_ofi": math.nan, "min_di": math.nan, "exhaustive": True,
                        "randomized_gain": math.nan, "feasible": False, "note": str(exc), "thresholds": None})
            continue
        out.append({"tolerance": float(t), "objective": r.objective_value, "disparity": r.disparity,
                    "max_abs_ofi": r.max_abs_ofi, "min_di": _min_di(r.groups_table), "exhaustive": r.exhaustive,
                    "randomized_gain": r.randomized_gain, "feasible": True, "note": "",
                    "thresholds": r.thresholds})
    df = pd.DataFrame(out)
    ref = _solve(cv, "none", 0.0)
    df.attrs.update({"target": target, "objective": objective, "rows": len(rows.scores),
                     "unconstrained": {"objective": ref.objective_value, "max_abs_ofi": ref.max_abs_ofi,
                                       "disparity": _disparities(*_table_counts(ref.groups_table))[target],
                                       "min_di": _min_di(ref.groups_table), "threshold": ref.thresholds}})
    return df


def _table_counts(table: pd.DataFrame) -> tuple[FloatArray, ...]:
    return (table["TP"].to_numpy(float), table["FP"].to_numpy(float), table["n"].to_numpy(float),
            table["positives"].to_numpy(float))


def _min_di(table: pd.DataFrame) -> float:
    return _disparities(*_table_counts(table))["four_fifths"]


def split_rows(groups: Any, y_true: Any, fraction: float = 0.5, seed: int = 0) -> BoolArray:
    """A stratified random split: True for the rows to fit thresholds on, False for the held-out rows on
    which every number after mitigation is measured.

    Within each stratum (group × label) a share ``fraction`` of the rows is drawn; where that share is
    not a whole number the count is rounded up or down at random (by ``seed``), so the expected share is
    exact in every stratum.

    >>> mask = split_rows(["a"] * 6 + ["b"] * 4, [1, 0] * 5, fraction=0.5)
    >>> int(mask.sum()), mask.dtype
    (5, dtype('bool'))
    """
    if not (isinstance(fraction, (int, float, np.floating)) and 0 < fraction < 1):
        raise ValueError(f"fraction must be strictly between 0 and 1; got {fraction!r}")
    g = _vector(groups, "groups")
    y = _labels(y_true)
    if len(g) != len(y):
        raise ValueError(f"groups and y_true need one value per row: groups has {len(g):,}, y_true has {len(y):,}")
    if len(g) == 0:
        raise ValueError("groups is empty: there are no rows to split")
    codes, _ = pd.factorize(g)
    if (codes < 0).any():
        raise ValueError(f"groups has missing values (first at position {int(np.argmax(codes < 0))}); name a group "
                         "for every row")
    stratum = codes.astype(np.int64) * 2 + y
    rng = np.random.default_rng(seed)
    order = np.lexsort((rng.random(len(g)), stratum))
    sizes = np.bincount(stratum)
    take = np.floor(fraction * sizes + rng.random(len(sizes))).astype(np.int64)
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rank = np.arange(len(g)) - first[stratum[order]]
    mask = np.zeros(len(g), bool)
    mask[order] = rank < take[stratum[order]]
    return mask
