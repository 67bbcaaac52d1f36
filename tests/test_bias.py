"""Comparisons of docs/methods.md: the worked examples of Briscoe 2024, Tables 3.1 and 3.3, and properties."""

import math

import numpy as np
import pytest

from fairness_core import ConfusionMatrix, bias, metrics
from fairness_core.sample_size import enumerate_matrices

CM = ConfusionMatrix


def test_ofi_matches_table_3_1_scenario_a():
    i, j = CM(1, 0, 0, 5), CM(7, 0, 1, 10)
    assert round(bias.compare("OFI", i, j), 3) == -0.056
    assert round(bias.compare("DI", i, j), 3) == 0.375
    assert bias.four_fifths(i, j) == "bias for j"


def test_ofi_matches_table_3_1_scenario_b_with_undefined_di():
    i, j = CM(0, 1, 0, 5), CM(0, 7, 0, 11)
    assert round(bias.compare("OFI", i, j), 3) == 0.222
    assert math.isnan(bias.compare("DI", i, j))  # 0/0, not the thesis's conventional 1
    assert "0/0" in bias.undefined_reason("DI", i, j)
    assert bias.four_fifths(i, j) == "undefined"


def test_ofi_matches_table_3_1_scenario_alpha():
    i, j = CM(1, 1, 0, 5), CM(1, 7, 0, 11)
    assert round(bias.compare("OFI", i, j), 3) == 0.226
    assert round(bias.compare("DI", i, j), 3) == 2.714
    assert bias.four_fifths(i, j) == "bias for i"


def test_table_3_3_scenarios_c_and_d():
    i = CM(1, 2, 1, 1)
    c, d = CM(1, 1, 2, 2), CM(1, 1, 2, 4)
    for j in (c, d):  # TE and DCA ignore the three extra true negatives
        assert bias.compare("TE", i, j) == pytest.approx(1.5)
        assert round(bias.compare("DCA", i, j), 3) == 0.833
    assert round(bias.compare("OFI", i, c), 3) == -0.367
    assert round(bias.compare("OFI", i, d), 3) == -0.325


def test_each_comparison_against_its_formula():
    i, j = CM(5, 2, 3, 7), CM(4, 4, 1, 9)
    f = lambda k, cm: metrics.compute(k, cm)  # noqa: E731
    expected = {
        "ACCD": f("ACC", i) - f("ACC", j), "MCCD": f("MCC", i) - f("MCC", j),
        "DI": (8 / 17) / (5 / 18), "PP": 5 / 8 - 4 / 5, "TE": 2 / 3 - 4 / 1,
        "EO_TPR": 5 / 7 - 4 / 8, "EO_FPR": 3 / 10 - 1 / 10, "SP": 8 / 17 - 5 / 18,
        "AAOD": 0.5 * (abs(3 / 10 - 1 / 10) + abs(5 / 7 - 4 / 8)),
        "DCA": 7 / 8 - 8 / 5, "DCR": 10 / 13 - 10 / 9, "DPPL": 8 / 17 - 5 / 18,
        "OFI": (3 - 2) / 17 - (1 - 4) / 18,
    }
    assert set(expected) == set(bias.NAMES)
    for name, value in expected.items():
        assert bias.compare(name, i, j) == pytest.approx(value, abs=1e-12), name


def test_ofi_is_antisymmetric_bounded_and_defined_everywhere():
    cells = enumerate_matrices(6)
    arr = np.array(cells).T
    arr = arr[arr.sum(axis=1) > 0]
    ci = tuple(arr[:, k][:, None] for k in range(4))
    cj = tuple(arr[:, k][None, :] for k in range(4))
    ofi = bias.objective_fairness_index(tuple(x.astype(float) for x in ci), tuple(x.astype(float) for x in cj))
    assert np.isfinite(ofi).all()
    assert np.abs(ofi).max() <= 2
    np.testing.assert_allclose(ofi, -ofi.T)


def test_pairwise_matches_compare_cell_by_cell():
    cms = {"a": CM(1, 0, 0, 5), "b": CM(7, 0, 1, 10), "c": CM(0, 1, 0, 5)}
    for name in bias.NAMES:
        df = bias.pairwise(name, cms)
        assert df.index.tolist() == ["a", "b", "c"] and df.columns.tolist() == ["a", "b", "c"]
        for gi in cms:
            for gj in cms:
                expected = bias.compare(name, cms[gi], cms[gj])
                got = df.loc[gi, gj]
                assert (math.isnan(expected) and math.isnan(got)) or got == pytest.approx(expected), (name, gi, gj)


def test_compare_arrays_is_vectorized_compare():
    cells = list(enumerate_matrices(5))  # n = 5: no empty CM, so OFI is defined everywhere
    rev = [a[::-1] for a in cells]
    for name in bias.NAMES:
        vec = bias.compare_arrays(name, cells, rev)
        for k in (0, 7, 20):
            expected = bias.compare(name, CM(*[int(a[k]) for a in cells]), CM(*[int(a[k]) for a in rev]))
            assert (math.isnan(expected) and math.isnan(vec[k])) or vec[k] == pytest.approx(expected)


def test_four_fifths_band_edges():
    assert bias.four_fifths_verdict(0.8) == "no bias"
    assert bias.four_fifths_verdict(0.7999) == "bias for j"
    assert bias.four_fifths_verdict(1.25) == "no bias"
    assert bias.four_fifths_verdict(1.2501) == "bias for i"
    assert bias.four_fifths_verdict(float("nan")) == "undefined"


def test_properties_table_only_ofi_has_all_six():
    props = bias.properties_table()
    all_six = props[list(bias.PROPERTY_NAMES)].all(axis=1)
    assert all_six[all_six].index.tolist() == ["OFI"]
    assert props.loc["OFI", "OBJ"] and props["OBJ"].sum() == 1
    assert not props.loc["DI", "SYM"] and not props.loc["DI", "BND"]


def test_undefined_reasons_name_the_group():
    i, j = CM(1, 2, 0, 3), CM(1, 1, 2, 2)
    assert "FP_i = 0" in bias.undefined_reason("TE", i, j)
    assert bias.undefined_reason("OFI", i, j) is None
    assert "PPV_j" in bias.undefined_reason("PP", CM(1, 0, 1, 1), CM(0, 1, 0, 1))
