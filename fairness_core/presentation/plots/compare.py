"""Figures for comparing candidate models and for mitigation by thresholds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ...compare import PERFORMANCE, pareto_by
from ._base import _plain, interval_markers, plotly_text, safe_figures

__all__ = ["model_tradeoff", "paired_differences", "mitigation_frontier"]

#: Colours: a model on the Pareto front, one beaten by another on both axes.
FRONT, BEATEN = "#2166ac", "#999999"


def _errors(df: pd.DataFrame, column: str) -> dict:  # type: ignore[type-arg]
    return dict(type="data", symmetric=False, array=(df[f"{column}_ci_high"] - df[column]).clip(lower=0),
                arrayminus=(df[column] - df[f"{column}_ci_low"]).clip(lower=0), thickness=1.5, width=5)


def model_tradeoff(summary: pd.DataFrame, performance: str = "accuracy", tolerance: float | None = None) -> go.Figure:
    """Each model as a point: ``performance`` (x, with its interval) against the largest |OFI| over pairs
    (left) and the smallest DI (right), each with its simultaneous interval; the Pareto front (no other
    model is both better performing and fairer by |OFI|) drawn as a line, the |OFI| tolerance and the
    four-fifths line as bands. ``summary`` is :meth:`fairness_core.compare.Comparison.summary`."""
    if performance not in PERFORMANCE:
        raise ValueError(f"performance must be one of {', '.join(PERFORMANCE)}, got {performance!r}")
    df = summary.copy()
    front = pareto_by(df, performance)     # as the summary's "pareto" column at this measure
    names = [plotly_text(m) for m in df["model"]]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=("Largest |OFI| over pairs (lower is fairer)",
                                        "Smallest disparate impact (higher is fairer)"))
    label = PERFORMANCE[performance]
    for col, y, what in ((1, "max_abs_ofi", "largest |OFI|"), (2, "min_di", "smallest DI")):
        for on_front, color, legend in ((True, FRONT, "on the Pareto front"), (False, BEATEN, "beaten on both")):
            pick = front == on_front
            if not pick.any():
                continue
            part = df[pick]
            fig.add_trace(go.Scatter(
                x=part[performance], y=part[y], mode="markers+text", text=[n for n, k in zip(names, pick) if k],
                textposition="top center", name=legend, legendgroup=legend, showlegend=col == 1, cliponaxis=False,
                marker=dict(color=color, size=11), error_x={**_errors(part, performance), "color": color},
                error_y={**_errors(part, y), "color": color},
                customdata=np.column_stack([part[f"{performance}_ci_low"], part[f"{performance}_ci_high"],
                                            part[f"{y}_ci_low"], part[f"{y}_ci_high"]]),
                hovertemplate=(f"%{{text}}<br>{label} = %{{x:.3f}} [%{{customdata[0]:.3f}}, %{{customdata[1]:.3f}}]"
                               f"<br>{what} = %{{y:.3f}} [%{{customdata[2]:.3f}}, %{{customdata[3]:.3f}}]<extra></extra>")),
                row=1, col=col)
    order = df[front].sort_values(performance)
    if len(order) > 1:
        fig.add_trace(go.Scatter(x=order[performance], y=order["max_abs_ofi"], mode="lines", name="Pareto front",
                                 line=dict(color=FRONT, dash="dot"), hoverinfo="skip"), row=1, col=1)
    if tolerance is not None:
        fig.add_hrect(y0=0, y1=tolerance, fillcolor="#4a6fa5", opacity=0.10, line_width=0, layer="below",
                      row=1, col=1)
    fig.add_hline(y=0.8, line=dict(color="#b2182b", dash="dash", width=1), row=1, col=2)
    low = np.nanmin(df[f"{performance}_ci_low"].to_numpy(dtype=float))
    high = np.nanmax(df[f"{performance}_ci_high"].to_numpy(dtype=float))
    pad = 0.25 * max(high - low, 0.01)   # room for the labels of the points at either end
    fig.update_xaxes(title_text=label, range=[low - pad, high + pad])
    fig.update_yaxes(title_text="|OFI|", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="DI (dashed: four-fifths)", row=1, col=2)
    level = str(df["interval_level"].iloc[0]) if "interval_level" in df and len(df) else ""
    return _plain(fig, f"Which model? {label} against fairness<br><sup>intervals: {plotly_text(level)} for the "
                       f"fairness measures, {label} at the same level · band: |OFI| ≤ tolerance</sup>",
                  height=460, legend_below=True, wrap=False)


def paired_differences(paired: pd.DataFrame) -> go.Figure:
    """Forest plot of :meth:`fairness_core.compare.Comparison.paired`: every group's difference in marginal
    benefit and every pair's difference in OFI between two models, with the adjusted intervals printed beside
    the verdicts; significant ones dark."""
    df = paired.iloc[::-1]
    labels = [str(w) for w in df["what"]]   # safe_figures escapes category labels (once)
    fig = go.Figure()
    fig.add_vline(x=0, line=dict(color="#666", width=1))
    for significant, color, legend in ((True, "#b2182b", "differs (adjusted)"), (False, BEATEN, "no shown difference")):
        pick = (df["significant"] == significant).to_numpy()
        if not pick.any():
            continue
        part = df[pick]
        fig.add_trace(interval_markers(
            part["difference"], [lbl for lbl, k in zip(labels, pick) if k], part["ci_low"], part["ci_high"],
            part["p_adjusted"], name=legend, color=color, size=9, whisker=5,
            hovertemplate=("%{y}: %{x:+.3f} [%{customdata[0]:+.3f}, %{customdata[1]:+.3f}]"
                           "<br>adjusted p = %{customdata[2]:.3g}<extra></extra>")))
    models = plotly_text(str(paired["models"].iloc[0])) if len(paired) else ""
    level = plotly_text(str(paired["interval_level"].iloc[0])) if len(paired) else ""
    fig = _plain(fig, f"Differences between models ({models})<br><sup>{level} intervals, adjusted for every "
                      "difference shown · right of 0: the first model gives more benefit</sup>",
                 height=max(300, 110 + 26 * len(df)), legend_below=True, wrap=False)
    fig.update_xaxes(title_text="difference (first − second)")
    return fig


def mitigation_frontier(frontier: pd.DataFrame, points: pd.DataFrame, performance_label: str = "accuracy",
                        disparity_label: str = "largest |OFI|") -> go.Figure:
    """Performance against disparity as the target's tolerance varies (``frontier``: columns ``tolerance``,
    ``performance``, ``disparity``), with models placed on it (``points``: ``model``, ``performance``,
    ``disparity``, optionally ``where``, e.g. "held-out rows")."""
    fig = go.Figure()
    line = frontier.sort_values("disparity")
    fig.add_trace(go.Scatter(x=line["disparity"], y=line["performance"], mode="lines+markers",
                             name="per-group thresholds, tolerance varied", line=dict(color=FRONT),
                             marker=dict(size=6), customdata=line[["tolerance"]].to_numpy(),
                             hovertemplate=(f"tolerance %{{customdata[0]:.3f}}<br>{disparity_label} = %{{x:.3f}}"
                                            f"<br>{performance_label} = %{{y:.3f}}<extra></extra>")))
    names = [plotly_text(m) for m in points["model"]]
    where = points["where"] if "where" in points else pd.Series([""] * len(points))
    fig.add_trace(go.Scatter(x=points["disparity"], y=points["performance"], mode="markers+text", text=names,
                             textposition="top center", name="models", cliponaxis=False,
                             marker=dict(color="#b2182b", size=11,
                                                                                   symbol="diamond"),
                             customdata=np.asarray([plotly_text(w) for w in where], dtype=object)[:, None],
                             hovertemplate=(f"%{{text}} (%{{customdata[0]}})<br>{disparity_label} = %{{x:.3f}}"
                                            f"<br>{performance_label} = %{{y:.3f}}<extra></extra>")))
    fig = _plain(fig, f"The price of fairness: {performance_label} against {disparity_label}<br><sup>the line: "
                      "thresholds fitted on the fitting rows for each tolerance · the points: models as measured</sup>",
                 height=420, legend_below=True, wrap=False)
    fig.update_xaxes(title_text=f"{disparity_label} (lower is fairer)", rangemode="tozero")
    fig.update_yaxes(title_text=performance_label)
    return fig


safe_figures(globals())
