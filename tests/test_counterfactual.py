"""Counterfactual tests (issue 54): tricky substitutions, swap-table checks, the model runner's progress and cancel,
flip_column, the paired audit against brute force and statsmodels, bad input by column and row, and the demo's
built-in preference found (and no fake one)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from fairness_core import counterfactual as cf
from fairness_core.progress import Cancelled, Stage
from fairness_core.services.jobs import JobRunner
from fairness_core.statistics import paired

ROOT = Path(__file__).resolve().parents[1]
SWAPS = pd.DataFrame({"F": ["Emily", "Walsh", "Emily Walsh", "she", "her", "herself"],
                      "M": ["Greg", "Baker", "Greg Baker", "he", "his", "himself"]})


def one(text: str, swaps: pd.DataFrame = SWAPS, group: str = "M") -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = cf.variants(pd.DataFrame({"t": [text]}), "t", swaps)
    return v.loc[v["group"] == group, "text"].iloc[0]


@pytest.mark.parametrize("text, expected", [
    ("Emily's résumé", "Greg's résumé"),                                  # possessive
    ("Emily’s résumé", "Greg’s résumé"),                                  # typographic apostrophe
    ("She led. she led. SHE LED.", "He led. he led. HE LED."),          # case forms kept
    ("EMILY WALSH\nEmily Walsh", "GREG BAKER\nGreg Baker"),              # ALL CAPS and full names
    ("Emily  Walsh", "Greg Baker"),                                       # a full name across two spaces
    ("Theodore, Emilyn, Sheila, Shepherd, hersheys", "Theodore, Emilyn, Sheila, Shepherd, hersheys"),  # inside words
    ("O'Emily and Jean-Emily and Emily-Rose", "O'Emily and Jean-Emily and Emily-Rose"),  # parts of other names
    ("she said she'd do it herself", "he said he'd do it himself"),       # contractions, reflexive
    ("emily (lower case) stays", "emily (lower case) stays"),            # a name is matched capitalized only
    ("Ask Emily.", "Ask Greg."),
])
def test_tricky_substitutions(text: str, expected: str) -> None:
    assert one(text) == expected


def test_names_that_are_common_words_are_swapped_only_capitalized_and_flagged() -> None:
    swaps = pd.DataFrame({"A": ["Will", "Mark", "Rose"], "B": ["Jamal", "Tyrone", "Aisha"]})
    with pytest.warns(UserWarning, match="'Mark', 'Rose', 'Will'"):
        v = cf.variants(pd.DataFrame({"t": ["Will will mark the rose. Mark met Rose."]}), "t", swaps)
    assert v["text"].tolist()[1] == "Jamal will mark the rose. Tyrone met Aisha."


def test_a_name_whose_lower_case_occurs_in_the_texts_is_flagged() -> None:
    swaps = pd.DataFrame({"A": ["Kenya"], "B": ["Emily"]})
    with pytest.warns(UserWarning, match="'Kenya'"):
        cf.variants(pd.DataFrame({"t": ["Kenya worked in kenya."]}), "t", swaps)


def test_variants_layout_changed_words_and_carried_columns() -> None:
    base = pd.DataFrame({"id": ["r1", "r2"], "resume": ["Emily Walsh: she", "Greg? no, Emily"], "job": ["x", "y"]})
    with pytest.warns(UserWarning, match="'Greg' is another group's word"):
        v = cf.variants(base, "resume", SWAPS, case="id")
    assert list(v.columns) == ["case_id", "group", "text", "changed", "n_changed", "job"]
    assert v["case_id"].tolist() == ["r1", "r1", "r2", "r2"] and v["group"].tolist() == ["F", "M", "F", "M"]
    assert v["job"].tolist() == ["x", "x", "y", "y"]
    assert v["changed"].tolist() == ["", "Emily Walsh→Greg Baker, she→he", "", "Emily→Greg"]
    assert v["n_changed"].tolist() == [0, 2, 0, 1]


def test_the_example_list_is_bertrand_and_mullainathans_nine_names_per_group() -> None:
    t = cf.example_swaps()
    assert list(t.columns) == ["White female", "Black female", "White male", "Black male"] and len(t) == 9
    assert {"Emily", "Greg", "Lakisha", "Jamal"} <= set(t.to_numpy().ravel())
    assert t.to_numpy().ravel().size == len(set(t.to_numpy().ravel())) == 36


def test_null_swap_rotates_the_groups_names_and_keeps_other_words() -> None:
    t = cf.null_swap(SWAPS, "F")
    assert t["F (null swap)"].tolist() == ["Walsh", "Emily Walsh", "Emily", "she", "her", "herself"]
    v = cf.variants(pd.DataFrame({"t": ["Emily said she would."]}), "t", t)
    assert v["text"].tolist() == ["Emily said she would.", "Greg said he would.", "Walsh said she would."]


@pytest.mark.parametrize("swaps, message", [
    (pd.DataFrame({"A": ["Emily", "Anne"], "B": [None, None]}), "group 'B' has no words"),
    (pd.DataFrame({"A": ["Emily", "Anne"], "B": ["Greg", " "]}), "column 'B', row 1 is empty"),
    (pd.DataFrame({"A": ["Emily", "Anne"], "B": ["Anne", "Greg"]}), "'anne' is listed for group"),
    (pd.DataFrame({"she": ["she", "her", "her"], "he": ["he", "him", "his"]}), "'her' appears in rows \\[1, 2\\]"),
    (pd.DataFrame({"A": ["Emily"]}), "at least two groups"),
    ({"A": ["Emily", "Anne"], "B": ["Greg"]}, "as many words"),
])
def test_bad_swap_tables_are_refused_with_the_cell(swaps, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cf.variants(pd.DataFrame({"t": ["Emily"]}), "t", swaps)


def test_bad_base_texts_are_refused_with_the_row() -> None:
    with pytest.raises(ValueError, match="column 't', row 1: nan is not a text"):
        cf.variants(pd.DataFrame({"t": ["Emily", np.nan]}), "t", SWAPS)
    with pytest.raises(ValueError, match="column 'id', row 1: the case id 'a' is repeated"):
        cf.variants(pd.DataFrame({"t": ["Emily", "Emily"], "id": ["a", "a"]}), "t", SWAPS, case="id")


def test_run_reports_progress_cancels_and_records_failures() -> None:
    v = cf.variants(pd.DataFrame({"t": ["Emily", "Emily Walsh", "she"]}), "t", SWAPS)
    seen: list[Stage] = []
    out = cf.run(lambda texts: [int("Greg" in t) for t in texts], v, batch_size=4, on_progress=seen.append)
    assert out["decision"].tolist() == [0, 1, 0, 1, 0, 0]
    assert [(r.done, r.total) for r in seen] == [(4, 6), (6, 6)] and seen[0].phase == "scoring variants"
    with pytest.raises(Cancelled, match="after 2 of 6"):
        calls = iter([False, True])
        cf.run(lambda texts: [1] * len(texts), v, batch_size=2, should_stop=lambda: next(calls))

    def flaky(texts: list[str]) -> list[int]:
        if any("Baker" in t for t in texts):
            raise RuntimeError("timeout")
        return [1] * len(texts)
    out = cf.run(flaky, v, batch_size=2, errors="record")
    assert out["decision"].isna().tolist() == [False, False, True, True, False, False]
    assert out["error"].tolist()[2] == "RuntimeError: timeout"
    runner = JobRunner(max_running=1)
    job = runner.submit("cf", lambda on_progress, should_stop: cf.run(
        lambda t: [0] * len(t), v, on_progress=on_progress, should_stop=should_stop))
    assert job.wait(10) and job.snapshot().status == "done" and len(job.snapshot().result) == 6


def test_flip_column_swaps_one_attribute_and_keeps_the_rest() -> None:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=200), "sex": rng.integers(0, 2, 200)})
    y = (X["x"] + 0.8 * X["sex"] + rng.normal(0, 0.5, 200) > 0.4).astype(int)
    model = LogisticRegression().fit(X, y)
    out = cf.flip_column(model.predict, X, column="sex", values=[0, 1])
    for value in (0, 1):
        direct = model.predict(X.assign(sex=value))
        assert np.array_equal(out.loc[out["group"] == value, "decision"].to_numpy(), direct)
    assert out["original"].tolist()[:200] == X["sex"].tolist()
    a = cf.audit(out, positive_is="benefit")
    assert a.pairs().loc[0, "favours"] == "1"     # the model's sex coefficient is found (groups named as text)


def _results(rng: np.random.Generator, cases: int = 300, k: int = 4, missing: float = 0.03) -> pd.DataFrame:
    y = (rng.random((cases, 1)) + rng.normal(0, 0.3, (cases, k)) + np.linspace(0, 0.3, k) > 0.7).astype(float)
    y[rng.random((cases, k)) < missing] = np.nan
    return pd.DataFrame({"case_id": np.repeat(np.arange(cases), k), "group": np.tile([f"g{g}" for g in range(k)], cases),
                         "decision": y.ravel()})


def test_pairs_equal_brute_force_counts_statsmodels_mcnemar_and_holm() -> None:
    df = _results(np.random.default_rng(4))
    a = cf.audit(df, positive_is="benefit")
    p = a.pairs(alpha=0.05)
    wide = df.pivot(index="case_id", columns="group", values="decision")
    assert a.incomplete == int(wide.isna().any(axis=1).sum()) > 0
    for _, row in p.iterrows():
        both = wide[[row.group_i, row.group_j]].dropna()
        i, j = both[row.group_i], both[row.group_j]
        assert (row.n, row.both, row.only_i, row.only_j) == (len(both), (i * j).sum(), (i * (1 - j)).sum(),
                                                             ((1 - i) * j).sum())
        table = [[row.both, row.only_i], [row.only_j, row.neither]]
        assert row.mcnemar_p == pytest.approx(sm_mcnemar(table, exact=True).pvalue, abs=1e-12)
        low, high = proportion_confint(row.only_i + row.only_j, row.n, alpha=1 - row.level, method="beta")
        assert (row.flip_rate_ci_low, row.flip_rate_ci_high) == pytest.approx((low, high), abs=1e-12)
        assert row.difference == pytest.approx(i.mean() - j.mean())
    np.testing.assert_allclose(p["p_adjusted"], multipletests(p["mcnemar_p"], method="holm")[1], atol=1e-12)
    assert np.array_equal(p["p_adjusted"] < 0.05, (p["odds_ratio_ci_low"] > 1) | (p["odds_ratio_ci_high"] < 1))
    assert np.array_equal(p["difference_p_adjusted"] < 0.05, (p["difference_ci_low"] > 0) | (p["difference_ci_high"] < 0))


def test_by_group_rates_are_proportions_over_cases_and_contrasts_are_paired() -> None:
    df = _results(np.random.default_rng(8))
    g = cf.audit(df, positive_is="benefit").by_group()
    wide = df.pivot(index="case_id", columns="group", values="decision")
    complete = wide.dropna()
    for _, row in g.iterrows():
        col = wide[row.group].dropna()
        assert (row.n, row.rate) == (len(col), pytest.approx(col.mean()))
        assert (row.rate_ci_low, row.rate_ci_high) == pytest.approx(
            proportion_confint(col.sum(), len(col), method="beta"), abs=1e-12)
        contrast = complete[row.group] - complete.drop(columns=row.group).mean(axis=1)
        assert row.vs_others == pytest.approx(contrast.mean())


def test_each_pair_is_read_against_its_own_groups_null_swaps_counted_case_by_case() -> None:
    """g0 and g2 have null swaps, g3 has none: g0–g2 is read against both, g0–g3 against g0's only, and a pair with
    no null swap has none. Each side's rate, excess, exact McNemar and Tango interval from a count per case."""
    rng = np.random.default_rng(9)
    df = _results(rng, k=5).replace({"group": {"g1": "g0 (null swap)", "g4": "g2 (null swap)"}})
    a = cf.audit(df, positive_is="benefit")
    assert a.null_swaps == {"g0": "g0 (null swap)", "g2": "g2 (null swap)"} and a.real_groups == ("g0", "g2", "g3")
    p = a.pairs()
    assert list(zip(p.group_i, p.group_j)) == [("g0", "g2"), ("g0", "g3"), ("g2", "g3")]
    wide = df.pivot(index="case_id", columns="group", values="decision")
    for _, row in p.iterrows():
        ps = []
        for side, g in (("i", row.group_i), ("j", row.group_j)):
            if g == "g3":
                assert np.isnan(getattr(row, f"baseline_flip_rate_{side}")) and np.isnan(getattr(row, f"flip_excess_{side}"))
                continue
            ok = wide[list(dict.fromkeys([row.group_i, row.group_j, g, f"{g} (null swap)"]))].dropna()
            pair, within = ok[row.group_i] != ok[row.group_j], ok[g] != ok[f"{g} (null swap)"]
            u, v = int((pair & ~within).sum()), int((within & ~pair).sum())
            assert getattr(row, f"baseline_flip_rate_{side}") == pytest.approx(within.mean(), abs=1e-12)
            assert getattr(row, f"flip_excess_{side}") == pytest.approx(pair.mean() - within.mean(), abs=1e-12)
            low, high = paired.tango_interval(u, v, len(ok), alpha=1 - row.level)
            assert (getattr(row, f"flip_excess_{side}_ci_low"), getattr(row, f"flip_excess_{side}_ci_high")) == \
                pytest.approx((float(low), float(high)), abs=1e-9)
            ps.append(sm_mcnemar([[0, u], [v, 0]], exact=True).pvalue)
        assert row.flip_excess_p == pytest.approx(max(ps), abs=1e-12)          # intersection-union: the larger
        lows = [x for x in (row.flip_excess_i_ci_low, row.flip_excess_j_ci_low) if np.isfinite(x)]
        assert row.flips_beyond_baseline == (min(lows) > 0)
        assert row.flip_excess_ci_low == min(lows)                               # the deciding side is printed
    np.testing.assert_allclose(p["flip_excess_p_adjusted"], multipletests(p["flip_excess_p"], method="holm")[1],
                               atol=1e-12)
    none = cf.audit(df[~df["group"].str.endswith("(null swap)")], positive_is="benefit").pairs()
    assert "baseline_flip_rate_i" not in none and len(none) == 3
    with pytest.raises(ValueError, match=r"column 'group', row \d+: 'g9 \(null swap\)' is a null swap whose own group"):
        cf.audit(df.replace({"group": {"g3": "g9 (null swap)"}}), positive_is="benefit")


def test_null_swaps_are_baselines_never_groups_in_the_demo() -> None:
    """The newcomer's finding: the demo's 4 null swaps were paired as groups (28 pairs). Now 6 pairs of the 4 real
    groups, each read against its own two groups' null swaps — not one pooled null swap."""
    df = pd.read_csv(ROOT / "assets" / "demo_counterfactual_screening_synthetic.csv")
    a = cf.audit(df, decision="advanced", positive_is="benefit")
    p = a.pairs()
    real = ["White female", "Black female", "White male", "Black male"]
    assert list(zip(p.group_i, p.group_j)) == [(x, y) for k, x in enumerate(real) for y in real[k + 1:]]
    wide = df.pivot(index="case_id", columns="group", values="advanced")
    within = {g: (wide[g] != wide[f"{g} (null swap)"]).mean() for g in real}
    assert len(set(within.values())) == 4                          # four different baselines, one per group
    np.testing.assert_allclose(p["baseline_flip_rate_i"], p["group_i"].map(within), atol=1e-12)
    np.testing.assert_allclose(p["baseline_flip_rate_j"], p["group_j"].map(within), atol=1e-12)
    assert a.omnibus().df == 3 and a.by_group()["group"].tolist() == list(a.groups)    # rates of all 8 variants


def test_harm_reads_the_other_decision_as_the_benefit() -> None:
    df = _results(np.random.default_rng(1), missing=0)
    benefit = cf.audit(df, positive_is="benefit").pairs()
    harm = cf.audit(df.assign(decision=1 - df["decision"]), positive_is="harm").pairs()
    pd.testing.assert_series_equal(benefit["difference"], harm["difference"])


@pytest.mark.parametrize("change, message", [
    (lambda d: pd.concat([d, d.iloc[[5]]], ignore_index=True), "column 'group', row 1200: case 1 and group 'g1' appear "
                                                               "twice \\(rows 5 and 1200\\)"),
    (lambda d: d.drop(index=[4, 5, 6]).reset_index(drop=True), "column 'case_id', row 4: 1 has one row"),
    (lambda d: d.assign(decision=d["decision"].where(d.index != 7, 2)), "column 'decision', row 7: 2.0 is not a decision"),
    (lambda d: d.assign(case_id=d["case_id"].where(d.index != 3)), "column 'case_id', row 3: nan is missing"),
    (lambda d: d.drop(columns="group"), "no column 'group'"),
])
def test_bad_results_are_refused_naming_column_and_row(change, message: str) -> None:
    df = _results(np.random.default_rng(2), missing=0)
    with pytest.raises(ValueError, match=message):
        cf.audit(change(df), positive_is="benefit")


def test_a_third_decision_value_and_a_group_absent_from_the_swaps() -> None:
    df = pd.DataFrame({"case_id": [1, 1, 2, 2, 3, 3], "group": ["F", "M"] * 3,
                       "decision": ["hire", "reject", "hire", "hold", "reject", "hire"]})
    with pytest.raises(ValueError, match="column 'decision', row 3: 'hold' is a third value"):
        cf.audit(df, positive="hire", positive_is="benefit")
    with pytest.raises(ValueError, match="column 'group', row 1: 'M' is not a group of the swap table"):
        cf.audit(df.replace("hold", "hire"), positive="hire", positive_is="benefit", swaps=["F", "X"])


def test_scores_and_ranks() -> None:
    rng = np.random.default_rng(6)
    cases, k = 200, 4
    score = rng.normal(size=(cases, 1)) + rng.normal(0, 0.5, (cases, k)) + np.array([0.4, 0, 0, 0])
    rank = np.argsort(np.argsort(-score, axis=1), axis=1) + 1
    df = pd.DataFrame({"case_id": np.repeat(np.arange(cases), k), "group": np.tile(list("ABCD"), cases),
                       "score": score.ravel(), "rank": rank.ravel()})
    s = cf.audit(df, score="score")
    with pytest.raises(ValueError, match="tolerance="):
        s.pairs()
    p = s.pairs(tolerance=0.1)
    from scipy import stats
    assert p.loc[0, "wilcoxon_p"] == pytest.approx(stats.wilcoxon(score[:, 0] - score[:, 1]).pvalue, rel=1e-12)
    assert p.loc[0, "difference_p"] == pytest.approx(stats.ttest_rel(score[:, 0], score[:, 1]).pvalue, rel=1e-9)
    assert p.loc[0, "favours"] == "A" and s.omnibus().test == "Friedman"
    r = cf.audit(df, rank="rank")
    g = r.by_group()
    assert g["ranked_first"].sum() == cases and g.loc[0, "top_p"] < 0.05
    o = r.omnibus()
    assert o.test == "first places against chance" and o.p_value < 0.001
    assert r.pairs().loc[0, "verdict"] in ("material difference", "materiality unclear")
    with pytest.raises(ValueError, match="is not a rank from 1 to 4"):
        cf.audit(df.assign(rank=df["rank"].where(df.index != 2, 5)), rank="rank")


def test_the_demo_shows_its_built_in_preference_and_no_other() -> None:
    df = pd.read_csv(ROOT / "assets" / "demo_counterfactual_screening_synthetic.csv")
    a = cf.audit(df, decision="advanced", positive_is="benefit", baseline="White female (null swap)")
    p = a.pairs()
    race = lambda g: g.split()[0]  # noqa: E731
    across = p["group_i"].map(race) != p["group_j"].map(race)
    assert (p.loc[across, "verdict"] == "material difference").all()
    assert p.loc[across, "favours"].map(race).eq("White").all()
    assert (p.loc[~across, "favours"] == "").all()                      # sex and null swaps: nothing shown
    assert p.loc[~across, "verdict"].isin(["inconclusive", "no material difference detected"]).all()
    assert (p["flip_excess_p_adjusted"].dropna() > 0.05).all()         # no more flips than the null swap, shown
    assert len(df) == 3200 and a.incomplete == 0
