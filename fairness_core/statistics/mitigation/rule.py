"""The fitted rule and its numbers: :class:`ThresholdRule` (thresholds, predictions, measurement on any rows,
JSON) and every target's disparity from per-group counts (:func:`disparity`)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from .inputs import OBJECTIVES, TARGETS, BoolArray, FloatArray, IntArray, _groups, _labels, _rows, _scores, _vector

#: The rule file's format name and version (:meth:`ThresholdRule.to_json`); another version is refused by name.
RULE_FORMAT, RULE_VERSION = "fairness_core threshold rule", 1
_RULE_SENTENCE = ("predict the positive (beneficial) outcome when score >= the group's threshold (null: never); "
                  "where a group has a mixture, draw one of its thresholds with the probability given, for each row")
_REQUIRED = ("format", "version", "groups", "target", "tolerance", "objective", "cost_fp", "cost_fn", "fitting_rows")
_REQUIRED_FIT = ("rows", "fingerprint", "objective_value", "disparity", "max_abs_ofi", "exhaustive",
                 "randomized_gain", "randomized_note", "per_group")


class RuleFileError(ValueError):
    """A rule file that cannot be read back: not JSON, another format or version, a field missing or wrong."""


def _uniforms(random_state: Any, n: int) -> FloatArray:
    """n draws from U[0, 1): ``random_state`` None (fresh entropy), an int seed, a numpy Generator or RandomState."""
    if isinstance(random_state, np.random.RandomState):
        return random_state.random_sample(n)
    if random_state is None or isinstance(random_state, (int, np.integer, np.random.Generator)) and not isinstance(
            random_state, bool):
        return np.random.default_rng(random_state).random(n)
    raise ValueError(f"random_state must be None, an int seed, a numpy Generator or RandomState; got {random_state!r}")


# ---------------------------------------------------------------------------------------- the result

@dataclass(frozen=True)
class ThresholdRule:
    """Per-group decision thresholds: predict positive (the beneficial outcome) when score >= the group's
    threshold (+inf: nobody in the group is selected).

    A **randomized** rule (``fit_thresholds(..., randomize=True)`` where mixing does better) holds in
    ``mixtures`` each group's thresholds and the probability of each ({group: ((threshold, probability), ...)},
    highest threshold first; two thresholds, three at most under equalized odds): for each row one of its group's
    thresholds is drawn, so two rows with the same score and group may be decided differently. Its
    ``thresholds`` are then the deterministic rule fitted beside it (for reference; :meth:`predict` uses the
    mixtures), ``band_positions`` the linear program's band positions (e.g. {"TPR": c, "FPR": c'}) and the counts
    of ``groups_table`` are expected counts. A deterministic rule has ``mixtures`` empty.

    ``objective_value``, ``disparity`` and ``max_abs_ofi`` are measured on the fitting rows, where the
    constraint holds exactly (in expectation for a randomized rule); :meth:`measure` gives the same numbers on
    any other rows. ``disparity`` is the target's: the largest |OFI| ("ofi", "none"), the largest difference in
    selection rate, TPR, or max(TPR, FPR differences), or for "four_fifths" the smallest impact ratio.
    ``groups_table`` has one row per group: threshold, n, positives, selected, TP, FP, FN, TN, selection
    rate, TPR, FPR, B. ``exhaustive`` says whether every band position was searched (see the module).
    ``randomized_gain``: how much the best rule randomizing between thresholds within groups improves the
    objective over the deterministic thresholds under the same target, on the fitting rows (``randomized_note``
    says what it is; NaN with the reason if it could not be computed). ``fingerprint``: a SHA-256 of the fitting
    rows (scores, labels, groups, in row order), so a rule file says which data made it.
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
    mixtures: dict[Any, tuple[tuple[float, float], ...]] = field(default_factory=dict)
    band_positions: dict[str, float] = field(default_factory=dict)
    fingerprint: str = ""

    @property
    def randomized(self) -> bool:
        """Whether :meth:`predict` draws between thresholds (see ``mixtures``)."""
        return bool(self.mixtures)

    def _components(self) -> tuple[FloatArray, FloatArray]:
        """Per group (rows in ``thresholds``' order) its thresholds and their cumulative probabilities, padded
        to the longest mixture (threshold +inf, cumulative 1)."""
        names = list(self.thresholds)
        mixes = [self.mixtures[name] if self.mixtures else ((self.thresholds[name], 1.0),) for name in names]
        width = max(len(m) for m in mixes)
        cut, cum = np.full((len(names), width), np.inf), np.ones((len(names), width))
        for i, m in enumerate(mixes):   # over groups (at most MAX_GROUPS), not rows
            cut[i, :len(m)] = [t for t, _ in m]
            cum[i, :len(m)] = np.cumsum([p for _, p in m])
        cum[:, -1] = 1.0
        return cut, cum

    def _group_index(self, scores: Any, groups: Any) -> tuple[FloatArray, IntArray]:
        s, g = _vector(scores, "scores"), _vector(groups, "groups")
        if len(s) != len(g):
            raise ValueError(f"scores and groups need one value per row: scores has {len(s):,}, groups has {len(g):,}")
        s = _scores(s)
        names = list(self.thresholds)
        if isinstance(groups, pd.Series) and isinstance(groups.dtype, pd.CategoricalDtype):
            codes, uniques = groups.cat.codes.to_numpy(), groups.cat.categories
        else:
            codes, uniques = pd.factorize(g)
        if (codes < 0).any():
            raise ValueError(f"groups has {int((codes < 0).sum()):,} missing values (first at position "
                             f"{int(np.argmax(codes < 0))}); name a group for every row")
        known = pd.Index(names).get_indexer(uniques)
        seen = np.bincount(codes, minlength=len(uniques)) > 0
        if (unknown := np.flatnonzero((known < 0) & seen)).size:
            raise ValueError(f"groups holds groups the thresholds were not fitted for: "
                             f"{pd.Index(uniques)[unknown[:5]].tolist()!r}; fitted: {names[:10]!r}")
        return s, known[codes]

    def predict(self, scores: Any, groups: Any, random_state: Any = None) -> npt.NDArray[np.int8]:
        """0/1 predictions: 1 where the score is at or above its group's threshold. A randomized rule draws each
        row's threshold from its group's mixture with ``random_state`` (an int seed makes it reproducible; a
        deterministic rule ignores it). Every group must be one the thresholds were fitted for."""
        s, index = self._group_index(scores, groups)
        cut, cum = self._components()
        if cut.shape[1] == 1:
            return (s >= cut[index, 0]).astype(np.int8)
        u = _uniforms(random_state, len(s))
        row_cut = cut[index, 0]
        for j in range(1, cut.shape[1]):   # over mixture components (at most three), not rows
            row_cut = np.where(u >= cum[index, j - 1], cut[index, j], row_cut)
        return (s >= row_cut).astype(np.int8)

    def selection_probability(self, scores: Any, groups: Any) -> FloatArray:
        """Each row's probability of the positive prediction: 0 or 1 for a deterministic rule, the mixture's
        probability of the thresholds at or below the score for a randomized one."""
        s, index = self._group_index(scores, groups)
        cut, cum = self._components()
        prob = np.diff(cum, axis=1, prepend=0.0)
        out = np.zeros(len(s))
        for j in range(cut.shape[1]):
            out += prob[index, j] * (s >= cut[index, j])
        return out

    def measure(self, scores: Any, y_true: Any, groups: Any, random_state: Any = None) -> dict[str, float]:
        """The objective, the target's disparity and the largest |OFI| of :meth:`predict` on these rows (held-out
        rows: the honest numbers). A randomized rule is measured by its expected counts (each row counted with
        its probability of selection), so the numbers do not depend on a draw; ``random_state`` is unused."""
        rows = _rows(scores, y_true, groups)
        names = np.asarray(rows.names, dtype=object)[rows.codes]
        if not self.randomized:
            y_pred = self.predict(rows.scores, names)
            return _measure(rows.y, y_pred.astype(bool), rows.codes, len(rows.names), self.target, self.objective,
                            self.cost_fp, self.cost_fn)
        p = self.selection_probability(rows.scores, names)
        k = len(rows.names)
        tp = np.bincount(rows.codes, weights=p * rows.y, minlength=k)
        fp = np.bincount(rows.codes, weights=p * ~rows.y, minlength=k)
        n = np.bincount(rows.codes, minlength=k).astype(float)
        pos = np.bincount(rows.codes, weights=rows.y, minlength=k)
        return _measure_counts(tp, fp, n, pos, self.target, self.objective, self.cost_fp, self.cost_fn)

    def to_json(self) -> str:
        """The rule as a versioned JSON file (:data:`RULE_VERSION`): every group's threshold (null: nobody
        selected) and mixture, the target, tolerance and objective, and the fitting rows' numbers and fingerprint.
        :meth:`from_json` reads it back; predictions are identical after the round trip."""
        def cut(t: float) -> float | None:
            return None if math.isinf(t) else float(t)

        groups = []
        for name, t in self.thresholds.items():
            entry: dict[str, Any] = {"group": _json_name(name), "threshold": cut(t)}
            if self.mixtures:
                entry["mixture"] = [{"threshold": cut(c), "probability": float(p)} for c, p in self.mixtures[name]]
            groups.append(entry)
        table = self.groups_table.assign(group=[_json_name(x) for x in self.groups_table["group"]])
        data = [[_json_value(v) for v in row] for row in table.itertuples(index=False)]
        return json.dumps({
            "format": RULE_FORMAT, "version": RULE_VERSION, "rule": _RULE_SENTENCE, "randomized": self.randomized,
            "groups": groups, "target": self.target, "tolerance": self.tolerance, "objective": self.objective,
            "cost_fp": self.cost_fp, "cost_fn": self.cost_fn, "band_positions": self.band_positions,
            "fitting_rows": {"rows": self.fitted_rows, "fingerprint": self.fingerprint,
                             "objective_value": _json_value(self.objective_value),
                             "disparity": _json_value(self.disparity), "max_abs_ofi": _json_value(self.max_abs_ofi),
                             "exhaustive": self.exhaustive, "randomized_gain": _json_value(self.randomized_gain),
                             "randomized_note": self.randomized_note,
                             "per_group": {"columns": list(table.columns), "data": data}}},
            indent=2, ensure_ascii=False, allow_nan=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> ThresholdRule:
        """The rule :meth:`to_json` wrote. Raises :class:`RuleFileError` naming what is wrong: not JSON, another
        format or version, a missing field, a threshold that is not a number, a mixture whose probabilities do
        not sum to 1. Fields it does not know (context a page adds) are ignored."""
        return _rule_from_json(text)


def _json_name(name: Any) -> Any:
    """A group name as JSON holds it: text, numbers and booleans as they are, anything else as its text."""
    name = name.item() if isinstance(name, np.generic) else name
    return name if isinstance(name, (str, int, float, bool)) else str(name)


def _json_value(v: Any) -> Any:
    v = v.item() if isinstance(v, np.generic) else v
    return None if isinstance(v, float) and not math.isfinite(v) else v


def _number(value: Any, where: str, allow_null: bool = False) -> float:
    if value is None and allow_null:
        return math.inf
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RuleFileError(f"{where} must be a finite number{' or null' if allow_null else ''}; got {value!r}")
    return float(value)


def _rule_from_json(text: str | bytes) -> ThresholdRule:
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RuleFileError(f"not a rule file: the JSON does not parse ({exc})") from None
    if not isinstance(doc, dict):
        raise RuleFileError("not a rule file: the JSON is not an object with the rule's fields")
    if doc.get("format") != RULE_FORMAT:
        raise RuleFileError(f"not a rule file: its format is {doc.get('format')!r}, not {RULE_FORMAT!r} (write one "
                            "with ThresholdRule.to_json or the Compare and Mitigate page)")
    if doc.get("version") != RULE_VERSION:
        raise RuleFileError(f"rule file version {doc.get('version')!r}: this fairness_core reads version "
                            f"{RULE_VERSION} only; fit the rule again with this version")
    fit = doc.get("fitting_rows")
    missing = [k for k in _REQUIRED if k not in doc] + [
        f"fitting_rows.{k}" for k in _REQUIRED_FIT if isinstance(fit, dict) and k not in fit]
    if missing:
        raise RuleFileError(f"rule file is missing the field{'s' if len(missing) > 1 else ''} "
                            + ", ".join(map(repr, missing)))
    if doc["target"] not in TARGETS or doc["objective"] not in OBJECTIVES:
        raise RuleFileError(f"rule file: target {doc['target']!r} or objective {doc['objective']!r} is not one this "
                            f"version knows ({', '.join(TARGETS)}; {', '.join(OBJECTIVES)})")
    groups = doc["groups"]
    if not isinstance(groups, list) or len(groups) < 2 or not all(isinstance(e, dict) and "group" in e and
                                                                  "threshold" in e for e in groups):
        raise RuleFileError("rule file: 'groups' must list at least two entries, each with 'group' and 'threshold'")
    names = [e["group"] for e in groups]
    if len(set(map(repr, names))) != len(names):
        raise RuleFileError(f"rule file names a group twice: {sorted({repr(x) for x in names if names.count(x) > 1})}")
    thresholds = {e["group"]: _number(e["threshold"], f"threshold of group {e['group']!r}", True) for e in groups}
    randomized = bool(doc.get("randomized"))
    mixtures: dict[Any, tuple[tuple[float, float], ...]] = {}
    for e in groups if randomized else ():
        mix = e.get("mixture")
        if not isinstance(mix, list) or not mix or not all(isinstance(c, dict) for c in mix):
            raise RuleFileError(f"rule file: randomized, but group {e['group']!r} has no 'mixture' list")
        parts = tuple((_number(c.get("threshold"), f"a mixture threshold of group {e['group']!r}", True),
                       _number(c.get("probability"), f"a mixture probability of group {e['group']!r}")) for c in mix)
        if any(not 0 <= p <= 1 for _, p in parts) or abs(sum(p for _, p in parts) - 1) > 1e-9:
            raise RuleFileError(f"rule file: group {e['group']!r}'s mixture probabilities must lie in [0, 1] and sum "
                                f"to 1; they are {[p for _, p in parts]}")
        mixtures[e["group"]] = parts
    per = fit["per_group"]
    try:
        table = pd.DataFrame([[np.nan if v is None else v for v in row] for row in per["data"]],
                             columns=per["columns"])
    except (TypeError, KeyError, ValueError) as exc:
        raise RuleFileError(f"rule file: fitting_rows.per_group is not a table ({exc})") from None

    def stat(v: Any) -> float:
        return math.nan if v is None else _number(v, "a fitting-rows number")

    return ThresholdRule(
        thresholds=thresholds, target=doc["target"], tolerance=_number(doc["tolerance"], "tolerance"),
        objective=doc["objective"], cost_fp=_number(doc["cost_fp"], "cost_fp"),
        cost_fn=_number(doc["cost_fn"], "cost_fn"), objective_value=stat(fit["objective_value"]),
        disparity=stat(fit["disparity"]), max_abs_ofi=stat(fit["max_abs_ofi"]), groups_table=table,
        exhaustive=bool(fit["exhaustive"]), randomized_gain=stat(fit["randomized_gain"]),
        randomized_note=str(fit["randomized_note"]), fitted_rows=int(_number(fit["rows"], "fitting_rows.rows")),
        mixtures=mixtures, band_positions={str(k): stat(v) for k, v in (doc.get("band_positions") or {}).items()},
        fingerprint=str(fit["fingerprint"]))


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
