"""Intervals and tests for OFI and DI with both groups as samples: coverage, size, exactness, cross-checks."""

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fairness_core import ConfusionMatrix, datasets, inference
from fairness_core.audit import Audit
from fairness_core.verdicts import VERDICTS
from verdict_helpers import pair

CM = ConfusionMatrix
RNG_SEED = 20261122


def _demo_rates() -> list[tuple[float, float, float]]:
    """(π_TP, π_FN, π_FP) of every demo group with at least 30 rows: real 4-cell multinomials."""
    rates = []
    for key in ("compas_race", "adult_race", "adult_sex"):
        for cm in datasets.load_demo(key).cms.values():
            if cm.n >= 30:
                tp, fn, fp, _ = cm.as_array() / cm.n
                rates.append((tp, fn, fp))
    return rates


#: Hard cases beside the real ones: no errors, many errors of both kinds, one kind only, rare selection.
EXTREMES = [(0.5, 0.0, 0.0), (0.1, 0.25, 0.25), (0.2, 0.02, 0.3), (0.3, 0.3, 0.02), (0.02, 0.05, 0.01)]
SIZES = [(5, 5), (5, 3000), (11, 31), (31, 2103), (11, 3000)]


def _draw(rng: np.random.Generator, n: int, rates: tuple[float, float, float], size: int) -> np.ndarray:
    tp, fn, fp = rates
    return rng.multinomial(n, [tp, fn, fp, 1 - tp - fn - fp], size=size)  # columns TP, FN, FP, TN


def _configs() -> list[tuple[tuple[float, float, float], tuple[float, float, float]]]:
    real = _demo_rates()
    rng = np.random.default_rng(1)
    pairs = [(real[a], real[b]) for a, b in rng.choice(len(real), size=(8, 2))]
    return pairs + [(e, real[0]) for e in EXTREMES] + [(real[1], e) for e in EXTREMES] + [(EXTREMES[1], EXTREMES[2])]


def _ofi_cover(method: str, ni: int, nj: int, ri, rj, draws: int, rng) -> float:
    """The share of ``draws`` simulated pairs whose 95 % OFI interval (``ofi_arrays``'s, from ``ofi_pairs``)
    covers the true Δ."""
    ci, cj = _draw(rng, ni, ri, draws), _draw(rng, nj, rj, draws)
    low, high = inference.ofi_pairs(ci[:, 2], ci[:, 1], ni, cj[:, 2], cj[:, 1], nj, method).bounds(0.025)
    delta = (ri[2] - ri[1]) - (rj[2] - rj[1])
    return float(((low <= delta + 1e-12) & (high >= delta - 1e-12)).mean())


def _ofi_rejects(method: str, ni: int, nj: int, ri, rj, draws: int, rng) -> float:
    """The share of ``draws`` simulated pairs whose two-sided p-value of OFI = 0 (``ofi_arrays``'s) is below 0.05."""
    ci, cj = _draw(rng, ni, ri, draws), _draw(rng, nj, rj, draws)
    p = inference.ofi_pairs(ci[:, 2], ci[:, 1], ni, cj[:, 2], cj[:, 1], nj, method).p_value(0.0)
    return float((p < 0.05).mean())


def test_the_simulations_ask_the_arrays_own_numbers():
    """The coverage and size computations below ask ``ofi_pairs`` and ``di_pairs`` for only the bounds or only the
    p-values they judge (each costs a search): these are ``ofi_arrays``'s and ``di_arrays``'s numbers, bit for bit."""
    rng = np.random.default_rng(RNG_SEED)
    ci, cj = _draw(rng, 11, _demo_rates()[0], 500), _draw(rng, 3000, EXTREMES[2], 500)
    whole = inference.ofi_arrays(ci[:, 2], ci[:, 1], 11, cj[:, 2], cj[:, 1], 3000, alpha=0.05)
    o = inference.ofi_pairs(ci[:, 2], ci[:, 1], 11, cj[:, 2], cj[:, 1], 3000, "auto")
    low, high = o.bounds(0.025)
    assert np.array_equal(low, whole.ci_low) and np.array_equal(high, whole.ci_high)
    assert np.array_equal(o.p_value(0.0), whole.p_value)
    sel_i, sel_j = ci[:, 0] + ci[:, 2], cj[:, 0] + cj[:, 2]
    low, high = inference.di_pairs(sel_i, 11, sel_j, 3000, "auto").bounds(0.025)
    whole = inference.di_arrays(sel_i, 11, sel_j, 3000, alpha=0.05)
    assert np.array_equal(low, whole.ci_low, equal_nan=True) and np.array_equal(high, whole.ci_high, equal_nan=True)


@pytest.mark.parametrize("ni,nj", SIZES)
def test_ofi_interval_covers_at_least_93_percent_down_to_five_rows(ni, nj):
    rng = np.random.default_rng(RNG_SEED + ni * 7 + nj)
    worst = min(_ofi_cover("auto", ni, nj, ri, rj, 6000, rng) for ri, rj in _configs())
    assert worst >= 0.93, f"coverage {worst:.3f} at n = {ni} vs {nj}"


def test_plain_wald_undercovers_where_the_score_interval_does_not():
    """The reason for the small-sample method: Wald collapses when the small group happens to show no
    errors (probability 0.9^5 = 0.59 here), although its true marginal benefit is 0.1."""
    rng = np.random.default_rng(RNG_SEED)
    rare, common = (0.5, 0.0, 0.1), (0.5, 0.1, 0.1)
    wald = _ofi_cover("wald", 5, 3000, rare, common, 20000, rng)
    score = _ofi_cover("score", 5, 3000, rare, common, 20000, rng)
    assert wald < 0.75 and score >= 0.95


@pytest.mark.parametrize("ni,nj", SIZES)
def test_ofi_test_size_stays_within_alpha_plus_1_5_points(ni, nj):
    """Under H0 (Δ = 0): the same distribution in both groups (strong null) and equal benefit with
    different spreads (weak null)."""
    rng = np.random.default_rng(RNG_SEED + 31 * ni + nj)
    nulls = [(r, r) for r in _demo_rates()[:6]] + [
        ((0.4, 0.1, 0.1), (0.45, 0.0, 0.0)), ((0.1, 0.3, 0.3), (0.5, 0.05, 0.05)),
        ((0.45, 0.0, 0.0), (0.2, 0.2, 0.2)), ((0.3, 0.1, 0.2), (0.4, 0.05, 0.15))]
    sizes = [_ofi_rejects("auto", ni, nj, ri, rj, 6000, rng) for ri, rj in nulls]
    assert max(sizes) <= 0.065, f"size {max(sizes):.3f} at n = {ni} vs {nj}"


def _brute_force_permutation_p(cm_i: CM, cm_j: CM) -> float:
    """Every way of choosing group i's members from the pooled individuals, counted one by one."""
    d = np.array([0] * (cm_i.tp + cm_i.tn + cm_j.tp + cm_j.tn) + [1] * (cm_i.fp + cm_j.fp)
                 + [-1] * (cm_i.fn + cm_j.fn))
    observed = (cm_i.fp - cm_i.fn) / cm_i.n - (cm_j.fp - cm_j.fn) / cm_j.n
    stats_ = []
    total = d.sum()
    for members in combinations(range(len(d)), cm_i.n):
        s = d[list(members)].sum()
        stats_.append(s / cm_i.n - (total - s) / cm_j.n)
    stats_ = np.array(stats_)
    lower = np.mean(stats_ <= observed + 1e-12)
    upper = np.mean(stats_ >= observed - 1e-12)
    return min(1.0, 2 * min(lower, upper))


@pytest.mark.parametrize("cm_i,cm_j", [
    (CM(1, 0, 2, 1), CM(2, 2, 0, 4)), (CM(0, 3, 0, 1), CM(3, 0, 1, 2)), (CM(2, 1, 1, 1), CM(1, 1, 1, 1)),
    (CM(0, 0, 0, 3), CM(1, 2, 3, 0)), (CM(4, 0, 0, 0), CM(0, 4, 4, 0))])
def test_permutation_p_value_equals_brute_force_enumeration(cm_i, cm_j):
    exact = inference.ofi_test(cm_i, cm_j, method="permutation").p_value
    assert exact == pytest.approx(_brute_force_permutation_p(cm_i, cm_j), abs=1e-12)
    assert inference.ofi_test(cm_j, cm_i, method="permutation").p_value == pytest.approx(exact, abs=1e-12)


def test_p_value_is_the_dual_of_the_interval():
    rng = np.random.default_rng(3)
    cells = rng.integers(0, 40, size=(400, 2, 4)) + np.array([1, 0, 0, 1])
    for level in (0.9, 0.95):
        r = inference.ofi_arrays(cells[:, 0, 2], cells[:, 0, 1], cells[:, 0].sum(1),
                                 cells[:, 1, 2], cells[:, 1, 1], cells[:, 1].sum(1), alpha=1 - level, method="auto")
        excludes = (r.ci_low > 0) | (r.ci_high < 0)
        assert np.array_equal(excludes, r.p_value < 1 - level)


def test_auto_says_which_method_it_chose():
    """The score interval covers at every size, so "auto" never hands a pair to Wald or the pseudo-counts."""
    for ci, cj in [(CM(5, 1, 1, 4), CM(500, 100, 80, 400)), (CM(500, 100, 80, 400), CM(600, 90, 120, 300)),
                   (CM(500, 0, 0, 700), CM(600, 90, 120, 300))]:
        assert inference.ofi_test(ci, cj).method == "score"
    assert inference.ofi_test(CM(5, 1, 1, 4), CM(9, 1, 1, 4), method="adjusted").method == "adjusted"
    with pytest.raises(ValueError, match="unknown OFI method"):
        inference.ofi_test(CM(1, 1, 1, 1), CM(1, 1, 1, 1), method="bootstrap")
    with pytest.raises(ValueError, match="empty"):
        inference.ofi_test(CM(0, 0, 0, 0), CM(1, 1, 1, 1))


def test_wald_interval_matches_the_textbook_formula():
    ci, cj = CM(500, 100, 80, 400), CM(600, 90, 120, 300)
    r = inference.ofi_test(ci, cj, method="wald")

    def part(cm):
        pp, pm = cm.fp / cm.n, cm.fn / cm.n
        return pp - pm, (pp + pm - (pp - pm) ** 2) / cm.n

    (bi, vi), (bj, vj) = part(ci), part(cj)
    se = np.sqrt(vi + vj)
    assert r.estimate == pytest.approx(bi - bj)
    assert (r.ci_low, r.ci_high) == pytest.approx((bi - bj - 1.959964 * se, bi - bj + 1.959964 * se))
    assert r.p_value == pytest.approx(2 * stats.norm.sf(abs(bi - bj) / se))


# ------------------------------------------------------------------------------------------ DI

def _di_exact_coverage(ni: int, pi: float, nj: int, pj: float) -> float:
    """Exact coverage: every pair of selection counts, weighted by its binomial probability."""
    xi, xj = np.arange(ni + 1), np.arange(nj + 1)
    wi, wj = stats.binom.pmf(xi, ni, pi), stats.binom.pmf(xj, nj, pj)
    ki, kj = wi > 1e-12, wj > 1e-12
    xi, wi, xj, wj = xi[ki], wi[ki], xj[kj], wj[kj]
    # di_arrays's 95 % interval, without the p-values it also computes (a search of their own)
    lo, hi = inference.di_pairs(xi[:, None], ni, xj[None], nj, "auto").bounds(0.025)
    theta = pi / pj
    covered = np.where(np.isnan(lo), True, (lo <= theta * (1 + 1e-9)) & (hi >= theta * (1 - 1e-9)))
    return float((wi[:, None] * wj[None] * covered).sum() / (wi.sum() * wj.sum()))


@pytest.mark.parametrize("ni,nj", SIZES + [(3000, 5), (40, 60)])
def test_di_interval_covers_at_least_93_percent_exactly(ni, nj):
    rates = sorted({round(tp + fp, 4) for tp, _, fp in _demo_rates()}) + [0.02, 0.95]
    ps = rates[:: max(1, len(rates) // 6)] + [0.02, 0.95]
    worst = min(_di_exact_coverage(ni, pi, nj, pj) for pi in ps for pj in ps)
    assert worst >= 0.93, f"coverage {worst:.3f} at n = {ni} vs {nj}"


def test_di_score_interval_and_test_match_statsmodels():
    sm = pytest.importorskip("statsmodels.stats.proportion")
    for x1, n1, x2, n2 in [(14, 35, 34, 106), (3, 40, 20, 50), (40, 40, 30, 60), (100, 1000, 130, 1200),
                           (0, 40, 5, 60)]:
        r = inference.di_arrays(x1, n1, x2, n2, alpha=0.05, method="score")
        low, high = sm.confint_proportions_2indep(x1, n1, x2, n2, method="score", compare="ratio")
        assert float(r.ci_low) == pytest.approx(max(low, 0.0), abs=1e-9)
        assert float(r.ci_high) == pytest.approx(high, rel=1e-9)
        p = sm.test_proportions_2indep(x1, n1, x2, n2, method="score", compare="ratio").pvalue
        assert float(r.p_value) == pytest.approx(p, rel=1e-9)


@pytest.mark.parametrize("method", ["exact", "auto"])
def test_di_test_and_interval_are_one_procedure_on_every_small_table(method):
    """Every table with both groups of 1 to 30 rows (sizes sampled, every selection count): p < α exactly when
    the interval excludes 1, at two levels."""
    sizes = np.array([1, 2, 5, 8, 13, 21, 29, 30])
    n1, n2 = np.meshgrid(sizes, sizes, indexing="ij")
    rows = [(x1, a, x2, b) for a, b in zip(n1.ravel(), n2.ravel()) for x1 in range(a + 1) for x2 in range(b + 1)]
    x1, a, x2, b = (np.array(c, dtype=float) for c in zip(*rows))
    d = inference.di_pairs(x1, a, x2, b, method)
    for alpha in (0.05, 0.01):
        p = d.p_value(1.0)
        low, high = d.bounds(alpha / 2)
        defined = ~np.isnan(p)
        agree = (p[defined] < alpha) == ((low[defined] > 1) | (high[defined] < 1))
        assert agree.mean() >= 0.998 and agree.all(), f"{(~agree).sum()} of {agree.size} disagree"


def test_di_exact_interval_equals_mover_r_from_clopper_pearson():
    """An independent computation: Clopper–Pearson limits from scipy's beta quantiles, Donner & Zou's MOVER-R."""
    for x1, n1, x2, n2 in [(1, 5, 40, 100), (5, 5, 3, 20), (7, 12, 9, 12)]:
        l1, u1 = stats.beta.ppf(0.025, x1, n1 - x1 + 1), (stats.beta.ppf(0.975, x1 + 1, n1 - x1) if x1 < n1 else 1.0)
        l2, u2 = stats.beta.ppf(0.025, x2, n2 - x2 + 1), (stats.beta.ppf(0.975, x2 + 1, n2 - x2) if x2 < n2 else 1.0)
        p1, p2 = x1 / n1, x2 / n2
        low = (p1 * p2 - np.sqrt((p1 * p2) ** 2 - l1 * u2 * (2 * p1 - l1) * (2 * p2 - u2))) / (u2 * (2 * p2 - u2))
        high = (p1 * p2 + np.sqrt((p1 * p2) ** 2 - u1 * l2 * (2 * p1 - u1) * (2 * p2 - l2))) / (l2 * (2 * p2 - l2))
        d = inference.di_interval(CM(x1, 0, 0, n1 - x1), CM(x2, 0, 0, n2 - x2), method="exact")
        assert (d.ci_low, d.ci_high) == pytest.approx((low, high), rel=2e-3)   # limits interpolated in z


def test_undefined_di_stays_undefined_with_its_reason():
    d = inference.di_interval(CM(0, 1, 0, 5), CM(0, 7, 0, 11))
    assert np.isnan(d.estimate) and np.isnan(d.ci_low) and np.isnan(d.p_value)
    assert "neither group" in d.note
    d = inference.di_interval(CM(30, 1, 10, 50), CM(0, 7, 0, 80))
    assert np.isnan(d.estimate) and d.ci_high == np.inf and d.ci_low > 1.25 and d.p_value < 1e-6
    assert "no predicted positives" in d.note


# ------------------------------------------------------------------------------ many pairs

def test_holm_and_bh_agree_with_statsmodels():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = np.random.default_rng(5).uniform(0, 0.2, 60) ** 2
    for ours, theirs in (("holm", "holm"), ("bh", "fdr_bh")):
        expected = multitest.multipletests(p, method=theirs)[1]
        assert np.allclose(inference.adjust_p_values(p, ours), expected, atol=1e-12)
    assert np.array_equal(inference.adjust_p_values(p, "none"), p)
    with pytest.raises(ValueError, match="adjustment"):
        inference.adjust_p_values(p, "bonferroni-ish")


def test_minimum_detectable_ofi_is_detected_with_80_percent_power():
    rng = np.random.default_rng(11)
    n = 4000
    ri = (0.3, 0.1, 0.1)
    base = inference.ofi_test(CM(1200, 400, 400, 2000), CM(1200, 400, 400, 2000), method="wald")
    mde = float(inference.minimum_detectable_ofi(base.se, 0.05))
    rj = (0.3, 0.1 + mde / 2, 0.1 - mde / 2)   # B_j = B_i − mde
    power = _ofi_rejects("wald", n, n, ri, rj, 8000, rng)
    assert power == pytest.approx(0.8, abs=0.03)


# ------------------------------------------------------------------------------- verdicts

def test_verdicts_call_significant_bias_and_favour_the_right_group():
    audit = Audit({"a": CM(300, 20, 90, 590), "b": CM(250, 120, 40, 590)})
    v = pair(audit.verdicts(0.05), "a", "b")
    assert v["verdict"] == "algorithmic bias" and v["favours"] == "a"
    assert v["ofi_p_adjusted"] < 0.05 and v["ofi_ci_low"] > 0.05   # beyond the tolerance, not only beyond 0


def test_small_groups_are_inconclusive_not_biased_and_say_how_many_rows_would_settle_it():
    audit = Audit({"a": CM(3, 0, 2, 2), "b": CM(3, 2, 0, 4)})
    v = audit.verdicts(0.05).iloc[0]
    assert abs(v["ofi"]) > 0.3 and v["verdict"] == "inconclusive"
    assert v["rows_needed_i"] > 0 and v["rows_needed_j"] > 0
    n_i = 7 if v["group_i"] == "a" else 9
    k = (v["rows_needed_i"] + n_i) / n_i

    def grown(factor: float) -> str:
        return Audit({"a": CM(*np.ceil(np.array([3, 0, 2, 2]) * factor).astype(int)),
                      "b": CM(*np.ceil(np.array([3, 2, 0, 4]) * factor).astype(int))}).verdicts(0.05).iloc[0]["verdict"]

    # the projection is a normal approximation: a little more settles it, half as much does not
    assert grown(1.1 * k) == "algorithmic bias" and grown(k / 2) != "algorithmic bias"


def test_systemic_disparity_needs_ofi_equivalent_to_zero_and_di_beyond_four_fifths():
    audit = Audit({"a": CM(1000, 0, 0, 9000), "b": CM(5000, 0, 0, 5000)})
    v = audit.verdicts(0.05).iloc[0]
    assert v["ofi"] == 0 and v["ofi_equivalent"] and v["di_ci_high"] < 0.8
    assert v["verdict"] == "systemic disparity"
    small = Audit({"a": CM(1, 0, 0, 9), "b": CM(5, 0, 0, 5)}).verdicts(0.05).iloc[0]
    assert small["verdict"] == "inconclusive"  # the same rates at n = 10 prove nothing


def test_no_bias_needs_both_equivalences():
    v = Audit({"a": CM(5000, 500, 500, 4000), "b": CM(5050, 500, 500, 3950)}).verdicts(0.05).iloc[0]
    assert v["verdict"] == "no bias detected" and v["di_within_band"]
    assert -0.05 < v["ofi_ci_low"] and v["ofi_ci_high"] < 0.05


def test_never_algorithmic_bias_without_an_adjusted_significant_ofi():
    rng = np.random.default_rng(8)
    for adjust in ("holm", "bh", "none"):
        for _ in range(20):
            k = int(rng.integers(2, 9))
            cms = {f"g{g}": CM(*(rng.integers(0, 60, 4) + 1)) for g in range(k)}
            v = Audit(cms).verdicts(0.05, alpha=0.05, adjust=adjust)
            bias = v["verdict"] == "algorithmic bias"
            assert (v.loc[bias, "ofi_p_adjusted"] < 0.05).all()
            assert (v.loc[bias, "ofi_ci_low"] > 0.05).sum() + (v.loc[bias, "ofi_ci_high"] < -0.05).sum() == bias.sum()
            fine = v["verdict"] == "no bias detected"
            assert (v.loc[fine, "ofi_ci_high"] < 0.05).all() and (v.loc[fine, "ofi_ci_low"] > -0.05).all()
            assert set(v["verdict"]) <= set(VERDICTS)


def test_verdicts_vectorized_equal_the_scalar_functions():
    """The unadjusted columns are the scalar functions' 95 % results; the adjusted ones the same method at the
    decision level."""
    audit = datasets.load_demo("compas_race")
    v = audit.verdicts(0.05)
    for gi, gj in [("African-American", "Caucasian"), ("Asian", "Native American"), ("Hispanic", "Other")]:
        row = v[(v.group_i == gi) & (v.group_j == gj) | (v.group_i == gj) & (v.group_j == gi)].iloc[0]
        ci, cj = audit.cms[row["group_i"]], audit.cms[row["group_j"]]
        o, d = inference.ofi_test(ci, cj), inference.di_interval(ci, cj)
        assert (row["ofi"], row["ofi_ci_low_unadjusted"], row["ofi_ci_high_unadjusted"], row["ofi_p"]) == pytest.approx(
            (o.estimate, o.ci_low, o.ci_high, o.p_value))
        assert (row["di"], row["di_ci_low_unadjusted"], row["di_ci_high_unadjusted"], row["di_p"]) == pytest.approx(
            (d.estimate, d.ci_low, d.ci_high, d.p_value))
        adjusted = inference.ofi_test(ci, cj, alpha=1 - v.levels.ofi)
        assert (row["ofi_ci_low"], row["ofi_ci_high"]) == pytest.approx((adjusted.ci_low, adjusted.ci_high))


def test_compas_by_race_reads_honestly():
    v = datasets.load_demo("compas_race").verdicts(0.05)
    counts = v["verdict"].value_counts().to_dict()
    assert counts.get("algorithmic bias", 0) < 8  # was 13 of 15 before intervals
    small = v[(v["n_i"] <= 31) | (v["n_j"] <= 31)]
    assert set(small["verdict"]) == {"inconclusive"}  # Native American (11) and Asian (31)
    row = v.set_index(["group_i", "group_j"]).loc[("African-American", "Caucasian")]
    assert row["verdict"] == "algorithmic bias" and row["favours"] == "Caucasian"
    assert isinstance(v, pd.DataFrame) and v.settings.adjust == "holm" and not v.attrs


def test_an_upload_with_groups_of_5_to_5000_rows_reads_honestly():
    """Known rates: A and B differ in how the model treats them; C and D share A's rates; E has 5 rows."""
    from fairness_core.io import cms_from_table, read_table

    def counts(n, tp, fn, fp):
        return int(round(n * tp)), int(round(n * fn)), int(round(n * fp)), n - sum(int(round(n * x)) for x in (tp, fn, fp))

    rows = {"A": counts(5000, 0.40, 0.10, 0.10), "B": counts(5000, 0.35, 0.20, 0.05), "C": counts(500, 0.40, 0.10, 0.10),
            "D": counts(2000, 0.40, 0.10, 0.10), "E": (1, 1, 2, 1)}
    text = "group,TP,FN,FP,TN\n" + "".join(f"{g},{tp},{fn},{fp},{tn}\n" for g, (tp, fn, fp, tn) in rows.items())
    audit = cms_from_table(read_table(text.encode(), "groups.csv"), ["group"])
    v = audit.verdicts(0.05)
    assert pair(v, "A", "B")["verdict"] == "algorithmic bias" and pair(v, "A", "B")["favours"] == "A"
    assert pair(v, "A", "D")["verdict"] == "no bias detected"
    assert all(pair(v, g, "E")["verdict"] == "inconclusive" for g in "ABCD")  # n = 5: noise, never a finding
    assert (v["ofi_ci_low"] <= v["ofi"]).all() and (v["ofi"] <= v["ofi_ci_high"]).all()
