"""The whole PTN run as a plain function with typed progress and cancel: data, the genetic search with
DARTS, the derived architecture retrained per seed, both baselines, skill scores on the test part."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd
import torch

from .. import forecast_data as FD
from ..jobs_interface import Estimate, ProgressCallback
from .budget import StepBudget, budgeted
from .config import PTNConfig
from .fit import device_for, error_scale
from .layers import PTN, derive
from .loss import crps_numpy
from .progress import Counter, DataStage, Done
from .scoring import examples, normal_quantiles, skill_table
from .search import Agent, genetic_search
from .final import score, train_baseline, train_final
from .groups import BASELINE_NAMES, UNITS, GroupView, group_view


#: Memory model of :func:`train`, an upper bound calibrated with ``bench/job_memory.py`` (Lorenz, 40 / 160 / 320
#: trajectories at 111 quantiles, the last with 240 hidden units: 579-678 / 1,527-1,529 / 2,974-3,066 MiB above the
#: server's own, varying from run to run by up to 15 %): a fixed part (the networks, PyTorch's working memory) and
#: bytes per forecast window, for each of its input floats (raw, scaled, cut into windows) and for each of its
#: quantiles (the forecasts of PTN, TiDE and the normal baseline, sorted for the CRPS). The per-window bytes were
#: raised by 40 % (from 8.5 and 50) when the benchmark found the largest run 16 % over its estimate. The hidden
#: sizes are not in the model: 240 units against 48 added about 15 % at 320 trajectories (against the slope from
#: 40 to 160), within the margin. The audit by group (:func:`first_seed`) is not in it either: it turns the first
#: seed's float32 forecasts into its rows in place and adds under 1 MB (40 trajectories: 624-699 MiB measured over
#: four runs with it, the peak reached before it; docs/methods.md, "PTN's forecasts by site or regime").
BASE_MB, BYTES_PER_INPUT, BYTES_PER_QUANTILE = 360.0, 12.0, 70.0
#: Forecast windows of one 1,000-step Lorenz trajectory, and of the weather data (every site, a year each).
LORENZ_WINDOWS = 1000 - FD.HORIZON - (FD.HISTORY - 1)
WEATHER_WINDOWS = len(FD.WEATHER_FILES) * (8760 - FD.HORIZON - (FD.HISTORY - 1))


def memory_mb(config: PTNConfig) -> float:
    """Peak memory (MB) that :func:`train` adds with ``config``, from the settings alone."""
    if config.dataset == "lorenz":
        windows, channels = 5 * config.systems_per_part * config.inits_per_system * LORENZ_WINDOWS, 3
    else:
        windows, channels = WEATHER_WINDOWS, len(FD.WEATHER_CHANNELS) + 4  # and the cyclic time of day and year
    inputs = 3 + FD.HISTORY * channels + FD.N_FORECASTS * FD.HORIZON + FD.HORIZON  # static, history, forecasts, target
    return BASE_MB + windows * (inputs * BYTES_PER_INPUT + config.quantiles * BYTES_PER_QUANTILE) / 2**20


def estimate(config: PTNConfig) -> Estimate:
    """What :func:`train` with ``config`` will cost, for the job runner to admit or refuse it."""
    what = (f"a PTN run on {5 * config.systems_per_part * config.inits_per_system:,} Lorenz trajectories"
            if config.dataset == "lorenz" else "a PTN run on the weather data")
    return Estimate(memory_mb(config), what=what)


@dataclass
class PTNResult:
    config: PTNConfig
    best: Agent
    agents: list[Agent]
    model: PTN
    architecture: dict[str, dict[str, float]]
    skill: pd.DataFrame
    crps: pd.DataFrame  # per test forecast, the first seed's: PTN, deterministic, TiDE, in the outcome's units
    examples: dict[str, Any]  # a browser of test forecasts
    description: str
    scaler: FD.Scaler = field(repr=False)
    #: Per model: training wall seconds and optimizer steps (the fair-comparison record), means over seeds.
    budgets: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: Per seed of the final training: PTN's and TiDE's seconds and steps and their median skills.
    runs: pd.DataFrame = field(default_factory=pd.DataFrame)
    searched_architecture: dict[str, dict[str, float]] = field(default_factory=dict)
    derived: dict[str, str] = field(default_factory=dict)  # the candidate kept per mixed op ({} = all kept)
    warm_rows: int = 0  # test-part windows used for the warm start (the first ones)
    test_rows: int = 0  # test-part windows scored
    #: Agents trained past the first rung: low-fidelity (first-rung) and final validation fitness.
    fidelity: pd.DataFrame = field(default_factory=pd.DataFrame)
    fidelity_rho: float = float("nan")  # Spearman's ρ between the two
    search_seconds: float = 0.0
    search_steps: int = 0
    #: What the config's seconds bought on this device (None: the config was in steps already).
    budget: StepBudget | None = None
    #: The first seed's test forecasts audited by site or regime, against both baselines (:mod:`.groups`): the
    #: finished audit, no quantiles (about 16 bytes per test window and lead).
    by_group: GroupView | None = None


def load_data(config: PTNConfig, counter: Counter, should_stop: Callable[[], bool] | None = None) -> FD.Dataset:
    """The data set of ``config``, with data-stage reports."""
    def note(text: str) -> None:
        counter.report(DataStage, message=text)

    if config.dataset == "lorenz":
        ds, _ = FD.lorenz_dataset(config.systems_per_part, config.inits_per_system, config.seed, progress=note,
                                  should_stop=should_stop)
    elif config.dataset == "weather":
        ds, _ = FD.weather_dataset(seed=config.seed, progress=note, should_stop=should_stop)
    else:
        raise ValueError(f"unknown data set {config.dataset!r}; use 'lorenz' or 'weather'")
    return ds


def warm_and_test(ds: FD.Dataset, share: float) -> tuple[FD.Samples, FD.Samples]:
    """Warm start (Briscoe 2024, §5.5): the first ``share`` of the held-out part trains, the rest tests."""
    test_all = ds.parts["test"]
    n_warm = int(round(share * len(test_all)))
    return test_all.take(np.arange(n_warm)), test_all.take(np.arange(n_warm, len(test_all)))


#: Test windows per block of the deterministic-normal baseline's quantiles (float64 while scored, then kept as float32).
DET_BLOCK = 4096


def first_seed(config: PTNConfig, ds: FD.Dataset, test: FD.Samples, q_ptn: np.ndarray, c_ptn: np.ndarray,
               q_tide: np.ndarray) -> tuple[np.ndarray, dict[str, Any], GroupView]:
    """What the first seed's forecasts leave in the result, computed as soon as they exist so that no seed's
    quantiles outlive it: baseline 1's per-forecast CRPS (N(deterministic forecast, σ = its MAE per lead on the
    GA-train part); no training), the browser of PTN's test forecasts, and the forecasts audited by site or regime
    against both baselines (:mod:`.groups`; the float32 quantiles become the audit's rows in place)."""
    mean, sigma = test.forecasts[:, -1, :, 0], error_scale(ds.parts["ga_train"])
    q_det, c_det = np.empty((*mean.shape, config.quantiles), dtype=np.float32), np.empty(len(test))
    for start in range(0, len(test), DET_BLOCK):   # blocks of windows: no float64 copy of every quantile at once
        block = slice(start, start + DET_BLOCK)
        q = normal_quantiles(mean[block], sigma, config.quantiles)
        c_det[block], q_det[block] = crps_numpy(q, test.target[block]), q
    browser = examples(q_ptn, test, c_ptn)
    by_group = group_view(test, q_ptn, dict(zip(BASELINE_NAMES, (q_det, q_tide))), ds.scaler, ds.group_kind,
                          UNITS.get(config.dataset, ""), inplace=True)
    return c_det, browser, by_group


def train(config: PTNConfig, on_progress: ProgressCallback | None = None,
          should_stop: Callable[[], bool] | None = None, cache: str | None = None) -> PTNResult:
    """Data, deterministic forecaster, the budget in steps for this device, genetic search with DARTS, the
    derived architecture retrained, both baselines, skill scores on the test part. Reports one typed record per
    event (:mod:`.progress`): DataStage, SearchEpoch and AgentFitness, FinalEpoch, BaselineEpoch, Done.

    A budget in seconds is turned into steps first (:func:`.budget.budgeted`; ``cache`` names a JSON file that
    keeps the device's timings across processes); the run then counts steps, so the same seed and the same
    timings give the same numbers. The result's ``config`` is the one in steps."""
    counter = Counter(config.total_units(), on_progress)
    device = device_for(config.device)
    torch.manual_seed(config.seed)
    ds = load_data(config, counter, should_stop)
    if not config.planned():
        counter.report(DataStage, message=f"timing a few steps on {device} to turn the budget into steps")
    config, budget = budgeted(config, ds, device, cache)
    counter.total = max(counter.done, config.total_units())
    if budget is not None:
        counter.report(DataStage, message=f"budget in steps, {budget.words()}")
    probe = ds.parts["ga_val"].take(np.array([0]))
    counter.report(DataStage, message="data ready", probe_truth=tuple(probe.target[0].tolist()),
                   probe_deterministic=tuple(probe.forecasts[0, -1, :, 0].tolist()))
    search = genetic_search(config, ds, counter, device, should_stop)
    # The architecture the search chose: the best agent's architecture weights at the end of its search run.
    keep = derive(search.best.architecture) if config.derive and search.best.architecture else None
    warm, test = warm_and_test(ds, config.warm_share)
    runs, crps_sets, model = [], [], None
    for r in range(config.seeds):
        seed = config.seed + 7 + 101 * r
        ptn_run = train_final(config, ds, search, keep, seed, r + 1, warm, counter, device, probe, should_stop)
        # Baseline 2: TiDE-style MLP on the same inputs and loss, for a share of PTN's training time (the
        # search included), warm-started the same way for the same share of PTN's warm-start time: in steps
        # that budget.plan set from the device's timings.
        tide_run = train_baseline(config, ds, seed, r + 1, warm, counter, device, should_stop)
        (q_ptn, c_ptn), (q_tide, c_tide) = score(ptn_run.model, test), score(tide_run.model, test)
        crps_sets.append((c_ptn, c_tide))
        if model is None:   # the first seed's forecasts are browsed and audited by group, then let go
            model = ptn_run.model
            c_det, browser, by_group = first_seed(config, ds, test, q_ptn, c_ptn, q_tide)
        del q_ptn, q_tide
        runs.append({"seed": seed, "PTN (s)": search.seconds + ptn_run.seconds,
                     "PTN steps": search.steps + ptn_run.steps, "TiDE (s)": tide_run.seconds,
                     "TiDE steps": tide_run.steps})
    names = ("deterministic (normal, σ = MAE)", "TiDE")
    # Seven runs pooled in the thesis; here config.seeds runs of the final training, pooled the same way.
    skill = skill_table(np.concatenate([c for c, _ in crps_sets]),
                        {names[0]: np.tile(c_det, config.seeds), names[1]: np.concatenate([c for _, c in crps_sets])})
    for row, (cp, ct) in zip(runs, crps_sets):
        per = skill_table(cp, {names[0]: c_det, names[1]: ct})
        row[f"median skill vs {names[0]}"] = float(per.loc["second quartile", f"vs {names[0]}"])
        row["median skill vs TiDE"] = float(per.loc["second quartile", "vs TiDE"])
    runs_df = pd.DataFrame(runs).set_index("seed")
    counter.set(counter.total)
    counter.report(Done, message="skill scores computed on the test part")
    what = "derived architecture" if keep else "best agent"
    budgets = pd.DataFrame({"train_seconds": [runs_df["PTN (s)"].mean(), runs_df["TiDE (s)"].mean(), 0.0],
                            "steps": [int(runs_df["PTN steps"].mean()), int(runs_df["TiDE steps"].mean()), 0],
                            "device": [str(device), str(device), "-"],
                            "what": [f"search ({len(search.agents)} agents, {search.seconds:.0f} s) + the {what} "
                                     "retrained + warm start",
                                     f"{config.tide_steps:,} steps: {config.tide_time_share:.0%} of PTN's budgeted "
                                     "time, warm start likewise",
                                     "no training: N(forecast, σ = MAE per lead)"]},
                           index=pd.Index(["PTN", "TiDE", "deterministic (normal)"], name="model"))
    # the per-forecast CRPS in the outcome's units (°C, x), as the view by group: CRPS(aX + b, ay + b) = a·CRPS(X, y)
    lo, hi = ds.scaler.target_range()
    crps = pd.DataFrame({"PTN": crps_sets[0][0], "deterministic": c_det, "TiDE": crps_sets[0][1]}) * (hi - lo)
    return PTNResult(config, search.best, search.agents, model, model.architecture(), skill, crps,
                     browser, ds.description, ds.scaler, budgets, runs_df,
                     searched_architecture=search.best.architecture, derived=keep or {}, warm_rows=len(warm),
                     test_rows=len(test), fidelity=search.fidelity, fidelity_rho=search.fidelity_rho,
                     search_seconds=search.seconds, search_steps=search.steps, budget=budget, by_group=by_group)


def chosen_words(result: PTNResult) -> str:
    """Which agent the search handed on, in words for the page."""
    if getattr(result.best, "incumbent", False):
        return ("the incumbent, the TiDE-style baseline's own point of the space (no agent beat it beyond noise on "
                "the same validation windows)")
    if any(getattr(a, "incumbent", False) for a in result.agents):
        return "an agent that beat the incumbent (the TiDE-style baseline's point) beyond noise on the validation windows"
    return "the best agent by Algorithm 2's score"


def start_words(result: PTNResult) -> str:
    """Where the retraining of the derived architecture started, in words for the page."""
    config = result.config
    if config.inherit:
        return "the weights the search trained"
    if config.final_start == "tide" and result.derived.get("trunk") == "dense encoder-decoder":
        return "TiDE's default initialization (the search starts every agent near the deterministic-normal baseline)"
    return "the deterministic-normal baseline"
