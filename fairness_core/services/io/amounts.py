"""Amount audits of data bigger than memory: per-group sufficient statistics in one GROUP BY inside the engine.

:func:`aggregate_amounts` (also ``io.aggregate(..., continuous=True)``, :func:`aggregate` here) computes, for every group, n and the power
sums Σu, Σu², Σu³ of the outcome, the prediction, the benefit, |error| and error² (u = x − a shift: the first
row's outcome for the outcome and the prediction, so that the central sums keep their digits when the mean is
large against the spread), where the data live — DuckDB out of core on Parquet or CSV files, or any Ibis backend —
and builds a :class:`~fairness_core.continuous.ContinuousAudit` from them
(:meth:`~fairness_core.statistics.amounts.Moments.from_power_sums`). Only the sums come back. Values are read as
the upload reads them: a text that is no number, a missing value or an infinite one is refused, counted per column.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...common.validation import (MAX_GROUPS, DataValidationError, Problem, clean_name, group_values,
                                  hidden_name_problem, intersection_names)
from ...common.vocabulary import resolve_positive_is
from ...continuous import AMOUNTS, ContinuousAudit
from ...statistics.amounts import Moments
from . import warehouse
from .warehouse import _is_ibis_table, _missing, _scores, open_files


def aggregate(source: Any, *, continuous: bool = False, **arguments: Any) -> Any:
    """``io.aggregate``: :func:`fairness_core.io.warehouse.aggregate` (one confusion matrix per group, the arguments
    documented there), or, with ``continuous=True``, :func:`aggregate_amounts` (an amount audit; ``label``,
    ``prediction``, ``groups``, ``positive_is`` and ``name`` apply)."""
    if continuous:
        return aggregate_amounts(source, **arguments)
    return warehouse.aggregate(source, **arguments)


aggregate.__doc__ = f"{aggregate.__doc__}\n\n{warehouse.aggregate.__doc__}"


def aggregate_amounts(source: Any, *, label: str, prediction: str, groups: Sequence[str],
                      positive_is: str | None = None, name: str | None = None) -> ContinuousAudit:
    """An amount audit counted where the data live (see the module docstring).

    ``label`` and ``prediction`` are the observed and predicted amounts; ``groups`` one or more group columns
    (intersections named "A & B"); ``positive_is`` as :meth:`ContinuousAudit.from_predictions`.

    Raises :class:`~fairness_core.io.DataValidationError` naming the column: a missing column, values that are no
    number, missing or infinite (with their count), an amount that never varies, a group of one row, fewer than
    two or more than :data:`~fairness_core.validation.MAX_GROUPS` groups.
    """
    import ibis

    positive_is = resolve_positive_is(positive_is, "a larger predicted amount")
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
    y, p = _scores(table[label]), _scores(table[prediction])
    first = table.select(y=y).limit(1).to_pandas()
    shift = float(first["y"].iloc[0]) if len(first) and np.isfinite(first["y"].iloc[0]) else 0.0
    shifted = ibis.literal(repr(shift)).cast("float64")
    error = p - y
    benefit = error if positive_is != "harm" else y - p
    values = {"outcome": y - shifted, "prediction": p - shifted, "benefit": benefit, "abs_error": error.abs(),
              "squared_error": error * error}
    by = {f"g{k}": table[g] for k, g in enumerate(groups)}
    sums: dict[str, Any] = {"n": table.count()}
    for amount, u in values.items():
        sums.update({f"{amount}_s1": u.sum(), f"{amount}_s2": (u * u).sum(), f"{amount}_s3": (u * u * u).sum()})
    for what, column, raw in (("label", y, table[label]), ("prediction", p, table[prediction])):
        sums[f"{what}_missing"] = _missing(raw).cast("int64").sum()
        sums[f"{what}_not_number"] = (_missing(column) & ~_missing(raw)).cast("int64").sum()
        sums[f"{what}_infinite"] = column.isinf().cast("int64").sum()
        sums[f"{what}_min"], sums[f"{what}_max"] = column.min(), column.max()
    for k, key in enumerate(by):
        sums[f"group_missing_{k}"] = by[key].isnull().cast("int64").sum()
    counts = table.group_by(**by).aggregate(**sums).limit(MAX_GROUPS + 1).to_pandas()
    problems = []
    for what, col in (("label", label), ("prediction", prediction)):
        for kind in ("missing", "not_number", "infinite"):
            if (bad := int(counts[f"{what}_{kind}"].sum())):
                words = {"missing": "missing", "not_number": "not a number", "infinite": "infinite"}[kind]
                problems.append(Problem(f"{bad:,} value(s) are {words}; an amount must be a finite number", column=col))
        if not problems and counts[f"{what}_min"].min() == counts[f"{what}_max"].max():
            problems.append(Problem(f"every value is {counts[f'{what}_min'].min():g}; an amount that never varies "
                                    "cannot be audited (is this the right column?)", column=col))
    for k, g in enumerate(groups):
        if int(counts[f"group_missing_{k}"].sum()):
            problems.append(Problem(f"missing group value in {int(counts[f'group_missing_{k}'].sum()):,} row(s)",
                                    column=g))
    if problems:
        raise DataValidationError(problems)
    if len(counts) > MAX_GROUPS:
        raise DataValidationError(f"more than {MAX_GROUPS} groups from {', '.join(groups)}; the limit is {MAX_GROUPS}")
    if len(counts) < 2:
        raise DataValidationError(f"all rows fall in one group ({', '.join(groups)}); an audit compares at least two "
                                  "groups")
    keys = list(by)
    counts = counts.sort_values(keys, kind="stable")
    parts = [[clean_name(v) for v in counts[key]] for key in keys]
    for g, vals in zip(groups, parts):
        for value in vals:
            if (why := hidden_name_problem(value)) is not None:
                raise DataValidationError(Problem(why, column=g))
    names = intersection_names(parts)
    n = counts["n"].to_numpy(dtype=float)
    moments = {a: Moments.from_power_sums(n, *(counts[f"{a}_s{k}"].to_numpy(dtype=float) for k in (1, 2, 3)),
                                          shift=shift if a in ("outcome", "prediction") else 0.0) for a in AMOUNTS}
    where = name or (f"{source}" if isinstance(source, (str, Path)) else "Ibis table" if _is_ibis_table(source)
                     else "files")
    return ContinuousAudit(tuple(names), moments, positive_is, f"{where} ({int(n.sum()):,} rows, aggregated in place)",
                           (), tuple(groups), group_values(names, parts))
