"""Benchmark: PTN's demo budget end to end on CPU, and the skill it reaches.

Runs models.ptn.train with the demo budget (data, NVAR-MLP forecaster, genetic search with
DARTS over a space that holds the TiDE-style baseline's architecture, the derived architecture
retrained from the weights the search trained, both baselines trained in the same process) and
prints the wall time and the skill-score table: the ratios 1 − CRPS_PTN / CRPS_baseline at the
quartiles. TiDE trains for 80 % of PTN's training wall time, the search included; both budgets
(seconds and steps) are printed and in the JSON. The derived architecture and TiDE are retrained
with ``--seeds`` seeds after the one search; the skill pools them, and each seed's median skill is
printed (the spread). Both are warm-started on the first quarter of the held-out part and scored on
the rest. Also printed: the search's low-fidelity fitness against its fitness at the end of the
search (Spearman's ρ), and, after the timed run, the cost of one training step of the derived
architecture and of TiDE (the same batch, interleaved). Goals (issue 29): end to end <= 5 min on 2
cores; median skill > 0 against both baselines, pooled and in every seed. Prints a JSON last line.

    python bench/ptn.py [--dataset lorenz|weather] [--seeds 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import stopwatch, timed  # noqa: E402
from models import ptn  # noqa: E402
from models import forecast_data as FD  # noqa: E402


def step_ms(model: torch.nn.Module, batch: tuple[torch.Tensor, ...], repeats: int = 5, steps: int = 20) -> float:
    """Median over ``repeats`` of the mean wall time (ms) of an AdamW step on ``batch``."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model.train()
    times = []
    for r in range(repeats + 1):
        with stopwatch() as took:
            for _ in range(steps):
                ell = ptn.loss(model(*batch[:3]), batch[3])
                opt.zero_grad(set_to_none=True)
                ell.backward()
                opt.step()
        if r:  # the first round warms up
            times.append(took.seconds / steps * 1000)
    return float(np.median(times))


def profile(result: ptn.PTNResult) -> dict[str, float]:
    """One step of the derived PTN, of the baseline's architecture as a point of PTN's space, and of TiDE,
    on the same batch of 64 windows of the run's data."""
    config = result.config
    ds = ptn.run.load_data(config, ptn.Counter(0))
    batch = ptn.tensors(ptn.subsample(ds.parts["darts_train"], 64, 0))
    n_in = batch[0].shape[1] + batch[1][0].numel() + batch[2][0].numel()
    point = result.best.hparams | {"dense_width": 256, "dropout": 0.1}
    torch.manual_seed(0)
    return {"derived_ptn": step_ms(ptn.build(result.best.hparams, ds, config.quantiles, keep=result.derived or None),
                                   batch),
            "tide_point_of_ptn": step_ms(ptn.build(point, ds, config.quantiles, keep={"trunk": "dense encoder-decoder"}),
                                         batch),
            "tide": step_ms(ptn.TiDE(n_in, FD.HORIZON, config.quantiles), batch)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="lorenz", choices=["lorenz", "weather"])
    ap.add_argument("--seeds", type=int, default=ptn.DEMO.seeds, help="final trainings (PTN and TiDE) per run")
    ap.add_argument("--seed", type=int, default=0, help="the search's seed")
    args = ap.parse_args()
    config = dataclasses.replace(ptn.DEMO, dataset=args.dataset, seeds=args.seeds, seed=args.seed)  # the page's demo
    wall, result = timed(ptn.train, config, repeat=1)
    skill = result.skill
    final = (f"final {config.final_seconds:.0f} s (at most {config.final_epochs} x {config.final_weight_steps} steps)"
             if config.final_seconds else f"final {config.final_epochs} x {config.final_weight_steps} steps")
    print(f"{args.dataset}: demo budget ({config.population} agents x {config.generations} generations x "
          f"{config.epochs} epochs, {final}) on "
          f"{torch.get_num_threads()} threads: {wall:.0f} s (goal <= 300 s)")
    print(skill.round(3).to_string())
    print(result.crps.describe().round(4).to_string())
    print(result.budgets.round(1).to_string())
    print(f"search: {result.search_seconds:.1f} s, {result.search_steps} steps; derived architecture: "
          f"{result.derived}; warm start on {result.warm_rows} windows, scored on {result.test_rows}")
    print(result.runs.round(3).to_string())
    print(f"low-fidelity fitness against the end of the search: Spearman rho {result.fidelity_rho:+.3f} over "
          f"{len(result.fidelity)} agents")
    print(result.fidelity.round(5).to_string())
    print(ptn.verdict_text(result.skill, result.runs).replace("**", ""))
    steps = profile(result)
    print("one training step (ms, batch 64, after the timed run): " + ", ".join(f"{k} {v:.1f}" for k, v in steps.items()))
    medians = {c: float(skill.loc["second quartile", c]) for c in skill.columns}
    per_seed = {c.removeprefix("median skill "): [round(float(v), 4) for v in result.runs[c]]
                for c in result.runs.columns if c.startswith("median skill")}
    verdicts = {c: ptn.verdict(medians[c], np.array(per_seed[c])) for c in skill.columns}
    b = result.budgets
    print(json.dumps({"bench": "ptn", "dataset": args.dataset, "wall_s": round(wall, 1),
                      "train_seconds": {"ptn": round(float(b.loc["PTN", "train_seconds"]), 1),
                                        "tide": round(float(b.loc["TiDE", "train_seconds"]), 1),
                                        "search": round(result.search_seconds, 1)},
                      "steps": {"ptn": int(b.loc["PTN", "steps"]), "tide": int(b.loc["TiDE", "steps"]),
                                "search": result.search_steps},
                      "device": str(b.loc["PTN", "device"]), "derived": result.derived,
                      "median_skill": {k: round(v, 4) for k, v in medians.items()},
                      "median_skill_per_seed": per_seed, "verdict": verdicts,
                      "share_improved": {c: round(float(skill.loc["share of forecasts PTN improves", c]), 4)
                                         for c in skill.columns},
                      "fidelity_rho": None if not np.isfinite(result.fidelity_rho) else round(result.fidelity_rho, 3),
                      "fidelity_agents": len(result.fidelity),
                      "step_ms": {k: round(v, 2) for k, v in steps.items()},
                      "wall_goal_met": wall <= 300,
                      "skill_goal_met": all(v == "beats" for v in verdicts.values())}))


if __name__ == "__main__":
    main()
