"""Benchmark: the exact MATCH test, O(n), against the seed's O(n^2) double sums.

For the marginal benefit B the seed sums the trinomial probability over every
(FP, FN) pair (Briscoe 2024, eq. 4.27); for a joint ratio metric it sums, for every
denominator k, the binomial pmf over every numerator up to floor(s·k) (eq. 4.43).
Both are run here, vectorized with NumPy in row chunks (a fair baseline, not a
Python loop), at n = 10^2 .. 10^4, beside fairness_core.match's exact one-sample test
(``reference_is="population"``: the reference's rates known, as the sums assume); then exact alone up to
10^7. Goal (issue 3): exact at n = 10^6 well under a second (declared: at most 0.1 s), agreeing with the
thesis's sums to 1e-9.
Prints a table and a JSON last line.

    python bench/match.py [--max-baseline 10000] [--max-exact 10000000] [--quick]

``--quick``: the baseline up to n = 10^3, the exact test up to 10^6 (the goal's size).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from scipy import stats
from scipy.special import gammaln

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import at_most, declare, timed  # noqa: E402
from fairness_core import ConfusionMatrix, match  # noqa: E402

REFERENCE = ConfusionMatrix(3000, 1000, 2000, 4000)  # p = 0.3, 0.1, 0.2, 0.4 (Briscoe 2024, §4.5.4)
P = REFERENCE.as_array() / REFERENCE.n


def group_of(n: int) -> ConfusionMatrix:
    """A group of size n a little off the reference: more FP, fewer TP."""
    tp, fn, fp = int(0.28 * n), int(0.1 * n), int(0.23 * n)
    return ConfusionMatrix(tp, fn, fp, n - tp - fn - fp)


def seed_b_cdf(cm: ConfusionMatrix, chunk: int = 2000) -> float:
    """Briscoe 2024, eq. 4.27: sum the trinomial pmf over all (FP, FN) with FP - FN <= s. O(n^2)."""
    n, s = cm.n, cm.fp - cm.fn
    p_plus, p_minus, p0 = P[2], P[1], P[0] + P[3]
    fn = np.arange(n + 1)
    total = 0.0
    for lo in range(0, n + 1, chunk):
        fp = np.arange(lo, min(n, lo + chunk - 1) + 1)[:, None]
        ok = (fp + fn[None, :] <= n) & (fp - fn[None, :] <= s)
        rest = np.clip(n - fp - fn[None, :], 0, None)
        lp = (gammaln(n + 1) - gammaln(fp + 1) - gammaln(fn[None, :] + 1) - gammaln(rest + 1)
              + fp * np.log(p_plus) + fn[None, :] * np.log(p_minus) + rest * np.log(p0))
        total += float(np.exp(lp)[ok].sum())
    return total


def seed_jrm_cdf(cm: ConfusionMatrix, chunk: int = 2000) -> float:
    """Briscoe 2024, eq. 4.43 for TPR: for every k, the binomial pmf summed over k_i <= floor(s·k). O(n^2)."""
    n = cm.n
    s = cm.tp / (cm.tp + cm.fn)
    p = P[0] + P[1]
    theta = P[0] / p
    total = 0.0
    ki = np.arange(n + 1)
    for lo in range(1, n + 1, chunk):
        k = np.arange(lo, min(n, lo + chunk - 1) + 1)[:, None]
        inner = np.where(ki[None, :] <= np.floor(s * k + 1e-9), stats.binom.pmf(ki[None, :], k, theta), 0.0).sum(axis=1)
        total += float((stats.binom.pmf(k[:, 0], n, p) * inner).sum())
    return total / (1 - (1 - p) ** n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-baseline", type=int, default=10_000)
    ap.add_argument("--max-exact", type=int, default=None, help="largest n of the exact test (10^7; quick 10^6)")
    ap.add_argument("--quick", action="store_true", help="the baseline up to n = 10^3, the exact test up to 10^6")
    args = ap.parse_args()
    if args.quick:
        args.max_baseline = min(args.max_baseline, 1_000)
    args.max_exact = args.max_exact or (1_000_000 if args.quick else 10_000_000)

    rows = []
    print(f"{'metric':6} {'n':>10} {'seed O(n^2) s':>14} {'exact s':>10} {'ratio':>8} {'|diff|':>10}")
    for metric, seed in (("B", seed_b_cdf), ("TPR", seed_jrm_cdf)):
        n = 100
        while n <= args.max_exact:
            cm = group_of(n)
            t_exact, r = timed(match.test, metric, cm, REFERENCE, method="exact", reference_is="population")
            row = {"metric": metric, "n": n, "exact_s": t_exact, "cdf": r.cdf}
            if n <= args.max_baseline:
                t_seed, cdf_seed = timed(seed, cm, repeat=1 if n >= 10_000 else 3)
                row.update(seed_s=t_seed, ratio=t_seed / t_exact, diff=abs(cdf_seed - r.cdf))
            rows.append(row)
            seed_txt = f"{row['seed_s']:14.4f}" if "seed_s" in row else f"{'—':>14}"
            ratio_txt = f"{row['ratio']:8.0f}" if "ratio" in row else f"{'—':>8}"
            diff_txt = f"{row['diff']:10.1e}" if "diff" in row else f"{'—':>10}"
            print(f"{metric:6} {n:>10,} {seed_txt} {t_exact:10.4f} {ratio_txt} {diff_txt}")
            n *= 10
    at_million = max(r["exact_s"] for r in rows if r["n"] == 1_000_000)
    at_top = {r["metric"]: round(r["exact_s"], 4) for r in rows if r["n"] == max(x["n"] for x in rows)}
    ratios = {f"{r['metric']}@{r['n']}": round(r["ratio"], 1) for r in rows if "ratio" in r}
    print(f"exact at n = 10^6: {at_million:.4f} s (goal: well under 1 s)")
    top_ratio = max((r for r in rows if "ratio" in r), key=lambda r: (r["n"], r["metric"] == "B"))
    print(json.dumps(declare(
        {"exact_seconds_at_1e6": round(at_million, 4), "exact_seconds_at_max": at_top,
         "ratio_seed_over_exact": ratios, "max_abs_cdf_diff": max(r.get("diff", 0.0) for r in rows)},
        goals={"exact_seconds_at_1e6": at_most(0.1), "max_abs_cdf_diff": at_most(1e-9)},
        ratio=(round(top_ratio["ratio"], 1), f"the thesis's O(n^2) sum / exact, {top_ratio['metric']} at n = "
               f"{top_ratio['n']:,}"), quick=args.quick)))


if __name__ == "__main__":
    main()
