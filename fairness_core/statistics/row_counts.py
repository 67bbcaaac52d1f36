"""Row-level labels and predictions, checked and counted into one confusion matrix per group.

The counting behind :meth:`fairness_core.audit.Audit.from_predictions`,
:func:`fairness_core.io.cms_from_predictions` and :func:`fairness_core.io.audit_from_predictions`:
each returns :func:`count_rows`' or :func:`count_arrays`' result, the keyword arguments of an
:class:`~fairness_core.audit.Audit` (``Audit(**fields)``). No Audit is built here, so the audit module
can use it while :mod:`fairness_core.io`, which builds Audits from files, sits above both. Problems
raise :class:`~fairness_core.validation.DataValidationError` naming the row (or array position) and column.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from .confusion import ConfusionMatrix
from .design import make_design
from .rows import RowData
from ..common.numbers import as_numbers
from ..common.vocabulary import opposite_outcome
from ..common.validation import (MAX_GROUPS, MAX_NAME_LENGTH, MAX_ROWS, UNKNOWN_CATEGORY, UNKNOWN_VALUES, DataValidationError,
                                 Problem, clean_name, cleaning_notice, direction, group_values, hidden_name_problem,
                                 intersection_names, row_notes, show_value, unknown_key)


#: Uploaded text, one Arrow buffer per column (not one Python object per cell); missing values are NaN.
TEXT = pd.StringDtype("pyarrow", na_value=np.nan)


#: From this many rows on, a label equal to the prediction in every row is refused as a decision filed as its
#: own outcome (a model right about every one of 20 people is far less likely than a mislabelled column).
MIN_ROWS_FOR_SAME = 20


def is_text(s: pd.Series) -> bool:
    return s.dtype == object or isinstance(s.dtype, pd.StringDtype)


def third_value_problem(s: pd.Series, what: str = "prediction") -> Problem | None:
    """Why ``s`` cannot be a binary column: the first row holding a third distinct value (missing values do not
    count), named by row and column; None when it has two values or fewer. The one message for this, whether an
    audit refuses the column or a guess passes over it."""
    codes, uniques = pd.factorize(s, sort=False)
    if len(uniques) <= 2:
        return None
    r = int(np.flatnonzero(codes == 2)[0])
    return Problem(
        f"{show_value(s.iloc[r])} is a third distinct value (after {show_value(uniques[0])} and "
        f"{show_value(uniques[1])}); the {what} must be binary"
        + (" — or give a threshold for a score" if what == "prediction" else ""), r + 1, s.name)


def binary_column(df: pd.DataFrame, col: str, positive: Any, what: str, threshold: float | None) -> np.ndarray:
    s = df[col]
    missing = s.isna().to_numpy()
    if missing.any():
        rows = np.flatnonzero(missing)
        raise DataValidationError(Problem(
            f"missing {what} in {rows.size:,} row(s)" + (f" (also rows {', '.join(str(r + 1) for r in rows[1:4])})"
                                                         if rows.size > 1 else ""),
            int(rows[0]) + 1, col))
    if threshold is not None:
        values = as_numbers(s, df.attrs.get("delimiter", ","))
        bad = values.isna().to_numpy()
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise DataValidationError(Problem(f"{show_value(s.iloc[r])} is not a number, so it cannot be thresholded",
                                              r + 1, col))
        chosen = values.to_numpy() >= threshold
        check_selects_some(chosen, values.to_numpy(), threshold, col)
        return chosen
    codes, uniques = pd.factorize(s, sort=False)
    if len(uniques) > 2:   # named by the one message for it (factorized again only on this way out)
        raise DataValidationError(third_value_problem(s, what))
    matches = [k for k, u in enumerate(uniques) if _same(u, positive)]
    if not matches and len(uniques) == 1:
        return np.zeros(len(s), dtype=bool)  # every row is the negative value
    if not matches:
        raise DataValidationError(Problem(
            f"the chosen positive value {show_value(positive)} does not occur; values are "
            f"{', '.join(map(show_value, uniques.tolist()))}", column=col))
    return codes == matches[0]


def score_values(df: pd.DataFrame, col: str) -> np.ndarray:
    """A score column as floats; text, a missing value or ±inf is refused with its first row and the count."""
    if col not in df.columns:
        raise DataValidationError(Problem(f"no such column; columns are {', '.join(map(repr, df.columns))}",
                                          column=col))
    raw = df[col]
    values = as_numbers(raw, df.attrs.get("delimiter", ",")).to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        what = "missing" if pd.isna(raw.iloc[r]) else f"{show_value(raw.iloc[r])} is not a finite number"
        more = f" ({int(bad.sum()):,} such rows)" if bad.sum() > 1 else ""
        raise DataValidationError(Problem(f"{what}{more}: a score must be a finite number in every row", r + 1, col))
    return values


def check_selects_some(chosen: np.ndarray, values: np.ndarray, threshold: float, col: str) -> None:
    """Refuse a threshold that selects every row or none: the decisions would then say nothing about any group
    (every error rate of one kind 0, every impact ratio 1 or undefined)."""
    if not len(chosen) or 0 < int(chosen.sum()) < len(chosen):
        return
    lo, hi = float(np.min(values)), float(np.max(values))
    every = bool(chosen.all())
    raise DataValidationError(Problem(
        f"threshold {threshold:g} selects {'every row' if every else 'no row'}: all {len(chosen):,} scores are "
        f"{'≥' if every else '<'} {threshold:g} (they range from {lo:g} to {hi:g}); choose a cutoff inside that "
        "range", column=col))


def _same(a: Any, b: Any) -> bool:
    if a == b:
        return True
    return str(a).strip() == str(b).strip()


def count_rows(df: pd.DataFrame, label_column: str | None, prediction_column: str,
               group_columns: Sequence[str], positive_label: Any, positive_prediction: Any = None,
               *, threshold: float | None = None,
               source: str = "uploaded predictions", positive_outcome: str | None = None,
               probability_columns: Sequence[str] = (), features: pd.DataFrame | None = None,
               positive_is: str | None = None, positions: bool = False,
               unknown: Sequence[str] | None = None, blank_as_unknown: bool = False,
               perfect_predictions: bool = False, score_columns: Sequence[str] = ()) -> dict[str, Any]:
    """Count one confusion matrix per group (or intersection) from row-level labels and predictions.

    The arguments are :func:`fairness_core.io.cms_from_predictions`' (documented there); the result is
    the keyword arguments of the :class:`~fairness_core.audit.Audit` it returns, rows included. With
    ``positions`` the notes name array positions (``race[3]``) rather than rows.

    ``label_column=None`` counts the decisions alone (no outcome is known): the audit then has
    ``outcomes=False``, its matrices hold each group's selected rows as TP and the others as TN (the
    labels are never read), and ``unknown`` defaults to :data:`~fairness_core.validation.UNKNOWN_VALUES`.
    ``unknown``: group values read as their attribute's unknown category (:func:`~fairness_core.validation.unknown_key`
    compares them); ``blank_as_unknown`` reads missing and blank group values as unknown too (always so without
    outcomes). Unknown categories are named "unknown" and listed in the result's ``unknown``.

    A label equal to the prediction in every one of :data:`MIN_ROWS_FOR_SAME` or more rows is refused (it is the decision filed as its own truth),
    unless ``perfect_predictions`` says the data are meant so (the Ricci scenario of a certified exam).

    ``score_columns``: numeric columns the rows carry as scores (``rows.scores``), and the prediction column
    itself when ``threshold`` is given; every value must be a finite number (the row and column of the first
    that is not are named). When the positive prediction is a harm they are negated, so that higher always
    means more favourable.
    """
    outcomes = label_column is not None
    if not outcomes:
        unknown = UNKNOWN_VALUES if unknown is None else unknown
        blank_as_unknown = True
    positive_is, flip = direction(positive_is)
    probability_columns = _check_columns(df, label_column, prediction_column, group_columns, probability_columns,
                                         features)
    if len(df) > MAX_ROWS:
        raise DataValidationError(f"{len(df):,} rows; the limit is {MAX_ROWS:,}")
    if positive_prediction is None:
        positive_prediction = positive_label
    yhat = binary_column(df, prediction_column, positive_prediction, "prediction", threshold)
    if outcomes:
        assert label_column is not None
        y = binary_column(df, label_column, positive_label, "label", None)
    else:
        y = yhat.copy()   # never read: an audit without outcomes answers only what decisions alone can
    if flip:
        y, yhat = ~y, ~yhat

    name_notes: list[str] = []
    codes, level_names = _group_codes(df, group_columns, name_notes, positions,
                                      None if unknown is None else {unknown_key(u) for u in unknown},
                                      blank_as_unknown)
    joint, inverse = _compact(codes, int(np.prod([len(v) for v in level_names])))
    if joint.size < 2:
        raise DataValidationError(f"all {len(df):,} rows fall in one group"
                                  + (f" ({', '.join(group_columns)})" if group_columns else "")
                                  + "; an audit compares at least two groups")
    if joint.size > MAX_GROUPS:
        raise DataValidationError(f"{joint.size} groups from {', '.join(group_columns)}; the limit is {MAX_GROUPS}")
    if outcomes and len(y) >= MIN_ROWS_FOR_SAME and not perfect_predictions and bool((y == yhat).all()):
        raise DataValidationError(Problem(
            f"the label equals the prediction {prediction_column!r} in every one of the {len(y):,} rows: it looks "
            "like the model's own decision, not an observed outcome. Without outcomes, audit the decisions "
            "alone (no label column)", column=label_column))
    cell = np.where(y, np.where(yhat, 0, 1), np.where(yhat, 2, 3))  # index into CELLS
    counts = np.bincount(inverse.ravel() * 4 + cell, minlength=4 * joint.size).reshape(-1, 4)

    parts = _levels_of(joint, level_names)
    names = intersection_names(parts)
    unknown_groups = tuple(name for k, name in enumerate(names) if any(p[k] == UNKNOWN_CATEGORY for p in parts)
                           ) if unknown is not None or blank_as_unknown else ()
    if len(names) - len(unknown_groups) < 2:
        raise DataValidationError(f"fewer than two known groups in {', '.join(group_columns)} once unknown values "
                                  "are set aside; an audit compares at least two groups")
    cms = {name: ConfusionMatrix(*row) for name, row in zip(names, counts.tolist())}
    probs = _probabilities(df, probability_columns) if probability_columns else None
    if probs is not None and flip:
        probs = 1.0 - probs
    scored = list(dict.fromkeys([*score_columns, *([prediction_column] if threshold is not None else [])]))
    scores = {str(c): (-1.0 if flip else 1.0) * score_values(df, c) for c in scored} or None
    rows = RowData(y, yhat, np.asarray(names, dtype=object)[inverse.ravel()], probs,
                   tuple(map(str, probability_columns)),
                   None if features is None else features.reset_index(drop=True), scores=scores)
    if outcomes:
        notes = name_notes + row_notes(str(label_column), positive_label, prediction_column, flip, threshold)
        outcome = positive_outcome or (opposite_outcome(str(positive_label)) if flip else str(positive_label))
    else:
        decided = f"{prediction_column} >= {threshold:g}" if threshold is not None else (
            f"{prediction_column} = {positive_prediction}")
        # what needs outcomes is said once, where the audit is shown (the page's box, the report's summary)
        notes = name_notes + [f"No outcome column: the decisions ({decided}) are audited alone."]
        if flip:
            notes.append(f"{decided} is harmful, so the favourable decision counted is its opposite.")
        outcome = positive_outcome or (opposite_outcome(decided) if flip else decided)
    provenance = ({"label column": str(label_column), "positive label": str(positive_label)} if outcomes
                  else {"label column": "none (decisions only)"})
    provenance.update({"prediction column": prediction_column,
                       "positive prediction": (f"score >= {threshold:g}" if threshold is not None
                                               else str(positive_prediction)),
                       "attribute(s) audited": " × ".join(group_columns) if len(group_columns) > 1
                       else group_columns[0]})
    if unknown_groups:
        provenance["unknown categories"] = (", ".join(unknown_groups) + " — counted and reported, never in the "
                                            "ratios or the reference")
    return dict(cms=cms, source=source, notes=tuple(notes), group_columns=tuple(group_columns),
                positive_outcome=outcome, rows=rows, positive_is=positive_is,
                group_values=group_values(names, parts), provenance=provenance, outcomes=outcomes,
                unknown=unknown_groups)


def _check_columns(df: pd.DataFrame, label_column: str | None, prediction_column: str,
                   group_columns: Sequence[str], probability_columns: Sequence[str],
                   features: pd.DataFrame | None) -> list[str]:
    """Every named column exists and plays one part; the features can be designed. The probability columns as
    a list. ``label_column`` None: decisions only."""
    named = [c for c in (label_column, prediction_column) if c is not None]
    for col in [*named, *group_columns]:
        if col not in df.columns:
            raise DataValidationError(Problem(f"no such column; columns are {', '.join(map(repr, df.columns))}",
                                              column=col))
    if not group_columns:
        raise DataValidationError("choose at least one group column")
    if label_column is not None and label_column == prediction_column:
        raise DataValidationError(Problem(
            "the label (the actual outcome) and the prediction are the same column: the decision cannot be its own "
            "truth. Without an outcome column, audit the decisions alone (no label column)", column=label_column))
    if len({*named, *group_columns}) != len(named) + len(group_columns):
        raise DataValidationError("the label, prediction and group columns must all be different")
    probability_columns = list(probability_columns)
    for col in probability_columns:
        if col not in df.columns:
            raise DataValidationError(Problem(f"no such column; columns are {', '.join(map(repr, df.columns))}",
                                              column=col))
        if col in (*named[:-1], *group_columns):
            raise DataValidationError(Problem("a probability column cannot also be the label or a group column",
                                              column=col))
    if len(probability_columns) == 1:
        raise DataValidationError("an ensemble needs at least two probability columns (one per model)")
    if features is not None:
        clash = set(map(str, features.columns)) & {*map(str, named), *map(str, group_columns)}
        if clash:
            raise DataValidationError(f"feature column(s) {', '.join(map(repr, sorted(clash)))} cannot also be the "
                                      "label, prediction or a group column")
        try:
            make_design(features)
        except ValueError as exc:
            raise DataValidationError(str(exc)) from None
    return probability_columns


def _group_codes(df: pd.DataFrame, group_columns: Sequence[str], notes: list[str], positions: bool = False,
                 unknown: set[str] | None = None, blank_as_unknown: bool = False
                 ) -> tuple[np.ndarray, list[np.ndarray]]:
    """Each row's joint group code (mixed radix over the columns' sorted values) and each column's cleaned
    values; a missing value, an over-long name or a hidden character is refused with its first row. What
    cleaning changed (spaces folded, NFC, invisible characters) is added to ``notes`` with its first row
    (``col[k]`` with ``positions``). Values whose :func:`~fairness_core.validation.unknown_key` is in ``unknown``
    (and, with ``blank_as_unknown``, missing and blank values) become the column's last value,
    :data:`~fairness_core.validation.UNKNOWN_CATEGORY`, and a note says how many rows and which values."""
    codes = np.zeros(len(df), dtype=np.int64)
    level_names: list[np.ndarray] = []
    for col in group_columns:
        c, u = _sorted_codes(df[col])
        if unknown is not None or blank_as_unknown:
            c, u = _unknown_level(c, u, col, unknown or set(), blank_as_unknown, notes)
        if (c < 0).any():
            rows = np.flatnonzero(c < 0)
            raise DataValidationError(Problem(
                f"missing group value in {rows.size:,} row(s); to count them as this attribute's unknown category, "
                "ask for blank values to be read as unknown", int(rows[0]) + 1, col))
        codes = codes * len(u) + c
        cleaned = [clean_name(v) for v in u]
        long = [k for k, v in enumerate(cleaned) if len(v) > MAX_NAME_LENGTH]
        if long:
            r = int(np.flatnonzero(c == long[0])[0])
            raise DataValidationError(Problem(f"group value of {len(cleaned[long[0]]):,} characters; the limit is "
                                              f"{MAX_NAME_LENGTH}", r + 1, col))
        hidden = [k for k, v in enumerate(cleaned) if hidden_name_problem(v)]
        if hidden:
            r = int(np.flatnonzero(c == hidden[0])[0])
            raise DataValidationError(Problem(hidden_name_problem(cleaned[hidden[0]]) or "", r + 1, col))
        changed = [k for k, v in enumerate(cleaned) if str(u[k]).strip() != v]

        def where(j: int, col: str = col, c: np.ndarray = c, changed: list[int] = changed) -> int | str:
            r = int(np.argmax(c == changed[j]))    # the value's first row
            return f"{col}[{r}]" if positions else r + 1

        if changed and (notice := cleaning_notice(f"Group values in {col!r}", [u[k] for k in changed],
                                                  where)) is not None:
            notes.append(notice)
        level_names.append(np.asarray(cleaned, dtype=object))
    return codes, level_names


def _unknown_level(c: np.ndarray, u: np.ndarray, col: str, unknown: set[str], blank: bool,
                   notes: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Codes and values of one group column with its unknown values pooled into a last value "unknown"."""
    keys = [unknown_key(v) for v in u]
    is_unknown = np.array([k in unknown or k == UNKNOWN_CATEGORY or (blank and k == "") for k in keys], dtype=bool)
    missing = c < 0
    if not is_unknown.any() and not (blank and missing.any()):
        return c, u
    counts = np.bincount(c[~missing], minlength=len(u))
    kept = np.flatnonzero(~is_unknown)
    new_code = np.full(len(u) + 1, len(kept), dtype=np.int64)   # every unknown value (and −1, missing) → last
    new_code[kept] = np.arange(len(kept))
    if not blank:
        new_code[-1] = -1   # missing stays missing: refused
    out = new_code[c]
    read = ([f"{int(missing.sum()):,} blank"] if blank and missing.any() else []) + [
        f"{int(counts[k]):,} {show_value(u[k]) if keys[k] else 'blank'}" for k in np.flatnonzero(is_unknown)]
    total = int((out == len(kept)).sum())
    notes.append(f"{total:,} row(s) of {col!r} read as its unknown category ({', '.join(read)}): counted and "
                 "reported, never in the ratios and never the reference.")
    return out, np.append(u[kept], UNKNOWN_CATEGORY).astype(object)


def _levels_of(joint: np.ndarray, level_names: list[np.ndarray]) -> list[np.ndarray]:
    """For each group column, the value of every present joint code (the mixed radix of :func:`_group_codes`
    undone)."""
    rem = joint.copy()
    parts: list[np.ndarray] = []
    for levels in reversed(level_names):
        parts.append(levels[rem % len(levels)])
        rem //= len(levels)
    parts.reverse()
    return parts


def _sorted_codes(s: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """``pd.factorize(s, sort=True)``, sorting the few distinct values rather than taking every row through
    pandas' sorter: codes (−1 where missing) and the sorted distinct values."""
    codes, uniques = pd.factorize(s, sort=False)
    uniques = np.asarray(uniques, dtype=object)
    try:
        order = np.argsort(uniques, kind="stable")
    except TypeError:   # mixed types: their text order
        order = np.argsort(uniques.astype(str), kind="stable")
    rank = np.empty(len(order) + 1, dtype=np.int64)
    rank[order] = np.arange(len(order))
    rank[-1] = -1   # code −1 (missing) stays −1
    return rank[codes], uniques[order]


def _compact(codes: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(codes, return_inverse=True)`` for codes in [0, size) by counting instead of sorting."""
    if size > 50_000_000:
        return np.unique(codes, return_inverse=True)
    present = np.bincount(codes, minlength=size) > 0
    joint = np.flatnonzero(present)
    position = np.cumsum(present) - 1
    return joint, position[codes]


def _probabilities(df: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """The probability columns as an (n, m) float array; every problem named by row and column."""
    problems: list[Problem] = []
    out = np.empty((len(df), len(columns)))
    for k, col in enumerate(columns):
        values = as_numbers(df[col], df.attrs.get("delimiter", ",")).to_numpy(dtype=float)
        bad = ~np.isfinite(values) | (values < 0) | (values > 1)
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raw = df[col].iloc[r]
            what = "missing" if pd.isna(raw) else f"{raw!r} is not a probability in [0, 1]"
            extra = f" ({int(bad.sum()):,} such rows)" if bad.sum() > 1 else ""
            problems.append(Problem(what + extra, r + 1, col))
        out[:, k] = values
    if problems:
        raise DataValidationError(problems)
    return out


def _vector(values: Any, name: str) -> np.ndarray:
    """One array-like column (list, NumPy, pandas or polars Series, one-column frame) as a 1-D array."""
    if type(values).__module__.split(".")[0] == "polars":
        values = values.to_pandas() if hasattr(values, "columns") else values.to_numpy()
    if isinstance(values, pd.DataFrame):
        if values.shape[1] != 1:
            raise DataValidationError(f"{name} has {values.shape[1]} columns; expected one")
        values = values.iloc[:, 0]
    arr = values.to_numpy() if isinstance(values, pd.Series) else np.asarray(values, dtype=object if isinstance(
        values, (list, tuple)) and any(isinstance(v, str) for v in values) else None)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise DataValidationError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def _sensitive_frame(features: Any) -> pd.DataFrame:
    """Sensitive features as a frame of named columns: a Series keeps its name, a DataFrame (pandas or
    polars) or a dict its columns, a 2-D array gets sensitive_feature_0, _1, …"""
    if type(features).__module__.split(".")[0] == "polars" and hasattr(features, "columns"):
        features = features.to_pandas()
    if isinstance(features, pd.DataFrame):
        frame = features.reset_index(drop=True)
    elif isinstance(features, dict):
        frame = pd.DataFrame({str(k): _vector(v, f"sensitive feature {k!r}") for k, v in features.items()})
    elif isinstance(features, pd.Series) or type(features).__module__.split(".")[0] == "polars":
        name = getattr(features, "name", None) or "sensitive_feature"
        frame = pd.DataFrame({str(name): _vector(features, "sensitive_features")})
    else:
        arr = np.asarray(features, dtype=object)
        if arr.ndim == 1:
            frame = pd.DataFrame({"sensitive_feature": arr})
        elif arr.ndim == 2:
            frame = pd.DataFrame({f"sensitive_feature_{k}": arr[:, k] for k in range(arr.shape[1])})
        else:
            raise DataValidationError(f"sensitive_features must be 1- or 2-dimensional, got shape {arr.shape}")
    if frame.shape[1] == 0:
        raise DataValidationError("sensitive_features has no columns")
    frame.columns = [str(c) for c in frame.columns]
    return frame


def count_arrays(y_true: Any, y_pred: Any, sensitive_features: Any, pos_label: Any = 1, *,
                 positive_is: str | None = None, threshold: float | None = None,
                 source: str = "predictions", unknown: Sequence[str] | None = None,
                 blank_as_unknown: bool = False) -> dict[str, Any]:
    """The notebook path to an audit, as :func:`count_rows` counts it, with problems named at array positions
    (``y_true[3]``, not "row 4"); :meth:`fairness_core.audit.Audit.from_predictions` documents the arguments.
    ``y_true=None`` counts the decisions alone (:meth:`~fairness_core.audit.Audit.from_decisions`).

    >>> fields = count_arrays([1, 0, 1, 1], [1, 1, 0, 1], ["a", "a", "b", "b"], positive_is="benefit")
    >>> fields["cms"]["a"], fields["group_columns"]
    (ConfusionMatrix(tp=1, fn=0, fp=1, tn=0), ('sensitive_feature',))
    """
    predictions = _vector(y_pred, "y_pred")
    labels = None if y_true is None else _vector(y_true, "y_true")
    groups = _sensitive_frame(sensitive_features)
    sizes = {"y_pred": len(predictions), "sensitive_features": len(groups)}
    if labels is not None:
        sizes = {"y_true": len(labels), **sizes}
    if len(set(sizes.values())) != 1:
        raise DataValidationError("lengths differ: " + ", ".join(f"{k} has {v:,}" for k, v in sizes.items()))
    groups.columns = [c if c not in ("y_true", "y_pred") else f"{c} (group)" for c in groups.columns]
    columns = {"y_pred": predictions} if labels is None else {"y_true": labels, "y_pred": predictions}
    df = pd.concat([pd.DataFrame(columns), groups], axis=1)
    try:
        # Arrays are named by the analyst, not guessed from a file's columns: predictions equal to the labels (an
        # oracle among candidate models, a test fixture) are taken as given.
        return count_rows(df, None if labels is None else "y_true", "y_pred", list(groups.columns), pos_label,
                          positive_is=positive_is, threshold=threshold, source=source, positions=True,
                          unknown=unknown, blank_as_unknown=blank_as_unknown, perfect_predictions=True)
    except DataValidationError as exc:  # arrays have positions, not file rows: y_true[3], not "row 4"
        raise DataValidationError([Problem(f"{p.column}[{p.row - 1}]: {p.message}" if p.row is not None and p.column
                                           else (f"{p.column}: {p.message}" if p.column else p.message))
                                   for p in exc.problems]) from None
