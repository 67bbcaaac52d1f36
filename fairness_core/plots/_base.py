"""Shared pieces of every figure: colours, layouts, and the escaping of user text."""

from __future__ import annotations

import functools
import html
from collections.abc import Callable
from typing import Any

import numpy as np
import plotly.colors
import plotly.graph_objects as go
import plotly.io as pio

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


def _hover_safe(text: str) -> str:
    """User text for Plotly's HTML-like labels: escaped so a group name cannot inject markup."""
    return html.escape(str(text), quote=False)


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
    return plotly.colors.sample_colorscale("Blues", list(np.linspace(0.35, 1.0, k))) if k > 1 else ["#2166ac"]


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


def _returns_safe_figure(fn: Callable[..., go.Figure]) -> Callable[..., go.Figure]:
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


def safe_figures(namespace: dict[str, Any]) -> None:
    """Wrap every public figure builder of a module (``namespace = globals()``) so that it escapes
    user text and carries plotly's own template on the way out: no page or report can forget to."""
    module = namespace["__name__"]
    for name, fn in list(namespace.items()):
        if (callable(fn) and not name.startswith("_") and getattr(fn, "__module__", None) == module
                and getattr(fn, "__annotations__", {}).get("return") in ("go.Figure", go.Figure)):
            namespace[name] = _returns_safe_figure(fn)
