"""Conditional HydraGAN's data side: the run's config, how a frame's columns map to tensors, and the checks.

- :class:`HydraConfig`: everything that defines a training run (JSON).
- :class:`Schema` and :func:`fit_schema`: column roles learned from the training frame. Numeric columns
  are *mode-specific normalized* (Xu et al. 2019, "Modeling Tabular Data using Conditional GAN"): point
  masses plus a variational Gaussian mixture; categorical columns are one-hot.
- :func:`encode` / :func:`decode_numeric`: rows to the network's tensors and back.
- :func:`check_conditions` and :func:`shares_from_table`: input checks a page needs before it trains,
  raising :class:`~fairness_core.io.DataValidationError` that names the row and column.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd

from fairness_core.io import DataValidationError, Problem

from .jobs_interface import Cancelled

SEP = " & "  # joint condition names, as the Upload page names intersections
MAX_CONDITIONS = 64
MAX_CATEGORIES = 100


@dataclass
class HydraConfig:
    """Everything that defines a training run (JSON-serializable)."""

    condition_columns: list[str]
    diversity_column: str
    diversity_target: dict[str, float] | None = None  # None: uniform over the column's categories
    steps: int = 2000  # with calibration, COMPAS tuning split: 1500 steps 0.618, 2500 0.572; 2500 took the page to 119 s on Adult
    batch_size: int = 256
    noise_dim: int = 32
    hidden: int = 256  # 128 → 256 lowered the C2ST AUC on COMPAS from ~0.675 to ~0.645 (two seeds)
    n_critic: int = 3
    pac: int = 1  # rows the critic judges together (PacGAN, CTGAN uses 10; on COMPAS 8 did not lower the C2ST AUC)
    lr: float = 5e-4  # 2e-4 → 5e-4 at 2500 steps: tuning split COMPAS 0.572 → 0.560, Adult 0.673 → 0.655
    gp_weight: float = 10.0
    diversity_weight: float = 10.0  # the diversity objective's weight (without label_condition)
    label_condition: bool = True  # condition on the diversity column too: its target met exactly in every group
    balance: float = 0.5  # training batches: P(row) ∝ n_condition^−balance (0 = as in the data)
    seed: int = 0
    quality_every: int = 100  # steps between quality reports (0: never)
    calibrate: bool = True  # fit per-cell marginal maps after training (models.hydragan_calibration)
    #: Where the networks train: "auto" (a GPU when PyTorch sees one, else the CPU), "cpu" or "cuda[:k]". The
    #: trained networks come back to the CPU, where sampling and calibration run.
    device: str = "auto"

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
        if self.device not in ("auto", "cpu") and not str(self.device).startswith("cuda"):
            raise ValueError(f"device must be 'auto', 'cpu' or 'cuda[:k]', got {self.device!r}")

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
    """Learn column roles and scalings from ``df``; :class:`DataValidationError` naming a bad column or row.
    ``modes=False`` checks the frame without fitting the numeric columns' mixtures (fast).
    ``should_stop`` is looked at before each column (True raises :class:`Cancelled`)."""
    config.validate()
    if len(df) < 20:
        raise DataValidationError(f"{len(df)} rows are too few to train a GAN")
    for col in [*config.condition_columns, config.diversity_column]:
        if col not in df.columns:
            raise DataValidationError(f"no column {col!r}; columns are {', '.join(map(repr, df.columns))}")
    if config.diversity_column in config.condition_columns:
        raise DataValidationError("the diversity column cannot also be a protected attribute of the condition")
    for col in df.columns:
        missing = df[col].isna().to_numpy()
        if missing.any():
            raise DataValidationError(f"row {int(np.flatnonzero(missing)[0]) + 1}, column {col!r}: missing value")
    cond = condition_labels(df, config.condition_columns)
    counts = cond.value_counts()
    if len(counts) > MAX_CONDITIONS:
        raise DataValidationError(f"{len(counts)} condition levels from {', '.join(config.condition_columns)}; "
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
                raise DataValidationError(f"column {col!r} has {len(cats)} distinct values (limit {MAX_CATEGORIES}); "
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
        raise DataValidationError(f"row {r + 1}: condition {cond.iloc[r]!r} was not in the training data")
    return x.astype(np.float32), index


def label_index(df: pd.DataFrame, schema: Schema) -> np.ndarray:
    """Each row's diversity-column category index (for a label-conditioned schema)."""
    values = df[schema.diversity_column].astype(str)
    index = pd.Index(schema.label_categories).get_indexer(values)
    if (index < 0).any():
        r = int(np.flatnonzero(index < 0)[0])
        raise DataValidationError(f"row {r + 1}: {schema.diversity_column} {values.iloc[r]!r} was not in the training data")
    return index


def check_conditions(df: pd.DataFrame, columns: list[str]) -> pd.Series:
    """Rows per joint condition of ``columns`` (sorted by name); :class:`DataValidationError` when no
    column is chosen, a column is missing, or the levels exceed :data:`MAX_CONDITIONS`."""
    if not columns:
        raise DataValidationError("choose at least one protected attribute for the condition")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise DataValidationError(Problem("no such column", column=str(missing[0])))
    counts = condition_labels(df, list(columns)).value_counts().sort_index()
    if len(counts) > MAX_CONDITIONS:
        raise DataValidationError(f"{len(counts)} condition levels from {' × '.join(map(str, columns))}; the limit is "
                                  f"{MAX_CONDITIONS}: pick fewer attributes")
    return counts


def shares_from_table(table: pd.DataFrame, name_column: str, share_column: str, what: str) -> dict[str, float]:
    """``{name: share}`` from an edited table of target shares, normalized to sum to 1.

    :class:`DataValidationError` naming the first bad row (1-based, with its name) and the column when
    a share is not a number or is negative, and when every share is 0."""
    shares = pd.to_numeric(table[share_column], errors="coerce")
    bad = (shares.isna() | (shares < 0) | ~np.isfinite(shares.fillna(0))).to_numpy()
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise DataValidationError(f"{what}, row {r + 1} ({table[name_column].iloc[r]}), column {share_column!r}: "
                                  "the target share must be a number >= 0")
    if shares.sum() <= 0:
        raise DataValidationError(f"{what}, column {share_column!r}: at least one target share must be > 0")
    return dict(zip(table[name_column].astype(str), (shares / shares.sum()).tolist()))
