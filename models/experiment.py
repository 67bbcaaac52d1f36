"""The Synthetic Data page's experiment: train Conditional HydraGAN on real training rows, sample
synthetic rows at the chosen quotas, and audit a classifier trained with and without them.

As in Briscoe 2024, §3.5.4: an MLP classifier, tested on held-out **real** rows, once trained on the
real training rows and once on real + synthetic (or synthetic only), for several seeds; OFI,
DI, DCA and DPPL per group against the rest (Table 3.4) and the distances of the real and
synthetic group and label distributions to the targets (Table 3.5).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable

import numpy as np
import pandas as pd
import torch
from torch import nn

from fairness_core import realism
from fairness_core.statistics import augmentation
from fairness_core.statistics.design import make_design
from . import hydragan as H
from .jobs_interface import Cancelled, Estimate, Progress, ProgressCallback

#: How the "after" classifier is trained: on synthetic rows only (the thesis's setting, the default)
#: or on the real training rows plus the synthetic ones.
MODES = ("synthetic only", "real + synthetic")
#: Realism references and the synthetic rows, in the order the realism table lists them.
REALISM_ROWS = ("synthetic (HydraGAN)", "real (another sample)", "independent columns")
FIT_UNITS = 100  # progress units per classifier fit, beside one unit per GAN step


@dataclass(frozen=True)
class Evaluation(Progress):
    """A step of the evaluation after training: ``fit`` names what is being fitted ("classifier on real
    data", "classifier on augmented data", "two-sample tests of realism"); ``seed`` the classifier seed."""

    fit: str = ""
    seed: int | None = None


@dataclass
class ExperimentConfig:
    """A HydraGAN config plus how to sample and evaluate (JSON-serializable)."""

    gan: H.HydraConfig
    label: str
    quota: dict[str, float] | None = None  # condition shares; None = uniform
    n_synthetic: int | None = None  # None: as many as real training rows
    mode: str = MODES[0]
    eval_seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    epochs: int = 8
    hidden: int = 64
    test_size: float = 0.3
    classifier_sees_protected: bool = True
    threads: int | None = None  # torch intra-op threads for this run (1 avoids oversubscription in a server)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ExperimentResult:
    model: H.HydraGAN
    synthetic: pd.DataFrame
    condition_shares: pd.DataFrame
    condition_distances: pd.DataFrame
    label_shares: pd.DataFrame  # pooled
    label_distances: pd.DataFrame  # mean over groups of each group's distance to the target
    label_group_shares: pd.DataFrame  # per group, the share of the last category
    runs: pd.DataFrame  # seed, data, group, n, OFI, DI, DCA, DPPL
    summary: pd.DataFrame
    train_rows: int
    test_rows: int
    mode: str = MODES[0]
    #: Classifier two-sample tests against the held-out real rows: AUC, interval, n per side
    realism: pd.DataFrame = field(default_factory=pd.DataFrame)
    marginals: pd.DataFrame = field(default_factory=pd.DataFrame)  # per column, synthetic vs held-out real
    correlations: pd.DataFrame = field(default_factory=pd.DataFrame)  # max/mean |Δ correlation| per row of realism


#: Memory model of :func:`run`, calibrated with ``bench/job_memory.py`` (UCI Adult resampled, 12 columns,
#: 20,000 / 100,000 / 400,000 rows: 178 / 318 / 852 MiB above the server's own): a fixed part (PyTorch's
#: and scikit-learn's working memory) and bytes per cell of the data, which the encodings, the
#: classifiers' design matrices and the two-sample tests hold several copies of.
BASE_MB, BYTES_PER_CELL = 160.0, 160.0
#: Floats the networks hold per parameter (weights, gradients, Adam's two moments) and per batch row and
#: hidden unit (both networks' activations, the gradient penalty's second backward pass).
FLOATS_PER_PARAMETER, FLOATS_PER_ACTIVATION = 4, 16


def memory_mb(config: ExperimentConfig, rows: int, columns: int) -> float:
    """Peak memory (MB) that :func:`run` adds on ``rows`` × ``columns`` of data, from the settings alone."""
    gan = config.gan
    n_syn = config.n_synthetic or int((1 - config.test_size) * rows)
    cells = (rows + max(0, n_syn - int((1 - config.test_size) * rows))) * columns
    width = 11 * columns  # encoded row: a numeric column takes up to 1 + MAX_MODES, a category one per level
    h = gan.hidden
    parameters = (gan.noise_dim + width + 2 * h + width) * h + (gan.pac * 2 * width + h + 1) * h
    activations = gan.batch_size * gan.pac * (h + width) * FLOATS_PER_ACTIVATION
    # the calibration's reference rows: at most 200,000 generated rows, their values and logits in float64
    reference = (200_000 * width * 8) if gan.calibrate else 0
    return BASE_MB + (cells * BYTES_PER_CELL + 4 * (parameters * FLOATS_PER_PARAMETER + activations)
                      + reference) / 2**20


def estimate(config: ExperimentConfig, data: pd.DataFrame) -> Estimate:
    """What :func:`run` on ``data`` will cost, for the job runner to admit or refuse it."""
    return Estimate(memory_mb(config, len(data), data.shape[1]),
                    what=f"a HydraGAN run on {len(data):,} rows × {data.shape[1]} columns")


def split(data: pd.DataFrame, columns: list[str], test_size: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded train/test indices, stratified by condition so small groups appear in both."""
    cond = H.condition_labels(data, columns).to_numpy()
    rng = np.random.default_rng(seed)
    train, test = [], []
    for c in np.unique(cond):
        idx = rng.permutation(np.flatnonzero(cond == c))
        k = int(round(test_size * len(idx))) if len(idx) > 1 else 0
        test.append(idx[:k])
        train.append(idx[k:])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(test))


def mlp_predict(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, seed: int, epochs: int = 8,
                hidden: int = 64, should_stop: Callable[[], bool] | None = None) -> np.ndarray:
    """Fit a two-layer MLP classifier (Adam, binary cross-entropy); 0/1 predictions for ``x_test``."""
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    net = nn.Sequential(nn.Linear(x_train.shape[1], hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                        nn.Linear(hidden, 1))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    x, y = torch.as_tensor(x_train, dtype=torch.float32), torch.as_tensor(y_train, dtype=torch.float32)
    loss_fn = nn.BCEWithLogitsLoss()
    for _ in range(epochs):
        order = torch.randperm(len(x), generator=gen)
        for start in range(0, len(x), 256):
            if should_stop is not None and should_stop():  # per batch: an epoch of millions of rows takes minutes
                raise Cancelled("stopped during the classifier fits")
            idx = order[start:start + 256]
            opt.zero_grad(set_to_none=True)
            loss_fn(net(x[idx]).squeeze(1), y[idx]).backward()
            opt.step()
    with torch.no_grad():
        return (net(torch.as_tensor(x_test, dtype=torch.float32)).squeeze(1) > 0).numpy().astype(int)


def _as_binary(values: pd.Series, label: str) -> np.ndarray:
    v = pd.to_numeric(values.astype(str), errors="coerce").to_numpy()
    if np.isnan(v).any() or not set(np.unique(v)) <= {0, 1}:
        raise ValueError(f"the label column {label!r} must hold 0/1 (1 = the beneficial outcome)")
    return v.astype(int)


def run(config: ExperimentConfig, data: pd.DataFrame, on_progress: ProgressCallback | None = None,
        should_stop: Callable[[], bool] | None = None) -> ExperimentResult:
    """Train, sample and evaluate. ``on_progress`` receives the GAN's records
    (:class:`~models.hydragan.GanStep` and its calibration :class:`~fairness_core.progress.Stage`) with the
    whole run's ``total``, then one :class:`Evaluation` per classifier fit and one before the two-sample tests."""
    gan = config.gan
    if config.label not in data.columns:
        raise ValueError(f"no label column {config.label!r}")
    if config.mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {config.mode!r}")
    if not config.eval_seeds:
        raise ValueError("give at least one evaluation seed")
    if config.threads is not None:
        torch.set_num_threads(config.threads)
    data = data.reset_index(drop=True)
    H.fit_schema(data, gan, modes=False)  # every column and value checked before anything is split or trained
    _as_binary(data[config.label], config.label)
    train_idx, test_idx = split(data, gan.condition_columns, config.test_size, gan.seed)
    train_df, test_df = data.iloc[train_idx].reset_index(drop=True), data.iloc[test_idx].reset_index(drop=True)
    fits = 2 * len(config.eval_seeds)
    total = gan.steps + FIT_UNITS * fits

    def gan_progress(record: Progress) -> None:
        if on_progress is not None:
            on_progress(replace(record, total=total))

    def check(what: str) -> None:
        if should_stop is not None and should_stop():
            raise Cancelled(f"stopped {what}")

    model = H.train(gan, train_df, gan_progress, should_stop)
    if model.steps_done < gan.steps:
        raise Cancelled(f"stopped after {model.steps_done} of {gan.steps} GAN steps")
    n_syn = int(config.n_synthetic or len(train_df))
    synthetic = model.sample(n_syn, config.quota, seed=gan.seed + 1, should_stop=should_stop)
    check("after sampling")

    conds = model.schema.conditions
    quota = dict(zip(conds, model.quota_shares(config.quota)))
    real_cond = H.condition_labels(train_df, gan.condition_columns)
    syn_cond = H.condition_labels(synthetic, gan.condition_columns)
    target = dict(zip(model.schema.categories(gan.diversity_column),
                      H.diversity_target(model.schema, gan.diversity_target)))
    real_label, syn_label = train_df[gan.diversity_column].astype(str), synthetic[gan.diversity_column].astype(str)

    # Evaluate: one design (encoding) learned on the real training rows.
    feature_cols = [c for c in data.columns if c != config.label
                    and (config.classifier_sees_protected or c not in gan.condition_columns)]
    design = make_design(train_df[feature_cols])
    check("before encoding the classifiers' rows")
    x_real, x_test = design.transform(train_df[feature_cols]), design.transform(test_df[feature_cols])
    check("while encoding the classifiers' rows")
    x_syn = design.transform(synthetic[feature_cols])
    y_real, y_test = _as_binary(train_df[config.label], config.label), test_df[config.label].to_numpy(dtype=int)
    y_syn = _as_binary(synthetic[config.label], config.label)
    if config.mode == "real + synthetic":
        x_aug, y_aug = np.vstack([x_real, x_syn]), np.concatenate([y_real, y_syn])
    else:
        x_aug, y_aug = x_syn, y_syn
    groups = H.condition_labels(test_df, gan.condition_columns).to_numpy()
    runs, done = [], gan.steps
    for seed in config.eval_seeds:
        for name, x, y in (("real", x_real, y_real), ("augmented", x_aug, y_aug)):
            pred = mlp_predict(x, y, x_test, seed, config.epochs, config.hidden, should_stop)
            table = augmentation.bias_by_group(y_test, pred, groups).reset_index(names="group")
            table.insert(0, "data", name)
            table.insert(0, "seed", seed)
            table["accuracy"] = float(np.mean(pred == y_test))
            runs.append(table)
            done += FIT_UNITS
            if on_progress is not None:
                on_progress(Evaluation(done=done, total=total, message=f"classifier on {name} data, seed {seed}",
                                       fit=f"classifier on {name} data", seed=seed))
    runs_df = pd.concat(runs, ignore_index=True)
    if on_progress is not None:
        on_progress(Evaluation(done=done, total=total, message="two-sample tests of realism",
                               fit="two-sample tests of realism"))
    real_table, marginals, correlations = assess_realism(model, train_df, test_df, gan.seed, should_stop)
    return ExperimentResult(
        model=model, synthetic=synthetic,
        condition_shares=augmentation.share_table(real_cond, syn_cond, quota),
        condition_distances=augmentation.distance_table(real_cond, syn_cond, quota),
        label_shares=augmentation.share_table(real_label, syn_label, target),
        label_distances=augmentation.per_group_distance_table(real_label, real_cond, syn_label, syn_cond, target),
        label_group_shares=augmentation.group_share_table(real_label, real_cond, syn_label, syn_cond,
                                                          list(target)[-1], list(target.values())[-1]),
        runs=runs_df, summary=augmentation.summarize(runs_df), train_rows=len(train_df), test_rows=len(test_df),
        mode=config.mode, realism=real_table, marginals=marginals, correlations=correlations)


def cells(df: pd.DataFrame, condition_columns: list[str], label: str) -> pd.Series:
    """Each row's group × label cell, e.g. "Black & Female" + "\x1f" + "1" (the realism strata)."""
    return H.condition_labels(df, condition_columns) + "\x1f" + df[label].astype(str)


def matched_from_pool(pool: pd.DataFrame, test_df: pd.DataFrame, condition_columns: list[str], label: str,
                      seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(generated rows at the test rows' count per cell, the test rows of the cells the pool has):
    for generators sampled in bulk, whose output is then matched cell by cell."""
    counts = cells(test_df, condition_columns, label).value_counts()
    counts = counts[counts.index.isin(set(cells(pool, condition_columns, label)))]
    matched = realism.matched_sample(pool, cells(pool, condition_columns, label), counts, seed)
    kept = test_df[cells(test_df, condition_columns, label).isin(set(counts.index)).to_numpy()]
    return matched[list(test_df.columns)], kept.reset_index(drop=True)


def assess_realism(model: H.HydraGAN, train_df: pd.DataFrame, test_df: pd.DataFrame, seed: int = 0,
                   should_stop: Callable[[], bool] | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Can a classifier tell synthetic rows from held-out real ones?

    Every set compared with the held-out real rows has their exact mix of groups × diversity
    categories, so the test sees realism alone (not the quotas or targets that were asked for):
    synthetic rows generated cell by cell, another sample of real (training) rows — the floor a
    perfect generator would reach — and rows whose columns are drawn independently within each
    cell — what a generator that learned only per-group marginals would reach. Cells with no
    training rows (or, for a model without label conditioning, no generated rows) are left out
    of every set. ``should_stop`` is looked at while sampling and fitting (True raises :class:`Cancelled`)."""
    schema = model.schema
    groups, label = schema.condition_columns, schema.diversity_column
    train_strata = cells(train_df, groups, label)
    test_df = test_df[cells(test_df, groups, label).isin(set(train_strata)).to_numpy()].reset_index(drop=True)
    if schema.label_condition:
        table = pd.crosstab(H.condition_labels(test_df, groups), test_df[label].astype(str)).reindex(
            index=schema.conditions, columns=schema.label_categories, fill_value=0)
        synthetic = model.sample_cells(table.to_numpy(), seed=seed + 2, should_stop=should_stop)
    else:  # draw more rows than needed at the test rows' group mix and keep each cell's count
        quota = H.condition_labels(test_df, groups).value_counts(normalize=True).to_dict()
        synthetic, test_df = matched_from_pool(model.sample(4 * len(test_df), quota, seed=seed + 2,
                                                            should_stop=should_stop), test_df, groups, label, seed)
    counts = cells(test_df, groups, label).value_counts().sort_index()
    columns = list(test_df.columns)
    sets = {REALISM_ROWS[0]: synthetic[columns],
            REALISM_ROWS[1]: realism.matched_sample(train_df, train_strata, counts, seed)[columns],
            REALISM_ROWS[2]: realism.independent_columns(train_df, train_strata, counts, seed)[columns]}
    rows, corr = [], []
    for name, frame in sets.items():
        result = realism.c2st(test_df, frame, seed=seed, should_stop=should_stop)
        rows.append({"rows": name, "AUC": result.auc, "95% low": result.low, "95% high": result.high,
                     "n per side": result.n_real, "reading": result.reading()})
        corr.append({"rows": name, **realism.correlation_distance(test_df, frame)})
    return (pd.DataFrame(rows).set_index("rows"), realism.marginal_distances(test_df, synthetic[columns]),
            pd.DataFrame(corr).set_index("rows"))
