"""Issue 51: a rule downloaded from the Compare and Mitigate page decides as the page did. The rule file says how the
file's score was turned before fitting (COMPAS's decile negated) and the fitted range; ``apply`` turns a file of raw
scores the same way and refuses scores far outside the fitted range, never deciding them all one way; the opposite
outcome's words are composed in one place ("not not a recidivist" never)."""

from __future__ import annotations

import itertools
import json
import re
import shlex

import numpy as np
import pandas as pd
import pytest

from fairness_core import cli, datasets, io, mitigation
from fairness_core.mitigation import RuleFileError, ThresholdRule, fit_thresholds
from fairness_core.services.apply import ApplyError, decide
from fairness_core.vocabulary import opposite_outcome
from fairness_core.wording.mitigation import score_direction
from ui import compare as cmp

#: Each candidate demo's scores as the model writes them (the asset's own column), never through the library's
#: transform: COMPAS's decile (1 to 10, high = high risk) and its logistic regression, Adult's two models.
RAW = {("compas", "COMPAS decile score"): ("compas_propublica.csv.gz", "decile_score"),
       ("compas", "logistic regression"): ("compas_propublica.csv.gz", "score_logistic"),
       ("adult", "logistic regression"): ("adult_predictions.csv.gz", "score_logistic"),
       ("adult", "gradient-boosted trees"): ("adult_predictions.csv.gz", "score_boosting")}


def raw_scores(demo: str, score: str) -> np.ndarray:
    asset, column = RAW[(demo, score)]
    return pd.read_csv(datasets.ASSETS_DIR / asset)[column].to_numpy(float)


def page_rule(rows: cmp.Rows, s: cmp.Settings, attribute: str) -> tuple[ThresholdRule, str]:
    """The rule and its file as the page builds them (one split): cmp.fit, cmp.before_after, cmp.thresholds_json."""
    rule = cmp.fit(rows, rows.key, s).rule
    assert rule is not None
    held = cmp.before_after(rows, rows.key, s, 0.05, 0.05, "holm", "split")
    return rule, cmp.thresholds_json(rows, s, rule, attribute, held, "split")


def apply_as_shown(tmp_path, monkeypatch, command: str, rule_text: str, new_rows: pd.DataFrame):  # type: ignore[no-untyped-def]
    """Run the command the page shows (python -m fairness_core apply thresholds.json NEW_ROWS.csv ...) in a folder
    holding the downloaded rule and the new rows: the exit code, its output and the decisions written."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "thresholds.json").write_text(rule_text, encoding="utf-8")
    new_rows.to_csv(tmp_path / "NEW_ROWS.csv", index=False)
    argv = shlex.split(command)
    assert argv[:3] == ["python", "-m", "fairness_core"]
    code = cli.main(argv[3:])
    written = pd.read_csv(tmp_path / "decisions.csv") if (tmp_path / "decisions.csv").exists() else None
    return code, written


def decided_as_the_page(rows, s, rule, written) -> None:  # type: ignore[no-untyped-def]
    page = cmp.held_decisions(rows, s, rule)
    assert set(page["decision"]) <= {rows.positive_outcome, rows.negative_outcome}
    mine = written["decision"].to_numpy() == 1
    theirs = (page["decision"] == rows.positive_outcome).to_numpy()
    assert len(mine) == len(theirs) and (mine == theirs).all(), f"{(mine != theirs).sum()} rows decided otherwise"
    assert 0 < mine.mean() < 1   # neither all positive nor all negative


@pytest.mark.parametrize("target, randomize", [("ofi", False), ("demographic_parity", True)])
@pytest.mark.parametrize("demo, score", list(RAW))
def test_the_pages_rule_applied_to_raw_scores_decides_the_held_out_rows_as_the_page(tmp_path, monkeypatch, capsys,
                                                                                   demo, score, target, randomize):
    attribute = "race"
    rows = cmp.demo_rows(demo, attribute)
    s = cmp.Settings(score, target, 0.02 if randomize else 0.05, "accuracy", 1.0, 1.0, randomize)
    rule, text = page_rule(rows, s, attribute)
    raw = raw_scores(demo, score)
    if demo == "compas":   # the page fits on −decile; the file holds ordinary deciles
        assert rule.score_transform == "negate" and np.array_equal(rows.scores[score], -raw)
        assert score != "COMPAS decile score" or set(np.unique(raw)) == set(range(1, 11))
    else:
        assert rule.score_transform == "identity" and np.array_equal(rows.scores[score], raw)
    doc = json.loads(text)
    assert doc["score_scale"]["transform"] == rule.score_transform
    assert doc["score_scale"]["fitted_range_in_file_units"] == [raw[rows.fit].min(), raw[rows.fit].max()]
    assert doc["context"]["score_direction"] == score_direction(score, rows.transform(score), rows.positive_outcome)
    groups = datasets.load_candidates(demo).groups
    h = rows.held
    new_rows = pd.DataFrame({"id": np.flatnonzero(h), score: raw[h], "race": groups["race"].to_numpy()[h]})
    command = cmp.apply_command(s, attribute)
    assert ("--seed 0" in command) == randomize
    code, written = apply_as_shown(tmp_path, monkeypatch, command, text, new_rows)
    assert code == cli.EXIT_OK, capsys.readouterr().err
    decided_as_the_page(rows, s, rule, written)
    out = capsys.readouterr()
    assert "warning" not in out.err and "(100.0%)" not in out.out


def test_intersections_are_joined_as_the_page_joins_them(tmp_path, monkeypatch, capsys):
    rows = cmp.demo_rows("compas", "race & sex")
    s = cmp.Settings("COMPAS decile score", "demographic_parity", 0.05, "accuracy", 1.0, 1.0, False)
    rule, text = page_rule(rows, s, "race & sex")
    groups, h = datasets.load_candidates("compas").groups, rows.held
    new_rows = pd.DataFrame({"race": groups["race"].to_numpy()[h], "sex": groups["sex"].to_numpy()[h],
                             "COMPAS decile score": raw_scores("compas", "COMPAS decile score")[h]})
    command = cmp.apply_command(s, "race & sex", columns=rows.group_columns)
    assert "--group race --group sex" in command
    code, written = apply_as_shown(tmp_path, monkeypatch, command, text, new_rows)
    assert code == cli.EXIT_OK, capsys.readouterr().err
    decided_as_the_page(rows, s, rule, written)


def upload(n: int, seed: int) -> pd.DataFrame:
    """A row-level upload as the reader returns it (text cells): outcome "1" more likely with a higher score and
    higher probabilities, one model's decisions, two ensemble probabilities, a group column."""
    rng = np.random.default_rng(seed)
    group = rng.choice(["A", "B", "C"], n)
    score = np.clip(rng.normal(0.45, 0.2, n) + 0.1 * (group == "A"), 0, 1)
    y = rng.random(n) < score
    p1, p2 = (np.clip(score + rng.normal(0, 0.1, n), 0, 1) for _ in range(2))
    return pd.DataFrame({"outcome": np.where(y, "1", "0"), "group": group, "model_a": np.where(score >= 0.5, "1", "0"),
                         "score_v3": [f"{v:.4f}" for v in score], "p1": [f"{v:.3f}" for v in p1],
                         "p2": [f"{v:.3f}" for v in p2]})


@pytest.mark.parametrize("positive_is", ["benefit", "harm"])
def test_a_loaded_uploads_rule_decides_its_raw_scores_as_the_page_in_both_directions(tmp_path, monkeypatch, capsys,
                                                                                    positive_is):
    """An upload whose positive prediction is a benefit (scores as they are) or a harm (score negated, the ensemble's
    probabilities 1 − p): the rule file records which, and the file of raw scores is decided as the page did."""
    df = upload(3000, 3)
    audit = io.cms_from_predictions(df, "outcome", "model_a", ["group"], "1", positive_is=positive_is,
                                    probability_columns=["p1", "p2"], source="up.csv")
    cands = io.candidates_from_predictions(df, "outcome", "1", ["group"], ["model_a"], ["score_v3"], positive_is)
    rows = cmp.loaded_rows(audit, cands)
    harm = positive_is == "harm"
    assert rows.transform("score_v3") == ("negate" if harm else "identity")
    assert rows.transform("ensemble mean probability") == ("complement" if harm else "identity")
    assert rows.group_columns == ("group",)
    assert rows.negative_outcome == ("1" if harm else "not 1") and rows.positive_outcome == ("not 1" if harm else "1")
    probabilities = df[["p1", "p2"]].astype(float).to_numpy()
    raw = {"score_v3": df["score_v3"].astype(float).to_numpy(), "ensemble mean probability": probabilities.mean(axis=1)}
    for score, (target, tolerance, randomize) in itertools.product(raw, [("ofi", 0.05, False),
                                                                         ("demographic_parity", 0.02, True)]):
        s = cmp.Settings(score, target, tolerance, "accuracy", 1.0, 1.0, randomize)
        rule, text = page_rule(rows, s, "the groups chosen in the sidebar")
        h = rows.held
        new_rows = pd.DataFrame({"group": df["group"].to_numpy()[h], score: raw[score][h]})
        command = cmp.apply_command(s, "the groups chosen in the sidebar", columns=rows.group_columns)
        code, written = apply_as_shown(tmp_path, monkeypatch, command, text, new_rows)
        assert code == cli.EXIT_OK, capsys.readouterr().err
        decided_as_the_page(rows, s, rule, written)


def test_a_file_of_raw_deciles_against_a_rule_fitted_on_negated_ones():
    """The issue's case, from a notebook: a rule fitted on −decile. Told so (score_transform="negate"), apply decides
    raw deciles as predict decides −decile; not told, the file is refused (never '100% decided positive') with the
    column, both ranges and the cause; a file of already-negated scores against the negating rule is refused too."""
    c = datasets.load_candidates("compas")
    decile = raw_scores("compas", "COMPAS decile score")
    race = c.groups["race"].to_numpy()
    y = np.asarray(c.y, bool)
    told = fit_thresholds(-decile, y, race, "ofi", 0.05, score_transform="negate")
    plain = fit_thresholds(-decile, y, race, "ofi", 0.05)
    assert told.thresholds == plain.thresholds and told.score_range == plain.score_range == (-10.0, -1.0)
    assert told.fitted_range_in_file_units() == (1.0, 10.0) and plain.fitted_range_in_file_units() == (-10.0, -1.0)
    table = pd.DataFrame({"decile": decile.astype(int).astype(str), "race": race})   # as a file reads: text
    out = decide(ThresholdRule.from_json(told.to_json()), table, "decile", ["race"])
    np.testing.assert_array_equal(out["decision"].to_numpy(), plain.predict(-decile, race))
    assert 0 < out["decision"].mean() < 1 and out.attrs["warnings"] == []
    with pytest.raises(ApplyError) as refused:
        decide(plain, table, "decile", ["race"])
    message = str(refused.value)
    assert ("score column 'decile' holds scores from 1 to 10, but the rule was fitted on scores from -10 to -1 in "
            "this column's units; 100% of the rows lie outside the fitted range. Negated, they would lie inside it"
            in message) and "score_transform='negate'" in message and "Nothing was written" in message
    negated = table.assign(decile=(-decile).astype(int).astype(str))
    with pytest.raises(ApplyError, match=r"holds scores from -10 to -1, but the rule was fitted on scores from 1 to 10 "
                                         r"in this column's units \(from -10 to -1 on its own scale, −\(the file's "
                                         r"score\)\).*the rule was fitted on the negated score and negates this column "
                                         r"itself, so give it the raw scores"):
        decide(told, negated, "decile", ["race"])


def test_scores_far_outside_the_fitted_range_are_refused_and_the_override_warns(tmp_path, capsys):
    rng = np.random.default_rng(2)
    n = 2000
    g = rng.choice(["a", "b"], n)
    p = rng.random(n)
    rule = fit_thresholds(p, rng.random(n) < p, g, "demographic_parity", 0.05)
    (tmp_path / "rule.json").write_text(rule.to_json(), encoding="utf-8")
    pd.DataFrame({"g": g, "p": np.round(100 * p, 1)}).to_csv(tmp_path / "percent.csv", index=False)
    argv = ["apply", tmp_path / "rule.json", tmp_path / "percent.csv", "--score", "p", "--group", "g", "--out",
            tmp_path / "o.csv"]
    assert cli.main([str(a) for a in argv]) == cli.EXIT_BAD_INPUT and not (tmp_path / "o.csv").exists()
    err = capsys.readouterr().err
    lo, hi = rule.score_range
    assert f"score column 'p' holds scores from {np.round(100 * p, 1).min():.6g} to {np.round(100 * p, 1).max():.6g}, " \
           f"but the rule was fitted on scores from {lo:.6g} to {hi:.6g}" in err
    assert "another scale or units (percent against a probability)" in err
    assert cli.main([str(a) for a in argv] + ["--allow-out-of-range"]) == cli.EXIT_OK
    out = capsys.readouterr()
    assert "Applied anyway (--allow-out-of-range)" in out.err
    assert (pd.read_csv(tmp_path / "o.csv")["decision"] == 1).mean() > 0.95   # what the refusal spared the user


def test_the_range_criterion_refuses_more_than_half_outside_and_lets_drift_through():
    rule = fit_thresholds(np.linspace(0, 1, 101), np.arange(101) % 2, ["a", "b"] * 50 + ["a"], "none")
    assert rule.score_range == (0.0, 1.0)
    inside, outside = np.full(51, 0.5), np.full(49, 3.0)
    assert rule.range_check(np.concatenate([inside, outside])) == ""            # 49% outside: drift, applied
    assert "51% of the rows lie outside" in rule.range_check(np.concatenate([inside[:49], np.full(51, -2.0)]))
    assert rule.range_check(np.array([1.0 + 1e-12, 0.0])) == ""                # rounding at the edge
    assert rule.range_check(np.array([])) == ""
    hand_made = ThresholdRule({"a": 0.5, "b": 0.5}, "none", 0.0, "accuracy", 1, 1, 0.5, 0.0, 0.0, pd.DataFrame(),
                              True, 0.0, "", 4)
    assert hand_made.range_check([100.0, 200.0]) == ""                           # an unknown range checks nothing
    assert hand_made.to_fitted_scale([1.0, -2.0]).tolist() == [1.0, -2.0]       # fitted on raw scores: no change


def test_a_file_decided_all_one_way_inside_the_range_is_written_with_a_warning():
    s = np.r_[np.linspace(0, 1, 50), np.linspace(0, 1, 50)]
    g = np.repeat(["a", "b"], 50)
    rule = fit_thresholds(s, s > 0.5, g, "none")
    table = pd.DataFrame({"s": np.full(10, 0.9), "g": ["a", "b"] * 5})
    out = decide(rule, table, "s", ["g"])
    assert (out["decision"] == 1).all() and "every row is decided positive" in out.attrs["warnings"][0]


def test_rule_files_carry_the_scale_and_version_1_files_are_refused_with_the_way_out(tmp_path, capsys):
    rng = np.random.default_rng(4)
    s, g = rng.normal(size=400), rng.choice(["a", "b"], 400)
    for transform in mitigation.SCORE_TRANSFORMS:
        rule = fit_thresholds(s, rng.random(400) < 0.5, g, "demographic_parity", 0.1, score_transform=transform)
        back = ThresholdRule.from_json(rule.to_json())
        assert (back.score_transform, back.score_range) == (transform, (s.min(), s.max()))
        assert back.to_json() == rule.to_json()
        np.testing.assert_array_equal(back.to_fitted_scale(s), mitigation.transform_scores(s, transform))
    with pytest.raises(ValueError, match="score_transform must be one of 'identity', 'negate', 'complement'"):
        fit_thresholds(s, rng.random(400) < 0.5, g, score_transform="log")
    doc = json.loads(rule.to_json())
    old = {k: v for k, v in doc.items() if k != "score_scale"} | {"version": 1}
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    pd.DataFrame({"s": s, "g": g}).to_csv(tmp_path / "d.csv", index=False)
    assert cli.main(["apply", str(tmp_path / "old.json"), str(tmp_path / "d.csv"), "--score", "s", "--group", "g",
                     "--out", str(tmp_path / "o.csv")]) == cli.EXIT_BAD_INPUT
    assert "download the rule again from the Compare and Mitigate page" in capsys.readouterr().err
    with pytest.raises(RuleFileError, match="fitted_range must be \\[low, high\\] or null"):
        ThresholdRule.from_json(json.dumps({**doc, "score_scale": {"transform": "negate", "fitted_range": [1]}}))
    unknown = ThresholdRule.from_json(json.dumps({**doc, "score_scale": {"transform": "negate", "fitted_range": None}}))
    assert np.isnan(unknown.score_range).all() and unknown.range_check([1e9]) == ""


def test_the_opposite_outcome_is_composed_once_and_never_reads_not_not():
    assert opposite_outcome("hired") == "not hired" and opposite_outcome("not hired") == "hired"
    assert opposite_outcome(opposite_outcome("income over $50K")) == "income over $50K"
    assert opposite_outcome("nothing found") == "not nothing found"   # "not" only as a word of its own
    rows = cmp.demo_rows("compas", "race")
    assert (rows.positive_outcome, rows.negative_outcome) == ("not a recidivist / low risk", "a recidivist / high risk")
    s = cmp.Settings("COMPAS decile score", "ofi", 0.05, "accuracy", 1.0, 1.0, False)
    labels = set(cmp.held_decisions(rows, s, cmp.fit(rows, rows.key, s).rule)["decision"])
    assert labels == {"not a recidivist / low risk", "a recidivist / high risk"}
    assert cmp.demo_rows("adult", "race").negative_outcome == "not income over $50K"
    df = pd.DataFrame({"y": ["released", "not released"] * 4, "pred": ["not released", "released"] * 4,
                       "g": list("aabbaabb")})
    audit = io.cms_from_predictions(df, "y", "pred", ["g"], "not released", positive_is="harm")
    assert audit.positive_outcome == "released"
    cands = io.candidates_from_predictions(df, "y", "not released", ["g"], ["pred"], positive_is="harm")
    assert cands.positive_outcome == "released" and cands.negative == "not released"
    assert not re.search(r"\bnot not\b", cands.note) and "positive means 'released'" in cands.note
    with pytest.raises(ValueError, match="score_transforms\\['nope'\\]"):
        datasets.Candidates("t", cands.y, cands.groups, cands.predictions, {}, "x", score_transforms={"nope": "negate"})
