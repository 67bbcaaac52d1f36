"""Issue 44: the randomized rule itself (the linear program's mixtures, drawn reproducibly), the rule file
(versioned JSON, identical predictions after a round trip, clear errors), cross-fitting, each target's measure with
its interval, and the randomized rule against Fairlearn's ThresholdOptimizer on rows not in the demos."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

from fairness_core import mitigation
from fairness_core.mitigation import RuleFileError, ThresholdRule, fit_thresholds
from test_mitigation import BAND_TARGETS, generated, held_out_slack, held_out_tpr_fpr_slack, small_data

SLACK = 1e-7   # the linear program's feasibility tolerance


def expected_counts(rule, s, y, g):  # type: ignore[no-untyped-def]
    """Per group (sorted) expected TP, FP, n, positives under the rule, from its selection probabilities."""
    p = rule.selection_probability(s, g)
    codes = np.unique(g, return_inverse=True)[1]
    return (np.bincount(codes, p * y), np.bincount(codes, p * (1 - y)), np.bincount(codes).astype(float),
            np.bincount(codes, y).astype(float))


@pytest.mark.parametrize("seed", range(4))
def test_randomized_rule_meets_the_target_in_expectation_and_earns_the_reported_gain(seed):
    s, y, g = small_data(seed, ties=seed % 2 == 1)
    for target in BAND_TARGETS:
        det = fit_thresholds(s, y, g, target, 0.05)
        rnd = fit_thresholds(s, y, g, target, 0.05, randomize=True)
        if not rnd.randomized:
            assert rnd.randomized_gain <= mitigation.RANDOMIZE_MIN_GAIN and rnd.thresholds == det.thresholds
            continue
        for mix in rnd.mixtures.values():   # two thresholds per group, three at most under equalized odds
            assert 1 <= len(mix) <= (3 if target == "equalized_odds" else 2)
            assert math.isclose(sum(p for _, p in mix), 1.0) and list(mix) == sorted(mix, reverse=True)
        d = mitigation._disparities(*expected_counts(rnd, s, y, g))
        bound = 0.8 - SLACK if target == "four_fifths" else 0.05 + SLACK
        assert (d[target] >= bound) if target == "four_fifths" else (d[target] <= bound), (target, d[target])
        # The envelope method (targets linear in k, equal opportunity over TP) is an independent computation.
        assert rnd.objective_value == pytest.approx(det.objective_value + det.randomized_gain, abs=1e-9)
        assert rnd.measure(s, y, g)["objective"] == pytest.approx(rnd.objective_value, abs=1e-12)


def test_draws_are_reproducible_and_their_share_is_the_mixtures_probability():
    X, y, g, fit, model, s = generated(20_000, 3, groups=3)
    rule = fit_thresholds(s, y, g, "equalized_odds", 0.0, randomize=True)
    assert rule.randomized and set(rule.band_positions) == {"TPR", "FPR"}
    a, b = rule.predict(s, g, random_state=11), rule.predict(s, g, random_state=11)
    assert (a == b).all() and (a != rule.predict(s, g, random_state=12)).any()
    p = rule.selection_probability(s, g)
    mixed = (p > 0) & (p < 1)
    draws = np.mean([rule.predict(s, g, random_state=k)[mixed] for k in range(200)], axis=0)
    assert np.abs(draws - p[mixed]).max() < 5 * math.sqrt(0.25 / 200)   # each row's share of 200 draws
    assert rule.predict(s, g, random_state=np.random.default_rng(11)).tolist() == a.tolist()
    with pytest.raises(ValueError, match="random_state must be"):
        rule.predict(s, g, random_state="eleven")


def test_rule_file_round_trips_with_identical_predictions():
    s, y, g = small_data(2, ties=True)
    codes = np.unique(g, return_inverse=True)[1] + 1   # integer group names keep their type
    for groups in (g, codes):
        for randomize in (False, True):
            rule = fit_thresholds(s, y, groups, "equalized_odds", 0.05, randomize=randomize)
            back = ThresholdRule.from_json(rule.to_json())
            assert back.to_json() == rule.to_json()
            assert back.thresholds == rule.thresholds and back.mixtures == rule.mixtures
            assert (back.predict(s, groups, random_state=4) == rule.predict(s, groups, random_state=4)).all()
            assert back.fingerprint == rule.fingerprint and rule.fingerprint.startswith("sha256:")
    doc = json.loads(rule.to_json())
    assert doc["version"] == mitigation.RULE_VERSION and doc["fitting_rows"]["rows"] == len(s)
    assert fit_thresholds(s[::-1], y[::-1], codes[::-1], "equalized_odds", 0.05).fingerprint != rule.fingerprint


def test_a_rule_file_from_another_version_or_missing_a_field_is_refused_by_name():
    s, y, g = small_data(1, ties=False)
    doc = json.loads(fit_thresholds(s, y, g, "demographic_parity", 0.05, randomize=True).to_json())
    cases = [("{not json", "does not parse"), (json.dumps([1, 2]), "not an object"),
             (json.dumps({**doc, "version": 3}), "rule file version 3: this fairness_core reads version 2"),
             (json.dumps({**doc, "version": 1}), "version 1 does not say how the file's score was turned before "
                                                 "fitting .* download the rule again from the Compare and Mitigate"),
             (json.dumps({k: v for k, v in doc.items() if k != "score_scale"}), "missing the field 'score_scale'"),
             (json.dumps({**doc, "score_scale": {**doc["score_scale"], "transform": "log"}}),
              "score_scale.transform must be one of 'identity', 'negate', 'complement'; got 'log'"),
             (json.dumps({**doc, "score_scale": {**doc["score_scale"], "fitted_range": [1, 0]}}),
              "fitted_range must be \\[low, high\\] with low <= high"),
             (json.dumps({k: v for k, v in doc.items() if k != "version"}), "version None"),
             (json.dumps({k: v for k, v in doc.items() if k != "target"}), "missing the field 'target'"),
             (json.dumps({**doc, "fitting_rows": {k: v for k, v in doc["fitting_rows"].items() if k != "fingerprint"}}),
              "missing the field 'fitting_rows.fingerprint'"),
             (json.dumps({**doc, "format": "something else"}), "not a rule file: its format"),
             (json.dumps({**doc, "groups": doc["groups"][:1]}), "at least two entries"),
             (json.dumps({**doc, "groups": [doc["groups"][0]] * 2 + doc["groups"][1:]}), "names a group twice"),
             (json.dumps({**doc, "groups": [{**doc["groups"][0], "threshold": "high"}] + doc["groups"][1:]}),
              "threshold of group 'a' must be a finite number or null")]
    if doc["randomized"]:
        bad = [{**e, "mixture": [{"threshold": 0.1, "probability": 0.7}]} for e in doc["groups"]]
        cases.append((json.dumps({**doc, "groups": bad}), "mixture probabilities must lie in \\[0, 1\\] and sum to 1"))
    for text, message in cases:
        with pytest.raises(RuleFileError, match=message):
            ThresholdRule.from_json(text)


def test_cross_fitting_measures_every_row_once_by_a_rule_fitted_without_it():
    X, y, g, fit, model, s = generated(6000, 4, groups=3)
    cf = mitigation.cross_fit(s, y, g, "demographic_parity", 0.02, folds=4, seed=1)
    sizes = np.bincount(cf.folds)
    assert sizes.sum() == 6000 and sizes.max() - sizes.min() <= 3 and len(cf.rules) == 4   # within a row per group
    for j, rule in enumerate(cf.rules):   # an independent refit of each fold
        inside = cf.folds != j
        again = fit_thresholds(s[inside], y[inside], g[inside], "demographic_parity", 0.02)
        assert again.thresholds == rule.thresholds and rule.fitted_rows == inside.sum()
        assert (cf.predictions[~inside] == again.predict(s[~inside], g[~inside])).all()
    for name in np.unique(g):   # each group's rows and positives spread evenly over the folds
        counts = np.bincount(cf.folds[(g == name) & (y == 1)], minlength=4)
        assert counts.max() - counts.min() <= 2
    held = cf.measure(y, g)
    assert held["rows"] == 6000 and held["disparity"] == pytest.approx(
        mitigation.disparity(y, cf.predictions, g, "demographic_parity"))
    with pytest.raises(ValueError, match="folds must be a whole number from 2 to 20"):
        mitigation.cross_fit(s, y, g, folds=1)
    with pytest.raises(ValueError, match=r"at least 2 rows in every group; \['z'\]"):
        mitigation.fold_rows(np.append(g, "z"), np.append(y, 1), folds=3)


def test_target_measures_equal_direct_counts_and_their_intervals_cover():
    X, y, g, fit, model, s = generated(8000, 5, groups=3)
    pred = (s > 0.5).astype(int)
    t = mitigation.target_measures(y, pred, g, replicates=500).set_index("measure")
    rate = {k: pred[g == k].mean() for k in "abc"}
    tpr = {k: pred[(g == k) & (y == 1)].mean() for k in "abc"}
    fpr = {k: pred[(g == k) & (y == 0)].mean() for k in "abc"}
    assert t.loc["selection-rate gap", "estimate"] == pytest.approx(max(rate.values()) - min(rate.values()))
    assert t.loc["smallest impact ratio", "estimate"] == pytest.approx(min(rate.values()) / max(rate.values()))
    assert t.loc["TPR gap", "estimate"] == pytest.approx(max(tpr.values()) - min(tpr.values()))
    assert t.loc["FPR gap", "estimate"] == pytest.approx(max(fpr.values()) - min(fpr.values()))
    assert t.loc["largest |OFI|", "estimate"] == pytest.approx(mitigation.disparity(y, pred, g, "ofi"))
    assert t.loc["accuracy", "estimate"] == pytest.approx((pred == y).mean())
    assert ((t["ci_low"] <= t["estimate"] + 1e-12) & (t["estimate"] <= t["ci_high"] + 1e-12)).all()
    one = mitigation.target_measures([0, 0, 1, 1], [0, 0, 0, 0], ["a", "a", "b", "b"], replicates=100)
    row = one.set_index("measure").loc["TPR gap"]
    assert math.isnan(row["estimate"]) and "fewer than two groups" in row["note"]
    with pytest.raises(ValueError, match="y_pred must hold 0/1 decisions"):
        mitigation.target_measures([0, 1], [0.2, 0.7], ["a", "b"])


def expected_accuracy(p, y):  # type: ignore[no-untyped-def]
    return float(np.mean(np.where(y == 1, p, 1 - p)))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("target", ["equalized_odds", "demographic_parity"])
def test_randomized_rule_is_as_accurate_as_fairlearns_and_as_fair(seed, target):
    """Rows generated here (three groups, base rates 0.6 to 0.3), a model fitted on the fitting half, both
    post-processors fitted on the same fitting rows and measured on the same held-out rows, by expected counts
    (each row counted with its chance of selection: no draw's luck). Ours at tolerance 0.01 (Fairlearn's tol too for
    demographic parity; it has none for equalized odds, which it meets exactly). Goals of issue 44: accuracy within
    0.5 points of ThresholdOptimizer's (ours may be higher), violation at most its own plus two standard errors of a
    held-out rate difference."""
    from fairlearn.postprocessing import ThresholdOptimizer

    X, y, g, fit, model, s = generated(12_000, seed, groups=3)
    to = ThresholdOptimizer(estimator=model, constraints=target, objective="accuracy_score", prefit=True,
                            predict_method="auto", tol=None if target == "equalized_odds" else 0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        to.fit(X[fit], y[fit], sensitive_features=g[fit])
        theirs = to._pmf_predict(X[~fit], sensitive_features=g[~fit])[:, 1]
    rule = fit_thresholds(s[fit], y[fit], g[fit], target, 0.01, randomize=True)
    assert rule.randomized
    ours = rule.selection_probability(s[~fit], g[~fit])
    yh, gh = y[~fit], g[~fit]
    assert expected_accuracy(ours, yh) >= expected_accuracy(theirs, yh) - 0.005

    def violation(p):  # type: ignore[no-untyped-def]
        codes = np.unique(gh, return_inverse=True)[1]
        return mitigation._disparities(np.bincount(codes, p * yh), np.bincount(codes, p * (1 - yh)),
                                       np.bincount(codes).astype(float), np.bincount(codes, yh).astype(float))[target]

    slack = held_out_tpr_fpr_slack(y, g, fit) if target == "equalized_odds" else held_out_slack(g, fit)
    assert violation(ours) <= violation(theirs) + slack
    assert rule.measure(s[~fit], yh, gh)["disparity"] == pytest.approx(violation(ours))
