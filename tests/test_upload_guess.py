"""The Upload page's guess of what an uploaded file's columns hold (issue 53, the newcomer's findings): an observed
value and its prediction found by their names and classified by their values (an amount: more than 20 different
numbers), a stray bad cell that changes no guess but is named by row and column with nothing computed and nothing
lost, and a sentence, direction question and unit that follow the user's choice."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairness_core import datasets
from fairness_core.io import guess_columns, read_table
from fairness_core.io.rows import outcome_pair
from tests.app_helpers import uploaded_file
from tests.test_app_amounts import radio, text, with_demo
from ui.kind_upload import AMOUNT_MIN_DISTINCT, classify, not_numbers
from ui.session import KIND_KEY

ROOT = Path(__file__).resolve().parents[1]
PREMIUMS = pd.read_csv(Path(__file__).parent / "data" / "premiums.csv")


def bad_premiums() -> pd.DataFrame:
    """The newcomer's premiums_bad_value.csv: row 42's predicted premium typed '12o5.50'."""
    bad = PREMIUMS.astype(object)
    bad.loc[41, "predicted_premium"] = "12o5.50"
    return bad


def few_premiums() -> pd.DataFrame:
    """The newcomer's premiums_few_values.csv: observed premiums rounded to 1000, 1100, 1200 or 1300."""
    return PREMIUMS.assign(observed_premium=PREMIUMS["observed_premium"].round(-2).clip(1000, 1300).astype(int))


def guessed(frame: pd.DataFrame) -> tuple:  # type: ignore[type-arg]
    """(label, prediction, groups, kind) as the page guesses them from ``frame`` written as a CSV file."""
    rows = read_table(frame.to_csv(index=False).encode(), "rows.csv")
    g = guess_columns(rows)
    kind = classify(None if g.label is None else rows[g.label], rows[g.prediction])[0] if g.prediction else None
    return g.label, g.prediction, g.groups, kind


# --------------------------------------------------------------------------- 1. pairs found by name


@pytest.mark.parametrize("header, expected", [
    (["region", "observed_premium", "predicted_premium"], ("observed_premium", "predicted_premium")),
    (["sex", "wage", "predicted_wage"], ("wage", "predicted_wage")),
    (["dept", "salary", "recommended_salary"], ("salary", "recommended_salary")),
    (["site", "Actual Claims Cost", "Claims cost (estimated)"], ("Actual Claims Cost", "Claims cost (estimated)")),
    (["branch", "true_limit", "limit_score"], ("true_limit", "limit_score")),
    (["g", "y_true", "y_pred"], ("y_true", "y_pred")),
    (["region", "outcome_los", "los_pred"], ("outcome_los", "los_pred")),
    (["region", "age", "income"], None),                        # nothing named as an outcome and its prediction
    (["region", "observed_premium", "predicted_claims"], None),  # an outcome and a prediction of different things
    (["region", "predicted_premium", "predicted_claims"], None),  # two predictions, no outcome
])
def test_an_outcome_and_its_prediction_are_paired_by_their_names(header, expected):
    assert outcome_pair(header) == expected
    assert outcome_pair(header[::-1]) == expected   # the columns' order does not matter


def test_realistic_files_are_guessed_and_classified():
    rng = np.random.default_rng(5)
    n = 240
    region = rng.choice(["north", "south", "west"], n)
    # the newcomer's file: an amount, harmed by a larger prediction (a premium)
    assert guessed(PREMIUMS) == ("observed_premium", "predicted_premium", ("region",), "amount")
    # the pay demo's file as uploaded: every column, the person id and the fold included
    assert guessed(datasets.pay_frame()) == ("wage", "predicted_wage", ("sex",), "amount")
    # the COMPAS tiers demo's file: the outcome read as tiers (High / Low) beside the tool's Low / Medium / High
    assert guessed(datasets.compas_tier_frame()) == ("observed_tier", "score_text", ("race", "sex"), "ordered")
    # a salary recommended as a whole number of dollars, different in every row: named so, no id
    salary = rng.permutation(np.arange(40_000, 40_000 + 100 * n, 100))
    assert guessed(pd.DataFrame({"dept": region, "actual_salary": salary, "recommended_salary": salary + 50})) \
        == ("actual_salary", "recommended_salary", ("dept",), "amount")
    # a 1-5 grade and its prediction: a pair, but of ordered categories (20 or fewer different numbers)
    grade = rng.integers(1, 6, n)
    assert guessed(pd.DataFrame({"region": region, "true_grade": grade, "grade_estimate": grade})) \
        == ("true_grade", "grade_estimate", ("region",), "ordered")
    # the yes/no files keep their guess: COMPAS's outcome and decision, the binary audit
    assert guessed(datasets.compas_frame())[:2] == ("two_year_recid", "predicted_high_risk")
    assert guessed(datasets.compas_frame())[3] == "two-valued"


def test_no_guess_where_no_column_is_named_as_an_outcome_or_a_prediction():
    rng = np.random.default_rng(6)
    frame = pd.DataFrame({"region": rng.choice(["north", "south"], 200), "age": rng.integers(18, 80, 200),
                          "income": rng.normal(4e4, 9e3, 200).round(2), "premium": rng.normal(1e3, 90, 200).round(2)})
    label, prediction, groups, kind = guessed(frame)
    assert (label, prediction, kind) == (None, None, None) and groups == ("region",)
    g = guess_columns(read_table(frame.to_csv(index=False).encode(), "rows.csv"))
    assert "no column named like an actual outcome" in g.reasons[0]


def test_an_amount_is_more_than_20_different_numbers():
    p = pd.Series(np.arange(40.0), name="predicted")
    for distinct, kind in ((AMOUNT_MIN_DISTINCT, "ordered"), (AMOUNT_MIN_DISTINCT + 1, "amount")):
        y = pd.Series(np.arange(40) % distinct * 1.5, name="observed")
        assert classify(y, p)[0] == kind


# --------------------------------------------------------------------------- 2. a bad cell


def test_a_bad_cell_changes_no_guess_and_is_named_by_row_and_column():
    assert guessed(bad_premiums()) == guessed(PREMIUMS)
    na = PREMIUMS.astype(object)
    na.loc[16, "observed_premium"] = "oops"
    assert guessed(na) == guessed(PREMIUMS)
    rows = read_table(bad_premiums().to_csv(index=False).encode(), "premiums_bad_value.csv")
    assert [str(p) for p in not_numbers(rows, ["observed_premium", "predicted_premium"])] == [
        "row 42 (file line 43), column 'predicted_premium': '12o5.50' is not a number"]
    kind, why = classify(rows["observed_premium"], rows["predicted_premium"])
    assert kind == "amount" and "300 different numbers" in why
    # the outcome's bad cell is not counted as a number
    kind, why = classify(na["observed_premium"], na["predicted_premium"])
    assert kind == "amount" and "299 different numbers (more than 20) and 1 value that is not a number" in why


class _Upload:
    """The page's uploader, serving one file; ``serve`` swaps the file as a user dropping another would."""

    def __init__(self, monkeypatch):  # type: ignore[no-untyped-def]
        import streamlit as st
        self.file = None
        monkeypatch.setattr(st, "file_uploader",
                            lambda label, *a, key=None, **k: self.file if key == "rows-file" else None)

    def serve(self, frame: pd.DataFrame, name: str) -> None:
        self.file = uploaded_file(frame, name)


def _page(upload: _Upload, frame: pd.DataFrame, name: str) -> AppTest:
    upload.serve(frame, name)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page("pages/1_Upload.py").run()
    assert not at.exception
    return at


def test_the_bad_file_is_refused_by_row_and_column_and_the_loaded_data_is_kept(monkeypatch):
    upload = _Upload(monkeypatch)
    at = _page(upload, PREMIUMS, "premiums.csv")
    assert (at.selectbox(key="label-col").value, at.selectbox(key="pred-col").value) == (
        "observed_premium", "predicted_premium")
    assert radio(at, "kind-").value == "amount" and "so they are read as **an amount" in text(at)
    radio(at, "amount-dir-").set_value("harm").run()
    at.text_input[-1].set_value("$ a year").run()
    at.button(key="use-amounts").click().run()
    loaded = at.session_state[KIND_KEY]
    assert loaded.audit.source.startswith("premiums.csv:") and int(np.sum(loaded.audit.n)) == 300

    upload.serve(bad_premiums(), "premiums_bad_value.csv")
    at.run()
    assert not at.exception
    # the guess is what the other 299 rows say, and the bad cell is named before anything is asked
    assert (at.selectbox(key="label-col").value, at.selectbox(key="pred-col").value) == (
        "observed_premium", "predicted_premium")
    assert radio(at, "kind-").value == "amount"
    warned = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "row 42 (file line 43), column 'predicted_premium': '12o5.50' is not a number" in warned
    radio(at, "amount-dir-").set_value("harm").run()
    at.button(key="use-amounts").click().run()
    assert not at.exception
    refused = " ".join(e.value for e in at.error).replace("\\", "")
    assert "Nothing was loaded" in refused and "row 42" in refused and "'predicted_premium'" in refused
    assert "'12o5.50' is not a number" in refused
    assert at.session_state[KIND_KEY] is loaded   # nothing computed from the bad file, nothing loaded lost
    assert "premiums.csv: predicted_premium against observed_premium" in text(at)


# --------------------------------------------------------------------------- 3. the user's choice


def test_the_sentence_direction_and_unit_follow_the_users_choice(monkeypatch):
    upload = _Upload(monkeypatch)
    at = _page(upload, few_premiums(), "premiums_few_values.csv")
    assert radio(at, "kind-").value == "ordered"    # 4 different numbers: tiers, as guessed
    assert "so they are read as **ordered categories" in text(at)
    assert not [r for r in at.radio if str(r.key).startswith("amount-dir-")] and not at.text_input

    radio(at, "kind-").set_value("amount").run()    # the user says: amounts
    page = text(at)
    assert "you chose to read them as **an amount" in page and "(the guess was ordered categories" in page
    assert "read as **ordered categories" not in page
    direction = radio(at, "amount-dir-")
    assert "a larger “predicted_premium”" in direction.label.replace("\\", "")
    assert [o.split("**")[1] for o in direction.options] == ["benefit", "harm"]
    assert [t.label for t in at.text_input] == ["unit"]
    assert not [m for m in at.multiselect if str(m.key).startswith("order-")]

    upload.serve(PREMIUMS, "premiums.csv")          # and the other way round: amounts read as tiers
    at.run()
    assert radio(at, "kind-").value == "amount"
    radio(at, "kind-").set_value("ordered").run()
    page = text(at)
    assert "you chose to read them as **ordered categories" in page and "(the guess was an amount" in page
    assert not [r for r in at.radio if str(r.key).startswith("amount-dir-")] and not at.text_input
    assert [r for r in at.radio if str(r.key).startswith("fav-")]   # the favourable end is asked instead
    radio(at, "kind-").set_value("two-valued").run()
    page = text(at)
    assert "you chose to read them as **two values" in page
    assert any(str(r.key).startswith("rows-direction") for r in at.radio) and not at.text_input


def test_the_current_amounts_are_headed_in_words_and_their_unit_said(monkeypatch):
    upload = _Upload(monkeypatch)
    at = _page(upload, PREMIUMS, "premiums.csv")
    radio(at, "amount-dir-").set_value("harm").run()
    at.text_input[-1].set_value("$ a year").run()
    at.button(key="use-amounts").click().run()
    shown = at.dataframe[-1].value   # Current data, the page's last table
    assert list(shown.columns) == ["people", "mean observed", "mean predicted", "mean benefit", "mean absolute error",
                                   "root mean square error"]
    assert "the prediction's errors, in $ a year." in text(at)
    by_group = at.session_state[KIND_KEY].audit.by_group()
    assert np.allclose(shown.iloc[:, 1:].to_numpy(dtype=float),
                       by_group[["mean_outcome", "mean_prediction", "mean_benefit", "mae", "rmse"]].to_numpy())


def test_the_current_tiers_are_headed_in_words():
    at = with_demo("compas_tiers")
    shown = at.dataframe[-1].value
    assert list(shown.columns) == ["group", "class", "people in the group", "placed in the class",
                                   "share of the group", "share of the group low", "share of the group high"]
    shares = at.session_state[KIND_KEY].audit.shares()
    assert np.allclose(shown["share of the group"].to_numpy(dtype=float), shares["share"].to_numpy())
