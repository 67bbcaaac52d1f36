"""Audits of data bigger than memory, or than one machine: one GROUP BY inside the engine.

:func:`aggregate` counts TP, FN, FP, TN per group where the data live and brings back only the
counts. A path or glob of Parquet or CSV files is read out of core by DuckDB, embedded (the
default); an Ibis table runs on its own backend (Spark, Postgres, BigQuery, Snowflake, Trino …),
so the same call audits a warehouse table or a Spark cluster's data. Checks and messages are
those of an upload: a label with a third value, a positive value that never occurs, missing
values, too many groups.

>>> import pandas as pd, tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> pd.DataFrame({"y": [1, 0, 1, 1], "score": [0.9, 0.6, 0.2, 0.7], "g": ["a", "a", "b", "b"]}).to_parquet(
...     folder / "log.parquet")
>>> audit = aggregate(str(folder / "*.parquet"), label="y", prediction="score", groups=["g"], threshold=0.5)
>>> audit.cms["a"], audit.cms["b"]
(ConfusionMatrix(tp=1, fn=0, fp=1, tn=0), ConfusionMatrix(tp=1, fn=1, fp=0, tn=0))
"""

from __future__ import annotations

import glob as globbing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...audit import Audit
from ...common.vocabulary import opposite_outcome
from ...statistics.confusion import ConfusionMatrix
from ...common.validation import (MAX_GROUPS, MAX_NAME_LENGTH, DataValidationError, Problem, clean_name, cleaning_notice,
                                  direction, group_values, hidden_name_problem, intersection_names, row_notes, show_value)

#: File kinds a path or glob may name.
FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "csv", ".txt": "csv"}


def _is_ibis_table(source: Any) -> bool:
    return type(source).__module__.startswith("ibis.") and hasattr(source, "group_by") and hasattr(source, "schema")


def is_glob(path: str) -> bool:
    """Whether a path names several files by a pattern (``*``, ``?``, ``[…]``)."""
    return any(ch in path for ch in "*?[")


def open_files(source: str | Path | Sequence[str | Path]) -> Any:
    """A path, glob or list of Parquet or CSV files as an Ibis table on an embedded DuckDB (out of core:
    DuckDB streams the files and spills to disk, so they may be larger than memory)."""
    import ibis

    paths = [str(source)] if isinstance(source, (str, Path)) else [str(p) for p in source]
    if not paths:
        raise DataValidationError("no files given")
    kinds = set()
    for p in paths:
        matched = globbing.glob(p) if is_glob(p) else ([p] if Path(p).exists() else [])
        if not matched:
            raise DataValidationError(f"no file matches {p!r}")
        for m in matched:
            kind = FORMATS.get(Path(m).suffix.lower())
            if kind is None:
                raise DataValidationError(f"{Path(m).name}: expected Parquet (.parquet) or CSV (.csv, .tsv, .txt) files")
            kinds.add(kind)
    if len(kinds) > 1:
        raise DataValidationError("mix of Parquet and CSV files; aggregate one kind at a time")
    con = ibis.duckdb.connect()
    try:
        if kinds == {"parquet"}:
            return con.read_parquet(paths)
        return con.read_csv(paths, all_varchar=True)  # text first, as uploads: "007" stays "007"
    except Exception as exc:  # noqa: BLE001 - DuckDB's reader errors become one clear message
        raise DataValidationError(f"could not read {', '.join(paths)}: {str(exc).splitlines()[0]}") from None


def exact_float(value: float) -> Any:
    """``value`` as an Ibis float64 literal that every engine reads as this very float. A plain literal is written
    into the SQL as its decimal digits, which DuckDB reads as a DECIMAL and turns into a double by a rounding
    that is not always the nearest (about one random 17-digit float in ten came out a neighbour); text cast to a
    double is read correctly rounded (DuckDB, PostgreSQL, Spark)."""
    import ibis

    return ibis.literal(repr(float(value))).cast("float64")


def _literal_like(column: Any, value: Any, what: str, name: str) -> Any:
    """``value`` in the column's own type, so that 1, "1" and True all find a label stored as 1 / "1" / true."""
    dtype = column.type()
    try:
        if dtype.is_boolean():
            text = str(value).strip().lower()
            if text not in ("1", "0", "true", "false"):
                raise ValueError
            return text in ("1", "true")
        if dtype.is_integer():
            number = float(value)
            if not number.is_integer():
                raise ValueError
            return int(number)
        if dtype.is_floating():
            return exact_float(float(value))
        if dtype.is_decimal():
            return float(value)
        return str(value)
    except (TypeError, ValueError):
        raise DataValidationError(Problem(f"the {what} value {show_value(value)} cannot be compared with this column of "
                                          f"type {dtype}", column=name)) from None


def aggregate(source: Any, *, label: str, prediction: str, groups: Sequence[str], positive: Any = 1,
              positive_prediction: Any = None, threshold: float | None = None,
              positive_is: str | None = None,
              name: str | None = None) -> Audit:
    """Count one confusion matrix per group inside the engine that holds the data.

    Parameters
    ----------
    source : path, glob, list of paths, or an Ibis table
        Parquet or CSV files (read out of core by an embedded DuckDB), or a table on any Ibis
        backend, where the query runs; only the per-group counts come back.
    label, prediction : str
        Columns: the actual outcome, and the prediction (binary, or a score with ``threshold``).
    groups : sequence of str
        One or more group columns; several give intersections named as in the app ("A & B").
    positive, positive_prediction : value
        The positive value of the label (and of the prediction; by default the same).
    threshold : float, optional
        The prediction is a score; positive means ``score >= threshold``.
    positive_is : {"benefit", "harm"} or None
        What the positive prediction is for the person: "harm" negates labels and predictions so that positive
        means the benefit; None leaves the direction undeclared.
    name : str, optional
        Where the data came from, in words (default: the path, or "Ibis table").

    Raises
    ------
    DataValidationError
        A missing column, a label or prediction with a third value, a positive value that never
        occurs, missing values (with their count), fewer than 2 or more than 500 groups.
    """
    positive_is, flip = direction(positive_is)
    groups = [str(g) for g in groups]
    if not groups:
        raise DataValidationError("choose at least one group column")
    table = source if _is_ibis_table(source) else open_files(source)
    columns = list(table.columns)
    for col in (label, prediction, *groups):
        if col not in columns:
            raise DataValidationError(Problem(f"no such column; columns are {', '.join(map(repr, columns))}",
                                              column=col))
    if len({label, prediction, *groups}) != 2 + len(groups):
        raise DataValidationError("the label, prediction and group columns must all be different")

    pos = _literal_like(table[label], positive, "positive label", label)
    y = table[label] == pos
    not_number = None   # with a threshold: a prediction that is there but not a number (NaN included)
    if threshold is None:
        pred_pos = _literal_like(table[prediction], positive if positive_prediction is None else positive_prediction,
                                 "positive prediction", prediction)
        yhat = table[prediction] == pred_pos
    else:
        score = _scores(table[prediction])
        yhat = score >= exact_float(threshold)
        not_number = _missing(score) & ~_missing(table[prediction])   # text that is no number (NaN is missing)
    # one pass over the data answers the checks and counts (per group, the cells of y × ŷ and what is missing);
    # a label or prediction of more than two values is counted exactly in a second pass, for its message, and
    # thousands of groups take two passes: the checks, then the counts
    by = {f"g{k}": table[g] for k, g in enumerate(groups)}  # the group columns as g0, g1 …, so that none can be
    keys = list(by)                                        # mistaken for a count or a flag, whatever its name
    found, counts = _cells(table, by, label, prediction, y, yhat, not_number) or (None, None)
    if found is None or None in found.values():
        found = _checks(table, by, label, prediction, y, not_number)
    problems = _check(found, label, prediction, groups, positive, threshold)
    if problems:
        raise DataValidationError(problems)
    if counts is None:
        counts = (table.group_by(**by)
                  .aggregate(tp=(y & yhat).cast("int64").sum(), fn=(y & ~yhat).cast("int64").sum(),
                             fp=(~y & yhat).cast("int64").sum(), tn=(~y & ~yhat).cast("int64").sum())
                  .limit(MAX_GROUPS + 1).to_pandas())
    if flip:
        counts = counts.rename(columns={"tp": "tn", "tn": "tp", "fn": "fp", "fp": "fn"})[list(counts.columns)]
    if len(counts) > MAX_GROUPS:
        raise DataValidationError(f"more than {MAX_GROUPS} groups from {', '.join(groups)}; the limit is {MAX_GROUPS}")
    if len(counts) < 2:
        raise DataValidationError(f"all {int(found['rows']):,} rows fall in one group ({', '.join(groups)}); an "
                                  "audit compares at least two groups")
    counts = counts.sort_values(keys, kind="stable")
    parts = [[clean_name(v) for v in counts[key]] for key in keys]
    for g, values in zip(groups, parts):  # the upload's limits, per value
        for value in values:
            if (why := hidden_name_problem(value)) is not None:
                raise DataValidationError(Problem(why, column=g))
        longest = max(values, key=len)
        if len(longest) > MAX_NAME_LENGTH:
            raise DataValidationError(Problem(f"group value of {len(longest):,} characters; the limit is "
                                              f"{MAX_NAME_LENGTH}", column=g))
    names = intersection_names(parts)
    cms = {n: ConfusionMatrix(int(r.tp), int(r.fn), int(r.fp), int(r.tn))
           for n, r in zip(names, counts.itertuples(index=False))}
    notes = [notice for g, key, values in zip(groups, keys, parts)  # the upload's notes on cleaned names
             if (notice := cleaning_notice(f"Group values in {g!r}", [raw for raw, clean in zip(counts[key], values)
                                                                      if str(raw).strip() != clean])) is not None]
    notes += row_notes(label, positive, prediction, flip, threshold)
    where = name or (f"{source}" if isinstance(source, (str, Path)) else "Ibis table" if _is_ibis_table(source)
                     else "files")
    return Audit(cms, source=f"{where} ({int(found['rows']):,} rows, aggregated in place)", notes=tuple(notes),
                 group_columns=tuple(groups),
                 positive_outcome=opposite_outcome(str(positive)) if flip else str(positive), positive_is=positive_is,
                 group_values=group_values(names, parts))


#: Most cells of the one-pass table (groups × what is missing × y × ŷ: at most 4 per group for valid data) read
#: back; more (thousands of groups) are counted in two passes instead.
MAX_CELLS = 20_000


def _cells(table: Any, by: dict[str, Any], label: str, prediction: str, y: Any, yhat: Any,
           not_number: Any) -> tuple[Any, Any] | None:
    """The checks and the per-group counts from one pass over the data, or None when the cells are too many.

    Rows are counted per cell: the group values (``by``: ``g0``, ``g1`` … to their columns), whether
    each is missing, whether the label is missing, y, whether the prediction is missing, ŷ (and, with a
    threshold, whether the prediction is not a number), with each cell's smallest and largest label and
    prediction. A label of y = 0 cells whose smallest and largest agree everywhere has one value besides the
    positive one, so the distinct values are counted without a pass of their own; when they do not agree (a
    third value), ``found["label_values"]`` is None and the caller counts them exactly (:func:`_checks`). The
    same for the prediction. NaN is missing, as in an upload (:func:`_missing`)."""
    keys = {**by, **{f"{key}_missing": column.isnull() for key, column in by.items()}}
    keys.update(label_missing=_missing(table[label]), y=y, prediction_missing=_missing(table[prediction]), yhat=yhat)
    spans = {"label": label}
    if not_number is None:
        spans["prediction"] = prediction
    else:
        keys["not_number"] = not_number
    values = {}
    for name, column in spans.items():
        if not table[column].type().is_boolean():      # a boolean column has two values at most
            values.update({f"{name}_min": table[column].min(), f"{name}_max": table[column].max()})
    cells = table.group_by(**keys).aggregate(n=table.count(), **values).limit(MAX_CELLS + 1).to_pandas()
    if len(cells) > MAX_CELLS:
        return None
    n = cells["n"].astype("int64")

    def true(column: str) -> Any:        # a flag column, missing (a null y or ŷ) as False
        return cells[column].eq(True).to_numpy()

    def total(column: str) -> int:
        return int(n[true(column)].sum())

    def distinct(name: str, chosen: str) -> int | None:
        """Values of a column: the chosen one where it occurs, and one other where every other cell agrees."""
        present = ~true(f"{name}_missing")
        others = present & ~true(chosen)
        count = int((present & true(chosen)).any()) + int(others.any())
        if f"{name}_min" not in cells:
            return count
        low, high = cells.loc[others, f"{name}_min"], cells.loc[others, f"{name}_max"]
        return count if bool((low == high).all()) and low.nunique(dropna=False) <= 1 else None

    found = {"rows": int(n.sum()), "label_missing": total("label_missing"), "label_values": distinct("label", "y"),
             "label_positive": total("y"), "prediction_missing": total("prediction_missing"),
             **{f"group_missing_{k}": total(f"{key}_missing") for k, key in enumerate(by)}}
    if not_number is None:
        found["prediction_values"] = distinct("prediction", "yhat")
    else:
        found["prediction_not_number"] = total("not_number")
    yy, hh = true("y"), true("yhat")
    parts = cells[list(by)].copy()
    for name, mask in (("tp", yy & hh), ("fn", yy & ~hh), ("fp", ~yy & hh), ("tn", ~yy & ~hh)):
        parts[name] = n.where(mask, 0)
    return found, parts.groupby(list(by), dropna=False, sort=False).sum().reset_index()


def _scores(column: Any) -> Any:
    """A score column as float64, every value the float its digits name: text cast (NULL where it is no number),
    a DECIMAL through its text (DuckDB's DECIMAL → DOUBLE cast is not correctly rounded; the text is exact)."""
    dtype = column.type()
    if dtype.is_decimal():
        return column.cast("string").cast("float64")
    return column if dtype.is_numeric() else column.try_cast("float64")


def _missing(column: Any) -> Any:
    """Where a column has no value: null, or NaN in a column of floats (an upload reads both as missing; the
    engines would count NaN as a value, and sort it above every number)."""
    return column.isnull() | column.isnan() if column.type().is_floating() else column.isnull()


def _checks(table: Any, by: dict[str, Any], label: str, prediction: str, y: Any, not_number: Any) -> Any:
    """The checks of :func:`_check` in one pass, each counted exactly: when :func:`_cells` could not answer them."""
    label_missing, prediction_missing = _missing(table[label]), _missing(table[prediction])
    checks = {"rows": table.count(), "label_missing": label_missing.sum(),
              "label_values": table[label].nunique(where=~label_missing), "label_positive": y.sum(),
              "prediction_missing": prediction_missing.sum(),
              **{f"group_missing_{k}": column.isnull().sum() for k, column in enumerate(by.values())}}
    if not_number is None:
        checks["prediction_values"] = table[prediction].nunique(where=~prediction_missing)
    else:
        checks["prediction_not_number"] = not_number.sum()
    return table.aggregate(**checks).to_pandas().iloc[0]


def _check(found: Any, label: str, prediction: str, groups: list[str], positive: Any,
           threshold: float | None) -> list[Problem]:
    problems = []
    if int(found["rows"]) == 0:
        return [Problem("no rows")]
    if found["label_missing"]:
        problems.append(Problem(f"missing label in {int(found['label_missing']):,} row(s)", column=label))
    if found["label_values"] > 2:
        problems.append(Problem(f"{int(found['label_values'])} distinct values; the label must be binary",
                                column=label))
    elif found["label_positive"] == 0 and found["label_values"] == 2:
        problems.append(Problem(f"the chosen positive value {show_value(positive)} does not occur", column=label))
    if found["prediction_missing"]:
        problems.append(Problem(f"missing prediction in {int(found['prediction_missing']):,} row(s)",
                                column=prediction))
    if threshold is None and found["prediction_values"] > 2:
        problems.append(Problem(f"{int(found['prediction_values'])} distinct values; the prediction must be binary "
                                "— or give a threshold for a score", column=prediction))
    if threshold is not None and found["prediction_not_number"]:
        problems.append(Problem(f"{int(found['prediction_not_number']):,} value(s) are not numbers, so they cannot "
                                "be thresholded", column=prediction))
    for k, g in enumerate(groups):
        if found[f"group_missing_{k}"]:
            problems.append(Problem(f"missing group value in {int(found[f'group_missing_{k}']):,} row(s)", column=g))
    return problems
