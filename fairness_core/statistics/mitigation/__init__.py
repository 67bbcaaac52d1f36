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
found exactly. The objective is linear in (FP, TP), so for ``"equal_opportunity"`` the same holds over the
expected TP with the upper envelope of (TP, objective). For ``"equalized_odds"`` a group's randomized rules
reach exactly the convex hull of its ROC points (mixing up to three thresholds): the best randomized rule is
a small linear program over mixing weights of each group's hull vertices and the two band positions
(Hardt et al., 2016), solved by HiGHS. ``randomized_gain`` is the best randomized rule's advantage over the
deterministic thresholds (>= 0), in the objective's units, on the fitting rows; NaN with a reason only if
the solver fails.

The parts, by job: :mod:`.inputs` (checks, the split, the shared names), :mod:`.search` (curves, bands, the
search, randomized rules), :mod:`.rule` (the fitted rule and its disparities); the fitting itself is here.

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

import math
from typing import Any

import numpy as np
import pandas as pd

from .inputs import (  # noqa: F401  (the private names stay importable from here)
                     DEFAULT_TOLERANCE, DEFAULT_TOLERANCES, FOUR_FIFTHS, LINEAR_TARGETS, MAX_GROUPS, OBJECTIVES,
                     ROUNDING, TARGETS, BoolArray, FloatArray, InfeasibleTarget, IntArray, _check_options, _groups,
                     _labels, _Rows, _rows, _scores, _vector, split_rows,
                     )
from .rule import (  # noqa: F401
                   ThresholdRule, _disparities, _group_counts, _measure, _measure_counts, _min_di, _table_counts,
                   disparity,
                   )
from .search import (  # noqa: F401
                     _admissible, _Band, _bands, _choose, _Curves, _curves, _feasible_positions, _objective_values,
                     _randomized_roc_gain, _randomized_total, _roc_hull, _search, _smallest_tolerance, _sparse_table, _totals,
                     _upper_hull, objective_value,
                     )

#: Most (band positions × groups) evaluated at once; beyond, the search is strided, then refined.
SEARCH_BUDGET = 250_000


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
        best_total, at, exhaustive = _search(cv, bands, candidates, SEARCH_BUDGET)
        chosen = _choose(cv, bands, at)
        cut = cv.threshold[chosen]
        if target != "equalized_odds":
            randomized = cv.gain(_randomized_total(cv, target, tolerance), float(cv.value[chosen].sum()))
            note = ("the best rule mixing two thresholds at random within groups (the constraint holding in "
                    "expectation) would do this much better")
        else:
            randomized = _randomized_roc_gain(cv, target, tolerance, chosen)
            note = ("the best rule mixing thresholds at random within groups (over each group's ROC hull, the "
                    "constraint holding in expectation; a linear program, Hardt et al., 2016) would do this much "
                    "better")
            if math.isnan(randomized):
                note = f"not computed for {target!r}: the linear program over each group's ROC hull failed"
        if not exhaustive and not math.isnan(randomized):
            note += "; measured against a strided search"
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


__all__ = ["TARGETS", "LINEAR_TARGETS", "OBJECTIVES", "MAX_GROUPS", "FOUR_FIFTHS", "DEFAULT_TOLERANCE",
           "DEFAULT_TOLERANCES", "ROUNDING", "SEARCH_BUDGET", "InfeasibleTarget", "ThresholdRule", "fit_thresholds",
           "frontier", "disparity", "objective_value", "split_rows"]
