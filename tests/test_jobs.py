"""The background job runner: progress, cancel, failure, the concurrency cap."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from fairness_core.services import jobs
from fairness_core.progress import Progress


def test_cancel_stops_within_one_step():
    runner = jobs.JobRunner(max_running=1)
    steps = []
    started = threading.Event()

    def loop(on_progress, should_stop):
        k = 0
        while not should_stop():
            k += 1
            steps.append(k)
            on_progress(Progress(done=k, total=10**9))
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
        on_progress(Progress(done=1, total=2))
        raise ValueError("column 'x' has no variance")

    a, b = runner.submit("stop", stop), runner.submit("boom", boom)
    assert a.wait(5) and b.wait(5)
    assert a.snapshot().status == jobs.CANCELLED
    snap = b.snapshot()
    assert snap.status == jobs.FAILED and snap.error == "ValueError: column 'x' has no variance"
    assert snap.fraction == 0.5 and snap.ended


def test_jobs_beyond_the_cap_wait_in_a_queue_with_their_position():
    runner = jobs.JobRunner(max_running=1)
    gate = threading.Event()

    def wait_for_gate(on_progress, should_stop):
        gate.wait(5)
        return "ok"

    first = runner.submit("first", wait_for_gate)
    second = runner.submit("second", wait_for_gate)
    third = runner.submit("third", wait_for_gate)
    assert second.snapshot().status == jobs.PENDING and second.snapshot().position == 1
    assert third.snapshot().position == 2 and third.snapshot().message == "queued, 1 ahead"
    assert second.snapshot().message == "queued, 0 ahead"
    third.cancel()  # leaves the queue without ever starting
    assert third.wait(1) and third.snapshot().status == jobs.CANCELLED and third.snapshot().elapsed == 0
    assert runner.get(first.id) is first and runner.get("nope") is None
    gate.set()
    assert first.wait(5) and second.wait(5) and second.snapshot().result == "ok"


def test_each_session_has_its_own_cap_and_ids_cannot_be_guessed():
    runner = jobs.JobRunner(max_running=4, per_owner=1)
    gate = threading.Event()
    job = runner.submit("a", lambda on_progress, should_stop: gate.wait(5), owner="session-1")
    with pytest.raises(jobs.TooManyJobs, match="this session already has 1"):
        runner.submit("b", lambda on_progress, should_stop: None, owner="session-1")
    other = runner.submit("c", lambda on_progress, should_stop: gate.wait(5), owner="session-2")
    assert runner.owned_by("session-1") == [job] and runner.owned_by("session-2") == [other]
    assert len(job.id) > 12 and job.id != other.id and not job.id[4:].isdigit()
    gate.set()
    assert job.wait(5) and other.wait(5)


def test_limits_come_from_the_environment_and_a_bad_value_names_its_variable():
    assert jobs.ServerLimits.from_env({}) == jobs.ServerLimits()
    limits = jobs.ServerLimits.from_env({"FAIRNESS_MAX_JOB_MEMORY_MB": " 8_192 ", "FAIRNESS_MAX_RUNNING_JOBS": "3",
                                         "FAIRNESS_JOBS_PER_SESSION": "2", "FAIRNESS_MAX_QUEUED_JOBS": "0"})
    assert (limits.max_job_memory_mb, limits.max_running, limits.heavy_per_session, limits.max_queued) == (8192, 3, 2, 0)
    with pytest.raises(jobs.LimitsError, match=r"FAIRNESS_MAX_JOB_MEMORY_MB='2GB' is not a whole number"):
        jobs.ServerLimits.from_env({"FAIRNESS_MAX_JOB_MEMORY_MB": "2GB"})
    with pytest.raises(jobs.LimitsError, match="FAIRNESS_MAX_RUNNING_JOBS must be a whole number >= 1, got 0"):
        jobs.ServerLimits.from_env({"FAIRNESS_MAX_RUNNING_JOBS": "0"})
    documented = (Path(__file__).resolve().parents[1] / "docs" / "server.md").read_text()
    for env, _, default in jobs.ServerLimits.variables():  # every variable documented with its default
        assert f"`{env}`" in documented and (env == "FAIRNESS_MAX_RUNNING_JOBS" or f"{default:,}" in documented)


def test_a_job_over_the_memory_budget_is_refused_with_the_numbers_and_never_starts():
    runner = jobs.JobRunner(limits=jobs.ServerLimits(max_job_memory_mb=2048))
    ran = threading.Event()
    with pytest.raises(jobs.OverBudget) as refused:
        runner.submit("paper", lambda on_progress, should_stop: ran.set(), owner="s",
                      estimate=jobs.Estimate(7100.4, what="this run"))
    assert str(refused.value) == ("this run needs about 7,100 MB; the server allows 2,048 MB per job "
                                  "(FAIRNESS_MAX_JOB_MEMORY_MB)")
    assert refused.value.needed_mb == 7100.4 and refused.value.allowed_mb == 2048
    assert not runner.running() and not ran.wait(0.05)
    fits = runner.submit("demo", lambda on_progress, should_stop: "ok", owner="s", estimate=jobs.Estimate(2048))
    assert fits.wait(5) and fits.snapshot().result == "ok"


def test_one_heavy_job_per_session_and_jobs_wait_for_memory():
    runner = jobs.JobRunner(limits=jobs.ServerLimits(max_running=3, total_job_memory_mb=1000))
    gate = threading.Event()

    def park(on_progress, should_stop):
        gate.wait(5)
        return "ok"

    heavy = runner.submit("HydraGAN", park, owner="session-1", estimate=jobs.Estimate(600))
    with pytest.raises(jobs.TooManyJobs, match=r"already has 1 training run running or queued \(HydraGAN\); "
                                               r"the server allows 1 per session \(FAIRNESS_JOBS_PER_SESSION\)"):
        runner.submit("PTN", park, owner="session-1", estimate=jobs.Estimate(100))
    light = runner.submit("error curves", park, owner="session-1")  # a light job is not a second training run
    other = runner.submit("PTN", park, owner="session-2", estimate=jobs.Estimate(600))
    # 600 + 600 MB exceed the 1,000 MB the running jobs may hold together: the second one queues
    assert heavy.snapshot().status == jobs.RUNNING and light.snapshot().status == jobs.RUNNING
    assert other.snapshot().status == jobs.PENDING and other.snapshot().message == "queued, 0 ahead"
    heavy.cancel()
    gate.set()
    assert heavy.wait(5) and other.wait(5) and other.snapshot().status == jobs.DONE
    again = runner.submit("PTN", park, owner="session-1", estimate=jobs.Estimate(100))  # the first one ended
    assert again.wait(5) and light.wait(5)


def test_only_the_owner_gets_a_job_by_its_id():
    runner = jobs.JobRunner()
    job = runner.submit("mine", lambda on_progress, should_stop: "ok", owner="session-1")
    assert runner.get_for(job.id, "session-1") is job
    assert runner.get_for(job.id, "session-2") is None and runner.get_for(None, "session-1") is None
    anonymous = runner.submit("library", lambda on_progress, should_stop: "ok")
    assert runner.get_for(anonymous.id, "session-1") is None  # a job with no owner is nobody's to attach
    assert job.wait(5) and anonymous.wait(5)


def test_jobs_in_one_lane_run_one_at_a_time():
    runner = jobs.JobRunner(max_running=3)
    inside, overlap = [0], [False]
    lock = threading.Lock()

    def work(on_progress, should_stop):
        with lock:
            inside[0] += 1
            overlap[0] |= inside[0] > 1
        threading.Event().wait(0.1)
        with lock:
            inside[0] -= 1

    started = [runner.submit(f"torch {k}", work, lane="torch") for k in range(3)]
    assert all(j.wait(5) for j in started) and not overlap[0]
    assert all(j.snapshot().status == jobs.DONE for j in started)


def test_snapshot_since_and_eta():
    runner = jobs.JobRunner()
    gate = threading.Event()
    halfway = threading.Event()

    def two_halves(on_progress, should_stop):
        on_progress(Progress(done=0, total=2, message="set up"))  # work starts here
        threading.Event().wait(0.05)
        on_progress(Progress(done=1, total=2, message="first half"))
        halfway.set()
        gate.wait(5)
        on_progress(Progress(done=2, total=2, message="second half"))

    job = runner.submit("halves", two_halves)
    assert halfway.wait(5)
    snap = job.snapshot()
    assert snap.status == jobs.RUNNING and snap.message == "first half" and snap.eta is not None
    gate.set()
    job.wait(5)
    assert [r.message for r in job.snapshot(since=2).records] == ["second half"]


def test_eta_reads_the_recent_pace_not_the_average_since_the_start():
    # 60 s of setup, then 10 units at 1 s each, then the machine gets busy: 4 s per unit.
    pace = [(60.0, 0)] + [(60.0 + k, k) for k in range(1, 11)] + [(70.0 + 4 * k, 10 + k) for k in range(1, 11)]
    now, done, total = pace[-1][0], pace[-1][1], 40
    eta = jobs._eta(pace, now, done, total)
    assert eta == pytest.approx(20 * 4.0)  # the last 15 s ran at 4 s per unit
    naive = now / done * (total - done)  # what an average since the start said
    assert naive == pytest.approx(110 / 20 * 20)
    # right after setup, the setup time does not inflate the estimate
    assert jobs._eta(pace[:4], 63.0, 3, 100) == pytest.approx(97.0)


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


def test_torch_jobs_side_by_side_are_bit_identical_to_alone():
    """PyTorch's random state is process-wide; the "torch" lane runs such jobs one at a time."""
    torch = pytest.importorskip("torch")

    def train(on_progress, should_stop):
        torch.manual_seed(0)
        layer, drop = torch.nn.Linear(8, 8), torch.nn.Dropout(0.5)
        x = torch.randn(64, 8)
        out = None
        for _ in range(30):
            out = drop(layer(x)).sum()
            threading.Event().wait(0.002)  # let the other thread run in between
            out = out + torch.randn_like(x).sum()
        return float(out)

    alone = jobs.JobRunner(max_running=1).submit("alone", train)
    assert alone.wait(10)
    runner = jobs.JobRunner(max_running=2)
    pair = [runner.submit(f"side by side {k}", train, lane="torch") for k in range(2)]
    assert all(j.wait(20) for j in pair)
    assert [j.snapshot().result for j in pair] == [alone.snapshot().result] * 2


def test_a_job_reports_typed_records_only():
    """One callback style for every long job: on_progress(record), a Progress; a dict of keywords is refused."""
    runner = jobs.JobRunner(max_running=1)

    def untyped(on_progress, should_stop):  # type: ignore[no-untyped-def]
        on_progress(done=1, total=2)

    job = runner.submit("untyped", untyped)
    assert job.wait(5)
    snap = job.snapshot()
    assert snap.status == "failed" and "TypeError" in (snap.error or "")


def test_every_kind_of_job_declares_its_memory_and_a_large_one_is_refused():
    """The light jobs too (the stability tab's bootstrap ensemble, the Smoothing page's error curves) are admitted
    by their memory estimate: what the page allows by default is admitted, five million rows are refused."""
    import numpy as np
    import pandas as pd

    from fairness_core import smoothing
    from fairness_core.statistics import ensemble

    runner = jobs.JobRunner(limits=jobs.ServerLimits(max_job_memory_mb=2048, total_job_memory_mb=4096))
    small = pd.DataFrame({"age": np.arange(7_214.0), "sex": np.array(["F", "M"])[np.arange(7_214) % 2]})
    ok = ensemble.estimate(small, n_models=20, folds=5)
    assert not ok.heavy and 20 < ok.memory_mb < 100
    big = pd.DataFrame({f"f{k}": np.zeros(5_000_000) for k in range(10)})
    with pytest.raises(jobs.OverBudget, match=r"bootstrap ensemble of 5 × 20 models on 5,000,000 rows needs about"):
        runner.submit("ensemble", lambda on_progress, should_stop: None, estimate=ensemble.estimate(big))
    # error curves: exact mode up to n = 200 (the page's largest) is admitted; its memory grows as C(n + 3, 3)
    assert smoothing.estimate(range(10, 201, 5)).memory_mb < 2048
    assert smoothing.estimate([100]).memory_mb < smoothing.estimate([200]).memory_mb
    assert smoothing.estimate([200], mode="monte_carlo", draws=100_000).memory_mb == pytest.approx(100)
