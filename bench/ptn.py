"""Benchmark: PTN's demo budget (or the GPU one) end to end, and the skill it reaches.

Runs models.ptn.train with the demo budget (``--budget demo``, the page's) or ``--budget gpu`` (about eight
minutes on one H100; ``--scale`` shrinks its seconds) (data, NVAR-MLP forecaster, genetic search with
DARTS over a space that holds the TiDE-style baseline's architecture, the derived architecture
retrained from the weights the search trained, both baselines trained in the same process) and
prints the wall time and the skill-score table: the ratios 1 − CRPS_PTN / CRPS_baseline at the
quartiles. TiDE trains for 80 % of PTN's training wall time, the search included; both budgets
(seconds and steps) are printed and in the JSON. The derived architecture and TiDE are retrained
with ``--seeds`` seeds after the one search; the skill pools them, and each seed's median skill is
printed (the spread). Both are warm-started on the first quarter of the held-out part and scored on
the rest. Also printed: the per-site (weather) or per-regime (Lorenz) table of the first seed's test
forecasts (models.ptn.groups: PTN's mean CRPS and its skill against each baseline with 95 % intervals,
each pair's verdict at the page's starting tolerance; ``"by_group"`` in the JSON), the search's
low-fidelity fitness against its fitness at the end of the search (Spearman's ρ), and, after the
timed run, the cost of one training step of the derived architecture and of TiDE (the same batch,
interleaved). Goals (issue 29): end to end <= 5 min on 2
cores; median skill > 0 against both baselines, pooled and in every seed. Prints a JSON last line.

Budgets are in seconds and run in steps: the run times a few steps on the device first and turns the seconds
into steps (models.ptn.budget), printed with the result. ``--calibration FILE`` keeps those timings in FILE, so a
second run on the same device gets the same steps and the same numbers whatever the load;
``--calibrate-only`` times and stops.

    python bench/ptn.py [--quick] [--dataset lorenz|weather] [--budget demo|gpu] [--scale 1] [--seeds N]
                        [--calibration FILE] [--calibrate-only]

``--quick``: a fifth of the budget's seconds, one seed; the JSON line then declares the wall-time goal only.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import at_most, declare, equal_to, stopwatch, timed  # noqa: E402
from fairness_core.vocabulary import DEFAULT_ALPHA  # noqa: E402
from fairness_core.wording.forecasts import tolerance_for_sd  # noqa: E402
from fairness_core.wording.kinds import amount_range, amount_text  # noqa: E402
from fairness_core.wording.levels import level_text  # noqa: E402
from models import ptn  # noqa: E402
from models import forecast_data as FD  # noqa: E402


#: The bench's budgets: the page's demo, and about eight minutes on one H100.
BUDGETS = {"demo": ptn.DEMO, "gpu": ptn.GPU}


def plan_dict(planned: ptn.PTNConfig, budget: ptn.StepBudget | None) -> dict[str, object]:
    """The budget in steps that the run counted, for the JSON line."""
    return {"population": planned.population, "generations": planned.generations, "first_rung": planned.first_rung,
            "epochs": planned.epochs, "final_epochs": planned.final_epochs, "tide_steps": planned.tide_steps,
            "tide_warm_steps": planned.tide_warm_steps,
            "search_steps": budget.search_steps if budget else None,
            "search_estimate_s": round(budget.search_estimate, 1) if budget else None, "cached": bool(budget and budget.cached)}


#: How the pairs' verdicts are adjusted for their number: the Forecasting page's (ui.ptn_groups.ADJUST).
ADJUST = "holm"


def _r(value: float, digits: int = 4) -> float | None:
    """A plain float for the JSON line, rounded; None for NaN (no interval, an undefined skill)."""
    value = float(value)
    return round(value, digits) if np.isfinite(value) else None


def by_group(view: ptn.GroupView | None, alpha: float = DEFAULT_ALPHA) -> tuple[str, dict[str, object] | None]:
    """The per-site (weather) or per-regime (Lorenz) table of the run's audit by group (models.ptn.groups): per
    group, PTN's mean CRPS and its skill against each baseline with its interval at 1 − ``alpha``
    (ForecastAudit.skill: HAC over time, not adjusted for the groups), then every pair's verdict at the page's
    starting tolerance (a tenth of the test observations' standard deviation) and adjustment, with the forecast
    OFI and the CRPS ratio and their adjusted intervals. Returns the text to print and the JSON line's object (None,
    and the reason in the text, without an audit)."""
    if view is None:
        return "by group: none (the run kept no view by group)", None
    if view.audit is None:
        return f"by {view.kind}: none, {view.reason}", {"kind": view.kind, "reason": view.reason}
    a, unit = view.audit, view.unit
    tolerance = tolerance_for_sd(view.observation_sd)
    skill, verdicts = a.skill(alpha), a.verdicts(tolerance, alpha, ADJUST, unit=unit)
    level = level_text(1 - alpha)
    table = pd.DataFrame({"PTN mean CRPS": [amount_text(v, unit) for v in a.means["crps"]]},
                         index=pd.Index(a.groups, name=view.kind))
    groups: dict[str, dict[str, object]] = {str(g): {"crps": _r(a.means.loc[g, "crps"]), "skill": {}} for g in a.groups}
    for row in skill.itertuples():
        table.loc[row.group, f"skill vs {row.baseline} [{level}]"] = (
            f"{row.skill:+.3f} [{row.skill_ci_low:+.3f}, {row.skill_ci_high:+.3f}]")
        groups[str(row.group)]["skill"][row.baseline] = {  # type: ignore[index]
            "skill": _r(row.skill), "low": _r(row.skill_ci_low), "high": _r(row.skill_ci_high),
            "crps_baseline": _r(row.crps_baseline), "median_skill": _r(row.skill_q2),
            "share_improved": _r(row.share_improved, 3)}
    pairs = [{"group_i": str(v.group_i), "group_j": str(v.group_j), "verdict": v.verdict, "ofi": _r(v.ofi),
              "ofi_low": _r(v.ofi_ci_low), "ofi_high": _r(v.ofi_ci_high), "crps_ratio": _r(v.ratio),
              "ratio_low": _r(v.ratio_ci_low), "ratio_high": _r(v.ratio_ci_high)} for v in verdicts.itertuples()]
    units = unit or "the outcome's units"
    lines = [f"by {view.kind}: the first seed's test forecasts, {view.windows:,} windows × {view.leads} leads, amounts "
             f"in {units}; skill = 1 − mean CRPS_PTN / mean CRPS_baseline with its {level} interval (HAC over time, "
             f"not adjusted for the {view.kind}s)",
             table.to_string(),
             f"pairs of {view.kind}s at the page's tolerance of ±{amount_text(tolerance, unit)} (a tenth of the test "
             f"observations' sd, {amount_text(view.observation_sd, unit)}), {level} intervals "
             f"{ADJUST.capitalize()}-adjusted across the pairs; OFI = difference of mean benefits (median forecast − "
             f"observation), ratio = mean CRPS of the first {view.kind} / the second:"]
    lines += [f"  {p['group_i']} vs {p['group_j']}: {p['verdict']} (OFI {amount_text(v.ofi, unit)}, "
              f"{amount_range(v.ofi_ci_low, v.ofi_ci_high, unit)}; CRPS ratio {v.ratio:.3f} "
              f"[{v.ratio_ci_low:.3f}, {v.ratio_ci_high:.3f}])" for p, v in zip(pairs, verdicts.itertuples())]
    return "\n".join(lines), {"kind": view.kind, "unit": unit, "tolerance": tolerance, "alpha": alpha,
                              "adjust": ADJUST, "groups": groups, "pairs": pairs}


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
    on the same batch of 64 windows of the run's data, on the run's device."""
    config = result.config
    device = ptn.device_for(config.device)
    ds = ptn.run.load_data(config, ptn.Counter(0))
    batch = ptn.tensors(ptn.subsample(ds.parts["darts_train"], 64, 0), device)
    n_in = batch[0].shape[1] + batch[1][0].numel() + batch[2][0].numel()
    point = result.best.hparams | {"dense_width": 256, "dropout": 0.1}
    torch.manual_seed(0)
    return {"derived_ptn": step_ms(ptn.build(result.best.hparams, ds, config.quantiles, device=device,
                                             keep=result.derived or None), batch),
            "tide_point_of_ptn": step_ms(ptn.build(point, ds, config.quantiles, device=device,
                                                   keep={"trunk": "dense encoder-decoder"}), batch),
            "tide": step_ms(ptn.TiDE(n_in, FD.HORIZON, config.quantiles).to(device), batch)}


def leave_curve(config: ptn.PTNConfig, agents: int, marks: tuple[int, ...]) -> list[dict[str, object]]:
    """How many search steps agents need to leave their start (models.ptn.budget.LEAVE_STEPS): the validation
    CRPS of the architecture each agent would derive (as the search scores it), after ``marks`` epochs of the
    search's 10 weight + 5 architecture steps; the first agent is the incumbent. Prints one JSON line each."""
    device = ptn.device_for(config.device)
    ds = ptn.run.load_data(config, ptn.Counter(0))
    P = ds.parts
    val = ptn.subsample(P["ga_val"], config.fitness_samples, 2)
    rng = np.random.default_rng(config.seed)
    params = ptn.space(tuple(config.hidden_sizes))
    out = []
    for k in range(agents):
        agent = ptn.Agent(ptn.random_hparams(params, rng), 1)
        if k == 0:
            agent.hparams |= ptn.BASELINE_POINT
            agent.keep, agent.incumbent = dict(ptn.BASELINE_KEEP), True
        torch.manual_seed(k)
        model = ptn.build(agent.hparams, ds, config.quantiles, config.forecast_skip, device, agent.keep)

        def fitness() -> float:
            agent.architecture = model.architecture()
            judged = ptn.search.derived_of(config, ds, model, agent)
            return float(ptn.crps_numpy(ptn.predict(judged, val), val.target).mean())

        curve = {0: fitness()}
        with stopwatch() as took:
            ptn.train_darts(model, agent.hparams, P["darts_train"], P["darts_val"], max(marks), seed=k,
                            sample_paths=True, on_epoch=lambda e, *_: curve.update({e: fitness()} if e in marks else {}))
        out.append({"agent": k, "incumbent": agent.incumbent, "hidden": agent.hparams["hidden"],
                    "weight_steps": {m * ptn.SEARCH_WEIGHT_STEPS: round(v, 6) for m, v in curve.items()},
                    "seconds": round(took.seconds, 1), "device": str(device)})
        print(json.dumps(out[-1]), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="lorenz", choices=["lorenz", "weather"])
    ap.add_argument("--budget", default="demo", choices=list(BUDGETS), help="demo: the page's; gpu: ~8 min on an H100")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply the budget's seconds (search and final)")
    ap.add_argument("--seeds", type=int, default=None, help="final trainings (PTN and TiDE) per run")
    ap.add_argument("--seed", type=int, default=0, help="the search's seed")
    ap.add_argument("--calibration", default=None, help="JSON file that keeps the device's step timings")
    ap.add_argument("--calibrate-only", action="store_true", help="time the steps, print the budget, stop")
    ap.add_argument("--quick", action="store_true",
                    help="a fifth of the budget's seconds and one seed: the wall-time goal only (skill reported)")
    ap.add_argument("--leave-curve", type=int, default=0, metavar="AGENTS",
                    help="instead of a run: each of AGENTS agents' validation CRPS after 1 … 256 search epochs")
    args = ap.parse_args()
    if args.leave_curve:
        leave_curve(dataclasses.replace(ptn.DEMO, dataset=args.dataset, seed=args.seed), args.leave_curve,
                    (1, 2, 4, 8, 16, 32, 64, 128, 256))
        return
    base = BUDGETS[args.budget]
    if args.quick:
        args.scale, args.seeds = min(args.scale, 0.2), args.seeds or 1
    config = dataclasses.replace(base, dataset=args.dataset, seeds=args.seeds or base.seeds, seed=args.seed,
                                 final_seconds=base.final_seconds * args.scale,
                                 search_seconds=base.search_seconds * args.scale)
    if args.calibrate_only:
        ds = ptn.run.load_data(config, ptn.Counter(0))
        planned, budget = ptn.budgeted(config, ds, ptn.device_for(config.device), args.calibration)
        print(f"{args.dataset}, {args.budget} budget x {args.scale:g}: {budget.words()}")
        print(json.dumps({"bench": "ptn-calibration", "dataset": args.dataset, "budget": args.budget,
                          "scale": args.scale, "costs": budget.costs.to_dict(), "plan": plan_dict(planned, budget)}))
        return
    wall, result = timed(ptn.train, config, None, None, args.calibration, repeat=1)
    skill, budget = result.skill, result.budget
    print(f"{args.dataset}: {args.budget} budget x {args.scale:g} (search {config.search_seconds:.0f} s, final "
          f"{config.final_seconds:.0f} s per seed, {config.seeds} seeds) on {torch.get_num_threads()} threads: "
          f"{wall:.0f} s" + (" (goal <= 300 s on 2 cores)" if args.budget == "demo" else ""))
    if budget is not None:
        print(f"budget in steps, {budget.words()}")
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
    group_text, group_line = by_group(result.by_group)
    print(group_text)
    steps = profile(result)
    print("one training step (ms, batch 64, after the timed run): " + ", ".join(f"{k} {v:.1f}" for k, v in steps.items()))
    medians = {c: float(skill.loc["second quartile", c]) for c in skill.columns}
    per_seed = {c.removeprefix("median skill "): [round(float(v), 4) for v in result.runs[c]]
                for c in result.runs.columns if c.startswith("median skill")}
    verdicts = {c: ptn.verdict(medians[c], np.array(per_seed[c])) for c in skill.columns}
    b = result.budgets
    line = {"bench": "ptn", "dataset": args.dataset, "budget": args.budget, "scale": args.scale,
                      "wall_s": round(wall, 1),
                      "plan": plan_dict(result.config, budget), "costs": budget.costs.to_dict() if budget else None,
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
                      "fidelity_agents": len(result.fidelity), "by_group": group_line,
                      "step_ms": {k: round(v, 2) for k, v in steps.items()},
                      "wall_goal_met": wall <= 300 if args.budget == "demo" else None,
                      "skill_goal_met": all(v == "beats" for v in verdicts.values())}
    # the demo budget's goals (issue 29) on 2 cores; at a fifth of it (quick) the skill is reported, not judged
    # quick: a fifth of the seconds, so a fifth of the 300 s plus the fixed part (data, calibration: about 30 s)
    goals = {"wall_s": at_most(300 * args.scale + (30 if args.scale < 1 else 0))} if args.budget == "demo" else {}
    if not args.quick and args.scale == 1:
        goals["skill_goal_met"] = equal_to(True)
    median = medians.get("vs TiDE", next(iter(medians.values()), float("nan")))
    print(json.dumps(declare(line, goals=goals, ratio=(round(median, 4), "median skill against TiDE (1 − CRPS ratio)"),
                             quick=args.quick)))


if __name__ == "__main__":
    main()
