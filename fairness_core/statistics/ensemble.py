"""A seeded bootstrap ensemble of small logistic regressions, for Virny's stability metrics.

Virny measures stability on unseen rows with m models, each trained on a bootstrap sample
of the training data. :func:`bootstrap_ensemble` does that with NumPy: seeded folds,
``n_models`` bootstrap samples (with replacement) of ``fraction`` × the training rows,
an L2-regularized logistic regression fitted by Newton's
method (IRLS) on each, cross-fitted so every row is predicted by models that never saw it. The features are
encoded by :func:`fairness_core.statistics.design.make_design`.

>>> import numpy as np, pandas as pd
>>> rng = np.random.default_rng(0)
>>> x = pd.DataFrame({"a": rng.normal(size=400), "c": rng.choice(["u", "v"], 400)})
>>> y = (x["a"] + rng.normal(size=400) > 0).to_numpy()
>>> fit = bootstrap_ensemble(x, y, n_models=5, seed=1)
>>> fit.probabilities.shape
(400, 5)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.special import expit

from ..common.progress import Cancelled, Estimate, Progress, ProgressCallback, ignore
from .design import MAX_LEVELS, make_design


def fit_logistic(x: np.ndarray, y: npt.ArrayLike, l2: float = 1.0, max_iter: int = 50,
                 tol: float = 1e-8, should_stop: Callable[[], bool] | None = None) -> np.ndarray:
    """Weights of an L2-penalized logistic regression by Newton's method (IRLS).

    Minimizes Σ log(1 + e^{x·w}) − y x·w + (l2/2)|w[1:]|² (the intercept, column 0, is not
    penalized). The penalty keeps separable data finite. ``should_stop`` is polled before each
    Newton step (one pass over the rows); True raises :class:`Cancelled`.
    """
    y = np.asarray(y, dtype=float)
    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], float(l2))
    penalty[0] = 1e-8
    for _ in range(max_iter):
        if should_stop is not None and should_stop():
            raise Cancelled("stopped while fitting a logistic regression")
        p = expit(x @ w)
        grad = x.T @ (p - y) + penalty * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < tol:
            break
    return w


@dataclass(frozen=True)
class EnsembleFit:
    """Every row's probabilities from ``n_models`` models that never saw it (cross-fitted)."""

    probabilities: np.ndarray  # (n, n_models)
    folds: np.ndarray  # each row's fold, 0 .. k − 1
    accuracy: float  # of the ensemble's mean probability at 0.5, out of fold
    feature_names: list[str]


def estimate(features: pd.DataFrame, n_models: int = 20, folds: int = 5) -> Estimate:
    """What :func:`bootstrap_ensemble` on ``features`` will cost, for the job runner to admit or refuse it.

    The peak holds a fold's design matrices (training rows, their bootstrap copy, the Newton step's weighted
    copy, the test rows: about 7 × n × (p + 1) doubles for p design columns) and the n × ``n_models``
    probabilities. Calibrated on measured peaks (200,000 and 400,000 rows × 10 columns, 2 and 20 models:
    116, 232 and 144 MiB; the formula gives 146, 273 and 175 MB). A light job: it does not count against a
    session's one training run, but its memory counts against the server's budget like any other."""
    n = len(features)
    columns = 1
    for col in features.columns:
        s = features[col]
        numeric = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
        columns += 1 if numeric else min(int(s.nunique()), MAX_LEVELS)
    memory_mb = 20 + 7 * n * columns * 8 / 1e6 + n * n_models * 8 / 1e6
    return Estimate(memory_mb, heavy=False, what=f"a bootstrap ensemble of {folds} × {n_models} models on {n:,} rows")


def check_settings(features: pd.DataFrame, y: npt.ArrayLike, n_models: int = 20, fraction: float = 0.8,
                   folds: int = 5) -> None:
    """Raise ValueError, naming the setting, when :func:`bootstrap_ensemble` cannot train with these (checked
    before a background job starts, so that the page says why at once)."""
    n = len(np.asarray(y))
    if len(features) != n:
        raise ValueError(f"{len(features)} feature rows but {n} labels")
    if not 2 <= n_models <= 500:
        raise ValueError(f"n_models must be between 2 and 500, got {n_models}")
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must lie in (0, 1], got {fraction}")
    if not 2 <= folds <= 20:
        raise ValueError(f"folds must be between 2 and 20, got {folds}")
    if n < 5 * folds:
        raise ValueError(f"{n} rows are too few for {folds}-fold cross-fitting")


def bootstrap_ensemble(features: pd.DataFrame, y: npt.ArrayLike, n_models: int = 20, fraction: float = 0.8,
                       folds: int = 5, seed: int = 0, l2: float = 1.0,
                       on_progress: ProgressCallback | None = None,
                       should_stop: Callable[[], bool] | None = None) -> EnsembleFit:
    """Train bootstrap logistic regressions and predict every row out of fold.

    Virny measures stability on unseen rows. So that every individual of the audit gets
    unseen-data probabilities (and the groups keep their sizes), the rows are split into
    ``folds`` seeded folds; for each fold, ``n_models`` models are trained on bootstrap
    samples of the other folds and predict that fold. Row i's m probabilities thus come
    from m models trained without row i.

    Parameters
    ----------
    features : DataFrame
        Numeric and categorical feature columns, one row per individual.
    y : array of 0/1
        The label to predict (positive = beneficial).
    n_models, fraction : int, float
        m models per fold, each on ``fraction`` × the training rows drawn with replacement
        (Virny's bootstrap).
    folds : int
        Cross-fitting folds (>= 2).
    on_progress : callable(Progress), optional
        Called after each model with ``done`` of ``total`` = folds × n_models.
    should_stop : callable() -> bool, optional
        Polled before each model and each of its Newton steps; True raises :class:`Cancelled`.
    """
    y = np.asarray(y, dtype=float)
    n = len(y)
    check_settings(features, y, n_models, fraction, folds)
    report = on_progress or ignore
    rng = np.random.default_rng(seed)
    fold = rng.permutation(np.arange(n) % folds)
    features = features.reset_index(drop=True)
    # One row per model: a model's out-of-fold scores are written into one contiguous row (written as a
    # column of an (n, n_models) array, every score touched its own memory page: 1.7 s a model at 200,000 rows).
    probs = np.empty((n_models, n))
    total, done = folds * n_models, 0
    names: list[str] = []
    for k in range(folds):
        train, test = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
        design = make_design(features.iloc[train])
        names = design.names
        x_train, x_test = design.transform(features.iloc[train]), design.transform(features.iloc[test])
        y_train = y[train]
        size = max(2, int(round(fraction * len(train))))
        for j in range(n_models):
            if should_stop is not None and should_stop():
                raise Cancelled(f"stopped after {done} of {total} models")
            boot = rng.integers(0, len(train), size=size)
            w = fit_logistic(x_train[boot], y_train[boot], l2, should_stop=should_stop)
            probs[j, test] = expit(x_test @ w)
            done += 1
            report(Progress(done=done, total=total, message=f"model {done} of {total}"))
    accuracy = float(np.mean((probs.mean(axis=0) >= 0.5) == (y == 1)))
    return EnsembleFit(probs.T, fold, accuracy, names)
