"""Paired statistics (issue 54): exact McNemar, the conditional odds ratio's agreeing interval, Tango's paired
difference and its dual p-values, its exact coverage at a few corners, Cochran's Q (chi-square and exact), first
places against chance, Wilcoxon — each against statsmodels, SciPy or a brute-force enumeration."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize, stats
from statsmodels.stats.contingency_tables import cochrans_q as sm_cochrans_q, mcnemar as sm_mcnemar
from statsmodels.stats.proportion import proportion_confint

from fairness_core.statistics import paired

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def test_exact_mcnemar_equals_statsmodels_to_1e_12() -> None:
    b, c = (g.ravel() for g in np.meshgrid(np.arange(41), np.arange(41)))
    ours = paired.mcnemar_exact(b, c)
    theirs = np.array([sm_mcnemar([[7, x], [y, 11]], exact=True).pvalue for x, y in zip(b, c)])
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


def test_clopper_pearson_equals_statsmodels_beta_interval() -> None:
    x, n = np.array([0, 1, 5, 19, 20, 3]), np.array([20, 20, 20, 20, 20, 7])
    low, high = paired.clopper_pearson(x, n, 0.05)
    for k in range(x.size):
        lo, hi = proportion_confint(x[k], n[k], alpha=0.05, method="beta")
        assert low[k] == pytest.approx(lo, abs=1e-12) and high[k] == pytest.approx(hi, abs=1e-12)
    assert np.isnan(paired.clopper_pearson(0, 0)[0])


@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_odds_ratio_interval_excludes_1_exactly_when_mcnemar_rejects(alpha: float) -> None:
    b, c = (g.ravel() for g in np.meshgrid(np.arange(41), np.arange(41)))
    keep = b + c > 0
    b, c = b[keep], c[keep]
    _, low, high = paired.conditional_odds_ratio(b, c, alpha)
    rejects = paired.mcnemar_exact(b, c) < alpha
    assert np.array_equal(rejects, (low > 1) | (high < 1))
    assert rejects.sum() > 100 and (~rejects).sum() > 100


def test_odds_ratio_worked_example() -> None:
    est, low, high = paired.conditional_odds_ratio([9], [2])
    theta_low, theta_high = proportion_confint(9, 11, alpha=0.05, method="beta")
    assert est[0] == 4.5
    assert low[0] == pytest.approx(theta_low / (1 - theta_low)) and high[0] == pytest.approx(theta_high / (1 - theta_high))
    assert np.isnan(paired.conditional_odds_ratio([0], [0])[0][0])


def _tango_z(b: float, c: float, n: float, d: float) -> float:
    """Tango's (1998) score statistic written out from the paper, for one table and one null value."""
    w = -b - c + (2 * n - b + c) * d
    q21 = (np.sqrt(w * w - 8 * n * c * d * (d - 1)) - w) / (4 * n)
    return (b - c - n * d) / np.sqrt(n * (2 * q21 + d * (1 - d)))


@pytest.mark.parametrize("b, c, n", [(10, 2, 100), (0, 0, 40), (3, 7, 20), (30, 0, 50), (1, 1, 200)])
def test_uncorrected_tango_limits_are_the_roots_of_the_papers_statistic(b: int, c: int, n: int) -> None:
    low, high = paired.tango_interval(b, c, n, 0.05, cc=0.0)
    z = stats.norm.isf(0.025)
    est = (b - c) / n
    lo = optimize.brentq(lambda d: _tango_z(b, c, n, d) - z, -1 + 1e-12, est - 1e-12) if est > -1 + 1e-9 else -1
    hi = optimize.brentq(lambda d: _tango_z(b, c, n, d) + z, est + 1e-12, 1 - 1e-12) if est < 1 - 1e-9 else 1
    assert float(low) == pytest.approx(lo, abs=1e-9) and float(high) == pytest.approx(hi, abs=1e-9)


def test_paired_difference_p_values_are_the_dual_of_its_bounds() -> None:
    rng = np.random.default_rng(3)
    n = rng.integers(5, 400, 300).astype(float)
    b = np.floor(rng.random(300) * n * 0.3)
    c = np.floor(rng.random(300) * (n - b) * 0.3)
    d = paired.PairedDifferences(b, c, n)
    for gamma in (0.025, 0.005, 0.0004):
        low, high = d.bounds(gamma)
        np.testing.assert_allclose(d.p_value(low, "above"), gamma, rtol=1e-6)
        np.testing.assert_allclose(d.p_value(high, "below"), gamma, rtol=1e-6)
        for null in (0.0, 0.05, -0.05):
            assert np.array_equal(d.p_value(null, "above") < gamma, low > null + 1e-9) or \
                np.all(np.abs(low - null) < 1e-7)


def test_coverage_at_corners_by_exact_enumeration() -> None:
    """The bench's exact enumeration at four corners (the full grid: bench/paired_coverage.py)."""
    from bench.paired_coverage import coverage, intervals, outcomes
    for n, discordance, split in ((20, 0.05, 1.0), (50, 0.15, 0.85), (50, 0.01, 1.0), (20, 0.30, 0.5)):
        cells = outcomes(n)
        probs = np.array([(1 - discordance) / 2, discordance * split, discordance * (1 - split), (1 - discordance) / 2])
        cov, below, above, _ = coverage(n, cells, intervals(n, cells), probs)["tango"]
        assert cov >= 0.94 and max(below, above) <= 0.045, (n, discordance, split, cov)


def test_coverage_enumeration_against_a_direct_sum() -> None:
    """The bench's weighted sum equals a plain sum over the multinomial's outcomes with SciPy's pmf."""
    from bench.paired_coverage import coverage, intervals, outcomes
    n, probs = 12, np.array([0.3, 0.2, 0.05, 0.45])
    cells = outcomes(n)
    low, high = paired.tango_interval(cells[:, 1], cells[:, 2], n)
    direct = sum(stats.multinomial.pmf(row, n, probs) for row, lo, hi in zip(cells, low, high) if lo <= 0.15 <= hi)
    assert coverage(n, cells, intervals(n, cells), probs)["tango"][0] == pytest.approx(direct, abs=1e-12)


@pytest.mark.parametrize("cells", [(12, 9, 2, 21), (40, 0, 3, 57), (0, 0, 0, 30), (5, 4, 4, 7)])
def test_newcombe_method_10_from_statsmodels_wilson_limits(cells: tuple[int, int, int, int]) -> None:
    """Method 10 assembled by hand from statsmodels' Wilson limits and the phi coefficient (Newcombe 1998)."""
    a, b, c, d = cells
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = proportion_confint(a + b, n, alpha=0.05, method="wilson")
    l2, u2 = proportion_confint(a + c, n, alpha=0.05, method="wilson")
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    phi = (a * d - b * c) / np.sqrt(margins) if margins else 0.0
    low = p1 - p2 - np.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0))
    high = p1 - p2 + np.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0))
    ours = paired.newcombe_interval(a, b, c, d)
    assert float(ours[0]) == pytest.approx(max(low, -1), abs=1e-9) and float(ours[1]) == pytest.approx(min(high, 1), abs=1e-9)


def test_cochrans_q_statistic_and_chi_square_p_equal_statsmodels() -> None:
    rng = np.random.default_rng(7)
    for k, cases in ((3, 60), (5, 120), (8, 400)):
        x = (rng.random((cases, k)) < rng.uniform(0.2, 0.7, k)).astype(int)
        ours, theirs = paired.cochrans_q(x, exact=False), sm_cochrans_q(x)
        assert ours.statistic == pytest.approx(theirs.statistic, rel=1e-12)
        assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-12) and ours.df == k - 1


def test_exact_cochrans_q_with_two_groups_is_the_exact_mcnemar_test() -> None:
    for b, c in ((3, 1), (7, 0), (5, 5), (12, 4)):
        x = np.array([[1, 0]] * b + [[0, 1]] * c + [[1, 1]] * 3 + [[0, 0]] * 2)
        r = paired.cochrans_q(x)
        assert r.method.startswith("exact")
        assert r.p_value == pytest.approx(float(paired.mcnemar_exact(b, c)), abs=1e-12)


def test_exact_cochrans_q_equals_brute_force_over_every_arrangement() -> None:
    x = np.array([[1, 0, 0], [1, 1, 0], [1, 0, 1], [0, 1, 0], [1, 0, 0], [1, 1, 1], [1, 1, 0]])
    rows = x.sum(axis=1)
    options = [[np.array(s) for s in set(itertools.permutations(row))] for row in x]
    observed = paired.cochrans_q(x).statistic
    qs = [paired._q_statistic(np.sum(choice, axis=0).astype(float), rows.astype(float), 3)
          for choice in itertools.product(*options)]
    brute = np.mean(np.array(qs) >= observed - 1e-9)
    assert paired.cochrans_q(x).p_value == pytest.approx(brute, abs=1e-12)


def test_cochrans_q_without_split_cases_is_undefined_with_p_1() -> None:
    r = paired.cochrans_q([[1, 1, 1], [0, 0, 0]])
    assert np.isnan(r.statistic) and r.p_value == 1.0 and "no case" in r.method


def test_exact_multinomial_test_equals_brute_force() -> None:
    counts = np.array([6, 1, 2, 1])
    n, k = counts.sum(), counts.size
    observed = stats.multinomial.pmf(counts, n, [1 / k] * k)
    total = sum(p for x in itertools.product(range(n + 1), repeat=k) if sum(x) == n
                for p in [stats.multinomial.pmf(x, n, [1 / k] * k)] if p <= observed * (1 + 1e-9))
    r = paired.multinomial_equal_test(counts)
    assert r.method.startswith("exact") and r.p_value == pytest.approx(total, abs=1e-12)


def test_binomial_two_sided_is_twice_the_smaller_tail() -> None:
    for x, n, p in ((0, 10, 0.125), (9, 40, 0.125), (3, 5, 0.5)):
        pmf = stats.binom.pmf(np.arange(n + 1), n, p)
        expected = min(1.0, 2 * min(pmf[: x + 1].sum(), pmf[x:].sum()))
        assert float(paired.binomial_two_sided(x, n, p)) == pytest.approx(expected, abs=1e-12)


def test_wilcoxon_equals_scipy_per_pair_with_incomplete_cases() -> None:
    rng = np.random.default_rng(11)
    d = rng.normal(0.2, 1, (3, 60))
    d[1, :5] = np.nan
    d[2] = np.round(d[2], 1)          # ties and zeros: the normal method
    stat, p = paired.wilcoxon_pairs(d)
    for row in range(3):
        r = stats.wilcoxon(d[row][~np.isnan(d[row])])
        assert stat[row] == pytest.approx(r.statistic) and p[row] == pytest.approx(r.pvalue, rel=1e-12)
    assert paired.wilcoxon_pairs(np.zeros((1, 5)))[1][0] == 1.0


def test_mean_differences_equal_scipy_paired_t() -> None:
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=30), rng.normal(0.3, 1, 30)
    d = x - y
    m = paired.MeanDifferences(d.sum(), (d ** 2).sum(), 30)
    r = stats.ttest_rel(x, y)
    assert float(m.p_value(0.0)[0]) == pytest.approx(r.pvalue, rel=1e-10)
    low, high = m.bounds(0.025)
    ci = r.confidence_interval(0.95)
    assert float(low[0]) == pytest.approx(ci.low) and float(high[0]) == pytest.approx(ci.high)


def test_judge_reads_each_verdict_from_its_adjusted_interval() -> None:
    d = paired.PairedDifferences([60, 40, 3, 40, 0], [5, 8, 2, 30, 0], [400, 400, 2000, 400, 3])
    j = paired.judge(d, 0.05, 0.05, "holm")
    assert list(j.verdict) == ["material difference", "materiality unclear", "no material difference detected",
                               "inconclusive", "inconclusive"]
    assert np.array_equal(j.p_adjusted < 0.05, (j.low > 0) | (j.high < 0))
    assert j.level > 0.95       # adjusted across the pairs: wider than 95 %


def test_pair_counts_equal_a_crosstab_per_pair() -> None:
    rng = np.random.default_rng(2)
    y = (rng.random((50, 4)) < 0.5).astype(float)
    seen = (rng.random((50, 4)) < 0.9).astype(float)
    n, both, only_i, only_j, i, j = paired.pair_counts(y * seen, seen)
    for k in range(i.size):
        ok = (seen[:, i[k]] > 0) & (seen[:, j[k]] > 0)
        a, b = y[ok, i[k]], y[ok, j[k]]
        assert (n[k], both[k], only_i[k], only_j[k]) == (ok.sum(), (a * b).sum(), (a * (1 - b)).sum(),
                                                         ((1 - a) * b).sum())


def test_judge_reads_every_family_at_the_smallest_critical_level() -> None:
    """Another family read on the same page (the flips against the null swaps) lowers the one level when its own
    Holm critical level is smaller: the intervals are then read there, and the adjusted p still agrees with them."""
    from fairness_core.statistics.verdicts import critical_level

    d = paired.PairedDifferences([60, 40, 3, 40, 0], [5, 8, 2, 30, 0], [400, 400, 2000, 400, 3])
    alone = paired.judge(d, 0.05, 0.05, "holm")
    flips = np.array([0.2, 0.3, 0.4, 0.6, 0.9])            # nothing rejected: Holm's level is Bonferroni's, 0.01
    both = paired.judge(d, 0.05, 0.05, "holm", also=(flips,))
    assert critical_level(flips, 0.05, "holm") == pytest.approx(0.01)
    assert 1 - both.level == pytest.approx(min(1 - alone.level, 0.01)) and both.level >= alone.level
    low, high = d.bounds((1 - both.level) / 2)
    np.testing.assert_allclose(both.low, low, equal_nan=True)
    np.testing.assert_allclose(both.high, high, equal_nan=True)
    assert np.array_equal(both.p_adjusted < 0.05, (both.low > 0) | (both.high < 0))
    assert paired.judge(d, 0.05, 0.05, "holm", also=(np.array([0.001, 0.002, np.nan]),)).level == alone.level
