"""Figures of PTN's search (Forecasting): how well the search's cheap fitness predicts the fitness it stands for."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ._base import _plain, safe_figures


def search_fidelity(low_fidelity: np.ndarray, final_fitness: np.ndarray, rho: float,
                    labels: list[str] | None = None) -> go.Figure:
    """Each agent that the search trained past its first rung: its low-fidelity fitness (validation CRPS after
    the first rung) against its fitness at the end of its search run, with Spearman's ρ between the two
    and the line y = x (agents below it improved in the later rung)."""
    low = np.asarray(low_fidelity, dtype=float)
    final = np.asarray(final_fitness, dtype=float)
    labels = labels or [f"agent {k + 1}" for k in range(len(low))]
    fig = go.Figure()
    if len(low):
        span = [float(np.nanmin([low.min(), final.min()])), float(np.nanmax([low.max(), final.max()]))]
        fig.add_trace(go.Scatter(x=span, y=span, mode="lines", line=dict(color="#999", dash="dot"), name="y = x",
                                 hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=low, y=final, mode="markers", marker=dict(size=11, color="#2171b5"),
                             name="agent", text=labels,
                             hovertemplate="%{text}<br>first rung %{x:.5f}<br>end of search %{y:.5f}<extra></extra>"))
    fig.update_xaxes(title="low-fidelity fitness (CRPS after the first rung)")
    fig.update_yaxes(title="fitness at the end of the search run")
    said = f"Spearman ρ = {rho:+.2f} over {len(low)} agents" if np.isfinite(rho) else f"{len(low)} agents: too few for ρ"
    return _plain(fig, f"Does the cheap fitness rank agents as the full one does?<br><sup>{said}</sup>", height=360,
                  legend_below=True)


safe_figures(globals())
