"""The Forecasting page's "Audit forecasts" mode (issue 55): load uploaded forecasts (a long table: time, group,
observation, one column per quantile level) or the synthetic demo, declare the direction, and read the audit — the
answer first (which groups the forecaster serves worse, in the five verdict words, with intervals), the tiles, the
figures (each group's benefit, band coverage, PIT histograms, the fan chart of one group), then every table with its
download.

Everything computed is the library's (:mod:`fairness_core.forecasts`, :mod:`fairness_core.services.forecast_files`,
:mod:`fairness_core.presentation.plots.forecasts`); a refused upload is said by row and column and changes nothing
already loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
import numpy as np
import pandas as pd
import streamlit as st

from fairness_core.forecasts import ForecastAudit
from fairness_core.io import DataValidationError
from fairness_core.presentation.plots.forecasts import (forecast_benefits, forecast_coverage, forecast_fan,
                                                        pit_histograms)
from fairness_core.services import forecast_files as files
from fairness_core.services.forecast_files import ForecastTable
from fairness_core.statistics.verdicts import VERDICTS, VerdictSettings
from fairness_core.wording.levels import level_text
from fairness_core.vocabulary import DEFAULT_ALPHA
from fairness_core.wording.forecasts import forecast_direction, tolerance_for_sd
from fairness_core.wording.kinds import amount_range, amount_text
from ui.kind_audit import pairs_in_words
from ui.state import ADJUSTMENTS
from ui.uploads import read_upload, show_problems
from ui.widgets import BuiltIn, chart, csv_download, figure_with_downloads, md_escape, styled

#: Session key of the loaded forecasts and their audit (a :class:`Loaded`).
LOADED_KEY = "fc-loaded"
#: The uploader's key (also its parsed file's, :func:`ui.uploads.read_upload`).
UPLOAD_KEY = "fc-file"
#: The time picker's built-in choice: no time column, row order is time order.
ROW_ORDER = BuiltIn("— none: row order is time order —")
#: The two directions, as the page asks them.
DIRECTIONS = {"benefit": "Yes: a larger forecast serves the group (demand, frost, heat: under-forecasting harms)",
              "harm": "No: a larger forecast harms the group (losses that set a premium: over-forecasting harms)"}
#: Help for the verdict tiles, in the forecasts' words.
HELP = {
    "algorithmic bias": "The forecast OFI's adjusted interval lies beyond ±tolerance: one group's median forecasts "
                        "lean in its favour, relative to the other's, by more than the difference you declared "
                        "material.",
    "materiality unclear": "The forecast OFI's interval excludes 0 but reaches inside ±tolerance: a real lean that "
                           "may be too small to matter.",
    "systemic disparity": "No material lean (the OFI's interval inside ±tolerance), but one group's mean CRPS is "
                          "beyond the band [0.8, 1.25] of the other's: its forecasts are less accurate.",
    "no bias detected": "The OFI's interval inside ±tolerance and the CRPS ratio's inside [0.8, 1.25].",
    "inconclusive": "The intervals are too wide to decide with these many time points (or a group has too few).",
}


@dataclass(frozen=True)
class Loaded:
    """Forecasts loaded and audited: the checked table, its audit and the outcome's unit they came with (the
    demo's, or the one typed)."""

    table: ForecastTable
    audit: ForecastAudit
    unit: str = ""


def loaded() -> Loaded | None:
    value = st.session_state.get(LOADED_KEY)
    return value if isinstance(value, Loaded) else None


#: Session key of the sidebar values that newly loaded forecasts bring (set before the widgets are drawn next run).
PENDING_KEY = "fc-pending"


def _keep(table: ForecastTable, audit: ForecastAudit, unit: str, tolerance: float) -> None:
    """Make these forecasts the loaded ones; the tolerance and unit widgets take their values on the next run."""
    st.session_state[LOADED_KEY] = Loaded(table, audit, unit)
    st.session_state[PENDING_KEY] = {"fc-tol": float(tolerance), "fc-unit": unit}
    st.session_state.pop("fc-fan-group", None)


def load_demo() -> None:
    """The synthetic demo (4 districts' daily peak demand, one under-forecast), at its 3 MW tolerance."""
    d = files.DEMO
    table = files.demo_table()
    _keep(table, files.audit(table, d.positive_is), d.unit, d.tolerance)


def default_tolerance(y: np.ndarray) -> float:
    """A starting tolerance for an upload: a tenth of the observations' standard deviation, to 2 significant
    digits (the page says so; the user sets the one that matters)."""
    return tolerance_for_sd(float(np.std(y)))


def settings(current: Loaded | None) -> VerdictSettings:
    """The sidebar: the tolerance in the outcome's units, the unit, α and the adjustment across pairs."""
    st.session_state.update(st.session_state.pop(PENDING_KEY, {}))
    st.session_state.setdefault("fc-unit", current.unit if current else "")
    unit = st.text_input("The outcome's unit", key="fc-unit", max_chars=40,
                         help="Shown with every amount: MW, °C, cases, $ …")
    st.session_state.setdefault("fc-tol", default_tolerance(current.table.y) if current else 1.0)
    tol = st.number_input(f"Tolerance{f' ({unit.strip()})' if unit.strip() else ''}: the smallest lean that matters",
                          min_value=0.0, step=0.5, key="fc-tol", format="%.4g",
                          help="In the outcome's units: a difference of two groups' mean benefit (the median "
                               "forecast's signed error) at or below this counts as no material lean. An upload "
                               "starts at a tenth of its observations' standard deviation.")
    alpha = st.select_slider("Significance level α", options=[0.01, 0.05, 0.10], value=DEFAULT_ALPHA, key="fc-alpha")
    adjust = st.selectbox("Adjust for many pairs", list(ADJUSTMENTS), format_func=ADJUSTMENTS.get, key="fc-adjust")
    return VerdictSettings(float(tol), float(alpha), str(adjust), amounts=True)


def upload_step() -> None:
    """An upload of forecasts: the columns (guessed, then chosen), the quantile levels read from the headers (said),
    the direction; "Audit these forecasts" loads them, or says every problem by row and column and keeps what was
    loaded."""
    up = st.file_uploader("Forecasts: one row per forecast (CSV, TSV, XLSX or Parquet)",
                          type=["csv", "tsv", "txt", "xlsx", "parquet"], key=UPLOAD_KEY)
    if up is None:
        st.caption("Columns: the forecast's time (a date, a time or a number), its group (site, region, regime), the "
                   "observation, and one column per quantile level named by its level — q0.1, q0.5, q0.9 (or 0.1, "
                   "10%, p10). Rows whose quantiles cross are sorted, with a note.")
        return
    try:
        table, _ = read_upload(up, UPLOAD_KEY)
        columns = [str(c) for c in table.columns]
        levels = files.level_columns(columns)
    except DataValidationError as e:
        show_problems(e)
        return
    guess = files.guess_columns(columns)
    rest = [c for c in columns if c not in levels]
    if len(rest) < 2:
        st.error("**Nothing was loaded**: the file needs a group and an observation column besides the quantile "
                 "columns.", icon=":material/block:")
        return
    c1, c2, c3 = st.columns(3)
    times = [ROW_ORDER, *rest]
    time = c1.selectbox("Time", times, key="fc-col-time", format_func=str,
                        index=times.index(guess["time"]) if guess.get("time") in rest else 0)
    group = c2.selectbox("Group", rest, key="fc-col-group",
                         index=rest.index(guess["group"]) if guess.get("group") in rest else 0)
    observation = c3.selectbox("Observation", rest, key="fc-col-obs",
                               index=rest.index(guess["observation"]) if guess.get("observation") in rest
                               else min(1, len(rest) - 1))
    read_as = ", ".join(f"{md_escape(c)} → {v:g}" for c, v in levels.items() if c not in (time, group, observation))
    st.caption(f"**Read as quantile levels:** {read_as or 'none'}.")
    direction = st.radio("Is under-forecasting a harm to the group?", list(DIRECTIONS), format_func=DIRECTIONS.get,
                         index=None, key="fc-direction")
    if st.button("Audit these forecasts", type="primary", icon=":material/play_arrow:", key="fc-audit",
                 disabled=direction is None, help=None if direction else "Declare the direction first."):
        try:
            checked = files.forecast_table(table, group, observation, None if isinstance(time, BuiltIn) else time,
                                           source=up.name)
            audit = files.audit(checked, str(direction))
        except DataValidationError as e:
            show_problems(e)
        except ValueError as e:
            st.error(f"**Nothing was loaded** — the current data is unchanged. {md_escape(e)}",
                     icon=":material/block:")
        else:
            _keep(checked, audit, str(st.session_state.get("fc-unit", "")).strip(), default_tolerance(checked.y))
            st.rerun()


def _tables(a: ForecastAudit, s: VerdictSettings, unit: str) -> dict[str, pd.DataFrame]:
    """The audit's tables at ``s``, computed once per audit and settings in this session (pages rerun on every
    click)."""
    kept = st.session_state.setdefault("fc-tables", {})
    key = (id(a), s, unit)
    if key not in kept or kept[key][0] is not a:
        kept.clear()
        kept[key] = (a, {"verdicts": a.verdicts(s.tolerance, s.alpha, s.adjust, unit=unit),
                         "groups": a.by_group(s.alpha), "pairs": a.pairs(s.alpha, s.adjust),
                         "coverage": a.coverage(s.alpha), "pit": a.pit()})
    return kept[key][1]


def served_worse(verdicts: pd.DataFrame, kind: str = "group", who: str = "The forecaster") -> str:
    """Which groups the forecaster serves worse, in the verdicts' words: each group on the losing side of an
    "algorithmic bias" pair (its forecasts lean against it), and each less accurate side of a "systemic disparity"
    pair, with in how many of its pairs. ``kind`` is what a group is ("site", "regime"), ``who`` the forecaster. Group
    names as given: escape them for where the text goes.

    >>> v = pd.DataFrame({"group_i": ["b", "c", "c"], "group_j": ["a", "a", "b"], "favours": ["a", "", ""],
    ...                   "verdict": ["algorithmic bias", "systemic disparity", "no bias detected"]})
    >>> for part in served_worse(v).split("; "): print(part)
    The forecaster serves some groups worse: algorithmic bias against b (in 1 of its 2 pairs)
    systemic disparity (less accurate forecasts) at c (in 1 of its 2 pairs).
    >>> served_worse(v.iloc[2:], "site")
    'No site is served materially worse at this tolerance.'
    """
    bias = verdicts[verdicts["verdict"] == "algorithmic bias"]
    against = np.where(bias["favours"] == bias["group_i"], bias["group_j"], bias["group_i"])
    systemic = verdicts[verdicts["verdict"] == "systemic disparity"]["group_i"]
    others = len(set(verdicts["group_i"]) | set(verdicts["group_j"])) - 1
    said = []
    for what, names in (("algorithmic bias against", against), ("systemic disparity (less accurate forecasts) at",
                                                                 systemic.to_numpy())):
        counts = pd.Series(names, dtype=object).value_counts()
        if len(counts):
            said.append(what + " " + ", ".join(f"{g} (in {n} of its {others} pairs)" for g, n in counts.items()))
    if not said:
        return f"No {kind} is served materially worse at this tolerance."
    return f"{who} serves some {kind}s worse: " + "; ".join(said) + "."


def group_table(groups: pd.DataFrame, unit: str = "", kind: str = "group", level: str = "95 %",
                counts: bool = True) -> pd.DataFrame:
    """The per-group table (:meth:`~fairness_core.forecasts.ForecastAudit.by_group`) as people read it, narrow enough
    to be read whole: with ``counts`` the forecasts and time points, then the mean CRPS and the mean benefit (the
    ``unit`` in their headers), each beside its interval at ``level`` in words. The bands' coverage is the coverage
    figure's, the HAC settings the caption's; the download has every column. The index is named ``kind``.

    >>> g = pd.DataFrame({"rows": [10], "time_points": [5], "crps": [1.5], "crps_ci_low": [1.25], "crps_ci_high": [2.0],
    ...                   "benefit": [-0.5], "benefit_ci_low": [-1.0], "benefit_ci_high": [0.25]}, index=["a"])
    >>> t = group_table(g, "MW")
    >>> list(t.columns)
    ['forecasts', 'time points', 'mean CRPS (MW)', "CRPS's 95 % interval", 'mean benefit (MW)', "benefit's 95 % interval"]
    >>> t.iloc[0, 3], t.iloc[0, 5]
    ('1.25 to 2 MW', '−1 to 0.25 MW')
    """
    u = f" ({unit.strip()})" if unit.strip() else ""
    out = pd.DataFrame({"forecasts": groups["rows"], "time points": groups["time_points"]} if counts else {},
                       index=groups.index)
    for measure, name in (("crps", "CRPS"), ("benefit", "benefit")):
        out[f"mean {name}{u}"] = groups[measure]
        out[f"{name}'s {level} interval"] = [amount_range(lo, hi, unit) for lo, hi in
                                             zip(groups[f"{measure}_ci_low"], groups[f"{measure}_ci_high"])]
    out.index.name = kind
    return out


def show_audit(current: Loaded, s: VerdictSettings) -> None:
    """The answer first, the tiles, the figures, then every table with its download."""
    a, t = current.audit, current.table
    unit = st.session_state.get("fc-unit", current.unit) or ""
    tables = _tables(a, s, unit)
    v, groups = tables["verdicts"], tables["groups"]
    when = f"time from {md_escape(t.time_column)}" if t.time_column else "row order as time"
    st.caption(f"**Data:** {md_escape(t.source)} · {len(a.groups)} groups · {len(t):,} forecasts · "
               f"{t.levels.size} quantile levels ({', '.join(f'{x:g}' for x in t.levels)}) · {when} · "
               f"{md_escape(forecast_direction(a.positive_is))}")
    for note in (*t.notes, *a.notes):
        st.info(md_escape(note), icon=":material/swap_vert:")
    with st.container(border=True):
        st.markdown("**The answer.** " + md_escape(served_worse(v)))
        st.markdown(md_escape(v.findings(max_items=3)))
    counts = v["verdict"].value_counts()
    for col, verdict in zip(st.columns(len(VERDICTS)), VERDICTS):
        col.metric(verdict.capitalize(), f"{counts.get(verdict, 0):,}", help=HELP[verdict])
    rho, band = groups["hac_rho"].to_numpy(dtype=float), groups["hac_bandwidth"].to_numpy(dtype=float)
    order = groups["hac_order"].to_numpy(dtype=float)
    st.caption(f"Intervals: normal, with each group's long-run (HAC) variance over time ({md_escape(a.method)}: the "
               f"larger of the AR(1)-prewhitened and the AR-sieve estimate), since forecast errors are "
               f"autocorrelated. The benefit's AR(1) coefficient ρ̂ {_runs(rho, '.2f')}, the Bartlett bandwidth "
               f"{_runs(band, '.2f')} lags and the sieve's AR order {_runs(order, '.0f')} (per group in the per-group "
               f"CSV below); verdicts at α = {s.alpha:g}, {md_escape(ADJUSTMENTS.get(s.adjust, s.adjust))}.")
    verdict_table(v, unit)

    st.subheader("Which way each group's forecasts lean", anchor=False)
    chart(forecast_benefits(a, s.alpha, unit), "forecast_benefits.html", key="fc-benefits")
    st.subheader("Do the bands hold what they promise?", anchor=False)
    figure_with_downloads(forecast_coverage(a, s.alpha), "fc-coverage", tables["coverage"], "forecast_coverage.csv",
                          "Download every band's coverage per group (CSV)")
    figure_with_downloads(pit_histograms(a), "fc-pit", tables["pit"], "forecast_pit.csv",
                          "Download the PIT histograms (CSV)")
    st.subheader("One group's forecasts over time", anchor=False)
    lowest = int(np.nanargmin(groups["benefit"].to_numpy(dtype=float)))
    pick = st.selectbox("Group", list(a.groups), key="fc-fan-group", index=lowest,
                        help="Opens at the group whose forecasts lean most against it (the lowest mean benefit).")
    series = t.series(str(pick))
    chart(forecast_fan(series, t.levels, str(pick), unit, t.observation), "forecast_fan.html", key="fc-fan",
          names={"group": pick})
    csv_download(series, "forecast_series.csv", "Download this group's forecasts (CSV)", key="fc-series-csv",
                 index=False)

    st.subheader("Per group", anchor=False)
    level = level_text(1 - s.alpha)
    st.caption(f"Mean CRPS and mean benefit with their {level} intervals (HAC, unadjusted); the download has every "
               "column: the WIS, each band's coverage and what set each group's long-run variance.")
    st.dataframe(styled(group_table(groups, unit, level=level), 3), width="stretch", key="fc-groups")
    csv_download(groups, "forecast_groups.csv", "Download the per-group scores (CSV)", key="fc-groups-csv")
    st.subheader("Every pair, every measure", anchor=False)
    st.caption("Differences group i − group j of mean CRPS, WIS, the forecast OFI (the difference of mean benefits) "
               f"and each band's coverage (a share), with unadjusted intervals and p adjusted across the pairs of each "
               f"measure; CRPS, WIS and OFI in {md_escape(unit.strip() or 'the outcome’s units')}.")
    st.dataframe(styled(tables["pairs"], 4, formats={"p": "{:.3g}", "p_adjusted": "{:.3g}"}), hide_index=True,
                 width="stretch", key="fc-pairs")
    csv_download(tables["pairs"], "forecast_pairs.csv", "Download every pair's differences (CSV)", key="fc-pairs-csv",
                 index=False)


def _runs(values: np.ndarray, spec: str) -> str:
    """How a setting varies over the groups: "runs from 0.56 to 0.58", or "is 1" when every group's reads the same.

    >>> _runs(np.array([0.561, 0.58, np.nan]), ".2f"), _runs(np.array([1.0, 1.0]), ".0f")
    ('runs from 0.56 to 0.58', 'is 1')
    """
    low, high = format(np.nanmin(values), spec), format(np.nanmax(values), spec)
    return f"is {low}" if low == high else f"runs from {low} to {high}"


def _ratio(x: float) -> str:
    return f"{x:.3g}" if np.isfinite(x) else "undefined"


def verdict_view(v: pd.DataFrame, unit: str) -> pd.DataFrame:
    """The verdict table as people read it: the pair, the verdict, the forecast OFI with its adjusted interval and
    the CRPS ratio with its interval (each pair's reading goes under the table, whole: :func:`verdict_table`)."""
    return pd.DataFrame({
        "pair": v["group_i"].astype(str) + " vs " + v["group_j"].astype(str),
        "verdict": v["verdict"], "favours": v["favours"],
        "forecast OFI (i − j)": [amount_text(x, unit) for x in v["ofi"]],
        "adjusted interval": [amount_range(lo, hi, unit) for lo, hi in zip(v["ofi_ci_low"], v["ofi_ci_high"])],
        "CRPS ratio (i / j)": [_ratio(x) for x in v["ratio"]],
        "its interval": [f"{_ratio(lo)} to {_ratio(hi)}" if np.isfinite(lo) and np.isfinite(hi) else "undefined"
                         for lo, hi in zip(v["ratio_ci_low"], v["ratio_ci_high"])]})


def verdict_table(v: pd.DataFrame, unit: str, key: str = "fc-verdicts", file_name: str = "forecast_verdicts.csv") -> None:
    """The verdict table (:func:`verdict_view`), each pair's reading under it in full (a table cell cut it off; the
    amount audits' :func:`ui.kind_audit.pairs_in_words`), and its download with every number (``key``-csv)."""
    st.dataframe(verdict_view(v, unit), hide_index=True, width="stretch", key=key)
    pairs_in_words(v)
    csv_download(v, file_name, "Download every pair's verdict with every number (CSV)", key=f"{key}-csv",
                 index=False)


def mode() -> None:
    """The whole mode: the sidebar's settings, the demo button and the upload, then the audit."""
    current = loaded()
    with st.sidebar:
        s = settings(current)
    st.markdown("Which sites, regions or regimes does a forecaster serve worse? Upload probabilistic forecasts as "
                "quantiles, one row per forecast, and the audit compares every pair of groups: the **forecast OFI** "
                "(the difference of the median forecasts' mean signed error, in the declared direction) against "
                "your tolerance, the accuracy (CRPS) and whether each group's bands hold what they promise — with "
                "intervals that allow for the autocorrelation of forecast errors.")
    if st.button("Load the demo forecasts (synthetic)", icon=":material/science:", key="fc-demo",
                 help="Daily peak demand of 4 districts over two years, 7 quantiles, autocorrelated errors; one "
                      "district under-forecast, one with bands too narrow (scripts/make_forecast_demo.py)."):
        load_demo()
        st.rerun()
    with st.expander("Upload forecasts", expanded=current is None, icon=":material/upload_file:"):
        upload_step()
    if current is None:
        st.info("Upload forecasts, or load the synthetic demo, to see the audit here.", icon=":material/info:")
        return
    st.header("The audit by group", anchor=False)
    show_audit(current, s)


__all__ = ["Loaded", "default_tolerance", "group_table", "load_demo", "loaded", "mode", "served_worse", "settings",
           "show_audit", "upload_step", "verdict_table", "verdict_view"]
