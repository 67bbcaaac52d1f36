"""Smoothing (docs/methods.md): Algorithm 1 by hand, Theorem 6.1 by simulation, the exact error
experiment against brute-force enumeration and against Monte Carlo."""

import math
from itertools import product

import numpy as np
import pytest

from fairness_core import ConfusionMatrix, metrics, smoothing

CM = ConfusionMatrix


def test_algorithm_1_on_hand_worked_numbers():
    # r = [0.1, 0.2, 0.3, 0.4]; λ = 10: α = [1+1, 0+2, 0+3, 1+4] = [2, 2, 3, 5], Σα = 12, n = 2
    out = smoothing.cps(CM(1, 0, 0, 1), CM(10, 20, 30, 40), lam=10)
    np.testing.assert_allclose(out, [4 / 12, 4 / 12, 6 / 12, 10 / 12])
    assert out.sum() == pytest.approx(2)  # scaled back to the group's n
    # λ = 0 changes nothing; probabilities work as the reference as well as counts
    np.testing.assert_allclose(smoothing.cps(CM(3, 1, 4, 1), [0.1, 0.2, 0.3, 0.4], lam=0), [3, 1, 4, 1])
    np.testing.assert_allclose(smoothing.cps(CM(1, 0, 0, 1), [0.1, 0.2, 0.3, 0.4], lam=10), out)


def test_additive_adds_epsilon_to_every_cell():
    np.testing.assert_allclose(smoothing.additive(CM(0, 2, 0, 5), eps=1), [1, 3, 1, 6])
    assert smoothing.additive(CM(0, 2, 0, 5), eps=1e-10)[0] == 1e-10


def test_smoothed_cms_feed_every_metric():
    s = smoothing.cps(CM(0, 3, 0, 5), CM(300, 100, 200, 400), lam=5)
    for name in metrics.NAMES:
        v = metrics.compute(name, *s)
        assert np.isfinite(v), name  # CPS fills the empty cells, so nothing is undefined
    assert np.isnan(metrics.compute("PPV", CM(0, 3, 0, 5)))


def test_cps_never_yields_negative_or_non_finite_counts():
    rng = np.random.default_rng(3)
    for _ in range(500):
        cells = rng.integers(0, 4, 4) * rng.integers(0, 2, 4)
        ref = rng.integers(0, 1000, 4) * rng.integers(0, 2, 4)
        if ref.sum() == 0:
            ref[rng.integers(4)] = 1
        lam = float(rng.choice([0, 1e-9, 0.5, 5, 20, 1e6]))
        out = smoothing.cps(cells, ref, lam)
        assert np.isfinite(out).all() and (out >= 0).all()
        assert out.sum() == pytest.approx(cells.sum(), abs=1e-9)


@pytest.mark.parametrize("bad", [[1, 2, 3], [1, -1, 0, 0], [0, 0, 0, 0], [np.nan, 1, 1, 1]])
def test_invalid_references_are_rejected(bad):
    with pytest.raises(ValueError, match="reference"):
        smoothing.cps(CM(1, 1, 1, 1), bad, lam=5)


def test_negative_lambda_is_rejected():
    with pytest.raises(ValueError, match=">= 0"):
        smoothing.cps(CM(1, 1, 1, 1), CM(1, 1, 1, 1), lam=-1)


def test_theorem_6_1_bias_and_variance_by_simulation():
    rng = np.random.default_rng(7)
    p, p_ref, n, lam = 0.3, 0.45, 40, 10.0
    c = rng.binomial(n, p, 400_000)
    est = (c + lam * p_ref) / (n + lam)
    assert est.mean() - p == pytest.approx(float(smoothing.cps_bias(p, p_ref, n, lam)), abs=4e-4)
    assert est.var() == pytest.approx(float(smoothing.cps_variance(p, n, lam)), rel=0.02)


def brute_force_mse(metric, group, ref, n, smoother):
    """Pure-Python: every CM of size n, its multinomial probability, Algorithm 1 by hand."""
    p = [c / group.n for c in group.as_array()]
    r = [c / ref.n for c in ref.as_array()]
    truth = metrics.compute(metric, group)
    num = den = 0.0
    for a, b, c in product(range(n + 1), repeat=3):
        d = n - a - b - c
        if d < 0:
            continue
        cells = (a, b, c, d)
        w = math.factorial(n) / math.prod(math.factorial(x) for x in cells) * math.prod(
            pi**x for pi, x in zip(p, cells))
        if smoother.kind == "cps":
            alpha = [x + smoother.value * ri for x, ri in zip(cells, r)]
            cells = tuple(al * n / sum(alpha) for al in alpha)
        elif smoother.kind == "additive":
            cells = tuple(x + smoother.value for x in cells)
        v = float(metrics.compute(metric, *[np.array(x, dtype=float) for x in cells]))
        if not math.isnan(v):
            num += w * (v - truth) ** 2
            den += w
    return num / den, 1 - den


@pytest.mark.parametrize("metric", ["TPR", "PPV", "MCC", "B", "PT"])
def test_exact_mse_equals_brute_force(metric):
    group, ref = CM(5, 2, 3, 6), CM(120, 40, 60, 180)
    table = smoothing.error_curves(group, ref, [3, 6], names=[metric])
    for sm in smoothing.SEED_SMOOTHERS:
        for n in (3, 6):
            row = table[(table.smoother == sm.label) & (table.n == n)].iloc[0]
            mse, excluded = brute_force_mse(metric, group, ref, n, sm)
            assert row.mse == pytest.approx(mse, rel=1e-9, abs=1e-15)
            assert row.p_excluded == pytest.approx(excluded, abs=1e-12)


def test_exact_and_monte_carlo_agree_within_monte_carlo_error():
    group, ref = CM(21, 2, 3, 5), CM(1500, 930, 1060, 2650)
    ns = [5, 20, 60]
    kw = dict(names=["TPR", "MCC", "PPR"], smoothers=smoothing.SEED_SMOOTHERS)
    exact = smoothing.error_curves(group, ref, ns, mode="exact", **kw)
    mc = smoothing.error_curves(group, ref, ns, mode="monte_carlo", draws=20_000, seed=11, **kw)
    merged = exact.merge(mc, on=["metric", "smoother", "n"], suffixes=("_exact", "_mc"))
    assert len(merged) == 3 * 6 * 3
    z = (merged.mse_mc - merged.mse_exact).abs() / merged.se_mc
    assert (z < 5).all(), merged[z >= 5]
    assert exact.se.isna().all() and (mc.se > 0).all()
    undefined = merged[merged.metric == "MCC"]
    assert np.allclose(undefined.p_excluded_mc, undefined.p_excluded_exact, atol=0.01)


def test_error_curves_report_progress_and_validate():
    seen = []
    smoothing.error_curves(CM(5, 2, 3, 6), CM(50, 20, 30, 60), [4, 5, 6], names=["ACC"], on_progress=seen.append)
    assert [r.fraction for r in seen] == pytest.approx([1 / 3, 2 / 3, 1.0])
    assert [(r.done, r.total) for r in seen] == [(1, 3), (2, 3), (3, 3)]
    with pytest.raises(TypeError, match="progress"):   # the older fraction callback was removed: on_progress=
        smoothing.error_curves(CM(5, 2, 3, 6), CM(50, 20, 30, 60), [4, 5, 6], names=["ACC"], progress=print)
    with pytest.raises(ValueError, match="mode"):
        smoothing.error_curves(CM(5, 2, 3, 6), CM(50, 20, 30, 60), [4], mode="bootstrap")
    with pytest.raises(ValueError, match="n must be <="):
        smoothing.error_curves(CM(5, 2, 3, 6), CM(50, 20, 30, 60), [500])


def test_smooth_groups_flags_metrics_that_became_defined():
    cms = {"small": CM(0, 3, 0, 5), "big": CM(400, 100, 200, 300)}
    table = smoothing.smooth_groups(cms, smoothing.Smoother("cps", 10), ["PPV", "ACC"])
    row = table[(table.group == "small") & (table.metric == "PPV")].iloc[0]
    assert row.became_defined and np.isnan(row.raw) and row.reference_n == 1000
    expected = smoothing.cps(cms["small"], cms["big"], 10)
    assert row.smoothed == pytest.approx(expected[0] / (expected[0] + expected[2]))
    assert not table[(table.metric == "ACC")].became_defined.any()


def test_prior_comparison_reproduces_002_table_2():
    # Briscoe, Kepler et al., Table 2 (COMPAS Black group hidden; all other races as the reference)
    t = smoothing.compare_priors(CM(9, 33, 5, 53), CM(6, 25, 5, 64)).set_index("row")
    np.testing.assert_allclose(t.loc["|CPS (reference proportions) − hidden|", ["TP", "FN", "FP", "TN"]],
                               [0.03, 0.08, 0.00, 0.11], atol=1e-12)
    np.testing.assert_allclose(t.loc["|uniform (add-one) − hidden|", ["TP", "FN", "FP", "TN"]],
                               [0.16, 0.08, 0.20, 0.28], atol=1e-12)
    np.testing.assert_allclose(t.loc["|no prior (zeros) − hidden|", ["TP", "FN", "FP", "TN"]],
                               [0.09, 0.33, 0.05, 0.53], atol=1e-12)
    assert t["L1 distance"].iloc[2:].idxmin() == "|CPS (reference proportions) − hidden|"


def test_pt_is_stable_where_smoothing_makes_tpr_close_to_fpr():
    # textbook form on well-conditioned integers
    tpr, fpr = 3 / 4, 1 / 5
    textbook = (math.sqrt(tpr * fpr) - fpr) / (tpr - fpr)
    assert metrics.compute("PT", CM(3, 1, 1, 4)) == pytest.approx(textbook, rel=1e-12)
    # TPR and FPR one part in 10^12 apart: the limit is 1/2, not round-off noise
    cells = np.array([1 + 1e-12, 1.0, 1.0, 1.0])
    assert float(metrics.compute("PT", *cells)) == pytest.approx(0.5, abs=1e-9)


def test_api_md_names_are_importable():
    from fairness_core import smoothing as sm

    assert callable(sm.cps) and callable(sm.additive)
    np.testing.assert_allclose(sm.cps(CM(1, 0, 0, 5), CM(1, 1, 1, 1), lam=5.0).sum(), 6)


def test_error_curves_stop_when_asked():
    import pytest

    from fairness_core import ConfusionMatrix, smoothing
    from fairness_core.services.jobs import Cancelled

    calls = []
    with pytest.raises(Cancelled, match="after 2 of 10"):
        smoothing.error_curves(ConfusionMatrix(5, 3, 2, 9), ConfusionMatrix(50, 20, 30, 80), range(5, 15),
                               should_stop=lambda: calls.append(1) or len(calls) > 2)
