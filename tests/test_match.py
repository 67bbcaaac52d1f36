"""MATCH test (SCIENCE.md §3): exact against brute-force multinomial enumeration, approximations against exact."""

import math

import numpy as np
import pytest
from scipy import stats

from fairness_core import ConfusionMatrix, match, metrics
from fairness_core.sample_size import enumerate_matrices

CM = ConfusionMatrix
REF = CM(30, 10, 20, 40)


def brute_force(metric, group, reference):
    """P(S <= s), P(S >= s) by summing multinomial probabilities over every CM of the group's n."""
    cells = enumerate_matrices(group.n)
    probs = reference.as_array() / reference.n
    pmf = stats.multinomial.pmf(np.column_stack(cells), group.n, probs)
    scores = metrics.compute(metric, *cells)
    s = metrics.compute(metric, group)
    ok = ~np.isnan(scores)
    tol = 1e-12
    total = pmf[ok].sum()
    return pmf[ok & (scores <= s + tol)].sum() / total, pmf[ok & (scores >= s - tol)].sum() / total


@pytest.mark.parametrize("metric", match.SUPPORTED)
@pytest.mark.parametrize("group", [CM(1, 2, 0, 3), CM(3, 0, 2, 2), CM(0, 4, 1, 0), CM(2, 2, 2, 3)])
def test_exact_equals_brute_force_enumeration(metric, group):
    r = match.test(metric, group, REF, method="exact")
    if math.isnan(r.observed):
        assert math.isnan(r.cdf) and "undefined" in r.note
        return
    cdf, sf = brute_force(metric, group, REF)
    assert r.cdf == pytest.approx(cdf, abs=1e-12)
    assert r.sf == pytest.approx(sf, abs=1e-12)
    assert r.p_value == pytest.approx(min(1, 2 * min(cdf, sf)), abs=1e-12)


def test_seed_worked_example_normal_approximation():
    # n = 100, p = 0.75, s_obs = 0.80 -> z = (80 + 0.5 - 75)/4.33 = 1.27, P = 0.90 (000 §4.5.1)
    group = CM(40, 10, 40, 10)  # PPR = 80/100
    reference = CM(300, 100, 450, 150)  # p(TP) + p(FP) = 0.75
    r = match.test("PPR", group, reference, method="normal")
    assert r.observed == 0.8
    assert stats.norm.ppf(r.cdf) == pytest.approx(5.5 / math.sqrt(100 * 0.75 * 0.25))
    assert round(r.cdf, 2) == 0.90


def test_peizer_pratt_is_within_a_tenth_of_a_percent_of_exact():
    worst = 0.0
    for n in (10, 30, 100, 400):
        for p in (0.1, 0.3, 0.5, 0.8):
            x = np.arange(1, n - 1)  # min(x + 1, n - x) >= 2
            exact = stats.binom.cdf(x, n, p)
            approx = stats.norm.cdf(match.peizer_pratt_z(x, n, p))
            worst = max(worst, float(np.max(np.abs(approx - exact))))
    assert worst < 1e-3


def test_normal_marginal_benefit_uses_n_in_the_variance():
    group = CM(200, 100, 150, 550)  # n = 1000
    r = match.test("B", group, REF, method="normal")
    p_plus, p_minus = 0.2, 0.1
    mean, var = 1000 * (p_plus - p_minus), 1000 * ((p_plus + p_minus) - (p_plus - p_minus) ** 2)
    assert r.cdf == pytest.approx(stats.norm.cdf((50 + 0.5 - mean) / math.sqrt(var)))
    exact = match.test("B", group, REF, method="exact")
    assert abs(r.cdf - exact.cdf) < 0.01  # a correct normal approximation is close at n = 1000


def test_beta_shortcut_is_labelled_and_differs_from_exact():
    group = CM(2, 3, 1, 4)
    beta = match.test("TPR", group, REF, method="beta")
    exact = match.test("TPR", group, REF, method="exact")
    assert "seed's beta shortcut" in beta.note
    assert beta.cdf == pytest.approx(stats.beta.cdf(0.4, 3, 4))
    assert abs(beta.cdf - exact.cdf) > 0.05  # not the reference's sampling distribution


def test_exact_runs_at_a_million():
    group = CM(300_000, 100_000, 200_000, 400_000)
    for metric in ("PPR", "B", "TPR"):
        r = match.test(metric, group, REF, method="exact")
        assert 0 <= r.p_value <= 1
    # the group matches the reference exactly: scores sit at the centre
    assert match.test("PPR", group, REF).p_value > 0.5


def test_unsupported_combinations_say_what_to_use():
    with pytest.raises(ValueError, match="use exact or normal"):
        match.test("B", CM(1, 1, 1, 1), REF, method="peizer_pratt")
    with pytest.raises(ValueError, match="use exact or beta"):
        match.test("TPR", CM(1, 1, 1, 1), REF, method="normal")
    with pytest.raises(ValueError, match="MATCH is defined for"):
        match.test("MCC", CM(1, 1, 1, 1), REF)


def test_reference_without_the_denominator_cells_is_undefined():
    r = match.test("TPR", CM(1, 1, 1, 1), CM(0, 0, 5, 5))
    assert math.isnan(r.p_value) and "reference never" in r.note
