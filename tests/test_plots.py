"""Figures carry the right numbers (checked without a browser)."""

import math

import numpy as np
import pandas as pd

from fairness_core import ConfusionMatrix, plots
from fairness_core.audit import Audit

CM = ConfusionMatrix
AUDIT = Audit({"i": CM(0, 1, 0, 5), "j": CM(0, 7, 0, 11), "k": CM(1, 1, 0, 5)})


def test_ofi_heatmap_holds_the_pairwise_values_and_terms_in_hover():
    fig = plots.pairwise_heatmap(AUDIT, "OFI")
    z = np.array(fig.data[0].z, dtype=float)
    np.testing.assert_allclose(z, AUDIT.pairwise("OFI").to_numpy())
    hover = fig.data[0].hovertext[0][1]
    assert "n = 6" in hover and "n = 18" in hover and "(0 − 1)/6" in hover and "(0 − 7)/18" in hover


def test_di_heatmap_bands_by_four_fifths_and_marks_undefined():
    audit = Audit({"low": CM(1, 0, 1, 8), "high": CM(5, 0, 0, 5), "none": CM(0, 2, 0, 8)})
    fig = plots.disparate_impact_heatmap(audit)
    band = np.array(fig.data[0].z, dtype=float)
    di = audit.pairwise("DI").to_numpy()
    assert di[0, 1] == 0.4 and band[0, 1] == -1.0  # low vs high: below 4/5, bias for j
    assert di[1, 0] == 2.5 and band[1, 0] == 1.0  # high vs low: above 5/4, bias for i
    assert band[0, 0] == 0.0  # a group against itself: DI = 1
    assert math.isnan(di[0, 2]) and math.isnan(band[0, 2])  # P^_j = 0
    assert fig.data[0].text[0][2] == "undefined"
    labels = [t for t in fig.data if t.type == "scatter"]
    assert labels and set(labels[0].text) == {"undefined"}
    assert len(labels[0].text) == int(np.isnan(di).sum())


def test_benefit_chart_shows_b_and_expected_b():
    fig = plots.benefit_chart(AUDIT)
    expected = [t for t in fig.data if t.name and t.name.startswith("expected")][0]
    benefit = [t for t in fig.data if t.name and t.name.startswith("benefit")][0]
    np.testing.assert_allclose(expected.x, [1 / 6, 7 / 18, 2 / 7])
    np.testing.assert_allclose(benefit.x, [0, 0, 1 / 7])


def test_every_comparison_has_a_heatmap():
    from fairness_core import bias
    for name in bias.NAMES:
        fig = plots.pairwise_heatmap(AUDIT, name)
        assert fig.data[0].type == "heatmap"


def test_group_metric_chart_labels_undefined_instead_of_zero():
    audit = Audit({"a": CM(0, 0, 3, 4), "b": CM(2, 1, 1, 2)})
    fig = plots.group_metric_chart(audit, "TPR")
    bars = fig.data[0]
    assert math.isnan(bars.y[0]) and bars.y[1] == 2 / 3
    assert bars.text[0] == "undefined"
    assert fig.data[1].x == ("a",) and fig.data[1].text == ("undefined",)


def test_gei_figures_carry_the_decomposition_and_mark_disallowed_alphas():
    from fairness_core import entropy

    audit = Audit({"a": CM(3, 2, 1, 4), "b": CM(6, 1, 2, 5)})
    table = entropy.decomposition_over_alpha(audit.cms, entropy.SPEICHER, [0.0, 1.0, 2.0])
    fig = plots.gei_decomposition(table, 2.0)
    within, between, undefined = fig.data
    assert math.isnan(within.y[0]) and undefined.text == ("undefined",) and undefined.x == ("α = 0",)
    parts = entropy.decompose(audit.cms, entropy.SPEICHER, 2.0)
    assert within.y[2] == parts["within"] and between.y[2] == parts["between"]
    assert within.x[2] == "α = 2 (chosen)"
    mu, lam, grid = entropy.landscape(entropy.SPEICHER, 2.0, size=21)

    pts = pd.DataFrame([{"group": g, "n": cm.n, "index": 0.1, "mu": entropy.mu_lambda(cm, entropy.SPEICHER)[0],
                         "lambda": entropy.mu_lambda(cm, entropy.SPEICHER)[1]} for g, cm in audit.cms.items()])
    fig = plots.gei_landscape(mu, lam, grid, pts, 2.0, ("TP", "TN"))
    assert list(fig.data[1].text) == ["a", "b"] and fig.data[1].y[0] == 7 / 10  # λ = accuracy of a


def test_stability_figures():
    from fairness_core import stability

    rng = np.random.default_rng(0)
    rows = stability.RowData(rng.integers(0, 2, 60), rng.integers(0, 2, 60), np.repeat(["x", "y", "z"], 20),
                             rng.uniform(size=(60, 5)))
    dist = stability.distribution_table(rows)
    fig = plots.stability_boxes(dist)
    assert [t.name for t in fig.data] == list(stability.INDIVIDUAL_METRICS)
    ls = dist[dist["metric"] == "label stability"].set_index("group")
    assert list(fig.data[0].median) == ls.loc[["x", "y", "z"], "q50"].tolist()
    disp = stability.disparities(stability.group_table(rows), "x")
    fig = plots.stability_disparities(disp)
    assert [t.name for t in fig.data] == ["y", "z"] and "DI" not in fig.data[0].y
    assert fig.data[0].x[0] == disp.loc["y", "ΔFPR"]
