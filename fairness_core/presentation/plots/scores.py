"""Figures of a score's audit (:mod:`fairness_core.scores`): the reliability diagram, ROC curves and the sweep."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ._base import PALETTE, _plain, plotly_text, safe_figures

__all__ = ["reliability_diagram", "roc_curves", "threshold_sweep_chart"]


def _colour(k: int) -> str:
    return PALETTE[k % len(PALETTE)]


def reliability_diagram(calibration: pd.DataFrame, score_label: str = "score", rate_label: str = "observed rate",
                        ) -> go.Figure:
    """Observed rate against mean score in each bin, one line per group, with the Clopper–Pearson interval as
    error bars; the diagonal (a calibrated probability) only when every score lies in [0, 1].
    ``calibration`` is :func:`fairness_core.scores.calibration`'s table; the labels name the axes."""
    fig = go.Figure()
    for k, (group, part) in enumerate(calibration.groupby("group", sort=False)):
        rate = part["observed_rate"].to_numpy(float)
        fig.add_trace(go.Scatter(
            x=part["mean_score"], y=rate, mode="lines+markers", name=str(group), line=dict(color=_colour(k)),
            marker=dict(size=np.clip(4 + 2 * np.sqrt(part["n"].to_numpy(float)), 5, 16)),
            error_y=dict(type="data", symmetric=False, array=part["ci_high"].to_numpy(float) - rate,
                         arrayminus=rate - part["ci_low"].to_numpy(float), thickness=1.2, width=3),
            customdata=np.column_stack([part["n"], part["ci_low"], part["ci_high"]]),
            hovertemplate=("%{fullData.name}<br>mean score %{x:.3g}<br>rate %{y:.3f} "
                           "[%{customdata[1]:.3f}, %{customdata[2]:.3f}]<br>n = %{customdata[0]:,}<extra></extra>")))
    if calibration.attrs.get("probabilities"):
        fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="calibrated (rate = score)",
                                 line=dict(color="#999", dash="dash", width=1), hoverinfo="skip"))
    level = calibration.attrs.get("level", 0.95)
    fig.update_xaxes(title_text=f"mean {plotly_text(score_label)} in the bin")
    fig.update_yaxes(title_text=plotly_text(rate_label), range=[-0.02, 1.02])
    return _plain(fig, f"Calibration by group<br><sup>each bin's {plotly_text(rate_label)} with its {level:.0%} "
                       "Clopper–Pearson interval; marker size grows with n</sup>", height=440, legend_below=True,
                  wrap=False)


def roc_curves(sweep_by_group: pd.DataFrame, auc_by_group: pd.DataFrame) -> go.Figure:
    """Each group's ROC curve (TPR against FPR over the sweep's thresholds, from (0, 0) to (1, 1)) with its AUC
    and interval in the legend; a group without both labels has no curve and says so in the legend."""
    fig = go.Figure()
    auc = auc_by_group.set_index("group")
    for k, (group, part) in enumerate(sweep_by_group.groupby("group", sort=False)):
        a = auc.loc[group]
        if not np.isfinite(a["auc"]):
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=f"{group}: AUC undefined",
                                     line=dict(color=_colour(k))))
            continue
        part = part.sort_values("threshold", ascending=False)
        fig.add_trace(go.Scatter(
            x=np.r_[0.0, part["fpr"], 1.0], y=np.r_[0.0, part["tpr"], 1.0], mode="lines",
            name=f"{group}: AUC {a['auc']:.3f} [{a['ci_low']:.3f}, {a['ci_high']:.3f}]",
            line=dict(color=_colour(k), shape="linear"),
            hovertemplate="%{fullData.name}<br>FPR %{x:.3f}, TPR %{y:.3f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="chance (AUC 0.5)",
                             line=dict(color="#999", dash="dash", width=1), hoverinfo="skip"))
    fig.update_xaxes(title_text="false-positive rate", range=[0, 1])
    fig.update_yaxes(title_text="true-positive rate", range=[0, 1.01], scaleanchor="x", scaleratio=1)
    return _plain(fig, "ROC curve by group<br><sup>AUC with its interval in the legend</sup>", height=480,
                  legend_below=True, wrap=False)


def threshold_sweep_chart(sweep_by_group: pd.DataFrame, sweep_summary: pd.DataFrame,
                          threshold: float | None = None, score_label: str = "score") -> go.Figure:
    """The sweep: each group's selection rate (top), the lowest impact ratio ``di_min`` and the largest |OFI|
    ``ofi_max_abs`` (bottom) against the threshold; the chosen threshold as a vertical line, the four-fifths
    ratio as a dashed line."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.1,
                        subplot_titles=("Selection rate by group (score ≥ threshold)",
                                        "Lowest impact ratio and largest |OFI|"))
    for k, (group, part) in enumerate(sweep_by_group.groupby("group", sort=False)):
        fig.add_trace(go.Scatter(x=part["threshold"], y=part["selection_rate"], mode="lines", name=str(group),
                                 line=dict(color=_colour(k), shape="hv"),
                                 hovertemplate="%{fullData.name}<br>threshold %{x:.4g}<br>selection rate "
                                               "%{y:.3f}<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Scatter(x=sweep_summary["threshold"], y=sweep_summary["di_min"], mode="lines",
                             name="lowest impact ratio (di_min)", line=dict(color="#b2182b", width=2.5, shape="hv"),
                             hovertemplate="threshold %{x:.4g}<br>di_min %{y:.3f}<extra></extra>"), row=2, col=1)
    fig.add_trace(go.Scatter(x=sweep_summary["threshold"], y=sweep_summary["ofi_max_abs"], mode="lines",
                             name="largest |OFI| (ofi_max_abs)", line=dict(color="#2166ac", width=2.5, shape="hv"),
                             hovertemplate="threshold %{x:.4g}<br>ofi_max_abs %{y:.3f}<extra></extra>"), row=2, col=1)
    fig.add_hline(y=0.8, line=dict(color="#b2182b", dash="dash", width=1), row=2, col=1)
    if threshold is not None and np.isfinite(threshold):
        for row in (1, 2):
            fig.add_vline(x=threshold, line=dict(color="#333", dash="dot", width=1.5), row=row, col=1)
        fig.add_annotation(x=threshold, y=0.98, yref="y domain", text=f" chosen: {threshold:.4g}", showarrow=False,
                           xanchor="left", yanchor="top", font=dict(size=11), bgcolor="rgba(255,255,255,0.8)",
                           row=1, col=1)   # inside the plot: above it the subplot's title sits
    fig.update_yaxes(title_text="selection rate", range=[0, 1.02], row=1, col=1)
    fig.update_yaxes(title_text="ratio / |OFI|", rangemode="tozero", row=2, col=1)
    fig.update_xaxes(title_text=f"threshold on {plotly_text(score_label)}", row=2, col=1)
    return _plain(fig, "The threshold sweep<br><sup>dashed: the four-fifths ratio 0.8 · dotted: the chosen "
                       "threshold</sup>", height=620, legend_below=True, wrap=False)


safe_figures(globals())
