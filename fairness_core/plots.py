"""Plotly figures for the dashboard. Each function returns a ``go.Figure``, so tests
check the figure's data without a browser and pages only place them."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from . import bias, inference, text
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
    """Hover text per cell: each group with its n and formula terms, the value or why undefined.

    Built from per-group pieces broadcast over rows and columns (NumPy string ufuncs), so 500
    groups (250,000 cells) take well under a second; only undefined cells ask for their reason.
    """
    groups = audit.groups
    info = bias.info(name)
    cms = [audit.cms[g] for g in groups]
    row = np.array([f"<b>i = {_hover_safe(g)}</b> (n = {c.n:,})" + "".join(f"<br>{t}" for t in _terms(name, c, c)[:1])
                    for g, c in zip(groups, cms)], dtype=text.STR)
    col = np.array([f"<br><b>j = {_hover_safe(g)}</b> (n = {c.n:,})" + "".join(f"<br>{t}" for t in _terms(name, c, c)[1:])
                    for g, c in zip(groups, cms)], dtype=text.STR)
    value = (f"<br><b>{name} = " + text.fixed(values, 4, signed=name != "DI") + "</b>").astype(text.STR)
    for a, b in zip(*np.nonzero(~np.isfinite(values))):
        if a != b:
            value[a, b] = f"<br><b>{name} undefined</b>: {_hover_safe(bias.undefined_reason(name, cms[a], cms[b]))}"
    out = row[:, None] + col[None, :] + value + f"<br><i>{info.formula}</i>"
    return out.astype(object)


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
    out = text.fixed(values, digits, signed).astype(object)
    out[~np.isfinite(values)] = "undefined"
    return out


def _pair_matrices(verdicts: pd.DataFrame, groups: list[str], name: str) -> dict[str, np.ndarray]:
    """The verdict table's interval, adjusted p and verdict as (row i, column j) matrices for OFI or DI.

    The table holds each unordered pair once (i before j); the mirrored cell gets −OFI with the
    interval negated, or 1/DI with the interval inverted. The diagonal stays empty.
    """
    k = len(groups)
    pos = {g: a for a, g in enumerate(groups)}
    a = verdicts["group_i"].map(pos).to_numpy()
    b = verdicts["group_j"].map(pos).to_numpy()
    col = name.lower()
    lo, hi = verdicts[f"{col}_ci_low"].to_numpy(float), verdicts[f"{col}_ci_high"].to_numpy(float)
    out = {"low": np.full((k, k), np.nan), "high": np.full((k, k), np.nan),
           "p": np.full((k, k), np.nan), "verdict": np.full((k, k), "", dtype=object)}
    out["low"][a, b], out["high"][a, b] = lo, hi
    with np.errstate(divide="ignore"):
        out["low"][b, a], out["high"][b, a] = (-hi, -lo) if name == "OFI" else (1 / hi, 1 / lo)
    p = verdicts[f"{col}_p_adjusted"].to_numpy(float)
    out["p"][a, b] = out["p"][b, a] = p
    out["verdict"][a, b] = out["verdict"][b, a] = verdicts["verdict"].to_numpy()
    return out


def _with_inference(hover: np.ndarray, cell_text: np.ndarray, mats: dict[str, np.ndarray], name: str,
                    alpha: float, adjust: str) -> tuple[np.ndarray, np.ndarray]:
    """Hover lines with the interval and adjusted p; cell text in parentheses where not significant
    (:func:`_fade_not_significant` also pales those cells). Vectorized over all cells."""
    level = f"{1 - alpha:.0%}"
    adj = inference.ADJUSTED_LABEL.get(adjust, "")
    lo, hi, p = mats["low"], mats["high"], mats["p"]
    shown = np.isfinite(lo) & ~np.eye(len(lo), dtype=bool)

    def bound(v: np.ndarray) -> np.ndarray:
        out = text.fixed(v, 3, signed=name == "OFI")
        out[np.isinf(v)] = "∞"
        return out

    extra = ("<br>" + level + " interval [" + bound(lo) + ", " + bound(hi) + "] · " + adj + text.p_values(p)
             + "<br>verdict: <b>" + mats["verdict"].astype(text.STR) + "</b>")
    hover = np.where(shown, hover.astype(text.STR) + extra, hover.astype(text.STR)).astype(object)
    faded = shown & ~(p < alpha) & (cell_text != "undefined") & (cell_text != "")
    cell_text = np.where(faded, "(" + cell_text.astype(text.STR) + ")", cell_text.astype(text.STR)).astype(object)
    return hover, cell_text


def _fade_not_significant(fig: go.Figure, df: pd.DataFrame, values: np.ndarray, p: np.ndarray, alpha: float) -> None:
    """A translucent white layer over defined cells whose adjusted p is not below alpha."""
    faded = np.isfinite(values) & ~(p < alpha)
    if faded.any():
        fig.add_trace(go.Heatmap(
            z=np.where(faded, 1.0, np.nan), x=df.columns.tolist(), y=df.index.tolist(), opacity=0.6,
            colorscale=[[0, "white"], [1, "white"]], showscale=False, xgap=2, ygap=2, hoverinfo="skip",
        ))


#: Most groups a heatmap draws (3,600 cells); beyond it the largest groups are shown and the title says so.
MAX_HEATMAP_GROUPS = 60


def _largest(audit: Audit, verdicts: pd.DataFrame | None,
             max_groups: int) -> tuple[Audit, pd.DataFrame | None, str]:
    """The ``max_groups`` largest groups (and their pairs' verdicts), with a note when groups were left out."""
    if len(audit.groups) <= max_groups:
        return audit, verdicts, ""
    keep = sorted(audit.groups, key=lambda g: -audit.cms[g].n)[:max_groups]
    keep = [g for g in audit.groups if g in set(keep)]
    sub = Audit({g: audit.cms[g] for g in keep}, source=audit.source)
    if verdicts is not None:
        attrs = dict(verdicts.attrs)
        verdicts = verdicts[verdicts["group_i"].isin(keep) & verdicts["group_j"].isin(keep)]
        verdicts.attrs.update(attrs)
    return sub, verdicts, f" · the {max_groups} largest of {len(audit.groups)} groups (all pairs: verdict table)"


def pairwise_heatmap(audit: Audit, name: str, verdicts: pd.DataFrame | None = None,
                     max_groups: int = MAX_HEATMAP_GROUPS) -> go.Figure:
    """Heatmap of comparison ``name`` for every pair (rows i, columns j), diverging around its pivot.

    DI gets :func:`disparate_impact_heatmap` (banded by the four-fifths rule);
    every other metric a red-white-blue scale centred on its pivot, blue where
    the score leans toward group i. Undefined cells are grey and say so; the
    diagonal (a group against itself) is left empty. With ``verdicts`` (from
    :meth:`Audit.verdicts`), OFI cells hover with their interval, adjusted p and
    verdict, and values that are not significant are shown in parentheses.
    """
    if name == "DI":
        return disparate_impact_heatmap(audit, verdicts, max_groups)
    audit, verdicts, shown_note = _largest(audit, verdicts, max_groups)
    df = audit.pairwise(name)
    values = df.to_numpy(dtype=float).copy()
    np.fill_diagonal(values, np.nan)
    info = bias.info(name)
    finite = np.abs(values[np.isfinite(values)] - info.pivot)
    span = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    text, hover = _cell_text(values), _pair_hover(audit, name, values)
    text[np.eye(len(df), dtype=bool)] = ""
    note, mats = "", None
    if verdicts is not None and name == "OFI":
        mats = _pair_matrices(verdicts, df.index.tolist(), "OFI")
        hover, text = _with_inference(hover, text, mats, "OFI", verdicts.attrs.get("alpha", 0.05),
                                      verdicts.attrs.get("adjust", "holm"))
        note = " · pale, in parentheses: not significant"
    fig = go.Figure(go.Heatmap(
        z=values, x=df.columns.tolist(), y=df.index.tolist(),
        zmin=info.pivot - span, zmax=info.pivot + span, zmid=info.pivot,
        colorscale=[[0, FAVOURS_J], [0.5, NEUTRAL], [1, FAVOURS_I]],
        text=text, texttemplate="%{text}", textfont=dict(size=12),
        hovertext=hover, hoverinfo="text", xgap=2, ygap=2,
        colorbar=dict(title=dict(text=name, side="right"), thickness=14),
    ))
    if mats is not None:
        _fade_not_significant(fig, df, values, mats["p"], verdicts.attrs.get("alpha", 0.05))
    _add_undefined_labels(fig, df, values)
    title = (f"{name} = {info.formula}<br><sup>{info.long_name} · pivot {info.pivot:g} · "
             f"blue leans to row group i{shown_note}</sup>")
    if name == "OFI":
        title = (f"OFI = B_i − B_j<br><sup>blue: favours row group i · red: favours column group j{note}"
                 f"{shown_note}</sup>")
    return _layout(fig, title, len(df))


def _add_undefined_labels(fig: go.Figure, df: pd.DataFrame, values: np.ndarray) -> None:
    """NaN cells are transparent in a heatmap: paint them grey and label them "undefined" (not the diagonal)."""
    off_diagonal = ~np.eye(len(values), dtype=bool)
    rows, cols = np.nonzero(~np.isfinite(values) & off_diagonal)
    if rows.size:
        fig.add_trace(go.Heatmap(
            z=np.where(np.isfinite(values) | ~off_diagonal, np.nan, 1.0), x=df.columns.tolist(), y=df.index.tolist(),
            colorscale=[[0, UNDEFINED_COLOR], [1, UNDEFINED_COLOR]], showscale=False, xgap=2, ygap=2,
            hoverinfo="skip",
        ))
        fig.add_trace(go.Scatter(
            x=[df.columns[c] for c in cols], y=[df.index[r] for r in rows], mode="text",
            text=["undefined"] * rows.size, textfont=dict(size=11, color="#444"),
            hoverinfo="skip", showlegend=False,
        ))


def disparate_impact_heatmap(audit: Audit, verdicts: pd.DataFrame | None = None,
                             max_groups: int = MAX_HEATMAP_GROUPS) -> go.Figure:
    """DI for every pair, coloured by the four-fifths rule: DI < 4/5 bias for j (red),
    DI > 5/4 bias for i (blue), between no bias (white); undefined grey. With ``verdicts``,
    cells hover with DI's interval and adjusted p, and values not significantly different
    from 1 are shown in parentheses."""
    audit, verdicts, shown_note = _largest(audit, verdicts, max_groups)
    df = audit.pairwise("DI")
    values = df.to_numpy(dtype=float).copy()
    np.fill_diagonal(values, np.nan)
    text, hover = _cell_text(values, 2, signed=False), _pair_hover(audit, "DI", values)
    text[np.eye(len(df), dtype=bool)] = ""
    note, mats = "", None
    if verdicts is not None:
        mats = _pair_matrices(verdicts, df.index.tolist(), "DI")
        hover, text = _with_inference(hover, text, mats, "DI", verdicts.attrs.get("alpha", 0.05),
                                      verdicts.attrs.get("adjust", "holm"))
        note = " · pale, in parentheses: not significantly ≠ 1"
    band = np.full(values.shape, np.nan)
    ok = np.isfinite(values)
    band[ok] = np.where(values[ok] < bias.FOUR_FIFTHS_LOW, -1.0,
                        np.where(values[ok] > bias.FOUR_FIFTHS_HIGH, 1.0, 0.0))
    fig = go.Figure(go.Heatmap(
        z=band, x=df.columns.tolist(), y=df.index.tolist(), zmin=-1.5, zmax=1.5,
        colorscale=[[0, FAVOURS_J], [1 / 3, FAVOURS_J], [1 / 3, NEUTRAL], [2 / 3, NEUTRAL],
                    [2 / 3, FAVOURS_I], [1, FAVOURS_I]],
        text=text, texttemplate="%{text}", textfont=dict(size=12),
        hovertext=hover, hoverinfo="text", xgap=2, ygap=2,
        colorbar=dict(title=dict(text="four-fifths", side="right"), thickness=14,
                      tickvals=[-1, 0, 1], ticktext=["< 4/5: bias for j", "no bias", "> 5/4: bias for i"]),
    ))
    if mats is not None:
        _fade_not_significant(fig, df, values, mats["p"], verdicts.attrs.get("alpha", 0.05))
    _add_undefined_labels(fig, df, values)
    return _layout(fig, "DI = (P̂<sub>i</sub>/n<sub>i</sub>) / (P̂<sub>j</sub>/n<sub>j</sub>)<br><sup>four-fifths "
                   f"rule: blue > 5/4 · red < 4/5{note}{shown_note}</sup>", len(df))


def benefit_chart(audit: Audit) -> go.Figure:
    """Per group: benefit b = P^/n against expected benefit E[b] = P/n; the gap is B."""
    table = audit.group_table(["PPR", "PREV", "B"])
    groups = table.index.tolist()
    fig = go.Figure()
    for positive, color in ((True, FAVOURS_I), (False, FAVOURS_J)):  # one trace per colour, gaps between bars
        part = table[(table["B"] >= 0) == positive]
        if len(part):
            x = np.column_stack([part["PREV"], part["PPR"], np.full(len(part), np.nan)]).ravel()
            y = np.repeat(np.asarray(part.index, dtype=object), 3)
            fig.add_trace(go.Scatter(x=x, y=y, mode="lines", line=dict(color=color, width=4), connectgaps=False,
                                     hoverinfo="skip", showlegend=False))
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


VERDICT_COLORS = {"algorithmic bias": "#c0392b", "systemic disparity": "#e9a23b",
                  "no bias detected": "#2a9d8f", "inconclusive": "#8c8c8c"}


def ofi_di_scatter(verdicts: pd.DataFrame, max_points: int = 3000) -> go.Figure:
    """Every pair as a point: x = DI (log scale) with its interval, y = OFI with its interval,
    coloured by verdict, over the four-fifths band (x in [4/5, 5/4]) and the ±tolerance band of OFI.

    Pairs with undefined DI cannot sit on a log axis and are counted in the subtitle. Above
    ``max_points`` pairs, the most significant are drawn (the subtitle says how many).
    """
    alpha = verdicts.attrs.get("alpha", 0.05)
    tol = verdicts.attrs.get("tolerance", 0.05)
    ok = np.isfinite(verdicts["di"].to_numpy(float)) & (verdicts["di"].to_numpy(float) > 0)
    shown = verdicts[ok]
    dropped = ""
    if len(shown) > max_points:
        shown = shown.sort_values("ofi_p").head(max_points)
        dropped = f" · {max_points:,} most significant of {int(ok.sum()):,} pairs shown"
    fig = go.Figure()
    fig.add_vrect(x0=bias.FOUR_FIFTHS_LOW, x1=bias.FOUR_FIFTHS_HIGH, fillcolor="#2a9d8f", opacity=0.10,
                  line_width=0, layer="below")
    fig.add_hrect(y0=-tol, y1=tol, fillcolor="#4a6fa5", opacity=0.10, line_width=0, layer="below")
    fig.add_vline(x=1, line=dict(color="#999", width=1, dash="dot"))
    fig.add_hline(y=0, line=dict(color="#999", width=1, dash="dot"))
    level = f"{1 - alpha:.0%}"
    for verdict, color in VERDICT_COLORS.items():
        part = shown[shown["verdict"] == verdict]
        if part.empty:
            continue
        di, lo, hi = (part[c].to_numpy(float) for c in ("di", "di_ci_low", "di_ci_high"))
        lo_cap, hi_cap = np.maximum(lo, 1e-3), np.minimum(hi, 1e3)
        custom = np.column_stack([part["group_i"].map(_hover_safe), part["n_i"], part["group_j"].map(_hover_safe),
                                  part["n_j"],
                                  part["ofi_ci_low"], part["ofi_ci_high"], lo, hi])
        fig.add_trace(go.Scatter(
            x=di, y=part["ofi"], mode="markers", name=verdict, marker=dict(color=color, size=9, line=dict(width=0)),
            error_x=dict(type="data", symmetric=False, array=hi_cap - di, arrayminus=di - lo_cap, color=color,
                         thickness=1, width=0),
            error_y=dict(type="data", symmetric=False, array=part["ofi_ci_high"] - part["ofi"],
                         arrayminus=part["ofi"] - part["ofi_ci_low"], color=color, thickness=1, width=0),
            customdata=custom,
            hovertemplate=("<b>%{customdata[0]}</b> (n = %{customdata[1]:,}) vs <b>%{customdata[2]}</b> "
                           "(n = %{customdata[3]:,})<br>OFI = %{y:+.3f} [" + "%{customdata[4]:+.3f}, "
                           "%{customdata[5]:+.3f}]<br>DI = %{x:.3f} [%{customdata[6]:.3f}, %{customdata[7]:.3f}]"
                           f"<br>{level} intervals · " + verdict + "<extra></extra>"),
        ))
    undefined = int((~ok).sum())
    sub = (f"{level} intervals · green band: four-fifths rule met · blue band: |OFI| ≤ {tol:g}"
           + (f" · {undefined} pair(s) with undefined DI not shown" if undefined else "") + dropped)
    fig.update_layout(
        title=dict(text=f"OFI against DI for every pair<br><sup>{sub}</sup>", x=0, xanchor="left", font=dict(size=16)),
        font=FONT, height=520, margin=dict(l=10, r=10, t=80, b=10), plot_bgcolor="white", paper_bgcolor="white",
        xaxis=dict(type="log", title="DI = PPR<sub>i</sub> / PPR<sub>j</sub> (log scale)", gridcolor="#eee",
                   tickvals=[0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 0.8, 1, 1.25, 2, 5, 10, 20, 50, 100],
                   ticktext=["0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "0.8", "1", "1.25", "2", "5", "10", "20",
                             "50", "100"]),
        yaxis=dict(title="OFI = B<sub>i</sub> − B<sub>j</sub>", gridcolor="#eee", zeroline=False),
        legend=dict(orientation="h", yanchor="top", y=-0.14, xanchor="left", x=0),
    )
    return fig


def ofi_forest(verdicts: pd.DataFrame, reference: str) -> go.Figure:
    """Forest plot: every group's OFI against ``reference`` with its interval, sorted by OFI,
    coloured by verdict; n beside each name."""
    alpha = verdicts.attrs.get("alpha", 0.05)
    tol = verdicts.attrs.get("tolerance", 0.05)
    as_i = verdicts[verdicts["group_j"] == reference]
    as_j = verdicts[verdicts["group_i"] == reference]
    rows = pd.DataFrame({
        "group": pd.concat([as_i["group_i"], as_j["group_j"]]).to_numpy(),
        "n": pd.concat([as_i["n_i"], as_j["n_j"]]).to_numpy(),
        "ofi": np.concatenate([as_i["ofi"], -as_j["ofi"]]),
        "low": np.concatenate([as_i["ofi_ci_low"], -as_j["ofi_ci_high"]]),
        "high": np.concatenate([as_i["ofi_ci_high"], -as_j["ofi_ci_low"]]),
        "verdict": np.concatenate([as_i["verdict"], as_j["verdict"]]),
        "p": np.concatenate([as_i["ofi_p_adjusted"], as_j["ofi_p_adjusted"]]),
    }).sort_values("ofi")
    labels = [f"{g} (n = {n:,})" for g, n in zip(rows["group"], rows["n"])]  # escaped with every label below
    fig = go.Figure()
    fig.add_vrect(x0=-tol, x1=tol, fillcolor="#4a6fa5", opacity=0.10, line_width=0, layer="below")
    fig.add_vline(x=0, line=dict(color="#666", width=1))
    for verdict, color in VERDICT_COLORS.items():
        pick = (rows["verdict"] == verdict).to_numpy()
        if not pick.any():
            continue
        part = rows[pick]
        fig.add_trace(go.Scatter(
            x=part["ofi"], y=[lbl for lbl, k in zip(labels, pick) if k], mode="markers", name=verdict,
            marker=dict(color=color, size=10, symbol="square"),
            error_x=dict(type="data", symmetric=False, array=part["high"] - part["ofi"],
                         arrayminus=part["ofi"] - part["low"], color=color, thickness=2, width=6),
            customdata=np.column_stack([part["low"], part["high"], part["p"]]),
            hovertemplate=("%{y}<br>OFI vs " + _hover_safe(reference) + " = %{x:+.3f} [%{customdata[0]:+.3f}, "
                           "%{customdata[1]:+.3f}]<br>adjusted p = %{customdata[2]:.3g}<extra>" + verdict + "</extra>"),
        ))
    fig.update_layout(
        title=dict(text=f"OFI of each group against {_hover_safe(reference)}<br><sup>{1 - alpha:.0%} intervals · "
                        f"right of 0: the group fares better than {_hover_safe(reference)} relative to its labels · "
                        f"band: |OFI| ≤ {tol:g}</sup>", x=0, xanchor="left", font=dict(size=16)),
        font=FONT, height=max(300, 120 + 34 * len(rows)), margin=dict(l=10, r=10, t=80, b=10),
        plot_bgcolor="white", paper_bgcolor="white",
        xaxis=dict(title=f"OFI = B<sub>group</sub> − B<sub>{_hover_safe(reference)}</sub>", gridcolor="#eee",
                   zeroline=False),
        legend=dict(orientation="h", yanchor="top", y=-0.12 if len(rows) > 6 else -0.25, xanchor="left", x=0),
    )
    return fig


def _hover_safe(text: str) -> str:
    """User text for Plotly's HTML-like labels: escaped so a group name cannot inject markup."""
    import html

    return html.escape(str(text), quote=False)


# --- Sample-Size Explorer -------------------------------------------------------------------

PALETTE = ("#4a6fa5", "#c8553d", "#2a9d8f", "#8e6c8a", "#e9a23b", "#5c946e", "#6c757d", "#b56576")
UNDEFINED_BAR = "#c0392b"


def _plain(fig: go.Figure, title: str, height: int = 420, legend_below: bool = False) -> go.Figure:
    """Shared layout. Legends with many entries go below the plot so they never cover titles."""
    legend = (dict(orientation="h", yanchor="top", y=-0.16, xanchor="left", x=0) if legend_below
              else dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1))
    fig.update_layout(title=dict(text=title, x=0, xanchor="left", font=dict(size=16)), font=FONT,
                      height=height + (90 if legend_below else 0),
                      margin=dict(l=10, r=10, t=80, b=100 if legend_below else 10),
                      plot_bgcolor="white", paper_bgcolor="white", legend=legend)
    fig.update_xaxes(gridcolor="#eee", zerolinecolor="#ccc")
    fig.update_yaxes(gridcolor="#eee", zerolinecolor="#ccc")
    return fig


def _shades(k: int) -> list[str]:
    """k blues from light to dark (small n light, large n dark)."""
    import plotly.colors as pc

    return pc.sample_colorscale("Blues", list(np.linspace(0.35, 1.0, k))) if k > 1 else ["#2166ac"]


def metric_cdfs(table: pd.DataFrame) -> go.Figure:
    """Step CDFs of each metric over M(n), one line per n (000 Fig. 4.2), from
    :func:`fairness_core.sample_size.cdf_table`. A curve tops out at 1 − P(undefined)."""
    from plotly.subplots import make_subplots

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
    """Holes per metric against n (markers: enumeration; dashed: 000 Theorem 4.3; grey: C(n+3, 3))."""
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


def pmf_bars(x: np.ndarray, mass: np.ndarray, title: str, *, observed: float | None = None,
             tail: str | None = None, p_value: float | None = None, exact: bool = True,
             x_title: str = "score") -> go.Figure:
    """A distribution as bars. With ``observed``, a dotted line there; with ``tail`` ("lower" or
    "upper") the bars of that tail (S <= observed, or S >= observed) are red: the smaller tail,
    which the two-sided p-value doubles."""
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
    return _plain(fig, title, height=380)


def match_overview(table: pd.DataFrame, alpha: float = 0.05) -> go.Figure:
    """One dot per (group, metric): −log10 of the (adjusted) p-value, with the alpha line.

    Right of the line: the group differs from its reference beyond small-sample noise.
    """
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
    fig.update_xaxes(title=("−log10 Holm-adjusted p" if use_adj else "−log10 p") + " (capped at 30)",
                     rangemode="tozero")
    return _plain(fig, "MATCH: which group scores are beyond small-sample noise?<br><sup>left of the red line: "
                       "indistinguishable from the reference at this group size</sup>",
                  height=max(320, 130 + 38 * len(groups)))


def spread_vs_n(mc: pd.DataFrame, exact: pd.DataFrame, metric: str, label: str, max_dots: int = 100) -> go.Figure:
    """Monte Carlo scores of samples of each size (dots, at most ``max_dots`` per n) under the
    exact quantile bands (000 Fig. 4.1). SVG throughout so the bands draw over the dots."""
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
    return _plain(fig, f"{metric} of samples drawn from {label}: spread shrinks, jaggedness stays", height=440)


def normal_convergence(metric: str, pmfs: dict[int, tuple[np.ndarray, np.ndarray]]) -> go.Figure:
    """PMFs of ACC or B for growing n as densities (mass × n), with each n's normal density dashed (000 Fig. 4.3)."""
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
    from plotly.subplots import make_subplots

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
    """Seed-001 style: one panel per measure, P(exactly 0) marked, P(undefined) as a red bar at the right.

    A measure with at most ``max_spikes`` distinct values is drawn exactly, one spike per value
    (binning k/12-spaced values into 0.1-wide bins would alias); otherwise a histogram of
    ``bins`` bins centred on −1, …, 0, …, 1. The subplot title says which.
    """
    from plotly.subplots import make_subplots

    from .imbalance import LABELS

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
    """P(perfect fairness) and P(undefined) of each measure across IR (seed 001 Figs 6 and 7)."""
    from plotly.subplots import make_subplots

    from .imbalance import LABELS

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


# --- Smoothing ------------------------------------------------------------------------------

def _smoother_style(label: str) -> dict:
    """Raw black, bashful grey dashed, add-one orange, CPS in blues by λ."""
    if label == "raw":
        return dict(color="#222", width=2.5)
    if label.startswith("additive"):
        return dict(color="#999", dash="dash", width=2) if "1e-10" in label else dict(color="#e9a23b", width=2)
    shades = {"5": "#9ecae1", "10": "#4292c6", "20": "#08519c"}
    lam = label.split("=")[-1].strip()
    return dict(color=shades.get(lam, "#2171b5"), width=2)


def smoothing_curves(table: pd.DataFrame) -> go.Figure:
    """MSE vs subsample size n, one panel per metric, one line per smoother, log y
    (000 Figs 4.4–4.6), from :func:`fairness_core.smoothing.error_curves`."""
    from plotly.subplots import make_subplots

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
    fig.update_yaxes(type="log", title_text="MSE vs the whole group", exponentformat="power")
    fig.update_xaxes(title_text="subsample size n")
    return _plain(fig, "How far a subsample's score lies from the whole group's, raw and smoothed<br><sup>"
                       "undefined values excluded (the share is in the hover and the CSV); lower is better</sup>",
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


# --- Inequality (generalized entropy index) and Virny stability -----------------------------

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


def gei_landscape(mu: np.ndarray, lam: np.ndarray, grid: np.ndarray, points: pd.DataFrame,
                  alpha: float, unit_cells: tuple[str, str]) -> go.Figure:
    """The index over (μ, λ) for the chosen benefits (004 Fig. 1/4), the loaded groups marked.

    ``points`` has columns group, mu, lambda, n, index (from :func:`fairness_core.entropy.mu_lambda`).
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
    pooled = points["group"] == "pooled"
    for mask, symbol, color in ((~pooled, "circle", "#08306b"), (pooled, "diamond", "#000")):
        sub = points[mask]
        if len(sub):
            fig.add_trace(go.Scatter(
                x=sub["mu"], y=sub["lambda"], mode="markers+text", text=sub["group"], textposition="top center",
                marker=dict(size=size[mask.to_numpy()], color=color, symbol=symbol, line=dict(color="white", width=1.5)),
                customdata=np.column_stack([sub["n"], sub["index"]]), showlegend=False,
                textfont=dict(size=11, color="#08306b"),
                hovertemplate="%{text} (n = %{customdata[0]:,})<br>μ = %{x:.4f}, λ = %{y:.4f}<br>"
                              "own index %{customdata[1]:.4g}<extra></extra>",
            ))
    fig.update_xaxes(title="mean benefit μ (in units of the unit reward)", showgrid=False, zeroline=False,
                     range=[float(mu[0]), float(mu[-1])])
    fig.update_yaxes(title=f"λ = share with the unit reward ({' + '.join(unit_cells)})", showgrid=False,
                     zeroline=False, range=[float(lam[0]), float(lam[-1])])
    fig = _plain(fig, f"The index over (μ, λ) for these benefits, α = {alpha:g} (004 Thm 3.2)<br><sup>grey: "
                      "impossible combinations; dots: each group's own (μ, λ), sized by n; ◆ everyone pooled</sup>",
                 height=480)
    fig.update_layout(plot_bgcolor="#e6e6e6")
    return fig


def stability_boxes(dist: pd.DataFrame) -> go.Figure:
    """Per-individual stability and uncertainty per group as boxes (5–25–50–75–95 % quantiles, mean
    as a diamond), one panel per metric, from :func:`fairness_core.stability.distribution_table`."""
    from plotly.subplots import make_subplots

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
    """Dot plot of 003's dis − priv differences, one row per metric, one colour per group (DI is a ratio
    and stays in the table)."""
    cols = [c for c in disp.columns if c != "DI"]
    fig = go.Figure()
    for k, g in enumerate(disp.index):
        v = disp.loc[g, cols].to_numpy(dtype=float)
        fig.add_trace(go.Scatter(x=v, y=cols, mode="markers", name=str(g),
                                 marker=dict(size=12, color=PALETTE[k % len(PALETTE)], line=dict(color="white", width=1)),
                                 hovertemplate=f"{_hover_safe(g)}<br>%{{y}} = %{{x:+.4f}}<extra></extra>"))
    fig.add_vline(x=0, line=dict(color="#888", width=1))
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title=f"dis − priv ({_hover_safe(disp.index.name.split('= ')[-1].rstrip(')'))} is priv)")
    return _plain(fig, "Disparities against the privileged group (0 = parity)", height=max(320, 90 + 34 * len(cols)),
                  legend_below=len(disp) > 4)


# --- Synthetic data (Conditional HydraGAN) -------------------------------------------------

GAN_CURVES = (("wasserstein", "Wasserstein estimate E D(real) − E D(fake)"), ("gp", "gradient penalty"),
              ("generator", "generator adversarial loss −E D(fake)"), ("diversity", "diversity MSE"))


def _thin(df: pd.DataFrame, max_points: int) -> pd.DataFrame:
    step = max(1, len(df) // max_points)
    return df.iloc[::step]


def gan_training_curves(records: pd.DataFrame, max_points: int = 400) -> go.Figure:
    """Per-step losses of every objective (faint) with a running mean (bold), one panel each.

    ``records`` has columns step, critic, gp, generator, diversity (the GAN's progress records).
    """
    from plotly.subplots import make_subplots

    df = records.dropna(subset=["step"]).copy()
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


def share_bars(table: pd.DataFrame, title: str) -> go.Figure:
    """Real, synthetic and target shares per category (from :func:`fairness_core.augmentation.share_table`)."""
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
    return _plain(fig, title, height=360)


def before_after(summary: pd.DataFrame) -> go.Figure:
    """000 Table 3.4 as a picture: per metric and group, the classifier trained on real data vs
    augmented data (mean ± sd over seeds), with the no-bias pivot as a line."""
    from plotly.subplots import make_subplots

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
            fig.add_vrect(x0=idx[0] + 0.5, x1=idx[-1] + 1.5, fillcolor=color, line_width=0,
                          annotation_text="best agent" if phase == "final" else "TiDE", annotation_position="top left")
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
    from plotly.subplots import make_subplots

    names = list(architecture)
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=names, horizontal_spacing=0.08)
    for k, name in enumerate(names):
        ops = architecture[name]
        fig.add_trace(go.Bar(x=list(ops), y=list(ops.values()), marker_color=PALETTE[k % len(PALETTE)],
                             text=[f"{v:.3f}" for v in ops.values()], textposition="outside", showlegend=False,
                             hovertemplate="%{x}: %{y:.4f}<extra></extra>"), row=1, col=k + 1)
    fig.update_yaxes(range=[0, 1.05])
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


# --- user text in figures ---------------------------------------------------------------------

def _escape_labels(values):  # type: ignore[no-untyped-def]
    """Escape the text items of a trace's x / y / name for Plotly's HTML-like rendering."""
    if isinstance(values, str):
        return _hover_safe(values)
    if values is None:
        return values
    arr = np.asarray(values, dtype=object)
    if arr.dtype == object and arr.ndim == 1 and any(isinstance(v, str) for v in arr):
        return [(_hover_safe(v) if isinstance(v, str) else v) for v in arr]
    return values


def escape_user_text(fig: go.Figure) -> go.Figure:
    """Make every trace's category labels (x, y) and legend name safe: Plotly renders ``<a href>``,
    ``<span style>`` and friends in tick labels and legends, and group names come from uploads.
    Hover texts and titles that mix markup with names escape the names where they are built."""
    for trace in fig.data:
        for attr in ("x", "y"):
            if hasattr(trace, attr) and getattr(trace, attr) is not None:
                escaped = _escape_labels(getattr(trace, attr))
                if escaped is not getattr(trace, attr):
                    setattr(trace, attr, escaped)
        if getattr(trace, "name", None):
            trace.name = _hover_safe(trace.name)
    for key in list(fig.layout.to_plotly_json()):
        if key.startswith(("xaxis", "yaxis")) and fig.layout[key].categoryarray is not None:
            fig.layout[key].categoryarray = _escape_labels(fig.layout[key].categoryarray)
    return fig


def _returns_safe_figure(fn):  # type: ignore[no-untyped-def]
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        fig = escape_user_text(fn(*args, **kwargs))
        # Importing Streamlit makes its own template plotly's process-wide default, so a figure
        # exported from the app (report, "Download figure") would differ from the same figure
        # exported elsewhere (tick labels clipped). Every figure carries plotly's own template; the app
        # still shows it in Streamlit's theme.
        fig.update_layout(template=pio.templates["plotly"])
        return fig
    return wrapper


# Every public figure builder escapes user text on the way out, so no page or report can forget to.
for _name, _fn in list(globals().items()):
    if (callable(_fn) and not _name.startswith("_") and getattr(_fn, "__module__", None) == __name__
            and _fn.__annotations__.get("return") in ("go.Figure", go.Figure) and _name != "escape_user_text"):
        globals()[_name] = _returns_safe_figure(_fn)
