"""Benchmark: PTN's demo budget end to end on CPU, and the skill it reaches.

Runs models.ptn.train with the demo budget (data, NVAR-MLP forecaster, genetic search with
DARTS, the best agent retrained, both baselines trained in the same process) and prints the
wall time and the skill-score table: the ratios 1 − CRPS_PTN / CRPS_baseline at the quartiles.
TiDE trains for 80 % of PTN's training wall time (issue 17's fair comparison); both budgets
(seconds and steps) are printed and in the JSON. The best agent's derived architecture and TiDE
are retrained with ``--seeds`` seeds after the one search; the skill pools them, and each seed's
median skill is printed (the spread). Both are warm-started on the first quarter of the held-out
part and scored on the rest. Goals (issue 17): end to end <= 5 min on 2
cores; median skill > 0 against both baselines on Lorenz. Prints a JSON last line.

    python bench/ptn.py [--dataset lorenz|weather]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models import ptn  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="lorenz", choices=["lorenz", "weather"])
    ap.add_argument("--seeds", type=int, default=ptn.DEMO.seeds, help="final trainings (PTN and TiDE) per run")
    ap.add_argument("--seed", type=int, default=0, help="the search's seed")
    args = ap.parse_args()
    config = ptn.PTNConfig(dataset=args.dataset, seeds=args.seeds, seed=args.seed)
    start = time.perf_counter()
    result = ptn.train(config)
    wall = time.perf_counter() - start
    skill = result.skill
    print(f"{args.dataset}: demo budget ({config.population} agents x {config.generations} generations x "
          f"{config.epochs} epochs, final {config.final_epochs} x {config.final_weight_steps} steps) on "
          f"{torch.get_num_threads()} threads: {wall:.0f} s (goal <= 300 s)")
    print(skill.round(3).to_string())
    print(result.crps.describe().round(4).to_string())
    print(result.budgets.round(1).to_string())
    print(f"derived architecture: {result.derived}; warm start on {result.warm_rows} windows, "
          f"scored on {result.test_rows}")
    print(result.runs.round(3).to_string())
    print(ptn.verdict_text(result.skill, result.runs).replace("**", ""))
    medians = {c: float(skill.loc["second quartile", c]) for c in skill.columns}
    b = result.budgets
    print(json.dumps({"bench": "ptn", "dataset": args.dataset, "wall_s": round(wall, 1),
                      "train_seconds": {"ptn": round(float(b.loc["PTN", "train_seconds"]), 1),
                                        "tide": round(float(b.loc["TiDE", "train_seconds"]), 1)},
                      "steps": {"ptn": int(b.loc["PTN", "steps"]), "tide": int(b.loc["TiDE", "steps"])},
                      "device": str(b.loc["PTN", "device"]),
                      "median_skill": {k: round(v, 4) for k, v in medians.items()},
                      "median_skill_per_seed": {c.removeprefix("median skill "): [round(float(v), 4) for v in
                                                                                  result.runs[c]]
                                                for c in result.runs.columns if c.startswith("median skill")},
                      "share_improved": {c: round(float(skill.loc["share of forecasts PTN improves", c]), 4)
                                         for c in skill.columns},
                      "wall_goal_met": wall <= 300, "skill_goal_met": all(v > 0 for v in medians.values())
                      and all((result.runs[c] > 0).all() for c in result.runs.columns if c.startswith("median skill"))}))


if __name__ == "__main__":
    main()
