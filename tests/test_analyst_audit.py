"""An analyst's audit, start to finish: real exports, a declared direction, every attribute, one answer per question."""

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairness_core import ConfusionMatrix as CM
from fairness_core.audit import Audit
from fairness_core.vocabulary import Reference
from fairness_core.reading import three_questions
from fairness_core.cli import main as cli
from fairness_core.io import cms_from_predictions, guess_columns, read_table

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "assets" / "compas-scores-two-years.csv.gz"


def published_compas() -> pd.DataFrame:
    return read_table(gzip.decompress(PUBLISHED.read_bytes()), "compas-scores-two-years.csv")


def test_the_published_compas_file_loads_keeping_one_copy_of_each_identical_column():
    df = published_compas()
    assert df.shape == (7214, 51)                      # 53 columns, two identical copies kept once
    assert list(df.columns).count("decile_score") == 1 and list(df.columns).count("priors_count") == 1
    assert any("'decile_score' appears more than once with identical values" in n for n in df.attrs["notices"])


def test_differing_copies_of_a_column_are_kept_under_suffixed_names():
    df = read_table(b"g,score,score,score\na,1,1,3\nb,2,5,4\n", "x.csv")
    assert list(df.columns) == ["g", "score", "score (2)", "score (3)"]
    assert df["score (2)"].tolist() == ["1", "5"]
    assert sum("different values" in n for n in df.attrs["notices"]) == 2


def test_a_prediction_named_column_is_never_guessed_as_the_label():
    df = pd.DataFrame({"sex": ["a", "b"] * 4, "approved_pred": list("10011010"), "good_credit": list("11010011")})
    guess = guess_columns(df)
    assert guess.label == "good_credit" and guess.prediction == "approved_pred"
    df = df.rename(columns={"approved_pred": "decision"})
    assert guess_columns(df).label == "good_credit"


def test_the_direction_is_declared_or_the_assumption_named():
    y, p, g = [1, 0, 1, 1, 0, 1], [1, 0, 0, 1, 1, 1], ["a", "a", "a", "b", "b", "b"]
    with pytest.warns(UserWarning, match="positive_is not given: assuming .* a benefit"):
        undeclared = Audit.from_predictions(y, p, g)
    assert undeclared.positive_is is None and "not declared" in undeclared.direction
    harm = Audit.from_predictions(y, p, g, positive_is="harm")
    assert harm.positive_is == "harm" and "declared a harm" in harm.direction
    assert harm.cms["a"] == CM(tp=1, fn=0, fp=1, tn=1)   # labels and predictions negated
    with pytest.raises(TypeError, match="flip"):     # removed: positive_is="harm" says it
        Audit.from_predictions(y, p, g, flip=True)


def test_compas_with_high_risk_declared_a_harm_reads_the_right_way_round(capsys, tmp_path):
    """Auditing 'high risk' as if it were a benefit would say African-American defendants fare better."""
    df = published_compas()
    kwargs = dict(threshold=5, source="published")
    harm = cms_from_predictions(df, "two_year_recid", "decile_score", ["race"], "1", positive_is="harm", **kwargs)
    wrong = cms_from_predictions(df, "two_year_recid", "decile_score", ["race"], "1", positive_is="benefit",
                                 **kwargs)

    def ofi(audit: Audit) -> float:
        v = audit.verdicts()
        row = v[((v.group_i == "African-American") & (v.group_j == "Caucasian"))
                | ((v.group_i == "Caucasian") & (v.group_j == "African-American"))].iloc[0]
        return row["ofi"] if row["group_i"] == "African-American" else -row["ofi"]

    assert ofi(harm) < -0.05 < 0.05 < ofi(wrong)      # disadvantaged, not favoured
    path = tmp_path / "compas.csv"
    path.write_bytes(gzip.decompress(PUBLISHED.read_bytes()))
    code = cli(["audit", str(path), "--label", "two_year_recid", "--prediction", "decile_score", "--threshold", "5",
                "--positive", "1", "--group", "race", "--positive-is", "harm"])
    out = capsys.readouterr()
    assert code == 0 and "declared a harm" in out.out and "The four-fifths rule" in out.out
    code = cli(["audit", str(path), "--label", "two_year_recid", "--prediction", "decile_score", "--threshold", "5",
                "--positive", "1", "--group", "race"])
    assert code == 0 and "--positive-is not given" in capsys.readouterr().err


def test_each_attribute_alone_beside_the_intersections():
    df = published_compas()
    audit = cms_from_predictions(df, "two_year_recid", "decile_score", ["race", "sex"], "1", threshold=5,
                                 positive_is="harm")
    assert audit.attributes == ("race", "sex") and "African-American & Male" in audit.groups
    by_sex = audit.marginal("sex")
    assert by_sex.groups == ["Female", "Male"] and by_sex.total() == audit.total()
    female = sum((audit.cms[g].as_array() for g in audit.groups if g.endswith("& Female")), np.zeros(4, int))
    assert by_sex.cms["Female"].as_array().tolist() == female.tolist()
    assert by_sex.positive_is == "harm" and by_sex.rows is not None
    assert set(by_sex.rows.groups) == {"Female", "Male"}
    by_race = audit.marginal("race")
    assert "race = Other" in by_race.groups                 # "Other" alone says nothing
    with pytest.raises(ValueError, match="not one of this audit's attributes"):
        audit.marginal("age_cat")


def test_equal_ofi_and_selection_rates_with_qualified_members_rejected_twice_as_often_show_it():
    audit = Audit({"a": CM(800, 200, 200, 800), "b": CM(600, 400, 400, 600)}, positive_is="benefit")
    v = audit.verdicts()
    assert v.loc[0, "ofi"] == 0 and v.loc[0, "di"] == 1
    answers = three_questions(audit, v)
    assert answers["four_fifths"]["pairs"].empty
    fnr = answers["equal_opportunity"]["largest"].set_index("rate").loc["FNR"]
    assert fnr["differs"] and abs(fnr["gap"]) == pytest.approx(0.2)
    assert "FNR gap" in answers["text"]["Equal opportunity (error rates)"]
    assert "shown)" in answers["text"]["Equal opportunity (error rates)"]


def test_the_four_fifths_question_reads_the_lower_rate_over_the_higher_whatever_the_reference():
    audit = Audit({"ref": CM(200, 200, 100, 500), "b": CM(400, 100, 200, 300)}, positive_is="benefit")
    for reference in (Reference.PAIRS, "ref", "b"):
        pairs = three_questions(audit, audit.verdicts(reference=reference))["four_fifths"]["pairs"]
        assert len(pairs) == 1 and pairs.loc[0, "lower-rate group"] == "ref"
        assert pairs.loc[0, "impact ratio"] == pytest.approx(0.5) and pairs.loc[0, "data say"] == "shown below 0.8"


def test_a_reference_that_selects_nobody_is_read_not_crashed_on():
    from fairness_core.reading import verdict_findings

    audit = Audit({"ref": CM(0, 10, 0, 990), "b": CM(30, 10, 0, 960)}, positive_is="benefit")
    v = audit.verdicts(reference="ref")
    assert "undefined (one group selects nobody)" in verdict_findings(v)
    pairs = three_questions(audit, v)["four_fifths"]["pairs"]
    assert pairs.loc[0, "impact ratio"] == 0 and pairs.loc[0, "lower-rate group"] == "ref"


def test_no_claim_beyond_what_the_tables_resolve():
    """At α = 1e-12 over 1,225 pairs the level asked for lies past the grid: the interval says nothing there,
    and neither does the verdict (no interval excluding 0 beside an adjusted p at or above α)."""
    cms = {f"g{k:02d}": CM(1000, 0, 900, 1000) if k % 2 else CM(1000, 900, 0, 1000) for k in range(50)}
    v = Audit(cms, positive_is="benefit").verdicts(alpha=1e-12)
    excludes = (v["ofi_ci_low"] > 0) | (v["ofi_ci_high"] < 0)
    assert (excludes == (v["ofi_p_adjusted"] < 1e-12)).all()
