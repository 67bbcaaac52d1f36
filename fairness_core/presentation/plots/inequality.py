"""Figures of the generalized entropy index and Virny's stability metrics."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ._base import PALETTE, UNDEFINED_BAR, _plain, plotly_text, safe_figures

WITHIN = "#9db4d3"
BETWEEN = "#c8553d"


def gei_decomposition(table: pd.DataFrame, chosen: float | None = None) -> go.Figure:
    """Stacked bars: within- and between-group parts of the index for each α, from
    :func:`fairness_core.entropy.decomposition_over_alpha`; α values that are not allowed
    are labelled "undefined", never drawn as 0."""
    labels = [f"α = {a:g}" + (" (chosen)" if chosen is not None and a == chosen else "") for a in table["alpha"]]
    ok = np.isfinite(table["total"].to_numpy(dtype=float))
    custom = np.column_stack([table["total"].fillna(0), table["between share"].fillna(0)])
    fig = go.Figure()
    for part, color in (("within", WITHIN), ("between", BETWEEN)):
        fig.add_trace(go.Bar(
            x=labels, y=table[part].where(ok), name=f"{part}-group", marker_color=color, customdata=custom,
            marker_line=dict(width=[2.5 if chosen is not None and a == chosen else 0 for a in table["alpha"]],
                             color="#222"),
            hovertemplate=f"%{{x}}<br>{part}-group %{{y:.4g}}<br>total %{{customdata[0]:.4g}}<br>"
                          "between share %{customdata[1]:.1%}<extra></extra>",
        ))
    if (~ok).any():
        fig.add_trace(go.Scatter(x=[lab for lab, k in zip(labels, ok) if not k], y=[0] * int((~ok).sum()),
                                 mode="text", text=["undefined"] * int((~ok).sum()), textposition="top center",
                                 hoverinfo="skip", showlegend=False, textfont=dict(color=UNDEFINED_BAR)))
    for lab, total, share in zip(labels, table["total"], table["between share"]):
        if np.isfinite(total):
            fig.add_annotation(x=lab, y=total, text=f"{total:.3g}" + (f"<br><sup>{share:.0%} between</sup>"
                                                                      if np.isfinite(share) else ""),
                               showarrow=False, yshift=18, font=dict(size=11))
    fig.update_layout(barmode="stack", yaxis_title="generalized entropy index")
    return _plain(fig, "Inequality of benefits across individuals, split into within- and between-group parts",
                  height=400)


#: How the point of everyone pooled is labelled (a group may itself be named "pooled" or "everyone pooled").
EVERYONE = "<i>everyone pooled</i>"


def _everyone(points: pd.DataFrame) -> pd.Series:
    """True on the row of everyone pooled: its ``everyone`` column, never its name."""
    if "everyone" not in points:
        return pd.Series(False, index=points.index)
    return points["everyone"].eq(True)


def _label_points(fig: go.Figure, points: pd.DataFrame, mu: np.ndarray, lam: np.ndarray) -> None:
    """Each point's name in a white box (readable on the darkest cell), above its marker, or below when
    a label already sits close above a neighbour; "everyone pooled" always below."""
    span_x = float(mu[-1] - mu[0]) or 1.0
    span_y = float(lam[-1] - lam[0]) or 1.0
    placed: list[tuple[float, float, int]] = []
    order = np.argsort(points["mu"].to_numpy(dtype=float), kind="stable")
    everyone = _everyone(points).to_numpy()
    for k in order:
        row = points.iloc[k]
        x, y = float(row["mu"]), float(row["lambda"])
        side = -1 if everyone[k] else 1
        if any(abs(x - px) / span_x < 0.12 and abs(y - py) / span_y < 0.12 and s == side for px, py, s in placed):
            side = -side
        placed.append((x, y, side))
        fig.add_annotation(x=x, y=y, text=EVERYONE if everyone[k] else plotly_text(row["group"]),
                           showarrow=False, yshift=16 * side, font=dict(size=11, color="#08306b"),
                           bgcolor="rgba(255,255,255,0.85)", borderpad=2)


def gei_landscape(mu: np.ndarray, lam: np.ndarray, grid: np.ndarray, points: pd.DataFrame,
                  alpha: float, unit_cells: tuple[str, str]) -> go.Figure:
    """The index over (μ, λ) for the chosen benefits (Utility as Fair Pricing, Fig. 1/4), the loaded groups marked.

    ``points`` has columns group, mu, lambda, n, index (from :func:`fairness_core.entropy.mu_lambda`), and
    ``everyone``, True on the row of everyone pooled (a diamond labelled in italics, so that a group named
    "pooled" or "everyone pooled" is still a group).
    Colours are capped at the 95th percentile so the steep corner near μ = 0 does not wash out the rest.
    """
    finite = grid[np.isfinite(grid)]
    cap = float(np.quantile(finite, 0.95)) if finite.size else 1.0
    fig = go.Figure(go.Heatmap(
        x=mu, y=lam, z=grid, zmin=0, zmax=cap, colorscale="YlOrRd", hoverongaps=False,
        colorbar=dict(title=dict(text="index", side="right"), thickness=14),
        hovertemplate="μ = %{x:.3f}<br>λ = %{y:.3f}<br>I = %{z:.4g}<extra></extra>",
    ))
    size = np.clip(6 + 3 * np.log10(points["n"].to_numpy(dtype=float)), 7, 20)
    pooled = _everyone(points)
    names = points["group"].map(plotly_text).where(~pooled, EVERYONE)
    for mask, symbol, color in ((~pooled, "circle", "#08306b"), (pooled, "diamond", "#000")):
        sub = points[mask]
        if len(sub):
            fig.add_trace(go.Scatter(
                x=sub["mu"], y=sub["lambda"], mode="markers", text=names[mask],
                marker=dict(size=size[mask.to_numpy()], color=color, symbol=symbol, line=dict(color="white", width=1.5)),
                customdata=np.column_stack([sub["n"], sub["index"]]), showlegend=False,
                hovertemplate="%{text} (n = %{customdata[0]:,})<br>μ = %{x:.4f}, λ = %{y:.4f}<br>"
                              "own index %{customdata[1]:.4g}<extra></extra>",
            ))
    _label_points(fig, points, mu, lam)
    fig.update_xaxes(title="mean benefit μ (in units of the unit reward)", showgrid=False, zeroline=False,
                     range=[float(mu[0]), float(mu[-1])])
    fig.update_yaxes(title=f"λ = share with the unit reward ({' + '.join(unit_cells)})", showgrid=False,
                     zeroline=False, range=[float(lam[0]), float(lam[-1])])
    fig = _plain(fig, f"The index over (μ, λ) for these benefits, α = {alpha:g} (Utility as Fair Pricing, Thm 3.2)<br><sup>grey: "
                      "impossible combinations; dots: each group's own (μ, λ), sized by n; ◆ everyone pooled</sup>",
                 height=480)
    fig.update_layout(plot_bgcolor="#e6e6e6")
    return fig


def stability_boxes(dist: pd.DataFrame) -> go.Figure:
    """Per-individual stability and uncertainty per group as boxes (5–25–50–75–95 % quantiles, mean
    as a diamond), one panel per metric, from :func:`fairness_core.stability.distribution_table`."""
    names = list(dict.fromkeys(dist["metric"]))
    cols = min(2, len(names))
    nrows = -(-len(names) // cols)
    fig = make_subplots(rows=nrows, cols=cols, subplot_titles=names, horizontal_spacing=0.08, vertical_spacing=0.2)
    groups = list(dict.fromkeys(dist["group"]))
    for k, metric in enumerate(names):
        d = dist[dist["metric"] == metric].set_index("group").reindex(groups)
        fig.add_trace(go.Box(
            x=groups, q1=d["q25"], median=d["q50"], q3=d["q75"], lowerfence=d["q05"], upperfence=d["q95"],
            mean=d["mean"], boxmean=True, marker_color=PALETTE[k % len(PALETTE)], name=metric, showlegend=False,
            hoverinfo="y+x",
        ), row=k // cols + 1, col=k % cols + 1)
    fig.update_xaxes(tickangle=-30)
    return _plain(fig, "Per-individual stability and uncertainty by group<br><sup>box: 25–75 %, whiskers 5–95 %, "
                       "line: median, dashed: mean</sup>", height=300 * nrows + 120)


def stability_disparities(disp: pd.DataFrame) -> go.Figure:
    """Dot plot of Virny's dis − priv differences, one row per metric, one colour per group (DI is a ratio
    and stays in the table)."""
    cols = [c for c in disp.columns if c != "DI"]
    fig = go.Figure()
    for k, g in enumerate(disp.index):
        v = disp.loc[g, cols].to_numpy(dtype=float)
        fig.add_trace(go.Scatter(x=v, y=cols, mode="markers", name=str(g),
                                 marker=dict(size=12, color=PALETTE[k % len(PALETTE)], line=dict(color="white", width=1)),
                                 hovertemplate=f"{plotly_text(g)}<br>%{{y}} = %{{x:+.4f}}<extra></extra>"))
    fig.add_vline(x=0, line=dict(color="#888", width=1))
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title=f"dis − priv ({plotly_text(disp.index.name.split('= ')[-1].rstrip(')'))} is priv)")
    return _plain(fig, "Disparities against the privileged group (0 = parity)", height=max(320, 90 + 34 * len(cols)),
                  legend_below=len(disp) > 4)


safe_figures(globals())
