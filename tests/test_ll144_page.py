"""The Bias Audit page's Local Law 144 summary with the scoring rate: offered when the session's data carry a score
(candidate models uploaded with the rows, or the COMPAS demo's decile score), the same table as the library's
``regulatory.ll144_summary(..., scores=...)``, its CSV and the downloaded report following the choice, the score's
name shown as typed; without a score the page is as before. The shared cache keys the scores' content."""

from __future__ import annotations

import io as io_
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import captured  # noqa: F401 - a fixture, used by name
from fairness_core import datasets, io, regulatory
from fairness_core.audit import Audit
from fairness_core.statistics.rows import RowData
from fairness_core.verdicts import VerdictSettings
from ui.widgets import BuiltIn

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGE = "pages/2_Bias_Audit.py"
#: A score column's name with markdown, HTML and a formula in it: shown as typed, never as markup.
HOSTILE = "score *v3* <b>x</b> =1+1"
DECISIONS = "selection rate (decisions)"


def upload(n: int = 1500, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    group = rng.choice(["A", "B", "C"], n, p=[0.5, 0.4, 0.1])
    y = rng.random(n) < np.where(group == "A", 0.5, 0.35)
    score = np.round(np.clip(0.3 * y + 0.2 * (group == "A") + rng.normal(0.25, 0.2, n), 0, 1), 2)
    return pd.DataFrame({"outcome": np.where(y, "1", "0"), "group": group,
                         "model_a": np.where(score >= 0.5, "1", "0"), HOSTILE: [f"{s:.2f}" for s in score]})


def loaded(score_columns: tuple[str, ...] = (HOSTILE,), candidates: bool = True) -> tuple[AppTest, Audit, object]:
    """A session as the Upload page leaves it with row-level data and their candidate models, on the Bias Audit page."""
    df = upload()
    audit = io.cms_from_predictions(df, "outcome", "model_a", ["group"], "1", "1", positive_is="benefit",
                                    source="rows.csv")
    c = io.candidates_from_predictions(df, "outcome", "1", ["group"], ["model_a"], list(score_columns), "benefit",
                                       title="rows.csv")
    at = AppTest.from_file(APP, default_timeout=180)
    at.session_state["audit"] = audit
    at.session_state["demo_key"] = None
    if candidates:
        at.session_state["candidates"] = c
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at, audit, c


def box(at: AppTest):  # type: ignore[no-untyped-def]
    (expander,) = [e for e in at.expander if e.label == "Local Law 144 summary"]
    return expander


def report_json(captured: dict) -> dict:  # type: ignore[type-arg]
    data = captured["fairness_audit_report.json"]()
    text = data.decode() if isinstance(data, bytes) else data
    assert "could not be built" not in text, text
    return json.loads(text)


def same_table(shown: pd.DataFrame, want: pd.DataFrame, rate: str) -> None:
    """The page's table is the library's: texts equal, numbers equal (an undefined one reaches AppTest as ±inf)."""
    assert list(shown.columns) == list(want.columns) and rate in shown.columns
    for col in want.columns:
        if pd.api.types.is_numeric_dtype(want[col]):
            got, exp = shown[col].to_numpy(float), want[col].to_numpy(float)
            assert np.array_equal(~np.isfinite(got), np.isnan(exp)), col
            assert got[np.isfinite(got)] == pytest.approx(exp[np.isfinite(exp)], rel=1e-12), col
        else:
            assert shown[col].astype(str).tolist() == want[col].astype(str).tolist(), col


def test_uploaded_score_offers_the_scoring_rate_and_the_report_follows(captured):
    at, audit, c = loaded()
    radio = at.radio(key="ll144-rate")
    assert radio.value.label == DECISIONS   # the page opens as before: the decisions' selection rate
    assert radio.options == [DECISIONS, r"scoring rate (score \*v3\* \<b\>x\</b\> \=1\+1)"]   # escaped markdown
    assert "selection rate" in box(at).dataframe[0].value.columns
    assert report_json(captured)["settings"]["Local Law 144 rate"] == "selection rate (decisions)"

    radio.set_value(HOSTILE).run()
    assert not at.exception, at.exception
    want = regulatory.ll144_summary(audit, scores=c.scores[HOSTILE])   # the page's default settings are the library's
    same_table(box(at).dataframe[0].value, want, "scoring rate")
    caption = box(at).caption[0].value
    assert "scoring rate \\(of the score “score \\*v3\\* \\<b\\>x\\</b\\> \\=1\\+1”\\)" in caption
    assert "strictly above the whole sample's median" in caption
    (csv_button,) = box(at).get("download_button")
    assert "scoring rate of “score \\*v3\\*" in csv_button.proto.label
    (name,) = [k for k in captured if k.startswith("ll144_summary_scoring_rate")]
    csv = pd.read_csv(io_.BytesIO(captured[name]()))
    assert csv["scoring rate"].to_numpy() == pytest.approx(want["scoring rate"].to_numpy())
    assert name == "ll144_summary_scoring_rate_score_v3_b_x_b_1_1.csv" and set(csv["score"]) == {HOSTILE}  # kept inside
    assert any("Local Law 144 summary gives the scoring rate of “score \\*v3\\*" in c.value for c in at.caption)

    doc = report_json(captured)
    rows = doc["tables"]["local law 144 summary"]
    assert [r["scoring rate"] for r in rows] == pytest.approx(want["scoring rate"].tolist())
    assert "selection rate" not in rows[0]
    assert f"of the score “{HOSTILE}”" in doc["settings"]["Local Law 144 rate"]
    assert f"scoring rate (of the score “{HOSTILE}”)" in doc["settings"]["Local Law 144 summary"]
    page = captured["fairness_audit_report.html"]()
    page = page.decode() if isinstance(page, bytes) else page
    assert "<b>x</b>" not in page and "score *v3* &lt;b&gt;x&lt;/b&gt; =1+1" in page


def test_back_to_decisions_and_the_same_scores_on_other_rows(captured):
    at, audit, c = loaded()
    at.radio(key="ll144-rate").set_value(HOSTILE).run()
    assert "scoring rate" in box(at).dataframe[0].value.columns
    at.radio(key="ll144-rate").set_value(BuiltIn(DECISIONS)).run()
    assert not at.exception, at.exception
    same_table(box(at).dataframe[0].value, regulatory.ll144_summary(audit), "selection rate")
    assert "n and selection rate per category" in box(at).caption[0].value.replace("\\", "")
    assert [b.proto.label for b in box(at).get("download_button")] == ["Download the Local Law 144 summary (CSV)"]
    assert report_json(captured)["settings"]["Local Law 144 rate"] == "selection rate (decisions)"


def test_the_compas_demo_offers_its_decile_score():
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    radio = at.radio(key="ll144-rate")
    assert radio.options == [DECISIONS, "scoring rate (COMPAS decile score)", "scoring rate (logistic regression)"]
    radio.set_value("COMPAS decile score").run()
    assert not at.exception, at.exception
    audit = datasets.load_demo("compas_race")
    want = regulatory.ll144_summary(audit, scores=datasets.load_candidates("compas").scores["COMPAS decile score"])
    same_table(box(at).dataframe[0].value, want, "scoring rate")
    assert "COMPAS decile score" in box(at).caption[0].value


@pytest.mark.parametrize("how", ["no candidates", "candidates without a score", "a demo without scores"])
def test_no_choice_without_a_score(how):
    if how == "a demo without scores":
        at = AppTest.from_file(APP, default_timeout=180)
        at.session_state["audit"] = datasets.load_demo("ricci_a")
        at.session_state["demo_key"] = "ricci_a"
        at.run()
        at.switch_page(PAGE).run()
    else:
        at, _, _ = loaded(score_columns=(), candidates=how != "no candidates")
    assert not at.exception, at.exception
    assert not at.get("radio") or all(r.key != "ll144-rate" for r in at.radio)
    assert "selection rate" in box(at).dataframe[0].value.columns
    assert [b.proto.label for b in box(at).get("download_button")] == ["Download the Local Law 144 summary (CSV)"]
    assert not any("scoring rate" in c.value for c in at.caption)


def test_the_shared_cache_keys_the_scores_and_the_rows_they_belong_to():
    """Two audits with the same fingerprint (the same cells) but other rows, and the same scores: each gets its own
    summary; another name or other scores never reuse an entry either."""
    from ui import cached
    y = np.array([1, 1, 0, 0, 1, 0, 1, 0] * 25, dtype=bool)
    groups = np.array(["a"] * 100 + ["b"] * 100, dtype=object)
    swapped = groups.copy()
    swapped[[0, 100]] = swapped[[100, 0]]     # rows 0 and 100 change groups: both have y = 1, cells unchanged
    pred = y.copy()
    scores = np.arange(200, dtype=float)
    one = Audit.from_predictions(y, pred, groups, positive_is="benefit")
    other = Audit.from_predictions(y, pred, swapped, positive_is="benefit")
    assert one.fingerprint == other.fingerprint and one.rows is not None and other.rows is not None
    first = cached.ll144(one, VerdictSettings(0.05, 0.05, "holm"), scores=scores, score_name="s")
    second = cached.ll144(other, VerdictSettings(0.05, 0.05, "holm"), scores=scores, score_name="s")
    assert first["scoring rate"].tolist() == regulatory.ll144_summary(one, scores=scores)["scoring rate"].tolist()
    assert second["scoring rate"].tolist() == regulatory.ll144_summary(other, scores=scores)["scoring rate"].tolist()
    assert first["scoring rate"].tolist() != second["scoring rate"].tolist()
    assert cached.ll144(one, VerdictSettings(0.05, 0.05, "holm"), scores=scores, score_name="t").attrs["score"] == "t"
    flipped = cached.ll144(one, VerdictSettings(0.05, 0.05, "holm"), scores=-scores, score_name="s")
    assert flipped["scoring rate"].tolist() == regulatory.ll144_summary(one, scores=-scores)["scoring rate"].tolist()
    assert "selection rate" in cached.ll144(one, VerdictSettings(0.05, 0.05, "holm"))
    assert isinstance(one.rows, RowData)
