"""Verdicts that keep their promises: exact coverage in the corners, materiality, family-wise claims, power,
intervals that match the decisions (docs/methods.md, "Verdicts")."""

import numpy as np
import pytest
from scipy import optimize, special, stats

from fairness_core import ConfusionMatrix, datasets, inference, verdicts
from fairness_core.audit import Audit

CM = ConfusionMatrix
ALPHA = 0.05


# ------------------------------------------------------------------------- exact enumeration

def support(n: int, p_fp: float, p_fn: float, cut: float = 1e-12) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (FP, FN) outcome of a group of n with these rates whose probability is at least ``cut``.

    Each count's range is first cut to where its binomial margin exceeds ``cut`` / e (a joint probability is at
    most its margin's, so nothing kept is lost), then the joint probability decides: 5,000 rows cost a grid of a
    few hundred values a side, not 5,001²."""
    ranges = []
    for p in (p_fp, p_fn):
        k = np.arange(n + 1)
        margin = stats.binom.logpmf(k, n, p) if 0 < p < 1 else np.where(k == (n if p == 1 else 0), 0.0, -np.inf)
        ranges.append(k[margin > np.log(cut) - 1])
    fp, fn = np.meshgrid(*ranges, indexing="ij")
    ok = fp + fn <= n
    fp, fn = fp[ok].astype(float), fn[ok].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = (special.gammaln(n + 1) - special.gammaln(fp + 1) - special.gammaln(fn + 1)
                 - special.gammaln(n - fp - fn + 1) + special.xlogy(fp, p_fp) + special.xlogy(fn, p_fn)
                 + special.xlogy(n - fp - fn, 1 - p_fp - p_fn))
    keep = log_p > np.log(cut)
    return fp[keep], fn[keep], np.exp(log_p[keep])


def _score_bounds_for(fi, ni_, n_i, fj, nj_, n_j, gamma):  # type: ignore[no-untyped-def]
    """The library's score bounds for every pair of one outcome of group i and one of group j, computed from each
    outcome's own limits at the two grid points around z_{1−γ} (as :meth:`OFIPairs.bounds` does), so that
    enumerating 10^5 × 10^5 outcomes costs two limit computations per outcome, not one per pair."""
    z = float(stats.norm.isf(gamma))
    k = min(int(np.floor(z / inference.Z_STEP)), inference._K - 1)
    t = z / inference.Z_STEP - k
    grid = inference._Z_GRID[[k, k + 1]]
    bi, bj = (fi - ni_) / n_i, (fj - nj_) / n_j
    li, ui = inference._b_limits(fi[:, None], ni_[:, None], np.full((fi.size, 1), float(n_i)), grid[None, :])
    lj, uj = inference._b_limits(fj[:, None], nj_[:, None], np.full((fj.size, 1), float(n_j)), grid[None, :])
    return bi, bj, (bi[:, None] - li) ** 2, (ui - bi[:, None]) ** 2, (bj[:, None] - lj) ** 2, (uj - bj[:, None]) ** 2, t


def exact_ofi_coverage(n_i: int, rates_i: tuple[float, float], n_j: int, rates_j: tuple[float, float],
                       method: str = "auto", level: float = 0.95,
                       chunk: float = 2e7) -> tuple[float, float, float]:
    """(coverage, P(lower bound above Δ), P(upper bound below Δ)) of the OFI interval, summing the probability
    of every pair of outcomes of both groups (truncated below 1e-12)."""
    s = exact_ofi_summary(n_i, rates_i, n_j, rates_j, method, level, chunk)
    return s["coverage"], s["miss_low"], s["miss_high"]


def exact_ofi_summary(n_i: int, rates_i: tuple[float, float], n_j: int, rates_j: tuple[float, float],
                      method: str = "auto", level: float = 0.95, chunk: float = 2e7) -> dict[str, float]:
    """Coverage, both one-sided misses and the mean width of the OFI interval, by exact enumeration."""
    fi, ni_, wi = support(n_i, *rates_i)
    fj, nj_, wj = support(n_j, *rates_j)
    delta = (rates_i[0] - rates_i[1]) - (rates_j[0] - rates_j[1])
    gamma = (1 - level) / 2
    score = method in ("auto", "score")
    if score:
        bi, bj, below_i, above_i, below_j, above_j, t = _score_bounds_for(fi, ni_, n_i, fj, nj_, n_j, gamma)
    above = below = width = 0.0
    step = max(1, int(chunk // fj.size))
    for s in range(0, fi.size, step):
        sl = slice(s, s + step)
        if score:
            est = bi[sl, None] - bj[None, :]
            lo = [est - np.sqrt(below_i[sl, g, None] + above_j[None, :, g]) for g in (0, 1)]
            hi = [est + np.sqrt(above_i[sl, g, None] + below_j[None, :, g]) for g in (0, 1)]
            low = np.maximum(np.where(t == 0, lo[0], lo[0] + t * (lo[1] - lo[0])), -inference.OFI_RANGE)
            high = np.minimum(np.where(t == 0, hi[0], hi[0] + t * (hi[1] - hi[0])), inference.OFI_RANGE)
        elif method == "wald":   # closed form per outcome, as inference's Wald interval
            vi = ((fi[sl] + ni_[sl]) / n_i - ((fi[sl] - ni_[sl]) / n_i) ** 2) / n_i
            vj = ((fj + nj_) / n_j - ((fj - nj_) / n_j) ** 2) / n_j
            est = (fi[sl, None] - ni_[sl, None]) / n_i - (fj[None] - nj_[None]) / n_j
            half = stats.norm.isf(gamma) * np.sqrt(vi[:, None] + vj[None])
            low = np.maximum(est - half, -inference.OFI_RANGE)
            high = np.minimum(est + half, inference.OFI_RANGE)
        else:
            o = inference.ofi_pairs(fi[sl, None], ni_[sl, None], n_i, fj[None], nj_[None], n_j, method)
            low, high = o.bounds(gamma)
        w = wi[sl, None] * wj[None]
        above += float((w * (low > delta + 1e-12)).sum())
        below += float((w * (high < delta - 1e-12)).sum())
        width += float((w * (high - low)).sum())
    return {"coverage": 1 - above - below, "miss_low": above, "miss_high": below, "width": width}


def test_the_enumerators_bounds_are_the_librarys():
    wald = exact_ofi_summary(30, (0.1, 0.05), 40, (0.0, 0.2), "wald")
    fi, ni_, wi = support(30, 0.1, 0.05)
    fj, nj_, wj = support(40, 0.0, 0.2)
    lo, hi = inference.ofi_pairs(fi[:, None], ni_[:, None], 30, fj[None], nj_[None], 40, "wald").bounds(0.025)
    assert wald["width"] == pytest.approx(float((wi[:, None] * wj[None] * (hi - lo)).sum()), rel=1e-9)
    fi, ni_, _ = support(20, 0.1, 0.05)
    fj, nj_, _ = support(30, 0.0, 0.2)
    bi, bj, below_i, above_i, below_j, above_j, t = _score_bounds_for(fi, ni_, 20, fj, nj_, 30, 0.025)
    est = bi[:, None] - bj[None, :]
    lo = [est - np.sqrt(below_i[:, g, None] + above_j[None, :, g]) for g in (0, 1)]
    low = lo[0] + t * (lo[1] - lo[0])
    library, _ = inference.ofi_pairs(fi[:, None], ni_[:, None], 20, fj[None], nj_[None], 30).bounds(0.025)
    np.testing.assert_allclose(low, library, atol=1e-12)


#: The corners the issue found (small groups with rare errors of one kind against error-free partners),
#: frequent and two-kind errors, tiny groups, and the skewed large-group case with rare errors of both kinds.
CORNERS = [
    (40, (0.0, 0.0), 5000, (0.0, 0.0)), (40, (0.01, 0.0), 5000, (0.0, 0.0)), (40, (0.0, 0.01), 5000, (0.0, 0.0)),
    (40, (0.05, 0.0), 5000, (0.001, 0.0)), (100, (0.02, 0.0), 1000, (0.0, 0.0)), (20, (0.03, 0.0), 300, (0.0, 0.01)),
    (11, (0.1, 0.0), 300, (0.0, 0.0)), (5, (0.1, 0.1), 5, (0.3, 0.0)), (5, (0.0, 0.0), 8, (0.5, 0.0)),
    (8, (0.2, 0.2), 11, (0.0, 0.0)), (100, (0.0, 0.3), 1000, (0.0, 0.0)), (300, (0.05, 0.0), 300, (0.0, 0.05)),
    (1000, (0.0, 0.01), 1000, (0.01, 0.0)), (100, (0.5, 0.0), 300, (0.0, 0.0)), (40, (0.0, 0.3), 100, (0.0, 0.0)),
    (20, (0.25, 0.25), 40, (0.05, 0.0)),
]


@pytest.mark.parametrize("n_i,rates_i,n_j,rates_j", CORNERS)
def test_ofi_interval_keeps_exact_coverage_in_the_corners(n_i, rates_i, n_j, rates_j):
    coverage, above, below = exact_ofi_coverage(n_i, rates_i, n_j, rates_j)
    assert coverage >= 0.93 and above <= 0.035 and below <= 0.035, (coverage, above, below)


def test_the_old_pseudo_count_interval_misses_in_that_corner():
    """Why the method changed: a small group with rare errors of one kind against an error-free group."""
    coverage, above, below = exact_ofi_coverage(40, (0.05, 0.0), 5000, (0.0, 0.0), method="adjusted")
    assert coverage < 0.93 or max(above, below) > 0.035


def test_no_errors_in_40_rows_is_not_evidence_of_ofi_near_0():
    """0 false positives in 40 rows allow a false-positive rate up to 7.5 % (rule of three)."""
    v = Audit({"small": CM(20, 0, 0, 20), "large": CM(2500, 0, 0, 2500)}).verdicts(0.05).iloc[0]
    assert v["ofi"] == 0 and v["ofi_ci_high"] > 0.075 and v["ofi_ci_low"] < -0.075
    assert v["verdict"] == "inconclusive" and not v["ofi_within_tolerance"]


def _tango_limit_by_brute_force(fp: int, fn: int, n: int, z: float, upper: bool) -> float:
    """Tango's score limit with the continuity correction, from a numerically maximized constrained likelihood
    (no closed form) and a root search: an independent computation of the per-group limit."""
    cc = inference.SCORE_CC

    def statistic(d: float) -> float:
        lo_x, hi_x = max(0.0, -d), (1 - d) / 2

        def nll(x: float) -> float:
            return -(special.xlogy(fp, x + d) + special.xlogy(fn, x) + special.xlogy(n - fp - fn, 1 - 2 * x - d))

        x = optimize.minimize_scalar(nll, bounds=(lo_x + 1e-15, hi_x - 1e-15), method="bounded",
                                     options={"xatol": 1e-13}).x if hi_x > lo_x else lo_x
        var = n * (2 * x + d - d * d)
        num = fp - fn + (cc if upper else -cc) - n * d
        return num / np.sqrt(var) if var > 0 else np.sign(num) * np.inf

    est = (fp - fn) / n
    if upper:
        return optimize.brentq(lambda d: statistic(d) + z, est, 1 - 1e-12, xtol=1e-12)
    return optimize.brentq(lambda d: statistic(d) - z, -1 + 1e-12, est, xtol=1e-12)


@pytest.mark.parametrize("fp,fn,n", [(0, 0, 40), (3, 0, 40), (2, 5, 20), (30, 10, 300), (0, 4, 11)])
def test_per_group_score_limits_equal_an_independent_computation(fp, fn, n):
    z = 1.959963984540054
    low, high = inference._b_limits(np.array([fp], float), np.array([fn], float), np.array([n], float),
                                    np.array([z]))
    assert low[0] == pytest.approx(_tango_limit_by_brute_force(fp, fn, n, z, False), abs=2e-6)
    assert high[0] == pytest.approx(_tango_limit_by_brute_force(fp, fn, n, z, True), abs=2e-6)


def test_every_p_value_is_the_dual_of_its_interval_at_any_null_and_level():
    rng = np.random.default_rng(11)
    n_i, n_j = rng.integers(5, 400, 600), rng.integers(5, 400, 600)
    fp_i, fp_j = rng.binomial(n_i, 0.1), rng.binomial(n_j, 0.15)
    fn_i, fn_j = rng.binomial(n_i - fp_i, 0.1), rng.binomial(n_j - fp_j, 0.05)
    o = inference.ofi_pairs(fp_i, fn_i, n_i, fp_j, fn_j, n_j)
    d = inference.di_pairs(fp_i + 3, n_i, fp_j + 1, n_j, "auto")
    for gamma in (0.025, 0.004, 1e-5):
        low, high = o.bounds(gamma)
        d_low, d_high = d.bounds(gamma)
        for null in (-0.05, 0.0, 0.1):
            assert np.array_equal(o.p_value(null, "above") < gamma, low > null)
            assert np.array_equal(o.p_value(null, "below") < gamma, high < null)
        for null in (0.8, 1.0, 1.25):
            assert np.array_equal(d.p_value(null, "above") < gamma, d_low > null)
            assert np.array_equal(d.p_value(null, "below") < gamma, d_high < null)


# ------------------------------------------------------------------------- the decision rule

@pytest.mark.parametrize("adjust", ["holm", "bh", "none"])
def test_critical_level_reproduces_the_adjustment_exactly(adjust):
    rng = np.random.default_rng(5)
    for _ in range(200):
        p = rng.uniform(0, 0.1, int(rng.integers(1, 30))) ** rng.uniform(1, 3)
        a = verdicts.critical_level(p, ALPHA, adjust)
        assert np.array_equal(p < a, inference.adjust_p_values(p, adjust) < ALPHA)


def _two_group_calls(delta: float, n: int, draws: int, tolerance: float, seed: int) -> dict[str, float]:
    """Share of two-group audits (one pair: every family's level is α) ending in each OFI reading, with the
    true OFI = ``delta``: group i has π_FP = 0.1 + delta, π_FN = 0.1; group j 0.1 and 0.1."""
    rng = np.random.default_rng(seed)
    ci = rng.multinomial(n, [0.4 - delta, 0.1, 0.1 + delta, 0.4], size=draws)
    cj = rng.multinomial(n, [0.4, 0.1, 0.1, 0.4], size=draws)
    low, high = inference.ofi_pairs(ci[:, 2], ci[:, 1], n, cj[:, 2], cj[:, 1], n).bounds(ALPHA / 2)
    beyond = (low > tolerance) | (high < -tolerance)
    return {"bias": float(beyond.mean()), "within": float(((low > -tolerance) & (high < tolerance)).mean()),
            "draws": (ci[:8], cj[:8], beyond[:8])}


@pytest.mark.parametrize("n", [1000, 4000, 8000])
def test_a_difference_inside_the_tolerance_is_never_headlined_as_bias(n):
    calls = _two_group_calls(0.03, n, 4000, 0.05, seed=n)
    assert calls["bias"] <= ALPHA / 2 + 0.01          # one-sided: Δ = 0.03 < T = 0.05
    # the same decision as the audit's own verdicts on a few of those draws
    for ci, cj, beyond in zip(*calls["draws"]):
        v = Audit({"i": CM(*ci), "j": CM(*cj)}).verdicts(0.05).iloc[0]
        assert (v["verdict"] == "algorithmic bias") == beyond


def test_three_times_the_tolerance_at_2000_rows_is_called_in_80_percent():
    assert _two_group_calls(0.15, 2000, 4000, 0.05, seed=2)["bias"] >= 0.8


def test_no_false_ofi_near_0_claim_across_pairs_at_the_boundary():
    """Six groups of 3,000: three with B = 0, three with B = T, so nine pairs sit exactly at |Δ| = T. Under
    Holm, the chance that any of them is declared within ±T stays at most α."""
    rng = np.random.default_rng(24)
    t, n, audits = 0.05, 3000, 600
    rates = [[0.4, 0.1, 0.1, 0.4]] * 3 + [[0.4 - t, 0.1, 0.1 + t, 0.4]] * 3
    boundary = np.array([(a < 3) != (b < 3) for a, b in zip(*np.triu_indices(6, 1))])
    false_claims = 0
    for _ in range(audits):
        cells = np.array([rng.multinomial(n, r) for r in rates], dtype=float)
        v = verdicts.pair_verdicts([f"g{g}" for g in range(6)], cells, t, ALPHA, "holm")
        i = v["group_i"].str[1].astype(int).to_numpy()
        j = v["group_j"].str[1].astype(int).to_numpy()
        at_boundary = (i < 3) != (j < 3)
        assert at_boundary.sum() == boundary.sum() == 9
        false_claims += bool(v.loc[at_boundary, "ofi_within_tolerance"].any())
    assert false_claims / audits <= ALPHA + 0.02


# ------------------------------------------------------------------------- what the user reads

@pytest.mark.parametrize("adjust", ["holm", "bh", "none"])
def test_every_impact_ratio_interval_agrees_with_the_four_fifths_verdict_beside_it(adjust):
    """Decisions alone: the adjusted DI interval printed beside each four-fifths verdict is the one that decided it."""
    v = datasets.load_demo("hr_screening").verdicts(alpha=ALPHA, adjust=adjust)
    lo, hi = v["di_ci_low"], v["di_ci_high"]
    defined = v["di_p"].notna()
    assert (((lo > 1) | (hi < 1))[defined]).equals((v["di_p_adjusted"] < ALPHA)[defined])
    verdict = v["verdict"]
    assert ((verdict == "adverse impact") == ((hi < 0.8) | (lo > 1.25))).all()
    assert ((lo[verdict == "no adverse impact detected"] > 0.8) & (hi[verdict == "no adverse impact detected"] < 1.25)).all()
    unclear = verdict == "materiality unclear"
    assert (((lo > 1) | (hi < 1))[unclear]).all() and not ((hi < 0.8) | (lo > 1.25))[unclear].any()
    assert ((lo <= v["di"]) & (v["di"] <= hi)).all()


@pytest.mark.parametrize("key", [k for k in datasets.DEMOS if not k.startswith("hr_")])   # decisions alone: above
@pytest.mark.parametrize("adjust", ["holm", "bh", "none"])
def test_every_interval_on_screen_agrees_with_the_verdict_beside_it(key, adjust):
    v = datasets.load_demo(key).verdicts(0.05, alpha=ALPHA, adjust=adjust)
    t = v.settings.tolerance
    lo, hi = v["ofi_ci_low"], v["ofi_ci_high"]
    assert ((lo > 0) | (hi < 0)).equals(v["ofi_p_adjusted"] < ALPHA)      # never "excludes 0" beside "not significant"
    defined = v["di_p"].notna()
    di_excludes = (v["di_ci_low"] > 1) | (v["di_ci_high"] < 1)
    assert di_excludes[defined].equals((v["di_p_adjusted"] < ALPHA)[defined])
    verdict = v["verdict"]
    assert ((verdict == "algorithmic bias") == ((lo > t) | (hi < -t))).all()
    assert ((lo[verdict.isin(["systemic disparity", "no bias detected"])] > -t)).all()
    assert ((hi[verdict.isin(["systemic disparity", "no bias detected"])] < t)).all()
    unclear = verdict == "materiality unclear"
    assert (((lo > 0) | (hi < 0))[unclear]).all() and not ((lo > t) | (hi < -t))[unclear].any()
    assert (v["ofi_ci_low_unadjusted"] >= lo - 1e-12).all() and (v["ofi_ci_high_unadjusted"] <= hi + 1e-12).all()
    shown = v["di_ci_low"].notna() & v["di"].notna()
    assert (v.loc[shown, "di_ci_low"] <= v.loc[shown, "di"]).all() and (v.loc[shown, "di"] <= v.loc[shown, "di_ci_high"]).all()


def test_rows_needed_are_finite_bounded_or_said_to_be_out_of_reach():
    rng = np.random.default_rng(4)
    cms = {f"g{g}": CM(*(rng.integers(0, 80, 4) + 1)) for g in range(12)}
    cms["at T"], cms["base"] = CM(400, 100, 150, 350), CM(400, 100, 100, 400)   # OFI exactly 0.05 = T
    v = Audit(cms).verdicts(0.05)
    needed = v[["rows_needed_i", "rows_needed_j"]].to_numpy()
    ok = ~np.isnan(needed)
    assert (needed[ok] >= 0).all() and (needed[ok] <= verdicts.MAX_ROWS_NEEDED).all()
    open_ = v["verdict"].isin(["inconclusive", "materiality unclear"])
    assert (v.loc[~open_, ["rows_needed_i", "rows_needed_j"]].isna()).all().all()
    missing = open_ & v["rows_needed_i"].isna()
    assert (v.loc[missing, "rows_needed_note"] == "not reachable at these rates").all()
    edge = v[((v.group_i == "at T") & (v.group_j == "base")) | ((v.group_i == "base") & (v.group_j == "at T"))].iloc[0]
    assert edge["verdict"] in ("inconclusive", "materiality unclear")
    assert np.isnan(edge["rows_needed_i"]) and "not reachable" in edge["explanation"]
