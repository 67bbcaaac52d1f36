"""Benchmark: the verdict table for every pair of groups, vectorized, against the per-pair loop it replaced.

The baseline is the previous ``Audit.verdicts``: for each unordered pair, OFI and DI
from ``bias.compare`` and one exact MATCH test of B (which the new table replaces with
two-sample intervals). It is timed on a subset of groups and reported per pair; the new
table is timed on the same subset and on 500 groups (124,750 pairs). Goal (issue 13):
500 groups in <= 1 s. Group sizes are drawn log-uniformly from 5 to 5,000 rows, so the
small-sample methods (adjusted OFI, exact DI) and the large-sample ones are all exercised.
Prints a table and a JSON last line.

    python bench/verdicts.py [--groups 500] [--baseline-groups 60] [--quick]

``--quick``: the same 500 groups (the goal's size, about a second), best of 2 instead of 3, and the loop
baseline on 30 groups.
"""

from __future__ import annotations

import argparse
import json
import sys
from itertools import combinations
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import at_most, declare, timed  # noqa: E402
from fairness_core import ConfusionMatrix, bias, match  # noqa: E402
from fairness_core.audit import Audit  # noqa: E402


def random_audit(k: int, seed: int = 0) -> Audit:
    rng = np.random.default_rng(seed)
    sizes = np.exp(rng.uniform(np.log(5), np.log(5000), k)).astype(int)
    cms = {}
    for g, n in enumerate(sizes):
        p = rng.dirichlet([6, 2, 2, 6])
        cms[f"group {g:03d}"] = ConfusionMatrix(*rng.multinomial(n, p))
    return Audit(cms)


def per_pair_loop(audit: Audit) -> list[tuple]:
    """The previous implementation's work per pair (OFI, DI, four-fifths, MATCH p of B)."""
    rows = []
    for gi, gj in combinations(audit.groups, 2):
        ci, cj = audit.cms[gi], audit.cms[gj]
        ofi, di = bias.compare("OFI", ci, cj), bias.compare("DI", ci, cj)
        small, large = (ci, cj) if ci.n <= cj.n else (cj, ci)
        rows.append((gi, gj, ofi, di, bias.four_fifths_verdict(di), match.test("B", small, large, reference_is="population").p_value))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", type=int, default=500)
    ap.add_argument("--baseline-groups", type=int, default=None, help="groups of the loop baseline (60; quick 30)")
    ap.add_argument("--quick", action="store_true", help="best of 2, a 30-group baseline")
    args = ap.parse_args()
    args.baseline_groups = args.baseline_groups or (30 if args.quick else 60)
    repeat = 2 if args.quick else 3

    subset, full = random_audit(args.baseline_groups), random_audit(args.groups)
    pairs_subset = len(subset.groups) * (len(subset.groups) - 1) // 2
    pairs_full = len(full.groups) * (len(full.groups) - 1) // 2
    t_loop, _ = timed(per_pair_loop, subset, repeat=1)
    t_new_subset, _ = timed(subset.verdicts, repeat=repeat)
    t_new_full, table = timed(full.verdicts, repeat=repeat)
    per_pair_loop_s = t_loop / pairs_subset
    per_pair_new_s = t_new_full / pairs_full
    print(f"{'':28} {'groups':>7} {'pairs':>9} {'seconds':>9} {'us/pair':>9}")
    print(f"{'per-pair loop (before)':28} {len(subset.groups):>7} {pairs_subset:>9,} {t_loop:9.3f} {1e6 * per_pair_loop_s:9.1f}")
    print(f"{'vectorized verdicts':28} {len(subset.groups):>7} {pairs_subset:>9,} {t_new_subset:9.3f} "
          f"{1e6 * t_new_subset / pairs_subset:9.1f}")
    print(f"{'vectorized verdicts':28} {len(full.groups):>7} {pairs_full:>9,} {t_new_full:9.3f} {1e6 * per_pair_new_s:9.1f}")
    print(f"loop extrapolated to {pairs_full:,} pairs: {per_pair_loop_s * pairs_full:.1f} s; "
          f"ratio per pair {per_pair_loop_s / per_pair_new_s:.0f}x; goal <= 1 s for {pairs_full:,} pairs")
    counts = table["verdict"].value_counts().to_dict()
    ratio = round(per_pair_loop_s / per_pair_new_s, 1)
    print(json.dumps(declare(
        {"groups": len(full.groups), "pairs": pairs_full, "seconds": round(t_new_full, 3),
         "loop_seconds_extrapolated": round(per_pair_loop_s * pairs_full, 1),
         "ratio_loop_over_vectorized_per_pair": ratio, "goal_seconds": 1.0, "verdict_counts": counts},
        goals={"seconds": at_most(1.0)} if len(full.groups) == 500 else {},
        ratio=(ratio, "per-pair loop / vectorized table, per pair"), quick=args.quick)))


if __name__ == "__main__":
    main()
