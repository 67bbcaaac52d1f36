"""Row-level predictions (one row per individual) to an :class:`~fairness_core.audit.Audit`, or to
several candidate models' decisions and scores; guessing which columns are the label, the prediction
and the groups. The counting itself is :mod:`fairness_core.statistics.row_counts`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ...audit import Audit
from ...common.vocabulary import opposite_outcome
from ...compare import MAX_MODELS, Candidates
from ...common.numbers import as_numbers
from ...statistics.row_counts import binary_column, count_rows, third_value_problem
from ...common.validation import (MAX_ROWS, UNKNOWN_VALUES, DataValidationError, Problem, clean_name, direction,
                                  hidden_name_problem,
                                  intersection_names, lines_for, show_value)
from .read import normalize_header


_LABEL_NAMES = ("label", "target", "actual", "outcome", "truth", "groundtruth", "ytrue", "y", "class", "observed")
_PREDICTION_NAMES = ("prediction", "predicted", "pred", "yhat", "ypred", "score", "decision", "output", "prob",
                     "probability")
#: Names of a decision someone (or a tool) took: the thing audited, never the truth it is judged against.
_DECISION_NAMES = ("decision", "decided", "advanced", "advance", "selected", "selection", "shortlisted", "shortlist",
                   "passedscreen", "screenedin", "screened", "recommended", "recommendation", "recommend", "invited",
                   "invite", "interview", "flagged", "chosen", "prescreen", "progressed", "movedforward")
#: Two-valued outcomes named for what they are (an observed result), when no column is called label, target ...
_OUTCOME_NAMES = ("approved", "hired", "admitted", "recid", "default", "income", "passed", "paid", "good", "credit",
                  "repaid", "churn", "fraud")
_GROUP_NAMES = ("race", "sex", "gender", "ethnicity", "group", "age", "agegroup", "religion", "nationality",
                "disability", "region", "country")
#: Most distinct values of a text column named like a decision that the guess reports when it passes it over (a
#: decision with a stray value or two; more values are free text, not a decision).
_FEW_VALUES = 10
#: The reason given when no column can be the label.
NO_OUTCOME = "no column named like an actual outcome: audit the decisions alone, or pick the outcome column"


@dataclass(frozen=True)
class ColumnGuess:
    """Which columns of a row-level table look like the label, the prediction and the groups, and why.
    ``label`` None: no column is named like an actual outcome (audit the decisions alone)."""

    label: str | None
    prediction: str | None
    groups: tuple[str, ...]
    reasons: tuple[str, ...]
    #: Why a column named like a decision was passed over (a third value, named by row), one sentence each: the
    #: guess then asks another question than the file's name says, and the page says so at once.
    warnings: tuple[str, ...] = ()


def _name_score(column: str, names: tuple[str, ...]) -> int:
    key = normalize_header(column)
    if key in names:
        return 3
    if any(key.startswith(n) or key.endswith(n) for n in names if len(n) > 2):
        return 2
    return 1 if any(n in key for n in names if len(n) > 3) else 0


def named_like_a_decision(column: str) -> bool:
    """Whether a column's name says it holds a decision or a prediction (``advanced_to_interview``,
    ``shortlisted``, ``model_decision``, ``approved_pred``, ``yhat``): such a column is what an audit judges,
    never the outcome it is judged against.

    >>> [named_like_a_decision(c) for c in ("advanced_to_interview", "Passed screen", "hired", "two_year_recid")]
    [True, True, False, False]
    """
    return _name_score(column, _DECISION_NAMES) > 0 or _name_score(column, _PREDICTION_NAMES) >= 2


#: The share of a column's non-missing values that must read as numbers for the guess to call it numeric.
NUMERIC_SHARE = 0.9
#: Words that name a column as the observed amount, and as the model's amount for the same thing.
_OBSERVED_WORDS = ("observed", "actual", "true", "real", "realized", "realised", "measured", "outcome", "target",
                   "label", "ytrue")
_PREDICTED_WORDS = ("predicted", "prediction", "pred", "estimated", "estimate", "expected", "forecast",
                    "recommended", "modelled", "modeled", "model", "yhat", "fitted", "score")


def _stem(column: str, words: tuple[str, ...]) -> str | None:
    """``column``'s name without one of ``words`` at its start or end (normalized), or None when it has none."""
    key = normalize_header(column)
    for w in sorted(words, key=len, reverse=True):
        if key.startswith(w) and len(key) > len(w):
            return key[len(w):]
        if key.endswith(w) and len(key) > len(w):
            return key[: -len(w)]
    return None


def outcome_pair(columns: Sequence[str]) -> tuple[str, str] | None:
    """(outcome, prediction) among ``columns`` named as an observed value and the model's value of the same thing:
    one name is the other's with a word of prediction (predicted, pred, score, estimate, recommended, ...) at its
    start or end, the other bare or with a word of observation (observed, actual, true, label, outcome, ...):
    ``observed_premium`` / ``predicted_premium``, ``wage`` / ``predicted_wage``, ``salary`` /
    ``recommended_salary``, ``y_true`` / ``y_pred``; None when no two columns pair up. Whether the pair holds an
    amount or categories is the values' to say, not the names'.

    >>> outcome_pair(["region", "observed_premium", "predicted_premium"])
    ('observed_premium', 'predicted_premium')
    >>> outcome_pair(["wage", "predicted_wage"]), outcome_pair(["age", "income"])
    (('wage', 'predicted_wage'), None)
    """
    for prediction in columns:
        stem = _stem(prediction, _PREDICTED_WORDS)
        if not stem:
            continue
        for outcome in columns:
            if outcome != prediction and (normalize_header(outcome) == stem
                                          or _stem(outcome, _OBSERVED_WORDS) == stem):
                return outcome, prediction
    return None


def guess_columns(df: pd.DataFrame, max_group_levels: int = 50) -> ColumnGuess:
    """Guess the label, prediction and group columns of a row-level table by names and values.

    The label is a two-valued column named like an actual outcome (label, target, actual, outcome, y, or
    an observed result such as hired, repaid, two_year_recid) and never one named like a decision or a
    prediction (advanced, selected, shortlisted, decision, recommended, invited, interview, pred, score
    ...): a tool's decision taken for the truth would make it right by definition. With no such column
    the label is None and the reasons say so: the decisions are audited alone. The prediction is a
    two-valued column named like a decision or prediction, else a numeric column named like a score
    (a two-valued decision beats a score named as plainly); groups are text columns with 2 to
    ``max_group_levels`` values, named like a protected attribute first. A column with a different
    value in every row (an id) is never guessed.

    >>> df = pd.DataFrame({"applicant_id": ["a1", "a2", "a3", "a4"], "sex": ["F", "M", "F", "M"],
    ...                    "approved": ["1", "0", "1", "1"], "model_decision": ["1", "0", "0", "1"]})
    >>> g = guess_columns(df)
    >>> g.label, g.prediction, g.groups
    ('approved', 'model_decision', ('sex',))
    >>> g = guess_columns(df.drop(columns="approved").assign(tool_score=["71", "30", "55", "90"]))
    >>> g.label, g.prediction, g.reasons[0]
    (None, 'model_decision', 'no column named like an actual outcome: audit the decisions alone, or pick the outcome column')
    """
    n = len(df)
    stats_: dict[str, tuple[int, bool]] = {}
    fractional: set[str] = set()
    for col in df.columns:
        s = df[col].dropna()
        distinct = int(s.nunique())
        values = as_numbers(s, df.attrs.get("delimiter", ","))
        # nine in ten values read as numbers: a stray "n/a" does not turn an amount into text (the audit names
        # its row), nor does it change the guess
        numeric = bool(len(s)) and int(values.notna().sum()) >= NUMERIC_SHARE * len(s)
        if numeric and (values % 1 != 0).any():
            fractional.add(str(col))  # a score may differ in every row; an id does not have decimals
        stats_[str(col)] = (distinct, numeric)
    unique_per_row = {c for c, (d, _) in stats_.items() if n > 2 and d == n and c not in fractional}
    binary = [c for c, (d, _) in stats_.items() if d == 2 and c not in unique_per_row]
    reasons: list[str] = []

    def best(candidates: list[str], names: tuple[str, ...]) -> str | None:
        scored = sorted(candidates, key=lambda c: -_name_score(c, names))
        return scored[0] if scored and _name_score(scored[0], names) > 0 else None

    # A column named like a decision or prediction ("advanced_to_interview", "decile_score", "yhat") is never
    # the label, and no column is taken for the label for want of a better one: without a column named like an
    # outcome, the decisions are audited alone.
    outcomes = [c for c in binary if not named_like_a_decision(c)]
    label = best(outcomes, _LABEL_NAMES) or best(outcomes, _OUTCOME_NAMES)
    # Without a two-valued outcome, an outcome and its prediction named as such (observed_premium and
    # predicted_premium): an amount or categories, as their values say. Named so, neither is an id.
    pair = None if label else outcome_pair([c for c, (d, _) in stats_.items() if d > 2])
    if pair:
        label = pair[0]
        unique_per_row -= set(pair)
        reasons.append(f"label = {label!r} and prediction = {pair[1]!r} (named as an observed value and its "
                       "prediction)")
    else:
        reasons.append(f"label = {label!r} (two values, named like an outcome)" if label else NO_OUTCOME)
    scores = [c for c, (d, num) in stats_.items() if c != label and c not in unique_per_row and (d == 2 or num)]

    def as_prediction(c: str) -> tuple[int, int]:   # the plainest name first; a decision before a score
        return max(_name_score(c, _PREDICTION_NAMES), _name_score(c, _DECISION_NAMES)), int(stats_[c][0] == 2)

    ranked = sorted((c for c in scores if as_prediction(c)[0] > 0), key=as_prediction, reverse=True)
    # a two-valued outcome read as tiers (High / Low) beside the tool's tiers (Low / Medium / High): the same
    # scale, a better prediction than any other decision or score
    tiers = None if pair or not label else _tiers_of(df, label, stats_)
    prediction = pair[1] if pair else tiers or (ranked[0] if ranked else None)
    if tiers:
        reasons.append(f"prediction = {tiers!r} (categories holding every value of the outcome, named like a "
                       "prediction)")
    elif prediction and not pair:
        kind = "two values" if stats_[prediction][0] == 2 else "a numeric score"
        reasons.append(f"prediction = {prediction!r} ({kind}, named like a "
                       + ("decision)" if _name_score(prediction, _DECISION_NAMES) >= _name_score(
                           prediction, _PREDICTION_NAMES) else "prediction)"))
    # A decision with a stray value ("Maybe", "pending") or with one value only is passed over: say so, since the
    # guess then audits another column (an id, a date or free text named "interview…" is no decision: not named).
    passed_over = [c for c, (d, _) in stats_.items()
                   if c not in (label, prediction) and c not in scores and c not in unique_per_row
                   and (d == 1 or 2 < d <= _FEW_VALUES) and named_like_a_decision(c)]
    warnings = tuple(_passed_over(df, c, stats_[c][0], prediction, stats_) for c in passed_over)
    taken = {label, prediction, *passed_over}   # a broken decision is never guessed as a group either
    groups = [c for c, (d, num) in stats_.items()
              if c not in taken and c not in unique_per_row and 2 <= d <= max_group_levels and not num]
    groups.sort(key=lambda c: -_name_score(c, _GROUP_NAMES))
    named = [c for c in groups if _name_score(c, _GROUP_NAMES) > 0]
    chosen = tuple(named[:2] or groups[:1])
    if chosen:
        reasons.append(f"group = {', '.join(map(repr, chosen))} (text with few values"
                       + (", named like a protected attribute)" if named else ")"))
    if unique_per_row:
        reasons.append(f"not used: {', '.join(map(repr, sorted(unique_per_row)))} (a different value in every row)")
    return ColumnGuess(label, prediction, chosen, tuple(reasons), warnings)


def _tiers_of(df: pd.DataFrame, label: str, stats_: Mapping[str, tuple[int, bool]]) -> str | None:
    """The text column named like a prediction (``score_text``) with 3 to :data:`_FEW_VALUES` values among which
    are all of ``label``'s: the tool's tiers, of which the outcome observes some; None when there is none."""
    def values(c: str) -> set[str]:
        return {str(v).strip() for v in df[next(k for k in df.columns if str(k) == c)].dropna().unique()}
    observed = values(label)
    found = [c for c, (d, num) in stats_.items() if c != label and not num and 2 < d <= _FEW_VALUES
             and _name_score(c, _PREDICTION_NAMES) >= 2 and observed <= values(c)]
    return max(found, key=lambda c: _name_score(c, _PREDICTION_NAMES)) if found else None


def _passed_over(df: pd.DataFrame, column: str, distinct: int, prediction: str | None,
                 stats_: Mapping[str, tuple[int, bool]]) -> str:
    """Why :func:`guess_columns` did not take ``column``, named like a decision, for the prediction, and what it
    took instead: the row and column of its third value (the message an audit of it gives), or its one value."""
    col = df[next(c for c in df.columns if str(c) == column)]
    problem = third_value_problem(col) if distinct > 2 else None
    why = (str(lines_for([problem], df)[0]) if problem is not None
           else f"it holds one value only, {show_value(col.dropna().iloc[0])}")
    instead = ("no prediction was guessed: choose it" if prediction is None else
               f"the prediction guessed instead is {prediction!r} ("
               + ("two values" if stats_[prediction][0] == 2 else "a numeric score, cut at a threshold") + ")")
    return (f"{column!r} is named like a decision but cannot be the prediction as it is — {why}. So {instead}: "
            "a different question from the one the file's names ask. Correct the file, or choose the prediction "
            "column yourself.")


def distinct_values(series: pd.Series, limit: int = 20) -> list[Any]:
    """Up to ``limit`` distinct non-missing values of a column, sorted where possible."""
    values = pd.unique(series.dropna())[: limit + 1]
    try:
        return sorted(values.tolist())
    except TypeError:
        return values.tolist()


def cms_from_predictions(df: pd.DataFrame, label_column: str, prediction_column: str,
                         group_columns: Sequence[str], positive_label: Any, positive_prediction: Any = None,
                         *, threshold: float | None = None,
                         source: str = "uploaded predictions", positive_outcome: str | None = None,
                         probability_columns: Sequence[str] = (), features: pd.DataFrame | None = None,
                         positive_is: str | None = None, unknown: Sequence[str] | None = None,
                         blank_as_unknown: bool = False, perfect_predictions: bool = False) -> Audit:
    """Aggregate row-level labels and predictions into one CM per group (or intersection).

    Parameters
    ----------
    df : DataFrame
        One row per individual.
    label_column, prediction_column : str
        The actual outcome and the model's prediction. Both must be binary,
        unless ``threshold`` is given, in which case the prediction column is
        a numeric score and "positive" means score >= threshold.
    group_columns : sequence of str
        One or more columns; with several, groups are their intersections ("A & B").
    positive_label, positive_prediction : value
        The value meaning "positive" in each column (``positive_prediction``
        defaults to ``positive_label``).
    positive_is : {"benefit", "harm"} or None
        What the positive prediction is for the person. "harm" (COMPAS's "will reoffend") negates
        label and prediction so positive = beneficial; None leaves the direction undeclared (the
        audit says a benefit is assumed).
    probability_columns : sequence of str
        Optional: an ensemble's probabilities of the positive value, one column per model
        (at least two), for Virny's stability metrics. Each value must lie in [0, 1]; with
        ``positive_is="harm"`` they become 1 − p, the probability of the beneficial outcome.
    features : DataFrame, optional
        Feature columns to keep with the rows, from which an ensemble can be trained.
    unknown, blank_as_unknown : group values read as their attribute's unknown category, and whether blank
        ones are (otherwise a blank group value is refused); see :func:`fairness_core.statistics.row_counts.count_rows`.
    perfect_predictions : bool
        Accept a label equal to the prediction in every row (refused by default: it is a decision filed as
        its own outcome; :func:`audit_from_decisions` audits decisions alone).

    The returned audit carries the rows (:class:`~fairness_core.statistics.rows.RowData`).
    """
    return Audit(**count_rows(df, label_column, prediction_column, group_columns, positive_label, positive_prediction,
                              threshold=threshold, source=source, positive_outcome=positive_outcome,
                              probability_columns=probability_columns, features=features, positive_is=positive_is,
                              unknown=unknown, blank_as_unknown=blank_as_unknown,
                              perfect_predictions=perfect_predictions))


def audit_from_decisions(df: pd.DataFrame, prediction_column: str, group_columns: Sequence[str],
                         positive_prediction: Any = 1, *, threshold: float | None = None,
                         unknown: Sequence[str] = UNKNOWN_VALUES, positive_is: str | None = None,
                         source: str = "uploaded decisions", positive_outcome: str | None = None,
                         score_columns: Sequence[str] = ()) -> Audit:
    """An audit of decisions alone from a row-level table with no outcome column (an AI screening tool's
    "advanced" or "rejected" for each applicant): :meth:`fairness_core.audit.Audit.from_decisions` for files.

    ``positive_prediction`` is the selected value of ``prediction_column``, or, with ``threshold``, the column
    is a score and selected means score >= threshold (a threshold selecting every row or none is refused).
    Missing and blank group values and ``unknown`` values become each attribute's category "unknown".
    ``score_columns`` (and the thresholded column) are kept as the rows' scores, for the Local Law 144 scoring rate.

    >>> df = pd.DataFrame({"sex": ["F", "M", "F", "M", ""], "advanced": ["yes", "no", "no", "yes", "yes"]})
    >>> a = audit_from_decisions(df, "advanced", ["sex"], "yes", positive_is="benefit")
    >>> a.has_outcomes, a.groups, a.selection_rates().tolist()
    (False, ['F', 'M', 'unknown'], [0.5, 0.5, 1.0])
    """
    return Audit(**count_rows(df, None, prediction_column, group_columns, None, positive_prediction,
                              threshold=threshold, source=source, positive_outcome=positive_outcome,
                              positive_is=positive_is, unknown=unknown, score_columns=score_columns))


def candidates_from_predictions(df: pd.DataFrame, label_column: str, positive_label: Any,
                                group_columns: Sequence[str], prediction_columns: Sequence[str],
                                score_columns: Sequence[str] = (), positive_is: str | None = None, *,
                                positive_prediction: Any = None, positive_values: Mapping[str, Any] | None = None,
                                thresholds: Mapping[str, float] | None = None, title: str = "uploaded predictions",
                                positive_outcome: str | None = None) -> Candidates:
    """Several candidate models' decisions and scores on the same rows, for comparison and mitigation.

    ``prediction_columns``: each candidate's decisions, the main prediction first; binary, positive where the
    value is ``positive_values[column]`` (default ``positive_prediction``, itself defaulting to
    ``positive_label``), or a score thresholded at ``thresholds[column]`` (the candidate is then named
    "column ≥ threshold"). ``score_columns``: numbers a threshold can be fitted to, higher = more likely the
    positive prediction value. ``positive_is="harm"`` flips labels and decisions and negates scores, so that
    positive is the beneficial outcome everywhere (as :func:`cms_from_predictions` does). Every bad value is
    named by row and column; all columns are checked before anything is refused.

    >>> df = pd.DataFrame({"y": [1, 0, 1, 0], "g": list("aabb"), "m1": [1, 0, 0, 0], "m2": [1, 1, 1, 0],
    ...                    "s": [0.9, 0.2, 0.4, 0.1]})
    >>> c = candidates_from_predictions(df, "y", 1, ["g"], ["m1", "m2"], ["s"], "harm")
    >>> list(c.predictions), c.predictions["m1"].tolist(), c.scores["s"].tolist()
    (['m1', 'm2'], [False, True, True, True], [-0.9, -0.2, -0.4, -0.1])
    """
    positive_is, flip = direction(positive_is)
    prediction_columns, score_columns, group_columns = list(prediction_columns), list(score_columns), list(group_columns)
    positive_values, thresholds = dict(positive_values or {}), dict(thresholds or {})
    if positive_prediction is None:
        positive_prediction = positive_label
    _check_candidate_columns(df, label_column, group_columns, prediction_columns, score_columns)
    problems: list[Problem] = []
    if len(df) > MAX_ROWS:
        raise DataValidationError(f"{len(df):,} rows; the limit is {MAX_ROWS:,}")

    def checked(make: Any) -> Any:
        try:
            return make()
        except DataValidationError as exc:
            problems.extend(exc.problems)
            return None

    y = checked(lambda: binary_column(df, label_column, positive_label, "label", None))
    groups = _candidate_groups(df, group_columns, problems)
    predictions: dict[str, np.ndarray] = {}
    for col in prediction_columns:
        t = thresholds.get(col)
        decided = checked(lambda: binary_column(df, col, positive_values.get(col, positive_prediction), "prediction", t))
        if decided is not None:
            predictions[str(col) if t is None else f"{col} ≥ {t:g}"] = ~decided if flip else decided
    scores = _candidate_scores(df, score_columns, flip, problems)
    if problems:
        raise DataValidationError(lines_for(problems, df))
    note = ""
    if flip:
        note = (f"A positive prediction is a harm: labels and decisions are flipped so that positive means "
                f"'{opposite_outcome(str(positive_label))}'" + (
                    ", and scores are negated (−score: higher = more likely the beneficial outcome; a threshold of "
                    "−0.7 means a score of 0.7 or less; a rule file records the negation, and apply negates a file's "
                    "raw scores itself)" if scores else "") + ".")
    outcome = positive_outcome or (opposite_outcome(str(positive_label)) if flip else str(positive_label))
    return Candidates(title, ~y if flip else y, pd.DataFrame(groups), predictions, scores, outcome, note,
                      score_transforms={name: "negate" for name in scores} if flip else {})


def _check_candidate_columns(df: pd.DataFrame, label_column: str, group_columns: list[str],
                             prediction_columns: list[str], score_columns: list[str]) -> None:
    """Every named column exists, each plays one part, and there are not too many models."""
    problems: list[Problem] = []
    for col in dict.fromkeys([label_column, *group_columns, *prediction_columns, *score_columns]):
        if col not in df.columns:
            problems.append(Problem(f"no such column; columns are {', '.join(map(repr, df.columns))}", column=col))
    if problems:
        raise DataValidationError(problems)
    if not group_columns:
        raise DataValidationError("choose at least one group column")
    if not prediction_columns:
        raise DataValidationError("choose at least one prediction column")
    for what, cols in (("prediction", prediction_columns), ("score", score_columns)):
        twice = sorted({c for c in cols if cols.count(c) > 1})
        if twice:
            raise DataValidationError(f"{what} column(s) {', '.join(map(repr, twice))} chosen twice")
        clash = [c for c in cols if c == label_column or c in group_columns]
        if clash:
            problems += [Problem(f"a {what} column cannot also be the label or a group column", column=c) for c in clash]
    if problems:
        raise DataValidationError(problems)
    if len(prediction_columns) > MAX_MODELS:
        raise DataValidationError(f"{len(prediction_columns)} prediction columns; a comparison takes at most "
                                  f"{MAX_MODELS} models")


def _candidate_groups(df: pd.DataFrame, group_columns: list[str], problems: list[Problem]) -> dict[str, pd.Categorical]:
    """Each group column as a categorical of the audit's (cleaned) names; a missing value is added to
    ``problems``."""
    groups: dict[str, pd.Categorical] = {}
    for col in group_columns:
        codes, uniques = pd.factorize(df[col], sort=False)
        if (codes < 0).any():
            rows = np.flatnonzero(codes < 0)
            problems.append(Problem(f"missing group value in {rows.size:,} row(s)", int(rows[0]) + 1, col))
            continue
        cleaned = [clean_name(u) for u in uniques]
        try:    # as an audit's: values that print alike (spaces, NFC, invisible characters) or hide a character
            intersection_names([cleaned])
        except DataValidationError as exc:
            problems.extend(Problem(p.message, column=str(col)) for p in exc.problems)
            continue
        if (hidden := next((k for k, v in enumerate(cleaned) if hidden_name_problem(v)), None)) is not None:
            problems.append(Problem(hidden_name_problem(cleaned[hidden]) or "",
                                    int(np.flatnonzero(codes == hidden)[0]) + 1, col))
            continue
        names, inverse = np.unique(np.asarray(cleaned, dtype=object), return_inverse=True)
        groups[str(col)] = pd.Categorical.from_codes(inverse[codes], names)   # the audit's names, compactly
    return groups


def _candidate_scores(df: pd.DataFrame, score_columns: list[str], flip: bool,
                      problems: list[Problem]) -> dict[str, np.ndarray]:
    """Each score column as floats (negated when a positive prediction is a harm); a value that is not a finite
    number is added to ``problems`` with its row."""
    scores: dict[str, np.ndarray] = {}
    delimiter = df.attrs.get("delimiter", ",")
    for col in score_columns:
        values = as_numbers(df[col], delimiter).to_numpy(dtype=float)
        bad = ~np.isfinite(values)
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raw = df[col].iloc[r]
            what = "missing score" if pd.isna(raw) else f"{show_value(raw)} is not a number, so it cannot be a score"
            problems.append(Problem(what + (f" ({int(bad.sum()):,} such rows)" if bad.sum() > 1 else ""), r + 1, col))
            continue
        scores[str(col)] = -values if flip else values
    return scores
