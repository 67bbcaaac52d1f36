"""ContinuousAudit (fairness_core/continuous.py): Fairlearn's per-group errors, the binary reduction, intervals
against scipy, bad input, the warehouse path and the verdicts."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fairness_core import io
from fairness_core.audit import Audit
from fairness_core.common.validation import DataValidationError
from fairness_core.continuous import ContinuousAudit
from fairness_core.results import Verdicts
from fairness_core.statistics.verdicts import VERDICTS


def _pay(seed: int = 0, n: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "race": rng.choice(["A", "B", "C"], n)})
    df["y"] = rng.lognormal(10.5, 0.4, n)
    df["pred"] = df["y"] * rng.lognormal(0, 0.1, n) + np.where(df["sex"] == "M", 1500.0, 0.0)
    return df


def test_per_group_mae_rmse_and_mean_error_equal_fairlearns_metricframe() -> None:
    from fairlearn.metrics import MetricFrame
    from sklearn.metrics import mean_absolute_error, mean_squared_error

    df = _pay()
    frame = MetricFrame(metrics={"mae": mean_absolute_error,
                                 "rmse": lambda y, p: float(np.sqrt(mean_squared_error(y, p))),
                                 "mean_error": lambda y, p: float(np.mean(p - y))},
                        y_true=df["y"], y_pred=df["pred"], sensitive_features=df["race"])
    table = ContinuousAudit.from_predictions(df["y"], df["pred"], df["race"], positive_is="benefit").by_group()
    for ours, theirs in (("mae", "mae"), ("rmse", "rmse"), ("mean_benefit", "mean_error")):
        np.testing.assert_allclose(table[ours].to_numpy(), frame.by_group[theirs].to_numpy(), rtol=1e-12, atol=0)


def test_binary_data_give_the_binary_ofi_exactly() -> None:
    rng = np.random.default_rng(2)
    g = rng.choice(["a", "b", "c", "d"], 2000)
    y, p = rng.integers(0, 2, 2000), (rng.random(2000) < np.where(g == "a", 0.7, 0.5)).astype(int)
    amounts = ContinuousAudit.from_predictions(y, p, g, positive_is="benefit").verdicts(0.05)
    binary = Audit.from_predictions(y, p, g, positive_is="benefit").verdicts(0.05)
    assert amounts[["group_i", "group_j"]].values.tolist() == binary[["group_i", "group_j"]].values.tolist()
    assert np.array_equal(amounts["ofi"].to_numpy(), binary["ofi"].to_numpy())
    np.testing.assert_array_equal(amounts["ratio"].to_numpy(), binary["di"].to_numpy())
    harm = ContinuousAudit.from_predictions(y, p, g, positive_is="harm").marginal_benefit()
    flipped = Audit.from_predictions(y, p, g, positive_is="harm").ofi_against("a")["B"]
    assert np.array_equal(harm.to_numpy(), flipped[harm.index].to_numpy())


def _union_by_scipy(x: np.ndarray, alpha: float = 0.05) -> tuple[float, float]:
    """Student's t interval (scipy) joined with Hall's, computed from scipy's skewness."""
    n, mean, se = x.size, x.mean(), stats.sem(x)
    t_low, t_high = stats.t.interval(1 - alpha, n - 1, mean, se)
    lam = stats.skew(x, bias=False) * x.std(ddof=1) ** 3 / n ** 2 / se ** 3
    q = stats.t.ppf(1 - alpha / 2, n - 1)
    roots = []
    for target in (q, -q):
        coefficients = [lam ** 2 / 27, lam / 3, 1, lam / 6 - target]     # g(t) = target, a cubic
        real = [r.real for r in np.roots(coefficients) if abs(r.imag) < 1e-9]
        roots.append(min(real, key=lambda r: abs(r - target)))
    return min(t_low, mean - se * roots[0]), max(t_high, mean - se * roots[1])


def test_by_group_intervals_equal_a_direct_scipy_computation() -> None:
    df = _pay(1, 400)
    table = ContinuousAudit.from_predictions(df["y"], df["pred"], df["sex"], positive_is="benefit").by_group()
    for group, rows in df.groupby("sex"):
        for column, values in (("mean_outcome", rows["y"]), ("mean_prediction", rows["pred"]),
                               ("mean_benefit", rows["pred"] - rows["y"]), ("mae", (rows["pred"] - rows["y"]).abs())):
            low, high = _union_by_scipy(values.to_numpy())
            assert table.loc[group, [f"{column}_ci_low", f"{column}_ci_high"]].tolist() == pytest.approx(
                [low, high], rel=1e-9)
        low, high = _union_by_scipy(((rows["pred"] - rows["y"]) ** 2).to_numpy())
        assert table.loc[group, ["rmse_ci_low", "rmse_ci_high"]].tolist() == pytest.approx(
            [np.sqrt(max(low, 0)), np.sqrt(high)], rel=1e-9)
    reference = table.attrs["reference"]
    assert table.loc[reference, "prediction_ratio"] == 1.0 and np.isnan(table.loc[reference, "prediction_ratio_ci_low"])


def test_intersections_and_marginals_pool_exactly() -> None:
    df = _pay(3)
    both = ContinuousAudit.from_predictions(df["y"], df["pred"], df[["sex", "race"]], positive_is="harm")
    assert both.attributes == ("sex", "race") and "F & A" in both.groups
    alone = ContinuousAudit.from_predictions(df["y"], df["pred"], df["sex"], positive_is="harm")
    marginal = both.marginal("sex")
    assert marginal.groups == ("sex = F", "sex = M") and alone.groups == ("F", "M")   # named as Audit.marginal names
    np.testing.assert_allclose(marginal.stats().to_numpy(), alone.stats().to_numpy(), rtol=1e-9)


def test_verdicts_are_the_binary_audits_result_object_in_the_outcomes_units() -> None:
    df = _pay(4, 4000)
    audit = ContinuousAudit.from_predictions(df["y"], df["pred"], df["sex"], positive_is="benefit")
    v = audit.verdicts(tolerance=500, alpha=0.05, adjust="holm")
    assert isinstance(v, Verdicts) and v.settings.tolerance == 500 and set(v["verdict"]) <= set(VERDICTS)
    row = v.iloc[0]
    assert (row["group_i"], row["group_j"], row["verdict"], row["favours"]) == ("F", "M", "algorithmic bias", "M")
    assert row["ofi_ci_high"] < -500 and "1,5" in row["explanation"]
    excludes = (v["ofi_ci_low"] > 0) | (v["ofi_ci_high"] < 0)
    assert np.array_equal(excludes.to_numpy(), (v["ofi_p_adjusted"] < 0.05).to_numpy())
    fair = ContinuousAudit.from_predictions(df["y"], df["y"] * 1.0001 + 1, df["sex"], positive_is="benefit")
    assert fair.verdicts(tolerance=500)["verdict"].tolist() == ["no bias detected"]


def test_a_pair_too_skewed_for_its_rows_is_inconclusive_with_the_reason() -> None:
    rng = np.random.default_rng(6)
    y = np.concatenate([rng.lognormal(0, 1, 10), rng.normal(5, 1, 200)])
    y[:10] = np.sort(y[:10])
    y[9] = 40.0   # one very large value among ten
    group = np.repeat(["small", "large"], [10, 200])
    v = ContinuousAudit.from_predictions(y, np.full(210, 5.0) + rng.normal(0, 0.01, 210), group,
                                         positive_is="benefit").verdicts(tolerance=1.0)
    assert v.loc[0, "verdict"] == "inconclusive"
    assert v.loc[0, "reason"] == "too skewed for 200 and 10 rows to tell"
    assert np.isnan(v.loc[0, "ofi_ci_low"]) and np.isnan(v.loc[0, "ofi_p"])


@pytest.mark.parametrize("y_true, y_pred, groups, message", [
    ([1, 2, "x", 4], [1, 2, 3, 4], list("aabb"), r"y_true\[2\]: 'x' is not a number"),
    ([1, 2, np.nan, 4], [1, 2, 3, 4], list("aabb"), r"y_true\[2\]: is missing"),
    ([1, 2, 3, 4], [1, np.inf, 3, 4], list("aabb"), r"y_pred\[1\]: is infinite"),
    ([1, 2, 3, 4], [1, 2, 3, 4], list("aaab"), r"group 'b' has one row \(sensitive_feature\[3\]\)"),
    ([5, 5, 5, 5], [1, 2, 3, 4], list("aabb"), r"y_true: every value is 5"),
    ([1, 2, 3], [1, 2, 3, 4], list("aabb"), "lengths differ: y_true has 3, y_pred has 4"),
])
def test_bad_input_is_named_by_column_and_row(y_true: list, y_pred: list, groups: list, message: str) -> None:
    with pytest.raises(DataValidationError, match=message):
        ContinuousAudit.from_predictions(y_true, y_pred, groups, positive_is="benefit")


def test_an_undeclared_direction_warns_with_the_assumption() -> None:
    with pytest.warns(UserWarning, match="assuming a positive prediction .a larger predicted amount. is a benefit"):
        ContinuousAudit.from_predictions([1, 2, 3, 4], [2, 2, 3, 5], list("aabb"))


def test_the_aggregate_path_equals_the_in_memory_path(tmp_path) -> None:
    df = _pay(5, 5000)
    df.to_parquet(tmp_path / "pay.parquet")
    big = io.aggregate(str(tmp_path / "*.parquet"), label="y", prediction="pred", groups=["sex", "race"],
                       positive_is="harm", continuous=True)
    mem = ContinuousAudit.from_predictions(df["y"], df["pred"], df[["sex", "race"]], positive_is="harm")
    assert big.groups == mem.groups and big.attributes == mem.attributes
    a, b = big.stats(), mem.stats()
    for column in a.columns:
        scale = b[column].abs().max() if not column.endswith("m3") else (b[column.replace("m3", "m2")] ** 1.5).max()
        np.testing.assert_allclose(a[column], b[column], rtol=0, atol=1e-11 * scale, err_msg=column)
    v_big, v_mem = big.verdicts(500), mem.verdicts(500)
    assert v_big["verdict"].tolist() == v_mem["verdict"].tolist()
    np.testing.assert_allclose(v_big["ofi_ci_low"], v_mem["ofi_ci_low"], rtol=1e-9)
    with pytest.raises(DataValidationError, match="column 'race'.*not a number"):
        io.aggregate(str(tmp_path / "*.parquet"), label="race", prediction="pred", groups=["sex"],
                     positive_is="harm", continuous=True)


def test_from_stats_round_trips() -> None:
    df = _pay(7, 500)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = ContinuousAudit.from_predictions(df["y"], df["pred"], df["race"], positive_is="benefit")
        assert ContinuousAudit.from_stats(a.stats(), "benefit") == a
