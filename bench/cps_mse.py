"""Benchmark: the exact smoothing error curves (Briscoe 2024, Figs 4.4–4.6, Briscoe, Kepler et al., Figs 3–7) against Monte Carlo.

Exact: 15 metrics x 6 smoothers (raw, ε = 1e-10, ε = 1, CPS λ = 5, 10, 20) x n = 5..150 for one
group, summing over all C(n+3, 3) CMs of each n with their multinomial probabilities. Goal
(issue 4): <= 60 s on 2 cores. The seeds instead draw 10^6 subsamples per n; the baseline here
runs that Monte Carlo for one metric at a few n, extrapolates its time to all 146 n (and to 15
metrics), and checks that it agrees with exact within its standard error. JSON last line.

    python bench/cps_mse.py [--group Asian] [--draws 1000000] [--quick]

``--quick``: the same exact curves (the goal's work), the Monte Carlo baseline at 10^5 draws per n. Declared
goals: exact within 60 s, and Monte Carlo within 4 standard errors of exact everywhere it was run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import at_most, declare, timed  # noqa: E402
from fairness_core import datasets, smoothing  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--demo", default="compas_race")
    ap.add_argument("--group", default="Asian")
    ap.add_argument("--draws", type=int, default=None, help="Monte Carlo draws per n (10^6; quick 10^5)")
    ap.add_argument("--mc-metric", default="MCC")
    ap.add_argument("--quick", action="store_true", help="the Monte Carlo baseline at 10^5 draws per n")
    args = ap.parse_args()
    args.draws = args.draws or (100_000 if args.quick else 1_000_000)

    audit = datasets.load_demo(args.demo)
    group, ref = audit.cms[args.group], audit.rest_of(args.group)
    ns = list(range(5, 151))

    exact_s, exact = timed(smoothing.error_curves, group, ref, ns, mode="exact", repeat=1)
    print(f"exact: {exact.metric.nunique()} metrics x {exact.smoother.nunique()} smoothers x {len(ns)} n "
          f"for {args.group} (n = {group.n}) in {exact_s:.1f} s")

    probe = [5, 20, 50, 100, 150]
    mc_s, mc = timed(smoothing.error_curves, group, ref, probe, names=[args.mc_metric], mode="monte_carlo",
                     draws=args.draws, seed=0, repeat=1)
    per_n = mc_s / len(probe)
    mc_all_n = per_n * len(ns)
    merged = mc.merge(exact, on=["metric", "smoother", "n"], suffixes=("_mc", "_exact"))
    z = float(((merged.mse_mc - merged.mse_exact).abs() / merged.se_mc).max())
    print(f"Monte Carlo ({args.draws:,} draws per n, {args.mc_metric} only): {per_n:.2f} s per n -> "
          f"{mc_all_n:.0f} s for all {len(ns)} n, ~{mc_all_n * 15:.0f} s for 15 metrics; "
          f"largest |MC - exact| = {z:.2f} standard errors")

    wins = (exact.pivot_table(index=["metric", "n"], columns="smoother", values="mse"))
    cps_beats_raw = float((wins["CPS λ = 10"] < wins["raw"]).mean())
    print(f"CPS λ = 10 below raw in {cps_beats_raw:.0%} of (metric, n) cells for {args.group}")
    ratio = round(mc_all_n * 15 / exact_s, 1)
    print(json.dumps(declare(
        {"group": args.group, "exact_seconds": round(exact_s, 2), "goal_seconds": 60,
         "mc_draws_per_n": args.draws, "mc_seconds_per_n_one_metric": round(per_n, 3),
         "mc_seconds_extrapolated_one_metric_all_n": round(mc_all_n, 1),
         "ratio_mc_15_metrics_over_exact": ratio, "max_mc_exact_z": round(z, 2),
         "cps10_below_raw_share": round(cps_beats_raw, 3)},
        goals={"exact_seconds": at_most(60), "max_mc_exact_z": at_most(4)},
        ratio=(ratio, f"Monte Carlo at {args.draws:,} draws per n, 15 metrics, extrapolated / exact"),
        quick=args.quick)))


if __name__ == "__main__":
    main()
