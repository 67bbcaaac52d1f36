"""M(n) and its holes: enumeration vs brute force vs 000 Theorem 4.3."""

import itertools
import math

import numpy as np
import pytest

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
