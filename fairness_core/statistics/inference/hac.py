"""The variance of a mean of an autocorrelated series, for many series at once: heteroskedasticity and
autocorrelation consistent (HAC) long-run variances, and normal intervals built on them.

A forecaster's errors at one site are correlated over time (a warm spell is under-forecast for days), so the
variance of a group's mean score is not s²/n but the **long-run variance** over n,

    Var(x̄) ≈ LRV / T,   LRV = Σ_h γ_h = γ_0 + 2 Σ_{h≥1} γ_h,   γ_h = (1/T) Σ_t u_t u_{t+h},  u_t = x_t − x̄,

for T consecutive time points (one value each; several rows at one time point enter as their sum, and then
Var(x̄) = T·LRV(S)/n² with S_t the time point's centred sum and n the rows). The methods of
:func:`long_run_variance`:

``"union"`` (the default, chosen by ``bench/forecasts_coverage.py``; docs/methods.md has the table)
    The larger of the two estimates below, each consistent: the AR(1)-prewhitened kernel estimate holds its level
    under strong AR(1) dependence, the autoregressive sieve under dependence an AR(1) does not describe (a day's
    errors sharing one shift), and neither alone held both (the union of two intervals, as the amount audit
    joins Hall's and Welch's).
``"prewhitened"``
    Andrews & Monahan (*An improved heteroskedasticity and autocorrelation consistent covariance matrix
    estimator*, 1992): fit an AR(1), ρ̂ = γ̂_1/γ̂_0, capped at ±0.97; prewhiten, e_t = u_t − ρ̂ u_{t−1}, whose
    autocovariances are (1 + ρ̂²)γ̂_h − ρ̂(γ̂_{h−1} + γ̂_{h+1}); estimate e's long-run variance with the Bartlett
    kernel, k(h/S) = 1 − h/S, at Andrews' (*Heteroskedasticity and autocorrelation consistent covariance matrix
    estimation*, 1991) automatic bandwidth S = 1.1447·(α̂ T)^(1/3), α̂ = 4φ̂² / ((1 − φ̂)²(1 + φ̂)²), φ̂ e's own
    AR(1) coefficient; recolour, LRV_u = LRV_e / (1 − ρ̂)².
``"ar-sieve"``
    The autoregressive spectral estimate at frequency 0 (Berk, *Consistent autoregressive spectral estimates*,
    1974; den Haan & Levin's VARHAC, 1997, for one series): an AR(p) by Yule–Walker (Levinson–Durbin on γ̂),
    p ≤ P = ⌈12 (T/100)^(1/4)⌉ (Schwert's rule, at most T/3) chosen by AIC, T·log σ̂²_p + 2p; then
    LRV = σ̂²_p / (1 − Σ φ̂_k)², the denominator kept ≥ 0.03.
``"newey-west"``
    The Bartlett kernel on u itself at Andrews' bandwidth (no prewhitening; Newey & West, 1987/1994).
``"iid"``
    γ̂_0 alone: the i.i.d. variance, which undercovers under positive autocorrelation (the benchmark shows it).

The series of many groups lie end to end in one array (``segment`` gives each row's series), so the lag products
are one array operation per lag for all of them; products across two series are masked out. Missing time points
are not modelled: a series is its time points in order, consecutive whatever their spacing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats

FloatArray = npt.NDArray[np.float64]

#: The long-run variance estimators of :func:`long_run_variance`.
HAC_METHODS = ("union", "prewhitened", "ar-sieve", "newey-west", "iid")
#: Andrews & Monahan's cap on the prewhitening coefficient (a unit root would divide by 0).
RHO_CAP = 0.97
#: Up to this many series, lag products are summed series by series (see ``_lag_products``).
SERIES_ONE_BY_ONE = 256
#: Andrews' Bartlett-kernel constant.
BARTLETT_CONSTANT = 1.1447


@dataclass(frozen=True)
class LongRunVariance:
    """Per series (rows) and column: ``lrv`` the long-run variance of the series, ``rho`` the AR(1) coefficient
    used to prewhiten (0 without prewhitening), ``bandwidth`` the Bartlett bandwidth S (lags below S carry weight
    1 − h/S; 0 for the sieve alone and i.i.d.), ``order`` the sieve's AR order (0 without the sieve),
    ``length`` the time points T of each series and ``method``."""

    lrv: FloatArray
    rho: FloatArray
    bandwidth: FloatArray
    order: FloatArray
    length: FloatArray
    method: str


def _segment_sums(values: FloatArray, starts: npt.NDArray[np.intp]) -> FloatArray:
    """Sums of ``values`` rows over each segment k (rows starts[k] … starts[k+1] − 1, cut at the array's end);
    empty segments give 0."""
    size = values.shape[0]
    begins = np.minimum(starts, size)
    ends = np.append(begins[1:], size)
    out = np.zeros((len(starts),) + values.shape[1:])
    nonempty = np.flatnonzero(ends > begins)
    if nonempty.size:
        out[nonempty] = np.add.reduceat(values, begins[nonempty], axis=0)
    return out


def _lag_products(u: FloatArray, segment: npt.NDArray[np.intp], starts: npt.NDArray[np.intp], h: int) -> FloatArray:
    """Σ_t u_t u_{t+h} within each series (rows of ``u`` in series order; ``segment`` the series of each row).

    A few long series (groups) are summed one by one, without temporaries (``einsum``); many short ones (the
    benchmark's draws) in one masked product over all rows."""
    out = np.zeros((len(starts),) + u.shape[1:])
    if h >= u.shape[0]:
        return out
    if len(starts) <= SERIES_ONE_BY_ONE:
        ends = np.append(starts[1:], u.shape[0])
        for k, (s, e) in enumerate(zip(starts.tolist(), ends.tolist())):
            if e - s > h:
                out[k] = np.einsum("ij,ij->j", u[s + h:e], u[s:e - h])
        return out
    prod = u[h:] * u[:-h] if h else u * u
    if h:
        prod[segment[h:] != segment[:-h]] = 0.0
    return _segment_sums(prod, starts)          # a product belongs to the series of its earlier row


def andrews_bandwidth(phi: npt.ArrayLike, length: npt.ArrayLike) -> FloatArray:
    """Andrews' (1991) AR(1) plug-in bandwidth for the Bartlett kernel: S = 1.1447·(α T)^(1/3) with
    α = 4φ² / ((1 − φ)²(1 + φ)²).

    >>> andrews_bandwidth([0.0, 0.5], [400, 400]).round(3).tolist()
    [0.0, 10.217]
    """
    phi, length = np.asarray(phi, dtype=float), np.asarray(length, dtype=float)
    alpha = 4 * phi ** 2 / ((1 - phi) ** 2 * (1 + phi) ** 2)
    return BARTLETT_CONSTANT * np.cbrt(alpha * length)


def sieve_order_limit(length: npt.ArrayLike) -> npt.NDArray[np.intp]:
    """The sieve's largest AR order P = ⌈12 (T/100)^(1/4)⌉, at most T/3 (Schwert's rule).

    >>> sieve_order_limit([200, 2000, 50000]).tolist()
    [15, 26, 57]
    """
    t = np.asarray(length, dtype=float)
    return np.minimum(np.ceil(12 * (t / 100) ** 0.25), np.floor(t / 3)).astype(np.intp)


def _bartlett(gamma: FloatArray, width: FloatArray) -> FloatArray:
    """γ_0 + 2 Σ_{1 ≤ h < S} (1 − h/S) γ_h for autocovariances ``gamma`` (..., lags + 1) and bandwidths S."""
    h = np.arange(gamma.shape[-1])
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(h < width[..., None], 1 - h / width[..., None], 0.0)
    w[..., 0] = 1.0
    return gamma[..., 0] + 2 * (w[..., 1:] * gamma[..., 1:]).sum(axis=-1)


def _ar1_coefficient(gamma: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.clip(np.where(gamma[..., 0] > 0, gamma[..., 1] / gamma[..., 0], 0.0), -RHO_CAP, RHO_CAP)


def _sieve(gamma: FloatArray, length: FloatArray, limit: npt.NDArray[np.intp]) -> tuple[FloatArray, FloatArray]:
    """The AR sieve's long-run variance and order (module docstring), Levinson–Durbin over all series at once."""
    top = gamma.shape[-1] - 1
    t = length[:, None] * np.ones(gamma.shape[:-1])
    sigma = gamma[..., 0].copy()
    phi = np.zeros(gamma.shape)
    best_crit = np.where(sigma > 0, t * np.log(np.where(sigma > 0, sigma, 1.0)), 0.0)
    best_sigma, best_sum, best_order = sigma.copy(), np.zeros(sigma.shape), np.zeros(sigma.shape)
    allowed = limit[:, None] * np.ones(sigma.shape)
    for p in range(1, top + 1):
        with np.errstate(divide="ignore", invalid="ignore"):
            k = (gamma[..., p] - (phi[..., 1:p] * gamma[..., p - 1:0:-1]).sum(axis=-1)) / sigma
        k = np.clip(np.nan_to_num(k), -0.999, 0.999)
        new = phi.copy()
        new[..., p] = k
        new[..., 1:p] = phi[..., 1:p] - k[..., None] * phi[..., p - 1:0:-1]
        phi, sigma = new, sigma * (1 - k * k)
        with np.errstate(divide="ignore", invalid="ignore"):
            crit = t * np.log(sigma) + 2 * p
        better = (crit < best_crit) & (p <= allowed) & (sigma > 0)
        best_crit = np.where(better, crit, best_crit)
        best_sigma = np.where(better, sigma, best_sigma)
        best_sum = np.where(better, phi[..., 1:].sum(axis=-1), best_sum)
        best_order = np.where(better, p, best_order)
    return best_sigma / np.maximum(1 - best_sum, 1 - RHO_CAP) ** 2, best_order


def long_run_variance(u: npt.ArrayLike, segment: npt.ArrayLike, series: int,
                      method: str = "union", bandwidth: float | None = None) -> LongRunVariance:
    """The long-run variance of each column of ``u`` within each series (module docstring).

    ``u``: (rows, columns) centred values (each series' mean removed), the rows of series 0 first, then series 1,
    …, each in time order; ``segment``: each row's series (non-decreasing, 0 … ``series`` − 1); ``bandwidth``: a
    fixed Bartlett bandwidth S in place of Andrews' for ``"newey-west"`` (``bandwidth=11`` is Newey–West with 10
    lags). Returns a :class:`LongRunVariance` of shape (series, columns). A series of one point has LRV 0.

    >>> rng = np.random.default_rng(1)
    >>> e = rng.normal(size=20000)
    >>> x = np.empty_like(e); x[0] = e[0]
    >>> for t in range(1, e.size): x[t] = 0.5 * x[t - 1] + e[t]
    >>> v = long_run_variance((x - x.mean())[:, None], np.zeros(x.size, dtype=int), 1)
    >>> round(float(v.lrv[0, 0]), 1)    # the AR(1)'s LRV is 1 / (1 − 0.5)² = 4; the i.i.d. variance 4/3
    3.8
    """
    if method not in HAC_METHODS:
        raise ValueError(f"unknown long-run variance method {method!r}; expected one of {', '.join(HAC_METHODS)}")
    u = np.asarray(u, dtype=float)
    squeeze = u.ndim == 1
    if squeeze:
        u = u[:, None]
    segment = np.asarray(segment, dtype=np.intp)
    starts = np.searchsorted(segment, np.arange(series)).astype(np.intp)
    length = np.diff(np.append(starts, u.shape[0])).astype(float)
    shape = (series, u.shape[1])
    per_point = np.maximum(length, 1)[:, None]
    gammas = [_lag_products(u, segment, starts, h) / per_point for h in range(3)]
    zeros = np.zeros(shape)
    rho, width, order = zeros, zeros, zeros
    kernel = method in ("union", "prewhitened", "newey-west")
    limit = sieve_order_limit(length) if method in ("union", "ar-sieve") else np.zeros(series, dtype=np.intp)
    if kernel:
        g = np.stack(gammas, axis=-1)
        if method != "newey-west":
            rho = _ar1_coefficient(g)
            g = _prewhitened(g, rho)
        cap = np.maximum(length - 1, 0)[:, None]
        width = np.minimum(andrews_bandwidth(_ar1_coefficient(g), np.broadcast_to(length[:, None], shape))
                           if bandwidth is None or method != "newey-west" else np.full(shape, float(bandwidth)), cap)
    lags = max(int(limit.max()) if limit.size else 0, int(np.ceil(width.max())) + 1 if kernel and width.size else 0)
    gammas += [_lag_products(u, segment, starts, h) / per_point for h in range(3, lags + 1)]
    gamma = np.stack(gammas, axis=-1)
    if method == "iid":
        lrv = gamma[..., 0]
    if kernel:
        lrv = _bartlett(_prewhitened(gamma, rho), width) / (1 - rho) ** 2
    if method in ("union", "ar-sieve"):
        sieve, order = _sieve(gamma[..., :int(limit.max()) + 1] if limit.size else gamma[..., :1], length, limit)
        lrv = sieve if method == "ar-sieve" else np.maximum(lrv, sieve)
    lrv = np.where(length[:, None] > 1, np.maximum(lrv, 0.0), 0.0)
    if method == "ar-sieve":
        rho, width = zeros, zeros
    out = LongRunVariance(lrv, rho, width, order.astype(float), length, method)
    if squeeze:
        out = LongRunVariance(lrv[:, 0], rho[:, 0], width[:, 0], out.order[:, 0], length, method)
    return out


def _prewhitened(gamma: FloatArray, rho: FloatArray) -> FloatArray:
    """Autocovariances of e_t = u_t − ρ u_{t−1} from u's: (1 + ρ²)γ_h − ρ(γ_{h−1} + γ_{h+1}) (γ_{−1} = γ_1; the
    last lag, whose γ_{h+1} is not at hand, is dropped)."""
    r = rho[..., None]
    below = np.concatenate([gamma[..., 1:2], gamma[..., :-2]], axis=-1)
    return (1 + r * r) * gamma[..., :-1] - r * (below + gamma[..., 1:])


def _normal_p(centre: FloatArray, se: FloatArray, null: float, side: str) -> FloatArray:
    """One-sided normal p-values of H0: θ ≤ null ("above") or θ ≥ null ("below"); NaN where ``se`` is."""
    diff = centre - null
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, diff / se, np.where(diff > 0, np.inf, np.where(diff < 0, -np.inf, 0.0)))
    p = stats.norm.sf(z) if side == "above" else stats.norm.cdf(z)
    p = np.where((se == 0) & (diff == 0), 1.0, p)
    return np.where(np.isnan(se) | np.isnan(centre), np.nan, p)


class NormalPairs:
    """Many differences Δ (or values) with an estimate and a standard error each, and normal intervals and
    p-values: the interface the verdicts read (:class:`fairness_core.inference.OFIPairs`'s: ``estimate``,
    ``p_value(null, side)``, ``bounds(gamma)``, ``bounds_at(*gammas)``, ``method``). A NaN standard error is no
    test (NaN bounds and p-values); a zero one is a point (p = 1 at the estimate itself).

    >>> p = NormalPairs(np.array([1.0]), np.array([0.5]), "prewhitened HAC")
    >>> [round(float(b[0]), 3) for b in p.bounds(0.025)], round(float(p.p_value(0.0)[0]), 4)
    ([0.02, 1.98], 0.0455)
    """

    def __init__(self, estimate: npt.ArrayLike, se: npt.ArrayLike, method: str) -> None:
        self.estimate = np.asarray(estimate, dtype=float)
        self.se = np.asarray(se, dtype=float)
        self.size = self.estimate.size
        self.method = np.full(self.size, method).astype(str)

    def p_value(self, null: float = 0.0, side: str = "two-sided") -> FloatArray:
        """p-value of H0: Δ ≤ null (``"above"``), Δ ≥ null (``"below"``) or Δ = null (``"two-sided"``)."""
        if side == "two-sided":
            return np.minimum(1.0, 2 * np.minimum(self.p_value(null, "above"), self.p_value(null, "below")))
        return _normal_p(self.estimate, self.se, null, side)

    def bounds(self, gamma: float) -> tuple[FloatArray, FloatArray]:
        """Lower and upper bounds, each one-sided at level 1 − ``gamma``."""
        z = stats.norm.ppf(1 - gamma)
        return self.estimate - z * self.se, self.estimate + z * self.se

    def bounds_at(self, *gammas: float) -> tuple[FloatArray, ...]:
        """:meth:`bounds` at several ``gammas``: (low, high) of the first, then of the next, … in one tuple."""
        return tuple(b for gamma in gammas for b in self.bounds(gamma))


class LogRatioPairs:
    """Many ratios θ = A_i / A_j of two positive means with HAC variances ``var_i``, ``var_j`` (of the means):
    normal intervals on log θ, whose standard error is √(var_i/A_i² + var_j/A_j²) (the delta method), turned
    back by exp. ``nobody``: pairs whose ratio is undefined (a mean at or below 0): NaN throughout. The interface
    of :class:`fairness_core.inference.DIPairs` (what ``verdicts.ratio_claims`` reads).

    >>> r = LogRatioPairs(np.array([2.0]), np.array([0.01]), np.array([1.0]), np.array([0.0025]))
    >>> round(float(r.estimate[0]), 3), [round(float(b[0]), 3) for b in r.bounds(0.025)]
    (2.0, [1.741, 2.297])
    """

    def __init__(self, a_i: npt.ArrayLike, var_i: npt.ArrayLike, a_j: npt.ArrayLike, var_j: npt.ArrayLike,
                 method: str = "log-ratio HAC") -> None:
        a_i, a_j = np.asarray(a_i, dtype=float), np.asarray(a_j, dtype=float)
        self.nobody = ~((a_i > 0) & (a_j > 0))
        with np.errstate(divide="ignore", invalid="ignore"):
            self.log_estimate = np.where(self.nobody, np.nan, np.log(a_i) - np.log(a_j))
            se = np.sqrt(np.asarray(var_i, dtype=float) / a_i ** 2 + np.asarray(var_j, dtype=float) / a_j ** 2)
        self.se = np.where(self.nobody, np.nan, se)
        self.estimate = np.exp(self.log_estimate)
        self.size = self.estimate.size
        self.method = np.full(self.size, method).astype(str)

    def p_value(self, null: float = 1.0, side: str = "two-sided") -> FloatArray:
        """p-value of H0: θ ≤ null (``"above"``), θ ≥ null (``"below"``) or θ = null (``"two-sided"``)."""
        if side == "two-sided":
            return np.minimum(1.0, 2 * np.minimum(self.p_value(null, "above"), self.p_value(null, "below")))
        return _normal_p(self.log_estimate, self.se, float(np.log(null)), side)

    def bounds(self, gamma: float) -> tuple[FloatArray, FloatArray]:
        """Lower and upper bounds of θ, each one-sided at level 1 − ``gamma``."""
        z = stats.norm.ppf(1 - gamma)
        return np.exp(self.log_estimate - z * self.se), np.exp(self.log_estimate + z * self.se)

    def bounds_at(self, *gammas: float) -> tuple[FloatArray, ...]:
        """:meth:`bounds` at several ``gammas``: (low, high) of the first, then of the next, … in one tuple."""
        return tuple(b for gamma in gammas for b in self.bounds(gamma))


__all__ = ["HAC_METHODS", "LongRunVariance", "LogRatioPairs", "NormalPairs", "andrews_bandwidth",
           "long_run_variance", "sieve_order_limit"]
