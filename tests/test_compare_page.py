"""AppTest of the Compare and Mitigate page (issue 26): both demos, the performance measure, two models
paired, mitigation on COMPAS, the mitigated model as a candidate, an infeasible tolerance."""

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGE = "pages/7_Compare_and_Mitigate.py"


def plain(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown)


def opened() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    return at


def texts(at: AppTest) -> str:
    return "\n".join(plain(m.value) for m in [*at.markdown, *at.caption, *at.info, *at.error, *at.warning, *at.success])


@pytest.mark.parametrize("demo", ["compas", "adult"])
def test_renders_on_each_demo_and_follows_the_performance_measure(demo):
    at = opened()
    if demo != "compas":
        at.selectbox(key="cmp-source").set_value(demo).run()
        assert not at.exception, at.exception
    page = texts(at)
    assert "every number on this page is measured on the" in page and "held-out rows" in page
    assert "Fairest by the largest |OFI|" in page and ("against" in page or "also the best" in page)
    assert "accuracy [CI]" in at.dataframe[0].value.columns
    for measure, label in (("balanced_accuracy", "balanced accuracy"), ("cost", "expected cost")):
        at.radio(key="cmp-perf").set_value(measure).run()
        assert not at.exception, at.exception
        assert f"{label} [CI]" in at.dataframe[0].value.columns
        assert f"best by {label}" in texts(at)
    assert "Largest |OFI|, held-out (before → after)" in [m.label for m in at.metric]


def test_two_models_are_paired_and_the_mitigated_model_becomes_a_candidate():
    at = opened()
    names = at.selectbox(key="cmp-a").options
    assert len(names) == 3
    at.selectbox(key="cmp-b").set_value(names[2]).run()
    page = texts(at)
    assert re.search(r"\d+ of 21 differences are significant after Holm adjustment|No difference between", page)
    assert any("p_adjusted" in d.value.columns for d in at.dataframe)

    at.selectbox(key="mit-target").set_value("ofi").run()
    metrics = {m.label: m.value for m in at.metric}
    assert all(float(v) >= 0 for v in metrics["Largest |OFI|, held-out (before → after)"].split(" → "))
    assert "On the held-out rows the largest |OFI| goes from" in texts(at)
    table = next(d.value for d in at.dataframe if "group threshold" in d.value.columns)
    assert len(table) == 6 and table["group threshold"].notna().all()

    at.button(key="mit-add").click().run()
    assert not at.exception, at.exception
    options = at.selectbox(key="cmp-a").options
    assert len(options) == 4 and "per-group thresholds" in options[3]
    assert len(at.dataframe[0].value) == 4   # a row of the summary
    assert "In the comparison above" in texts(at)


def test_an_infeasible_tolerance_is_a_message_with_the_smallest_one():
    at = opened()
    at.radio(key="cmp-groups").set_value("race & sex").run()
    at.slider(key="mit-tol").set_value(0.0).run()
    assert not at.exception, at.exception
    assert any("No thresholds meet this target" in e.value for e in at.error)
    offer = at.button(key="mit-offer")
    tol = float(offer.label.split()[-1])
    assert tol > 0
    offer.click().run()
    assert not at.exception and not at.error
    assert at.slider(key="mit-tol").value == pytest.approx(tol)
    assert "Largest |OFI|, held-out (before → after)" in [m.label for m in at.metric]


def test_the_loaded_data_is_one_candidate_and_says_a_mitigated_model_makes_the_second():
    import numpy as np

    from app_helpers import page_with_audit
    from fairness_core.io import audit_from_predictions

    rng = np.random.default_rng(0)
    y, groups = rng.integers(0, 2, 400), np.where(rng.random(400) < 0.5, "a", "b")
    at = page_with_audit(audit_from_predictions(y, np.where(rng.random(400) < 0.8, y, 1 - y), {"g": groups},
                                                positive_is="benefit", source="mine.csv"), PAGE)
    at.selectbox(key="cmp-source").set_value(at.selectbox(key="cmp-source").options[-1]).run()
    assert not at.exception, at.exception
    page = texts(at)
    assert "mine.csv" in page and "n = 400" in page
    assert "Comparison needs at least two candidates" in page and "no score to threshold" in page


def test_paired_differences_escapes_an_intersection_name_once():
    """'Black & Male' reached the chart as 'Black &amp;amp; Male' (escaped by the builder and again by
    safe_figures), so Plotly drew '&amp;'."""
    import numpy as np

    from fairness_core import plots
    from fairness_core.compare import Comparison

    y = np.arange(40) % 2
    c = Comparison.from_predictions(y, {"A": y, "B": 1 - y}, {"g": np.where(np.arange(40) < 20, "Black & Male", "c")},
                                    positive_is="benefit")
    labels = plots.paired_differences(c.paired("A", "B")).data[0].y
    assert "B of Black &amp; Male" in labels and not any("&amp;amp;" in s for s in labels)
