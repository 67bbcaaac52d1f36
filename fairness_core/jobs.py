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

import itertools
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
    """The runner already runs its maximum number of jobs."""


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
    eta: float | None  # seconds, from the rate so far; None before the first step
    result: Any
    error: str | None

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

    # -- called from the worker thread ----------------------------------------------------
    def on_progress(self, **record: Any) -> None:
        """Append one progress record; ``done``, ``total`` and ``message`` also set the progress bar."""
        with self._lock:
            if "done" in record:
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
        """Ask the job to stop; it does at its next ``should_stop()`` check."""
        self._stop.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job ends (True) or ``timeout`` seconds pass (False)."""
        return self._ended.wait(timeout)

    def snapshot(self, since: int = 0) -> Snapshot:
        """Status, progress and the records from index ``since`` on."""
        with self._lock:
            now = self.finished or time.monotonic()
            elapsed = now - self.started if self.started else 0.0
            eta = None
            if self.status == RUNNING and self._done > 0 and self._total > self._done:
                eta = elapsed / self._done * (self._total - self._done)
            return Snapshot(self.id, self.name, self.status, list(self._records[since:]), self._done, self._total,
                            self._message, elapsed, eta, self.result, self.error)


class JobRunner:
    """Starts jobs in daemon threads, at most ``max_running`` at once, and remembers them by id."""

    def __init__(self, max_running: int = 2, keep: int = 20):
        self.max_running = max_running
        self.keep = keep
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)

    def running(self) -> list[Job]:
        with self._lock:
            return [j for j in self._jobs.values() if j.status in (PENDING, RUNNING)]

    def submit(self, name: str, fn: Callable[..., Any], orphan_after: float | None = None) -> Job:
        """Start ``fn(on_progress=..., should_stop=...)`` in a thread; TooManyJobs at the cap.

        With ``orphan_after``, the job stops itself once nobody has called :meth:`Job.heartbeat`
        for that many seconds (the first heartbeat arms it)."""
        with self._lock:
            active = sum(j.status in (PENDING, RUNNING) for j in self._jobs.values())
            if active >= self.max_running:
                raise TooManyJobs(f"{active} jobs are already running (the limit is {self.max_running}); "
                                  "wait for one to finish or cancel it")
            job = Job(id=f"job-{next(self._ids)}", name=name, fn=fn, orphan_after=orphan_after)
            self._jobs[job.id] = job
            ended = [k for k, j in self._jobs.items() if j.status in ENDED]
            for k in ended[: max(0, len(self._jobs) - self.keep)]:
                del self._jobs[k]
        threading.Thread(target=job._run, name=f"fairness-{job.id}", daemon=True).start()
        return job

    def get(self, job_id: str | None) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id) if job_id else None


#: The process-wide registry the pages share (Streamlit runs every session in one process).
RUNNER = JobRunner(max_running=2)
