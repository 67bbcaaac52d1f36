"""Tables of per-group confusion matrices (a group column or two, plus TP, FN, FP, TN) to an
:class:`~fairness_core.audit.Audit`, and an audit back to such a table. Counts are read strictly:
whole numbers only, every problem named by row and column."""

from __future__ import annotations

import re
import unicodedata
from typing import Hashable, Iterable, Sequence

import numpy as np
import pandas as pd

from ...audit import Audit
from ...common.vocabulary import opposite_outcome
from ...statistics.confusion import CELLS, ConfusionMatrix
from ...common.numbers import as_numbers
from ...statistics.row_counts import is_text
from ...common.validation import (INTERSECTION_SEP, MAX_COUNT, MAX_GROUPS, MAX_NAME_LENGTH, DataValidationError, Problem,
                                  clean_name, cleaning_notice, direction, group_values, hidden_name_problem, lines_for,
                                  show_value)
from .read import normalize_header


_ALIASES: dict[str, tuple[str, ...]] = {
    "TP": ("tp", "truepositive", "truepositives", "truepos", "hits"),
    "FN": ("fn", "falsenegative", "falsenegatives", "falseneg", "misses"),
    "FP": ("fp", "falsepositive", "falsepositives", "falsepos", "falsealarms"),
    "TN": ("tn", "truenegative", "truenegatives", "trueneg", "correctrejections"),
}
def _is_fractional(s: pd.Series, delimiter: str = ",") -> bool:
    """Every value a plain number and some with decimals (a rate or score, never a group name)."""
    values = as_numbers(s, delimiter)
    return bool(values.notna().all() and (values % 1 != 0).any())


def find_count_columns(columns: Iterable[Hashable]) -> dict[str, str]:
    """Map "TP", "FN", "FP", "TN" to the matching headers (case-insensitive, common spellings)."""
    found: dict[str, str] = {}
    for col in columns:
        key = normalize_header(col)
        for cell, aliases in _ALIASES.items():
            if key in aliases:
                if cell in found:
                    raise DataValidationError(Problem(
                        f"both {found[cell]!r} and {col!r} look like the {cell} column", column=str(col)))
                found[cell] = str(col)
    return found


def cms_from_table(df: pd.DataFrame, group_columns: Sequence[str] | None = None,
                   source: str = "uploaded confusion matrices", *, positive: str | None = None,
                   positive_is: str | None = None) -> Audit:
    """Build an Audit from a table with a group column (or two) plus TP, FN, FP, TN.

    With two group columns the groups are their intersections ("A & B").
    Every other column is an error unless ``group_columns`` names the group
    columns explicitly, in which case extra columns are ignored.

    ``positive`` says what the table's positive class means ("approved", "reoffends"). With
    ``positive_is="harm"`` that class is harmful: the classes swap (TP ↔ TN,
    FN ↔ FP), so that positive means the beneficial outcome, as every measure here assumes, and a note
    says so; ``"benefit"`` declares it beneficial; None leaves it undeclared.

    >>> t = pd.DataFrame({"group": ["a", "b"], "TP": [5, 2], "FN": [1, 2], "FP": [3, 0], "TN": [9, 8]})
    >>> a = cms_from_table(t, positive="reoffends", positive_is="harm")
    >>> a.cms["a"], a.positive_outcome
    (ConfusionMatrix(tp=9, fn=3, fp=1, tn=5), 'not reoffends')
    """
    positive_is, flip = direction(positive_is)
    notices_before = list(df.attrs.get("notices", []))
    df = df.reset_index(drop=True)
    df.attrs["notices"] = list(notices_before)
    counts = find_count_columns(df.columns)
    missing = [c for c in CELLS if c not in counts]
    if missing:
        raise DataValidationError(Problem(
            f"missing column(s) {', '.join(missing)}; found {', '.join(map(repr, df.columns))}. "
            "Expected a group column plus TP, FN, FP, TN (any case; 'true positives' etc. also work)"))
    rest = [c for c in df.columns if c not in counts.values()]
    if group_columns is None:
        group_columns = rest
        measures = [c for c in rest if _is_fractional(df[c], df.attrs.get("delimiter", ","))]  # an approval_rate
        if measures and len(measures) < len(rest):
            group_columns = [c for c in rest if c not in measures]
            df.attrs.setdefault("notices", []).append(
                f"Ignored {', '.join(map(repr, measures))}: numbers with decimals, not group names.")
    else:
        for c in group_columns:
            if c not in df.columns:
                raise DataValidationError(Problem("no such column", column=c))
    if not 1 <= len(group_columns) <= 2:
        raise DataValidationError(Problem(
            f"expected one group column (or two for intersections) besides TP, FN, FP, TN; "
            f"found {len(group_columns)}: {', '.join(map(repr, group_columns)) or 'none'}"))
    if len(df) > MAX_GROUPS:
        raise DataValidationError(f"{len(df)} groups; the limit is {MAX_GROUPS}")
    if len(df) < 2:
        raise DataValidationError(f"{len(df)} group row; an audit compares at least two groups")

    problems: list[Problem] = []
    cells = np.zeros((len(df), 4), dtype=np.int64)
    for k, cell in enumerate(CELLS):
        col = counts[cell]
        if is_text(df[col]):
            cells[:, k] = _text_counts(df[col], col, df.attrs.get("delimiter", ","), problems,
                                       df.attrs.setdefault("notices", []))
        else:
            cells[:, k] = _numeric_counts(df[col], col, problems)

    names = _group_names(df, list(group_columns), problems)
    for r in np.flatnonzero(cells.sum(axis=1) == 0):
        if not any(p.row == r + 1 for p in problems):
            problems.append(Problem(f"group {names[r]!r} is empty (all four counts are 0)", int(r) + 1))
    _check_duplicates(names, problems, list(group_columns))
    if problems:
        raise DataValidationError(lines_for(sorted(problems, key=lambda p: (p.row or 0, p.column or "")), df))
    notes = list(df.attrs.get("notices", [])[len(notices_before):])
    meaning = (positive or "").strip() or None
    if flip:
        cells = cells[:, [3, 2, 1, 0]]  # TP ↔ TN, FN ↔ FP: the other class is positive now
        notes.append(f"The table's positive class{f' ({meaning})' if meaning else ''} is harmful, so the classes "
                     "were swapped (TP ↔ TN, FN ↔ FP): positive here means its opposite, the beneficial outcome.")
    outcome = (opposite_outcome(meaning) if meaning else "the table's negative class") if flip else (meaning or
                                                                                           "the beneficial outcome")
    cms = {name: ConfusionMatrix(*row) for name, row in zip(names, cells.tolist())}
    try:
        return Audit(cms, source=source, group_columns=tuple(group_columns), notes=tuple(notes),
                     positive_outcome=outcome, positive_is=positive_is,
                     group_values=group_values(names, df.attrs.get("group_parts", [])),
                     provenance={"attribute(s) audited": " × ".join(map(str, group_columns)),
                                 "input": "per-group confusion matrices"})
    except ValueError as exc:  # belt and braces: the checks above should have caught it
        raise DataValidationError(str(exc)) from None


_WHOLE = re.compile(r"\+?\d+(\.0{1,2})?", re.ASCII)
_NEGATIVE_ZERO = re.compile(r"-0+(\.0*)?", re.ASCII)
_THOUSANDS = {sep: re.compile(r"\d{1,3}(" + re.escape(sep) + r"\d{3})+", re.ASCII)
              for sep in (",", " ", "\u00a0", "\u202f", "'", "_")}


def _ascii_digits(value: str) -> str:
    """Decimal digits of any script (Arabic-Indic ٣, Devanagari ३, full-width ３) as 0–9; the rest unchanged."""
    return "".join(str(d) if (d := unicodedata.decimal(ch, None)) is not None else ch for ch in value)


def _text_counts(s: pd.Series, col: str, delimiter: str, problems: list[Problem],
                 notices: list[str] | None = None) -> np.ndarray:
    """Counts from text, strictly: plain whole numbers, or with a thousands separator that cannot be
    mistaken for the delimiter or a decimal point. "1.000", "0x10", "1e3" and "1e-400" are refused;
    "-0" is 0. Digits of other scripts (Arabic-Indic, full-width) are read as the digits they are, and
    a notice in ``notices`` says so with the first row."""
    out = np.zeros(len(s), dtype=np.int64)
    text = s.where(s.notna(), "").astype(str).str.strip()
    other_script = None
    for r, value in enumerate(text.tolist()):
        row = r + 1
        if value == "":
            problems.append(Problem("missing count", row, col))
            continue
        if not value.isascii() and (ascii_ := _ascii_digits(value)) != value:
            other_script = other_script or (row, value, ascii_)
            value = ascii_
        if _NEGATIVE_ZERO.fullmatch(value):
            continue   # minus zero is zero
        plain = value
        if not _WHOLE.fullmatch(value):
            for sep, pattern in _THOUSANDS.items():
                if sep != delimiter and pattern.fullmatch(value):
                    plain = value.replace(sep, "")
                    break
            else:
                problems.append(Problem(_count_problem(value), row, col))
                continue
        number = int(float(plain)) if "." in plain else int(plain)
        if number > MAX_COUNT:
            problems.append(Problem(f"count {value} is too large; the limit is {MAX_COUNT:.0e} per cell", row, col))
            continue
        out[r] = number
    if other_script is not None and notices is not None:
        row, value, ascii_ = other_script
        notices.append(f"Column {col!r} writes counts with digits of another script, read as 0–9 "
                       f"(e.g. row {row}: {value!r} read as {ascii_}).")
    return out


def _count_problem(value: str) -> str:
    if re.fullmatch(r"-\s*\d+(\.\d+)?", value):
        return f"negative count {value}"
    if re.fullmatch(r"\d{1,3}(\.\d{3})+", value):
        return (f"{value!r} is ambiguous (one thousand or a decimal?); write counts as whole numbers "
                "without a thousands separator")
    if re.fullmatch(r"\+?\d*\.\d+", value):
        return f"fractional count {value}; counts must be whole numbers"
    if re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+", value):
        return f"{value!r} is in scientific notation; write the count as a whole number"
    if re.fullmatch(r"0[xXbBoO][0-9a-fA-F]+", value):
        return f"{value!r} is not a decimal whole number"
    return f"{value!r} is not a number"


def _numeric_counts(s: pd.Series, col: str, problems: list[Problem]) -> np.ndarray:
    """Counts from an already numeric column (the typed table), every problem by row."""
    for r in np.flatnonzero(s.isna().to_numpy()):
        problems.append(Problem("missing count", int(r) + 1, col))
    v = as_numbers(s).to_numpy()
    for r in np.flatnonzero(np.isinf(v)):
        problems.append(Problem(f"{show_value(s.iloc[r])} is not a finite count", int(r) + 1, col))
    ok = np.isfinite(v)
    frac = np.where(ok, np.mod(np.where(ok, v, 0.0), 1.0), 0.0)
    for r in np.flatnonzero(ok & (v < 0)):
        problems.append(Problem(f"negative count {v[r]:g}", int(r) + 1, col))
    for r in np.flatnonzero(ok & (v >= 0) & (frac != 0)):
        problems.append(Problem(f"fractional count {v[r]:g}; counts must be whole numbers", int(r) + 1, col))
    for r in np.flatnonzero(ok & (v > MAX_COUNT)):
        problems.append(Problem(f"count {v[r]:.3g} is too large; the limit is {MAX_COUNT:.0e} per cell", int(r) + 1, col))
    good = ok & (v >= 0) & (frac == 0) & (v <= MAX_COUNT)
    return np.where(good, v, 0).astype(np.int64)


def _group_names(df: pd.DataFrame, group_columns: list[str], problems: list[Problem]) -> list[str]:
    """Each row's group name ("A & B" for two columns); the per-column values are kept in
    ``df.attrs["group_parts"]``."""
    parts = []
    for col in group_columns:
        s = df[col]
        raw = s.where(s.notna(), "").astype(str)
        text = raw.map(clean_name)
        blank = s.isna().to_numpy() | (text == "").to_numpy()
        for r in np.flatnonzero(blank):
            problems.append(Problem("missing group name", int(r) + 1, col))
        for r in np.flatnonzero((text.str.len() > MAX_NAME_LENGTH).to_numpy()):
            problems.append(Problem(f"group name of {len(text.iloc[r]):,} characters; the limit is {MAX_NAME_LENGTH}",
                                    int(r) + 1, col))
            text.iloc[r] = text.iloc[r][:MAX_NAME_LENGTH]
        for r, name in enumerate(text.tolist()):
            if not blank[r] and (why := hidden_name_problem(name)) is not None:
                problems.append(Problem(why, r + 1, col))
        changed = np.flatnonzero(((raw.str.strip() != text) & ~blank).to_numpy())
        if changed.size and (notice := cleaning_notice(f"Group names in {col!r}", raw.iloc[changed].tolist(),
                                                       lambda k: int(changed[k]) + 1)) is not None:
            df.attrs.setdefault("notices", []).append(notice)
        parts.append(text.where(~blank, "").tolist())
    df.attrs["group_parts"] = parts
    return [INTERSECTION_SEP.join(p) for p in zip(*parts)]


def _check_duplicates(names: list[str], problems: list[Problem], group_columns: list[str]) -> None:
    seen: dict[str, int] = {}
    for r, name in enumerate(names, start=1):
        if not name.strip(INTERSECTION_SEP + " "):
            continue
        if name in seen:
            problems.append(Problem(f"group {name!r} already appears in row {seen[name]} (names are compared "
                                    "after Unicode normalization, removing invisible characters and folding spaces: "
                                    "every kind of space plain, runs of spaces one)", r,
                                    ", ".join(group_columns)))
        else:
            seen[name] = r


def cms_to_table(audit: Audit) -> pd.DataFrame:
    """The audit as an editable table: group, TP, FN, FP, TN."""
    df = audit.cells().drop(columns="n").reset_index()
    return df
