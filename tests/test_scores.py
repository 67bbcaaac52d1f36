"""fairness_core.scores: calibration equals scikit-learn's calibration_curve per group, AUC its roc_auc_score,
DeLong's components a brute-force double loop, Clopper–Pearson statsmodels, the sweep a loop over thresholds;
bad scores are named by column and row and change nothing; the shipped AUC interval keeps its level at 30 rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.calibration import calibration_curve
from sklearn.metrics import roc_auc_score
from statsmodels.stats.proportion import proportion_confint

from fairness_core import scores
from fairness_core.io import DataValidationError


def rows(n: int = 600, seed: int = 0, integer: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c"], n, p=[0.5, 0.35, 0.15])
    p = np.clip(rng.beta(2, 3, n) + 0.1 * (g == "a"), 0, 1)
    y = rng.random(n) < p
    s = np.ceil(p * 10).clip(1, 10) if integer else np.round(p, 2)   # ties on purpose
    return y, s, g


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_calibration_equals_sklearn_calibration_curve_per_group(strategy: str) -> None:
    y, s, g = rows()
    table = scores.calibration(y, s, g, bins=8, strategy=strategy)
    for group in ("a", "b", "c"):
        rate, mean = calibration_curve(y[g == group], s[g == group], n_bins=8, strategy=strategy)
        part = table[table["group"] == group]
        np.testing.assert_allclose(part["observed_rate"], rate, rtol=1e-12)
        np.testing.assert_allclose(part["mean_score"], mean, rtol=1e-12)
    assert table.attrs["common_bins"] == (strategy == "uniform") and table.attrs["probabilities"]


def test_calibration_of_an_integer_score_has_one_bin_per_value_and_its_interval_is_clopper_pearson() -> None:
    y, s, g = rows(integer=True)
    table = scores.calibration(y, s, g, bins=10, strategy="auto")
    assert table.attrs["strategy"] == "values" and not table.attrs["probabilities"]
    a = table[table["group"] == "a"]
    assert (a["bin_low"] == a["mean_score"]).all() and (a["bin_high"] == a["mean_score"]).all()
    low, high = proportion_confint(table["positives"], table["n"], alpha=0.05, method="beta")
    np.testing.assert_allclose(table["ci_low"], low, atol=1e-10)
    np.testing.assert_allclose(table["ci_high"], high, atol=1e-10)
    wide = scores.calibration(y, s * 7 - 3, g, bins=4)            # not probabilities: bins over [min, max]
    assert wide["bin_low"].min() == (s * 7 - 3).min() and wide["bin_high"].max() == (s * 7 - 3).max()


def test_auc_equals_roc_auc_score_per_group_with_ties() -> None:
    for integer in (False, True):
        y, s, g = rows(integer=integer)
        r = scores.auc(y, s, g)
        for _, row in r.by_group.iterrows():
            assert row["auc"] == pytest.approx(roc_auc_score(y[g == row["group"]], s[g == row["group"]]), abs=1e-12)


def brute_delong(y: np.ndarray, s: np.ndarray) -> tuple[float, float]:
    """DeLong's AUC and variance by the definition: an explicit double loop over positives and negatives."""
    pos, neg = s[y], s[~y]
    psi = [[1.0 if x > z else 0.5 if x == z else 0.0 for z in neg] for x in pos]
    v10 = [sum(r) / len(neg) for r in psi]
    v01 = [sum(psi[i][j] for i in range(len(pos))) / len(pos) for j in range(len(neg))]
    area = sum(v10) / len(pos)
    s10 = sum((v - area) ** 2 for v in v10) / (len(pos) - 1)
    s01 = sum((v - area) ** 2 for v in v01) / (len(neg) - 1)
    return area, s10 / len(pos) + s01 / len(neg)


def test_delong_variance_equals_a_brute_force_double_loop() -> None:
    y, s, g = rows(n=90, seed=3, integer=True)
    r = scores.auc(y, s, g).by_group.set_index("group")
    for group in ("a", "b", "c"):
        area, var = brute_delong(y[g == group], s[g == group])
        assert r.loc[group, "auc"] == pytest.approx(area, abs=1e-12)
        assert r.loc[group, "se"] ** 2 == pytest.approx(var, rel=1e-10)


def test_auc_pairs_are_mover_intervals_whose_p_value_is_their_dual() -> None:
    y, s, g = rows(n=400, seed=5)
    for alpha in (0.05, 0.2):
        r = scores.auc(y, s, g, alpha=alpha, adjust="none")
        pairs = r.pairs
        assert list(zip(pairs["group_i"], pairs["group_j"])) == [("a", "b"), ("a", "c"), ("b", "c")]
        excludes = (pairs["ci_low"] > 0) | (pairs["ci_high"] < 0)
        assert (excludes == (pairs["p"] < alpha)).all()
        by = r.by_group.set_index("group")
        np.testing.assert_allclose(pairs["se"], np.sqrt(by.loc[pairs["group_i"], "se"].to_numpy() ** 2
                                                        + by.loc[pairs["group_j"], "se"].to_numpy() ** 2))


def test_a_group_with_one_class_has_an_undefined_auc_with_its_reason_never_0_or_1() -> None:
    y, s, g = rows(n=200, seed=2)
    y = y.copy()
    y[g == "c"] = False
    r = scores.auc(y, s, g)
    c = r.by_group.set_index("group").loc["c"]
    assert np.isnan(c["auc"]) and np.isnan(c["ci_low"]) and "no positive label" in c["undefined_because"]
    pairs = r.pairs[r.pairs["group_j"] == "c"]
    assert pairs["p"].isna().all() and pairs["undefined_because"].str.contains("AUC of c undefined").all()
    sweep = scores.threshold_sweep(y, s, g, [0.5])
    assert np.isnan(sweep.by_group.set_index("group").loc["c", "tpr"])


def test_threshold_sweep_equals_a_loop_over_thresholds_and_groups() -> None:
    y, s, g = rows(n=120, seed=7)
    thresholds = [0.0, 0.25, 0.4, 0.41, 0.6, 2.0]
    w = scores.threshold_sweep(y, s, g, thresholds)
    for t in thresholds:
        rates, benefits = [], []
        for group in ("a", "b", "c"):
            yy, sel = y[g == group], s[g == group] >= t
            tp, fp = int((sel & yy).sum()), int((sel & ~yy).sum())
            fn = int((~sel & yy).sum())
            row = w.by_group[(w.by_group["threshold"] == t) & (w.by_group["group"] == group)].iloc[0]
            assert (row["tp"], row["fp"], row["fn"]) == (tp, fp, fn)
            assert row["tpr"] == pytest.approx(tp / yy.sum()) and row["fpr"] == pytest.approx(fp / (~yy).sum())
            rates.append(sel.mean())
            benefits.append((fp - fn) / yy.size)
        summary = w.summary[w.summary["threshold"] == t].iloc[0]
        if max(rates) == 0:
            assert np.isnan(summary["di_min"]) and "nobody gets the favourable decision" in summary["undefined_because"]
        else:
            assert summary["di_min"] == pytest.approx(min(rates) / max(rates))
        assert summary["ofi_max_abs"] == pytest.approx(max(benefits) - min(benefits))


@pytest.mark.parametrize("bad, says", [
    (["0.2", "abc"], "score column 'tool_score': row 7 holds 'abc', not a number"),
    ([0.2, np.nan], "score column 'tool_score': row 7 is missing (NaN)"),
    ([0.2, np.inf], "score column 'tool_score': row 7 holds inf, not a finite number"),
    ([0.2, -np.inf], "score column 'tool_score': row 7 holds -inf, not a finite number"),
])
def test_bad_scores_are_named_by_column_and_row_and_change_nothing(bad: list, says: str) -> None:  # type: ignore[type-arg]
    s = np.array([0.1, 0.5, 0.3, 0.9, 0.7, bad[0], bad[1], 0.4], dtype=object if isinstance(bad[1], str) else float)
    y, g = np.array([1, 0, 0, 1, 1, 0, 1, 0]), np.array(list("aabbaabb"))
    before = s.copy()
    for call in (scores.calibration, scores.auc, scores.threshold_sweep):
        with pytest.raises(DataValidationError) as err:
            call(y, s, g, score_name="tool_score")
        assert says in str(err.value)
    assert (s.astype(str) == before.astype(str)).all()


def test_a_constant_score_and_bad_labels_are_named() -> None:
    y, g = np.array([1, 0, 1, 0]), np.array(list("aabb"))
    with pytest.raises(DataValidationError, match="score column 'decile' is constant"):
        scores.auc(y, [3, 3, 3, 3], g, score_name="decile")
    with pytest.raises(DataValidationError, match=r"labels \(y_true\): row 2 holds 2"):
        scores.auc([1, 2, 0, 1], [1, 2, 3, 4], g)
    with pytest.raises(DataValidationError, match="has 3 values but the labels have 4"):
        scores.validate_score([1, 2, 3], "x", n=4)
    with pytest.raises(ValueError, match="strategy must be one of"):
        scores.calibration(y, [1, 2, 3, 4], g, strategy="deciles")


def test_auc_interval_keeps_its_level_at_30_rows_where_delong_wald_does_not() -> None:
    """The quick form of scripts/score_coverage.py: binormal scores, AUC 0.9, 3 positives in 30 rows."""
    rng, reps, true_auc = np.random.default_rng(11), 3000, 0.9
    mu = np.sqrt(2) * stats.norm.ppf(true_auc)
    y = np.tile(np.r_[np.ones(3, bool), np.zeros(27, bool)], reps)
    s = rng.normal(np.where(y, mu, 0.0), 1.0)
    r = scores.auc(y, s, np.repeat(np.arange(reps), 30), pairs=False).by_group
    shipped = ((r["ci_low"] <= true_auc) & (true_auc <= r["ci_high"])).mean()
    half = 1.96 * r["se"].fillna(0)
    wald = ((r["auc"] - half <= true_auc) & (true_auc <= r["auc"] + half)).mean()
    assert shipped >= 0.93 and wald < 0.8, (shipped, wald)


def test_the_sweeps_impact_ratio_reads_the_favourable_decision_when_selection_is_a_harm():
    """A high-risk flag is a harm: the four-fifths ratio compares the rates of *not* being flagged."""
    rng = np.random.default_rng(11)
    g = rng.choice(["a", "b"], 400)
    s = rng.normal(np.where(g == "a", 0.0, 0.7), 1.0)
    y = rng.random(400) < 0.5
    flag = scores.threshold_sweep(y, s, g, [0.5], selected_is_favourable=False)
    flagged = flag.by_group.set_index("group")["selection_rate"]
    spared = 1 - flagged
    assert flag.summary["di_min"].iloc[0] == pytest.approx(spared.min() / spared.max())
    assert scores.threshold_sweep(y, s, g, [0.5]).summary["di_min"].iloc[0] == pytest.approx(
        flagged.min() / flagged.max())
