"""Page side of the background job runner: start a job, poll it live, cancel it.

Worker threads never call Streamlit; this module only reads their snapshots, from a fragment
that reruns every ``interval`` seconds while the job runs and stops once it has ended.
"""

from __future__ import annotations

from typing import Any, Callable

import streamlit as st

from fairness_core.services.jobs import DONE, ENDED, RUNNER, Estimate, Job, JobRefused, Snapshot
from ui.session import session_id
from ui.widgets import md_escape


def _eta(snap: Snapshot) -> str:
    if snap.ended:
        return f"{snap.elapsed:,.0f} s"
    if snap.eta is None:
        return "estimating…"
    return f"{snap.elapsed:,.0f} s elapsed, about {snap.eta:,.0f} s left"


#: What a session that is not a job's owner sees when a ``?job=`` link names it.
NOT_YOURS = ("This job belongs to another browser session: only the session that started it can watch, cancel "
             "or download it. Start your own run here.")


def _mine(job_id: str | None, key: str) -> Job | None:
    """The job ``job_id`` if this browser session started it under ``key``."""
    job = RUNNER.get_for(job_id, session_id())
    return job if job is not None and job.tag == key else None


def current(key: str) -> Job | None:
    """The job this session started under ``key``, or the one the URL names (``?job=``) when this session
    started it on this page; None if none, forgotten by the runner, or another session's."""
    job = _mine(st.session_state.get(f"{key}-job"), key)
    if job is None:
        job = _mine(st.query_params.get("job"), key)
        if job is not None:
            st.session_state[f"{key}-job"] = job.id
    return job


def _foreign_link(key: str) -> bool:
    """True when the URL's ``?job=`` names a job of this page that another session started."""
    job = RUNNER.get(st.query_params.get("job"))
    return job is not None and job.tag == key and job.owner != session_id()


#: A job nobody has polled for this long belongs to a closed session and stops itself.
ORPHAN_AFTER_S = 60.0


def start(key: str, name: str, fn: Callable[..., Any], lane: str | None = None,
          estimate: Estimate | None = None) -> Job | None:
    """Submit ``fn(on_progress, should_stop)`` for this session (queued when the server is busy). When the
    server refuses it (its memory ``estimate`` over the operator's budget, the session's own cap, a full
    queue), shows the refusal with its numbers and starts nothing. The job id goes into the URL
    (``?job=``); it attaches only in this session, and stops itself a minute after no page of the
    session polls it."""
    try:
        job = RUNNER.submit(name, fn, orphan_after=ORPHAN_AFTER_S, owner=session_id(), lane=lane,
                            estimate=estimate, tag=key)
    except JobRefused as exc:
        st.error(md_escape(str(exc)), icon=":material/block:")
        return None
    st.session_state[f"{key}-job"] = job.id
    st.session_state.pop(f"{key}-shown", None)
    st.query_params["job"] = job.id
    return job


def session_jobs() -> list[Job]:
    """The unfinished jobs this browser session started (on any page)."""
    return RUNNER.owned_by(session_id())


#: How often every page of a session tells its running jobs that someone is still there.
KEEP_ALIVE_S = 15.0


def keep_alive() -> None:
    """On every page (sidebar): while this session has unfinished jobs, heartbeat them every few seconds
    and say what runs, so looking at another page never cancels a training run."""
    if not session_jobs():
        return

    @st.fragment(run_every=KEEP_ALIVE_S)
    def beat() -> None:
        live = session_jobs()
        for job in live:
            job.heartbeat()
            snap = job.snapshot()
            state = snap.message if snap.status == "pending" else f"{snap.fraction:.0%}"
            st.caption(f"Running in the background: {md_escape(job.name)} · {state}")

    beat()


def running(key: str) -> bool:
    job = current(key)
    return job is not None and job.status not in ENDED


def finished(key: str) -> Job | None:
    """This session's job under ``key`` if it ended successfully (its ``result`` is ready)."""
    job = current(key)
    return job if job is not None and job.status == DONE else None


def live_panel(key: str, draw: Callable[[Snapshot], None], interval: float = 1.0) -> None:
    """Progress bar with ETA, a Cancel button and ``draw(snapshot)``, refreshed every ``interval``
    seconds while the job runs; one full rerun when it ends, so the page can show its result."""
    job = current(key)
    if job is None:
        if _foreign_link(key):
            st.warning(NOT_YOURS, icon=":material/lock:")
        return

    @st.fragment(run_every=interval if job.status not in ENDED else None)
    def panel() -> None:
        job.heartbeat()
        snap = job.snapshot()
        label = {"running": "Running", "pending": "Queued", "done": "Finished", "cancelled": "Cancelled",
                 "failed": "Failed"}[snap.status]
        text = f"{label} · {md_escape(snap.message or snap.name)} · {_eta(snap)}"  # the bar's text is markdown
        if snap.status == "pending":  # "Queued, 2 ahead · PTN on …": its place in the queue, no ETA yet
            text = f"Queued, {(snap.position or 1) - 1} ahead · {md_escape(snap.name)}"
        if snap.ended:
            st.progress(snap.fraction, text=text)
        else:
            c1, c2 = st.columns([5, 1])
            c1.progress(snap.fraction, text=text)
            if c2.button("Cancel", key=f"{key}-cancel", icon=":material/stop_circle:", width="stretch"):
                job.cancel()
                st.toast("Cancelling at the next step…", icon=":material/stop_circle:")
        if snap.status == "failed":
            st.error(f"The job failed: {md_escape(snap.error)}", icon=":material/error:")
        elif snap.status == "cancelled":
            st.warning("Cancelled. Nothing from this run is used; change the settings and train again.",
                       icon=":material/stop_circle:")
        draw(snap)
        if snap.ended and st.session_state.get(f"{key}-shown") != job.id:
            st.session_state[f"{key}-shown"] = job.id
            st.rerun()

    panel()
