"""Properties of fairness measures PMFs (docs/methods.md): factored exact counts against brute-force enumeration of 8-tuples."""

from collections import Counter
from fractions import Fraction
from itertools import combinations
from math import comb

import numpy as np
import pytest

from fairness_core import imbalance, sample_size


def eight_tuples(n):
    """Every 8-tuple of non-negative integers with sum n, by stars and bars (pure Python)."""
    for bars in combinations(range(n + 7), 7):
        edges = (-1,) + bars + (n + 7,)
        yield tuple(edges[i + 1] - edges[i] - 1 for i in range(8))


def score(measure, tp, fn, fp, tn):
    num, den = {
        "accuracy_equality": (tp + tn, tp + fn + fp + tn),
        "statistical_parity": (tp + fp, tp + fn + fp + tn),
        "equal_opportunity": (tp, tp + fn),
        "predictive_equality": (fp, fp + tn),
        "positive_predictive_parity": (tp, tp + fp),
        "negative_predictive_parity": (tn, tn + fn),
    }[measure]
    return None if den == 0 else Fraction(num, den)


def brute_force(n):
    """{(positives, protected, measure): Counter of Fraction or None (undefined)}."""
    out = {}
    for t in eight_tuples(n):
        p, u = t[:4], t[4:]
        key = (p[0] + p[1] + u[0] + u[1], sum(p))
        for measure in imbalance.MEASURES:
            sp, su = score(measure, *p), score(measure, *u)
            value = None if sp is None or su is None else sp - su
            out.setdefault(key + (measure,), Counter())[value] += 1
    return out


@pytest.fixture(scope="module")
def brute7():
    return brute_force(7)


def test_pure_python_enumeration_has_c_n_plus_7_choose_7_tuples():
    assert sum(1 for _ in eight_tuples(5)) == comb(12, 7) == imbalance.tuple_count(5)


@pytest.mark.parametrize("measure", imbalance.MEASURES)
def test_every_ir_gr_equals_brute_force(measure, brute7):
    n = 7
    for pos in range(n + 1):
        for prot in range(n + 1):
            pmf = sample_size.fairness_pmf(measure, n, pos / n, prot / n)
            expected = brute7[(pos, prot, measure)]
            assert pmf.total == sum(expected.values())
            assert pmf.undefined == expected.get(None, 0)
            finite = sorted((v, c) for v, c in expected.items() if v is not None)
            assert [float(v) for v, _ in finite] == pmf.values.tolist()
            assert [c for _, c in finite] == pmf.counts.tolist()
            assert pmf.p_perfect == pytest.approx(expected.get(Fraction(0), 0) / pmf.total, abs=0)


def test_probabilities_and_undefined_sum_to_one():
    pmf = sample_size.fairness_pmf("positive_predictive_parity", 20, 0.25, 0.4)
    assert pmf.probs.sum() + pmf.p_undefined == pytest.approx(1, abs=1e-12)
    assert pmf.counts.sum() + pmf.undefined == pmf.total
    assert np.all(np.diff(pmf.values) > 0)


def test_all_pmfs_cover_every_tuple_and_agree_with_single_calls():
    n = 12
    pmfs = list(imbalance.all_pmfs("equal_opportunity", n))
    assert len(pmfs) == (n + 1) ** 2
    assert sum(p.total for p in pmfs) == comb(n + 7, 7)
    one = sample_size.fairness_pmf("equal_opportunity", n, 4 / 12, 3 / 12)
    match = [p for p in pmfs if p.positives == 4 and p.protected == 3][0]
    assert np.array_equal(one.values, match.values) and np.array_equal(one.counts, match.counts)


def test_perfect_fairness_is_exact_where_float_subtraction_is_not():
    # 1/3 - 1/6 and 1/2 - 1/3 are both 1/6 but differ as float subtractions; 0.1 + 0.2 style traps
    assert 1 / 3 - 1 / 6 != 1 / 2 - 1 / 3
    pmf = sample_size.fairness_pmf("positive_predictive_parity", 12, 0.5, 0.5)
    assert np.unique(pmf.values).size == pmf.values.size  # no near-duplicate values
    gaps = np.diff(pmf.values)
    assert gaps.min() > 1e-6  # distinct fractions with denominators <= 12^2 are far apart


@pytest.mark.parametrize("n, ir, gr", [(8, 0.5, 0.25), (12, 0.25, 0.5), (20, 0.1, 0.3)])
def test_seed_001_symmetries(n, ir, gr):
    """Properties of fairness measures, §5: SP has the PMF of AE; PE mirrors EO and NPP mirrors PPP under IR -> 1 - IR."""
    def same(a, b):
        return np.array_equal(a.values, b.values) and np.array_equal(a.counts, b.counts) and a.undefined == b.undefined

    f = sample_size.fairness_pmf
    assert same(f("accuracy_equality", n, ir, gr), f("statistical_parity", n, ir, gr))
    assert same(f("equal_opportunity", n, ir, gr), f("predictive_equality", n, 1 - ir, gr))
    assert same(f("positive_predictive_parity", n, ir, gr), f("negative_predictive_parity", n, 1 - ir, gr))


def test_accuracy_equality_is_undefined_only_with_an_empty_group():
    assert sample_size.fairness_pmf("accuracy_equality", 10, 0.3, 0.4).p_undefined == 0
    assert sample_size.fairness_pmf("accuracy_equality", 10, 0.3, 0.0).p_undefined == 1


@pytest.mark.parametrize("kwargs, message", [
    (dict(measure="equal_opportunity", n=10, ir=0.25, gr=0.5), "IR·n = 2.5 is not an integer"),
    (dict(measure="equal_opportunity", n=10, ir=0.5, gr=0.33), "GR·n"),
    (dict(measure="equal_opportunity", n=10, ir=1.5, gr=0.5), "IR must lie in"),
    (dict(measure="disparate_impact", n=10, ir=0.5, gr=0.5), "unknown measure"),
    (dict(measure="equal_opportunity", n=0, ir=0.5, gr=0.5), "n must be"),
])
def test_invalid_inputs_are_rejected_with_the_reason(kwargs, message):
    with pytest.raises(ValueError, match=message):
        sample_size.fairness_pmf(**kwargs)


def test_histogram_keeps_all_defined_mass():
    pmf = sample_size.fairness_pmf("equal_opportunity", 16, 0.25, 0.5)
    edges, mass = pmf.histogram(21)
    assert mass.size == 21 and edges[10] < 0 < edges[11]
    np.testing.assert_allclose((edges[:-1] + edges[1:]) / 2, np.linspace(-1, 1, 21), atol=1e-12)
    assert mass.sum() == pytest.approx(1 - pmf.p_undefined)
    assert mass[10] >= pmf.p_perfect  # the centre bin holds every exact 0
    with pytest.raises(ValueError, match="odd"):
        pmf.histogram(20)


def test_summary_across_ir_agrees_with_single_pmfs():
    table = imbalance.summary_across_ir(12, 0.25, ("equal_opportunity", "accuracy_equality"))
    assert len(table) == 2 * 13
    row = table[(table.measure == "equal_opportunity") & (table.positives == 3)].iloc[0]
    pmf = sample_size.fairness_pmf("equal_opportunity", 12, 0.25, 0.25)
    assert row.p_perfect == pmf.p_perfect and row.p_undefined == pmf.p_undefined
    assert row["distinct values"] == pmf.values.size
    w = pmf.probs / pmf.probs.sum()
    assert row["mean"] == pytest.approx(w @ pmf.values)
    assert row["std"] == pytest.approx(np.sqrt(w @ (pmf.values - w @ pmf.values) ** 2))
    # IR = 0: no positives anywhere, so equal opportunity is always undefined
    assert table[(table.measure == "equal_opportunity") & (table.positives == 0)].p_undefined.iloc[0] == 1
