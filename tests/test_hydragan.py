"""Conditional HydraGAN: shapes, conditions, the gradient penalty, a short seeded run, checkpoints,
cancel, and the experiment's evaluation helpers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.stats import wasserstein_distance

from fairness_core import bias
from fairness_core.statistics import augmentation
from fairness_core.services import jobs
from fairness_core.confusion import ConfusionMatrix
from fairness_core.progress import of_kind
from models import experiment as E
from models import hydragan as H
from models import hydragan_calibration as C


def toy(n: int = 200, seed: int = 0) -> pd.DataFrame:
    """Two groups far apart in x; label mostly 1 in A, mostly 0 in B; a text column."""
    rng = np.random.default_rng(seed)
    g = np.repeat(["A", "B"], n)
    x = np.where(g == "A", rng.normal(5, 1, 2 * n), rng.normal(-5, 1, 2 * n))
    y = (rng.uniform(size=2 * n) < np.where(g == "A", 0.8, 0.3)).astype(int)
    sex = rng.choice(["F", "M"], 2 * n)
    return pd.DataFrame({"group": g, "sex": sex, "x": x, "count": rng.integers(0, 5, 2 * n), "y": y})


def config(**kw) -> H.HydraConfig:
    base = dict(condition_columns=["group"], diversity_column="y", steps=300, batch_size=64, hidden=32,
                noise_dim=8, n_critic=2, lr=1e-3, quality_every=0)
    return H.HydraConfig(**{**base, **kw})


def test_schema_shapes_and_condition_handling():
    df = toy(50)
    cfg = config(condition_columns=["group", "sex"])
    schema = H.fit_schema(df, cfg)
    assert schema.conditions == ["A & F", "A & M", "B & F", "B & M"]
    assert [c["name"] for c in schema.numeric] == ["x", "count"] and schema.numeric[1]["integer"]
    # the label joins the condition (not generated); count's five values are each a point mass
    assert schema.categorical == [] and schema.label_categories == ["0", "1"] and schema.condition_dim == 4 + 2
    assert schema.numeric[1]["spikes"] == [0, 1, 2, 3, 4] and schema.numeric[1]["means"] == []
    assert schema.data_dim == (1 + len(schema.numeric[0]["means"])) + (1 + 5)
    x, cond = H.encode(df, schema)
    assert x.shape == (100, schema.data_dim) and set(cond.tolist()) == {0, 1, 2, 3}
    gen = H.Generator(cfg.noise_dim, schema.condition_dim, schema.data_dim, cfg.hidden)
    model = H.HydraGAN(cfg, schema, gen)
    out = model.sample(103, {"A & F": 1, "B & M": 2}, seed=3)
    assert list(out.columns) == ["group", "sex", "x", "count", "y"]
    assert out.groupby(["group", "sex"]).size().to_dict() == {("A", "F"): 34, ("B", "M"): 69}
    assert out["count"].dtype == np.int64 and out["count"].between(0, 4).all()
    assert set(out["y"]) <= {"0", "1"}
    with pytest.raises(ValueError, match="unknown condition"):
        model.sample(10, {"C & F": 1})
    with pytest.raises(ValueError, match="row 3, column 'x': missing value"):
        H.fit_schema(df.assign(x=df["x"].where(df.index != 2)), cfg)
    with pytest.raises(ValueError, match="cannot also be a protected attribute"):
        H.fit_schema(df, config(diversity_column="group"))


def test_gradient_penalty_on_a_linear_critic():
    class Linear(torch.nn.Module):
        def __init__(self, w):
            super().__init__()
            self.w = torch.as_tensor(w, dtype=torch.float32)

        def forward(self, x, c):
            return x @ self.w + c.sum(1)

    real, fake = torch.randn(16, 3), torch.randn(16, 3)
    cond = torch.ones(16, 2)
    # D(x) = w·x has gradient w everywhere: GP = λ (‖w‖ − 1)².
    w = [3.0, 0.0, 4.0]
    assert H.gradient_penalty(Linear(w), real, fake, cond, 10.0).item() == pytest.approx(10 * (5 - 1) ** 2)
    assert H.gradient_penalty(Linear([0.6, 0.8, 0.0]), real, fake, cond, 10.0).item() == pytest.approx(0, abs=1e-10)


def test_diversity_loss_is_the_mse_of_per_condition_proportions():
    probs = torch.tensor([[0.2, 0.8], [0.4, 0.6], [0.9, 0.1]])
    cond = torch.tensor([0, 0, 1])
    target = torch.tensor([0.5, 0.5])
    # condition 0: mean (0.3, 0.7); condition 1: (0.9, 0.1); MSE over 2 conditions × 2 categories.
    expected = ((0.3 - 0.5) ** 2 + (0.7 - 0.5) ** 2 + (0.9 - 0.5) ** 2 + (0.1 - 0.5) ** 2) / 4
    assert H.diversity_loss(probs, cond, 3, target).item() == pytest.approx(expected)


def test_short_seeded_run_learns_realism_and_diversity():
    """The thesis's diversity objective (label not in the condition) pulls the shares toward the target."""
    df = toy(200)
    cfg = config(diversity_target={"0": 0.1, "1": 0.9}, diversity_weight=20.0, label_condition=False)
    schema = H.fit_schema(df, cfg)
    assert [c["name"] for c in schema.categorical] == ["sex", "y"] and not schema.label_condition
    untrained = H.HydraGAN(cfg, schema, H.Generator(cfg.noise_dim, schema.condition_dim, schema.data_dim, cfg.hidden))
    records: list = []
    model = H.train(cfg, df, on_progress=records.append)
    steps = of_kind(records, H.GanStep)
    assert len(steps) == 300 and steps[-1].done == 300
    assert all(np.isfinite([r.critic, r.gp, r.generator, r.diversity]).all() for r in steps[:5])
    before, after = untrained.sample(2000, seed=1), model.sample(2000, seed=1)
    for g, centre in (("A", 5.0), ("B", -5.0)):
        real = df.loc[df["group"] == g, "x"]
        w_before = wasserstein_distance(real, before.loc[before["group"] == g, "x"])
        w_after = wasserstein_distance(real, after.loc[after["group"] == g, "x"])
        assert w_after < 0.5 * w_before, (g, w_before, w_after)
        assert abs(after.loc[after["group"] == g, "x"].mean() - centre) < 1.5
    shares_after = H.condition_label_shares(after, model.schema)["1"]
    shares_before = H.condition_label_shares(before, model.schema)["1"]
    assert (abs(shares_after - 0.9) < abs(shares_before - 0.9)).all()
    assert (shares_after > 0.75).all()
    # Seeded: the same config trains the same generator.
    again = H.train(cfg, df)
    pd.testing.assert_frame_equal(again.sample(500, seed=7), model.sample(500, seed=7))


def test_checkpoint_round_trip_with_weights_only(tmp_path):
    df = toy(40)
    model = H.train(config(steps=5), df)
    path = tmp_path / "gan.pt"
    model.save(path)
    blob = torch.load(path, weights_only=True)  # nothing but tensors and text inside
    assert isinstance(blob["config"], str) and isinstance(blob["schema"], str)
    loaded = H.HydraGAN.load(path)
    pd.testing.assert_frame_equal(loaded.sample(300, seed=2), model.sample(300, seed=2))
    assert loaded.steps_done == 5


def test_cancel_stops_within_one_step():
    steps: list[int] = []  # the flag turns True once seven steps are done (it is also read before them)
    model = H.train(config(steps=1000), toy(40), on_progress=lambda r: steps.append(r.step),
                    should_stop=lambda: len(steps) >= 7)
    assert model.steps_done == 7 and steps == list(range(1, 8))


def test_failing_job_reports_its_error():
    runner = jobs.JobRunner()
    cfg = E.ExperimentConfig(gan=config(condition_columns=["nope"]), label="y")
    job = runner.submit("bad", lambda on_progress, should_stop: E.run(cfg, toy(40), on_progress, should_stop))
    assert job.wait(30)
    snap = job.snapshot()
    assert snap.status == jobs.FAILED and "no column 'nope'" in snap.error


def test_experiment_end_to_end_small():
    df = toy(150)
    cfg = E.ExperimentConfig(gan=config(steps=40), label="y", quota={"A": 1, "B": 3}, n_synthetic=400,
                             eval_seeds=[0, 1], epochs=2)
    records = []
    res = E.run(cfg, df, on_progress=records.append)
    assert records[-1].done == records[-1].total == 40 + 4 * E.FIT_UNITS
    assert all(r.total == 40 + 4 * E.FIT_UNITS for r in records)  # the GAN's records carry the whole run's total
    assert [r.seed for r in of_kind(records, E.Evaluation)] == [0, 0, 1, 1, None]
    assert res.condition_shares.loc["B", "synthetic"] == 0.75 and res.condition_shares.loc["B", "target"] == 0.75
    assert res.condition_distances.loc["KS statistic", "synthetic"] == 0.0  # the condition is exact
    assert set(res.runs["data"]) == {"real", "augmented"} and len(res.runs) == 2 * 2 * 2
    assert set(res.summary["metric"]) == set(augmentation.TABLE_3_4)
    assert res.train_rows + res.test_rows == 300
    assert res.mode == "synthetic only"  # the thesis's setting is the default, and the result says so
    assert list(res.realism.index) == list(E.REALISM_ROWS)
    assert ((res.realism["95% low"] <= res.realism["AUC"]) & (res.realism["AUC"] <= res.realism["95% high"])).all()
    assert (res.realism["n per side"] == res.test_rows).all()  # every test cell has training rows here
    assert set(res.marginals.index) == set(df.columns) and set(res.correlations.index) == set(E.REALISM_ROWS)
    assert {"synthetic (unweighted)", "real (unweighted)"} <= set(res.label_distances.columns)


def test_bias_by_group_is_each_group_against_the_rest():
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0])
    p = np.array([1, 1, 0, 1, 0, 1, 1, 0])
    g = np.array(["a", "a", "a", "b", "b", "b", "b", "b"])
    table = augmentation.bias_by_group(y, p, g)
    cm_a = ConfusionMatrix.from_predictions(y[:3], p[:3])
    cm_b = ConfusionMatrix.from_predictions(y[3:], p[3:])
    assert table.loc["a", "OFI"] == pytest.approx(bias.compare("OFI", cm_a, cm_b))
    assert table.loc["b", "DI"] == pytest.approx(bias.compare("DI", cm_b, cm_a))


def test_distances_against_scipy_definitions():
    values = pd.Series(["a"] * 6 + ["b"] * 3 + ["c"])
    target = {"a": 1 / 3, "b": 1 / 3, "c": 1 / 3}
    d = augmentation.distances(values, target)
    p, q = np.array([0.6, 0.3, 0.1]), np.full(3, 1 / 3)
    assert d["KS statistic"] == pytest.approx(0.6 - 1 / 3)  # CDFs: 0.6 vs 1/3 first
    assert d["KL divergence"] == pytest.approx(np.sum(p * np.log(p / q)))
    m = (p + q) / 2
    assert d["JS distance"] == pytest.approx(np.sqrt((np.sum(p * np.log(p / m)) + np.sum(q * np.log(q / m))) / 2))
    summary = augmentation.summarize(pd.DataFrame({
        "seed": [0, 1, 0, 1], "data": ["real", "real", "augmented", "augmented"], "group": ["a"] * 4,
        "OFI": [0.10, 0.12, 0.02, 0.04], "DI": [0.5, 0.7, 0.9, 0.9], "DCA": [0.0] * 4, "DPPL": [0.1, 0.1, -0.3, -0.3]}))
    s = summary.set_index("metric")
    assert s.loc["OFI", "improvement"] == pytest.approx(0.11 - 0.03) and s.loc["OFI", "improves"] == "yes"
    assert s.loc["DI", "improvement"] == pytest.approx(0.4 - 0.1)
    assert s.loc["DPPL", "improves"] == "no" and s.loc["OFI", "real sd"] == pytest.approx(np.std([0.1, 0.12], ddof=1))
    # an improvement inside its seed noise, and a group too small to read, are not called findings
    noisy = augmentation.summarize(pd.DataFrame({
        "seed": [0, 1, 0, 1] * 2, "data": ["real", "real", "augmented", "augmented"] * 2,
        "group": ["a"] * 4 + ["b"] * 4, "n": [200] * 4 + [12] * 4,
        "OFI": [0.10, 0.30, 0.05, 0.25, 0.10, 0.12, 0.02, 0.04]}), names=["OFI"]).set_index("group")
    assert noisy.loc["a", "improvement"] == pytest.approx(0.05) and noisy.loc["a", "improves"] == "within seed noise"
    assert noisy.loc["a", "improvement se"] == pytest.approx(np.sqrt(0.02 / 2 + 0.02 / 2))
    assert noisy.loc["b", "improves"] == "too few test rows"


def test_per_group_label_distances_and_shares():
    real = pd.Series(["1", "1", "0", "0", "0", "0"])
    real_g = pd.Series(["a", "a", "a", "b", "b", "b"])
    syn = pd.Series(["1", "0", "1", "0"])
    syn_g = pd.Series(["a", "a", "b", "b"])
    target = {"0": 0.5, "1": 0.5}
    table = augmentation.per_group_distance_table(real, real_g, syn, syn_g, target)
    # real: group a has 1/3 zeros (KS |1/3 − 1/2|), b all zeros (KS 1/2); synthetic matches exactly.
    assert table.loc["KS statistic", "real"] == pytest.approx((1 / 6 + 1 / 2) / 2)
    assert table.loc["KS statistic", "synthetic"] == 0 and table.loc["KS statistic", "improvement"] == 1
    # weighted by real rows: a big group far from the target outweighs a small one on it
    real = pd.Series(["0"] * 90 + ["0", "1"] * 5)
    real_g = pd.Series(["big"] * 90 + ["small"] * 10)
    syn = pd.Series(["0"] * 8 + ["1"] * 2 + ["0", "1"] * 5)
    syn_g = pd.Series(["big"] * 10 + ["small"] * 10)
    table = augmentation.per_group_distance_table(real, real_g, syn, syn_g, target)
    assert table.loc["KS statistic", "real"] == pytest.approx(0.9 * 0.5 + 0.1 * 0.0)
    assert table.loc["KS statistic", "real (unweighted)"] == pytest.approx((0.5 + 0.0) / 2)
    assert table.loc["KS statistic", "synthetic"] == pytest.approx(0.9 * 0.3)
    real, real_g = pd.Series(["1", "1", "0", "0", "0", "0"]), pd.Series(["a", "a", "a", "b", "b", "b"])
    syn, syn_g = pd.Series(["1", "0", "1", "0"]), pd.Series(["a", "a", "b", "b"])
    shares = augmentation.group_share_table(real, real_g, syn, syn_g, "1", 0.5)
    assert shares.loc["a", "real"] == pytest.approx(2 / 3) and shares.loc["b", "synthetic"] == 0.5
    matched = augmentation.distance_table(pd.Series(["0", "1"]), pd.Series(["0", "0", "1"]), target)
    assert np.isnan(matched.loc["KS statistic", "improvement"])  # real already on target: no ratio


def test_mode_specific_normalization_round_trips_and_keeps_point_masses():
    """A zero-inflated count and a bimodal measurement: encoding then decoding with the encoded
    modes gives the values back (to rounding), and a value at a point mass is exact (α = 0)."""
    rng = np.random.default_rng(0)
    n = 3000
    counts = np.where(rng.uniform(size=n) < 0.6, 0, rng.poisson(6, n) + 1)
    bimodal = np.where(rng.uniform(size=n) < 0.5, rng.normal(-10, 1, n), rng.normal(10, 2, n))
    modes = H.fit_modes(counts.astype(float))
    assert 0.0 in modes["spikes"]  # 60 % of the rows: a point mass of its own
    fitted = H.fit_modes(bimodal)
    assert not fitted["spikes"] and len(fitted["means"]) >= 2
    assert min(abs(np.array(fitted["means"]) + 10)) < 1 and min(abs(np.array(fitted["means"]) - 10)) < 1
    for v, c in ((counts.astype(float), modes), (bimodal, fitted)):
        enc = H.encode_numeric(v, c, np.random.default_rng(1))
        mode = enc[:, 1:].argmax(1)
        assert np.allclose(enc[:, 1:].sum(1), 1)
        back = H.decode_numeric(enc[:, 0], mode, c)
        spikes = c["spikes"]
        inside = np.abs(enc[:, 0]) < 0.99  # α clipped at ±0.99: values beyond 4 σ of their mode
        assert np.allclose(back[inside], v[inside]) and inside.mean() > 0.99
        at_spike = mode < len(spikes)
        assert (enc[at_spike, 0] == 0).all() and np.array_equal(back[at_spike], v[at_spike])


def test_label_conditioned_sampling_meets_the_target_in_every_group():
    """Every group's label share equals the target to within one row, whatever the group's size,
    and sample_cells gives an exact table of groups × labels."""
    df = toy(300)
    cfg = config(steps=3, diversity_target={"0": 0.3, "1": 0.7})
    model = H.train(cfg, df)
    out = model.sample(1001, {"A": 0.9, "B": 0.1}, seed=0)
    sizes = out.groupby("group").size()
    assert sizes.to_dict() == {"A": 901, "B": 100}
    for g, k in sizes.items():
        share = (out.loc[out["group"] == g, "y"] == "1").mean()
        assert abs(share - 0.7) <= 1 / k + 1e-12, (g, share)
    table = np.array([[5, 0], [2, 7]])
    cells = model.sample_cells(table, seed=1)
    assert pd.crosstab(cells["group"], cells["y"]).to_numpy().tolist() == table.tolist()
    assert list(cells.columns) == list(df.columns)  # the training frame's column order
    with pytest.raises(ValueError, match="2 × 2 table"):
        model.sample_cells(np.ones((3, 2)))


def test_zero_inflated_count_keeps_its_spike_after_training():
    """A count that is 0 for 70 % of the rows: the generator keeps the spike (point-mass mode),
    where the old linear output smeared it (the COMPAS priors_count review)."""
    rng = np.random.default_rng(3)
    n = 600
    g = rng.choice(["A", "B"], n)
    df = pd.DataFrame({"group": g, "priors": np.where(rng.uniform(size=n) < 0.7, 0, rng.poisson(4, n) + 1),
                       "y": rng.integers(0, 2, n)})
    model = H.train(config(steps=1000, batch_size=128), df)
    out = model.sample(4000, seed=0)
    assert abs((out["priors"] == 0).mean() - 0.7) < 0.1
    assert out["priors"].min() >= 0 and out["priors"].max() <= df["priors"].max()


def test_packed_critic_and_its_gradient_penalty():
    """PacGAN: the critic scores ``pac`` rows at once; the penalty is on the gradient norm of each pack."""
    critic = H.Critic(data_dim=3, n_conditions=2, hidden=8, pac=4)
    x, c = torch.randn(8, 3), torch.zeros(8, 2)
    assert critic(x, c).shape == (2,)

    class PackedLinear(torch.nn.Module):
        pac = 2

        def forward(self, x, c):
            return torch.cat([x, c], 1).reshape(x.shape[0] // 2, -1) @ torch.tensor([3.0, 0, 0, 0, 4, 0])

    # the gradient of each pack of 2 rows × (2 data + 1 condition) is (3, 0, 0, 4, …): norm 5, GP = λ (5 − 1)²
    real, fake = torch.randn(6, 2), torch.randn(6, 2)
    assert H.gradient_penalty(PackedLinear(), real, fake, torch.zeros(6, 1), 10.0).item() == pytest.approx(160.0)


def test_level_is_the_inverse_of_the_quantile_grid_and_spreads_point_masses():
    grid = np.array([0.0, 1.0, 2.0, 4.0])  # levels 0, 1/3, 2/3, 1
    u = np.full(3, 0.5)
    assert np.allclose(C.level(np.array([0.5, 3.0, 4.0]), grid, u), [1 / 6, 5 / 6, 1.0])
    assert C.level(np.array([-1.0]), grid, u[:1])[0] == 0.0 and C.level(np.array([9.0]), grid, u[:1])[0] == 1.0
    spike = np.array([0.0, 0.0, 0.0, 5.0, 6.0])  # a point mass over levels 0 … 0.5 + half a grid step
    draws = C.level(np.zeros(10_000), spike, np.random.default_rng(0).uniform(size=10_000))
    assert draws.min() >= 0 and draws.max() <= 2.5 / 4 and abs(draws.mean() - 1.25 / 4) < 0.01


def test_proportional_bias_meets_the_shares_on_the_reference_rows():
    logits = np.random.default_rng(0).normal(size=(500, 3)) * 2
    shares = np.array([0.7, 0.3, 0.0])
    b = C.proportional_bias(logits, shares)
    z = logits + b
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    assert np.allclose(p.mean(0), shares, atol=1e-6)


def test_calibration_gives_each_cell_its_real_marginals_and_keeps_the_generators_ranks():
    """After a short run, each group × label cell's numeric columns have the real cell's distribution (KS
    small) and its categories the real shares, while within a cell the calibrated values are an increasing
    function of the generator's own (the dependence it learned is kept). Uncalibrated rows are further off."""
    from scipy.stats import ks_2samp

    df = toy(400)
    model = H.train(config(steps=60), df)
    assert model.calibration is not None and model.calibration.cells == 4
    raw = H.HydraGAN(model.config, model.schema, model.generator)
    table = np.array([[2000, 2000], [2000, 2000]])
    cal, uncal = model.sample_cells(table, seed=4), raw.sample_cells(table, seed=4)
    worst_cal = worst_raw = 0.0
    for (g, y), real in df.groupby(["group", "y"]):
        pick = lambda f: f[(f["group"] == g) & (f["y"] == str(y))]  # noqa: E731
        worst_cal = max(worst_cal, ks_2samp(real["x"], pick(cal)["x"]).statistic)
        worst_raw = max(worst_raw, ks_2samp(real["x"], pick(uncal)["x"]).statistic)
        assert abs((pick(cal)["sex"] == "F").mean() - (real["sex"] == "F").mean()) < 0.04
        share = real["count"].value_counts(normalize=True)
        got = pick(cal)["count"].value_counts(normalize=True).reindex(share.index, fill_value=0)
        assert np.abs(got - share).max() < 0.05, (g, y)
        before, after = pick(uncal)["x"].to_numpy(), pick(cal)["x"].to_numpy()  # the same rows, in the same order
        inside = (before > df["x"].min()) & (before < df["x"].max())  # clipping ties values at the range's ends
        order = np.argsort(before[inside])
        assert inside.mean() > 0.5 and (np.diff(after[inside][order]) >= -1e-9).all()
    assert worst_cal < 0.1 and worst_cal < worst_raw


def test_a_run_stopped_early_is_not_calibrated_and_config_can_switch_it_off():
    steps: list[int] = []
    stopped = H.train(config(steps=50), toy(40), on_progress=lambda r: steps.append(r.done),
                      should_stop=lambda: len(steps) >= 3)
    assert stopped.calibration is None
    assert H.train(config(steps=3, calibrate=False), toy(40)).calibration is None


def test_typed_records_drive_the_pages_tiles_and_training_figure():
    """The page draws its live panel from hydragan.training_summary and plots.gan_training_curves, which
    read the records' fields: a real tiny run's records, as the job runner keeps them."""
    from fairness_core import plots

    runner = jobs.JobRunner()
    cfg = config(steps=12, label_condition=False, quality_every=5)
    job = runner.submit("tiny", lambda on_progress, should_stop: H.train(cfg, toy(40), on_progress, should_stop))
    assert job.wait(60) and job.snapshot().status == jobs.DONE
    records = job.snapshot().records
    steps = of_kind(records, H.GanStep)
    assert [r.step for r in steps] == list(range(1, 13)) and all(r.time is not None for r in steps)
    assert [r.phase for r in records if not isinstance(r, H.GanStep)] == ["calibrate"]
    now = H.training_summary(records)
    assert now.step == 12 and now.steps_per_s == steps[-1].steps_per_s
    assert now.wasserstein == pytest.approx(np.mean([-r.critic for r in steps]))
    assert now.quality == steps[9].quality is not None and steps[10].quality is None  # measured at step 10
    fig = plots.gan_training_curves(steps)
    per_step = {t.yaxis: t for t in fig.data if t.name == "per step" or t.legendgroup == "raw"}
    assert np.allclose(per_step["y"].y, [-r.critic for r in steps])  # first panel: the Wasserstein estimate
    assert np.allclose(per_step["y2"].y, [r.gp for r in steps]) and np.allclose(per_step["y"].x, range(1, 13))
    assert H.training_summary([]) is None


def test_page_input_checks_name_the_row_and_column():
    from fairness_core.io import DataValidationError

    table = pd.DataFrame({"condition": ["A", "B", "C"], "target share": [0.5, -1, "x"]})
    with pytest.raises(DataValidationError, match=r"Group quotas, row 2 \(B\), column 'target share'"):
        H.shares_from_table(table, "condition", "target share", "Group quotas")
    with pytest.raises(DataValidationError, match="at least one target share must be > 0"):
        H.shares_from_table(table.assign(**{"target share": 0}), "condition", "target share", "Group quotas")
    assert H.shares_from_table(table.assign(**{"target share": [1, 1, 2]}), "condition", "target share",
                               "Q") == {"A": 0.25, "B": 0.25, "C": 0.5}
    df = toy(20)
    expected = {f"{g} & {x}": n for (g, x), n in df.groupby(["group", "sex"]).size().items()}
    assert H.check_conditions(df, ["group", "sex"]).to_dict() == expected
    with pytest.raises(DataValidationError, match="column 'nope'"):
        H.check_conditions(df, ["nope"])
    many = pd.DataFrame({"id": range(H.MAX_CONDITIONS + 1)}).astype(str)
    with pytest.raises(DataValidationError, match=f"{H.MAX_CONDITIONS + 1} condition levels"):
        H.check_conditions(many, ["id"])
    with pytest.raises(DataValidationError, match="row 3, column 'x': missing value"):
        H.fit_schema(df.assign(x=df["x"].where(df.index != 2)), config())


def test_a_cell_with_few_real_rows_takes_its_labels_pooled_marginals():
    """Group C has 10 rows, all with label 0: its label-1 cell has none and its label-0 cell too few, so
    both take the distribution of their own label pooled over groups (not the other label's)."""
    df = toy(200)
    small = pd.DataFrame({"group": "C", "sex": "F", "x": 100.0 + np.arange(10), "count": 0, "y": 0})
    df = pd.concat([df, small], ignore_index=True)
    model = H.train(config(steps=3), df)
    out = model.sample_cells(np.array([[0, 0], [0, 0], [3000, 3000]]), seed=0)
    for y in (0, 1):
        pooled = df.loc[df["y"] == y, "x"]
        got = out.loc[out["y"] == str(y), "x"]
        assert abs(got.median() - pooled.median()) < 0.1 * pooled.std(), (y, got.median(), pooled.median())
