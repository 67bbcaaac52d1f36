"""Budgets in steps, calibrated per device: a budget given in seconds becomes epochs and steps, once.

The page offers seconds (the search's, each final training's). Counting seconds while training made the same
seed take 3,200 or 4,100 steps on two cores depending on the load, and kept the search's share fixed in epochs
while a faster device multiplied the final training's steps. So before the run, :func:`measure` times a few
steps of the run's own networks on the device in hand (:class:`StepCosts`), and :func:`plan` turns the seconds
into steps with them (:class:`StepBudget`); the run then counts steps. The timing is kept per device and shape
(in this process, and in a JSON file where one is named), so a second run on the same device gets the same
steps, and with them the same numbers, whatever the load.

The search's seconds buy, in this order: rungs of :data:`LEAVE_STEPS` weight steps (what an agent needs to leave
its start, measured on Lorenz: docs/methods.md), then more agents (up to ``max_population``), then longer rungs.
TiDE's steps are its share of PTN's whole budgeted time, search included, at TiDE's own step cost.
"""

from __future__ import annotations

import json
import math
import os
import platform
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from .. import forecast_data as FD
from .config import PTNConfig
from .final import FINAL_CURVE_SAMPLES
from .fit import build, fan, predict, subsample, train_darts, train_plain
from .layers import TiDE
from .loss import crps_numpy
from .search import BASELINE_KEEP, BASELINE_POINT, SEARCH_ARCH_STEPS, SEARCH_WEIGHT_STEPS, Agent, derived_of
from .space import random_hparams, space

#: Weight steps of a first rung for agents to leave their start. Measured on Lorenz (demo data, the search's
#: DARTS epochs from the baseline start, each agent scored as the network it would derive; docs/methods.md): on
#: an H200, 4 agents (the incumbent among them), the median agent's validation CRPS rises first (+10.7 % after
#: 10 weight steps, +3.4 % after 40, +0.8 % after 160), is back at its start after 320 (+0.1 %) and below it in
#: every agent only after 640 (median −2.7 %; −5.1 % after 1,280, −7.5 % after 2,560). On two CPU cores, 6
#: agents: +8.8 %, +2.8 %, −1.7 % after 10, 40, 160, −3.9 % after 320. Rungs shorter than this rank the agents
#: by their first rise, which says little of where they go.
LEAVE_STEPS = 640
#: Environment variable naming a JSON file that keeps the timings across processes (the bench's --calibration).
CACHE_ENV = "PTN_STEP_COSTS"
_MEMORY: dict[str, "StepCosts"] = {}


@dataclass(frozen=True)
class StepCosts:
    """Seconds per unit of work of the run's networks on one device, from :func:`measure`.

    ``search_epoch``: one search epoch of an agent (weight and architecture steps on a sampled path, the
    epoch's losses and fan); ``score``: scoring an agent after a rung (its derived network on both fitness
    sets); ``final_epoch``: one epoch of the final training of the reference network (the baseline's point,
    which the search hands on unless something beats it), with its curve and fan; ``tide_step``: one TiDE step;
    ``ptn_step``: one plain step of the reference network (its warm start)."""

    device: str
    search_epoch: float
    score: float
    final_epoch: float
    tide_step: float
    ptn_step: float
    measured_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class StepBudget:
    """What the seconds bought on this device: the plan the run counts, and the timings behind it."""

    costs: StepCosts
    search_seconds: float | None
    final_seconds: float | None
    population: int
    generations: int
    first_rung: int
    epochs: int
    search_steps: int  # weight and architecture steps of the whole search
    search_estimate: float  # seconds the planned search should take on this device
    final_steps: int  # per seed
    tide_steps: int  # per seed
    ptn_warm_steps: int
    tide_warm_steps: int
    cached: bool = False  # the timings came from an earlier measurement on this device

    def words(self) -> str:
        """The budget in a sentence, for the page and the bench."""
        where = "timed earlier on" if self.cached else "timed on"
        search = (f"the search's {self.search_seconds:.0f} s" if self.search_seconds else "the search")
        final = (f"each final training's {self.final_seconds:.0f} s" if self.final_seconds else "each final training")
        generations = f"{self.generations} generation{'s' if self.generations != 1 else ''}"
        return (f"{where} {self.costs.device}: {search} buy {self.population} agents × {generations}, "
                f"rungs of {self.first_rung} + {self.epochs - self.first_rung} epochs ({self.search_steps:,} steps, "
                f"about {self.search_estimate:.0f} s); {final} buys {self.final_steps:,} steps; TiDE "
                f"{self.tide_steps:,} steps per seed (its share of PTN's time, search included)")


def device_words(device: torch.device) -> str:
    """The device as the timings are kept under: the GPU's name, or the CPU with its thread count."""
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    return f"cpu ({platform.machine()}, {torch.get_num_threads()} threads)"


def _key(config: PTNConfig, ds: FD.Dataset, device: torch.device) -> str:
    s = ds.parts["darts_train"]
    shapes = "x".join(str(n) for n in (*s.history.shape[1:], *s.forecasts.shape[1:], s.target.shape[1]))
    return (f"{device_words(device)}|{config.dataset}|{shapes}|q{config.quantiles}|d{tuple(config.hidden_sizes)}"
            f"|w{config.final_weight_steps}|n{config.fitness_samples}")


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _clock(device: torch.device) -> float:
    _sync(device)
    return time.perf_counter()


def measure(config: PTNConfig, ds: FD.Dataset, device: torch.device, epochs: int = 3) -> StepCosts:
    """Time the run's units of work on ``device`` (each after one untimed epoch that warms it up). PyTorch's
    random state is left as it was, so a run draws the same numbers whether it measured or found timings kept."""
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        return _measure(config, ds, device, epochs)


def _fastest_epoch(device: torch.device, run: Callable[[Callable[[], None]], object]) -> float:
    """The fastest epoch of ``run`` (which calls the given function at the end of each epoch): other work on a busy
    machine can only lengthen an epoch, so the minimum is what the device costs, the usual way to time code on a
    shared machine. A timing taken while another program runs then plans about the budget a quiet one would,
    and PTN's and TiDE's steps, timed at different moments, are costed alike (their means had differed fivefold
    on two loaded cores, for the same network)."""
    marks = [_clock(device)]
    run(lambda: marks.append(_clock(device)))
    return float(np.min(np.diff(marks)))


def _measure(config: PTNConfig, ds: FD.Dataset, device: torch.device, epochs: int) -> StepCosts:
    start = time.perf_counter()
    P = ds.parts
    probe = P["ga_val"].take(np.array([0]))
    fitness = [subsample(P[p], config.fitness_samples, k) for k, p in ((1, "ga_train"), (2, "ga_val"))]
    rng = np.random.default_rng(config.seed + 12345)
    params = space(tuple(config.hidden_sizes))
    incumbent = Agent(random_hparams(params, rng) | BASELINE_POINT, 1, keep=dict(BASELINE_KEEP))
    other = Agent(random_hparams(params, rng) | {"hidden": max(config.hidden_sizes)}, 1)
    search_epoch, score = [], []
    for agent in (incumbent, other):
        torch.manual_seed(config.seed)
        model = build(agent.hparams, ds, config.quantiles, config.forecast_skip, device, agent.keep)
        rung = dict(weight_steps=SEARCH_WEIGHT_STEPS, arch_steps=SEARCH_ARCH_STEPS, sample_paths=config.sample_paths)
        train_darts(model, agent.hparams, P["darts_train"], P["darts_val"], 1, seed=0, **rung)
        search_epoch.append(_fastest_epoch(device, lambda on_epoch: train_darts(
            model, agent.hparams, P["darts_train"], P["darts_val"], epochs, seed=1,
            on_epoch=lambda *_: (fan(predict(model, probe)[0]), on_epoch()), **rung)))
        t0 = _clock(device)
        agent.architecture = model.architecture()
        judged = derived_of(config, ds, model, agent) if config.derive else model
        for s in fitness:
            crps_numpy(predict(judged, s), s.target)
        score.append(_clock(device) - t0)
    # The final training's reference: the baseline's point, derived, from TiDE's start, with its curve and fan.
    h = incumbent.hparams
    reference = build(h, ds, config.quantiles, config.forecast_skip, device, dict(BASELINE_KEEP))
    reference.start_dense_as_tide()
    curve = 256 if config.paper_lr else FINAL_CURVE_SAMPLES
    train_darts(reference, h, P["darts_train"], P["darts_val"], 1, seed=0, weight_steps=config.final_weight_steps,
                plateau_samples=curve)
    final_epoch = _fastest_epoch(device, lambda on_epoch: train_darts(
        reference, h, P["darts_train"], P["darts_val"], 2 * epochs, seed=1, weight_steps=config.final_weight_steps,
        plateau_samples=curve, on_epoch=lambda *_: (fan(predict(reference, probe)[0]), on_epoch())))
    ptn_step = _fastest_epoch(device, lambda on_epoch: train_plain(
        reference, P["darts_train"], 2 * epochs, seed=2, steps=config.final_weight_steps,
        on_epoch=lambda *_: on_epoch())) / config.final_weight_steps
    s0 = P["darts_train"]
    tide = TiDE(s0.static.shape[1] + s0.history[0].size + s0.forecasts[0].size, s0.target.shape[1],
                config.quantiles).to(device)
    train_plain(tide, s0, 1, seed=0, steps=config.final_weight_steps)
    tide_step = _fastest_epoch(device, lambda on_epoch: train_plain(
        tide, s0, 2 * epochs, seed=1, steps=config.final_weight_steps,
        on_epoch=lambda *_: on_epoch())) / config.final_weight_steps
    return StepCosts(device_words(device), float(np.mean(search_epoch)), float(np.mean(score)), final_epoch,
                     tide_step, ptn_step, time.perf_counter() - start)


def step_costs(config: PTNConfig, ds: FD.Dataset, device: torch.device,
               cache: str | Path | None = None) -> tuple[StepCosts, bool]:
    """The timings on ``device`` for ``config``'s networks and data: measured once, then kept (in this process,
    and in the JSON file ``cache`` or ``$PTN_STEP_COSTS`` where one is named). Returns them and whether they
    were kept from before."""
    key = _key(config, ds, device)
    if key in _MEMORY:
        return _MEMORY[key], True
    path = Path(cache) if cache is not None else (Path(os.environ[CACHE_ENV]) if os.environ.get(CACHE_ENV) else None)
    stored: dict[str, Any] = {}
    if path is not None and path.exists():
        stored = json.loads(path.read_text(encoding="utf-8"))
        if key in stored:
            _MEMORY[key] = StepCosts(**stored[key])
            return _MEMORY[key], True
    costs = measure(config, ds, device)
    _MEMORY[key] = costs
    if path is not None:
        stored[key] = costs.to_dict()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(stored, indent=1), encoding="utf-8")
    return costs, False


def search_cost(costs: StepCosts, population: int, generations: int, first_rung: int, epochs: int,
                halving: bool = True) -> float:
    """Seconds a search of this shape takes at ``costs``: every agent's first rung and score, the better half's
    second rung and score, per generation (the bound; the search may stop early)."""
    first = min(max(1, first_rung), epochs) if halving else epochs
    survivors = -(-population // 2) if first < epochs else 0
    per_generation = (population * (first * costs.search_epoch + costs.score)
                      + survivors * ((epochs - first) * costs.search_epoch + costs.score))
    return generations * per_generation


def search_shape(config: PTNConfig, costs: StepCosts, seconds: float) -> tuple[int, int, int]:
    """(population, first_rung, epochs) that ``seconds`` of search buy: rungs grow to :data:`LEAVE_STEPS` weight
    steps first, then the population to ``max_population``, then the rungs; never below ``config``'s own."""
    population, rung = config.population, config.first_rung_epochs()
    target = max(rung, math.ceil(LEAVE_STEPS / SEARCH_WEIGHT_STEPS))

    def fits(p: int, r: int) -> bool:
        return search_cost(costs, p, config.generations, r, 2 * r if config.halving else r, config.halving) <= seconds

    while rung < target and fits(population, rung + 1):
        rung += 1
    if rung >= target:
        while population < config.max_population and fits(population + 1, rung):
            population += 1
        if population >= config.max_population:
            while fits(population, rung + 1):
                rung += 1
    if rung == config.first_rung_epochs() and population == config.population:
        return population, config.first_rung, config.epochs  # nothing more to buy: the config's own shape
    return population, rung, 2 * rung if config.halving else rung


def plan(config: PTNConfig, costs: StepCosts, cached: bool = False) -> tuple[PTNConfig, StepBudget]:
    """``config`` with its seconds turned into steps at ``costs`` (:attr:`PTNConfig.planned` is then True), and
    the :class:`StepBudget` in words. TiDE gets ``tide_time_share`` of PTN's budgeted seconds (the search's and
    one final training's) in steps at its own cost, and the same share of PTN's warm start."""
    population, first_rung, epochs = config.population, config.first_rung, config.epochs
    if config.search_seconds:
        population, first_rung, epochs = search_shape(config, costs, config.search_seconds)
    searched = replace(config, population=population, first_rung=first_rung, epochs=epochs)
    search_s = search_cost(costs, population, config.generations, searched.first_rung_epochs(), epochs,
                           config.halving)
    final_epochs = config.final_epochs
    if config.final_seconds:
        final_epochs = max(1, min(config.final_epochs, round(config.final_seconds / costs.final_epoch)))
    final_s = final_epochs * costs.final_epoch
    w = config.final_weight_steps
    floor = w if config.final_seconds else config.final_epochs * w  # exact epochs (the paper): TiDE no fewer
    tide_steps = config.tide_steps
    if tide_steps is None:
        tide_steps = max(floor, w * round(config.tide_time_share * (search_s + final_s) / costs.tide_step / w))
    ptn_warm = config.warm_epochs * w
    tide_warm = config.tide_warm_steps
    if tide_warm is None:
        tide_warm = round(config.tide_time_share * ptn_warm * costs.ptn_step / costs.tide_step) if ptn_warm else 0
    planned = replace(searched, final_epochs=final_epochs, final_seconds=None, search_seconds=None,
                      tide_steps=int(tide_steps), tide_warm_steps=int(tide_warm))
    search_steps = config.generations * (population * searched.first_rung_epochs()
                                         + searched.survivors() * (epochs - searched.first_rung_epochs())) * (SEARCH_WEIGHT_STEPS + SEARCH_ARCH_STEPS)
    return planned, StepBudget(costs, config.search_seconds, config.final_seconds, population, config.generations,
                               searched.first_rung_epochs(), epochs, search_steps, search_s, final_epochs * w,
                               int(tide_steps), ptn_warm, int(tide_warm), cached)


def budgeted(config: PTNConfig, ds: FD.Dataset, device: torch.device,
             cache: str | Path | None = None) -> tuple[PTNConfig, StepBudget | None]:
    """``config`` in steps on ``device``: as it is when it is all in steps already (no timing), else planned
    from the device's timings (:func:`step_costs`)."""
    if config.planned():
        return config, None
    costs, cached = step_costs(config, ds, device, cache)
    return plan(config, costs, cached)
