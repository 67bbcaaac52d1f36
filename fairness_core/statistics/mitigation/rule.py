"""The fitted rule and its numbers: :class:`ThresholdRule` (thresholds, predictions, measurement on any rows,
JSON, the file's score on the rule's scale and the check that a file's scores are the ones it was fitted on) and
every target's disparity from per-group counts (:func:`disparity`)."""

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
#: Version 2 added ``score_scale`` (the score's transform and fitted range); version 1 is refused with the reason.
RULE_FORMAT, RULE_VERSION = "fairness_core threshold rule", 2
#: How a file's score becomes the score the rule was fitted on (the rule's scale, the one :meth:`ThresholdRule.predict`
#: takes), by name: "negate" for a harm's score and "complement" for a harm's probability, as the audit turns a
#: harm around so that higher means the beneficial outcome. Each is its own inverse.
SCORE_TRANSFORMS = {"identity": "the file's score as it is", "negate": "−(the file's score)",
                    "complement": "1 − (the file's score)"}
#: A file is refused when more than this share of its scores lies outside the fitted range
#: (:meth:`ThresholdRule.range_check`).
MAX_OUTSIDE_SHARE = 0.5
_RULE_SENTENCE = ("predict the positive (beneficial) outcome when the rule's score (score_scale.transform applied to "
                  "the file's score) >= the group's threshold (null: never); where a group has a mixture, draw one of "
                  "its thresholds with the probability given, for each row")
_REQUIRED = ("format", "version", "groups", "target", "tolerance", "objective", "cost_fp", "cost_fn", "fitting_rows",
             "score_scale")
_REQUIRED_FIT = ("rows", "fingerprint", "objective_value", "disparity", "max_abs_ofi", "exhaustive",
                 "randomized_gain", "randomized_note", "per_group")


class RuleFileError(ValueError):
    """A rule file that cannot be read back: not JSON, another format or version, a field missing or wrong."""


def transform_scores(scores: Any, transform: str) -> FloatArray:
    """Scores through one of :data:`SCORE_TRANSFORMS` (vectorized; each transform is its own inverse).

    >>> transform_scores([1, 10], "negate").tolist(), transform_scores([0.25], "complement").tolist()
    ([-1.0, -10.0], [0.75])
    """
    if transform not in SCORE_TRANSFORMS:
        raise ValueError(f"score transform must be one of {', '.join(map(repr, SCORE_TRANSFORMS))}; got {transform!r}")
    x = np.asarray(scores, dtype=float)
    return -x if transform == "negate" else 1.0 - x if transform == "complement" else x


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

    **The rule's scale.** Thresholds, :meth:`predict` and :meth:`selection_probability` take scores on the scale the
    rule was fitted on. ``score_transform`` (one of :data:`SCORE_TRANSFORMS`) says how a file's own score becomes
    that scale: "negate" when the rule was fitted on −score (a harm's score, such as COMPAS's decile, which the
    page and the audit negate so that higher means the beneficial outcome), "complement" on 1 − probability;
    :meth:`to_fitted_scale` applies it, and ``python -m fairness_core apply`` applies it to the file's column before
    predicting. ``score_range`` is the (min, max) of the fitting scores on the rule's scale (NaN: unknown);
    :meth:`range_check` refuses a file whose scores mostly lie outside it.
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
    score_transform: str = "identity"
    score_range: tuple[float, float] = (math.nan, math.nan)

    def __post_init__(self) -> None:
        if self.score_transform not in SCORE_TRANSFORMS:
            raise ValueError(f"score_transform must be one of {', '.join(map(repr, SCORE_TRANSFORMS))}; got "
                             f"{self.score_transform!r}")

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

    def to_fitted_scale(self, file_scores: Any) -> FloatArray:
        """A file's own scores (as the model writes them) on the scale the rule was fitted on: ``score_transform``
        applied. ``rule.predict(rule.to_fitted_scale(raw), groups)`` decides a file of raw scores.

        >>> rule = ThresholdRule({"a": -5.0, "b": -4.0}, "ofi", 0.05, "accuracy", 1, 1, 0.7, 0.0, 0.0, pd.DataFrame(),
        ...                      True, 0.0, "", 10, score_transform="negate", score_range=(-10.0, -1.0))
        >>> rule.predict(rule.to_fitted_scale([5, 6, 4, 5]), ["a", "a", "b", "b"]).tolist()   # decile <= 5, <= 4
        [1, 0, 1, 0]
        >>> rule.fitted_range_in_file_units()
        (1.0, 10.0)
        """
        return transform_scores(file_scores, self.score_transform)

    def fitted_range_in_file_units(self) -> tuple[float, float]:
        """``score_range`` in the file's own units (low, high): the fitting scores' range as the model writes them."""
        ends = transform_scores(np.asarray(self.score_range, dtype=float), self.score_transform)
        return float(np.min(ends)), float(np.max(ends))

    def range_check(self, file_scores: Any) -> str:
        """"" when a file's own scores (finite numbers, before the transform) suit the rule; else why not.

        The criterion: refuse when more than :data:`MAX_OUTSIDE_SHARE` (half) of the rows lie outside the fitted
        range (``score_range``, in the file's units; a relative slack of 1e-9 for rounding). Rows drawn like the
        fitting rows almost never do (a new row falls outside the min–max of n fitting rows with chance 2/(n + 1)),
        while a score negated twice or not at all, in other units (percent against probability) or of another
        model mostly does, and every threshold lies inside the fitted range: such a file would be decided all
        positive or all negative. A file that merely drifted keeps most rows inside. The reason names the file's
        range, the fitted range in the file's units and, where negating (or not negating) the scores would put
        them inside, that cause. An unknown range (NaN) or an empty file passes.
        """
        raw = np.asarray(file_scores, dtype=float)
        lo, hi = self.fitted_range_in_file_units()
        if raw.size == 0 or not (math.isfinite(lo) and math.isfinite(hi)):
            return ""
        slack = 1e-9 * max(1.0, abs(lo), abs(hi))

        def outside(x: FloatArray) -> float:
            return float(np.mean((x < lo - slack) | (x > hi + slack)))

        share = outside(raw)
        if share <= MAX_OUTSIDE_SHARE:
            return ""
        if self.score_transform == "negate" and outside(-raw) <= MAX_OUTSIDE_SHARE:
            cause = ("Negated, they would lie inside it: the rule was fitted on the negated score and negates this "
                     "column itself, so give it the raw scores as the model writes them (e.g. deciles 1 to 10, not "
                     "−10 to −1).")
        elif self.score_transform == "identity" and outside(-raw) <= MAX_OUTSIDE_SHARE:
            cause = ("Negated, they would lie inside it: the rule was fitted on the negated score of this column (or "
                     "the column holds negated scores). Fit the rule with score_transform='negate' so that apply "
                     "negates the column itself (the Compare and Mitigate page records it), or give the scores as "
                     "the rule was fitted on them.")
        else:
            cause = ("The likely cause: another scale or units (percent against a probability), another model's "
                     "score, or a rule fitted on other data; fit the rule again on rows like these.")
        own = ("" if self.score_transform == "identity" else f" (from {self.score_range[0]:.6g} to "
               f"{self.score_range[1]:.6g} on its own scale, {SCORE_TRANSFORMS[self.score_transform]})")
        return (f"holds scores from {raw.min():.6g} to {raw.max():.6g}, but the rule was fitted on scores from "
                f"{lo:.6g} to {hi:.6g} in this column's units{own}; {share:.0%} of the rows lie outside the fitted "
                f"range. {cause}")

    def to_json(self) -> str:
        """The rule as a versioned JSON file (:data:`RULE_VERSION`): every group's threshold (null: nobody
        selected) and mixture, the target, tolerance and objective, the fitting rows' numbers and fingerprint, and
        ``score_scale``: the transform from the file's score to the rule's (``score_transform``, with what it means)
        and the fitted range on the rule's scale and in the file's units (null: unknown). :meth:`from_json` reads it
        back; predictions are identical after the round trip."""
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
        known = all(math.isfinite(v) for v in self.score_range)
        scale = {"transform": self.score_transform, "rule_score": SCORE_TRANSFORMS[self.score_transform],
                 "fitted_range": [float(v) for v in self.score_range] if known else None,
                 "fitted_range_in_file_units": list(self.fitted_range_in_file_units()) if known else None}
        return json.dumps({
            "format": RULE_FORMAT, "version": RULE_VERSION, "rule": _RULE_SENTENCE, "randomized": self.randomized,
            "score_scale": scale, "groups": groups, "target": self.target, "tolerance": self.tolerance,
            "objective": self.objective, "cost_fp": self.cost_fp, "cost_fn": self.cost_fn,
            "band_positions": self.band_positions,
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
    if doc.get("version") == 1:
        raise RuleFileError("rule file version 1 does not say how the file's score was turned before fitting "
                            "(negated or not) nor its fitted range, so applying it could decide every row alike: "
                            "download the rule again from the Compare and Mitigate page, or fit it again with this "
                            f"version (it writes version {RULE_VERSION})")
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

    transform, fitted = _score_scale(doc["score_scale"])

    return ThresholdRule(
        thresholds=thresholds, target=doc["target"], tolerance=_number(doc["tolerance"], "tolerance"),
        objective=doc["objective"], cost_fp=_number(doc["cost_fp"], "cost_fp"),
        cost_fn=_number(doc["cost_fn"], "cost_fn"), objective_value=stat(fit["objective_value"]),
        disparity=stat(fit["disparity"]), max_abs_ofi=stat(fit["max_abs_ofi"]), groups_table=table,
        exhaustive=bool(fit["exhaustive"]), randomized_gain=stat(fit["randomized_gain"]),
        randomized_note=str(fit["randomized_note"]), fitted_rows=int(_number(fit["rows"], "fitting_rows.rows")),
        mixtures=mixtures, band_positions={str(k): stat(v) for k, v in (doc.get("band_positions") or {}).items()},
        fingerprint=str(fit["fingerprint"]), score_transform=transform, score_range=fitted)


def _score_scale(scale: Any) -> tuple[str, tuple[float, float]]:
    """The rule file's ``score_scale``: its transform and fitted range (NaN, NaN when null)."""
    if not isinstance(scale, dict) or scale.get("transform") not in SCORE_TRANSFORMS:
        got = scale.get("transform") if isinstance(scale, dict) else scale
        raise RuleFileError(f"rule file: score_scale.transform must be one of {', '.join(map(repr, SCORE_TRANSFORMS))}"
                            f"; got {got!r}")
    rng = scale.get("fitted_range")
    if rng is None:
        return scale["transform"], (math.nan, math.nan)
    if not isinstance(rng, list) or len(rng) != 2:
        raise RuleFileError(f"rule file: score_scale.fitted_range must be [low, high] or null; got {rng!r}")
    lo, hi = (_number(v, "score_scale.fitted_range") for v in rng)
    if lo > hi:
        raise RuleFileError(f"rule file: score_scale.fitted_range must be [low, high] with low <= high; got {rng!r}")
    return scale["transform"], (lo, hi)


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
