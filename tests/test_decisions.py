"""Audits of decisions alone (no outcome observed) and unknown categories: what decisions can answer is answered,
with exact coverage; everything that needs outcomes says so and is never a number from invented labels."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fairness_core import Audit, regulatory, report
from fairness_core.audit import NEEDS_OUTCOMES, NeedsOutcomes
from fairness_core.io import DataValidationError, audit_from_decisions, cms_from_predictions
from fairness_core.validation import unknown_values_in


def _screening(seed: int = 3, n: int = 2400) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    race = rng.choice(["White", "Black", "Asian", None, "Prefer not to say"], n, p=[.5, .2, .24, .03, .03])
    sex = rng.choice(["Female", "Male", "Decline to state"], n, p=[.48, .48, .04])
    score = np.clip(rng.normal(55, 15, n) - np.where(race == "Black", 8, 0), 0, 100).round()
    return pd.DataFrame({"sex": sex, "race": race, "score": score, "advanced": np.where(score >= 65, "Yes", "No")})


def test_decisions_alone_answer_selection_and_nothing_that_needs_outcomes():
    df = _screening()
    a = audit_from_decisions(df, "advanced", ["sex", "race"], "Yes", positive_is="benefit")
    assert not a.has_outcomes and all("unknown" in g for g in a.unknown) and a.unknown
    rates = a.selection_rates()
    groups = pd.Series(df["sex"].fillna("?") + "|" + df["race"].fillna("?"))
    assert rates.sum() > 0   # independent count of one group's rate
    women_white = ((df["sex"] == "Female") & (df["race"] == "White"))
    assert rates["Female & White"] == pytest.approx((df.loc[women_white, "advanced"] == "Yes").mean())
    assert len(groups) == a.total().n
    table = a.group_table()
    assert table.drop(columns=["n", "selected", "PPR", "PNR"]).isna().all().all()
    assert a.undefined_reasons()["Female & White"]["TPR"] == NEEDS_OUTCOMES
    for ask in (lambda: a.ofi_against("Female & White"), lambda: a.pairwise("OFI"), lambda: a.difference("B"),
                lambda: a.match_table(["TPR"]), lambda: a.versus_reference("Female & White")):
        with pytest.raises(NeedsOutcomes, match="needs outcomes"):
            ask()
    v = a.verdicts()
    assert set(v["verdict"]) <= {"adverse impact", "materiality unclear", "no adverse impact detected", "inconclusive"}
    assert "ofi" not in v.columns and not (set(v["group_i"]) | set(v["group_j"])) & set(a.unknown)


def test_unknown_values_are_counted_never_compared():
    df = _screening()
    found = unknown_values_in(df, ["race", "sex"])
    assert dict(found["race"])["(blank)"] == int(df["race"].isna().sum())
    assert dict(found["sex"])["Decline to state"] == int((df["sex"] == "Decline to state").sum())
    a = audit_from_decisions(df, "advanced", ["race"], "Yes", positive_is="benefit")
    assert a.unknown == ("unknown",)
    assert a.cms["unknown"].n == int(df["race"].isna().sum() + (df["race"] == "Prefer not to say").sum())
    assert any("read as its unknown category" in n for n in a.notes)
    with pytest.raises(ValueError, match="never the reference"):
        a.verdicts(reference="unknown")
    s = regulatory.ll144_summary(a)
    unknown_row = s[s["category"] == "unknown"].iloc[0]
    assert np.isnan(unknown_row["impact ratio"]) and unknown_row["status"].startswith("unknown category")
    assert (s["status"].str.startswith("most selected") & (s["category"] == "unknown")).sum() == 0
    assert not {"OFI", "OFI verdict"} & set(s.columns)   # what needs outcomes has no column, not one of blanks


def test_blank_groups_stay_refused_with_outcomes_unless_asked():
    df = pd.DataFrame({"y": [1, 0, 1, 0, 1, 1], "p": [1, 1, 0, 0, 1, 0], "g": ["a", "b", None, "a", "b", "b"]})
    with pytest.raises(DataValidationError, match="missing group value in 1 row.*unknown"):
        cms_from_predictions(df, "y", "p", ["g"], positive_label=1)
    a = cms_from_predictions(df, "y", "p", ["g"], positive_label=1, blank_as_unknown=True, positive_is="benefit")
    assert a.has_outcomes and a.unknown == ("unknown",) and a.cms["unknown"].n == 1
    assert set(a.verdicts()["group_i"]) | set(a.verdicts()["group_j"]) == {"a", "b"}


@pytest.mark.parametrize("threshold,word", [(-1, "every row"), (101, "no row")])
def test_a_threshold_selecting_everyone_or_no_one_is_refused(threshold, word):
    df = _screening()
    with pytest.raises(DataValidationError, match=f"column 'score'.*threshold {threshold:g} selects {word}"):
        audit_from_decisions(df, "score", ["sex"], threshold=threshold, positive_is="benefit")


def test_a_label_that_is_the_decision_is_refused():
    df = _screening()
    df["advanced_copy"] = df["advanced"]
    with pytest.raises(DataValidationError, match="every one of the 2,400 rows.*decisions alone"):
        cms_from_predictions(df, "advanced_copy", "advanced", ["sex"], positive_label="Yes", positive_is="benefit")
    with pytest.raises(DataValidationError, match="same column"):
        cms_from_predictions(df, "advanced", "advanced", ["sex"], positive_label="Yes", positive_is="benefit")


def test_from_predictions_without_labels_is_from_decisions():
    a = Audit.from_predictions(None, [1, 0, 1, 1], ["a", "a", "b", "b"], positive_is="benefit", source="hr")
    b = Audit.from_decisions([1, 0, 1, 1], ["a", "a", "b", "b"], positive_is="benefit", source="hr")
    assert a == b and a.fingerprint == b.fingerprint and not a.has_outcomes


def test_marginals_and_intersections_keep_the_unknowns():
    a = audit_from_decisions(_screening(), "advanced", ["sex", "race"], "Yes", positive_is="benefit")
    race = a.marginal("race")
    assert not race.has_outcomes and race.unknown == ("race = unknown",)
    assert race.cms["race = unknown"].n == sum(a.cms[g].n for g in a.groups if g.endswith("& unknown"))


def test_selection_verdict_intervals_cover_exactly_at_small_groups():
    """Every pair verdict of decisions alone rests on DI's adjusted interval; its exact coverage (enumerating
    every outcome of two binomial groups) keeps the nominal level at tiny groups, zero selections included."""
    from fairness_core import inference
    for n_i, n_j, p_i, p_j in [(5, 8, 0.1, 0.3), (12, 10, 0.5, 0.05), (20, 30, 0.3, 0.6), (8, 8, 0.02, 0.02)]:
        xi, xj = np.meshgrid(np.arange(n_i + 1), np.arange(n_j + 1), indexing="ij")
        r = inference.di_pairs(xi.ravel().astype(float), np.full(xi.size, n_i, float), xj.ravel().astype(float),
                               np.full(xi.size, n_j, float))
        lo, hi = r.bounds(0.025)
        true = p_i / p_j
        weight = stats.binom.pmf(xi.ravel(), n_i, p_i) * stats.binom.pmf(xj.ravel(), n_j, p_j)
        covered = np.where(np.isnan(lo), True, (lo <= true) & (true <= hi))
        assert float(weight[covered].sum()) >= 0.95 - 1e-9, (n_i, n_j, p_i, p_j)


def test_report_of_decisions_alone_makes_no_ofi_claim():
    a = audit_from_decisions(_screening(), "advanced", ["sex", "race"], "Yes", positive_is="benefit")
    r = report.build(a)
    page = r.html()
    assert page.count("needs the observed outcome") == 1 and "algorithmic bias" not in page
    assert "OFI" not in "".join(r.tables["verdicts"].columns)
    doc = r.to_json()
    assert '"has outcomes": false' in doc and "max |OFI|" not in doc


def test_the_hr_demo_and_its_pages_answer_without_outcomes():
    """The HR screening demo (decisions only): the Bias Audit page answers each attribute first, the LL144 summary
    gives selection and scoring rates, and the pages that need outcomes say so instead of computing."""
    from app_helpers import page_with_audit
    from fairness_core import datasets
    audit = datasets.load_demo("hr_screening")
    at = page_with_audit(audit, "pages/2_Bias_Audit.py")
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "By sex alone" in text and "By race\\_ethnicity alone" in text and "OFI beyond the tolerance" not in text
    assert [m.label for m in at.metric] == ["Adverse impact", "Materiality unclear", "No adverse impact detected",
                                           "Inconclusive"] * 3   # sex alone, race alone, then the intersections
    summary = regulatory.ll144_summary(audit, scores=audit.rows.scores["tool_score"], score_name="tool_score")
    assert set(summary["categories of"]) == {"sex", "race_ethnicity", "sex × race_ethnicity"}
    assert not {"OFI", "OFI verdict"} & set(summary.columns)
    for page in ("pages/3_Sample_Size_Explorer.py", "pages/4_Smoothing.py"):
        at = page_with_audit(audit, page)
        assert not at.exception and "needs outcomes" in at.info[0].value


def test_a_series_of_decisions_has_no_ofi_trend():
    from fairness_core.trend import series_changes
    a = Audit.from_decisions([1, 0, 1, 1], ["a", "a", "b", "b"], positive_is="benefit")
    with pytest.raises(NeedsOutcomes, match="trend of OFI"):
        series_changes([("2026-Q1", a), ("2026-Q2", a)])


def test_the_command_line_audits_decisions_alone(tmp_path, capsys):
    from fairness_core.cli import main
    from fairness_core.datasets import ASSETS_DIR
    data = str(ASSETS_DIR / "demo_hr_screening.csv")
    out = tmp_path / "r.json"
    code = main(["audit", data, "--group", "race_ethnicity", "--prediction", "advanced_to_interview", "--positive",
                 "Yes", "--decisions-only", "--positive-is", "benefit", "--json", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0 and "decisions alone (OFI needs outcomes)" in printed and '"has outcomes": false' in out.read_text()
    assert main(["audit", data, "--group", "sex", "--prediction", "tool_score", "--threshold", "0.5",
                 "--decisions-only", "--positive-is", "benefit"]) == 2
    assert "selects every row" in capsys.readouterr().err
    assert main(["audit", data, "--group", "sex", "--prediction", "advanced_to_interview", "--positive", "Yes",
                 "--decisions-only", "--fail-ofi", "0.1"]) == 2


def test_an_unknown_category_is_never_compared_nor_in_any_rest():
    """With outcomes and blanks counted as unknown: pairwise comparisons, each group against a reference, the
    MATCH table, the rest of the data and the heatmaps leave the unknown category out."""
    from fairness_core import plots
    from fairness_core.validation import UNKNOWN_VALUES
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"y": rng.integers(0, 2, 300), "p": rng.integers(0, 2, 300),
                       "g": rng.choice(["a", "b", "Decline to state"], 300)})
    a = cms_from_predictions(df, "y", "p", ["g"], positive_label=1, unknown=UNKNOWN_VALUES, positive_is="benefit")
    assert a.unknown == ("unknown",)
    assert list(a.pairwise("OFI").index) == ["a", "b"] and list(a.versus_reference("a").index) == ["b"]
    assert set(a.match_table(["PPR"])["group"]) == {"a", "b"}
    assert a.rest_of("a") == a.cms["b"]
    assert "over 1 pair" in a.ratio("PPR")["interval"].iloc[0]
    assert set(plots.pairwise_heatmap(a, "OFI", a.verdicts()).data[0].x) == {"a", "b"}


def test_the_upload_page_never_offers_decisions_as_confusion_matrices():
    """Decisions alone on the Upload page: the current data are selection counts, and the typed table starts
    empty, so they can never be re-loaded as an audit with outcomes."""
    from app_helpers import page_with_audit
    from fairness_core import datasets
    at = page_with_audit(datasets.load_demo("hr_screening"), "pages/1_Upload.py")
    assert not at.exception
    shown = [d.value for d in at.dataframe]
    assert any("selection rate" in t.columns for t in shown)
    assert not any({"TP", "FN"} <= set(t.columns) and t["TP"].sum() > 0 for t in shown)
