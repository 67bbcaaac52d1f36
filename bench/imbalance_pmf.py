"""Benchmark: exact PMFs (Properties of fairness measures) of six fairness measures for every (IR, GR) at n = 56.

All C(n+7, 7) two-group confusion matrices (553,270,671 at n = 56) are covered, by
counts that factor (fairness_core.imbalance), never materialized. Goal (issue 3): <= 10 s
on 2 cores; the seed's own code needed 82 minutes just to generate the tuples.

The baseline, run in the same process, is the direct route: materialize every 8-tuple
with NumPy, compute the six measures as exact rationals and count (IR, GR, value)
triples. It is run at a small n (default 18) where it fits in memory; its tuples/s rate
is extrapolated to the full n, and its counts cross-check ours at that n.
Prints the timings and a JSON last line.

    python bench/imbalance_pmf.py [--n 56] [--baseline-n 18] [--quick]

``--quick``: the same n = 56 (the goal's size, a few seconds), the baseline at n = 14.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import at_most, declare, equal_to, stopwatch, timed  # noqa: E402
from fairness_core import imbalance  # noqa: E402


def compositions(n: int, k: int) -> np.ndarray:
    """Every k-tuple of non-negative integers with sum n, as rows (vectorized stars and bars)."""
    # non-decreasing partial sums 0 <= s_1 <= ... <= s_{k-1} <= n, built one level at a time
    cols = [np.arange(n + 1)]
    for _ in range(k - 2):
        reps = cols[-1] + 1
        starts = np.repeat(np.cumsum(reps) - reps, reps)
        inner = np.arange(int(reps.sum())) - starts
        cols = [np.repeat(c, reps) for c in cols] + [inner]
    s = np.column_stack(cols[::-1])  # s_1 <= ... <= s_{k-1}
    edges = np.column_stack([np.zeros(len(s), dtype=np.int64), s, np.full(len(s), n)])
    return np.diff(edges, axis=1)


SCORE = {  # (numerator cells, denominator cells) over [tp, fn, fp, tn]
    "accuracy_equality": ((0, 3), (0, 1, 2, 3)), "statistical_parity": ((0, 2), (0, 1, 2, 3)),
    "equal_opportunity": ((0,), (0, 1)), "predictive_equality": ((2,), (2, 3)),
    "positive_predictive_parity": ((0,), (0, 2)), "negative_predictive_parity": ((3,), (3, 1)),
}


def brute_force(n: int) -> tuple[int, float, dict]:
    """Materialize all tuples and count (measure, positives, protected, value) with one sort per measure.

    Returns (tuples, seconds spent materializing and counting, {(measure, positives, protected):
    (values, counts, undefined)}); building the dictionary for the cross-check is not timed.
    """
    with stopwatch() as took:
        t = compositions(n, 8)
        p, u = t[:, :4], t[:, 4:]
        key = (p[:, 0] + p[:, 1] + u[:, 0] + u[:, 1]) * (n + 1) + p.sum(axis=1)
        counted = {}
        for measure, (num, den) in SCORE.items():
            a, b = p[:, num].sum(axis=1), p[:, den].sum(axis=1)
            c, d = u[:, num].sum(axis=1), u[:, den].sum(axis=1)
            ok = (b > 0) & (d > 0)
            value = np.full(len(t), np.inf)  # inf marks undefined and sorts last
            value[ok] = (a[ok] * d[ok] - c[ok] * b[ok]) / (b[ok] * d[ok])  # one exact-integer division
            order = np.lexsort((value, key))
            k, v = key[order], value[order]
            start = np.flatnonzero(np.concatenate([[True], (k[1:] != k[:-1]) | (v[1:] != v[:-1])]))
            counted[measure] = (k[start], v[start], np.diff(np.append(start, len(k))))
    seconds = took.seconds
    out: dict = {}
    for measure, (k, v, cnt) in counted.items():
        for kk in np.unique(k):
            sel = k == kk
            finite = sel & np.isfinite(v)
            out[(measure, int(kk // (n + 1)), int(kk % (n + 1)))] = (v[finite], cnt[finite], int(cnt[sel & ~np.isfinite(v)].sum()))
    return len(t), seconds, out


def factored(n: int) -> tuple[int, dict]:
    tuples, out = 0, {}
    for measure in imbalance.MEASURES:
        covered = 0
        for pmf in imbalance.all_pmfs(measure, n):
            covered += pmf.total
            out[(measure, pmf.positives, pmf.protected)] = (pmf.values, pmf.counts, pmf.undefined)
        if covered != imbalance.tuple_count(n):
            raise AssertionError(f"{measure}: covered {covered} tuples, expected {imbalance.tuple_count(n)}")
        tuples = covered
    return tuples, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=56)
    ap.add_argument("--baseline-n", type=int, default=None, help="the baseline's n (18; quick 14)")
    ap.add_argument("--quick", action="store_true", help="the baseline at n = 14")
    args = ap.parse_args()
    args.baseline_n = args.baseline_n or (14 if args.quick else 18)

    base_tuples, base_s, base = brute_force(args.baseline_n)
    _, check = factored(args.baseline_n)
    agree = base.keys() == check.keys() and all(
        np.array_equal(base[k][0], check[k][0]) and np.array_equal(base[k][1], check[k][1]) and base[k][2] == check[k][2]
        for k in base)
    rate = base_tuples / base_s
    print(f"baseline (materialize + count) at n = {args.baseline_n}: {base_tuples:,} tuples in {base_s:.2f} s "
          f"({rate:,.0f} tuples/s); factored counts agree: {agree}")

    seconds, (tuples, _) = timed(factored, args.n, repeat=1)
    extrapolated = tuples / rate
    print(f"factored at n = {args.n}: six measures x {(args.n + 1) ** 2:,} (IR, GR) PMFs over {tuples:,} tuples "
          f"in {seconds:.2f} s")
    print(f"baseline extrapolated to n = {args.n}: {extrapolated:,.0f} s (and {tuples * 8 * 8 / 2**30:,.0f} GiB "
          f"to hold the tuples); ratio {extrapolated / seconds:,.0f}x")
    print(json.dumps(declare(
        {"n": args.n, "tuples": tuples, "seconds": round(seconds, 3), "goal_seconds": 10,
         "baseline_n": args.baseline_n, "baseline_tuples_per_s": round(rate),
         "baseline_extrapolated_seconds": round(extrapolated, 1),
         "ratio": round(extrapolated / seconds, 1), "agree_at_baseline_n": agree},
        goals={**({"seconds": at_most(10)} if args.n == 56 else {}), "agree_at_baseline_n": equal_to(True)},
        ratio=(round(extrapolated / seconds, 1), "materialize-and-count, extrapolated / factored"),
        quick=args.quick)))
    if not agree:
        sys.exit(1)


if __name__ == "__main__":
    main()
