"""Virny's stability and uncertainty metrics on small hand-made ensembles, and the bootstrap ensemble."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from fairness_core import stability
from fairness_core.statistics import ensemble

# Three individuals, four models.
H = np.array([
    [0.9, 0.8, 0.7, 0.6],   # all positive: stable
    [0.9, 0.2, 0.6, 0.4],   # 2 vs 2: a tie
    [0.5, 0.0, 1.0, 0.1],   # 0.5 counts as positive (h >= 0.5): 2 vs 2
])


def test_hand_computed_values():
    assert stability.label_stability(H).tolist() == [1.0, 0.0, 0.0]
    # jitter: k(m − k)/C(m, 2) = 0, 4/6, 4/6.
    assert stability.jitter(H) == pytest.approx([0.0, 2 / 3, 2 / 3])
    assert stability.epistemic_uncertainty(H)[0] == pytest.approx(np.mean((H[0] - 0.75) ** 2))
    # Entropy of 0.5 is ln 2; of 0 and 1 it is 0.
    expected = -(math.log(0.5) + 0 + 0 + (0.1 * math.log(0.1) + 0.9 * math.log(0.9))) / 4
    assert stability.aleatoric_uncertainty(H)[2] == pytest.approx(expected)
    assert (stability.aleatoric_uncertainty(H) >= 0).all()
    assert stability.aleatoric_uncertainty(np.full((1, 3), 0.5))[0] == pytest.approx(math.log(2))


def test_brute_force_against_definitions():
    rng = np.random.default_rng(4)
    probs = rng.uniform(size=(40, 7))
    labels = probs >= 0.5
    m = probs.shape[1]
    # Dataset jitter (Virny): mean over model pairs of the churn |p_i(x) != p_j(x)| / |X|.
    churn = [np.mean(labels[:, i] != labels[:, j]) for i, j in combinations(range(m), 2)]
    assert stability.jitter(probs).mean() == pytest.approx(np.mean(churn))
    for x in range(len(probs)):
        pos = sum(1 for j in range(m) if probs[x, j] >= 0.5)
        assert stability.label_stability(probs)[x] == pytest.approx(abs(pos - (m - pos)) / m)
        mean = sum(probs[x]) / m
        assert stability.epistemic_uncertainty(probs)[x] == pytest.approx(sum((v - mean) ** 2 for v in probs[x]) / m)
        ent = -sum(v * math.log(v) + (1 - v) * math.log(1 - v) for v in probs[x]) / m
        assert stability.aleatoric_uncertainty(probs)[x] == pytest.approx(ent)


def test_bad_probabilities_name_row_and_model():
    with pytest.raises(ValueError, match=r"row 2, model 3: 1.5 is not a probability"):
        stability.label_stability(np.array([[0.1, 0.2, 0.3], [0.1, 0.2, 1.5]]))
    with pytest.raises(ValueError, match="at least 2 models"):
        stability.jitter(np.array([[0.1], [0.2]]))
    with pytest.raises(ValueError, match="not a probability"):
        stability.epistemic_uncertainty(np.array([[0.1, np.nan]]))


def rows_fixture() -> stability.RowData:
    #            y  pred  group  probabilities (3 models)
    data = [(1, 1, "a", [0.9, 0.8, 0.7]), (0, 1, "a", [0.6, 0.4, 0.7]), (0, 0, "a", [0.1, 0.2, 0.3]),
            (1, 0, "a", [0.4, 0.6, 0.3]),
            (1, 1, "b", [0.9, 0.9, 0.9]), (0, 0, "b", [0.1, 0.1, 0.2]), (1, 1, "b", [0.8, 0.7, 0.9]),
            (0, 0, "b", [0.2, 0.3, 0.1])]
    y, yp, g, p = zip(*data)
    return stability.RowData(np.array(y), np.array(yp), np.array(g, dtype=object), np.array(p))


def test_group_table_and_disparities():
    rows = rows_fixture()
    table = stability.group_table(rows)
    # a: TP 1, FN 1, FP 1, TN 1; b: TP 2, TN 2.
    assert table.loc["a", "accuracy"] == 0.5 and table.loc["b", "accuracy"] == 1.0
    assert table.loc["a", "FPR"] == 0.5 and table.loc["b", "FPR"] == 0.0
    assert table.loc["a", "selection rate"] == 0.5 and table.loc["b", "selection rate"] == 0.5
    # label stability: a = (1 + 1/3 + 1 + 1/3)/4, b = 1.
    assert table.loc["a", "label stability"] == pytest.approx((1 + 1 / 3 + 1 + 1 / 3) / 4)
    assert table.loc["b", "label stability"] == 1.0
    assert table.loc["all", "n"] == 8
    d = stability.disparities(table, "b")
    assert d.loc["a", "ΔFPR"] == 0.5 and d.loc["a", "ΔAccuracy"] == -0.5
    assert d.loc["a", "SPD"] == 0.0 and d.loc["a", "DI"] == 1.0
    assert d.loc["a", "Δlabel stability"] == pytest.approx(table.loc["a", "label stability"] - 1.0)
    assert d.loc["a", "Δaleatoric"] > 0


def test_di_undefined_when_privileged_selects_nobody():
    rows = rows_fixture()
    yp = rows.y_pred.copy()
    yp[rows.groups == "b"] = False
    table = stability.group_table(stability.RowData(rows.y, yp, rows.groups, rows.probabilities))
    assert math.isnan(stability.disparities(table, "b").loc["a", "DI"])


def test_distribution_table_quantiles():
    rows = rows_fixture()
    dist = stability.distribution_table(rows)
    b = dist[(dist["group"] == "b") & (dist["metric"] == "label stability")].iloc[0]
    assert b["q05"] == b["q95"] == b["mean"] == 1.0
    assert set(dist["metric"]) == set(stability.INDIVIDUAL_METRICS)


def test_fit_logistic_matches_scipy():
    rng = np.random.default_rng(0)
    x = np.hstack([np.ones((300, 1)), rng.normal(size=(300, 3))])
    y = (x @ [0.2, 1.0, -2.0, 0.5] + rng.logistic(size=300) > 0).astype(float)
    l2 = 2.0

    def loss(w):
        z = x @ w
        return np.sum(np.logaddexp(0, z) - y * z) + 0.5 * l2 * np.sum(w[1:] ** 2)

    ref = minimize(loss, np.zeros(4), method="BFGS", options={"gtol": 1e-10}).x
    assert ensemble.fit_logistic(x, y, l2) == pytest.approx(ref, abs=1e-5)


def test_bootstrap_ensemble_is_seeded_and_sensible():
    rng = np.random.default_rng(1)
    n = 600
    feats = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n), "c": rng.choice(["u", "v", "w"], n)})
    y = (2 * feats["x1"] - feats["x2"] + rng.logistic(size=n) > 0).to_numpy()
    calls = []
    a = ensemble.bootstrap_ensemble(feats, y, n_models=6, seed=3, on_progress=lambda r: calls.append((r.done, r.total)))
    b = ensemble.bootstrap_ensemble(feats, y, n_models=6, seed=3)
    assert np.array_equal(a.probabilities, b.probabilities) and np.array_equal(a.folds, b.folds)
    assert a.probabilities.shape == (600, 6) and np.bincount(a.folds).tolist() == [120] * 5
    assert calls[-1] == (30, 30) and len(calls) == 30
    with pytest.raises(TypeError, match="progress"):   # the older (done, total) callback was removed: on_progress=
        ensemble.bootstrap_ensemble(feats, y, n_models=6, seed=3, progress=lambda d, t: None)
    assert a.accuracy > 0.75  # a learnable signal is learned
    # Out of fold: flipping fold 0's labels changes every other fold's models, but not the
    # probabilities of fold 0's own rows, whose models never saw them.
    flipped = np.where(a.folds == 0, ~y, y)
    c = ensemble.bootstrap_ensemble(feats, flipped, n_models=6, seed=3)
    assert np.array_equal(c.probabilities[a.folds == 0], a.probabilities[a.folds == 0])
    assert not np.allclose(c.probabilities[a.folds == 1], a.probabilities[a.folds == 1])
    assert not np.allclose(a.probabilities[:, 0], a.probabilities[:, 1])  # the bootstraps differ
    assert a.feature_names == ["x1", "x2", "c=v", "c=w"]


def test_bootstrap_ensemble_cancel_and_errors():
    feats = pd.DataFrame({"x": np.arange(50.0)})
    y = np.arange(50) % 2
    with pytest.raises(ensemble.Cancelled):
        ensemble.bootstrap_ensemble(feats, y, n_models=5, should_stop=lambda: True)
    bad = feats.assign(x=feats["x"].where(feats.index != 7))
    with pytest.raises(ValueError, match=r"row \d+, column 'x': missing value"):
        ensemble.bootstrap_ensemble(bad, y, n_models=3)
    ids = pd.DataFrame({"id": [f"p{i}" for i in range(200)]})
    with pytest.raises(ValueError, match="identifier"):
        ensemble.bootstrap_ensemble(ids, np.arange(200) % 2, n_models=3)


def test_ensemble_settings_are_checked_before_training():
    """The page checks the settings before it starts a background job, with the library's own messages."""
    feats = pd.DataFrame({"x": np.arange(20.0)})
    with pytest.raises(ValueError, match="too few for 5-fold"):
        ensemble.check_settings(feats, np.arange(20) % 2, folds=5)
    with pytest.raises(ValueError, match="n_models"):
        ensemble.check_settings(feats, np.arange(20) % 2, n_models=1, folds=2)
    with pytest.raises(ValueError, match="feature rows"):
        ensemble.check_settings(feats, np.arange(19) % 2, folds=2)
    ensemble.check_settings(feats, np.arange(20) % 2, folds=2)   # 20 rows, 2 folds: fine
