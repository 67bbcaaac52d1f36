"""Scores of probabilistic forecasts given as quantiles: CRPS, the weighted interval score, the median's signed
error, the coverage of central bands and the PIT histogram, per forecast, vectorized over rows and levels.

A forecast is K quantiles q_1 ≤ … ≤ q_K at levels 0 < τ_1 < … < τ_K < 1 of the predictive distribution F.

**Pinball (quantile) loss** at level τ: ρ_τ(y, q) = (1{y < q} − τ)(q − y), i.e. τ(y − q) when y ≥ q and
(1 − τ)(q − y) when y < q.

**CRPS, quantile-score form.** CRPS(F, y) = ∫ (F(x) − 1{x ≥ y})² dx = 2 ∫₀¹ ρ_τ(y, F⁻¹(τ)) dτ (Laio & Tamea,
*Verification tools for probabilistic forecasts of continuous hydrological variables*, 2007). On K levels the
integral is the average:

    CRPS_QS = (2/K) Σ_k ρ_{τ_k}(y, q_k).

*Against the ensemble CRPS.* For sorted q the CRPS of the K-member ensemble {q_k} (``properscoring``'s
``crps_ensemble``: (1/K)Σ|q_k − y| − (1/2K²)Σ|q_k − q_l|) is exactly (2/K) Σ_k ρ_{(k − ½)/K}(y, q_k) (Bröcker,
*Evaluating raw ensembles with the continuous ranked probability score*, 2012), so

    CRPS_QS − CRPS_ens = (2/K) Σ_k ((k − ½)/K − τ_k)(q_k − y)           (:func:`ensemble_gap`, exact),

zero on the midpoint levels (k − ½)/K and at most (2/K)·max_k|(k − ½)/K − τ_k|·Σ_k|q_k − y| in general.

*Against the continuous CRPS* of the F whose quantiles these are: on midpoint levels the average is the midpoint
rule for the integral, with error O(1/K²) while y lies inside the quantiles' range, larger when y lies beyond the
extreme quantiles (the tails beyond τ_1 and τ_K are not integrated). Measured for F = N(0, 1), K = 111 midpoint
levels: |CRPS_QS − CRPS| ≤ 1.8·10⁻⁴ for |y| ≤ 2, 1.1·10⁻³ at y = 3 (relative 5·10⁻⁴); K = 9: ≤ 0.018 for |y| ≤ 2,
0.033 at y = 3 (tests/test_forecasts.py pins both against ``properscoring.crps_gaussian``).

*Point forecasts* (one level, 0.5): CRPS_QS = 2ρ_½(y, m) = |y − m|, the CRPS of a point mass exactly, so a
group's mean CRPS is its mean absolute error.

**Weighted interval score** (Bracher, Ray, Gneiting & Reich, *Evaluating epidemic forecasts in an interval
format*, 2021): over the central (1 − α_k) bands [l_k, u_k] formed by symmetric level pairs (α_k/2, 1 − α_k/2)
and the median m when 0.5 is a level (w₀ = 1, else 0),

    IS_α(l, u; y) = (u − l) + (2/α)(l − y)·1{y < l} + (2/α)(y − u)·1{y > u},
    WIS = (w₀·½|y − m| + Σ_k (α_k/2)·IS_{α_k}) / (K_bands + w₀/2).

Since (α/2)·IS_α = ρ_{α/2}(y, l) + ρ_{1−α/2}(y, u) and ½|y − m| = ρ_½(y, m), WIS is a weighted sum of pinball
losses (:func:`wis_weights`), and on a symmetric level set holding 0.5 it equals CRPS_QS exactly.

**Coverage** of the central band k: 1{l_k ≤ y ≤ u_k}; nominal 1 − α_k.

**PIT histogram** from the levels: a forecast with c = #{k: q_k ≤ y} puts its probability integral transform
F(y) in the bin [τ_c, τ_{c+1}) (τ_0 = 0, τ_{K+1} = 1), whose expected share under calibration is τ_{c+1} − τ_c.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

FloatArray = npt.NDArray[np.float64]

#: Rows scored per block: a block of 111 levels (3.6 MB) stays in the cache through its passes (a block of 2^16
#: rows made the scores 5 times slower at 10^6 forecasts).
BLOCK_ROWS = 1 << 12
#: Two levels closer than this are one symmetric pair (τ, 1 − τ), or the median.
LEVEL_MATCH = 1e-9


def check_levels(levels: npt.ArrayLike) -> FloatArray:
    """The quantile levels as float64, or a ValueError naming the first bad one: each finite and strictly inside
    (0, 1), strictly increasing (sorted and unique).

    >>> check_levels([0.1, 0.5, 0.9]).tolist()
    [0.1, 0.5, 0.9]
    >>> check_levels([0.1, 0.5, 0.5])
    Traceback (most recent call last):
    ...
    ValueError: levels[2] = 0.5 repeats levels[1]; quantile levels must be unique
    """
    tau = np.asarray(levels, dtype=float)
    if tau.ndim != 1 or tau.size == 0:
        raise ValueError(f"levels must be a non-empty 1-D sequence of quantile levels, got shape {tau.shape}")
    bad = np.flatnonzero(~(np.isfinite(tau) & (tau > 0) & (tau < 1)))
    if bad.size:
        k = int(bad[0])
        raise ValueError(f"levels[{k}] = {tau[k]:g} is outside (0, 1); quantile levels lie strictly between 0 and 1")
    step = np.diff(tau)
    if (k := np.flatnonzero(step <= 0)).size:
        k0 = int(k[0]) + 1
        if step[k0 - 1] == 0:
            raise ValueError(f"levels[{k0}] = {tau[k0]:g} repeats levels[{k0 - 1}]; quantile levels must be unique")
        raise ValueError(f"levels must increase: levels[{k0}] = {tau[k0]:g} follows levels[{k0 - 1}] = "
                         f"{tau[k0 - 1]:g}; sort the levels and the quantiles' columns with them")
    return tau


def pinball_loss(y: npt.ArrayLike, q: npt.ArrayLike, tau: npt.ArrayLike) -> FloatArray:
    """ρ_τ(y, q) = (1{y < q} − τ)(q − y), elementwise with broadcasting.

    >>> pinball_loss(1.0, [0.0, 2.0], [0.9, 0.9]).tolist()     # under by 1: 0.9; over by 1: 0.1
    [0.9, 0.09999999999999998]
    """
    d = np.asarray(q, dtype=float) - np.asarray(y, dtype=float)
    return d * ((d > 0) - np.asarray(tau, dtype=float))


def crps_quantiles(y: npt.ArrayLike, q: npt.ArrayLike, levels: npt.ArrayLike) -> FloatArray:
    """CRPS_QS of each forecast: (2/K) Σ_k ρ_{τ_k}(y, q_k) (module docstring), ``q`` of shape (n, K).

    >>> crps_quantiles([3.0], [[1.0, 2.0, 4.0]], [1/6, 1/2, 5/6]).round(6).tolist()   # midpoints: the ensemble's
    [0.666667]
    """
    q = np.atleast_2d(np.asarray(q, dtype=float))
    return 2 * pinball_loss(np.asarray(y, dtype=float)[:, None], q, levels).mean(axis=1)


def ensemble_gap(y: npt.ArrayLike, q: npt.ArrayLike, levels: npt.ArrayLike) -> FloatArray:
    """CRPS_QS − CRPS of the ensemble {q_k}, exactly: (2/K) Σ_k ((k − ½)/K − τ_k)(q_k − y), ``q`` sorted per row
    (0 on the midpoint levels (k − ½)/K)."""
    q = np.atleast_2d(np.asarray(q, dtype=float))
    tau = np.asarray(levels, dtype=float)
    k = tau.size
    c = (np.arange(1, k + 1) - 0.5) / k - tau
    return 2 / k * ((q - np.asarray(y, dtype=float)[:, None]) @ c)


@dataclass(frozen=True)
class Bands:
    """The central bands of a level set: level indices ``low``, ``high`` of each symmetric pair (τ, 1 − τ), τ < ½,
    widest first, their ``nominal`` coverage 1 − 2τ, and ``median`` (the index of level 0.5, or None)."""

    low: npt.NDArray[np.intp]
    high: npt.NDArray[np.intp]
    nominal: FloatArray
    median: int | None

    @property
    def size(self) -> int:
        return int(self.low.size)


def central_bands(levels: npt.ArrayLike) -> Bands:
    """The symmetric level pairs of ``levels`` (sorted), and the median's index.

    >>> b = central_bands([0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99])
    >>> b.low.tolist(), b.high.tolist(), b.nominal.round(2).tolist(), b.median
    ([0, 1, 2], [6, 5, 4], [0.9, 0.8, 0.5], 3)
    """
    tau = np.asarray(levels, dtype=float)
    mirror = np.searchsorted(tau, 1 - tau - LEVEL_MATCH)
    mirror = np.minimum(mirror, tau.size - 1)
    paired = (np.abs(tau[mirror] - (1 - tau)) <= LEVEL_MATCH) & (tau < 0.5 - LEVEL_MATCH)
    low = np.flatnonzero(paired)
    med = np.flatnonzero(np.abs(tau - 0.5) <= LEVEL_MATCH)
    return Bands(low.astype(np.intp), mirror[low].astype(np.intp), 1 - 2 * tau[low],
                 int(med[0]) if med.size else None)


def wis_weights(levels: npt.ArrayLike) -> FloatArray:
    """The weight of each level's pinball loss in the WIS (module docstring): 1/(K_bands + w₀/2) on every level of
    a symmetric pair and on the median, 0 elsewhere; all zero when there is neither band nor median.

    >>> wis_weights([0.1, 0.5, 0.9]).round(4).tolist()        # one band and the median: 1/1.5 each
    [0.6667, 0.6667, 0.6667]
    >>> wis_weights([0.1, 0.2, 0.9]).tolist()                 # the band (0.1, 0.9) alone
    [1.0, 0.0, 1.0]
    """
    bands = central_bands(levels)
    w = np.zeros(np.asarray(levels).size)
    has_median = bands.median is not None
    denominator = bands.size + (0.5 if has_median else 0.0)
    if denominator == 0:
        return w
    w[bands.low] = w[bands.high] = 1 / denominator
    if has_median:
        w[bands.median] = 1 / denominator
    return w


def interval_score(y: npt.ArrayLike, low: npt.ArrayLike, high: npt.ArrayLike,
                   band_alpha: npt.ArrayLike) -> FloatArray:
    """Gneiting & Raftery's interval score of the central (1 − α) band [low, high], α = ``band_alpha`` (the band's
    nominal miss rate, any value in (0, 1), not a test's error rate):
    (high − low) + (2/α)(low − y)·1{y < low} + (2/α)(y − high)·1{y > high}.

    >>> interval_score([0.0, 5.0, 12.0], 2.0, 10.0, 0.2).tolist()
    [28.0, 8.0, 28.0]
    """
    y, lo, hi, alpha = (np.asarray(a, dtype=float) for a in (y, low, high, band_alpha))
    return (hi - lo) + 2 / alpha * (lo - y) * (y < lo) + 2 / alpha * (y - hi) * (y > hi)


def weighted_interval_score(y: npt.ArrayLike, q: npt.ArrayLike, levels: npt.ArrayLike) -> FloatArray:
    """The WIS of each forecast from its interval form (module docstring), ``q`` of shape (n, K); NaN when the
    levels hold neither a symmetric pair nor the median.

    >>> weighted_interval_score([3.0], [[1.0, 2.0, 4.0]], [0.25, 0.5, 0.75]).tolist()   # (½·|3 − 2| + 0.25·3) / 1.5
    [0.8333333333333334]
    """
    y = np.asarray(y, dtype=float)
    q = np.atleast_2d(np.asarray(q, dtype=float))
    bands = central_bands(levels)
    w0 = 1.0 if bands.median is not None else 0.0
    if bands.size == 0 and not w0:
        return np.full(y.shape, np.nan)
    total = 0.5 * w0 * np.abs(y - q[:, bands.median]) if w0 else np.zeros(y.shape)
    alpha = 1 - bands.nominal
    total = total + (alpha / 2 * interval_score(y[:, None], q[:, bands.low], q[:, bands.high], alpha)).sum(axis=1)
    return total / (bands.size + w0 / 2)


def median_weights(levels: npt.ArrayLike) -> tuple[int, int, float]:
    """How the median is read from the quantiles: (a, b, t) with median = (1 − t)·q_a + t·q_b, the levels a ≤ b
    around 0.5 (a = b, t = 0 when 0.5 is a level); ValueError when 0.5 lies outside the levels' range.

    >>> median_weights([0.25, 0.5, 0.75]), median_weights([0.1, 0.4, 0.7, 0.9])
    ((1, 1, 0.0), (1, 2, 0.3333333333333333))
    """
    tau = np.asarray(levels, dtype=float)
    exact = np.flatnonzero(np.abs(tau - 0.5) <= LEVEL_MATCH)
    if exact.size:
        return int(exact[0]), int(exact[0]), 0.0
    b = int(np.searchsorted(tau, 0.5))
    if b == 0 or b == tau.size:
        raise ValueError(f"the levels run from {tau[0]:g} to {tau[-1]:g}; the median (0.5) must lie between two "
                         "levels to be read from the quantiles")
    return b - 1, b, float((0.5 - tau[b - 1]) / (tau[b] - tau[b - 1]))


def crossing_rows(q: FloatArray) -> npt.NDArray[np.intp]:
    """The rows whose quantiles decrease somewhere along the levels (block by block)."""
    out = [start + np.flatnonzero((block[:, 1:] < block[:, :-1]).any(axis=1))
           for start in range(0, q.shape[0], BLOCK_ROWS) for block in (q[start:start + BLOCK_ROWS],)]
    return np.concatenate(out) if out else np.zeros(0, dtype=np.intp)


@dataclass(frozen=True)
class RowScores:
    """Per forecast: ``crps`` (CRPS_QS), ``wis`` (NaN without bands or median), ``median`` (the forecast's median),
    ``at_or_below`` = #{k: q_k ≤ y} (the PIT bin) and ``below`` = #{k: q_k < y} (equal but for ties)."""

    crps: FloatArray
    wis: FloatArray
    median: FloatArray
    at_or_below: npt.NDArray[np.int32]
    below: npt.NDArray[np.int32]

    def covered(self, bands: Bands) -> npt.NDArray[np.bool_]:
        """(n, bands) whether each band holds y: l ≤ y ⟺ #{q ≤ y} > low index; y ≤ u ⟺ #{q < y} ≤ high index."""
        return (self.at_or_below[:, None] > bands.low) & (self.below[:, None] <= bands.high)


def row_scores(y: FloatArray, q: FloatArray, levels: FloatArray) -> RowScores:
    """Every per-forecast score of the module docstring in one pass over ``q`` (n, K; sorted rows), block by block:
    the pinball losses of a block are formed once and weighted twice (CRPS, WIS) by one matrix product. ``q`` may be
    float32: each block is taken to float64 (exactly) against the float64 ``y``, so the scores are those of its
    float64 values."""
    n, k = q.shape
    tau = np.asarray(levels, dtype=float)
    w_wis = wis_weights(tau)
    weights = np.stack([np.full(k, 2.0 / k), w_wis], axis=1)
    a, b, t = median_weights(tau)
    out = np.empty((n, 2))
    at_or_below, below = np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int32)
    for start in range(0, n, BLOCK_ROWS):
        block = slice(start, min(start + BLOCK_ROWS, n))
        d = q[block] - y[block, None]
        over = d > 0
        out[block] = (d * (over - tau)) @ weights
        at_or_below[block] = k - np.count_nonzero(over, axis=1)
        below[block] = np.count_nonzero(d < 0, axis=1)
    median = q[:, a].astype(float) if t == 0.0 else (1 - t) * q[:, a].astype(float) + t * q[:, b]
    wis = out[:, 1] if w_wis.any() else np.full(n, np.nan)
    return RowScores(out[:, 0], wis, median, at_or_below, below)


def pit_expected(levels: npt.ArrayLike) -> FloatArray:
    """The expected share of each PIT bin under calibration: τ_{c+1} − τ_c for c = 0 … K (τ_0 = 0, τ_{K+1} = 1).

    >>> pit_expected([0.25, 0.5, 0.75]).tolist()
    [0.25, 0.25, 0.25, 0.25]
    """
    return np.diff(np.concatenate([[0.0], np.asarray(levels, dtype=float), [1.0]]))


def group_quantiles(values: npt.ArrayLike, codes: npt.ArrayLike, groups: int, probs: npt.ArrayLike) -> np.ndarray:
    """(groups, len(probs)) quantiles of ``values`` within each group code, NumPy's default ("linear")
    definition, from one sort of all values (no loop over groups).

    >>> group_quantiles([1.0, 2.0, 3.0, 10.0, 20.0], [0, 0, 0, 1, 1], 2, [0.5]).tolist()
    [[2.0], [15.0]]
    """
    x, c, p = np.asarray(values, dtype=float), np.asarray(codes, dtype=np.intp), np.asarray(probs, dtype=float)
    order = np.lexsort((x, c))
    xs = x[order]
    n = np.bincount(c, minlength=groups)
    start = np.append(0, np.cumsum(n)[:-1])
    pos = (n[:, None] - 1) * p[None, :]
    lo, frac = np.floor(pos).astype(np.intp), pos - np.floor(pos)
    hi = np.minimum(lo + 1, np.maximum(n[:, None] - 1, 0))
    with np.errstate(invalid="ignore"):
        out = (1 - frac) * xs[np.minimum(start[:, None] + lo, x.size - 1)] + frac * xs[
            np.minimum(start[:, None] + hi, x.size - 1)]
    return np.where(n[:, None] > 0, out, np.nan)


def quartile_skill(names: list[str], codes: np.ndarray, crps: np.ndarray,
                    base_crps: dict[str, np.ndarray]) -> pd.DataFrame:
    """The thesis's Table 5.2 per group (``names``, row ``codes``) and baseline (``base_crps``: "crps:<name>" →
    each forecast's baseline CRPS): 1 − Q_k(CRPS model)/Q_k(CRPS baseline) at the quartiles k of each group's two
    CRPS sets (``skill_q1`` … ``skill_q3``), and ``share_improved``, the share of forecasts whose CRPS is at most
    the baseline's (the thesis's "percentile of a zero score" subtracted from one)."""
    g = len(names)
    frames = []
    probs = [0.25, 0.5, 0.75]
    model_q = group_quantiles(crps, codes, g, probs) if base_crps else None
    for key, base in base_crps.items():
        base_q = group_quantiles(base, codes, g, probs)
        with np.errstate(divide="ignore", invalid="ignore"):
            s = 1 - model_q / base_q
        improved = np.bincount(codes, weights=(crps <= base).astype(float), minlength=g) / np.bincount(codes,
                                                                                                      minlength=g)
        frames.append(pd.DataFrame({"group": names, "baseline": key[5:], "skill_q1": s[:, 0], "skill_q2": s[:, 1],
                                    "skill_q3": s[:, 2], "share_improved": improved}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["group", "baseline", "skill_q1", "skill_q2", "skill_q3", "share_improved"])


__all__ = ["Bands", "RowScores", "central_bands", "check_levels", "crossing_rows", "crps_quantiles",
           "ensemble_gap", "group_quantiles", "interval_score", "median_weights", "pinball_loss", "pit_expected",
           "quartile_skill", "row_scores", "weighted_interval_score", "wis_weights"]
