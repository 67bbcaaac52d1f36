"""Every confusion matrix with sum n: the set M(n) that the exact methods sum over.

The lowest layer of the exact methods: :mod:`fairness_core.sample_size`,
:mod:`fairness_core.imbalance` and :mod:`fairness_core.smoothing` all import it,
and it imports none of them.

>>> from fairness_core.statistics.enumeration import count_matrices, enumerate_matrices
>>> count_matrices(2), len(enumerate_matrices(2)[0])
(10, 10)
"""

from __future__ import annotations

from math import comb

import numpy as np
import numpy.typing as npt

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
