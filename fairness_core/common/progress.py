"""Progress of a long job, typed: one frozen dataclass per phase, one callback style for every job.

A long computation (a model's training, an ensemble, a curve of thresholds) reports how far it is by calling
``on_progress(record)`` with one :class:`Progress` record: the base fields say how much work is done
(``done`` of ``total`` units) and what it is doing (``message``); a phase's subclass adds the numbers its
charts draw (a loss, an epoch, a quantile fan). Pages read fields, never string keys, so renaming a field in
a model breaks the page's test instead of silently emptying a chart.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Epoch(Progress):
...     loss: float = float("nan")
>>> seen: list[Progress] = []
>>> def fit(on_progress: ProgressCallback = ignore) -> None:
...     for k in range(3):
...         on_progress(Epoch(done=k + 1, total=3, loss=1.0 / (k + 1)))
>>> fit(seen.append)
>>> [r.loss for r in of_kind(seen, Epoch)]
[1.0, 0.5, 0.3333333333333333]
>>> seen[-1].fraction
1.0
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["Cancelled", "Estimate", "Progress", "ProgressCallback", "ignore", "of_kind", "Stage"]


class Cancelled(Exception):
    """Raised by a long computation that stops early because its ``should_stop()`` said so."""


@dataclass(frozen=True)
class Progress:
    """One report of a long job.

    ``done`` of ``total``: the units of work finished (``total`` 0: not known yet); ``message``: what the job
    is doing, in words for a progress bar ("" keeps the last one); ``time``: seconds since the job started,
    stamped by the job runner when the worker leaves it None."""

    done: int = 0
    total: int = 0
    message: str = ""
    time: float | None = None

    @property
    def fraction(self) -> float:
        """``done / total`` clipped to [0, 1]; 0 while the total is unknown."""
        return min(1.0, max(0.0, self.done / self.total)) if self.total else 0.0


@dataclass(frozen=True)
class Stage(Progress):
    """A phase with nothing to chart: loading data, preparing, scoring. ``phase`` names it."""

    phase: str = ""


#: What a long job calls with each record.
ProgressCallback = Callable[[Progress], None]

P = TypeVar("P", bound=Progress)


def ignore(record: Progress) -> None:
    """The callback of a run nobody watches."""


def of_kind(records: Iterable[Progress], kind: type[P]) -> list[P]:
    """The records of one phase (instances of ``kind``), in the order they came."""
    return [r for r in records if isinstance(r, kind)]


@dataclass(frozen=True)
class Estimate:
    """What a job will cost, declared before it starts (each model's ``estimate(config)``): the job runner
    (:mod:`fairness_core.services.jobs`) admits or refuses it by these fields.

    ``memory_mb``: its peak memory beyond the server's own, in MB; ``heavy``: a training run that
    takes a core for minutes (a session has at most ``ServerLimits.heavy_per_session`` of those at
    a time); ``what``: how the refusal names it ("this run", "a HydraGAN run on 5,000,000 rows")."""

    memory_mb: float
    heavy: bool = True
    what: str = "this run"

    def __post_init__(self) -> None:
        if not (isinstance(self.memory_mb, (int, float)) and self.memory_mb >= 0 and self.memory_mb < float("inf")):
            raise ValueError(f"a memory estimate must be a finite number of MB >= 0, got {self.memory_mb!r}")
