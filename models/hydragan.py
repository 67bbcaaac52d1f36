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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import torch
from torch import nn
from torch.nn import functional as F

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
    hidden: int = 128
    n_critic: int = 3
    lr: float = 2e-4
    gp_weight: float = 10.0
    diversity_weight: float = 10.0
    balance: float = 0.5  # training batches: P(row) ∝ n_condition^−balance (0 = as in the data)
    seed: int = 0
    quality_every: int = 100  # steps between quality reports (0: never)

    def validate(self) -> None:
        if not self.condition_columns:
            raise ValueError("choose at least one protected attribute for the condition")
        for name, v, lo, hi in (("steps", self.steps, 1, 1_000_000), ("batch_size", self.batch_size, 8, 65536),
                                ("noise_dim", self.noise_dim, 1, 1024), ("hidden", self.hidden, 4, 4096),
                                ("n_critic", self.n_critic, 1, 20)):
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


@dataclass
class Schema:
    """How a frame's columns map to the network's tensors (JSON-serializable)."""

    condition_columns: list[str]
    conditions: list[str]  # joint levels seen in the data, in order
    numeric: list[dict[str, Any]]  # name, mean, std, integer, min, max
    categorical: list[dict[str, Any]]  # name, categories
    diversity_column: str
    condition_counts: list[int] = field(default_factory=list)

    @property
    def data_dim(self) -> int:
        return len(self.numeric) + sum(len(c["categories"]) for c in self.categorical)

    def blocks(self) -> list[tuple[int, int]]:
        """(start, stop) of each categorical softmax block in the encoded row."""
        out, start = [], len(self.numeric)
        for c in self.categorical:
            out.append((start, start + len(c["categories"])))
            start += len(c["categories"])
        return out

    def categories(self, name: str) -> list[str]:
        """The categories of categorical column ``name``, in encoding order."""
        return next(c["categories"] for c in self.categorical if c["name"] == name)

    def diversity_position(self) -> int:
        """Which categorical block (and softmax output of :func:`activate`) is the diversity column."""
        return [c["name"] for c in self.categorical].index(self.diversity_column)

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


def fit_schema(df: pd.DataFrame, config: HydraConfig) -> Schema:
    """Learn column roles and scalings from ``df``; ValueError naming a bad column or row."""
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
    numeric, categorical = [], []
    for col in df.columns:
        if col in config.condition_columns:
            continue
        s = df[col]
        if col == config.diversity_column or pd.api.types.is_bool_dtype(s) or not pd.api.types.is_numeric_dtype(s):
            cats = sorted(s.astype(str).unique().tolist())
            if len(cats) > MAX_CATEGORIES:
                raise ValueError(f"column {col!r} has {len(cats)} distinct values (limit {MAX_CATEGORIES}); "
                                 "an identifier cannot be generated")
            categorical.append({"name": str(col), "categories": cats})
        else:
            v = s.to_numpy(dtype=float)
            std = float(v.std())
            numeric.append({"name": str(col), "mean": float(v.mean()), "std": std if std > 0 else 1.0,
                            "integer": bool(np.all(v == np.round(v))), "min": float(v.min()), "max": float(v.max())})
    return Schema(list(config.condition_columns), conditions, numeric, categorical, config.diversity_column,
                  [int(counts[c]) for c in conditions])


def encode(df: pd.DataFrame, schema: Schema) -> tuple[np.ndarray, np.ndarray]:
    """(rows as float32 [n, data_dim], condition index per row)."""
    parts = []
    for c in schema.numeric:
        parts.append(((df[c["name"]].to_numpy(dtype=float) - c["mean"]) / c["std"])[:, None])
    for c in schema.categorical:
        values = df[c["name"]].astype(str).to_numpy()
        parts.append((values[:, None] == np.asarray(c["categories"], dtype=object)[None, :]).astype(float))
    x = np.hstack(parts) if parts else np.empty((len(df), 0))
    cond = condition_labels(df, schema.condition_columns)
    index = pd.Index(schema.conditions).get_indexer(cond)
    if (index < 0).any():
        r = int(np.flatnonzero(index < 0)[0])
        raise ValueError(f"row {r + 1}: condition {cond.iloc[r]!r} was not in the training data")
    return x.astype(np.float32), index


class Generator(nn.Module):
    """noise ⊕ one-hot condition → numeric columns (linear) and categorical logits."""

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
    """row ⊕ one-hot condition → a realism score (no sigmoid: Wasserstein)."""

    def __init__(self, data_dim: int, n_conditions: int, hidden: int):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(data_dim + n_conditions, hidden), nn.LeakyReLU(0.2),
            nn.Linear(hidden, hidden), nn.LeakyReLU(0.2),
            nn.Linear(hidden, 1),
        )

    def forward(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([x, c], dim=1)).squeeze(1)


def activate(raw: torch.Tensor, schema: Schema, gumbel_tau: float | None = None,
             generator: torch.Generator | None = None) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """Generator output → (row for the critic, softmax probabilities per categorical block).

    With ``gumbel_tau`` the categorical part of the row is a Gumbel-softmax sample (training);
    without, the plain softmax.
    """
    k = len(schema.numeric)
    parts, probs = [raw[:, :k]], []
    for start, stop in schema.blocks():
        logits = raw[:, start:stop]
        p = F.softmax(logits, dim=1)
        probs.append(p)
        if gumbel_tau is not None:
            u = torch.rand(logits.shape, generator=generator).clamp_(1e-10, 1 - 1e-10)
            parts.append(F.softmax((logits - torch.log(-torch.log(u))) / gumbel_tau, dim=1))
        else:
            parts.append(p)
    return torch.cat(parts, dim=1), probs


def gradient_penalty(critic: nn.Module, real: torch.Tensor, fake: torch.Tensor, cond: torch.Tensor,
                     weight: float = 10.0, generator: torch.Generator | None = None) -> torch.Tensor:
    """WGAN-GP: weight · E[(‖∇_x̂ D(x̂, c)‖₂ − 1)²] at random interpolates x̂ of real and fake rows."""
    eps = torch.rand(real.shape[0], 1, generator=generator)
    mix = (eps * real + (1 - eps) * fake).requires_grad_(True)
    score = critic(mix, cond)
    (grad,) = torch.autograd.grad(score.sum(), mix, create_graph=True)
    return weight * ((grad.norm(2, dim=1) - 1) ** 2).mean()


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
        exact = self.quota_shares(quota) * n
        counts = np.floor(exact).astype(int)
        counts[np.argsort(-(exact - counts), kind="stable")[: n - counts.sum()]] += 1
        return counts

    @torch.no_grad()
    def sample(self, n: int, quota: dict[str, float] | None = None, seed: int = 0,
               batch: int = 8192) -> pd.DataFrame:
        """``n`` synthetic rows with condition shares given by ``quota`` (uniform by default)."""
        if not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        counts = self.quota_counts(int(n), quota)
        cond_index = np.repeat(np.arange(len(counts)), counts)
        gen = torch.Generator().manual_seed(int(seed))
        self.generator.eval()
        outs = []
        k = len(self.schema.numeric)
        for start in range(0, n, batch):
            idx = torch.as_tensor(cond_index[start:start + batch])
            z = torch.randn(len(idx), self.config.noise_dim, generator=gen)
            raw = self.generator(z, F.one_hot(idx, len(self.schema.conditions)).float())
            num = raw[:, :k]
            cats = []
            for s, e in self.schema.blocks():  # Gumbel-max: an exact draw from each softmax
                u = torch.rand(len(idx), e - s, generator=gen).clamp_(1e-10, 1 - 1e-10)
                cats.append(torch.argmax(raw[:, s:e] - torch.log(-torch.log(u)), dim=1))
            outs.append((num.numpy(), [c.numpy() for c in cats]))
        num = np.concatenate([o[0] for o in outs])
        data: dict[str, Any] = {}
        cond_names = np.asarray(self.schema.conditions, dtype=object)[cond_index]
        split = np.array([c.split(SEP) for c in self.schema.conditions], dtype=object)
        for j, col in enumerate(self.schema.condition_columns):
            data[col] = split[cond_index, j] if len(self.schema.condition_columns) > 1 else cond_names
        for j, c in enumerate(self.schema.numeric):
            v = np.clip(num[:, j] * c["std"] + c["mean"], c["min"], c["max"])
            data[c["name"]] = np.round(v).astype(np.int64) if c["integer"] else v
        for j, c in enumerate(self.schema.categorical):
            codes = np.concatenate([o[1][j] for o in outs])
            data[c["name"]] = np.asarray(c["categories"], dtype=object)[codes]
        return pd.DataFrame(data)

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
        gen = Generator(config.noise_dim, len(schema.conditions), schema.data_dim, config.hidden)
        gen.load_state_dict(blob["generator"])
        critic = None
        if blob.get("critic") is not None:
            critic = Critic(schema.data_dim, len(schema.conditions), config.hidden)
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
    negative), ``gp``, ``generator`` (adversarial loss −E D(fake)), ``diversity`` (the MSE),
    ``steps_per_s``; and every ``quality_every`` steps ``quality``: the mean absolute gap
    between generated and target diversity proportions over conditions. ``should_stop`` is
    checked before every step.
    """
    schema = fit_schema(data, config)
    target = torch.as_tensor(diversity_target(schema, config.diversity_target), dtype=torch.float32)
    x_np, c_np = encode(data, schema)
    torch.manual_seed(config.seed)
    gen_rng = torch.Generator().manual_seed(config.seed)
    np_rng = np.random.default_rng(config.seed)
    n_cond = len(schema.conditions)
    G = Generator(config.noise_dim, n_cond, schema.data_dim, config.hidden)
    D = Critic(schema.data_dim, n_cond, config.hidden)
    opt_g = torch.optim.Adam(G.parameters(), lr=config.lr, betas=(0.5, 0.9))
    opt_d = torch.optim.Adam(D.parameters(), lr=config.lr, betas=(0.5, 0.9))
    x_all, c_all = torch.as_tensor(x_np), torch.as_tensor(c_np)
    counts = np.bincount(c_np, minlength=n_cond).astype(float)
    weights = counts[c_np] ** -config.balance
    weights /= weights.sum()
    batch = min(config.batch_size, len(data))
    dpos = schema.diversity_position()
    started = time.perf_counter()
    step = 0
    for step in range(1, config.steps + 1):
        if should_stop is not None and should_stop():
            step -= 1
            break
        for _ in range(config.n_critic):
            idx = torch.as_tensor(np_rng.choice(len(x_np), size=batch, p=weights))
            real, cidx = x_all[idx], c_all[idx]
            c1 = F.one_hot(cidx, n_cond).float()
            with torch.no_grad():
                fake, _ = activate(G(torch.randn(batch, config.noise_dim, generator=gen_rng), c1), schema, 0.2, gen_rng)
            d_real, d_fake = D(real, c1).mean(), D(fake, c1).mean()
            gp = gradient_penalty(D, real, fake, c1, config.gp_weight, gen_rng)
            loss_d = d_fake - d_real + gp
            opt_d.zero_grad(set_to_none=True)
            loss_d.backward()
            opt_d.step()
        idx = torch.as_tensor(np_rng.choice(len(x_np), size=batch, p=weights))
        cidx = c_all[idx]
        c1 = F.one_hot(cidx, n_cond).float()
        fake, probs = activate(G(torch.randn(batch, config.noise_dim, generator=gen_rng), c1), schema, 0.2, gen_rng)
        adv = -D(fake, c1).mean()
        div = diversity_loss(probs[dpos], cidx, n_cond, target)
        loss_g = adv + config.diversity_weight * div
        opt_g.zero_grad(set_to_none=True)
        loss_g.backward()
        opt_g.step()
        if on_progress is not None:
            record = dict(step=step, done=step, total=config.steps, critic=(d_fake - d_real).item(),
                          gp=gp.item(), generator=adv.item(), diversity=div.item(),
                          steps_per_s=step / max(time.perf_counter() - started, 1e-9),
                          message=f"step {step} of {config.steps}")
            if config.quality_every and step % config.quality_every == 0:
                model = HydraGAN(config, schema, G, D, step)
                shares = condition_label_shares(model.sample(1000 * n_cond, seed=step), schema)
                record["quality"] = float(np.abs(shares.to_numpy() - target.numpy()[None, :]).mean())
                G.train()
            on_progress(**record)
    G.eval()
    return HydraGAN(config, schema, G, D, step)
