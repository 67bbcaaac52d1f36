"""Figures of an audit of ordered or unordered categories: each group's k × k matrix, and the impact ratios at every
cut (or of every class's share) with their adjusted intervals."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ...multiclass import MulticlassAudit
from ...statistics import bias, ordinal
from ...wording.levels import interval_label
from ._base import _plain, _short, plotly_text, safe_figures

__all__ = ["class_heatmaps", "impact_ratio_chart", "larger_first"]

#: Most groups drawn as facets side by side in one row.
FACETS_PER_ROW = 3

#: The colour of each verdict of an impact ratio (decisions' words).
_VERDICT_COLOURS = {"adverse impact": "#b2182b", "materiality unclear": "#e9a23b",
                    "no adverse impact detected": "#2a9d8f", "inconclusive": "#6c757d"}


def class_heatmaps(audit: MulticlassAudit, groups: list[str] | None = None) -> go.Figure:
    """One k × k heatmap per group (faceted): rows the observed class, columns the predicted one, each cell the
    share of the row's observed class placed in that column (its count in the hover), classes in the audit's
    order. Decisions alone: one heatmap of groups × classes, each cell the share of the group placed in the class.

    >>> m = MulticlassAudit.from_predictions(["a", "b", "b", "a", "b", "a"], ["a", "b", "a", "a", "b", "b"],
    ...                                      ["x", "x", "x", "y", "y", "y"])
    >>> fig = class_heatmaps(m)
    >>> [list(map(float, row)) for row in fig.data[0].z]   # group x: a → a always; b → a half the time
    [[1.0, 0.0], [0.5, 0.5]]
    """
    classes = list(audit.classes)
    if not audit.has_outcomes:
        placed = audit.placed.astype(float)
        share = placed / placed.sum(axis=1, keepdims=True)
        hover = [[f"<b>{plotly_text(g)}</b> placed in {plotly_text(c)}: {int(x):,} of {int(row.sum()):,}"
                  for c, x in zip(classes, row)] for g, row in zip(audit.groups, placed)]
        fig = go.Figure(go.Heatmap(z=share, x=classes, y=list(audit.groups), zmin=0, zmax=1, colorscale="Blues",
                                   text=np.char.mod("%.2f", share), texttemplate="%{text}", hovertext=hover,
                                   hoverinfo="text", colorbar=dict(title="share")))
        fig.update_yaxes(autorange="reversed", type="category")
        fig.update_xaxes(type="category", title="class given")
        return _plain(fig, "Share of each group placed in each class (decisions alone)",
                      height=160 + 34 * len(audit.groups))
    chosen = list(audit.groups) if groups is None else groups
    for g in chosen:
        audit._group(g)   # refuses an unknown group by name
    cols = min(FACETS_PER_ROW, len(chosen))
    rows = -(-len(chosen) // cols)
    fig = make_subplots(rows=rows, cols=cols, horizontal_spacing=0.08, vertical_spacing=0.16 / max(rows - 1, 1) + 0.06,
                        subplot_titles=[f"{plotly_text(_short(g, 30))} (n = {int(audit.n[g]):,})" for g in chosen])
    for k, g in enumerate(chosen):
        counts = audit.counts[audit._group(g)].astype(float)
        totals = counts.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(totals > 0, counts / totals, np.nan)
        hover = [[f"<b>{plotly_text(g)}</b><br>observed {plotly_text(a)}, placed in {plotly_text(b)}: "
                  f"{int(counts[r, c]):,} of {int(totals[r, 0]):,}" for c, b in enumerate(classes)]
                 for r, a in enumerate(classes)]
        fig.add_trace(go.Heatmap(z=share, x=classes, y=classes, zmin=0, zmax=1, colorscale="Blues",
                                 showscale=k == 0, colorbar=dict(title="share of row"),
                                 text=np.where(np.isnan(share), "", np.char.mod("%.2f", np.nan_to_num(share))),
                                 texttemplate="%{text}", hovertext=hover, hoverinfo="text", name=g),
                      row=k // cols + 1, col=k % cols + 1)
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category")
    fig.update_yaxes(title_text="observed", col=1)
    for k in range(len(chosen)):   # the class predicted under the lowest panel of each column
        if k + cols >= len(chosen):
            fig.update_xaxes(title_text="predicted", row=k // cols + 1, col=k % cols + 1)
    scale = plotly_text(" < ".join(classes)) if audit.ordered else "unordered classes"   # class names are user text
    return _plain(fig, f"Observed against predicted class, per group<br><sup>{scale}</sup>", height=60 + 300 * rows,
                  wrap=False)


def impact_ratio_chart(ratios: pd.DataFrame, reference_order: Sequence[str] | None = None) -> go.Figure:
    """Every pair's impact ratio at every cut (or of every class), with the adjusted interval that decided its
    verdict (:meth:`fairness_core.multiclass.MulticlassAudit.impact_ratios`), one panel per cut, the four-fifths
    band dashed and 1 solid; the points coloured by verdict. Every pair is turned one way in every panel, its
    reference second: the group first in ``reference_order`` (default: the larger group;
    :func:`fairness_core.statistics.ordinal.oriented`, which the page's table uses too), and named "a / b" for
    a's rate over b's; every panel lists the pairs in the table's order.

    >>> m = MulticlassAudit.from_decisions(["L"] * 6 + ["H"] * 4 + ["L"] * 3 + ["H"] * 7, ["a"] * 10 + ["b"] * 10,
    ...                                    ["L", "H"], favourable="L")
    >>> fig = impact_ratio_chart(m.impact_ratios())
    >>> [round(float(x), 2) for t in fig.data for x in t.x]
    [0.5]
    """
    label = "cut" if "cut" in ratios.columns else "class"
    families = list(dict.fromkeys(ratios[label]))
    fig = make_subplots(rows=len(families), cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=[f"{label} {plotly_text(f)}" for f in families])
    shown: set[str] = set()
    level = interval_label(ratios, "di")
    if reference_order is None:
        reference_order = larger_first(ratios)
    ratios = ordinal.oriented(ratios, reference_order)
    pair = (ratios["group_i"].astype(str) + " / " + ratios["group_j"].astype(str)).tolist()
    rows = list(dict.fromkeys(pair))   # the table's order, the same in every panel
    for k, fam in enumerate(families):
        sel_family = (ratios[label] == fam).to_numpy()
        part = ratios[sel_family]
        names = [n for n, s in zip(pair, sel_family) if s]
        for verdict, colour in _VERDICT_COLOURS.items():
            sel = (part["verdict"] == verdict).to_numpy()
            if not sel.any():
                continue
            x, lo, hi = (part[c].to_numpy(dtype=float)[sel] for c in ("di", "di_ci_low", "di_ci_high"))
            hover = [f"<b>{plotly_text(i)}</b> over <b>{plotly_text(j)}</b><br>rates {ri:.1%} / {rj:.1%}<br>"
                     f"impact ratio {d:.3f} [{a:.3f}, {b:.3f}]<br>{verdict}"
                     for i, j, ri, rj, d, a, b in zip(part["group_i"][sel], part["group_j"][sel], part["rate_i"][sel],
                                                      part["rate_j"][sel], x, lo, hi)]
            fig.add_trace(go.Scatter(
                x=x, y=[n for n, s in zip(names, sel) if s], mode="markers", name=verdict,
                legendgroup=verdict, showlegend=verdict not in shown,
                marker=dict(color=colour, size=9, symbol="square"),
                error_x=dict(type="data", symmetric=False, array=np.nan_to_num(hi - x), arrayminus=np.nan_to_num(x - lo),
                             color=colour, thickness=2, width=4),
                hovertext=hover, hoverinfo="text"), row=k + 1, col=1)
            shown.add(verdict)
        fig.update_yaxes(type="category", categoryorder="array", categoryarray=rows, autorange="reversed",
                         row=k + 1, col=1)
    for x, dash in ((bias.FOUR_FIFTHS_LOW, "dash"), (1.0, "solid"), (bias.FOUR_FIFTHS_HIGH, "dash")):
        fig.add_vline(x=x, line_dash=dash, line_color="#888", line_width=1)
    fig.update_xaxes(title_text=f"impact ratio: the first group's rate over its reference's ({level})",
                     rangemode="tozero", row=len(families), col=1)
    pairs = max(int((ratios[label] == f).sum()) for f in families) if families else 1
    what = "at every cut" if label == "cut" else "of every class's share"
    return _plain(fig, f"Impact ratios {what}, adjusted across {'cuts' if label == 'cut' else 'classes'} and pairs",
                  height=80 + len(families) * (60 + 26 * pairs), legend_below=True)


def larger_first(pairs: pd.DataFrame) -> list[str]:
    """The groups of a pair table, largest first (n from its ``n_i``/``n_j`` columns; equal sizes: the first table
    row's reference first): :func:`fairness_core.statistics.ordinal.larger_first` read from the table."""
    n = pd.concat([pd.Series(pairs["n_j"].to_numpy(), index=pairs["group_j"].astype(str)),
                   pd.Series(pairs["n_i"].to_numpy(), index=pairs["group_i"].astype(str))])
    n = n[~n.index.duplicated()]
    return ordinal.larger_first(list(n.index), n.to_numpy(dtype=float))


safe_figures(globals())
