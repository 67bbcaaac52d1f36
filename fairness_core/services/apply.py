"""Apply a saved threshold rule to a file: ``python -m fairness_core apply RULE.json DATA.csv --score COL --group COL
--out OUT.csv`` (:func:`apply_file`; the command line is :mod:`fairness_core.cli`).

The data are read as uploads are (:func:`fairness_core.services.io.read_table`: CSV/TSV/TXT, XLSX or Parquet, with
the same row, cell and size limits), every input column is written back as it was read, and the decisions are
added beside them (1: the positive, beneficial outcome). A score that is not a number, a missing group or a group
the rule was never fitted for is refused by row or by name, and nothing is written. CSV output is neutralized
against formulas (:func:`fairness_core.services.io.to_safe_csv`); ``--out`` ending in .parquet writes Parquet.
A randomized rule draws each row's threshold with ``seed`` (printed when chosen at random, so a run can be
repeated).

**The score's scale.** The file holds the score as the model writes it (COMPAS's decile, 1 to 10); the rule may have
been fitted on it turned around (−decile: the page and the audit negate a harm's score so that higher means the
beneficial outcome). The rule file's ``score_scale.transform`` says so, and :func:`decide` applies it to the column
before predicting (:meth:`ThresholdRule.to_fitted_scale`). A file whose scores mostly lie outside the range the rule
was fitted on (:meth:`ThresholdRule.range_check`: more than half the rows outside the fitting scores' min–max, in the
file's units) is refused, naming the column, both ranges and the likely cause (negated twice or not at all, other
units, another model), since every threshold lies inside that range and such a file would be decided all one way;
``allow_out_of_range`` (``--allow-out-of-range``) applies the rule anyway, with a warning. A file decided all one
way inside the range is written, with a warning.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..common.numbers import as_numbers
from ..common.validation import INTERSECTION_SEP, clean_name
from ..statistics.mitigation.rule import SCORE_TRANSFORMS, RuleFileError, ThresholdRule
from .io import read_table, to_safe_csv

#: The column the decisions are written to unless another is named.
DECISION_COLUMN = "decision"


class ApplyError(ValueError):
    """Why a rule cannot be applied to a file; nothing was written."""


def _rows_named(mask: np.ndarray) -> str:
    """The first data rows (1 = the first row after the header) where ``mask`` holds."""
    rows = np.flatnonzero(mask)
    return ", ".join(str(r + 1) for r in rows[:5]) + (f" and {rows.size - 5:,} more" if rows.size > 5 else "")


def _rule_groups(rule: ThresholdRule, parts: Sequence[pd.Series]) -> pd.Series:
    """Each row's group as the rule names it, as a categorical (``predict`` reads its codes). A file's group is
    matched as written, else as an upload reads group values (:func:`~fairness_core.validation.clean_name`:
    invisible characters removed, every kind of space plain, runs of spaces one, trimmed, NFC), on both sides;
    the page's rule holds the names so cleaned. Groups matched neither way are refused, each shown as written
    (``repr``: a hidden character shows) with its first data row and the rule's nearest group.

    Raises :class:`ApplyError`."""
    import difflib

    codes = np.zeros(len(parts[0]), dtype=np.int64)
    for p in parts:   # one code per distinct combination of the columns' values
        c, u = pd.factorize(p)
        codes = pd.factorize(codes * len(u) + c)[0]
    first = np.unique(codes, return_index=True)[1]   # codes run 0..k-1: each group's first row
    raw = [INTERSECTION_SEP.join(str(p.iloc[r]) for p in parts) for r in first.tolist()]
    cleaned = [INTERSECTION_SEP.join(clean_name(p.iloc[r]) for p in parts) for r in first.tolist()]
    by_text = {str(name): name for name in rule.thresholds}
    by_clean: dict[str, Any] = {}
    for name in rule.thresholds:
        by_clean.setdefault(clean_name(name), name)
    found = [by_text.get(w, by_text.get(c, by_clean.get(c))) for w, c in zip(raw, cleaned)]
    missing = [k for k, name in enumerate(found) if name is None]
    if missing:
        folded = {k.casefold(): k for k in by_text}

        def nearest(k: int) -> str:
            close = difflib.get_close_matches(cleaned[k].casefold(), list(folded), n=1, cutoff=0.6)
            return f", the rule's nearest is {folded[close[0]]!r}" if close else ""

        shown = "; ".join(f"{raw[k]!r} (data row {first[k] + 1}{nearest(k)})" for k in missing[:10])
        raise ApplyError(f"the rule was never fitted for {len(missing):,} group{'s' if len(missing) > 1 else ''} in "
                         f"the data, even with invisible characters removed and spaces folded: {shown}"
                         f"{' …' if len(missing) > 10 else ''}; it knows {list(by_text)[:10]!r}. Nothing was written")
    rule_codes, names = pd.factorize(pd.Index(found, dtype=object))   # two spellings may name one group
    return pd.Series(pd.Categorical.from_codes(rule_codes[codes], categories=names))


def decide(rule: ThresholdRule, table: pd.DataFrame, score: str, groups: Sequence[str], column: str = DECISION_COLUMN,
           random_state: Any = None, allow_out_of_range: bool = False) -> pd.DataFrame:
    """``table`` with the rule's 0/1 decisions in ``column`` (the last). The score is read as every number of a file
    is (:func:`~fairness_core.common.numbers.as_numbers`: the float its digits name, correctly rounded); it holds the
    file's own scores, which the rule's ``score_transform`` turns to its scale first. Group names are compared as
    text (a file reads every cell as text), several group columns joined with :data:`INTERSECTION_SEP` as the page
    joins them.
    ``out.attrs["warnings"]`` lists what the caller should print (decided all one way; out of range but allowed).

    Raises :class:`ApplyError` naming the column, the rows or the groups at fault, or the scores' range when they
    mostly lie outside the fitted range (unless ``allow_out_of_range``)."""
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
    cautions: list[str] = []
    if reason := rule.range_check(s):
        if not allow_out_of_range:
            raise ApplyError(f"score column {score!r} {reason} Nothing was written (--allow-out-of-range applies the "
                             "rule anyway)")
        cautions.append(f"score column {score!r} {reason} Applied anyway (--allow-out-of-range).")
    parts = [table[c] for c in groups]
    if (blank := np.logical_or.reduce([p.isna().to_numpy() for p in parts])).any():
        raise ApplyError(f"group column{'s' if len(groups) > 1 else ''} {', '.join(map(repr, groups))} "
                         f"{'are' if len(groups) > 1 else 'is'} blank in {blank.sum():,} rows (data rows "
                         f"{_rows_named(blank)}); every row needs its group")
    group_of = _rule_groups(rule, parts)
    fitted = rule.to_fitted_scale(s)
    decisions = rule.predict(fitted, group_of, random_state=random_state)
    chance = rule.selection_probability(fitted, group_of)
    if len(chance) > 1 and ((chance == 1).all() or (chance == 0).all()):
        side = "at or above" if chance[0] == 1 else "below"
        cautions.append(f"every row's score is {side} every threshold of its group, so every row is decided "
                        f"{'positive' if chance[0] == 1 else 'negative'}; check that column {score!r} holds the score "
                        f"the rule was fitted on (its scale: {SCORE_TRANSFORMS[rule.score_transform]})")
    out = table.copy()
    out[column] = decisions
    out.attrs["warnings"] = cautions
    return out


def apply_file(rule_path: Path, data_path: Path, score: str, groups: Sequence[str], out: Path,
               column: str = DECISION_COLUMN, seed: int | None = None, allow_out_of_range: bool = False) -> list[str]:
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
             f"{rule.fitted_rows:,} rows ({rule.fingerprint[:19]}…); thresholds on "
             f"{SCORE_TRANSFORMS[rule.score_transform]}"]
    if rule.randomized and seed is None:
        seed = secrets.randbelow(2**31)
    if rule.randomized:
        lines.append(f"randomized rule: each row's threshold drawn with seed {seed} (--seed {seed} repeats it)")
    decided = decide(rule, table, score, groups, column, random_state=seed, allow_out_of_range=allow_out_of_range)
    lines += [f"warning: {w}" for w in decided.attrs.get("warnings", [])]
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
