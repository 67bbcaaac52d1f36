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


# The Upload page, with Streamlit's uploader stood in for (AppTest cannot upload a file).

def upload_page(monkeypatch, data: bytes, name: str = HR.name):  # type: ignore[no-untyped-def]
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    class File:
        file_id, size = f"{name}-{hash(data)}", len(data)

        def getvalue(self) -> bytes:
            return data

    File.name = name
    monkeypatch.setattr(st, "file_uploader", lambda label, *a, key=None, **k: File() if key == "rows-file" else None)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/1_Upload.py").run()
    assert not at.exception
    return at


def declare(at, answer: str = "benefit") -> None:  # type: ignore[no-untyped-def]
    next(r for r in at.radio if str(r.key).startswith("rows-direction")).set_value(answer).run()


def threshold_box(at):  # type: ignore[no-untyped-def]
    return next(n for n in at.number_input if n.label == "Positive when score ≥")


def page_text(at) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(e.value for kind in (at.markdown, at.caption, at.error, at.warning) for e in kind)


def test_the_hr_file_is_audited_as_decisions_alone_with_its_unknowns_counted(monkeypatch):
    from ui.uploads import DECISIONS_ONLY

    at = upload_page(monkeypatch, HR.read_bytes())
    assert at.selectbox(key="label-col").value == DECISIONS_ONLY         # preselected: no outcome column
    assert at.selectbox(key="pred-col").value == "advanced_to_interview"
    assert at.multiselect(key="group-cols").value == ["sex", "race_ethnicity"]
    assert not any(s.key == "pos-label" for s in at.selectbox)
    text = page_text(at)      # which values are read as unknown, per column, with their rows
    assert "**sex** — read as unknown: Decline to state (45 rows)" in text
    assert "**race\\_ethnicity** — read as unknown: \\(blank\\) (71 rows), Prefer not to say (9 rows)" in text
    unknown_boxes = {m.label: m.value for m in at.multiselect if "read as unknown" in m.label}
    assert unknown_boxes == {"Values of sex read as unknown": ["Decline to state"],
                             "Values of race\\_ethnicity read as unknown": ["Prefer not to say"]}
    assert at.selectbox(key="pos-pred").value == "Yes"
    assert at.multiselect(key="cand-pred-cols").disabled and at.multiselect(key="prob-cols").disabled
    at.multiselect(key="group-cols").set_value(["race_ethnicity"]).run()
    declare(at)
    at.button(key="use-rows").click().run()
    assert not at.exception and not at.error
    audit = at.session_state["audit"]
    assert audit.has_outcomes is False and audit.unknown == ("unknown",)
    assert audit.cms["unknown"].n == 80 and audit.total().n == 2400
    rates = audit.selection_rates()
    assert rates["Hispanic or Latino"] == 0.23 and rates["White"] == 0.37
    assert any("71 blank, 9 'Prefer not to say'" in note for note in audit.notes)
    assert "Aggregated 2,400 decisions into 8 groups." in at.success[0].value
    assert "8 groups (1 of them an unknown category)" in at.success[0].value


def test_a_value_added_as_unknown_is_counted_as_unknown(monkeypatch):
    at = upload_page(monkeypatch, HR.read_bytes())
    at.multiselect(key="group-cols").set_value(["race_ethnicity"]).run()
    box = next(m for m in at.multiselect if m.label == "Values of race\\_ethnicity read as unknown")
    box.set_value(["Prefer not to say", "Two or more races"]).run()
    assert "Two or more races (110 rows)" in page_text(at)
    declare(at)
    at.button(key="use-rows").click().run()
    audit = at.session_state["audit"]
    assert "Two or more races" not in audit.groups and audit.cms["unknown"].n == 190


def test_a_numeric_score_is_thresholded_inside_its_range_never_read_as_positive_values(monkeypatch):
    at = upload_page(monkeypatch, HR.read_bytes())
    at.selectbox(key="pred-col").set_value("tool_score").run()
    assert not any(s.key == "pos-pred" for s in at.selectbox)            # its values are never offered
    assert threshold_box(at).value == 56                                 # the median, not 0.5
    text = page_text(at)
    assert "numeric score (11 to 97, median 56)" in text and "selects 1,231 of 2,400 (51 %)" in text
    threshold_box(at).set_value(65).run()
    assert "selects 808 of 2,400 (34 %)" in page_text(at)              # the tool's own cutoff
    declare(at)
    at.button(key="use-rows").click().run()
    audit = at.session_state["audit"]
    assert not audit.has_outcomes and audit.provenance["positive prediction"] == "score >= 65"


@pytest.mark.parametrize("cutoff, says", [(0, "selects every row"), (98, "selects no row")])
def test_a_threshold_selecting_everyone_or_no_one_is_refused_and_nothing_changes(monkeypatch, cutoff, says):
    at = upload_page(monkeypatch, HR.read_bytes())
    before = at.session_state["audit"]
    at.selectbox(key="pred-col").set_value("tool_score").run()
    threshold_box(at).set_value(cutoff).run()
    declare(at)
    assert says in at.error[0].value and "range from 11 to 97" in at.error[0].value
    assert at.button(key="use-rows").disabled                           # asked again before anything is computed
    assert at.session_state["audit"] is before
    from fairness_core.io import DataValidationError, audit_from_decisions

    with pytest.raises(DataValidationError, match=says):                 # and the library refuses it too
        audit_from_decisions(hr_rows(), "tool_score", ["sex"], threshold=cutoff, positive_is="benefit")


def test_the_decision_as_its_own_label_is_refused_pointing_to_decisions_alone(monkeypatch):
    at = upload_page(monkeypatch, HR.read_bytes())
    before = at.session_state["audit"]
    at.selectbox(key="label-col").set_value("advanced_to_interview").run()
    assert "a decision cannot be its own truth" in at.warning[0].value
    declare(at)
    at.button(key="use-rows").click().run()
    assert at.session_state["audit"] is before
    assert "audit the decisions alone" in at.error[0].value

    copied = hr_rows().assign(hired=lambda d: d["advanced_to_interview"])   # a label equal to it row for row
    at = upload_page(monkeypatch, copied.to_csv(index=False).encode(), "copied.csv")
    assert at.selectbox(key="label-col").value == "hired"
    at.multiselect(key="group-cols").set_value(["sex"]).run()
    declare(at)
    at.button(key="use-rows").click().run()
    assert "in every one of the 2,400 rows" in at.error[0].value and "audit the decisions alone" in at.error[0].value


def test_with_outcomes_a_blank_group_value_is_refused_unless_counted_as_unknown(monkeypatch):
    import numpy as np

    rng = np.random.default_rng(1)
    rows = hr_rows().assign(performed_well=rng.choice(["yes", "no"], 2400))
    at = upload_page(monkeypatch, rows.to_csv(index=False).encode(), "outcomes.csv")
    before = at.session_state["audit"]
    at.selectbox(key="label-col").set_value("performed_well").run()
    at.multiselect(key="group-cols").set_value(["race_ethnicity"]).run()
    assert "71 blank rows: refused unless counted as unknown" in page_text(at)
    declare(at)
    at.button(key="use-rows").click().run()
    assert at.session_state["audit"] is before
    assert "missing group value in 71 row(s)" in at.error[0].value.replace("\\", "")
    next(c for c in at.checkbox if c.label == "Count blank group values as unknown").check().run()
    declare(at)
    at.button(key="use-rows").click().run()
    assert not at.error
    audit = at.session_state["audit"]
    assert audit.has_outcomes and audit.unknown == ("unknown",) and audit.cms["unknown"].n == 80


def test_a_score_with_a_bad_value_is_thresholded_from_its_median_and_the_bad_row_named(monkeypatch):
    rows = hr_rows()
    rows.loc[4, "tool_score"] = "oops"
    at = upload_page(monkeypatch, rows.to_csv(index=False).encode(), "bad_score.csv")
    before = at.session_state["audit"]
    at.selectbox(key="pred-col").set_value("tool_score").run()
    at.toggle(key="use-threshold").set_value(True).run()
    assert threshold_box(at).value == 56.0                               # the numbers' median, never 0.5
    declare(at)
    at.button(key="use-rows").click().run()
    assert at.session_state["audit"] is before
    assert "row 5 (file line 6), column 'tool_score': 'oops' is not a number" in at.error[0].value.replace("\\", "")
