"""A class against the rest where no direction is declared (issue 53, the newcomer's pass): rates without verdicts,
and notes that belong to the class viewed."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import beta
from sklearn.metrics import recall_score

from fairness_core import datasets
from fairness_core.multiclass import MulticlassAudit


def _rows():
    rng = np.random.default_rng(7)
    n = 300
    g = rng.choice(["a", "b", "c"], n)
    y = rng.choice(["L", "M", "H"], n, p=[0.5, 0.3, 0.2])
    p = np.where(rng.random(n) < 0.7, y, rng.choice(["L", "M", "H"], n))
    return y, p, g


def test_class_rates_equal_direct_counts_sklearns_recall_and_clopper_pearson():
    y, p, g = _rows()
    m = MulticlassAudit.from_predictions(y, p, g, order=["L", "M", "H"], favourable="L")
    r = m.class_rates("M", alpha=0.05)
    for grp in ["a", "b", "c"]:
        s = g == grp
        assert r.loc[grp, "observed"] == int((y[s] == "M").sum())
        assert r.loc[grp, "placed"] == int((p[s] == "M").sum())
        assert r.loc[grp, "recall"] == pytest.approx(recall_score(y[s] == "M", p[s] == "M"))
        false, elsewhere = int(((p[s] == "M") & (y[s] != "M")).sum()), int((y[s] != "M").sum())
        assert r.loc[grp, "false_placement_rate"] == pytest.approx(false / elsewhere)
        k, n = r.loc[grp, "placed"], r.loc[grp, "n"]
        assert r.loc[grp, "share_placed_ci_low"] == pytest.approx(beta.ppf(0.025, k, n - k + 1))
        assert r.loc[grp, "share_placed_ci_high"] == pytest.approx(beta.ppf(0.975, k + 1, n - k))


def test_a_class_nobody_was_observed_in_has_undefined_recall_with_a_reason():
    m = datasets.load_kind_demo("compas_tiers")
    r = m.class_rates("Medium")
    assert (r["observed"] == 0).all() and r["recall"].isna().all()
    assert r["undefined_because"].str.contains("nobody observed in this class").all()


def test_a_classs_binary_audit_carries_only_its_own_note():
    m = datasets.load_kind_demo("compas_tiers")
    assert any("'Medium' is predicted" in n for n in m.notes)          # about the data as a whole
    high = m.one_vs_rest("High")
    assert not any("'Medium'" in n for n in high.notes) and len(high.notes) == 1
    medium = m.one_vs_rest("Medium", "harm")
    assert "Nobody was observed in 'Medium'" in medium.notes[0]
    assert not any("y_pred" in n or "y_true" in n for n in (*high.notes, *medium.notes))


def test_the_impact_ratio_panels_list_the_pairs_in_one_order_with_one_name_each():
    from fairness_core import plots

    m = datasets.load_kind_demo("compas_tiers")
    fig = plots.impact_ratio_chart(m.impact_ratios())
    axes = [fig.layout[a] for a in fig.layout if a.startswith("yaxis")]
    arrays = [tuple(ax.categoryarray) for ax in axes]
    assert len(arrays) == 2 and arrays[0] == arrays[1] and len(set(arrays[0])) == len(arrays[0]) == 15
    shown = {y for trace in fig.data for y in trace.y}
    assert shown <= set(arrays[0])
    assert not any(" vs " in y for y in shown)


@pytest.mark.parametrize("order, favourable, cls", [(["L", "M", "H"], "L", "M"), (None, None, "L")])
def test_a_class_of_no_declared_direction_has_no_binary_verdict_in_the_library(order, favourable, cls):
    """Issue 53: 'Medium against the rest' gave 'algorithmic bias' twice though nobody declared whether being
    placed in Medium helps or harms. The library now refuses the directional audit and says why in one clause;
    the rates stay defined (NaN with a reason where not), and a declared direction or an end of the order still
    gives the binary audit."""
    y, p, g = _rows()
    m = MulticlassAudit.from_predictions(y, p, g, order=order, favourable=favourable)
    with pytest.raises(ValueError, match=rf"'{cls}' (is neither end of the order|has no declared direction).*"
                                         r"class_rates\('" + cls):
        m.one_vs_rest(cls)
    assert m.no_direction(cls).startswith(f"'{cls}' ")
    assert m.class_rates(cls)["recall"].notna().all()
    assert m.one_vs_rest(cls, "harm").positive_is == "harm"
    if order is not None:   # the ends keep their verdicts, their direction from the favourable end
        assert (m.one_vs_rest("L").positive_is, m.one_vs_rest("H").positive_is) == ("benefit", "harm")
        assert m.no_direction("L") == m.no_direction("H") == ""
        assert len(m.one_vs_rest("H").verdicts(0.05)) == 3


@pytest.mark.parametrize("positive_is, undefined, defined", [("harm", "FPR", "TPR"), (None, "TPR", "FPR")])
def test_the_note_of_a_class_nobody_was_observed_in_names_the_rates_undefined_in_its_own_orientation(
        positive_is, undefined, defined):
    m = datasets.load_kind_demo("compas_tiers")
    medium = m.one_vs_rest("Medium", positive_is, undirected=positive_is is None)
    table = medium.group_table([undefined, defined])
    assert table[undefined].isna().all() and table[defined].notna().all()
    assert f"its {undefined} and " in medium.notes[0]


def test_the_tier_verdicts_sentences_give_tiers_and_agree_with_their_intervals():
    """The ordinal OFI sentences printed bare numbers ("0.141 more benefit"); every directional one now says tiers,
    with the favoured group's advantage inside its own interval, both positive."""
    import re

    v = datasets.load_kind_demo("compas_tiers").verdicts(0.05)
    directional = v[v["verdict"].isin(["algorithmic bias", "materiality unclear"])]
    assert len(directional) >= 2
    for text, fav in zip(directional["explanation"], directional["favours"]):
        gap, low, high = (float(x) for x in re.findall(r"(−?\d+(?:\.\d+)?) tiers", text.replace(" to ", " tiers "))[:3])
        assert 0 < low <= gap <= high and fav in text, text


def test_turning_pairs_round_equals_the_librarys_own_pairs_with_that_reference():
    """One orientation everywhere (the newcomer saw 'Native American vs African-American' at one cut and the other
    way at the next): ordinal.oriented turns a pair so its reference comes second; the turned numbers equal the
    library's own computation with that group named as the reference, for impact ratios and amount verdicts."""
    from fairness_core.continuous import ContinuousAudit
    from fairness_core.statistics.ordinal import oriented

    y, p, g = _rows()
    g = np.where(g == "c", "a", g)   # two groups: every pair has the reference
    m = MulticlassAudit.from_decisions(p, g, ["L", "M", "H"], favourable="L")
    for ref, other in (("a", "b"), ("b", "a")):
        turned = oriented(m.impact_ratios(), [ref, other])
        direct = m.impact_ratios(reference=ref)
        assert (turned["group_j"] == ref).all() and (direct["group_j"] == ref).all()
        for c in ("di", "di_ci_low", "di_ci_high", "rate_i", "rate_j", "di_p_adjusted"):
            assert turned[c].tolist() == pytest.approx(direct[c].tolist(), rel=1e-9), c
        assert turned["verdict"].tolist() == direct["verdict"].tolist()
    rng = np.random.default_rng(5)
    yy = rng.normal(50, 10, g.size)
    a = ContinuousAudit.from_predictions(yy, yy + rng.normal(0, 3, g.size) + (g == "a") * 2, g, positive_is="benefit")
    for ref in ("a", "b"):
        turned = oriented(a.verdicts(1.0), [ref])
        direct = a.verdicts(1.0, reference=ref)
        for c in ("ofi", "ofi_ci_low", "ofi_ci_high", "ratio", "ratio_ci_low", "ratio_ci_high", "B_i", "B_j"):
            assert turned[c].tolist() == pytest.approx(direct[c].tolist(), rel=1e-9), c


def test_the_impact_ratio_chart_lists_the_tables_pairs_in_the_tables_order_the_larger_group_second():
    from fairness_core import plots
    from fairness_core.statistics.ordinal import oriented
    from ui.kind_audit import larger_first

    m = datasets.load_kind_demo("compas_tiers")
    order = larger_first(m)
    assert order[0] == "African-American" and order[-1] == "Native American"      # by n, largest first
    ratios = m.impact_ratios()
    fig = plots.impact_ratio_chart(ratios, order)
    table = oriented(ratios, order)
    for cut in dict.fromkeys(table["cut"]):
        part = table[table["cut"] == cut]
        names = (part["group_i"] + " / " + part["group_j"]).tolist()
        for ax in (fig.layout[a] for a in fig.layout if a.startswith("yaxis")):
            assert list(ax.categoryarray) == names          # every panel: the table's pairs, in its order
        n = m.n
        assert (n[part["group_j"]].to_numpy() >= n[part["group_i"]].to_numpy()).all()
    x = {(t.name, y): v for t in fig.data for y, v in zip(t.y, t.x)}
    first = table.iloc[0]
    assert x[(first["verdict"], f"{first['group_i']} / {first['group_j']}")] == pytest.approx(first["di"])


def test_the_answers_quote_a_pair_turned_as_the_pages_tables_turn_it():
    """The four-fifths answer quoted 'African-American against Other: 0.533' beside a table that reads
    'Other / African-American 1.88'; with the page's order both say the same pair the same way."""
    import re

    from fairness_core.statistics.ordinal import larger_first, oriented
    from fairness_core.wording.kinds import class_questions, number_text

    m = datasets.load_kind_demo("compas_tiers")
    order = larger_first(list(m.groups), m.n.to_numpy())
    ratios, gaps = m.impact_ratios(), m.error_rate_gaps()
    text = class_questions(m, ratios, m.verdicts(0.1), gaps, order)["text"]
    said = text["The four-fifths rule at every cut"]
    i, j, cut = re.search(r"shown, (.+?)'s rate over (.+?)'s at the cut “(.+?)”", said).groups()
    row = oriented(ratios, order).query("group_i == @i and group_j == @j and cut == @cut").iloc[0]
    assert f": {number_text(row['di'])} ({number_text(row['di_ci_low'])} to {number_text(row['di_ci_high'])}" in said
    assert m.n[j] >= m.n[i] and row["verdict"] == "adverse impact"
    rates = text["Equal opportunity (ordinal error rates)"]
    for gi, gj in re.findall(r"gap \(.+?\): (.+?) [\d.]+% against (.+?) [\d.]+%", rates):
        assert m.n[gj] >= m.n[gi], rates          # the larger group second, as in the gaps table
