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

Everything is seeded and deterministic on CPU. Training runs on a GPU when one is present
(``HydraConfig.device``; the same code, with the random draws made on the GPU), and the trained
networks come back to the CPU, where sampling and calibration run. Checkpoints hold state dicts and
a JSON string only, and load with ``torch.load(..., weights_only=True)``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import torch
from torch import nn
from torch.nn import functional as F

from . import hydragan_calibration as calibration
from .hydragan_schema import (ALPHA_SPREAD, FIT_ROWS, MAX_CATEGORIES, MAX_CONDITIONS, MAX_MODES, MODE_WEIGHT,  # noqa: F401
                              SEP, SPIKE_SHARE, HydraConfig, Schema, _check, check_conditions, condition_labels,
                              decode_numeric, encode, encode_numeric, fit_modes, fit_schema, label_index,
                              shares_from_table)
from .jobs_interface import Cancelled, Progress, ProgressCallback, Stage, of_kind


@dataclass(frozen=True)
class GanStep(Progress):
    """One generator step of :func:`train`: the losses of each objective.

    ``critic``: the critic's loss −(E D(real) − E D(fake)) (its negative is the Wasserstein estimate);
    ``gp``: the gradient penalty; ``generator``: the adversarial loss −E D(fake); ``diversity``: the
    diversity MSE (0 for a label-conditioned model, whose target is met by construction);
    ``quality``: every ``quality_every`` steps of a model without label conditioning, the mean absolute
    gap between generated and target diversity shares over conditions (else None)."""

    step: int = 0
    critic: float = float("nan")
    gp: float = float("nan")
    generator: float = float("nan")
    diversity: float = float("nan")
    steps_per_s: float = float("nan")
    quality: float | None = None

    @property
    def wasserstein(self) -> float:
        """E D(real) − E D(fake): shrinks as the generated rows become realistic."""
        return -self.critic


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
            u = torch.rand(logits.shape, generator=generator, device=logits.device).clamp_(1e-10, 1 - 1e-10)
            parts.append(F.softmax((logits - torch.log(-torch.log(u))) / gumbel_tau, dim=1))
        else:
            parts.append(p)
    order = {start: p for start, p in probs}
    return torch.cat(parts, dim=1), [order[a] for a, _ in blocks]


def gradient_penalty(critic: nn.Module, real: torch.Tensor, fake: torch.Tensor, cond: torch.Tensor,
                     weight: float = 10.0, generator: torch.Generator | None = None) -> torch.Tensor:
    """WGAN-GP: weight · E[(‖∇_x̂ D(x̂, c)‖₂ − 1)²] at random interpolates x̂ of real and fake rows."""
    pac = getattr(critic, "pac", 1)
    eps = torch.rand(real.shape[0] // pac, 1, generator=generator, device=real.device).repeat_interleave(pac, dim=0)
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


def gumbel_max(logits: torch.Tensor, gen: torch.Generator) -> np.ndarray:
    """One exact draw per row from softmax(``logits``) (the Gumbel-max trick)."""
    u = torch.rand(logits.shape, generator=gen).clamp_(1e-10, 1 - 1e-10)
    return torch.argmax(logits - torch.log(-torch.log(u)), dim=1).numpy()


class HydraGAN:
    """A trained generator with its schema; samples rows for any quota of conditions."""

    def __init__(self, config: HydraConfig, schema: Schema, generator: Generator, critic: Critic | None = None,
                 steps_done: int = 0, calibration_: calibration.Calibration | None = None):
        self.config, self.schema, self.generator, self.critic = config, schema, generator, critic
        self.steps_done = steps_done
        #: Per-cell marginal maps fitted after training (None: the generator's output as it is)
        self.calibration = calibration_

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

    def cells(self, cond_index: np.ndarray, label_index_: np.ndarray | None) -> np.ndarray:
        """Each row's calibration cell: its condition, and its diversity category when that is conditioned on."""
        if self.schema.label_condition and label_index_ is not None:
            return np.asarray(cond_index) * len(self.schema.label_categories) + np.asarray(label_index_)
        return np.asarray(cond_index)

    def _raw(self, cond_index: np.ndarray, label_index_: np.ndarray | None, gen: torch.Generator, batch: int,
             should_stop: Callable[[], bool] | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
        """The generator's uncalibrated output: numeric values [rows, numeric columns] (decoded, before
        clipping and rounding) and each categorical column's logits."""
        schema, n = self.schema, len(cond_index)
        self.generator.eval()
        device = next(self.generator.parameters()).device  # the CPU, but for the quality checks while training
        alphas, mode_blocks, blocks = schema.alphas(), schema.mode_blocks(), schema.blocks()
        values: list[list[np.ndarray]] = [[] for _ in schema.numeric]
        logits: list[list[np.ndarray]] = [[] for _ in schema.categorical]
        for start in range(0, n, batch):
            _check(should_stop, f"after sampling {start:,} of {n:,} rows")
            idx = torch.as_tensor(cond_index[start:start + batch])
            lab = None if label_index_ is None else torch.as_tensor(label_index_[start:start + batch])
            z = torch.randn(len(idx), self.config.noise_dim, generator=gen)
            raw = self.generator(z.to(device), conditioning(idx, lab, self.schema).to(device)).cpu()
            for j, (c, a, (s, e)) in enumerate(zip(schema.numeric, alphas, mode_blocks)):
                values[j].append(decode_numeric(torch.tanh(raw[:, a]).numpy(), gumbel_max(raw[:, s:e], gen), c))
            for j, (s, e) in enumerate(blocks):
                logits[j].append(raw[:, s:e].numpy())
        numeric = (np.stack([np.concatenate(v) for v in values], axis=1) if values else np.zeros((n, 0)))
        return numeric, [np.concatenate(x) for x in logits]

    @torch.no_grad()
    def _generate(self, cond_index: np.ndarray, label_index_: np.ndarray | None, seed: int,
                  batch: int, should_stop: Callable[[], bool] | None = None) -> pd.DataFrame:
        gen = torch.Generator().manual_seed(int(seed))
        schema = self.schema
        numeric, logits = self._raw(cond_index, label_index_, gen, batch, should_stop)
        cal, cell = self.calibration, self.cells(cond_index, label_index_)
        rng = np.random.default_rng(int(seed))
        data: dict[str, Any] = {}
        cond_names = np.asarray(schema.conditions, dtype=object)[cond_index]
        split = np.array([c.split(SEP) for c in schema.conditions], dtype=object)
        for j, col in enumerate(schema.condition_columns):
            data[col] = split[cond_index, j] if len(schema.condition_columns) > 1 else cond_names
        for j, c in enumerate(schema.numeric):
            v = numeric[:, j] if cal is None else cal.numeric_values(j, numeric[:, j], cell, rng)
            v = np.clip(v, c["min"], c["max"])
            data[c["name"]] = np.round(v).astype(np.int64) if c["integer"] else v
        for j, c in enumerate(schema.categorical):
            bias = None if cal is None else cal.logit_bias(j, cell)
            x = torch.as_tensor(logits[j] if bias is None else logits[j] + bias)
            data[c["name"]] = np.asarray(c["categories"], dtype=object)[gumbel_max(x, gen)]
        if schema.label_condition:
            data[schema.diversity_column] = np.asarray(schema.label_categories, dtype=object)[label_index_]
        frame = pd.DataFrame(data)
        return frame[[c for c in schema.column_order if c in frame]] if schema.column_order else frame

    @torch.no_grad()
    def calibrate(self, data: pd.DataFrame, seed: int = 0, should_stop: Callable[[], bool] | None = None) -> None:
        """Fit the per-cell marginal calibration (:mod:`models.hydragan_calibration`) on the training rows
        ``data``; sampling uses it from then on."""
        schema = self.schema
        cond = pd.Index(schema.conditions).get_indexer(condition_labels(data, schema.condition_columns))
        lab = label_index(data, schema) if schema.label_condition else None
        real_cell = self.cells(cond, lab)
        n_cells = len(schema.conditions) * (len(schema.label_categories) if schema.label_condition else 1)
        per = calibration.reference_rows(n_cells)
        ref = np.repeat(np.arange(n_cells), per)
        m = len(schema.label_categories) if schema.label_condition else 1
        ref_cond, ref_lab = (ref // m, ref % m) if schema.label_condition else (ref, None)
        gen = torch.Generator().manual_seed(int(seed) + 7919)
        numeric, logits = self._raw(ref_cond, ref_lab, gen, 8192, should_stop)
        real_numeric = (np.stack([data[c["name"]].to_numpy(dtype=float) for c in schema.numeric], axis=1)
                        if schema.numeric else np.zeros((len(data), 0)))
        codes = [pd.Index(c["categories"]).get_indexer(data[c["name"]].astype(str)) for c in schema.categorical]
        pool = lab if lab is not None else np.zeros(len(data), dtype=int)  # a small cell's fallback: its label
        keep = [c["name"] != schema.diversity_column for c in schema.categorical]
        self.calibration = calibration.fit(real_numeric, codes, real_cell, pool, np.arange(n_cells) % m, numeric,
                                           logits, self.cells(ref_cond, ref_lab), n_cells, keep)

    def save(self, path: str | Path) -> None:
        """State dicts and JSON text only (loadable with ``weights_only=True``)."""
        torch.save({"generator": self.generator.state_dict(),
                    "critic": None if self.critic is None else self.critic.state_dict(),
                    "config": self.config.to_json(), "schema": self.schema.to_json(),
                    "steps_done": self.steps_done,
                    "calibration": None if self.calibration is None else self.calibration.to_json()}, path)

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
        cal = blob.get("calibration")
        return cls(config, schema, gen, critic, int(blob.get("steps_done", 0)),
                   None if cal is None else calibration.Calibration.from_json(cal))


def condition_label_shares(frame: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """Share of each diversity-column category within each condition (rows: conditions)."""
    cond = condition_labels(frame, schema.condition_columns)
    cats = schema.categories(schema.diversity_column)
    table = pd.crosstab(cond, frame[schema.diversity_column].astype(str), normalize="index")
    return table.reindex(index=schema.conditions, columns=cats, fill_value=0.0)


def device_for(choice: str = "auto") -> torch.device:
    """"auto": the GPU when PyTorch sees one, else the CPU; or a device name ("cpu", "cuda:0")."""
    if choice == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(choice)


def train(config: HydraConfig, data: pd.DataFrame, on_progress: ProgressCallback | None = None,
          should_stop: Callable[[], bool] | None = None) -> HydraGAN:
    """Train Conditional HydraGAN on ``data``; returns the model (also when stopped early).

    ``on_progress`` receives one :class:`GanStep` after every generator step (its losses per objective;
    without label conditioning, every ``quality_every`` steps the diversity gap too) and a
    :class:`~fairness_core.progress.Stage` while the output is calibrated. ``should_stop`` is checked
    before every step and while the columns are learned and encoded (then True raises :class:`Cancelled`).
    A run that finishes its steps is calibrated (``config.calibrate``); one stopped early is not.
    """
    schema = fit_schema(data, config, should_stop=should_stop)
    target = torch.as_tensor(diversity_target(schema, config.diversity_target), dtype=torch.float32)
    x_np, c_np = encode(data, schema, config.seed, should_stop)
    l_np = label_index(data, schema) if schema.label_condition else np.zeros(len(data), dtype=int)
    device = device_for(config.device)
    target = target.to(device)
    torch.manual_seed(config.seed)
    gen_rng = torch.Generator(device=device).manual_seed(config.seed)
    np_rng = np.random.default_rng(config.seed)
    n_cond = len(schema.conditions)
    G = Generator(config.noise_dim, schema.condition_dim, schema.data_dim, config.hidden).to(device)
    D = Critic(schema.data_dim, schema.condition_dim, config.hidden, config.pac).to(device)
    opt_g = torch.optim.Adam(G.parameters(), lr=config.lr, betas=(0.5, 0.9))
    opt_d = torch.optim.Adam(D.parameters(), lr=config.lr, betas=(0.5, 0.9))
    x_all, c_all, l_all = (torch.as_tensor(a, device=device) for a in (x_np, c_np, l_np))
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
            idx = torch.as_tensor(np_rng.choice(len(x_np), size=batch, p=weights), device=device)
            real = x_all[idx]
            _, c1 = cvec(idx)
            with torch.no_grad():
                z = torch.randn(batch, config.noise_dim, generator=gen_rng, device=device)
                fake, _ = activate(G(z, c1), schema, 0.2, gen_rng)
            d_real, d_fake = D(real, c1).mean(), D(fake, c1).mean()
            gp = gradient_penalty(D, real, fake, c1, config.gp_weight, gen_rng)
            loss_d = d_fake - d_real + gp
            opt_d.zero_grad(set_to_none=True)
            loss_d.backward()
            opt_d.step()
        idx = torch.as_tensor(np_rng.choice(len(x_np), size=batch, p=weights), device=device)
        cidx, c1 = cvec(idx)
        z = torch.randn(batch, config.noise_dim, generator=gen_rng, device=device)
        fake, probs = activate(G(z, c1), schema, 0.2, gen_rng)
        adv = -D(fake, c1).mean()
        div = (diversity_loss(probs[dpos], cidx, n_cond, target) if dpos is not None
               else torch.zeros((), dtype=adv.dtype))
        loss_g = adv + config.diversity_weight * div if dpos is not None else adv
        opt_g.zero_grad(set_to_none=True)
        loss_g.backward()
        opt_g.step()
        if on_progress is not None:
            quality = None
            if dpos is not None and config.quality_every and step % config.quality_every == 0:
                model = HydraGAN(config, schema, G, D, step)
                shares = condition_label_shares(model.sample(1000 * n_cond, seed=step), schema)
                quality = float(np.abs(shares.to_numpy() - target.cpu().numpy()[None, :]).mean())
                G.train()
            on_progress(GanStep(done=step, total=config.steps, message=f"step {step} of {config.steps}", step=step,
                                critic=(d_fake - d_real).item(), gp=gp.item(), generator=adv.item(),
                                diversity=div.item(), steps_per_s=step / max(time.perf_counter() - started, 1e-9),
                                quality=quality))
    G.eval()
    model = HydraGAN(config, schema, G.cpu(), D.cpu(), step)  # sampling, calibration and checkpoints on the CPU
    if config.calibrate and step == config.steps:
        if on_progress is not None:
            on_progress(Stage(done=step, total=config.steps, message="calibrating each group's columns",
                              phase="calibrate"))
        model.calibrate(data, config.seed, should_stop)
    return model


@dataclass(frozen=True)
class TrainingSummary:
    """What a live panel shows of a run: the last step, its pace, the Wasserstein estimate (mean of the
    last ``window`` steps) and the latest diversity gap (None: not measured, e.g. label-conditioned)."""

    step: int
    steps_per_s: float
    wasserstein: float
    quality: float | None


def training_summary(records: list[Progress], window: int = 50) -> TrainingSummary | None:
    """The :class:`TrainingSummary` of a run's records (its :class:`GanStep` records; None before the first)."""
    steps = of_kind(records, GanStep)
    if not steps:
        return None
    quality = [r.quality for r in steps if r.quality is not None]
    return TrainingSummary(steps[-1].step, steps[-1].steps_per_s,
                           float(np.mean([r.wasserstein for r in steps[-window:]])), quality[-1] if quality else None)
