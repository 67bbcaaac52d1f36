"""Page side of the background job runner: start a job, poll it live, cancel it.

Worker threads never call Streamlit; this module only reads their snapshots, from a fragment
that reruns every ``interval`` seconds while the job runs and stops once it has ended.
"""

from __future__ import annotations

from typing import Any, Callable

import streamlit as st

from fairness_core.jobs import DONE, ENDED, RUNNER, Job, Snapshot, TooManyJobs
from ui.widgets import md_escape


def _eta(snap: Snapshot) -> str:
    if snap.ended:
        return f"{snap.elapsed:,.0f} s"
    if snap.eta is None:
        return "estimating…"
    return f"{snap.elapsed:,.0f} s elapsed, about {snap.eta:,.0f} s left"


#: Which page key each job was started under, so ``?job=`` reattaches only on its own page.
_JOB_KEYS: dict[str, str] = {}


def current(key: str) -> Job | None:
    """The job this session started under ``key``, or the one the URL names (``?job=``, after a reload
    or in a second tab) when it belongs to this page; None if none or forgotten by the runner."""
    job = RUNNER.get(st.session_state.get(f"{key}-job"))
    if job is None:
        linked = st.query_params.get("job")
        if linked and _JOB_KEYS.get(linked) == key and RUNNER.get(linked) is not None:
            st.session_state[f"{key}-job"] = linked
            job = RUNNER.get(linked)
    return job


#: A job nobody has polled for this long belongs to a closed session and stops itself.
ORPHAN_AFTER_S = 60.0


def start(key: str, name: str, fn: Callable[..., Any], lane: str | None = None) -> Job | None:
    """Submit ``fn(on_progress, should_stop)`` for this session (queued when the server is busy); shows
    an error instead when the session's own cap is reached. The job id goes into the URL (``?job=``) so
    a reload reattaches, and the job stops itself a minute after no page of the session polls it."""
    from ui.state import session_id

    try:
        job = RUNNER.submit(name, fn, orphan_after=ORPHAN_AFTER_S, owner=session_id(), lane=lane)
    except TooManyJobs as exc:
        st.error(str(exc), icon=":material/hourglass_top:")
        return None
    _JOB_KEYS[job.id] = key
    st.session_state[f"{key}-job"] = job.id
    st.session_state.pop(f"{key}-shown", None)
    st.query_params["job"] = job.id
    return job


def session_jobs() -> list[Job]:
    """The unfinished jobs this browser session knows (on any page)."""
    ids = [v for k, v in st.session_state.items() if isinstance(k, str) and k.endswith("-job")]
    return [j for j in (RUNNER.get(i) for i in ids) if j is not None and j.status not in ENDED]


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
            state = f"queued ({snap.message})" if snap.status == "pending" else f"{snap.fraction:.0%}"
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
        return

    @st.fragment(run_every=interval if job.status not in ENDED else None)
    def panel() -> None:
        job.heartbeat()
        snap = job.snapshot()
        label = {"running": "Running", "pending": "Queued", "done": "Finished", "cancelled": "Cancelled",
                 "failed": "Failed"}[snap.status]
        text = f"{label} · {md_escape(snap.message or snap.name)} · {_eta(snap)}"  # the bar's text is markdown
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
