"""The background job runner: progress, cancel, failure, the concurrency cap."""

from __future__ import annotations

import threading

import pytest

from fairness_core import jobs


def test_cancel_stops_within_one_step():
    runner = jobs.JobRunner(max_running=1)
    steps = []
    started = threading.Event()

    def loop(on_progress, should_stop):
        k = 0
        while not should_stop():
            k += 1
            steps.append(k)
            on_progress(done=k, total=10**9, loss=float(k))
            started.set()
        return k

    job = runner.submit("loop", loop)
    assert started.wait(5)
    job.cancel()
    assert job.wait(5)
    snap = job.snapshot()
    assert snap.status == jobs.CANCELLED and snap.result == steps[-1]  # a partial result is kept
    assert len(snap.records) == len(steps)  # nothing ran after the step that saw the cancel


def test_cancelled_exception_and_failure_are_reported():
    runner = jobs.JobRunner()

    def stop(on_progress, should_stop):
        raise jobs.Cancelled("early")

    def boom(on_progress, should_stop):
        on_progress(done=1, total=2)
        raise ValueError("column 'x' has no variance")

    a, b = runner.submit("stop", stop), runner.submit("boom", boom)
    assert a.wait(5) and b.wait(5)
    assert a.snapshot().status == jobs.CANCELLED
    snap = b.snapshot()
    assert snap.status == jobs.FAILED and snap.error == "ValueError: column 'x' has no variance"
    assert snap.fraction == 0.5 and snap.ended


def test_cap_on_running_jobs_and_registry():
    runner = jobs.JobRunner(max_running=1)
    gate = threading.Event()

    def wait_for_gate(on_progress, should_stop):
        gate.wait(5)
        return "ok"

    job = runner.submit("first", wait_for_gate)
    with pytest.raises(jobs.TooManyJobs, match="limit is 1"):
        runner.submit("second", wait_for_gate)
    assert runner.get(job.id) is job and runner.get("nope") is None
    gate.set()
    assert job.wait(5) and job.snapshot().result == "ok"
    assert runner.submit("third", wait_for_gate).wait(5)  # the slot is free again


def test_snapshot_since_and_eta():
    runner = jobs.JobRunner()
    gate = threading.Event()
    halfway = threading.Event()

    def two_halves(on_progress, should_stop):
        on_progress(done=1, total=2, message="first half")
        halfway.set()
        gate.wait(5)
        on_progress(done=2, total=2, message="second half")

    job = runner.submit("halves", two_halves)
    assert halfway.wait(5)
    snap = job.snapshot()
    assert snap.status == jobs.RUNNING and snap.message == "first half" and snap.eta is not None
    gate.set()
    job.wait(5)
    assert [r["message"] for r in job.snapshot(since=1).records] == ["second half"]


def test_a_job_nobody_polls_stops_itself():
    runner = jobs.JobRunner()

    def loop(on_progress, should_stop):
        while not should_stop():
            threading.Event().wait(0.01)
        return "stopped"

    job = runner.submit("orphan", loop, orphan_after=0.2)
    job.heartbeat()  # a page looked once, then its session ended
    assert job.wait(5)
    assert job.snapshot().status == jobs.CANCELLED and "session ended" in job.snapshot().message
    watched = runner.submit("watched", loop, orphan_after=0.2)
    for _ in range(10):  # polled every 0.05 s: keeps running
        watched.heartbeat()
        threading.Event().wait(0.05)
    assert not watched.snapshot().ended
    watched.cancel()
    assert watched.wait(5)
