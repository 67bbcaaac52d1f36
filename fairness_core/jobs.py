"""Background jobs: one runner for every long training run (HydraGAN, PTN, ensembles).

A job is a plain function ``fn(on_progress, should_stop)`` run in a worker thread.
``on_progress(**record)`` appends a record (losses, figures' data, a ``done``/``total``
pair) to a lock-guarded buffer; ``should_stop()`` turns True once someone cancels. Worker
threads never touch Streamlit: pages poll :meth:`Job.snapshot` (e.g. from an
``st.fragment(run_every=...)``) and stop polling when the job has ended.

>>> import time
>>> runner = JobRunner(max_running=1)
>>> def count(on_progress, should_stop):
...     for k in range(3):
...         on_progress(done=k + 1, total=3, loss=1.0 / (k + 1))
...     return "finished"
>>> job = runner.submit("count", count)
>>> job.wait(5)
True
>>> snap = job.snapshot()
>>> snap.status, snap.result, [r["loss"] for r in snap.records]
('done', 'finished', [1.0, 0.5, 0.3333333333333333])
"""

from __future__ import annotations

import os
import secrets
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

PENDING, RUNNING, DONE, CANCELLED, FAILED = "pending", "running", "done", "cancelled", "failed"
ENDED = (DONE, CANCELLED, FAILED)


class Cancelled(Exception):
    """Raised by a job function that stops early because ``should_stop()`` said so."""


class TooManyJobs(RuntimeError):
    """The owner (a browser session) already has its maximum number of jobs, or the queue is full."""


@dataclass(frozen=True)
class Snapshot:
    """A consistent copy of a job's state for a page to draw."""

    id: str
    name: str
    status: str
    records: list[dict[str, Any]]
    done: int
    total: int
    message: str
    elapsed: float
    eta: float | None  # seconds, from the recent pace (see Job.snapshot); None before the second unit
    result: Any
    error: str | None
    position: int | None = None  # 1-based place in the queue while pending, else None

    @property
    def fraction(self) -> float:
        return min(1.0, self.done / self.total) if self.total else 0.0

    @property
    def ended(self) -> bool:
        return self.status in ENDED


@dataclass
class Job:
    """One background run. Create through :meth:`JobRunner.submit`."""

    id: str
    name: str
    fn: Callable[..., Any]
    status: str = PENDING
    result: Any = None
    error: str | None = None
    started: float | None = None
    finished: float | None = None
    _records: list[dict[str, Any]] = field(default_factory=list)
    _done: int = 0
    _total: int = 0
    _message: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)
    _ended: threading.Event = field(default_factory=threading.Event)
    max_records: int = 20_000
    #: Seconds without a :meth:`heartbeat` after which the job counts as orphaned and stops
    #: (its page's session ended). None: never (library use).
    orphan_after: float | None = None
    _last_beat: float | None = None
    #: Who started the job (a browser session's id); caps and reattaching go by it.
    owner: str | None = None
    #: Jobs with the same lane run one at a time (e.g. "torch": PyTorch's global random state and
    #: thread pool are process-wide, so two trainings side by side would not be reproducible).
    lane: str | None = None
    _runner: "JobRunner | None" = None
    #: (seconds since start, units done) each time ``done`` moved: the pace the ETA is read from.
    _pace: list[tuple[float, int]] = field(default_factory=list)

    # -- called from the worker thread ----------------------------------------------------
    def on_progress(self, **record: Any) -> None:
        """Append one progress record; ``done``, ``total`` and ``message`` also set the progress bar."""
        with self._lock:
            if "done" in record:
                if int(record["done"]) != self._done or not self._pace:  # the first report marks work's start
                    self._pace.append((time.monotonic() - (self.started or time.monotonic()), int(record["done"])))
                    if len(self._pace) > 4096:
                        del self._pace[1:2049]  # keep the first point and the recent half
                self._done = int(record["done"])
            if "total" in record:
                self._total = int(record["total"])
            if "message" in record:
                self._message = str(record["message"])
            record.setdefault("time", time.monotonic() - (self.started or time.monotonic()))
            self._records.append(record)
            if len(self._records) > self.max_records:  # keep memory bounded on very long runs
                del self._records[: len(self._records) - self.max_records]

    def should_stop(self) -> bool:
        if self._stop.is_set():
            return True
        beat = self._last_beat
        if self.orphan_after is not None and beat is not None and time.monotonic() - beat > self.orphan_after:
            self._message = "stopped: nobody has looked at this job for a while (its session ended)"
            self._stop.set()
            return True
        return False

    def heartbeat(self) -> None:
        """Called by whoever watches the job (a page's polling panel); see ``orphan_after``."""
        self._last_beat = time.monotonic()

    def _run(self) -> None:
        try:
            self._work()
        finally:
            if self._runner is not None:
                self._runner._start_next()

    def _work(self) -> None:
        if self._stop.is_set():  # cancelled while queued
            with self._lock:
                self.status, self.finished = CANCELLED, time.monotonic()
            self._ended.set()
            return
        with self._lock:
            self.status, self.started = RUNNING, time.monotonic()
        try:
            result = self.fn(on_progress=self.on_progress, should_stop=self.should_stop)
        except Cancelled:
            status, result, error = CANCELLED, None, None
        except Exception as exc:  # noqa: BLE001 - a job's failure is reported, never raised into a page
            status, result = FAILED, None
            error = f"{type(exc).__name__}: {exc}"
            self._traceback = traceback.format_exc()
        else:
            status, error = (CANCELLED if self._stop.is_set() else DONE), None
        with self._lock:
            self.status, self.result, self.error, self.finished = status, result, error, time.monotonic()
        self._ended.set()

    # -- called from anywhere ---------------------------------------------------------------
    def cancel(self) -> None:
        """Ask the job to stop; it does at its next ``should_stop()`` check (a queued job never starts)."""
        self._stop.set()
        if self._runner is not None:
            self._runner._drop_if_queued(self)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job ends (True) or ``timeout`` seconds pass (False)."""
        return self._ended.wait(timeout)

    def snapshot(self, since: int = 0) -> Snapshot:
        """Status, progress and the records from index ``since`` on."""
        with self._lock:
            now = self.finished or time.monotonic()
            elapsed = now - self.started if self.started else 0.0
            eta = _eta(self._pace, elapsed, self._done, self._total) if self.status == RUNNING else None
            position = self._runner.position(self) if self._runner is not None and self.status == PENDING else None
            waiting = ("waiting its turn, next in line" if position == 1
                       else f"waiting its turn, {position - 1} job(s) ahead" if position else "")
            message = self._message or waiting
            return Snapshot(self.id, self.name, self.status, list(self._records[since:]), self._done, self._total,
                            message, elapsed, eta, self.result, self.error, position)


#: The ETA reads the pace of the last ETA_WINDOW_SHARE of the run (at least ETA_WINDOW_MIN seconds).
ETA_WINDOW_MIN = 15.0
ETA_WINDOW_SHARE = 0.3


def _eta(pace: list[tuple[float, int]], now: float, done: int, total: int) -> float | None:
    """Seconds left: the units left at the recent pace, never the average since the start.

    Setup before the first unit (data generation, model building) is not counted as work, and the
    pace is taken over a recent window, so a run whose units speed up or slow down (the machine
    gets busy, a cheaper phase begins) is re-estimated within seconds.

    >>> _eta([(30.0, 1), (31.0, 2), (32.0, 3)], now=32.0, done=3, total=13)  # 30 s setup, then 1 unit/s
    10.0
    >>> _eta([(5.0, 1)], now=5.0, done=1, total=10) is None  # one point gives no pace yet
    True
    """
    if done <= 0 or total <= done or len(pace) < 2:
        return None
    start = now - max(ETA_WINDOW_MIN, ETA_WINDOW_SHARE * (now - pace[0][0]))
    base = pace[0]
    for point in pace:  # the last point at or before the window's start (else the first)
        if point[0] > start:
            break
        base = point
    if base[1] >= done:
        base = pace[-2]
    span, units = now - base[0], done - base[1]
    if span <= 0 or units <= 0:
        return None
    return (total - done) * span / units


class JobRunner:
    """Runs jobs in daemon threads: at most ``max_running`` at once, one at a time per lane, at most
    ``per_owner`` unfinished jobs per owner; the rest wait in a first-come queue (``Snapshot.position``).
    Remembers jobs by an unguessable id, so a link carrying it (``?job=``) can reattach."""

    def __init__(self, max_running: int = 2, keep: int = 20, per_owner: int = 2, max_queued: int = 20):
        self.max_running = max_running
        self.keep = keep
        self.per_owner = per_owner
        self.max_queued = max_queued
        self._jobs: dict[str, Job] = {}
        self._queue: list[Job] = []
        self._lock = threading.RLock()

    def running(self) -> list[Job]:
        with self._lock:
            return [j for j in self._jobs.values() if j.status in (PENDING, RUNNING)]

    def submit(self, name: str, fn: Callable[..., Any], orphan_after: float | None = None,
               owner: str | None = None, lane: str | None = None) -> Job:
        """Start ``fn(on_progress=..., should_stop=...)`` in a thread now, or queue it.

        TooManyJobs when ``owner`` already has ``per_owner`` unfinished jobs or the queue is full.
        With ``orphan_after``, the job stops itself once nobody has called :meth:`Job.heartbeat`
        for that many seconds (the first heartbeat arms it)."""
        with self._lock:
            if owner is not None:
                mine = sum(j.owner == owner and j.status in (PENDING, RUNNING) for j in self._jobs.values())
                if mine >= self.per_owner:
                    raise TooManyJobs(f"this session already has {mine} jobs running or queued (the limit is "
                                      f"{self.per_owner}); wait for one to finish or cancel it")
            if len(self._queue) >= self.max_queued:
                raise TooManyJobs(f"{len(self._queue)} jobs are already waiting; try again in a few minutes")
            job = Job(id=f"job-{secrets.token_urlsafe(12)}", name=name, fn=fn, orphan_after=orphan_after,
                      owner=owner, lane=lane, _runner=self)
            self._jobs[job.id] = job
            ended = [k for k, j in self._jobs.items() if j.status in ENDED]
            for k in ended[: max(0, len(self._jobs) - self.keep)]:
                del self._jobs[k]
            self._queue.append(job)
        self._start_next()
        return job

    def _can_start(self, job: Job, active: list[Job]) -> bool:
        return len(active) < self.max_running and not (job.lane and any(j.lane == job.lane for j in active))

    def _start_next(self) -> None:
        """Start every queued job that fits (called on submit and whenever a job ends)."""
        with self._lock:
            active = [j for j in self._jobs.values() if j.status == RUNNING or (j.status == PENDING
                                                                               and j not in self._queue)]
            for job in list(self._queue):
                if self._can_start(job, active):
                    self._queue.remove(job)
                    active.append(job)
                    threading.Thread(target=job._run, name=f"fairness-{job.id}", daemon=True).start()

    def _drop_if_queued(self, job: Job) -> None:
        with self._lock:
            if job in self._queue:
                self._queue.remove(job)
                with job._lock:
                    job.status, job.finished = CANCELLED, time.monotonic()
                job._ended.set()

    def position(self, job: Job) -> int | None:
        """1-based place of ``job`` in the queue, or None when it is not waiting."""
        with self._lock:
            return self._queue.index(job) + 1 if job in self._queue else None

    def get(self, job_id: str | None) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id) if job_id else None

    def owned_by(self, owner: str) -> list[Job]:
        """The unfinished jobs ``owner`` started."""
        with self._lock:
            return [j for j in self._jobs.values() if j.owner == owner and j.status in (PENDING, RUNNING)]


#: The process-wide registry the pages share (Streamlit runs every session in one process), sized to
#: the cores: one core stays free for the pages themselves.
RUNNER = JobRunner(max_running=max(1, (os.cpu_count() or 2) - 1))
