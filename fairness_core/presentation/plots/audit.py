"""Figures of the Bias Audit: pairwise heatmaps, benefits, OFI against DI, the forest plot."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ...statistics import bias, inference, metrics as m
from ...common import text
from ...audit import Audit
from ...wording.levels import interval_label
from ._base import (
                    FAVOURS_I,
                    FAVOURS_J,
                    FONT,
                    NEUTRAL,
                    UNDEFINED_COLOR,
                    _fmt,
                    _heatmap_geometry,
                    interval_markers,
                    _layout,
                    _short,
                    notation,
                    plotly_text,
                    safe_figures,
                    )


def _pair_hover(audit: Audit, name: str, values: np.ndarray) -> np.ndarray:
    """Hover text per cell: each group with its n and formula terms, the value or why undefined.

    Built from per-group pieces broadcast over rows and columns (NumPy string ufuncs), so 500
    groups (250,000 cells) take well under a second; only undefined cells ask for their reason.
    """
    groups = audit.groups
    info = bias.info(name)
    cms = [audit.cms[g] for g in groups]
    row = np.array([f"<b>i = {plotly_text(g)}</b> (n = {c.n:,})" + "".join(f"<br>{t}" for t in _terms(name, c, c)[:1])
                    for g, c in zip(groups, cms)], dtype=text.STR)
    col = np.array([f"<br><b>j = {plotly_text(g)}</b> (n = {c.n:,})" + "".join(f"<br>{t}" for t in _terms(name, c, c)[1:])
                    for g, c in zip(groups, cms)], dtype=text.STR)
    value = (f"<br><b>{name} = " + text.fixed(values, 4, signed=name != "DI") + "</b>").astype(text.STR)
    for a, b in zip(*np.nonzero(~np.isfinite(values))):
        if a != b:
            value[a, b] = f"<br><b>{name} undefined</b>: {plotly_text(bias.undefined_reason(name, cms[a], cms[b]))}"
    out = row[:, None] + col[None, :] + value + f"<br><i>{notation(info.formula)}</i>"
    return out.astype(object)


def _terms(name: str, ci, cj) -> list[str]:  # type: ignore[no-untyped-def]
    return [notation(t) for t in _plain_terms(name, ci, cj)]


def _plain_terms(name: str, ci, cj) -> list[str]:  # type: ignore[no-untyped-def]
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
                    alpha: float, adjust: str, level: str) -> tuple[np.ndarray, np.ndarray]:
    """Hover lines with the interval (labelled ``level``, e.g. "Holm-adjusted 99.7 % CI") and adjusted p; cell
    text in parentheses where not significant (:func:`_fade_not_significant` also pales those cells).
    Vectorized over all cells."""
    adj = inference.ADJUSTED_LABEL.get(adjust, "")
    lo, hi, p = mats["low"], mats["high"], mats["p"]
    shown = np.isfinite(lo) & ~np.eye(len(lo), dtype=bool)

    def bound(v: np.ndarray) -> np.ndarray:
        out = text.fixed(v, 3, signed=name == "OFI")
        out[np.isinf(v)] = "∞"
        return out

    extra = ("<br>" + level + " [" + bound(lo) + ", " + bound(hi) + "] · " + adj + text.p_values(p)
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
    """The ``max_groups`` largest groups of known category (and their pairs' verdicts), with a note when groups
    were left out; unknown categories are never drawn against the others."""
    known = audit.known_groups
    if len(known) <= max_groups and not audit.unknown:
        return audit, verdicts, ""
    keep = sorted(known, key=lambda g: -audit.cms[g].n)[:max_groups]
    keep = [g for g in known if g in set(keep)]
    sub = Audit({g: audit.cms[g] for g in keep}, source=audit.source, outcomes=audit.outcomes)
    if len(known) <= max_groups:
        return sub, verdicts, ""
    if verdicts is not None:
        verdicts = verdicts[verdicts["group_i"].isin(keep) & verdicts["group_j"].isin(keep)]   # keeps its settings
    return sub, verdicts, f" · the {max_groups} largest of {len(audit.groups)} groups (all pairs: verdict table)"


def _ordered(audit: Audit, key: str) -> Audit:
    """The same groups ordered for reading: by the group metric ``key`` (highest first, undefined
    last), ties by size. Ordered by B the OFI matrix runs from blue to red; by PPR, DI's."""
    groups = audit.known_groups
    size = np.array([audit.cms[g].n for g in groups])
    value = size.astype(float) if key == "n" else audit.group_table([key]).loc[groups, key].to_numpy(float)
    order = np.lexsort((-size, np.where(np.isfinite(value), -value, np.inf)))
    return Audit({groups[k]: audit.cms[groups[k]] for k in order}, source=audit.source, outcomes=audit.outcomes)


#: The group metric that orders each heatmap's rows and columns, and how the subtitle says it.
ORDER_BY = {"OFI": ("B", "ordered by marginal benefit B"), "DI": ("PPR", "ordered by selection rate P̂/n")}


def _cells(fig: go.Figure, text: np.ndarray, labels: list[str]) -> str:
    """Write values in the cells while they fit; otherwise leave them to the hover and say so."""
    geo = _heatmap_geometry(labels)
    if geo["annotate"]:
        fig.update_traces(text=text, texttemplate="%{text}", textfont=dict(size=geo["cell_font"]),
                          selector=dict(type="heatmap"))
        return ""
    return " · hover a cell for its value"


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
    key, order_note = ORDER_BY.get(name, ("n", "ordered by size"))
    audit = _ordered(audit, key)
    df = audit.pairwise(name)
    labels = df.index.tolist()
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
        hover, text = _with_inference(hover, text, mats, "OFI", verdicts.settings.alpha,
                                      verdicts.settings.adjust, interval_label(verdicts, "ofi"))
        note = " · pale, in parentheses: not significant"
    fig = go.Figure(go.Heatmap(
        z=values, x=df.columns.tolist(), y=df.index.tolist(),
        zmin=info.pivot - span, zmax=info.pivot + span, zmid=info.pivot,
        colorscale=[[0, FAVOURS_J], [0.5, NEUTRAL], [1, FAVOURS_I]],
        hovertext=hover, hoverinfo="text", xgap=2, ygap=2,
        colorbar=dict(title=dict(text=name, side="right"), thickness=14),
    ))
    hover_note = _cells(fig, text, labels)
    note = note.replace(", in parentheses", "") if hover_note else note
    if mats is not None:
        _fade_not_significant(fig, df, values, mats["p"], verdicts.settings.alpha)
    _add_undefined_labels(fig, df, values, annotate=not hover_note)
    notes = f"<br><sup>{order_note}{note}{hover_note}{shown_note}</sup>"
    title = (f"{name} = {notation(info.formula)}<br><sup>{info.long_name} · pivot {info.pivot:g} · "
             f"blue leans to row group i</sup>{notes}")
    if name == "OFI":
        title = (f"OFI = B<sub>i</sub> − B<sub>j</sub><br><sup>blue: favours row group i · red: favours column "
                 f"group j</sup>{notes}")
    return _layout(fig, title, labels)


def _add_undefined_labels(fig: go.Figure, df: pd.DataFrame, values: np.ndarray, annotate: bool = True) -> None:
    """NaN cells are transparent in a heatmap: paint them grey and, while cells carry text, label
    them "undefined" (not the diagonal)."""
    off_diagonal = ~np.eye(len(values), dtype=bool)
    rows, cols = np.nonzero(~np.isfinite(values) & off_diagonal)
    if rows.size:
        fig.add_trace(go.Heatmap(
            z=np.where(np.isfinite(values) | ~off_diagonal, np.nan, 1.0), x=df.columns.tolist(), y=df.index.tolist(),
            colorscale=[[0, UNDEFINED_COLOR], [1, UNDEFINED_COLOR]], showscale=False, xgap=2, ygap=2,
            hoverinfo="skip",
        ))
        if not annotate:
            return
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
    audit = _ordered(audit, ORDER_BY["DI"][0])
    df = audit.pairwise("DI")
    labels = df.index.tolist()
    values = df.to_numpy(dtype=float).copy()
    np.fill_diagonal(values, np.nan)
    text, hover = _cell_text(values, 2, signed=False), _pair_hover(audit, "DI", values)
    text[np.eye(len(df), dtype=bool)] = ""
    note, mats = "", None
    if verdicts is not None:
        mats = _pair_matrices(verdicts, df.index.tolist(), "DI")
        hover, text = _with_inference(hover, text, mats, "DI", verdicts.settings.alpha,
                                      verdicts.settings.adjust, interval_label(verdicts, "di"))
        note = " · pale, in parentheses: not significantly ≠ 1"
    band = np.full(values.shape, np.nan)
    ok = np.isfinite(values)
    band[ok] = np.where(values[ok] < bias.FOUR_FIFTHS_LOW, -1.0,
                        np.where(values[ok] > bias.FOUR_FIFTHS_HIGH, 1.0, 0.0))
    fig = go.Figure(go.Heatmap(
        z=band, x=df.columns.tolist(), y=df.index.tolist(), zmin=-1.5, zmax=1.5,
        colorscale=[[0, FAVOURS_J], [1 / 3, FAVOURS_J], [1 / 3, NEUTRAL], [2 / 3, NEUTRAL],
                    [2 / 3, FAVOURS_I], [1, FAVOURS_I]],
        hovertext=hover, hoverinfo="text", xgap=2, ygap=2,
        colorbar=dict(title=dict(text="four-fifths rule", side="right"), thickness=14,
                      tickvals=[-1, 0, 1], ticktext=["< 4/5", "4/5 to 5/4", "> 5/4"]),
    ))
    hover_note = _cells(fig, text, labels)
    note = note.replace(", in parentheses", "") if hover_note else note
    if mats is not None:
        _fade_not_significant(fig, df, values, mats["p"], verdicts.settings.alpha)
    _add_undefined_labels(fig, df, values, annotate=not hover_note)
    return _layout(fig, "DI = (P̂<sub>i</sub>/n<sub>i</sub>) / (P̂<sub>j</sub>/n<sub>j</sub>)<br><sup>four-fifths "
                   f"rule: blue > 5/4 bias for row group i · red < 4/5 bias for column group j</sup>"
                   f"<br><sup>{ORDER_BY['DI'][1]}{note}{hover_note}{shown_note}</sup>", labels)


def benefit_chart(audit: Audit) -> go.Figure:
    """Per group: benefit b = P̂/n against expected benefit E[b] = P/n; the gap is B. Groups are
    ordered by B, most favoured first."""
    table = _ordered(audit, "B").group_table(["PPR", "PREV", "B"])
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
        x=table["PPR"], y=groups, mode="markers", name="benefit b = P̂/n (predictions)",
        marker=dict(size=12, color="#333"), customdata=custom,
        hovertemplate="%{y} (n = %{customdata[0]:,})<br>b = %{x:.4f}<br>B = b − E[b] = %{customdata[1]:+.4f}"
                      "<extra></extra>",
    ))
    fig.update_layout(
        title=dict(text="Benefit vs expected benefit per group<br><sup>the bar is the marginal benefit B = b − E[b]: "
                        "blue above, red below what the labels warrant · ordered by B</sup>", x=0),
        font=FONT, height=max(300, 150 + (40 if len(groups) <= 15 else 26) * len(groups)),
        margin=dict(l=10, r=10, t=110, b=10),
        xaxis=dict(title="share of the group", range=[-0.02, 1.02], gridcolor="#eee"),
        yaxis=dict(autorange="reversed", categoryorder="array", categoryarray=groups, tickmode="array",
                   tickvals=groups, ticktext=[_short(str(g)) for g in groups], automargin=True),
        plot_bgcolor="white",
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0),
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


VERDICT_COLORS = {"algorithmic bias": "#c0392b", "materiality unclear": "#d98880", "systemic disparity": "#e9a23b",
                  "no bias detected": "#2a9d8f", "inconclusive": "#8c8c8c"}


def ofi_di_scatter(verdicts: pd.DataFrame, max_points: int = 3000) -> go.Figure:
    """Every pair as a point: x = DI (log scale) with its interval, y = OFI with its interval,
    coloured by verdict, over the four-fifths band (x in [4/5, 5/4]) and the ±tolerance band of OFI.

    Pairs with undefined DI cannot sit on a log axis and are counted in the subtitle. Above
    ``max_points`` pairs, the most significant are drawn (the subtitle says how many).
    """
    tol = verdicts.settings.tolerance
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
    level = "OFI: " + interval_label(verdicts, "ofi") + ", DI: " + interval_label(verdicts, "di")
    for verdict, color in VERDICT_COLORS.items():
        part = shown[shown["verdict"] == verdict]
        if part.empty:
            continue
        di, lo, hi = (part[c].to_numpy(float) for c in ("di", "di_ci_low", "di_ci_high"))
        lo_cap, hi_cap = np.maximum(lo, 1e-3), np.minimum(hi, 1e3)
        custom = np.column_stack([part["group_i"].map(plotly_text), part["n_i"], part["group_j"].map(plotly_text),
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
                           f"<br>{level} · " + verdict + "<extra></extra>"),
        ))
    undefined = int((~ok).sum())
    sub = (f"{level} · green band: four-fifths rule met · blue band: |OFI| ≤ {tol:g}"
           + (f" · {undefined} pair(s) with DI undefined or 0 not shown (log axis)" if undefined else "") + dropped)
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
    """Forest plot: every group's OFI against ``reference`` with its (adjusted) interval, sorted by OFI,
    coloured by verdict; n beside each name."""
    tol = verdicts.settings.tolerance
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
        fig.add_trace(interval_markers(
            part["ofi"], [lbl for lbl, k in zip(labels, pick) if k], part["low"], part["high"], part["p"],
            name=verdict, color=color, size=10, whisker=6,
            hovertemplate=("%{y}<br>OFI vs " + plotly_text(reference) + " = %{x:+.3f} [%{customdata[0]:+.3f}, "
                           "%{customdata[1]:+.3f}]<br>adjusted p = %{customdata[2]:.3g}<extra>" + verdict + "</extra>")))
    fig.update_layout(
        title=dict(text=f"OFI of each group against {plotly_text(reference)}<br><sup>{interval_label(verdicts)}s · "
                        f"right of 0: the group fares better than {plotly_text(reference)} relative to its labels · "
                        f"band: |OFI| ≤ {tol:g}</sup>", x=0, xanchor="left", font=dict(size=16)),
        font=FONT, height=max(300, 120 + 34 * len(rows)), margin=dict(l=10, r=10, t=80, b=10),
        plot_bgcolor="white", paper_bgcolor="white",
        xaxis=dict(title=f"OFI = B<sub>group</sub> − B<sub>{plotly_text(reference)}</sub>", gridcolor="#eee",
                   zeroline=False),
        legend=dict(orientation="h", yanchor="top", y=-0.12 if len(rows) > 6 else -0.25, xanchor="left", x=0),
    )
    return fig


safe_figures(globals())
