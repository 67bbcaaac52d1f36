"""How hard synthetic rows are to tell from real ones.

- :func:`c2st`: the classifier two-sample test (Lopez-Paz and Oquab 2017). A gradient-boosted
  classifier learns to tell the two sets apart; its cross-validated ROC AUC is the score
  (0.5: indistinguishable; 1: always told apart), with a Hanley–McNeil 95 % interval. Both sets
  are given at the same size, so the AUC is not moved by a class imbalance.
- :func:`marginal_distances`: per column, the Kolmogorov–Smirnov statistic (numeric) or the
  total variation distance (categorical), with the moments and the largest point mass of
  each side (a count column's spike at zero, for instance).
- :func:`correlation_distance`: the largest and mean absolute difference between the two
  Pearson correlation matrices of the numeric columns.
- :func:`independent_columns`: a reference sample that keeps every column's distribution within
  each stratum but no structure between columns: what a generator that learned only
  per-group marginals would produce.

Pure functions over pandas frames; categorical columns are those that are not numeric.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd
from scipy import stats

from .design import make_design
from ..common.progress import Cancelled

__all__ = ["C2ST", "c2st", "marginal_distances", "correlation_distance", "independent_columns",
           "matched_sample"]

#: Distinct text values a column may have in a two-sample test (generated tables allow up to 100).
MAX_TEST_LEVELS = 1000


@dataclass(frozen=True)
class C2ST:
    """A classifier two-sample test result."""

    auc: float
    low: float  # 95 % interval (Hanley–McNeil)
    high: float
    n_real: int
    n_other: int
    folds: int

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)

    def reading(self) -> str:
        """The result in words: whether a classifier can tell the two sets apart at this n."""
        if self.low > 0.5:
            return (f"a classifier tells them apart (AUC {self.auc:.3f}, 95 % interval {self.low:.3f}–"
                    f"{self.high:.3f})")
        return (f"not told apart at this sample size (AUC {self.auc:.3f}, 95 % interval {self.low:.3f}–"
                f"{self.high:.3f} includes 0.5)")


def hanley_mcneil(auc: float, n1: int, n2: int) -> tuple[float, float]:
    """95 % interval of an AUC from Hanley and McNeil (1982)'s standard error, clipped to [0, 1]."""
    q1, q2 = auc / (2 - auc), 2 * auc**2 / (1 + auc)
    var = (auc * (1 - auc) + (n1 - 1) * (q1 - auc**2) + (n2 - 1) * (q2 - auc**2)) / (n1 * n2)
    half = 1.959963984540054 * np.sqrt(max(var, 0.0))
    return max(0.0, auc - half), min(1.0, auc + half)


#: Seconds of boosting between two looks at ``should_stop`` in :func:`fit_stoppable`.
CHECK_EVERY_S = 0.5


def fit_stoppable(clf: Any, x: np.ndarray, y: np.ndarray, should_stop: Callable[[], bool] | None = None) -> Any:
    """``clf.fit(x, y)`` for a scikit-learn HistGradientBoosting model, in warm-started chunks of
    iterations sized to about :data:`CHECK_EVERY_S` seconds, looking at ``should_stop`` between them
    (True raises :class:`Cancelled`). The fitted model is the one a single fit gives (the same trees:
    warm starting continues the same boosting, early stopping on the same validation split)."""
    if should_stop is None:
        return clf.fit(x, y)
    target, chunk = int(clf.max_iter), 2  # then sized by the pace of the first chunk
    clf.set_params(warm_start=True, max_iter=min(chunk, target))
    while True:
        if should_stop():
            raise Cancelled("stopped during a two-sample test")
        before, started = getattr(clf, "n_iter_", 0), time.perf_counter()
        clf.fit(x, y)
        grown = clf.n_iter_ - before
        if clf.n_iter_ >= target or _stopped_early(clf):
            break
        per_iter = (time.perf_counter() - started) / max(grown, 1)
        chunk = max(1, int(CHECK_EVERY_S / max(per_iter, 1e-6)))
        clf.set_params(max_iter=min(target, clf.n_iter_ + chunk))
    clf.set_params(warm_start=False, max_iter=target)
    return clf


def _stopped_early(clf: Any) -> bool:
    """Did the last fit end by early stopping? Also when it stopped on a chunk's last iteration, which
    scikit-learn's warm start would otherwise boost past (it checks only after a new iteration)."""
    if clf.n_iter_ < clf.max_iter:
        return True
    if not getattr(clf, "do_early_stopping_", False):
        return False
    scores = clf.validation_score_ if clf._use_validation_data else clf.train_score_
    return bool(clf._should_stop(list(scores)))


def c2st(real: pd.DataFrame, other: pd.DataFrame, folds: int = 5, seed: int = 0, max_iter: int = 100,
         should_stop: Callable[[], bool] | None = None) -> C2ST:
    """Classifier two-sample test of ``real`` against ``other`` (same columns).

    The larger set is subsampled (seeded) to the smaller one's size; a histogram gradient-boosting
    classifier (scikit-learn) is cross-fitted over ``folds`` stratified folds and the AUC of its
    out-of-fold scores is returned with a Hanley–McNeil interval. ``should_stop`` is looked at about
    every :data:`CHECK_EVERY_S` seconds of fitting; True raises :class:`Cancelled`.
    """
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold

    if list(real.columns) != list(other.columns):
        raise ValueError(f"the frames have different columns: {list(real.columns)} and {list(other.columns)}")
    n = min(len(real), len(other))
    if n < 2 * folds:
        raise ValueError(f"{n} rows per set are too few for a {folds}-fold two-sample test (need {2 * folds})")
    rng = np.random.default_rng(seed)
    real = real.iloc[np.sort(rng.choice(len(real), n, replace=False))] if len(real) > n else real
    other = other.iloc[np.sort(rng.choice(len(other), n, replace=False))] if len(other) > n else other
    both = pd.concat([real, other], ignore_index=True)  # one encoding for both sets
    x, y = make_design(both, MAX_TEST_LEVELS).transform(both), np.r_[np.zeros(n), np.ones(n)]
    scores = np.empty(2 * n)
    for train, test in StratifiedKFold(folds, shuffle=True, random_state=seed).split(x, y):
        if should_stop is not None and should_stop():
            raise Cancelled("stopped during a two-sample test")
        clf = fit_stoppable(HistGradientBoostingClassifier(max_iter=max_iter, random_state=seed), x[train], y[train],
                            should_stop)
        scores[test] = clf.predict_proba(x[test])[:, 1]
    auc = float(roc_auc_score(y, scores))
    low, high = hanley_mcneil(auc, n, n)
    return C2ST(auc, low, high, n, n, folds)


def _is_numeric(s: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)


def marginal_distances(real: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """Per column: the distance between the two marginals and what each side looks like.

    Numeric: Kolmogorov–Smirnov statistic, means, standard deviations and the share of the most
    common value (the spike). Categorical: total variation distance ½ Σ |p − q| and the share of
    the most common category.
    """
    rows = []
    for col in real.columns:
        a, b = real[col], other[col]
        if _is_numeric(a) and _is_numeric(b):
            va, vb = a.to_numpy(dtype=float), b.to_numpy(dtype=float)
            mode = pd.Series(va).mode().iloc[0]
            rows.append({"column": col, "kind": "numeric", "distance": float(stats.ks_2samp(va, vb).statistic),
                         "measure": "Kolmogorov–Smirnov", "real mean": va.mean(), "synthetic mean": vb.mean(),
                         "real sd": va.std(), "synthetic sd": vb.std(), "most common (real)": str(mode),
                         "its share, real": float(np.mean(va == mode)),
                         "its share, synthetic": float(np.mean(vb == mode))})
        else:
            pa = a.astype(str).value_counts(normalize=True)
            pb = b.astype(str).value_counts(normalize=True)
            p = pd.concat([pa, pb], axis=1).fillna(0.0).to_numpy()
            mode = str(pa.index[0])
            rows.append({"column": col, "kind": "categorical", "distance": float(0.5 * np.abs(p[:, 0] - p[:, 1]).sum()),
                         "measure": "total variation", "real mean": np.nan, "synthetic mean": np.nan,
                         "real sd": np.nan, "synthetic sd": np.nan, "most common (real)": mode,
                         "its share, real": float(pa.iloc[0]), "its share, synthetic": float(pb.get(mode, 0.0))})
    return pd.DataFrame(rows).set_index("column")


def correlation_distance(real: pd.DataFrame, other: pd.DataFrame) -> dict[str, float]:
    """Largest and mean absolute difference of the Pearson correlations between numeric columns
    (upper triangle); NaN where fewer than two numeric columns vary on both sides."""
    cols = [c for c in real.columns if _is_numeric(real[c]) and _is_numeric(other[c])
            and real[c].nunique() > 1 and other[c].nunique() > 1]
    if len(cols) < 2:
        return {"max": float("nan"), "mean": float("nan"), "columns": len(cols)}
    diff = np.abs(real[cols].astype(float).corr().to_numpy() - other[cols].astype(float).corr().to_numpy())
    upper = diff[np.triu_indices(len(cols), 1)]
    return {"max": float(upper.max()), "mean": float(upper.mean()), "columns": len(cols)}


def _cells(pool_strata: pd.Series, counts: pd.Series) -> list[tuple[np.ndarray, int]]:
    """(row positions of the stratum, rows wanted) for each stratum with a positive count."""
    strata = pool_strata.to_numpy()
    out = []
    for s, k in counts.items():
        if k <= 0:
            continue
        idx = np.flatnonzero(strata == s)
        if len(idx) == 0:
            raise ValueError(f"stratum {s!r} has no rows to draw from")
        out.append((idx, int(k)))
    return out


def matched_sample(pool: pd.DataFrame, pool_strata: pd.Series, counts: pd.Series, seed: int = 0) -> pd.DataFrame:
    """Rows of ``pool`` with ``counts[s]`` rows from each stratum ``s`` (without replacement where
    the stratum has enough rows, with replacement where it has fewer)."""
    rng = np.random.default_rng(seed)
    picks = [rng.choice(idx, k, replace=len(idx) < k) for idx, k in _cells(pool_strata, counts)]
    return pool.iloc[np.concatenate(picks)].reset_index(drop=True)


def independent_columns(pool: pd.DataFrame, pool_strata: pd.Series, counts: pd.Series, seed: int = 0) -> pd.DataFrame:
    """Like :func:`matched_sample`, but every column is drawn on its own within the stratum: each
    column keeps its distribution per stratum and loses all structure between columns."""
    rng = np.random.default_rng(seed)
    out = [pd.DataFrame({c: pool[c].to_numpy()[rng.choice(idx, k)] for c in pool.columns})
           for idx, k in _cells(pool_strata, counts)]
    return pd.concat(out, ignore_index=True)[list(pool.columns)]
