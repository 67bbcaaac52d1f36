"""Shared pieces of every figure: colours, layouts, and the escaping of user text."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import plotly.colors
import plotly.graph_objects as go
import plotly.io as pio

from ...common.text import plotly_text

UNDEFINED_COLOR = "#d9d9d9"
FAVOURS_I = "#2166ac"  # blue: the score leans toward group i (the row)
FAVOURS_J = "#b2182b"  # red: toward group j (the column)
NEUTRAL = "#f7f7f7"
FONT = dict(family="Inter, Segoe UI, Helvetica, Arial, sans-serif", size=13)


def _fmt(x: float, digits: int = 3) -> str:
    return "undefined" if not np.isfinite(x) else f"{x:.{digits}f}"


#: Longest group name a heatmap's tick label shows in full; longer ones end in "…" (the hover has it all).
MAX_TICK_LABEL = 40
#: Most groups whose cells carry their values as text; beyond it the cells are too small and hover says it.
MAX_ANNOTATED_GROUPS = 14


def _short(label: str, limit: int = MAX_TICK_LABEL) -> str:
    return label if len(label) <= limit else label[: limit - 1].rstrip() + "…"


def _heatmap_geometry(labels: list[str]) -> dict[str, float]:
    """Cell size, fonts, label angle and figure height for a k×k heatmap, from 2 to 60 groups.

    Cells shrink from 56 px (k ≤ 6) to 18 px (k ≥ 32); values are written in the cells up to
    :data:`MAX_ANNOTATED_GROUPS` groups. Column labels stand upright beyond 8 groups or when
    they are long, so they never collide; the height leaves room for them.
    """
    k = max(len(labels), 1)
    cell = float(np.clip(560 / k, 18, 56)) if k > 6 else 56.0
    longest = max((len(_short(str(g))) for g in labels), default=1)
    upright = k > 8 or longest > 14
    tick_font = 12 if cell >= 24 else 11
    label_px = longest * tick_font * 0.6 * (1.0 if upright else 0.5) + 30
    return {"cell": cell, "tick_font": tick_font, "angle": -90 if upright else -30,
            "cell_font": 12 if cell >= 50 else 10, "annotate": k <= MAX_ANNOTATED_GROUPS,
            "height": 110 + k * cell + label_px}


def _layout(fig: go.Figure, title: str, labels: list[str]) -> go.Figure:
    """Layout of a pairwise heatmap: every row and column labelled (long names shortened with
    "…"), sized so that 2 to 60 groups stay readable."""
    geo = _heatmap_geometry(labels)
    ticks = dict(tickmode="array", tickvals=list(labels), ticktext=[_short(str(g)) for g in labels],
                 tickfont=dict(size=geo["tick_font"]), showgrid=False, automargin=True)
    fig.update_layout(
        title=dict(text=title, x=0.0, xanchor="left", font=dict(size=16)),
        font=FONT, height=int(geo["height"]) + 15, margin=dict(l=10, r=10, t=95, b=10),
        plot_bgcolor="white", paper_bgcolor="white",
        xaxis=dict(title="group j", side="bottom", tickangle=geo["angle"], **ticks),
        yaxis=dict(title="group i", autorange="reversed", **ticks),
    )
    return fig


def notation(formula: str) -> str:
    """A plain-text formula (``"(P^_i/n_i) / (P^_j/n_j)"``) in Plotly's markup: hats and
    subscripts (``"(P̂<sub>i</sub>/n<sub>i</sub>) / …"``). For formulas only, never user text.

    >>> notation("FN_i/FP_i − N^_j")
    'FN<sub>i</sub>/FP<sub>i</sub> − N̂<sub>j</sub>'
    """
    hats = re.sub(r"([PN])\^", lambda m: m.group(1) + "\u0302", formula)
    return re.sub(r"_([A-Za-z0-9]+)", r"<sub>\1</sub>", hats)


PALETTE = ("#4a6fa5", "#c8553d", "#2a9d8f", "#8e6c8a", "#e9a23b", "#5c946e", "#6c757d", "#b56576")
UNDEFINED_BAR = "#c0392b"


#: Longest first title line (characters) kept on one line; figures often sit in half-width columns.
MAX_TITLE_LINE = 48


def _wrap_title(title: str) -> str:
    """A long first line gives its parenthesis or its part after a colon to a subtitle line, so that
    the title is not cut off in a narrow column.

    >>> _wrap_title("One validation forecast as training goes (best agent, epoch 30)")
    'One validation forecast as training goes<br><sup>best agent, epoch 30</sup>'
    >>> _wrap_title("Short title")
    'Short title'
    """
    first, sep, rest = title.partition("<br>")
    plain = re.sub(r"<[^>]+>", "", first)
    if len(plain) <= MAX_TITLE_LINE:
        return title
    match = re.match(r"^(.*?)\s*\(([^()]*)\)\s*$", first) or re.match(r"^([^:]{12,}):\s*(.+)$", first)
    if match is None:
        return title
    return f"{match.group(1)}<br><sup>{match.group(2)}</sup>" + (sep + rest if sep else "")


def _plain(fig: go.Figure, title: str, height: int = 420, legend_below: bool | None = None,
           wrap: bool = True) -> go.Figure:
    """Shared layout. The legend goes to the bottom of the figure (below the axis titles, measured
    from the figure's edge) when asked, and always for figures with subplot titles, which a legend
    at the top would cover; otherwise it sits above the plot on the right. A long first title line
    is wrapped (:func:`_wrap_title`) unless ``wrap`` is False: a title holding user text gives its own
    subtitle instead, so that no colon or parenthesis inside a name is taken for a place to break."""
    subplots = bool(fig.layout.annotations) and any(getattr(a, "yref", "") == "paper" and (a.y or 0) >= 0.9
                                                   for a in fig.layout.annotations)
    below = subplots or bool(legend_below)
    legend = (dict(orientation="h", yref="container", yanchor="bottom", y=0.0, xanchor="left", x=0) if below
              else dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1))
    title = _wrap_title(title) if wrap else title
    top = 80 + 18 * max(0, title.count("<br>") - 1)  # room for every subtitle line
    if subplots and title.count("<br>") >= 2:
        top += 22  # and for the subplot titles under a two-line subtitle
    fig.update_layout(title=dict(text=title, x=0, xanchor="left", font=dict(size=16)), font=FONT,
                      height=height + (50 if below else 0) + (top - 80),
                      margin=dict(l=10, r=10, t=top, b=60 if below else 10),
                      plot_bgcolor="white", paper_bgcolor="white", legend=legend)
    fig.update_xaxes(gridcolor="#eee", zerolinecolor="#ccc")
    fig.update_yaxes(gridcolor="#eee", zerolinecolor="#ccc")
    return fig


def _shades(k: int) -> list[str]:
    """k blues from light to dark (small n light, large n dark)."""
    return plotly.colors.sample_colorscale("Blues", list(np.linspace(0.35, 1.0, k))) if k > 1 else ["#2166ac"]


def interval_markers(x: Any, y: list[str], low: Any, high: Any, p: Any, *, name: str, color: str, size: int,
                     whisker: int, hovertemplate: str) -> go.Scatter:
    """Square markers at ``x`` on category rows ``y`` with asymmetric whiskers to ``low`` and ``high``, the
    interval and ``p`` in ``customdata`` (0: low, 1: high, 2: p) for ``hovertemplate``: the forest plots' trace."""
    x, low, high = (np.asarray(v, dtype=float) for v in (x, low, high))
    return go.Scatter(x=x, y=y, mode="markers", name=name, marker=dict(color=color, size=size, symbol="square"),
                      error_x=dict(type="data", symmetric=False, array=high - x, arrayminus=x - low, color=color,
                               thickness=2, width=whisker),
                      customdata=np.column_stack([low, high, np.asarray(p, dtype=float)]),
                      hovertemplate=hovertemplate)


def _escape_labels(values):  # type: ignore[no-untyped-def]
    """Escape the text items of a trace's x / y / name for Plotly's HTML-like rendering (:func:`plotly_text`)."""
    if isinstance(values, str):
        return plotly_text(values)
    if values is None:
        return values
    arr = np.asarray(values, dtype=object)
    if arr.dtype == object and arr.ndim == 1 and any(isinstance(v, str) for v in arr):
        return [(plotly_text(v) if isinstance(v, str) else v) for v in arr]
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
            trace.name = plotly_text(trace.name)
    for key in list(fig.layout.to_plotly_json()):
        if key.startswith(("xaxis", "yaxis")):
            for attr in ("categoryarray", "tickvals", "ticktext"):  # category names, and their shown labels
                if fig.layout[key][attr] is not None:
                    fig.layout[key][attr] = _escape_labels(fig.layout[key][attr])
    return fig


def _tidy_log_axes(fig: go.Figure) -> None:
    """Log axes label whole decades when their data span two or more (1, 10, 100 …, no crowd of
    2s and 5s between them), and 1-2-5 steps when they span less. Axes with set ticks are left alone."""
    layout = fig.layout.to_plotly_json()
    for key, axis in layout.items():
        if not key.startswith(("xaxis", "yaxis")) or axis.get("type") != "log" or axis.get("tickvals") is not None:
            continue
        letter, ref = key[0], key[0] + key[5:]  # "yaxis2" -> traces with yaxis == "y2"
        values = [np.asarray(getattr(t, letter), dtype=float) for t in fig.data
                  if getattr(t, letter, None) is not None and (getattr(t, f"{letter}axis", None) or letter) == ref
                  and t.type in ("scatter", "scattergl", "bar", "box")]
        data = np.concatenate(values) if values else np.array([])
        data = data[np.isfinite(data) & (data > 0)]
        span = float(np.log10(data.max()) - np.log10(data.min())) if data.size else 0.0
        # without raw values (a box of precomputed quartiles) 1-2-5 steps are never crowded
        fig.layout[key].dtick = 1 if span >= 2 else "D2"


def _returns_safe_figure(fn: Callable[..., go.Figure]) -> Callable[..., go.Figure]:
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        fig = escape_user_text(fn(*args, **kwargs))
        _tidy_log_axes(fig)
        # Importing Streamlit makes its own template plotly's process-wide default, so a figure
        # exported from the app (report, "Download figure") would differ from the same figure
        # exported elsewhere (tick labels clipped). Every figure carries plotly's own template; the app
        # still shows it in Streamlit's theme.
        fig.update_layout(template=pio.templates["plotly"])
        return fig
    return wrapper


def safe_figures(namespace: dict[str, Any]) -> None:
    """Wrap every public figure builder of a module (``namespace = globals()``) so that it escapes
    user text and carries plotly's own template on the way out: no page or report can forget to."""
    module = namespace["__name__"]
    for name, fn in list(namespace.items()):
        if (callable(fn) and not name.startswith("_") and getattr(fn, "__module__", None) == module
                and getattr(fn, "__annotations__", {}).get("return") in ("go.Figure", go.Figure)):
            namespace[name] = _returns_safe_figure(fn)
