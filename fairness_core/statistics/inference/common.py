"""What every part of :mod:`fairness_core.inference` shares: the method names, ranges, argument checks and
Student-t helpers."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy import special, stats

from ..confusion import ConfusionMatrix
from ...common.vocabulary import ADJUSTMENT_KEYS, ADJUSTMENTS as _REGISTRY

FloatArray = npt.NDArray[np.float64]

OFI_METHODS = ("auto", "score", "adjusted", "wald", "permutation")
DI_METHODS = ("auto", "score", "exact")
#: The adjustment keys (the registry, with every label, is :data:`fairness_core.vocabulary.ADJUSTMENTS`).
ADJUSTMENTS = ADJUSTMENT_KEYS
#: How an adjusted p-value is introduced in text ("Holm-adjusted p = ..."), read from the registry.
ADJUSTED_LABEL = {key: a.prefix for key, a in _REGISTRY.items()}
#: "auto" uses the score interval for DI when both groups have at least this many rows.
SMALL_N_DI = 30
#: OFI lies in [−2, 2]; intervals are clipped to it.
OFI_RANGE = 2.0
#: Pseudo-counts of the adjusted OFI method: FP, FN, correct predictions.
PSEUDO_FP, PSEUDO_FN, PSEUDO_CORRECT = 0.5, 0.5, 1.0
#: Largest number of (FP, FN) outcomes the exact permutation p-value enumerates.
MAX_PERMUTATION_CELLS = 4_000_000


def _check_method(method: str, allowed: tuple[str, ...], what: str) -> None:
    if method not in allowed:
        raise ValueError(f"unknown {what} method {method!r}; expected one of {', '.join(allowed)}")


def _check_pair(cm_i: ConfusionMatrix, cm_j: ConfusionMatrix, method: str, allowed: tuple[str, ...],
                what: str) -> None:
    """Validate a scalar call: the method and two non-empty confusion matrices (alpha is checked where it is read)."""
    _check_method(method, allowed, what)
    for label, cm in (("i", cm_i), ("j", cm_j)):
        if not isinstance(cm, ConfusionMatrix):
            raise ValueError(f"cm_{label} must be a ConfusionMatrix, got {type(cm).__name__}")
        if cm.n == 0:
            raise ValueError(f"group {label} is empty (n = 0): {what} is undefined")



def _round_df(df: FloatArray) -> FloatArray:
    """Degrees of freedom on a grid of 0.6 % steps (inf beyond 10^5), so Student-t quantiles are
    computed once per distinct value; intervals and p-values use the same rounded df."""
    with np.errstate(divide="ignore", invalid="ignore"):
        rounded = 10 ** (np.round(np.log10(np.maximum(df, 1.0)) * 400) / 400)
    return np.where(df > 1e5, np.inf, rounded)


def _t_ppf(q: float, df: FloatArray) -> FloatArray:
    """Student-t quantile for many (rounded) df at once: one scipy call per distinct df."""
    values, inverse = np.unique(df, return_inverse=True)
    return np.where(np.isinf(values), stats.norm.ppf(q), stats.t.ppf(q, np.minimum(values, 1e300)))[inverse].reshape(df.shape)



def _log_comb(n: npt.ArrayLike, k: npt.ArrayLike) -> FloatArray:
    n, k = np.asarray(n, dtype=float), np.asarray(k, dtype=float)
    return special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
