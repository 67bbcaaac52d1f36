"""The PTN run's settings: :class:`PTNConfig`, a budget and a data set, and its presets.

A module of its own so that every stage of the run (:mod:`.search`, :mod:`.final`, :mod:`.budget`, :mod:`.run`)
imports the settings from here, and none imports :mod:`.run`, which imports them all. It imports nothing of the
package.

A budget is given in seconds (``search_seconds``, ``final_seconds``: what the page offers) and run in steps:
before training, :func:`models.ptn.budget.plan` times a few steps on the device in hand once and turns the
seconds into epochs and steps (``epochs``, ``population``, ``final_epochs``, ``tide_steps``). The run then counts
steps, so the same seed on the same device gives the same numbers whatever the machine's load."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class PTNConfig:
    """A budget and a data set (JSON-serializable)."""

    dataset: str = "lorenz"  # "lorenz" | "weather"
    population: int = 4
    generations: int = 2
    epochs: int = 4  # DARTS epochs per agent in the search (the paper: 30)
    first_rung: int = 2  # epochs of the first rung (the low-fidelity fitness) under successive halving
    final_epochs: int = 300  # the derived architecture, retrained (TiDE trains for a share of PTN's time)
    final_weight_steps: int = 10  # weight steps per final epoch (the paper: 10)
    #: Seconds of each final training on the device in hand (None: exactly final_epochs, as the paper). Turned
    #: into final_epochs once, before the run, by timing the reference network's steps (:mod:`.budget`).
    final_seconds: float | None = None
    #: Seconds of the genetic search on the device in hand (None: population, epochs and first_rung as given).
    #: Turned into rungs and agents once, before the run: rungs first grow to LEAVE_STEPS weight steps (enough
    #: for agents to leave their start), then the population to max_population, then the rungs again.
    search_seconds: float | None = None
    max_population: int = 16
    #: TiDE's optimizer steps and its warm start's (None: tide_time_share of PTN's budgeted seconds, search
    #: included, at TiDE's own step cost timed on the device; set by :func:`models.ptn.budget.plan`).
    tide_steps: int | None = None
    tide_warm_steps: int | None = None
    quantiles: int = 111
    hidden_sizes: tuple[int, ...] = (48, 72)  # demo; the paper's Table 5.1: 72, 96, ..., 240
    elite_every: int = 2
    elites: int = 1
    patience: int = 2
    fitness_samples: int = 256
    systems_per_part: int = 4  # Lorenz
    inits_per_system: int = 2
    forecast_skip: bool = True  # our addition; False is Briscoe 2024's architecture exactly
    paper_lr: bool = False  # True: Table 5.1's learning rate with plateau cuts; False: >= MIN_LR, cosine
    tide_time_share: float = 0.8  # the TiDE baseline trains for this share of PTN's training wall time
    device: str = "auto"  # "auto": a GPU when present (the paper's budget), else the CPU; same code
    halving: bool = True  # successive halving: the worse half of each generation stops after the first rung
    sample_paths: bool = True  # the search's training steps run one sampled candidate per mixed op (GDAS)
    seed_baseline_point: bool = True  # one first-generation agent is the TiDE-style baseline's point, the incumbent
    derive: bool = True  # DARTS: retrain the derived architecture (each mixed op's strongest candidate, ties to the cheapest)
    #: The derived architecture starts from the weights the search trained for it (True), or afresh at the
    #: deterministic-normal baseline, as DARTS retrains (False). Measured on the GA-validation rows (Lorenz, demo
    #: search, 3,000 steps): inherited 0.0245 median CRPS against 0.0184 afresh, same hyperparameters.
    inherit: bool = False
    #: How a derived dense encoder–decoder starts its retraining (without ``inherit``): "tide", TiDE's default
    #: initialization; "baseline", near the deterministic-normal baseline, as in the search. The search keeps
    #: the baseline start, so that agents trained for a few dozen steps are compared from one starting point;
    #: a long retraining learns more from TiDE's (GA validation rows, Lorenz, 45 s, seeds 7 and 11: median
    #: CRPS 0.0099 and 0.0103, against 0.0252 and 0.0127 for seeds 7 and 108 from the baseline start).
    final_start: str = "tide"
    warm_share: float = 0.25  # warm start (Briscoe 2024, §5.5): train on this first share of the test part, test on the rest
    warm_epochs: int = 5  # PTN's warm-start epochs (of final_weight_steps steps); TiDE gets tide_time_share of that time
    seeds: int = 2  # the best agent and TiDE retrained with this many seeds; skills pooled, spread per seed
    seed: int = 0

    def first_rung_epochs(self) -> int:
        """Epochs every agent gets before successive halving keeps the better half (all, without halving)."""
        return min(max(1, self.first_rung), self.epochs) if self.halving else self.epochs

    def survivors(self) -> int:
        """Agents per generation that get the search's later epochs (successive halving)."""
        return -(-self.population // 2) if self.first_rung_epochs() < self.epochs else self.population

    def planned(self) -> bool:
        """Whether the run's budget is all in steps (nothing left in seconds for :func:`.budget.plan`)."""
        return self.final_seconds is None and self.search_seconds is None and self.tide_steps is not None

    def total_units(self) -> int:
        first = self.first_rung_epochs()
        per_generation = self.population * first + self.survivors() * (self.epochs - first)
        return self.generations * per_generation + self.seeds * (2 * self.final_epochs + 2)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: The page's demo: a few minutes on two CPU cores (the search's 15 s there buy the rungs of one epoch that the
#: demo ran before its search was set in time; a faster device buys longer rungs and more agents). The final
#: trainings' 50 s keep the whole run under 300 s with a margin: the plan counts steps at each unit's fastest epoch, so
#: a quiet run overshoots its seconds by the ratio of a typical epoch to the fastest (with 60 s: 290 s and 307 s).
#: Per seed, PTN's 50 s and TiDE's 0.8 × (15 + 50) = 52 s; with the search, 219 s planned of the 300.
DEMO = PTNConfig(epochs=2, first_rung=1, final_epochs=1000, final_seconds=50.0, search_seconds=15.0)
#: About eight minutes on one H100 (``bench/ptn.py --budget gpu``): a search of 45 s, final trainings of 50 s,
#: three seeds; TiDE trains for 80 % of PTN's whole time in each seed (0.8 × 95 s).
GPU = PTNConfig(epochs=2, first_rung=1, population=6, final_epochs=100_000, final_seconds=50.0,
                search_seconds=45.0, seeds=3)
PAPER = PTNConfig(population=12, generations=10, epochs=30, final_epochs=30, final_weight_steps=10,
                  hidden_sizes=tuple(range(72, 241, 24)),
                  elite_every=2, elites=2, patience=3, fitness_samples=4096, systems_per_part=50, inits_per_system=5,
                  seeds=7)
