"""Single-group metrics: docs/methods.md formulas, undefined cases, vectorized == scalar."""

import math

import numpy as np
import pytest

from fairness_core import ConfusionMatrix, metrics
from fairness_core.sample_size import enumerate_matrices

CM = ConfusionMatrix


def test_names_match_the_public_api():
    assert metrics.NAMES == ("ACC", "PREV", "PPR", "INACC", "NPREV", "PNR", "TPR", "FNR", "FPR", "TNR",
                             "PPV", "FDR", "NPV", "FOR", "F1", "F1_ORIG", "MCC", "PT", "B")


def test_every_metric_on_a_hand_worked_matrix():
    # TP=3, FN=1, FP=2, TN=4, n=10, worked out by hand from docs/methods.md
    cm = CM(3, 1, 2, 4)
    expected = {
        "ACC": 7 / 10, "PREV": 4 / 10, "PPR": 5 / 10, "INACC": 3 / 10, "NPREV": 6 / 10, "PNR": 5 / 10,
        "TPR": 3 / 4, "FNR": 1 / 4, "FPR": 2 / 6, "TNR": 4 / 6, "PPV": 3 / 5, "FDR": 2 / 5,
        "NPV": 4 / 5, "FOR": 1 / 5, "F1": 6 / 9, "F1_ORIG": 2 / (5 / 3 + 4 / 3),
        "MCC": (12 - 2) / math.sqrt(5 * 4 * 6 * 5),
        "PT": (math.sqrt(0.75 / 3) - 1 / 3) / (0.75 - 1 / 3), "B": (2 - 1) / 10,
    }
    for name, value in expected.items():
        assert metrics.compute(name, cm) == pytest.approx(value, abs=1e-12), name


def test_seed_typos_are_not_copied():
    cm = CM(5, 1, 2, 3)  # TP differs from the cells the typos use
    assert metrics.compute("PREV", cm) == pytest.approx(6 / 11)  # not (TP+TP)/n
    assert metrics.compute("INACC", cm) == pytest.approx(3 / 11)  # not (FP+TP)/n
    assert metrics.compute("PNR", cm) == pytest.approx(4 / 11)  # not (TN+TP)/n
    assert metrics.compute("TPR", cm) == pytest.approx(5 / 6)  # not TP/(TP+FP)
    assert metrics.compute("NPV", cm) == pytest.approx(3 / 4)  # not TN/(TN+FP)


@pytest.mark.parametrize("name,cm,reason_part", [
    ("TPR", CM(0, 0, 3, 4), "TP + FN = 0"),
    ("FNR", CM(0, 0, 3, 4), "TP + FN = 0"),
    ("FPR", CM(2, 1, 0, 0), "FP + TN = 0"),
    ("TNR", CM(2, 1, 0, 0), "FP + TN = 0"),
    ("PPV", CM(0, 3, 0, 4), "TP + FP = 0"),
    ("FDR", CM(0, 3, 0, 4), "TP + FP = 0"),
    ("NPV", CM(3, 0, 4, 0), "TN + FN = 0"),
    ("FOR", CM(3, 0, 4, 0), "TN + FN = 0"),
    ("F1", CM(0, 0, 0, 9), "TP = FP = FN = 0"),
    ("F1_ORIG", CM(0, 2, 3, 4), "TP = 0"),
    ("MCC", CM(0, 2, 0, 4), "TP+FP"),
    ("PT", CM(2, 2, 3, 3), "TPR = FPR"),
    ("PT", CM(0, 0, 3, 3), "TPR is undefined"),
    ("ACC", CM(0, 0, 0, 0), "n = 0"),
    ("B", CM(0, 0, 0, 0), "n = 0"),
])
def test_undefined_is_nan_with_a_reason(name, cm, reason_part):
    assert math.isnan(metrics.compute(name, cm))
    assert reason_part in metrics.undefined_reason(name, cm)


def test_defined_values_have_no_reason():
    cm = CM(3, 1, 2, 4)
    assert all(metrics.undefined_reason(k, cm) is None for k in metrics.NAMES)


def test_vectorized_equals_scalar_on_every_matrix_of_n_9():
    cells = enumerate_matrices(9)
    for name in metrics.NAMES:
        vec = metrics.compute(name, *cells)
        scalar = np.array([metrics.compute(name, CM(*c)) for c in zip(*(a.tolist() for a in cells))])
        np.testing.assert_array_equal(np.isnan(vec), np.isnan(scalar), err_msg=name)
        np.testing.assert_allclose(vec[~np.isnan(vec)], scalar[~np.isnan(scalar)], rtol=0, atol=0, err_msg=name)
        # undefined_reason agrees with NaN exactly
        reasons = np.array([metrics.undefined_reason(name, CM(*c)) is not None
                            for c in zip(*(a.tolist() for a in cells))])
        np.testing.assert_array_equal(reasons, np.isnan(scalar), err_msg=name)


def test_mcc_equals_pearson_correlation_of_expanded_labels():
    rng = np.random.default_rng(1)
    for _ in range(50):
        tp, fn, fp, tn = rng.integers(1, 40, size=4)
        y = np.r_[np.ones(tp + fn), np.zeros(fp + tn)]
        yhat = np.r_[np.ones(tp), np.zeros(fn), np.ones(fp), np.zeros(tn)]
        r = np.corrcoef(y, yhat)[0, 1]
        assert metrics.compute("MCC", CM(tp, fn, fp, tn)) == pytest.approx(r, abs=1e-12)


def test_f1_orig_equals_f1_wherever_defined():
    cells = enumerate_matrices(15)
    f1 = metrics.compute("F1", *cells)
    orig = metrics.compute("F1_ORIG", *cells)
    ok = ~np.isnan(orig)
    np.testing.assert_allclose(orig[ok], f1[ok], rtol=1e-12)
    assert np.all(np.isnan(orig) == (cells[0] == 0))


def test_marginal_benefit_is_benefit_minus_expected_benefit():
    cells = enumerate_matrices(12)
    b = metrics.compute("B", *cells)
    np.testing.assert_allclose(b, metrics.compute("PPR", *cells) - metrics.compute("PREV", *cells), atol=1e-15)


def test_large_counts_do_not_overflow_mcc():
    cm = CM(10**9, 10**9, 10**9, 2 * 10**9)
    expected = (2e18 - 1e18) / math.sqrt(2e9 * 2e9 * 3e9 * 3e9)
    assert metrics.compute("MCC", cm) == pytest.approx(expected)


def test_confusion_matrix_validates_with_named_cells():
    with pytest.raises(ValueError, match="FN must be >= 0"):
        CM(1, -1, 0, 0)
    with pytest.raises(ValueError, match="TP must be a whole number"):
        CM(1.5, 0, 0, 0)
    with pytest.raises(ValueError, match="TN must be an integer"):
        CM(1, 0, 0, "3")
    assert CM(2.0, 0, 0, 1).n == 3


def test_from_predictions_counts_and_validates():
    cm = ConfusionMatrix.from_predictions([1, 1, 0, 0, 1], [1, 0, 1, 0, 1])
    assert cm.as_array().tolist() == [2, 1, 1, 1]
    with pytest.raises(ValueError, match=r"y_pred\[2\] = 2"):
        ConfusionMatrix.from_predictions([1, 0, 1], [1, 0, 2])
    with pytest.raises(ValueError, match="3 values but y_pred has 2"):
        ConfusionMatrix.from_predictions([1, 0, 1], [1, 0])


def test_compute_rejects_bad_arrays():
    with pytest.raises(ValueError, match="negative"):
        metrics.compute("ACC", [1], [-1], [0], [0])
    with pytest.raises(ValueError, match="shape"):
        metrics.compute("ACC", [1, 2], [1], [0], [0])
    with pytest.raises(ValueError, match="unknown metric"):
        metrics.compute("XYZ", CM(1, 0, 0, 0))
