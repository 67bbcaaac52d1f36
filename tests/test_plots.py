"""Figures carry the right numbers (checked without a browser)."""

import math

import numpy as np
import pandas as pd
import pytest

from fairness_core import ConfusionMatrix, plots
from verdict_helpers import pair
from fairness_core.audit import Audit

CM = ConfusionMatrix
AUDIT = Audit({"i": CM(0, 1, 0, 5), "j": CM(0, 7, 0, 11), "k": CM(1, 1, 0, 5)})


def test_ofi_heatmap_holds_the_pairwise_values_and_terms_in_hover():
    fig = plots.pairwise_heatmap(AUDIT, "OFI")
    z = np.array(fig.data[0].z, dtype=float)
    order = list(fig.data[0].y)
    assert order == ["k", "i", "j"] and list(fig.data[0].x) == order  # by B: +1/7, −1/6, −7/18
    expected = AUDIT.pairwise("OFI").loc[order, order].to_numpy().copy()
    np.fill_diagonal(expected, np.nan)  # no self-pairs
    np.testing.assert_allclose(z, expected)
    hover = fig.data[0].hovertext[1][2]  # i against j
    assert "n = 6" in hover and "n = 18" in hover and "(0 − 1)/6" in hover and "(0 − 7)/18" in hover
    assert "B<sub>i</sub>" in hover and "B_i" not in hover  # real notation
    assert "B<sub>i</sub> − B<sub>j</sub>" in fig.layout.title.text


def test_di_heatmap_bands_by_four_fifths_and_marks_undefined():
    audit = Audit({"low": CM(1, 0, 1, 8), "high": CM(5, 0, 0, 5), "none": CM(0, 2, 0, 8)})
    fig = plots.disparate_impact_heatmap(audit)
    band = np.array(fig.data[0].z, dtype=float)
    assert list(fig.data[0].y) == ["high", "low", "none"]  # by selection rate: 0.5, 0.2, 0
    di = audit.pairwise("DI").loc[["high", "low", "none"], ["high", "low", "none"]].to_numpy()
    band, di = band[[1, 0, 2]][:, [1, 0, 2]], di[[1, 0, 2]][:, [1, 0, 2]]  # back to low, high, none
    text = np.array(fig.data[0].text, dtype=object)[[1, 0, 2]][:, [1, 0, 2]]
    assert di[0, 1] == 0.4 and band[0, 1] == -1.0  # low vs high: below 4/5, bias for j
    assert di[1, 0] == 2.5 and band[1, 0] == 1.0  # high vs low: above 5/4, bias for i
    assert math.isnan(band[0, 0]) and text[0][0] == ""  # no self-pairs on the diagonal
    assert math.isnan(di[0, 2]) and math.isnan(band[0, 2])  # P^_j = 0
    assert text[0][2] == "undefined"
    labels = [t for t in fig.data if t.type == "scatter"]
    assert labels and set(labels[0].text) == {"undefined"}
    off_diagonal = ~np.eye(3, dtype=bool)
    assert len(labels[0].text) == int((np.isnan(di) & off_diagonal).sum())


def test_heatmaps_with_verdicts_hover_the_interval_and_bracket_non_significant_cells():
    audit = Audit({"a": CM(300, 20, 90, 590), "b": CM(250, 120, 40, 590), "c": CM(3, 1, 1, 2)})
    v = audit.verdicts(0.05)
    fig = plots.pairwise_heatmap(audit, "OFI", v)
    assert list(fig.data[0].y) == ["a", "c", "b"]  # by B: +0.07, 0, −0.08
    a, b, c = 0, 2, 1
    text, hover = fig.data[0].text, fig.data[0].hovertext
    ab = pair(v, "a", "b")
    assert ab["verdict"] == "algorithmic bias" and not text[a][b].startswith("(")
    assert f"[{ab['ofi_ci_low']:+.3f}, {ab['ofi_ci_high']:+.3f}]" in hover[a][b]
    assert f"[{-ab['ofi_ci_high']:+.3f}, {-ab['ofi_ci_low']:+.3f}]" in hover[b][a]  # mirrored cell
    assert text[a][c].startswith("(") and "inconclusive" in hover[a][c]  # n = 7: not significant
    di_fig = plots.disparate_impact_heatmap(audit, v)
    assert "Holm-adjusted 98.3 % CI" in di_fig.data[0].hovertext[0][1]   # the adjusted interval, labelled so


def test_ofi_di_scatter_and_forest_plot_every_pair_with_intervals():
    audit = Audit({"a": CM(300, 20, 90, 590), "b": CM(250, 120, 40, 590), "c": CM(3, 1, 1, 2),
                   "<b>d</b>": CM(0, 5, 0, 5)})
    v = audit.verdicts(0.05)
    fig = plots.ofi_di_scatter(v)
    points = [t for t in fig.data if t.type == "scatter"]
    assert sum(len(t.x) for t in points) == int((np.isfinite(v["di"]) & (v["di"] > 0)).sum())
    assert {t.name for t in points} <= set(v["verdict"])
    assert "DI undefined or 0 not shown" in fig.layout.title.text  # d selects nobody: DI = 0 against it
    forest = plots.ofi_forest(v, "a")
    ys = [y for t in forest.data for y in t.y]
    assert len(ys) == 3 and any("&lt;b&gt;d&lt;/b&gt;" in y for y in ys)  # names escaped for Plotly
    row = pair(v, "a", "b")
    xb = [x for t in forest.data for x, y in zip(t.x, t.y) if y.startswith("b ")]
    assert xb == [pytest.approx(-row["ofi"])]  # b against a: the sign flips


def test_benefit_chart_shows_b_and_expected_b():
    fig = plots.benefit_chart(AUDIT)
    expected = [t for t in fig.data if t.name and t.name.startswith("expected")][0]
    benefit = [t for t in fig.data if t.name and t.name.startswith("benefit")][0]
    assert list(expected.y) == ["k", "i", "j"] and list(fig.layout.yaxis.categoryarray) == ["k", "i", "j"]
    np.testing.assert_allclose(expected.x, [2 / 7, 1 / 6, 7 / 18])
    np.testing.assert_allclose(benefit.x, [1 / 7, 0, 0])
    assert "P̂/n" in benefit.name


def _many(k: int, name_length: int = 38) -> Audit:
    rng = np.random.default_rng(k)
    names = [f"{'group of applicants number':<{name_length - 3}.{name_length - 3}}{g:03d}" for g in range(k)]
    return Audit({g: CM(*map(int, rng.multinomial(int(rng.integers(30, 900)), [0.3, 0.2, 0.1, 0.4])))
                  for g in names})


@pytest.mark.parametrize("k", [2, 6, 14, 15, 40, 60])
def test_heatmaps_label_every_group_and_write_values_only_while_they_fit(k):
    audit = _many(k)
    for fig in (plots.pairwise_heatmap(audit, "OFI", audit.verdicts()), plots.disparate_impact_heatmap(audit)):
        for axis in (fig.layout.xaxis, fig.layout.yaxis):
            assert axis.tickmode == "array" and list(axis.tickvals) == list(fig.data[0].y)  # every group, no thinning
            assert list(axis.ticktext) == list(axis.tickvals)  # 38 characters: shown in full
        assert set(fig.data[0].y) == set(audit.groups)
        written = fig.data[0].texttemplate == "%{text}"
        assert written == (k <= 14)
        assert ("hover a cell for its value" in fig.layout.title.text) == (k > 14)
        assert fig.layout.xaxis.tickangle == -90  # 38-character names stand upright
        assert fig.layout.height >= 110 + 18 * k  # cells never below 18 px


def test_heatmap_shortens_very_long_names_in_ticks_but_not_in_hover():
    long = "x" * 120
    audit = Audit({long: CM(5, 1, 2, 9), "short": CM(3, 3, 1, 9)})
    fig = plots.pairwise_heatmap(audit, "OFI")
    shown = dict(zip(fig.layout.yaxis.tickvals, fig.layout.yaxis.ticktext))
    assert shown["short"] == "short" and shown[long] == "x" * 39 + "…"
    assert any(long in h for row in fig.data[0].hovertext for h in row if h)
    short_names = Audit({"a": CM(5, 1, 2, 9), "b": CM(3, 3, 1, 9)})
    assert plots.pairwise_heatmap(short_names, "OFI").layout.xaxis.tickangle == -30


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


def test_figures_carry_plotly_template_whatever_the_process_default(monkeypatch):
    """Importing Streamlit makes its template plotly's default; exported figures (report, downloads)
    must not depend on it: it clipped every tick label of the app's downloaded report."""
    import plotly.io as pio

    monkeypatch.setattr(pio.templates, "default", "plotly_dark")
    fig = plots.pairwise_heatmap(AUDIT, "OFI")
    assert fig.layout.template.to_plotly_json() == pio.templates["plotly"].to_plotly_json()
    assert plots.benefit_chart(AUDIT).layout.template.layout.paper_bgcolor == pio.templates["plotly"].layout.paper_bgcolor
