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
    assert "Largest |OFI| (before → after)" in [m.label for m in at.metric]


def compas_held_out(attribute: str = "race"):  # type: ignore[no-untyped-def]
    """The COMPAS demo as the page splits it, from the library alone: labels, groups, decisions and scores of
    the held-out rows, and the fitting rows' mask."""
    import numpy as np

    from fairness_core import datasets, mitigation
    from fairness_core.io import INTERSECTION_SEP
    from ui import compare as cmp

    c = datasets.load_candidates("compas")
    columns = [c.groups[a].astype(str).to_numpy() for a in cmp.ATTRIBUTES[attribute]]
    groups = np.array([INTERSECTION_SEP.join(p) for p in zip(*columns)], dtype=object)
    y = np.asarray(c.y, bool)
    fit = mitigation.split_rows(groups, y, cmp.FIT_SHARE, cmp.SEED)
    return y, groups, {k: np.asarray(v, bool) for k, v in c.predictions.items()}, dict(c.scores), fit


def test_two_models_are_paired_and_the_mitigated_model_becomes_a_candidate():
    from fairness_core import mitigation
    from fairness_core.compare import Comparison

    y, g, predictions, scores, fit = compas_held_out()
    h = ~fit
    at = opened()
    names = at.selectbox(key="cmp-a").options
    assert names == list(predictions)
    at.selectbox(key="cmp-b").set_value(names[2]).run()
    want = Comparison.from_predictions(y[h], {names[0]: predictions[names[0]][h], names[2]: predictions[names[2]][h]},
                                       {"group": g[h]}, positive_is="benefit").paired(names[0], names[2], 0.05, "holm")
    k = int(want["significant"].sum())
    assert len(want) == 21 and 0 < k < 21
    assert f"{k} of 21 differences are significant after Holm adjustment" in texts(at)
    shown = next(d.value for d in at.dataframe if "p_adjusted" in d.value.columns)
    assert shown["what"].tolist() == want["what"].tolist() and shown["significant"].tolist() == want["significant"].tolist()
    for column in ("difference", "ci_low", "ci_high", "p_adjusted"):
        assert shown[column].to_numpy() == pytest.approx(want[column].to_numpy())

    at.selectbox(key="mit-target").set_value("ofi").run()
    score = list(scores)[0]
    args = (scores[score][fit], y[fit], g[fit])
    rules = [mitigation.fit_thresholds(*args, target="none", objective="accuracy"),
             mitigation.fit_thresholds(*args, target="ofi", tolerance=0.05, objective="accuracy")]
    held = Comparison.from_predictions(y[h], {str(i): r.predict(scores[score][h], g[h]).astype(bool)
                                              for i, r in enumerate(rules)}, {"group": g[h]}, positive_is="benefit")
    before, after = held.summary()["max_abs_ofi"]
    assert after < before                                 # per-group thresholds narrow the largest gap
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Largest |OFI| (before → after)"] == f"{before:.3f} → {after:.3f}"
    assert "On the held-out rows the largest |OFI| goes from" in texts(at)
    table = next(d.value for d in at.dataframe if "group threshold" in d.value.columns)
    assert len(table) == 6 and table["group threshold"].notna().all()

    at.button(key="mit-add").click().run()
    assert not at.exception, at.exception
    options = at.selectbox(key="cmp-a").options
    assert len(options) == 4 and "per-group thresholds" in options[3]
    assert len(at.dataframe[0].value) == 4   # a row of the summary
    assert "In the comparison above" in texts(at)


def test_the_tables_pareto_column_is_the_charts_front_for_the_measure_picked():
    """The table's "Pareto front" was always by accuracy while the chart used the measure picked: on COMPAS with a
    false negative costing 10 the chart put the second model on the front and the table did not."""
    import json

    at = opened()
    at.radio(key="cmp-perf").set_value("cost").run()
    at.number_input(key="cmp-cost-fn").set_value(10.0).run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert "expected cost [CI]" in table.columns
    assert table["Pareto front"].tolist() == [False, True, True]
    spec = json.loads(next(c for c in at.get("plotly_chart") if "Which model?" in c.proto.spec).proto.spec)
    drawn = {name for t in spec["data"] if t.get("name") == "on the Pareto front" for name in t["text"]}
    assert drawn == set(table.loc[table["Pareto front"], "model"])
    at.radio(key="cmp-perf").set_value("accuracy").run()       # by accuracy only the third is on the front
    assert at.dataframe[0].value["Pareto front"].tolist() == [False, False, True]


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
    assert "Largest |OFI| (before → after)" in [m.label for m in at.metric]


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


def test_equalized_odds_shows_its_own_gaps_both_rules_side_by_side_and_the_apply_command():
    """Issue 44: the target's own measures before → after (TPR and FPR gaps for equalized odds) with intervals, the
    deterministic and randomized rules' numbers side by side with a sentence on what randomizing means, cross-fitting
    measuring every row, and a downloadable rule that the apply command reads."""
    import numpy as np

    from fairness_core import mitigation
    from ui import compare as cmp

    at = opened()
    at.selectbox(key="mit-target").set_value("equalized_odds").run()
    at.slider(key="mit-tol").set_value(0.02).run()
    assert not at.exception, at.exception
    labels = [m.label for m in at.metric]
    assert "TPR gap (before → after)" in labels and "FPR gap (before → after)" in labels
    assert "Before → after, held-out" in texts(at)
    assert all("[" in (m.help or "") for m in at.metric if "gap" in m.label)   # each with its interval
    table = next(d.value for d in at.dataframe if "after: randomized rule" in d.value.columns)
    assert list(table["measure"]) == ["TPR gap", "FPR gap", "accuracy"]
    page = texts(at)
    assert "two applicants with the same score and group may get different decisions" in page
    assert any("python -m fairness_core apply thresholds.json" in c.value for c in at.code)
    assert ("the rule's score is −(COMPAS decile score): higher = more likely not a recidivist / low risk, so a "
            "threshold of −t means COMPAS decile score ≤ t; apply negates the file's COMPAS decile score column itself"
            in page)   # issue 51: the caption says the rule file holds the negation

    at.radio(key="mit-randomize").set_value(True).run()
    at.radio(key="mit-estimate").set_value("cross-fit").run()
    assert not at.exception, at.exception
    assert "Before → after, cross-fitted" in texts(at) and "Cross-fitted over all rows" in texts(at)
    rows = cmp.demo_rows("compas", "race")
    assert f"measured on all {len(rows.y):,} rows" in texts(at)
    settings = cmp.Settings("COMPAS decile score", "equalized_odds", 0.02, "accuracy", 1.0, 1.0, True)
    rule = cmp.fit_all(rows, rows.key, settings)
    held = cmp.before_after(rows, rows.key, settings, 0.05, 0.05, "holm", "cross-fit")
    text = cmp.thresholds_json(rows, settings, rule, "race", held, "cross-fit")
    back = mitigation.ThresholdRule.from_json(text)
    assert back.randomized and back.mixtures == rule.mixtures
    s = rows.scores["COMPAS decile score"]
    assert (back.predict(s, rows.row_groups, random_state=1) == rule.predict(s, rows.row_groups, random_state=1)).all()
    assert np.isfinite(held["accuracy"]).all()
