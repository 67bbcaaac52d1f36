"""Sample-size-induced effects: the set M(n) of all CMs with sum n, and its holes.

docs/methods.md (Briscoe 2024, Theorem 4.3, Briscoe, Kepler et al., Table 1): over all C(n+3, 3) confusion
matrices with sum n, count those where a metric is undefined ("holes").

>>> from fairness_core import sample_size
>>> sample_size.count_matrices(10)
286
>>> sample_size.holes("TPR", 10), sample_size.holes("MCC", 10)
(11, 40)
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb
from typing import Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import stats
from scipy.special import gammaln

from . import metrics as m
from .confusion import ConfusionMatrix
from .imbalance import MEASURES as FAIRNESS_MEASURES, FairnessPMF, fairness_pmf  # noqa: F401  (re-exported names)

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

from .enumeration import MAX_ENUMERATION_N, _check_n, count_matrices, enumerate_matrices  # noqa: F401  (public here too)


def holes(metric: str, n: int) -> int:
    """Number of CMs with sum ``n`` where ``metric`` is undefined, counted by enumeration."""
    m.info(metric)
    values = m.compute(metric, *enumerate_matrices(n))
    return int(np.count_nonzero(np.isnan(values)))


def holes_theorem(metric: str, n: int) -> int | tuple[int, float]:
    """Hole count from Briscoe 2024, Theorem 4.3 / Briscoe, Kepler et al., Table 1 (valid for n >= 3).

    Exact counts for every metric but PT, for which the theorem gives bounds
    and this returns ``(lower, upper)``: at least 2n + 2 and below
    e^γ·n·ln ln n + 0.6483·n / ln ln n.

    Warning: enumeration shows the thesis's PT *upper* bound is false for every
    n >= 4 (n = 4 has 17 holes, the bound is 10.3; n = 100 has 721, the bound
    314). PT is undefined on all 4n MCC holes (TP = FP = 0 gives TPR = FPR = 0,
    and so on) plus every CM with all cells >= 1 and TP·TN = FP·FN, which the
    thesis's divisor argument undercounts; see :func:`pt_holes_exact`. The lower
    bound 2n + 2 holds.
    """
    m.info(metric)
    n = _check_n(n)
    if n < 3:
        raise ValueError("the theorem's counts hold for n >= 3")
    if metric in m.BINOMIAL or metric == "B":
        return 0
    if metric in m.JOINT_RATIO:
        return n + 1
    if metric == "F1":
        return 1
    if metric == "MCC":
        return 4 * n
    if metric == "F1_ORIG":
        return comb(n + 2, 2)
    lnln = np.log(np.log(n))
    upper = float(np.exp(np.euler_gamma) * n * lnln + 0.6483 * n / lnln) if lnln > 0 else float("inf")
    return (2 * n + 2, upper)


def cells_equal_to(x: int, n: int) -> int:
    """Number of CMs with sum n in which a given cell equals x: C(n − x + 2, 2)."""
    n = _check_n(n)
    x = _check_n(x)
    return comb(n - x + 2, 2) if x <= n else 0


def pt_holes_exact(n: int) -> int:
    """Exact PT hole count: 4n (the MCC holes) plus the CMs with every cell >= 1 and TP·TN = FP·FN.

    The second term is counted without enumerating M(n): for each product
    value v, the number of ordered pairs (TP, TN) and (FP, FN) with that
    product and a given sum is tallied, and pairs of pairs whose sums add to n
    are matched. O(n^2) memory-light array work; independent of
    :func:`holes`, so each checks the other.
    """
    n = _check_n(n)
    if n < 3:
        return holes("PT", n)
    a = np.arange(1, n)
    x, y = np.meshgrid(a, a, indexing="ij")
    keep = x + y <= n - 2
    prod = (x * y)[keep]
    total = (x + y)[keep]
    # count pairs with equal product and complementary sums: key (product, sum)
    key = prod.astype(np.int64) * (n + 1) + total
    uniq, counts = np.unique(key, return_counts=True)
    comp = uniq // (n + 1) * (n + 1) + (n - uniq % (n + 1))
    pos = np.minimum(np.searchsorted(uniq, comp), uniq.size - 1)
    partner = np.where(uniq[pos] == comp, counts[pos], 0)
    return 4 * n + int(np.dot(counts, partner))


# --- distributions of a metric over M(n) ----------------------------------------------------

#: Largest n for which :func:`metric_distribution` enumerates M(n) (C(n+3, 3) = 1.4 million at 200).
MAX_DISTRIBUTION_N = 200


@dataclass(frozen=True)
class MetricDistribution:
    """A metric's exact distribution over M(n).

    ``values`` are the distinct finite scores (sorted), ``probs`` their
    probabilities; ``p_undefined`` is the mass on holes, so
    ``probs.sum() + p_undefined == 1``. Moments and quantiles are conditional
    on the score being defined.
    """

    metric: str
    n: int
    weighting: str
    values: FloatArray
    probs: FloatArray
    p_undefined: float

    def cdf(self, x: npt.ArrayLike) -> FloatArray:
        """P(S <= x and S defined); it tops out at 1 − p_undefined."""
        c = np.concatenate([[0.0], np.cumsum(self.probs)])
        return c[np.searchsorted(self.values, np.asarray(x, dtype=float), side="right")]

    @property
    def p_defined(self) -> float:
        return float(self.probs.sum())

    def _moment(self, k: int) -> float:
        if self.p_defined == 0:
            return float("nan")
        w = self.probs / self.p_defined
        mu = float(w @ self.values)
        return mu if k == 1 else float(w @ (self.values - mu) ** k)

    @property
    def mean(self) -> float:
        return self._moment(1)

    @property
    def variance(self) -> float:
        return self._moment(2)

    @property
    def skewness(self) -> float:
        v = self.variance
        return self._moment(3) / v**1.5 if v > 0 else float("nan")

    @property
    def excess_kurtosis(self) -> float:
        v = self.variance
        return self._moment(4) / v**2 - 3 if v > 0 else float("nan")

    def quantile(self, q: npt.ArrayLike) -> FloatArray:
        """Smallest defined value whose conditional CDF reaches q."""
        q = np.asarray(q, dtype=float)
        if self.p_defined == 0:
            return np.full(q.shape, np.nan)
        c = np.cumsum(self.probs) / self.p_defined
        return self.values[np.minimum(np.searchsorted(c, q - 1e-12), self.values.size - 1)]


def reference_probs(reference: ConfusionMatrix | npt.ArrayLike) -> FloatArray:
    """Cell probabilities of a reference: a ConfusionMatrix, or four counts or probabilities
    [tp, fn, fp, tn] (finite, non-negative, positive sum), normalized to sum to 1."""
    p = reference.as_array() if isinstance(reference, ConfusionMatrix) else np.asarray(reference, dtype=float)
    if p.shape != (4,) or not np.isfinite(p).all() or (p < 0).any() or p.sum() <= 0:
        raise ValueError("the reference must be a non-empty ConfusionMatrix or four non-negative numbers "
                         "[tp, fn, fp, tn] with a positive sum")
    return p / p.sum()


def multinomial_pmf(tp: npt.ArrayLike, fn: npt.ArrayLike, fp: npt.ArrayLike, tn: npt.ArrayLike,
                    probs: npt.ArrayLike) -> FloatArray:
    """Multinomial probability of each CM (cells drawn with replacement with cell probabilities ``probs``)."""
    cells = np.stack([np.asarray(c, dtype=float) for c in (tp, fn, fp, tn)])
    p = np.asarray(probs, dtype=float).reshape(4, *([1] * (cells.ndim - 1)))
    n = cells.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(cells > 0, cells * np.log(p), 0.0)  # 0·log 0 = 0
    log = gammaln(n + 1) - gammaln(cells + 1).sum(axis=0) + terms.sum(axis=0)
    return np.exp(log)


def metric_distribution(metric: str, n: int, reference: ConfusionMatrix | npt.ArrayLike | None = None) -> MetricDistribution:
    """Exact distribution of ``metric`` over all CMs with sum ``n``.

    With ``reference=None`` every CM in M(n) is equally likely (Briscoe 2024, Fig. 4.2).
    Otherwise each CM has its multinomial probability when n individuals are
    drawn from ``reference`` (a CM, or cell probabilities), as in Briscoe 2024, Fig. 4.1.
    Distinct values are grouped after rounding to 12 decimals, far below the
    spacing of any two fractions with denominators <= n.
    """
    m.info(metric)
    n = _check_n(n)
    if n > MAX_DISTRIBUTION_N:
        raise ValueError(f"n = {n} is above the limit {MAX_DISTRIBUTION_N} for an enumerated distribution")
    cells = enumerate_matrices(n)
    values = m.compute(metric, *cells)
    if reference is None:
        weights = np.full(values.size, 1.0 / values.size)
        weighting = "uniform over M(n)"
    else:
        weights = multinomial_pmf(*cells, reference_probs(reference))
        weighting = "multinomial from the reference"
    ok = ~np.isnan(values)
    _, first, inverse = np.unique(np.round(values[ok], 12), return_index=True, return_inverse=True)
    distinct = values[ok][first]  # a representative, not the rounded key
    probs = np.bincount(inverse, weights=weights[ok], minlength=distinct.size)
    return MetricDistribution(metric, n, weighting, distinct, probs, float(weights[~ok].sum()))


def cdf_table(metrics: Sequence[str], ns: Sequence[int], reference: ConfusionMatrix | npt.ArrayLike | None = None) -> pd.DataFrame:
    """Long table (metric, n, value, cdf, p_undefined) of exact CDFs, one step per distinct value."""
    frames = []
    for metric in metrics:
        for n in ns:
            d = metric_distribution(metric, n, reference)
            frames.append(pd.DataFrame({"metric": metric, "n": n, "value": d.values,
                                        "cdf": d.cdf(d.values), "p_undefined": d.p_undefined}))
    return pd.concat(frames, ignore_index=True)


def hole_table(metrics: Sequence[str], ns: Sequence[int]) -> pd.DataFrame:
    """Holes by enumeration beside the theorem's count and |M(n)| = C(n+3, 3).

    Columns: metric, n, holes, theorem (exact count, or the PT lower bound),
    theorem_upper (PT only), matrices, share.
    """
    rows = []
    for n in ns:
        cells = enumerate_matrices(n)
        total = count_matrices(n)
        for metric in metrics:
            h = int(np.count_nonzero(np.isnan(m.compute(metric, *cells))))
            theo = holes_theorem(metric, n) if n >= 3 else None
            lower, upper = (theo if isinstance(theo, tuple) else (theo, None))
            rows.append({"metric": metric, "n": n, "holes": h,
                         "theorem": np.nan if lower is None else lower,
                         "theorem_upper": np.nan if upper is None else upper,
                         "matrices": total, "share": h / total})
    return pd.DataFrame(rows)


# --- sampling spread vs n (Briscoe 2024, Fig. 4.1) ----------------------------------------------------

def monte_carlo(metric: str, population: ConfusionMatrix | npt.ArrayLike, ns: Sequence[int], draws: int = 1000,
                seed: int | None = 0) -> pd.DataFrame:
    """Scores of ``draws`` random samples of each size in ``ns`` drawn with replacement from ``population``.

    Returns a long table (n, value) with NaN where the sample's score is undefined.
    """
    m.info(metric)
    p = reference_probs(population)
    rng = np.random.default_rng(seed)
    sizes = np.repeat(np.asarray([_check_n(n) for n in ns], dtype=np.int64), draws)
    cells = rng.multinomial(sizes, p)  # one row per draw, all sizes at once
    values = m.compute(metric, cells[:, 0], cells[:, 1], cells[:, 2], cells[:, 3])
    return pd.DataFrame({"n": sizes, "value": values})


def exact_spread(metric: str, population: ConfusionMatrix | npt.ArrayLike, ns: Sequence[int],
                 quantiles: Sequence[float] = (0.05, 0.25, 0.5, 0.75, 0.95)) -> pd.DataFrame:
    """Exact quantiles (conditional on a defined score), mean and P(undefined) per sample size.

    The exact counterpart of :func:`monte_carlo`: the multinomial distribution over M(n).
    """
    rows = []
    for n in ns:
        d = metric_distribution(metric, n, population)
        row = {"n": n, "mean": d.mean, "p_undefined": d.p_undefined}
        row.update({f"q{round(q * 100):02d}": v for q, v in zip(quantiles, d.quantile(quantiles))})
        rows.append(row)
    return pd.DataFrame(rows)


# --- the normal approximation for ACC and B (Briscoe 2024, Fig. 4.3, §4.5.4) --------------------------

#: Berry–Esseen constant: the thesis quotes 0.4097 <= C0 <= 0.56; the upper end is a valid bound.
BERRY_ESSEEN_C0 = 0.56


def _summand(metric: str, p: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Support and probabilities of one individual's contribution to n·S."""
    if metric == "ACC":
        acc = p[0] + p[3]
        return np.array([0.0, 1.0]), np.array([1 - acc, acc])
    if metric == "B":
        return np.array([-1.0, 0.0, 1.0]), np.array([p[1], p[0] + p[3], p[2]])
    raise ValueError("the normality study covers ACC and B, the sums of independent draws")


def exact_pmf(metric: str, n: int, reference: ConfusionMatrix | npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Exact PMF of ACC or B for n draws from ``reference``: (scores, probabilities), any n.

    ACC·n ~ Binomial(n, p_TP + p_TN); B·n = FP − FN by the O(n) conditioning of
    :func:`fairness_core.match.marginal_benefit_distribution`.
    """
    from .match import marginal_benefit_distribution

    p = reference_probs(reference)
    n = _check_n(n)
    if metric == "ACC":
        k = np.arange(n + 1)
        return k / n, stats.binom.pmf(k, n, p[0] + p[3])
    if metric == "B":
        s = np.arange(-n, n + 1)
        cdf, _ = marginal_benefit_distribution(s, n, p[2], p[1])
        return s / n, np.diff(np.concatenate([[0.0], cdf]))
    raise ValueError("exact_pmf covers ACC and B")


def normality(metric: str, ns: Sequence[int], reference: ConfusionMatrix | npt.ArrayLike) -> pd.DataFrame:
    """How far ACC or B is from normal at each n: skewness, excess kurtosis, the exact
    Kolmogorov distance of the plain and the continuity-corrected normal CDF, and the
    Berry–Esseen bound C0·ρ/(σ³·√n) on the plain one."""
    p = reference_probs(reference)
    x, w = _summand(metric, p)
    mu = float(w @ x)
    sigma = float(np.sqrt(w @ (x - mu) ** 2))
    rho = float(w @ np.abs(x - mu) ** 3)
    rows = []
    for n in ns:
        scores, probs = exact_pmf(metric, n, p)
        keep = probs > 0
        k = np.rint(scores[keep] * n)  # integer support of the sum
        cdf = np.cumsum(probs[keep])
        before = cdf - probs[keep]
        sd = sigma * np.sqrt(n)
        if sd == 0:
            rows.append({"n": n, "skewness": np.nan, "excess_kurtosis": np.nan, "max_error": np.nan,
                         "max_error_corrected": np.nan, "berry_esseen": np.nan})
            continue
        z = (k - n * mu) / sd
        plain = np.maximum(np.abs(cdf - stats.norm.cdf(z)), np.abs(before - stats.norm.cdf(z))).max()
        corrected = np.abs(cdf - stats.norm.cdf(z + 0.5 / sd)).max()
        d = MetricDistribution(metric, n, "multinomial from the reference", scores[keep], probs[keep], 0.0)
        rows.append({"n": n, "skewness": d.skewness, "excess_kurtosis": d.excess_kurtosis,
                     "max_error": float(plain), "max_error_corrected": float(corrected),
                     "berry_esseen": BERRY_ESSEEN_C0 * rho / (sigma**3 * np.sqrt(n))})
    return pd.DataFrame(rows)

