"""M(n) and its holes: enumeration vs brute force vs Briscoe 2024, Theorem 4.3."""

import itertools
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fairness_core import ConfusionMatrix, metrics, sample_size


def brute_force_matrices(n):
    return [(a, b, c, n - a - b - c) for a in range(n + 1) for b in range(n + 1 - a) for c in range(n + 1 - a - b)]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 12])
def test_enumeration_is_exactly_the_brute_force_set(n):
    cells = sample_size.enumerate_matrices(n)
    got = sorted(zip(*(a.tolist() for a in cells)))
    assert got == sorted(brute_force_matrices(n))
    assert len(got) == sample_size.count_matrices(n) == math.comb(n + 3, 3)


def test_brute_force_hole_counts_for_small_n():
    for n in range(0, 9):
        mats = brute_force_matrices(n)
        for name in metrics.NAMES:
            expected = sum(math.isnan(metrics.compute(name, ConfusionMatrix(*c))) for c in mats)
            assert sample_size.holes(name, n) == expected, (name, n)


@pytest.mark.parametrize("n", list(range(3, 41)) + [97, 150])
def test_hole_counts_match_theorem_4_3(n):
    for name in metrics.NAMES:
        if name == "PT":
            continue
        assert sample_size.holes(name, n) == sample_size.holes_theorem(name, n), (name, n)


def test_counts_named_in_science_md():
    n = 20
    assert sample_size.holes("ACC", n) == 0 and sample_size.holes("B", n) == 0
    assert sample_size.holes("F1", n) == 1
    assert sample_size.holes("TPR", n) == n + 1
    assert sample_size.holes("MCC", n) == 4 * n
    assert sample_size.holes("F1_ORIG", n) == math.comb(n + 2, 2)


@pytest.mark.parametrize("n", list(range(3, 60)) + [100, 128, 201])
def test_pt_holes_lower_bound_and_exact_decomposition(n):
    count = sample_size.holes("PT", n)
    lower, _upper = sample_size.holes_theorem("PT", n)
    assert count >= lower == 2 * n + 2
    assert count == sample_size.pt_holes_exact(n)


def test_seed_pt_upper_bound_fails_from_n_4():
    # The seed's Robin-inequality bound is documented as false; pin the counter-example.
    assert sample_size.holes("PT", 4) == 17
    assert sample_size.holes_theorem("PT", 4)[1] < 17
    assert sample_size.holes("PT", 100) == 721 > sample_size.holes_theorem("PT", 100)[1]


def test_pt_exact_positive_solutions_by_pure_python():
    for n in (8, 13, 24):
        positive = sum(1 for a, b, c in itertools.product(range(1, n), repeat=3)
                       if (d := n - a - b - c) >= 1 and a * d == b * c)
        assert sample_size.pt_holes_exact(n) == 4 * n + positive


@pytest.mark.parametrize("n,x", [(10, 0), (10, 3), (10, 10), (25, 7)])
def test_a_cell_equals_x_in_c_n_minus_x_plus_2_choose_2_matrices(n, x):
    tp, fn, fp, tn = sample_size.enumerate_matrices(n)
    for cell in (tp, fn, fp, tn):
        assert np.count_nonzero(cell == x) == sample_size.cells_equal_to(x, n)


def test_invalid_n_is_rejected():
    with pytest.raises(ValueError):
        sample_size.count_matrices(-1)
    with pytest.raises(ValueError):
        sample_size.holes("MCC", 2.5)
    with pytest.raises(ValueError, match="limit"):
        sample_size.enumerate_matrices(10**6)


# --- distributions over M(n) -----------------------------------------------------------------


def fraction_score(metric, tp, fn, fp, tn):
    num, den = {"ACC": (tp + tn, tp + fn + fp + tn), "TPR": (tp, tp + fn), "PPV": (tp, tp + fp),
                "F1": (2 * tp, 2 * tp + fp + fn), "B": (fp - fn, tp + fn + fp + tn)}[metric]
    return None if den == 0 else Fraction(num, den)


@pytest.mark.parametrize("metric", ["ACC", "TPR", "PPV", "F1", "B"])
def test_uniform_distribution_equals_pure_python_enumeration(metric):
    n = 7
    counts = Counter(fraction_score(metric, *cm) for cm in brute_force_matrices(n))
    total = sum(counts.values())
    d = sample_size.metric_distribution(metric, n)
    finite = sorted((v, c) for v, c in counts.items() if v is not None)
    assert d.values.tolist() == [float(v) for v, _ in finite]
    np.testing.assert_allclose(d.probs, [c / total for _, c in finite], rtol=1e-12)
    assert d.p_undefined == pytest.approx(counts.get(None, 0) / total)
    assert d.cdf(d.values[-1]) == pytest.approx(1 - d.p_undefined)


def test_multinomial_weights_match_scipy_and_sum_to_one():
    probs = np.array([0.3, 0.1, 0.2, 0.4])
    cells = sample_size.enumerate_matrices(9)
    w = sample_size.multinomial_pmf(*cells, probs)
    np.testing.assert_allclose(w, stats.multinomial.pmf(np.column_stack(cells), 9, probs), rtol=1e-10)
    assert w.sum() == pytest.approx(1)
    # a zero probability cell: only CMs without that cell get mass
    w0 = sample_size.multinomial_pmf(*cells, [0.5, 0.0, 0.25, 0.25])
    assert w0.sum() == pytest.approx(1) and np.all(w0[cells[1] > 0] == 0)


def test_multinomial_distribution_of_a_binomial_metric_is_the_binomial():
    ref = ConfusionMatrix(30, 10, 20, 40)
    d = sample_size.metric_distribution("PPR", 25, ref)
    np.testing.assert_allclose(d.probs, stats.binom.pmf(np.arange(26), 25, 0.5), atol=1e-14)
    assert d.mean == pytest.approx(0.5)


def test_moments_of_the_accuracy_distribution_match_the_binomial_formulas():
    # Briscoe 2024, Table 2.6: skewness (q - p)/sqrt(npq), excess kurtosis (1 - 6pq)/(npq)
    ref = [0.3, 0.1, 0.2, 0.4]
    p, n = 0.7, 40
    table = sample_size.normality("ACC", [n], ref)
    assert table.loc[0, "skewness"] == pytest.approx((0.3 - p) / np.sqrt(n * p * 0.3))
    assert table.loc[0, "excess_kurtosis"] == pytest.approx((1 - 6 * p * 0.3) / (n * p * 0.3))


@pytest.mark.parametrize("metric", ["ACC", "B"])
def test_berry_esseen_bounds_the_exact_normal_error(metric):
    table = sample_size.normality(metric, [1, 2, 5, 10, 30, 100, 300], [0.3, 0.1, 0.2, 0.4])
    assert (table["max_error"] <= table["berry_esseen"]).all()
    assert table["max_error"].iloc[-1] < table["max_error"].iloc[0]
    assert (table["max_error_corrected"] < table["max_error"]).all()


def test_exact_pmf_of_b_equals_multinomial_enumeration():
    ref = np.array([0.3, 0.1, 0.2, 0.4])
    n = 8
    x, probs = sample_size.exact_pmf("B", n, ref)
    cells = sample_size.enumerate_matrices(n)
    w = stats.multinomial.pmf(np.column_stack(cells), n, ref)
    s = cells[2] - cells[1]
    expected = np.bincount(s + n, weights=w, minlength=2 * n + 1)
    np.testing.assert_allclose(probs, expected, atol=1e-14)
    np.testing.assert_allclose(x, np.arange(-n, n + 1) / n)


def test_monte_carlo_agrees_with_the_exact_distribution():
    pop = ConfusionMatrix(300, 200, 1065, 4391)
    ns = [5, 20, 60]
    mc = sample_size.monte_carlo("TPR", pop, ns, draws=4000, seed=1)
    exact = sample_size.exact_spread("TPR", pop, ns)
    for n in ns:
        sample = mc.loc[mc["n"] == n, "value"]
        row = exact.loc[exact["n"] == n].iloc[0]
        p_undef = row["p_undefined"]
        # undefined share within 5 binomial standard errors
        assert sample.isna().mean() == pytest.approx(p_undef, abs=5 * np.sqrt(p_undef * (1 - p_undef) / 4000) + 1e-3)
        d = sample_size.metric_distribution("TPR", n, pop)
        se = np.sqrt(d.variance / sample.notna().sum())
        assert sample.mean() == pytest.approx(row["mean"], abs=5 * se)
        assert row["q05"] <= row["q50"] <= row["q95"]


def test_hole_table_matches_enumeration_theorem_and_stars_and_bars():
    t = sample_size.hole_table(["TPR", "MCC", "F1", "PT"], [3, 5, 12])
    assert isinstance(t, pd.DataFrame) and len(t) == 12
    for row in t.itertuples():
        assert row.holes == sample_size.holes(row.metric, row.n)
        assert row.matrices == math.comb(row.n + 3, 3)
        if row.metric != "PT":
            assert row.holes == row.theorem
        else:
            assert row.holes >= row.theorem  # the lower bound 2n + 2 holds


def test_cdf_table_rises_to_one_minus_the_holes():
    t = sample_size.cdf_table(["TPR", "MCC"], [4, 9])
    for (metric, n), g in t.groupby(["metric", "n"]):
        assert np.all(np.diff(g["cdf"]) > 0)
        assert g["cdf"].iloc[-1] + g["p_undefined"].iloc[0] == pytest.approx(1)
        assert g["p_undefined"].iloc[0] == pytest.approx(sample_size.holes(metric, n) / math.comb(n + 3, 3))


def test_distribution_limits_and_reference_are_checked():
    with pytest.raises(ValueError, match="above the limit"):
        sample_size.metric_distribution("ACC", sample_size.MAX_DISTRIBUTION_N + 1)
    with pytest.raises(ValueError, match="reference must be"):
        sample_size.metric_distribution("ACC", 5, [1, -1, 0, 0])
