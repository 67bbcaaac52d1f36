"""Per-group thresholds (fairness_core.mitigation): brute force over every combination of thresholds, the
constraint exactly on the fitting rows, the randomized optimum against a linear program, and Fairlearn's
ThresholdOptimizer on held-out rows."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import warnings

import numpy as np
import pytest
from scipy.optimize import linprog

from fairness_core import mitigation
from fairness_core.mitigation import InfeasibleTarget, ThresholdRule, fit_thresholds

BAND_TARGETS = ("ofi", "demographic_parity", "four_fifths", "equal_opportunity", "equalized_odds")
SLACK = 1e-9  # ratios of counts below 10: any real violation is far larger


def small_data(seed: int, ties: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """3 groups of 6 to 9 rows, each with both labels; scores rounded to one decimal when ``ties``."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(6, 10, 3)
    g = np.repeat(np.array(["a", "b", "c"]), sizes)
    y = rng.random(len(g)) < rng.uniform(0.2, 0.8, 3)[np.repeat(np.arange(3), sizes)]
    for k, name in enumerate("abc"):  # every group has a positive and a negative
        rows = np.flatnonzero(g == name)
        y[rows[0]], y[rows[1]] = True, False
    s = rng.normal(y * 1.0 + rng.normal(0, 0.7, 3)[np.repeat(np.arange(3), sizes)], 1.0)
    if ties:
        s = np.round(s, 1)
    return s, y.astype(int), g


def brute_force(s, y, g, target, tolerance, objective, cost_fp=1.0, cost_fn=1.0):
    """Every combination of one threshold per group (each distinct score, or +inf), counted from the rows:
    the best objective and the smallest disparity among combinations meeting the target."""
    names = sorted(set(g))
    per_group = []
    for name in names:
        sg, yg = s[g == name], y[g == name] == 1
        cuts = np.concatenate([[np.inf], np.unique(sg)])
        pred = sg[None, :] >= cuts[:, None]
        per_group.append(((pred & yg).sum(1), (pred & ~yg).sum(1), len(sg), yg.sum()))
    combos = np.array(list(itertools.product(*[range(len(t)) for t, *_ in per_group])))
    tp = np.stack([per_group[i][0][combos[:, i]] for i in range(len(names))], 1).astype(float)
    fp = np.stack([per_group[i][1][combos[:, i]] for i in range(len(names))], 1).astype(float)
    n = np.array([p[2] for p in per_group], float)
    pos = np.array([p[3] for p in per_group], float)
    neg = n - pos
    rate, b = (tp + fp) / n, (tp + fp - pos) / n
    tpr, fpr = tp / pos, fp / neg
    spread = lambda x: x.max(1) - x.min(1)  # noqa: E731
    disparity = {"ofi": spread(b), "demographic_parity": spread(rate), "equal_opportunity": spread(tpr),
                 "equalized_odds": np.maximum(spread(tpr), spread(fpr)),
                 "four_fifths": np.where(rate.max(1) > 0, rate.min(1) / np.where(rate.max(1) > 0, rate.max(1), 1), 1.0)}
    d = disparity[target]
    ok = d >= FOUR_FIFTHS_MINUS_SLACK if target == "four_fifths" else d <= tolerance + SLACK
    big_p, big_n = pos.sum(), neg.sum()
    value = {"accuracy": (tp.sum(1) + big_n - fp.sum(1)) / n.sum(),
             "balanced_accuracy": 0.5 * (tp.sum(1) / big_p + (big_n - fp.sum(1)) / big_n),
             "cost": -(cost_fp * fp.sum(1) + cost_fn * (big_p - tp.sum(1))) / n.sum()}[objective]
    best = value[ok].max() if ok.any() else None
    return best, (d.min() if target != "four_fifths" else None)


FOUR_FIFTHS_MINUS_SLACK = 0.8 - SLACK


def check_rule(rule, s, y, g):
    """The constraint on the fitting rows, recounted from predict() (not from the fit's own numbers)."""
    pred = rule.predict(s, g)
    expected = np.array([sc >= rule.thresholds[name] for sc, name in zip(s, g)], dtype=np.int8)
    assert np.array_equal(pred, expected)
    if rule.target == "none":
        assert len(set(rule.thresholds.values())) == 1
        return
    d = mitigation.disparity(y, pred, g, rule.target)
    if rule.target == "four_fifths":
        assert math.isnan(d) or d >= 0.8 - SLACK
    else:
        assert d <= rule.tolerance + SLACK
    assert d == pytest.approx(rule.disparity, nan_ok=True)


@pytest.mark.parametrize("objective", mitigation.OBJECTIVES)
def test_fit_equals_brute_force_over_every_combination_of_thresholds(objective):
    cost_fp, cost_fn = 1.0, 2.5
    sign = -1 if objective == "cost" else 1
    for seed in range(12):
        s, y, g = small_data(seed, ties=seed % 2 == 0)
        tolerance = (0.0, 0.05, 0.1, 0.2, 0.3)[seed % 5]
        for target in BAND_TARGETS:
            best, smallest = brute_force(s, y, g, target, tolerance, objective, cost_fp, cost_fn)
            if best is None:
                with pytest.raises(InfeasibleTarget) as err:
                    fit_thresholds(s, y, g, target, tolerance, objective, cost_fp=cost_fp, cost_fn=cost_fn)
                assert target == "ofi"
                assert smallest <= err.value.smallest <= smallest + 2e-6
                continue
            rule = fit_thresholds(s, y, g, target, tolerance, objective, cost_fp=cost_fp, cost_fn=cost_fn)
            assert rule.exhaustive
            assert sign * rule.objective_value == pytest.approx(best, abs=1e-12), (seed, target)
            check_rule(rule, s, y, g)
        none = fit_thresholds(s, y, g, "none", objective=objective, cost_fp=cost_fp, cost_fn=cost_fn)
        check_rule(none, s, y, g)
        cuts = np.concatenate([[np.inf], np.unique(s)])
        pred = s[None, :] >= cuts[:, None]
        tp, fp = (pred & (y == 1)).sum(1), (pred & (y == 0)).sum(1)
        big_p, big_n = (y == 1).sum(), (y == 0).sum()
        values = {"accuracy": (tp + big_n - fp) / len(y), "balanced_accuracy": 0.5 * (tp / big_p + (big_n - fp) / big_n),
                  "cost": -(cost_fp * fp + cost_fn * (big_p - tp)) / len(y)}[objective]
        assert sign * none.objective_value == pytest.approx(values.max(), abs=1e-12)


def every_threshold(s, y, g, name):
    """Group ``name``'s counts at every threshold (+inf, then each distinct score, descending): n, P, k, TP."""
    sg, yg = s[g == name], y[g == name] == 1
    cuts = np.concatenate([[np.inf], np.unique(sg)[::-1]])
    pred = sg[None, :] >= cuts[:, None]
    return len(sg), yg.sum(), pred.sum(1), (pred & yg).sum(1)


def lp_over_every_threshold(s, y, g, target, tolerance, objective="accuracy", cost_fp=1.0, cost_fn=1.0):
    """The best randomized rule by a linear program written out from the rows, independently of the library:
    a distribution λ over each group's thresholds (all of them, not only hull vertices) and one free band
    position per constrained quantity, the target's band holding for the expected quantity. Returns the best
    objective in the library's units (cost per row, negated)."""
    names = sorted(set(g))
    quantities = {"ofi": ["B"], "demographic_parity": ["rate"], "four_fifths": ["rate"],
                  "equal_opportunity": ["TPR"], "equalized_odds": ["TPR", "FPR"]}[target]
    big_p, big_n = (y == 1).sum(), (y == 0).sum()
    blocks, values, qs = [], [], {q: [] for q in quantities}
    for name in names:
        n, p, k, tp = every_threshold(s, y, g, name)
        fp = k - tp
        values.append({"accuracy": (tp + (n - p) - fp) / len(y),
                       "balanced_accuracy": 0.5 * (tp / big_p + ((n - p) - fp) / big_n),
                       "cost": -(cost_fp * fp + cost_fn * (p - tp)) / len(y)}[objective])
        for q in quantities:
            qs[q].append({"B": (k - p) / n, "rate": k / n, "TPR": tp / p, "FPR": fp / (n - p)}[q])
        blocks.append(len(k))
    m, nq, ng = sum(blocks), len(quantities), len(names)
    a_eq, a_ub, b_ub = np.zeros((ng, m + nq)), np.zeros((2 * ng * nq, m + nq)), np.zeros(2 * ng * nq)
    row = 0
    for j, q in enumerate(quantities):
        at = 0
        for i, size in enumerate(blocks):
            a_eq[i, at:at + size] = 1
            a_ub[row, at:at + size], a_ub[row, m + j] = -qs[q][i], 1.0                       # E q >= c
            a_ub[row + 1, at:at + size] = qs[q][i]                                            # E q <= upper(c)
            a_ub[row + 1, m + j] = -1 / 0.8 if target == "four_fifths" else -1.0
            b_ub[row + 1] = 0.0 if target == "four_fifths" else tolerance
            row, at = row + 2, at + size
    bounds = [(0, None)] * m + [(None, None)] * nq
    lp = linprog(-np.concatenate(values + [np.zeros(nq)]), A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=np.ones(ng),
                 bounds=bounds, method="highs")
    assert lp.status == 0
    return -lp.fun


def test_randomized_gain_equals_the_linear_program_over_mixed_thresholds():
    """Every target, against a linear program over every threshold of every group (the library solves the
    linear targets over concave envelopes in k, the TPR/FPR targets over ROC hull vertices only)."""
    cases = [("ofi", 0.05), ("demographic_parity", 0.1), ("four_fifths", 0.0), ("equal_opportunity", 0.0),
             ("equal_opportunity", 0.1), ("equalized_odds", 0.0), ("equalized_odds", 0.05)]
    helped = set()
    for seed in range(6):
        s, y, g = small_data(seed, ties=seed % 2 == 1)
        for (target, tolerance), objective in itertools.product(cases, mitigation.OBJECTIVES):
            if objective != "accuracy" and seed > 1:
                continue
            try:
                rule = fit_thresholds(s, y, g, target, tolerance, objective, cost_fp=1.0, cost_fn=2.5)
            except InfeasibleTarget:
                continue
            best = lp_over_every_threshold(s, y, g, target, tolerance, objective, cost_fp=1.0, cost_fn=2.5)
            sign = -1 if objective == "cost" else 1
            assert rule.randomized_gain == pytest.approx(best - sign * rule.objective_value, abs=1e-9), (seed, target)
            assert rule.randomized_gain >= 0 and "would do this much better" in rule.randomized_note
            if rule.randomized_gain > 1e-6:
                helped.add(target)
            if target == "equal_opportunity":  # the envelope over TP and the ROC-hull LP agree
                cv = mitigation._curves(mitigation._rows(s, y, g), objective, 1.0, 2.5)
                chosen = np.array([int(np.flatnonzero((cv.group == i) & (cv.threshold == t))[0])
                                   for i, t in enumerate(rule.thresholds.values())])
                lp = mitigation._randomized_roc_gain(cv, target, tolerance, chosen)
                assert lp == pytest.approx(rule.randomized_gain, abs=1e-9)
    assert helped >= {"equal_opportunity", "equalized_odds"}  # the examples are not all trivial


def test_randomized_equalized_odds_gain_equals_brute_force_over_a_grid_of_mixtures():
    """Two groups, each with two distinct scores (three thresholds: nobody, the top score, everyone): every
    mixture of each group's thresholds with weights on a 1/40 grid, kept when the expected TPRs and FPRs
    are within the tolerance. The grid's best is never above the library's randomized optimum and comes
    within the grid's resolution of it; here the deterministic thresholds are far worse."""
    s = np.array([.9, .9, .9, .9, .2, .2, .2, .2, .2,    .6, .6, .6, .6, .6, .6, .1, .1, .1])
    y = np.array([1, 1, 1, 0, 1, 0, 0, 0, 0,             1, 1, 1, 1, 0, 0, 1, 0, 0])
    g = np.array(["a"] * 9 + ["b"] * 9)
    grid = np.array([(i, j, 40 - i - j) for i in range(41) for j in range(41 - i)]) / 40   # weights, 861
    expected = []
    for name in "ab":
        n, p, k, tp = every_threshold(s, y, g, name)
        assert len(k) == 3
        fp = k - tp
        expected.append((grid @ (tp / p), grid @ (fp / (n - p)), grid @ (tp + (n - p) - fp)))
    (tpr_a, fpr_a, v_a), (tpr_b, fpr_b, v_b) = expected
    for tolerance in (0.05, 0.1, 0.2):  # (at 0 the optimum's weights are off any such grid: the test above)
        ok = ((np.abs(tpr_a[:, None] - tpr_b[None, :]) <= tolerance + 1e-12)
              & (np.abs(fpr_a[:, None] - fpr_b[None, :]) <= tolerance + 1e-12))
        best = np.where(ok, v_a[:, None] + v_b[None, :], -np.inf).max() / len(y)
        rule = fit_thresholds(s, y, g, "equalized_odds", tolerance)
        randomized = rule.objective_value + rule.randomized_gain
        assert best <= randomized + 1e-9
        assert best >= randomized - 0.02, tolerance  # a step of 1/40 in the weights moves accuracy < 1/40
        assert rule.randomized_gain > 0.05
        assert randomized == pytest.approx(lp_over_every_threshold(s, y, g, "equalized_odds", tolerance), abs=1e-9)
        eo = fit_thresholds(s, y, g, "equal_opportunity", tolerance)
        assert eo.objective_value + eo.randomized_gain >= randomized - 1e-9  # a looser constraint


def test_strided_search_keeps_the_constraint_and_comes_close(monkeypatch):
    rng = np.random.default_rng(5)
    g = rng.choice(np.array(["a", "b", "c", "d"]), 400)
    y = (rng.random(400) < np.where(g == "a", 0.6, 0.35)).astype(int)
    s = rng.normal(y + (g == "b") * 0.5, 1.0)
    for target in BAND_TARGETS:
        exact = fit_thresholds(s, y, g, target, 0.03)
        monkeypatch.setattr(mitigation.fitting, "SEARCH_BUDGET", 200)
        coarse = fit_thresholds(s, y, g, target, 0.03)
        monkeypatch.undo()
        assert not coarse.exhaustive and exact.exhaustive
        check_rule(coarse, s, y, g)
        assert coarse.objective_value <= exact.objective_value + 1e-12
        if target != "equalized_odds":  # a 7 x 7 grid of two band positions can miss narrow feasible regions
            assert coarse.objective_value >= exact.objective_value - 0.02


def test_group_table_counts_match_the_predictions_and_json_round_trips():
    s, y, g = small_data(3, ties=True)
    rule = fit_thresholds(s, y, g, "ofi", 0.2)
    pred = rule.predict(s, g)
    t = rule.groups_table.set_index("group")
    for name in "abc":
        rows = g == name
        assert t.loc[name, "TP"] == (pred[rows] & y[rows]).sum()
        assert t.loc[name, "FP"] == (pred[rows] & (1 - y[rows])).sum()
        assert t.loc[name, "B"] == pytest.approx((pred[rows].sum() - y[rows].sum()) / rows.sum())
    payload = json.loads(rule.to_json())
    assert payload["target"] == "ofi" and [e["group"] for e in payload["groups"]] == ["a", "b", "c"]
    assert ThresholdRule.from_json(rule.to_json()).thresholds == rule.thresholds
    nobody = dataclasses.replace(rule, thresholds={**rule.thresholds, "b": math.inf})   # nobody in b selected
    cuts = [e["threshold"] for e in json.loads(nobody.to_json())["groups"]]
    assert None in cuts and all(v is None or isinstance(v, float) for v in cuts)
    assert ThresholdRule.from_json(nobody.to_json()).thresholds == nobody.thresholds


def test_ties_move_together_and_an_impossible_ofi_names_the_smallest_tolerance():
    # Group a's two rows share one score: it selects none or both, B_a = ±1/2; group b (one positive in three)
    # reaches B_b ∈ {-1/3, 0, 1/3, 2/3}, never within 1/6 of ±1/2.
    s = np.array([0.5, 0.5, 0.9, 0.2, 0.1])
    y = np.array([1, 0, 1, 0, 0])
    g = np.array(["a", "a", "b", "b", "b"])
    with pytest.raises(InfeasibleTarget, match="smallest tolerance they allow is 0.166667") as err:
        fit_thresholds(s, y, g, "ofi", 0.1)
    assert err.value.smallest == 0.166667
    rule = fit_thresholds(s, y, g, "ofi", 0.17)
    assert rule.max_abs_ofi == pytest.approx(1 / 6) and rule.predict(s, g)[:2].tolist() in ([0, 0], [1, 1])
    front = mitigation.frontier(s, y, g, "ofi", tolerances=[0.1, 0.3])
    assert front["feasible"].tolist() == [False, True] and "0.166667" in front["note"][0]


def test_inputs_are_validated_with_the_argument_named():
    s, y, g = small_data(0, ties=False)
    cases = [
        ((s[:-1], y, g), {}, "scores has"),
        ((np.where(np.arange(len(s)) == 2, np.nan, s), y, g), {}, "scores must be finite"),
        ((s, y + 1, g), {}, "y_true must hold only 0 and 1"),
        ((s, y, np.full(len(s), "a")), {}, "groups must name at least two groups"),
        ((s, y, np.arange(len(s)) % 2), {"target": "parity"}, "target must be one of"),
        ((s, y, g), {"objective": "f1"}, "objective must be one of"),
        ((s, y, g), {"tolerance": -0.1}, "tolerance must be in"),
        ((s, y, g), {"objective": "cost", "cost_fp": -1.0}, "cost_fp must be"),
        ((s, y, np.array([None] + list(g[1:]), dtype=object)), {}, "groups has 1 missing"),
    ]
    for args, kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            fit_thresholds(*args, **kwargs)
    many = np.arange(1002) // 2
    with pytest.raises(ValueError, match="at most 500"):
        fit_thresholds(np.arange(1002.0), np.arange(1002) % 2, many)
    only_negatives = y.copy()
    only_negatives[g == "c"] = 0
    with pytest.raises(ValueError, match=r"without actual positives: \['c'\]"):
        fit_thresholds(s, only_negatives, g, "equal_opportunity")
    rule = fit_thresholds(s, y, g, "demographic_parity", 0.1)
    with pytest.raises(ValueError, match="not fitted for: \\['z'\\]"):
        rule.predict([0.5], ["z"])
    with pytest.raises(ValueError, match="no tolerance to vary"):
        mitigation.frontier(s, y, g, "four_fifths")


def test_split_rows_is_stratified_reproducible_and_fits_on_one_part():
    rng = np.random.default_rng(0)
    g = rng.choice(np.array(["a", "b", "c"]), 3001)
    y = (rng.random(3001) < 0.3).astype(int)
    mask = mitigation.split_rows(g, y, fraction=0.3, seed=4)
    assert np.array_equal(mask, mitigation.split_rows(g, y, fraction=0.3, seed=4))
    assert not np.array_equal(mask, mitigation.split_rows(g, y, fraction=0.3, seed=5))
    for name in "abc":
        for label in (0, 1):
            stratum = (g == name) & (y == label)
            assert abs(mask[stratum].sum() - 0.3 * stratum.sum()) < 1
    with pytest.raises(ValueError, match="fraction must be strictly between 0 and 1"):
        mitigation.split_rows(g, y, fraction=1.0)


# ------------------------------------------------------------------------------------ against Fairlearn

def generated(n: int, seed: int, groups: int):
    """Features whose distribution and base rate differ by group; a logistic model fitted on half the rows
    (the stratified fitting part) scores everyone."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(seed)
    names = np.array(["a", "b", "c"][:groups])
    p = np.array([0.5, 0.3, 0.2][:groups])
    g = rng.choice(names, n, p=p / p.sum())
    shift = np.select([g == "a", g == "b"], [0.8, 0.0], -0.6)
    X = rng.normal(size=(n, 3))
    X[:, 0] += shift
    y = (rng.random(n) < 1 / (1 + np.exp(-(1.2 * X[:, 0] + 0.8 * X[:, 1] - 0.5 * X[:, 2] + 0.3 * shift)))).astype(int)
    fit = mitigation.split_rows(g, y, 0.5, seed=seed)
    model = LogisticRegression().fit(X[fit], y[fit])
    return X, y, g, fit, model, model.predict_proba(X)[:, 1]


def fairlearn_predictions(model, X, y, g, fit, constraints, tol=None):
    from fairlearn.postprocessing import ThresholdOptimizer

    to = ThresholdOptimizer(estimator=model, constraints=constraints, objective="accuracy_score", prefit=True,
                            predict_method="auto", tol=tol)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        to.fit(X[fit], y[fit], sensitive_features=g[fit])
        return to.predict(X[~fit], sensitive_features=g[~fit], random_state=0)


def held_out_slack(g, fit):
    """Both rules are measured on the same held-out rows, whose rates are estimates: two standard errors of
    a difference in rates between the two smallest held-out groups (at the rate 0.5 that maximizes it).
    A rule that meets the target on the fitting rows can miss it by this much by chance alone."""
    sizes = np.sort(np.bincount(np.unique(g[~fit], return_inverse=True)[1]))
    return 2 * math.sqrt(0.25 / sizes[0] + 0.25 / sizes[1])


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("target, groups, fairlearn_tol", [("demographic_parity", 3, 0.01)])
def test_held_out_violation_and_accuracy_no_worse_than_fairlearn(seed, target, groups, fairlearn_tol):
    """Same rows, same fitted model, same tolerance. Equalized odds: the next test."""
    from fairlearn import metrics as fm

    metric = {"demographic_parity": fm.demographic_parity_difference,
              "equalized_odds": fm.equalized_odds_difference}[target]
    X, y, g, fit, model, s = generated(12_000, seed, groups=groups)
    theirs = fairlearn_predictions(model, X, y, g, fit, target, tol=fairlearn_tol)
    rule = fit_thresholds(s[fit], y[fit], g[fit], target, 0.01)
    check_rule(rule, s[fit], y[fit], g[fit])
    ours = rule.predict(s[~fit], g[~fit])
    v_ours = metric(y[~fit], ours, sensitive_features=g[~fit])
    v_theirs = metric(y[~fit], theirs, sensitive_features=g[~fit])
    assert v_ours <= v_theirs + held_out_slack(g, fit)
    assert (ours == y[~fit]).mean() >= (theirs == y[~fit]).mean() - 0.01
    assert rule.measure(s[~fit], y[~fit], g[~fit])["disparity"] == pytest.approx(v_ours)


def held_out_tpr_fpr_slack(y, g, fit):
    """Two standard errors of a difference in TPR between the two held-out groups with the fewest actual
    positives, or in FPR between the two with the fewest actual negatives (the larger), at the rate 0.5 that
    maximizes it: how far a rule meeting equalized odds on the fitting rows can miss it on the held-out rows
    by chance alone."""
    names = np.unique(g)
    held = [(g[~fit] == name) for name in names]
    pos = np.sort([(y[~fit][h] == 1).sum() for h in held])
    neg = np.sort([(y[~fit][h] == 0).sum() for h in held])
    return max(2 * math.sqrt(0.25 / c[0] + 0.25 / c[1]) for c in (pos, neg))


@pytest.mark.parametrize("seed", range(5))
def test_equalized_odds_with_three_groups_against_fairlearn(seed):
    """Equalized odds, three groups, our tolerance 0.01 (Fairlearn has none: it meets the constraint exactly, in
    expectation, by randomizing between thresholds). Same rows, same fitted model.

    Violation: ours, held out, is at most Fairlearn's plus two standard errors of a held-out rate difference
    (:func:`held_out_tpr_fpr_slack`, 0.05 to 0.06 here): both rules are measured on the same held-out rows,
    whose TPRs and FPRs are estimates, so either can miss the fitted constraint by that much by chance.

    Accuracy: deterministic thresholds meet equalized odds only where every group's ROC curve passes through
    one 0.01-by-0.01 box, and three empirical curves rarely do, so ours can be several points below
    Fairlearn's (2 to 6 here). Where it is more than one point below, the randomized gain we report must
    account for the gap: ours + gain >= Fairlearn's − 1 point (the gain is measured on the fitting rows,
    the accuracies on the held-out rows). And the gain is exact: at tolerance 0 our best randomized rule's
    accuracy on the fitting rows equals Fairlearn's expected accuracy there (its optimum over the same ROC
    hulls, found on a grid of 1,000 points: at most 1e-3 below, never above)."""
    from fairlearn import metrics as fm
    from fairlearn.postprocessing import ThresholdOptimizer

    X, y, g, fit, model, s = generated(12_000, seed, groups=3)
    to = ThresholdOptimizer(estimator=model, constraints="equalized_odds", objective="accuracy_score", prefit=True,
                            predict_method="auto")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        to.fit(X[fit], y[fit], sensitive_features=g[fit])
        theirs = to.predict(X[~fit], sensitive_features=g[~fit], random_state=0)
        chance = to._pmf_predict(X[fit], sensitive_features=g[fit])[:, 1]   # P(positive) per fitting row
    rule = fit_thresholds(s[fit], y[fit], g[fit], "equalized_odds", 0.01)
    check_rule(rule, s[fit], y[fit], g[fit])
    ours = rule.predict(s[~fit], g[~fit])
    v_ours = fm.equalized_odds_difference(y[~fit], ours, sensitive_features=g[~fit])
    v_theirs = fm.equalized_odds_difference(y[~fit], theirs, sensitive_features=g[~fit])
    assert v_ours <= v_theirs + held_out_tpr_fpr_slack(y, g, fit)
    assert rule.measure(s[~fit], y[~fit], g[~fit])["disparity"] == pytest.approx(v_ours)
    acc_ours, acc_theirs = (ours == y[~fit]).mean(), (theirs == y[~fit]).mean()
    assert rule.randomized_gain >= 0 and "would do this much better" in rule.randomized_note
    assert acc_ours >= acc_theirs - 0.01 or acc_ours + rule.randomized_gain >= acc_theirs - 0.01
    exact = fit_thresholds(s[fit], y[fit], g[fit], "equalized_odds", 0.0)
    expected_theirs = np.where(y[fit] == 1, chance, 1 - chance).mean()
    assert expected_theirs - 1e-6 <= exact.objective_value + exact.randomized_gain <= expected_theirs + 1e-3


def test_ofi_target_fairlearn_cannot_express_shrinks_the_gap_and_is_measured_held_out():
    X, y, g, fit, model, s = generated(12_000, 2, groups=3)
    logit = np.log(s / (1 - s)) + np.select([g == "a", g == "b"], [0.8, 0.0], -0.8)
    s = 1 / (1 + np.exp(-logit))  # a model that over-scores group a and under-scores group c
    shared = fit_thresholds(s[fit], y[fit], g[fit], "none")
    assert shared.max_abs_ofi > 0.1  # the model's errors favour one group
    rule = fit_thresholds(s[fit], y[fit], g[fit], "ofi", 0.02)
    check_rule(rule, s[fit], y[fit], g[fit])
    assert rule.max_abs_ofi <= 0.02 < shared.max_abs_ofi
    held = rule.measure(s[~fit], y[~fit], g[~fit])
    before = shared.measure(s[~fit], y[~fit], g[~fit])
    assert held["rows"] == (~fit).sum() and held["max_abs_ofi"] < before["max_abs_ofi"] / 2
    assert held["objective"] >= before["objective"] - 0.03
    front = mitigation.frontier(s[fit], y[fit], g[fit], "ofi", tolerances=[0.0, 0.02, 0.05, 0.1])
    assert (front["max_abs_ofi"] <= front["tolerance"] + SLACK).all()
    assert front["objective"].is_monotonic_increasing
    # The reference point is the shared threshold (per-group thresholds can beat it on a miscalibrated model).
    assert front.attrs["unconstrained"]["max_abs_ofi"] == pytest.approx(shared.max_abs_ofi)
