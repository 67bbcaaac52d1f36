"""Candidate models from a row-level upload (issue 26): io.candidates_from_predictions, the Compare and Mitigate
page comparing two uploaded candidates and mitigating an uploaded score, and candidates never following other
data (a demo load drops them; a reload keeps them with their audit)."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairness_core import datasets, io
from fairness_core.io import DataValidationError

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGE = "pages/7_Compare_and_Mitigate.py"


def upload(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    """A row-level upload as the reader returns it (text cells): a label, two models' decisions (one written
    yes/no), a score, one group column."""
    rng = np.random.default_rng(seed)
    group = rng.choice(["A", "B"], n)
    y = rng.random(n) < np.where(group == "A", 0.5, 0.35)
    score = np.clip(0.3 * y + 0.25 * (group == "A") + rng.normal(0.25, 0.2, n), 0, 1)
    b = rng.random(n) < 0.3 + 0.3 * y
    return pd.DataFrame({"outcome": np.where(y, "1", "0"), "group": group,
                         "model_a": np.where(score >= 0.5, "1", "0"), "model_b": np.where(b, "yes", "no"),
                         "score_v3": [f"{s:.4f}" for s in score]})


def test_harm_flips_labels_and_decisions_and_negates_scores():
    df = upload(50)
    c = io.candidates_from_predictions(df, "outcome", "1", ["group"], ["model_a", "model_b"], ["score_v3"], "harm",
                                       positive_values={"model_b": "yes"}, title="up.csv")
    assert list(c.predictions) == ["model_a", "model_b"]          # the main prediction first
    assert (c.y == (df["outcome"] != "1")).all()
    assert (c.predictions["model_a"] == (df["model_a"] != "1")).all()
    assert (c.predictions["model_b"] == (df["model_b"] != "yes")).all()
    assert np.allclose(c.scores["score_v3"], -df["score_v3"].astype(float))
    assert c.positive_outcome == "not 1" and "negated" in c.note and c.title == "up.csv"
    kept = io.candidates_from_predictions(df, "outcome", "1", ["group"], ["model_a"], ["score_v3"], "benefit")
    assert (kept.y == (df["outcome"] == "1")).all() and kept.note == ""
    assert np.allclose(kept.scores["score_v3"], df["score_v3"].astype(float))
    # lengths: every candidate, score and group column has the upload's rows; a short one is refused
    assert {len(v) for v in [*c.predictions.values(), *c.scores.values(), c.groups]} == {50}
    with pytest.raises(ValueError, match="has 49 rows; the labels have 50"):
        datasets.Candidates("t", c.y, c.groups, {"short": c.y[:-1]}, {}, "x")


def test_a_thresholded_main_prediction_is_named_by_its_threshold():
    df = upload(40)
    c = io.candidates_from_predictions(df, "outcome", "1", ["group"], ["score_v3", "model_a"], ["score_v3"],
                                       "benefit", thresholds={"score_v3": 0.5})
    assert list(c.predictions) == ["score_v3 ≥ 0.5", "model_a"]
    assert (c.predictions["score_v3 ≥ 0.5"] == c.predictions["model_a"]).all()


def test_every_bad_value_is_named_by_row_and_column():
    df = upload(30)
    df.loc[4, "model_a"] = "maybe"       # a third value: row 5
    df.loc[7, "model_b"] = np.nan        # missing: row 8
    df.loc[2, "score_v3"] = "n/a"        # text in a score: row 3
    with pytest.raises(DataValidationError) as err:
        io.candidates_from_predictions(df, "outcome", "1", ["group"], ["model_a", "model_b"], ["score_v3"], "benefit",
                                       positive_values={"model_b": "yes"})
    where = {(p.row, p.column) for p in err.value.problems}
    assert where == {(5, "model_a"), (8, "model_b"), (3, "score_v3")}
    assert any("'n/a' is not a number" in str(p) for p in err.value.problems)
    with pytest.raises(DataValidationError, match="the chosen positive value '1' does not occur") as err:
        io.candidates_from_predictions(upload(30), "outcome", "1", ["group"], ["model_a", "model_b"])
    assert [p.column for p in err.value.problems] == ["model_b"]
    with pytest.raises(DataValidationError, match="cannot also be the label"):
        io.candidates_from_predictions(upload(30), "outcome", "1", ["group"], ["model_a", "group"])


def loaded(candidates: bool = True) -> AppTest:
    """A session as the Upload page leaves it after 'Aggregate and use' with two models and a score."""
    df = upload()
    audit = io.cms_from_predictions(df, "outcome", "model_a", ["group"], "1", "1", positive_is="benefit",
                                    source="my *models*.csv")
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["audit"] = audit
    at.session_state["demo_key"] = None
    if candidates:
        at.session_state["candidates"] = io.candidates_from_predictions(
            df, "outcome", "1", ["group"], ["model_a", "model_b"], ["score_v3"], "benefit",
            positive_values={"model_b": "yes"}, title="my *models*.csv")
    at.run()
    return at


def texts(at: AppTest) -> str:
    return "\n".join(re.sub(r"\\(.)", r"\1", m.value)
                     for m in [*at.markdown, *at.caption, *at.info, *at.error, *at.warning, *at.success])


def test_the_page_compares_two_uploaded_candidates_and_mitigates_an_uploaded_score():
    at = loaded()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="cmp-source").value.label == "the loaded data"   # chosen when uploaded
    assert at.selectbox(key="cmp-a").options == ["model_a", "model_b"]
    assert any("my \\*models\\*" in c.value for c in at.caption)   # the title escaped
    assert len(at.dataframe[0].value) == 2 and "Fairest by the largest |OFI|" in texts(at)
    assert re.search(r"\d+ of \d+ differences are significant|No difference between", texts(at))
    assert at.selectbox(key="mit-score").options == ["score_v3"]
    at.selectbox(key="mit-target").set_value("demographic_parity").run()
    at.slider(key="mit-tol").set_value(0.1).run()
    assert not at.exception, at.exception
    assert "On the held-out rows the largest |OFI| goes from" in texts(at)
    at.button(key="mit-add").click().run()
    assert not at.exception, at.exception
    options = at.selectbox(key="cmp-a").options
    assert len(options) == 3 and options[2].startswith("score_v3, per-group thresholds")


def test_without_candidates_the_loaded_data_offer_their_one_model():
    at = loaded(candidates=False)
    at.switch_page(PAGE).run()
    at.selectbox(key="cmp-source").select_index(2).run()
    assert not at.exception, at.exception
    assert "Comparison needs at least two candidates" in texts(at)
    assert "no score to threshold" in texts(at)


def test_loading_a_demo_drops_the_candidates_and_a_reload_keeps_them():
    at = loaded()
    sid = at.session_state["sid"]
    again = AppTest.from_file(APP, default_timeout=120)   # F5: a new session, the same URL
    again.query_params["sid"] = sid
    again.run()
    assert not again.exception
    assert list(again.session_state["candidates"].predictions) == ["model_a", "model_b"]
    again.switch_page("pages/1_Upload.py").run()
    again.button(key="load-demo").click().run()
    assert not again.exception
    assert "candidates" not in again.session_state
    again.switch_page(PAGE).run()
    assert len(again.selectbox(key="cmp-source").options) == 2   # the demos only


def test_the_upload_page_picks_other_models_and_scores(monkeypatch):
    """The row-level tab's expander, with Streamlit's uploader stood in for (AppTest cannot upload): a per-column
    positive value where the values differ, a bad score refused with its row and column, then committed."""
    import streamlit as st

    df = upload(300)
    df.loc[5, "score_v3"] = "oops"

    class File:
        name, file_id, size = "up.csv", "f1", 20_000

        def getvalue(self) -> bytes:
            return df.to_csv(index=False).encode()

    monkeypatch.setattr(st, "file_uploader", lambda label, *a, key=None, **k: File() if key == "rows-file" else None)
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/1_Upload.py").run()
    at.selectbox(key="label-col").set_value("outcome")
    at.selectbox(key="pred-col").set_value("model_a")
    at.multiselect(key="group-cols").set_value(["group"]).run()
    at.multiselect(key="cand-pred-cols").set_value(["model_b"]).run()
    at.selectbox(key="cand-pos-model_b").set_value("yes")          # model_b is yes/no, the prediction 1/0
    at.multiselect(key="cand-score-cols").set_value(["score_v3"])
    next(r for r in at.radio if str(r.key).startswith("rows-direction")).set_value("harm").run()
    at.button(key="use-rows").click().run()
    assert "row 6 \\(file line 7\\), column 'score\\_v3'\\: 'oops' is not a number" in at.error[0].value
    assert "candidates" not in at.session_state

    df.loc[5, "score_v3"] = "0.5"
    File.file_id = "f2"
    at.run()
    next(r for r in at.radio if str(r.key).startswith("rows-direction")).set_value("harm").run()
    at.button(key="use-rows").click().run()
    assert not at.exception and not at.error
    c = at.session_state["candidates"]
    assert list(c.predictions) == ["model_a", "model_b"] and list(c.scores) == ["score_v3"]
    assert (c.predictions["model_b"] == (df["model_b"] != "yes")).all()     # a harm: flipped
    assert "2 candidate models and 1 score" in at.success[0].value


def test_a_large_upload_is_counted_in_place_on_the_upload_page(monkeypatch):
    """Issue 35: a file above io.LARGE_UPLOAD_BYTES is shown as its first rows and counted by DuckDB; the audit
    equals the table path's and carries no rows (so nothing row-level is offered)."""
    import streamlit as st

    from fairness_core.io import cms_from_predictions, read_table
    from ui import uploads

    data = upload(30_000).to_csv(index=False).encode()

    class File:
        name, file_id, size = "big.csv", "big-1", len(data)

        def getvalue(self) -> bytes:
            return data

    monkeypatch.setattr(uploads, "LARGE_UPLOAD_BYTES", 100_000)
    monkeypatch.setattr(st, "file_uploader", lambda label, *a, key=None, **k: File() if key == "rows-file" else None)
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/1_Upload.py").run()
    assert any("A large file" in i.value for i in at.info)
    assert any("the first 20,000 rows" in c.value for c in at.caption)
    at.selectbox(key="label-col").set_value("outcome")
    at.selectbox(key="pred-col").set_value("model_a")
    at.multiselect(key="group-cols").set_value(["group"]).run()
    assert at.multiselect(key="cand-pred-cols").disabled and at.multiselect(key="prob-cols").disabled
    next(r for r in at.radio if str(r.key).startswith("rows-direction")).set_value("benefit").run()
    at.button(key="use-rows").click().run()
    assert not at.exception and not at.error
    audit = at.session_state["audit"]
    table = cms_from_predictions(read_table(data, "big.csv"), "outcome", "model_a", ["group"],
                                 at.selectbox(key="pos-label").value, at.selectbox(key="pos-pred").value,
                                 positive_is="benefit")
    assert audit.cms == table.cms and audit.rows is None and audit.total().n == 30_000
