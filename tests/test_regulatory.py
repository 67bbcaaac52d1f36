"""The Local Law 144 summary's rules, pinned on hand-made tables (fairness_core.regulatory)."""

import numpy as np
import pandas as pd
import pytest

from fairness_core import ConfusionMatrix as CM
from fairness_core import regulatory
from fairness_core.audit import Audit
from fairness_core.verdicts import VERDICTS
from fairness_core.statistics.rows import RowData


def by_category(summary: pd.DataFrame, block: str | None = None) -> pd.DataFrame:
    s = summary if block is None else summary[summary["categories of"] == block]
    return s.set_index("category")


def test_exactly_two_percent_is_kept_and_under_it_is_excluded_with_n_and_rate_shown():
    # 300 individuals: "edge" holds 6 = exactly 2 %, "tiny" 5 (1.67 %)
    audit = Audit({"big": CM(100, 20, 30, 39), "mid": CM(40, 20, 10, 30), "edge": CM(3, 1, 0, 2),
                   "tiny": CM(5, 0, 0, 0)}, positive_is="benefit")
    s = by_category(regulatory.ll144_summary(audit))
    assert s.loc["edge", "share of data"] == pytest.approx(0.02)
    assert s.loc["edge", "status"] == regulatory.IN_RATIOS and np.isfinite(s.loc["edge", "impact ratio"])
    assert s.loc["tiny", "status"] == "excluded: under 2 % of the data"
    assert (s.loc["tiny", "n"], s.loc["tiny", "selection rate"]) == (5, 1.0)       # shown, but no ratio
    assert np.isnan(s.loc["tiny", "impact ratio"]) and s.loc["tiny", "OFI verdict"] == ""
    # the excluded category has the highest rate (1.0) yet is not the ratios' denominator
    top = s.loc["big", "selection rate"]
    assert s.loc["big", "status"] == regulatory.MOST_SELECTED and s.loc["big", "impact ratio"] == 1.0
    assert s.loc["mid", "impact ratio"] == pytest.approx(0.5 / top)
    assert s.loc["edge", "impact ratio"] == pytest.approx(0.5 / top)
    assert regulatory.ll144_summary(audit, exclude_below=0)["status"].str.startswith("excluded").sum() == 0


def test_unknown_categories_are_pooled_counted_and_kept_out_of_the_ratios():
    audit = Audit({"F": CM(20, 10, 10, 60), "M": CM(30, 10, 10, 50), "Unknown": CM(10, 0, 0, 0),
                   " not reported ": CM(5, 0, 0, 5)}, positive_is="benefit")
    s = by_category(regulatory.ll144_summary(audit))
    assert list(s.index) == ["F", "M", "unknown"]
    assert s.loc["unknown", "n"] == 20 and s.loc["unknown", "selection rate"] == pytest.approx(15 / 20)
    assert s.loc["unknown", "status"] == regulatory.UNKNOWN_ROW and np.isnan(s.loc["unknown", "impact ratio"])
    assert s.loc["M", "impact ratio"] == 1.0 and s.loc["F", "impact ratio"] == pytest.approx(0.3 / 0.4)
    assert s["share of data"].sum() == pytest.approx(1.0)   # the unknowns count in the data's total
    assert any("20 individual(s) of unknown category" in note for note in regulatory.ll144_summary(audit).attrs["notes"])


def test_scoring_rate_counts_scores_strictly_above_the_whole_samples_median():
    groups = np.array(["a"] * 4 + ["b"] * 4 + ["c"])
    scores = np.array([1, 2, 2, 5, 2, 2, 3, 4, 9])   # median 2, tied across groups; "c" is under 2 %? no: 1 of 9
    rows = RowData(y=np.ones(9, bool), y_pred=np.ones(9, bool), groups=groups)
    s = regulatory.ll144_summary(rows, scores=scores)
    assert s.attrs["median"] == 2.0 and s.attrs["rate"] == "scoring rate" and "selection rate" not in s
    t = by_category(s)
    assert t.loc["a", "scoring rate"] == 0.25 and t.loc["b", "scoring rate"] == 0.5   # a 2 is not above 2
    assert t.loc["c", "scoring rate"] == 1.0 and t.loc["a", "impact ratio"] == 0.25
    with pytest.raises(ValueError, match="one number per row"):
        regulatory.ll144_summary(rows, scores=scores[:-1])
    with pytest.raises(ValueError, match="rows"):
        regulatory.ll144_summary(Audit({"a": CM(1, 1, 1, 1), "b": CM(1, 1, 1, 1)}), scores=[1, 2])


def test_the_score_is_named_in_the_rules_and_only_with_scores():
    groups = np.array(["a"] * 50 + ["b"] * 50)
    rows = RowData(y=np.ones(100, bool), y_pred=np.ones(100, bool), groups=groups)
    scores = np.arange(100.0)
    named = regulatory.ll144_summary(rows, scores=scores, score_name="risk <v2>")
    assert named.attrs["score"] == "risk <v2>"
    assert "n and scoring rate (of the score “risk <v2>”) per category" in regulatory.rules_text(named)
    assert named.equals(regulatory.ll144_summary(rows, scores=scores))   # the name changes no number
    unnamed = regulatory.ll144_summary(rows, scores=scores)
    assert unnamed.attrs["score"] is None and "n and scoring rate per category" in regulatory.rules_text(unnamed)
    assert regulatory.ll144_summary(rows).attrs["score"] is None
    with pytest.raises(ValueError, match="score_name 'risk' names scores, but no scores were given"):
        regulatory.ll144_summary(rows, score_name="risk")


def two_attributes() -> Audit:
    cells = {("F", "A"): CM(20, 5, 5, 20), ("F", "B"): CM(10, 10, 5, 25), ("M", "A"): CM(25, 5, 10, 10),
             ("M", "B"): CM(15, 5, 10, 20), ("unknown", "A"): CM(3, 0, 1, 1), ("M", "Unknown"): CM(1, 1, 1, 2)}
    return Audit({f"{s} & {r}": cm for (s, r), cm in cells.items()}, group_columns=("sex", "race"),
                 group_values={f"{s} & {r}": (s, r) for s, r in cells}, positive_is="benefit")


def test_each_attribute_alone_and_the_intersections_with_unknown_parts_pooled():
    audit = two_attributes()
    s = regulatory.ll144_summary(audit)
    assert list(dict.fromkeys(s["categories of"])) == ["sex", "race", "sex × race"]
    inter = by_category(s, "sex × race")
    assert list(inter.index) == ["F & A", "F & B", "M & A", "M & B", "unknown"]
    assert inter.loc["unknown", "n"] == 5 + 5
    sex = by_category(s, "sex")
    assert list(sex.index) == ["F", "M", "unknown"] and sex.loc["unknown", "n"] == 5
    assert (s.groupby("categories of")["n"].sum() == audit.total().n).all()   # every individual, every table
    # one attribute asked: that attribute alone, no intersection
    assert set(regulatory.ll144_summary(audit, categories=["race"])["categories of"]) == {"race"}
    with pytest.raises(ValueError, match="categories"):
        regulatory.ll144_summary(audit, categories=["age"])


def test_a_subset_of_three_attributes_is_pooled_to_its_intersections():
    values = {f"{s} & {r} & {a}": (s, r, a) for s in "FM" for r in "AB" for a in ("young", "old")}
    audit = Audit({g: CM(5 + len(g), 3, 2, 10) for g in values}, group_columns=("sex", "race", "age"),
                  group_values=values, positive_is="benefit")
    s = regulatory.ll144_summary(audit, categories=("sex", "race"))
    inter = by_category(s, "sex × race")
    assert list(inter.index) == ["F & A", "F & B", "M & A", "M & B"]
    assert inter.loc["F & A", "n"] == audit.cms["F & A & young"].n + audit.cms["F & A & old"].n


def test_n_and_selection_rates_equal_the_audits_own_cells():
    audit = two_attributes()
    s = regulatory.ll144_summary(audit)
    for block, alone in (("sex", audit.marginal("sex")), ("race", audit.marginal("race")), ("sex × race", audit)):
        cells = alone.cells()
        t = by_category(s, block)
        for g, row in cells.iterrows():
            name = " & ".join(alone.group_values[g])
            if "nknown" in name:
                continue   # pooled in the unknown row (pinned above)
            assert t.loc[name, "n"] == row["n"]
            assert t.loc[name, "selection rate"] == pytest.approx((row["TP"] + row["FP"]) / row["n"])


def test_intervals_hold_the_ratio_and_verdicts_judge_each_category_against_the_most_selected():
    audit = two_attributes()
    s = regulatory.ll144_summary(audit, alpha=0.1)
    assert s.attrs["level"] == pytest.approx(0.9) and s.attrs["interval"].startswith("90 % CI")
    others = s[s["status"] == regulatory.IN_RATIOS]
    assert (others["impact ratio CI low"] <= others["impact ratio"]).all()
    assert (others["impact ratio"] <= others["impact ratio CI high"]).all()
    assert set(others["OFI verdict"]) <= set(VERDICTS)
    sex = by_category(s, "sex")
    m = audit.marginal("sex")   # the verdicts are among the categories in the ratios: unknowns left out
    v = Audit({"F": m.cms["sex = F"], "M": m.cms["sex = M"]}).verdicts(alpha=0.1, reference="M")
    assert sex.loc["F", "OFI verdict"] == v.loc[v["group_i"] == "F", "verdict"].item()
    assert sex.loc["M", "OFI verdict"] == "" and np.isnan(sex.loc["M", "impact ratio CI low"])


def test_rows_give_the_same_summary_as_their_audit():
    y, yp, g = [1, 0, 1, 1, 0, 1, 0, 0], [1, 0, 0, 1, 1, 1, 0, 1], ["F"] * 4 + ["M"] * 4
    from_rows = regulatory.ll144_summary(RowData(y=np.array(y), y_pred=np.array(yp), groups=np.array(g)))
    from_audit = regulatory.ll144_summary(Audit.from_predictions(y, yp, g, positive_is="benefit"))
    cols = ["category", "n", "selection rate", "impact ratio"]
    pd.testing.assert_frame_equal(from_rows[cols], from_audit[cols])


def test_a_harm_flipped_audit_counts_the_favourable_decision_and_says_so():
    y, yp, g = [1, 0, 1, 1, 0, 1, 0, 0], [1, 0, 0, 1, 1, 1, 0, 1], ["F"] * 4 + ["M"] * 4
    s = regulatory.ll144_summary(Audit.from_predictions(y, yp, g, positive_is="harm"))
    assert by_category(s)["selection rate"].to_dict() == {"F": 0.5, "M": 0.25}   # share predicted 0 (not flagged)
    assert any("declared a harm" in n and "negative prediction" in n for n in s.attrs["notes"])
    assert "declared a harm" in regulatory.rules_text(s)


def test_the_bias_audit_page_shows_the_summary_with_its_rules_and_a_csv_download():
    from app_helpers import page_with_audit

    audit = Audit({"F": CM(30, 10, 10, 50), "M": CM(45, 5, 15, 35), "*X*": CM(1, 0, 0, 1)}, positive_is="benefit")
    at = page_with_audit(audit, "pages/2_Bias_Audit.py")
    assert not at.exception, at.exception
    (box,) = [e for e in at.expander if e.label == "Local Law 144 summary"]
    assert "exactly 2 % is kept" in box.caption[0].value
    shown = box.dataframe[0].value
    assert list(shown["category"]) == ["F", "M", "*X*"] and shown["n"].tolist() == [100, 100, 2]
    assert any(b.label == "Download the Local Law 144 summary (CSV)" for b in box.get("download_button"))
