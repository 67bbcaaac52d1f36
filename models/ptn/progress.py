"""PTN's progress records, one frozen dataclass per phase, and the one counter every phase reports through.

The page draws from fields (``r.train_loss``), never string keys; the frames below are built from fields
too, so renaming a field breaks them (and the page's test) rather than emptying a chart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, TypeVar

import numpy as np
import pandas as pd

from ..jobs_interface import Progress, ProgressCallback, ignore, of_kind

R = TypeVar("R", bound=Progress)


@dataclass(frozen=True)
class DataStage(Progress):
    """Loading or generating the data; the last one carries the probe window the live fan follows."""

    probe_truth: tuple[float, ...] = ()
    probe_deterministic: tuple[float, ...] = ()


@dataclass(frozen=True, eq=False)
class SearchEpoch(Progress):
    """One DARTS epoch of one agent in the genetic search."""

    generation: int = 0
    agent: int = 0
    epoch: int = 0
    train_loss: float = float("nan")
    val_loss: float = float("nan")
    architecture: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    fan: np.ndarray | None = None  # (len(FAN_LEVELS), τ) on the probe window


@dataclass(frozen=True)
class AgentFitness(Progress):
    """An agent scored after a rung of the search. ``low_fidelity``: its fitness after the first rung
    (the search's cheap estimate); ``fitness`` / ``val_fitness``: CRPS on GA train / GA validation now."""

    generation: int = 0
    agent: int = 0
    rung: int = 1
    hidden: int = 0
    dense_width: int = 0
    fitness: float = float("nan")
    val_fitness: float = float("nan")
    low_fidelity: float = float("nan")


@dataclass(frozen=True, eq=False)
class FinalEpoch(Progress):
    """One epoch of the derived architecture's final training (seed ``run``)."""

    run: int = 0
    epoch: int = 0
    train_loss: float = float("nan")
    val_loss: float = float("nan")
    architecture: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    fan: np.ndarray | None = None


@dataclass(frozen=True)
class BaselineEpoch(Progress):
    """One epoch of the TiDE-style baseline (seed ``run``), out of its budget of ``budget_steps`` steps."""

    run: int = 0
    epoch: int = 0
    train_loss: float = float("nan")
    budget_steps: int = 0


@dataclass(frozen=True)
class Done(Progress):
    """The run finished: skill scores computed."""


class Counter:
    """The run's units of work (one per search epoch, final epoch, baseline epoch share, warm start),
    shared by every phase: each phase moves ``done`` and reports typed records through it."""

    def __init__(self, total: int, on_progress: ProgressCallback | None = None):
        self.total, self.done = total, 0
        self.on_progress: ProgressCallback = on_progress or ignore

    def advance(self, units: int = 1) -> None:
        self.done = min(self.total, self.done + units)

    def set(self, done: int) -> None:
        self.done = min(self.total, max(self.done, done))

    def report(self, kind: type[R], **fields: Any) -> R:
        """Send a ``kind`` record stamped with the counter's done and total; returns it."""
        record = kind(done=self.done, total=self.total, **fields)
        self.on_progress(record)
        return record


# --- chart frames, built from fields ----------------------------------------------------------

def loss_frame(records: Iterable[Progress]) -> pd.DataFrame:
    """Per epoch, in run order: phase ("search", "final", "tide"), generation, agent, epoch, losses."""
    rows = []
    for r in records:
        if isinstance(r, SearchEpoch):
            rows.append(("search", r.generation, r.agent, r.epoch, r.train_loss, r.val_loss))
        elif isinstance(r, FinalEpoch):
            rows.append(("final", np.nan, np.nan, r.epoch, r.train_loss, r.val_loss))
        elif isinstance(r, BaselineEpoch):
            rows.append(("tide", np.nan, np.nan, r.epoch, r.train_loss, np.nan))
    return pd.DataFrame(rows, columns=["phase", "generation", "agent", "epoch", "train_loss", "val_loss"])


def agent_frame(records: Iterable[Progress]) -> pd.DataFrame:
    """Each agent's latest scores: generation, agent, hidden, fitness, val_fitness, low_fidelity, rung."""
    latest: dict[tuple[int, int], AgentFitness] = {}
    for r in of_kind(records, AgentFitness):
        latest[(r.generation, r.agent)] = r
    return pd.DataFrame([{"generation": r.generation, "agent": r.agent, "hidden": r.hidden,
                          "dense_width": r.dense_width, "fitness": r.fitness, "val_fitness": r.val_fitness,
                          "low_fidelity": r.low_fidelity, "rung": r.rung} for r in latest.values()],
                        columns=["generation", "agent", "hidden", "dense_width", "fitness", "val_fitness",
                                 "low_fidelity", "rung"])


def latest_fan(records: list[Progress]) -> tuple[np.ndarray, str] | None:
    """The last fan reported and where it came from, in words."""
    for r in reversed(records):
        if isinstance(r, SearchEpoch) and r.fan is not None:
            return r.fan, f"generation {r.generation}, agent {r.agent}, epoch {r.epoch}"
        if isinstance(r, FinalEpoch) and r.fan is not None:
            return r.fan, f"best agent, epoch {r.epoch}"
    return None


def latest_architecture(records: list[Progress]) -> Mapping[str, Mapping[str, float]] | None:
    for r in reversed(records):
        if isinstance(r, (SearchEpoch, FinalEpoch)) and r.architecture:
            return r.architecture
    return None


def probe(records: Iterable[Progress]) -> DataStage | None:
    """The data stage that carries the probe window, if it came yet."""
    found = [r for r in of_kind(records, DataStage) if r.probe_truth]
    return found[-1] if found else None
