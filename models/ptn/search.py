"""The genetic search (Briscoe 2024, Algorithm 2) over Table 5.1, each agent a DARTS hypermodel.

Each generation trains every agent for a first rung (the low-fidelity fitness), then only the better
half for the rest (successive halving); fitness is the CRPS on the GA training part, validation
fitness on the GA validation part. Parents are chosen by tournament, children bred by proportional
crossover and fitness-scaled mutation; elites return every ``elite_every`` generations; the search
stops when the best validation fitness has not improved for ``patience`` generations.

One first-generation agent is the incumbent: the TiDE-style baseline's own point of the space (its
width, dropout and optimizer settings, the dense encoder–decoder trunk). The search hands on the best
agent only when it beats the incumbent beyond noise on the same validation windows (:func:`choose`);
otherwise the incumbent. The chosen agent's trained hypermodel is kept (``PTNConfig.inherit``).
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd
import torch
from scipy.stats import spearmanr
from scipy.stats import t as student_t

from .. import forecast_data as FD
from .config import PTNConfig
from .fit import build, fan, inherit, predict, subsample, train_darts
from .layers import PTN, derive
from .loss import crps_numpy
from .progress import AgentFitness, Counter, SearchEpoch
from .space import crossover, mutate, mutation_rate, random_hparams, space


#: The low-fidelity fitness's Spearman ρ measured by ``bench/ptn.py`` (demo budget), in words for the page.
BENCH_FIDELITY = ("on the bench (bench/ptn.py, demo budget, two CPU cores) ρ was +0.40 on Lorenz and +0.00 on the "
                  "weather sites, each over 4 agents: at this budget the cheap fitness barely ranks the agents, and "
                  "the search handed on the incumbent (the baseline's own point) on both")


#: The genes that make the dense encoder–decoder the TiDE-style baseline: its width and dropout, and its
#: optimizer's rate and moments (AdamW at 1e-3, β = (0.9, 0.999)), all inside Table 5.1's ranges.
BASELINE_POINT = {"dense_width": 256, "dropout": 0.1, "lr": 1e-3, "beta1": 0.9, "beta2": 0.999}
#: The incumbent's architecture: the dense encoder–decoder trunk, so that the baseline's point of the space
#: is searched as itself (its trunk is not left to architecture weights a short search barely moves).
BASELINE_KEEP = {"trunk": "dense encoder-decoder"}
#: One-sided level of :func:`clearly_better`: a challenger replaces the incumbent only when its mean validation
#: CRPS is lower beyond a one-sided 95 % bound of the paired difference (batch means, Student's t).
CLEARLY_BETTER_ALPHA = 0.05
#: Weight and architecture steps of one search epoch (Briscoe 2024, §5.4.1: ten, then five).
SEARCH_WEIGHT_STEPS, SEARCH_ARCH_STEPS = 10, 5


@dataclass
class Agent:
    hparams: dict[str, Any]
    generation: int
    fitness: float = float("nan")  # CRPS on GA train (lower is better)
    val_fitness: float = float("nan")  # CRPS on GA validation
    architecture: dict[str, dict[str, float]] = field(default_factory=dict)  # weights after its search run
    low_fidelity: float = float("nan")  # validation fitness after the first rung
    rungs: int = 0  # rungs trained (2: promoted by successive halving)
    #: The architecture this agent is pinned to (the incumbent's dense trunk); None: DARTS chooses.
    keep: dict[str, str] | None = None
    #: The incumbent: the baseline's point, which the chosen agent must beat beyond noise (clearly_better).
    incumbent: bool = False
    #: CRPS per window of the GA validation fitness set, for the paired comparison with the incumbent.
    val_crps: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)

    def score(self) -> float:
        """What picks the best agent: both fitnesses small (Briscoe 2024, Algorithm 2)."""
        return self.fitness**2 + self.val_fitness**2


@dataclass
class SearchOutcome:
    best: Agent
    agents: list[Agent]  # every agent of every generation, as it ended
    best_state: dict[str, torch.Tensor]  # the best agent's trained hypermodel (on the CPU)
    seconds: float
    steps: int
    #: Agents trained past the first rung: their low-fidelity and final validation fitness.
    fidelity: pd.DataFrame

    @property
    def fidelity_rho(self) -> float:
        """Spearman's ρ between the low-fidelity and the final validation fitness (NaN below 3 agents)."""
        return fidelity_correlation(self.fidelity)


def fidelity_words(table: pd.DataFrame, rho: float) -> str:
    """The low-fidelity fitness's agreement with the end-of-search fitness on one run, in words."""
    if len(table) == 0:
        return "no agent trained past the first rung on this run (no successive halving), so there is nothing to compare"
    if not np.isfinite(rho):
        return f"{len(table)} agent(s) trained past the first rung on this run: too few for a rank correlation"
    return f"on this run Spearman's ρ between the two is {rho:+.2f} over {len(table)} agents"


def fidelity_correlation(table: pd.DataFrame) -> float:
    if len(table) < 3 or table["low_fidelity"].nunique() < 2 or table["val_fitness"].nunique() < 2:
        return float("nan")
    return float(spearmanr(table["low_fidelity"], table["val_fitness"]).statistic)


@dataclass
class _Scoring:
    """What scoring an agent needs: the fitness sets and the probe window the live fan follows."""

    ga_train: FD.Samples
    ga_val: FD.Samples
    probe: FD.Samples


def _train_rung(config: PTNConfig, ds: FD.Dataset, model: PTN, agent: Agent, k: int, epochs: int, first: int,
                scoring: _Scoring, counter: Counter, should_stop: Callable[[], bool] | None) -> int:
    """Train agent k's hypermodel for ``epochs`` more epochs (numbered from ``first``), then score it."""
    generation = agent.generation

    def on_epoch(epoch: int, train_loss: float, val_loss: float) -> None:
        counter.advance()
        counter.report(SearchEpoch, generation=generation, agent=k + 1, epoch=first + epoch - 1,
                       train_loss=train_loss, val_loss=val_loss, architecture=model.architecture(),
                       fan=fan(predict(model, scoring.probe)[0]),
                       message=f"generation {generation}, agent {k + 1}, epoch {first + epoch - 1}")

    steps = train_darts(model, agent.hparams, ds.parts["darts_train"], ds.parts["darts_val"], epochs,
                        seed=config.seed + 1000 * generation + 100 * first + k, on_epoch=on_epoch,
                        weight_steps=SEARCH_WEIGHT_STEPS, arch_steps=SEARCH_ARCH_STEPS,
                        should_stop=should_stop, paper_lr=config.paper_lr, sample_paths=config.sample_paths)
    agent.architecture = model.architecture()
    judged = derived_of(config, ds, model, agent) if config.derive else model
    agent.fitness = float(crps_numpy(predict(judged, scoring.ga_train), scoring.ga_train.target).mean())
    agent.val_crps = crps_numpy(predict(judged, scoring.ga_val), scoring.ga_val.target)
    agent.val_fitness = float(agent.val_crps.mean())
    agent.rungs += 1
    if agent.rungs == 1:
        agent.low_fidelity = agent.val_fitness
    counter.report(AgentFitness, generation=generation, agent=k + 1, rung=agent.rungs,
                   hidden=int(agent.hparams["hidden"]), dense_width=int(agent.hparams.get("dense_width", 0)),
                   fitness=agent.fitness, val_fitness=agent.val_fitness, low_fidelity=agent.low_fidelity,
                   message=f"generation {generation}, agent {k + 1}: fitness {agent.val_fitness:.4f}")
    return steps


def derived_of(config: PTNConfig, ds: FD.Dataset, model: PTN, agent: Agent) -> PTN:
    """The architecture ``agent`` would derive now, with the weights its hypermodel trained: what the final
    training would start from, so its fitness is what the search ranks (not the mixture of every candidate,
    whose untrained paths dilute what the kept one learned)."""
    derived = build(agent.hparams, ds, config.quantiles, config.forecast_skip, next(model.parameters()).device,
                    derive(agent.architecture))
    inherit(derived, model)
    return derived


def _breed(population: list[Agent], everyone: list[Agent], generation: int, config: PTNConfig,
           params: list, rng: np.random.Generator) -> list[Agent]:
    """The next generation: elites back every ``elite_every`` generations, tournament parents,
    proportional crossover and fitness-scaled mutation."""
    if config.elite_every and generation % config.elite_every == 0 and config.elites:
        keep = sorted(population, key=lambda a: a.val_fitness)[: config.population - config.elites]
        seen = {id(a) for a in keep}
        outside = [a for a in sorted(everyone, key=lambda a: a.val_fitness) if a.hparams not in
                   [b.hparams for b in keep] and id(a) not in seen]
        population = keep + outside[: config.elites]
    fits = [a.val_fitness for a in population]
    children = []
    for _ in range(config.population):
        pa, pb = (min(rng.choice(len(population), 2, replace=False), key=lambda i: fits[i]) for _ in range(2))
        child = crossover(population[pa].hparams, population[pb].hparams, fits[pa], fits[pb], params, rng)
        child = mutate(child, mutation_rate((fits[pa] + fits[pb]) / 2, min(fits), max(fits)), params, rng)
        children.append(Agent(child, generation + 1))
    return children


def genetic_search(config: PTNConfig, ds: FD.Dataset, counter: Counter, device: torch.device,
                   should_stop: Callable[[], bool] | None = None) -> SearchOutcome:
    """Algorithm 2 with successive halving; see the module's docstring."""
    rng = np.random.default_rng(config.seed)
    P = ds.parts
    scoring = _Scoring(subsample(P["ga_train"], config.fitness_samples, 1),
                       subsample(P["ga_val"], config.fitness_samples, 2), P["ga_val"].take(np.array([0])))
    params = space(tuple(config.hidden_sizes))
    population = [Agent(random_hparams(params, rng), 1) for _ in range(config.population)]
    if config.seed_baseline_point and population:
        # The TiDE-style baseline's own settings and architecture as one first-generation agent, the
        # incumbent: the search starts from the point it is compared with, and must find better, beyond
        # noise, to move away from it (choose).
        population[0].hparams |= BASELINE_POINT
        population[0].keep, population[0].incumbent = dict(BASELINE_KEEP), True
    start, steps = time.perf_counter(), 0
    everyone: list[Agent] = []
    best_by_gen: list[float] = []
    best: tuple[float, Agent | None, dict[str, torch.Tensor]] = (float("inf"), None, {})
    held: tuple[float, dict[str, torch.Tensor]] = (float("inf"), {})  # the incumbent's best trained state
    for generation in range(1, config.generations + 1):
        for agent in population:
            agent.generation = generation
        models = [build(a.hparams, ds, config.quantiles, config.forecast_skip, device, a.keep) for a in population]
        first_rung = config.first_rung_epochs()
        for k, agent in enumerate(population):
            steps += _train_rung(config, ds, models[k], agent, k, first_rung, 1, scoring, counter, should_stop)
        if first_rung < config.epochs:
            promoted = sorted(range(len(population)), key=lambda k: population[k].val_fitness)[:config.survivors()]
            for k in sorted(promoted):
                steps += _train_rung(config, ds, models[k], population[k], k, config.epochs - first_rung,
                                     first_rung + 1, scoring, counter, should_stop)
        for agent, model in zip(population, models):
            if agent.score() < best[0]:
                best = (agent.score(), agent, _snapshot(model))
            if agent.incumbent and agent.score() < held[0]:
                held = (agent.score(), _snapshot(model))
        everyone.extend(copy.deepcopy(population))
        best_by_gen.append(min(a.val_fitness for a in everyone))
        stalled = len(best_by_gen) > config.patience and best_by_gen[-1] >= best_by_gen[-1 - config.patience]
        if stalled or generation == config.generations:
            break  # no improvement of the best validation fitness for `patience` generations, or the last one
        population = _breed(population, everyone, generation, config, params, rng)
    chosen, state = choose(everyone), best[2]
    if chosen.incumbent:
        state = held[1]
    fidelity = pd.DataFrame([{"generation": a.generation, "hidden": a.hparams["hidden"],
                              "dense_width": a.hparams.get("dense_width"), "low_fidelity": a.low_fidelity,
                              "val_fitness": a.val_fitness} for a in everyone if a.rungs > 1],
                            columns=["generation", "hidden", "dense_width", "low_fidelity", "val_fitness"])
    return SearchOutcome(chosen, everyone, state, time.perf_counter() - start, steps, fidelity)


def _snapshot(model: PTN) -> dict[str, torch.Tensor]:
    """A copy of ``model``'s trained state on the CPU (kept for the agent the search may hand on)."""
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}


def clearly_better(challenger: np.ndarray, incumbent: np.ndarray, alpha: float = CLEARLY_BETTER_ALPHA) -> bool:
    """Whether the per-window validation CRPS ``challenger`` beats ``incumbent`` (the same windows, in time
    order) beyond noise: the mean paired difference plus a one-sided (1 − ``alpha``) Student-t bound is below 0.

    Neighbouring windows of one trajectory overlap and share a system, so their differences are positively
    correlated, and a standard error that treats them as independent is too small (on an AR(1) sequence with
    φ = 0.9 the independent-window rule moves at 36 % instead of 5 %). The standard error is therefore taken
    from batch means (:func:`batch_means`): the differences cut into ⌈n^(1/3)⌉ contiguous batches, whose
    means are nearly independent, with t on one fewer degrees of freedom than batches."""
    d = np.asarray(challenger, float) - np.asarray(incumbent, float)
    if d.size < 2 or not np.all(np.isfinite(d)):
        return False
    means = batch_means(d)
    se = means.std(ddof=1) / np.sqrt(means.size)
    return bool(d.mean() + student_t.ppf(1 - alpha, means.size - 1) * se < 0)


def batch_means(d: np.ndarray) -> np.ndarray:
    """Means of ⌈n^(1/3)⌉ (at least 2) contiguous, nearly equal batches of ``d`` (n ≥ 2)."""
    n = d.size
    batches = min(n, max(2, int(np.ceil(n ** (1 / 3) - 1e-9))))
    sizes = np.full(batches, n // batches)
    sizes[: n % batches] += 1  # as numpy.array_split: the first batches one longer
    return np.add.reduceat(d, np.concatenate([[0], np.cumsum(sizes)[:-1]])) / sizes


def choose(agents: list[Agent]) -> Agent:
    """The agent the search hands on: the best by Algorithm 2's score, unless an incumbent (the baseline's
    point) is among ``agents`` and the best does not beat it clearly (:func:`clearly_better`) — at a short
    budget the search's ranking is mostly noise, and a move on noise makes the result worse, not better."""
    best = min(agents, key=Agent.score)
    incumbents = [a for a in agents if a.incumbent]
    if not incumbents or best.incumbent:
        return best
    held = min(incumbents, key=Agent.score)
    return best if clearly_better(best.val_crps, held.val_crps) else held
