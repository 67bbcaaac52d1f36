"""Amounts (a premium, a credit limit, a salary): per-group moments, and intervals for means and their differences.

For an amount audit each person's **benefit** is the signed error in the direction declared: b = ŷ − y when
a larger prediction is a benefit, b = y − ŷ when it is a harm. A group's marginal benefit is the mean benefit
B = b̄ (on 0/1 data exactly (FP − FN)/n, the binary marginal benefit) and the objective fairness index of a
pair is OFI = B_i − B_j, in the outcome's units (docs/methods.md, "Amounts").

Everything here works from per-group **sufficient statistics**, :class:`Moments` (n, mean, M2 = Σ(x − x̄)²,
M3 = Σ(x − x̄)³), which combine exactly across chunks and groups (Chan et al.'s and Pébay's pairwise update),
so a warehouse's one GROUP BY gives the same numbers as the rows in memory.

Intervals (the method was chosen by simulated coverage, ``bench/amounts_coverage.py``):

``"union"`` (the default)
    The union of the two intervals below: each p-value the larger of the two tests', so a claim is made only when
    both make it. Hall's interval alone overcorrects heavy-tailed symmetric errors (t₃: 0.92 at 10 vs 10, its
    noisy sample skewness shifting the interval) and Welch's alone undercovers skewed small groups (log-normal
    σ = 0.5, 10 vs 200 rows: 0.92); their union holds ≥ 0.938 in every corner but the too-skewed ones.
``"hall"``
    Hall's monotone transformation of the studentized statistic (Hall, *On the removal of skewness by
    transformation*, 1992), for a difference of two means. With D = x̄_i − x̄_j, S² = s_i²/n_i + s_j²/n_j and
    κ̂₃ = k₃ᵢ/n_i² − k₃ⱼ/n_j² (k₃ the unbiased third cumulant of one group), the statistic
    T = (D − Δ)/S has, to order n^(-1/2), P(T ≤ x) = Φ(x) + a(2x² + 1)φ(x) with a = κ̂₃/(6S³) (the same
    Edgeworth term as the one-sample studentized mean, with the skewness of D in place of γ/√n). Then
    g(T) = T + a(1 + 2T²) + (4/3)a²T³ is Student-t to that order (Welch–Satterthwaite df); g is increasing,
    with the closed-form inverse g⁻¹(y) = 3(y − a)/(c² + c + 1), c = ∛(1 + 6a(y − a)), so the bounds are
    D − S·g⁻¹(±q) and every p-value is exactly the interval's dual. One group (by-group means): the same with
    κ̂₃ = k₃/n², S² = s²/n, df = n − 1.
``"welch"``
    Welch's t with Satterthwaite's degrees of freedom (a = 0 above).

**Too skewed to tell.** Where a group's skewness is large for its size no interval holds its level (log-normal
σ = 1 at 10 rows against 200 covers about 0.85–0.90 with every method measured). :func:`skew_index` reads it from
the data: |G1|/√n per group (G1 the adjusted sample skewness), the skewness of the group's mean; a pair whose more
skewed group exceeds :data:`SKEW_LIMIT` gets no interval and no p-value (NaN): its verdict is "inconclusive", with
the reason :data:`TOO_SKEWED`. The limit was calibrated by the simulation (docs/methods.md gives the table): it
fires on most samples of 10 rows from log-normal σ = 1 and never on 200 normal rows.

The mean-prediction ratio (the amounts' parity measure, the counterpart of disparate impact) has Fieller's
interval, :class:`RatioPairs`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats

FloatArray = npt.NDArray[np.float64]

#: Interval methods for a mean or a difference of means.
AMOUNT_METHODS = ("union", "hall", "welch")
#: A pair (or a group) whose skew index (:func:`skew_index`: |G1|/√n of its most skewed group) exceeds this gets no
#: interval: "too skewed" (calibrated by ``bench/amounts_coverage.py``; docs/methods.md).
SKEW_LIMIT = 0.4
#: The reason given where the skew guard fires.
TOO_SKEWED = "too skewed for {n} rows to tell"


@dataclass(frozen=True)
class Moments:
    """Sufficient statistics of one amount per group: arrays ``n``, ``mean``, ``m2`` = Σ(x − x̄)², ``m3`` = Σ(x − x̄)³.

    Built from rows with :meth:`of`, from a warehouse's power sums with :meth:`from_power_sums`; chunks or groups
    combine with :meth:`combine` and :meth:`pool` (exact up to rounding: Pébay's update of the central sums).

    >>> m = Moments.of(np.array([1.0, 2.0, 6.0, 10.0, 20.0]), np.array([0, 0, 0, 1, 1]), 2)
    >>> m.mean.tolist(), m.m2.tolist(), m.m3.tolist()
    ([3.0, 15.0], [14.0, 50.0], [18.0, 0.0])
    >>> a, b = Moments.of(np.array([1.0, 2.0]), np.array([0, 0]), 1), Moments.of(np.array([6.0]), np.array([0]), 1)
    >>> a.combine(b) == Moments.of(np.array([1.0, 2.0, 6.0]), np.array([0, 0, 0]), 1)
    True
    """

    n: FloatArray
    mean: FloatArray
    m2: FloatArray
    m3: FloatArray

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Moments) and all(
            np.array_equal(getattr(self, f), getattr(other, f)) for f in ("n", "mean", "m2", "m3"))

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def of(cls, values: npt.ArrayLike, codes: npt.ArrayLike, groups: int) -> "Moments":
        """The moments of ``values`` per group code (0 … groups − 1), two passes (mean, then central sums)."""
        x, c = np.asarray(values, dtype=float), np.asarray(codes, dtype=np.intp)
        n = np.bincount(c, minlength=groups).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = np.bincount(c, weights=x, minlength=groups) / n
        d = x - mean[c]
        d2 = d * d
        m2, m3 = np.bincount(c, weights=d2, minlength=groups), np.bincount(c, weights=d2 * d, minlength=groups)
        # a group of one value whose mean was rounded: its residuals are rounding, not spread
        flat = m2 <= n * (8 * np.finfo(float).eps * np.abs(mean)) ** 2
        return cls(n, mean, np.where(flat, 0.0, m2), np.where(flat, 0.0, m3))

    @classmethod
    def from_power_sums(cls, n: npt.ArrayLike, s1: npt.ArrayLike, s2: npt.ArrayLike, s3: npt.ArrayLike,
                        shift: npt.ArrayLike = 0.0) -> "Moments":
        """From n, Σu, Σu², Σu³ of u = x − ``shift`` (a warehouse's sums; a shift near the mean keeps the central
        sums accurate): M2 = Σu² − n·ū², M3 = Σu³ − 3ū·Σu² + 2n·ū³."""
        n, s1, s2, s3, shift = (np.asarray(a, dtype=float) for a in (n, s1, s2, s3, shift))
        with np.errstate(divide="ignore", invalid="ignore"):
            u = s1 / n
        m2 = np.maximum(s2 - n * u * u, 0.0)
        m3 = s3 - 3 * u * s2 + 2 * n * u ** 3
        return cls(n, u + shift, m2, m3)

    def combine(self, other: "Moments") -> "Moments":
        """The moments of each group's rows in ``self`` and ``other`` together (Pébay's pairwise update)."""
        n = self.n + other.n
        with np.errstate(divide="ignore", invalid="ignore"):
            delta = other.mean - self.mean
            w = np.where(n > 0, other.n / n, 0.0)
        mean = self.mean + delta * w
        m2 = self.m2 + other.m2 + delta * delta * self.n * w
        m3 = (self.m3 + other.m3 + delta ** 3 * self.n * other.n * (self.n - other.n) / np.where(n > 0, n * n, 1.0)
              + 3 * delta * (self.n * other.m2 - other.n * self.m2) / np.where(n > 0, n, 1.0))
        return Moments(n, np.where(self.n == 0, other.mean, np.where(other.n == 0, self.mean, mean)), m2, m3)

    def pool(self, codes: npt.ArrayLike, groups: int) -> "Moments":
        """Groups pooled into ``groups`` new groups, group k into ``codes[k]`` (a marginal, the total)."""
        c = np.asarray(codes, dtype=np.intp)
        n = np.bincount(c, weights=self.n, minlength=groups)
        mean = np.bincount(c, weights=self.n * self.mean, minlength=groups) / n
        d = self.mean - mean[c]
        m2 = np.bincount(c, weights=self.m2 + self.n * d * d, minlength=groups)
        m3 = np.bincount(c, weights=self.m3 + 3 * d * self.m2 + self.n * d ** 3, minlength=groups)
        return Moments(n, mean, m2, m3)

    def take(self, index: npt.ArrayLike) -> "Moments":
        """The groups at ``index``."""
        return Moments(self.n[index], self.mean[index], self.m2[index], self.m3[index])

    @property
    def variance(self) -> FloatArray:
        """The unbiased variance s² = M2/(n − 1) (NaN for one row)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.n > 1, self.m2 / (self.n - 1), np.nan)

    @property
    def k3(self) -> FloatArray:
        """The unbiased third cumulant k₃ = n·M3/((n − 1)(n − 2)) (0 below three rows, where M3 = 0)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.n > 2, self.n * self.m3 / ((self.n - 1) * (self.n - 2)), 0.0)

    @property
    def skewness(self) -> FloatArray:
        """The adjusted sample skewness G1 = k₃/s³ (scipy's ``skew(bias=False)``; NaN without spread)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.m2 > 0, self.k3 / self.variance ** 1.5, np.nan)


def _g_inverse(y: FloatArray, a: FloatArray) -> FloatArray:
    """t with g(t) = y for Hall's g(t) = t + a(1 + 2t²) + (4/3)a²t³: 3(y − a)/(c² + c + 1), c = ∛(1 + 6a(y − a))."""
    c = np.cbrt(1 + 6 * a * (y - a))
    return 3 * (y - a) / (c * c + c + 1)


def _g(t: FloatArray, a: FloatArray) -> FloatArray:
    return t + a * (1 + 2 * t * t) + (4 / 3) * a * a * t ** 3


def skew_index(moments: Moments) -> FloatArray:
    """Each group's skew index |G1|/√n: the skewness of its mean's sampling distribution (0 without spread).

    A pair's index is its more skewed group's. Above :data:`SKEW_LIMIT` the pair is "too skewed for n rows to
    tell". The index is unweighted by the group's share of the variance on purpose: the samples of a very skewed
    amount that mislead an interval are those that missed its long tail, and they show a small variance, not a
    small skewness.

    >>> skew_index(Moments.of(np.array([1.0, 1.0, 1.0, 10.0]), np.zeros(4, dtype=int), 1)).round(3).tolist()
    [1.0]
    """
    return np.nan_to_num(np.abs(moments.skewness)) / np.sqrt(moments.n)


class MeanPairs:
    """Many differences of two means Δ = μ_i − μ_j (or one mean each, ``j`` None) with dual bounds and one-sided
    p-values at any level and null value: the interface of :class:`fairness_core.inference.OFIPairs`
    (``p_value(null, side)``, ``bounds(gamma)``, ``bounds_at(*gammas)``, ``estimate``, ``method``), so the verdict
    machinery reads it as it reads OFI's.

    ``method``: ``"union"`` (the default: the union of Hall's and Welch's intervals; each p-value the larger of
    the two, so a claim is made only when both tests make it), ``"hall"`` or ``"welch"`` (module docstring).
    ``p_value(null, "above")`` tests H0: Δ ≤ null and is below γ exactly when ``bounds(gamma)[0] > null``.
    ``too_skewed``: the pairs whose skew index (:func:`skew_index`) exceeds ``skew_limit`` (None: never); their
    bounds and p-values are NaN (no claim is made about them). ``skew``: every pair's skew index.

    >>> rng = np.random.default_rng(0)
    >>> x = np.concatenate([rng.normal(0, 1, 40), rng.normal(1, 1, 40)])
    >>> m = Moments.of(x, np.repeat([0, 1], 40), 2)
    >>> p = MeanPairs(m.take([0]), m.take([1]))
    >>> low, high = p.bounds(0.025)
    >>> bool(low[0] < p.estimate[0] < high[0]), bool((p.p_value(0.0)[0] < 0.05) == (high[0] < 0 or low[0] > 0))
    (True, True)
    """

    def __init__(self, i: Moments, j: Moments | None = None, method: str = "union",
                 skew_limit: float | None = SKEW_LIMIT) -> None:
        if method not in AMOUNT_METHODS:
            raise ValueError(f"unknown amount interval method {method!r}; expected one of {', '.join(AMOUNT_METHODS)}")
        if np.any(i.n < 2) or (j is not None and np.any(j.n < 2)):
            raise ValueError("every group needs at least two rows for an interval of its mean")
        v_i = i.variance / i.n
        k_i = i.k3 / i.n ** 2
        if j is None:
            self.estimate, v, kappa = i.mean.copy(), v_i, k_i
            df = i.n - 1
            self.skew = skew_index(i)
        else:
            v_j = j.variance / j.n
            self.estimate = i.mean - j.mean
            v, kappa = v_i + v_j, k_i - j.k3 / j.n ** 2
            with np.errstate(divide="ignore", invalid="ignore"):
                df = np.where(v > 0, v * v / (v_i ** 2 / (i.n - 1) + v_j ** 2 / (j.n - 1)), np.inf)
            self.skew = np.maximum(skew_index(i), skew_index(j))
        self.size = self.estimate.size
        self.se = np.sqrt(v)
        self.df = np.where(np.isfinite(df), df, np.inf)
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where(self.se > 0, kappa / (6 * self.se ** 3), 0.0)
        #: Hall's a per pair, and the transformations whose intervals are joined (a = 0: Welch's)
        self.a = a
        self._parts = {"union": (a, np.zeros_like(a)), "hall": (a,), "welch": (np.zeros_like(a),)}[method]
        self.too_skewed = (self.skew > skew_limit) if skew_limit is not None else np.zeros(self.size, dtype=bool)
        self.method = np.full(self.size, method).astype(str)

    def p_value(self, null: float = 0.0, side: str = "two-sided") -> FloatArray:
        """p-value of H0: Δ ≤ null (``"above"``), Δ ≥ null (``"below"``) or Δ = null (``"two-sided"``: twice the
        smaller one-sided p, at most 1). NaN for a pair too skewed to tell."""
        if side == "two-sided":
            return np.minimum(1.0, 2 * np.minimum(self.p_value(null, "above"), self.p_value(null, "below")))
        diff = self.estimate - null
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(self.se > 0, diff / self.se, np.where(diff > 0, np.inf, np.where(diff < 0, -np.inf, 0.0)))
        p = np.zeros(self.size)
        for a in self._parts:
            g = np.where(np.isfinite(t), _g(t, a), t)
            p = np.maximum(p, stats.t.sf(g, self.df) if side == "above" else stats.t.cdf(g, self.df))
        p = np.where((self.se == 0) & (diff == 0), 1.0, p)
        return np.where(self.too_skewed, np.nan, p)

    def bounds(self, gamma: float) -> tuple[FloatArray, FloatArray]:
        """Lower and upper bounds, each one-sided at level 1 − ``gamma`` (NaN for a pair too skewed to tell)."""
        q = stats.t.ppf(1 - gamma, self.df)
        low = np.min([self.estimate - self.se * _g_inverse(q, a) for a in self._parts], axis=0)
        high = np.max([self.estimate - self.se * _g_inverse(-q, a) for a in self._parts], axis=0)
        return np.where(self.too_skewed, np.nan, low), np.where(self.too_skewed, np.nan, high)

    def bounds_at(self, *gammas: float) -> tuple[FloatArray, ...]:
        """:meth:`bounds` at several ``gammas``: (low, high) of the first, then of the next, ... in one tuple."""
        return tuple(b for gamma in gammas for b in self.bounds(gamma))


class RatioPairs:
    """Many ratios of two positive means θ = μ_i/μ_j with Fieller's bounds and their dual p-values (the interface
    of :class:`fairness_core.inference.DIPairs`).

    The test of H0: θ = θ₀ is Welch's t of x̄_i − θ₀x̄_j, t(θ₀) = (x̄_i − θ₀x̄_j)/√(v_i + θ₀²v_j) (v = s²/n),
    referred to Student's t with the Satterthwaite df at θ̂ (one df per pair, so bounds are closed-form): for
    θ₀ ≥ 0 and positive means t decreases in θ₀, and the bounds at one-sided level 1 − γ are the roots of
    t(θ) = ±q of the quadratic θ²(x̄_j² − q²v_j) − 2θx̄_ix̄_j + x̄_i² − q²v_i = 0 (Fieller's theorem). Where
    x̄_j is not clear of 0 at that level (x̄_j² ≤ q²v_j) the upper bound is ∞. ``nobody``: pairs whose ratio is
    undefined (a mean at or below 0): NaN throughout.
    """

    def __init__(self, i: Moments, j: Moments) -> None:
        self.nobody = ~((i.mean > 0) & (j.mean > 0))
        self.size = i.mean.size
        with np.errstate(divide="ignore", invalid="ignore"):
            self.estimate = np.where(self.nobody, np.nan, i.mean / j.mean)
            self.v_i, self.v_j = i.variance / i.n, j.variance / j.n
            v = self.v_i + self.estimate ** 2 * self.v_j
            df = v * v / (self.v_i ** 2 / (i.n - 1) + (self.estimate ** 2 * self.v_j) ** 2 / (j.n - 1))
        self.df = np.where(np.isfinite(df), df, np.inf)
        self.x_i, self.x_j = i.mean, j.mean
        self.method = np.full(self.size, "fieller").astype(str)

    def p_value(self, null: float = 1.0, side: str = "two-sided") -> FloatArray:
        """p-value of H0: θ ≤ null (``"above"``), θ ≥ null (``"below"``) or θ = null (``"two-sided"``)."""
        if side == "two-sided":
            return np.minimum(1.0, 2 * np.minimum(self.p_value(null, "above"), self.p_value(null, "below")))
        diff = self.x_i - null * self.x_j
        se = np.sqrt(self.v_i + null * null * self.v_j)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(se > 0, diff / se, np.where(diff > 0, np.inf, np.where(diff < 0, -np.inf, 0.0)))
        p = stats.t.sf(t, self.df) if side == "above" else stats.t.cdf(t, self.df)
        return np.where(self.nobody, np.nan, p)

    def bounds(self, gamma: float) -> tuple[FloatArray, FloatArray]:
        """Lower and upper bounds, each one-sided at level 1 − ``gamma``."""
        q = stats.t.ppf(1 - gamma, self.df)
        xi, xj, vi, vj = self.x_i, self.x_j, self.v_i, self.v_j
        a = xj * xj - q * q * vj
        disc = np.sqrt(np.maximum(xi * xi * vj + xj * xj * vi - q * q * vi * vj, 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            # the lower root, rationalized: (x̄ᵢ² − q²vᵢ)/(x̄ᵢx̄ⱼ + q·disc), no 0/0 when a → 0
            low = np.where(xi * xi > q * q * vi, (xi * xi - q * q * vi) / (xi * xj + q * disc), 0.0)
            high = np.where(a > 0, (xi * xj + q * disc) / a, np.inf)
        low = np.where(a > 0, low, np.where(xi * xi > q * q * vi, low, 0.0))
        return np.where(self.nobody, np.nan, low), np.where(self.nobody, np.nan, high)

    def bounds_at(self, *gammas: float) -> tuple[FloatArray, ...]:
        """:meth:`bounds` at several ``gammas``: (low, high) of the first, then of the next, ... in one tuple."""
        return tuple(b for gamma in gammas for b in self.bounds(gamma))
