"""The Upload page's guess of what an uploaded file's columns hold (issue 53, the newcomer's pass): an observed
amount and its prediction found by their names, a stray bad cell that changes nothing but is named by row and
column, and a sentence that follows the user's choice."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fairness_core.services.io.read import read_table
from fairness_core.services.io.rows import amount_pair, guess_columns
from tests.test_app_amounts import radio, text, upload_page

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("header, expected", [
    (["region", "observed_premium", "predicted_premium"], ("observed_premium", "predicted_premium")),
    (["sex", "wage", "predicted_wage"], ("wage", "predicted_wage")),
    (["dept", "salary", "recommended_salary"], ("salary", "recommended_salary")),
    (["site", "Actual Claims Cost", "Claims cost (estimated)"], ("Actual Claims Cost", "Claims cost (estimated)")),
    (["branch", "credit_limit", "model_credit_limit"], ("credit_limit", "model_credit_limit")),
    (["region", "age", "income"], None),                       # no pair named as outcome and prediction
    (["region", "observed_premium", "predicted_claims"], None),  # different things
])
def test_an_observed_amount_and_its_prediction_are_found_by_their_names(header, expected):
    got = amount_pair([h for h in header[1:]])
    assert (got[:2] if got else None) == expected


def _guess(frame: pd.DataFrame):  # type: ignore[no-untyped-def]
    return guess_columns(read_table(frame.to_csv(index=False).encode(), "rows.csv"))


def test_a_stray_bad_cell_does_not_change_the_guess():
    rows = pd.read_csv(DATA / "premiums.csv")
    clean = _guess(rows)
    assert (clean.label, clean.prediction, clean.groups) == ("observed_premium", "predicted_premium", ("region",))
    bad = rows.astype(object)
    bad.loc[16, "observed_premium"] = "n/a"
    assert (_guess(bad).label, _guess(bad).prediction) == (clean.label, clean.prediction)


def test_the_premiums_file_is_read_as_an_amount_and_a_bad_cell_named_by_row_and_column(monkeypatch):
    rows = pd.read_csv(DATA / "premiums.csv")
    at = upload_page(monkeypatch, rows, "premiums.csv")
    assert at.selectbox(key="label-col").value == "observed_premium"
    assert at.selectbox(key="pred-col").value == "predicted_premium"
    assert radio(at, "kind-").value == "amount"
    assert "so they are read as **an amount" in text(at)
    radio(at, "kind-").set_value("ordered").run()
    page = text(at)
    assert "you chose to read them as **ordered categories" in page and "(the guess was an amount" in page

    bad = rows.astype(object)
    bad.loc[16, "observed_premium"] = "n/a"
    at = upload_page(monkeypatch, bad, "premiums_bad_value.csv")
    assert at.selectbox(key="label-col").value == "observed_premium"
    assert radio(at, "kind-").value == "amount"                # one bad cell in 300 changes no guess
    at.text_input[-1].set_value("$ a year").run()
    radio(at, "amount-dir-").set_value("harm").run()
    at.button(key="use-amounts").click().run()
    assert not at.exception
    shown = " ".join(e.value for e in at.error).replace("\\", "")   # markdown's escapes off
    assert "observed_premium" in shown and "row 17" in shown and "'n/a' is not a number" in shown, shown
