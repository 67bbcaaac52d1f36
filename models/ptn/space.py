"""The genetic search's hyperparameter space (Briscoe 2024, Table 5.1) and its operators (Algorithm 2):
proportional crossover, fitness-scaled mutation in [0.05, 0.6]."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Param:
    """One gene: a choice among ``values`` (``ordered`` when neighbours are alike) or a range [low, high]."""

    name: str
    kind: str  # "choice" | "range"
    values: tuple[Any, ...] = ()
    low: float = 0.0
    high: float = 0.0
    log: bool = False
    ordered: bool = True

    def sample(self, rng: np.random.Generator) -> Any:
        if self.kind == "choice":
            return self.values[int(rng.integers(len(self.values)))]
        if self.log:
            return float(math.exp(rng.uniform(math.log(self.low), math.log(self.high))))
        return float(rng.uniform(self.low, self.high))

    def contains(self, v: Any) -> bool:
        return v in self.values if self.kind == "choice" else self.low - 1e-12 <= v <= self.high + 1e-12


ODD15 = tuple(range(1, 16, 2))
HEADS = (2, 3, 4, 6, 8, 12)
#: Widths of the dense encoder–decoder candidate (our addition to Table 5.1): the TiDE-style
#: baseline's 256 is one of them, so the baseline's architecture is a point of the space.
DENSE_WIDTHS = (64, 128, 256)


def space(hidden_sizes: tuple[int, ...] = tuple(range(72, 241, 24))) -> list[Param]:
    """Briscoe 2024, Table 5.1 (hidden sizes d are multiples of 24 so that every head count divides them),
    and the width of the dense encoder–decoder candidate that we add to the search space."""
    return [
        Param("hidden", "choice", hidden_sizes),
        Param("dropout", "range", low=0.0, high=0.5),
        Param("first_dropout", "range", low=0.0, high=0.5),
        Param("slope", "range", low=0.0, high=0.3),
        Param("history_heads", "choice", HEADS),
        Param("forecast_heads", "choice", HEADS),
        Param("noise", "range", low=0.0, high=0.25),
        Param("arch_lr", "range", low=1e-5, high=1e-3, log=True),
        Param("arch_beta1", "range", low=0.5, high=0.99),
        Param("arch_beta2", "range", low=0.95, high=0.999),
        Param("lr", "range", low=1e-5, high=1e-3, log=True),
        Param("beta1", "range", low=0.5, high=0.99),
        Param("beta2", "range", low=0.95, high=0.999),
        Param("norm", "choice", ("layer", "batch", "none"), ordered=False),
        Param("history_embed_kernel", "choice", ODD15),
        Param("history_kernel", "choice", ODD15),
        Param("collapse_kernel_w", "choice", ODD15),
        Param("collapse_kernel_h", "choice", ODD15),
        Param("forecast_embed_kernel", "choice", tuple(range(1, 10, 2))),
        Param("forecast_kernel", "choice", ODD15),
        Param("output_kernel_t", "choice", ODD15),
        Param("output_kernel_f", "choice", ODD15),
        Param("dense_width", "choice", DENSE_WIDTHS),
    ]


def random_hparams(params: list[Param], rng: np.random.Generator) -> dict[str, Any]:
    return {p.name: p.sample(rng) for p in params}


def crossover(a: dict[str, Any], b: dict[str, Any], fa: float, fb: float, params: list[Param],
              rng: np.random.Generator) -> dict[str, Any]:
    """Proportional crossover: parent weights ∝ 1/fitness (CRPS, lower is better). Unordered
    choices: one parent's value, picked with that weight; ordered choices: the weighted
    interpolation of the two indices, rounded; ranges: weighted interpolation (in log space
    for logarithmic ranges)."""
    wa = (1 / fa) / (1 / fa + 1 / fb) if fa > 0 and fb > 0 else 0.5
    child = {}
    for p in params:
        va, vb = a[p.name], b[p.name]
        if p.kind == "choice" and not p.ordered:
            child[p.name] = va if rng.uniform() < wa else vb
        elif p.kind == "choice":
            ia, ib = p.values.index(va), p.values.index(vb)
            child[p.name] = p.values[int(round(wa * ia + (1 - wa) * ib))]
        elif p.log:
            child[p.name] = float(math.exp(wa * math.log(va) + (1 - wa) * math.log(vb)))
        else:
            child[p.name] = float(wa * va + (1 - wa) * vb)
    return child


def mutate(h: dict[str, Any], rate: float, params: list[Param], rng: np.random.Generator) -> dict[str, Any]:
    """Resample each gene with probability ``rate``."""
    return {p.name: (p.sample(rng) if rng.uniform() < rate else h[p.name]) for p in params}


def mutation_rate(expected: float, best: float, worst: float, low: float = 0.05, high: float = 0.6) -> float:
    """∝ expected fitness within [0.05, 0.6]: the worse a child's expected CRPS, the more it mutates."""
    if not worst > best:
        return low
    return low + (high - low) * min(1.0, max(0.0, (expected - best) / (worst - best)))
