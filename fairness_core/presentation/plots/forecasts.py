"""Figures of forecasts audited by group (:class:`fairness_core.forecasts.ForecastAudit`, issue 55): each group's
mean benefit with its interval, each group's band coverage against the nominal, the PIT histogram per group, and one
group's quantile fan over time with the observations."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ...forecasts import ForecastAudit
from ...wording.levels import level_text
from ...wording.kinds import amount_range, amount_text
from ._base import FAVOURS_I, FAVOURS_J, PALETTE, _plain, plotly_text, safe_figures

__all__ = ["forecast_benefits", "forecast_coverage", "forecast_fan", "pit_histograms", "shown_bands"]

#: The central bands the coverage figure shows when the forecasts have more: the nearest to these nominals.
SHOWN_BANDS = (0.5, 0.8, 0.9)
#: Most PIT panels per row.
PIT_COLUMNS = 4


def _right_of_zero(positive_is: str | None) -> str:
    """What a positive benefit is, in the declared direction."""
    return ("right of 0: the median forecast below the observation (serves the group)" if positive_is == "harm"
            else "right of 0: the median forecast above the observation (serves the group)")


def forecast_benefits(audit: ForecastAudit, alpha: float = 0.05, unit: str = "") -> go.Figure:
    """Per group, the mean benefit of the median forecast (its signed error in the declared direction) with its
    1 − ``alpha`` interval (:meth:`ForecastAudit.by_group`: HAC variance, unadjusted), most harmed at the top; a
    dashed line marks 0. A group without an interval (too few time points) shows its mean alone.

    >>> import numpy as np
    >>> from fairness_core import forecasts
    >>> y = np.tile([0.0, 1.0, 2.0, 1.0], 20)
    >>> a = forecasts.audit(y, (y - np.repeat([0.0, 1.0], 40))[:, None], [0.5], np.repeat(["a", "b"], 40),
    ...                     positive_is="benefit", min_time_points=3)
    >>> [float(v) for v in forecast_benefits(a).data[0].x]    # b is under-forecast by 1: listed first
    [-1.0, 0.0]
    """
    table = audit.by_group(alpha=alpha)
    order = np.argsort(table["benefit"].to_numpy(), kind="stable")
    t = table.iloc[order]
    mean, low, high = (t[c].to_numpy(dtype=float) for c in ("benefit", "benefit_ci_low", "benefit_ci_high"))
    names = [str(g) for g in t.index]
    level = level_text(1 - alpha)
    hover = [f"<b>{plotly_text(g)}</b> ({int(n):,} forecasts)<br>mean benefit {plotly_text(amount_text(b, unit))}"
             f"<br>{level} interval {plotly_text(amount_range(lo, hi, unit))}"
             for g, n, b, lo, hi in zip(names, t["rows"], mean, low, high)]
    colour = [FAVOURS_J if b < 0 else FAVOURS_I for b in mean]
    fig = go.Figure(go.Scatter(
        x=mean, y=names, mode="markers", name=f"mean benefit, {level} interval",
        marker=dict(color=colour, size=12, symbol="diamond"),
        error_x=dict(type="data", symmetric=False, array=np.nan_to_num(high - mean),
                     arrayminus=np.nan_to_num(mean - low), color="#555", thickness=2, width=6),
        hovertext=hover, hoverinfo="text"))
    fig.add_vline(x=0, line_dash="dash", line_color="#888", line_width=1)
    fig.update_yaxes(type="category", autorange="reversed", categoryorder="array", categoryarray=names)
    fig.update_xaxes(title_text="mean benefit per forecast" + (f" ({plotly_text(unit.strip())})" if unit.strip()
                                                              else ""))
    title = (f"Mean benefit of the median forecast by group<br><sup>◆ mean with its {level} interval (HAC); "
             f"{_right_of_zero(audit.positive_is)}</sup>")
    return _plain(fig, title, height=150 + 45 * len(names), legend_below=True, wrap=False)


def shown_bands(nominals: Sequence[float], wanted: Sequence[float] = SHOWN_BANDS) -> list[float]:
    """The bands a figure shows: every band when there are at most three, else the nearest to each ``wanted``
    nominal (each once), in increasing order.

    >>> shown_bands([0.9, 0.8, 0.5]), shown_bands([0.98, 0.9, 0.78, 0.6, 0.4, 0.2])
    ([0.5, 0.8, 0.9], [0.4, 0.78, 0.9])
    """
    values = sorted(float(v) for v in nominals)
    if len(values) <= len(wanted):
        return values
    return sorted({min(values, key=lambda v: (abs(v - w), v)) for w in wanted})


def forecast_coverage(audit: ForecastAudit, alpha: float = 0.05, bands: Sequence[float] | None = None) -> go.Figure:
    """One panel per central band: each group's coverage (the share of observations inside the band) with its
    1 − ``alpha`` interval (HAC, unadjusted; :meth:`ForecastAudit.coverage`) against the band's nominal coverage
    (dashed). Below the line the bands are too narrow for that group (overconfident), above it too wide. ``bands``:
    the nominals to show (default :func:`shown_bands`)."""
    cov = audit.coverage(alpha=alpha)
    chosen = shown_bands(cov["nominal"].unique()) if bands is None else sorted(float(b) for b in bands)
    level = level_text(1 - alpha)
    fig = make_subplots(rows=1, cols=max(len(chosen), 1), shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=[f"{level_text(b)} band" for b in chosen])
    groups = [str(g) for g in audit.groups]
    for k, nominal in enumerate(chosen, start=1):
        part = cov[np.isclose(cov["nominal"].to_numpy(dtype=float), nominal)].set_index("group").loc[groups]
        x, low, high = (part[c].to_numpy(dtype=float) for c in ("coverage", "ci_low", "ci_high"))
        colour = [FAVOURS_J if hi < nominal else (PALETTE[0] if lo <= nominal else PALETTE[2])
                  for lo, hi in zip(low, high)]
        hover = [f"<b>{plotly_text(g)}</b><br>{level_text(nominal)} band holds {v:.1%} of the observations"
                 f"<br>{level} interval {lo:.1%} to {hi:.1%}" for g, v, lo, hi in zip(groups, x, low, high)]
        fig.add_trace(go.Scatter(x=groups, y=x, mode="markers", name=f"coverage, {level} interval",
                                 showlegend=k == 1, marker=dict(color=colour, size=11),
                                 error_y=dict(type="data", symmetric=False, array=np.nan_to_num(high - x),
                                              arrayminus=np.nan_to_num(x - low), color="#555", thickness=2),
                                 hovertext=hover, hoverinfo="text"), row=1, col=k)
        fig.add_trace(go.Scatter(x=groups, y=[nominal] * len(groups), mode="lines", name="nominal coverage",
                                 showlegend=k == 1, line=dict(color="#888", dash="dash", width=1.5),
                                 hoverinfo="skip"), row=1, col=k)
        fig.update_xaxes(type="category", tickangle=-30 if len(groups) > 4 else 0, row=1, col=k)
    fig.update_yaxes(tickformat=".0%", title_text="share of observations inside the band", row=1, col=1)
    title = ("Band coverage by group<br><sup>● coverage with its interval; dashed: nominal; red: the band is too "
             "narrow for the group (overconfident), green: too wide</sup>")
    return _plain(fig, title, height=400, legend_below=True, wrap=False)


def pit_histograms(audit: ForecastAudit) -> go.Figure:
    """Small multiples, one per group: the PIT histogram read from the levels (:meth:`ForecastAudit.pit`), each bin's
    share divided by its width, so a calibrated forecaster's bars stand at 1 (dashed). A U shape: bands too narrow;
    a hump: too wide; bars rising to the right: observations above the forecasts (under-forecast).

    >>> import numpy as np
    >>> from fairness_core import forecasts
    >>> y = np.arange(80.0) % 4
    >>> a = forecasts.audit(y, np.column_stack([y - 1, y + 0.5, y + 1]), [0.25, 0.5, 0.75],
    ...                     np.repeat(["a", "b"], 40), positive_is="benefit", min_time_points=3)
    >>> [float(v) for v in pit_histograms(a).data[0].y]      # every observation in the second bin, [0.25, 0.5)
    [0.0, 4.0, 0.0, 0.0]
    """
    pit = audit.pit()
    groups = [str(g) for g in audit.groups]
    cols = min(PIT_COLUMNS, len(groups))
    rows = -(-len(groups) // cols)
    fig = make_subplots(rows=rows, cols=cols, shared_yaxes=True, horizontal_spacing=0.03,
                        vertical_spacing=0.22 / max(rows - 1, 1) if rows > 1 else 0.0,
                        subplot_titles=[plotly_text(g) for g in groups])
    top = float(np.nanmax((pit["share"] / (pit["high"] - pit["low"])).to_numpy(dtype=float), initial=1.0))
    for k, g in enumerate(groups):
        r, c = k // cols + 1, k % cols + 1
        part = pit[pit["group"] == g]
        width = (part["high"] - part["low"]).to_numpy(dtype=float)
        density = part["share"].to_numpy(dtype=float) / width
        hover = [f"<b>{plotly_text(g)}</b><br>PIT in [{lo:g}, {hi:g}): {int(n):,} forecasts ({s:.1%}; "
                 f"calibrated: {e:.1%})" for lo, hi, n, s, e in zip(part["low"], part["high"], part["count"],
                                                                    part["share"], part["expected"])]
        fig.add_trace(go.Bar(x=((part["low"] + part["high"]) / 2).to_numpy(dtype=float), y=density, width=width,
                             marker=dict(color=PALETTE[0], line=dict(color="white", width=1)), name="PIT density",
                             showlegend=k == 0, hovertext=hover, hoverinfo="text"), row=r, col=c)
        fig.add_trace(go.Scatter(x=[0, 1], y=[1, 1], mode="lines", line=dict(color="#c0392b", dash="dash"),
                                 name="calibrated", showlegend=k == 0, hoverinfo="skip"), row=r, col=c)
        fig.update_xaxes(range=[0, 1], dtick=0.25, row=r, col=c)
    fig.update_yaxes(range=[0, top * 1.08])
    for r in range(1, rows + 1):
        fig.update_yaxes(title_text="share ÷ bin width", row=r, col=1)
    title = ("PIT histogram by group<br><sup>flat at 1: calibrated; U: bands too narrow; hump: too wide; rising to "
             "the right: observations above the forecasts</sup>")
    return _plain(fig, title, height=140 + 230 * rows, legend_below=True, wrap=False)


#: Time points a fan chart opens on (the latest); the rest are a zoom out (a double click) away.
FAN_WINDOW = 120


def forecast_fan(series: pd.DataFrame, levels: Sequence[float], group: str, unit: str = "",
                 observation: str = "observation", window: int = FAN_WINDOW) -> go.Figure:
    """One group's forecasts over time: nested bands between symmetric levels (the widest lightest), the median (when
    0.5 is a level) and the observations, those outside the widest band marked. ``series``: columns ``time``,
    ``observation`` and one per level named ``f"{level:g}"`` (:meth:`~fairness_core.services.forecast_files.
    ForecastTable.series`); ``observation`` names the observed column as the user did. A series longer than
    1.5 × ``window`` opens on its last ``window`` time points (every point is in the figure: a double click shows
    them all).

    >>> s = pd.DataFrame({"time": [1, 2, 3], "observation": [1.0, 5.0, 2.0], "0.1": [0.0, 0.0, 1.0],
    ...                   "0.5": [1.0, 1.0, 2.0], "0.9": [2.0, 2.0, 3.0]})
    >>> fig = forecast_fan(s, [0.1, 0.5, 0.9], "a")
    >>> [t.name for t in fig.data][2:], [float(v) for v in fig.data[-1].y]  # the one observation outside the band
    (['median', 'observation', 'outside the 10–90 &#37; band'], [5.0])
    """
    levels = [float(v) for v in levels]
    k = len(levels)
    x = series["time"].to_numpy()
    fig = go.Figure()
    pairs = [(i, k - 1 - i) for i in range(k // 2) if abs(levels[i] + levels[k - 1 - i] - 1) < 1e-9]
    shades = np.linspace(0.15, 0.45, max(len(pairs), 1))
    widest = None
    for (i, j), alpha in zip(pairs, shades):
        lo, hi = series[f"{levels[i]:g}"].to_numpy(dtype=float), series[f"{levels[j]:g}"].to_numpy(dtype=float)
        name = f"{levels[i] * 100:g}–{levels[j] * 100:g} % band"
        widest = widest or (name, lo, hi)
        fig.add_trace(go.Scatter(x=x, y=hi, mode="lines", line=dict(width=0), showlegend=False, hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=x, y=lo, mode="lines", line=dict(width=0), fill="tonexty", name=name,
                                 fillcolor=f"rgba(33,113,181,{alpha:.2f})", hoverinfo="skip"))
    if "0.5" in series:
        fig.add_trace(go.Scatter(x=x, y=series["0.5"], mode="lines", name="median",
                                 line=dict(color="#08519c", width=1.5),
                                 hovertemplate="%{x}<br>median %{y:.4g}<extra></extra>"))
    y = series["observation"].to_numpy(dtype=float)
    fig.add_trace(go.Scatter(x=x, y=y, mode="markers", name=observation, marker=dict(color="#111", size=4),
                             hovertemplate="%{x}<br>observed %{y:.4g}<extra></extra>"))
    if widest is not None:
        name, lo, hi = widest
        out = (y < lo) | (y > hi)
        fig.add_trace(go.Scatter(x=x[out], y=y[out], mode="markers", name=f"outside the {name}",
                                 marker=dict(color="#c0392b", size=7, symbol="x"),
                                 hovertemplate="%{x}<br>observed %{y:.4g} (outside)<extra></extra>"))
    fig.update_yaxes(title_text=plotly_text(observation) + (f" ({plotly_text(unit.strip())})" if unit.strip() else ""))
    fig.update_xaxes(title_text="time")
    share = float(np.mean((y < widest[1]) | (y > widest[2]))) if widest is not None else float("nan")
    said = (f"{share:.1%} of {len(y):,} observations outside the {widest[0]}" if widest is not None
            else f"{len(y):,} observations")
    if len(x) > 1.5 * window:
        fig.update_xaxes(range=[x[-window], x[-1]])
        said += f"; the last {window:,} shown, double-click for all"
    fig.update_layout(legend_traceorder="normal")
    return _plain(fig, f"Forecasts for {plotly_text(group)} over time<br><sup>{said}</sup>", height=420,
                  legend_below=True, wrap=False)


safe_figures(globals())
