"""Forecasts audited by group (issue 55): the scores against properscoring and direct computations, the long-run
variances against statsmodels, the pairs, verdicts and skill, and every validation message. Coverage of the
intervals is measured by bench/forecasts_coverage.py, never here."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import properscoring as ps
import pytest
from scipy import signal, stats
from statsmodels.regression.linear_model import yule_walker
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.sandwich_covariance import S_hac_simple

from fairness_core import forecasts
from fairness_core.common.validation import DataValidationError
from fairness_core.results import Verdicts
from fairness_core.statistics import forecast_scores as fs
from fairness_core.statistics.inference import hac
from fairness_core.statistics.verdicts import VERDICTS

LEVELS9 = np.round(np.arange(1, 10) / 10, 10)


def _forecasts(n=600, groups=("a", "b", "c"), levels=LEVELS9, seed=0, shifts=None, scales=None):
    """Normal quantile forecasts of y with a per-group shift (bias) and spread."""
    rng = np.random.default_rng(seed)
    g = np.array(groups)[np.arange(n) % len(groups)]
    code = np.arange(n) % len(groups)
    shift = np.zeros(len(groups)) if shifts is None else np.asarray(shifts, dtype=float)
    scale = np.ones(len(groups)) if scales is None else np.asarray(scales, dtype=float)
    centre = rng.normal(size=n) * 3
    y = centre + rng.normal(size=n) * scale[code]
    q = centre[:, None] + shift[code][:, None] + scale[code][:, None] * stats.norm.ppf(levels)
    return y, q, g


def _direct_crps(y, q, levels):
    """2/K Σ max(τ(y − q), (τ − 1)(y − q)): the pinball loss written the other way."""
    e = y[:, None] - q
    return 2 * np.maximum(levels * e, (levels - 1) * e).mean(axis=1)


# ---------------------------------------------------------------- CRPS


def test_crps_equals_a_direct_computation_per_forecast_and_per_group():
    y, q, g = _forecasts()
    a = forecasts.audit(y, q, LEVELS9, g, positive_is="benefit")
    direct = pd.Series(_direct_crps(y, q, LEVELS9)).groupby(g).mean()
    np.testing.assert_allclose(a.by_group()["crps"].to_numpy(), direct.to_numpy(), rtol=1e-13)
    np.testing.assert_allclose(fs.row_scores(y, q, LEVELS9).crps, _direct_crps(y, q, LEVELS9), rtol=1e-13)


def test_crps_on_midpoint_levels_is_properscorings_ensemble_crps_exactly():
    k = 11
    levels = (np.arange(1, k + 1) - 0.5) / k
    y, q, g = _forecasts(levels=levels, seed=3)
    ours = fs.crps_quantiles(y, q, levels)
    np.testing.assert_allclose(ours, ps.crps_ensemble(y, q), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(fs.ensemble_gap(y, q, levels), 0.0, atol=1e-15)
    a = forecasts.audit(y, q, levels, g, positive_is="benefit")
    np.testing.assert_allclose(a.by_group()["crps"].to_numpy(),
                               pd.Series(ps.crps_ensemble(y, q)).groupby(g).mean().to_numpy(), rtol=1e-12)


def test_crps_on_other_levels_differs_from_the_ensemble_crps_by_the_documented_gap():
    y, q, g = _forecasts(seed=4)                                   # levels k/10: not the midpoints
    ours, ens = fs.crps_quantiles(y, q, LEVELS9), ps.crps_ensemble(y, q)
    gap = fs.ensemble_gap(y, q, LEVELS9)
    np.testing.assert_allclose(ours - ens, gap, atol=1e-12)
    assert np.abs(gap).max() > 1e-3                                 # the gap is real here, and bounded:
    k = LEVELS9.size
    bound = 2 / k * np.abs((np.arange(1, k + 1) - 0.5) / k - LEVELS9).max() * np.abs(q - y[:, None]).sum(axis=1)
    assert np.all(np.abs(gap) <= bound + 1e-12)
    a = forecasts.audit(y, q, LEVELS9, g, positive_is="benefit")
    per_group = pd.Series(ens + gap).groupby(g).mean().to_numpy()
    np.testing.assert_allclose(a.by_group()["crps"].to_numpy(), per_group, rtol=1e-12)


@pytest.mark.parametrize("k, inside, at_three", [(111, 1.8e-4, 1.2e-3), (9, 0.018, 0.034)])
def test_the_quadrature_error_against_the_continuous_crps_is_as_documented(k, inside, at_three):
    levels = (np.arange(1, k + 1) - 0.5) / k
    y = np.linspace(-2, 2, 81)
    q = np.broadcast_to(stats.norm.ppf(levels), (y.size, k))
    err = fs.crps_quantiles(y, q, levels) - ps.crps_gaussian(y, 0, 1)
    assert np.abs(err).max() <= inside
    far = fs.crps_quantiles([3.0], q[:1], levels) - ps.crps_gaussian(3.0, 0, 1)
    assert abs(far[0]) <= at_three


def test_point_forecasts_are_the_degenerate_case_crps_is_the_mean_absolute_error():
    rng = np.random.default_rng(5)
    y, point = rng.normal(size=90), rng.normal(size=90)
    g = np.repeat(["x", "y", "z"], 30)
    a = forecasts.audit(y, point, [0.5], g, positive_is="benefit")
    t = a.by_group()
    mae = pd.Series(np.abs(y - point)).groupby(g).mean().to_numpy()
    np.testing.assert_allclose(t["crps"], mae, rtol=1e-13)
    np.testing.assert_allclose(t["wis"], mae, rtol=1e-13)
    np.testing.assert_allclose(t["crps"], pd.Series(ps.crps_ensemble(y, point[:, None])).groupby(g).mean(), rtol=1e-13)
    np.testing.assert_allclose(t["benefit"], pd.Series(point - y).groupby(g).mean(), rtol=1e-12)
    assert not any(c.startswith("coverage_") for c in t.columns)      # one level: no band


# ---------------------------------------------------------------- WIS, bands, PIT, median


def test_wis_from_intervals_equals_the_weighted_pinball_form_and_crps_on_a_symmetric_set():
    levels = np.array([0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975])
    y, q, g = _forecasts(levels=levels, seed=6, shifts=[0.0, 1.0, -0.5])
    direct = fs.weighted_interval_score(y, q, levels)
    pinball = (fs.pinball_loss(y[:, None], q, levels) * fs.wis_weights(levels)).sum(axis=1)
    np.testing.assert_allclose(direct, pinball, rtol=1e-12)
    np.testing.assert_allclose(direct, fs.crps_quantiles(y, q, levels), rtol=1e-12)   # symmetric with 0.5
    a = forecasts.audit(y, q, levels, g, positive_is="benefit")
    np.testing.assert_allclose(a.by_group()["wis"], pd.Series(direct).groupby(g).mean(), rtol=1e-12)


def test_wis_without_the_median_uses_the_bands_alone():
    levels = np.array([0.1, 0.3, 0.9])
    y, q, _ = _forecasts(n=50, levels=levels, seed=7)
    alpha = 0.2
    by_hand = alpha / 2 * fs.interval_score(y, q[:, 0], q[:, 2], alpha)       # one band, no median: K = 1
    np.testing.assert_allclose(fs.weighted_interval_score(y, q, levels), by_hand, rtol=1e-12)
    s = fs.row_scores(y, q, levels)
    np.testing.assert_allclose(s.wis, by_hand, rtol=1e-12)
    assert not np.allclose(s.wis, s.crps)


def test_band_coverage_and_pit_equal_direct_counts_ties_included():
    y, q, g = _forecasts(n=900, seed=8, shifts=[0.0, 0.7, -0.3], scales=[1.0, 0.6, 1.5])
    q = np.round(q, 1)                                   # ties between y and a quantile happen:
    y = np.round(y, 1)
    assert (q == y[:, None]).any()
    a = forecasts.audit(y, q, LEVELS9, g, positive_is="benefit")
    cov = a.coverage_table()
    for nominal, lo, hi in [(0.8, 0, 8), (0.6, 1, 7), (0.4, 2, 6), (0.2, 3, 5)]:
        inside = (q[:, lo] <= y) & (y <= q[:, hi])
        np.testing.assert_allclose(cov[nominal].to_numpy(), pd.Series(inside).groupby(g).mean().to_numpy())
    pit = a.pit()
    counts = (q <= y[:, None]).sum(axis=1)
    for group in ("a", "b", "c"):
        expected = np.bincount(counts[g == group], minlength=10)
        np.testing.assert_array_equal(pit.loc[pit["group"] == group, "count"].to_numpy(), expected)
    np.testing.assert_allclose(pit.groupby("group")["expected"].sum(), 1.0)
    np.testing.assert_allclose(pit["expected"].to_numpy()[:10], np.full(10, 0.1))


def test_a_coverage_interval_stays_within_0_and_1():
    """A band that covers 98 % of a group of 50 forecasts: the normal interval would reach past 100 %; a share's
    interval is cut to [0, 1], the point and the lower end unchanged."""
    y, q, g = _forecasts(n=150, seed=9)
    med, wide = q[:, 4:5], g == "a"
    q[wide] = med[wide] + 1.6 * (q[wide] - med[wide])     # group a's bands widened: its 80 % band covers 98 %
    a = forecasts.audit(y, q, LEVELS9, g, positive_is="benefit")
    cov = a.coverage_table()
    unclipped = cov.to_numpy() + stats.norm.ppf(0.975) * np.sqrt(a.variance("coverage"))
    assert unclipped.max() > 1.01 and cov.loc["a", 0.8] == pytest.approx(0.98)
    c = a.coverage()
    assert c["ci_low"].between(0, 1).all() and c["ci_high"].between(0, 1).all()
    row = c[(c["group"] == "a") & (c["nominal"] == 0.8)].iloc[0]
    assert row["ci_high"] == 1.0 and row["ci_low"] < row["coverage"] == pytest.approx(0.98)


def test_the_median_is_interpolated_between_the_levels_around_one_half():
    levels = [0.1, 0.4, 0.7, 0.9]
    q = np.array([[0.0, 4.0, 10.0, 12.0]])
    a, b, t = fs.median_weights(levels)
    assert (a, b) == (1, 2) and t == pytest.approx(1 / 3)
    assert fs.row_scores(np.array([5.0]), q, np.array(levels)).median[0] == pytest.approx(6.0)


def test_a_pinned_worked_example():
    # Two sites, levels 1/6, 1/2, 5/6 (the midpoints of K = 3), two forecasts each.
    # site a: y = 3 with q = (1, 2, 4): pinball 2·(1/6) + 1·(1/2) + 1·(1/6) = 1, CRPS = 2/3;
    #         y = 0 with q = (−1, 0, 1): pinball (1/6)(1) + 0 + (1/6)(1) = 1/3, CRPS = 2/9.
    # site b: y = 10 with q = (4, 5, 6): pinball (1/6)6 + (1/2)5 + (5/6)4 = 6.8333, CRPS = 4.5556;
    #         y = 5 with q = (4, 5, 6): pinball (1/6)1 + 0 + (1/6)1 = 1/3, CRPS = 2/9.
    y = np.array([3.0, 0.0, 10.0, 5.0])
    q = np.array([[1.0, 2.0, 4.0], [-1.0, 0.0, 1.0], [4.0, 5.0, 6.0], [4.0, 5.0, 6.0]])
    levels = [1 / 6, 1 / 2, 5 / 6]
    np.testing.assert_allclose(fs.crps_quantiles(y, q, levels), [2 / 3, 2 / 9, 41 / 9, 2 / 9], rtol=1e-12)
    a = forecasts.audit(y, q, levels, ["a", "a", "b", "b"], positive_is="benefit", min_time_points=3)
    t = a.by_group()
    np.testing.assert_allclose(t["crps"], [(2 / 3 + 2 / 9) / 2, (41 / 9 + 2 / 9) / 2], rtol=1e-12)
    np.testing.assert_allclose(t["benefit"], [(-1 + 0) / 2, (-5 + 0) / 2])    # median − y: b under-forecast
    np.testing.assert_allclose(t["coverage_0.6667"], [1.0, 0.5])      # the 2/3 band [q1, q3] misses y = 10 only
    assert t["reason"].str.contains("has 2 time points; an interval needs at least 3").all()
    assert t["crps_ci_low"].isna().all()
    harm = forecasts.audit(y, q, levels, ["a", "a", "b", "b"], positive_is="harm", min_time_points=3)
    np.testing.assert_allclose(harm.by_group()["benefit"], [0.5, 2.5])         # y − median


# ---------------------------------------------------------------- long-run variances


def _ar1(rho, n, rng):
    return signal.lfilter([1.0], [1.0, -rho], rng.normal(size=n))


def test_newey_west_with_fixed_lags_equals_statsmodels():
    rng = np.random.default_rng(9)
    x = _ar1(0.6, 500, rng)
    u = x - x.mean()
    ours = hac.long_run_variance(u, np.zeros(500, dtype=int), 1, "newey-west", bandwidth=11)
    assert ours.lrv[0] == pytest.approx(S_hac_simple(u, nlags=10)[0, 0] / 500, rel=1e-12)
    iid = hac.long_run_variance(u, np.zeros(500, dtype=int), 1, "iid")
    assert iid.lrv[0] == pytest.approx(np.mean(u * u), rel=1e-12)


def test_series_end_to_end_are_estimated_as_if_alone():
    rng = np.random.default_rng(10)
    a, b = _ar1(0.5, 300, rng), _ar1(0.8, 200, rng)
    ua, ub = a - a.mean(), b - b.mean()
    together = hac.long_run_variance(np.concatenate([ua, ub])[:, None], np.repeat([0, 1], [300, 200]), 2)
    for k, u in enumerate((ua, ub)):
        alone = hac.long_run_variance(u[:, None], np.zeros(u.size, dtype=int), 1)
        for field in ("lrv", "rho", "bandwidth", "order"):
            assert getattr(together, field)[k, 0] == pytest.approx(getattr(alone, field)[0, 0], rel=1e-12)


def test_the_sieve_is_yule_walker_at_its_chosen_order():
    rng = np.random.default_rng(11)
    x = signal.lfilter([1.0], [1.0, -0.5, 0.3], rng.normal(size=2000))     # an AR(2)
    u = x - x.mean()
    v = hac.long_run_variance(u, np.zeros(u.size, dtype=int), 1, "ar-sieve")
    p = int(v.order[0])
    assert p >= 2
    phi, sigma = yule_walker(u, order=p, method="mle", result_object=False)
    assert v.lrv[0] == pytest.approx(sigma ** 2 / (1 - phi.sum()) ** 2, rel=1e-9)


def test_the_union_is_the_larger_of_its_two_estimates_and_the_prewhitening_is_andrews_monahans():
    rng = np.random.default_rng(12)
    x = _ar1(0.9, 400, rng)
    u = (x - x.mean())[:, None]
    seg = np.zeros(400, dtype=int)
    pre, sieve, union = (hac.long_run_variance(u, seg, 1, m) for m in ("prewhitened", "ar-sieve", "union"))
    assert union.lrv[0, 0] == pytest.approx(max(pre.lrv[0, 0], sieve.lrv[0, 0]))
    g0, g1 = np.mean(u[:, 0] ** 2), np.sum(u[1:, 0] * u[:-1, 0]) / 400           # γ_h = Σ u_t u_{t+h} / T
    assert pre.rho[0, 0] == pytest.approx(g1 / g0)
    e = u[1:, 0] - pre.rho[0, 0] * u[:-1, 0]                 # prewhitened residuals, directly
    phi = np.mean(e[1:] * e[:-1]) / np.mean(e * e)
    assert pre.bandwidth[0, 0] == pytest.approx(hac.andrews_bandwidth(phi, 400), rel=0.05)
    direct = S_hac_simple(e, nlags=int(np.ceil(pre.bandwidth[0, 0])) - 1,
                          weights_func=lambda L: 1 - np.arange(L + 1) / pre.bandwidth[0, 0])[0, 0] / 399
    assert pre.lrv[0, 0] == pytest.approx(direct / (1 - pre.rho[0, 0]) ** 2, rel=0.02)   # end effects only
    assert hac.long_run_variance(u, seg, 1, "iid").lrv[0, 0] < pre.lrv[0, 0] / 5


# ---------------------------------------------------------------- pairs, verdicts, skill


def test_pairs_are_differences_of_group_means_with_summed_variances_and_holm():
    y, q, g = _forecasts(n=600, seed=13, shifts=[0.0, 0.4, -0.6])
    a = forecasts.audit(y, q, LEVELS9, g, positive_is="benefit")
    p = a.pairs()
    t = a.by_group()
    ofi = p[p["measure"] == "ofi"].set_index(["group_i", "group_j"])
    var = a.variance("benefit")[:, 0]
    for (gi, gj), row in ofi.iterrows():
        i, j = a.groups.index(gi), a.groups.index(gj)
        assert row["estimate"] == pytest.approx(t.loc[gi, "benefit"] - t.loc[gj, "benefit"])
        assert row["se"] == pytest.approx(np.sqrt(var[i] + var[j]))
    np.testing.assert_allclose(ofi["p_adjusted"], multipletests(ofi["p"], method="holm")[1], rtol=1e-12)
    assert set(p["measure"]) == {"crps", "wis", "ofi", "coverage_0.8", "coverage_0.6", "coverage_0.4", "coverage_0.2"}
    z = stats.norm.ppf(0.975)
    np.testing.assert_allclose(p["ci_high"] - p["estimate"], z * p["se"], rtol=1e-12)


def test_rows_at_one_time_point_enter_as_their_sum_and_time_sorts_the_rows():
    y, q, g = _forecasts(n=240, groups=("a", "b"), seed=14, shifts=[0.0, 0.5])
    time = np.arange(240) // 4                                 # two rows per group at each time point
    rng = np.random.default_rng(0)
    shuffle = rng.permutation(240)
    a = forecasts.audit(y, q, LEVELS9, g, time=time, positive_is="benefit")
    b = forecasts.audit(y[shuffle], q[shuffle], LEVELS9, g[shuffle], time=time[shuffle], positive_is="benefit")
    assert a.points.tolist() == [60, 60] and a.rows.tolist() == [120, 120]
    np.testing.assert_allclose(a.variance("benefit"), b.variance("benefit"), rtol=1e-9)
    benefit = np.median(q, axis=1) - y
    sums = pd.Series(benefit).groupby([g, time]).sum()
    u = (sums - sums.groupby(level=0).transform("mean")).to_numpy()          # the sum minus 2 rows × the mean
    # the per-time sums minus rows × mean: T·LRV/n² with the same estimator on those sums
    lrv = hac.long_run_variance(u, np.repeat([0, 1], 60), 2, "union").lrv
    np.testing.assert_allclose(a.variance("benefit")[:, 0], 60 * lrv / 120 ** 2, rtol=1e-9)


def test_verdicts_are_the_binary_audits_words_and_read_bias_and_accuracy():
    y, q, g = _forecasts(n=2400, seed=15, shifts=[0.0, -1.5, 0.0, 0.0], scales=[1.0, 1.0, 1.0, 2.5],
                         groups=("a", "under", "same", "wide"))
    a = forecasts.audit(y, q, LEVELS9, g, positive_is="benefit")
    v = a.verdicts(tolerance=0.6, unit="°C")
    assert isinstance(v, Verdicts) and set(v["verdict"]) <= set(VERDICTS)
    row = v[(v["group_i"] == "under") & (v["group_j"] == "a")].iloc[0]
    assert row["verdict"] == "algorithmic bias" and row["favours"] == "a"
    assert "°C" in row["explanation"] and "a's forecasts carry" in row["explanation"]
    wide = v[(v["group_i"] == "wide") & (v["group_j"] == "a")].iloc[0]       # wider errors, no lean
    assert wide["verdict"] == "systemic disparity" and wide["ratio"] > 1.25
    same = v[{"a", "same"} == v[["group_i", "group_j"]].apply(set, axis=1)].iloc[0]
    assert same["verdict"] in ("no bias detected", "inconclusive")
    assert v.findings().startswith(f"Of {len(v)} group pairs: ")
    assert v.findings(kind="site").startswith(f"Of {len(v)} site pairs: ")
    assert {"hac_bandwidth_i", "hac_order_j", "hac_rho_i"} <= set(v.columns)


def test_float32_quantiles_are_scored_as_their_float64_values_without_a_float64_copy():
    """A forecaster's float32 quantiles (a network's outputs) give exactly the audit of their float64 values, and the
    audit's memory stays below one float64 copy of the quantiles (it takes each block of rows to float64)."""
    import tracemalloc

    n, levels = 12_000, (np.arange(111) + 0.5) / 111
    y, q, g = _forecasts(n=n, levels=levels, seed=21, shifts=[0.0, -0.4, 0.2], scales=[1.0, 1.0, 1.7])
    q32 = q.astype(np.float32)
    base32 = (q + 0.3).astype(np.float32)
    t = np.arange(n) // 3
    tracemalloc.start()
    a32 = forecasts.audit(y, q32, levels, g, baselines={"b": base32}, time=t, positive_is="benefit")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    a64 = forecasts.audit(y, q32.astype(float), levels, g, baselines={"b": base32.astype(float)}, time=t,
                          positive_is="benefit")
    for table in ("by_group", "pairs", "skill", "pit", "coverage"):
        pd.testing.assert_frame_equal(getattr(a32, table)(), getattr(a64, table)(), check_exact=True)
    assert peak < q.nbytes            # two float64 copies would be twice this
    crossing = q32.copy()
    crossing[7, [10, 11]] = crossing[7, [11, 10]] + np.float32(1.0)
    with pytest.warns(UserWarning, match="1 row"):
        sorted32 = forecasts.audit(y, crossing, levels, g, time=t, positive_is="benefit")
    np.testing.assert_array_equal(sorted32.by_group()["crps"], forecasts.audit(
        y, np.sort(crossing, axis=1).astype(float), levels, g, time=t, positive_is="benefit").by_group()["crps"])


def _phrases(text: str, names: list[str], n: int = 4) -> list[str]:
    """The n-word phrases of ``text`` that occur more than once, numbers and group names (the data) left out: a
    run of words between two numbers or names is the sentence's own wording."""
    for name in sorted(names, key=len, reverse=True):
        text = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", " | ", text)
    runs = re.split(r"\|", re.sub(r"[−-]?\d[\d.,]*(?:\s?%)?", " | ", text))
    grams = [tuple(w[i:i + n]) for run in runs for w in (re.findall(r"[^\s()]+", run),)
             for i in range(len(w) - n + 1)]
    counts = pd.Series(grams, dtype=object).value_counts() if grams else pd.Series(dtype=int)
    return [" ".join(g) for g, k in counts.items() if k > 1]


def test_findings_say_each_verdicts_pairs_together_without_repeating_a_phrase():
    """findings() reads like a person wrote it: each verdict once, its pairs listed under it (the leaning pairs
    grouped by the group they lean against, the less accurate by the worse served), never the same phrase pair by
    pair; every number is the verdict table's."""
    y, q, g = _forecasts(n=4000, seed=15, shifts=[0.0, -1.5, 0.0, 0.0, -1.5], scales=[1.0, 1.0, 1.0, 2.5, 1.0],
                         groups=("a", "under", "same", "wide", "under too"))
    a = forecasts.audit(y, q, LEVELS9, g, positive_is="benefit")
    shifted = forecasts.audit(y, q - 0.3 * np.isin(g, ["a", "same"])[:, None], LEVELS9, g, positive_is="benefit")
    words = []
    for audit, tolerance in ((a, 0.6), (a, 0.05), (a, 3.0), (shifted, 0.5)):
        v = audit.verdicts(tolerance=tolerance, unit="°C")
        text = v.findings(max_items=len(v))
        assert _phrases(text, list(audit.groups)) == [], text
        said = [w for w in VERDICTS[:-1] if w in set(v["verdict"])]
        assert text.count("Algorithmic bias:") == ("algorithmic bias" in said)
        assert text.count("Systemic disparity,") == ("systemic disparity" in said)
        assert text.count("Cannot tell yet:") == ("inconclusive" in set(v["verdict"]))
        words += [w for w in said]
        for row in v[v["verdict"] == "algorithmic bias"].itertuples():
            lo, hi = (row.ofi_ci_low, row.ofi_ci_high) if row.favours == row.group_i else (-row.ofi_ci_high,
                                                                                            -row.ofi_ci_low)
            assert f"{row.favours}'s (by {abs(row.ofi):.3g} °C;" in text and f"{lo:.3g} to {hi:.3g} °C)" in text
    assert set(words) == set(VERDICTS[:-1])           # every word was read somewhere
    # the sentence the table kept per pair repeated its phrase: "… more benefit per forecast than …" each time
    v = a.verdicts(tolerance=0.6, unit="°C")
    assert _phrases(" ".join(v["explanation"]), list(a.groups)) != []
    assert v.findings(max_items=1).endswith(f"{len(v) - 1} more pairs in the verdict table.")


def test_a_group_with_too_few_time_points_gets_no_interval_and_no_verdict():
    y, q, g = _forecasts(n=400, groups=("a", "b"), seed=16, shifts=[0.0, -2.0])
    keep = (g == "a") | (np.cumsum(g == "b") <= 10)
    a = forecasts.audit(y[keep], q[keep], LEVELS9, g[keep], positive_is="benefit")
    t = a.by_group()
    assert np.isnan(t.loc["b", "benefit_ci_low"]) and not np.isnan(t.loc["b", "benefit"])
    assert t.loc["b", "reason"] == "group 'b' has 10 time points; an interval needs at least 30"
    v = a.verdicts(tolerance=0.1)
    assert v["verdict"].tolist() == ["inconclusive"] and "10 time points" in v.loc[0, "explanation"]
    assert a.pairs()["ci_low"].isna().all()


def test_skill_is_one_minus_the_crps_ratio_with_the_thesis_quartiles_and_share_improved():
    y, q, g = _forecasts(n=600, seed=17, groups=("a", "b"))
    rng = np.random.default_rng(1)
    base = np.median(q, axis=1) + rng.normal(size=600) * np.where(g == "a", 0.5, 2.0)   # a point forecast
    a = forecasts.audit(y, q, LEVELS9, g, baselines={"persistence": base}, positive_is="benefit")
    s = a.skill().set_index("group")
    model, ref = _direct_crps(y, q, LEVELS9), np.abs(y - base)
    for group in ("a", "b"):
        m, b = model[g == group], ref[g == group]
        assert s.loc[group, "skill"] == pytest.approx(1 - m.mean() / b.mean())
        assert s.loc[group, "skill_q2"] == pytest.approx(1 - np.median(m) / np.median(b))
        assert s.loc[group, "skill_q1"] == pytest.approx(1 - np.quantile(m, 0.25) / np.quantile(b, 0.25))
        assert s.loc[group, "share_improved"] == pytest.approx(np.mean(m <= b))
    assert (s["skill_ci_low"] < s["skill"]).all() and (s["skill"] < s["skill_ci_high"]).all()
    d = a.pairs().query("measure == 'skill:persistence'").iloc[0]
    assert d["estimate"] == pytest.approx(s.loc["a", "skill"] - s.loc["b", "skill"])
    assert d["differs"]                                         # the baseline is much worse at b


def test_group_quantiles_equal_numpys():
    rng = np.random.default_rng(18)
    x, c = rng.normal(size=101), rng.integers(0, 3, 101)
    got = fs.group_quantiles(x, c, 3, [0.1, 0.5, 0.9])
    for k in range(3):
        np.testing.assert_allclose(got[k], np.quantile(x[c == k], [0.1, 0.5, 0.9]), rtol=1e-13)


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize("levels, message", [
    ([0.0, 0.5, 0.9], r"levels\[0\] = 0 is outside \(0, 1\)"),
    ([0.1, 0.5, 1.0], r"levels\[2\] = 1 is outside \(0, 1\)"),
    ([0.5, 0.1, 0.9], r"levels must increase: levels\[1\] = 0.1 follows levels\[0\] = 0.5"),
    ([0.1, 0.5, 0.5], r"levels\[2\] = 0.5 repeats levels\[1\]"),
    ([0.6, 0.7, 0.8], r"the median \(0.5\) must lie between two levels"),
])
def test_bad_levels_are_named(levels, message):
    with pytest.raises(ValueError, match=message):
        forecasts.audit(np.zeros(4), np.zeros((4, 3)), levels, ["a", "a", "b", "b"], positive_is="benefit")


def test_bad_inputs_are_named_by_row_and_column():
    y, q, g = _forecasts(n=40, groups=("a", "b"))
    bad_y = y.copy()
    bad_y[[7, 9]] = np.nan
    with pytest.raises(DataValidationError, match=r"y\[7\] = .* is missing or not a number \(2 such rows\)"):
        forecasts.audit(bad_y, q, LEVELS9, g, positive_is="benefit")
    bad_q = q.copy()
    bad_q[5, 2] = np.inf
    with pytest.raises(DataValidationError, match=r"quantiles\[5, 2\] \(level 0.3\) is missing or infinite"):
        forecasts.audit(y, bad_q, LEVELS9, g, positive_is="benefit")
    with pytest.raises(DataValidationError, match=r"quantiles has shape \(40, 8\); expected .* \(40, 9\)"):
        forecasts.audit(y, q[:, :8], LEVELS9, g, positive_is="benefit")
    with pytest.raises(DataValidationError, match=r"groups\[3\] is missing"):
        forecasts.audit(y, q, LEVELS9, np.where(np.arange(40) == 3, None, g).astype(object), positive_is="benefit")
    with pytest.raises(DataValidationError, match=r"time\[2\] = .* is missing or not a time"):
        forecasts.audit(y, q, LEVELS9, g, time=np.where(np.arange(40) == 2, np.nan, np.arange(40.0)),
                        positive_is="benefit")
    with pytest.raises(DataValidationError, match="one group"):
        forecasts.audit(y, q, LEVELS9, ["a"] * 40, positive_is="benefit")
    with pytest.raises(DataValidationError, match=r"baseline 'b'\[4\] is missing"):
        forecasts.audit(y, q, LEVELS9, g, baselines={"b": np.where(np.arange(40) == 4, np.nan, y)},
                        positive_is="benefit")


def test_crossing_quantiles_are_sorted_with_a_warning_naming_how_many_rows():
    y, q, g = _forecasts(n=60, groups=("a", "b"))
    crossed = q.copy()
    crossed[[4, 11, 30]] = crossed[[4, 11, 30]][:, ::-1]
    with pytest.warns(UserWarning, match=r"cross .* in 3 rows \(first: row 4\); they were sorted"):
        a = forecasts.audit(y, crossed, LEVELS9, g, positive_is="benefit")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = forecasts.audit(y, q, LEVELS9, g, positive_is="benefit")
    pd.testing.assert_frame_equal(a.by_group(), b.by_group())
    assert len(a.notes) == 1 and not b.notes


def test_an_undeclared_direction_warns_and_assumes_a_benefit():
    y, q, g = _forecasts(n=60, groups=("a", "b"))
    with pytest.warns(UserWarning, match="positive_is not given"):
        a = forecasts.audit(y, q, LEVELS9, g)
    assert "assumed" in a.direction


def test_many_series_are_summed_in_one_masked_product_as_one_by_one(monkeypatch):
    rng = np.random.default_rng(19)
    lengths = rng.integers(1, 40, 30)
    u = rng.normal(size=(lengths.sum(), 2))
    seg = np.repeat(np.arange(30), lengths)
    one_by_one = hac.long_run_variance(u, seg, 30)
    monkeypatch.setattr(hac, "SERIES_ONE_BY_ONE", 0)
    masked = hac.long_run_variance(u, seg, 30)
    for field in ("lrv", "rho", "bandwidth", "order"):
        np.testing.assert_allclose(getattr(masked, field), getattr(one_by_one, field), rtol=1e-10, atol=1e-14)


def test_sorting_crossing_quantiles_never_increases_the_crps():
    rng = np.random.default_rng(20)
    y = rng.normal(size=500)
    q = rng.normal(size=(500, 9))                             # crossing nearly everywhere
    assert np.all(fs.crps_quantiles(y, np.sort(q, axis=1), LEVELS9) <= fs.crps_quantiles(y, q, LEVELS9) + 1e-12)
