"""The MATCH test (docs/methods.md; Briscoe 2024, §4.5, Briscoe, Kepler et al., §5): is a group's score plausible under the reference?

With ``reference_is="population"`` (the seed's one-sample test) the reference cell probabilities
p_c are the normalized reference CM (by default the rest of the data), taken as exact; the
group's n is kept and its score S is compared with S's distribution when n individuals are
drawn from the reference. With ``reference_is="sample"`` (the default) the reference is itself a
sample and a two-sample test carries its sampling error too (:func:`test`).
Reported: the percentile P(S <= s_obs), P(S >= s_obs) and the two-sided
p-value 2·min(both), capped at 1.

>>> from fairness_core import ConfusionMatrix, match
>>> r = match.test("PPR", ConfusionMatrix(40, 10, 40, 10), ConfusionMatrix(300, 100, 450, 150), method="normal",
...                reference_is="population")
>>> round(r.cdf, 2)
0.9
"""

from __future__ import annotations

from typing import Any
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special, stats

from . import inference, metrics as m
from .confusion import ConfusionMatrix
from ..common.vocabulary import check_alpha

METHODS = ("exact", "normal", "peizer_pratt", "beta")

# cell indices: TP 0, FN 1, FP 2, TN 3
BINOMIAL_CELLS: dict[str, tuple[int, int]] = {
    "ACC": (0, 3), "PREV": (0, 1), "PPR": (0, 2), "INACC": (2, 1), "NPREV": (2, 3), "PNR": (1, 3),
}
# JRM = cells[a] / (cells[a] + cells[b])
JRM_CELLS: dict[str, tuple[int, int]] = {
    "TPR": (0, 1), "FNR": (1, 0), "FPR": (2, 3), "TNR": (3, 2),
    "PPV": (0, 2), "FDR": (2, 0), "NPV": (3, 1), "FOR": (1, 3),
}
SUPPORTED: tuple[str, ...] = tuple(BINOMIAL_CELLS) + ("B",) + tuple(JRM_CELLS)
_EPS = 1e-9  # guards floor(s·k) against round-off in s = a/(a+b)


@dataclass(frozen=True)
class MatchResult:
    """Outcome of one MATCH test. NaN fields come with ``note`` saying why."""

    metric: str
    method: str
    observed: float
    cdf: float
    sf: float
    p_value: float
    n: int
    note: str = ""


def _reference_probs(reference: ConfusionMatrix) -> np.ndarray:
    if reference.n == 0:
        raise ValueError("the reference confusion matrix is empty")
    return reference.as_array() / reference.n


def _result(metric: str, method: str, observed: float, cdf: float, sf: float, n: int, note: str = "") -> MatchResult:
    cdf, sf = float(np.clip(cdf, 0, 1)), float(np.clip(sf, 0, 1))
    p = min(1.0, 2 * min(cdf, sf)) if np.isfinite(cdf) and np.isfinite(sf) else float("nan")
    return MatchResult(metric, method, observed, cdf, sf, p, n, note)


def peizer_pratt_z(x: np.ndarray | float, n: int, p: float) -> np.ndarray:
    """Peizer–Pratt z for P(K <= x), K ~ Binomial(n, p) (Briscoe 2024, eqs. 4.46–4.47), for 0 <= x <= n − 1."""
    x = np.asarray(x, dtype=float)
    q = 1 - p
    d = x + 2 / 3 - (n + 1 / 3) * p + 0.02 * (q / (x + 1) - p / (n - x) + (q - 0.5) / (n + 1))
    a, b = x + 0.5, n - x - 0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        g = 2 * (a * np.log(a / (n * p)) + b * np.log(b / (n * q)))
        factor = np.sqrt(np.maximum(g, 0)) * np.sqrt(n * p * q) / np.abs(a - n * p)
    factor = np.where(np.isfinite(factor), factor, 1.0)  # limit 1 as x + 1/2 -> np
    return d / np.sqrt((n + 1 / 6) * p * q) * factor


def _binomial(metric: str, k: int, n: int, p: float, method: str) -> tuple[float, float, str]:
    """P(K <= k) and P(K >= k) for K ~ Binomial(n, p)."""
    if method == "exact" or p in (0.0, 1.0):
        note = "" if method == "exact" else "reference probability is 0 or 1, so the distribution is a point; exact used"
        return float(stats.binom.cdf(k, n, p)), float(stats.binom.sf(k - 1, n, p)), note
    if method == "normal":
        sd = np.sqrt(n * p * (1 - p))
        return (float(stats.norm.cdf((k + 0.5 - n * p) / sd)),
                float(stats.norm.sf((k - 0.5 - n * p) / sd)), "")
    if method == "peizer_pratt":
        cdf = 1.0 if k >= n else float(stats.norm.cdf(peizer_pratt_z(k, n, p)))
        sf = 1.0 if k <= 0 else float(stats.norm.sf(peizer_pratt_z(k - 1, n, p)))
        return cdf, sf, ""
    raise ValueError(f"method {method!r} is not offered for the binomial metric {metric}; "
                     "use exact, normal or peizer_pratt")


def _support(n: int, p: float, start: int) -> tuple[np.ndarray, np.ndarray]:
    """Values k >= start of Binomial(n, p) whose pmf is not negligible.

    The window is np ± (40 sd + 800): by Chernoff's bound P(|K − np| >= t) <= 2·exp(−t²/(2(np + t/3))),
    which for this t is below e^−700 whether p is moderate (the 40 sd term) or tiny (the
    800), so even p-values of 1e-300 keep their leading digits. O(sqrt(n)) terms instead of n.
    """
    sd = np.sqrt(n * p * (1 - p))
    lo = max(start, int(np.floor(n * p - 40 * sd - 800)))
    hi = min(n, int(np.ceil(n * p + 40 * sd + 800)))
    k = np.arange(lo, hi + 1)
    w = np.exp(special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
               + special.xlogy(k, p) + special.xlog1py(n - k, -p))  # the binomial pmf, in logs
    keep = w > 0
    return k[keep], w[keep]


def _binom_cdf(k: np.ndarray, n: np.ndarray, p: float) -> np.ndarray:
    """P(X <= k) for X ~ Binomial(n, p), any integer k (scipy.special.bdtr without the frozen-
    distribution overhead of stats.binom, which dominated audits with many groups)."""
    k, n = np.broadcast_arrays(np.asarray(k, dtype=float), np.asarray(n, dtype=float))
    inside = (k >= 0) & (k < n)
    out = np.where(k >= n, 1.0, 0.0)
    out[inside] = special.bdtr(k[inside].astype(np.int64), n[inside].astype(np.int64), p)
    return out


#: Most terms an exact sum may take (the support window of FP + FN or of a JRM's denominator).
#: Beyond it (n around 10^7 and up) the exact O(sqrt n) sums would cost seconds and gigabytes,
#: and a normal approximation is used, with its Berry–Esseen error bound in the note.
MAX_EXACT_TERMS = 200_000


def _window(n: int, p: float) -> int:
    """Terms in :func:`_support`'s window for Binomial(n, p)."""
    sd = float(np.sqrt(n * p * (1 - p)))
    return int(min(n + 1, 2 * (40 * sd + 800) + 1))


def exact_feasible(metric: str, n: int, cm_reference: ConfusionMatrix) -> bool:
    """Whether the exact method runs as an exact sum for a group of ``n`` (else a bounded normal approximation)."""
    probs = _reference_probs(cm_reference)
    if metric in BINOMIAL_CELLS:
        return True
    if metric == "B":
        return _window(n, float(probs[1] + probs[2])) <= MAX_EXACT_TERMS
    a, b = JRM_CELLS[metric]
    return _window(n, float(probs[a] + probs[b])) <= MAX_EXACT_TERMS


def _normal_note(n: int, rho_over_sigma3: float) -> str:
    bound = 0.4748 * rho_over_sigma3 / np.sqrt(n)
    return (f"n = {n:,} is beyond the exact sum's limit ({MAX_EXACT_TERMS:,} terms): normal approximation, "
            f"whose CDF error is at most {bound:.1e} (Berry–Esseen)")


def _binom_sf(k: np.ndarray, n: np.ndarray, p: float) -> np.ndarray:
    """P(X > k) for X ~ Binomial(n, p), any integer k."""
    k, n = np.broadcast_arrays(np.asarray(k, dtype=float), np.asarray(n, dtype=float))
    inside = (k >= 0) & (k < n)
    out = np.where(k < 0, 1.0, 0.0)
    out[inside] = special.bdtrc(k[inside].astype(np.int64), n[inside].astype(np.int64), p)
    return out


def marginal_benefit_distribution(s: int | np.ndarray, n: int, p_plus: float, p_minus: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact P(S <= s) and P(S >= s) for S = FP − FN over n reference draws, in O(n).

    Conditions on M = FP + FN ~ Binomial(n, p+ + p−); FP | M ~ Binomial(M, p+/(p+ + p−));
    S = 2·FP − M. Replaces the thesis's O(n^2) double sum (Briscoe 2024, eq. 4.27).
    """
    s = np.atleast_1d(np.asarray(s))
    pm = p_plus + p_minus
    if pm == 0:
        return (s >= 0).astype(float), (s <= 0).astype(float)
    theta = p_plus / pm
    mm, w = _support(n, pm, start=0)
    lo = np.floor((s[:, None] + mm[None, :]) / 2)  # FP <= (s + M)/2
    hi = np.ceil((s[:, None] + mm[None, :]) / 2)  # FP >= (s + M)/2
    cdf = (w * _binom_cdf(lo, mm[None, :], theta)).sum(axis=1)
    sf = (w * _binom_sf(hi - 1, mm[None, :], theta)).sum(axis=1)
    return cdf, sf


def _marginal_benefit(cm: ConfusionMatrix, probs: np.ndarray, method: str) -> tuple[float, float, str]:
    s, n = cm.fp - cm.fn, cm.n
    p_plus, p_minus = probs[2], probs[1]
    if method == "exact" and _window(n, p_plus + p_minus) <= MAX_EXACT_TERMS:
        cdf, sf = marginal_benefit_distribution(s, n, p_plus, p_minus)
        return float(cdf[0]), float(sf[0]), ""
    if method in ("normal", "exact"):
        mean = n * (p_plus - p_minus)
        sd = np.sqrt(n * ((p_plus + p_minus) - (p_plus - p_minus) ** 2))
        if sd == 0:
            cdf, sf = marginal_benefit_distribution(s, n, p_plus, p_minus)
            return float(cdf[0]), float(sf[0]), "the reference has no FP or FN; exact used"
        note = ""
        if method == "exact":
            mu = p_plus - p_minus
            rho = p_plus * abs(1 - mu) ** 3 + p_minus * abs(-1 - mu) ** 3 + (1 - p_plus - p_minus) * abs(mu) ** 3
            note = _normal_note(n, rho / (sd / np.sqrt(n)) ** 3)
        return float(stats.norm.cdf((s + 0.5 - mean) / sd)), float(stats.norm.sf((s - 0.5 - mean) / sd)), note
    raise ValueError(f"method {method!r} is not offered for B: the thesis's Peizer–Pratt row treats FP − FN, "
                     "which can be negative, as a binomial count; use exact or normal")


def jrm_distribution(s: float | np.ndarray, n: int, p: float, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact P(S <= s | K >= 1) and P(S >= s | K >= 1) for a JRM S = c_a / K, in O(n) per s.

    K = c_a + c_b ~ Binomial(n, p), c_a | K ~ Binomial(K, θ) (Briscoe 2024, eq. 4.43, summed with
    the binomial CDF instead of the inner O(n) sum). ``s`` may be an array.
    """
    s = np.atleast_1d(np.asarray(s, dtype=float))
    k, w = _support(n, p, start=1)
    defined = -np.expm1(n * np.log1p(-p)) if p < 1 else 1.0  # 1 − (1 − p)^n
    sk = s[:, None] * k[None, :]
    cdf = (w * _binom_cdf(np.floor(sk + _EPS), k[None, :], theta)).sum(axis=1) / defined
    sf = (w * _binom_sf(np.ceil(sk - _EPS) - 1, k[None, :], theta)).sum(axis=1) / defined
    return cdf, sf


def _jrm(metric: str, cm: ConfusionMatrix, probs: np.ndarray, method: str, lam: float) -> tuple[float, float, str]:
    a, b = JRM_CELLS[metric]
    cells = cm.as_array()
    ka, kb = int(cells[a]), int(cells[b])
    s = ka / (ka + kb)
    if method == "exact":
        p = probs[a] + probs[b]
        theta = probs[a] / p
        if _window(cm.n, p) <= MAX_EXACT_TERMS:
            cdf, sf = jrm_distribution(s, cm.n, p, theta)
            return float(cdf[0]), float(sf[0]), ""
        if theta in (0.0, 1.0):
            return float(s >= theta), float(s <= theta), "the reference's rate is 0 or 1: a point mass"
        sd = np.sqrt(theta * (1 - theta) / (cm.n * p))  # S given K ≈ np: a proportion of K draws
        rho = (theta * (1 - theta) * (theta ** 2 + (1 - theta) ** 2)) / (theta * (1 - theta)) ** 1.5
        return (float(stats.norm.cdf((s - theta) / sd)), float(stats.norm.sf((s - theta) / sd)),
                _normal_note(int(cm.n * p), rho))
    # method == "beta" (test() admits only exact and beta for JRMs)
    cdf = float(stats.beta.cdf(s, ka + lam, kb + lam))
    return cdf, 1 - cdf, ("the thesis's beta shortcut I_s(k_a + λ, k_b + λ): a posterior of the group's own "
                          "rate, not the reference's sampling distribution; compare with exact")


#: What the reference is: another sample (its sampling error counts) or a known population.
REFERENCES = ("sample", "population")


def test(metric: str, cm_group: ConfusionMatrix, cm_reference: ConfusionMatrix, method: str = "exact",
         lam: float = 1.0, reference_is: str = "sample") -> MatchResult:
    """MATCH test of ``metric`` for ``cm_group`` against ``cm_reference``.

    Parameters
    ----------
    metric : str
        A binomial metric (ACC, PREV, PPR, INACC, NPREV, PNR), B, or a JRM
        (TPR, FNR, FPR, TNR, PPV, FDR, NPV, FOR).
    method : {"exact", "normal", "peizer_pratt", "beta"}
        For ``reference_is="population"``: "exact" for all; "normal" (continuity-corrected) for
        binomial metrics and B; "peizer_pratt" for binomial metrics; "beta" (the thesis's
        shortcut, eq. 4.44, with pseudo-count ``lam``) for JRMs. Ignored for ``"sample"``.
    reference_is : {"sample", "population"}
        What the reference is (as ``Audit.match_table``'s ``reference_is``). ``"sample"`` (default): the reference is itself a sample, so the test is a two-sample
        test that carries both groups' sampling error, and its p does not depend on which group
        is called the reference. B uses the OFI score test of :mod:`fairness_core.inference`, the
        rates (binomial metrics and JRMs) the test of equal proportions of DI's procedure (score
        for two groups of 30 rows or more, else the exact dual of the Clopper–Pearson MOVER-R
        interval) — so the p equals the verdict table's for the same pair (``ofi_p`` for B,
        ``di_p`` for PPR). ``"population"``: the reference is a known population (the seed's
        one-sample MATCH test): its cell rates are taken as exact.

    Returns
    -------
    MatchResult
        ``cdf`` = P(S <= s_obs), ``sf`` = P(S >= s_obs), ``p_value`` two-sided (for
        ``"sample"``: the one-sided p-values that the group's rate is below / above the
        reference's). NaN with a ``note`` where the group's score or the reference
        distribution is undefined.

    >>> from fairness_core import ConfusionMatrix as CM
    >>> a, b = CM(10, 2, 1, 0), CM(300, 100, 450, 150)
    >>> abs(test("PPR", a, b).p_value - test("PPR", b, a).p_value) < 1e-12
    True
    >>> test("PPR", a, b).p_value > test("PPR", a, b, reference_is="population").p_value
    True
    """
    if metric not in SUPPORTED:
        raise ValueError(f"MATCH is defined for {', '.join(SUPPORTED)}; got {metric!r}")
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}")
    if reference_is not in REFERENCES:
        raise ValueError(f"reference_is must be one of {', '.join(REFERENCES)}; got {reference_is!r}")
    if cm_group.n == 0:
        raise ValueError("the group is empty")
    if reference_is == "sample":
        if method != "exact":
            raise ValueError(f"method {method!r} belongs to the one-sample test: pass reference_is='population' "
                             "(the two-sample test has one procedure per metric)")
        return _two_sample(metric, cm_group, cm_reference)
    return _one_sample(metric, cm_group, cm_reference, method, lam)


def _one_sample(metric: str, cm_group: ConfusionMatrix, cm_reference: ConfusionMatrix, method: str,
                lam: float) -> MatchResult:
    """The seed's one-sample MATCH test: the reference's cell rates taken as exact (see :func:`test`)."""
    probs = _reference_probs(cm_reference)
    observed = m.compute(metric, cm_group)
    nan = float("nan")
    if metric in BINOMIAL_CELLS:
        a, b = BINOMIAL_CELLS[metric]
        cdf, sf, note = _binomial(metric, int(cm_group.as_array()[[a, b]].sum()), cm_group.n,
                                  float(probs[a] + probs[b]), method)
    elif metric == "B":
        cdf, sf, note = _marginal_benefit(cm_group, probs, method)
    else:
        if method not in ("exact", "beta"):
            raise ValueError(f"method {method!r} is not offered for the joint ratio metric {metric}; "
                             "use exact or beta")
        if np.isnan(observed):
            return MatchResult(metric, method, observed, nan, nan, nan, cm_group.n,
                               f"the group's {metric} is undefined: {m.undefined_reason(metric, cm_group)}")
        a, b = JRM_CELLS[metric]
        if probs[a] + probs[b] == 0:
            return MatchResult(metric, method, observed, nan, nan, nan, cm_group.n,
                               f"the reference never produces a defined {metric} (its denominator cells are 0)")
        cdf, sf, note = _jrm(metric, cm_group, probs, method, lam)
    return _result(metric, method, observed, cdf, sf, cm_group.n, note)


def _two_sample(metric: str, cm_group: ConfusionMatrix, cm_reference: ConfusionMatrix) -> MatchResult:
    """The two-sample MATCH test: both the group and the reference are samples (see :func:`test`)."""
    if cm_reference.n == 0:
        raise ValueError("the reference confusion matrix is empty")
    observed = m.compute(metric, cm_group)
    nan = float("nan")
    g, r = cm_group.as_array().astype(float), cm_reference.as_array().astype(float)
    if metric == "B":
        o = inference.ofi_pairs(g[2], g[1], g.sum(), r[2], r[1], r.sum())
        below, above = float(o.p_value(0.0, "below")), float(o.p_value(0.0, "above"))
        return MatchResult(metric, "two-sample score", observed, below, above, min(1.0, 2 * min(below, above)),
                           cm_group.n, "")
    if metric in BINOMIAL_CELLS:
        a, b = BINOMIAL_CELLS[metric]
        x1, d1, x2, d2 = g[a] + g[b], g.sum(), r[a] + r[b], r.sum()
    else:
        a, b = JRM_CELLS[metric]
        x1, d1, x2, d2 = g[a], g[a] + g[b], r[a], r[a] + r[b]
        if d1 == 0 or d2 == 0:
            who = "group" if d1 == 0 else "reference"
            why = (m.undefined_reason(metric, cm_group) if d1 == 0 else m.undefined_reason(metric, cm_reference))
            return MatchResult(metric, "two-sample", observed, nan, nan, nan, cm_group.n,
                               f"the {who}'s {metric} is undefined: {why}")
    if x1 == 0 and x2 == 0 or x1 == d1 and x2 == d2:
        return MatchResult(metric, "two-sample", observed, 0.5, 0.5, 1.0, cm_group.n,
                           f"both rates are {'0' if x1 == 0 else '1'}: no difference to test")
    # Equal rates are a ratio of 1; where both rates are 1 - (…) it is the complementary rate's ratio.
    d = inference.di_pairs(x1, d1, x2, d2, "auto")
    below, above = float(d.p_value(1.0, "below")), float(d.p_value(1.0, "above"))
    label = f"two-sample {d.method[0]}"
    return MatchResult(metric, label, observed, below, above, min(1.0, 2 * min(below, above)), cm_group.n, "")


match_test = test
test.__test__ = False  # type: ignore[attr-defined]  # a library function, not a pytest test


def methods_for(metric: str) -> tuple[str, ...]:
    """The methods :func:`test` offers for ``metric``, exact first."""
    if metric in BINOMIAL_CELLS:
        return ("exact", "normal", "peizer_pratt")
    if metric == "B":
        return ("exact", "normal")
    if metric in JRM_CELLS:
        return ("exact", "beta")
    raise ValueError(f"MATCH is defined for {', '.join(SUPPORTED)}; got {metric!r}")


def compare_methods(metric: str, cm_group: ConfusionMatrix, cm_reference: ConfusionMatrix) -> pd.DataFrame:
    """Every method offered for ``metric`` beside exact, with its error against exact.

    Columns: method, percentile (P(S <= s_obs)), p_value, percentile_error and
    p_value_error (signed, method minus exact), note.
    """
    results = [test(metric, cm_group, cm_reference, method=meth, reference_is="population")
               for meth in methods_for(metric)]
    exact = results[0]
    return pd.DataFrame([{
        "method": r.method, "percentile": r.cdf, "p_value": r.p_value,
        "percentile_error": r.cdf - exact.cdf, "p_value_error": r.p_value - exact.p_value, "note": r.note,
    } for r in results])


def holm(p_values: "np.typing.ArrayLike") -> np.ndarray:
    """Holm–Bonferroni adjusted p-values (step-down, monotone, capped at 1); NaN stays NaN
    and does not count as a test. The same procedure the pairwise verdicts use
    (:func:`fairness_core.inference.adjust_p_values`)."""
    return inference.adjust_p_values(p_values, "holm")


def reference_distribution(metric: str, n: int, cm_reference: ConfusionMatrix,
                           max_points: int = 400) -> tuple[np.ndarray, np.ndarray, bool]:
    """The exact distribution of ``metric`` for ``n`` draws from the reference, for plotting.

    Returns ``(x, mass, exact)``. When the score takes at most ``max_points``
    distinct values, ``x`` are those values and ``mass`` their probabilities
    (``exact`` True). Otherwise ``x`` are bin centres and ``mass`` the exact
    probability of each bin, from CDF differences at the bin edges. JRM masses
    are conditional on the score being defined.
    """
    if metric not in SUPPORTED:
        raise ValueError(f"MATCH is defined for {', '.join(SUPPORTED)}; got {metric!r}")
    if n < 1:
        raise ValueError("n must be >= 1")
    probs = _reference_probs(cm_reference)
    if metric in BINOMIAL_CELLS:
        a, b = BINOMIAL_CELLS[metric]
        p = float(probs[a] + probs[b])
        if n + 1 <= max_points:
            k = np.arange(n + 1)
            return k / n, stats.binom.pmf(k, n, p), True
        edges = np.linspace(-0.5, n + 0.5, max_points + 1)
        cdf = stats.binom.cdf(np.floor(edges), n, p)
        return (edges[:-1] + edges[1:]) / 2 / n, np.diff(cdf), False
    if metric == "B":
        if 2 * n + 1 <= max_points:
            s = np.arange(-n, n + 1)
            cdf, _ = marginal_benefit_distribution(s, n, probs[2], probs[1])
            return s / n, np.diff(np.concatenate([[0.0], cdf])), True
        edges = np.linspace(-n - 0.5, n + 0.5, max_points + 1)
        if _window(n, float(probs[1] + probs[2])) * len(edges) > 50 * MAX_EXACT_TERMS:
            mu, var = probs[2] - probs[1], probs[2] + probs[1] - (probs[2] - probs[1]) ** 2
            cdf = stats.norm.cdf((np.floor(edges) + 0.5 - n * mu) / np.sqrt(max(n * var, 1e-300)))
        else:
            cdf, _ = marginal_benefit_distribution(np.floor(edges), n, probs[2], probs[1])
        return (edges[:-1] + edges[1:]) / 2 / n, np.diff(cdf), False
    a, b = JRM_CELLS[metric]
    p = float(probs[a] + probs[b])
    if p == 0:
        return np.array([]), np.array([]), True
    theta = float(probs[a] / p)
    if n * (n + 3) // 2 <= 4 * max_points:  # few enough fractions to list them
        k = np.arange(1, n + 1)
        kk, aa = np.meshgrid(k, np.arange(n + 1), indexing="ij")
        ok = aa <= kk
        values = (aa / kk)[ok]
        pk = stats.binom.pmf(kk, n, p) * stats.binom.pmf(aa, kk, theta)
        x, inv = np.unique(values, return_inverse=True)
        mass = np.bincount(inv, weights=pk[ok]) / (-np.expm1(n * np.log1p(-p)) if p < 1 else 1.0)
        return x, mass, True
    edges = np.linspace(0.0, 1.0, max_points + 1)
    if _window(n, p) * len(edges) > 50 * MAX_EXACT_TERMS and 0 < theta < 1:
        cdf = stats.norm.cdf((edges[1:] - theta) / np.sqrt(theta * (1 - theta) / (n * p)))
    else:
        cdf, _ = jrm_distribution(edges[1:], n, p, theta)
    return (edges[:-1] + edges[1:]) / 2, np.diff(np.concatenate([[0.0], cdf])), False


def audit_table(audit: Any, names: list[str], reference: Any, method: str, alpha: float, adjust: str,
                reference_is: str) -> pd.DataFrame:
    """The MATCH test of every group of ``audit`` against its reference (``audit.reference_for``), for every metric in
    ``names``, adjusted across the whole table: :meth:`fairness_core.audit.Audit.match_table` documents it."""
    check_alpha(alpha)
    rows = []
    for g, cm in audit.cms.items():
        if g in getattr(audit, "unknown", ()):
            continue   # an unknown category is counted, never tested against the others
        if isinstance(reference, str) and g == reference:
            continue
        ref = audit.reference_for(g, reference)
        for name in names:
            r = test(name, cm, ref, method=method, reference_is=reference_is)
            rows.append({"group": g, "n": cm.n, "metric": name, "observed": r.observed,
                         "reference score": m.compute(name, ref), "percentile": r.cdf,
                         "p-value": r.p_value, "note": r.note})
    df = pd.DataFrame(rows)
    adjusted = adjust != "none"
    df["adjusted p-value"] = inference.adjust_p_values(df["p-value"].to_numpy(), adjust) if adjusted else np.nan
    decisive = df["adjusted p-value"] if adjusted else df["p-value"]
    df["verdict"] = np.where(decisive.isna(), "undefined",
                             np.where(decisive < alpha, "differs from the reference",
                                      "indistinguishable from the reference"))
    out = df[["group", "n", "metric", "observed", "reference score", "percentile", "p-value",
              "adjusted p-value", "verdict", "note"]]
    out.attrs.update(alpha=alpha, adjust=adjust)
    return out


