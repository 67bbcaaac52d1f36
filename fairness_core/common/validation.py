"""What every input must satisfy, in words a reader can act on: :class:`Problem` and
:class:`DataValidationError` (row and column of each problem), the limits on rows, groups, counts
and names, and how group names are cleaned, checked and joined for intersections.

The checks of an upload, a notebook's arrays and a warehouse table share these, so the same bad
value gets the same message everywhere. This module builds no :class:`~fairness_core.audit.Audit`
and imports no other module of the library but :mod:`fairness_core.common.text`: the audit module and
:mod:`fairness_core.io` both build on it. Its public names are re-exported by :mod:`fairness_core.io`,
where they have always been documented (``fairness_core.io.DataValidationError``).
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from . import text as text_module


def operator_limit(variable: str, default: int, scale: int = 1) -> int:
    """An upload limit the server's operator may set in the environment (docs/server.md), read at import;
    a value that is not a positive whole number stops the server with a message naming the variable."""
    raw = os.environ.get(variable, "").strip().replace("_", "").replace(",", "")
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{variable}={os.environ[variable]!r} is not a whole number >= 1 (the default is "
                         f"{default // scale:,})")
    return int(raw) * scale


#: Most rows accepted from a row-level predictions file (FAIRNESS_MAX_UPLOAD_ROWS).
MAX_ROWS = operator_limit("FAIRNESS_MAX_UPLOAD_ROWS", 5_000_000)
#: Most groups (rows of a CM table, or distinct group combinations).
MAX_GROUPS = 500
#: The largest count per cell: sums of four stay exact in float64 (< 2^53) and in int64.
MAX_COUNT = 10**15
#: Separator between the parts of an intersectional group name.
INTERSECTION_SEP = " & "
#: Longest column or group name, in characters.
MAX_NAME_LENGTH = 200
#: Characters that render as nothing; stripped from group names (with NFC normalization).
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)


@dataclass(frozen=True)
class Problem:
    """One validation problem: where (1-based data row, column) and what."""

    message: str
    row: int | None = None
    column: str | None = None
    line: int | None = None  # the file line, when it is not row + 1 (quoted line breaks)

    def __str__(self) -> str:
        where = []
        if self.row is not None:
            where.append(f"row {self.row} (file line {self.line if self.line is not None else self.row + 1})")
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


def lines_for(problems: list[Problem], df: pd.DataFrame) -> list[Problem]:
    """Attach file lines to row problems when quoted line breaks make them differ from row + 1."""
    lines = df.attrs.get("file_lines")
    if lines is None:
        return problems
    return [Problem(p.message, p.row, p.column, int(lines[p.row - 1]))
            if p.row is not None and p.line is None and 0 < p.row <= len(lines) else p for p in problems]



def show_value(value: Any) -> str:
    """A value for a message: plain Python, never a NumPy repr such as np.int64(3)."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)


def clean_name(value: Any) -> str:
    """A group name as shown and compared: text, NFC-normalized, zero-width characters removed, every kind of
    space a plain one and runs of spaces one (:func:`~fairness_core.common.text.fold_spaces`), trimmed. Other hidden
    characters (direction marks, controls, fillers, the Braille blank) stay, for :func:`hidden_name_problem`.

    >>> clean_name(" Black\u00a0 Male\u200b "), clean_name("Jose\u0301")
    ('Black Male', 'José')
    """
    return text_module.fold_spaces(unicodedata.normalize("NFC", str(value)).translate(_INVISIBLE)).strip()


def cleaning_notice(what: str, raws: Sequence[Any], where: Callable[[int], int | str] | None = None) -> str | None:
    """What :func:`clean_name` changed in ``raws`` (beyond trimming), as a note for the audit, or None: which
    kinds of change (Unicode NFC, invisible characters removed, spaces folded), each with its first example,
    the folded spaces shown as ``⟨U+00A0⟩``. ``where(k)`` is raw ``k``'s 1-based row or a place such as
    ``race[3]`` (asked only of the examples shown; none where rows are unknown). ``what`` begins the note.

    >>> print(cleaning_notice("Group names in 'g'", ["A", "Black\u00a0Male"], lambda k: k + 1))
    ... # doctest: +NORMALIZE_WHITESPACE
    Group names in 'g' were normalized: spaces made plain, runs of spaces one
    (row 2: 'Black⟨U+00A0⟩Male' reads as 'Black Male').
    """
    found: dict[str, str] = {}

    def at(k: int) -> str:
        place = where(k) if where is not None else None
        return f"row {place}: " if isinstance(place, int) else f"{place}: " if place else ""

    for k, raw in enumerate(raws):
        typed = str(raw)
        visible = typed.translate(_INVISIBLE)
        if "nfc" not in found and unicodedata.normalize("NFC", spaced := text_module.fold_spaces(typed)) != spaced:
            found["nfc"] = f"Unicode NFC ({at(k)}{clean_name(typed)!r})"       # beyond a space's own NFC form
        if "invisible" not in found and visible != typed:
            found["invisible"] = f"invisible characters removed ({at(k)}{clean_name(typed)!r})"
        if "spaces" not in found and (shown := text_module.folded_spaces(visible.strip())) is not None:
            found["spaces"] = f"spaces made plain, runs of spaces one ({at(k)}{shown!r} reads as {clean_name(typed)!r})"
        if len(found) == 3:
            break
    if not found:
        return None
    return f"{what} were normalized: {'; '.join(found.values())}."


def hidden_name_problem(name: str, what: str = "group name") -> str | None:
    """Why a cleaned name is refused, or None: a hidden character (a direction mark, an override, a control,
    a filler) makes two different names print alike or reverses the text around it. The message shows it."""
    shown = text_module.hidden_characters(name)
    if shown is None:
        return None
    return (f"{what} {shown!r} holds a hidden character (shown as ⟨U+…⟩): it would print like another name or "
            "reorder the text around it; remove it")


def intersection_names(parts: Sequence[Sequence[str]]) -> list[str]:
    """Group names from cleaned values, one sequence per group column ("A & B" for intersections);
    two different raw values that clean to the same name are refused, naming it."""
    names = [INTERSECTION_SEP.join(p) for p in zip(*parts)]
    if len(set(names)) != len(names):
        same = pd.Series(names)[pd.Series(names).duplicated()].iloc[0]
        raise DataValidationError(f"two different group values both read as {same!r} once invisible characters "
                                  "are removed, spaces folded (every kind of space plain, runs of spaces one) and "
                                  "Unicode normalized: they would print alike; make them distinct")
    return names


def direction(positive_is: str | None) -> tuple[str | None, bool]:
    """(positive_is, whether the classes swap): "harm" swaps them so that positive means the benefit; "benefit"
    does not; None leaves the direction undeclared (no swap)."""
    if positive_is is not None and positive_is not in ("benefit", "harm"):
        raise DataValidationError(f"positive_is must be 'benefit' or 'harm', got {positive_is!r}")
    return positive_is, positive_is == "harm"


def group_values(names: Sequence[str], parts: Sequence[Sequence[Any]]) -> dict[str, tuple[str, ...]] | None:
    """Each group's value in every group column, for intersections (None for a single column)."""
    if len(parts) < 2:
        return None
    return {name: tuple(str(p[k]) for p in parts) for k, name in enumerate(names)}


def row_notes(label: str, positive: Any, prediction: str, flip: bool, threshold: float | None) -> list[str]:
    """What an audit of row-level data says about how its rows were read (flip, threshold)."""
    notes = []
    if flip:
        notes.append(f"{label} = {positive!r} is harmful, so labels and predictions were flipped: positive here "
                     "means its opposite, the beneficial outcome.")
    if threshold is not None:
        notes.append(f"Prediction = {prediction} >= {threshold:g}.")
    return notes


#: Group values read as an attribute's *unknown* category in a decisions-only audit (and wherever the user asks):
#: compared by :func:`unknown_key`, so case, spaces, hyphens and trailing punctuation do not matter. Local Law 144
#: counts these individuals and reports them in their own row, never in the impact ratios.
UNKNOWN_VALUES: tuple[str, ...] = (
    "unknown", "not known", "not reported", "unreported", "not disclosed", "undisclosed", "did not disclose",
    "not declared", "undeclared", "prefer not to say", "prefer not to answer", "prefer not to disclose",
    "preferred not to say", "preferred not to answer", "rather not say", "decline to state", "declined to state",
    "decline to answer", "declined to answer", "declined", "decline", "refused", "refused to answer",
    "not specified", "unspecified", "not stated", "not provided", "not given", "no answer", "no response",
    "not answered", "missing", "n/a", "na", "none given", "?")

#: The name an attribute's unknown category takes in an audit (blank values and :data:`UNKNOWN_VALUES` pooled).
UNKNOWN_CATEGORY = "unknown"

#: Local Law 144's threshold (6 RCNY § 5-301): a category under this share of all individuals (unknown categories
#: included) is left out of the impact ratios, listed with its count (:func:`under_share`).
EXCLUDE_BELOW = 0.02


def under_share(n: Any, total: float, exclude_below: float = EXCLUDE_BELOW) -> np.ndarray:
    """The one rule of which categories an audit of decisions alone compares: True where a category's ``n`` is
    under ``exclude_below`` of ``total`` (all individuals, unknown categories included). A share of exactly
    ``exclude_below`` is kept (2 of 100 is in), despite the rounding of the product. The Local Law 144 summary, the
    four-fifths verdicts, their headline and the selection-rate figure all leave out the same categories by it
    (``Audit.compared_groups``).

    >>> under_share([1, 2, 97], 100).tolist()
    [True, False, False]
    """
    return np.asarray(n, dtype=float) < exclude_below * total * (1 - 1e-12)


def unknown_key(value: Any) -> str:
    """How a group value is compared with the unknown values: cleaned (:func:`clean_name`), case-folded, hyphens
    and underscores as spaces, trailing dots dropped.

    >>> unknown_key("  Decline-to-State. "), unknown_key("Prefer_not_to_say")
    ('decline to state', 'prefer not to say')
    """
    key = clean_name(value).casefold().replace("-", " ").replace("_", " ").rstrip(".").strip()
    return " ".join(key.split())


def unknown_values_in(df: pd.DataFrame, group_columns: Sequence[str], unknown: Sequence[str] = UNKNOWN_VALUES,
                      blank: bool = True) -> dict[str, list[tuple[str, int]]]:
    """For each group column, the values that would be read as its unknown category, with their row counts
    (``"(blank)"`` for missing or empty values when ``blank``), most frequent first.

    >>> df = pd.DataFrame({"race": ["A", None, "Decline to state", "B", ""], "sex": ["F", "M", "F", "M", "F"]})
    >>> unknown_values_in(df, ["race", "sex"])
    {'race': [('(blank)', 2), ('Decline to state', 1)], 'sex': []}
    """
    keys = {unknown_key(u) for u in unknown}
    out: dict[str, list[tuple[str, int]]] = {}
    for col in group_columns:
        s = df[col]
        counts = s.value_counts(dropna=True)
        found: dict[str, int] = {}
        blanks = int(s.isna().sum())
        for value, count in counts.items():
            key = unknown_key(value)
            if key == "":
                blanks += int(count)
            elif key in keys or key == UNKNOWN_CATEGORY:
                found[str(value)] = int(count)
        listed = ([("(blank)", blanks)] if blank and blanks else []) + sorted(found.items(), key=lambda kv: -kv[1])
        out[str(col)] = listed
    return out


def paired_column(df: pd.DataFrame, group: str, exclude: Sequence[str] = ()) -> str | None:
    """The column that makes ``df``'s rows *paired* across ``group``'s values, or None: a column (not ``group``, not
    in ``exclude``) whose every value occurs at most once per group, on at least two groups, with at least half the
    rows in a case seen under two or more groups — the layout of a counterfactual test, each base case sent once per
    group. Such rows are not independent people, so an audit of them as rows would give wrong intervals (the
    counterfactual test's paired statistics are the right ones). Columns named like a case id are tried first.

    >>> df = pd.DataFrame({"case_id": [1, 1, 2, 2, 3, 3], "group": ["a", "b"] * 3, "decision": [1, 0, 1, 1, 0, 0]})
    >>> paired_column(df, "group"), paired_column(df, "group", exclude=["case_id"])
    ('case_id', None)
    >>> paired_column(pd.DataFrame({"id": range(6), "group": ["a", "b"] * 3}), "group") is None   # one row per id
    True
    """
    if group not in df.columns or len(df) < 4:
        return None
    groups = df[group].astype("string")
    if groups.nunique(dropna=True) < 2:
        return None
    hinted = ("case", "pair", "base", "resume", "résumé", "cv", "id")
    columns = [c for c in df.columns if c != group and c not in exclude]
    columns.sort(key=lambda c: not any(h in str(c).casefold() for h in hinted))
    for col in columns:
        cases = df[col]
        if cases.isna().any() or cases.nunique() > len(df) // 2:
            continue
        if pd.DataFrame({"c": cases, "g": groups}).duplicated().any():
            continue
        spread = groups.groupby(cases.to_numpy(), sort=False).transform("nunique")
        if (spread >= 2).mean() >= 0.5:
            return str(col)
    return None
