"""Issue 52, item 6 outside the Upload page: "materiality unclear" and the adjusted interval's label ("Holm-adjusted
99.9 % CI") come with a plain-words gloss where an HR reader meets them (each decisions-only answer box and the
verdict tables' column help); on Compare and Mitigate the same number's two intervals are labelled (the simultaneous
interval across all pairs and the number's own bootstrap interval); an unchanged tile shows no arrow."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairness_core import datasets
from fairness_core.audit import Audit
from fairness_core.wording.levels import interval_label
from fairness_core.wording.glossary import MATERIALITY_UNCLEAR, interval_gloss, selection_terms
from ui.compare import delta_text

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def plain(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown)


def three_groups() -> Audit:
    return Audit.from_decisions([1] * 92 + [0] * 308 + [1] * 407 + [0] * 693 + [1] * 50 + [0] * 50,
                                ["a"] * 400 + ["b"] * 1100 + ["c"] * 100, positive_is="benefit")


@pytest.mark.parametrize("adjust, words", [("holm", "3 pairs are compared at once (Holm's adjustment), so that the "
                                                    "chance of even one false alarm among them stays at 5%"),
                                           ("bh", "(Benjamini–Hochberg's adjustment), so that of the pairs called "
                                                  "different, at most about 5% are expected to be false alarms"),
                                           ("none", "each pair's own interval, not widened")])
def test_the_interval_gloss_quotes_the_label_and_says_what_the_adjustment_does(adjust, words):
    v = three_groups().verdicts(adjust=adjust)
    label = interval_label(v, "di")
    gloss = interval_gloss(v)
    assert gloss.startswith(f"“{label}” is the range the impact ratio lies in with ") and words in gloss
    assert selection_terms(v) == f"In plain words: {MATERIALITY_UNCLEAR} {gloss}"


def test_one_pair_has_nothing_to_adjust():
    a = Audit.from_decisions([1] * 92 + [0] * 308 + [1] * 407 + [0] * 693, ["a"] * 400 + ["b"] * 1100,
                             positive_is="benefit")
    assert interval_gloss(a.verdicts()).endswith("with a single pair there is nothing to adjust for.")


def test_every_decisions_only_answer_and_verdict_table_glosses_its_terms():
    at = AppTest.from_file(APP, default_timeout=180)
    at.session_state["audit"] = datasets.load_demo("hr_screening")
    at.session_state["demo_key"] = "hr_screening"
    at.run()
    at.switch_page("pages/2_Bias_Audit.py")
    at.run()
    assert not at.exception, at.exception
    glosses = [plain(c.value) for c in at.caption if plain(c.value).startswith("In plain words: “Materiality unclear”")]
    audit = datasets.load_demo("hr_screening")
    labels = [interval_label(audit.marginal(a).verdicts(), "di") for a in audit.attributes]
    labels.append(interval_label(audit.verdicts(), "di"))   # the intersections, at the page's default settings
    assert "Holm-adjusted 99.9 % CI" in labels   # the label the issue names
    for label in labels:   # each answer box says what its own interval's label means
        assert any(f"“{label}” is the range the impact ratio lies in" in g for g in glosses), (label, glosses)
    tables = [d for d in at.dataframe if "verdict" in d.value.columns]
    assert len(tables) == 3   # each attribute alone, then the intersections
    for table in tables:
        config = json.loads(table.proto.columns)
        (interval,) = [c for c in table.value.columns if c.startswith("impact ratio [")]
        assert config["verdict"]["help"] == MATERIALITY_UNCLEAR
        assert config[interval]["help"].startswith(f"“{interval.removeprefix('impact ratio [').removesuffix(']')}”")


def test_deltas_that_round_to_nothing_draw_no_arrow():
    assert delta_text(0, 0, 0) is None and delta_text(0.1234, 0.12341) is None
    assert delta_text(3, 1, 0) == "-2" and delta_text(0.382, 0.271) == "-0.111"
    assert delta_text(float("nan"), 0.5) is None


def test_compare_labels_its_two_intervals_and_an_unchanged_tile_has_no_arrow():
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page("pages/7_Compare_and_Mitigate.py")
    at.run()
    assert not at.exception, at.exception
    tiles = {m.label: m for m in at.metric}
    bias = tiles["Pairs with algorithmic bias"]
    before, after = bias.value.split(" → ")
    assert before == after and not bias.delta   # "0 → 0": no "↑ +0"
    ofi = tiles["Largest |OFI| (before → after)"]
    assert ofi.delta and "stratified bootstrap percentile interval" in ofi.proto.help
    sentence = next(plain(m.value) for m in at.markdown if "On the held-out rows the largest |OFI| goes from" in m.value)
    tile_before = ofi.proto.help.split("Before ")[1].split(";")[0]          # "0.382 [0.186, 0.709]"
    said_before = sentence.split("goes from ")[1].split(" with one shared")[0]   # "0.382 [0.045, 0.964]"
    assert tile_before.split()[0] == said_before.split()[0] and tile_before != said_before   # one number, two intervals
    (note,) = [plain(c.value) for c in at.caption if "Two intervals for the same numbers" in c.value]
    assert "simultaneous interval across all pairs* (95 % simultaneous (Bonferroni over pairs))" in note
    assert "bootstrap interval of each number itself* (95% stratified bootstrap percentile interval" in note
