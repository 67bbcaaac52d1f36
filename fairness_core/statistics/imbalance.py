"""Fairness measures under class and group imbalance (docs/methods.md; Properties of fairness measures).

Two groups, protected (p) and unprotected (u): a pair of confusion matrices is
an 8-tuple of counts summing to n. With IR·n actual positives and GR·n
protected examples fixed, every such 8-tuple is taken as equally likely and
each of six difference measures (protected minus unprotected) gets an exact
probability mass function, a probability of perfect fairness (value exactly 0)
and a probability of being undefined.

Nothing is enumerated tuple by tuple. A pair's measure is f(CM_p) − f(CM_u)
and, once the split of positives P = P_p + P_u is fixed, the two groups vary
independently; so the counts factor. For each group size and positive count
the group's values are tallied on the grid of fractions with denominator
<= n, the two tallies are multiplied (a matrix product summing over the
split), and each pair of fractions is mapped to its exact difference
(a·d − c·b)/(b·d), one correctly rounded division of exact integers, so equal
rationals give identical floats and "exactly 0" means an integer numerator 0.

>>> from fairness_core import sample_size
>>> pmf = sample_size.fairness_pmf("equal_opportunity", n=8, ir=0.5, gr=0.5)
>>> pmf.total, round(pmf.p_perfect, 4), round(pmf.p_undefined, 4)
(259, 0.2278, 0.1931)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import comb
from typing import Iterator

import numpy as np
import numpy.typing as npt
import pandas as pd

from .enumeration import enumerate_matrices

#: The six measures of Properties of fairness measures (eqs. 7–12), each protected minus unprotected.
MEASURES: tuple[str, ...] = (
    "accuracy_equality", "statistical_parity", "equal_opportunity",
    "predictive_equality", "positive_predictive_parity", "negative_predictive_parity",
)

LABELS: dict[str, str] = {
    "accuracy_equality": "Accuracy Equality (ΔACC)",
    "statistical_parity": "Statistical Parity (ΔPPR)",
    "equal_opportunity": "Equal Opportunity (ΔTPR)",
    "predictive_equality": "Predictive Equality (ΔFPR)",
    "positive_predictive_parity": "Positive Predictive Parity (ΔPPV)",
    "negative_predictive_parity": "Negative Predictive Parity (ΔNPV)",
}

#: Largest n :func:`fairness_pmf` accepts (the grid of fractions grows as n^2).
MAX_N = 200

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class FairnessPMF:
    """Exact distribution of one measure over all equally likely 8-tuples.

    ``values`` are the distinct finite values, sorted; ``probs`` their
    probabilities and ``counts`` the exact number of 8-tuples giving each.
    ``probs.sum() + p_undefined == 1``.
    """

    measure: str
    n: int
    positives: int
    protected: int
    values: npt.NDArray[np.float64]
    counts: IntArray
    total: int
    undefined: int

    @property
    def probs(self) -> npt.NDArray[np.float64]:
        return self.counts / self.total

    @property
    def p_undefined(self) -> float:
        return self.undefined / self.total

    @property
    def p_perfect(self) -> float:
        """P(measure == 0 exactly)."""
        i = np.searchsorted(self.values, 0.0)
        return float(self.counts[i] / self.total) if i < self.values.size and self.values[i] == 0 else 0.0

    @property
    def ir(self) -> float:
        return self.positives / self.n

    @property
    def gr(self) -> float:
        return self.protected / self.n

    def histogram(self, bins: int = 21) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Probability per bin (edges, masses): ``bins`` equal bins centred on −1, …, 0, …, 1, so
        perfect fairness sits in the middle of a bin (``bins`` odd, >= 3)."""
        if bins < 3 or bins % 2 == 0:
            raise ValueError(f"bins must be odd and >= 3 so that 0 is a bin centre, got {bins}")
        half = 1.0 / (bins - 1)
        edges = np.linspace(-1.0 - half, 1.0 + half, bins + 1)
        idx = np.clip(np.searchsorted(edges, self.values, side="right") - 1, 0, bins - 1)
        return edges, np.bincount(idx, weights=self.probs, minlength=bins)


def _check(n: int, ir: float, gr: float) -> tuple[int, int]:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if n > MAX_N:
        raise ValueError(f"n = {n} is above the limit {MAX_N}")
    out = []
    for name, share in (("IR", ir), ("GR", gr)):
        if not 0 <= share <= 1:
            raise ValueError(f"{name} must lie in [0, 1], got {share}")
        count = Fraction(share).limit_denominator(10**9) * n
        if count.denominator != 1:
            raise ValueError(f"{name}·n = {float(count):g} is not an integer: with n = {n}, {name} must be a "
                             f"multiple of 1/{n}")
        out.append(int(count))
    return out[0], out[1]


def _check_measure(measure: str) -> None:
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; expected one of {', '.join(MEASURES)}")


def _fraction_grid(n: int) -> tuple[npt.NDArray[np.float64], IntArray, IntArray]:
    """All distinct fractions a/b with 1 <= b <= n, 0 <= a <= b, sorted: (values, a, b) reduced."""
    b, a = np.divmod(np.arange((n + 1) ** 2), n + 1)
    keep = (b >= 1) & (a <= b) & (np.gcd(a, b) == 1)
    a, b = a[keep], b[keep]
    values = a / b
    order = np.argsort(values, kind="stable")
    return values[order], a[order].astype(np.int64), b[order].astype(np.int64)


def _group_cells(n_g: int) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Every CM of sum n_g as (tp, fn, fp, tn)."""
    return enumerate_matrices(n_g)


def _num_den(measure: str, tp: IntArray, fn: IntArray, fp: IntArray, tn: IntArray) -> tuple[IntArray, IntArray]:
    """The group's score as an integer fraction; den == 0 means undefined."""
    n = tp + fn + fp + tn
    if measure == "accuracy_equality":
        return tp + tn, n
    if measure == "statistical_parity":
        return tp + fp, n
    if measure == "equal_opportunity":
        return tp, tp + fn
    if measure == "predictive_equality":
        return fp, fp + tn
    if measure == "positive_predictive_parity":
        return tp, tp + fp
    return tn, tn + fn  # negative_predictive_parity


@dataclass(frozen=True)
class _GroupTable:
    """For one group size n_g: counts[P_g, j] = number of CMs with P_g positives scoring grid value j."""

    counts: npt.NDArray[np.float64]  # (n_g + 1, |support|), exact integers held in float64 for BLAS
    support: IntArray  # grid indices with any mass
    defined: npt.NDArray[np.float64]  # per P_g
    total: npt.NDArray[np.float64]  # per P_g: (P_g + 1)(N_g + 1)


def _group_table(measure: str, n_g: int, grid: npt.NDArray[np.float64]) -> _GroupTable:
    tp, fn, fp, tn = _group_cells(n_g)
    pos = tp + fn
    num, den = _num_den(measure, tp, fn, fp, tn)
    ok = den > 0
    idx = np.searchsorted(grid, num[ok] / den[ok])  # exact: a correctly rounded quotient is canonical
    support, col = np.unique(idx, return_inverse=True)
    counts = np.bincount(pos[ok] * support.size + col, minlength=(n_g + 1) * support.size)
    counts = counts.reshape(n_g + 1, support.size).astype(float)
    total = np.bincount(pos, minlength=n_g + 1).astype(float)
    return _GroupTable(counts, support, counts.sum(axis=1), total)


def _differences(grid_a: IntArray, grid_b: IntArray, sp: IntArray, su: IntArray) -> tuple[npt.NDArray[np.float64], IntArray]:
    """Exact differences a_p/b_p − a_u/b_u over support pairs: (distinct sorted values, inverse)."""
    ap, bp = grid_a[sp][:, None], grid_b[sp][:, None]
    au, bu = grid_a[su][None, :], grid_b[su][None, :]
    diff = (ap * bu - au * bp) / (bp * bu)
    values, inverse = np.unique(diff.ravel(), return_inverse=True)
    return values, inverse


def _pmfs_for_protected(measure: str, n: int, n_p: int, positives: range, tables: dict[int, _GroupTable],
                        grid: tuple[npt.NDArray[np.float64], IntArray, IntArray]) -> Iterator[FairnessPMF]:
    """PMFs for one protected size and each positive count in ``positives``."""
    n_u = n - n_p
    tp_, tu_ = tables[n_p], tables[n_u]
    values, inverse = _differences(grid[1], grid[2], tp_.support, tu_.support)
    for pos in positives:
        lo, hi = max(0, pos - n_u), min(pos, n_p)
        if lo > hi:
            raise ValueError(f"{pos} positives cannot be split between groups of {n_p} and {n_u}")
        pp = np.arange(lo, hi + 1)
        pu = pos - pp
        joint = tp_.counts[pp].T @ tu_.counts[pu]  # sums over the split of positives
        counts = np.bincount(inverse, weights=joint.ravel(), minlength=values.size)
        total = int(round(float(tp_.total[pp] @ tu_.total[pu])))
        defined = int(round(float(tp_.defined[pp] @ tu_.defined[pu])))
        keep = counts > 0
        yield FairnessPMF(measure, n, pos, n_p, values[keep], np.rint(counts[keep]).astype(np.int64),
                          total, total - defined)


def fairness_pmf(measure: str, n: int, ir: float, gr: float) -> FairnessPMF:
    """Exact PMF of a fairness measure of *Properties of fairness measures* over all 8-tuples with sum ``n``.

    Parameters
    ----------
    measure : str
        One of :data:`MEASURES`; each is the protected group's score minus
        the unprotected group's.
    n : int
        Data set size (sum of the two confusion matrices), 1 <= n <= 200.
    ir, gr : float
        Imbalance ratio (share of actual positives) and group ratio (share of
        the protected group). IR·n and GR·n must be integers.

    Returns
    -------
    FairnessPMF
        ``values``, ``probs``, ``p_perfect``, ``p_undefined``, with exact
        integer ``counts`` of 8-tuples behind every probability.

    Raises
    ------
    ValueError
        Unknown measure, or IR·n or GR·n not an integer.
    """
    _check_measure(measure)
    positives, protected = _check(n, ir, gr)
    grid = _fraction_grid(n)
    tables = {size: _group_table(measure, size, grid[0]) for size in {protected, n - protected}}
    return next(_pmfs_for_protected(measure, n, protected, range(positives, positives + 1), tables, grid))


def all_pmfs(measure: str, n: int) -> Iterator[FairnessPMF]:
    """The PMF for every (IR, GR) combination at size ``n``: all C(n+7, 7) 8-tuples, factored.

    Yields (n + 1)^2 :class:`FairnessPMF`, protected count outer, positives inner.
    """
    _check_measure(measure)
    _check(n, 0, 0)
    grid = _fraction_grid(n)
    tables = {size: _group_table(measure, size, grid[0]) for size in range(n + 1)}
    for n_p in range(n + 1):
        yield from _pmfs_for_protected(measure, n, n_p, range(n + 1), tables, grid)


def tuple_count(n: int) -> int:
    """Number of 8-tuples of non-negative integers summing to n: C(n + 7, 7)."""
    return comb(n + 7, 7)


def summary_across_ir(n: int, gr: float, measures: tuple[str, ...] = MEASURES) -> pd.DataFrame:
    """P(perfect), P(undefined), mean, standard deviation and number of distinct values of each
    measure at every IR = k/n, k = 0..n, for one group ratio (Properties of fairness measures, Figs 6, 7 and 9).

    Mean and standard deviation are over the defined values.
    """

    _, protected = _check(n, 0, gr)
    grid = _fraction_grid(n)
    rows = []
    for measure in measures:
        _check_measure(measure)
        tables = {size: _group_table(measure, size, grid[0]) for size in {protected, n - protected}}
        for pmf in _pmfs_for_protected(measure, n, protected, range(n + 1), tables, grid):
            defined = pmf.counts.sum()
            mean = float(pmf.counts @ pmf.values / defined) if defined else float("nan")
            std = float(np.sqrt(pmf.counts @ (pmf.values - mean) ** 2 / defined)) if defined else float("nan")
            rows.append({"measure": measure, "ir": pmf.ir, "positives": pmf.positives,
                         "p_perfect": pmf.p_perfect, "p_undefined": pmf.p_undefined,
                         # round: symmetric PMFs print 0, not -1e-17
                         "mean": round(mean, 12) + 0.0, "std": std, "distinct values": int(pmf.values.size)})
    return pd.DataFrame(rows)
