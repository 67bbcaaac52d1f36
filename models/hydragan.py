"""Conditional HydraGAN (Briscoe 2024, §3.5): a tabular conditional WGAN-GP with a diversity objective.

The generator's input is noise ⊕ a one-hot *condition* (the joint level of the protected
attributes, e.g. "Black & Female"), so any quota of groups is met exactly at sampling time
("the condition itself enforces group quotas", Briscoe 2024, §3.5.3). Two objectives train it, as in
HydraGAN's multi-critic design:

- **realism**: a Wasserstein critic with gradient penalty (Gulrajani et al. 2017). The critic
  sees the condition too (a conditional WGAN, CWGAN), so each group's rows look like that
  group's real rows rather than like everyone's; with an unconditional critic the generator
  could ignore the condition for every non-protected column.
- **diversity**: the MSE between the generated proportions of a chosen categorical column
  (the label by default) within each condition and the desired proportions (Briscoe 2024, §3.5.3's
  "divergence-based diversity loss").

Numeric columns are standardized (the generator outputs them linearly); categorical columns
are softmax blocks, passed to the critic through a Gumbel-softmax (τ = 0.2) so that soft
outputs cannot be told from one-hot real rows by their softness alone. Sampling draws each
categorical value from its softmax.

Everything is seeded and deterministic on CPU. Checkpoints hold state dicts and a JSON
string only, and load with ``torch.load(..., weights_only=True)``.
"""

from __future__ import annotations

import json
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import torch
from torch import nn
from torch.nn import functional as F

from fairness_core.jobs import Cancelled

SEP = " & "  # joint condition names, as the Upload page names intersections
MAX_CONDITIONS = 64
MAX_CATEGORIES = 100


@dataclass
class HydraConfig:
    """Everything that defines a training run (JSON-serializable)."""

    condition_columns: list[str]
    diversity_column: str
    diversity_target: dict[str, float] | None = None  # None: uniform over the column's categories
    steps: int = 1500
    batch_size: int = 256
    noise_dim: int = 32
    hidden: int = 256  # 128 → 256 lowered the C2ST AUC on COMPAS from ~0.675 to ~0.645 (two seeds)
    n_critic: int = 3
    pac: int = 1  # rows the critic judges together (PacGAN, CTGAN uses 10; on COMPAS 8 did not lower the C2ST AUC)
    lr: float = 2e-4
    gp_weight: float = 10.0
    diversity_weight: float = 10.0  # the diversity objective's weight (without label_condition)
    label_condition: bool = True  # condition on the diversity column too: its target met exactly in every group
    balance: float = 0.5  # training batches: P(row) ∝ n_condition^−balance (0 = as in the data)
    seed: int = 0
    quality_every: int = 100  # steps between quality reports (0: never)

    def validate(self) -> None:
        if not self.condition_columns:
            raise ValueError("choose at least one protected attribute for the condition")
        for name, v, lo, hi in (("steps", self.steps, 1, 1_000_000), ("batch_size", self.batch_size, 8, 65536),
                                ("noise_dim", self.noise_dim, 1, 1024), ("hidden", self.hidden, 4, 4096),
                                ("n_critic", self.n_critic, 1, 20), ("pac", self.pac, 1, 64)):
            if not isinstance(v, int) or not lo <= v <= hi:
                raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {v!r}")
        for name, v in (("lr", self.lr), ("gp_weight", self.gp_weight), ("diversity_weight", self.diversity_weight),
                        ("balance", self.balance)):
            if not np.isfinite(v) or v < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
        if self.lr == 0:
            raise ValueError("lr must be > 0")

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "HydraConfig":
        return cls(**json.loads(text))


#: A value holding at least this share of a numeric column's rows is a point mass of its own
#: (a count's spike at zero, a capped maximum): generated exactly, never smeared by a Gaussian.
SPIKE_SHARE = 0.10  # 0.05 made age 24 (5.1 % of COMPAS) a point mass, over-generated at 8 %
MAX_MODES = 10  # Gaussian modes per numeric column (CTGAN's variational mixture keeps those that matter)
MODE_WEIGHT = 0.005  # modes lighter than this are dropped
ALPHA_SPREAD = 4.0  # α = (x − μ_k) / (4 σ_k) ∈ (−1, 1) as in CTGAN
FIT_ROWS = 5_000  # values per column the mixture is fitted on (a seeded subsample above that)


@dataclass
class Schema:
    """How a frame's columns map to the network's tensors (JSON-serializable).

    Every numeric column is *mode-specific normalized* (Xu et al. 2019, CTGAN): its values are
    described by point masses (values with ≥ :data:`SPIKE_SHARE` of the rows) and a Gaussian
    mixture over the rest; a row is encoded as a one-hot mode plus, for a Gaussian mode k, the
    scalar α = (x − μ_k) / (4 σ_k). With ``label_condition`` the diversity column is part of the
    condition (given, not generated), so its target shares are met exactly in every group.
    """

    condition_columns: list[str]
    conditions: list[str]  # joint levels seen in the data, in order
    numeric: list[dict[str, Any]]  # name, integer, min, max, spikes, means, stds, weights
    categorical: list[dict[str, Any]]  # generated categorical columns: name, categories
    diversity_column: str
    condition_counts: list[int] = field(default_factory=list)
    label_condition: bool = False
    label_categories: list[str] = field(default_factory=list)  # the diversity column's, with label_condition
    column_order: list[str] = field(default_factory=list)  # the training frame's columns, for sampled frames

    def modes(self, c: dict[str, Any]) -> int:
        return len(c["spikes"]) + len(c["means"])

    @property
    def data_dim(self) -> int:
        return sum(1 + self.modes(c) for c in self.numeric) + sum(len(c["categories"]) for c in self.categorical)

    @property
    def condition_dim(self) -> int:
        return len(self.conditions) + (len(self.label_categories) if self.label_condition else 0)

    def alphas(self) -> list[int]:
        """Position of each numeric column's α in the encoded row."""
        out, start = [], 0
        for c in self.numeric:
            out.append(start)
            start += 1 + self.modes(c)
        return out

    def mode_blocks(self) -> list[tuple[int, int]]:
        """(start, stop) of each numeric column's mode one-hot."""
        return [(a + 1, a + 1 + self.modes(c)) for a, c in zip(self.alphas(), self.numeric)]

    def blocks(self) -> list[tuple[int, int]]:
        """(start, stop) of each generated categorical column's softmax block."""
        out, start = [], sum(1 + self.modes(c) for c in self.numeric)
        for c in self.categorical:
            out.append((start, start + len(c["categories"])))
            start += len(c["categories"])
        return out

    def categories(self, name: str) -> list[str]:
        """The categories of categorical column ``name``, in encoding order."""
        if self.label_condition and name == self.diversity_column:
            return list(self.label_categories)
        return next(c["categories"] for c in self.categorical if c["name"] == name)

    def diversity_position(self) -> int:
        """Which categorical block (and softmax output of :func:`activate`) is the diversity column."""
        return len(self.numeric) + [c["name"] for c in self.categorical].index(self.diversity_column)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "Schema":
        return cls(**json.loads(text))


def condition_labels(df: pd.DataFrame, columns: list[str]) -> pd.Series:
    """Each row's joint condition, e.g. "Black & Female"."""
    parts = [df[c].astype(str).str.strip() for c in columns]
    out = parts[0]
    for p in parts[1:]:
        out = out + SEP + p
    return out


def fit_modes(v: np.ndarray, seed: int = 0) -> dict[str, Any]:
    """Point masses and a Gaussian mixture (scikit-learn's variational Bayesian mixture with a
    Dirichlet-process prior, as CTGAN) for one numeric column's values."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.mixture import BayesianGaussianMixture

    values, counts = np.unique(v, return_counts=True)
    spikes = values[counts >= SPIKE_SHARE * len(v)]
    rest = v[~np.isin(v, spikes)]
    scale = float(v.std()) or 1.0
    means: list[float] = []
    stds: list[float] = []
    weights: list[float] = []
    if len(rest) >= 2 and np.unique(rest).size >= 2:
        fit = rest if len(rest) <= FIT_ROWS else np.random.default_rng(seed).choice(rest, FIT_ROWS, replace=False)
        k = int(min(MAX_MODES, np.unique(fit).size))
        gm = BayesianGaussianMixture(n_components=k, weight_concentration_prior_type="dirichlet_process",
                                     weight_concentration_prior=1e-3, max_iter=200, random_state=seed)
        with warnings.catch_warnings():  # an unconverged fit of a small column still describes it
            warnings.simplefilter("ignore", ConvergenceWarning)
            gm.fit(fit[:, None])
        keep = gm.weights_ > MODE_WEIGHT
        means = gm.means_[keep, 0].tolist()
        stds = np.maximum(np.sqrt(gm.covariances_[keep].reshape(-1)), 1e-3 * scale).tolist()
        w = gm.weights_[keep]
        weights = (w / w.sum()).tolist()
    elif len(rest):
        means, stds, weights = [float(rest.mean())], [max(float(rest.std()), 1e-3 * scale)], [1.0]
    return {"spikes": spikes.astype(float).tolist(), "means": [float(m) for m in means],
            "stds": [float(x) for x in stds], "weights": weights}


def _check(should_stop: Callable[[], bool] | None, what: str) -> None:
    if should_stop is not None and should_stop():
        raise Cancelled(f"stopped {what}")


def fit_schema(df: pd.DataFrame, config: HydraConfig, modes: bool = True,
               should_stop: Callable[[], bool] | None = None) -> Schema:
    """Learn column roles and scalings from ``df``; ValueError naming a bad column or row.
    ``modes=False`` checks the frame without fitting the numeric columns' mixtures (fast).
    ``should_stop`` is looked at before each column (True raises :class:`Cancelled`)."""
    config.validate()
    if len(df) < 20:
        raise ValueError(f"{len(df)} rows are too few to train a GAN")
    for col in [*config.condition_columns, config.diversity_column]:
        if col not in df.columns:
            raise ValueError(f"no column {col!r}; columns are {', '.join(map(repr, df.columns))}")
    if config.diversity_column in config.condition_columns:
        raise ValueError("the diversity column cannot also be a protected attribute of the condition")
    for col in df.columns:
        missing = df[col].isna().to_numpy()
        if missing.any():
            raise ValueError(f"row {int(np.flatnonzero(missing)[0]) + 1}, column {col!r}: missing value")
    cond = condition_labels(df, config.condition_columns)
    counts = cond.value_counts()
    if len(counts) > MAX_CONDITIONS:
        raise ValueError(f"{len(counts)} condition levels from {', '.join(config.condition_columns)}; "
                         f"the limit is {MAX_CONDITIONS}")
    conditions = sorted(counts.index.tolist())
    numeric, categorical, label_categories = [], [], []
    for col in df.columns:
        _check(should_stop, f"while learning column {col!r}")
        if col in config.condition_columns:
            continue
        s = df[col]
        if col == config.diversity_column or pd.api.types.is_bool_dtype(s) or not pd.api.types.is_numeric_dtype(s):
            cats = sorted(s.astype(str).unique().tolist())
            if len(cats) > MAX_CATEGORIES:
                raise ValueError(f"column {col!r} has {len(cats)} distinct values (limit {MAX_CATEGORIES}); "
                                 "an identifier cannot be generated")
            if col == config.diversity_column and config.label_condition:
                label_categories = cats
            else:
                categorical.append({"name": str(col), "categories": cats})
        else:
            v = s.to_numpy(dtype=float)
            numeric.append({"name": str(col), "integer": bool(np.all(v == np.round(v))), "min": float(v.min()),
                            "max": float(v.max()),
                            **(fit_modes(v, config.seed) if modes else {"spikes": [], "means": [], "stds": [],
                                                                          "weights": []})})
    return Schema(list(config.condition_columns), conditions, numeric, categorical, config.diversity_column,
                  [int(counts[c]) for c in conditions], bool(config.label_condition), label_categories,
                  [str(c) for c in df.columns])


def encode_numeric(v: np.ndarray, c: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    """One numeric column → [α, one-hot mode] per row. A value at a point mass takes that mode
    (α = 0); any other value a Gaussian mode drawn from its posterior (CTGAN)."""
    spikes, means, stds = (np.asarray(c[k], dtype=float) for k in ("spikes", "means", "stds"))
    weights = np.asarray(c["weights"], dtype=float)
    out = np.zeros((len(v), 1 + len(spikes) + len(means)))
    at = (v[:, None] == spikes[None, :]) if len(spikes) else np.zeros((len(v), 0), bool)
    spiked = at.any(1)
    if len(spikes):
        out[np.flatnonzero(spiked), 1 + at[spiked].argmax(1)] = 1.0
    rest = np.flatnonzero(~spiked)
    if len(rest):
        if not len(means):  # a value the fit never saw off the point masses: the nearest point mass
            out[rest, 1 + np.abs(v[rest, None] - spikes[None, :]).argmin(1)] = 1.0
            return out
        logp = np.log(weights)[None, :] - np.log(stds)[None, :] - 0.5 * ((v[rest, None] - means) / stds) ** 2
        p = np.exp(logp - logp.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        k = (rng.uniform(size=(len(rest), 1)) > np.cumsum(p, 1)).sum(1).clip(0, len(means) - 1)
        out[rest, 1 + len(spikes) + k] = 1.0
        out[rest, 0] = np.clip((v[rest] - means[k]) / (ALPHA_SPREAD * stds[k]), -0.99, 0.99)
    return out


def decode_numeric(alpha: np.ndarray, mode: np.ndarray, c: dict[str, Any]) -> np.ndarray:
    """The inverse of :func:`encode_numeric`: a point mass's value, or μ_k + 4 σ_k α for Gaussian mode k."""
    spikes, means, stds = (np.asarray(c[key], dtype=float) for key in ("spikes", "means", "stds"))
    g = np.clip(mode - len(spikes), 0, max(len(means) - 1, 0))
    gauss = means[g] + ALPHA_SPREAD * stds[g] * alpha if len(means) else np.zeros(len(mode))
    point = spikes[np.minimum(mode, max(len(spikes) - 1, 0))] if len(spikes) else np.zeros(len(mode))
    return np.where(mode < len(spikes), point, gauss)


def encode(df: pd.DataFrame, schema: Schema, seed: int = 0,
           should_stop: Callable[[], bool] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(rows as float32 [n, data_dim], condition index per row); ``should_stop`` looked at per column."""
    rng = np.random.default_rng(seed)
    parts = []
    for c in schema.numeric:
        _check(should_stop, "while encoding the rows")
        parts.append(encode_numeric(df[c["name"]].to_numpy(dtype=float), c, rng))
    for c in schema.categorical:
        _check(should_stop, "while encoding the rows")
        values = df[c["name"]].astype(str).to_numpy()
        parts.append((values[:, None] == np.asarray(c["categories"], dtype=object)[None, :]).astype(float))
    x = np.hstack(parts) if parts else np.empty((len(df), 0))
    cond = condition_labels(df, schema.condition_columns)
    index = pd.Index(schema.conditions).get_indexer(cond)
    if (index < 0).any():
        r = int(np.flatnonzero(index < 0)[0])
        raise ValueError(f"row {r + 1}: condition {cond.iloc[r]!r} was not in the training data")
    return x.astype(np.float32), index


def label_index(df: pd.DataFrame, schema: Schema) -> np.ndarray:
    """Each row's diversity-column category index (for a label-conditioned schema)."""
    values = df[schema.diversity_column].astype(str)
    index = pd.Index(schema.label_categories).get_indexer(values)
    if (index < 0).any():
        r = int(np.flatnonzero(index < 0)[0])
        raise ValueError(f"row {r + 1}: {schema.diversity_column} {values.iloc[r]!r} was not in the training data")
    return index


class Generator(nn.Module):
    """noise ⊕ condition → α per numeric column, mode logits, categorical logits."""

    def __init__(self, noise_dim: int, n_conditions: int, data_dim: int, hidden: int):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(noise_dim + n_conditions, hidden), nn.LayerNorm(hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.LayerNorm(hidden), nn.ReLU(),
            nn.Linear(hidden, data_dim),
        )

    def forward(self, z: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([z, c], dim=1))


class Critic(nn.Module):
    """``pac`` rows ⊕ their conditions → one realism score (no sigmoid: Wasserstein).

    Packing (PacGAN, Lin et al. 2018; CTGAN's default): the critic judges ``pac`` rows at a time,
    so a generator that repeats a few plausible rows (mode collapse) is told apart from real
    rows, which vary. ``pac = 1`` is the plain conditional critic."""

    def __init__(self, data_dim: int, n_conditions: int, hidden: int, pac: int = 1):
        super().__init__()
        self.pac = pac
        self.net = nn.Sequential(
            nn.Linear(pac * (data_dim + n_conditions), hidden), nn.LeakyReLU(0.2),
            nn.Linear(hidden, hidden), nn.LeakyReLU(0.2),
            nn.Linear(hidden, 1),
        )

    def forward(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        rows = torch.cat([x, c], dim=1)
        return self.net(rows.reshape(rows.shape[0] // self.pac, -1)).squeeze(1)


def activate(raw: torch.Tensor, schema: Schema, gumbel_tau: float | None = None,
             generator: torch.Generator | None = None) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """Generator output → (row for the critic, softmax probabilities per block).

    α outputs pass through tanh; every mode and categorical block through a softmax. With
    ``gumbel_tau`` the blocks in the row are Gumbel-softmax samples (training); without, the
    plain softmax. Probabilities come back for the numeric mode blocks, then the categorical ones.
    """
    parts, probs = [], []
    blocks = schema.mode_blocks() + schema.blocks()
    alphas = set(schema.alphas())
    pieces = sorted([(a, a + 1, "alpha") for a in alphas] + [(a, b, "block") for a, b in blocks])
    for start, stop, kind in pieces:
        if kind == "alpha":
            parts.append(torch.tanh(raw[:, start:stop]))
            continue
        logits = raw[:, start:stop]
        p = F.softmax(logits, dim=1)
        probs.append((start, p))
        if gumbel_tau is not None:
            u = torch.rand(logits.shape, generator=generator).clamp_(1e-10, 1 - 1e-10)
            parts.append(F.softmax((logits - torch.log(-torch.log(u))) / gumbel_tau, dim=1))
        else:
            parts.append(p)
    order = {start: p for start, p in probs}
    return torch.cat(parts, dim=1), [order[a] for a, _ in blocks]


def gradient_penalty(critic: nn.Module, real: torch.Tensor, fake: torch.Tensor, cond: torch.Tensor,
                     weight: float = 10.0, generator: torch.Generator | None = None) -> torch.Tensor:
    """WGAN-GP: weight · E[(‖∇_x̂ D(x̂, c)‖₂ − 1)²] at random interpolates x̂ of real and fake rows."""
    pac = getattr(critic, "pac", 1)
    eps = torch.rand(real.shape[0] // pac, 1, generator=generator).repeat_interleave(pac, dim=0)
    mix = (eps * real + (1 - eps) * fake).requires_grad_(True)
    score = critic(mix, cond)
    (grad,) = torch.autograd.grad(score.sum(), mix, create_graph=True)
    return weight * ((grad.reshape(grad.shape[0] // pac, -1).norm(2, dim=1) - 1) ** 2).mean()


def diversity_loss(probs: torch.Tensor, cond_index: torch.Tensor, n_conditions: int,
                   target: torch.Tensor) -> torch.Tensor:
    """Mean over the conditions present of ‖mean softmax proportions − target‖² / k (an MSE)."""
    onehot = F.one_hot(cond_index, n_conditions).to(probs.dtype)  # [b, K]
    counts = onehot.sum(0)  # [K]
    present = counts > 0
    proportions = (onehot.T @ probs)[present] / counts[present, None]  # [K', k]
    return ((proportions - target[None, :]) ** 2).mean()


def diversity_target(schema: Schema, target: dict[str, float] | None) -> np.ndarray:
    """The desired proportions over the diversity column's categories (uniform by default)."""
    cats = schema.categories(schema.diversity_column)
    if target is None:
        return np.full(len(cats), 1 / len(cats))
    unknown = set(map(str, target)) - set(cats)
    if unknown:
        raise ValueError(f"target names categories not in {schema.diversity_column!r}: {', '.join(sorted(unknown))}")
    v = np.array([float(target.get(c, 0.0)) for c in cats])
    if np.any(~np.isfinite(v)) or np.any(v < 0) or v.sum() <= 0:
        raise ValueError("target proportions must be finite, >= 0 and not all 0")
    return v / v.sum()


def largest_remainder(total: int, shares: np.ndarray) -> np.ndarray:
    """``total`` split by ``shares`` into integers that sum to it (Hamilton's method)."""
    exact = np.asarray(shares, dtype=float) / np.sum(shares) * total
    counts = np.floor(exact).astype(int)
    counts[np.argsort(-(exact - counts), kind="stable")[: total - counts.sum()]] += 1
    return counts


def conditioning(cond: torch.Tensor, label: torch.Tensor | None, schema: Schema) -> torch.Tensor:
    """The generator's and critic's condition: one-hot group ⊕ (label-conditioned) one-hot category."""
    c = F.one_hot(cond, len(schema.conditions)).float()
    if schema.label_condition:
        if label is None:
            raise ValueError("a label-conditioned model needs each row's diversity category")
        c = torch.cat([c, F.one_hot(label, len(schema.label_categories)).float()], dim=1)
    return c


class HydraGAN:
    """A trained generator with its schema; samples rows for any quota of conditions."""

    def __init__(self, config: HydraConfig, schema: Schema, generator: Generator, critic: Critic | None = None,
                 steps_done: int = 0):
        self.config, self.schema, self.generator, self.critic = config, schema, generator, critic
        self.steps_done = steps_done

    def quota_shares(self, quota: dict[str, float] | None = None) -> np.ndarray:
        """Each condition's share of the synthetic rows (``quota`` normalized; uniform by default)."""
        conds = self.schema.conditions
        if quota is None:
            return np.full(len(conds), 1 / len(conds))
        unknown = set(quota) - set(conds)
        if unknown:
            raise ValueError(f"unknown condition(s) {', '.join(map(repr, sorted(unknown)))}; "
                             f"conditions are {', '.join(conds)}")
        shares = np.array([float(quota.get(c, 0.0)) for c in conds])
        if np.any(~np.isfinite(shares)) or np.any(shares < 0) or shares.sum() <= 0:
            raise ValueError("quota shares must be finite, >= 0 and not all 0")
        return shares / shares.sum()

    def quota_counts(self, n: int, quota: dict[str, float] | None = None) -> np.ndarray:
        """Rows per condition for ``n`` rows: the quota's shares rounded by largest remainder."""
        return largest_remainder(int(n), self.quota_shares(quota))

    def cell_counts(self, n: int, quota: dict[str, float] | None = None) -> np.ndarray:
        """Rows per (condition, diversity category) for ``n`` rows: each condition's quota split by
        the diversity target (largest remainder within the condition), so every group meets the
        target to within one row. Label-conditioned models only."""
        if not self.schema.label_condition:
            raise ValueError("this model does not condition on the diversity column")
        target = diversity_target(self.schema, self.config.diversity_target)
        return np.stack([largest_remainder(int(k), target) for k in self.quota_counts(n, quota)])

    @torch.no_grad()
    def sample(self, n: int, quota: dict[str, float] | None = None, seed: int = 0,
               batch: int = 8192, should_stop: Callable[[], bool] | None = None) -> pd.DataFrame:
        """``n`` synthetic rows with condition shares given by ``quota`` (uniform by default); with a
        label-conditioned model, each condition's rows split by the diversity target exactly.
        ``should_stop`` is looked at before each batch (True raises :class:`Cancelled`)."""
        if not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        if self.schema.label_condition:
            return self.sample_cells(self.cell_counts(int(n), quota), seed, batch, should_stop)
        counts = self.quota_counts(int(n), quota)
        return self._generate(np.repeat(np.arange(len(counts)), counts), None, seed, batch, should_stop)

    @torch.no_grad()
    def sample_cells(self, counts: np.ndarray, seed: int = 0, batch: int = 8192,
                     should_stop: Callable[[], bool] | None = None) -> pd.DataFrame:
        """Rows for an exact table of counts [condition, diversity category] (label-conditioned
        models): e.g. the real test rows' mix, for a two-sample test of realism alone."""
        counts = np.asarray(counts)
        k, m = len(self.schema.conditions), len(self.schema.label_categories)
        if not self.schema.label_condition or counts.shape != (k, m):
            raise ValueError(f"counts must be a {k} × {m} table of conditions × {self.schema.diversity_column} "
                             "categories (label-conditioned models)")
        if np.any(counts < 0) or counts.sum() < 1 or np.any(counts != np.round(counts)):
            raise ValueError("counts must be whole numbers >= 0, not all 0")
        cells = np.repeat(np.arange(k * m), counts.reshape(-1).astype(int))
        return self._generate(cells // m, cells % m, seed, batch, should_stop)

    def _generate(self, cond_index: np.ndarray, label_index_: np.ndarray | None, seed: int,
                  batch: int, should_stop: Callable[[], bool] | None = None) -> pd.DataFrame:
        gen = torch.Generator().manual_seed(int(seed))
        self.generator.eval()
        schema, n = self.schema, len(cond_index)
        alphas, mode_blocks, blocks = schema.alphas(), schema.mode_blocks(), schema.blocks()
        values: list[list[np.ndarray]] = [[] for _ in schema.numeric]
        codes: list[list[np.ndarray]] = [[] for _ in schema.categorical]
        for start in range(0, n, batch):
            _check(should_stop, f"after sampling {start:,} of {n:,} rows")
            idx = torch.as_tensor(cond_index[start:start + batch])
            lab = None if label_index_ is None else torch.as_tensor(label_index_[start:start + batch])
            z = torch.randn(len(idx), self.config.noise_dim, generator=gen)
            raw = self.generator(z, conditioning(idx, lab, self.schema))

            def draw(s: int, e: int) -> np.ndarray:  # Gumbel-max: an exact draw from the softmax
                u = torch.rand(len(idx), e - s, generator=gen).clamp_(1e-10, 1 - 1e-10)
                return torch.argmax(raw[:, s:e] - torch.log(-torch.log(u)), dim=1).numpy()

            for j, (c, a, (s, e)) in enumerate(zip(schema.numeric, alphas, mode_blocks)):
                values[j].append(decode_numeric(torch.tanh(raw[:, a]).numpy(), draw(s, e), c))
            for j, (s, e) in enumerate(blocks):
                codes[j].append(draw(s, e))
        data: dict[str, Any] = {}
        cond_names = np.asarray(schema.conditions, dtype=object)[cond_index]
        split = np.array([c.split(SEP) for c in schema.conditions], dtype=object)
        for j, col in enumerate(schema.condition_columns):
            data[col] = split[cond_index, j] if len(schema.condition_columns) > 1 else cond_names
        for j, c in enumerate(schema.numeric):
            v = np.clip(np.concatenate(values[j]), c["min"], c["max"])
            data[c["name"]] = np.round(v).astype(np.int64) if c["integer"] else v
        for j, c in enumerate(schema.categorical):
            data[c["name"]] = np.asarray(c["categories"], dtype=object)[np.concatenate(codes[j])]
        if schema.label_condition:
            data[schema.diversity_column] = np.asarray(schema.label_categories, dtype=object)[label_index_]
        frame = pd.DataFrame(data)
        return frame[[c for c in schema.column_order if c in frame]] if schema.column_order else frame

    def save(self, path: str | Path) -> None:
        """State dicts and JSON text only (loadable with ``weights_only=True``)."""
        torch.save({"generator": self.generator.state_dict(),
                    "critic": None if self.critic is None else self.critic.state_dict(),
                    "config": self.config.to_json(), "schema": self.schema.to_json(),
                    "steps_done": self.steps_done}, path)

    @classmethod
    def load(cls, path: str | Path) -> "HydraGAN":
        blob = torch.load(path, weights_only=True)
        config, schema = HydraConfig.from_json(blob["config"]), Schema.from_json(blob["schema"])
        gen = Generator(config.noise_dim, schema.condition_dim, schema.data_dim, config.hidden)
        gen.load_state_dict(blob["generator"])
        critic = None
        if blob.get("critic") is not None:
            critic = Critic(schema.data_dim, schema.condition_dim, config.hidden, config.pac)
            critic.load_state_dict(blob["critic"])
        return cls(config, schema, gen, critic, int(blob.get("steps_done", 0)))


def condition_label_shares(frame: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """Share of each diversity-column category within each condition (rows: conditions)."""
    cond = condition_labels(frame, schema.condition_columns)
    cats = schema.categories(schema.diversity_column)
    table = pd.crosstab(cond, frame[schema.diversity_column].astype(str), normalize="index")
    return table.reindex(index=schema.conditions, columns=cats, fill_value=0.0)


def train(config: HydraConfig, data: pd.DataFrame, on_progress: Callable[..., None] | None = None,
          should_stop: Callable[[], bool] | None = None) -> HydraGAN:
    """Train Conditional HydraGAN on ``data``; returns the model (also when stopped early).

    ``on_progress`` receives after every generator step: ``step``, ``done``, ``total``,
    ``critic`` (the critic's loss −(E D(real) − E D(fake)), so the Wasserstein estimate is its
    negative), ``gp``, ``generator`` (adversarial loss −E D(fake)), ``diversity`` (the MSE; 0 for a
    label-conditioned model, whose target is met by construction), ``steps_per_s``; and, without
    label conditioning, every ``quality_every`` steps ``quality``: the mean absolute gap between
    generated and target diversity proportions over conditions. ``should_stop`` is checked before
    every step and while the columns are learned and encoded (then True raises :class:`Cancelled`).
    """
    schema = fit_schema(data, config, should_stop=should_stop)
    target = torch.as_tensor(diversity_target(schema, config.diversity_target), dtype=torch.float32)
    x_np, c_np = encode(data, schema, config.seed, should_stop)
    l_np = label_index(data, schema) if schema.label_condition else np.zeros(len(data), dtype=int)
    torch.manual_seed(config.seed)
    gen_rng = torch.Generator().manual_seed(config.seed)
    np_rng = np.random.default_rng(config.seed)
    n_cond = len(schema.conditions)
    G = Generator(config.noise_dim, schema.condition_dim, schema.data_dim, config.hidden)
    D = Critic(schema.data_dim, schema.condition_dim, config.hidden, config.pac)
    opt_g = torch.optim.Adam(G.parameters(), lr=config.lr, betas=(0.5, 0.9))
    opt_d = torch.optim.Adam(D.parameters(), lr=config.lr, betas=(0.5, 0.9))
    x_all, c_all, l_all = torch.as_tensor(x_np), torch.as_tensor(c_np), torch.as_tensor(l_np)
    counts = np.bincount(c_np, minlength=n_cond).astype(float)
    weights = counts[c_np] ** -config.balance
    weights /= weights.sum()
    batch = max(config.pac, min(config.batch_size, len(data)) // config.pac * config.pac)  # whole packs
    dpos = None if schema.label_condition else schema.diversity_position()
    started = time.perf_counter()
    step = 0

    def cvec(idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        cidx = c_all[idx]
        return cidx, conditioning(cidx, l_all[idx] if schema.label_condition else None, schema)

    for step in range(1, config.steps + 1):
        if should_stop is not None and should_stop():
            step -= 1
            break
        for _ in range(config.n_critic):
            idx = torch.as_tensor(np_rng.choice(len(x_np), size=batch, p=weights))
            real = x_all[idx]
            _, c1 = cvec(idx)
            with torch.no_grad():
                fake, _ = activate(G(torch.randn(batch, config.noise_dim, generator=gen_rng), c1), schema, 0.2, gen_rng)
            d_real, d_fake = D(real, c1).mean(), D(fake, c1).mean()
            gp = gradient_penalty(D, real, fake, c1, config.gp_weight, gen_rng)
            loss_d = d_fake - d_real + gp
            opt_d.zero_grad(set_to_none=True)
            loss_d.backward()
            opt_d.step()
        idx = torch.as_tensor(np_rng.choice(len(x_np), size=batch, p=weights))
        cidx, c1 = cvec(idx)
        fake, probs = activate(G(torch.randn(batch, config.noise_dim, generator=gen_rng), c1), schema, 0.2, gen_rng)
        adv = -D(fake, c1).mean()
        div = (diversity_loss(probs[dpos], cidx, n_cond, target) if dpos is not None
               else torch.zeros((), dtype=adv.dtype))
        loss_g = adv + config.diversity_weight * div if dpos is not None else adv
        opt_g.zero_grad(set_to_none=True)
        loss_g.backward()
        opt_g.step()
        if on_progress is not None:
            record = dict(step=step, done=step, total=config.steps, critic=(d_fake - d_real).item(),
                          gp=gp.item(), generator=adv.item(), diversity=div.item(),
                          steps_per_s=step / max(time.perf_counter() - started, 1e-9),
                          message=f"step {step} of {config.steps}")
            if dpos is not None and config.quality_every and step % config.quality_every == 0:
                model = HydraGAN(config, schema, G, D, step)
                shares = condition_label_shares(model.sample(1000 * n_cond, seed=step), schema)
                record["quality"] = float(np.abs(shares.to_numpy() - target.numpy()[None, :]).mean())
                G.train()
            on_progress(**record)
    G.eval()
    return HydraGAN(config, schema, G, D, step)
