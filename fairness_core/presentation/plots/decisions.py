"""Figures of an audit of decisions alone: each group's selection rate with its exact interval, against four
fifths of the highest rate."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from scipy import stats

from ...common.vocabulary import check_alpha
from ...statistics import bias
from ...audit import Audit
from ...wording.levels import level_text
from ...common.text import plotly_text
from ...common.validation import EXCLUDE_BELOW
from ._base import FAVOURS_J, FONT, UNDEFINED_COLOR, safe_figures


#: The groups under Local Law 144's 2 % of the data: drawn, outside the comparison, apart from the unknown categories.
SMALL_COLOR = "#b7a57a"

__all__ = ["clopper_pearson", "selection_rates"]


def clopper_pearson(x: np.ndarray, n: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact (Clopper–Pearson) two-sided 1 − ``alpha`` bounds of binomial proportions x/n, vectorized."""
    check_alpha(alpha)
    x, n = np.asarray(x, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        low = np.where(x > 0, stats.beta.ppf(alpha / 2, x, n - x + 1), 0.0)
        high = np.where(x < n, stats.beta.ppf(1 - alpha / 2, x + 1, n - x), 1.0)
    return low, high


def selection_rates(audit: Audit, alpha: float = 0.05) -> go.Figure:
    """Each group's selection rate (the share given the favourable decision) with its exact 1 − ``alpha``
    interval, highest first; a dashed line at four fifths of the highest rate among the groups compared
    (:attr:`~fairness_core.audit.Audit.compared_groups`: the verdicts' and the Local Law 144 summary's); the groups
    under 2 % of the data, then the unknown categories, in grey, outside the comparison.

    >>> from fairness_core import Audit
    >>> fig = selection_rates(Audit.from_decisions([1, 0, 1, 1, 0, 1], ["a", "a", "b", "b", "b", None],
    ...                                            positive_is="benefit"))
    >>> [round(float(x), 3) for x in fig.data[0].x]
    [0.667, 0.5]
    """
    check_alpha(alpha)
    compared, small = set(audit.compared_groups), set(audit.small_groups)
    cells = np.array([audit.cms[g].as_array() for g in audit.groups], dtype=float)
    n, selected = cells.sum(axis=1), cells[:, 0] + cells[:, 2]
    rate = selected / n
    low, high = clopper_pearson(selected, n, alpha)
    is_compared = np.array([g in compared for g in audit.groups])
    is_small = np.array([g in small for g in audit.groups])
    kind = np.where(is_compared, 0, np.where(is_small, 1, 2))
    order = np.lexsort((-rate, kind))   # compared groups first, then the small, then the unknown; by rate in each
    fig = go.Figure()
    for part, colour, label in ((kind == 0, FAVOURS_J, "selection rate"),
                                (kind == 1, SMALL_COLOR,
                                 f"under {EXCLUDE_BELOW * 100:g} % of the data (not in the ratios)"),
                                (kind == 2, UNDEFINED_COLOR, "unknown category (not in the ratios)")):
        k = [i for i in order if part[i]]
        if not k:
            continue
        names = [audit.groups[i] for i in k]   # escaped on the way out (safe_figures)
        fig.add_trace(go.Scatter(
            x=rate[k], y=names, mode="markers", name=label, marker=dict(color=colour, size=10),
            error_x=dict(type="data", symmetric=False, array=high[k] - rate[k], arrayminus=rate[k] - low[k],
                         color=colour),
            customdata=np.column_stack([selected[k].astype(int), n[k].astype(int), low[k], high[k]]),
            hovertemplate="<b>%{y}</b><br>selected %{customdata[0]:,} of %{customdata[1]:,} = %{x:.1%}<br>"
                          f"{level_text(1 - alpha)} exact CI " + "%{customdata[2]:.1%} to %{customdata[3]:.1%}"
                          "<extra></extra>"))
    best = int(np.flatnonzero(is_compared)[np.argmax(rate[is_compared])]) if is_compared.any() else None
    top = float(rate[best]) if best is not None else np.nan   # the first of tied highest, as the LL144 summary
    if np.isfinite(top) and top > 0:
        fig.add_vline(x=bias.FOUR_FIFTHS_LOW * top, line_dash="dash", line_color="#555",
                      annotation_text=f"4/5 of the highest rate, {plotly_text(audit.groups[best])}'s "
                                      f"{top:.1%}: {bias.FOUR_FIFTHS_LOW * top:.1%}",
                      annotation_position="top")
    fig.update_layout(title="Selection rate per group (decisions alone)", font=FONT, template="plotly_white",
                      xaxis=dict(title=f"selection rate, {level_text(1 - alpha)} exact interval", tickformat=".0%",
                                 rangemode="tozero"),
                      # tick labels as ticktext: Plotly decodes the escaped names there (it shows category values raw)
                      yaxis=dict(autorange="reversed", type="category", tickmode="array",
                                 tickvals=[audit.groups[i] for i in order], ticktext=[audit.groups[i] for i in order]),
                      height=160 + 28 * len(audit.groups), margin=dict(l=10, r=20, t=60, b=50),
                      legend=dict(orientation="h", y=-0.2))
    return fig


safe_figures(globals())
