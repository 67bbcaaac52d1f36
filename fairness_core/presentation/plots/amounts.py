"""Figures of an audit of amounts (:class:`fairness_core.continuous.ContinuousAudit`): each group's distribution of
the benefit with its mean and the mean's interval."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ...continuous import ContinuousAudit
from ...wording.kinds import amount_range, amount_text, benefit_sides
from ._base import PALETTE, _plain, plotly_text, safe_figures

__all__ = ["benefit_distributions"]

#: The percentiles the whiskers reach (a box of precomputed quartiles: no row is sent to the browser).
WHISKERS = (0.05, 0.95)


def benefit_distributions(audit: ContinuousAudit, benefits: Any = None, groups: Any = None, unit: str = "",
                          alpha: float = 0.05, outcome: str = "the outcome", prediction: str = "the prediction"
                          ) -> go.Figure:
    """Per group, one row: a box of the benefit per person (quartiles, whiskers at the 5th and 95th percentiles;
    computed here, so a million rows send five numbers per group) and, over it, the mean benefit B with its
    1 − ``alpha`` interval (:meth:`ContinuousAudit.by_group`, unadjusted). ``benefits`` and ``groups`` are the rows'
    benefits and group names (the audit's names); without them only the means and intervals are drawn. A dashed
    line marks 0: no benefit, the prediction equal to the outcome on average; the caption says which side favours
    the person in the declared direction, naming the ``outcome`` and ``prediction`` as the user did (their columns:
    :func:`~fairness_core.wording.kinds.benefit_sides`).

    >>> a = ContinuousAudit.from_predictions([10, 12, 9, 11, 20, 22, 19, 21], [11, 12, 10, 12, 18, 21, 18, 19],
    ...                                      ["a"] * 4 + ["b"] * 4, positive_is="benefit")
    >>> fig = benefit_distributions(a, [1, 0, 1, 1, -2, -1, -1, -2], ["a"] * 4 + ["b"] * 4, unit="$")
    >>> [float(x) for x in fig.data[-1].x]                     # the means: B_a, B_b
    [0.75, -1.5]
    >>> [float(m) for m in fig.data[0].median]                 # the boxes' medians
    [1.0, -1.5]
    """
    table = audit.by_group(alpha=alpha)
    names = list(audit.groups)
    shown = [plotly_text(g) for g in names]   # for the hover text; trace labels are escaped on the way out
    fig = go.Figure()
    if benefits is not None:
        frame = pd.DataFrame({"group": np.asarray(groups, dtype=object), "b": np.asarray(benefits, dtype=float)})
        q = frame.groupby("group", sort=False)["b"].quantile([WHISKERS[0], 0.25, 0.5, 0.75, WHISKERS[1]]).unstack()
        q = q.reindex(names)
        have = q.notna().all(axis=1).to_numpy()
        if have.any():
            fig.add_trace(go.Box(
                y=[g for g, h in zip(names, have) if h], orientation="h", name="benefit per person",
                q1=q[0.25][have], median=q[0.5][have], q3=q[0.75][have], lowerfence=q[WHISKERS[0]][have],
                upperfence=q[WHISKERS[1]][have], fillcolor="rgba(74,111,165,0.25)", line=dict(color=PALETTE[0]),
                hoverinfo="skip"))
    low, high = table["mean_benefit_ci_low"].to_numpy(), table["mean_benefit_ci_high"].to_numpy()
    mean = table["mean_benefit"].to_numpy()
    hover = [f"<b>{s}</b> (n = {int(n):,})<br>mean benefit {plotly_text(amount_text(b, unit))}<br>"
             f"{round((1 - alpha) * 100):g} % interval {plotly_text(amount_range(lo, hi, unit))}"
             for s, n, b, lo, hi in zip(shown, table["n"], mean, low, high)]
    fig.add_trace(go.Scatter(
        x=mean, y=names, mode="markers", name=f"mean benefit, {round((1 - alpha) * 100):g} % interval",
        marker=dict(color=PALETTE[1], size=11, symbol="diamond"),
        error_x=dict(type="data", symmetric=False, array=high - mean, arrayminus=mean - low, color=PALETTE[1],
                     thickness=2.5, width=6),
        hovertext=hover, hoverinfo="text"))
    fig.add_vline(x=0, line_dash="dash", line_color="#888", line_width=1)
    what, right = benefit_sides(audit.positive_is, outcome, prediction)
    fig.update_yaxes(type="category", autorange="reversed")
    fig.update_xaxes(title_text=f"benefit per person ({plotly_text(what)}" + (f", {plotly_text(unit.strip())}"
                                                                           if unit.strip() else "") + ")")
    title = ("Benefit per person by group<br><sup>box: middle half, whiskers 5th–95th percentile; ◆ mean with its "
             f"interval; {plotly_text(right)}</sup>")
    return _plain(fig, title, height=140 + 60 * len(names), legend_below=True, wrap=False)


safe_figures(globals())
