"""Uncertainty of a pairwise verdict: intervals and tests for OFI and DI when both groups are samples.

Per individual, d = ŷ − y is −1 (a false negative), 0 (TP or TN) or +1 (a false
positive), so a group's marginal benefit B = (FP − FN)/n is the mean of d and
OFI = B_i − B_j estimates Δ = (π_FP − π_FN)_i − (π_FP − π_FN)_j (docs/methods.md).
d has variance v = π_FP + π_FN − (π_FP − π_FN)² per individual.

OFI methods (:data:`OFI_METHODS`), judged by their *exact* coverage (every outcome of both
groups' multinomials enumerated; ``bench/inference_coverage.py`` and ``docs/methods.md``):

``"score"``
    MOVER-D (Newcombe's method of variance estimates recovery) for B_i − B_j from each
    group's score limits for B = π_FP − π_FN. B is a difference of two cells of one
    multinomial — the paired-difference structure of Tango's score interval — so each
    group's limits invert Tango's score test (variance at the constrained maximum-likelihood
    estimate), with a continuity correction of :data:`SCORE_CC` counts. Small groups without
    errors get the width their size allows (0 errors in 40 rows: B within about ±0.09), not
    a width borrowed from a pseudo-count. Exact coverage ≥ 93 % at 95 % with each one-sided
    miss ≤ 3.5 % over a grid of groups from 5 to 5,000 rows with rare, frequent, one-kind and
    no errors.
``"adjusted"``
    Pseudo-counts of ½ false positive, ½ false negative and one correct prediction per group
    (Agresti–Min's paired-difference adjustment), then Welch's t. Kept for reference: its
    exact coverage falls to 0.87 for a small group with rare errors of one kind against an
    error-free group.
``"wald"``
    The asymptotic interval B̂_i − B̂_j ± z·sqrt(v̂_i/n_i + v̂_j/n_j).
``"permutation"``
    The exact conditional p-value: given the pooled counts of FP, FN and correct
    predictions, group i's counts are multivariate hypergeometric under the *strong*
    null that both groups share one outcome distribution. Exact for that null (tests
    compare it with brute-force enumeration of every assignment) but not for the weak
    null Δ = 0 with different spreads, where its size can be far above α; the interval
    is the score one. Offered for reference, never chosen by ``"auto"``.
``"auto"``
    ``"score"`` for every pair.

Every p-value is the dual of its interval, at every level and null value (:func:`ofi_pairs`,
:func:`di_pairs`): p < γ exactly when the bound at one-sided level 1 − γ excludes the null, so a
verdict and the interval shown beside it never disagree.

DI methods (:data:`DI_METHODS`) for the ratio of selection rates PPR_i / PPR_j:

``"score"``
    Miettinen–Nurminen score interval for a ratio of two independent proportions
    (the score test inverted; variance with the N/(N − 1) correction), and the score
    test of DI = 1; identical to statsmodels' ``confint_proportions_2indep(...,
    method="score", compare="ratio")``, vectorized here over all pairs.
``"exact"``
    MOVER-R (Donner & Zou) built from Clopper–Pearson limits of each rate, and as its
    test the dual of that interval (p < α exactly when the interval excludes the null),
    so the test and the interval are one procedure. Conservative; the score interval
    covers only 90 % at n = 5 when a rate is near 0.
``"auto"``
    ``"score"`` when both groups have at least :data:`SMALL_N_DI` rows, else ``"exact"``.

>>> from fairness_core import ConfusionMatrix, inference
>>> r = inference.ofi_test(ConfusionMatrix(5, 1, 9, 20), ConfusionMatrix(30, 12, 4, 60))
>>> round(r.estimate, 3), r.method, r.ci_low < r.estimate < r.ci_high
(0.304, 'score', True)
>>> d = inference.di_interval(ConfusionMatrix(5, 1, 9, 20), ConfusionMatrix(30, 12, 4, 60))
>>> round(d.estimate, 3), d.method
(1.247, 'score')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import special, stats

from .confusion import ConfusionMatrix

FloatArray = npt.NDArray[np.float64]

OFI_METHODS = ("auto", "score", "adjusted", "wald", "permutation")
DI_METHODS = ("auto", "score", "exact")
ADJUSTMENTS = ("holm", "bh", "none")
#: How an adjusted p-value is introduced in text ("Holm-adjusted p = ...").
ADJUSTED_LABEL = {"holm": "Holm-adjusted ", "bh": "BH-adjusted ", "none": ""}

#: "auto" uses the score interval for DI when both groups have at least this many rows.
SMALL_N_DI = 30
#: OFI lies in [−2, 2]; intervals are clipped to it.
OFI_RANGE = 2.0
#: Pseudo-counts of the adjusted OFI method: FP, FN, correct predictions.
PSEUDO_FP, PSEUDO_FN, PSEUDO_CORRECT = 0.5, 0.5, 1.0
#: Largest number of (FP, FN) outcomes the exact permutation p-value enumerates.
MAX_PERMUTATION_CELLS = 4_000_000


def _check_level(level: float) -> None:
    if not (isinstance(level, (int, float)) and 0.5 <= level < 1):
        raise ValueError(f"level must be in [0.5, 1), got {level!r}")


def _check_method(method: str, allowed: tuple[str, ...], what: str) -> None:
    if method not in allowed:
        raise ValueError(f"unknown {what} method {method!r}; expected one of {', '.join(allowed)}")


def _check_pair(cm_i: ConfusionMatrix, cm_j: ConfusionMatrix, level: float, method: str,
                allowed: tuple[str, ...], what: str) -> None:
    """Validate a scalar call: the method, the level, and two non-empty confusion matrices."""
    _check_method(method, allowed, what)
    _check_level(level)
    for label, cm in (("i", cm_i), ("j", cm_j)):
        if not isinstance(cm, ConfusionMatrix):
            raise ValueError(f"cm_{label} must be a ConfusionMatrix, got {type(cm).__name__}")
        if cm.n == 0:
            raise ValueError(f"group {label} is empty (n = 0): {what} is undefined")


# --------------------------------------------------------------------------- OFI


@dataclass(frozen=True)
class OFIResult:
    """An OFI estimate with its interval and the test of H0: Δ = 0.

    ``estimate`` is the observed OFI = B_i − B_j; ``ci_low``/``ci_high`` the
    interval at ``level``; ``p_value`` two-sided; ``se`` and ``df`` the standard
    error and degrees of freedom behind them (``df`` is inf for a z interval);
    ``method`` the method used (``"auto"`` resolved).
    """

    estimate: float
    ci_low: float
    ci_high: float
    p_value: float
    method: str
    level: float
    se: float
    df: float
    n_i: int
    n_j: int
    note: str = ""


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


def _ofi_parts(fp: FloatArray, fn: FloatArray, n: FloatArray, pseudo: bool) -> tuple[FloatArray, FloatArray]:
    """(B, Var(B̂)) of one group, with or without the pseudo-counts."""
    if pseudo:
        m = n + PSEUDO_FP + PSEUDO_FN + PSEUDO_CORRECT
        pp, pm = (fp + PSEUDO_FP) / m, (fn + PSEUDO_FN) / m
    else:
        m = n
        pp, pm = fp / m, fn / m
    b = pp - pm
    return b, np.maximum(pp + pm - b * b, 0.0) / m


def ofi_arrays(fp_i: npt.ArrayLike, fn_i: npt.ArrayLike, n_i: npt.ArrayLike,
               fp_j: npt.ArrayLike, fn_j: npt.ArrayLike, n_j: npt.ArrayLike,
               levels: tuple[float, ...] = (0.95,), method: str = "auto") -> dict[str, FloatArray]:
    """Vectorized OFI intervals and p-values over arrays of pairs (any broadcastable shapes).

    Returns a dict with ``estimate``, ``p_value`` (H0: Δ = 0, two-sided), ``se`` (half the 95 %
    interval's width over z₀.₉₇₅ for the score method), ``df``, ``centre``, ``method`` (per pair) and
    ``ci_low_{level}``/``ci_high_{level}`` for each requested level. ``"permutation"`` is scalar-only
    (:func:`ofi_test`). For other levels or null values use :func:`ofi_pairs`.
    """
    for level in levels:
        _check_level(level)
    o = ofi_pairs(fp_i, fn_i, n_i, fp_j, fn_j, n_j, method)
    low95, high95 = o.bounds(0.025)
    se = (high95 - low95) / (2 * stats.norm.isf(0.025))
    df = np.full(o.shape, np.inf)
    centre = (low95 + high95) / 2
    if o._t.size:
        df.ravel()[o._t], se.ravel()[o._t], centre.ravel()[o._t] = o._df, o._se, o._centre
    out: dict[str, FloatArray] = {"estimate": o.estimate.reshape(o.shape), "p_value": o.p_value(0.0), "se": se,
                                  "df": df, "centre": centre, "method": o.method.reshape(o.shape)}
    for level in levels:
        out[f"ci_low_{level:g}"], out[f"ci_high_{level:g}"] = o.bounds((1 - level) / 2)
    return out


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


def _log_comb(n: npt.ArrayLike, k: npt.ArrayLike) -> FloatArray:
    n, k = np.asarray(n, dtype=float), np.asarray(k, dtype=float)
    return special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)


def ofi_test(cm_i: ConfusionMatrix, cm_j: ConfusionMatrix, level: float = 0.95,
             method: Literal["auto", "score", "adjusted", "wald", "permutation"] = "auto") -> OFIResult:
    """Interval for Δ = OFI and the two-sided test of H0: Δ = 0, both groups treated as samples.

    Parameters
    ----------
    cm_i, cm_j : the two groups' confusion matrices (non-empty).
    level : confidence level of the interval, in [0.5, 1).
    method : see the module docstring; ``"auto"`` is ``"score"``.

    Examples
    --------
    >>> from fairness_core import ConfusionMatrix
    >>> r = ofi_test(ConfusionMatrix(1, 0, 0, 5), ConfusionMatrix(7, 0, 1, 10))
    >>> round(r.estimate, 4), round(r.p_value, 2) > 0.05
    (-0.0556, True)
    """
    _check_pair(cm_i, cm_j, level, method, OFI_METHODS, "OFI")
    core = "score" if method == "permutation" else method
    r = ofi_arrays(cm_i.fp, cm_i.fn, cm_i.n, cm_j.fp, cm_j.fn, cm_j.n, (level,), core)
    p, used, note = float(r["p_value"]), str(r["method"]), ""
    if method == "permutation":
        p = permutation_p_value(cm_i, cm_j)
        used = "permutation"
        note = ("exact conditional p-value under the strong null (identical outcome distributions); "
                "interval from the score method")
    return OFIResult(float(r["estimate"]), float(r[f"ci_low_{level:g}"]), float(r[f"ci_high_{level:g}"]), p,
                     used, level, float(r["se"]), float(r["df"]), cm_i.n, cm_j.n, note)


# --------------------------------------------------------------------------- DI


@dataclass(frozen=True)
class DIResult:
    """A DI = PPR_i / PPR_j estimate with its interval and the test of H0: DI = 1.

    Undefined DI (group j selects nobody) has ``estimate`` NaN and ``note`` saying
    why; the interval can still be informative (``ci_high`` = inf when only group j
    selects nobody), and is NaN when neither group selects anyone.
    """

    estimate: float
    ci_low: float
    ci_high: float
    p_value: float
    method: str
    level: float
    note: str = ""


def _mn_z(x1: FloatArray, n1: FloatArray, x2: FloatArray, n2: FloatArray, theta: FloatArray) -> FloatArray:
    """Miettinen–Nurminen score statistic for H0: p1/p2 = theta (decreasing in theta)."""
    big_n = n1 + n2
    a = big_n * theta
    b = -(n1 * theta + x1 + n2 + x2 * theta)
    c = x1 + x2
    disc = np.sqrt(np.maximum(b * b - 4 * a * c, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        p2 = np.where(a > 0, (-b - disc) / (2 * a), 0.0)
        p1 = theta * p2
        var = (p1 * (1 - p1) / n1 + theta ** 2 * p2 * (1 - p2) / n2) * big_n / (big_n - 1)
        diff = x1 / n1 - theta * x2 / n2
        return np.where(var > 0, diff / np.sqrt(var), np.sign(diff) * np.inf)


def _score_bounds(x1: FloatArray, n1: FloatArray, x2: FloatArray, n2: FloatArray, q: float,
                  iterations: int = 60, tol: float = 1e-9) -> tuple[FloatArray, FloatArray]:
    """Roots of z(θ) = ±q in log θ, all pairs and both bounds at once, by the Illinois variant of
    regula falsi on the bracket [1e-10, 1e10] (about a dozen evaluations instead of bisection's 30+)."""
    shape = x1.shape
    xx1, nn1, xx2, nn2 = (np.concatenate([a.ravel(), a.ravel()]) for a in (x1, n1, x2, n2))
    target = np.concatenate([np.full(x1.size, q), np.full(x1.size, -q)])

    def f(u: FloatArray, idx: npt.NDArray[np.intp]) -> FloatArray:
        return np.clip(_mn_z(xx1[idx], nn1[idx], xx2[idx], nn2[idx], np.exp(u)) - target[idx], -1e6, 1e6)

    every = np.arange(target.size)
    # Bracket around the Katz log interval (0.5 added to each count), widened to [1e-10, 1e10]
    # wherever it fails to bracket the root: z decreases in θ, so f(a) >= 0 >= f(b).
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = np.log((xx1 + 0.5) / (nn1 + 0.5)) - np.log((xx2 + 0.5) / (nn2 + 0.5))
        se = np.sqrt(1 / (xx1 + 0.5) - 1 / (nn1 + 0.5) + 1 / (xx2 + 0.5) - 1 / (nn2 + 0.5))
    guess = np.clip(log_ratio - np.sign(target) * abs(q) * se, -22.0, 22.0)
    a, b = np.clip(guess - 0.5 - se, -23.0, 23.0), np.clip(guess + 0.5 + se, -23.0, 23.0)
    fa, fb = f(a, every), f(b, every)
    wide_a, wide_b = fa < 0, fb > 0
    a[wide_a], b[wide_b] = -23.0, 23.0
    fa[wide_a], fb[wide_b] = f(a[wide_a], every[wide_a]), f(b[wide_b], every[wide_b])
    root = np.where(fa <= 0, a, np.where(fb >= 0, b, np.nan))
    active = np.flatnonzero(np.isnan(root))
    side = np.zeros(target.shape, dtype=np.int8)
    for _ in range(iterations):
        if active.size == 0:
            break
        aa, bb, ffa, ffb = a[active], b[active], fa[active], fb[active]
        c = bb - ffb * (bb - aa) / (ffb - ffa)
        c = np.where(np.isfinite(c) & (c > aa) & (c < bb), c, 0.5 * (aa + bb))
        fc = f(c, active)
        left = fc > 0                      # root lies in [c, b]
        a[active] = np.where(left, c, aa)
        fa[active] = np.where(left, fc, np.where(side[active] == -1, ffa / 2, ffa))
        b[active] = np.where(left, bb, c)
        fb[active] = np.where(left, np.where(side[active] == 1, ffb / 2, ffb), fc)
        side[active] = np.where(left, 1, -1)
        done = (np.abs(fc) < 1e-12) | (b[active] - a[active] < tol)
        root[active[done]] = c[done]
        active = active[~done]
    root[active] = 0.5 * (a[active] + b[active])
    theta = np.exp(root)
    low, high = theta[: x1.size].reshape(shape), theta[x1.size:].reshape(shape)
    low = np.where(x1 == 0, 0.0, low)
    high = np.where(x2 == 0, np.inf, high)
    return low, high


def _mover_ratio(p1: FloatArray, p2: FloatArray, l1: FloatArray, u1: FloatArray, l2: FloatArray, u2: FloatArray,
                 zero1: npt.NDArray[np.bool_], zero2: npt.NDArray[np.bool_]) -> tuple[FloatArray, FloatArray]:
    """MOVER-R bounds of p1/p2 from each rate's limits (Donner & Zou 2012); ``zero1``/``zero2``: no selections."""
    with np.errstate(divide="ignore", invalid="ignore"):
        # Rationalized (A − √(A² − B)) / D = B / (D·(A + √(A² − B))): no 0/0 when u2 reaches 2·p2.
        low = l1 * (2 * p1 - l1) / (
            p1 * p2 + np.sqrt(np.maximum((p1 * p2) ** 2 - l1 * u2 * (2 * p1 - l1) * (2 * p2 - u2), 0)))
        high = (p1 * p2 + np.sqrt(np.maximum((p1 * p2) ** 2 - u1 * l2 * (2 * p1 - u1) * (2 * p2 - l2), 0))) / (
            l2 * (2 * p2 - l2))
        low = np.where(zero1, 0.0, np.where(zero2, l1 / u2, low))
        high = np.where(zero2, np.inf, np.where(zero1, u1 / np.maximum(l2, 1e-300), high))
    return np.maximum(low, 0.0), high


def di_methods_auto(n_i: npt.ArrayLike, n_j: npt.ArrayLike) -> npt.NDArray[np.str_]:
    """What ``method="auto"`` picks for DI: ``"score"`` or ``"exact"``."""
    n_i, n_j = np.asarray(n_i), np.asarray(n_j)
    return np.where((n_i >= SMALL_N_DI) & (n_j >= SMALL_N_DI), "score", "exact")


def di_arrays(sel_i: npt.ArrayLike, n_i: npt.ArrayLike, sel_j: npt.ArrayLike, n_j: npt.ArrayLike,
              levels: tuple[float, ...] = (0.95,), method: str = "auto") -> dict[str, FloatArray]:
    """Vectorized DI intervals and p-values over arrays of pairs; ``sel`` = predicted positives TP + FP.

    Returns ``estimate`` (NaN where undefined), ``p_value`` (H0: DI = 1, the dual of the interval; NaN
    when nobody is selected in either group), ``method`` and ``ci_low_{level}``/``ci_high_{level}``.
    For other levels or null values use :func:`di_pairs`.
    """
    for level in levels:
        _check_level(level)
    d = di_pairs(sel_i, n_i, sel_j, n_j, method)
    out: dict[str, FloatArray] = {"estimate": d.estimate.reshape(d.shape), "p_value": d.p_value(1.0),
                                  "method": d.method.reshape(d.shape)}
    for level in levels:
        out[f"ci_low_{level:g}"], out[f"ci_high_{level:g}"] = d.bounds((1 - level) / 2)
    return out


def di_within(sel_i: npt.ArrayLike, n_i: npt.ArrayLike, sel_j: npt.ArrayLike, n_j: npt.ArrayLike,
              level: float, band: tuple[float, float], method: str = "auto") -> npt.NDArray[np.bool_]:
    """Whether DI's interval at ``level`` lies inside ``band`` (the equivalence claim), per pair.
    False where nobody is selected in either group."""
    _check_level(level)
    low, high = di_pairs(sel_i, n_i, sel_j, n_j, method).bounds((1 - level) / 2)
    with np.errstate(invalid="ignore"):
        return (low >= band[0]) & (high <= band[1])


def di_interval(cm_i: ConfusionMatrix, cm_j: ConfusionMatrix, level: float = 0.95,
                method: Literal["auto", "score", "exact"] = "auto") -> DIResult:
    """Interval for DI = PPR_i / PPR_j and the two-sided test of H0: DI = 1.

    Examples
    --------
    >>> from fairness_core import ConfusionMatrix
    >>> d = di_interval(ConfusionMatrix(1, 0, 0, 5), ConfusionMatrix(7, 0, 1, 10))
    >>> round(d.estimate, 3), d.method, d.ci_low < d.estimate < d.ci_high
    (0.375, 'exact', True)
    >>> di_interval(ConfusionMatrix(0, 1, 0, 5), ConfusionMatrix(0, 7, 0, 11)).note
    'neither group has predicted positives, 0/0'
    """
    _check_pair(cm_i, cm_j, level, method, DI_METHODS, "DI")
    r = di_arrays(cm_i.predicted_positives, cm_i.n, cm_j.predicted_positives, cm_j.n, (level,), method)
    note = ""
    if cm_j.predicted_positives == 0:
        note = ("neither group has predicted positives, 0/0" if cm_i.predicted_positives == 0
                else "group j has no predicted positives, P^_j = 0")
    return DIResult(float(r["estimate"]), float(r[f"ci_low_{level:g}"]), float(r[f"ci_high_{level:g}"]),
                    float(r["p_value"]), str(r["method"]), level, note)


# --------------------------------------------------------------------------- dual bounds of many pairs

#: Per-group one-sided limits are tabulated at z_k = k·Z_STEP, k = 0 … Z_MAX/Z_STEP; a pair's bound is linear in
#: z between grid points, so each p-value is exactly the dual of its interval (p < γ ⟺ the bound at one-sided
#: level γ excludes the null value). p-values below the normal tail at Z_MAX are reported at that floor.
Z_STEP, Z_MAX = 0.05, 8.0
_Z_GRID = np.arange(0.0, Z_MAX + Z_STEP / 2, Z_STEP)
_K = _Z_GRID.size - 1
#: The smallest one-sided p-value the tables resolve (the normal tail beyond Z_MAX, about 6.2e-16).
P_FLOOR = float(stats.norm.sf(Z_MAX))
#: Continuity correction of the per-group score limits for B, in counts: the smallest of 0, ¼ and ½ whose
#: exact one-sided misses stay within 0.035 at nominal 0.025 on the coverage grid (docs/methods.md).
SCORE_CC = 0.25


def _tango_var(fp: FloatArray, fn: FloatArray, n: FloatArray, d: FloatArray) -> FloatArray:
    """Var(FP − FN) under H0: π_FP − π_FN = d at the constrained maximum-likelihood estimate (Tango's score
    statistic for a difference of two cells of one multinomial: the paired-difference structure)."""
    w = -fp - fn + (2 * n - fp + fn) * d
    x = (-w + np.sqrt(np.maximum(w * w + 8 * n * fn * d * (1 - d), 0.0))) / (4 * n)
    x = np.clip(x, np.maximum(0.0, -d), np.maximum((1 - d) / 2, 0.0))
    return np.maximum(n * (2 * x + d - d * d), 0.0)


def _b_limits(fp: FloatArray, fn: FloatArray, n: FloatArray, z: FloatArray,
              iterations: int = 38) -> tuple[FloatArray, FloatArray]:
    """One-sided score limits of B = π_FP − π_FN for groups at normal quantiles ``z`` (broadcast together).

    The lower limit is the smallest d with (FP − FN − cc − n·d) ≤ z·sd(d), the upper the largest d with
    (FP − FN + cc − n·d) ≥ −z·sd(d), sd from :func:`_tango_var`, cc = :data:`SCORE_CC`. The statistic is
    monotone in d and sd(d) ≤ √n, so each limit lies within cc/n + z/√n ≤ 3.7 of B̂: bisection there (38
    halvings leave under 2e-11).
    """
    fp, fn, n, z = np.broadcast_arrays(fp, fn, n, z)
    diff = fp - fn
    est = diff / n
    reach = SCORE_CC / n + z / np.sqrt(n) + 1e-12
    lo_a, lo_b = np.maximum(est - reach, -1.0), est.copy()
    hi_a, hi_b = est.copy(), np.minimum(est + reach, 1.0)
    for _ in range(iterations):
        m = (lo_a + lo_b) / 2
        num = diff - SCORE_CC - n * m
        ok = (num > 0) & (num * num > z * z * _tango_var(fp, fn, n, m))   # m is still below the limit
        lo_a, lo_b = np.where(ok, m, lo_a), np.where(ok, lo_b, m)
        m = (hi_a + hi_b) / 2
        num = diff + SCORE_CC - n * m
        ok = (num < 0) & (num * num > z * z * _tango_var(fp, fn, n, m))   # m is already above the limit
        hi_a, hi_b = np.where(ok, hi_a, m), np.where(ok, m, hi_b)
    return lo_a, hi_b


def cell_difference_limits(x: npt.ArrayLike, y: npt.ArrayLike, n: npt.ArrayLike,
                           z: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """One-sided score limits, at normal quantiles ``z``, of π_x − π_y, the difference of two cells of one
    multinomial of ``n`` rows with counts ``x`` and ``y``: a group's B = π_FP − π_FN, or the difference
    between two models' selection rates on the same individuals (x: selected by the first only, y: by the
    second only). Tango's score limits with the continuity correction :data:`SCORE_CC` (see
    :func:`_b_limits`), whose exact coverage docs/methods.md reports.

    >>> low, high = cell_difference_limits(0, 0, 40, 1.96)    # no discordant row among 40
    >>> bool(low[()] < 0 < high[()]) and bool(high[()] > 0.05)
    True
    """
    arrays = [np.asarray(v, dtype=float) for v in (x, y, n, z)]
    return _b_limits(*arrays)


def _cp_limits(x: FloatArray, n: FloatArray, z: FloatArray) -> tuple[FloatArray, FloatArray]:
    """One-sided Clopper–Pearson limits of x/n at normal quantiles ``z`` (broadcast together)."""
    x, n, z = np.broadcast_arrays(x, n, z)
    g = stats.norm.sf(z)
    with np.errstate(invalid="ignore"):
        low = np.where(x <= 0, 0.0, special.betaincinv(np.maximum(x, 1e-300), n - x + 1, g))
        high = np.where(x >= n, 1.0, special.betaincinv(x + 1, np.maximum(n - x, 1e-300), 1 - g))
    return low, high


class _Limits:
    """Each distinct group's one-sided limits at the grid's z values: tabulated once when the groups are few
    against the pairs (an audit's verdicts), else computed for the groups and grid points asked for (a
    simulation, where nearly every pair brings two new groups)."""

    def __init__(self, limits, keys: FloatArray, pairs: int) -> None:  # type: ignore[no-untyped-def]
        self.limits, self.keys = limits, keys
        self.table = keys.shape[0] * _Z_GRID.size <= max(24 * pairs, 400_000)
        if self.table:
            low, high = limits(*(c[:, None] for c in keys.T), _Z_GRID[None, :])
            self.low, self.high = low.ravel(), high.ravel()

    def __call__(self, groups: npt.NDArray[np.intp], k: npt.NDArray[np.intp]) -> tuple[FloatArray, FloatArray]:
        if self.table:
            at = groups * _Z_GRID.size + k
            return self.low[at], self.high[at]
        return self.limits(*(c[groups] for c in self.keys.T), _Z_GRID[k])


def _group_index(*columns: FloatArray) -> tuple[FloatArray, npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """Distinct groups among both sides of the pairs: (rows of distinct values, index of side i, of side j).
    ``columns`` are the i-side columns followed by the j-side ones."""
    half = len(columns) // 2
    side_i = np.stack([c.ravel() for c in columns[:half]], axis=1)
    side_j = np.stack([c.ravel() for c in columns[half:]], axis=1)
    both = np.concatenate([side_i, side_j])
    base = float(both.max(initial=0)) + 1
    if base ** both.shape[1] < 2 ** 52:      # one exact float key per row: a 1-D unique is far faster
        code = np.zeros(both.shape[0])
        for column in both.T:
            code = code * base + column
        _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
        keys = both[first]
    else:
        keys, inverse = np.unique(both, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    return keys, inverse[: side_i.shape[0]], inverse[side_i.shape[0]:]


class _GridBounds:
    """Lower and upper bounds of many pairs as functions of z, given at the grid indices by ``at(k, rows, side)``
    (the lower and upper bound of those rows at grid index k; ``side`` "low" or "high" may leave the other
    one out), linear in z between grid points.
    The lower bound falls and the upper rises with z."""

    def __init__(self, at, size: int, log: bool = False) -> None:  # type: ignore[no-untyped-def]
        """``log``: the bounds are positive (a ratio) and linear in z on the log scale, so that swapping the
        two groups gives exactly reciprocal bounds and the same p-values."""
        self.size, self.log = size, log
        if log:
            def log_at(k, rows, side="both"):  # type: ignore[no-untyped-def]
                with np.errstate(divide="ignore"):
                    return tuple(None if b is None else np.log(b) for b in at(k, rows, side))
            self.at = log_at
        else:
            self.at = at

    def bounds(self, gamma: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Lower and upper bounds, each one-sided at level 1 − ``gamma`` (a scalar or one value per pair)."""
        z_asked = np.broadcast_to(stats.norm.isf(np.asarray(gamma, dtype=float)), (self.size,))
        z = np.clip(z_asked, 0.0, Z_MAX)
        k = np.minimum(np.floor(z / Z_STEP).astype(np.intp), _K - 1)
        t = z / Z_STEP - k
        rows = np.arange(self.size)
        lo0, hi0 = self.at(k, rows)
        lo1, hi1 = self.at(k + 1, rows)
        with np.errstate(invalid="ignore"):      # an infinite bound (DI with P̂_j = 0) stays infinite
            low = np.where((lo0 == lo1) | (t == 0), lo0, lo0 + t * (lo1 - lo0))
            high = np.where((hi0 == hi1) | (t == 0), hi0, hi0 + t * (hi1 - hi0))
        # Past the grid (a level beyond 1 − P_FLOOR) the tables cannot say: no bound, so no claim.
        beyond = z_asked > Z_MAX
        low, high = np.where(beyond, -np.inf, low), np.where(beyond, np.inf, high)
        return (np.exp(low), np.exp(high)) if self.log else (low, high)

    def p_value(self, null: npt.ArrayLike, side: str) -> FloatArray:
        """One-sided p-value, the dual of :meth:`bounds`: ``side="above"`` tests H0: θ ≤ null (small when the
        lower bound lies above ``null``), ``"below"`` H0: θ ≥ null. At most 0.5; at least :data:`P_FLOOR`."""
        null = np.broadcast_to(np.asarray(null, dtype=float), (self.size,))
        if self.log:
            with np.errstate(divide="ignore"):
                null = np.log(null)
        pick = 0 if side == "above" else 1
        sign = 1.0 if side == "above" else -1.0

        def excess(k: npt.NDArray[np.intp], rows: npt.NDArray[np.intp]) -> FloatArray:
            return sign * (self.at(k, rows, ("low", "high")[pick])[pick] - null[rows])   # falls with k; > 0: excluded

        rows = np.arange(self.size)
        e0 = excess(np.zeros(self.size, dtype=np.intp), rows)
        e_end = excess(np.full(self.size, _K, dtype=np.intp), rows)
        p = np.where(e_end > 0, P_FLOOR, 0.5)
        todo = np.flatnonzero((e0 > 0) & (e_end <= 0))
        lo, hi = np.zeros(todo.size, dtype=np.intp), np.full(todo.size, _K, dtype=np.intp)
        while todo.size and np.any(hi - lo > 1):        # excess(lo) > 0 >= excess(hi)
            mid = (lo + hi) // 2
            above = excess(mid, todo) > 0
            lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
        if todo.size:
            e_lo, e_hi = excess(lo, todo), excess(hi, todo)
            with np.errstate(invalid="ignore"):
                z = _Z_GRID[lo] + Z_STEP * np.where(np.isinf(e_hi), 0.0, e_lo / (e_lo - e_hi))
            p[todo] = stats.norm.sf(z)
        return np.where(np.isnan(e0), np.nan, p)


def _t_side(centre: FloatArray, se: FloatArray, df: FloatArray, null: FloatArray, side: str) -> FloatArray:
    """One-sided p-value of a t (or z, df = inf) statistic (centre − null)/se."""
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = centre - null if side == "above" else null - centre
        t = np.where(se > 0, diff / se, np.where(diff > 0, np.inf, np.where(diff < 0, -np.inf, 0.0)))
    return np.where(np.isinf(df), stats.norm.sf(t), stats.t.sf(t, np.minimum(df, 1e300)))


class OFIPairs:
    """OFI = B_i − B_j of many pairs with dual bounds and one-sided p-values at any level or null value.

    ``method`` per pair (see the module docstring); build with :func:`ofi_pairs`. ``p_value(null, "above")``
    tests H0: Δ ≤ null (small when the lower bound lies above ``null``), ``"below"`` H0: Δ ≥ null;
    ``bounds(gamma)`` gives the lower and upper bound, each one-sided at level 1 − gamma, so that
    ``p_value(null, "above") < gamma`` exactly when ``bounds(gamma)[0] > null``.
    """

    def __init__(self, fp_i: FloatArray, fn_i: FloatArray, n_i: FloatArray, fp_j: FloatArray, fn_j: FloatArray,
                 n_j: FloatArray, method: str) -> None:
        self.shape = fp_i.shape
        fp_i, fn_i, n_i, fp_j, fn_j, n_j = (a.ravel() for a in (fp_i, fn_i, n_i, fp_j, fn_j, n_j))
        self.size = fp_i.size
        self.method = (np.full(self.size, "score") if method == "auto" else np.full(self.size, method)).astype(str)
        self.estimate = (fp_i - fn_i) / n_i - (fp_j - fn_j) / n_j
        self._score = np.flatnonzero(self.method == "score")
        self._t = np.flatnonzero(self.method != "score")
        if self._t.size:
            wald = self.method[self._t] == "wald"
            s = self._t
            b_ai, v_ai = _ofi_parts(fp_i[s], fn_i[s], n_i[s], True)
            b_aj, v_aj = _ofi_parts(fp_j[s], fn_j[s], n_j[s], True)
            _, v_wi = _ofi_parts(fp_i[s], fn_i[s], n_i[s], False)
            _, v_wj = _ofi_parts(fp_j[s], fn_j[s], n_j[s], False)
            with np.errstate(divide="ignore", invalid="ignore"):
                df_adj = (v_ai + v_aj) ** 2 / (v_ai ** 2 / np.maximum(n_i[s] - 1, 1) + v_aj ** 2 / np.maximum(n_j[s] - 1, 1))
            self._centre = np.where(wald, self.estimate[s], b_ai - b_aj)
            self._se = np.sqrt(np.where(wald, v_wi + v_wj, v_ai + v_aj))
            self._df = np.where(wald, np.inf, _round_df(df_adj))
        if self._score.size:
            s = self._score
            keys, gi, gj = _group_index(fp_i[s], fn_i[s], n_i[s], fp_j[s], fn_j[s], n_j[s])
            limits = _Limits(_b_limits, keys, s.size)
            b = (keys[:, 0] - keys[:, 1]) / keys[:, 2]
            est = b[gi] - b[gj]

            if limits.table:   # squared distances from B̂ to each limit, flat: one gather per group and bound
                width = _Z_GRID.size
                below = ((np.repeat(b, width) - limits.low) ** 2)
                above = ((limits.high - np.repeat(b, width)) ** 2)

                def at(k: npt.NDArray[np.intp], rows: npt.NDArray[np.intp],
                       side: str = "both") -> tuple[FloatArray | None, FloatArray | None]:
                    a, c = gi[rows] * width + k, gj[rows] * width + k
                    low = high = None
                    if side != "high":
                        low = np.maximum(est[rows] - np.sqrt(below[a] + above[c]), -OFI_RANGE)
                    if side != "low":
                        high = np.minimum(est[rows] + np.sqrt(above[a] + below[c]), OFI_RANGE)
                    return low, high
            else:
                def at(k: npt.NDArray[np.intp], rows: npt.NDArray[np.intp],
                       side: str = "both") -> tuple[FloatArray | None, FloatArray | None]:
                    a, c = gi[rows], gj[rows]
                    lo_i, hi_i = limits(a, k)
                    lo_j, hi_j = limits(c, k)
                    low = est[rows] - np.sqrt((b[a] - lo_i) ** 2 + (hi_j - b[c]) ** 2)
                    high = est[rows] + np.sqrt((hi_i - b[a]) ** 2 + (b[c] - lo_j) ** 2)
                    return np.maximum(low, -OFI_RANGE), np.minimum(high, OFI_RANGE)

            self._grid = _GridBounds(at, s.size)

    def p_value(self, null: float = 0.0, side: str = "two-sided") -> FloatArray:
        """p-value of H0: Δ ≤ null (``"above"``), Δ ≥ null (``"below"``) or Δ = null (``"two-sided"``: twice the
        smaller one-sided p, at most 1)."""
        if side == "two-sided":
            return np.minimum(1.0, 2 * np.minimum(self.p_value(null, "above"), self.p_value(null, "below")))
        out = np.full(self.size, np.nan)
        if self._score.size:
            out[self._score] = self._grid.p_value(null, side)
        if self._t.size:
            out[self._t] = _t_side(self._centre, self._se, self._df, np.float64(null), side)
        return out.reshape(self.shape)

    def bounds(self, gamma: float) -> tuple[FloatArray, FloatArray]:
        """Lower and upper bounds, each one-sided at level 1 − ``gamma`` (the two-sided interval at 1 − 2·gamma)."""
        low, high = np.full(self.size, np.nan), np.full(self.size, np.nan)
        if self._score.size:
            low[self._score], high[self._score] = np.clip(self._grid.bounds(gamma), -OFI_RANGE, OFI_RANGE)
        if self._t.size:
            q = _t_ppf(1 - gamma, self._df)
            low[self._t] = np.clip(self._centre - q * self._se, -OFI_RANGE, OFI_RANGE)
            high[self._t] = np.clip(self._centre + q * self._se, -OFI_RANGE, OFI_RANGE)
        return low.reshape(self.shape), high.reshape(self.shape)


def ofi_pairs(fp_i: npt.ArrayLike, fn_i: npt.ArrayLike, n_i: npt.ArrayLike, fp_j: npt.ArrayLike,
              fn_j: npt.ArrayLike, n_j: npt.ArrayLike, method: str = "auto") -> OFIPairs:
    """OFI of many pairs (broadcastable arrays of counts) ready for bounds and p-values at any level and null.

    >>> o = ofi_pairs([0], [0], [40], [0], [0], [5000])     # no errors in either group
    >>> low, high = o.bounds(0.025)
    >>> bool(high[0] > 0.075)     # 0 errors in 40 rows allow an error rate above 7.5 %
    True
    """
    _check_method(method, ("auto", "score", "adjusted", "wald"), "vectorized OFI")
    arrays = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (fp_i, fn_i, n_i, fp_j, fn_j, n_j)))
    if np.any(arrays[2] < 1) or np.any(arrays[5] < 1):
        raise ValueError("every group needs at least one row for an OFI interval")
    return OFIPairs(*arrays, method)


class DIPairs:
    """DI = PPR_i / PPR_j of many pairs with dual bounds and one-sided p-values (as :class:`OFIPairs`).

    ``"score"`` pairs use the Miettinen–Nurminen statistic (closed-form p-values, bounds by root finding);
    ``"exact"`` pairs MOVER-R from Clopper–Pearson limits, with p-values read off the same bounds. NaN where
    neither group selects anyone.
    """

    def __init__(self, x1: FloatArray, n1: FloatArray, x2: FloatArray, n2: FloatArray, method: str) -> None:
        self.shape = x1.shape
        x1, n1, x2, n2 = (a.ravel() for a in (x1, n1, x2, n2))
        self.size = x1.size
        self.method = (di_methods_auto(n1, n2) if method == "auto" else np.full(self.size, method)).astype(str)
        self.nobody = (x1 == 0) & (x2 == 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.estimate = np.where(x2 > 0, (x1 / n1) / (x2 / n2), np.nan)
        self._counts = (x1, n1, x2, n2)
        self._score = np.flatnonzero(self.method == "score")
        self._exact = np.flatnonzero(self.method == "exact")
        if self._exact.size:
            s = self._exact
            keys, gi, gj = _group_index(x1[s], n1[s], x2[s], n2[s])
            limits = _Limits(_cp_limits, keys, s.size)
            r = keys[:, 0] / keys[:, 1]
            zero1, zero2 = x1[s] == 0, x2[s] == 0

            def at(k: npt.NDArray[np.intp], rows: npt.NDArray[np.intp],
                   side: str = "both") -> tuple[FloatArray, FloatArray]:
                a, c = gi[rows], gj[rows]
                lo_i, hi_i = limits(a, k)
                lo_j, hi_j = limits(c, k)
                return _mover_ratio(r[a], r[c], lo_i, hi_i, lo_j, hi_j, zero1[rows], zero2[rows])

            self._grid = _GridBounds(at, s.size, log=True)

    def p_value(self, null: float = 1.0, side: str = "two-sided") -> FloatArray:
        """p-value of H0: DI ≤ null (``"above"``), DI ≥ null (``"below"``) or DI = null (``"two-sided"``)."""
        if side == "two-sided":
            return np.minimum(1.0, 2 * np.minimum(self.p_value(null, "above"), self.p_value(null, "below")))
        out = np.full(self.size, np.nan)
        if self._score.size:
            x1, n1, x2, n2 = (a[self._score] for a in self._counts)
            z = _mn_z(x1, n1, x2, n2, np.full(x1.shape, float(null)))
            out[self._score] = stats.norm.sf(z) if side == "above" else stats.norm.cdf(z)
        if self._exact.size:
            out[self._exact] = self._grid.p_value(null, side)
        return np.where(self.nobody, np.nan, out).reshape(self.shape)

    def bounds(self, gamma: float) -> tuple[FloatArray, FloatArray]:
        """Lower and upper bounds, each one-sided at level 1 − ``gamma``."""
        low, high = np.full(self.size, np.nan), np.full(self.size, np.nan)
        if self._score.size:
            x1, n1, x2, n2 = (a[self._score] for a in self._counts)
            low[self._score], high[self._score] = _score_bounds(x1, n1, x2, n2, float(stats.norm.isf(gamma)))
        if self._exact.size:
            low[self._exact], high[self._exact] = self._grid.bounds(gamma)
        low, high = np.where(self.nobody, np.nan, low), np.where(self.nobody, np.nan, high)
        return low.reshape(self.shape), high.reshape(self.shape)


def di_pairs(sel_i: npt.ArrayLike, n_i: npt.ArrayLike, sel_j: npt.ArrayLike, n_j: npt.ArrayLike,
             method: str = "auto") -> DIPairs:
    """DI of many pairs (``sel`` = predicted positives TP + FP) ready for bounds and p-values at any level and null.

    >>> d = di_pairs([3], [10], [9], [12], "exact")
    >>> low, high = d.bounds(0.025)
    >>> bool((d.p_value(1.0)[0] < 0.05) == (high[0] < 1 or low[0] > 1))   # the test is the interval's dual
    True
    """
    _check_method(method, DI_METHODS, "DI")
    arrays = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (sel_i, n_i, sel_j, n_j)))
    if np.any(arrays[1] < 1) or np.any(arrays[3] < 1):
        raise ValueError("every group needs at least one row for a DI interval")
    return DIPairs(*arrays, method)


# --------------------------------------------------------------------------- many pairs


def adjust_p_values(p_values: npt.ArrayLike, method: str = "holm") -> FloatArray:
    """Multiplicity-adjusted p-values: ``"holm"`` (family-wise error, step-down), ``"bh"``
    (Benjamini–Hochberg false discovery rate, step-up) or ``"none"``. NaN stays NaN and
    does not count as a test; results are monotone in the raw p and capped at 1.

    >>> adjust_p_values([0.01, 0.04, 0.03, float("nan")], "holm").round(3).tolist()
    [0.03, 0.06, 0.06, nan]
    >>> adjust_p_values([0.01, 0.04, 0.03], "bh").round(3).tolist()
    [0.03, 0.04, 0.04]
    """
    _check_method(method, ADJUSTMENTS, "p-value adjustment")
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
    standard error is ``se``: (z_{1−α/2} + z_{power})·se (docs/methods.md)."""
    alpha = np.asarray(alpha, dtype=float)
    return (stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) * np.asarray(se, dtype=float)
