"""Figures of Cross-Prior Smoothing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ._base import _plain, safe_figures


def _smoother_style(label: str) -> dict:
    """Raw black, bashful grey dashed, add-one orange; CPS by λ in three distinct hues and dashes."""
    if label == "raw":
        return dict(color="#222", width=2.5)
    if label.startswith("additive"):
        return dict(color="#999", dash="dash", width=2) if "1e-10" in label else dict(color="#e9a23b", width=2)
    styles = {"5": dict(color="#2a9d8f", dash="dot"), "10": dict(color="#2166ac"), "20": dict(color="#8e44ad", dash="dashdot")}
    lam = label.split("=")[-1].strip()
    return dict(width=2.2, **styles.get(lam, dict(color="#2171b5")))


def smoothing_curves(table: pd.DataFrame) -> go.Figure:
    """MSE vs subsample size n, one panel per metric, one line per smoother, log y
    (Briscoe 2024, Figs 4.4–4.6), from :func:`fairness_core.smoothing.error_curves`."""
    metrics_ = list(dict.fromkeys(table["metric"]))
    cols = min(2, len(metrics_))
    rows = -(-len(metrics_) // cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=metrics_, horizontal_spacing=0.08,
                        vertical_spacing=0.12 if rows > 1 else 0.1)
    for k, metric in enumerate(metrics_):
        r, c = divmod(k, cols)
        g = table[table["metric"] == metric]
        for label in dict.fromkeys(g["smoother"]):
            s = g[g["smoother"] == label].sort_values("n")
            custom = np.column_stack([s["p_excluded"], s["se"].fillna(-1)])
            fig.add_trace(go.Scatter(
                x=s["n"], y=s["mse"], mode="lines", name=label, legendgroup=label, showlegend=k == 0,
                line=_smoother_style(label), customdata=custom,
                hovertemplate=(f"{metric}, {label}<br>n = %{{x}}: MSE %{{y:.3g}}<br>"
                               "undefined (excluded): %{customdata[0]:.1%}<extra></extra>"),
            ), row=r + 1, col=c + 1)
    zero = bool((table["mse"] == 0).any())   # an MSE of exactly 0 has no place on a log axis
    fig.update_yaxes(type="linear" if zero else "log", title_text="MSE vs the whole group",
                     exponentformat="power", rangemode="tozero" if zero else "normal")
    fig.update_xaxes(title_text="subsample size n")
    scale = "linear scale: some MSE is exactly 0" if zero else "log scale"
    return _plain(fig, "How far a subsample's score lies from the whole group's, raw and smoothed<br><sup>"
                       f"undefined values excluded (the share is in the hover and the CSV); lower is better; {scale}"
                       "</sup>",
                  height=330 * rows + 100, legend_below=True)


def smoothing_shift(table: pd.DataFrame, metric: str) -> go.Figure:
    """Per group: raw score → smoothed score for one metric (a dumbbell); undefined raw scores are labelled."""
    t = table[table["metric"] == metric].sort_values("n")
    groups = [f"{g} (n = {n:,})" for g, n in zip(t["group"], t["n"])]
    fig = go.Figure()
    for y, raw, new in zip(groups, t["raw"], t["smoothed"]):
        if np.isfinite(raw) and np.isfinite(new):
            fig.add_trace(go.Scatter(x=[raw, new], y=[y, y], mode="lines", line=dict(color="#9db4d3", width=4),
                                     hoverinfo="skip", showlegend=False))
    raw_ok = np.isfinite(t["raw"].to_numpy(dtype=float))
    fig.add_trace(go.Scatter(x=t["raw"][raw_ok], y=np.array(groups)[raw_ok], mode="markers", name="raw",
                             marker=dict(size=11, color="#222", symbol="circle-open", line=dict(width=2)),
                             hovertemplate="%{y}<br>raw %{x:.4f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=t["smoothed"], y=groups, mode="markers", name="smoothed",
                             marker=dict(size=11, color="#2171b5"),
                             hovertemplate="%{y}<br>smoothed %{x:.4f}<extra></extra>"))
    if (~raw_ok).any():
        fig.add_trace(go.Scatter(x=t["smoothed"][~raw_ok], y=np.array(groups)[~raw_ok], mode="text",
                                 text=["raw undefined"] * int((~raw_ok).sum()), textposition="middle left",
                                 hoverinfo="skip", showlegend=False, textfont=dict(color="#c0392b")))
    fig.update_yaxes(categoryorder="array", categoryarray=groups)
    fig.update_xaxes(title=metric)
    return _plain(fig, f"{metric}: raw → smoothed per group (smallest groups at the bottom move most)",
                  height=max(300, 120 + 42 * len(groups)))


safe_figures(globals())
