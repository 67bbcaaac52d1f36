"""Many tests at once: multiplicity-adjusted p-values and the smallest detectable OFI."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy import stats

from ...common.vocabulary import adjustment, check_alphas
from .common import FloatArray


def adjust_p_values(p_values: npt.ArrayLike, method: str = "holm") -> FloatArray:
    """Multiplicity-adjusted p-values: ``"holm"`` (family-wise error, step-down), ``"bh"``
    (Benjamini–Hochberg false discovery rate, step-up) or ``"none"``. NaN stays NaN and
    does not count as a test; results are monotone in the raw p and capped at 1.

    >>> adjust_p_values([0.01, 0.04, 0.03, float("nan")], "holm").round(3).tolist()
    [0.03, 0.06, 0.06, nan]
    >>> adjust_p_values([0.01, 0.04, 0.03], "bh").round(3).tolist()
    [0.03, 0.04, 0.04]
    """
    adjustment(method)  # validates the name
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size == 0:
        return out
    if method == "none":
        out[ok] = p[ok]
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    m = order.size
    ranks = np.arange(1, m + 1)
    if method == "holm":
        adjusted = np.maximum.accumulate((m - ranks + 1) * p[order])
    else:
        adjusted = np.minimum.accumulate((m / ranks * p[order])[::-1])[::-1]
    out[order] = np.minimum(adjusted, 1.0)
    return out


def minimum_detectable_ofi(se: npt.ArrayLike, alpha: npt.ArrayLike = 0.05, power: float = 0.8) -> FloatArray:
    """Smallest |Δ| detected with probability ``power`` by a two-sided level-``alpha`` test whose
    standard error is ``se``: (z_{1−α/2} + z_{power})·se (docs/methods.md). Each ``alpha`` (one, or one per
    pair) is in (0, 0.5) (:func:`~fairness_core.vocabulary.check_alpha`)."""
    alpha = check_alphas(alpha)
    return (stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) * np.asarray(se, dtype=float)
