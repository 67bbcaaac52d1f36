"""Honest numbers after mitigation: cross-fitting (every row measured once, by a rule fitted without it) and each
target's own measure on held-out decisions with a stratified bootstrap interval.

**Cross-fitting.** A single split fits on one part and measures on the other, so half the rows never measure
anything. :func:`cross_fit` cuts the rows into k folds (within each group, labels spread evenly; :func:`fold_rows`),
fits the thresholds k times (:func:`fairness_core.mitigation.cross_fit`), each time on every fold but one, and decides each row by the rule fitted without its
fold. The out-of-fold decisions of all n rows are the held-out estimate of the procedure "fit thresholds on rows
like these"; the rule to deploy is fitted once on all rows (its numbers on other rows are what the cross-fitted
estimate predicts, not a measurement of that very rule).

**Intervals.** :func:`target_measures` gives, for 0/1 decisions on held-out rows, the largest |OFI|, the smallest
impact ratio, the range of selection rates, of TPRs and of FPRs, and the objective, each with a percentile interval
of a bootstrap that resamples rows within each group × label stratum. Within a stratum the number of positive
decisions in a resample is Binomial(n_s, x_s / n_s), so the resamples are drawn as counts (replicates × strata
binomial draws, no row is copied). A largest gap is never negative, so near 0 its interval leans high
(conservative). A measure undefined on these rows (no group with actual positives for a TPR range, nobody selected
for an impact ratio) is NaN with the reason in ``note``.

>>> import numpy as np
>>> folds = fold_rows(["a"] * 6 + ["b"] * 4, [1, 0] * 5, folds=2)
>>> np.bincount(folds).tolist()
[5, 5]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from ...common.vocabulary import check_alpha
from .inputs import FloatArray, IntArray, _labels, _rows, _vector
from .rule import ThresholdRule, _measure_counts

#: Fewest and most folds :func:`cross_fit` takes.
MIN_FOLDS, MAX_FOLDS = 2, 20
#: Bootstrap resamples behind :func:`target_measures`' intervals.
REPLICATES = 2000
#: The measures :func:`target_measures` returns, in order, and the targets each belongs to.
MEASURES = {"largest |OFI|": ("ofi", "none"), "smallest impact ratio": ("four_fifths",),
            "selection-rate gap": ("demographic_parity",), "TPR gap": ("equal_opportunity", "equalized_odds"),
            "FPR gap": ("equalized_odds",)}


def fold_rows(groups: Any, y_true: Any, folds: int = 5, seed: int = 0) -> IntArray:
    """Each row's fold, 0 … folds − 1: within each group the rows are ordered by label, at random within a label
    (``seed``), and dealt to the folds in turn, so each group's rows and each group's positives are spread as evenly
    as possible (a group of at least ``folds`` rows is in every fold)."""
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or not MIN_FOLDS <= folds <= MAX_FOLDS:
        raise ValueError(f"folds must be a whole number from {MIN_FOLDS} to {MAX_FOLDS}; got {folds!r}")
    g, y = _vector(groups, "groups"), _labels(y_true)
    if len(g) != len(y):
        raise ValueError(f"groups and y_true need one value per row: groups has {len(g):,}, y_true has {len(y):,}")
    codes, names = pd.factorize(g)
    if (codes < 0).any():
        raise ValueError(f"groups has missing values (first at position {int(np.argmax(codes < 0))}); name a group "
                         "for every row")
    sizes = np.bincount(codes, minlength=len(names))
    if (small := np.flatnonzero(sizes < 2)).size:
        raise ValueError(f"cross-fitting needs at least 2 rows in every group; {pd.Index(names)[small[:5]].tolist()!r} "
                         "have 1: leave them out or join them to another group")
    order = np.lexsort((np.random.default_rng(seed).random(len(g)), y, codes))
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rank = np.arange(len(g)) - first[codes[order]]
    out = np.empty(len(g), np.intp)
    out[order] = (rank + np.random.default_rng(seed + 1).integers(0, folds, len(names))[codes[order]]) % folds
    return out


@dataclass(frozen=True)
class CrossFit:
    """Cross-fitted thresholds: ``folds`` (each row's fold), ``rules`` (rule j fitted on every fold but j) and
    ``shared`` (one shared threshold fitted on the same rows: the "before"), and for every row the decision of the
    rule fitted without it: ``predictions`` (drawn, for randomized rules), ``probabilities`` (its chance of the
    positive decision) and ``shared_predictions``."""

    folds: IntArray
    rules: tuple[ThresholdRule, ...]
    shared: tuple[ThresholdRule, ...]
    predictions: npt.NDArray[np.int8]
    probabilities: FloatArray
    shared_predictions: npt.NDArray[np.int8]

    def measure(self, y_true: Any, groups: Any) -> dict[str, float]:
        """The objective, the target's disparity and the largest |OFI| of the out-of-fold decisions, by their
        expected counts (as :meth:`ThresholdRule.measure`), on all the rows."""
        rule = self.rules[0]
        rows = _rows(self.probabilities, y_true, groups)
        k = len(rows.names)
        p = self.probabilities
        tp = np.bincount(rows.codes, weights=p * rows.y, minlength=k)
        fp = np.bincount(rows.codes, weights=p * ~rows.y, minlength=k)
        n = np.bincount(rows.codes, minlength=k).astype(float)
        pos = np.bincount(rows.codes, weights=rows.y, minlength=k)
        return _measure_counts(tp, fp, n, pos, rule.target, rule.objective, rule.cost_fp, rule.cost_fn)


def _gap(x: FloatArray) -> FloatArray:
    """Largest minus smallest over groups (axis −1), groups where x is NaN left out; NaN where fewer than two
    groups define it."""
    ok = ~np.isnan(x)
    hi = np.where(ok, x, -np.inf).max(axis=-1)
    lo = np.where(ok, x, np.inf).min(axis=-1)
    return np.where(ok.sum(axis=-1) >= 2, hi - lo, np.nan)


def _all_measures(tp: FloatArray, fp: FloatArray, n: FloatArray, pos: FloatArray, objective: str, cost_fp: float,
                  cost_fn: float) -> FloatArray:
    """Every measure of :data:`MEASURES` and the objective from per-group counts (last axis: groups); shape
    (..., 6)."""
    neg = n - pos
    with np.errstate(divide="ignore", invalid="ignore"):
        rate, b = (tp + fp) / n, (tp + fp - pos) / n
        tpr = np.where(pos > 0, tp / np.where(pos > 0, pos, 1), np.nan)
        fpr = np.where(neg > 0, fp / np.where(neg > 0, neg, 1), np.nan)
        top = rate.max(axis=-1)
        ratio = np.where(top > 0, rate.min(axis=-1) / np.where(top > 0, top, 1), np.nan)
        big_p, big_n, rows = pos.sum(), neg.sum(), n.sum()
        tp_all, fp_all = tp.sum(axis=-1), fp.sum(axis=-1)
        value = {"accuracy": (tp_all + big_n - fp_all) / rows,
                 "balanced_accuracy": 0.5 * (tp_all / big_p + (big_n - fp_all) / big_n) if big_p and big_n
                 else np.full(tp_all.shape, np.nan),
                 "cost": (cost_fp * fp_all + cost_fn * (big_p - tp_all)) / rows}[objective]
    return np.stack([_gap(b), ratio, _gap(rate), _gap(tpr), _gap(fpr), value], axis=-1)


def target_measures(y_true: Any, y_pred: Any, groups: Any, objective: str = "accuracy", *, alpha: float = 0.05,
                    replicates: int = REPLICATES, seed: int = 0, cost_fp: float = 1.0,
                    cost_fn: float = 1.0) -> pd.DataFrame:
    """Each target's measure of decisions ``y_pred`` (0/1) on these rows, and the objective, with a 1 − alpha
    stratified bootstrap percentile interval (module docstring): one row per measure of :data:`MEASURES` then the
    objective; columns ``measure``, ``estimate``, ``ci_low``, ``ci_high``, ``note`` (why a value is undefined).

    >>> t = target_measures([1, 0, 1, 0, 1, 0], [1, 0, 1, 1, 0, 0], ["a", "a", "b", "b", "c", "c"], replicates=200)
    >>> t.set_index("measure").loc[["TPR gap", "accuracy"], "estimate"].tolist()
    [1.0, 0.6666666666666666]
    """
    check_alpha(alpha)
    if isinstance(replicates, bool) or not isinstance(replicates, (int, np.integer)) or replicates < 100:
        raise ValueError(f"replicates must be a whole number >= 100; got {replicates!r}")
    rows = _rows(np.zeros(len(_vector(y_pred, "y_pred"))), y_true, groups)
    pred = _labels(_vector(y_pred, "y_pred")) if not np.issubdtype(np.asarray(y_pred).dtype, np.floating) else None
    if pred is None:
        raise ValueError("y_pred must hold 0/1 decisions (draw a randomized rule's decisions with predict)")
    k = len(rows.names)
    stratum = rows.codes * 2 + rows.y
    size = np.bincount(stratum, minlength=2 * k).astype(float)
    chosen = np.bincount(stratum, weights=pred, minlength=2 * k)
    n, pos = size[0::2] + size[1::2], size[1::2]
    point = _all_measures(chosen[1::2], chosen[0::2], n, pos, objective, cost_fp, cost_fn)
    rng = np.random.default_rng(seed)
    with np.errstate(divide="ignore", invalid="ignore"):
        draws = rng.binomial(size.astype(np.int64), np.where(size > 0, chosen / np.where(size > 0, size, 1), 0.0),
                             (replicates, 2 * k)).astype(float)
    boot = _all_measures(draws[:, 1::2], draws[:, 0::2], n, pos, objective, cost_fp, cost_fn)
    names = [*MEASURES, objective.replace("_", " ")]
    why = {"TPR gap": "fewer than two groups have actual positives",
           "FPR gap": "fewer than two groups have actual negatives",
           "smallest impact ratio": "nobody is selected", objective.replace("_", " "): "needs both labels"}
    out = []
    for i, name in enumerate(names):   # over the six measures
        col = boot[:, i][~np.isnan(boot[:, i])]
        est = float(point[i])
        low, high = (np.quantile(col, [alpha / 2, 1 - alpha / 2]) if col.size and not math.isnan(est)
                     else (math.nan, math.nan))
        out.append({"measure": name, "estimate": est, "ci_low": float(low), "ci_high": float(high),
                    "note": why.get(name, "") if math.isnan(est) else ""})
    table = pd.DataFrame(out)
    table.attrs.update({"interval": f"{1 - alpha:.0%} stratified bootstrap percentile interval, {replicates:,} "
                                    "resamples within group × label", "rows": len(rows.y)})
    return table


__all__ = ["MIN_FOLDS", "MAX_FOLDS", "REPLICATES", "MEASURES", "CrossFit", "fold_rows", "target_measures"]
