"""Apply a saved threshold rule to a file: ``python -m fairness_core apply RULE.json DATA.csv --score COL --group COL
--out OUT.csv`` (:func:`apply_file`; the command line is :mod:`fairness_core.cli`).

The data are read as uploads are (:func:`fairness_core.services.io.read_table`: CSV/TSV/TXT, XLSX or Parquet, with
the same row, cell and size limits), every input column is written back as it was read, and the decisions are
added beside them (1: the positive, beneficial outcome). A score that is not a number, a missing group or a group
the rule was never fitted for is refused by row or by name, and nothing is written. CSV output is neutralized
against formulas (:func:`fairness_core.services.io.to_safe_csv`); ``--out`` ending in .parquet writes Parquet.
A randomized rule draws each row's threshold with ``seed`` (printed when chosen at random, so a run can be
repeated).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..common.validation import INTERSECTION_SEP
from ..statistics.mitigation.rule import RuleFileError, ThresholdRule
from ..statistics.row_counts import as_numbers
from .io import read_table, to_safe_csv

#: The column the decisions are written to unless another is named.
DECISION_COLUMN = "decision"


class ApplyError(ValueError):
    """Why a rule cannot be applied to a file; nothing was written."""


def _rows_named(mask: np.ndarray) -> str:
    """The first data rows (1 = the first row after the header) where ``mask`` holds."""
    rows = np.flatnonzero(mask)
    return ", ".join(str(r + 1) for r in rows[:5]) + (f" and {rows.size - 5:,} more" if rows.size > 5 else "")


def decide(rule: ThresholdRule, table: pd.DataFrame, score: str, groups: Sequence[str], column: str = DECISION_COLUMN,
           random_state: Any = None) -> pd.DataFrame:
    """``table`` with the rule's 0/1 decisions in ``column`` (the last). Group names are compared as text (a file
    reads every cell as text), several group columns joined with :data:`INTERSECTION_SEP` as the page joins them.

    Raises :class:`ApplyError` naming the column, the rows or the groups at fault."""
    missing = [c for c in [score, *groups] if c not in table.columns]
    if missing:
        raise ApplyError(f"no column {', '.join(map(repr, missing))} in the data; its columns are "
                         f"{', '.join(map(repr, list(table.columns)[:20]))}")
    if column in table.columns:
        raise ApplyError(f"the data already have a column {column!r}; name the decisions' column with --column")
    s = as_numbers(table[score], table.attrs.get("delimiter", ",")).to_numpy(float)
    if (bad := ~np.isfinite(s)).any():
        raise ApplyError(f"score column {score!r} is not a finite number in {bad.sum():,} rows (data rows "
                         f"{_rows_named(bad)})")
    parts = [table[c] for c in groups]
    if (blank := np.logical_or.reduce([p.isna().to_numpy() for p in parts])).any():
        raise ApplyError(f"group column{'s' if len(groups) > 1 else ''} {', '.join(map(repr, groups))} "
                         f"{'are' if len(groups) > 1 else 'is'} blank in {blank.sum():,} rows (data rows "
                         f"{_rows_named(blank)}); every row needs its group")
    names = parts[0].astype(str)
    for p in parts[1:]:
        names = names + INTERSECTION_SEP + p.astype(str)
    by_text = {str(name): name for name in rule.thresholds}
    codes, uniques = pd.factorize(names)
    unknown = [u for u in uniques if u not in by_text]
    if unknown:
        raise ApplyError(f"the rule was never fitted for {len(unknown):,} group{'s' if len(unknown) > 1 else ''} in the "
                         f"data: {unknown[:10]!r}; it knows {list(by_text)[:10]!r}. Nothing was written")
    # The rule's own names as a categorical: predict reads its codes, no second pass over the text.
    group_of = pd.Series(pd.Categorical.from_codes(codes, categories=pd.Index([by_text[u] for u in uniques],
                                                                            dtype=object)))
    decisions = rule.predict(s, group_of, random_state=random_state)
    out = table.copy()
    out[column] = decisions
    return out


def apply_file(rule_path: Path, data_path: Path, score: str, groups: Sequence[str], out: Path,
               column: str = DECISION_COLUMN, seed: int | None = None) -> list[str]:
    """Read the rule and the data, decide every row, write ``out`` (beside, then renamed: never half a file) and
    return the lines to print. Raises :class:`ApplyError`, or :class:`fairness_core.services.io.DataValidationError` for a refused file."""
    try:
        rule = ThresholdRule.from_json(rule_path.read_bytes())
    except OSError as exc:
        raise ApplyError(f"cannot read the rule {rule_path}: {exc.strerror}") from None
    except RuleFileError as exc:
        raise ApplyError(f"{rule_path}: {exc}") from None
    if out.is_dir() or not out.parent.is_dir():
        raise ApplyError(f"--out {out}: give a file in an existing folder")
    try:
        data = data_path.read_bytes()
    except OSError as exc:
        raise ApplyError(f"cannot read {data_path}: {exc.strerror}") from None
    table = read_table(data, data_path.name)
    lines = [f"rule: {rule.target}, tolerance {rule.tolerance:g}, {len(rule.thresholds)} groups, fitted on "
             f"{rule.fitted_rows:,} rows ({rule.fingerprint[:19]}…)"]
    if rule.randomized and seed is None:
        seed = secrets.randbelow(2**31)
    if rule.randomized:
        lines.append(f"randomized rule: each row's threshold drawn with seed {seed} (--seed {seed} repeats it)")
    decided = decide(rule, table, score, groups, column, random_state=seed)
    tmp = out.with_name(f".{out.name}.part")
    try:
        if out.suffix.lower() in (".parquet", ".pq"):
            decided.to_parquet(tmp, index=False)
        else:
            tmp.write_bytes(to_safe_csv(decided, index=False, na_rep=""))
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ApplyError(f"cannot write {out}: {exc.strerror}") from None
    chosen = int(decided[column].sum())
    lines.append(f"wrote {out}: {len(decided):,} rows, {chosen:,} decided positive ({chosen / len(decided):.1%}), "
                 f"in column {column!r}")
    return lines


__all__ = ["DECISION_COLUMN", "ApplyError", "apply_file", "decide"]
