"""Figures of a counterfactual test (issue 54): the discordance matrix (how often the model selected one group's
variant of a case and not the other's), the forest plot of every pair's paired difference with the adjusted interval
that decided its verdict, and each group's rate with its interval. Each reads a table of
:class:`fairness_core.counterfactual.PairedAudit` (``pairs()``, ``by_group()``); user text (group names) is escaped
on the way out (:func:`~._base.safe_figures`) and where it is built into hover text or titles."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ...common.vocabulary import check_alpha
from ...common.text import plotly_text
from ...wording.levels import level_text
from ._base import FAVOURS_I, FAVOURS_J, FONT, UNDEFINED_COLOR, _plain, _short, safe_figures

__all__ = ["discordance_matrix", "paired_forest", "paired_rates"]

#: Most pairs the forest plot draws (the largest differences; every pair is in the table).
MAX_FOREST_PAIRS = 60
#: Most groups the discordance matrix draws with its counts written in the cells.
MAX_WRITTEN = 12
#: The verdicts' colours: a material difference, materiality unclear, none shown, inconclusive.
VERDICT_COLORS = {"material difference": FAVOURS_J, "materiality unclear": "#e9a23b",
                  "no material difference detected": "#2a9d8f", "inconclusive": "#888888"}


def _groups_of(pairs: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys([*pairs["group_i"].astype(str), *pairs["group_j"].astype(str)]))


def discordance_matrix(pairs: pd.DataFrame, groups: list[str] | None = None, what: str = "selected") -> go.Figure:
    """The k × k discordance matrix: cell (row i, column j) is the share of the cases complete for both in which
    group i's variant was ``what`` (selected, ranked first) and group j's was not — ``only_i/n`` above the diagonal,
    ``only_j/n`` mirrored below it. A pair treated alike has two equal cells; a difference of selection rates is the
    cell minus its mirror, so an asymmetric pair of cells is what McNemar's test reads. Hover: the counts.

    >>> pairs = pd.DataFrame({"group_i": ["A"], "group_j": ["B"], "n": [10], "only_i": [3], "only_j": [1]})
    >>> [list(row) for row in discordance_matrix(pairs).data[0].z]
    [[None, 0.3], [0.1, None]]
    """
    names = list(groups) if groups is not None else _groups_of(pairs)
    k = len(names)
    where = {g: a for a, g in enumerate(names)}
    a = pairs["group_i"].astype(str).map(where).to_numpy()
    b = pairs["group_j"].astype(str).map(where).to_numpy()
    n = pairs["n"].to_numpy(dtype=float)
    count = np.full((k, k), np.nan)
    total = np.full((k, k), np.nan)
    count[a, b], count[b, a] = pairs["only_i"].to_numpy(dtype=float), pairs["only_j"].to_numpy(dtype=float)
    total[a, b], total[b, a] = n, n
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, count / total, np.nan)
    safe = [plotly_text(g) for g in names]
    hover = [[(f"<b>{safe[r]}</b> {what}, <b>{safe[c]}</b> not:<br>{int(count[r, c]):,} of {int(total[r, c]):,} "
               f"cases ({share[r, c]:.1%})" if np.isfinite(share[r, c]) else f"{safe[r]} against itself")
              for c in range(k)] for r in range(k)]
    text = [[(f"{share[r, c]:.0%}" if np.isfinite(share[r, c]) else "") for c in range(k)] for r in range(k)]
    z = [[(None if not np.isfinite(v) else float(v)) for v in row] for row in share]
    fig = go.Figure(go.Heatmap(z=z, x=names, y=names, colorscale="Blues", zmin=0,
                               zmax=float(np.nanmax(share)) if np.isfinite(share).any() else 1.0,
                               text=text if k <= MAX_WRITTEN else None, texttemplate="%{text}" if k <= MAX_WRITTEN
                               else None, hovertext=hover, hoverinfo="text", xgap=2, ygap=2,
                               colorbar=dict(title="share of cases", tickformat=".0%")))
    cell = float(np.clip(480 / max(k, 1), 22, 60))
    longest = max((len(_short(g)) for g in names), default=1)
    fig.update_layout(
        title=dict(text=f"Discordance: row {what}, column not<br><sup>share of the cases complete for both; a pair "
                        "treated alike has equal mirrored cells</sup>", x=0, xanchor="left", font=dict(size=16)),
        font=FONT, plot_bgcolor="white", paper_bgcolor="white", height=int(150 + k * cell + longest * 6),
        margin=dict(l=10, r=10, t=90, b=10),
        xaxis=dict(title=f"not {what}", type="category", tickangle=-35, automargin=True, tickmode="array",
                   tickvals=names, ticktext=[_short(g) for g in names]),
        yaxis=dict(title=what, type="category", autorange="reversed", automargin=True, tickmode="array",
                   tickvals=names, ticktext=[_short(g) for g in names]))
    return fig


def paired_forest(pairs: pd.DataFrame, tolerance: float, unit: str = "pp") -> go.Figure:
    """Every pair's paired difference (group i − group j: selection rates in percentage points, or mean scores in
    the score's ``unit``) with the adjusted interval that decided its verdict, coloured by verdict, the band
    ±``tolerance`` shaded; the :data:`MAX_FOREST_PAIRS` largest differences, largest first.

    >>> pairs = pd.DataFrame({"group_i": ["A"], "group_j": ["B"], "n": [10], "difference": [0.2],
    ...                       "difference_ci_low": [0.05], "difference_ci_high": [0.4], "verdict": ["inconclusive"],
    ...                       "level": [0.95], "difference_p_adjusted": [0.03]})
    >>> [round(float(v), 6) for v in paired_forest(pairs, 0.05).data[0].x]
    [20.0]
    """
    scale = 100.0 if unit == "pp" else 1.0
    order = np.argsort(-pairs["difference"].abs().fillna(0).to_numpy(), kind="stable")[:MAX_FOREST_PAIRS]
    part = pairs.iloc[order]
    labels = [f"{i} vs {j}" for i, j in zip(part["group_i"].astype(str), part["group_j"].astype(str))]
    shown = [_short(x, 60) for x in labels]
    level = level_text(float(pairs["level"].iloc[0])) if len(pairs) else ""
    fig = go.Figure()
    for verdict, colour in VERDICT_COLORS.items():
        mask = (part["verdict"].astype(str) == verdict).to_numpy()
        if not mask.any():
            continue
        sub = part[mask]
        x = sub["difference"].to_numpy(dtype=float) * scale
        low, high = (sub[c].to_numpy(dtype=float) * scale for c in ("difference_ci_low", "difference_ci_high"))
        hover = [f"<b>{plotly_text(lab)}</b><br>{'difference' if unit == 'pp' else 'mean difference'} "
                 f"{d:+.4g} {plotly_text(unit)} [{lo:.4g}, {hi:.4g}] ({level})<br>{plotly_text(verdict)} · "
                 f"{int(c):,} cases" for lab, d, lo, hi, c in zip(np.asarray(labels, dtype=object)[mask], x, low,
                                                                    high, sub["n"])]
        fig.add_trace(go.Scatter(x=x, y=list(np.asarray(shown, dtype=object)[mask]), mode="markers", name=verdict,
                                 marker=dict(color=colour, size=10, symbol="square"),
                                 error_x=dict(type="data", symmetric=False, array=np.nan_to_num(high - x),
                                              arrayminus=np.nan_to_num(x - low), color=colour, thickness=2, width=4),
                                 hovertext=hover, hoverinfo="text"))
    t = float(tolerance) * scale
    fig.add_vrect(x0=-t, x1=t, fillcolor=UNDEFINED_COLOR, opacity=0.35, line_width=0, layer="below")
    fig.add_vline(x=0, line_dash="dot", line_color="#888", line_width=1)
    fig.update_yaxes(type="category", autorange="reversed", categoryorder="array", categoryarray=shown)
    what = "selection rate i − j" if unit == "pp" else "mean score i − j"
    fig.update_xaxes(title_text=f"{what} ({plotly_text(unit)}), {level} adjusted interval")
    more = f"; the {MAX_FOREST_PAIRS} largest of {len(pairs)}" if len(pairs) > MAX_FOREST_PAIRS else ""
    return _plain(fig, f"Paired difference of every pair<br><sup>shaded: within ±{t:.4g} {plotly_text(unit)}"
                       f"{more}</sup>", height=150 + 26 * len(part), legend_below=True, wrap=False)


def paired_rates(by_group: pd.DataFrame, alpha: float = 0.05, baseline: tuple[str, str] | None = None,
                 null_swaps: tuple[str, ...] = ()) -> go.Figure:
    """Each group's rate over the cases it was answered on — the selection rate (decisions), the share ranked first
    (ranks) or the mean score (scores) — with its 1 − ``alpha`` interval (Clopper–Pearson, or Student's t), highest
    first; the null swaps (``null_swaps``, and the ``baseline``'s) in grey.

    >>> by = pd.DataFrame({"group": ["A", "B"], "n": [10, 10], "rate": [0.5, 0.2], "rate_ci_low": [0.2, 0.03],
    ...                    "rate_ci_high": [0.8, 0.56]})
    >>> paired_rates(by).data[0].x.tolist()
    [0.5, 0.2]
    """
    check_alpha(alpha)
    column = next(c for c in ("rate", "top_share", "mean") if c in by_group)
    x = by_group[column].to_numpy(dtype=float)
    low, high = (by_group[f"{column}_ci_{s}"].to_numpy(dtype=float) for s in ("low", "high"))
    names = by_group["group"].astype(str).to_numpy(dtype=object)
    order = np.argsort(-np.nan_to_num(x, nan=-np.inf), kind="stable")
    null = np.isin(names, [*null_swaps, *([] if baseline is None else [baseline[1]])])
    fig = go.Figure()
    words = {"rate": "selection rate", "top_share": "share ranked first", "mean": "mean score"}[column]
    for part, colour, label in ((~null, FAVOURS_I, words), (null, UNDEFINED_COLOR, "baseline (null swap)")):
        k = [i for i in order if part[i]]
        if not k:
            continue
        hover = [f"<b>{plotly_text(names[i])}</b><br>{words} {x[i]:.4g} [{low[i]:.4g}, {high[i]:.4g}]"
                 f"<br>{int(by_group['n'].iloc[i]):,} cases" for i in k]
        fig.add_trace(go.Scatter(x=x[k], y=list(names[k]), mode="markers", name=label,
                                 marker=dict(color=colour, size=10),
                                 error_x=dict(type="data", symmetric=False, array=np.nan_to_num(high[k] - x[k]),
                                              arrayminus=np.nan_to_num(x[k] - low[k]), color=colour),
                                 hovertext=hover, hoverinfo="text"))
    fig.update_yaxes(type="category", autorange="reversed", categoryorder="array", categoryarray=list(names[order]))
    fig.update_xaxes(title_text=f"{words}, {level_text(1 - alpha)} interval",
                     tickformat=".0%" if column != "mean" else None, rangemode="tozero" if column != "mean" else None)
    return _plain(fig, f"{words.capitalize()} per group<br><sup>each group over the cases it was answered on</sup>",
                  height=150 + 28 * len(by_group), legend_below=True, wrap=False)


safe_figures(globals())
