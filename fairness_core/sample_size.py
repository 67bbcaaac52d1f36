"""Sample-size-induced effects: the set M(n) of all CMs with sum n, and its holes.

SCIENCE.md §1 (000 Theorem 4.3, 002 Table 1): over all C(n+3, 3) confusion
matrices with sum n, count those where a metric is undefined ("holes").

>>> from fairness_core import sample_size
>>> sample_size.count_matrices(10)
286
>>> sample_size.holes("TPR", 10), sample_size.holes("MCC", 10)
(11, 40)
"""

from __future__ import annotations

from math import comb

import numpy as np
import numpy.typing as npt

from . import metrics as m

IntArray = npt.NDArray[np.int64]

#: Largest n that :func:`enumerate_matrices` materializes (C(n+3,3) rows of 4 cells).
MAX_ENUMERATION_N = 1000


def count_matrices(n: int) -> int:
    """|M(n)| = C(n+3, 3), the number of CMs with sum n (stars and bars)."""
    n = _check_n(n)
    return comb(n + 3, 3)


def _check_n(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be an integer >= 0, got {n!r}")
    return int(n)


def enumerate_matrices(n: int) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Every CM with sum ``n`` as four arrays ``(tp, fn, fp, tn)`` of length C(n+3, 3).

    Vectorized: each CM is a non-decreasing triple 0 <= s1 <= s2 <= s3 <= n of
    partial sums, tp = s1, fn = s2 − s1, fp = s3 − s2, tn = n − s3. The pairs
    (s2, s3) come from ``triu_indices``; each is repeated s2 + 1 times for s1.
    """
    n = _check_n(n)
    if n > MAX_ENUMERATION_N:
        raise ValueError(f"n = {n} would enumerate {count_matrices(n):,} matrices; "
                         f"the limit is n <= {MAX_ENUMERATION_N}")
    s2, s3 = np.triu_indices(n + 1)
    reps = s2 + 1
    s2r = np.repeat(s2, reps)
    s3r = np.repeat(s3, reps)
    starts = np.repeat(np.cumsum(reps) - reps, reps)
    s1 = np.arange(s2r.size) - starts
    tp = s1.astype(np.int64)
    fn = (s2r - s1).astype(np.int64)
    fp = (s3r - s2r).astype(np.int64)
    tn = (n - s3r).astype(np.int64)
    return tp, fn, fp, tn


def holes(metric: str, n: int) -> int:
    """Number of CMs with sum ``n`` where ``metric`` is undefined, counted by enumeration."""
    m.info(metric)
    values = m.compute(metric, *enumerate_matrices(n))
    return int(np.count_nonzero(np.isnan(values)))


def holes_theorem(metric: str, n: int) -> int | tuple[int, float]:
    """Hole count from 000 Theorem 4.3 / 002 Table 1 (valid for n >= 3).

    Exact counts for every metric but PT, for which the theorem gives bounds
    and this returns ``(lower, upper)``: at least 2n + 2 and below
    e^γ·n·ln ln n + 0.6483·n / ln ln n.

    Warning: enumeration shows the seed's PT *upper* bound is false for every
    n >= 4 (n = 4 has 17 holes, the bound is 10.3; n = 100 has 721, the bound
    314). PT is undefined on all 4n MCC holes (TP = FP = 0 gives TPR = FPR = 0,
    and so on) plus every CM with all cells >= 1 and TP·TN = FP·FN, which the
    seed's divisor argument undercounts; see :func:`pt_holes_exact`. The lower
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
