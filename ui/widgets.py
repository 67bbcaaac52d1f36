"""Download buttons and table display with "undefined" for NaN."""

from __future__ import annotations

import hashlib
import html
import re
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from fairness_core.common.text import counted, safe_file_name
from fairness_core.io import to_safe_csv
from fairness_core.reading import three_questions, verdict_reading
from fairness_core.verdicts import SELECTION_VERDICTS, VERDICTS


def styled(df: pd.DataFrame, precision: int = 4,
           formats: Mapping[str, str | Callable[[float], str]] | None = None) -> "pd.io.formats.style.Styler":
    """NaN shown as "undefined", numbers to ``precision`` places (or per-column ``formats``: a
    format string such as ``"{:.3g}"`` so tiny p-values do not read 0.0000, or a callable).

    Streamlit's grid shows "None" for a null cell whatever the Styler says, so an undefined
    float is stored as +inf and displayed as "undefined": the column stays numeric and sorts
    numerically, with undefined values last. Missing text shows as an empty cell.

    The styler comes rendered (pandas' ``_compute`` and ``_translate`` done once, their result kept on
    it) and, when every format is a format string, from a small cache shared by the sessions, keyed by the
    table's content: most of what ``st.dataframe`` costs for a styled table is pandas rendering the same
    table again for every view. A table styled before is found again by identity (a table the caches share,
    never changed) with its shape, columns and dtypes checked, without hashing its cells.
    """
    formats = dict(formats or {})
    if not all(isinstance(f, str) for f in formats.values()):
        return _rendered(_style(df, precision, formats))
    settings = (precision, tuple(sorted(formats.items())))
    seen = (id(df), settings)
    with _STYLED_LOCK:   # the same shared table again (a cached one): its key without hashing its cells
        known = _SEEN.get(seen)
        if known is not None and known[0] is df and known[1] == _shape_key(df):
            _SEEN.move_to_end(seen)
            hit = _STYLED.get(known[2])
            if hit is not None:
                _STYLED.move_to_end(known[2])
                return hit
    try:
        key = (_content_key(df), *settings)
    except TypeError:   # cells that cannot be hashed (lists): rendered for this view only
        return _rendered(_style(df, precision, formats))
    with _STYLED_LOCK:
        hit = _STYLED.get(key)
        if hit is not None:
            _STYLED.move_to_end(key)
    if hit is None:
        hit = _rendered(_style(df, precision, formats))
    with _STYLED_LOCK:
        _STYLED[key] = hit
        _SEEN[seen] = (df, _shape_key(df), key)
        for cache in (_STYLED, _SEEN):
            while len(cache) > _STYLED_MAX:
                cache.popitem(last=False)
    return hit


#: Rendered stylers kept for every session (a few hundred small tables: the verdicts, the group tables).
_STYLED: "OrderedDict[tuple, pd.io.formats.style.Styler]" = OrderedDict()
#: The tables last styled, by identity: ``(id, settings) -> (table, its shape key, its key in _STYLED)``. The tables
#: the caches share (read-only, the same object for every session) find their styler without hashing their cells
#: on every view; the table is held, so its id is not reused while it is here.
_SEEN: "OrderedDict[tuple, tuple]" = OrderedDict()
_STYLED_LOCK = threading.Lock()
_STYLED_MAX = 256


def _shape_key(df: pd.DataFrame) -> tuple:
    """What a table's identity alone does not vouch for, checked on every identity hit: shape, columns, dtypes."""
    return df.shape, tuple(map(str, df.columns)), tuple(map(str, df.dtypes))


def _content_key(df: pd.DataFrame) -> tuple:
    """Everything a styled table shows: its cells (hashed with their index), columns, dtypes and shape."""
    values = pd.util.hash_pandas_object(df, index=True).to_numpy()
    return (hashlib.sha256(values.tobytes()).hexdigest(), tuple(map(str, df.columns)),
            tuple(map(str, df.dtypes)), tuple(map(str, df.index.names)), df.shape)


def _rendered(style: "pd.io.formats.style.Styler") -> "pd.io.formats.style.Styler":
    """``style`` with pandas' rendering done now and kept: Streamlit calls ``_compute`` and ``_translate`` on
    every ``st.dataframe``; on this styler they return the kept result (read only, so sessions may share it)."""
    style._compute()
    translated = style._translate(False, False)
    style._compute = lambda: style                      # type: ignore[method-assign]
    style._translate = lambda *args, **kwargs: translated  # type: ignore[method-assign]
    return style


def _style(df: pd.DataFrame, precision: int, formats: Mapping[str, str | Callable[[float], str]]
           ) -> "pd.io.formats.style.Styler":
    data = df.copy()
    floats = [c for c in data.columns if pd.api.types.is_float_dtype(data[c])]
    texts = [c for c in data.columns if pd.api.types.is_object_dtype(data[c])]
    data[floats] = data[floats].fillna(np.inf)
    data[texts] = data[texts].fillna("")

    def number(fmt: str | Callable[[float], str] | None) -> Callable[[float], str]:
        def render(v: float) -> str:
            if callable(fmt):
                return fmt(v)
            if not np.isfinite(v):
                return "undefined"
            return fmt.format(v) if fmt else f"{v:,.{precision}f}"
        return render

    style = data.style
    for c in floats:
        style = style.format(number(formats.get(c)), subset=[c])
    for c in data.columns:
        if c not in floats and pd.api.types.is_integer_dtype(data[c]):
            style = style.format("{:,}", subset=[c])
    return style


#: Probabilities that can be astronomically small: three significant digits.
P_FORMATS = {c: "{:.3g}" for c in ("p-value", "adjusted p-value", "percentile", "p_value", "p_value_error",
                                   "percentile_error", "OFI p (adjusted)", "DI p (adjusted)",
                                   "impact ratio p (adjusted)", "p (adjusted)")}


def require(selection: object, what: str) -> None:
    """Stop the page with a warning when a multiselect came back empty ("Pick at least one {what}.")."""
    if not selection:
        st.warning(f"Pick at least one {what}.", icon=":material/warning:")
        st.stop()


def download_name(file_name: str, suffix: str) -> str:
    """A download's file name from ``file_name``, the app's words around a user's names ending in the app's
    ``suffix``: what precedes the suffix made safe by :func:`fairness_core.common.text.safe_file_name` (no ``/``,
    ``\\``, ``..``, hidden or reserved characters, at most 80 characters before the suffix).

    >>> download_name('vs_<a href="x">/../Black\u202e.csv', ".csv")
    'vs_a_href_x_._Black.csv'
    """
    return safe_file_name(file_name.removesuffix(suffix), suffix)


def with_names(df: pd.DataFrame, names: Mapping[str, object] | None, index: bool) -> tuple[pd.DataFrame, bool]:
    """``df`` as a CSV download writes it, and whether its index goes too: ``names`` (the user names its file name
    was built from: ``{"group": "a/b"}``) as its first columns, before the index, so that the file keeps them as
    they are. Without names, ``df`` unchanged."""
    if not names:
        return df, index
    out = (df.reset_index() if index else df).copy(deep=False)
    for k, (column, value) in enumerate(names.items()):
        out.insert(k, column, str(value), allow_duplicates=True)
    return out, False


def figure_html(fig: go.Figure, names: Mapping[str, object] | None = None) -> str:
    """The self-contained HTML page of ``fig`` (plotly.js inlined, works offline); ``names`` (the user names its file
    name was built from) as its title and as a line above the figure, escaped, each isolated from the text around
    it (a direction override in a name reorders nothing else)."""
    if not names:
        return fig.to_html(include_plotlyjs=True, full_html=True)
    title = html.escape(" · ".join(f"{k}: {v}" for k, v in names.items()))
    line = " · ".join(f"{html.escape(k)}: <bdi>{html.escape(str(v))}</bdi>" for k, v in names.items())
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8" /><title>{title}</title></head><body><p>{line}</p>'
            f"{fig.to_html(include_plotlyjs=True, full_html=False)}</body></html>")


def csv_download(df: pd.DataFrame, file_name: str, label: str = "Download CSV", key: str | None = None,
                 index: bool = True, names: Mapping[str, object] | None = None) -> None:
    """A CSV download of ``df`` with spreadsheet-formula cells neutralized; built on click. ``file_name`` may hold
    user names (:func:`download_name` makes it safe); pass them as ``names`` and the file keeps them as they are
    (:func:`with_names`)."""
    st.download_button(label, data=lambda: to_safe_csv(*with_names(df, names, index)),
                       file_name=download_name(file_name, ".csv"), mime="text/csv", key=key or f"csv-{file_name}",
                       on_click="ignore", icon=":material/download:")


def html_download(fig: go.Figure, file_name: str, label: str = "Download figure (HTML)", key: str | None = None,
                  names: Mapping[str, object] | None = None) -> None:
    """A self-contained interactive HTML of ``fig`` (:func:`figure_html`, which keeps ``names``, the user names in
    ``file_name``, inside the page); built on click."""
    st.download_button(label, data=lambda: figure_html(fig, names), file_name=download_name(file_name, ".html"),
                       mime="text/html", key=key or f"html-{file_name}", on_click="ignore",
                       icon=":material/download:")


def chart(fig: go.Figure, file_name: str, key: str, label: str = "Download figure (HTML)",
          download_key: str | None = None, names: Mapping[str, object] | None = None) -> None:
    """A figure and, under it, its self-contained HTML download: the pair every chart on a page shows.
    ``key`` names the chart's widget; its download's key is ``download_key`` (default ``key + "-html"``); ``names``
    are the user names in ``file_name`` (:func:`html_download`)."""
    st.plotly_chart(_to_send(fig), width="stretch", key=key)
    html_download(fig, file_name, label=label, key=download_key or f"{key}-html", names=names)


class _SentFigure(go.Figure):
    """A figure for ``st.plotly_chart`` alone: its ``to_dict`` is ``fig.to_dict()`` (the deep copy and array
    encoding that Streamlit turns into the chart's JSON on every view), computed once and then returned as it is.
    It is all Streamlit reads of a figure; nothing else is ever given one."""

    def __init__(self, fig: go.Figure) -> None:
        super().__init__()
        self._sent = fig.to_dict()

    def to_dict(self) -> dict:
        return self._sent


#: Figures charted before, by identity: ``id -> (weak reference, its _SentFigure once charted twice)``.
_SENT: dict[int, tuple[weakref.ref, _SentFigure | None]] = {}
_SENT_LOCK = threading.Lock()


def _to_send(fig: go.Figure) -> go.Figure:
    """``fig`` as :func:`chart` gives it to ``st.plotly_chart``: a figure charted a second time (the same object: one
    the caches share, read-only, with every session) gets a :class:`_SentFigure`, made once and kept while the
    figure lives; a figure built for one view is sent as it is, with nothing copied."""
    key = id(fig)
    with _SENT_LOCK:
        entry = _SENT.get(key)
        if entry is None or entry[0]() is not fig:
            # the callback runs where the figure is freed, perhaps under this lock: no lock there (dict ops are atomic)
            _SENT[key] = (weakref.ref(fig, lambda _ref, k=key: _SENT.pop(k, None)), None)
            return fig
        if entry[1] is not None:
            return entry[1]
    sent = _SentFigure(fig)
    with _SENT_LOCK:
        if _SENT.get(key, (None,))[0] is entry[0]:
            _SENT[key] = (entry[0], sent)
    return sent


def reasons_frame(reasons: Mapping[str, Mapping[str, str]]) -> pd.DataFrame:
    """``{group: {metric: reason}}`` as a long table: group, metric, why undefined."""
    rows = [{"group": g, "metric": k, "undefined because": r} for g, rs in reasons.items() for k, r in rs.items()]
    return pd.DataFrame(rows, columns=["group", "metric", "undefined because"])


_VERDICT_HELP = {
    "algorithmic bias": "OFI's adjusted interval lies beyond ±tolerance: the model favours one group, relative to "
                        "the labels, by more than the difference you declared material.",
    "materiality unclear": "OFI's adjusted interval excludes 0 but reaches inside ±tolerance: a real difference that "
                           "may be too small to matter. Not called bias, and not OFI ≈ 0.",
    "systemic disparity": "OFI's adjusted interval lies inside ±tolerance while DI's lies beyond the four-fifths "
                          "band [0.8, 1.25]: different base rates, not the model's fault.",
    "no bias detected": "OFI's adjusted interval inside ±tolerance and DI's inside the four-fifths band.",
    "inconclusive": "The intervals are too wide to decide at these group sizes; the table says how many more rows "
                    "would settle each pair.",
}


_SELECTION_HELP = {
    "adverse impact": "The impact ratio's adjusted interval lies below 0.8: the group is selected at under four "
                      "fifths of the other's rate, beyond what chance explains.",
    "materiality unclear": "The rates differ (the interval excludes 1) but the ratio may lie above or below 0.8.",
    "no adverse impact detected": "The impact ratio's adjusted interval lies inside the four-fifths band [0.8, 1.25].",
    "inconclusive": "The interval is too wide to decide at these group sizes.",
}


def verdict_summary(verdicts: pd.DataFrame, pairs: str = "pairs") -> None:
    """One tile per verdict: how many group pairs get it (inconclusive included), and of how many ``pairs`` (the
    caption's words for them, e.g. "pairs of sex categories")."""
    counts = verdicts["verdict"].value_counts()
    if not verdicts.outcomes:   # decisions alone: the four-fifths verdicts
        names, helps = SELECTION_VERDICTS, _SELECTION_HELP
    else:
        names, helps = VERDICTS, _VERDICT_HELP
    for col, verdict in zip(st.columns(len(names)), names):
        col.metric(verdict.capitalize(), f"{counts.get(verdict, 0):,}", help=helps[verdict])
    one = pairs.replace("pairs", "pair", 1) if pairs.startswith("pairs") else pairs
    st.caption(f"Group pairs with each verdict, of {md_escape(counted(len(verdicts), one, pairs))} in all.")


def questions_panel(audit, verdicts: pd.DataFrame, answers: dict | None = None) -> None:  # type: ignore[no-untyped-def]
    """The three questions an audit is judged by, side by side: OFI, the four-fifths rule, equal opportunity
    (``answers``: :func:`fairness_core.reading.three_questions` of these verdicts, when already computed)."""
    answers = answers if answers is not None else three_questions(audit, verdicts)
    for col, (question, answer) in zip(st.columns(3), answers["text"].items()):
        with col.container(border=True):
            st.markdown(f"**{question}**")
            st.markdown(md_escape(answer))
    pairs = answers["four_fifths"]["pairs"]
    if len(pairs):
        with st.expander(f"Every pair below the four-fifths line by point estimate ({len(pairs)})"):
            st.dataframe(pairs, width="stretch", hide_index=True, key="four-fifths-pairs")
            csv_download(pairs, "four_fifths_pairs.csv", "Download (CSV)", index=False)
    gaps = answers["equal_opportunity"]["gaps"]
    if not getattr(audit, "has_outcomes", True):
        return   # decisions alone: no error rates (the answer above says why)
    with st.expander("Error-rate gaps for every pair (equal opportunity)"):
        st.dataframe(gaps, width="stretch", hide_index=True, key="error-rate-gaps")
        csv_download(gaps, "error_rate_gaps.csv", "Download (CSV)", index=False)


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>$~:=])")
#: Where the markdown renderer would start an autolink: "://" after a scheme, "www." and "@" (e-mail, mailto:,
#: xmpp:). The renderer finds these in the text after backslash escapes are resolved, so escaping does not stop it.
_AUTOLINK_START = re.compile(r"(?i)(?<=:)(?=//)|(?<=www)(?=\.)|(?<=@)")
#: U+2060 WORD JOINER: invisible and never a line break; between ":" and "//", "www" and ".", or after "@", the
#: autolink patterns no longer match, so a bare URL or e-mail address in a name stays text.
WORD_JOINER = "\u2060"


def md_escape(text: object) -> str:
    r"""User text for st.markdown, st.caption, alerts and widget help: shown as typed, never as markup.

    Every markdown, HTML and Streamlit directive character is backslash-escaped, and a bare URL
    (``https://x.example``, ``www.x.example``) or e-mail address gets an invisible word joiner
    (:data:`WORD_JOINER`) where an autolink would begin, so it is not turned into a link.

    >>> print(md_escape("see https://x.example and a@b.co").replace(WORD_JOINER, "<WJ>"))
    see https\:<WJ>//x\.example and a@<WJ>b\.co
    """
    return _MD_SPECIAL.sub(r"\\\1", _AUTOLINK_START.sub(WORD_JOINER, str(text)))


@dataclass(frozen=True)
class BuiltIn:
    """A built-in choice offered in the same picker as user values (group or column names), such as
    "the rest of the data" beside the groups.

    It is never equal to a string, so a group literally named "the rest of the data" is a different
    option, and :func:`option_label` labels the two differently. Equal by its words, so the same
    choice compares equal across Streamlit reruns (a page's module-level objects are rebuilt on each run).
    """

    label: str

    def __str__(self) -> str:
        return self.label


def option_label(option: object, user: Callable[[str], str] = lambda v: f"“{v}”") -> str:
    """How a picker that mixes built-in choices with user values shows an option: a :class:`BuiltIn`
    as its own words, a user value through ``user`` (by default in quotation marks), so that no user
    value is labelled like a built-in.

    >>> option_label(BuiltIn("the rest of the data")), option_label("the rest of the data")
    ('the rest of the data', '“the rest of the data”')
    """
    return option.label if isinstance(option, BuiltIn) else user(str(option))


#: Rows of the verdict table shown on the page; the CSV download always has every pair.
MAX_VERDICT_ROWS = 500


def verdict_display(verdicts: pd.DataFrame, max_rows: int = MAX_VERDICT_ROWS) -> pd.DataFrame:
    """The verdict table as people read it (:func:`fairness_core.reading.verdict_reading`), at most ``max_rows`` rows."""
    return verdict_reading(verdicts, max_rows)


def figure_with_downloads(fig: go.Figure, key: str, table: pd.DataFrame, csv_name: str, csv_label: str,
                          index: bool = False) -> None:
    """A figure, then its HTML download and its table's CSV download side by side."""
    st.plotly_chart(_to_send(fig), width="stretch", key=key)
    left, right = st.columns(2)
    with left:
        html_download(fig, f"{key}.html", key=f"{key}-html")
    with right:
        csv_download(table, csv_name, csv_label, index=index)


def or_failure(make: Callable[[], object], what: str) -> Callable[[], object]:
    """A deferred download's data: ``make()``'s bytes, or a short file that says the download failed and why (never
    silence)."""
    def data():  # type: ignore[no-untyped-def]
        try:
            return make()
        except Exception as exc:  # noqa: BLE001 - any failure becomes a message in the file
            return f"The {what} could not be built: {type(exc).__name__}: {exc}\n".encode()
    return data
