"""The Counterfactual test page (issue 54), in AppTest: the demo in one click with the library's numbers, the variants
made from pasted texts and downloaded (JSON Lines exact, CSV neutralized), an upload of results audited, bad input
refused in the library's sentence with the file's row and nothing loaded replaced, every download's content, saving
and the read-only view on the Saved audits page; hostile group names shown as text."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairness_core import counterfactual
from fairness_core.services import counterfactual_files as files
from app_helpers import captured, plain, shown  # noqa: F401 - captured: a fixture
from test_hostile_names import LINK, STYLED, assert_shown_as_text

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGE = "pages/10_Counterfactual_Test.py"


def page(monkeypatch=None, upload: tuple[bytes, str] | None = None) -> AppTest:  # type: ignore[no-untyped-def]
    """The page in a fresh session; ``upload`` stands in for Streamlit's uploader of results (AppTest cannot
    upload a file)."""
    if upload is not None:
        import streamlit as st

        data, name = upload

        class File:
            file_id, size = f"{name}-{hash(data)}", len(data)

            def getvalue(self) -> bytes:
                return data

        File.name = name
        monkeypatch.setattr(st, "file_uploader",
                            lambda label, *a, key=None, **k: File() if key == "cf-results-file" else None)
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at




def frame(at: AppTest, column: str) -> pd.DataFrame:
    """The first table on the page with ``column`` (AppTest's tables carry no key)."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def demo_audit() -> counterfactual.PairedAudit:
    d = files.DEMO
    return counterfactual.audit(pd.read_csv(files.DEMO_RESULTS), decision=d.decision, positive_is="benefit")


def test_the_demo_loads_with_one_click_and_the_answer_is_the_librarys(captured):  # noqa: F811
    at = page()
    assert "Load the model's results (step 2), or the synthetic demo" in shown(at)
    at.button(key="cf-demo").click().run()
    assert not at.exception and not at.error
    pairs = demo_audit().pairs()
    row = pairs[(pairs.group_i == "White male") & (pairs.group_j == "Black male")].iloc[0]
    text = shown(at)
    assert text.count("The answer.") == 1
    material = int((pairs["verdict"] == "material difference").sum())
    assert f"materially in {material} of 6 pairs" in text       # the 4 real groups' pairs, no null swap among them
    assert "15.8 % (White male)" in text     # White male's own null swap's flip rate, read from the library
    tiles = {m.label: m.value for m in at.metric}
    assert tiles["Material difference"] == str(material)
    assert tiles["Inconclusive"] == str(int((pairs["verdict"] == "inconclusive").sum()))
    reading = frame(at, "only i / only j")
    wm = reading[reading["pair"] == "White male vs Black male"].iloc[0]
    assert wm["difference (i − j)"] == f"+{row.difference * 100:.1f} pp" and wm["only i / only j"] == "78 / 5"
    assert wm["verdict"] == row.verdict == "material difference"
    assert len(at.get("plotly_chart")) == 3             # discordance, forest, rates
    # every table's download is the library's numbers
    got = pd.read_csv(io.BytesIO(captured["counterfactual_pairs.csv"]()))
    np.testing.assert_allclose(got["difference_ci_low"], pairs["difference_ci_low"], rtol=1e-12)
    assert got["only_i"].tolist() == pairs["only_i"].tolist()
    groups = pd.read_csv(io.BytesIO(captured["counterfactual_groups.csv"]()))
    assert groups["selected"].tolist() == demo_audit().by_group()["selected"].tolist()
    discordance = pd.read_csv(io.BytesIO(captured["counterfactual_discordance.csv"]()), index_col=0)
    assert discordance.loc["White male", "Black male"] == 78 and discordance.loc["Black male", "White male"] == 5
    report = json.loads(captured["counterfactual_test_report.json"]())
    assert report["summary"]["verdicts"]["material difference"] == material
    with zipfile.ZipFile(io.BytesIO(captured["counterfactual_test_tables.zip"]())) as z:
        assert {"pairs.csv", "groups.csv", "discordance.csv", "omnibus.csv"} <= set(z.namelist())
    assert "<h1>Counterfactual test report</h1>" in captured["counterfactual_test_report.html"]()


def test_the_tolerance_and_alpha_change_the_verdicts_as_the_library_does():
    at = page()
    at.button(key="cf-demo").click().run()
    at.slider(key="cf-tol").set_value(20.0).run()
    at.select_slider(key="cf-alpha").set_value(0.01).run()
    pairs = demo_audit().pairs(tolerance=0.20, alpha=0.01)
    tiles = {m.label: m.value for m in at.metric}
    for verdict in ("material difference", "materiality unclear", "no material difference detected", "inconclusive"):
        assert tiles[verdict.capitalize()] == str(int((pairs["verdict"] == verdict).sum())), verdict


def test_variants_made_from_pasted_texts_download_exact_and_neutralized(captured):  # noqa: F811
    at = page()
    at.text_area(key="cf-base-paste").set_value("=HYPERLINK(x) Allison led\n---\nAllison's team grew").run()
    at.button(key="cf-make").click().run()
    assert not at.exception and not at.error
    jsonl = [json.loads(line) for line in captured["counterfactual_variants.jsonl"]().decode().splitlines()]
    groups = list(counterfactual.example_swaps().columns)
    want = files.make_variants(pd.DataFrame({"text": ["=HYPERLINK(x) Allison led", "Allison's team grew"]}), "text",
                               counterfactual.example_swaps(), null_swap_of=groups)[0]
    assert [r["text"] for r in jsonl] == want["text"].tolist()       # exact, the formula included
    assert jsonl[1]["text"] == "=HYPERLINK(x) Aisha led" and jsonl[9]["text"] == "Aisha's team grew"
    csv = pd.read_csv(io.BytesIO(captured["counterfactual_variants.csv"]()))
    assert csv["text"][1] == "'=HYPERLINK(x) Aisha led"                 # neutralized for spreadsheets
    assert csv["group"].tolist() == want["group"].tolist()
    assert "16 variants: 2 base texts × 8 groups (4 groups and a null swap of each)." in shown(at)
    assert {f"{g} (null swap)" for g in groups} <= set(csv["group"])


def test_a_bad_swap_table_is_refused_in_the_librarys_sentence_and_keeps_the_variants():
    at = page()
    at.button(key="cf-make").click().run()
    before = at.session_state["cf-variants"][0]
    at.radio(key="cf-swaps-how").set_value(at.radio(key="cf-swaps-how").options[1]).run()   # paste
    at.text_area(key="cf-swaps-paste").set_value("F,M\nEmily,Greg\nAnne,\n").run()
    at.button(key="cf-make").click().run()
    assert not at.exception
    assert "swaps: column 'M', row 2 (file line 3) is empty" in plain(at.error[0].value)
    pd.testing.assert_frame_equal(at.session_state["cf-variants"][0], before)


def test_uploaded_results_are_audited_and_bad_ones_change_nothing(monkeypatch):
    rows = pd.read_csv(files.DEMO_RESULTS)
    rows = rows[rows["group"].isin(["White male", "Black male", "White male (null swap)"])].copy()
    rows.loc[rows.index[5], "advanced"] = None              # a variant the model failed on
    at = page(monkeypatch, (rows.to_csv(index=False).encode(), "screening.csv"))
    assert at.selectbox(key="cf-col-decision").value == "advanced"
    assert "(found by name, “X (null swap)”): 1 — each the baseline of its own group" in shown(at)
    at.radio(key="cf-direction").set_value("benefit").run()
    at.button(key="cf-audit").click().run()
    assert not at.exception and not at.error
    loaded = at.session_state["cf-loaded"]
    want = counterfactual.audit(rows, decision="advanced", positive_is="benefit")
    assert list(want.pairs()["group_i"]) == ["White male"]          # one pair: the null swap is its baseline
    pd.testing.assert_frame_equal(loaded.audit.pairs(), want.pairs())
    assert loaded.audit.incomplete == 1 and "1 incomplete" in shown(at)
    # a third decision value: the library's sentence with the file's row; the audit loaded stays
    bad = rows.copy()
    bad.loc[bad.index[7], "advanced"] = "Maybe"
    at2 = page(monkeypatch, (bad.to_csv(index=False).encode(), "bad.csv"))
    at2.session_state["cf-loaded"] = loaded
    at2.run()
    at2.button(key="cf-audit").click().run()
    assert not at2.exception
    assert "column 'advanced', row 8 (file line 9): 'Maybe' is not a decision" in plain(at2.error[0].value)
    assert at2.session_state["cf-loaded"] is loaded


def test_scores_are_audited_with_a_tolerance_in_their_units(monkeypatch):
    rows = pd.read_csv(files.DEMO_RESULTS)
    at = page(monkeypatch, (rows.to_csv(index=False).encode(), "scores.csv"))
    at.radio(key="cf-kind").set_value("score").run()
    assert at.selectbox(key="cf-col-score").value == "score"
    at.button(key="cf-audit").click().run()
    assert not at.exception and not at.error
    at.number_input(key="cf-tol-score").set_value(3.0).run()
    pairs = counterfactual.audit(rows, score="score").pairs(tolerance=3.0)
    tiles = {m.label: m.value for m in at.metric}
    assert tiles["Material difference"] == str(int((pairs["verdict"] == "material difference").sum()))
    assert len(at.get("plotly_chart")) == 2             # no discordance matrix for scores


def test_hostile_group_names_are_shown_as_text(monkeypatch):
    rows = pd.DataFrame({"case_id": np.repeat(np.arange(30), 2), "group": [LINK, STYLED] * 30,
                         "decision": np.tile([1, 0], 30)})
    at = page(monkeypatch, (rows.to_csv(index=False).encode(), "hostile.csv"))
    at.radio(key="cf-direction").set_value("benefit").run()
    at.button(key="cf-audit").click().run()
    assert_shown_as_text(at, "counterfactual page")
    assert any("evil.example" in plain(str(e.value)) for e in at.markdown)   # the names reach the page, as text


def test_a_saved_test_opens_read_only_on_the_saved_audits_page(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIRNESS_AUDIT_STORE", f"sqlite:///{tmp_path / 'audits.db'}")
    at = page()
    at.button(key="cf-demo").click().run()
    at.text_input(key="cf-save-name").input("screener <b>Q1</b>")
    at.button(key="FormSubmitter:cf-save-Save this audit").click().run()
    assert not at.exception and not at.error
    from fairness_core.store import AuditStore

    listed = AuditStore(f"sqlite:///{tmp_path / 'audits.db'}").list()
    assert listed[["kind", "n", "groups"]].values.tolist() == [["paired", 400, 8]]
    view = AppTest.from_file(APP, default_timeout=120)
    view.query_params["audit"] = listed["id"][0]
    view.run()
    view.switch_page("pages/8_Saved_Audits.py").run()
    assert not view.exception, view.exception
    text = shown(view)
    assert "counterfactual test · 8 groups · 400 cases" in text and "never the texts or case ids" in text
    assert "tolerance ±5 percentage points" in text
    reading = frame(view, "only i / only j")
    assert (reading["verdict"] == "material difference").sum() == (demo_audit().pairs()["verdict"]
                                                                  == "material difference").sum()
    assert "open-in-workbench" not in [b.key for b in view.button]   # read-only: the pages audit yes/no decisions


def test_the_variants_made_after_the_demo_say_what_they_are_and_why_they_differ():
    """The newcomer's finding: "Make the variants" after the demo made 15 (3 texts × 5 groups) and nothing said why
    they are not the demo's 400 × 8. Now the demo's 8 groups (every group with its null swap) and one sentence."""
    at = page()
    at.button(key="cf-demo").click().run()
    at.button(key="cf-make").click().run()
    assert not at.exception and not at.error
    v = at.session_state["cf-variants"][0]
    demo = pd.read_csv(files.DEMO_RESULTS)
    assert set(v["group"]) == set(demo["group"]) and len(v) == len(files.DEMO_BASE) * 8 == 24
    text = shown(at)
    assert "24 variants: 3 base texts × 8 groups (4 groups and a null swap of each). They are not the loaded " \
           "demo's 400 × 8: the demo's résumés are synthetic numbers with no texts" in text


def test_every_interval_on_the_page_is_at_one_level():
    """The newcomer's finding: the baseline paragraph said "95 % interval" beside 99.8 % everywhere else."""
    from fairness_core.wording.levels import level_text

    at = page()
    at.button(key="cf-demo").click().run()
    said = level_text(float(demo_audit().pairs()["level"].iloc[0]))
    text = shown(at)
    found = set(re.findall(r"(\d+(?:\.\d+)?) % (?:interval|adjusted)", text))
    assert found == {said.removesuffix(" %")} and said != "95 %", found
    assert f"Every interval on this page and in the report is at one level, Holm-adjusted {said}" in text
