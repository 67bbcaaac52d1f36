"""Typed intervals and tests: one pair (:class:`OFIResult`, :class:`DIResult`) and arrays of pairs (:class:`OFIArrays`,
:class:`DIArrays`), each interval at confidence 1 − ``alpha``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import stats

from ..confusion import ConfusionMatrix
from ...common.vocabulary import DEFAULT_ALPHA, check_alpha
from .common import DI_METHODS, MAX_PERMUTATION_CELLS, OFI_METHODS, FloatArray, _check_pair, _log_comb
from .pairs import di_pairs, ofi_pairs

# --------------------------------------------------------------------------- one pair


@dataclass(frozen=True)
class _Interval:
    """What every pair's result holds: the estimate, its interval at confidence ``level`` = 1 − alpha, the
    two-sided p-value and the method used (``"auto"`` resolved)."""

    estimate: float
    ci_low: float
    ci_high: float
    p_value: float
    method: str
    level: float

    @property
    def alpha(self) -> float:
        """The error rate the interval was asked for: 1 − ``level``."""
        return 1 - self.level


@dataclass(frozen=True)
class OFIResult(_Interval):
    """An OFI estimate with its interval and the test of H0: Δ = 0.

    ``estimate`` is the observed OFI = B_i − B_j; ``ci_low``/``ci_high`` the
    interval at confidence ``level`` = 1 − alpha; ``p_value`` two-sided; ``se`` and ``df`` the standard
    error and degrees of freedom behind them (``df`` is inf for a z interval);
    ``method`` the method used (``"auto"`` resolved).
    """

    se: float
    df: float
    n_i: int
    n_j: int
    note: str = ""


@dataclass(frozen=True)
class DIResult(_Interval):
    """A DI = PPR_i / PPR_j estimate with its interval and the test of H0: DI = 1.

    Undefined DI (group j selects nobody) has ``estimate`` NaN and ``note`` saying
    why; the interval can still be informative (``ci_high`` = inf when only group j
    selects nobody), and is NaN when neither group selects anyone.
    """

    note: str = ""


# --------------------------------------------------------------------------- arrays of pairs


class _PairArrays:
    """What :class:`OFIArrays` and :class:`DIArrays` share: the interval's level."""

    alpha: float

    @property
    def level(self) -> float:
        """The interval's confidence level, 1 − ``alpha``."""
        return 1 - self.alpha


@dataclass(frozen=True)
class OFIArrays(_PairArrays):
    """OFI of many pairs: estimates, two-sided p-values of Δ = 0 and the interval at confidence 1 − ``alpha``.

    ``se`` is half the 95 % interval's width over z₀.₉₇₅ for the score method (the t-based methods' own
    standard error otherwise), ``df`` their degrees of freedom (inf for z), ``centre`` the interval's centre,
    ``method`` per pair.
    """

    estimate: FloatArray
    p_value: FloatArray
    se: FloatArray
    df: FloatArray
    centre: FloatArray
    method: npt.NDArray[np.str_]
    ci_low: FloatArray
    ci_high: FloatArray
    alpha: float


@dataclass(frozen=True)
class DIArrays(_PairArrays):
    """DI of many pairs: estimates (NaN where undefined), two-sided p-values of DI = 1 (the interval's dual;
    NaN when nobody is selected in either group), ``method`` per pair and the interval at confidence
    1 − ``alpha``."""

    estimate: FloatArray
    p_value: FloatArray
    method: npt.NDArray[np.str_]
    ci_low: FloatArray
    ci_high: FloatArray
    alpha: float


def ofi_arrays(fp_i: npt.ArrayLike, fn_i: npt.ArrayLike, n_i: npt.ArrayLike,
               fp_j: npt.ArrayLike, fn_j: npt.ArrayLike, n_j: npt.ArrayLike,
               alpha: float = DEFAULT_ALPHA, method: str = "auto") -> OFIArrays:
    """Vectorized OFI intervals (confidence 1 − ``alpha``) and p-values over arrays of pairs (any broadcastable
    shapes), as an :class:`OFIArrays`. ``"permutation"`` is scalar-only (:func:`ofi_test`). For other levels or
    null values use :func:`ofi_pairs`.

    >>> r = ofi_arrays([3, 0], [1, 0], [40, 40], [9, 0], [2, 0], [60, 5000], alpha=0.05)
    >>> r.ci_low.shape, r.method.tolist(), bool(r.ci_low[0] < r.estimate[0] < r.ci_high[0])
    ((2,), ['score', 'score'], True)
    """
    alpha = check_alpha(alpha)
    o = ofi_pairs(fp_i, fn_i, n_i, fp_j, fn_j, n_j, method)
    low95, high95 = o.bounds(0.025)
    se = (high95 - low95) / (2 * stats.norm.isf(0.025))
    df = np.full(o.shape, np.inf)
    centre = (low95 + high95) / 2
    if o._t.size:
        df.ravel()[o._t], se.ravel()[o._t], centre.ravel()[o._t] = o._df, o._se, o._centre
    low, high = o.bounds(alpha / 2)
    return OFIArrays(o.estimate.reshape(o.shape), o.p_value(0.0), se, df, centre, o.method.reshape(o.shape),
                     low, high, alpha)


def di_arrays(sel_i: npt.ArrayLike, n_i: npt.ArrayLike, sel_j: npt.ArrayLike, n_j: npt.ArrayLike,
              alpha: float = DEFAULT_ALPHA, method: str = "auto") -> DIArrays:
    """Vectorized DI intervals (confidence 1 − ``alpha``) and p-values over arrays of pairs; ``sel`` = predicted
    positives TP + FP. A :class:`DIArrays`. For other levels or null values use :func:`di_pairs`."""
    alpha = check_alpha(alpha)
    d = di_pairs(sel_i, n_i, sel_j, n_j, method)
    low, high = d.bounds(alpha / 2)
    return DIArrays(d.estimate.reshape(d.shape), d.p_value(1.0), d.method.reshape(d.shape), low, high, alpha)


def di_within(sel_i: npt.ArrayLike, n_i: npt.ArrayLike, sel_j: npt.ArrayLike, n_j: npt.ArrayLike,
              alpha: float, band: tuple[float, float], method: str = "auto") -> npt.NDArray[np.bool_]:
    """Whether DI's interval at confidence 1 − ``alpha`` lies inside ``band`` (the equivalence claim), per pair.
    False where nobody is selected in either group."""
    alpha = check_alpha(alpha)
    low, high = di_pairs(sel_i, n_i, sel_j, n_j, method).bounds(alpha / 2)
    with np.errstate(invalid="ignore"):
        return (low >= band[0]) & (high <= band[1])


# --------------------------------------------------------------------------- one pair: the tests


def permutation_p_value(cm_i: ConfusionMatrix, cm_j: ConfusionMatrix) -> float:
    """Exact conditional two-sided p-value of OFI = 0 under the strong null (both groups share one
    distribution of d), twice the smaller tail of FP_s − FN_s for the smaller group s given the pooled counts.

    Raises ValueError when the enumeration would exceed :data:`MAX_PERMUTATION_CELLS` outcomes.
    """
    small, other = (cm_i, cm_j) if cm_i.n <= cm_j.n else (cm_j, cm_i)
    n_plus, n_minus = small.fp + other.fp, small.fn + other.fn
    n_total = small.n + other.n
    n_zero = n_total - n_plus - n_minus
    k = small.n
    xs = np.arange(max(0, k - n_minus - n_zero), min(k, n_plus) + 1)
    ys = np.arange(0, min(k, n_minus) + 1)
    if xs.size * ys.size > MAX_PERMUTATION_CELLS:
        raise ValueError(f"the exact permutation p-value would enumerate {xs.size * ys.size:,} outcomes "
                         f"(limit {MAX_PERMUTATION_CELLS:,}); use method='adjusted'")
    x, y = np.meshgrid(xs, ys, indexing="ij")
    z = k - x - y
    ok = (z >= 0) & (z <= n_zero)
    x, y, z = x[ok], y[ok], z[ok]
    log_p = (_log_comb(n_plus, x) + _log_comb(n_minus, y) + _log_comb(n_zero, z) - _log_comb(n_total, k))
    prob = np.exp(log_p)
    stat = x - y
    observed = small.fp - small.fn
    lower = prob[stat <= observed].sum()
    upper = prob[stat >= observed].sum()
    return float(min(1.0, 2 * min(lower, upper)))


def ofi_test(cm_i: ConfusionMatrix, cm_j: ConfusionMatrix, alpha: float = DEFAULT_ALPHA,
             method: Literal["auto", "score", "adjusted", "wald", "permutation"] = "auto") -> OFIResult:
    """Interval for Δ = OFI at confidence 1 − ``alpha`` and the two-sided test of H0: Δ = 0, both groups
    treated as samples.

    Parameters
    ----------
    cm_i, cm_j : the two groups' confusion matrices (non-empty).
    alpha : the error rate, in (0, 0.5): the interval is at confidence 1 − alpha
        (:func:`~fairness_core.vocabulary.check_alpha`).
    method : see the package docstring; ``"auto"`` is ``"score"``.

    Examples
    --------
    >>> from fairness_core import ConfusionMatrix
    >>> r = ofi_test(ConfusionMatrix(1, 0, 0, 5), ConfusionMatrix(7, 0, 1, 10))
    >>> round(r.estimate, 4), round(r.p_value, 2) > 0.05, r.level
    (-0.0556, True, 0.95)
    """
    _check_pair(cm_i, cm_j, method, OFI_METHODS, "OFI")
    a = check_alpha(alpha)
    core = "score" if method == "permutation" else method
    r = ofi_arrays(cm_i.fp, cm_i.fn, cm_i.n, cm_j.fp, cm_j.fn, cm_j.n, a, core)
    p, used, note = float(r.p_value), str(r.method), ""
    if method == "permutation":
        p = permutation_p_value(cm_i, cm_j)
        used = "permutation"
        note = ("exact conditional p-value under the strong null (identical outcome distributions); "
                "interval from the score method")
    return OFIResult(float(r.estimate), float(r.ci_low), float(r.ci_high), p, used, 1 - a,
                     float(r.se), float(r.df), cm_i.n, cm_j.n, note)


def di_interval(cm_i: ConfusionMatrix, cm_j: ConfusionMatrix, alpha: float = DEFAULT_ALPHA,
                method: Literal["auto", "score", "exact"] = "auto") -> DIResult:
    """Interval for DI = PPR_i / PPR_j at confidence 1 − ``alpha`` and the two-sided test of H0: DI = 1.

    Examples
    --------
    >>> from fairness_core import ConfusionMatrix
    >>> d = di_interval(ConfusionMatrix(1, 0, 0, 5), ConfusionMatrix(7, 0, 1, 10))
    >>> round(d.estimate, 3), d.method, d.ci_low < d.estimate < d.ci_high
    (0.375, 'exact', True)
    >>> di_interval(ConfusionMatrix(0, 1, 0, 5), ConfusionMatrix(0, 7, 0, 11)).note
    'neither group has predicted positives, 0/0'
    """
    _check_pair(cm_i, cm_j, method, DI_METHODS, "DI")
    a = check_alpha(alpha)
    r = di_arrays(cm_i.predicted_positives, cm_i.n, cm_j.predicted_positives, cm_j.n, a, method)
    note = ""
    if cm_j.predicted_positives == 0:
        note = ("neither group has predicted positives, 0/0" if cm_i.predicted_positives == 0
                else "group j has no predicted positives, P^_j = 0")
    return DIResult(float(r.estimate), float(r.ci_low), float(r.ci_high), float(r.p_value), str(r.method),
                    1 - a, note)
