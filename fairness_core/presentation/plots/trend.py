"""A model over time: each pair's OFI and DI across the periods of a series
(:func:`fairness_core.trend.series_changes`)."""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ...statistics import bias
from ...common.text import plotly_text
from ._base import PALETTE, _plain, safe_figures
from .audit import VERDICT_COLORS

#: Most pairs drawn; beyond it the pairs that changed significantly come first, then the largest |OFI|.
MAX_TREND_PAIRS = 40


def _oriented(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Each period's verdict rows with every pair named one way (as first seen) and OFI and its interval
    turned with it, so a pair's line is comparable across periods."""
    canon: dict[frozenset, tuple[Any, Any]] = {}
    for gi, gj in zip(verdicts["group_i"], verdicts["group_j"]):
        canon.setdefault(frozenset((gi, gj)), (gi, gj))
    names = [canon[frozenset((gi, gj))] for gi, gj in zip(verdicts["group_i"], verdicts["group_j"])]
    flip = np.array([n != (gi, gj) for n, gi, gj in zip(names, verdicts["group_i"], verdicts["group_j"])], bool)
    ofi, lo, hi = (verdicts[c].to_numpy(float) for c in ("ofi", "ofi_ci_low", "ofi_ci_high"))
    ratio = ("di", "di_ci_low", "di_ci_high") if "di" in verdicts else ("ratio", "ratio_ci_low", "ratio_ci_high")
    di, d_lo, d_hi = (verdicts[c].to_numpy(float) if c in verdicts else np.full(len(verdicts), np.nan)
                      for c in ratio)   # an amount series: the mean prediction ratio; tiers: none
    with np.errstate(divide="ignore", invalid="ignore"):   # DI turned is 1 / DI, its interval [1 / high, 1 / low]
        di_t, d_lo_t, d_hi_t = 1 / di, 1 / d_hi, 1 / d_lo
    return pd.DataFrame({"period": verdicts["period"].to_numpy(), "key": [frozenset(n) for n in names],
                         "group_i": [n[0] for n in names], "group_j": [n[1] for n in names],
                         "ofi": np.where(flip, -ofi, ofi), "low": np.where(flip, -hi, lo),
                         "high": np.where(flip, -lo, hi), "di": np.where(flip, di_t, di),
                         "di_low": np.where(flip, d_lo_t, d_lo), "di_high": np.where(flip, d_hi_t, d_hi),
                         "verdict": verdicts["verdict"].to_numpy()})


def _pairs(trend: Any, max_pairs: int) -> tuple[pd.DataFrame, list[frozenset], set, set]:
    """The oriented rows, the pairs drawn (in order: a pair's colour is its place here), the pairs that changed
    significantly and the (pair, period) where a pair became algorithmic bias; shared by the OFI and DI charts so
    that a pair reads the same way and has the same colour in both."""
    rows = _oriented(trend.verdicts)
    changes = trend.changes
    significant = {frozenset((i, j)) for i, j, s in zip(changes["group_i"], changes["group_j"], changes["significant"])
                   if bool(s)} if len(changes) else set()
    became = {(frozenset((i, j)), p) for i, j, p, b in zip(changes["group_i"], changes["group_j"],
                                                          changes["period_after"], changes["became_bias"]) if bool(b)} \
        if len(changes) else set()
    keys = list(dict.fromkeys(rows["key"]))
    biggest = rows.groupby("key", sort=False)["ofi"].apply(lambda s: float(np.nanmax(np.abs(s))) if s.notna().any()
                                                          else 0.0)
    if len(keys) > max_pairs:
        keys = sorted(keys, key=lambda k: (k not in significant, -biggest[k]))[:max_pairs]
    return rows, keys, significant, became


def _each_pair(rows: pd.DataFrame, keys: list, significant: set) -> Iterator[tuple[Any, pd.DataFrame, bool, str, str]]:
    """Per drawn pair, in order: its key, its rows, whether it changed significantly, its colour and its label
    (the trace name, escaped on the way out) — the same for the OFI and the DI chart."""
    for k, key in enumerate(keys):
        part = rows[rows["key"] == key]
        bold = key in significant
        yield key, part, bold, _pair_color(k, bold), f"{part['group_i'].iloc[0]} vs {part['group_j'].iloc[0]}"


def _pair_color(k: int, bold: bool) -> str:
    return PALETTE[k % len(PALETTE)] if bold else "#b8b8b8"


def _pair_style(color: str, bold: bool, verdicts: pd.Series) -> dict[str, Any]:
    """A pair's line across periods, as both trend charts draw it: bold when it changed significantly, each
    period's marker in the colour of that period's verdict."""
    return dict(line=dict(color=color, width=3 if bold else 1.5), opacity=1.0 if bold else 0.7,
                marker=dict(size=11 if bold else 8, color=[VERDICT_COLORS.get(v, "#8c8c8c") for v in verdicts],
                            line=dict(color="white", width=1)))


def _periods_axis_and_key(fig: go.Figure, rows: pd.DataFrame, keys: list[frozenset], periods: list[str]) -> str:
    """The periods in order on x and the verdicts' colour key in the legend, as both trend charts show them;
    returns the subtitle's note on the pairs left out (empty when every pair is drawn)."""
    for verdict, color in VERDICT_COLORS.items():
        if (rows["verdict"] == verdict).any():
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=verdict, legendgroup="verdicts",
                                     marker=dict(size=10, color=color)))
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=periods, title="period")
    pairs = rows["key"].nunique()
    return f" · the {len(keys)} of {pairs} pairs that changed most" if len(keys) < pairs else ""


def ofi_trend(trend: Any, max_pairs: int = MAX_TREND_PAIRS) -> go.Figure:
    """Each pair's OFI across the periods of ``trend`` (a :class:`fairness_core.trend.Trend`) with each period's
    multiplicity-adjusted interval; markers coloured by that period's verdict; pairs whose OFI changed significantly
    between two consecutive periods drawn bold (the others pale); a ring where a pair became algorithmic bias.
    Above ``max_pairs`` pairs, the significant changes and then the largest |OFI| are drawn (the subtitle says)."""
    rows, keys, significant, became = _pairs(trend, max_pairs)
    periods = [str(p) for p in trend.periods]
    fig = go.Figure()
    fig.add_hrect(y0=-trend.tolerance, y1=trend.tolerance, fillcolor="#4a6fa5", opacity=0.10, line_width=0,
                  layer="below")
    fig.add_hline(y=0, line=dict(color="#999", width=1, dash="dot"))
    for key, part, bold, color, label in _each_pair(rows, keys, significant):
        fig.add_trace(go.Scatter(
            x=part["period"], y=part["ofi"], mode="lines+markers", name=label + (" (changed)" if bold else ""),
            showlegend=bold, legendgroup=None if bold else "unchanged",   # the pale pairs: named in the hover
            **_pair_style(color, bold, part["verdict"]),
            error_y=dict(type="data", symmetric=False, array=part["high"] - part["ofi"],
                         arrayminus=part["ofi"] - part["low"], color=color, thickness=1.5 if bold else 1, width=4),
            customdata=np.column_stack([[plotly_text(label)] * len(part), part["low"], part["high"], part["verdict"]]),
            hovertemplate=("<b>%{customdata[0]}</b><br>%{x}: OFI = %{y:+.3f} [%{customdata[1]:+.3f}, "
                           "%{customdata[2]:+.3f}]<br>%{customdata[3]}<extra></extra>")))
        marks = part[[(key, p) in became for p in part["period"]]]
        if len(marks):
            fig.add_trace(go.Scatter(
                x=marks["period"], y=marks["ofi"], mode="markers", name="became algorithmic bias",
                legendgroup="became", showlegend=not any(t.legendgroup == "became" for t in fig.data),
                marker=dict(size=22, symbol="circle-open", color=VERDICT_COLORS["algorithmic bias"],
                            line=dict(width=3)), hoverinfo="skip"))
    if any(key not in significant for key in keys):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name="no significant change (hover names the pair)",
                                 legendgroup="unchanged", line=dict(color="#b8b8b8", width=1.5)))
    shown = _periods_axis_and_key(fig, rows, keys, periods)
    unit = getattr(trend, "unit", "")
    fig.update_yaxes(title="OFI = B<sub>i</sub> − B<sub>j</sub>" + (f" ({plotly_text(unit)})" if unit else ""))
    sub = (f"each period's multiplicity-adjusted interval (α = {trend.alpha:g}) · marker colour: that period's verdict"
           f" · band: |OFI| ≤ {trend.tolerance:g}{(' ' + plotly_text(unit)) if unit else ''}<br>bold: OFI changed "
           "significantly between consecutive periods"
           f" · ring: became algorithmic bias{shown}")
    return _plain(fig, f"OFI of each pair across periods<br><sup>{sub}</sup>", height=500, legend_below=True,
                  wrap=False)


#: DI's interval is drawn within these bounds on the log axis (an interval reaching 0 or ∞ is cut there; the hover
#: gives the bounds themselves).
DI_AXIS_LOW, DI_AXIS_HIGH = 1e-3, 1e3


def di_trend(trend: Any, max_pairs: int = MAX_TREND_PAIRS) -> go.Figure:
    """Each pair's disparate impact DI = P̂_i / P̂_j across the periods of ``trend`` with each period's
    multiplicity-adjusted interval (log axis; dashed lines at the four-fifths band 0.8 and 1.25). The same pairs,
    orientation (a pair named the other way round has DI turned to 1 / DI) and colours as :func:`ofi_trend`: bold
    where the pair's OFI changed significantly, markers coloured by that period's verdict. A DI that is undefined
    (no selection in group j) or 0 leaves a gap."""
    rows, keys, significant, _ = _pairs(trend, max_pairs)
    periods = [str(p) for p in trend.periods]
    fig = go.Figure()
    fig.add_hrect(y0=bias.FOUR_FIFTHS_LOW, y1=bias.FOUR_FIFTHS_HIGH, fillcolor="#2a9d8f", opacity=0.10, line_width=0,
                  layer="below")
    for y in (bias.FOUR_FIFTHS_LOW, bias.FOUR_FIFTHS_HIGH):
        fig.add_hline(y=y, line=dict(color="#2a9d8f", width=1, dash="dash"))
    fig.add_hline(y=1, line=dict(color="#999", width=1, dash="dot"))
    for key, part, bold, color, label in _each_pair(rows, keys, significant):
        di = part["di"].to_numpy(float)
        shown = np.where(di > 0, di, np.nan)   # 0 has no place on a log axis
        lo_cap = np.clip(part["di_low"].to_numpy(float), DI_AXIS_LOW, None)
        hi_cap = np.clip(part["di_high"].to_numpy(float), None, DI_AXIS_HIGH)
        fig.add_trace(go.Scatter(
            x=part["period"], y=shown, mode="lines+markers", name=label + (" (changed)" if bold else ""),
            showlegend=bold, legendgroup=None if bold else "unchanged",
            connectgaps=False, **_pair_style(color, bold, part["verdict"]),
            error_y=dict(type="data", symmetric=False, array=np.maximum(hi_cap - shown, 0),
                         arrayminus=np.maximum(shown - lo_cap, 0), color=color, thickness=1.5 if bold else 1, width=4),
            customdata=np.column_stack([[plotly_text(label)] * len(part), part["di_low"], part["di_high"],
                                        part["verdict"], di]),
            hovertemplate=("<b>%{customdata[0]}</b><br>%{x}: DI = %{customdata[4]:.3f} [%{customdata[1]:.3f}, "
                           "%{customdata[2]:.3f}]<br>%{customdata[3]}<extra></extra>")))
    if any(key not in significant for key in keys):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name="OFI not significantly changed (hover names "
                                 "the pair)", legendgroup="unchanged", line=dict(color="#b8b8b8", width=1.5)))
    shown_pairs = _periods_axis_and_key(fig, rows, keys, periods)
    fig.update_yaxes(type="log", title="DI = P̂<sub>i</sub> / P̂<sub>j</sub> (log scale)",
                     tickvals=[0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 0.8, 1, 1.25, 2, 5, 10, 20, 50, 100],
                     ticktext=["0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "0.8", "1", "1.25", "2", "5", "10", "20",
                               "50", "100"])
    sub = (f"each period's multiplicity-adjusted interval (α = {trend.alpha:g}) · marker colour: that period's verdict"
           f" · dashed: the four-fifths band 0.8–1.25<br>same pairs, orientation and colours as the OFI chart"
           f" · bold: OFI changed significantly{shown_pairs}")
    return _plain(fig, f"DI of each pair across periods<br><sup>{sub}</sup>", height=500, legend_below=True,
                  wrap=False)


safe_figures(globals())
