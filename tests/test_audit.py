"""The Audit object and the demo data: verdict readings of 000 Table 3.1 on the real Ricci data."""

import math

import pytest

from fairness_core import ConfusionMatrix, bias, datasets, metrics
from fairness_core.audit import Audit

CM = ConfusionMatrix


def test_verdicts_read_ofi_beside_di():
    audit = Audit({"i": CM(1, 1, 0, 5), "j": CM(1, 7, 0, 11)})
    v = audit.verdicts(0.05).iloc[0]
    assert v["reading"] == "algorithmic bias" and v["OFI favours"] == "i"
    assert v["OFI"] == pytest.approx(bias.compare("OFI", CM(1, 1, 0, 5), CM(1, 7, 0, 11)))


def test_systemic_disparity_when_ofi_zero_and_di_outside_band():
    audit = Audit({"a": CM(10, 0, 0, 90), "b": CM(50, 0, 0, 50)})
    v = audit.verdicts().iloc[0]
    assert v["OFI"] == 0 and v["DI"] == pytest.approx(0.2)
    assert v["reading"] == "systemic disparity"


def test_no_bias_when_both_agree():
    audit = Audit({"a": CM(10, 1, 1, 10), "b": CM(11, 1, 1, 11)})
    assert audit.verdicts().iloc[0]["reading"] == "no bias detected"


def test_ricci_scenario_a_is_a_systemic_disparity():
    audit = datasets.load_demo("ricci_a")
    assert audit.cells()["n"].to_dict() == {"Black": 27, "Hispanic": 23, "White": 68}
    assert audit.cms["White"] == CM(41, 0, 0, 27)
    v = audit.verdicts().set_index(["group i", "group j"])
    assert v.loc[("Black", "White"), "OFI"] == 0
    assert v.loc[("Black", "White"), "DI"] == pytest.approx((9 / 27) / (41 / 68))
    assert v.loc[("Black", "White"), "reading"] == "systemic disparity"


def test_ricci_scenario_b_ofi_favours_black_and_di_is_undefined():
    audit = datasets.load_demo("ricci_b")
    v = audit.verdicts().set_index(["group i", "group j"])
    assert v.loc[("Black", "White"), "OFI"] == pytest.approx(-9 / 27 + 41 / 68)
    assert math.isnan(v.loc[("Black", "White"), "DI"])
    assert v.loc[("Black", "White"), "reading"] == "algorithmic bias"


def test_compas_demo_uses_propublica_filter_and_flips():
    audit = datasets.load_demo("compas_race")
    assert audit.total().n == 6172
    assert any("flipped" in n for n in audit.notes)
    aa, ca = audit.cms["African-American"], audit.cms["Caucasian"]
    # flipped: positive = did not reoffend, so TP = low score and no recidivism
    assert aa.positives == 3175 - 1661  # ProPublica: 1,661 of 3,175 reoffended within two years
    assert round(bias.compare("OFI", aa, ca), 3) == -0.113


@pytest.mark.parametrize("key", list(datasets.DEMOS))
def test_every_demo_loads_and_explains_itself(key):
    audit = datasets.load_demo(key)
    assert len(audit.groups) >= 2
    assert isinstance(datasets.DEMOS[key].explain(audit), str)


def test_group_table_and_reasons():
    audit = Audit({"a": CM(0, 0, 3, 4), "b": CM(2, 1, 1, 2)})
    table = audit.group_table()
    assert math.isnan(table.loc["a", "TPR"]) and table.loc["b", "TPR"] == pytest.approx(2 / 3)
    assert audit.undefined_reasons()["a"]["TPR"] == metrics.undefined_reason("TPR", CM(0, 0, 3, 4))
    assert "b" not in audit.undefined_reasons()


def test_rest_of_and_reference_view():
    audit = Audit({"a": CM(1, 2, 3, 4), "b": CM(5, 6, 7, 8), "c": CM(1, 1, 1, 1)})
    assert audit.rest_of("a") == CM(6, 7, 8, 9)
    ref = audit.versus_reference("b", ["OFI", "DI"])
    assert ref.index.tolist() == ["a", "c"]
    assert ref.loc["a", "OFI"] == pytest.approx(bias.compare("OFI", CM(1, 2, 3, 4), CM(5, 6, 7, 8)))


def test_audit_validation():
    with pytest.raises(ValueError, match="at least two"):
        Audit({"a": CM(1, 1, 1, 1)})
    with pytest.raises(ValueError, match="empty"):
        Audit({"a": CM(1, 1, 1, 1), "b": CM(0, 0, 0, 0)})
    with pytest.raises(ValueError, match="non-blank"):
        Audit({"a": CM(1, 1, 1, 1), " ": CM(1, 0, 0, 0)})


def test_verdicts_flag_an_ofi_that_small_sample_noise_explains():
    from fairness_core import match

    audit = datasets.load_demo("compas_race")
    v = audit.verdicts()
    row = v[(v["group i"] == "African-American") & (v["group j"] == "Native American")].iloc[0]
    assert row["reading"] == "algorithmic bias"
    expected = match.test("B", audit.cms["Native American"], audit.cms["African-American"]).p_value
    assert row["MATCH p (B)"] == expected and expected >= 0.05
    assert "within small-sample noise" in row["explanation"]
    big = v[(v["group i"] == "African-American") & (v["group j"] == "Caucasian")].iloc[0]
    assert big["MATCH p (B)"] < 1e-6 and "small-sample noise" not in big["explanation"]
