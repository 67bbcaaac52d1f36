"""Generalized entropy index: brute force over individuals, hand-worked values, Utility as Fair Pricing's identities."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fairness_core import ConfusionMatrix as CM
from fairness_core import bias, entropy, metrics

ALPHAS = [-1.5, -0.5, 0.0, 0.3, 0.5, 1.0, 2.0, 3.0]
POSITIVE = {"TP": 1.0, "FN": 0.4, "FP": 1.7, "TN": 0.9}  # every benefit > 0: every alpha allowed


def brute_gei(b: list[float], alpha: float) -> float:
    """Term by term over individuals, exactly as Utility as Fair Pricing, eq. 1 reads (no shared code with the library)."""
    mu = sum(b) / len(b)
    total = 0.0
    for bi in b:
        x = bi / mu
        if alpha == 0:
            total += -math.log(x)
        elif alpha == 1:
            total += x * math.log(x) if x > 0 else 0.0
        else:
            total += (x ** alpha - 1) / (alpha * (alpha - 1))
    return total / len(b)


def individuals(cm: CM, benefit: dict[str, float]) -> list[float]:
    return ([benefit["TP"]] * cm.tp + [benefit["FN"]] * cm.fn + [benefit["FP"]] * cm.fp
            + [benefit["TN"]] * cm.tn)


def random_groups(rng: np.random.Generator, k: int) -> dict[str, CM]:
    return {f"g{i}": CM(*rng.integers(0, 15, size=4).tolist()) for i in range(k)
            } | {"big": CM(*rng.integers(5, 40, size=4).tolist())}


def test_hand_worked_speicher_values():
    # CM [TP, FN, FP, TN] = [1, 2, 1, 1]: benefits 1, 0, 0, 2, 1, mean 4/5.
    cm = CM(1, 2, 1, 1)
    # alpha = 2: (mean of (b/μ)^2 − 1)/2 = ((1.5625·2 + 6.25)/5 − 1)/2 = (1.875 − 1)/2.
    assert entropy.generalized_entropy_index(cm) == pytest.approx(0.4375, abs=1e-15)
    # Theil: (2·1.25 ln 1.25 + 2.5 ln 2.5)/5.
    theil = (2 * 1.25 * math.log(1.25) + 2.5 * math.log(2.5)) / 5
    assert entropy.generalized_entropy_index(cm, alpha=1) == pytest.approx(theil, rel=1e-14)
    # Everyone correctly classified: every benefit is 1, no inequality.
    assert entropy.generalized_entropy_index(CM(3, 0, 0, 5)) == 0.0
    # AIF360's formula, mean((b/μ)^α − 1)/(α(α − 1)), on an explicit array.
    b = np.array([1, 0, 0, 2, 1], dtype=float)
    assert entropy.index_from_benefits(b, 2) == pytest.approx(np.mean((b / b.mean()) ** 2 - 1) / 2)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_matches_brute_force_over_individuals(alpha):
    rng = np.random.default_rng(5)
    for _ in range(20):
        cm = CM(*rng.integers(0, 12, size=4).tolist())
        if cm.n == 0:
            continue
        benefit = POSITIVE if alpha <= 0 else entropy.SPEICHER
        b = individuals(cm, benefit)
        if sum(b) == 0:
            continue
        assert entropy.generalized_entropy_index(cm, benefit, alpha) == pytest.approx(
            brute_gei(b, alpha), rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_decomposition_identity_and_brute_force_parts(alpha):
    rng = np.random.default_rng(11)
    benefit = POSITIVE if alpha <= 0 else entropy.SPEICHER
    for _ in range(10):
        groups = random_groups(rng, 4)
        groups = {g: cm for g, cm in groups.items() if cm.n > 0 and sum(individuals(cm, benefit)) > 0}
        parts = entropy.decompose(groups, benefit, alpha)
        everyone = [b for cm in groups.values() for b in individuals(cm, benefit)]
        assert parts["total"] == pytest.approx(brute_gei(everyone, alpha), rel=1e-12, abs=1e-14)
        assert parts["within"] + parts["between"] == pytest.approx(parts["total"], rel=1e-10, abs=1e-13)
        # Between-group part: everyone replaced by their group's mean benefit (Utility as Fair Pricing, §2.1).
        smoothed = [sum(individuals(cm, benefit)) / cm.n for cm in groups.values() for _ in range(cm.n)]
        assert parts["between"] == pytest.approx(brute_gei(smoothed, alpha), rel=1e-10, abs=1e-13)
        assert parts["within"] >= -1e-15


def test_group_with_zero_mean_benefit():
    # Group "z" is all false negatives: every member gets 0 under Speicher's benefits.
    groups = {"z": CM(0, 4, 0, 0), "a": CM(3, 1, 2, 6)}
    table = entropy.group_table(groups, alpha=2)
    assert math.isnan(table.loc["z", "index within group"])
    assert "benefit 0" in table.loc["z", "note"]
    parts = entropy.decompose(groups, alpha=2)
    everyone = individuals(groups["z"], entropy.SPEICHER) + individuals(groups["a"], entropy.SPEICHER)
    assert parts["total"] == pytest.approx(brute_gei(everyone, 2))
    assert parts["within"] + parts["between"] == pytest.approx(parts["total"])


def test_speicher_group_mean_is_one_plus_marginal_benefit_so_ofi_is_a_difference_of_means():
    rng = np.random.default_rng(3)
    for _ in range(50):
        a, b = (CM(*rng.integers(0, 20, size=4).tolist()) for _ in range(2))
        if a.n == 0 or b.n == 0:
            continue
        assert entropy.mean_benefit(a) == pytest.approx(1 + metrics.compute("B", a))
        assert entropy.mean_benefit(a) - entropy.mean_benefit(b) == pytest.approx(bias.compare("OFI", a, b))


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0, 2.0, 3.0])
@pytest.mark.parametrize("benefit", [entropy.SPEICHER, POSITIVE | {"TN": 1.0},
                                     {"TP": 1.0, "FN": 0.3, "FP": 1.0, "TN": 0.8}])
def test_theorem_3_2_index_over_mu_and_lambda(alpha, benefit):
    """Utility as Fair Pricing, eq. 4 from (μ, λ) alone equals the index computed from the counts."""
    rng = np.random.default_rng(int(alpha * 10) + 1)
    form = entropy.unit_form(benefit)
    for _ in range(25):
        cm = CM(*rng.integers(1, 30, size=4).tolist())
        if alpha <= 0 and form.b_minus == 0:
            continue
        mu, lam = entropy.mu_lambda(cm, benefit)
        direct = entropy.generalized_entropy_index(cm, benefit, alpha)
        assert entropy.index_mu_lambda(mu, lam, form.b_minus, form.b_plus, alpha) == pytest.approx(
            direct, rel=1e-9, abs=1e-12)


def test_diagonal_units_make_lambda_the_accuracy():
    cm = CM(5, 2, 3, 10)
    mu, lam = entropy.mu_lambda(cm, entropy.SPEICHER)
    assert lam == pytest.approx(metrics.compute("ACC", cm))
    assert mu == pytest.approx(1 + metrics.compute("B", cm))
    assert math.isnan(float(entropy.index_mu_lambda(1.5, 0.9, 0.0, 2.0, 2.0)))  # outside eq. 6's triangle


def test_scale_invariance_and_unit_form_scaling():
    cm = CM(4, 3, 2, 7)
    doubled = {k: 2 * v for k, v in POSITIVE.items()}
    assert entropy.generalized_entropy_index(cm, doubled, 0.5) == pytest.approx(
        entropy.generalized_entropy_index(cm, POSITIVE, 0.5))
    form = entropy.unit_form({"TP": 2.0, "FN": 0.0, "FP": 4.0, "TN": 2.0})
    assert (form.b_minus, form.b_plus, form.scale) == (0.0, 2.0, 2.0)
    with pytest.raises(ValueError, match="two cells with the same benefit"):
        entropy.unit_form({"TP": 1.0, "FN": 0.0, "FP": 2.0, "TN": 3.0})


def test_clear_errors():
    cm = CM(1, 2, 1, 1)
    with pytest.raises(ValueError, match=r"alpha = 0 <= 0 needs every benefit > 0, but FN \(2 individuals\)"):
        entropy.generalized_entropy_index(cm, entropy.SPEICHER, 0)
    with pytest.raises(ValueError, match="alpha = -1"):
        entropy.generalized_entropy_index(cm, entropy.SPEICHER, -1)
    # A zero benefit nobody receives does not matter.
    assert entropy.generalized_entropy_index(CM(2, 0, 1, 3), entropy.SPEICHER, 0) >= 0
    with pytest.raises(ValueError, match="mean benefit is 0"):
        entropy.generalized_entropy_index(CM(0, 5, 0, 0))
    with pytest.raises(ValueError, match="benefit for FP is -1"):
        entropy.generalized_entropy_index(cm, {"TP": 1, "FN": 0, "FP": -1, "TN": 1})
    with pytest.raises(ValueError, match="benefit for TN is missing"):
        entropy.generalized_entropy_index(cm, {"TP": 1, "FN": 0, "FP": 2})
    with pytest.raises(ValueError, match="alpha must be a finite number"):
        entropy.generalized_entropy_index(cm, alpha=float("nan"))


def test_blackstone_designs():
    # Assistive, avoid FN (Utility as Fair Pricing, eq. 17): b− = 1 − (1 − b+) κ q/p.
    b = entropy.blackstone_benefit(0.95, 10, 0.8, avoid="FN")
    assert b == pytest.approx({"TP": 1, "FP": 1, "TN": 0.95, "FN": 1 - 0.05 * 10 * 0.2 / 0.8})
    # Punitive, avoid FP (Utility as Fair Pricing, eq. 13): b− = 1 − (1 − b+) κ p/q.
    b = entropy.blackstone_benefit(0.98, 10, 0.4, avoid="FP")
    assert b == pytest.approx({"TN": 1, "FN": 1, "TP": 0.98, "FP": 1 - 0.02 * 10 * 0.4 / 0.6})
    # The κ constraint of eq. 13 as Utility as Fair Pricing derives it: μ − (q + p b_TP) = (1 − b_TP) p (FNR − κ FPR).
    p, q, kappa, bt = 0.4, 0.6, 10.0, 0.98
    cm = CM(tp=30, fn=10, fp=2, tn=58)  # p = 0.4 exactly
    mu = entropy.mean_benefit(cm, b)
    fnr, fpr = 10 / 40, 2 / 60
    assert mu - (q + p * bt) == pytest.approx((1 - bt) * p * (fnr - kappa * fpr))
    with pytest.raises(ValueError, match=r"choose b\+ > 1 − 1/κ̃"):
        entropy.blackstone_benefit(0.5, 10, 0.5)


def test_presets_are_valid():
    for preset in entropy.PRESETS.values():
        assert entropy.generalized_entropy_index(CM(5, 2, 3, 10), preset.benefit, preset.alpha) > 0


def test_ofi_link_for_symmetric_benefits():
    a, b = CM(5, 2, 3, 10), CM(1, 4, 0, 7)
    for benefit in (entropy.SPEICHER, entropy.PRESETS["jin"].benefit):
        u, d = entropy.ofi_link(benefit)
        assert entropy.mean_benefit(a, benefit) - entropy.mean_benefit(b, benefit) == pytest.approx(
            d * bias.compare("OFI", a, b))
        assert entropy.mean_benefit(a, benefit) == pytest.approx(u + d * metrics.compute("B", a))
    assert entropy.ofi_link(entropy.PRESETS["heidari"].benefit) is None


def test_decomposition_over_alpha_marks_disallowed_alphas():
    groups = {"a": CM(3, 2, 1, 4), "b": CM(6, 1, 2, 5)}
    table = entropy.decomposition_over_alpha(groups, entropy.SPEICHER, [0.0, 2.0])
    assert math.isnan(table.loc[0, "total"]) and "needs every benefit > 0" in table.loc[0, "note"]
    assert table.loc[1, "total"] == pytest.approx(entropy.generalized_entropy_index(groups, alpha=2.0))
    mu, lam, grid = entropy.landscape(entropy.SPEICHER, 2.0, size=11)
    assert grid.shape == (11, 11) and np.isnan(grid).any() and np.nanmin(grid) >= -1e-12
