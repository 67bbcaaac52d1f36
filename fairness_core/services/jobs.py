"""Background jobs: one runner for every long training run (HydraGAN, PTN, ensembles).

A job is a plain function ``fn(on_progress, should_stop)`` run in a worker thread.
``on_progress(record)`` appends one typed :class:`~fairness_core.progress.Progress` record (a phase's
losses, figures' data, ``done`` of ``total``) to a lock-guarded buffer; ``should_stop()`` turns True once
someone cancels. Worker
threads never touch Streamlit: pages poll :meth:`Job.snapshot` (e.g. from an
``st.fragment(run_every=...)``) and stop polling when the job has ended.

>>> from dataclasses import dataclass
>>> from fairness_core.progress import Progress
>>> @dataclass(frozen=True)
... class Step(Progress):
...     loss: float = 0.0
>>> runner = JobRunner(max_running=1)
>>> def count(on_progress, should_stop):
...     for k in range(3):
...         on_progress(Step(done=k + 1, total=3, loss=1.0 / (k + 1)))
...     return "finished"
>>> job = runner.submit("count", count)
>>> job.wait(5)
True
>>> snap = job.snapshot()
>>> snap.status, snap.result, [r.loss for r in snap.records]
('done', 'finished', [1.0, 0.5, 0.3333333333333333])

Admission: the operator bounds what the shared server runs with environment variables, read once
into :class:`ServerLimits` (see docs/server.md). A job is submitted with an :class:`Estimate` of
its memory; :meth:`JobRunner.submit` refuses one over the per-job budget with the numbers, and a
session's second heavy job while its first is unfinished.

>>> runner = JobRunner(limits=ServerLimits(max_job_memory_mb=2048))
>>> runner.submit("paper", count, estimate=Estimate(7100, what="this run"))
Traceback (most recent call last):
...
fairness_core.services.jobs.OverBudget: this run needs about 7,100 MB; the server allows 2,048 MB per job (FAIRNESS_MAX_JOB_MEMORY_MB)
"""

from __future__ import annotations

import os
import secrets
import threading
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable

from ..common.progress import Cancelled, Estimate, Progress

PENDING, RUNNING, DONE, CANCELLED, FAILED = "pending", "running", "done", "cancelled", "failed"
ENDED = (DONE, CANCELLED, FAILED)


class JobRefused(RuntimeError):
    """A job was not admitted; the message says why, with the numbers and the limit's variable."""


class TooManyJobs(JobRefused):
    """The owner (a browser session) already has its maximum number of jobs, or the queue is full."""


class OverBudget(JobRefused):
    """The job's memory estimate exceeds what the server allows one job."""

    def __init__(self, needed_mb: float, allowed_mb: int, what: str = "this run"):
        self.needed_mb, self.allowed_mb = needed_mb, allowed_mb
        super().__init__(f"{what} needs about {needed_mb:,.0f} MB; the server allows {allowed_mb:,} MB per job "
                         "(FAIRNESS_MAX_JOB_MEMORY_MB)")


class LimitsError(ValueError):
    """An environment variable of :class:`ServerLimits` holds a value the server cannot use."""


def _cores() -> int:
    return max(1, (os.cpu_count() or 2) - 1)  # one core stays free for the pages themselves


@dataclass(frozen=True)
class ServerLimits:
    """The budgets the server allows its background jobs, set by the operator (docs/server.md).

    Each field is read from the environment variable in its metadata by :meth:`from_env`; the
    defaults suit a 2-core machine with 8 GB shared by a team."""

    #: Largest memory estimate one job may have (MB); a job over it is refused with the numbers.
    max_job_memory_mb: int = field(default=2048, metadata={"env": "FAIRNESS_MAX_JOB_MEMORY_MB", "min": 1})
    #: Running jobs' estimates together (MB); a job that does not fit beside them waits in the queue.
    total_job_memory_mb: int = field(default=4096, metadata={"env": "FAIRNESS_TOTAL_JOB_MEMORY_MB", "min": 1})
    #: Jobs running at once (the rest queue).
    max_running: int = field(default_factory=_cores, metadata={"env": "FAIRNESS_MAX_RUNNING_JOBS", "min": 1})
    #: Jobs waiting in the queue; a job beyond it is refused.
    max_queued: int = field(default=20, metadata={"env": "FAIRNESS_MAX_QUEUED_JOBS", "min": 0})
    #: Heavy jobs (model training) one browser session may have running or queued.
    heavy_per_session: int = field(default=1, metadata={"env": "FAIRNESS_JOBS_PER_SESSION", "min": 1})
    #: Light jobs (e.g. Smoothing's error curves) one browser session may have running or queued.
    light_per_session: int = field(default=2, metadata={"env": "FAIRNESS_LIGHT_JOBS_PER_SESSION", "min": 1})

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if not isinstance(v, int) or isinstance(v, bool) or v < f.metadata["min"]:
                raise LimitsError(f"{f.metadata['env']} must be a whole number >= {f.metadata['min']}, got {v!r}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "ServerLimits":
        """The limits from ``environ`` (default ``os.environ``); unset variables keep their defaults.
        A value that is not a whole number at or above its minimum raises :class:`LimitsError`
        naming the variable."""
        environ = os.environ if environ is None else environ
        values: dict[str, int] = {}
        for f in fields(cls):
            name = f.metadata["env"]
            raw = environ.get(name)
            if raw is None or not raw.strip():
                continue
            try:
                values[f.name] = int(raw.strip().replace("_", "").replace(",", ""))
            except ValueError:
                raise LimitsError(f"{name}={raw!r} is not a whole number (e.g. {name}="
                                  f"{getattr(cls(), f.name)})") from None
        return cls(**values)

    @classmethod
    def variables(cls) -> list[tuple[str, str, Any]]:
        """(environment variable, field name, default) for every limit, for docs and messages."""
        defaults = cls()
        return [(f.metadata["env"], f.name, getattr(defaults, f.name)) for f in fields(cls)]


@dataclass(frozen=True)
class Snapshot:
    """A consistent copy of a job's state for a page to draw."""

    id: str
    name: str
    status: str
    records: list[Progress]
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
    _records: list[Progress] = field(default_factory=list)
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
    #: What the job declared it costs (None: a light job of unknown, small memory).
    estimate: Estimate | None = None
    #: What the submitter filed it under (a page's key), so a link reattaches only where it was started.
    tag: str | None = None
    _runner: "JobRunner | None" = None
    #: (seconds since start, units done) each time ``done`` moved: the pace the ETA is read from.
    _pace: list[tuple[float, int]] = field(default_factory=list)

    # -- called from the worker thread ----------------------------------------------------
    def on_progress(self, record: Progress) -> None:
        """Append one progress record (a :class:`~fairness_core.progress.Progress`, usually a phase's subclass);
        its ``done``, ``total`` and ``message`` also set the progress bar, and the runner stamps its ``time``."""
        if not isinstance(record, Progress):
            raise TypeError(f"a job reports fairness_core.progress.Progress records, got {type(record).__name__}")
        with self._lock:
            if record.done or record.total:
                if int(record.done) != self._done or not self._pace:  # the first report marks work's start
                    self._pace.append((time.monotonic() - (self.started or time.monotonic()), int(record.done)))
                    if len(self._pace) > 4096:
                        del self._pace[1:2049]  # keep the first point and the recent half
                self._done = int(record.done)
            if record.total:
                self._total = int(record.total)
            if record.message:
                self._message = str(record.message)
            if record.time is None:
                record = replace(record, time=time.monotonic() - (self.started or time.monotonic()))
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
            waiting = f"queued, {position - 1} ahead" if position else ""
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
    """Runs jobs in daemon threads within :class:`ServerLimits`: at most ``max_running`` at once and
    their memory estimates within ``total_job_memory_mb``, one at a time per lane; the rest wait in a
    first-come queue (``Snapshot.position``). Remembers jobs by an unguessable id; only the owner
    that started a job may attach to it (see :meth:`get_for`)."""

    def __init__(self, max_running: int | None = None, keep: int = 20, per_owner: int | None = None,
                 max_queued: int | None = None, limits: ServerLimits | None = None):
        """``limits`` (default: :class:`ServerLimits`'s defaults, not the environment); ``max_running``,
        ``per_owner`` (light jobs per owner) and ``max_queued`` override its fields."""
        overrides = {k: v for k, v in (("max_running", max_running), ("light_per_session", per_owner),
                                       ("max_queued", max_queued)) if v is not None}
        self.limits = replace(limits or ServerLimits(), **overrides)
        self.keep = keep
        self._jobs: dict[str, Job] = {}
        self._queue: list[Job] = []
        self._lock = threading.RLock()

    @property
    def max_running(self) -> int:
        return self.limits.max_running

    def running(self) -> list[Job]:
        with self._lock:
            return [j for j in self._jobs.values() if j.status in (PENDING, RUNNING)]

    def submit(self, name: str, fn: Callable[..., Any], orphan_after: float | None = None,
               owner: str | None = None, lane: str | None = None, estimate: Estimate | None = None,
               tag: str | None = None) -> Job:
        """Start ``fn(on_progress=..., should_stop=...)`` in a thread now, or queue it.

        Refuses (nothing is started) with :class:`OverBudget` when ``estimate.memory_mb`` exceeds
        ``max_job_memory_mb``, and with :class:`TooManyJobs` when ``owner`` already has its heavy (or
        light) jobs' limit unfinished or the queue is full. With ``orphan_after``, the job stops itself
        once nobody has called :meth:`Job.heartbeat` for that many seconds (the first heartbeat arms it)."""
        limits = self.limits
        if estimate is not None and estimate.memory_mb > limits.max_job_memory_mb:
            raise OverBudget(estimate.memory_mb, limits.max_job_memory_mb, estimate.what)
        heavy = estimate is not None and estimate.heavy
        with self._lock:
            if owner is not None:
                mine = [j for j in self.owned_by(owner) if (j.estimate is not None and j.estimate.heavy) == heavy]
                cap, env = ((limits.heavy_per_session, "FAIRNESS_JOBS_PER_SESSION") if heavy
                            else (limits.light_per_session, "FAIRNESS_LIGHT_JOBS_PER_SESSION"))
                if len(mine) >= cap:
                    kind = "training run" if heavy else "job"
                    raise TooManyJobs(f"this session already has {len(mine)} {kind}{'s' * (len(mine) != 1)} "
                                      f"running or queued ({', '.join(j.name for j in mine)}); the server allows "
                                      f"{cap} per session ({env}). Wait for it to finish or cancel it")
            if len(self._queue) >= limits.max_queued:
                raise TooManyJobs(f"{len(self._queue)} jobs are already waiting, the most the server queues "
                                  "(FAIRNESS_MAX_QUEUED_JOBS); try again in a few minutes")
            job = Job(id=f"job-{secrets.token_urlsafe(12)}", name=name, fn=fn, orphan_after=orphan_after,
                      owner=owner, lane=lane, estimate=estimate, tag=tag, _runner=self)
            self._jobs[job.id] = job
            ended = [k for k, j in self._jobs.items() if j.status in ENDED]
            for k in ended[: max(0, len(self._jobs) - self.keep)]:
                del self._jobs[k]
            self._queue.append(job)
        self._start_next()
        return job

    def _can_start(self, job: Job, active: list[Job]) -> bool:
        if len(active) >= self.limits.max_running or (job.lane and any(j.lane == job.lane for j in active)):
            return False
        memory = sum(j.estimate.memory_mb for j in active if j.estimate is not None)
        # A job alone always starts (it passed the per-job budget); beside others, its memory must fit.
        return not active or memory + (job.estimate.memory_mb if job.estimate else 0) <= self.limits.total_job_memory_mb

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
        self._start_next()  # a job behind it may fit now

    def position(self, job: Job) -> int | None:
        """1-based place of ``job`` in the queue, or None when it is not waiting."""
        with self._lock:
            return self._queue.index(job) + 1 if job in self._queue else None

    def get(self, job_id: str | None) -> Job | None:
        """The job with this id whoever owns it (library use; pages go through :meth:`get_for`)."""
        with self._lock:
            return self._jobs.get(job_id) if job_id else None

    def get_for(self, job_id: str | None, owner: str) -> Job | None:
        """The job with this id only if ``owner`` started it: another session's id finds nothing."""
        job = self.get(job_id)
        return job if job is not None and job.owner is not None and job.owner == owner else None

    def hand_over(self, old_owner: str, new_owner: str) -> int:
        """Give ``old_owner``'s jobs to ``new_owner`` (a reloaded browser session gets a new id; the session
        that restored the old one's data takes its jobs too). Returns how many changed hands."""
        with self._lock:
            moved = [j for j in self._jobs.values() if j.owner == old_owner]
            for job in moved:
                job.owner = new_owner
            return len(moved)

    def owned_by(self, owner: str) -> list[Job]:
        """The unfinished jobs ``owner`` started."""
        with self._lock:
            return [j for j in self._jobs.values() if j.owner == owner and j.status in (PENDING, RUNNING)]


#: The process-wide registry the pages share (Streamlit runs every session in one process), within the
#: limits the operator set in the environment (read once, at import; a bad value stops the server with
#: a message naming the variable).
RUNNER = JobRunner(limits=ServerLimits.from_env())
