"""Ordered and unordered categories (fairness_core.multiclass, issue 53): a small example worked by hand, scikit-learn's
per-class recall and FPR, the binary audit on two classes, brute force over the rows, statsmodels' ratio intervals,
intersections, decisions alone, the Local Law 144 table per class and cut, bad input, the figures, and COMPAS's tiers."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import confusion_matrix, multilabel_confusion_matrix, recall_score
from statsmodels.stats.proportion import confint_proportions_2indep

from fairness_core import inference, plots, regulatory
from fairness_core.audit import Audit, NeedsOutcomes
from fairness_core.common.validation import DataValidationError
from fairness_core.multiclass import MulticlassAudit
from fairness_core.services.datasets import compas_frame
from fairness_core.statistics import ordinal
from fairness_core.statistics.verdicts import selection_verdicts

TIERS = ["Low", "Medium", "High"]

# The worked example: risk tiers, "Low" the favourable end (s = −1). Rows: (observed, predicted) per person.
A = [("Low", "Low"), ("Low", "Medium"), ("Low", "High"), ("Medium", "Medium"), ("High", "Medium"), ("High", "High")]
B = [("Low", "Low"), ("Low", "Low"), ("Medium", "Low"), ("Medium", "Medium"), ("High", "Low"), ("High", "High"),
     ("Medium", "High")]


def worked() -> MulticlassAudit:
    rows = A + B
    return MulticlassAudit.from_predictions([r[0] for r in rows], [r[1] for r in rows],
                                            ["a"] * len(A) + ["b"] * len(B), order=TIERS, favourable="Low")


def random_classes(seed: int, n: int = 600, k: int = 4, groups: int = 3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    pred = np.where(rng.random(n) < 0.55, y, rng.integers(0, k, n))
    g = rng.choice([f"g{j}" for j in range(groups)], n)
    return y, pred, g


def test_the_worked_example_by_hand():
    m = worked()
    # group a: observed Low → (Low, Medium, High); Medium → Medium; High → (Medium, High)
    assert m.confusion("a").values.tolist() == [[1, 1, 1], [0, 1, 0], [0, 1, 1]]
    assert m.confusion("b").values.tolist() == [[2, 0, 0], [1, 1, 1], [1, 0, 1]]
    assert list(m.confusion("a").index) == TIERS and m.confusion("a").index.name == "outcome"
    # ordinal benefit b = −(r(ŷ) − r(y)): a = (0, −1, −2, 0, +1, 0) → B = −2/6; b = (0, 0, +1, 0, +2, 0, −1) → 2/7
    r = m.rates()
    assert r.loc["a", "B"] == pytest.approx(-2 / 6) and r.loc["b", "B"] == pytest.approx(2 / 7)
    # ordinal FPR: placed toward Low among those not observed Low; FNR: placed toward High among those not High
    assert (r.loc["a", "ordinal_fpr"], r.loc["a", "could_rise"]) == (pytest.approx(1 / 3), 3)
    assert (r.loc["a", "ordinal_fnr"], r.loc["a", "could_fall"]) == (pytest.approx(2 / 4), 4)
    assert r.loc["b", "ordinal_fpr"] == pytest.approx(2 / 5) and r.loc["b", "ordinal_fnr"] == pytest.approx(1 / 5)
    assert r.loc["a", "share_favoured"] == pytest.approx(1 / 6) and r.loc["a", "share_disfavoured"] == pytest.approx(2 / 6)
    assert m.cuts == ["Low", "Medium or better"] and m.cut_classes == ["Low", "Medium"]
    # cuts: a placed Low 1 of 6, Low or Medium 4 of 6; b 4 of 7 and 5 of 7
    assert m.at_cut("Low").selection_rates().tolist() == pytest.approx([1 / 6, 4 / 7])
    assert m.at_cut("Medium").selection_rates().tolist() == pytest.approx([4 / 6, 5 / 7])
    ir = m.impact_ratios()
    assert ir["cut"].tolist() == ["Low", "Medium or better"]
    assert ir["di"].tolist() == pytest.approx([(1 / 6) / (4 / 7), (4 / 6) / (5 / 7)])
    assert (ir["group_i"] == "a").all() and set(ir["verdict"]) == {"inconclusive"}   # 6 and 7 people say little
    b = m.benefits().set_index(["group", "benefit"])["count"]
    assert [b["a", v] for v in (-2, -1, 0, 1, 2)] == [1, 1, 3, 1, 0]


def test_brute_force_over_rows_gives_the_benefits_and_rates():
    y, pred, g = random_classes(1, n=400, k=5)
    order = [0, 1, 2, 3, 4]
    for favourable, sign in ((4, 1), (0, -1)):
        m = MulticlassAudit.from_predictions(y, pred, g, order=order, favourable=favourable)
        r = m.rates()
        for group in m.groups:
            rows = [(a, p) for a, p, h in zip(y, pred, g) if h == group]
            benefits = [sign * (p - a) for a, p in rows]
            top, bottom = (4, 0) if sign > 0 else (0, 4)   # favourable and unfavourable ends
            rise = [b for (a, _), b in zip(rows, benefits) if a != top]
            fall = [b for (a, _), b in zip(rows, benefits) if a != bottom]
            assert r.loc[group, "B"] == pytest.approx(sum(benefits) / len(rows))
            assert r.loc[group, "ordinal_fpr"] == pytest.approx(sum(b > 0 for b in rise) / len(rise))
            assert r.loc[group, "ordinal_fnr"] == pytest.approx(sum(b < 0 for b in fall) / len(fall))
        np.testing.assert_array_equal(ordinal.ordinal_benefit(y, pred, sign), sign * (pred - y))


def test_confusion_matrices_and_one_vs_rest_rates_equal_scikit_learns_per_group():
    y, pred, g = random_classes(2)
    m = MulticlassAudit.from_predictions(y, pred, g)    # unordered, no class declared favourable: no flips
    labels = [0, 1, 2, 3]
    assert m.classes == ("0", "1", "2", "3") and not m.ordered
    for group in m.groups:
        mask = g == group
        np.testing.assert_array_equal(m.confusion(group).values, confusion_matrix(y[mask], pred[mask], labels=labels))
        recall = recall_score(y[mask], pred[mask], labels=labels, average=None)
        mcm = multilabel_confusion_matrix(y[mask], pred[mask], labels=labels)   # per class [[TN, FP], [FN, TP]]
        fpr = mcm[:, 0, 1] / mcm[:, 0].sum(axis=1)
        for c in labels:
            table = m.one_vs_rest(c, undirected=True).group_table(["TPR", "FPR"])
            assert table.loc[group, "TPR"] == pytest.approx(recall[c], abs=1e-15)
            assert table.loc[group, "FPR"] == pytest.approx(fpr[c], abs=1e-15)
            rates = m.class_rates(c).loc[group]   # the same rates where no direction is declared
            assert rates["recall"] == pytest.approx(recall[c]) and rates["false_placement_rate"] == pytest.approx(fpr[c])
    undirected = m.one_vs_rest(1, undirected=True)
    assert undirected.positive_is is None and "not its verdicts" in undirected.notes[-1]


def test_an_unfavourable_class_is_audited_as_a_harm_with_flipped_cells():
    y, pred, g = random_classes(3, k=3)
    m = MulticlassAudit.from_predictions(y, pred, g, order=[0, 1, 2], favourable=0)
    harm, good = m.one_vs_rest(2), m.one_vs_rest(0)
    assert (harm.positive_is, good.positive_is) == ("harm", "benefit")
    assert harm.positive_outcome == "not placed in 2"
    for group in m.groups:
        mask = g == group
        mcm = multilabel_confusion_matrix(y[mask], pred[mask], labels=[0, 1, 2])[2]
        recall_2, fpr_2 = mcm[1, 1] / mcm[1].sum(), mcm[0, 1] / mcm[0].sum()
        flipped = harm.group_table(["FNR", "FPR"]).loc[group]
        assert flipped["FNR"] == pytest.approx(fpr_2) and flipped["FPR"] == pytest.approx(1 - recall_2)
    # the flipped audit is Audit.from_predictions(..., positive_is="harm") of "placed in 2" itself
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = Audit.from_predictions((y == 2).astype(int), (pred == 2).astype(int), g, positive_is="harm")
    assert {k: v.as_array().tolist() for k, v in direct.cms.items()} == \
        {k: v.as_array().tolist() for k, v in harm.cms.items()}


def test_two_classes_reduce_to_the_binary_audit():
    rng = np.random.default_rng(4)
    y, pred = rng.integers(0, 2, 500), rng.integers(0, 2, 500)
    g = rng.choice(["p", "q", "r"], 500)
    m = MulticlassAudit.from_predictions(y, pred, g, order=[0, 1], favourable=1)
    binary = Audit.from_predictions(y, pred, g, positive_is="benefit")
    r, t = m.rates(), binary.group_table(["B", "FPR", "FNR"])
    np.testing.assert_allclose(r["B"], t["B"], atol=1e-15)
    np.testing.assert_allclose(r["ordinal_fpr"], t["FPR"], atol=1e-15)
    np.testing.assert_allclose(r["ordinal_fnr"], t["FNR"], atol=1e-15)
    np.testing.assert_array_equal(ordinal.ordinal_cells(m.counts, 1), binary.cells()[["TP", "FN", "FP", "TN"]].to_numpy())
    # the cut "1" is the binary decision: the same four-fifths verdicts, interval for interval
    ours, theirs = m.impact_ratios(), Audit.from_decisions(pred, g, positive_is="benefit").verdicts()
    cols = ["group_i", "group_j", "di", "di_ci_low", "di_ci_high", "di_p_adjusted", "verdict"]
    pd.testing.assert_frame_equal(ours.table[cols].reset_index(drop=True), theirs.table[cols].reset_index(drop=True))


def test_the_ordinal_ofi_is_the_amounts_ofi_of_the_ranks_and_the_binary_ofi_on_two_classes():
    m = worked()
    amounts = m.ordinal_audit()
    assert amounts.marginal_benefit().tolist() == pytest.approx(m.rates()["B"].tolist())
    v = m.verdicts(0.25)
    row = v.iloc[0]
    sign = 1 if row["group_i"] == "a" else -1
    assert sign * row["ofi"] == pytest.approx(-2 / 6 - 2 / 7)
    assert row["ofi_ci_low"] < row["ofi"] < row["ofi_ci_high"] and row["verdict"] == "inconclusive"
    rng = np.random.default_rng(5)
    y, pred, g = rng.integers(0, 2, 800), rng.integers(0, 2, 800), rng.choice(["u", "v"], 800)
    two = MulticlassAudit.from_predictions(y, pred, g, order=[0, 1], favourable=1)
    binary = Audit.from_predictions(y, pred, g, positive_is="benefit")
    ofi = two.verdicts(0.05).set_index(["group_i", "group_j"])["ofi"]
    (i, j), value = next(iter(ofi.items()))
    assert value == pytest.approx(binary.pairwise("OFI").loc[i, j], abs=1e-12)


def test_impact_ratios_adjust_across_cuts_and_pairs_together():
    rng = np.random.default_rng(6)
    groups = rng.choice(["a", "b", "c", "d"], 3000, p=[0.4, 0.3, 0.2, 0.1])
    shift = pd.Series({"a": 0.0, "b": 0.4, "c": 0.1, "d": 0.8})[groups].to_numpy()
    tier = np.clip(np.floor(rng.random(3000) * 4 - shift), 0, 3).astype(int)
    m = MulticlassAudit.from_decisions(tier, groups, [0, 1, 2, 3], favourable=3)
    v = m.impact_ratios(alpha=0.05)
    assert len(v) == 3 * 6 and v.levels.pairs == 18
    holm = inference.adjust_p_values(v["di_p"], "holm")
    excludes_one = (v["di_ci_high"] < 1) | (v["di_ci_low"] > 1)
    # one interval per ratio at the smallest of the three families' Holm levels (over all 18 ratios): what it
    # excludes Holm rejects, and the adjusted p printed beside it agrees with it exactly
    assert (holm[excludes_one.to_numpy()] < 0.05).all() and (v["di_p_adjusted"] >= holm - 1e-15).all()
    np.testing.assert_array_equal(excludes_one.to_numpy(), (v["di_p_adjusted"] < 0.05).to_numpy())
    assert 1 - v.levels.di <= v.levels.di_families["differs from 1"] + 1e-15
    assert (v["di"] <= 1).all()                                            # j the more selected: LL144's ratio
    # each unadjusted interval is statsmodels' Miettinen–Nurminen score interval for a ratio (groups >= 30 rows)
    for _, row in v.sample(5, random_state=0).iterrows():
        low, high = confint_proportions_2indep(row["selected_i"], row["n_i"], row["selected_j"], row["n_j"],
                                               method="score", compare="ratio", alpha=0.05)
        assert (row["di_ci_low_unadjusted"], row["di_ci_high_unadjusted"]) == (pytest.approx(low, rel=1e-6),
                                                                                 pytest.approx(high, rel=1e-6))
    one = ordinal.ratio_verdicts(m.compared_groups, [ordinal.cut_counts(m.placed, 1)[:, 0]], m.n.to_numpy(),
                                 ["3"], ["favourable"], 0.05, "holm")
    alone = selection_verdicts(m.compared_groups, ordinal.cut_counts(m.placed, 1)[:, 0], m.n.to_numpy(), 0.05, "holm")
    cols = ["group_i", "group_j", "di", "di_ci_low", "di_ci_high", "verdict"]
    pd.testing.assert_frame_equal(one.table[cols], alone.table[cols])       # one cut: the binary function exactly
    # more families, wider intervals: the cut's interval in the joint table is at least as wide
    joint = v[v["cut"] == "3"].reset_index(drop=True)
    assert ((joint["di_ci_high"] - joint["di_ci_low"]) >= (one["di_ci_high"] - one["di_ci_low"]) - 1e-12).all()


def test_unordered_classes_give_shares_and_class_ratios_with_directions_but_no_ordinal_benefit():
    y, pred, g = random_classes(7, k=3)
    names = np.array(["cat", "dog", "fish"])
    m = MulticlassAudit.from_predictions(names[y], names[pred], g, favourable=["dog"])
    assert [m.class_direction(c) for c in m.classes] == ["unfavourable", "favourable", "unfavourable"]
    shares = m.shares().set_index(["group", "class"])
    for group in m.groups:
        counts = pd.Series(names[pred][g == group]).value_counts()
        assert shares.loc[(group, "cat"), "share"] == pytest.approx(counts["cat"] / (g == group).sum())
    v = m.impact_ratios()
    assert set(v["class"]) == {"cat", "dog", "fish"} and len(v) == 9
    harm = v[(v["class"] == "cat") & (v["adverse_to"] != "")]
    assert (harm["adverse_to"] == harm["group_j"]).all()   # more often placed in an unfavourable class
    for method in (m.rates, m.benefits, m.ordinal_audit, lambda: m.verdicts(0.1), lambda: m.impact_ratios(by="cut")):
        with pytest.raises(ValueError, match="need an order"):
            method()


def test_decisions_alone_answer_shares_and_ratios_and_refuse_every_outcome_measure():
    m = MulticlassAudit.from_decisions(["A", "B", "C", "A", "C", "C", "B", "A", "A"] * 10,
                                       ["x", "x", "x", "y", "y", "y", "Decline to state", "x", "y"] * 10,
                                       ["A", "B", "C"], favourable="A")
    assert not m.has_outcomes and m.unknown == ("unknown",) and m.compared_groups == ["x", "y"]
    assert m.impact_ratios()["cut"].tolist() == ["A", "B or better"]
    assert m.shares().groupby("group")["share"].sum().tolist() == pytest.approx([1, 1, 1])
    assert not m.one_vs_rest("C").has_outcomes and m.at_cut("B").selection_rates()["x"] == pytest.approx(0.75)
    for method in (lambda: m.confusion("x"), m.rates, m.benefits, m.ordinal_audit, lambda: m.verdicts(0.1),
                   m.error_rate_gaps):
        with pytest.raises(NeedsOutcomes, match="needs outcomes"):
            method()
    assert MulticlassAudit.from_predictions(None, ["A", "B"] * 3, ["x", "y", "y", "x", "x", "y"], ["A", "B"],
                                            favourable="A").has_outcomes is False


def test_intersections_and_marginals_pool_the_counts():
    rng = np.random.default_rng(8)
    sex, race = rng.choice(["F", "M"], 500), rng.choice(["p", "q", "r"], 500)
    y, pred = rng.integers(0, 3, 500), rng.integers(0, 3, 500)
    m = MulticlassAudit.from_predictions(y, pred, {"sex": sex, "race": race}, order=[0, 1, 2], favourable=2)
    assert m.attributes == ("sex", "race") and "F & p" in m.groups and len(m.groups) == 6
    alone = MulticlassAudit.from_predictions(y, pred, {"sex": sex}, order=[0, 1, 2], favourable=2)
    pooled = m.marginal("sex")
    assert pooled.groups == ("sex = F", "sex = M")          # F, M alone would say nothing: named with the attribute
    np.testing.assert_array_equal(pooled.counts, alone.counts)
    assert pooled.rates()["B"].tolist() == pytest.approx(alone.rates()["B"].tolist())
    assert m.one_vs_rest(2).marginal("race").groups == list(m.marginal("race").groups)
    with pytest.raises(ValueError, match="not one of this audit's attributes"):
        m.marginal("age")


def test_the_local_law_144_table_reports_every_class_and_every_cut():
    rng = np.random.default_rng(9)
    sex = rng.choice(["F", "M"], 1000)
    tier = np.where(rng.random(1000) < np.where(sex == "F", 0.3, 0.5), "Well qualified",
                    rng.choice(["Qualified", "Not qualified"], 1000))
    order = ["Not qualified", "Qualified", "Well qualified"]
    m = MulticlassAudit.from_decisions(tier, {"sex": sex}, order, favourable="Well qualified")
    s = regulatory.ll144_summary(m)
    assert list(s.columns[:2]) == ["classification", "basis"] and "OFI" not in s
    assert list(dict.fromkeys(zip(s["basis"], s["classification"]))) == [
        ("class", "Not qualified"), ("class", "Qualified"), ("class", "Well qualified"), ("cut", "Qualified or better")]
    for cls in order:   # each class: the binary summary of "placed in it"
        mine = s[(s["basis"] == "class") & (s["classification"] == cls)].set_index("category")
        binary = regulatory.ll144_summary(Audit.from_decisions((tier == cls).astype(int), {"sex": sex},
                                                               positive_is="benefit")).set_index("category")
        pd.testing.assert_series_equal(mine["impact ratio"], binary["impact ratio"])
        rate = pd.Series(tier == cls).groupby(sex).mean()
        assert mine["selection rate"].to_dict() == pytest.approx(rate.to_dict())
        assert mine["impact ratio"].to_dict() == pytest.approx((rate / rate.max()).to_dict())
    assert "sorts people into classes" in regulatory.rules_text(s)
    with_outcomes = MulticlassAudit.from_predictions(np.roll(tier, 7), tier, {"sex": sex}, order,
                                                     favourable="Well qualified")
    t = regulatory.ll144_summary(with_outcomes)
    assert t.loc[t["basis"] == "cut", "OFI verdict"].ne("").any() and t.loc[t["basis"] == "class", "OFI"].isna().all()
    with pytest.raises(ValueError, match="scores are not taken"):
        regulatory.ll144_summary(m, scores=np.zeros(1000))


@pytest.mark.parametrize("kwargs, message", [
    (dict(y_true=["Low", "High", "Hgh", "Low"], order=TIERS), r"y_true\[2\]: 'Hgh' is not one of the declared classes"),
    (dict(y_pred=["Low", "High", "Medium", "medium"], order=TIERS), r"y_pred\[3\]: 'medium' is not one of"),
    (dict(y_true=["Low", None, "High", "Low"]), r"y_true\[1\]: missing class"),
    (dict(y_pred=[np.nan, "Low", "High", "Low"]), r"y_pred\[0\]: missing class"),
    (dict(y_true=["Low"] * 4, y_pred=["Low"] * 4), "every row is 'Low'.*at least two classes"),
    (dict(order=["Low"]), "order names 1 class"),
    (dict(order=["Low", "High", "Low"]), "names the class 'Low' twice"),
    (dict(order=TIERS, favourable="Medium"), "favourable must name one end of the order, 'Low' or 'High'"),
    (dict(order=TIERS, favourable=None), "favourable= names the end"),
    (dict(y_pred=["Low", "Medium", "Low", "High"]), "'Medium' is predicted .* never an observed outcome"),
    (dict(groups=["a", "a", "a", "b"]), r"sensitive_features\[3\]: group 'b' has a single row"),
    (dict(groups=["a", "a", "b"]), "lengths differ"),
])
def test_bad_input_gets_its_own_sentence_and_nothing_is_computed(kwargs, message):
    args = dict(y_true=["Low", "High", "High", "Low"], y_pred=["Low", "High", "Low", "Low"], groups=["a", "a", "b", "b"],
                order=None, favourable="Low")
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        MulticlassAudit.from_predictions(args["y_true"], args["y_pred"], args["groups"], args["order"],
                                         favourable=args["favourable"])


def test_a_declared_class_nobody_was_observed_in_is_a_warning_not_an_error():
    with pytest.warns(UserWarning, match="'Medium' is predicted .* never an observed outcome"):
        m = MulticlassAudit.from_predictions(["Low", "High", "High", "Low"], ["Low", "Medium", "Low", "High"],
                                             ["a", "a", "b", "b"], TIERS, favourable="Low")
    assert any("never an observed outcome" in n for n in m.notes)
    assert np.isnan(m.one_vs_rest("Medium", undirected=True).group_table(["TPR"])["TPR"]).all()   # undefined, not 0


def test_figures_hold_the_shares_and_ratios_and_escape_user_text():
    y = ["<b>lo</b>", "hi", "hi", "<b>lo</b>", "hi", "<b>lo</b>"] * 5
    p = ["<b>lo</b>", "hi", "<b>lo</b>", "<b>lo</b>", "hi", "hi"] * 5
    g = ["<i>x</i>", "<i>x</i>", "<i>x</i>", "y", "y", "y"] * 5
    m = MulticlassAudit.from_predictions(y, p, g)
    fig = plots.class_heatmaps(m)
    assert len(fig.data) == 2 and fig.data[0].z.tolist() == [[1.0, 0.0], [0.5, 0.5]]   # rows <b>lo</b>, hi
    assert "&lt;b&gt;lo&lt;/b&gt;" in fig.data[0].x and "<b>lo</b>" not in fig.data[0].x
    titles = [a.text for a in fig.layout.annotations]
    assert any("&lt;i&gt;x&lt;/i&gt;" in t for t in titles) and not any("<i>" in t for t in titles)
    assert "&lt;i&gt;x&lt;/i&gt;" in fig.data[0].hovertext[0][0]
    d = plots.class_heatmaps(m.decisions())
    assert np.asarray(d.data[0].z).sum(axis=1).tolist() == pytest.approx([1, 1])
    ratios = MulticlassAudit.from_decisions(np.repeat(TIERS * 2, [30, 20, 10, 10, 20, 30]), ["a"] * 60 + ["<b>"] * 60,
                                            TIERS, favourable="Low").impact_ratios()
    chart = plots.impact_ratio_chart(ratios)
    assert sorted(x for t in chart.data for x in t.x) == pytest.approx(sorted(ratios["di"]))
    assert all("&lt;b&gt;" in y for t in chart.data for y in t.y) and "Holm-adjusted" in chart.layout.xaxis2.title.text
    assert all(t.error_x.array is not None for t in chart.data)


def test_compas_tiers_by_race_against_an_independent_count():
    df = compas_frame()
    m = MulticlassAudit.from_decisions(df["score_text"], df[["race"]], TIERS, favourable="Low")
    shares = m.shares().set_index(["group", "class"])["share"]
    expected = pd.crosstab(df["race"], df["score_text"], normalize="index")
    for (race, tier), value in shares.items():
        assert value == pytest.approx(expected.loc[race, tier], abs=1e-15)
    assert m.small_groups == ["Asian", "Native American"]                       # under 2 %: never compared
    v = m.impact_ratios().set_index(["cut", "group_i", "group_j"])
    black_white = v.loc[("Medium or better", "African-American", "Caucasian")]
    good = df["score_text"].isin(["Low", "Medium"]).groupby(df["race"]).mean()
    assert black_white["di"] == pytest.approx(good["African-American"] / good["Caucasian"])
    assert black_white["verdict"] == "materiality unclear"     # 0.82: below 1 for sure, but not below 4/5 for sure
    assert v.loc[("Low", "African-American", "Caucasian"), "verdict"] == "adverse impact"
    s = regulatory.ll144_summary(m).set_index(["classification", "category"])
    assert s.loc[("High", "African-American"), "status"].startswith("most selected")

    # Outcomes: reoffended within two years (High) or not (Low); nobody is observed "Medium"
    with pytest.warns(UserWarning, match="'Medium' is predicted"):
        m = MulticlassAudit.from_predictions(np.where(df["two_year_recid"] == 1, "High", "Low"), df["score_text"],
                                             df[["race"]], TIERS, favourable="Low")
    r = m.rates()
    not_reoffending = df[df["two_year_recid"] == 0]
    flagged = not_reoffending["score_text"].ne("Low").groupby(not_reoffending["race"]).mean()
    assert r["ordinal_fnr"].to_dict() == pytest.approx(flagged.to_dict(), abs=1e-15)   # ProPublica's "labelled higher risk"
    gaps = m.error_rate_gaps().set_index(["rate", "group_i", "group_j"])
    gap = gaps.loc[("ordinal FNR", "African-American", "Caucasian")]
    assert gap["differs"] and gap["ci_low"] > 0.15
