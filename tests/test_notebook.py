"""The notebook API: Audit.from_predictions, ConfusionMatrix.from_sklearn, difference() and ratio().

Cross-checked against Fairlearn's MetricFrame and scikit-learn (test-only dependencies)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from fairness_core import ConfusionMatrix, datasets
from fairness_core.audit import Audit
from fairness_core.io import DataValidationError

fairlearn_metrics = pytest.importorskip("fairlearn.metrics")
skm = pytest.importorskip("sklearn.metrics")


def _compas_rows() -> pd.DataFrame:
    df = datasets.compas_frame(datasets.ASSETS_DIR)
    return pd.DataFrame({"y": 1 - df["two_year_recid"].astype(int), "yhat": 1 - df["decile_score"].ge(5).astype(int),
                         "race": df["race"], "sex": df["sex"]}).reset_index(drop=True)


def _fpr(y, p):  # noqa: ANN001
    return fairlearn_metrics.false_positive_rate(y, p)


FAIRLEARN = {"PPR": fairlearn_metrics.selection_rate, "TPR": skm.recall_score, "FPR": _fpr,
             "ACC": skm.accuracy_score, "PPV": skm.precision_score}


@pytest.mark.parametrize("features", [["race"], ["race", "sex"]])
def test_per_group_metrics_equal_fairlearn_metricframe(features):
    rows = _compas_rows()
    audit = Audit.from_predictions(rows["y"], rows["yhat"], rows[features], positive_is="benefit")
    frame = fairlearn_metrics.MetricFrame(metrics=FAIRLEARN, y_true=rows["y"], y_pred=rows["yhat"],
                                          sensitive_features=rows[features])
    ours = audit.group_table(list(FAIRLEARN))
    theirs = frame.by_group
    theirs.index = [" & ".join(map(str, k)) if isinstance(k, tuple) else str(k) for k in theirs.index]
    assert sorted(ours.index) == sorted(theirs.index)
    for metric in FAIRLEARN:
        a, b = ours[metric], theirs.loc[ours.index, metric]
        defined = np.isfinite(a.to_numpy(float))
        np.testing.assert_allclose(a[defined], b[defined], rtol=0, atol=1e-12)
        # where a rate has a zero denominator we say undefined; scikit-learn says 0
        assert (b[~defined] == 0).all(), metric
    assert audit.cms[ours.index[0]].n == int(frame.count.loc[ours.index[0]]) if hasattr(frame, "count") else True


def test_undefined_rates_are_nan_with_a_reason_where_fairlearn_says_zero():
    y = [0, 0, 0, 1, 0, 1]  # group a has no positives: TPR undefined
    yhat = [1, 0, 0, 1, 1, 0]
    g = ["a", "a", "a", "b", "b", "b"]
    audit = Audit.from_predictions(y, yhat, g, positive_is="benefit")
    frame = fairlearn_metrics.MetricFrame(metrics=skm.recall_score, y_true=y, y_pred=yhat, sensitive_features=g)
    assert frame.by_group["a"] == 0
    assert math.isnan(audit.group_table(["TPR"]).loc["a", "TPR"])
    assert "TP + FN = 0" in audit.undefined_reasons(["TPR"])["a"]["TPR"] or audit.undefined_reasons(["TPR"])["a"]["TPR"]


def test_every_input_kind_gives_the_same_audit():
    rows = _compas_rows().head(400)
    reference = Audit.from_predictions(rows["y"], rows["yhat"], rows["race"], positive_is="benefit")
    kinds = [
        (rows["y"].tolist(), rows["yhat"].tolist(), rows["race"].tolist()),
        (rows["y"].to_numpy(), rows["yhat"].to_numpy(), rows["race"].to_numpy()),
        (rows["y"], rows["yhat"], rows[["race"]]),
        (rows["y"], rows["yhat"], {"race": rows["race"].to_numpy()}),
        (rows[["y"]], rows["yhat"].to_numpy()[:, None], rows["race"]),
    ]
    for y, p, s in kinds:
        assert Audit.from_predictions(y, p, s, positive_is="benefit").cms == reference.cms


def test_polars_inputs_when_polars_is_installed():
    pl = pytest.importorskip("polars")
    rows = _compas_rows().head(300)
    frame = pl.from_pandas(rows)
    audit = Audit.from_predictions(frame["y"], frame["yhat"], frame.select(["race", "sex"]), positive_is="benefit")
    assert audit.cms == Audit.from_predictions(rows["y"], rows["yhat"], rows[["race", "sex"]], positive_is="benefit").cms


def test_several_columns_make_intersections_named_as_in_the_app():
    audit = Audit.from_predictions([1, 0, 1, 0], [1, 1, 0, 0],
                                   pd.DataFrame({"race": ["A", "A", "B", "B"], "sex": ["F", "M", "F", "M"]}), positive_is="benefit")
    assert audit.groups == ["A & F", "A & M", "B & F", "B & M"]


def test_bad_input_gets_the_upload_messages():
    with pytest.raises(DataValidationError, match="y_true has 3, y_pred has 2"):
        Audit.from_predictions([1, 0, 1], [1, 0], ["a", "b", "a"], positive_is="benefit")
    with pytest.raises(DataValidationError, match=r"y_true\[2\]: 0 is a third distinct value \(after 1 and 2\)"):
        Audit.from_predictions([1, 2, 0, 1], [1, 0, 0, 1], ["a", "a", "b", "b"], positive_is="benefit")
    with pytest.raises(DataValidationError, match="one group"):
        Audit.from_predictions([1, 0], [1, 0], ["a", "a"], positive_is="benefit")
    with pytest.raises(DataValidationError, match="missing group value"):
        Audit.from_predictions([1, 0, 1], [1, 0, 1], ["a", None, "b"], positive_is="benefit")


def test_flip_and_threshold():
    audit = Audit.from_predictions([1, 1, 0, 0], [0.9, 0.2, 0.7, 0.1], ["a", "a", "b", "b"], threshold=0.5,
                                   positive_is="harm")
    # flipped: positive = label 0; predicted positive = score < 0.5
    assert audit.cms["a"] == ConfusionMatrix(tp=0, fn=0, fp=1, tn=1)
    assert audit.cms["b"] == ConfusionMatrix(tp=1, fn=1, fp=0, tn=0)
    assert any("flipped" in n for n in audit.notes)


def test_from_sklearn_reads_the_sklearn_layout_and_from_array_demands_an_order():
    rows = _compas_rows()
    sk = skm.confusion_matrix(rows["y"], rows["yhat"])
    right = ConfusionMatrix.from_predictions(rows["y"], rows["yhat"])
    assert ConfusionMatrix.from_sklearn(sk) == right
    assert ConfusionMatrix.from_array(sk.ravel(), order="tn fp fn tp") == right
    with pytest.raises(ValueError, match="order='tn fp fn tp'"):
        ConfusionMatrix.from_array(sk.ravel())  # the silent trap of issue 16 is now loud
    with pytest.raises(ValueError, match="from_sklearn"):
        ConfusionMatrix.from_array(sk)
    with pytest.raises(ValueError, match="tp, fn, fp and tn once each"):
        ConfusionMatrix.from_array(sk.ravel(), order="tp tp fp tn")
    # the TPR of the issue: 0.738, not the 0.618 of the wrong layout
    from fairness_core import metrics
    assert metrics.compute("TPR", ConfusionMatrix.from_sklearn(sk)) == pytest.approx(
        skm.recall_score(rows["y"], rows["yhat"]))


def test_difference_and_ratio_match_fairlearn_and_carry_intervals():
    rows = _compas_rows()
    audit = Audit.from_predictions(rows["y"], rows["yhat"], rows["race"], positive_is="benefit")
    frame = fairlearn_metrics.MetricFrame(metrics={"PPR": fairlearn_metrics.selection_rate, "TPR": skm.recall_score},
                                          y_true=rows["y"], y_pred=rows["yhat"], sensitive_features=rows["race"])
    diff, ratio = audit.difference(["PPR", "TPR"]), audit.ratio(["PPR", "TPR"])
    for metric in ("PPR", "TPR"):
        assert diff.loc[metric, "value"] == pytest.approx(frame.difference()[metric], abs=1e-12)
        assert ratio.loc[metric, "value"] == pytest.approx(frame.ratio()[metric], abs=1e-12)
    # B's difference is the OFI of the extreme pair, with the verdict work's interval (Bonferroni level)
    b = audit.difference("B").loc["B"]
    ofi = audit.pairwise("OFI").loc[b["group_high"], b["group_low"]]
    assert b["value"] == pytest.approx(ofi) and b["ci_low"] < ofi < b["ci_high"]
    assert "Bonferroni over 15" in b["interval"]
    # PPR's ratio is DI with its interval; other metrics say they have none
    di = audit.ratio("PPR").loc["PPR"]
    assert di["ci_low"] < di["value"] < di["ci_high"] and math.isnan(ratio.loc["TPR", "ci_low"])
    # to a reference group, as Fairlearn's to_overall-style comparisons
    to_ref = audit.difference("PPR", reference="Caucasian").loc["PPR"]
    values = audit.group_table(["PPR"])["PPR"]
    assert to_ref["value"] == pytest.approx((values - values["Caucasian"]).abs().max())
    assert "Caucasian" in (to_ref["group_high"], to_ref["group_low"])


def test_difference_ties_and_undefined_groups():
    tied = Audit({"a": ConfusionMatrix(1, 1, 1, 1), "b": ConfusionMatrix(2, 2, 2, 2)})
    d = tied.difference("B").loc["B"]
    assert d["value"] == 0 and d["group_high"] != d["group_low"]
    partly = Audit({"a": ConfusionMatrix(0, 0, 3, 4), "b": ConfusionMatrix(2, 1, 1, 2), "c": ConfusionMatrix(1, 2, 0, 3)})
    t = partly.difference("TPR").loc["TPR"]
    assert t["undefined_in"] == "a" and t["value"] == pytest.approx(2 / 3 - 1 / 3)
