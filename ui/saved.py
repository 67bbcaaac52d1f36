"""Saved audits in the app: one store for the server process, the sidebar note saying where audits are
kept, the "Save this audit" form of the Bias Audit page, and a model's trend across its saved periods.

The store is :class:`fairness_core.store.AuditStore` at :func:`fairness_core.store.default_url`
(``FAIRNESS_AUDIT_STORE``, else SQLite in ``FAIRNESS_DATA_DIR``), opened on first use and shared by every session
and thread of the process (the store is thread-safe). A store that cannot be opened is said in words
(:class:`~fairness_core.store.StoreError`), never as a traceback; the rest of the app works without it.
"""

from __future__ import annotations

import threading

import streamlit as st

from fairness_core import store as audit_store
from fairness_core.audit import Audit
from fairness_core.store import AuditStore, SavedAudit, StoreError
from fairness_core.trend import Trend, series_changes
from ui.cached import TTL_S
from ui.session import SAVED_MODEL_KEY
from ui.widgets import md_escape

#: The page that opens a saved audit from its link, and the link's query parameter.
PAGE, PARAM = "pages/8_Saved_Audits.py", "audit"

_STORES: dict[str, AuditStore] = {}
_LOCK = threading.Lock()


def store() -> AuditStore:
    """The process-wide store at the configured URL, opened on first use (another URL, e.g. in tests, opens
    another). Raises :class:`StoreError` with a message when it cannot be opened."""
    url = audit_store.default_url()
    with _LOCK:
        opened = _STORES.get(url)
        if opened is None:
            opened = _STORES[url] = AuditStore(url)
        return opened


def link(audit_id: str) -> str:
    """The relative link that opens a saved audit in any browser (the server's address goes before it)."""
    return f"/Saved_Audits?{PARAM}={audit_id}"


def sidebar_note() -> None:
    """Where audits are kept, or why they cannot be (one line in the sidebar of every page)."""
    try:
        where = store().where
    except StoreError as e:
        st.caption(f":material/error: **Saved audits are unavailable:** {md_escape(e)}")
        return
    st.caption(f":material/database: Saved audits are kept in {md_escape(where)}.")


def _text(value: str) -> str | None:
    return value if value.strip() else None


@st.fragment
def save_form(audit: Audit, tolerance: float, alpha: float, adjust: str) -> None:
    """A form that saves ``audit`` (not its rows) with its verdict settings, then shows the link that opens it."""
    st.caption("Kept: each group's confusion matrix, the source, notes, what a positive prediction means, the group "
               "columns, the verdict settings (OFI tolerance, α, adjustment), the names below, who saved it and the "
               "tool version. Not the rows: an opened copy has no stability tab. Saves with the same model and "
               "different periods form a series (a trend on the Saved audits page); use periods that sort, such "
               "as 2026-Q3 or 2026-07.")
    with st.form("save-audit", border=False):
        c1, c2 = st.columns(2)
        name = c1.text_input("Name", max_chars=audit_store.MAX_LABEL, key="save-name",
                             placeholder="e.g. credit scorecard, Q3 audit")
        period = c2.text_input("Period", max_chars=audit_store.MAX_LABEL, key="save-period",
                               placeholder="e.g. 2026-Q3", help="The time the data cover; saves of one model form a "
                               "series in the order of their periods (as text).")
        c3, c4, c5 = st.columns(3)
        model = c3.text_input("Model", max_chars=audit_store.MAX_LABEL, key="save-model",
                              placeholder="e.g. credit scorecard")
        version = c4.text_input("Model version", max_chars=audit_store.MAX_LABEL, key="save-version",
                                placeholder="e.g. v3.2")
        saved_by = c5.text_input("Saved by (optional)", max_chars=audit_store.MAX_LABEL, key="save-by")
        submitted = st.form_submit_button("Save this audit", icon=":material/save:")
    if submitted:
        if not name.strip():
            st.error("Give the audit a name.", icon=":material/error:")
        else:
            try:
                st.session_state["saved-audit-id"] = store().save(
                    audit, name, _text(model), _text(period), model_version=_text(version),
                    saved_by=_text(saved_by), tolerance=tolerance, alpha=alpha, adjust=adjust)
                st.session_state["saved-audit-name"] = name
            except (ValueError, StoreError) as e:
                st.error(f"**Not saved.** {md_escape(e)}", icon=":material/error:")
    audit_id = st.session_state.get("saved-audit-id")
    if audit_id:
        st.success(f"Saved “{md_escape(st.session_state.get('saved-audit-name', ''))}”. Anyone who can reach this "
                   "server opens a read-only copy at this link (after the server's address):",
                   icon=":material/check_circle:")
        st.code(link(audit_id), language=None)
        st.page_link(PAGE, label="Open the saved audit", icon=":material/open_in_new:", query_params={PARAM: audit_id})


@st.cache_resource(max_entries=16, ttl=TTL_S, show_spinner="Comparing the periods…")
def _trend(_history: tuple[SavedAudit, ...], ids: tuple[str, ...], tolerance: float, alpha: float,
           adjust: str) -> Trend:
    return series_changes(_history, tolerance, alpha, adjust)


def model_trend(model: str | None, tolerance: float, alpha: float, adjust: str) -> tuple[Trend | None, tuple]:
    """The trend of ``model`` across its saved periods at these settings, and its identity (the saved audits' ids
    and periods, () without a trend) for keying anything built from it; no trend when the model has fewer than two
    periods (or none). Shared by sessions: keyed by the ids (saved audits never change) and the settings."""
    if not model:
        return None, ()
    history = tuple(h for h in store().history(model) if h.audit.has_outcomes)   # OFI's trend needs outcomes
    if len({h.period for h in history}) < 2:
        return None, ()
    ids = tuple(h.id for h in history)
    return _trend(history, ids, tolerance, alpha, adjust), tuple((h.id, h.period) for h in history)


def trend_of(saved: SavedAudit) -> Trend | None:
    """The trend of ``saved``'s model across its saved periods, judged at ``saved``'s settings; None when the model
    has fewer than two periods (or no model)."""
    return model_trend(saved.model, saved.tolerance, saved.alpha, saved.adjust)[0]


def opened_trend(tolerance: float, alpha: float, adjust: str) -> tuple[Trend | None, tuple]:
    """The trend (and its identity, as :func:`model_trend`) of the saved audit's model when this session's data was
    opened from the store ("Open in the workbench"), at the given settings; (None, ()) for any other data or when
    the store fails (the report is then built without it)."""
    try:
        return model_trend(st.session_state.get(SAVED_MODEL_KEY), tolerance, alpha, adjust)
    except StoreError:
        return None, ()
