"""Files of forecasts to audit by group (issue 55), for the Forecasting page and scripts alike: a long table (one row
per forecast: its time, its group, the observation, and one column per quantile level) read from a CSV/TSV/XLSX/
Parquet upload (every cell as text, :func:`~.io.read_table`), checked cell by cell with every problem named by the
file's row and column, and audited by :func:`fairness_core.forecasts.audit`; and the synthetic demo.

**Which columns are quantiles.** A column is read as a quantile level when its header is a level: a decimal number,
optionally after ``q``, ``p``, ``tau``, ``quantile`` or ``level`` (and a space, ``_`` or ``-``), optionally with
``%`` — "0.1", "q0.1", "quantile_0.25", "10%" — or a whole number after ``q``, ``p`` or ``quantile``, read as a
percentage: "q10", "p90". A bare whole number ("10") is no level. A header read as a level outside (0, 1) ("1.2",
"q150") is refused, naming the column, as are two columns read as one level.

>>> [level_of(h) for h in ("q0.1", "0.25", "Q_0.9", "p10", "quantile-50", "95%", "q1.2", "10", "date")]
[0.1, 0.25, 0.9, 0.1, 0.5, 0.95, 1.2, None, None]
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .. import forecasts
from ..common.numbers import as_numbers
from ..common.validation import MAX_GROUPS, DataValidationError, Problem, clean_name, lines_for
from ..statistics import forecast_scores as fs
from .io import read_table

#: The synthetic demo (scripts/make_forecast_demo.py; assets/PROVENANCE.md).
DEMO_FILE = Path(__file__).resolve().parents[2] / "assets" / "demo_forecasts_districts_synthetic.csv"
#: Most problems listed per column before the rest are counted.
MAX_LISTED = 5

_LEVEL = re.compile(r"^(?:(?P<prefix>q|p|tau|quantile|level)[\s_-]?)?(?P<number>\d+(?:\.\d*)?|\.\d+)"
                    r"\s*(?P<percent>%)?$", re.IGNORECASE)
_WHOLE_AS_PERCENT = ("q", "p", "quantile")


def level_of(header: Any) -> float | None:
    """The quantile level a column's header names, or None (module docstring). The level is returned as read, even
    outside (0, 1): :func:`level_columns` refuses it by name."""
    m = _LEVEL.match(str(header).strip())
    if m is None:
        return None
    number, prefix = m.group("number"), (m.group("prefix") or "").lower()
    value = float(number)
    if m.group("percent"):
        return round(value / 100, 12)
    if "." in number:
        return value
    return round(value / 100, 12) if prefix in _WHOLE_AS_PERCENT else None


def level_columns(columns: Sequence[str], skip: Sequence[str] = ()) -> dict[str, float]:
    """Each column read as a quantile level (not those in ``skip``), sorted by level; DataValidationError naming
    the column for a level outside (0, 1) or a level two columns share."""
    found = {str(c): level_of(c) for c in columns if str(c) not in set(map(str, skip))}
    found = {c: v for c, v in found.items() if v is not None}
    problems = [Problem(f"the header reads as quantile level {v:g}, which is not strictly between 0 and 1; name a "
                        "quantile column by its level, e.g. q0.1 or 0.9", column=c)
                for c, v in found.items() if not 0 < v < 1]
    seen: dict[float, str] = {}
    for c, v in found.items():
        if v in seen:
            problems.append(Problem(f"the header reads as quantile level {v:g}, as column {seen[v]!r} does; each "
                                    "level needs one column", column=c))
        seen.setdefault(v, c)
    if problems:
        raise DataValidationError(problems)
    return dict(sorted(found.items(), key=lambda kv: kv[1]))


_GUESSES = {
    "time": ("date", "time", "datetime", "timestamp", "day", "period", "valid_time", "issue_time", "target_date"),
    "group": ("group", "site", "district", "region", "location", "station", "area", "zone", "county", "unit"),
    "observation": ("observation", "observed", "obs", "actual", "y", "truth", "target", "value", "outcome"),
}


def guess_columns(columns: Sequence[str]) -> dict[str, str]:
    """A first guess of the time, group and observation columns among the columns that are no quantile levels: a
    column named as each role, else the first, second and third such column in order."""
    rest = [str(c) for c in columns if level_of(c) is None]
    out: dict[str, str] = {}
    for role, names in _GUESSES.items():
        hit = next((c for c in rest if c.strip().casefold() in names and c not in out.values()), None)
        if hit is not None:
            out[role] = hit
    free = [c for c in rest if c not in out.values()]
    for role in _GUESSES:
        if role not in out and free:
            out[role] = free.pop(0)
    return out


@dataclass(frozen=True)
class ForecastTable:
    """A checked long table of forecasts: ``y`` (n,), ``quantiles`` (n, K) sorted along the levels, ``levels`` (K,),
    ``groups`` (n,) names, ``time`` (n,) numbers or datetime64 (None: row order), the columns read (``time_column``,
    ``group_column``, ``observation``, ``level_columns``: column → level), the file's name and ``notes`` (what was
    changed: crossing quantiles sorted)."""

    y: np.ndarray
    quantiles: np.ndarray
    levels: np.ndarray
    groups: np.ndarray
    time: np.ndarray | None
    time_column: str | None
    group_column: str
    observation: str
    level_columns: dict[str, float]
    source: str = ""
    notes: tuple[str, ...] = field(default=())

    def __len__(self) -> int:
        return int(self.y.size)

    def series(self, group: str) -> pd.DataFrame:
        """One group's forecasts in time order: ``time``, ``observation`` and one column per level (the fan chart)."""
        rows = np.flatnonzero(self.groups == group)
        t = self.time[rows] if self.time is not None else rows
        out = pd.DataFrame(self.quantiles[rows], columns=[f"{v:g}" for v in self.levels])
        out.insert(0, "observation", self.y[rows])
        out.insert(0, "time", t)
        return out.sort_values("time", kind="stable").reset_index(drop=True)


def _listed(bad: np.ndarray, column: str, what: Any, offset: int = 1) -> list[Problem]:
    """Problems for the first :data:`MAX_LISTED` bad rows of ``column`` (``what(k)``: the sentence for row k), and
    one more counting the rest."""
    rows = np.flatnonzero(bad)
    out = [Problem(what(int(k)), row=int(k) + offset, column=column) for k in rows[:MAX_LISTED]]
    if rows.size > MAX_LISTED:
        out.append(Problem(f"… and {rows.size - MAX_LISTED:,} more rows like these ({rows.size:,} in all)",
                           column=column))
    return out


def _numbers(raw: pd.Series, column: str, role: str, delimiter: str) -> tuple[np.ndarray, list[Problem]]:
    x = as_numbers(raw.reset_index(drop=True), delimiter).to_numpy(dtype=float)
    missing = raw.isna().to_numpy() | (raw.astype(str).str.strip() == "").to_numpy()
    values = raw.to_numpy(dtype=object)
    problems = _listed(missing, column, lambda k: f"the {role} is missing; every forecast needs it")
    problems += _listed(~missing & np.isnan(x), column, lambda k: f"{values[k]!r} is not a number ({role})")
    problems += _listed(~missing & np.isinf(x), column, lambda k: f"{values[k]!r} is infinite ({role})")
    return x, problems


def _times(raw: pd.Series, column: str, delimiter: str) -> tuple[np.ndarray, list[Problem]]:
    """Times as numbers (when every value is one) or datetimes; each missing or unreadable one named."""
    raw = raw.reset_index(drop=True)
    missing = raw.isna().to_numpy() | (raw.astype(str).str.strip() == "").to_numpy()
    numbers = as_numbers(raw, delimiter).to_numpy(dtype=float)
    if np.isfinite(numbers[~missing]).all():
        bad, out = np.zeros_like(missing), numbers
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            parsed = pd.to_datetime(raw.astype(object).where(~missing, None), errors="coerce", format="mixed")
        out = parsed.to_numpy(dtype="datetime64[ns]")
        bad = ~missing & np.isnat(out)
    values = raw.to_numpy(dtype=object)
    problems = _listed(missing, column, lambda k: "the time is missing; every forecast needs its time")
    problems += _listed(bad, column, lambda k: f"{values[k]!r} is neither a date, a time nor a number")
    return out, problems


def read(data: bytes, name: str) -> pd.DataFrame:
    """A CSV/TSV/XLSX/Parquet upload as a table of text (:func:`~.io.read_table`; its refusals as it gives them)."""
    return read_table(data, name)


def forecast_table(table: pd.DataFrame, group: str, observation: str, time: str | None = None,
                   source: str = "") -> ForecastTable:
    """The long table checked and read (module docstring): the quantile columns recognized from their headers;
    every missing or unreadable observation, quantile, group or time named by the file's row (1 = the first row
    under the header) and column, in one :class:`~fairness_core.io.DataValidationError`; rows whose quantiles cross
    sorted, with a note saying how many."""
    columns = [str(c) for c in table.columns]
    chosen = [c for c in (time, group, observation) if c is not None]
    for c in chosen:
        if c not in columns:
            raise DataValidationError(Problem(f"no column named {c!r}; the file's columns are "
                                              f"{', '.join(map(repr, columns))}", column=c))
    if len(set(chosen)) < len(chosen):
        raise DataValidationError("the time, group and observation must be three different columns")
    levels_of = level_columns(columns, skip=chosen)
    if not levels_of:
        raise DataValidationError("no column is named as a quantile level: name each quantile column by its level, "
                                  "e.g. q0.1, q0.5, q0.9 (or 0.1 …, 10%, p10)")
    tau = np.array(list(levels_of.values()))
    try:
        fs.median_weights(tau)
    except ValueError as e:
        raise DataValidationError(f"the quantile columns ({', '.join(levels_of)}): {e}") from None
    delimiter = table.attrs.get("delimiter", ",")
    problems: list[Problem] = []
    y, found = _numbers(table[observation], observation, "observation", delimiter)
    problems += found
    q = np.empty((len(table), tau.size))
    for k, c in enumerate(levels_of):
        q[:, k], found = _numbers(table[c], c, f"quantile at level {levels_of[c]:g}", delimiter)
        problems += found
    raw_groups = table[group].reset_index(drop=True)
    no_group = raw_groups.isna().to_numpy() | (raw_groups.astype(str).str.strip() == "").to_numpy()
    problems += _listed(no_group, group, lambda k: "the group is missing; every forecast needs its group")
    t = None
    if time is not None:
        t, found = _times(table[time], time, delimiter)
        problems += found
    if problems:
        raise DataValidationError(lines_for(problems, table))
    codes, uniques = pd.factorize(raw_groups.astype(str), sort=True)
    names = np.array([clean_name(u) for u in uniques], dtype=object)
    groups = names[codes]
    if len(set(names)) > MAX_GROUPS:
        raise DataValidationError(Problem(f"{len(set(names)):,} groups; at most {MAX_GROUPS:,} can be compared",
                                          column=group))
    notes = []
    crossing = fs.crossing_rows(q)
    if crossing.size:
        q[crossing] = np.sort(q[crossing], axis=1)
        first = int(crossing[0]) + 1
        notes.append(f"The quantiles cross (decrease along the levels) in {crossing.size:,} row"
                     f"{'s' if crossing.size > 1 else ''} (first: row {first}, file line {first + 1}); "
                     "each such row's quantiles were sorted.")
    if t is not None:
        key = pd.DataFrame({"g": codes, "t": t})
        repeated = int(key.duplicated().sum())
        if repeated:
            notes.append(f"{repeated:,} rows share a group and a time with an earlier row: each time point of a "
                         "group enters as the sum of its rows.")
    return ForecastTable(y, q, tau, groups, t, time, group, observation, levels_of, source, tuple(notes))


def audit(table: ForecastTable, positive_is: str, **arguments: Any) -> forecasts.ForecastAudit:
    """:func:`fairness_core.forecasts.audit` of a checked table (``arguments``: ``method``, ``min_time_points``).
    Say the table's ``notes`` beside the audit's: its quantiles are sorted already, so the audit has none of
    its own about them."""
    return forecasts.audit(table.y, table.quantiles, table.levels, table.groups, time=table.time,
                           positive_is=positive_is, **arguments)


@dataclass(frozen=True)
class DemoSettings:
    """How the demo's file is read and judged: its columns, the direction, the tolerance and its unit."""

    time: str = "date"
    group: str = "district"
    observation: str = "peak_mw"
    positive_is: str = "benefit"
    tolerance: float = 3.0
    unit: str = "MW"
    source: str = ("synthetic demo: daily peak demand of 4 districts, 730 days, 7 quantiles "
                   "(assets/demo_forecasts_districts_synthetic.csv)")


DEMO = DemoSettings()


def demo_table() -> ForecastTable:
    """The synthetic demo, read as an upload is."""
    d = DEMO
    return forecast_table(read(DEMO_FILE.read_bytes(), DEMO_FILE.name), d.group, d.observation, d.time, d.source)
