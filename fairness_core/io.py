"""Reading uploads into an :class:`~fairness_core.audit.Audit`, and writing safe CSV.

Every path validates before anything is used. Problems raise
:class:`DataValidationError`, whose message names the row and the column.
Rows are counted from 1 at the first data row below the header ("row 1 (file
line 2)"). Nothing is unpickled or evaluated: CSV is parsed as text and Excel
through openpyxl's data-only reader.
"""

from __future__ import annotations

import csv
import io as _io
import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Hashable, Iterable, Sequence

import numpy as np
import pandas as pd

from .audit import Audit
from .confusion import CELLS, ConfusionMatrix
from .ensemble import make_design
from .stability import RowData

#: Most rows accepted from a row-level predictions file.
MAX_ROWS = 5_000_000
#: Most groups (rows of a CM table, or distinct group combinations).
MAX_GROUPS = 500
#: The largest count per cell: sums of four stay exact in float64 (< 2^53) and in int64.
MAX_COUNT = 10**15
#: Separator between the parts of an intersectional group name.
INTERSECTION_SEP = " & "

_ALIASES: dict[str, tuple[str, ...]] = {
    "TP": ("tp", "truepositive", "truepositives", "truepos", "hits"),
    "FN": ("fn", "falsenegative", "falsenegatives", "falseneg", "misses"),
    "FP": ("fp", "falsepositive", "falsepositives", "falsepos", "falsealarms"),
    "TN": ("tn", "truenegative", "truenegatives", "trueneg", "correctrejections"),
}


@dataclass(frozen=True)
class Problem:
    """One validation problem: where (1-based data row, column) and what."""

    message: str
    row: int | None = None
    column: str | None = None

    def __str__(self) -> str:
        where = []
        if self.row is not None:
            where.append(f"row {self.row} (file line {self.row + 1})")
        if self.column is not None:
            where.append(f"column {self.column!r}")
        return (", ".join(where) + ": " if where else "") + self.message


class DataValidationError(ValueError):
    """Bad input. ``problems`` lists each one with its row and column."""

    def __init__(self, problems: Sequence[Problem] | Problem | str):
        if isinstance(problems, (Problem, str)):
            problems = [problems if isinstance(problems, Problem) else Problem(problems)]
        self.problems: list[Problem] = list(problems)
        shown = "; ".join(str(p) for p in self.problems[:5])
        more = f" (and {len(self.problems) - 5} more)" if len(self.problems) > 5 else ""
        super().__init__(shown + more)


def _normalize_header(name: Hashable) -> str:
    return re.sub(r"[\s_\-./()]+", "", str(name)).lower()


# --- reading files ------------------------------------------------------------------------

def read_table(data: bytes, filename: str, max_rows: int = MAX_ROWS) -> pd.DataFrame:
    """Parse an uploaded CSV/TSV/TXT or XLSX file into a DataFrame.

    The delimiter (comma, semicolon, tab) is sniffed from the header line;
    text is UTF-8 (with or without BOM), else Latin-1.

    Raises
    ------
    DataValidationError
        If the file is empty, unreadable, of an unsupported type, or has more
        than ``max_rows`` data rows.
    """
    suffix = PurePath(filename).suffix.lower()
    if not data:
        raise DataValidationError(f"{filename} is empty")
    if suffix in (".xlsx", ".xlsm"):
        try:
            df = pd.read_excel(_io.BytesIO(data), engine="openpyxl")
        except Exception as exc:  # openpyxl raises many types for corrupt files
            raise DataValidationError(f"could not read {filename} as an Excel workbook: {exc}") from None
    elif suffix == ".xls":
        raise DataValidationError(f"{filename}: old .xls workbooks are not supported; save it as .xlsx or CSV")
    elif suffix in (".csv", ".tsv", ".txt", ""):
        df = _read_delimited(data, filename)
    else:
        raise DataValidationError(f"{filename}: unsupported file type {suffix!r}; use CSV, TSV or XLSX")
    if df.shape[1] == 0 or df.shape[0] == 0:
        raise DataValidationError(f"{filename} has no data rows below its header")
    if len(df) > max_rows:
        raise DataValidationError(f"{filename} has {len(df):,} data rows; the limit is {max_rows:,}")
    df.columns = [str(c).strip() for c in df.columns]
    dup = pd.Index(df.columns)[pd.Index(df.columns).duplicated()].unique().tolist()
    if dup:
        raise DataValidationError([Problem("this column name appears more than once", column=c) for c in dup])
    return df


def _read_delimited(data: bytes, filename: str) -> pd.DataFrame:
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # UTF-16 with a byte-order mark (Excel's "Unicode text")
        try:
            data = data.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError:
            raise DataValidationError(f"{filename} starts like UTF-16 text but does not decode as UTF-16") from None
    if b"\x00" in data[:4096]:
        raise DataValidationError(f"{filename} looks binary, not like a text table")
    for encoding in ("utf-8-sig", "latin-1"):
        try:
            head = data[:65536].decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    first = head.splitlines()[0] if head.splitlines() else ""
    sep = max((",", ";", "\t", "|"), key=first.count)
    if first.count(sep) == 0:
        sep = ","
    try:
        return pd.read_csv(_io.BytesIO(data), sep=sep, encoding=encoding, engine="pyarrow")
    except Exception:
        pass  # pyarrow is strict about ragged rows; the C parser names the line
    try:
        return pd.read_csv(_io.BytesIO(data), sep=sep, encoding=encoding, engine="c", low_memory=False)
    except pd.errors.ParserError as exc:
        raise DataValidationError(f"could not parse {filename}: {exc}") from None
    except (UnicodeDecodeError, pd.errors.EmptyDataError, ValueError) as exc:
        raise DataValidationError(f"could not read {filename} as a table: {exc}") from None


# --- group confusion-matrix tables ---------------------------------------------------------

def find_count_columns(columns: Iterable[Hashable]) -> dict[str, str]:
    """Map "TP", "FN", "FP", "TN" to the matching headers (case-insensitive, common spellings)."""
    found: dict[str, str] = {}
    for col in columns:
        key = _normalize_header(col)
        for cell, aliases in _ALIASES.items():
            if key in aliases:
                if cell in found:
                    raise DataValidationError(Problem(
                        f"both {found[cell]!r} and {col!r} look like the {cell} column", column=str(col)))
                found[cell] = str(col)
    return found


def cms_from_table(df: pd.DataFrame, group_columns: Sequence[str] | None = None,
                   source: str = "uploaded confusion matrices") -> Audit:
    """Build an Audit from a table with a group column (or two) plus TP, FN, FP, TN.

    With two group columns the groups are their intersections ("A & B").
    Every other column is an error unless ``group_columns`` names the group
    columns explicitly, in which case extra columns are ignored.
    """
    df = df.reset_index(drop=True)
    counts = find_count_columns(df.columns)
    missing = [c for c in CELLS if c not in counts]
    if missing:
        raise DataValidationError(Problem(
            f"missing column(s) {', '.join(missing)}; found {', '.join(map(repr, df.columns))}. "
            "Expected a group column plus TP, FN, FP, TN (any case; 'true positives' etc. also work)"))
    rest = [c for c in df.columns if c not in counts.values()]
    if group_columns is None:
        group_columns = rest
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
        values = pd.to_numeric(df[col], errors="coerce")
        for r in np.flatnonzero(df[col].isna().to_numpy()):
            problems.append(Problem("missing count", int(r) + 1, col))
        for r in np.flatnonzero((values.isna() & df[col].notna()).to_numpy()):
            problems.append(Problem(f"{df[col].iloc[r]!r} is not a number", int(r) + 1, col))
        v = values.to_numpy(dtype=float)
        for r in np.flatnonzero(np.isinf(v)):
            problems.append(Problem(f"{df[col].iloc[r]!r} is not a finite count", int(r) + 1, col))
        ok = np.isfinite(v)
        frac = np.where(ok, np.mod(np.where(ok, v, 0.0), 1.0), 0.0)
        for r in np.flatnonzero(ok & (v < 0)):
            problems.append(Problem(f"negative count {v[r]:g}", int(r) + 1, col))
        for r in np.flatnonzero(ok & (v >= 0) & (frac != 0)):
            problems.append(Problem(f"fractional count {v[r]:g}; counts must be whole numbers", int(r) + 1, col))
        for r in np.flatnonzero(ok & (v > MAX_COUNT)):
            problems.append(Problem(f"count {v[r]:.3g} is too large; the limit is {MAX_COUNT:.0e} per cell",
                                    int(r) + 1, col))
        good = ok & (v >= 0) & (frac == 0) & (v <= MAX_COUNT)
        cells[:, k] = np.where(good, v, 0).astype(np.int64)

    names = _group_names(df, list(group_columns), problems)
    for r in np.flatnonzero(cells.sum(axis=1) == 0):
        if not any(p.row == r + 1 for p in problems):
            problems.append(Problem(f"group {names[r]!r} is empty (all four counts are 0)", int(r) + 1))
    _check_duplicates(names, problems, list(group_columns))
    if problems:
        raise DataValidationError(sorted(problems, key=lambda p: (p.row or 0, p.column or "")))
    cms = {name: ConfusionMatrix(*row) for name, row in zip(names, cells.tolist())}
    try:
        return Audit(cms, source=source, group_columns=tuple(group_columns))
    except ValueError as exc:  # belt and braces: the checks above should have caught it
        raise DataValidationError(str(exc)) from None


def _group_names(df: pd.DataFrame, group_columns: list[str], problems: list[Problem]) -> list[str]:
    parts = []
    for col in group_columns:
        s = df[col]
        text = s.astype(str).str.strip()
        blank = s.isna().to_numpy() | (text == "").to_numpy()
        for r in np.flatnonzero(blank):
            problems.append(Problem("missing group name", int(r) + 1, col))
        parts.append(text.where(~blank, "").tolist())
    return [INTERSECTION_SEP.join(p) for p in zip(*parts)]


def _check_duplicates(names: list[str], problems: list[Problem], group_columns: list[str]) -> None:
    seen: dict[str, int] = {}
    for r, name in enumerate(names, start=1):
        if not name.strip(INTERSECTION_SEP + " "):
            continue
        if name in seen:
            problems.append(Problem(f"group {name!r} already appears in row {seen[name]}", r,
                                    ", ".join(group_columns)))
        else:
            seen[name] = r


def cms_to_table(audit: Audit) -> pd.DataFrame:
    """The audit as an editable table: group, TP, FN, FP, TN."""
    df = audit.cells().drop(columns="n").reset_index()
    return df


# --- row-level predictions -----------------------------------------------------------------

def distinct_values(series: pd.Series, limit: int = 20) -> list[Any]:
    """Up to ``limit`` distinct non-missing values of a column, sorted where possible."""
    values = pd.unique(series.dropna())[: limit + 1]
    try:
        return sorted(values.tolist())
    except TypeError:
        return values.tolist()


def _binary(df: pd.DataFrame, col: str, positive: Any, what: str, threshold: float | None) -> np.ndarray:
    s = df[col]
    missing = s.isna().to_numpy()
    if missing.any():
        rows = np.flatnonzero(missing)
        raise DataValidationError(Problem(
            f"missing {what} in {rows.size:,} row(s)" + (f" (also rows {', '.join(str(r + 1) for r in rows[1:4])})"
                                                         if rows.size > 1 else ""),
            int(rows[0]) + 1, col))
    if threshold is not None:
        values = pd.to_numeric(s, errors="coerce")
        bad = values.isna().to_numpy()
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise DataValidationError(Problem(f"{s.iloc[r]!r} is not a number, so it cannot be thresholded",
                                              r + 1, col))
        return (values.to_numpy() >= threshold)
    codes, uniques = pd.factorize(s, sort=False)
    if len(uniques) > 2:
        r = int(np.flatnonzero(codes == 2)[0])
        raise DataValidationError(Problem(
            f"{s.iloc[r]!r} is a third distinct value (after {uniques[0]!r} and {uniques[1]!r}); "
            f"the {what} must be binary" + (" — or give a threshold for a score" if what == "prediction" else ""),
            r + 1, col))
    matches = [k for k, u in enumerate(uniques) if _same(u, positive)]
    if not matches and len(uniques) == 1:
        return np.zeros(len(s), dtype=bool)  # every row is the negative value
    if not matches:
        raise DataValidationError(Problem(
            f"the chosen positive value {positive!r} does not occur; values are "
            f"{', '.join(map(repr, uniques.tolist()))}", column=col))
    return codes == matches[0]


def _same(a: Any, b: Any) -> bool:
    if a == b:
        return True
    return str(a).strip() == str(b).strip()


def cms_from_predictions(df: pd.DataFrame, label_column: str, prediction_column: str,
                         group_columns: Sequence[str], positive_label: Any, positive_prediction: Any = None,
                         *, flip: bool = False, threshold: float | None = None,
                         source: str = "uploaded predictions", positive_outcome: str | None = None,
                         probability_columns: Sequence[str] = (), features: pd.DataFrame | None = None) -> Audit:
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
    flip : bool
        Set when the positive value is *harmful* (COMPAS's "will reoffend"):
        label and prediction are both negated so positive = beneficial.
    probability_columns : sequence of str
        Optional: an ensemble's probabilities of the positive value, one column per model
        (at least two), for Virny's stability metrics. Each value must lie in [0, 1]; with
        ``flip`` they become 1 − p, the probability of the beneficial outcome.
    features : DataFrame, optional
        Feature columns to keep with the rows, from which an ensemble can be trained.

    The returned audit carries the rows (:class:`~fairness_core.stability.RowData`).
    """
    for col in [label_column, prediction_column, *group_columns]:
        if col not in df.columns:
            raise DataValidationError(Problem(f"no such column; columns are {', '.join(map(repr, df.columns))}",
                                              column=col))
    if not group_columns:
        raise DataValidationError("choose at least one group column")
    if len({label_column, prediction_column, *group_columns}) != 2 + len(group_columns):
        raise DataValidationError("the label, prediction and group columns must all be different")
    probability_columns = list(probability_columns)
    for col in probability_columns:
        if col not in df.columns:
            raise DataValidationError(Problem(f"no such column; columns are {', '.join(map(repr, df.columns))}",
                                              column=col))
        if col in (label_column, *group_columns):
            raise DataValidationError(Problem("a probability column cannot also be the label or a group column",
                                              column=col))
    if len(probability_columns) == 1:
        raise DataValidationError("an ensemble needs at least two probability columns (one per model)")
    if features is not None:
        clash = set(map(str, features.columns)) & {str(label_column), str(prediction_column), *map(str, group_columns)}
        if clash:
            raise DataValidationError(f"feature column(s) {', '.join(map(repr, sorted(clash)))} cannot also be the "
                                      "label, prediction or a group column")
        try:
            make_design(features)
        except ValueError as exc:
            raise DataValidationError(str(exc)) from None
    if len(df) > MAX_ROWS:
        raise DataValidationError(f"{len(df):,} rows; the limit is {MAX_ROWS:,}")
    if positive_prediction is None:
        positive_prediction = positive_label
    y = _binary(df, label_column, positive_label, "label", None)
    yhat = _binary(df, prediction_column, positive_prediction, "prediction", threshold)
    if flip:
        y, yhat = ~y, ~yhat

    codes = np.zeros(len(df), dtype=np.int64)
    level_names: list[np.ndarray] = []
    for col in group_columns:
        c, u = pd.factorize(df[col], sort=True)
        if (c < 0).any():
            rows = np.flatnonzero(c < 0)
            raise DataValidationError(Problem(f"missing group value in {rows.size:,} row(s)", int(rows[0]) + 1, col))
        codes = codes * len(u) + c
        level_names.append(np.asarray([str(v).strip() for v in u], dtype=object))
    joint, inverse = np.unique(codes, return_inverse=True)
    if joint.size < 2:
        raise DataValidationError(f"all {len(df):,} rows fall in one group"
                                  + (f" ({', '.join(group_columns)})" if group_columns else "")
                                  + "; an audit compares at least two groups")
    if joint.size > MAX_GROUPS:
        raise DataValidationError(f"{joint.size} groups from {', '.join(group_columns)}; the limit is {MAX_GROUPS}")
    cell = np.where(y, np.where(yhat, 0, 1), np.where(yhat, 2, 3))  # index into CELLS
    counts = np.bincount(inverse.ravel() * 4 + cell, minlength=4 * joint.size).reshape(-1, 4)

    rem = joint.copy()
    parts: list[np.ndarray] = []
    for levels in reversed(level_names):
        parts.append(levels[rem % len(levels)])
        rem //= len(levels)
    parts.reverse()
    names = [INTERSECTION_SEP.join(p) for p in zip(*parts)]
    if len(set(names)) != len(names):
        raise DataValidationError("two group values become the same name after trimming spaces")
    cms = {name: ConfusionMatrix(*row) for name, row in zip(names, counts.tolist())}
    probs = _probabilities(df, probability_columns) if probability_columns else None
    if probs is not None and flip:
        probs = 1.0 - probs
    rows = RowData(y, yhat, np.asarray(names, dtype=object)[inverse.ravel()], probs,
                   tuple(map(str, probability_columns)),
                   None if features is None else features.reset_index(drop=True))
    notes = []
    if flip:
        notes.append(f"{label_column} = {positive_label!r} is harmful, so labels and predictions were flipped: "
                     "positive here means its opposite, the beneficial outcome.")
    if threshold is not None:
        notes.append(f"Prediction = {prediction_column} >= {threshold:g}.")
    return Audit(cms, source=source, notes=tuple(notes), group_columns=tuple(group_columns),
                 positive_outcome=positive_outcome or (f"not {positive_label}" if flip else str(positive_label)),
                 rows=rows)


def _probabilities(df: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """The probability columns as an (n, m) float array; every problem named by row and column."""
    problems: list[Problem] = []
    out = np.empty((len(df), len(columns)))
    for k, col in enumerate(columns):
        values = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float)
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


# --- safe CSV export -----------------------------------------------------------------------

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def neutralize_cell(value: Any) -> Any:
    """Prefix a text cell that a spreadsheet could run as a formula with a quote.

    Cells starting with = + - @ (or tab / carriage return) are neutralized
    unless the whole cell is a plain number such as "-0.25".
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START) and not _PLAIN_NUMBER.match(value):
        return "'" + value
    return value


def to_safe_csv(df: pd.DataFrame, index: bool = True, na_rep: str = "undefined") -> bytes:
    """CSV bytes of ``df`` with formula-like text cells neutralized (also in headers and index).

    NaN is written as ``na_rep`` ("undefined" by default), never as 0.
    """
    out = df.copy()
    out.columns = [neutralize_cell(str(c)) for c in out.columns]
    if index:
        out.index = pd.Index([neutralize_cell(str(v)) for v in out.index], name=out.index.name)
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(neutralize_cell)
    return out.to_csv(index=index, na_rep=na_rep, quoting=csv.QUOTE_MINIMAL).encode("utf-8")
