"""Plotly figures for the dashboard. Each function returns a ``go.Figure``, so tests
check the figure's data without a browser and pages only place them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from . import bias
from . import metrics as m
from .audit import Audit

UNDEFINED_COLOR = "#d9d9d9"
FAVOURS_I = "#2166ac"  # blue: the score leans toward group i (the row)
FAVOURS_J = "#b2182b"  # red: toward group j (the column)
NEUTRAL = "#f7f7f7"
FONT = dict(family="Inter, Segoe UI, Helvetica, Arial, sans-serif", size=13)


def _fmt(x: float, digits: int = 3) -> str:
    return "undefined" if not np.isfinite(x) else f"{x:.{digits}f}"


def _layout(fig: go.Figure, title: str, n_groups: int) -> go.Figure:
    size = max(380, min(720, 130 + 70 * n_groups))
    fig.update_layout(
        title=dict(text=title, x=0.0, xanchor="left", font=dict(size=16)),
        font=FONT, height=size, margin=dict(l=10, r=10, t=75, b=10),
        plot_bgcolor="white", paper_bgcolor="white",
        xaxis=dict(title="group j", side="bottom", tickangle=-30, showgrid=False),
        yaxis=dict(title="group i", autorange="reversed", showgrid=False),
    )
    return fig


def _pair_hover(audit: Audit, name: str, values: np.ndarray) -> np.ndarray:
    """Hover text per cell: both groups with n, the formula terms, the value or why undefined."""
    groups = audit.groups
    info = bias.info(name)
    out = np.empty((len(groups), len(groups)), dtype=object)
    for a, gi in enumerate(groups):
        ci = audit.cms[gi]
        for b, gj in enumerate(groups):
            cj = audit.cms[gj]
            lines = [f"<b>i = {gi}</b> (n = {ci.n:,})", f"<b>j = {gj}</b> (n = {cj.n:,})"]
            lines += _terms(name, ci, cj)
            v = values[a, b]
            if np.isfinite(v):
                lines.append(f"<b>{name} = {v:+.4f}</b>" if name != "DI" else f"<b>DI = {v:.4f}</b>")
            else:
                lines.append(f"<b>{name} undefined</b>: {bias.undefined_reason(name, ci, cj)}")
            lines.append(f"<i>{info.formula}</i>")
            out[a, b] = "<br>".join(lines)
    return out


def _terms(name: str, ci, cj) -> list[str]:  # type: ignore[no-untyped-def]
    if name == "OFI":
        return [f"B_{s} = (FP − FN)/n = ({c.fp:,} − {c.fn:,})/{c.n:,} = {_fmt(m.compute('B', c), 4)}"
                for s, c in (("i", ci), ("j", cj))]
    if name in ("DI", "DPPL", "SP"):
        return [f"P^_{s}/n_{s} = {c.predicted_positives:,}/{c.n:,} = {_fmt(m.compute('PPR', c), 4)}"
                for s, c in (("i", ci), ("j", cj))]
    parts = {"ACCD": "ACC", "MCCD": "MCC", "PP": "PPV", "EO_TPR": "TPR", "EO_FPR": "FPR"}
    if name in parts:
        k = parts[name]
        return [f"{k}_{s} = {_fmt(m.compute(k, c), 4)}" for s, c in (("i", ci), ("j", cj))]
    if name == "AAOD":
        return [f"TPR_{s} = {_fmt(m.compute('TPR', c), 4)}, FPR_{s} = {_fmt(m.compute('FPR', c), 4)}"
                for s, c in (("i", ci), ("j", cj))]
    if name == "TE":
        return [f"FN_{s}/FP_{s} = {c.fn:,}/{c.fp:,}" for s, c in (("i", ci), ("j", cj))]
    if name == "DCA":
        return [f"P_{s}/P^_{s} = {c.positives:,}/{c.predicted_positives:,}" for s, c in (("i", ci), ("j", cj))]
    if name == "DCR":
        return [f"N_{s}/N^_{s} = {c.negatives:,}/{c.predicted_negatives:,}" for s, c in (("i", ci), ("j", cj))]
    return []


def _cell_text(values: np.ndarray, digits: int = 3, signed: bool = True) -> np.ndarray:
    fmt = f"{{:+.{digits}f}}" if signed else f"{{:.{digits}f}}"
    return np.vectorize(lambda v: fmt.format(v) if np.isfinite(v) else "undefined", otypes=[object])(values)


def pairwise_heatmap(audit: Audit, name: str) -> go.Figure:
    """Heatmap of comparison ``name`` for every pair (rows i, columns j), diverging around its pivot.

    DI gets :func:`disparate_impact_heatmap` (banded by the four-fifths rule);
    every other metric a red-white-blue scale centred on its pivot, blue where
    the score leans toward group i. Undefined cells are grey and say so.
    """
    if name == "DI":
        return disparate_impact_heatmap(audit)
    df = audit.pairwise(name)
    values = df.to_numpy(dtype=float)
    info = bias.info(name)
    finite = np.abs(values[np.isfinite(values)] - info.pivot)
    span = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    fig = go.Figure(go.Heatmap(
        z=values, x=df.columns.tolist(), y=df.index.tolist(),
        zmin=info.pivot - span, zmax=info.pivot + span, zmid=info.pivot,
        colorscale=[[0, FAVOURS_J], [0.5, NEUTRAL], [1, FAVOURS_I]],
        text=_cell_text(values), texttemplate="%{text}", textfont=dict(size=12),
        hovertext=_pair_hover(audit, name, values), hoverinfo="text", xgap=2, ygap=2,
        colorbar=dict(title=dict(text=name, side="right"), thickness=14),
    ))
    _add_undefined_labels(fig, df, values)
    title = (f"{name} = {info.formula}<br><sup>{info.long_name} · pivot {info.pivot:g} · "
             f"blue leans to row group i</sup>")
    if name == "OFI":
        title = "OFI = B_i − B_j<br><sup>blue: favours row group i · red: favours column group j</sup>"
    return _layout(fig, title, len(df))


def _add_undefined_labels(fig: go.Figure, df: pd.DataFrame, values: np.ndarray) -> None:
    """NaN cells are transparent in a heatmap: paint them grey and label them "undefined"."""
    rows, cols = np.nonzero(~np.isfinite(values))
    if rows.size:
        fig.add_trace(go.Heatmap(
            z=np.where(np.isfinite(values), np.nan, 1.0), x=df.columns.tolist(), y=df.index.tolist(),
            colorscale=[[0, UNDEFINED_COLOR], [1, UNDEFINED_COLOR]], showscale=False, xgap=2, ygap=2,
            hoverinfo="skip",
        ))
        fig.add_trace(go.Scatter(
            x=[df.columns[c] for c in cols], y=[df.index[r] for r in rows], mode="text",
            text=["undefined"] * rows.size, textfont=dict(size=11, color="#444"),
            hoverinfo="skip", showlegend=False,
        ))


def disparate_impact_heatmap(audit: Audit) -> go.Figure:
    """DI for every pair, coloured by the four-fifths rule: DI < 4/5 bias for j (red),
    DI > 5/4 bias for i (blue), between no bias (white); undefined grey."""
    df = audit.pairwise("DI")
    values = df.to_numpy(dtype=float)
    band = np.full(values.shape, np.nan)
    ok = np.isfinite(values)
    band[ok] = np.where(values[ok] < bias.FOUR_FIFTHS_LOW, -1.0,
                        np.where(values[ok] > bias.FOUR_FIFTHS_HIGH, 1.0, 0.0))
    fig = go.Figure(go.Heatmap(
        z=band, x=df.columns.tolist(), y=df.index.tolist(), zmin=-1.5, zmax=1.5,
        colorscale=[[0, FAVOURS_J], [1 / 3, FAVOURS_J], [1 / 3, NEUTRAL], [2 / 3, NEUTRAL],
                    [2 / 3, FAVOURS_I], [1, FAVOURS_I]],
        text=_cell_text(values, 2, signed=False), texttemplate="%{text}", textfont=dict(size=12),
        hovertext=_pair_hover(audit, "DI", values), hoverinfo="text", xgap=2, ygap=2,
        colorbar=dict(title=dict(text="four-fifths", side="right"), thickness=14,
                      tickvals=[-1, 0, 1], ticktext=["< 4/5: bias for j", "no bias", "> 5/4: bias for i"]),
    ))
    _add_undefined_labels(fig, df, values)
    return _layout(fig, "DI = (P^_i/n_i) / (P^_j/n_j)<br><sup>four-fifths rule: blue > 5/4 · red < 4/5</sup>",
                   len(df))


def benefit_chart(audit: Audit) -> go.Figure:
    """Per group: benefit b = P^/n against expected benefit E[b] = P/n; the gap is B."""
    table = audit.group_table(["PPR", "PREV", "B"])
    groups = table.index.tolist()
    fig = go.Figure()
    for g in groups:
        fig.add_trace(go.Scatter(
            x=[table.at[g, "PREV"], table.at[g, "PPR"]], y=[g, g], mode="lines",
            line=dict(color=FAVOURS_I if table.at[g, "B"] >= 0 else FAVOURS_J, width=4),
            hoverinfo="skip", showlegend=False,
        ))
    custom = np.column_stack([table["n"], table["B"]])
    fig.add_trace(go.Scatter(
        x=table["PREV"], y=groups, mode="markers", name="expected benefit E[b] = P/n (labels)",
        marker=dict(symbol="circle-open", size=12, color="#333", line=dict(width=2)), customdata=custom,
        hovertemplate="%{y} (n = %{customdata[0]:,})<br>E[b] = %{x:.4f}<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        x=table["PPR"], y=groups, mode="markers", name="benefit b = P^/n (predictions)",
        marker=dict(size=12, color="#333"), customdata=custom,
        hovertemplate="%{y} (n = %{customdata[0]:,})<br>b = %{x:.4f}<br>B = b − E[b] = %{customdata[1]:+.4f}"
                      "<extra></extra>",
    ))
    fig.update_layout(
        title=dict(text="Benefit vs expected benefit per group (the bar is the marginal benefit B)", x=0),
        font=FONT, height=max(260, 90 + 40 * len(groups)), margin=dict(l=10, r=10, t=60, b=10),
        xaxis=dict(title="share of the group", range=[-0.02, 1.02], gridcolor="#eee"),
        yaxis=dict(autorange="reversed"), plot_bgcolor="white",
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1),
    )
    return fig


def group_metric_chart(audit: Audit, name: str) -> go.Figure:
    """Bar chart of one single-group metric across groups; undefined groups are labelled, never drawn as 0."""
    table = audit.group_table([name])
    v = table[name].to_numpy(dtype=float)
    groups = table.index.tolist()
    ok = np.isfinite(v)
    fig = go.Figure(go.Bar(
        x=groups, y=np.where(ok, v, np.nan), marker_color="#4a6fa5",
        text=[_fmt(x) for x in v], textposition="outside", customdata=table["n"],
        hovertemplate="%{x} (n = %{customdata:,})<br>" + name + " = %{y:.4f}<extra></extra>",
    ))
    if (~ok).any():
        fig.add_trace(go.Scatter(
            x=[g for g, k in zip(groups, ok) if not k], y=[0] * int((~ok).sum()), mode="text",
            text=["undefined"] * int((~ok).sum()), textposition="top center", hoverinfo="skip", showlegend=False,
        ))
    fig.update_layout(title=dict(text=f"{name} = {m.info(name).formula} per group", x=0), font=FONT,
                      height=360, margin=dict(l=10, r=10, t=60, b=10), plot_bgcolor="white",
                      yaxis=dict(gridcolor="#eee"), showlegend=False)
    return fig
