"""MATCH test (docs/methods.md): exact against brute-force multinomial enumeration, approximations against exact."""

import math

import numpy as np
import pytest
from scipy import stats

from fairness_core import ConfusionMatrix, match, metrics
from fairness_core.sample_size import enumerate_matrices
from fairness_core.reading import match_explain

CM = ConfusionMatrix


def one_sample(*args, **kwargs):  # type: ignore[no-untyped-def]
    """The seed's one-sample MATCH test: the reference taken as a known population."""
    return match.test(*args, reference_is="population", **kwargs)
REF = CM(30, 10, 20, 40)


def brute_force(metric, group, reference):
    """P(S <= s), P(S >= s) by summing multinomial probabilities over every CM of the group's n."""
    cells = enumerate_matrices(group.n)
    probs = reference.as_array() / reference.n
    pmf = stats.multinomial.pmf(np.column_stack(cells), group.n, probs)
    scores = metrics.compute(metric, *cells)
    s = metrics.compute(metric, group)
    ok = ~np.isnan(scores)
    tol = 1e-12
    total = pmf[ok].sum()
    return pmf[ok & (scores <= s + tol)].sum() / total, pmf[ok & (scores >= s - tol)].sum() / total


@pytest.mark.parametrize("metric", match.SUPPORTED)
@pytest.mark.parametrize("group", [CM(1, 2, 0, 3), CM(3, 0, 2, 2), CM(0, 4, 1, 0), CM(2, 2, 2, 3)])
def test_exact_equals_brute_force_enumeration(metric, group):
    r = one_sample(metric, group, REF, method="exact")
    if math.isnan(r.observed):
        assert math.isnan(r.cdf) and "undefined" in r.note
        return
    cdf, sf = brute_force(metric, group, REF)
    assert r.cdf == pytest.approx(cdf, abs=1e-12)
    assert r.sf == pytest.approx(sf, abs=1e-12)
    assert r.p_value == pytest.approx(min(1, 2 * min(cdf, sf)), abs=1e-12)


def test_seed_worked_example_normal_approximation():
    # n = 100, p = 0.75, s_obs = 0.80 -> z = (80 + 0.5 - 75)/4.33 = 1.27, P = 0.90 (Briscoe 2024, §4.5.1)
    group = CM(40, 10, 40, 10)  # PPR = 80/100
    reference = CM(300, 100, 450, 150)  # p(TP) + p(FP) = 0.75
    r = one_sample("PPR", group, reference, method="normal")
    assert r.observed == 0.8
    assert stats.norm.ppf(r.cdf) == pytest.approx(5.5 / math.sqrt(100 * 0.75 * 0.25))
    assert round(r.cdf, 2) == 0.90


def test_peizer_pratt_is_within_a_tenth_of_a_percent_of_exact():
    worst = 0.0
    for n in (10, 30, 100, 400):
        for p in (0.1, 0.3, 0.5, 0.8):
            x = np.arange(1, n - 1)  # min(x + 1, n - x) >= 2
            exact = stats.binom.cdf(x, n, p)
            approx = stats.norm.cdf(match.peizer_pratt_z(x, n, p))
            worst = max(worst, float(np.max(np.abs(approx - exact))))
    assert worst < 1e-3


def test_normal_marginal_benefit_uses_n_in_the_variance():
    group = CM(200, 100, 150, 550)  # n = 1000
    r = one_sample("B", group, REF, method="normal")
    p_plus, p_minus = 0.2, 0.1
    mean, var = 1000 * (p_plus - p_minus), 1000 * ((p_plus + p_minus) - (p_plus - p_minus) ** 2)
    assert r.cdf == pytest.approx(stats.norm.cdf((50 + 0.5 - mean) / math.sqrt(var)))
    exact = one_sample("B", group, REF, method="exact")
    assert abs(r.cdf - exact.cdf) < 0.01  # a correct normal approximation is close at n = 1000


def test_beta_shortcut_is_labelled_and_differs_from_exact():
    group = CM(2, 3, 1, 4)
    beta = one_sample("TPR", group, REF, method="beta")
    exact = one_sample("TPR", group, REF, method="exact")
    assert "thesis's beta shortcut" in beta.note
    assert beta.cdf == pytest.approx(stats.beta.cdf(0.4, 3, 4))
    assert abs(beta.cdf - exact.cdf) > 0.05  # not the reference's sampling distribution


def test_exact_runs_at_a_million():
    group = CM(300_000, 100_000, 200_000, 400_000)
    for metric in ("PPR", "B", "TPR"):
        r = one_sample(metric, group, REF, method="exact")
        assert 0 <= r.p_value <= 1
    # the group matches the reference exactly: scores sit at the centre
    assert one_sample("PPR", group, REF).p_value > 0.5


def test_unsupported_combinations_say_what_to_use():
    with pytest.raises(ValueError, match="use exact or normal"):
        one_sample("B", CM(1, 1, 1, 1), REF, method="peizer_pratt")
    with pytest.raises(ValueError, match="use exact or beta"):
        one_sample("TPR", CM(1, 1, 1, 1), REF, method="normal")
    with pytest.raises(ValueError, match="MATCH is defined for"):
        one_sample("MCC", CM(1, 1, 1, 1), REF)


def test_reference_without_the_denominator_cells_is_undefined():
    r = one_sample("TPR", CM(1, 1, 1, 1), CM(0, 0, 5, 5))
    assert math.isnan(r.p_value) and "reference never" in r.note


# --- Holm, method comparison, reference distributions, the audit's MATCH table -------------

def holm_by_definition(p):
    """Adjusted p_(i) = max over j <= i of min(1, (m - j + 1) p_(j)), written out."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    m = len(p)
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def test_holm_matches_its_definition_and_skips_nan():
    p = [0.01, 0.04, 0.03, 0.005, 0.2]
    np.testing.assert_allclose(match.holm(p), holm_by_definition(p))
    # worked by hand: sorted 0.005, 0.01, 0.03, 0.04, 0.2 -> 0.025, 0.04, 0.09, 0.09, 0.2
    np.testing.assert_allclose(match.holm(p), [0.04, 0.09, 0.09, 0.025, 0.2])
    with_nan = match.holm([0.01, np.nan, 0.04])
    assert np.isnan(with_nan[1])
    np.testing.assert_allclose(with_nan[[0, 2]], [0.02, 0.04])
    assert np.isnan(match.holm([np.nan])).all()


@pytest.mark.parametrize("metric", ["PPR", "B", "TPR"])
def test_compare_methods_reports_each_method_against_exact(metric):
    group = CM(3, 3, 0, 5)
    table = match.compare_methods(metric, group, REF)
    assert table["method"].tolist() == list(match.methods_for(metric))
    exact = table.iloc[0]
    assert exact["percentile_error"] == 0 and exact["p_value_error"] == 0
    for row in table.itertuples():
        r = one_sample(metric, group, REF, method=row.method)
        assert row.percentile_error == pytest.approx(r.cdf - exact["percentile"])


@pytest.mark.parametrize("metric", ["PPR", "ACC", "B", "TPR", "PPV"])
def test_reference_distribution_equals_multinomial_enumeration(metric):
    n = 9
    x, mass, exact = match.reference_distribution(metric, n, REF)
    assert exact
    cells = enumerate_matrices(n)
    pmf = stats.multinomial.pmf(np.column_stack(cells), n, REF.as_array() / REF.n)
    scores = metrics.compute(metric, *cells)
    ok = ~np.isnan(scores)
    for value, p in zip(x, mass):
        expected = pmf[ok & np.isclose(scores, value, atol=1e-12)].sum() / pmf[ok].sum()
        assert p == pytest.approx(expected, abs=1e-12)
    assert mass.sum() == pytest.approx(1)


@pytest.mark.parametrize("metric", ["PPR", "B", "TPR"])
def test_binned_reference_distribution_has_the_exact_mass(metric):
    x, mass, exact = match.reference_distribution(metric, 5000, REF, max_points=200)
    assert not exact and x.size == 200
    assert mass.sum() == pytest.approx(1, abs=1e-9)
    assert np.all(mass >= -1e-12)


def test_explain_reads_the_p_value_in_words():
    group = CM(3, 3, 0, 5)
    r = one_sample("TPR", group, REF)
    text = match_explain(r, "Native American", metrics.compute("TPR", REF))
    assert "At n = 11" in text and f"p = {r.p_value:.3g}" in text and "does not show a difference" in text
    strong = one_sample("PPR", CM(40, 0, 40, 0), REF)
    assert "unlikely to be a small-sample accident" in match_explain(strong, "A", 0.5)
    undefined = one_sample("PPV", CM(0, 3, 0, 5), REF)
    assert "undefined" in match_explain(undefined, "A", 0.5)


def test_audit_match_table_with_holm_and_a_named_reference():
    from fairness_core.audit import Audit

    audit = Audit({"big": CM(400, 100, 100, 400), "odd": CM(5, 0, 0, 5), "small": CM(2, 1, 1, 2),
                   "nopos": CM(0, 0, 3, 4)})
    t = audit.match_table(["PPR", "TPR"], method="exact", reference_is="population")
    assert len(t) == 8
    assert (t["adjusted p-value"].dropna() >= t["p-value"].dropna()).all()
    np.testing.assert_allclose(t["adjusted p-value"], match.holm(t["p-value"]))
    row = t[(t.group == "small") & (t.metric == "PPR")].iloc[0]
    r = one_sample("PPR", audit.cms["small"], audit.rest_of("small"))
    assert row["p-value"] == r.p_value and row["percentile"] == r.cdf
    assert row["verdict"] == "indistinguishable from the reference"
    undefined = t[(t.group == "nopos") & (t.metric == "TPR")].iloc[0]
    assert undefined["verdict"] == "undefined" and "no actual positives" in undefined["note"]
    named = audit.match_table(["PPR"], reference="big", adjust="none", reference_is="population")
    assert "big" not in set(named.group) and named["adjusted p-value"].isna().all()
    odd = named[named.group == "odd"].iloc[0]
    assert odd["p-value"] == one_sample("PPR", audit.cms["odd"], audit.cms["big"]).p_value
    with pytest.raises(ValueError, match="alpha"):
        audit.match_table(alpha=1.5)


def test_exact_keeps_extreme_tails_when_reference_rates_are_tiny():
    """The O(sqrt n) window must not clip a tail that decides a p-value of 1e-26."""
    n = 20_000
    ref = CM(5000, 1, 2, 5000)  # p+ and p- of order 1e-4: Poisson-like, skewed
    group = CM(9000, 0, 40, n - 9040)
    r = one_sample("B", group, ref)
    probs = ref.as_array() / ref.n
    m = np.arange(n + 1)  # the full O(n) sum, no window
    w = stats.binom.pmf(m, n, probs[1] + probs[2])
    sf = (w * stats.binom.sf(np.ceil((40 + m) / 2) - 1, m, probs[2] / (probs[1] + probs[2]))).sum()
    assert 0 < sf < 1e-20
    assert r.sf == pytest.approx(sf, rel=1e-9)


def test_beyond_the_exact_limit_match_is_a_bounded_normal_approximation(monkeypatch):
    """Counts up to 10^15 are accepted; the exact O(sqrt n) sums would need gigabytes there."""
    ref = ConfusionMatrix(3 * 10**14, 10**14, 2 * 10**14, 4 * 10**14)
    group = ConfusionMatrix(28 * 10**13, 10**14, 23 * 10**13, 39 * 10**13)
    for metric in ("B", "TPR"):
        r = one_sample(metric, group, ref)
        assert "normal approximation" in r.note and "Berry–Esseen" in r.note and 0 <= r.p_value <= 1
        assert not match.exact_feasible(metric, group.n, ref)
    x, mass, _ = match.reference_distribution("B", 10**12, ref)
    assert abs(mass.sum() - 1) < 1e-9 and len(x) <= 400


def test_the_normal_fallback_agrees_with_exact_within_its_berry_esseen_bound(monkeypatch):
    ref = ConfusionMatrix(3000, 1000, 2000, 4000)
    n = 200_000
    group = ConfusionMatrix(int(0.3 * n), int(0.1 * n) + 150, int(0.2 * n) + 200, n - int(0.6 * n) - 350)
    exact = one_sample("B", group, ref)
    monkeypatch.setattr(match, "MAX_EXACT_TERMS", 10)
    approx = one_sample("B", group, ref)
    bound = float(approx.note.split("at most ")[1].split(" ")[0])
    assert exact.note == "" and abs(approx.cdf - exact.cdf) <= bound


# --- the two-sample test: the reference is a sample too (the default) -----------------------

def test_two_sample_p_does_not_depend_on_which_group_is_the_reference():
    a, b = CM(9, 2, 1, 1), CM(300, 100, 450, 150)
    for metric in ("PPR", "TPR", "FPR", "B", "ACC", "PPV"):
        ab, ba = match.test(metric, a, b), match.test(metric, b, a)
        assert ab.p_value == pytest.approx(ba.p_value, abs=1e-12), metric
        assert ab.method.startswith("two-sample")


def test_a_13_row_reference_is_not_taken_as_exact():
    """German credit's foreign workers: a 13-row 'rest' against the rest of the data. As a population it gives
    p < 0.001; as the sample it is, the same gap is not significant."""
    group, rest = CM(600, 60, 250, 50), CM(9, 1, 2, 1)
    assert one_sample("PPR", group, rest).p_value < 0.001
    assert match.test("PPR", group, rest).p_value > 0.05


def test_two_sample_p_equals_the_verdict_tables_for_the_same_pair():
    from fairness_core import datasets

    audit = datasets.load_demo("compas_race")
    v = audit.verdicts()
    t = audit.match_table(["PPR", "B"], reference="Caucasian", adjust="none")
    for _, row in v[(v.group_i == "Caucasian") | (v.group_j == "Caucasian")].iterrows():
        other = row["group_i"] if row["group_j"] == "Caucasian" else row["group_j"]
        mine = t[t.group == other].set_index("metric")["p-value"]
        assert mine["PPR"] == pytest.approx(row["di_p"], rel=1e-9, abs=1e-15)
        assert mine["B"] == pytest.approx(row["ofi_p"], rel=1e-9, abs=1e-15)
