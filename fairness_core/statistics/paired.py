"""Paired statistics: the same cases answered once per group (counterfactual tests), compared within each case.

Each base case (a résumé, an applicant) is sent once per group with only the group's words changed, so group i
and group j are compared on the same cases. For a pair of groups and the n cases complete for both, a 2 × 2
table counts the cases selected by both, by i only (``only_i`` = b), by j only (``only_j`` = c) and by neither.
Only the discordant cases carry information about a difference (McNemar):

- **difference of selection rates** δ = p_i − p_j = (b − c)/n, the difference of two cells of one multinomial;
  Tango's score interval (Tango, *Equivalence test and confidence interval for the difference in proportions for
  the paired-sample design*, 1998) with a continuity correction of :data:`PAIRED_CC` count, chosen over Tango's
  uncorrected limits and Newcombe's hybrid method 10 by exact coverage (docs/methods.md, "Counterfactual tests";
  ``bench/paired_coverage.py``). Its one-sided p-values are the dual of the interval at every level and null
  value (:class:`PairedDifferences`), so a verdict read from an adjusted interval and the p printed beside it
  never disagree;
- **flip rate** (b + c)/n: how often changing only the group's words changed the decision; Clopper–Pearson's
  exact interval (:func:`clopper_pearson`);
- **exact McNemar test**: b | b + c ~ Binomial(b + c, ½) under H0 p_i = p_j, p = min(1, 2·P(X ≤ min(b, c)))
  (:func:`mcnemar_exact`; equal to statsmodels' ``mcnemar(table, exact=True)``);
- **conditional odds ratio** ψ = b/c, the odds of "i only" among discordant cases, with the interval
  θ/(1 − θ) from Clopper–Pearson's interval of θ = b/(b + c) — the interval of R's ``exact2x2::mcnemar.exact``,
  which excludes 1 exactly when the exact McNemar p is below α (:func:`conditional_odds_ratio`).

Across all k groups: Cochran's Q (:func:`cochrans_q`), exact by enumerating every arrangement of each case's
responses when the informative cases are few (:data:`EXACT_Q_CASES`), chi-square with k − 1 degrees of freedom
otherwise; for ranks, the share of cases where a group is ranked first against the chance rate 1/k
(:func:`top_choice_tests`, exact binomial per group and an exact multinomial test across groups when its outcomes
are few); for scores, the Wilcoxon signed-rank test of paired differences (:func:`wilcoxon_pairs`, SciPy's).

Everything is vectorized over pairs and cases: no Python loop over either on the main path.

>>> mcnemar_exact([9], [2]).round(4).tolist()
[0.0654]
>>> low, high = clopper_pearson([11], [100], 0.05)
>>> round(float(low[0]), 4), round(float(high[0]), 4)
(0.0562, 0.1883)
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import special, stats

from ..common.vocabulary import check_alpha, check_alphas
from . import verdicts
from .inference.limits import _TangoVar
from .inference.multiplicity import adjust_p_values

FloatArray = npt.NDArray[np.float64]

#: Continuity correction of Tango's paired-difference limits, in counts (docs/methods.md: the exact coverage that
#: chose it; the same ¼ count the library's other paired differences use).
PAIRED_CC = 0.25
#: The paired-difference interval methods: "tango" (the default, with :data:`PAIRED_CC`), "tango0" (no
#: correction) and "newcombe" (Newcombe's hybrid score method 10), the last two for reference and the coverage bench.
PAIRED_METHODS = ("tango", "tango0", "newcombe")
#: Cochran's Q is exact (every arrangement of each case's responses enumerated) when at most this many cases are
#: informative (some but not all groups selected) and the distinct column-total patterns stay under
#: :data:`EXACT_Q_STATES`; chi-square otherwise.
EXACT_Q_CASES = 40
EXACT_Q_STATES = 200_000
#: The exact multinomial test of first places is used when its outcomes number at most this many.
EXACT_MULTINOMIAL_OUTCOMES = 2_000_000


def _arrays(*values: npt.ArrayLike) -> list[FloatArray]:
    return [np.asarray(v, dtype=float) for v in np.broadcast_arrays(*values)]


def clopper_pearson(x: npt.ArrayLike, n: npt.ArrayLike, alpha: float | npt.ArrayLike = 0.05
                    ) -> tuple[FloatArray, FloatArray]:
    """Clopper–Pearson's exact interval of a proportion x/n at confidence 1 − ``alpha`` (each tail α/2):
    low = Beta⁻¹(α/2; x, n − x + 1), high = Beta⁻¹(1 − α/2; x + 1, n − x); 0 and 1 at the ends; NaN where n = 0."""
    x, n, a = _arrays(x, n, check_alphas(alpha))
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(x <= 0, 0.0, special.betaincinv(np.maximum(x, 1e-300), np.maximum(n - x + 1, 1e-300), a / 2))
        high = np.where(x >= n, 1.0, special.betaincinv(x + 1, np.maximum(n - x, 1e-300), 1 - a / 2))
    empty = n <= 0
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def mcnemar_exact(only_i: npt.ArrayLike, only_j: npt.ArrayLike) -> FloatArray:
    """Exact (conditional) McNemar p-value, two-sided: min(1, 2·F(min(b, c); b + c, ½)), F the binomial CDF.

    1 when there is no discordant case. Equal to statsmodels' ``mcnemar([[a, b], [c, d]], exact=True).pvalue``.
    """
    b, c = _arrays(only_i, only_j)
    return np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(b, c), b + c, 0.5))


def conditional_odds_ratio(only_i: npt.ArrayLike, only_j: npt.ArrayLike, alpha: float | npt.ArrayLike = 0.05
                           ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The conditional (discordant-pair) odds ratio ψ = b/c with the exact interval that agrees with
    :func:`mcnemar_exact`: θ = b/(b + c) has Clopper–Pearson's interval [θ_L, θ_U], and ψ's is
    [θ_L/(1 − θ_L), θ_U/(1 − θ_U)] (R's ``exact2x2::mcnemar.exact``). It excludes 1 exactly when the exact
    McNemar p < α. Estimate ∞ when c = 0 < b; everything NaN without discordant cases (undefined)."""
    b, c = _arrays(only_i, only_j)
    low, high = clopper_pearson(b, b + c, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = np.where(b + c > 0, b / c, np.nan)
        return estimate, low / (1 - low), np.where(high >= 1, np.inf, high / (1 - high))


# --------------------------------------------------------------------------- the paired difference


def _score_p(b: FloatArray, c: FloatArray, n: FloatArray, null: FloatArray, side: str, cc: float,
             var: _TangoVar | None = None) -> FloatArray:
    """One-sided p of Tango's score test: "above" tests H0 δ ≤ null (z = (b − c − cc − n·null)/sd(null)),
    "below" H0 δ ≥ null (z = (n·null − b + c − cc)/sd(null)); sd at the constrained MLE."""
    var = _TangoVar(b, c, n) if var is None else var
    v = var(null)
    num = (b - c - cc - n * null) if side == "above" else (n * null - (b - c) - cc)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(v > 0, num / np.sqrt(v), np.where(num > 0, np.inf, np.where(num < 0, -np.inf, 0.0)))
    return stats.norm.sf(z)


def _tango_bounds(b: FloatArray, c: FloatArray, n: FloatArray, z: FloatArray, cc: float,
                  iterations: int = 52) -> tuple[FloatArray, FloatArray]:
    """Tango's one-sided score bounds of δ at normal quantiles ``z`` (bisection: the statistic falls in δ)."""
    b, c, n, z = np.broadcast_arrays(b, c, n, z)
    var = _TangoVar(b, c, n)
    est = (b - c) / n
    lo_a, lo_b = np.full(b.shape, -1.0), est.copy()
    hi_a, hi_b = est.copy(), np.full(b.shape, 1.0)
    zz, below, above = z * z, b - c - cc, b - c + cc
    for _ in range(iterations):
        m = (lo_a + lo_b) / 2
        num = below - n * m
        ok = (num > 0) & (num * num > zz * var(m))     # m is still below the lower bound
        lo_a, lo_b = np.where(ok, m, lo_a), np.where(ok, lo_b, m)
        m = (hi_a + hi_b) / 2
        num = above - n * m
        ok = (num < 0) & (num * num > zz * var(m))     # m is already above the upper bound
        hi_b, hi_a = np.where(ok, m, hi_b), np.where(ok, hi_a, m)
    return lo_a, hi_b


def _wilson(x: FloatArray, n: FloatArray, z: FloatArray) -> tuple[FloatArray, FloatArray]:
    with np.errstate(divide="ignore", invalid="ignore"):
        p = x / n
        centre = (x + z * z / 2) / (n + z * z)
        half = z * np.sqrt(n * p * (1 - p) + z * z / 4) / (n + z * z)
    return np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)


def newcombe_interval(both: npt.ArrayLike, only_i: npt.ArrayLike, only_j: npt.ArrayLike, neither: npt.ArrayLike,
                      alpha: float = 0.05) -> tuple[FloatArray, FloatArray]:
    """Newcombe's hybrid score interval for a paired difference of proportions, method 10 (*Improved confidence
    intervals for the difference between binomial proportions based on paired data*, 1998): Wilson limits
    (l₁, u₁) of p_i = (a + b)/n and (l₂, u₂) of p_j = (a + c)/n, combined with the phi coefficient
    φ = (ad − bc)/√((a + b)(c + d)(a + c)(b + d)) (0 where a margin is empty):
    δ̂ − √((p_i − l₁)² − 2φ(p_i − l₁)(u₂ − p_j) + (u₂ − p_j)²) to δ̂ + √((u₁ − p_i)² − 2φ(u₁ − p_i)(p_j − l₂) +
    (p_j − l₂)²). For reference and the coverage bench; the audits use Tango's (docs/methods.md)."""
    check_alpha(alpha)
    a, b, c, d = _arrays(both, only_i, only_j, neither)
    n = a + b + c + d
    z = np.full(n.shape, stats.norm.isf(alpha / 2))
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = _wilson(a + b, n, z)
    l2, u2 = _wilson(a + c, n, z)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = np.where(margins > 0, (a * d - b * c) / np.sqrt(margins), 0.0)
    delta = p1 - p2
    low = delta - np.sqrt(np.maximum((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0))
    high = delta + np.sqrt(np.maximum((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0))
    return np.clip(low, -1, 1), np.clip(high, -1, 1)


def tango_interval(only_i: npt.ArrayLike, only_j: npt.ArrayLike, n: npt.ArrayLike, alpha: float = 0.05,
                   cc: float = PAIRED_CC) -> tuple[FloatArray, FloatArray]:
    """Tango's score interval of δ = (b − c)/n at confidence 1 − ``alpha``, continuity correction ``cc`` counts:
    the δ₀ where |b − c − n·δ₀| − cc = z·sd(δ₀), sd² = n(2q̃ + δ₀ − δ₀²), q̃ the constrained maximum-likelihood
    estimate of the "j only" probability (Tango 1998, eq. 3)."""
    check_alpha(alpha)
    b, c, n = _arrays(only_i, only_j, n)
    return _tango_bounds(b, c, n, np.full(b.shape, stats.norm.isf(alpha / 2)), cc)


class PairedDifferences:
    """δ = p_i − p_j for many pairs of groups measured on the same cases, with dual bounds and p-values at any
    level and null value (the interface of :class:`fairness_core.inference.OFIPairs`, so the verdict machinery of
    :mod:`fairness_core.statistics.verdicts` reads it): ``p_value(null, "above")`` tests H0 δ ≤ null and is below γ
    exactly when ``bounds(γ)[0] > null``. Tango's score limits with :data:`PAIRED_CC`; NaN where n = 0."""

    def __init__(self, only_i: npt.ArrayLike, only_j: npt.ArrayLike, n: npt.ArrayLike, cc: float = PAIRED_CC):
        self.only_i, self.only_j, self.n = (a.ravel() for a in _arrays(only_i, only_j, n))
        self.size, self.cc = self.n.size, float(cc)
        self._ok = self.n > 0
        safe = np.where(self._ok, self.n, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.estimate = np.where(self._ok, (self.only_i - self.only_j) / safe, np.nan)
        self._var = _TangoVar(self.only_i, self.only_j, safe)
        self.method = np.full(self.size, "tango score" if cc else "tango score (uncorrected)")
        self.nobody = np.zeros(self.size, dtype=bool)

    def p_value(self, null: float = 0.0, side: str = "two-sided") -> FloatArray:
        """p of H0 δ ≤ null ("above"), δ ≥ null ("below") or δ = null ("two-sided": twice the smaller, ≤ 1)."""
        if side == "two-sided":
            return np.minimum(1.0, 2 * np.minimum(self.p_value(null, "above"), self.p_value(null, "below")))
        safe = np.where(self._ok, self.n, 1.0)
        nulls = np.broadcast_to(np.asarray(null, dtype=float), (self.size,))
        p = _score_p(self.only_i, self.only_j, safe, nulls, side, self.cc, self._var)
        return np.where(self._ok, p, np.nan)

    def bounds(self, gamma: float | npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Lower and upper bounds, each one-sided at level 1 − ``gamma``."""
        z = np.broadcast_to(stats.norm.isf(np.asarray(gamma, dtype=float)), (self.size,))
        safe = np.where(self._ok, self.n, 1.0)
        low, high = _tango_bounds(self.only_i, self.only_j, safe, z, self.cc)
        return np.where(self._ok, low, np.nan), np.where(self._ok, high, np.nan)

    def bounds_at(self, *gammas: float) -> tuple[FloatArray, ...]:
        """:meth:`bounds` at several ``gammas``: (low, high) of the first, then of the next, ... in one tuple."""
        return tuple(b for gamma in gammas for b in self.bounds(gamma))


# --------------------------------------------------------------------------- across all groups


@dataclass(frozen=True)
class OmnibusResult:
    """A test across all groups at once: ``statistic``, ``p_value``, degrees of freedom ``df``, ``method`` (how p
    was computed, in words), the ``cases`` it used and ``test`` (its name)."""

    test: str
    statistic: float
    p_value: float
    df: int
    method: str
    cases: int


def _q_statistic(column_totals: FloatArray, row_totals: FloatArray, k: int) -> FloatArray:
    """Cochran's Q = (k − 1)(k·ΣC_j² − N²)/(k·N − ΣR_i²) over the last axis of ``column_totals``."""
    total = row_totals.sum()
    denominator = k * total - np.sum(row_totals ** 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (k - 1) * (k * np.sum(column_totals ** 2, axis=-1) - total ** 2) / denominator


def _exact_q_distribution(row_totals: npt.NDArray[np.int64], k: int) -> tuple[FloatArray, FloatArray] | None:
    """The permutation distribution of ΣC_j² when each informative case's R_i ones fall on a uniformly random
    R_i of the k groups (H0: the groups are exchangeable within a case): (values, probabilities), or None when
    the distinct sorted column-total patterns exceed :data:`EXACT_Q_STATES`. Sorting is allowed because the
    groups are exchangeable, so the sorted totals are a Markov chain over the cases (a loop over at most
    :data:`EXACT_Q_CASES` cases)."""
    states = np.zeros((1, k), dtype=np.int16)
    weights = np.ones(1)
    subsets_of: dict[int, npt.NDArray[np.int16]] = {}
    for r in row_totals:
        if r not in subsets_of:
            idx = np.array(list(itertools.combinations(range(k), int(r))), dtype=np.intp)
            rows = np.zeros((idx.shape[0], k), dtype=np.int16)
            rows[np.arange(idx.shape[0])[:, None], idx] = 1
            subsets_of[int(r)] = rows
        subsets = subsets_of[int(r)]
        grown = np.sort((states[:, None, :] + subsets[None, :, :]).reshape(-1, k), axis=1)
        w = np.repeat(weights / subsets.shape[0], subsets.shape[0])
        states, inverse = np.unique(grown, axis=0, return_inverse=True)
        weights = np.bincount(inverse.ravel(), weights=w, minlength=states.shape[0])
        if states.shape[0] > EXACT_Q_STATES:
            return None
    return np.sum(states.astype(np.int64) ** 2, axis=1).astype(float), weights


def cochrans_q(responses: npt.ArrayLike, exact: bool | None = None) -> OmnibusResult:
    """Cochran's Q test that k groups share one selection rate, from a cases × k array of 0/1 responses (complete
    cases): Q = (k − 1)(k·ΣC_j² − N²)/(k·N − ΣR_i²), C_j the groups' totals, R_i the cases' (the statistic of
    statsmodels' ``cochrans_q``). ``exact=None`` (auto): exact when at most :data:`EXACT_Q_CASES` cases are
    informative (0 < R_i < k) — p = P(Q ≥ Q_obs) over every arrangement of each case's responses among the
    groups — and chi-square with k − 1 df otherwise (statsmodels' p). No informative case: Q undefined, p = 1.

    >>> r = cochrans_q([[1, 0], [1, 0], [1, 0], [0, 1], [1, 1]])
    >>> round(r.statistic, 4), round(r.p_value, 4), r.method     # = the exact McNemar p with b = 3, c = 1
    (1.0, 0.625, 'exact (every arrangement of 4 informative cases)')
    """
    x = np.asarray(responses, dtype=float)
    if x.ndim != 2 or x.shape[1] < 2:
        raise ValueError(f"responses must be a cases × groups array with at least 2 groups, got shape {x.shape}")
    cases, k = x.shape
    rows, columns = x.sum(axis=1), x.sum(axis=0)
    informative = (rows > 0) & (rows < k)
    m = int(informative.sum())
    if m == 0:
        return OmnibusResult("Cochran's Q", float("nan"), 1.0, k - 1, "no case with a split decision", cases)
    q = float(_q_statistic(columns, rows, k))
    if exact is None:
        exact = m <= EXACT_Q_CASES
    if exact:
        found = _exact_q_distribution(rows[informative].astype(np.int64), k)
        if found is not None:
            values, probability = found
            # Cases where every group selected add one to every column: Q is increasing in the informative
            # cases' ΣC_j² given the row totals, so that sum carries the test.
            observed = float(np.sum(x[informative].sum(axis=0) ** 2))
            p = float(np.minimum(1.0, probability[values >= observed - 1e-9].sum()))
            return OmnibusResult("Cochran's Q", q, p, k - 1, f"exact (every arrangement of {m} informative cases)",
                                 cases)
    return OmnibusResult("Cochran's Q", q, float(stats.chi2.sf(q, k - 1)), k - 1, "chi-square", cases)


def binomial_two_sided(x: npt.ArrayLike, n: npt.ArrayLike, p: float) -> FloatArray:
    """Exact two-sided binomial p-value, the central method: min(1, 2·min(P(X ≤ x), P(X ≥ x))), X ~ Bin(n, p)
    (dual to Clopper–Pearson's interval). NaN where n = 0."""
    x, n = _arrays(x, n)
    out = np.minimum(1.0, 2 * np.minimum(stats.binom.cdf(x, n, p), stats.binom.sf(x - 1, n, p)))
    return np.where(n > 0, out, np.nan)


def multinomial_equal_test(counts: npt.ArrayLike) -> OmnibusResult:
    """Are k counts (each case's first place falls on one group) equally likely, 1/k each? Exact multinomial test
    (p = the total probability of outcomes no more likely than the one observed) when its outcomes number at most
    :data:`EXACT_MULTINOMIAL_OUTCOMES`, else Pearson's chi-square with k − 1 df."""
    x = np.asarray(counts, dtype=np.int64)
    k, n = x.size, int(x.sum())
    expected = n / k
    chi2 = float(np.sum((x - expected) ** 2) / expected) if n else float("nan")
    outcomes = math.comb(n + k - 1, k - 1)
    if n and outcomes <= EXACT_MULTINOMIAL_OUTCOMES:
        # every composition of n into k parts: stars and bars, vectorized through the bar positions
        bars = np.array(list(itertools.combinations(range(n + k - 1), k - 1)), dtype=np.int64)
        edges = np.concatenate([np.full((bars.shape[0], 1), -1), bars, np.full((bars.shape[0], 1), n + k - 1)],
                               axis=1)
        parts = np.diff(edges, axis=1) - 1
        log_p = special.gammaln(n + 1) - special.gammaln(parts + 1).sum(axis=1) - n * math.log(k)
        observed = special.gammaln(n + 1) - special.gammaln(x + 1).sum() - n * math.log(k)
        p = float(np.minimum(1.0, np.exp(log_p[log_p <= observed + 1e-9]).sum()))
        return OmnibusResult("first places against chance", chi2, p, k - 1,
                             f"exact multinomial ({outcomes:,} outcomes)", n)
    p = float(stats.chi2.sf(chi2, k - 1)) if n else 1.0
    return OmnibusResult("first places against chance", chi2, p, k - 1, "chi-square", n)


def wilcoxon_pairs(differences: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """The Wilcoxon signed-rank test of paired differences, one row per pair of groups (NaN where a case is
    incomplete): (statistic, p) exactly as :func:`scipy.stats.wilcoxon` gives them (two-sided, zeros dropped,
    SciPy's choice of exact or normal method). A pair whose differences are all zero gets p = 1."""
    d = np.atleast_2d(np.asarray(differences, dtype=float))
    stat, p = np.full(d.shape[0], np.nan), np.full(d.shape[0], np.nan)
    nonzero = np.nansum(np.abs(d) > 0, axis=1) > 0
    p[~nonzero] = 1.0
    if nonzero.any():
        with np.errstate(invalid="ignore", divide="ignore"):
            r = stats.wilcoxon(d[nonzero], axis=1, nan_policy="omit")
        stat[nonzero], p[nonzero] = r.statistic, r.pvalue
    return stat, p


# --------------------------------------------------------------------------- every pair of groups at once

#: What the verdict column of a paired comparison says: the difference of selection rates (or of mean scores)
#: shown beyond ±tolerance; shown ≠ 0 but reaching inside ±tolerance; shown inside ±tolerance; none of these.
#: The words of :data:`fairness_core.statistics.verdicts.SELECTION_VERDICTS` with "adverse impact" read as the
#: paired difference it is here (docs/methods.md, "Counterfactual tests").
PAIRED_VERDICTS = ("material difference", "materiality unclear", "no material difference detected", "inconclusive")
_VERDICT_OBJECTS = np.array(PAIRED_VERDICTS, dtype=object)


def pair_counts(selected: FloatArray, observed: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray,
                                                                     FloatArray, npt.NDArray[np.intp],
                                                                     npt.NDArray[np.intp]]:
    """For every pair of columns i < j of cases × groups 0/1 arrays (``selected`` 0 where not ``observed``): the
    cases complete for both (n), selected by both, by i only, by j only, and the pairs' (i, j). Four matrix
    products over the cases: no loop over cases or pairs."""
    s, o = np.asarray(selected, dtype=float), np.asarray(observed, dtype=float)
    not_selected = o - s
    i, j = np.triu_indices(s.shape[1], 1)
    return ((o.T @ o)[i, j], (s.T @ s)[i, j], (s.T @ not_selected)[i, j], (not_selected.T @ s)[i, j], i, j)


class MeanDifferences:
    """Mean paired differences d̄ of many pairs with Student's t bounds and p-values (df = n − 1), dual at every
    level and null value (the interface of :class:`PairedDifferences`): from each pair's n, Σd and Σd²."""

    def __init__(self, total: npt.ArrayLike, total_squares: npt.ArrayLike, n: npt.ArrayLike) -> None:
        total, squares, self.n = (a.ravel() for a in _arrays(total, total_squares, n))
        self.size = self.n.size
        with np.errstate(divide="ignore", invalid="ignore"):
            self.estimate = np.where(self.n > 0, total / self.n, np.nan)
            var = np.where(self.n > 1, np.maximum(squares - self.n * self.estimate ** 2, 0) / (self.n - 1), np.nan)
            self.se = np.sqrt(var / self.n)
        self.df = np.maximum(self.n - 1, 1)
        self.method = np.full(self.size, "paired t")
        self.nobody = np.zeros(self.size, dtype=bool)

    def p_value(self, null: float = 0.0, side: str = "two-sided") -> FloatArray:
        """p of H0 mean ≤ null ("above"), ≥ null ("below") or = null ("two-sided")."""
        if side == "two-sided":
            return np.minimum(1.0, 2 * np.minimum(self.p_value(null, "above"), self.p_value(null, "below")))
        diff = self.estimate - null if side == "above" else null - self.estimate
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(self.se > 0, diff / self.se, np.where(diff > 0, np.inf, np.where(diff < 0, -np.inf, 0.0)))
        return np.where(np.isnan(self.se), np.nan, stats.t.sf(t, self.df))

    def bounds(self, gamma: float | npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Lower and upper bounds, each one-sided at level 1 − ``gamma``."""
        q = stats.t.isf(np.asarray(gamma, dtype=float), self.df)
        return self.estimate - q * self.se, self.estimate + q * self.se

    def bounds_at(self, *gammas: float) -> tuple[FloatArray, ...]:
        return tuple(b for gamma in gammas for b in self.bounds(gamma))


@dataclass(frozen=True)
class Judged:
    """The three-sided reading of many pairs against ±``tolerance`` (:func:`judge`): ``verdict`` (words of
    :data:`PAIRED_VERDICTS`), ``low``/``high`` at the decision level ``level`` (1 − the smallest critical level of the
    three families), ``low_unadjusted``/``high_unadjusted`` at 1 − α, ``p`` (two-sided against 0), ``p_adjusted``
    (below α exactly when the adjusted interval excludes 0), ``differs``, ``beyond``, ``within``."""

    verdict: npt.NDArray[np.object_]
    low: FloatArray
    high: FloatArray
    low_unadjusted: FloatArray
    high_unadjusted: FloatArray
    p: FloatArray
    p_adjusted: FloatArray
    differs: npt.NDArray[np.bool_]
    beyond: npt.NDArray[np.bool_]
    within: npt.NDArray[np.bool_]
    level: float


def judge(pairs: PairedDifferences | MeanDifferences, tolerance: float, alpha: float, adjust: str,
          also: tuple[npt.ArrayLike, ...] = ()) -> Judged:
    """Every pair's difference read against 0 and ±``tolerance`` as three families of tests (differs from 0,
    beyond ±T, within ±T), each adjusted across the pairs by ``adjust``, and all read from one interval per pair at
    the smallest of the three critical levels — the verdict machinery of :mod:`.verdicts`, so every claim keeps its
    family's error rate and the printed interval is the one that decided (docs/methods.md, "Verdicts"). ``also``:
    the p-values of other families read on the same page (each pair's flips against its null swaps): the level is
    the smallest of all their critical levels, so one level serves every interval the page prints."""
    check_alpha(alpha)
    t = float(tolerance)
    (p_zero, _, _), _, a, (low, high), (low_u, high_u), adjusted = verdicts._three_families(
        pairs, 0.0, -t, t, alpha, adjust, ("differs from 0", "beyond the tolerance", "within the tolerance"))
    lowest = min([a, *(verdicts.critical_level(p, alpha, adjust) for p in also)])
    if lowest < a:
        a = lowest
        low, high = pairs.bounds(a / 2)
    with np.errstate(invalid="ignore"):
        differs, beyond = (low > 0) | (high < 0), (low > t) | (high < -t)
        within = (low > -t) & (high < t)
    code = np.select([beyond, differs & ~within, within], [0, 1, 2], 3)
    return Judged(_VERDICT_OBJECTS[code], low, high, low_u, high_u, p_zero,
                  verdicts._adjusted(p_zero, adjusted, alpha, a), differs, beyond, within, 1 - a)


@dataclass(frozen=True)
class OwnBaselines:
    """Each pair's flips read against the null swaps of its own two groups (:func:`own_baselines`): for side
    ``i`` (group i against its null swap i′, on the cases complete for i, j and i′) and side ``j`` alike, the
    pair's flip rate minus the within-group flip rate as a paired difference of two flip indicators per case
    (``excess_i``, ``excess_j``: Tango's interval, dual p), the within-group rates (``rate_i``, ``rate_j``) and the
    exact McNemar p of each side (``mcnemar_i``, ``mcnemar_j``); NaN where the group has no null swap. ``p``: the
    intersection–union p of "the pair flips more than within each group", the larger of the sides' (Tango's)."""

    rate_i: FloatArray
    rate_j: FloatArray
    excess_i: PairedDifferences
    excess_j: PairedDifferences
    mcnemar_i: FloatArray
    mcnemar_j: FloatArray
    p: FloatArray

    def columns(self, level: float, adjust: str) -> dict[str, FloatArray]:
        """The pairs' columns at the decision ``level``: each side's rate, excess and interval; the deciding side's
        (lower bound lower; ``flip_excess_side``: "i" or "j") as ``baseline_flip_rate``, ``flip_excess`` and its
        interval; ``flips_beyond_baseline`` (every side's interval above 0); ``flip_excess_p`` (exact McNemar, the
        larger side's) adjusted across pairs."""
        g = (1 - level) / 2
        (lo_i, hi_i), (lo_j, hi_j) = self.excess_i.bounds(g), self.excess_j.bounds(g)
        has_i, has_j = ~np.isnan(self.rate_i), ~np.isnan(self.rate_j)
        side_i = np.where(has_i, lo_i, np.inf) <= np.where(has_j, lo_j, np.inf)
        pick = (lambda a, b: np.where(side_i & has_i, a, np.where(has_j, b, np.nan)))
        with np.errstate(invalid="ignore"):
            beyond = (has_i | has_j) & (~has_i | (lo_i > 0)) & (~has_j | (lo_j > 0))
        p = np.fmax(self.mcnemar_i, self.mcnemar_j)
        tested = ~np.isnan(p)
        adjusted = np.full(p.shape, np.nan)
        adjusted[tested] = adjust_p_values(p[tested], adjust)
        return {"baseline_flip_rate_i": self.rate_i, "baseline_flip_rate_j": self.rate_j,
                "flip_excess_i": self.excess_i.estimate, "flip_excess_i_ci_low": lo_i, "flip_excess_i_ci_high": hi_i,
                "flip_excess_j": self.excess_j.estimate, "flip_excess_j_ci_low": lo_j, "flip_excess_j_ci_high": hi_j,
                "baseline_flip_rate": pick(self.rate_i, self.rate_j),
                "flip_excess": pick(self.excess_i.estimate, self.excess_j.estimate),
                "flip_excess_ci_low": pick(lo_i, lo_j), "flip_excess_ci_high": pick(hi_i, hi_j),
                "flip_excess_side": np.where(side_i & has_i, "i", np.where(has_j, "j", "")).astype(object),
                "flips_beyond_baseline": beyond, "flip_excess_p": p, "flip_excess_p_adjusted": adjusted}


def own_baselines(selected: FloatArray, observed: FloatArray, null_of: npt.NDArray[np.intp],
                  i: npt.NDArray[np.intp], j: npt.NDArray[np.intp]) -> OwnBaselines:
    """Each pair (columns ``i``, ``j`` of the cases × groups 0/1 arrays, ``selected`` 0 where not ``observed``)
    against the null swaps of its own groups: ``null_of[g]`` is the column of group g's null swap (−1: none).

    Per case, the pair flipped (F = i's answer ≠ j's) and the group flipped within itself (N = g's ≠ g′'s); on the
    cases complete for i, j, g and g′, u = #(F, not N), v = #(N, not F): F̄ − N̄ = (u − v)/n is a paired difference
    of two binary indicators (Tango's interval, exact McNemar on u, v). Matrix products, one row per group with a
    null swap: no loop over cases or pairs. The two sides are an intersection–union test."""
    s, o = np.asarray(selected, dtype=float), np.asarray(observed, dtype=float)
    no = o - s
    g = np.flatnonzero(null_of >= 0)
    ok = o[:, g] * o[:, null_of[g]]
    within = np.abs(s[:, g] - s[:, null_of[g]]) * ok
    agree = ok - within
    s_g, no_g = s[:, g], no[:, g]
    u = (s_g * agree).T @ no + (no_g * agree).T @ s                     # G × k: the pair flipped, g did not
    both = (s_g * within).T @ no + (no_g * within).T @ s                # both flipped
    v = within.T @ o - both                                              # g flipped, the pair did not
    n, row = ok.T @ o, np.full(s.shape[1], -1)
    row[g] = np.arange(g.size)

    def side(a: npt.NDArray[np.intp], b: npt.NDArray[np.intp]) -> tuple[FloatArray, PairedDifferences, FloatArray]:
        has, at = row[a] >= 0, (np.maximum(row[a], 0), b)
        uu, vv, nn, bb = (np.where(has, m[at], 0.0) for m in (u, v, n, both))
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = np.where(has & (nn > 0), (bb + vv) / nn, np.nan)     # within-group flips on the same cases
        return rate, PairedDifferences(uu, vv, nn), np.where(has & (nn > 0), mcnemar_exact(uu, vv), np.nan)

    (rate_i, d_i, m_i), (rate_j, d_j, m_j) = side(i, j), side(j, i)
    return OwnBaselines(rate_i, rate_j, d_i, d_j, m_i, m_j, np.fmax(d_i.p_value(0.0), d_j.p_value(0.0)))


def binary_pairs(selected: FloatArray, observed: FloatArray, columns: npt.NDArray[np.intp] | None = None,
                 null_of: npt.NDArray[np.intp] | None = None, tolerance: float = 0.05, alpha: float = 0.05,
                 adjust: str = "holm") -> tuple[dict[str, FloatArray], Judged, npt.NDArray[np.intp],
                                                npt.NDArray[np.intp]]:
    """Every pair of the groups ``columns`` of the cases × groups 0/1 arrays (the real groups; null swaps are
    baselines, never compared as groups): counts, δ with Tango's interval judged against ±``tolerance``, the flip
    rate, exact McNemar (adjusted), the odds ratio and, with ``null_of`` (each group's null swap column, −1: none),
    each pair against its own groups' null swaps (:func:`own_baselines`). Every interval but the odds ratio's
    (McNemar's level) is at one level: the smallest critical level of the verdicts' families and the flips'."""
    columns = np.arange(np.shape(selected)[1]) if columns is None else np.asarray(columns)
    y, seen = selected[:, columns], observed[:, columns]
    n, both, only_i, only_j, i, j = pair_counts(y, seen)
    out: dict[str, FloatArray] = {"n": n.astype(np.int64), "both": both.astype(np.int64),
                                  "only_i": only_i.astype(np.int64), "only_j": only_j.astype(np.int64),
                                  "neither": (n - both - only_i - only_j).astype(np.int64)}
    base = None if null_of is None or not (null_of >= 0).any() else \
        own_baselines(selected, observed, null_of, columns[i], columns[j])
    d = PairedDifferences(only_i, only_j, n)
    judged = judge(d, tolerance, alpha, adjust, also=() if base is None else (base.p,))
    a = 1 - judged.level
    flip = only_i + only_j
    f_low, f_high = clopper_pearson(flip, n, a)
    p = mcnemar_exact(only_i, only_j)
    odds, o_low, o_high = conditional_odds_ratio(only_i, only_j, verdicts.critical_level(p, alpha, adjust))
    with np.errstate(invalid="ignore", divide="ignore"):
        out.update(rate_i=(both + only_i) / n, rate_j=(both + only_j) / n, difference=d.estimate,
                   difference_ci_low=judged.low, difference_ci_high=judged.high, difference_p=judged.p,
                   difference_p_adjusted=judged.p_adjusted, flip_rate=flip / n, flip_rate_ci_low=f_low,
                   flip_rate_ci_high=f_high, mcnemar_p=p, p_adjusted=adjust_p_values(p, adjust), odds_ratio=odds,
                   odds_ratio_ci_low=o_low, odds_ratio_ci_high=o_high)
    if base is not None:
        out.update(base.columns(judged.level, adjust))
    return out, judged, i, j


def _mean_pairs(values: FloatArray, observed: FloatArray, kind: str, tolerance: float, alpha: float, adjust: str
               ) -> tuple[dict[str, FloatArray], Judged | None, npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """Every pair of columns of a cases × groups array of ranks or scores (0 where not ``observed``): means, the
    mean paired difference (Student's t; judged against ±``tolerance`` for scores, None for ranks, whose verdict is
    "ranked first"'s) and Wilcoxon's test, adjusted by ``adjust``; matrix products, no loop over pairs."""
    x, seen = np.asarray(values, dtype=float), np.asarray(observed, dtype=float)
    i, j = np.triu_indices(x.shape[1], 1)
    total = (x.T @ seen - seen.T @ x)[i, j]
    squares = ((x ** 2).T @ seen + seen.T @ (x ** 2) - 2 * x.T @ x)[i, j]
    n_pair = (seen.T @ seen)[i, j]
    m = MeanDifferences(total, squares, n_pair)
    both_seen = seen[:, i] * seen[:, j]
    w_stat, w_p = wilcoxon_pairs(np.where(both_seen > 0, x[:, i] - x[:, j], np.nan).T)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_i = (x[:, i] * both_seen).sum(axis=0) / n_pair
    out: dict[str, FloatArray] = {}
    judged: Judged | None = None
    if kind == "score":
        judged = judge(m, tolerance, alpha, adjust)
        out.update(n=n_pair.astype(np.int64), mean_i=mean_i, mean_j=mean_i - m.estimate, difference=m.estimate,
                   difference_ci_low=judged.low, difference_ci_high=judged.high,
                   difference_ci_low_unadjusted=judged.low_unadjusted,
                   difference_ci_high_unadjusted=judged.high_unadjusted, difference_p=judged.p,
                   difference_p_adjusted=judged.p_adjusted)
    else:
        out.update(mean_rank_i=mean_i, mean_rank_j=mean_i - m.estimate, rank_difference=m.estimate)
    out.update(wilcoxon_statistic=w_stat, wilcoxon_p=w_p, wilcoxon_p_adjusted=adjust_p_values(w_p, adjust))
    return out, judged, i, j


__all__ = ["binary_pairs", "binomial_two_sided", "clopper_pearson", "cochrans_q", "conditional_odds_ratio",
           "EXACT_MULTINOMIAL_OUTCOMES", "EXACT_Q_CASES", "EXACT_Q_STATES", "judge", "Judged", "mcnemar_exact",
           "MeanDifferences", "multinomial_equal_test", "newcombe_interval", "OmnibusResult",
           "own_baselines", "OwnBaselines", "pair_counts", "PAIRED_CC", "PAIRED_METHODS", "PAIRED_VERDICTS",
           "PairedDifferences", "tango_interval", "wilcoxon_pairs"]
