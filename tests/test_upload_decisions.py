"""Auditing a screening tool's decisions without an outcome column (the HR analyst's issue): the column guess never
takes a decision for the truth, the Upload page offers the decisions-only path, counts unknown categories, and asks
for a threshold inside a score's range before anything is computed."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fairness_core.io import guess_columns, read_table

ROOT = Path(__file__).resolve().parents[1]
HR = ROOT / "assets" / "demo_hr_screening.csv"


def hr_rows() -> pd.DataFrame:
    return read_table(HR.read_bytes(), HR.name)


def test_the_hr_demo_is_the_generators_output_with_the_documented_rates():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_hr_demo", ROOT / "scripts" / "make_hr_demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.make().to_csv(index=False, lineterminator="\n") == HR.read_text(encoding="utf-8")   # seeded
    df = hr_rows()
    assert df.shape == (2400, 5)
    assert int(df["race_ethnicity"].isna().sum()) == 71
    advanced = df["advanced_to_interview"].eq("Yes")
    assert advanced.equals(pd.to_numeric(df["tool_score"]).ge(65))
    rate = advanced.groupby(df["race_ethnicity"]).agg(["mean", "size"])
    assert tuple(rate.loc["Hispanic or Latino"]) == (0.23, 400) and tuple(rate.loc["White"]) == (0.37, 1100)


def test_the_hr_file_guesses_no_label_the_tools_decision_and_both_attributes():
    guess = guess_columns(hr_rows())
    assert guess.label is None
    assert guess.prediction == "advanced_to_interview"
    assert guess.groups == ("sex", "race_ethnicity")
    assert guess.reasons[0] == ("no column named like an actual outcome: audit the decisions alone, or pick the "
                                "outcome column")


@pytest.mark.parametrize("decision", ["advanced", "selected", "shortlisted", "passed_screen", "decision",
                                      "recommended", "invited", "interview", "Advanced to interview",
                                      "screened_in", "tool_decision"])
def test_a_column_named_like_a_decision_is_never_the_label(decision):
    df = pd.DataFrame({"sex": list("FMFMFMFM"), decision: list("YNNYYNYN"), "other_flag": list("10011010")})
    guess = guess_columns(df)
    assert guess.label is None and guess.prediction == decision     # never "the other two-valued column"
    with_outcome = df.assign(hired=list("10110010"))
    assert guess_columns(with_outcome).label == "hired" and guess_columns(with_outcome).prediction == decision


@pytest.mark.parametrize("asset, label, prediction", [
    ("compas_propublica.csv.gz", "two_year_recid", "decile_score"),
    ("compas-scores-two-years.csv.gz", "is_recid", "decile_score"),
    ("adult_predictions.csv.gz", "income_over_50k", "predicted_over_50k")])
def test_the_demos_row_files_still_guess_their_labels(asset, label, prediction):
    import gzip

    df = read_table(gzip.decompress((ROOT / "assets" / asset).read_bytes()), asset.removesuffix(".gz"))
    guess = guess_columns(df)
    assert (guess.label, guess.prediction) == (label, prediction)
