"""The Audit object and the demo data: verdict readings of Briscoe 2024, Table 3.1 on the real Ricci data."""

import math

import pytest

from fairness_core import ConfusionMatrix, bias, datasets, metrics
from fairness_core.audit import Audit
from verdict_helpers import pair

CM = ConfusionMatrix


def test_verdicts_read_ofi_beside_di():
    ci, cj = CM(50, 50, 0, 250), CM(50, 350, 0, 550)  # docs/methods.md's i=[1,1,0,5], j=[1,7,0,11], x50
    v = pair(Audit({"i": ci, "j": cj}).verdicts(0.05), "i", "j")
    assert v["verdict"] == "algorithmic bias" and v["favours"] == "i"
    assert v["ofi"] == pytest.approx(bias.compare("OFI", ci, cj))


def test_the_worked_example_itself_is_too_small_to_call():
    v = pair(Audit({"i": CM(1, 1, 0, 5), "j": CM(1, 7, 0, 11)}).verdicts(0.05), "i", "j")
    assert v["ofi"] == pytest.approx(0.226, abs=1e-3)
    assert v["verdict"] == "inconclusive" and v["ofi_ci_low"] < 0 < v["ofi_ci_high"]
    assert v["rows_needed_i"] > 0 and "more rows" in v["explanation"]


def test_systemic_disparity_when_ofi_zero_and_di_outside_band():
    audit = Audit({"a": CM(100, 0, 0, 900), "b": CM(500, 0, 0, 500)})
    v = audit.verdicts().iloc[0]
    assert v["ofi"] == 0 and v["di"] == pytest.approx(0.2)
    assert v["verdict"] == "systemic disparity"


def test_no_errors_in_100_rows_is_no_evidence_that_ofi_is_within_005():
    """0 errors in 100 rows allow error rates near 4 % in each group: OFI ≈ 0 within ±0.05 is not shown."""
    v = Audit({"a": CM(10, 0, 0, 90), "b": CM(50, 0, 0, 50)}).verdicts().iloc[0]
    assert v["ofi"] == 0 and v["ofi_ci_high"] > 0.05 and v["verdict"] == "inconclusive"


def test_no_bias_when_both_agree():
    audit = Audit({"a": CM(1000, 100, 100, 1000), "b": CM(1100, 100, 100, 1100)})
    assert audit.verdicts().iloc[0]["verdict"] == "no bias detected"


def test_ricci_scenario_a_has_ofi_zero_but_too_few_candidates_to_prove_it():
    audit = datasets.load_demo("ricci_a")
    assert audit.cells()["n"].to_dict() == {"Black": 27, "Hispanic": 23, "White": 68}
    assert audit.cms["White"] == CM(41, 0, 0, 27)
    row = pair(audit.verdicts(), "Black", "White")
    assert row["ofi"] == 0 and row["ofi_ci_low"] < 0 < row["ofi_ci_high"]
    assert row["di"] == pytest.approx((9 / 27) / (41 / 68)) and row["four_fifths"] == "bias for j"
    # with 27 and 68 candidates neither "OFI within ±0.05" nor the DI gap (after Holm) can be shown
    assert row["verdict"] == "inconclusive"
    wider = pair(audit.verdicts(0.25), "Black", "White")
    assert wider["ofi_equivalent"] and wider["verdict"] == "inconclusive"  # OFI ≈ 0 shown; the DI gap is not
    assert "four-fifths line" in wider["explanation"]


def test_ricci_scenario_b_ofi_favours_black_and_di_is_undefined():
    audit = datasets.load_demo("ricci_b")
    row = pair(audit.verdicts(), "Black", "White")
    assert row["ofi"] == pytest.approx(-9 / 27 + 41 / 68) and math.isnan(row["di"])
    # 27 and 68 candidates: under Holm over three pairs the interval still reaches 0
    assert row["verdict"] == "inconclusive" and row["ofi_ci_low"] < 0 < row["ofi_ci_high"]
    alone = pair(audit.verdicts(adjust="none"), "Black", "White")   # one pair on its own: real, size unclear
    assert alone["verdict"] == "materiality unclear" and 0 < alone["ofi_ci_low"] < 0.05
    assert alone["favours"] == "Black" and "may not matter" in alone["explanation"]


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


def test_an_ofi_within_small_sample_noise_is_inconclusive_not_bias():
    """COMPAS Native American (n = 11): a large OFI against African-American, but an interval across 0."""
    v = datasets.load_demo("compas_race").verdicts()
    row = pair(v, "African-American", "Native American")
    assert row["ofi"] > 0.2 and row["ofi_ci_low"] < 0 < row["ofi_ci_high"]
    assert row["verdict"] == "inconclusive" and "Cannot tell yet" in row["explanation"]
    big = v[(v["group_i"] == "African-American") & (v["group_j"] == "Caucasian")].iloc[0]
    assert big["verdict"] == "algorithmic bias" and big["ofi_p_adjusted"] < 1e-6
