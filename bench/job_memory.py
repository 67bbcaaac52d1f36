"""Benchmark: peak memory of a HydraGAN experiment and of a PTN run against their estimates.

    python bench/job_memory.py                  # both models, a few sizes each (a few minutes on 2 cores)
    python bench/job_memory.py --only ptn       # one model
    python bench/job_memory.py --quick          # the smallest size of each

Each run is a fresh process: the memory a job adds is its peak resident set (``ru_maxrss``) minus
the resident set just before it started (libraries imported, data read). Budgets are tiny (a few
steps and epochs): memory grows with the data and the network sizes, not with the number of steps.
The estimates the job runner admits jobs by (``experiment.estimate``, ``ptn.estimate``) are
printed beside the measurements; every line is JSON, the last one the summary with the goal: no run
measured above its estimate.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import at_most, declare  # noqa: E402

PRELUDE = """
import json, resource, sys
sys.path.insert(0, {root!r})

def rss_mib():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024
"""

CHILD_GAN = PRELUDE + """
import numpy as np, torch
from fairness_core import datasets
from models import experiment, hydragan as H
torch.set_num_threads(1)
df, label, groups = datasets.demo_table("adult")
df = df.iloc[np.random.default_rng(0).integers(0, len(df), {rows})].reset_index(drop=True)
config = experiment.ExperimentConfig(gan=H.HydraConfig(condition_columns=groups, diversity_column=label, steps=3,
                                                       quality_every=0), label=label, eval_seeds=[0], epochs=1)
estimate_mb = round(experiment.estimate(config, df).memory_mb)
before = rss_mib()
experiment.run(config, df)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"model": "hydragan", "rows": len(df), "columns": df.shape[1], "measured_mib": round(peak - before),
                  "estimate_mb": estimate_mb}}))
"""

CHILD_PTN = PRELUDE + """
import torch
from models import ptn
config = ptn.PTNConfig(population=2, generations=1, epochs=1, final_epochs=1, seeds=1, warm_epochs=1,
                       systems_per_part={spp}, inits_per_system={ips}, hidden_sizes=({hidden},), device="cpu")
estimate_mb = round(ptn.estimate(config).memory_mb)
before = rss_mib()
ptn.train(config)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"model": "ptn", "trajectories": 5 * {spp} * {ips}, "hidden": {hidden},
                  "measured_mib": round(peak - before), "estimate_mb": estimate_mb}}))
"""


def run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["hydragan", "ptn"])
    parser.add_argument("--quick", action="store_true", help="the smallest size of each model")
    args = parser.parse_args()
    runs = []
    if args.only in (None, "hydragan"):
        for rows in (20_000, 100_000, 400_000)[: 1 if args.quick else 3]:
            runs.append(run(CHILD_GAN.format(root=str(ROOT), rows=rows)))
            print(json.dumps(runs[-1]), flush=True)
    if args.only in (None, "ptn"):
        for spp, ips, hidden in ((4, 2, 48), (8, 4, 48), (16, 4, 240))[: 1 if args.quick else 3]:
            runs.append(run(CHILD_PTN.format(root=str(ROOT), spp=spp, ips=ips, hidden=hidden)))
            print(json.dumps(runs[-1]), flush=True)
    share = max(r["measured_mib"] / max(r["estimate_mb"], 1) for r in runs)
    print(json.dumps(declare({"runs": len(runs), "each": runs, "max_measured_over_estimate": round(share, 3)},
                             goals={"max_measured_over_estimate": at_most(1.0)},
                             ratio=(round(share, 3), "largest measured peak / the runner's estimate"),
                             quick=args.quick)))


if __name__ == "__main__":
    main()
