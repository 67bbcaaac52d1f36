"""The Scores view (ui/scores.py) and the report's Scores section: COMPAS shows Northpointe's calibration and
ProPublica's error rates side by side with the theorem's sentence, un-flipped as recorded; a bad score is named and
nothing is computed; names from uploads are shown as typed."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from fairness_core import datasets
from fairness_core.presentation.scores_section import report_section
from fairness_core.scores_report import matching_threshold, score_analysis

SCRIPT = """
import numpy as np, streamlit as st
from fairness_core import datasets
from ui import scores as view
audit = datasets.load_demo("compas_race")
c = datasets.load_candidates("compas")
given = {k: np.asarray(v, dtype=object) for k, v in c.scores.items()}
if st.session_state.get("spoil"):
    given["COMPAS decile score"][6] = "abc"
out = view.render(audit, given)
st.session_state["shown"] = None if out is None else (out.threshold, out.at_threshold.to_dict("list"))
"""


def run(spoil: bool = False) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=60)
    at.session_state["spoil"] = spoil
    at.run()
    assert not at.exception, at.exception
    return at


def test_compas_shows_calibration_and_error_rates_side_by_side_with_the_theorem() -> None:
    at = run()
    reading = at.markdown[0].value
    assert "calibrated within groups" in reading.lower() and "false\\-positive rate African\\-American 42\\.3 %" in reading
    assert "cannot also give the groups equal false\\-positive and equal false\\-negative rates" in reading
    assert "Kleinberg" in reading and "Chouldechova" in reading
    assert any("un\\-flipped" in c.value for c in at.caption)       # shown as recorded: decile, reoffence rate
    assert any("reproduces the audited decisions row for row" in c.value for c in at.caption)
    threshold, rates = at.session_state["shown"]
    assert threshold == 5.0                                          # COMPAS's "medium or high risk"
    audit = datasets.load_demo("compas_race")
    black = np.asarray(audit.rows.groups) == "African-American"
    flagged, reoffended = ~np.asarray(audit.rows.y_pred)[black], ~np.asarray(audit.rows.y)[black]
    assert rates["fpr"][0] == (flagged & ~reoffended).sum() / (~reoffended).sum()   # ProPublica's false positives
    assert len(at.get("download_button")) >= 9                        # every table and figure


def test_a_score_with_text_is_named_and_nothing_is_computed() -> None:
    at = run(spoil=True)
    assert at.session_state["shown"] is None
    assert "score column 'COMPAS decile score'\\: row 7 holds 'abc', not a number" in at.error[0].value
    assert not at.get("plotly_chart")


def test_report_section_escapes_names_and_gives_every_table_as_json() -> None:
    rng = np.random.default_rng(4)
    g = rng.choice(["<b>a</b>", "b & c"], 400)
    p = rng.beta(np.where(g == "b & c", 2, 4), 4)
    analysis = score_analysis(rng.random(400) < p, p, g, 0.5, "risk <i>v2</i>")
    fragment, data = report_section(analysis)
    assert "<b>a</b>" not in fragment and "&lt;b&gt;a&lt;/b&gt;" in fragment and "risk &lt;i&gt;v2&lt;/i&gt;" in fragment
    assert set(data["tables"]) == set(analysis.tables()) and json.dumps(data)
    assert data["tables"]["AUC by group"][0]["group"] == "<b>a</b>"


def test_reading_says_inconclusive_when_groups_are_too_small_to_tell() -> None:
    rng = np.random.default_rng(0)
    g = np.repeat(["a", "b"], 20)
    p = rng.random(40)
    analysis = score_analysis(rng.random(40) < p, p, g, 0.5)
    assert "Calibration within groups: inconclusive" in analysis.reading
    assert "Not calibrated" not in analysis.reading and "Unequal error rates" not in analysis.reading


def test_matching_threshold_reproduces_compas_decisions() -> None:
    c = datasets.load_candidates("compas")
    decile = -np.asarray(c.scores["COMPAS decile score"])
    assert matching_threshold(decile, decile >= 8) == (8.0, True)
    assert isinstance(pd.DataFrame(score_analysis(~np.asarray(c.y), decile, c.groups["race"], 8).at_threshold), pd.DataFrame)


def test_figures_escape_group_names_and_draw_the_diagonal_only_for_probabilities() -> None:
    from fairness_core import plots
    rng = np.random.default_rng(1)
    g = rng.choice(["<a href='x'>A</a>", "50% B"], 300)
    p = rng.random(300)
    analysis = score_analysis(rng.random(300) < p, p, g, 0.5)
    fig = plots.reliability_diagram(analysis.calibration)
    assert any("calibrated" in t.name for t in fig.data)
    assert all("<a href" not in t.name for t in fig.data) and any("&lt;a href" in t.name for t in fig.data)
    deciles = score_analysis(rng.random(300) < p, np.ceil(10 * p), g, 5)
    assert not any("calibrated" in t.name for t in plots.reliability_diagram(deciles.calibration).data)
    roc = plots.roc_curves(analysis.sweep.by_group, analysis.auc.by_group)
    assert any("AUC 0." in t.name and "50&#37; B" in t.name for t in roc.data)
    sweep = plots.threshold_sweep_chart(analysis.sweep.by_group, analysis.sweep.summary, 0.5)
    assert {t.name for t in sweep.data} >= {"lowest impact ratio (di_min)", "largest |OFI| (ofi_max_abs)"}


def test_the_bias_audit_page_has_a_scores_tab_and_the_report_follows_it():
    """COMPAS on the Bias Audit page: the Scores tab shows Northpointe's calibration and ProPublica's error rates
    with the theorem's sentence, and the downloaded report carries the same section."""
    from streamlit.testing.v1 import AppTest

    from app_helpers import APP
    from fairness_core import datasets, report

    at = AppTest.from_file(APP, default_timeout=180)
    at.session_state["view"] = "Scores"
    at.run()
    at.switch_page("pages/2_Bias_Audit.py")
    at.run()
    assert not at.exception
    assert "Scores" in [t.label for t in at.tabs]
    text = " ".join(m.value for m in at.markdown)
    assert "Calibrated within groups" in text and "Unequal error rates" in text and "Kleinberg" in text
    fingerprint, analysis = at.session_state["score-analysis"]
    assert fingerprint == datasets.load_demo("compas_race").fingerprint and analysis.threshold == 5
    page = report.build(datasets.load_demo("compas_race"), score_analysis=analysis).html()
    assert "Scores: COMPAS decile score" in page and "Inherent Trade-Offs" in page
