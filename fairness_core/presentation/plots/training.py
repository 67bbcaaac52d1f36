"""Figures of the models: Conditional HydraGAN's training and results, PTN's forecasts and search."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ...statistics import bias
from ._base import PALETTE, _plain, plotly_text, safe_figures

GAN_CURVES = (("wasserstein", "Wasserstein estimate E D(real) − E D(fake)"), ("gp", "gradient penalty"),
              ("generator", "generator adversarial loss −E D(fake)"), ("diversity", "diversity MSE"))


def _thin(df: pd.DataFrame, max_points: int) -> pd.DataFrame:
    step = max(1, len(df) // max_points)
    return df.iloc[::step]


def gan_training_curves(records: Sequence[Any], max_points: int = 400) -> go.Figure:
    """Per-step losses of every objective (faint) with a running mean (bold), one panel each.

    ``records``: the GAN's step records (``models.hydragan.GanStep``), read by their fields ``step``,
    ``critic``, ``gp``, ``generator`` and ``diversity``.
    """
    df = pd.DataFrame({name: [float(getattr(r, name)) for r in records]
                       for name in ("step", "critic", "gp", "generator", "diversity")})
    df["wasserstein"] = -df["critic"]
    fig = make_subplots(rows=2, cols=2, subplot_titles=[t for _, t in GAN_CURVES], horizontal_spacing=0.08,
                        vertical_spacing=0.16)
    window = max(1, len(df) // 40)
    for k, (col, title) in enumerate(GAN_CURVES):
        r, c = divmod(k, 2)
        raw = _thin(df, max_points)
        smooth = _thin(df.assign(m=df[col].rolling(window, min_periods=1).mean()), max_points)
        fig.add_trace(go.Scatter(x=raw["step"], y=raw[col], mode="lines", line=dict(color="#c5d3e8", width=1),
                                 name="per step", legendgroup="raw", showlegend=k == 0,
                                 hovertemplate=f"step %{{x}}<br>{col} %{{y:.4g}}<extra></extra>"), row=r + 1, col=c + 1)
        fig.add_trace(go.Scatter(x=smooth["step"], y=smooth["m"], mode="lines", line=dict(color=PALETTE[k], width=2.5),
                                 name=f"running mean ({window} steps)", legendgroup="mean", showlegend=k == 0,
                                 hovertemplate=f"step %{{x}}<br>mean {col} %{{y:.4g}}<extra></extra>"),
                      row=r + 1, col=c + 1)
    fig.update_xaxes(title_text="generator step", row=2)
    return _plain(fig, "Training: one curve per objective", height=520)


def share_bars(table: pd.DataFrame, title: str, subtitle: str = "") -> go.Figure:
    """Real, synthetic and target shares per category (from :func:`fairness_core.statistics.augmentation.share_table`).
    ``title`` and ``subtitle`` are text, shown as typed (they may name a column or a category)."""
    fig = go.Figure()
    for col, color in (("real", "#9db4d3"), ("synthetic", "#2a9d8f"), ("target", "#222")):
        if col == "target":
            fig.add_trace(go.Scatter(x=table.index.astype(str), y=table[col], mode="markers", name="target",
                                     marker=dict(symbol="line-ew-open", size=28, line=dict(width=3, color=color)),
                                     hovertemplate="%{x}: target %{y:.1%}<extra></extra>"))
        else:
            fig.add_trace(go.Bar(x=table.index.astype(str), y=table[col], name=col, marker_color=color,
                                 hovertemplate=f"%{{x}}: {col} %{{y:.1%}}<extra></extra>"))
    fig.update_layout(barmode="group", yaxis=dict(tickformat=".0%", title="share"))
    fig.update_xaxes(tickangle=-25, type="category")
    head = plotly_text(title) + (f"<br><sup>{plotly_text(subtitle)}</sup>" if subtitle else "")
    return _plain(fig, head, height=360, wrap=False)


def c2st_chart(table: pd.DataFrame, goal: float | None = None) -> go.Figure:
    """Classifier two-sample tests as dots with their 95 % intervals (rows of
    ``models.experiment.assess_realism``'s table: AUC, 95% low, 95% high): 0.5 means a
    classifier cannot tell the rows from held-out real ones."""
    names = [str(i) for i in table.index]
    colors = ["#2a9d8f" if k == 0 else "#8c8c8c" for k in range(len(names))]
    fig = go.Figure(go.Scatter(
        x=table["AUC"], y=names, mode="markers", marker=dict(size=13, color=colors),
        error_x=dict(type="data", symmetric=False, array=table["95% high"] - table["AUC"],
                     arrayminus=table["AUC"] - table["95% low"], thickness=2, width=6),
        customdata=np.column_stack([table["95% low"], table["95% high"], table["n per side"]]),
        hovertemplate="%{y}: AUC %{x:.3f} (95 %: %{customdata[0]:.3f}–%{customdata[1]:.3f}), "
                      "%{customdata[2]:,} rows per side<extra></extra>", showlegend=False))
    fig.add_vline(x=0.5, line=dict(color="#222", width=1, dash="dot"),
                  annotation_text="indistinguishable", annotation_position="top")
    if goal is not None:
        fig.add_vline(x=goal, line=dict(color="#c0392b", width=1, dash="dash"),
                      annotation_text=f"goal ≤ {goal:g}", annotation_position="bottom")
    lo = min(0.45, float(np.nanmin(table["95% low"])) - 0.02)
    hi = max(0.75, float(np.nanmax(table["95% high"])) + 0.02)
    fig.update_xaxes(range=[lo, min(hi, 1.0)], title="classifier AUC, synthetic or reference vs held-out real rows")
    fig.update_yaxes(autorange="reversed")
    return _plain(fig, "Can a classifier tell these rows from real ones?<br><sup>two-sample test on held-out real "
                       "rows at their mix of groups and labels; bars: 95 % intervals</sup>", height=300)


def before_after(summary: pd.DataFrame) -> go.Figure:
    """Briscoe 2024, Table 3.4 as a picture: per metric and group, the classifier trained on real data vs
    augmented data (mean ± sd over seeds), with the no-bias pivot as a line."""
    metrics_ = list(dict.fromkeys(summary["metric"]))
    fig = make_subplots(rows=-(-len(metrics_) // 2), cols=2, subplot_titles=metrics_, horizontal_spacing=0.08,
                        vertical_spacing=0.2)
    for k, name in enumerate(metrics_):
        r, c = divmod(k, 2)
        s = summary[summary["metric"] == name]
        for col, color, shift in (("real", "#8c8c8c", -0.12), ("augmented", "#2a9d8f", 0.12)):
            fig.add_trace(go.Scatter(
                x=s["group"], y=s[col], mode="markers", name=f"trained on {col} data", legendgroup=col,
                showlegend=k == 0, marker=dict(size=11, color=color),
                error_y=dict(type="data", array=s[f"{col} sd"].fillna(0), color=color, thickness=1.5, width=5),
                customdata=np.column_stack([s[f"{col} sd"].fillna(np.nan), s["improvement"]]),
                hovertemplate=f"%{{x}}<br>{name} ({col}) = %{{y:.4f}} ± %{{customdata[0]:.4f}}<br>"
                              "improvement %{customdata[1]:+.4f}<extra></extra>",
            ), row=r + 1, col=c + 1)
        fig.add_hline(y=bias.info(name).pivot, line=dict(color="#c0392b", width=1, dash="dot"), row=r + 1, col=c + 1)
    fig.update_xaxes(tickangle=-25)
    return _plain(fig, "Bias of a classifier tested on held-out real rows: trained on real vs augmented data"
                       "<br><sup>each group against the rest; dots: mean over seeds, bars: ± 1 sd; red: no bias</sup>",
                  height=330 * -(-len(metrics_) // 2) + 60)


# --- Forecasting (PTN) ----------------------------------------------------------------------

def quantile_fan(fan: np.ndarray, levels: tuple[float, ...], truth: np.ndarray | None = None,
                 deterministic: np.ndarray | None = None, title: str = "Quantile fan",
                 y_title: str = "target (scaled to [0, 1])") -> go.Figure:
    """Nested bands between symmetric quantiles (5–95, 10–90, 25–75 %), the median, the truth and the
    deterministic forecast. ``fan`` is (len(levels), τ) with levels ascending and symmetric."""
    fan = np.asarray(fan, dtype=float)
    steps = np.arange(1, fan.shape[1] + 1)
    k = len(levels)
    fig = go.Figure()
    blues = ["rgba(33,113,181,0.18)", "rgba(33,113,181,0.28)", "rgba(33,113,181,0.42)"]
    for i in range(k // 2):
        lo, hi = fan[i], fan[k - 1 - i]
        name = f"{levels[i]:.0%}–{levels[k - 1 - i]:.0%}"
        fig.add_trace(go.Scatter(x=steps, y=hi, mode="lines", line=dict(width=0), showlegend=False, hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=steps, y=lo, mode="lines", line=dict(width=0), fill="tonexty",
                                 fillcolor=blues[min(i, len(blues) - 1)], name=name,
                                 hovertemplate=f"step %{{x}}: {name} band<extra></extra>"))
    fig.add_trace(go.Scatter(x=steps, y=fan[k // 2], mode="lines", line=dict(color="#08519c", width=2.5),
                             name="median", hovertemplate="step %{x}: median %{y:.4f}<extra></extra>"))
    if deterministic is not None:
        fig.add_trace(go.Scatter(x=steps, y=deterministic, mode="lines", line=dict(color="#c0392b", width=2, dash="dash"),
                                 name="deterministic forecast", hovertemplate="step %{x}: %{y:.4f}<extra></extra>"))
    if truth is not None:
        fig.add_trace(go.Scatter(x=steps, y=truth, mode="lines+markers", line=dict(color="#111", width=2),
                                 marker=dict(size=5), name="truth", hovertemplate="step %{x}: %{y:.4f}<extra></extra>"))
    fig.update_xaxes(title="steps ahead", dtick=1 if len(steps) <= 20 else None)
    fig.update_yaxes(title=y_title)
    return _plain(fig, title, height=400, legend_below=True)


def ptn_losses(records: pd.DataFrame) -> go.Figure:
    """Training (DARTS weight split) and validation (architecture split) losses per epoch, in run order:
    the search's agents one after another, then the best agent retrained, then TiDE."""
    df = records[records["epoch"].notna()].reset_index(drop=True)
    x = np.arange(1, len(df) + 1)
    fig = go.Figure()
    label = df["phase"].map({"search": "search", "final": "best agent", "tide": "TiDE"}).fillna(df["phase"])
    custom = np.column_stack([label, df.get("generation", pd.Series(np.nan, index=df.index)).fillna(0),
                              df.get("agent", pd.Series(np.nan, index=df.index)).fillna(0), df["epoch"]])
    for col, color, name in (("train_loss", "#2171b5", "training loss"), ("val_loss", "#e9a23b", "validation loss")):
        if col in df:
            fig.add_trace(go.Scatter(x=x, y=df[col], mode="lines+markers", marker=dict(size=4), line=dict(color=color),
                                     name=name, customdata=custom,
                                     hovertemplate="%{customdata[0]} · gen %{customdata[1]}, agent %{customdata[2]}, "
                                                   "epoch %{customdata[3]}<br>%{y:.5f}<extra></extra>"))
    for phase, color in (("final", "rgba(42,157,143,0.10)"), ("tide", "rgba(140,140,140,0.12)")):
        idx = np.flatnonzero(df["phase"].to_numpy() == phase)
        if idx.size:
            # the best agent's region is narrow next to TiDE's: its label sits at its left edge, TiDE's at its right
            fig.add_vrect(x0=idx[0] + 0.5, x1=idx[-1] + 1.5, fillcolor=color, line_width=0,
                          annotation_text="best agent" if phase == "final" else "TiDE",
                          annotation_position="top right" if phase == "tide" else "top left")
    fig.update_xaxes(title="epoch (in run order)")
    fig.update_yaxes(title="ordered CRPS (eq. 5.9)", type="log")
    return _plain(fig, "Loss curves", height=360)


def ga_fitness(agents: pd.DataFrame) -> go.Figure:
    """Each agent's fitness (CRPS on the GA training part) and validation fitness per generation."""
    fig = go.Figure()
    for col, color, sym in (("fitness", "#2171b5", "circle"), ("val_fitness", "#e9a23b", "diamond")):
        fig.add_trace(go.Scatter(x=agents["generation"] + (0.08 if col == "val_fitness" else -0.08), y=agents[col],
                                 mode="markers", marker=dict(size=10, color=color, symbol=sym),
                                 name="fitness (GA train)" if col == "fitness" else "validation fitness (GA val)",
                                 customdata=np.column_stack([agents["agent"], agents["hidden"]]),
                                 hovertemplate="generation %{x:.0f}, agent %{customdata[0]} (d = %{customdata[1]})"
                                               "<br>CRPS %{y:.5f}<extra></extra>"))
    best = agents.groupby("generation")["val_fitness"].min()
    fig.add_trace(go.Scatter(x=best.index, y=best.to_numpy(), mode="lines", line=dict(color="#e9a23b", dash="dot"),
                             name="best validation fitness", hoverinfo="skip"))
    fig.update_xaxes(title="generation", dtick=1)
    fig.update_yaxes(title="CRPS (lower is fitter)")
    return _plain(fig, "Genetic search: the population's fitness per generation", height=360, legend_below=True)


def architecture_bars(architecture: dict[str, dict[str, float]]) -> go.Figure:
    """DARTS architecture weights (softmax) of each mixed operation."""
    names = list(architecture)
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=names, horizontal_spacing=0.08)
    for k, name in enumerate(names):
        ops = architecture[name]
        fig.add_trace(go.Bar(x=list(ops), y=list(ops.values()), marker_color=PALETTE[k % len(PALETTE)],
                             text=[f"{v:.3f}" for v in ops.values()], textposition="outside", showlegend=False,
                             hovertemplate="%{x}: %{y:.4f}<extra></extra>"), row=1, col=k + 1)
    # room above 1 for a decided operation's label, which would otherwise sit on its subplot's title; ticks to 1
    fig.update_yaxes(range=[0, 1.2], tickvals=[0, 0.25, 0.5, 0.75, 1])
    fig.update_yaxes(title_text="softmax weight", row=1, col=1)
    return _plain(fig, "DARTS architecture weights (equal = undecided)", height=330)


def crps_boxes(table: pd.DataFrame) -> go.Figure:
    """Per-forecast CRPS on the test part for PTN and both baselines (log scale)."""
    fig = go.Figure()
    for k, col in enumerate(table.columns):
        v = table[col].to_numpy(dtype=float)
        q = np.quantile(v, [0.05, 0.25, 0.5, 0.75, 0.95])
        fig.add_trace(go.Box(x=[col], q1=[q[1]], median=[q[2]], q3=[q[3]], lowerfence=[q[0]], upperfence=[q[4]],
                             mean=[v.mean()], boxmean=True, marker_color=PALETTE[k], name=col, showlegend=False))
    fig.update_yaxes(type="log", title="CRPS per test forecast")
    return _plain(fig, "CRPS per test forecast (whiskers 5–95 %)", height=360)


safe_figures(globals())
