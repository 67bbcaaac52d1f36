"""Figures of the Sample-Size Explorer: distributions over M(n), holes, MATCH, class and group imbalance."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ...common.vocabulary import check_alpha
from ...common.vocabulary import adjustment
from ._base import PALETTE, UNDEFINED_BAR, _plain, _shades, plotly_text, safe_figures


def metric_cdfs(table: pd.DataFrame) -> go.Figure:
    """Step CDFs of each metric over M(n), one line per n (Briscoe 2024, Fig. 4.2), from
    :func:`fairness_core.sample_size.cdf_table`. A curve tops out at 1 − P(undefined)."""
    metrics_ = list(dict.fromkeys(table["metric"]))
    ns = sorted(table["n"].unique())
    cols = min(3, len(metrics_))
    rows = -(-len(metrics_) // cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=metrics_, horizontal_spacing=0.06,
                        vertical_spacing=0.16 if rows > 1 else 0.1, shared_yaxes=True)
    colours = dict(zip(ns, _shades(len(ns))))
    for k, metric in enumerate(metrics_):
        r, c = divmod(k, cols)
        for n in ns:
            g = table[(table["metric"] == metric) & (table["n"] == n)]
            if g.empty:
                continue
            undef = float(g["p_undefined"].iloc[0])
            x = np.concatenate([[g["value"].iloc[0]], g["value"].to_numpy()])
            y = np.concatenate([[0.0], g["cdf"].to_numpy()])
            fig.add_trace(go.Scatter(
                x=x, y=y, mode="lines", line=dict(shape="hv", color=colours[n], width=2),
                name=f"n = {n}", legendgroup=str(n), showlegend=k == 0,
                hovertemplate=(f"{metric}, n = {n}<br>P(S ≤ %{{x:.4f}}) = %{{y:.4f}}<br>"
                               f"undefined: {undef:.2%}<extra></extra>"),
            ), row=r + 1, col=c + 1)
    fig.update_yaxes(range=[0, 1.02])
    return _plain(fig, "Exact CDFs over all confusion matrices of size n<br><sup>a curve stops short of 1 by "
                       "the share of matrices where the metric is undefined</sup>", height=300 * rows + 120)


def hole_counts(table: pd.DataFrame) -> go.Figure:
    """Holes per metric against n (markers: enumeration; dashed: Briscoe 2024, Theorem 4.3; grey: C(n+3, 3))."""
    fig = go.Figure()
    for k, metric in enumerate(dict.fromkeys(table["metric"])):
        g = table[table["metric"] == metric]
        colour = PALETTE[k % len(PALETTE)]
        fig.add_trace(go.Scatter(x=g["n"], y=g["holes"], mode="markers+lines", name=f"{metric} (enumerated)",
                                 line=dict(color=colour, width=2), marker=dict(size=7), legendgroup=metric,
                                 customdata=g["share"],
                                 hovertemplate=f"{metric}, n = %{{x}}: %{{y:,}} holes (%{{customdata:.2%}})"
                                               "<extra></extra>"))
        label = "theorem lower bound" if metric == "PT" else "theorem"
        fig.add_trace(go.Scatter(x=g["n"], y=g["theorem"], mode="lines", name=f"{metric} ({label})",
                                 line=dict(color=colour, dash="dash", width=1.5), legendgroup=metric,
                                 hovertemplate=f"{metric} {label}, n = %{{x}}: %{{y:,.0f}}<extra></extra>"))
    first = table.drop_duplicates("n")
    fig.add_trace(go.Scatter(x=first["n"], y=first["matrices"], mode="lines", name="all matrices C(n+3, 3)",
                             line=dict(color="#999", width=3),
                             hovertemplate="n = %{x}: %{y:,} matrices<extra></extra>"))
    fig.update_yaxes(type="log", title="matrices (log scale)")
    fig.update_xaxes(title="n")
    return _plain(fig, "Holes: matrices of size n where the metric is undefined", height=460, legend_below=True)


def pmf_bars(x: np.ndarray, mass: np.ndarray, title: str, *, subtitle: str = "", observed: float | None = None,
             tail: str | None = None, p_value: float | None = None, exact: bool = True,
             x_title: str = "score") -> go.Figure:
    """A distribution as bars. With ``observed``, a dotted line there; with ``tail`` ("lower" or
    "upper") the bars of that tail (S <= observed, or S >= observed) are red: the smaller tail,
    which the two-sided p-value doubles. ``title`` is text (it may name a group: shown as typed);
    ``subtitle`` is the caller's own Plotly markup, with no user text in it."""
    colour = np.full(x.shape, "#9db4d3", dtype=object)
    if observed is not None and tail in ("lower", "upper") and x.size:
        step = float(np.min(np.diff(np.sort(x)))) / 2 if x.size > 1 else 0.0
        colour[(x <= observed + (step if not exact else 1e-12)) if tail == "lower"
               else (x >= observed - (step if not exact else 1e-12))] = "#c8553d"
    width = float(np.min(np.diff(np.sort(x)))) * 0.9 if x.size > 1 else 0.05
    fig = go.Figure(go.Bar(x=x, y=mass, marker_color=colour.tolist(), width=width,
                           hovertemplate="S = %{x:.4f}<br>P = %{y:.4g}<extra></extra>", name="reference"))
    if observed is not None and np.isfinite(observed):
        label = f"observed {observed:.3f}" + (f" · p = {p_value:.3g}" if p_value is not None else "")
        fig.add_vline(x=observed, line=dict(color="#222", width=2, dash="dot"),
                      annotation=dict(text=label, font=dict(size=12), bgcolor="rgba(255,255,255,0.85)"))
    fig.update_xaxes(title=x_title)
    fig.update_yaxes(title="probability" if exact else "probability per bin")
    fig.update_layout(showlegend=False)
    head = plotly_text(title) + (f"<br><sup>{subtitle}</sup>" if subtitle else "")
    return _plain(fig, head, height=380, wrap=False)


def match_overview(table: pd.DataFrame, alpha: float = 0.05) -> go.Figure:
    """One dot per (group, metric): −log10 of the (adjusted) p-value, with the alpha line.

    Right of the line: the group differs from its reference beyond small-sample noise.
    """
    check_alpha(alpha)
    use_adj = table["adjusted p-value"].notna().any()
    p = table["adjusted p-value" if use_adj else "p-value"].to_numpy(dtype=float)
    score = np.minimum(-np.log10(np.clip(p, 1e-300, 1)), 30)
    fig = go.Figure()
    for k, metric in enumerate(dict.fromkeys(table["metric"])):
        sel = (table["metric"] == metric).to_numpy() & np.isfinite(p)
        g = table[sel]
        fig.add_trace(go.Scatter(
            x=score[sel], y=g["group"], mode="markers", name=metric,
            marker=dict(size=13, color=PALETTE[k % len(PALETTE)], symbol=k % 8, line=dict(width=1, color="white")),
            customdata=np.column_stack([g["n"], g["observed"], g["reference score"], p[sel]]),
            hovertemplate=("%{y} (n = %{customdata[0]:,})<br>" + metric + " = %{customdata[1]:.3f} vs "
                           "reference %{customdata[2]:.3f}<br>p = %{customdata[3]:.3g}<extra></extra>"),
        ))
    fig.add_vline(x=-np.log10(alpha), line=dict(color="#c0392b", dash="dash"),
                  annotation=dict(text=f"α = {alpha:g}", font=dict(color="#c0392b")))
    groups = list(dict.fromkeys(table["group"]))
    fig.update_yaxes(categoryorder="array", categoryarray=groups[::-1])
    prefix = adjustment(table.attrs.get("adjust", "holm")).prefix if use_adj else ""
    fig.update_xaxes(title=f"−log10 {prefix}p (capped at 30)",
                     rangemode="tozero")
    return _plain(fig, "MATCH: which group scores are beyond small-sample noise?<br><sup>left of the red line: "
                       "indistinguishable from the reference at this group size</sup>",
                  height=max(320, 130 + 38 * len(groups)))


def spread_vs_n(mc: pd.DataFrame, exact: pd.DataFrame, metric: str, label: str, max_dots: int = 100) -> go.Figure:
    """Monte Carlo scores of samples of each size (dots, at most ``max_dots`` per n) under the
    exact quantile bands (Briscoe 2024, Fig. 4.1). SVG throughout so the bands draw over the dots.
    ``label`` names what the samples are drawn from (a group name: shown as text)."""
    fig = go.Figure()
    rng = np.random.default_rng(0)
    shown = mc[mc["value"].notna()].groupby("n", group_keys=False).head(max_dots)
    jitter = rng.uniform(-0.3, 0.3, len(shown))
    fig.add_trace(go.Scatter(x=shown["n"] + jitter, y=shown["value"], mode="markers",
                             marker=dict(size=3, color="#2b4c7e", opacity=0.35),
                             name=f"Monte Carlo samples (≤ {max_dots} per n shown)", hoverinfo="skip"))
    bands = (("q05", "q95", "exact 5–95%", "rgba(200, 85, 61, 0.25)"), ("q25", "q75", "exact 25–75%",
                                                                         "rgba(200, 85, 61, 0.45)"))
    for lo, hi, name, fill in bands:
        fig.add_trace(go.Scatter(x=exact["n"], y=exact[lo], mode="lines", line=dict(width=0, shape="hvh"),
                                 legendgroup=name, showlegend=False, hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=exact["n"], y=exact[hi], mode="lines", name=name, legendgroup=name,
                                 line=dict(width=0, shape="hvh"), fill="tonexty", fillcolor=fill,
                                 customdata=exact[lo],
                                 hovertemplate=f"n = %{{x}}: {name} [%{{customdata:.3f}}, %{{y:.3f}}]<extra></extra>"))
    fig.add_trace(go.Scatter(x=exact["n"], y=exact["q50"], mode="lines", name="exact median",
                             line=dict(color="#222", width=2, shape="hvh"),
                             customdata=exact["p_undefined"],
                             hovertemplate="n = %{x}: median %{y:.3f}, undefined %{customdata:.1%}<extra></extra>"))
    fig.update_xaxes(title="sample size n")
    fig.update_yaxes(title=metric)
    return _plain(fig, f"{metric} of samples drawn from {plotly_text(label)}<br><sup>spread shrinks, jaggedness stays</sup>",
                  height=440, wrap=False)


def normal_convergence(metric: str, pmfs: dict[int, tuple[np.ndarray, np.ndarray]]) -> go.Figure:
    """PMFs of ACC or B for growing n as densities (mass × n), with each n's normal density dashed (Briscoe 2024, Fig. 4.3)."""
    fig = go.Figure()
    colours = dict(zip(sorted(pmfs), _shades(len(pmfs))))
    for n in sorted(pmfs):
        x, probs = pmfs[n]
        keep = probs > 1e-12
        mu = float(x @ probs)
        sd = float(np.sqrt(probs @ (x - mu) ** 2))
        fig.add_trace(go.Scatter(x=x[keep], y=probs[keep] * n, mode="lines+markers", name=f"n = {n}",
                                 legendgroup=str(n), line=dict(color=colours[n], width=2, shape="hvh"),
                                 marker=dict(size=4),
                                 hovertemplate=f"n = {n}: P(S = %{{x:.3f}}) = %{{customdata:.4g}}<extra></extra>",
                                 customdata=probs[keep]))
        if sd > 0:
            grid = np.linspace(x[keep].min(), x[keep].max(), 300)
            fig.add_trace(go.Scatter(x=grid, y=np.exp(-0.5 * ((grid - mu) / sd) ** 2) / (sd * np.sqrt(2 * np.pi)),
                                     mode="lines", line=dict(color=colours[n], dash="dot", width=1),
                                     legendgroup=str(n), showlegend=False, hoverinfo="skip"))
    fig.update_xaxes(title=metric)
    fig.update_yaxes(title="density (probability × n)")
    return _plain(fig, f"Exact distribution of {metric} as n grows (dotted: the normal with the same mean and sd)")


def normality_stats(table: pd.DataFrame, metric: str) -> go.Figure:
    """Skewness and excess kurtosis vs n, and the exact normal-approximation error beside Berry–Esseen."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("shape", "max |F(x) − Φ(x)|"), horizontal_spacing=0.1)
    for col, name, colour in (("skewness", "skewness", PALETTE[0]), ("excess_kurtosis", "excess kurtosis", PALETTE[1])):
        fig.add_trace(go.Scatter(x=table["n"], y=table[col], mode="lines+markers", name=name,
                                 line=dict(color=colour)), row=1, col=1)
    for col, name, colour, dash in (("berry_esseen", "Berry–Esseen bound (C0 = 0.56)", "#999", "dash"),
                                    ("max_error", "exact error, plain normal", PALETTE[2], "solid"),
                                    ("max_error_corrected", "exact error, continuity-corrected", PALETTE[3], "solid")):
        fig.add_trace(go.Scatter(x=table["n"], y=table[col], mode="lines+markers", name=name,
                                 line=dict(color=colour, dash=dash)), row=1, col=2)
    fig.update_xaxes(type="log", title="n")
    fig.update_yaxes(type="log", row=1, col=2)
    return _plain(fig, f"{metric}: how normal is it at n?", height=400, legend_below=True)


def imbalance_histograms(pmfs: list, bins: int = 21, max_spikes: int = 60) -> go.Figure:
    """As in *Properties of fairness measures*: one panel per measure, P(exactly 0) marked, P(undefined) as a red bar at the right.

    A measure with at most ``max_spikes`` distinct values is drawn exactly, one spike per value
    (binning k/12-spaced values into 0.1-wide bins would alias); otherwise a histogram of
    ``bins`` bins centred on −1, …, 0, …, 1. The subplot title says which.
    """
    from ...statistics.imbalance import LABELS

    cols = 3
    rows = -(-len(pmfs) // cols)
    titles = [f"{LABELS[p.measure]}<br><sup>P(0) = {p.p_perfect:.3f} · P(undef.) = {p.p_undefined:.3f} · "
              f"{'exact PMF' if p.values.size <= max_spikes else f'{bins} bins'}</sup>" for p in pmfs]
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=titles, vertical_spacing=0.2, horizontal_spacing=0.05,
                        shared_yaxes=True)
    for k, p in enumerate(pmfs):
        r, c = divmod(k, cols)
        if p.values.size <= max_spikes:  # few values: the exact PMF, one spike per value
            fig.add_trace(go.Bar(x=p.values, y=p.probs, width=0.025, marker_color="#4a6fa5",
                                 name="defined values", showlegend=k == 0, legendgroup="def",
                                 hovertemplate="%{x:.4f}: %{y:.4f}<extra></extra>"), row=r + 1, col=c + 1)
        else:
            edges, mass = p.histogram(bins)
            centres = (edges[:-1] + edges[1:]) / 2
            fig.add_trace(go.Bar(x=centres, y=mass, width=np.diff(edges) * 0.95, marker_color="#4a6fa5",
                                 name="defined values", showlegend=k == 0, legendgroup="def",
                                 hovertemplate="[%{x:.2f} ± " + f"{(edges[1] - edges[0]) / 2:.2f}" +
                                               "]: %{y:.4f}<extra></extra>"), row=r + 1, col=c + 1)
        fig.add_trace(go.Bar(x=[1.25], y=[p.p_undefined], width=[0.15], marker_color=UNDEFINED_BAR,
                             name="undefined", showlegend=k == 0, legendgroup="undef",
                             hovertemplate="undefined: %{y:.4f}<extra></extra>"), row=r + 1, col=c + 1)
        fig.add_trace(go.Scatter(x=[0.0], y=[p.p_perfect], mode="markers", marker=dict(symbol="diamond", size=9,
                                 color="#e9a23b", line=dict(color="#333", width=1)), name="exactly 0 (perfect)",
                                 showlegend=k == 0, legendgroup="zero",
                                 hovertemplate="P(exactly 0) = %{y:.4f}<extra></extra>"), row=r + 1, col=c + 1)
        fig.update_xaxes(tickvals=[-1, -0.5, 0, 0.5, 1, 1.25], ticktext=["−1", "−0.5", "0", "0.5", "1", "undef."],
                         range=[-1.15, 1.4], row=r + 1, col=c + 1)
    first = pmfs[0]
    return _plain(fig, f"Exact PMFs over all {first.total:,} two-group matrices with n = {first.n}, "
                       f"IR = {first.ir:.3f}, GR = {first.gr:.3f}", height=300 * rows + 140, legend_below=True)


def imbalance_lines(summary: pd.DataFrame, gr: float) -> go.Figure:
    """P(perfect fairness) and P(undefined) of each measure across IR (Properties of fairness measures, Figs 6 and 7)."""
    from ...statistics.imbalance import LABELS

    fig = make_subplots(rows=1, cols=2, subplot_titles=("P(perfect fairness: value exactly 0)", "P(undefined)"),
                        horizontal_spacing=0.08)
    for k, measure in enumerate(dict.fromkeys(summary["measure"])):
        g = summary[summary["measure"] == measure]
        for col, field in ((1, "p_perfect"), (2, "p_undefined")):
            fig.add_trace(go.Scatter(x=g["ir"], y=g[field], mode="lines+markers", name=LABELS[measure],
                                     legendgroup=measure, showlegend=col == 1, marker=dict(size=5),
                                     line=dict(color=PALETTE[k % len(PALETTE)], width=2),
                                     hovertemplate=f"{measure}<br>IR = %{{x:.3f}}: %{{y:.4f}}<extra></extra>"),
                          row=1, col=col)
    fig.update_xaxes(title="imbalance ratio IR (share of positives)", range=[0, 1])
    return _plain(fig, f"Across class imbalance at GR = {gr:.3f}", height=460, legend_below=True)


safe_figures(globals())
