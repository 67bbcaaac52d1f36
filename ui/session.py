"""The browser session: its id (``?sid=``, the owner of its background jobs), the keys its data live under,
and those data kept in this server process for a reload of the same browser session.

The page side of the job runner (:mod:`ui.jobs`) and the session's data (:mod:`ui.state`) both start here.
"""

from __future__ import annotations

import binascii
import hashlib
import secrets
import threading
import time
from collections import OrderedDict
from typing import Any

import numpy as np
import streamlit as st

from fairness_core import datasets
from fairness_core.audit import Audit
from fairness_core.services.jobs import RUNNER
from fairness_core.validation import operator_limit

AUDIT_KEY = "audit"
DEMO_KEY = "demo_key"
CANDIDATES_KEY = "candidates"   # the uploaded rows' candidate models (datasets.Candidates), next to their audit
#: The model of the saved audit opened in the workbench (the Saved audits page): its trend joins the Bias Audit
#: report. Any other data clears it (:func:`set_audit`); a reload keeps it with the data (a "kept-" key).
SAVED_MODEL_KEY = "kept-opened-model"
GONE_KEY = "upload-gone"
#: The uploaded file the current data came from (name, what was read), for the Upload page to name when it opens
#: again with its uploader empty (Streamlit's uploader forgets its file across pages). Any other data clears it
#: (:func:`set_audit`); a reload keeps it with the data (a "kept-" key).
LOADED_FILE_KEY = "kept-loaded-file"
#: An audit of amounts or categories (a :class:`ui.kinds.Loaded`) beside the session's two-valued stand-in Audit
#: (issue 53); any other data clears it (:func:`ui.state.set_audit`); a reload keeps it with the data.
KIND_KEY = "kind-audit"


@st.cache_data(show_spinner=False)
def cached_demo(key: str) -> Audit:
    return datasets.load_demo(key)


#: A reload (F5) starts a new Streamlit session; the browser session's id in the URL (``?sid=``) finds its data
#: again here, for at most SAVED_HOURS hours and the SAVED_SESSIONS most recent sessions of this server process.
#: Held in memory, never written to disk: a server restart loses it, and the page then says so. Uploaded rows
#: count against SAVED_MIB in all (a demo is kept by its key alone), so sessions that ended cannot hold the
#: server's memory: beyond it the oldest are released first.
SAVED_SESSIONS, SAVED_HOURS = 64, 8
#: Megabytes of uploads kept for reloads in all (FAIRNESS_SESSION_STORE_MB): beyond it the oldest are released.
SAVED_MIB = operator_limit("FAIRNESS_SESSION_STORE_MB", 512)
_SAVED: OrderedDict[str, dict[str, Any]] = OrderedDict()
_SAVED_LOCK = threading.Lock()
#: Why a session id's kept data are no longer here (released to make room, too old, or taken by a reload that
#: moved them to a new id), so that a page opened with it says the real reason; bounded like the store.
_GONE: OrderedDict[str, str] = OrderedDict()
_GONE_LIMIT = 4096


def _note_gone(sid: str, why: str) -> None:
    """Remember why ``sid``'s data left (the caller holds the lock)."""
    _GONE[sid] = why
    _GONE.move_to_end(sid)
    while len(_GONE) > _GONE_LIMIT:
        _GONE.popitem(last=False)


def gone_reason(sid: str) -> str | None:
    """Why the data kept for ``sid`` are gone, in words, or None when nothing is known."""
    with _SAVED_LOCK:
        return _GONE.get(sid)


def browser_token(xsrf_cookie: str | None, ip: str | None = None, user_agent: str | None = None) -> str | None:
    """A digest that names the browser (not the tab) a request comes from, so that a reload finds its data and a
    shared link does not. Streamlit's XSRF cookie (``_streamlit_xsrf``, set per browser and kept across reloads)
    holds a secret token masked afresh on every page load (``2|mask|masked token|time``): its unmasked token is
    the browser's. Without that cookie (XSRF protection off, or a test harness) the address and the user agent
    stand in, a weaker binding. None when nothing is known. The token itself is never kept, only its digest."""
    token: bytes | None = None
    parts = (xsrf_cookie or "").split("|")
    if len(parts) == 4 and parts[0] == "2":
        try:
            mask, masked = binascii.a2b_hex(parts[1]), binascii.a2b_hex(parts[2])
        except (binascii.Error, ValueError):
            mask = masked = b""
        if len(mask) == 4 and masked:
            token = bytes(b ^ mask[i % 4] for i, b in enumerate(masked))
    elif xsrf_cookie:
        token = xsrf_cookie.encode()
    if token is None and (ip or user_agent):
        token = f"{ip or ''}|{user_agent or ''}".encode()
    return None if token is None else hashlib.sha256(b"fairness-browser|" + token).hexdigest()


def browser_key() -> str | None:
    """:func:`browser_token` of the browser this script run serves."""
    try:
        cookies, headers = st.context.cookies, st.context.headers
        ip = getattr(st.context, "ip_address", None)
        return browser_token(cookies.get("_streamlit_xsrf"), ip, headers.get("User-Agent"))
    except Exception:  # noqa: BLE001 - no request context (a bare script run): nothing known
        return None


def remember() -> None:
    """Keep this session's data and settings for a reload of the same browser session (the same browser: a link
    with ``?sid=`` opened in another browser gets nothing of it, see :func:`session_id`)."""
    sid = st.session_state.get("sid")
    if not sid or AUDIT_KEY not in st.session_state:
        return
    demo = st.session_state.get(DEMO_KEY)
    audit = None if demo else st.session_state[AUDIT_KEY]     # a demo is reloaded by its key, not kept
    candidates = None if demo else st.session_state.get(CANDIDATES_KEY)
    kind = st.session_state.get(KIND_KEY)
    entry = {"browser": browser_key(), "user": st.session_state.get("user"), "audit": audit, "demo": demo, "candidates": candidates, "time": time.time(),
             "kind": kind, "bytes": held_bytes(audit) + candidate_bytes(candidates) + (kind.nbytes() if kind else 0),
             "settings": {k: v for k, v in st.session_state.items() if str(k).startswith("kept-")}}
    with _SAVED_LOCK:
        _SAVED[sid] = entry
        _SAVED.move_to_end(sid)
        release_oldest(_SAVED, SAVED_SESSIONS, SAVED_MIB * 2**20, SAVED_HOURS * 3600)


def held_bytes(audit: Audit | None) -> int:
    """About how much memory keeping ``audit`` holds: its rows (labels, predictions, groups, probabilities,
    features); the confusion matrices themselves are negligible."""
    rows = None if audit is None else audit.rows
    if rows is None:
        return 0
    arrays = (rows.y, rows.y_pred, rows.groups, rows.probabilities, *(rows.scores or {}).values())
    features = 0 if rows.features is None else int(rows.features.memory_usage(index=True).sum())
    return sum(a.nbytes for a in arrays if a is not None) + features


def candidate_bytes(candidates: datasets.Candidates | None) -> int:
    """About how much memory keeping ``candidates`` holds beyond their audit: decisions, scores, group codes."""
    if candidates is None:
        return 0
    arrays = (candidates.y, *candidates.predictions.values(), *candidates.scores.values())
    return sum(np.asarray(a).nbytes for a in arrays) + int(candidates.groups.memory_usage(index=False, deep=True).sum())


def release_oldest(saved: OrderedDict[str, dict[str, Any]], sessions: int, max_bytes: int, max_age_s: float) -> None:
    """Release the oldest entries of ``saved`` (oldest first) while there are more than ``sessions``, they hold more
    than ``max_bytes`` in all, or they are older than ``max_age_s``; the newest entry is always kept. Each release
    is noted with its reason (:func:`gone_reason`)."""
    now, held = time.time(), sum(e.get("bytes", 0) for e in saved.values())
    while len(saved) > 1:
        oldest = next(iter(saved.values()))
        if len(saved) <= sessions and held <= max_bytes and now - oldest["time"] <= max_age_s:
            break
        why = (f"The data were kept for {max_age_s / 3600:g} hours after the page was last used"
               if now - oldest["time"] > max_age_s else
               f"The server keeps the uploads of its {sessions} most recently used sessions for a reload, and more "
               "sessions were used since" if len(saved) > sessions else
               f"The server keeps at most {max_bytes / 2**20:,.0f} MB of uploads for reloads "
               "(FAIRNESS_SESSION_STORE_MB), and newer uploads needed the room, so the oldest were released first")
        sid, entry = saved.popitem(last=False)
        held -= entry.get("bytes", 0)
        if saved is _SAVED:
            _note_gone(sid, why)


def _recall(sid: str, browser: str | None, user: str | None = None) -> dict[str, Any] | None:
    """The data kept for ``sid``, taken (once) by the browser and the signed-in user that kept them; None for any
    other browser or user, which leaves them where they are (a link shared while its owner works must not take the
    owner's data or jobs, nor may the next person who signs in on the same browser)."""
    with _SAVED_LOCK:
        entry = _SAVED.get(sid)
        if entry is not None and time.time() - entry["time"] > SAVED_HOURS * 3600:
            _SAVED.pop(sid)
            _note_gone(sid, f"The data were kept for {SAVED_HOURS} hours after the page was last used")
            return None
        if entry is None or entry.get("browser") != browser or entry.get("user") != user:
            return None
        return _SAVED.pop(sid)


def _held_elsewhere(sid: str) -> bool:
    """Whether data are kept for ``sid`` (for another browser: :func:`_recall` gave them to nobody here)."""
    with _SAVED_LOCK:
        return sid in _SAVED


#: Browser-session ids this server process has handed out; after a restart it is empty, so an open
#: tab that comes back with an old id learns that its data is gone.
_KNOWN_SESSIONS: set[str] = set()


def session_id() -> str:
    """This browser session's id (also in the URL as ``?sid=``), the owner of its background jobs. A reload
    comes back with the id in its URL and gets its data and settings back; an id whose data are gone (a server
    restart, or older than the retention) is told so."""
    if "sid" not in st.session_state:
        returning = st.query_params.get("sid")
        saved = _recall(returning, browser_key(), st.session_state.get("user")) if returning else None
        st.session_state["sid"] = secrets.token_urlsafe(9)   # a restored session gets a new id of its own: a
        _KNOWN_SESSIONS.add(st.session_state["sid"])         # duplicated tab or a shared link never shares state
        if saved is not None:
            # The restoring session is the reloaded one (the saved entry is taken once and only by the browser
            # that kept it, so a duplicated tab or a link opened in another browser never gets here): its
            # background jobs follow its data, and ?job= reattaches.
            RUNNER.hand_over(returning, st.session_state["sid"])
            with _SAVED_LOCK:
                _note_gone(returning, "A reload of the page moved these data to a new session id (this address is "
                                      "an older copy of it): the reloaded tab has them")
            st.session_state[AUDIT_KEY] = saved["audit"] if saved["audit"] is not None else cached_demo(saved["demo"])
            st.session_state[DEMO_KEY] = saved["demo"]
            if saved.get("candidates") is not None:
                st.session_state[CANDIDATES_KEY] = saved["candidates"]
            if saved.get("kind") is not None:
                st.session_state[KIND_KEY] = saved["kind"]
            for key, value in saved["settings"].items():
                st.session_state[key] = value
        elif returning and returning not in _KNOWN_SESSIONS:
            st.session_state["restarted"] = True
        elif returning and _held_elsewhere(returning):
            st.session_state["foreign-link"] = True
        elif returning:
            st.session_state["expired"] = gone_reason(returning) or True
    if st.query_params.get("sid") != st.session_state["sid"]:
        st.query_params["sid"] = st.session_state["sid"]
    return st.session_state["sid"]
