"""Benchmark: Conditional HydraGAN training steps/s and sampling rows/s on CPU.

Training: generator steps per second on the Adult rows (condition race × sex, 3 critic
steps with gradient penalty each), with torch on 1 thread (what the app uses in its server)
and on all threads. Sampling: rows per second for 10^6 rows at the model's batch size (8,192),
against the same generator sampled in training-sized batches of 256 (the baseline, run in
the same process). Goal (issue 6): >= 10^5 rows/s sampling. Prints a table and a JSON last line.

    python bench/hydragan.py [--steps 200] [--rows 1000000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fairness_core import datasets  # noqa: E402
from models import hydragan as H  # noqa: E402


def steps_per_second(data, steps: int, threads: int) -> float:  # type: ignore[no-untyped-def]
    torch.set_num_threads(threads)
    cfg = H.HydraConfig(condition_columns=["race", "sex"], diversity_column="income_over_50k", steps=steps,
                        quality_every=0)
    start = time.perf_counter()
    H.train(cfg, data)
    return steps / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--rows", type=int, default=1_000_000)
    args = ap.parse_args()
    data, _, _ = datasets.demo_table("adult")
    cores = torch.get_num_threads()
    one = steps_per_second(data, args.steps, 1)
    many = steps_per_second(data, args.steps, cores)
    torch.set_num_threads(cores)
    model = H.train(H.HydraConfig(condition_columns=["race", "sex"], diversity_column="income_over_50k", steps=20,
                                  quality_every=0), data)
    model.sample(1000)  # warm up
    start = time.perf_counter()
    rows = model.sample(args.rows, seed=1)
    fast = args.rows / (time.perf_counter() - start)
    base_rows = args.rows
    start = time.perf_counter()
    model.sample(base_rows, seed=1, batch=256)
    slow = base_rows / (time.perf_counter() - start)
    print(f"Adult rows: {len(data):,}, {len(model.schema.conditions)} conditions, data dim {model.schema.data_dim}")
    print(f"training   {one:8.1f} steps/s on 1 thread, {many:8.1f} on {cores} threads")
    print(f"sampling   {fast:12,.0f} rows/s (batch 8,192)   baseline {slow:12,.0f} rows/s (batch 256)   "
          f"ratio {fast / slow:.1f}x   goal >= 100,000: {'met' if fast >= 1e5 else 'NOT met'}")
    print(f"cuda: {'available' if torch.cuda.is_available() else 'not available on this machine (CPU only)'}")
    assert len(rows) == args.rows
    print(json.dumps({"bench": "hydragan", "steps_per_s_1_thread": round(one, 2), f"steps_per_s_{cores}_threads":
                      round(many, 2), "sample_rows_per_s": round(fast), "baseline_rows_per_s": round(slow),
                      "ratio": round(fast / slow, 2), "goal_met": fast >= 1e5}))


if __name__ == "__main__":
    main()
