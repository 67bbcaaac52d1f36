"""The fitted rule and its numbers: :class:`ThresholdRule` (thresholds, predictions, measurement on any rows,
JSON) and every target's disparity from per-group counts (:func:`disparity`)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from .inputs import TARGETS, BoolArray, FloatArray, IntArray, _groups, _labels, _rows, _scores, _vector

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
    ``randomized_gain``: how much the best rule randomizing between thresholds within groups would improve
    the objective under the same target, on the fitting rows (``randomized_note`` says what it is; NaN with the
    reason if it could not be computed).
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


def _table_counts(table: pd.DataFrame) -> tuple[FloatArray, ...]:
    return (table["TP"].to_numpy(float), table["FP"].to_numpy(float), table["n"].to_numpy(float),
            table["positives"].to_numpy(float))


def _min_di(table: pd.DataFrame) -> float:
    return _disparities(*_table_counts(table))["four_fifths"]
