"""The statistics of amount audits (fairness_core/statistics/amounts.py): moments, intervals, duality, the skew guard."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats

from fairness_core.statistics.amounts import SKEW_LIMIT, MeanPairs, Moments, RatioPairs, skew_index


def _direct(x: np.ndarray) -> tuple[float, float, float]:
    d = x - x.mean()
    return x.mean(), float((d ** 2).sum()), float((d ** 3).sum())


def test_moments_equal_a_direct_computation_and_combine_across_chunks_and_groups() -> None:
    rng = np.random.default_rng(3)
    x = rng.lognormal(3, 0.7, 1000)
    codes = rng.integers(0, 4, 1000)
    m = Moments.of(x, codes, 4)
    for g in range(4):
        np.testing.assert_allclose([m.mean[g], m.m2[g], m.m3[g]], _direct(x[codes == g]), rtol=1e-10)
    first, second = Moments.of(x[:300], codes[:300], 4), Moments.of(x[300:], codes[300:], 4)
    both = first.combine(second)
    for field in ("n", "mean", "m2", "m3"):
        np.testing.assert_allclose(getattr(both, field), getattr(m, field), rtol=1e-10)
    total = m.pool(np.zeros(4, dtype=int), 1)
    np.testing.assert_allclose([total.mean[0], total.m2[0], total.m3[0]], _direct(x), rtol=1e-10)
    assert m.skewness[0] == pytest.approx(stats.skew(x[codes == 0], bias=False), rel=1e-10)
    sums = [np.bincount(codes, weights=(x - 20.0) ** k, minlength=4) for k in (1, 2, 3)]
    powered = Moments.from_power_sums(m.n, *sums, shift=20.0)
    np.testing.assert_allclose(powered.mean, m.mean, rtol=1e-12)
    np.testing.assert_allclose(powered.m2, m.m2, rtol=1e-9)
    np.testing.assert_allclose(powered.m3, m.m3, rtol=1e-7)


def test_a_group_of_one_value_has_no_spread_despite_rounding() -> None:
    m = Moments.of(np.full(7, 0.3), np.zeros(7, dtype=int), 1)
    assert m.m2[0] == 0 and m.m3[0] == 0 and skew_index(m)[0] == 0


def test_welch_bounds_equal_scipys_welch_interval() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 1, 12), rng.normal(0.5, 3, 30)
    m = Moments.of(np.concatenate([a, b]), np.repeat([0, 1], [12, 30]), 2)
    low, high = MeanPairs(m.take([0]), m.take([1]), "welch", skew_limit=None).bounds(0.025)
    ci = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert (low[0], high[0]) == pytest.approx((ci.low, ci.high), rel=1e-10)
    one_low, one_high = MeanPairs(m.take([0]), method="welch", skew_limit=None).bounds(0.025)
    assert (one_low[0], one_high[0]) == pytest.approx(stats.t.interval(0.95, 11, a.mean(), stats.sem(a)), rel=1e-10)


def _hall_by_root(a: np.ndarray, b: np.ndarray, gamma: float) -> tuple[float, float]:
    """Hall's bounds by root finding on the definition g((D − Δ)/S) = ±q, with scipy's skewness: independent of
    the closed-form inverse."""
    v_a, v_b = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    s = np.sqrt(v_a + v_b)
    k3 = [stats.skew(x, bias=False) * x.std(ddof=1) ** 3 / x.size ** 2 for x in (a, b)]
    lam = (k3[0] - k3[1]) / s ** 3
    df = (v_a + v_b) ** 2 / (v_a ** 2 / (a.size - 1) + v_b ** 2 / (b.size - 1))
    q = stats.t.ppf(1 - gamma, df)
    d = a.mean() - b.mean()

    def g(delta: float) -> float:
        t = (d - delta) / s
        return t + lam / 6 * (1 + 2 * t * t) + lam * lam / 27 * t ** 3

    width = 50 * s
    return (optimize.brentq(lambda x: g(x) - q, d - width, d + width, xtol=1e-13),
            optimize.brentq(lambda x: g(x) + q, d - width, d + width, xtol=1e-13))


def test_hall_bounds_solve_the_transformation_they_invert() -> None:
    rng = np.random.default_rng(5)
    for size_a, size_b in ((10, 10), (10, 200), (40, 40)):
        a, b = rng.lognormal(0, 0.5, size_a), rng.normal(1, 0.5, size_b)
        m = Moments.of(np.concatenate([a, b]), np.repeat([0, 1], [size_a, size_b]), 2)
        low, high = MeanPairs(m.take([0]), m.take([1]), "hall", skew_limit=None).bounds(0.025)
        assert (low[0], high[0]) == pytest.approx(_hall_by_root(a, b, 0.025), rel=1e-8, abs=1e-10)


@pytest.mark.parametrize("method", ["union", "hall", "welch"])
def test_every_p_value_is_the_dual_of_its_bound(method: str) -> None:
    rng = np.random.default_rng(1)
    k = 300
    sizes = rng.integers(3, 60, 2 * k)
    x = np.concatenate([rng.lognormal(0, rng.uniform(0.1, 1.2), s) for s in sizes])
    m = Moments.of(x, np.repeat(np.arange(2 * k), sizes), 2 * k)
    p = MeanPairs(m.take(np.arange(k)), m.take(np.arange(k, 2 * k)), method, skew_limit=None)
    checked = 0
    for gamma in (0.025, 0.005, 0.0004):
        low, high = p.bounds(gamma)
        for null in (0.0, 0.3, -0.3):
            above, below = p.p_value(null, "above"), p.p_value(null, "below")
            away = (np.abs(low - null) > 1e-9) & (np.abs(high - null) > 1e-9)
            assert np.array_equal((above < gamma)[away], (low > null)[away])
            assert np.array_equal((below < gamma)[away], (high < null)[away])
            checked += int(away.sum())
    assert checked > 2000


def test_union_contains_both_intervals() -> None:
    rng = np.random.default_rng(2)
    x = rng.lognormal(0, 0.8, 400)
    m = Moments.of(x, np.repeat(np.arange(20), 20), 20)
    i, j = m.take(np.arange(10)), m.take(np.arange(10, 20))
    union = MeanPairs(i, j, "union", None).bounds(0.025)
    for method in ("hall", "welch"):
        low, high = MeanPairs(i, j, method, None).bounds(0.025)
        assert np.all(union[0] <= low) and np.all(union[1] >= high)


def test_fieller_bounds_are_the_roots_of_the_ratio_test_and_its_dual() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.normal(10, 2, 15), rng.normal(12, 4, 40)
    m = Moments.of(np.concatenate([a, b]), np.repeat([0, 1], [15, 40]), 2)
    r = RatioPairs(m.take([0]), m.take([1]))
    low, high = r.bounds(0.025)
    v_a, v_b = a.var(ddof=1) / 15, b.var(ddof=1) / 40
    q = stats.t.ppf(0.975, r.df[0])

    def t(theta: float) -> float:
        return (a.mean() - theta * b.mean()) / np.sqrt(v_a + theta ** 2 * v_b)

    assert low[0] == pytest.approx(optimize.brentq(lambda th: t(th) - q, 1e-6, r.estimate[0]), rel=1e-9)
    assert high[0] == pytest.approx(optimize.brentq(lambda th: t(th) + q, r.estimate[0], 100), rel=1e-9)
    for null in (0.7, 0.8, 1.0, float(low[0]) * 0.999, float(high[0]) * 1.001):
        assert (r.p_value(null, "above")[0] < 0.025) == (low[0] > null)
        assert (r.p_value(null, "below")[0] < 0.025) == (high[0] < null)


def test_a_ratio_of_means_at_or_below_zero_is_undefined() -> None:
    m = Moments.of(np.array([-1.0, -2.0, 3.0, 4.0]), np.array([0, 0, 1, 1]), 2)
    r = RatioPairs(m.take([0]), m.take([1]))
    assert bool(r.nobody[0]) and np.isnan(r.estimate[0]) and np.isnan(r.bounds(0.025)[0][0])


def _coverage(rng: np.random.Generator, method: str, n_i: int, n_j: int, sigma: float, draws: int) -> float:
    a = np.exp(sigma * rng.normal(size=(draws, n_i))) - np.exp(sigma ** 2 / 2)
    b = rng.normal(size=(draws, n_j)) if sigma else rng.standard_t(3, (draws, n_j))
    if not sigma:
        a = rng.standard_t(3, (draws, n_i))
    mi = Moments.of(a.ravel(), np.repeat(np.arange(draws), n_i), draws)
    mj = Moments.of(b.ravel(), np.repeat(np.arange(draws), n_j), draws)
    low, high = MeanPairs(mi, mj, method, skew_limit=None).bounds(0.025)
    return float(((low <= 0) & (high >= 0)).mean())


def test_seeded_coverage_at_two_corners() -> None:
    """A skewed small group against a large one (where Welch undercovers) and heavy tails (where Hall alone does):
    the union holds 0.93 at both, 2,000 draws each (bench/amounts_coverage.py runs every corner)."""
    skewed = {m: _coverage(np.random.default_rng(11), m, 10, 200, 0.5, 2000) for m in ("union", "welch")}
    heavy = {m: _coverage(np.random.default_rng(12), m, 10, 10, 0.0, 2000) for m in ("union", "hall")}
    assert skewed["union"] >= 0.93 and heavy["union"] >= 0.93
    assert skewed["welch"] < skewed["union"] and heavy["hall"] < heavy["union"]


def test_the_skew_guard_fires_on_lognormal_sigma_1_at_10_rows_and_not_on_normal_at_200() -> None:
    rng = np.random.default_rng(8)
    skewed = rng.lognormal(0, 1, (400, 10))
    normal = rng.normal(5, 2, (400, 200))
    fired_skewed = skew_index(Moments.of(skewed.ravel(), np.repeat(np.arange(400), 10), 400)) > SKEW_LIMIT
    fired_normal = skew_index(Moments.of(normal.ravel(), np.repeat(np.arange(400), 200), 400)) > SKEW_LIMIT
    assert fired_skewed.mean() >= 0.5
    assert not fired_normal.any()
    m = Moments.of(np.concatenate([skewed[0], normal[0]]), np.repeat([0, 1], [10, 200]), 2)
    p = MeanPairs(m.take([0]), m.take([1]))
    assert bool(p.too_skewed[0]) == bool(fired_skewed[0])
    if p.too_skewed[0]:
        assert np.isnan(p.bounds(0.025)[0][0]) and np.isnan(p.p_value(0.0)[0])


def test_groups_of_one_row_are_refused() -> None:
    m = Moments.of(np.array([1.0, 2.0, 3.0]), np.array([0, 0, 1]), 2)
    with pytest.raises(ValueError, match="at least two rows"):
        MeanPairs(m.take([0]), m.take([1]))
