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
    assert unknown_boxes == {"Values of sex read as unknown": ["Decline to state"],     # sex has no blank value
                             "Values of race\\_ethnicity read as unknown, besides its 71 blank rows":
                                 ["Prefer not to say"]}
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
    box = next(m for m in at.multiselect if m.label.startswith("Values of race\\_ethnicity read as unknown"))
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


# Issue 52: the tool's score beside its decisions, a guess that passes over a decision says why at once, and the
# Upload page's words (the opening, a column name too long, the unknowns box, the file named when the page reopens).

def test_a_decisions_only_upload_keeps_the_tools_score_for_the_ll144_scoring_rate(monkeypatch):
    from fairness_core import regulatory

    at = upload_page(monkeypatch, HR.read_bytes())
    scores = at.multiselect(key="cand-score-cols")
    assert not scores.disabled and "tool_score" in scores.options          # enabled for decisions alone
    assert at.multiselect(key="cand-pred-cols").disabled                    # other models still need outcomes
    assert any(e.label == "Optional: the tool's score (Local Law 144 scoring rate)" for e in at.expander)
    scores.set_value(["tool_score"]).run()
    declare(at)
    at.button(key="use-rows").click().run()
    assert not at.exception and not at.error
    assert "with the scoring rate of 'tool\\_score' for Local Law 144" in at.success[0].value
    audit = at.session_state["audit"]
    assert not audit.has_outcomes and list(audit.rows.scores) == ["tool_score"]
    df = hr_rows()
    score = pd.to_numeric(df["tool_score"])
    assert audit.rows.scores["tool_score"].tolist() == score.tolist()     # row for row, as uploaded
    # the law's scoring rate, computed here by pandas: the share of each sex scoring above the whole sample's median
    sex = df["sex"].where(df["sex"] != "Decline to state", "unknown")
    above = (score > score.median()).groupby(sex).mean()
    summary = regulatory.ll144_summary(audit.marginal("sex"), scores=audit.rows.scores["tool_score"])
    got = summary.set_index("category")["scoring rate"]
    assert got.to_dict() == pytest.approx(above.to_dict(), abs=1e-12)
    at.switch_page("pages/2_Bias_Audit.py").run()                            # the page offers it
    assert not at.exception
    assert at.radio(key="ll144-rate").options == ["selection rate (decisions)", "scoring rate (tool\\_score)"]


def test_a_decision_column_with_a_third_value_is_passed_over_with_its_reason_at_once(monkeypatch):
    rows = hr_rows()
    rows.loc[9, "advanced_to_interview"] = "Maybe"
    guess = guess_columns(rows)
    assert guess.prediction == "tool_score"
    (said,) = guess.warnings
    assert said.startswith("'advanced_to_interview' is named like a decision but cannot be the prediction as it is — "
                           "row 10 (file line 11), column 'advanced_to_interview': 'Maybe' is a third distinct value")
    assert "the prediction guessed instead is 'tool_score' (a numeric score, cut at a threshold)" in said
    assert "advanced_to_interview" not in guess.groups                      # never a group either
    assert guess_columns(hr_rows()).warnings == ()                         # the clean file: nothing to say

    at = upload_page(monkeypatch, rows.to_csv(index=False).encode(), "maybe.csv")
    assert at.selectbox(key="pred-col").value == "tool_score"
    (warning,) = at.warning                                                 # on the first look, not after a pick
    text = warning.value.replace("\\", "")
    assert "row 10 (file line 11), column 'advanced_to_interview': 'Maybe' is a third distinct value" in text
    assert "the prediction guessed instead is 'tool_score'" in text


def test_a_decision_column_with_one_value_is_passed_over_with_its_reason():
    df = pd.DataFrame({"sex": list("FMFMFMFM"), "shortlisted": ["No"] * 8,
                       "tool_score": ["12", "40", "55", "71", "30", "90", "64", "18"]})
    (said,) = guess_columns(df).warnings
    assert "'shortlisted' is named like a decision" in said and "it holds one value only, 'No'" in said
    free_text = df.assign(shortlisted=[f"note {k}" for k in range(8)])     # a different value per row: no decision
    assert guess_columns(free_text).warnings == ()


def test_a_column_name_too_long_is_named_by_its_position_and_first_characters(monkeypatch):
    from fairness_core.io import DataValidationError

    name = "*x*<b>" + "n" * 4994
    data = f"sex,{name},advanced\nF,1,Yes\nM,2,No\n".encode()
    with pytest.raises(DataValidationError) as exc:
        read_table(data, "hr.csv")
    assert str(exc.value) == ("hr.csv: column 2's name has 5,000 characters; the limit is 200. It begins "
                              f"{name[:40]!r}…")
    at = upload_page(monkeypatch, data, "hr.csv")
    shown = at.error[0].value
    assert "column 2's name has 5,000 characters" in shown and "\\*x\\*\\<b\\>nnnn" in shown   # escaped, as typed
    assert "n" * 41 not in shown                                                                # not the whole name


def test_the_page_opens_with_all_three_ways_in(monkeypatch):
    at = upload_page(monkeypatch, HR.read_bytes())
    opening = at.markdown[0].value
    for way in ("**per-group confusion matrices**", "**row-level predictions**", "**decisions alone**"):
        assert way in opening, way
    assert "Audit a classifier from its" not in opening


def test_the_unknowns_box_and_the_line_below_agree_on_blanks(monkeypatch):
    at = upload_page(monkeypatch, HR.read_bytes())
    at.multiselect(key="group-cols").set_value(["race_ethnicity"]).run()
    box = next(m for m in at.multiselect if m.label.startswith("Values of race\\_ethnicity read as unknown"))
    box.set_value([]).run()                                                 # no value chosen: the blanks still are
    box = next(m for m in at.multiselect if m.label.startswith("Values of race\\_ethnicity read as unknown"))
    blanks = int(hr_rows()["race_ethnicity"].isna().sum())
    assert box.label == f"Values of race\\_ethnicity read as unknown, besides its {blanks} blank rows"
    assert box.placeholder == "no other value" and box.value == []
    assert f"read as unknown: \\(blank\\) ({blanks} rows)" in page_text(at)
    declare(at)
    at.button(key="use-rows").click().run()
    assert at.session_state["audit"].cms["unknown"].n == blanks            # what the box and the line said


def test_returning_to_upload_names_the_loaded_file(monkeypatch):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    data, held = HR.read_bytes(), {"file": True}

    class File:
        name, file_id, size = "hr.csv", "hr-1", len(HR.read_bytes())

        def getvalue(self) -> bytes:
            return data

    monkeypatch.setattr(st, "file_uploader", lambda label, *a, key=None, **k:
                        File() if key == "rows-file" and held["file"] else None)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/1_Upload.py").run()
    assert not any(i.value.startswith("**Loaded:") for i in at.info)       # the demo: no file to name
    declare(at)
    at.button(key="use-rows").click().run()
    at.switch_page("pages/2_Bias_Audit.py").run()
    held["file"] = False                                                    # the browser forgot the file
    at.switch_page("pages/1_Upload.py").run()
    assert not at.exception
    (note,) = [i.value for i in at.info if i.value.startswith("**Loaded:")]
    assert note.startswith("**Loaded: hr\\.csv, 2,400 rows** — every page audits these data.")
    assert "*Row-level predictions*" in note and "upload again only to change the data" in note
    at.button(key="load-demo").click().run()                                # other data: the file is not named
    assert at.session_state["demo_key"] is not None
    assert not any(i.value.startswith("**Loaded:") for i in at.info)
