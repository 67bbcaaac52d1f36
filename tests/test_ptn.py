"""PTN: CRPS and the ordering penalty, the Lorenz generator, DARTS weights, the genetic operators,
a tiny seeded training run, cancel, budgets in steps, and the skill-score table.

The networks run on the device the run would use (``cuda`` when PyTorch sees one, else the CPU), so the CUDA
path is tested wherever a GPU is present; no test depends on how fast the device is."""

from __future__ import annotations

import base64
import copy
import dataclasses
import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.integrate import solve_ivp

from fairness_core.services.jobs import Cancelled
from fairness_core.progress import Progress, of_kind
from models import forecast_data as FD
from models import ptn
from app_helpers import captured  # noqa: F401 - a fixture, used by name

#: Where the tests' networks run: the run's own choice ("auto").
DEVICE = ptn.device_for("auto")


def t(values) -> torch.Tensor:
    return torch.as_tensor(values, dtype=torch.float32, device=DEVICE)


def test_crps_known_ensemble_values():
    # y = 0, members [0, 1]: T1 = 1/2, T2 = 2/4, CRPS = 1/2 − 1/4.
    assert ptn.crps(t([[[0.0, 1.0]]]), t([[0.0]])).item() == pytest.approx(0.25)
    # y = 0, members [0, 0, 1]: T1 = 1/3, T2 = 4/9, CRPS = 1/3 − 2/9 = 1/9.
    assert ptn.crps(t([[[0.0, 0.0, 1.0]]]), t([[0.0]])).item() == pytest.approx(1 / 9)
    # A point forecast: CRPS = absolute error.
    assert ptn.crps(t([[[2.5, 2.5, 2.5]]]), t([[1.0]])).item() == pytest.approx(1.5)


def test_crps_sorted_formula_equals_all_pairs_brute_force():
    rng = np.random.default_rng(0)
    q, y = rng.normal(size=(3, 4, 9)), rng.normal(size=(3, 4))
    brute = np.zeros(3)
    for b, s in itertools.product(range(3), range(4)):
        t1 = np.mean(np.abs(q[b, s] - y[b, s]))
        t2 = np.mean([abs(a - c) for a in q[b, s] for c in q[b, s]])
        brute[b] += (t1 - 0.5 * t2) / 4
    assert ptn.crps(t(q), t(y)).cpu().numpy() == pytest.approx(brute, abs=1e-5)
    assert ptn.crps_numpy(q.astype(np.float32), y.astype(np.float32)) == pytest.approx(brute, abs=1e-5)


def test_ordering_penalty():
    assert ptn.ordering_penalty(t([[[0.0, 1.0, 2.0], [1.0, 1.0, 3.0]]])).item() == 0.0
    # one violation of 0.5 among τ(c − 1) = 1·2 adjacent pairs
    assert ptn.ordering_penalty(t([[[0.0, 1.0, 0.5]]])).item() == pytest.approx(0.25)
    q = t([[[0.0, 1.0, 0.5]]])
    assert ptn.loss(q, t([[0.0]])).item() == pytest.approx(ptn.crps(q, t([[0.0]])).item() + 0.0075 * 0.25)


def test_lorenz_matches_solve_ivp_and_rk4():
    params, init = (10.0, 28.0, 8 / 3), np.array([1.0, 1.0, 1.0])
    ours = FD.lorenz_trajectory(params, init, n_times=101, t_end=10.0)
    direct = solve_ivp(FD.lorenz_rhs, (0, 10), init, t_eval=np.linspace(0, 10, 101), args=params,
                       method="RK45", rtol=1e-11, atol=1e-11).y.T
    assert np.abs(ours - direct).max() < 1e-4
    # An independent fixed-step RK4 up to t = 1.
    s, h = init.copy(), 1e-4
    for _ in range(10_000):
        k1 = np.array(FD.lorenz_rhs(0, s, *params))
        k2 = np.array(FD.lorenz_rhs(0, s + h / 2 * k1, *params))
        k3 = np.array(FD.lorenz_rhs(0, s + h / 2 * k2, *params))
        k4 = np.array(FD.lorenz_rhs(0, s + h * k3, *params))
        s = s + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    assert np.abs(ours[10] - s).max() < 1e-6
    # Stacked systems integrate like separate ones.
    two = FD.lorenz_trajectories(np.array([params, (9.0, 28.05, 2.7)]), np.array([init, [-5.0, 3.0, 20.0]]),
                                 n_times=51, t_end=5.0)
    assert np.abs(two[0] - FD.lorenz_trajectory(params, init, 51, 5.0)).max() < 1e-6


def test_seed_distributions():
    rng = np.random.default_rng(1)
    draws = np.array([FD.lorenz_parameters(rng) for _ in range(500)])
    assert draws[:, 0].min() >= 8 and draws[:, 0].max() <= 12
    assert draws[:, 1].min() >= 27.9 and draws[:, 1].max() <= 28.1
    assert draws[:, 2].min() >= 7.9 / 3 and draws[:, 2].max() <= 8.1 / 3
    inits = np.array([FD.lorenz_initial(rng) for _ in range(500)])
    assert inits[:, :2].min() >= -20 and inits[:, :2].max() <= 20 and inits[:, 2].min() >= 0 and inits[:, 2].max() <= 40


def tiny_dataset() -> FD.Dataset:
    rng = np.random.default_rng(0)

    def part(n: int) -> FD.Samples:
        fc = rng.uniform(size=(n, FD.N_FORECASTS, FD.HORIZON, 1))
        target = fc[:, -1, :, 0] + 0.05 * rng.normal(size=(n, FD.HORIZON))
        return FD.Samples(rng.uniform(size=(n, 3)), rng.uniform(size=(n, FD.HISTORY, 3)), fc, target)

    return FD.Dataset("tiny", {p: part(128) for p in FD.PARTS}, FD.Scaler(), "tiny", ["x", "y", "z"])


def hparams(**kw):
    h = ptn.random_hparams(ptn.space((24,)), np.random.default_rng(0))
    h.update(lr=3e-3, arch_lr=3e-3, dropout=0.0, first_dropout=0.0, noise=0.0, beta1=0.9, beta2=0.99)
    return {**h, **kw}


def test_shapes_and_darts_weights_receive_gradients():
    ds = tiny_dataset()
    model = ptn.build(hparams(), ds, c_t=11, device=DEVICE)
    s = ds.parts["darts_train"].take(np.arange(8))
    out = model(*ptn.tensors(s, DEVICE)[:3])
    assert out.shape == (8, FD.HORIZON, 11)
    for name, weights in model.architecture().items():
        assert sum(weights.values()) == pytest.approx(1.0), name
    ptn.loss(out, ptn.tensors(s, DEVICE)[3]).backward()
    for alpha in model.arch_parameters():
        assert alpha.grad is not None and torch.any(alpha.grad != 0)


def test_tiny_seeded_run_lowers_the_loss_and_cancel_stops():
    ds = tiny_dataset()
    h = hparams()
    torch.manual_seed(0)
    model = ptn.build(h, ds, c_t=11, device=DEVICE)
    seen = ds.parts["darts_train"]  # PTN now starts at the deterministic-normal baseline: on this tiny
    before = ptn.crps_numpy(ptn.predict(model, seen), seen.target).mean()  # set, 8 epochs improve the fit,
    losses = []                                                            # not yet held-out forecasts
    taken = ptn.train_darts(model, h, ds.parts["darts_train"], ds.parts["darts_val"], epochs=8, seed=0,
                            on_epoch=lambda e, tr, va: losses.append(tr))
    assert taken == 8 * (10 + 5)  # weight and architecture steps
    after = ptn.crps_numpy(ptn.predict(model, seen), seen.target).mean()
    assert after < before and losses[-1] < losses[0]
    calls = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) > 3

    with pytest.raises(Cancelled):
        ptn.train_darts(ptn.build(h, ds, c_t=11, device=DEVICE), h, ds.parts["darts_train"], ds.parts["darts_val"],
                        epochs=50, seed=0, should_stop=stop)
    assert len(calls) == 4  # checked before every weight step: it stopped within the first epoch


def test_genetic_operators_stay_in_the_space():
    params = ptn.space()
    rng = np.random.default_rng(3)
    for _ in range(200):
        a, b = ptn.random_hparams(params, rng), ptn.random_hparams(params, rng)
        child = ptn.mutate(ptn.crossover(a, b, rng.uniform(0.01, 1), rng.uniform(0.01, 1), params, rng), 0.3,
                           params, rng)
        for p in params:
            assert p.contains(child[p.name]), (p.name, child[p.name])
    # Proportional: the fitter parent (lower CRPS) pulls a range toward itself; log ranges interpolate in logs.
    a = {p.name: p.sample(rng) for p in params} | {"dropout": 0.0, "lr": 1e-5, "hidden": 72}
    b = a | {"dropout": 0.4, "lr": 1e-3, "hidden": 240}
    child = ptn.crossover(a, b, 0.1, 0.3, params, rng)  # a is 3x fitter: weight 3/4
    assert child["dropout"] == pytest.approx(0.1)
    assert child["lr"] == pytest.approx(np.exp(0.75 * np.log(1e-5) + 0.25 * np.log(1e-3)))
    assert child["hidden"] == 72 + 24 * round(0.25 * 7)
    assert ptn.mutation_rate(0.2, 0.1, 0.3) == pytest.approx(0.325)
    assert ptn.mutation_rate(0.1, 0.1, 0.3) == 0.05 and ptn.mutation_rate(0.3, 0.1, 0.3) == 0.6


def test_skill_table_and_normal_baseline():
    ptn_c = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    base = 2 * ptn_c
    table = ptn.skill_table(ptn_c, {"b": base})
    assert table["vs b"].iloc[:3].tolist() == pytest.approx([0.5, 0.5, 0.5])
    assert table["vs b"].iloc[3] == 1.0
    q = ptn.normal_quantiles(np.zeros((1, 2)), np.array([1.0, 2.0]), 1001)
    assert q[0, 0, 500] == pytest.approx(0) and q[0, 1, 841] == pytest.approx(2 * 1.0, abs=0.02)
    # The normal's exact CRPS, σ[z(2Φ(z) − 1) + 2φ(z) − 1/√π] at y = mean: σ(2φ(0) − 1/√π).
    exact = 2.0 * (2 * np.exp(0) / np.sqrt(2 * np.pi) - 1 / np.sqrt(np.pi))
    assert ptn.crps_numpy(q[:, 1:2, :].astype(np.float32), np.zeros((1, 1), np.float32))[0] == pytest.approx(exact,
                                                                                                             rel=0.01)


def test_weather_dataset_from_the_shipped_tmy3_files():
    ds, forecaster = FD.weather_dataset(nvar_steps=50)
    train = ds.parts["darts_train"]
    assert train.static.shape[1] == 3 and train.history.shape[1:] == (FD.HISTORY, 9)
    assert train.forecasts.shape[1:] == (FD.N_FORECASTS, FD.HORIZON, 1) and train.target.shape[1] == FD.HORIZON
    assert set(ds.parts) == set(FD.PARTS) and all(len(p) > 1000 for p in ds.parts.values())
    # Cyclic time features lie in [0, 1]; scaled training inputs span [0, 1].
    assert train.history[..., 5:].min() >= 0 and train.history[..., 5:].max() <= 1
    assert train.history.min() >= -1e-9 and train.history.max() <= 1 + 1e-9
    static, frame = FD.read_tmy3(FD.ASSETS_DIR / FD.WEATHER_FILES[0])
    assert static.tolist() == [55.317, -160.517, 7.0] and len(frame) == 8760


def test_ptn_starts_at_the_deterministic_normal_baseline():
    """Standardized residual output (the parallel-time trunk) and a fixed baseline offset (the dense trunk): at
    initialization PTN's quantiles are near the forecast read as a normal with σ = the forecaster's MAE per
    lead, so training starts at about skill 0 against that baseline; a default-initialized TiDE starts far."""
    ds = tiny_dataset()
    test = ds.parts["test"]
    sigma = ptn.error_scale(ds.parts["ga_train"])
    baseline = ptn.normal_quantiles(test.forecasts[:, -1, :, 0], sigma, 11)
    at_baseline = ptn.crps_numpy(baseline, test.target).mean()
    n_in = test.static.shape[1] + test.history[0].size + test.forecasts[0].size
    for seed in range(3):
        torch.manual_seed(seed)
        for keep in (None, {"trunk": "parallel time"}, {"trunk": "dense encoder-decoder"}):
            q = ptn.predict(ptn.build(hparams(), ds, c_t=11, device=DEVICE, keep=keep), test)
            assert ptn.crps_numpy(q, test.target).mean() < 1.1 * at_baseline, (seed, keep)
            # centred on the baseline: the start's corrections average out over windows and quantiles
            assert abs((q - baseline).mean()) < 0.25 * sigma.mean(), (seed, keep)
        far = ptn.predict(ptn.TiDE(n_in, FD.HORIZON, 11).to(DEVICE), test)
        assert ptn.crps_numpy(far, test.target).mean() > 2 * at_baseline
    # the parallel-time trunk's correction starts near 0 (weights ~1e-3): it agrees to a small fraction of σ
    torch.manual_seed(0)
    q = ptn.predict(ptn.build(hparams(), ds, c_t=11, device=DEVICE, keep={"trunk": "parallel time"}), test)
    assert np.abs(q - baseline).max() < 0.05 * sigma.max()
    paper = ptn.build(hparams(), ds, c_t=11, device=DEVICE, forecast_skip=False)
    assert not paper.forecast_skip  # the thesis's architecture stays available


def test_tide_trains_for_a_wall_time_budget(monkeypatch):
    """With ``seconds``, TiDE trains whole epochs until the wall time is spent (at least ``epochs``). The clock is
    a stand-in that advances 0.1 s per look, so the test does not depend on how fast this machine is right now."""
    ds = tiny_dataset()
    s0 = ds.parts["darts_train"]
    n_in = s0.static.shape[1] + s0.history[0].size + s0.forecasts[0].size
    tide = ptn.TiDE(n_in, s0.target.shape[1], 11).to(DEVICE)
    import itertools
    import types

    ticks = (round(0.1 * k, 10) for k in itertools.count())
    monkeypatch.setattr(ptn.fit, "time", types.SimpleNamespace(perf_counter=lambda: next(ticks)))
    # Looks at 0.0 (start), then 0.1, 0.2, … once per finished epoch: epochs end while under 0.5 s, so 5 of them.
    assert ptn.train_plain(tide, s0, epochs=1, seed=0, steps=5, seconds=0.5) == 25
    assert ptn.train_plain(tide, s0, epochs=2, seed=0, steps=5) == 10  # no budget: exactly the epochs


def test_tide_trains_for_its_planned_steps_whatever_the_clock():
    """TiDE's budget is in steps (its share of PTN's time, turned into steps before the run): it takes exactly
    them, and its warm start exactly its own; a config still in seconds is refused."""
    from dataclasses import replace as with_

    ds = tiny_dataset()
    planned = with_(ptn.PTNConfig(quantiles=11, device=str(DEVICE)), tide_steps=30, tide_warm_steps=7)
    warm = ds.parts["test"]
    trained = ptn.final.train_baseline(planned, ds, 0, 1, warm, ptn.Counter(10**6), DEVICE)
    assert trained.steps == 30 + 7
    no_warm = ptn.final.train_baseline(planned, ds, 0, 1, warm.take(np.arange(0)), ptn.Counter(10**6), DEVICE)
    assert no_warm.steps == 30
    with pytest.raises(ValueError, match="not in steps yet"):
        ptn.final.train_baseline(ptn.PTNConfig(quantiles=11), ds, 0, 1, warm, ptn.Counter(10), DEVICE)


COSTS = ptn.StepCosts("test device", search_epoch=0.1, score=0.05, final_epoch=0.2, tide_step=0.015, ptn_step=0.02)


def test_a_budget_in_seconds_becomes_steps_at_the_devices_costs():
    """plan: each final training's seconds at the reference network's epoch cost; TiDE 80 % of PTN's budgeted
    seconds (the search's estimate and one final training) at TiDE's step cost, and 80 % of PTN's warm start."""
    config = ptn.PTNConfig(final_epochs=1000, final_seconds=60.0, warm_epochs=5)
    planned, budget = ptn.plan(config, COSTS)
    assert planned.planned() and planned.final_seconds is None and planned.final_epochs == 300  # 60 s / 0.2 s
    search_s = ptn.search_cost(COSTS, planned.population, planned.generations, planned.first_rung_epochs(),
                               planned.epochs)
    assert budget.search_estimate == pytest.approx(search_s)
    assert planned.tide_steps % 10 == 0 and planned.tide_steps == pytest.approx(0.8 * (search_s + 60.0) / 0.015, abs=10)
    assert planned.tide_warm_steps == round(0.8 * 50 * 0.02 / 0.015)
    assert budget.final_steps == 3000 and "each final training's 60 s buys 3,000 steps" in budget.words()
    one = dataclasses.replace(budget, generations=1).words()
    assert "× 1 generation," in one and "× 2 generations," in dataclasses.replace(budget, generations=2).words()
    assert ptn.plan(planned, COSTS)[0] == planned  # already in steps: unchanged
    capped, _ = ptn.plan(ptn.PTNConfig(final_epochs=100, final_seconds=60.0), COSTS)
    assert capped.final_epochs == 100  # final_epochs caps what the seconds buy
    exact, _ = ptn.plan(ptn.PTNConfig(final_epochs=2, final_seconds=None), COSTS)
    assert exact.final_epochs == 2 and exact.tide_steps >= 2 * 10  # the paper's exact epochs: TiDE no fewer


def test_a_faster_device_buys_the_search_longer_rungs_then_more_agents():
    """The search's seconds buy rungs of LEAVE_STEPS weight steps first, then agents up to max_population, then
    longer rungs; a device too slow for more keeps the config's own shape."""
    from dataclasses import replace as with_

    config = ptn.PTNConfig(population=4, generations=2, epochs=2, first_rung=1, search_seconds=15.0, max_population=8)
    target = -(-ptn.LEAVE_STEPS // ptn.SEARCH_WEIGHT_STEPS)
    slow = ptn.search_shape(config, with_(COSTS, search_epoch=2.0, score=1.0), 15.0)
    assert slow == (4, 1, 2)
    shapes = [ptn.search_shape(config, with_(COSTS, search_epoch=e, score=e / 2), 15.0) for e in (0.4, 0.1, 0.02, 0.002)]
    rungs, populations = [r for _, r, _ in shapes], [p for p, _, _ in shapes]
    assert rungs == sorted(rungs) and populations == sorted(populations)  # never less on a faster device
    assert all(e == 2 * r for _, r, e in shapes)  # the better half gets as many epochs again
    assert shapes[-1][0] == 8 and shapes[-1][1] > target  # the fastest: every agent, then longer rungs
    for p, r, _ in shapes:
        assert p == 4 or r == target or p == 8  # agents come only after rungs reach the target
        cost = ptn.search_cost(with_(COSTS, search_epoch=0.4, score=0.2), p, 2, r, 2 * r)
        assert shapes[0] != (p, r, 2 * r) or cost <= 15.0


def test_the_devices_timings_are_measured_once_and_kept(tmp_path, monkeypatch):
    """The same device and shapes get the same timings, and with them the same steps: from this process's
    memory, or from the JSON file named (a new process)."""
    ds = tiny_dataset()
    calls = []
    monkeypatch.setattr(ptn.budget, "measure", lambda *a, **k: calls.append(1) or COSTS)
    monkeypatch.setattr(ptn.budget, "_MEMORY", {})
    config = ptn.PTNConfig(quantiles=11, final_seconds=30.0, search_seconds=5.0)
    cache = tmp_path / "costs.json"
    first, budget = ptn.budgeted(config, ds, DEVICE, cache)
    assert calls == [1] and not budget.cached and cache.exists()
    monkeypatch.setattr(ptn.budget, "_MEMORY", {})  # as a new process would start
    second, again = ptn.budgeted(config, ds, DEVICE, cache)
    assert calls == [1] and again.cached and second == first


def test_the_same_seed_in_steps_gives_the_same_forecasts_twice_on_the_cpu():
    """A run whose budget is in steps draws the same numbers whatever the machine's load: two runs of a small
    config give identical CRPS (on the CPU, where PyTorch's kernels are deterministic)."""
    from dataclasses import replace as with_

    real = FD.lorenz_dataset
    config = with_(TINY, device="cpu", seeds=1, tide_steps=40, tide_warm_steps=10)
    assert config.planned()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(FD, "lorenz_dataset", lambda *a, **k: real(1, 1, k.get("seed", 0), nvar_steps=100,
                                                               progress=k.get("progress")))
        runs = [ptn.train(config) for _ in range(2)]
    assert runs[0].budget is None  # nothing timed
    pd.testing.assert_frame_equal(runs[0].crps, runs[1].crps, check_exact=True)
    assert runs[0].runs["TiDE steps"].tolist() == runs[1].runs["TiDE steps"].tolist() == [40 + 10]


def test_device_is_chosen_automatically_and_the_same_code_runs_there():
    assert ptn.device_for("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    ds = tiny_dataset()
    model = ptn.build(hparams(), ds, c_t=11, device=DEVICE)
    q = ptn.predict(model, ds.parts["test"])  # inputs follow the model's device; results come back as NumPy
    assert isinstance(q, np.ndarray) and q.shape[-1] == 11


def test_derive_keeps_the_strongest_candidate_and_breaks_ties_toward_the_cheapest():
    arch = {"history": {"attention": 0.2, "conv1d": 0.3, "bigru": 0.5},
            "forecast collapse": {"conv2d collapse": 0.5, "dense collapse": 0.5},
            "forecasts": {"attention": 0.334, "conv1d": 0.333, "bigru": 0.333}}
    assert ptn.derive(arch) == {"history": "bigru", "forecast collapse": "dense collapse", "forecasts": "conv1d"}
    assert ptn.derive(arch, tie=0.0)["forecasts"] == "attention"  # no tolerance: the largest weight wins


def test_a_derived_architecture_has_one_candidate_per_mixed_op_and_trains_weights_only():
    ds = tiny_dataset()
    keep = {"trunk": "parallel time", "history": "conv1d", "forecast collapse": "dense collapse",
            "forecasts": "attention"}
    torch.manual_seed(0)
    model = ptn.build(hparams(), ds, c_t=11, device=DEVICE, keep=keep)
    assert {k: list(v) for k, v in model.architecture().items()} == {k: [v] for k, v in keep.items()}
    assert model.arch_parameters() == []
    full = ptn.build(hparams(), ds, c_t=11, device=DEVICE)
    assert sum(p.numel() for p in model.parameters()) < sum(p.numel() for p in full.parameters())
    seen = ds.parts["darts_train"]
    before = ptn.crps_numpy(ptn.predict(model, seen), seen.target).mean()
    assert ptn.train_darts(model, hparams(), seen, ds.parts["darts_val"], epochs=6, seed=0) == 6 * 10  # no arch steps
    assert ptn.crps_numpy(ptn.predict(model, seen), seen.target).mean() < before
    with pytest.raises(ValueError, match="no candidate 'lstm'"):
        ptn.build(hparams(), ds, c_t=11, device=DEVICE, keep={"history": "lstm"})


def test_verdict_text_never_calls_a_seed_split_a_win():
    skill = pd.DataFrame({"vs TiDE": [0.1, 0.05, 0.0, 0.6]}, index=ptn.SEED_TABLE_5_2.index)
    runs = pd.DataFrame({"median skill vs TiDE": [0.04, 0.06]})
    assert "**beats** the TiDE baseline" in ptn.verdict_text(skill, runs)
    assert "+0.040 to +0.060 over 2 seeds" in ptn.verdict_text(skill, runs)
    split = ptn.verdict_text(skill, pd.DataFrame({"median skill vs TiDE": [-0.01, 0.11]}))
    assert "**ties within seed spread** against the TiDE" in split and "beats" not in split
    lost = skill.assign(**{"vs TiDE": -skill["vs TiDE"]})
    assert "**loses** the TiDE" in ptn.verdict_text(lost, pd.DataFrame({"median skill vs TiDE": [-0.04, -0.06]}))
    assert "per seed" not in ptn.verdict_text(skill)  # one run: no spread to show


TINY = ptn.PTNConfig(population=2, generations=1, epochs=2, first_rung=1, final_epochs=1, quantiles=11, seeds=2, warm_epochs=1,
                     fitness_samples=64, hidden_sizes=(24,))


#: What the tiny run handed to its audit by regime (models.ptn.run.group_view): the test windows, PTN's and the
#: baselines' quantiles (copied before the audit turned them into its rows) and the scaler.
GROUP_INPUTS: dict = {}


@pytest.fixture(scope="module")
def tiny_run():  # type: ignore[no-untyped-def]
    """One real run at a tiny budget (two Lorenz systems per part, so that the test part holds two regimes), its
    typed records and its result; what it audited by regime is kept in :data:`GROUP_INPUTS`."""
    real, real_view = FD.lorenz_dataset, ptn.run.group_view

    def keep(test, model, baselines, scaler, *args, **kwargs):  # type: ignore[no-untyped-def]
        GROUP_INPUTS.update(test=test, model=model.copy(), scaler=scaler,
                            baselines={name: q.copy() for name, q in baselines.items()})
        return real_view(test, model, baselines, scaler, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(FD, "lorenz_dataset", lambda *a, **k: real(2, 1, k.get("seed", 0), nvar_steps=200,
                                                               progress=k.get("progress")))
        mp.setattr(ptn.run, "group_view", keep)
        records: list[Progress] = []
        torch.manual_seed(0)
        result = ptn.train(TINY, records.append)
    return records, result, len(real(2, 1, 0, nvar_steps=200)[0].parts["test"])


def _rows(quantiles: np.ndarray, scaler: FD.Scaler) -> np.ndarray:
    """(window·lead, c) rows in the outcome's units, sorted, written out here in float32 as the run keeps them."""
    lo, hi = np.float32(scaler.lo["target"].ravel()[0]), np.float32(scaler.hi["target"].ravel()[0])
    n, steps, c = quantiles.shape
    rows = np.empty((n * steps, c), dtype=np.float32)
    for lead in range(steps):              # one lead at a time: row w·τ + lead
        rows[lead::steps] = np.sort(quantiles[:, lead, :].astype(np.float32) * (hi - lo) + lo, axis=1)
    return rows


def test_the_runs_audit_by_regime_is_forecasts_audit_of_its_test_forecasts(tiny_run):
    """The run's audit by regime (models/ptn/groups.py) equals forecasts.audit run here on the same forecasts, one
    row per window and lead at the time it verifies; and its mean CRPS per regime is the run's own per-forecast
    CRPS (the ensemble form, in torch, mean over the leads) averaged over the regime's windows, in x's units."""
    from fairness_core import forecasts

    _, result, _ = tiny_run
    view, test, scaler = result.by_group, GROUP_INPUTS["test"], GROUP_INPUTS["scaler"]
    assert view.reason == "" and view.kind == "regime" and view.audit is not None
    n, steps = test.target.shape
    assert (view.windows, view.leads) == (n, steps) == (result.test_rows, FD.HORIZON)
    lo, hi = float(scaler.lo["target"].ravel()[0]), float(scaler.hi["target"].ravel()[0])
    y = (test.target * (hi - lo) + lo).ravel()
    groups, time = np.repeat(test.groups, steps), (test.time[:, None] + np.arange(1, steps + 1)).ravel()
    levels = (np.arange(TINY.quantiles) + 0.5) / TINY.quantiles
    direct = forecasts.audit(y, _rows(GROUP_INPUTS["model"], scaler), levels, groups,
                             {k: _rows(q, scaler) for k, q in GROUP_INPUTS["baselines"].items()}, time=time,
                             positive_is="benefit")
    a = view.audit
    assert a.groups == direct.groups == ("above threshold", "near threshold") and a.notes == ()
    for table in ("by_group", "pairs", "skill", "pit", "coverage"):
        pd.testing.assert_frame_equal(getattr(a, table)(), getattr(direct, table)(), check_exact=True)
    pd.testing.assert_frame_equal(pd.DataFrame(a.verdicts(0.5)), pd.DataFrame(direct.verdicts(0.5)), check_exact=True)
    # the run's own CRPS (result.crps: the first seed's, per window, in x's units) averaged per regime
    per_window = result.crps.groupby(np.asarray(test.groups)).mean()
    means = a.means.rename(columns={"crps": "PTN", "crps:deterministic (normal)": "deterministic",
                                    "crps:TiDE": "TiDE"})
    for model in ("PTN", "deterministic", "TiDE"):
        np.testing.assert_allclose(means[model], per_window.loc[list(a.groups), model], rtol=1e-5)
    by_group = a.by_group()
    assert (by_group["rows"] == np.bincount(pd.factorize(test.groups, sort=True)[0]) * steps).all()
    assert np.isclose(view.observation_sd, np.std(y))


def test_the_per_regime_skill_is_the_direct_computation_on_those_rows(tiny_run):
    """PTN's skill against each baseline per regime: 1 − mean CRPS / mean CRPS of the baseline, its Table 5.2 form
    (quartiles of each CRPS set, share of rows PTN does at least as well) from properscoring's ensemble CRPS of
    the same rows; its interval holds it and has a width."""
    import properscoring as ps

    _, result, _ = tiny_run
    test, scaler = GROUP_INPUTS["test"], GROUP_INPUTS["scaler"]
    steps = test.target.shape[1]
    lo, hi = float(scaler.lo["target"].ravel()[0]), float(scaler.hi["target"].ravel()[0])
    y = (test.target * (hi - lo) + lo).ravel()
    groups = np.repeat(test.groups, steps)
    crps = {"PTN": ps.crps_ensemble(y, _rows(GROUP_INPUTS["model"], scaler).astype(float))}
    crps.update({k: ps.crps_ensemble(y, _rows(q, scaler).astype(float)) for k, q in GROUP_INPUTS["baselines"].items()})
    skill = result.by_group.audit.skill()
    assert set(skill["baseline"]) == set(ptn.BASELINE_NAMES) and len(skill) == 4
    for row in skill.itertuples():
        mine, base = crps["PTN"][groups == row.group], crps[row.baseline][groups == row.group]
        assert np.isclose(row.skill, 1 - mine.mean() / base.mean(), rtol=1e-9)
        q_mine, q_base = np.quantile(mine, [0.25, 0.5, 0.75]), np.quantile(base, [0.25, 0.5, 0.75])
        np.testing.assert_allclose([row.skill_q1, row.skill_q2, row.skill_q3], 1 - q_mine / q_base, rtol=1e-9)
        assert np.isclose(row.share_improved, np.mean(mine <= base))
        assert row.skill_ci_low < row.skill < row.skill_ci_high and np.isfinite(row.skill_ci_high)
    # in words, each regime under the side its interval lies on, whichever side this run's numbers fall
    words = ptn.groups.skill_words(skill)
    said = dict(part.split(": ", 1) for part in words.split(" (95 %")[0].split("Against ")[1:])
    assert list(said) == list(ptn.BASELINE_NAMES)
    for row in skill.itertuples():
        side = ("PTN is better at" if row.skill_ci_low > 0 else "PTN is worse at" if row.skill_ci_high < 0
                else "No difference shown at")
        assert any(s.startswith(side) and row.group in s for s in said[row.baseline].split(". ")), (row, words)


def test_the_bench_prints_the_runs_audit_by_regime(tiny_run):
    """bench/ptn.py's per-regime table and its JSON object are the run's audit: PTN's mean CRPS and its skill against
    each baseline per regime with ForecastAudit.skill's 95 % interval, every pair's verdict at the page's starting
    tolerance (a tenth of the observations' sd) with Holm's adjustment; plain floats; without an audit, the reason."""
    import dataclasses
    import json

    from bench.ptn import by_group
    from fairness_core.wording.forecasts import tolerance_for_sd

    _, result, _ = tiny_run
    view = result.by_group
    a = view.audit
    text, line = by_group(view)
    assert json.loads(json.dumps(line, allow_nan=False)) == line
    assert (line["kind"], line["tolerance"], line["adjust"]) == ("regime", tolerance_for_sd(view.observation_sd), "holm")
    assert {g: line["groups"][g]["crps"] for g in a.groups} == {g: round(a.means.loc[g, "crps"], 4) for g in a.groups}
    skill = a.skill(0.05)
    assert len(skill) == 4
    for row in skill.itertuples():
        got = line["groups"][row.group]["skill"][row.baseline]
        assert (got["skill"], got["low"], got["high"]) == tuple(round(v, 4) for v in (row.skill, row.skill_ci_low,
                                                                                       row.skill_ci_high))
        assert f"{row.skill:+.3f} [{row.skill_ci_low:+.3f}, {row.skill_ci_high:+.3f}]" in text
    v = a.verdicts(line["tolerance"], 0.05, "holm")
    assert [(p["group_i"], p["group_j"], p["verdict"]) for p in line["pairs"]] == list(zip(v.group_i, v.group_j,
                                                                                          v.verdict))
    assert all(f"{p['group_i']} vs {p['group_j']}: {p['verdict']} (OFI " in text for p in line["pairs"])
    none = by_group(dataclasses.replace(view, audit=None, reason="every test window is from one regime"))
    assert none == ("by regime: none, every test window is from one regime",
                    {"kind": "regime", "reason": "every test window is from one regime"})


def test_one_regime_in_the_test_part_gives_the_reason_not_an_audit():
    """Windows of one group cannot be compared by group: no audit, and the reason in words."""
    rng = np.random.default_rng(0)
    n, steps, c = 40, FD.HORIZON, 5
    test = FD.Samples(np.zeros((n, 3)), np.zeros((n, 16, 3)), np.zeros((n, 10, steps, 1)), rng.uniform(size=(n, steps)),
                      np.full(n, "above threshold", dtype=object), np.arange(n), np.zeros(n, dtype=int))
    scaler = FD.Scaler()
    scaler.fit("target", np.array([[0.0], [2.0]]), (0, 1))
    q = np.sort(rng.uniform(size=(n, steps, c)), axis=-1).astype(np.float32)
    view = ptn.group_view(test, q, {"TiDE": q.copy()}, scaler, "regime")
    assert view.audit is None and view.reason == ("every test window is from one regime (above threshold); a "
                                                  "comparison by regime needs two")
    assert np.isclose(view.observation_sd, np.std(test.target * 2.0))
    untouched = q.copy()
    ptn.lead_rows(test, q, scaler)               # not in place: the caller's array is left as it was
    np.testing.assert_array_equal(q, untouched)
    rows = ptn.lead_rows(test, q, scaler, inplace=True)
    assert np.shares_memory(rows, q) and rows.shape == (n * steps, c)
    np.testing.assert_allclose(rows[steps + 2], np.sort(untouched[1, 2]) * 2.0, rtol=1e-6)   # window 1, lead 3
    with pytest.raises(ValueError, match="do not match"):
        ptn.lead_rows(test, q[:, :3], scaler)


def test_the_browser_picks_each_kind_within_each_group(tiny_run):
    _, result, _ = tiny_run
    test = GROUP_INPUTS["test"]
    browser = result.examples
    assert browser["groups"] == ["above threshold", "near threshold"]
    for kind, options in browser["kinds"].items():
        for group in browser["groups"]:
            mine = ptn.examples_of(browser, kind, group)
            assert len(mine) == 12 and all(test.groups[ex["index"]] == group == ex["group"] for ex in mine)
            assert all(ex["time"] == test.time[ex["index"]] for ex in mine)
        assert len(ptn.examples_of(browser, kind)) == len(options) == 24
    confident = ptn.examples_of(browser, "confident", "near threshold")
    assert [ex["width"] for ex in confident] == sorted(ex["width"] for ex in confident)


def fan_in_units(index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Test window ``index`` of the tiny run in x's units, from what the run scored (:data:`GROUP_INPUTS`): PTN's
    quantiles unscaled, their fan at FAN_LEVELS by numpy's own interpolation (Hazen's plotting positions (j + ½)/c
    are PTN's levels), the truth and the deterministic forecast."""
    test, scaler = GROUP_INPUTS["test"], GROUP_INPUTS["scaler"]
    lo, hi = float(scaler.lo["target"].ravel()[0]), float(scaler.hi["target"].ravel()[0])
    q = GROUP_INPUTS["model"][index].astype(float) * (hi - lo) + lo                     # (τ, c)
    fan = np.quantile(q, ptn.FAN_LEVELS, axis=-1, method="hazen")                       # (levels, τ)
    return q, fan, test.target[index] * (hi - lo) + lo, test.forecasts[index, -1, :, 0] * (hi - lo) + lo


def test_the_browsers_forecasts_in_the_outcomes_units_are_the_unscaled_quantiles(tiny_run):
    """models.ptn.scoring.in_units: a browsed forecast's fan, truth and deterministic forecast are the run's own
    quantiles and windows unscaled to x's units, its CRPS properscoring's on those quantiles (mean over the leads)
    and its band width the direct one, in the same units."""
    import properscoring as ps

    _, result, _ = tiny_run
    c = TINY.quantiles
    for ex in ptn.examples_of(result.examples, "random")[::6]:
        shown = ptn.scoring.in_units(ex, result.scaler)
        q, fan, truth, deterministic = fan_in_units(ex["index"])
        np.testing.assert_allclose(shown["fan"], fan, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(shown["truth"], truth, rtol=1e-6)
        np.testing.assert_allclose(shown["deterministic"], deterministic, rtol=1e-6)
        assert np.isclose(shown["crps"], ps.crps_ensemble(truth, q).mean(), rtol=1e-4)
        qs = np.sort(q, axis=-1)
        assert np.isclose(shown["width"], np.mean(qs[:, int(0.95 * c) - 1] - qs[:, int(0.05 * c)]), rtol=1e-4)
        assert shown["gap"] == ex["gap"] and shown["index"] == ex["index"]
        assert not np.allclose(shown["truth"], ex["truth"])   # the record itself stays on the training scale


def test_the_run_warm_starts_retrains_per_seed_and_gives_tide_its_share_of_the_time(tiny_run):
    records, result, n_test = tiny_run
    config = TINY
    assert len(result.runs) == 2 and result.runs.index.is_unique  # two seeds, one row each
    assert result.warm_rows > 0 and result.warm_rows + result.test_rows == n_test
    assert len(result.crps) == result.test_rows  # scored on the held-out windows the warm start never saw
    planned, budget = result.config, result.budget
    assert planned.planned() and budget is not None and budget.costs.device == ptn.budget.device_words(DEVICE)
    # TiDE's steps are its share of PTN's budgeted seconds (search and final training) at its own step cost
    ptn_seconds = budget.search_estimate + planned.final_epochs * budget.costs.final_epoch
    w = planned.final_weight_steps
    assert planned.tide_steps == max(w, w * round(0.8 * ptn_seconds / budget.costs.tide_step / w))
    assert (result.runs["TiDE steps"] == planned.tide_steps + planned.tide_warm_steps).all()
    # a short search leaves the trunk's weights tied: the cheaper dense encoder-decoder is derived, and with it
    # none of the parallel-time operations; else every mixed operation keeps one candidate
    assert set(result.derived) in ({"trunk"}, set(ptn.MIXED_OPS))
    assert {k: list(v) for k, v in result.architecture.items()} == {k: [v] for k, v in result.derived.items()}
    assert records[-1].done == records[-1].total == planned.total_units()
    assert max(r.done for r in records) <= planned.total_units()


def test_the_run_reports_one_typed_record_per_event_with_a_monotone_counter(tiny_run):
    records, result, _ = tiny_run
    assert all(isinstance(r, Progress) for r in records)
    assert [r.done for r in records] == sorted(r.done for r in records)  # one counter, never moving back
    search, agents = of_kind(records, ptn.SearchEpoch), of_kind(records, ptn.AgentFitness)
    final, tide = of_kind(records, ptn.FinalEpoch), of_kind(records, ptn.BaselineEpoch)
    # 2 agents: a first rung each, the better one (successive halving) a second; 1 final epoch per seed
    assert len(search) == 3 and len(agents) == 3 and len(final) == 2 and len(tide) >= 2
    assert all(np.isfinite(r.train_loss) and np.isfinite(r.val_loss) for r in search + final)
    assert all(r.fan.shape == (len(ptn.FAN_LEVELS), FD.HORIZON) for r in search + final)
    assert sorted(r.rung for r in agents) == [1, 1, 2]
    second = next(r for r in agents if r.rung == 2)  # its first-rung score stays its low-fidelity fitness
    assert second.low_fidelity == next(r.val_fitness for r in agents if r.rung == 1 and r.agent == second.agent)
    assert isinstance(records[-1], ptn.Done) and ptn.probe(records).probe_truth
    assert len(result.fidelity) == 1 and np.isnan(result.fidelity_rho)  # one promoted agent: no ρ
    frame = ptn.loss_frame(records)
    assert list(frame["phase"].unique()) == ["search", "final", "tide"]
    assert frame["train_loss"].tolist() == [r.train_loss for r in records
                                            if isinstance(r, (ptn.SearchEpoch, ptn.FinalEpoch, ptn.BaselineEpoch))]


def test_the_forecasting_page_draws_a_real_runs_records(tiny_run, monkeypatch, captured):  # noqa: F811
    """The page's live charts and results, drawn from a real tiny run's typed records (replayed), and its view by
    regime (:func:`by_regime`)."""
    plotly_io = pytest.importorskip("plotly.io")  # the app's own needs: absent on a bare GPU machine
    AppTest = pytest.importorskip("streamlit.testing.v1").AppTest

    from fairness_core.services.jobs import RUNNER

    records, result, _ = tiny_run

    def replay(config, on_progress, should_stop):  # type: ignore[no-untyped-def]
        for r in records:
            on_progress(r)
        return result

    monkeypatch.setattr(ptn, "train", replay)
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/6_Forecasting.py")
    at.run()
    at.button(key="ptn-train").click().run()
    job = RUNNER.get(at.session_state["ptn-job"])
    assert job.wait(60) and job.snapshot().status == "done", job.snapshot().error
    at.run()
    assert not at.exception, at.exception
    charts = [plotly_io.from_json(c.proto.spec) for c in at.get("plotly_chart")]
    titles = [str(fig.layout.title.text) for fig in charts]
    losses = next(f for f in charts if f.layout.title.text.startswith("Loss curves"))
    train_trace = next(t for t in losses.data if t.name == "training loss")
    expected = [r.train_loss for r in records if isinstance(r, (ptn.SearchEpoch, ptn.FinalEpoch, ptn.BaselineEpoch))]
    y = train_trace.y  # plotly's JSON packs arrays as base64
    y = np.frombuffer(base64.b64decode(y["bdata"]), dtype=np.dtype(y["dtype"])) if isinstance(y, dict) else y
    assert np.allclose(np.asarray(y, dtype=float), expected)
    assert any(t.startswith("One validation forecast as training goes") for t in titles)
    assert any(t.startswith("Does the cheap fitness rank agents") for t in titles)
    assert any("low-fidelity fitness" in m.value for m in at.markdown)
    by_regime(at, result, captured)


def numbers(values: object) -> np.ndarray:
    """A figure's array as sent to the browser: a list, or plotly's base64 typed array."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=np.dtype(values["dtype"])).astype(float)
    return np.asarray(values, dtype=float)


def by_regime(at, result, captured) -> None:  # type: ignore[no-untyped-def]
    """The page after the run, by regime: the answer, PTN's skill against both baselines per regime with its
    interval, the pairs' verdicts, the per-regime table and figures, each download the library's numbers; the
    browser's fan chart follows the regime chosen (it opens at the regime with PTN's largest mean CRPS)."""
    import io
    import json

    from app_helpers import shown
    from fairness_core.wording.kinds import amount_text
    from fairness_core.wording.forecasts import tolerance_for_sd

    a, view = result.by_group.audit, result.by_group
    assert "By regime" in [h.value for h in at.subheader]
    tolerance = at.number_input(key="ptn-tol-regime").value
    assert tolerance == tolerance_for_sd(view.observation_sd) > 0
    v = a.verdicts(tolerance, unit="")
    text = shown(at)
    assert "Which regimes PTN serves worse." in text and v.findings(kind="regime") in text
    assert "No regime is served materially worse" in text or "PTN serves some regimes worse: " in text
    shown_skill = next(d.value for d in at.dataframe if "PTN's CRPS" in d.value.columns)
    assert list(shown_skill.columns[:2]) == ["regime", "against"] and len(shown_skill) == 4
    assert ptn.groups.skill_words(a.skill()) in text
    skill = pd.read_csv(io.BytesIO(captured["ptn_skill_by_group.csv"]()))
    np.testing.assert_allclose(skill["skill_ci_low"], a.skill()["skill_ci_low"], rtol=1e-12)
    verdicts = pd.read_csv(io.BytesIO(captured["ptn_group_verdicts.csv"]()), keep_default_na=False)
    assert verdicts["verdict"].tolist() == v["verdict"].tolist()
    groups = pd.read_csv(io.BytesIO(captured["ptn_groups.csv"]()), index_col=0)
    np.testing.assert_allclose(groups["crps"], a.by_group()["crps"], rtol=1e-12)
    pairs = pd.read_csv(io.BytesIO(captured["ptn_group_pairs.csv"]()))
    assert set(pairs["measure"]) >= {"ofi", "skill:TiDE", "skill:deterministic (normal)"}
    charts = {json.loads(c.proto.spec)["layout"]["title"]["text"].split("<br>")[0]: json.loads(c.proto.spec)
              for c in at.get("plotly_chart")}
    assert {"Mean benefit of the median forecast by group", "Band coverage by group"} <= set(charts)
    boxes = charts["CRPS per test forecast (whiskers 5–95 %)"]   # result.crps, in x's units as the tables
    assert boxes["layout"]["yaxis"]["title"]["text"] == "CRPS per test forecast (units of x)"
    worst = str(a.means["crps"].idxmax())
    assert at.selectbox(key="ptn-browse-group").value == worst
    for group in a.groups:
        at.selectbox(key="ptn-browse-group").set_value(group).run()
        assert not at.exception, at.exception
        fan = next(f for t, f in ((c.proto.spec, json.loads(c.proto.spec)) for c in at.get("plotly_chart"))
                   if f["layout"]["title"]["text"].startswith("Test forecast #"))
        shown_ex = ptn.examples_of(result.examples, at.radio(key="ptn-kind").value, group)[0]
        assert fan["layout"]["title"]["text"].startswith(f"Test forecast #{shown_ex['index']} at {group}")
        # in x's units: the bands' edges (widest first, upper then lower) and the median are the unscaled quantiles
        _, quantiles, truth, deterministic = fan_in_units(shown_ex["index"])
        traces = {t.get("name"): numbers(t["y"]) for t in fan["data"]}
        edges = np.stack([numbers(t["y"]) for t in fan["data"][:7]])
        np.testing.assert_allclose(edges, quantiles[[6, 0, 5, 1, 4, 2, 3]], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(traces["truth"], truth, rtol=1e-6)
        np.testing.assert_allclose(traces["deterministic forecast"], deterministic, rtol=1e-6)
        assert fan["layout"]["yaxis"]["title"]["text"] == "Lorenz's x (no unit)"
        crps = ptn.scoring.in_units(shown_ex, result.scaler)["crps"]
        assert f"CRPS {amount_text(crps)} (mean over the 16 leads)" in fan["layout"]["title"]["text"]


def test_tide_is_a_point_of_the_search_space():
    """The dense encoder-decoder trunk at width 256 without the forecast skip is the TiDE baseline: same
    parameters, same outputs; with the skip it starts at the deterministic-normal baseline instead."""
    ds = tiny_dataset()
    s = ds.parts["test"]
    n_in = s.static.shape[1] + s.history[0].size + s.forecasts[0].size
    torch.manual_seed(0)
    tide = ptn.TiDE(n_in, FD.HORIZON, 11).to(DEVICE)
    point = ptn.build(hparams(dense_width=256, dropout=0.1), ds, c_t=11, device=DEVICE, forecast_skip=False,
                      keep={"trunk": "dense encoder-decoder"})
    assert sum(p.numel() for p in point.weight_parameters()) == sum(p.numel() for p in tide.parameters())
    point.trunk.ops[0].load_state_dict(tide.state_dict())
    assert np.allclose(ptn.predict(point, s), ptn.predict(tide, s), atol=1e-6)
    assert "dense residual" in ptn.build(hparams(), ds, c_t=11, device=DEVICE).architecture()["history"]
    started = ptn.build(hparams(dense_width=256), ds, c_t=11, device=DEVICE, keep={"trunk": "dense encoder-decoder"})
    baseline = ptn.normal_quantiles(s.forecasts[:, -1, :, 0], ptn.error_scale(ds.parts["ga_train"]), 11)
    # with the forecast skip it starts near the deterministic-normal baseline (TiDE's own start is far from it)
    assert ptn.crps_numpy(ptn.predict(started, s), s.target).mean() < 1.1 * ptn.crps_numpy(baseline, s.target).mean()
    assert ptn.crps_numpy(ptn.predict(tide, s), s.target).mean() > 2 * ptn.crps_numpy(baseline, s.target).mean()


def test_a_derived_architecture_inherits_the_weights_its_search_trained():
    ds = tiny_dataset()
    h = hparams()
    torch.manual_seed(0)
    hyper = ptn.build(h, ds, c_t=11, device=DEVICE)
    ptn.train_darts(hyper, h, ds.parts["darts_train"], ds.parts["darts_val"], epochs=2, seed=0)
    s = ds.parts["test"]
    for keep in ({"trunk": "dense encoder-decoder"},
                 {"trunk": "parallel time", "history": "bigru", "forecast collapse": "mlp collapse",
                  "forecasts": "dense residual"}):
        derived = ptn.build(h, ds, c_t=11, device=DEVICE, keep=keep)
        assert ptn.inherit(derived, hyper) == len([k for k in derived.state_dict() if not k.endswith("alpha")])
        # the derived network computes what the hypermodel computes with each kept candidate at full weight
        with torch.no_grad():
            for name, op in hyper.mixed_ops().items():
                if name in keep:
                    op.alpha.copy_(torch.where(torch.tensor([c == keep[name] for c in op.names]), 50.0, -50.0))
        assert np.allclose(ptn.predict(derived, s), ptn.predict(hyper, s), atol=1e-5)


def test_a_sampled_mixed_op_runs_one_candidate_and_still_trains_its_weights():
    torch.manual_seed(0)
    op = ptn.MixedOp({"a": torch.nn.Linear(3, 2), "b": torch.nn.Linear(3, 2)})
    x = torch.randn(5, 3)
    op.sample = True
    op.train()
    op(x).sum().backward()
    used = [o.weight.grad is not None for o in op.ops]
    assert sum(used) == 1  # one path ran
    assert op.alpha.grad is not None and torch.all(op.alpha.grad != 0)  # α learns through the softmax
    k = used.index(True)
    with torch.no_grad():
        assert torch.allclose(op(x), op.ops[k](x))  # straight through: the sampled path at full weight
        op.eval()  # evaluation mixes every candidate
        w = op.weights()
        assert torch.allclose(op(x), w[0] * op.ops[0](x) + w[1] * op.ops[1](x))


def test_the_low_fidelity_fitness_is_judged_by_its_rank_correlation_with_the_full_one():
    table = pd.DataFrame({"low_fidelity": [0.1, 0.2, 0.3, 0.4], "val_fitness": [0.1, 0.2, 0.4, 0.3]})
    rho = ptn.fidelity_correlation(table)
    assert rho == pytest.approx(0.8)  # one swapped pair of four: 1 − 6·2 / (4·15)
    assert "ρ between the two is +0.80 over 4 agents" in ptn.fidelity_words(table, rho)
    assert np.isnan(ptn.fidelity_correlation(table.head(2)))
    assert "too few" in ptn.fidelity_words(table.head(2), np.nan)
    assert "nothing to compare" in ptn.fidelity_words(table.head(0), np.nan)


def test_a_challenger_replaces_the_incumbent_only_beyond_noise():
    """clearly_better is a one-sided paired t rule on batch means: the same statistic as scipy's one-sample
    t-test on the batch means computed independently (contiguous ⌈n^(1/3)⌉ batches)."""
    from scipy.stats import ttest_1samp

    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(2, 300))
        held = rng.gamma(2.0, 0.01, n)
        challenger = held + rng.normal(rng.normal(0, 0.002), 0.01, n)
        d = challenger - held
        b = max(2, int(np.ceil(round(n ** (1 / 3), 9))))
        means = np.array([part.mean() for part in np.array_split(d, b)])
        assert np.allclose(ptn.batch_means(d), means) and means.size == min(n, b)
        # The rule centres on the mean of all windows, which equals the mean of the batch means when the
        # batches are equal; compare on those n only.
        if n % b == 0:
            assert ptn.clearly_better(challenger, held) == (ttest_1samp(means, 0.0, alternative="less").pvalue < 0.05)
    held = rng.gamma(2.0, 0.01, 256)
    assert ptn.clearly_better(held - 0.002 + rng.normal(0, 1e-4, 256), held)  # lower on every window
    assert not ptn.clearly_better(held + rng.normal(0, 0.01, 256), held)  # noise around the incumbent
    assert not ptn.clearly_better(held + 0.002, held)  # worse
    assert not ptn.clearly_better(held[:1] - 1, held[:1])  # one window: no spread to judge by
    assert not ptn.clearly_better(np.full(256, np.nan), held)  # an undefined fitness never moves the search


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9])
def test_the_incumbent_rule_keeps_its_level_when_neighbouring_windows_are_correlated(phi):
    """With no true difference, the rule moves off the incumbent at about its 5 % even when the windows'
    differences are autocorrelated (AR(1) with φ), where the independent-window z rule moves far more often."""
    rng = np.random.default_rng(int(phi * 10) + 1)
    reps, n = 1500, 256
    e = rng.normal(size=(reps, n))
    d = np.empty_like(e)
    d[:, 0] = e[:, 0] / np.sqrt(1 - phi**2)
    for i in range(1, n):  # over the 256 windows, all repetitions at once
        d[:, i] = phi * d[:, i - 1] + e[:, i]
    moved = np.mean([ptn.clearly_better(row, np.zeros(n)) for row in d])
    naive = np.mean(d.mean(1) + 1.645 * d.std(1, ddof=1) / np.sqrt(n) < 0)
    assert 0.03 <= moved <= (0.07 if phi < 0.9 else 0.10), moved
    if phi >= 0.5:
        assert naive > 0.15 and moved < naive / 2


def test_the_search_hands_on_the_incumbent_unless_the_best_beats_it_clearly():
    rng = np.random.default_rng(6)
    base = rng.gamma(2.0, 0.01, 256)

    def agent(val_crps: np.ndarray, incumbent: bool = False) -> ptn.Agent:
        a = ptn.Agent({}, 1, fitness=float(val_crps.mean()), val_fitness=float(val_crps.mean()), incumbent=incumbent)
        a.val_crps = val_crps
        return a

    held = agent(base, incumbent=True)
    lucky = agent(base + rng.normal(-0.0005, 0.01, 256))  # a little lower on average, within noise
    assert lucky.score() < held.score() and ptn.choose([held, lucky]) is held
    better = agent(base - 0.003 + rng.normal(0, 0.001, 256))
    assert ptn.choose([held, lucky, better]) is better
    assert ptn.choose([lucky, better]) is better  # no incumbent: Algorithm 2's score alone
    worse = agent(base + 0.01)
    assert ptn.choose([worse, held]) is held


def test_the_first_agent_is_the_baselines_point_pinned_to_the_dense_trunk(tiny_run):
    _, result, _ = tiny_run
    first = [a for a in result.agents if a.incumbent]
    assert len(first) == 1 and first[0].generation == 1
    assert first[0].hparams.items() >= ptn.BASELINE_POINT.items() and first[0].keep == ptn.BASELINE_KEEP
    assert all(a.keep is None for a in result.agents if not a.incumbent)
    assert all(len(a.val_crps) and np.isfinite(a.val_crps).all() for a in result.agents)
    assert result.best is ptn.choose(result.agents)


def test_a_derived_dense_trunk_can_be_retrained_from_tides_start():
    """final_start="tide": the derived dense trunk drops the baseline offset and draws TiDE's default
    initialization, so it computes what a TiDE with its weights computes; the search keeps the baseline start."""
    ds = tiny_dataset()
    s = ds.parts["test"]
    torch.manual_seed(0)
    model = ptn.build(hparams(dense_width=256, dropout=0.1), ds, c_t=11, device=DEVICE, keep=ptn.BASELINE_KEEP)
    sigma = ptn.error_scale(ds.parts["ga_train"])
    at_baseline = ptn.crps_numpy(ptn.normal_quantiles(s.forecasts[:, -1, :, 0], sigma, 11), s.target).mean()
    assert ptn.crps_numpy(ptn.predict(model, s), s.target).mean() < 1.1 * at_baseline
    model.start_dense_as_tide()
    dense = model.trunk.ops[0]
    assert dense.base_index.numel() == 0
    n_in = s.static.shape[1] + s.history[0].size + s.forecasts[0].size
    tide = ptn.TiDE(n_in, FD.HORIZON, 11).to(DEVICE)
    tide.load_state_dict(dense.state_dict())
    assert np.allclose(ptn.predict(model, s), ptn.predict(tide, s), atol=1e-6)
    assert ptn.crps_numpy(ptn.predict(model, s), s.target).mean() > 2 * at_baseline  # TiDE's start, far from it
    with pytest.raises(ValueError, match="final_start"):
        search = ptn.SearchOutcome(ptn.Agent(hparams(), 1), [], {}, 0.0, 0, pd.DataFrame())
        ptn.final.train_final(ptn.PTNConfig(final_start="nowhere"), ds, search, ptn.BASELINE_KEEP, 0, 1,
                              ds.parts["test"], ptn.Counter(10), torch.device("cpu"), ds.parts["test"])


def test_the_page_says_which_agent_went_on_and_where_its_retraining_started(tiny_run):
    _, result, _ = tiny_run
    words = ptn.chosen_words(result)
    assert words.startswith("the incumbent") == result.best.incumbent
    assert ("beat the incumbent" in words) == (not result.best.incumbent)
    dense = result.derived.get("trunk") == "dense encoder-decoder"
    assert ptn.start_words(result).startswith("TiDE's default initialization" if dense else "the deterministic")
    inherited = copy.copy(result)
    inherited.config = ptn.PTNConfig(inherit=True)
    assert ptn.start_words(inherited) == "the weights the search trained"


def test_the_warm_start_is_kept_only_when_the_latest_warm_windows_say_it_helped(monkeypatch):
    """warm_start fine-tunes on the earlier warm windows and keeps the result only if the CRPS on the latest
    ones fell: a fine-tuning that helps stays, one that harms is undone; its steps count either way."""
    ds = tiny_dataset()
    warm = ds.parts["test"]
    n_in = warm.static.shape[1] + warm.history[0].size + warm.forecasts[0].size
    check = warm.take(np.arange(len(warm) - int(round(0.2 * len(warm))), len(warm)))

    def crps_on_check(m: torch.nn.Module) -> float:
        return float(ptn.crps_numpy(ptn.predict(m, check), check.target).mean())

    torch.manual_seed(0)
    tide = ptn.TiDE(n_in, FD.HORIZON, 11).to(DEVICE)  # far from the data at its start: fine-tuning helps
    before = crps_on_check(tide)
    assert ptn.final.warm_start(tide, warm, 5, seed=1, steps=10) == 50
    assert crps_on_check(tide) < before
    monkeypatch.setattr(ptn.final, "WARM_LR", 5.0)  # a rate that wrecks it: undone
    state = {k: v.clone() for k, v in tide.state_dict().items()}
    assert ptn.final.warm_start(tide, warm, 5, seed=1, steps=10) == 50
    assert all(torch.equal(state[k], v) for k, v in tide.state_dict().items())
    assert ptn.final.warm_start(tide, warm.take(np.arange(2)), 1, seed=1, steps=3) == 3  # too few windows to check


def test_the_warm_start_fits_no_target_step_that_it_checks(monkeypatch):
    """The fitting windows stop HORIZON windows before the checking ones (windows are one step apart), so no
    target step is both fitted and checked."""
    rng = np.random.default_rng(3)
    y = rng.normal(size=128 + FD.HORIZON).cumsum() / 10  # one series; window k's targets are y[k + 1 .. k + HORIZON]
    target = np.lib.stride_tricks.sliding_window_view(y[1:], FD.HORIZON)[:128]
    warm = FD.Samples(rng.uniform(size=(128, 3)), rng.uniform(size=(128, FD.HISTORY, 3)),
                      target[:, None, :, None].repeat(FD.N_FORECASTS, 1), target.copy())
    n_check = int(round(ptn.final.WARM_CHECK_SHARE * len(warm)))
    fitted: list[FD.Samples] = []
    real = ptn.final.train_plain
    monkeypatch.setattr(ptn.final, "train_plain",
                        lambda model, data, *a, **k: fitted.append(data) or real(model, data, *a, **k))
    n_in = warm.static.shape[1] + warm.history[0].size + warm.forecasts[0].size
    torch.manual_seed(0)
    ptn.final.warm_start(ptn.TiDE(n_in, FD.HORIZON, 11).to(DEVICE), warm, 1, seed=1, steps=2)
    (fit,) = fitted
    n_fit = len(warm) - n_check - FD.HORIZON
    assert ptn.final.WARM_GAP == FD.HORIZON and len(fit) == n_fit > 0
    assert np.array_equal(fit.target, warm.target[:n_fit])
    # Consecutive windows of a series have their targets shifted by one step: without the gap the windows
    # just before the check share target steps with it (the comparison sees them); the fitted ones share none.
    k = len(warm) - n_check

    def shares_a_step(a: np.ndarray, b: np.ndarray) -> bool:
        return any(np.array_equal(a[i:], b[: FD.HORIZON - i]) for i in range(1, FD.HORIZON))

    assert shares_a_step(warm.target[k - 1], warm.target[k])  # without the gap: shared steps
    assert not any(shares_a_step(t, warm.target[k]) for t in fit.target[-FD.HORIZON:])


def test_a_device_timing_is_the_fastest_epoch_so_load_cannot_shrink_the_budget(monkeypatch):
    """The step costs are each unit's fastest epoch: an epoch slowed by another program (here 5× the others) does
    not change the cost, so a timing taken on a busy machine plans the budget a quiet one would."""
    ticks = iter([0.0, 1.0, 6.0, 7.0, 8.0])   # epochs of 1, 5, 1 and 1 seconds
    monkeypatch.setattr(ptn.budget, "_clock", lambda device: next(ticks))

    def run(on_epoch):
        for _ in range(4):
            on_epoch()

    assert ptn.budget._fastest_epoch(DEVICE, run) == 1.0
