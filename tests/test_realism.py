"""Realism measures: the classifier two-sample test (size at small n, power, the Hanley–McNeil
interval's coverage), marginal and correlation distances, and the reference samples."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.stats import norm

from fairness_core import realism


def auc_by_ranks(neg: np.ndarray, pos: np.ndarray) -> float:
    """Mann–Whitney AUC, P(pos > neg) + ½ P(tie), by brute force over all pairs."""
    d = pos[:, None] - neg[None, :]
    return float((d > 0).mean() + 0.5 * (d == 0).mean())


def test_hanley_mcneil_interval_covers_the_true_auc_at_small_n():
    """Binormal scores with a known AUC Φ(δ/√2): the 95 % interval covers it in about 95 % of
    2,000 simulated studies at n = 40 per side (coverage within [0.93, 0.97])."""
    rng = np.random.default_rng(0)
    for delta in (0.0, 0.8):
        truth = norm.cdf(delta / np.sqrt(2))
        hits = 0
        for _ in range(2000):
            neg, pos = rng.normal(0, 1, 40), rng.normal(delta, 1, 40)
            low, high = realism.hanley_mcneil(auc_by_ranks(neg, pos), 40, 40)
            hits += low <= truth <= high
        assert 0.93 <= hits / 2000 <= 0.97, (delta, hits / 2000)


def test_c2st_size_on_two_samples_of_one_distribution():
    """Same distribution on both sides (a numeric and a categorical column): the cross-fitted test's
    interval excludes 0.5 from above in at most 2 × its nominal 2.5 % of 80 runs at n = 120."""
    rng = np.random.default_rng(1)
    false_alarms = 0
    for k in range(80):
        make = lambda: pd.DataFrame({"x": rng.normal(size=120), "c": rng.choice(["a", "b", "c"], 120)})  # noqa: E731
        result = realism.c2st(make(), make(), folds=3, seed=k, max_iter=20)
        false_alarms += result.low > 0.5
    assert false_alarms <= 4


def test_c2st_finds_a_shift_and_a_broken_dependence():
    rng = np.random.default_rng(2)
    a = pd.DataFrame({"x": rng.normal(0, 1, 400), "c": rng.choice(["a", "b"], 400)})
    b = pd.DataFrame({"x": rng.normal(1, 1, 400), "c": rng.choice(["a", "b"], 400)})
    shifted = realism.c2st(a, b)
    assert shifted.low > 0.6 and "tells them apart" in shifted.reading()
    x = rng.normal(size=600)
    joint = pd.DataFrame({"x": x, "y": x + 0.1 * rng.normal(size=600)})
    strata = pd.Series(["all"] * 600)
    independent = realism.independent_columns(joint, strata, pd.Series({"all": 600}), seed=0)
    # each column's marginal is kept; the dependence is gone, and the test sees it
    assert stats.ks_2samp(independent["x"], joint["x"]).statistic < 0.1
    assert abs(np.corrcoef(independent["x"], independent["y"])[0, 1]) < 0.15
    assert realism.c2st(joint, independent).low > 0.6
    same = realism.c2st(joint.iloc[:300], joint.iloc[300:])
    assert same.low <= 0.5 <= same.high or same.auc < 0.6
    with pytest.raises(ValueError, match="too few"):
        realism.c2st(joint.iloc[:6], joint.iloc[6:12])


def test_marginal_and_correlation_distances_against_definitions():
    real = pd.DataFrame({"n": [0, 0, 0, 1, 2, 5], "c": ["a", "a", "b", "b", "b", "c"], "v": [1., 2, 3, 4, 5, 6]})
    syn = pd.DataFrame({"n": [0, 1, 1, 2, 3, 4], "c": ["a", "b", "b", "b", "c", "c"], "v": [6., 5, 4, 3, 2, 1]})
    table = realism.marginal_distances(real, syn)
    assert table.loc["n", "distance"] == pytest.approx(stats.ks_2samp(real["n"], syn["n"]).statistic)
    assert table.loc["n", "its share, real"] == 0.5 and table.loc["n", "its share, synthetic"] == pytest.approx(1 / 6)
    # total variation: ½ (|2/6 − 1/6| + |3/6 − 3/6| + |1/6 − 2/6|) = 1/6
    assert table.loc["c", "distance"] == pytest.approx(1 / 6) and table.loc["c", "kind"] == "categorical"
    corr = realism.correlation_distance(real, syn)
    r_real, r_syn = np.corrcoef(real["n"], real["v"])[0, 1], np.corrcoef(syn["n"], syn["v"])[0, 1]
    assert corr["max"] == pytest.approx(abs(r_real - r_syn)) and corr["columns"] == 2
    assert np.isnan(realism.correlation_distance(real[["c", "n"]], syn[["c", "n"]])["max"])  # one numeric column


def test_matched_sample_keeps_each_stratums_count():
    pool = pd.DataFrame({"g": ["a"] * 5 + ["b"] * 2, "x": range(7)})
    out = realism.matched_sample(pool, pool["g"], pd.Series({"a": 3, "b": 4}), seed=0)
    assert out["g"].value_counts().to_dict() == {"a": 3, "b": 4}
    assert out.loc[out["g"] == "a", "x"].is_unique  # enough rows: without replacement
    with pytest.raises(ValueError, match="stratum 'c' has no rows"):
        realism.matched_sample(pool, pool["g"], pd.Series({"c": 1}))
