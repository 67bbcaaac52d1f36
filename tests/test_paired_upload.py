"""Issue 54: the same results uploaded as rows are never audited as independent people without the user saying so:
the Upload page finds the case column of a counterfactual test's results, points to the paired statistics, and
computes nothing until the user declares the rows independent."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from fairness_core.validation import paired_column
from test_app_amounts import ROOT, columns, upload_page

DEMO = ROOT / "assets" / "demo_counterfactual_screening_synthetic.csv"


def test_the_case_column_of_paired_results_is_found_and_independent_rows_are_not_taken_for_it():
    demo = pd.read_csv(DEMO)
    assert paired_column(demo, "group") == "case_id"
    assert paired_column(demo, "group", exclude=["case_id"]) is None      # first names repeat within a group
    rng = np.random.default_rng(0)
    people = pd.DataFrame({"id": np.arange(400), "group": rng.choice(["a", "b"], 400),
                           "age": rng.integers(18, 70, 400), "y": rng.integers(0, 2, 400),
                           "score": rng.uniform(size=400)})
    assert paired_column(people, "group") is None                          # one row per person: nothing paired
    half = demo[demo["group"].isin(["White male", "Black male"])].drop_duplicates("case_id")
    assert paired_column(half, "group") is None                            # each case once: no pairs


def test_the_upload_page_stops_paired_rows_until_the_user_says_they_are_independent(monkeypatch):
    demo = pd.read_csv(DEMO)
    at = upload_page(monkeypatch, demo, "screening_results.csv")
    columns(at, "advanced", "advanced", ["group"])
    columns(at, at.selectbox(key="label-col").options[0], "advanced", ["group"])   # decisions alone
    warning = re.sub(r"\\(.)", r"\1", " ".join(w.value for w in at.warning))   # markdown escapes removed
    assert "These rows look paired" in warning and "'case_id'" in warning and not at.exception
    assert not any(b.key == "use-rows" for b in at.button)                 # nothing to audit from them yet
    box = next(c for c in at.checkbox if str(c.key).startswith("unpaired-"))
    box.check().run()
    assert not at.exception and box.key == "unpaired-case_id"
    assert any(b.key == "use-rows" for b in at.button)                     # the rows' own flow goes on
    assert "These rows look paired" in " ".join(w.value for w in at.warning)   # still said, now a choice made
