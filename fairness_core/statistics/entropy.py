"""Generalized entropy index (GEI) of individual benefits, from confusion matrices alone.

Speicher et al. (2018) measure unfairness as inequality of *benefits* across individuals:
each individual gets a benefit from a benefit matrix over the four CM cells, and

    I(b; α) = (1/n) Σ_i f_α(b_i / μ),   f_0(x) = −ln x,  f_1(x) = x ln x,
    f_α(x) = (x^α − 1) / (α(α − 1)) otherwise                       (docs/methods.md, Utility as Fair Pricing, eq. 1)

Since every individual in a cell gets the same benefit, the sum runs over four cells
weighted by their counts; no row-level data is needed. Over a partition into groups,
I = I_within + I_between (Utility as Fair Pricing, eq. 2):

    I_within  = Σ_g (n_g/n) (μ_g/μ)^α I(b_g),   I_between = Σ_g (n_g/n) f_α(μ_g/μ).

With Speicher's benefits (TP 1, FN 0, FP 2, TN 1) a group's mean benefit is 1 + B, where
B = (FP − FN)/n is its marginal benefit, so OFI = μ_i − μ_j: OFI compares the very group
means the between-group index is built from.

>>> from fairness_core import ConfusionMatrix, entropy
>>> round(entropy.generalized_entropy_index(ConfusionMatrix(1, 2, 1, 1)), 4)   # b = 1,0,0,2,1
0.4375
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Union

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.special import xlogy

from .confusion import CELLS, ConfusionMatrix

Benefit = Mapping[str, float]
CMs = Union[ConfusionMatrix, Mapping[str, ConfusionMatrix]]

#: Speicher et al. (2018): b = ŷ − y + 1. The default of AIF360 and SageMaker Clarify (α = 2).
SPEICHER: dict[str, float] = {"TP": 1.0, "FN": 0.0, "FP": 2.0, "TN": 1.0}


@dataclass(frozen=True)
class Preset:
    """A named benefit matrix and α, with where it comes from."""

    key: str
    label: str
    benefit: dict[str, float]
    alpha: float
    provenance: str


#: Benefit matrices used in prior work (Utility as Fair Pricing, Table 1). Utility as Fair Pricing's own designs depend on the data's
#: base rate, so they are built by :func:`blackstone_benefit` instead.
PRESETS: dict[str, Preset] = {p.key: p for p in (
    Preset("speicher", "Speicher et al. 2018 (AIF360 / SageMaker Clarify default)", SPEICHER, 2.0,
           "b = ŷ − y + 1: FN 0, TP and TN 1, FP 2; α = 2 (Speicher et al., KDD 2018; Utility as Fair Pricing, Table 1)."),
    Preset("heidari", "Heidari et al. 2018", {"TP": 1.0, "FN": 0.0, "FP": 1.5, "TN": 1.0}, 0.6,
           "FN 0, FP 3/2 (they also used 2), TP and TN 1; α explored in {0.1, 0.2, 0.4, 0.6, 0.8, 1} "
           "(Heidari et al., NeurIPS 2018; Utility as Fair Pricing, Table 1)."),
    Preset("jin", "Jin et al. 2023", {"TP": 1.0, "FN": 0.5, "FP": 1.5, "TN": 1.0}, 0.0,
           "b± = 1 ± 1/2 (they also used 1 ± 5/8 and 1 ± 5/9); α in {0, 1, 2}. With every benefit "
           "> 0, α = 0 is allowed: the index is then the mean log-loss-like −ln(b/μ) (Utility as Fair Pricing, Table 1, §3.1)."),
)}


def f_alpha(x: npt.ArrayLike, alpha: float) -> np.ndarray:
    """The GEI kernel f_α (Utility as Fair Pricing, eq. 1), elementwise; f_1(0) = 0 (x ln x → 0), f_α(0) = inf for α <= 0."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if alpha == 0:
            return -np.log(x)
        if alpha == 1:
            return xlogy(x, x)
        return (np.power(x, alpha) - 1.0) / (alpha * (alpha - 1.0))


def check_benefit(benefit: Benefit) -> np.ndarray:
    """The benefit matrix as a float array in CELLS order; ValueError naming a bad cell."""
    if not isinstance(benefit, Mapping):
        raise ValueError(f"benefit must map the cells {', '.join(CELLS)} to numbers")
    unknown = set(benefit) - set(CELLS)
    if unknown:
        raise ValueError(f"unknown benefit cell(s) {', '.join(map(repr, sorted(unknown)))}; "
                         f"cells are {', '.join(CELLS)}")
    out = np.empty(4)
    for k, cell in enumerate(CELLS):
        if cell not in benefit:
            raise ValueError(f"benefit for {cell} is missing")
        v = benefit[cell]
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not np.isfinite(v):
            raise ValueError(f"benefit for {cell} must be a finite number, got {v!r}")
        if v < 0:
            raise ValueError(f"benefit for {cell} is {v}; benefits are on a ratio scale and must be >= 0")
        out[k] = float(v)
    return out


def _check_alpha(alpha: float) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating)) \
            or not np.isfinite(alpha):
        raise ValueError(f"alpha must be a finite number, got {alpha!r}")
    return float(alpha)


def _counts(cms: CMs) -> np.ndarray:
    if isinstance(cms, ConfusionMatrix):
        return cms.as_array().astype(float)
    if isinstance(cms, Mapping):
        if not cms:
            raise ValueError("no confusion matrices given")
        for name, cm in cms.items():
            if not isinstance(cm, ConfusionMatrix):
                raise ValueError(f"group {name!r}: expected a ConfusionMatrix, got {type(cm).__name__}")
        return np.sum([cm.as_array() for cm in cms.values()], axis=0).astype(float)
    raise ValueError(f"expected a ConfusionMatrix or a dict of them, got {type(cms).__name__}")


def _index_from_counts(counts: np.ndarray, b: np.ndarray, alpha: float, where: str = "") -> tuple[float, float]:
    """(I, μ) for one set of cell counts, after the checks that make I finite and defined."""
    n = counts.sum()
    if n <= 0:
        raise ValueError(f"{where}no individuals (n = 0)")
    mu = float(counts @ b / n)
    if mu <= 0:
        raise ValueError(f"{where}the mean benefit is 0 (every individual gets benefit 0), so b/μ is undefined")
    used = counts > 0
    if alpha <= 0 and np.any(used & (b == 0)):
        cells = [f"{c} ({int(k):,} individuals)" for c, k, z in zip(CELLS, counts, used & (b == 0)) if z]
        raise ValueError(f"alpha = {alpha:g} <= 0 needs every benefit > 0, but {', '.join(cells)} "
                         "get benefit 0, where f_α(0) is infinite; choose alpha > 0 or a benefit > 0")
    terms = f_alpha(b[used] / mu, alpha)
    return float(counts[used] @ terms / n), mu


def generalized_entropy_index(cms: CMs, benefit: Benefit = SPEICHER, alpha: float = 2.0) -> float:
    """The generalized entropy index of individual benefits (Utility as Fair Pricing, eq. 1).

    Parameters
    ----------
    cms : ConfusionMatrix or mapping of group name to ConfusionMatrix
        One CM, or several, pooled (the index of everyone together).
    benefit : mapping of cell ("TP", "FN", "FP", "TN") to a benefit >= 0
        Speicher et al.'s ŷ − y + 1 by default.
    alpha : float
        0 (mean log deviation), 1 (Theil), 2 (half the squared coefficient of variation), …

    Returns
    -------
    float
        >= 0; 0 when everyone gets the same benefit.

    Raises
    ------
    ValueError
        For a bad benefit or alpha, when the mean benefit is 0, or when alpha <= 0 meets an
        individual with benefit 0 (f_α(0) is infinite there).
    """
    alpha = _check_alpha(alpha)
    return _index_from_counts(_counts(cms), check_benefit(benefit), alpha)[0]


def index_from_benefits(benefits: npt.ArrayLike, alpha: float = 2.0) -> float:
    """The index of an explicit array of individual benefits (Utility as Fair Pricing, eq. 1, term by term)."""
    alpha = _check_alpha(alpha)
    b = np.asarray(benefits, dtype=float).ravel()
    if b.size == 0 or not np.all(np.isfinite(b)) or np.any(b < 0):
        raise ValueError("benefits must be a non-empty array of finite numbers >= 0")
    values, counts = np.unique(b, return_counts=True)
    return _index_from_counts(counts.astype(float), values, alpha)[0]


def mean_benefit(cm: ConfusionMatrix, benefit: Benefit = SPEICHER) -> float:
    """μ = Σ_cells count × benefit / n. With Speicher's benefits this is 1 + B."""
    counts = cm.as_array().astype(float)
    if counts.sum() == 0:
        return float("nan")
    return float(counts @ check_benefit(benefit) / counts.sum())


def group_table(cms_by_group: Mapping[str, ConfusionMatrix], benefit: Benefit = SPEICHER,
                alpha: float = 2.0) -> pd.DataFrame:
    """Per group: n, mean benefit μ_g, the group's own index I(b_g) and its two contributions.

    Columns ``within`` = (n_g/n)(μ_g/μ)^α I(b_g) and ``between`` = (n_g/n) f_α(μ_g/μ) sum
    to the decomposition's parts. I(b_g) is NaN (with ``note``) where the group's mean
    benefit is 0; its within-group contribution is then 0 for α > 0.
    """
    alpha = _check_alpha(alpha)
    b = check_benefit(benefit)
    total_counts = _counts(cms_by_group)
    index_total, mu = _index_from_counts(total_counts, b, alpha)  # raises for the whole data first
    n = total_counts.sum()
    rows = []
    for g, cm in cms_by_group.items():
        counts = cm.as_array().astype(float)
        ng = counts.sum()
        mu_g = float(counts @ b / ng) if ng else float("nan")
        note = ""
        if ng == 0:
            own, within, between, note = float("nan"), 0.0, 0.0, "empty group"
        elif mu_g == 0:
            # Everyone in g gets 0: no inequality inside g, and (μ_g/μ)^α = 0 for α > 0.
            own, within, note = float("nan"), 0.0, "every member gets benefit 0, so I(b_g) is 0/0"
            between = float(ng / n * f_alpha(0.0, alpha))
        else:
            own = _index_from_counts(counts, b, alpha, where=f"group {g!r}: ")[0]
            within = float(ng / n * (mu_g / mu) ** alpha * own)
            between = float(ng / n * f_alpha(mu_g / mu, alpha))
        rows.append({"group": g, "n": int(ng), "mean benefit": mu_g, "index within group": own,
                     "weight": float(ng / n * (mu_g / mu) ** alpha) if ng else 0.0,
                     "within contribution": within, "between contribution": between, "note": note})
    out = pd.DataFrame(rows).set_index("group")
    out.attrs.update(total=index_total, mean_benefit=mu, alpha=alpha)
    return out


def decompose(cms_by_group: Mapping[str, ConfusionMatrix], benefit: Benefit = SPEICHER,
              alpha: float = 2.0) -> dict[str, float]:
    """``{"total", "within", "between"}`` with total = within + between (Utility as Fair Pricing, eq. 2).

    ``total`` is the index of all groups pooled; ``between`` is the index the data would
    have if everyone got their group's mean benefit; ``within`` is the rest.
    """
    table = group_table(cms_by_group, benefit, alpha)
    return {"total": float(table.attrs["total"]), "within": float(table["within contribution"].sum()),
            "between": float(table["between contribution"].sum())}


# --- Utility as Fair Pricing, §3: the index over (μ, λ) and the Blackstone designs -------------------------------

@dataclass(frozen=True)
class UnitForm:
    """A benefit matrix of Utility as Fair Pricing's form b ∈ {b−, b+, 1} (after scaling): two "unit" cells."""

    unit_cells: tuple[str, str]
    minus_cell: str
    plus_cell: str
    b_minus: float
    b_plus: float
    scale: float  # the unit cells' common benefit (scale invariance lets us divide by it)


def unit_form(benefit: Benefit) -> UnitForm:
    """Read ``benefit`` as Utility as Fair Pricing's {b−, b+, 1} form: two cells share a value (the unit reward),
    the other two differ from it and from each other. ValueError otherwise."""
    b = check_benefit(benefit)
    for i in range(4):
        for j in range(i + 1, 4):
            if b[i] == b[j] and b[i] > 0:
                others = [k for k in range(4) if k not in (i, j)]
                lo, hi = sorted(others, key=lambda k: b[k])
                if b[lo] == b[hi] or b[i] in (b[lo], b[hi]):
                    continue
                return UnitForm((CELLS[i], CELLS[j]), CELLS[lo], CELLS[hi], b[lo] / b[i], b[hi] / b[i], b[i])
    raise ValueError("the (μ, λ) view needs two cells with the same benefit > 0 (the unit reward) and two "
                     f"other, different benefits; got {dict(zip(CELLS, b.tolist()))}")


def mu_lambda(cm: ConfusionMatrix, benefit: Benefit) -> tuple[float, float]:
    """(μ, λ) of one CM in units of the unit reward: λ = share of individuals in the unit cells."""
    form = unit_form(benefit)
    counts = dict(zip(CELLS, cm.as_array().astype(float)))
    n = sum(counts.values())
    lam = (counts[form.unit_cells[0]] + counts[form.unit_cells[1]]) / n
    mu = mean_benefit(cm, benefit) / form.scale
    return mu, lam


def index_mu_lambda(mu: npt.ArrayLike, lam: npt.ArrayLike, b_minus: float, b_plus: float,
                    alpha: float) -> np.ndarray:
    """Utility as Fair Pricing, Theorem 3.2, eq. 4: I = [(A_α + β_α)(1 − λ) + β_α(μ − 1) − f_α(μ)] / μ^α for b ∈ {b−, b+, 1}.

    NaN outside the domain λ + (1 − λ)b− <= μ <= λ + (1 − λ)b+ (Utility as Fair Pricing, eq. 6), and everywhere
    when f_α(b−) is infinite (α <= 0 with b− = 0).
    """
    alpha = _check_alpha(alpha)
    mu, lam = np.broadcast_arrays(np.asarray(mu, dtype=float), np.asarray(lam, dtype=float))
    if not 0 <= b_minus < b_plus:
        raise ValueError(f"need 0 <= b− < b+, got b− = {b_minus}, b+ = {b_plus}")
    fm, fp = f_alpha(b_minus, alpha), f_alpha(b_plus, alpha)
    beta = (fp - fm) / (b_plus - b_minus)
    a = fp - b_plus * beta
    with np.errstate(divide="ignore", invalid="ignore"):
        out = ((a + beta) * (1 - lam) + beta * (mu - 1) - f_alpha(mu, alpha)) / np.power(mu, alpha)
    lo = lam + (1 - lam) * b_minus
    hi = lam + (1 - lam) * b_plus
    tol = 1e-12
    inside = (lam >= 0) & (lam <= 1) & (mu >= lo - tol) & (mu <= hi + tol) & (mu > 0)
    out = np.where(inside & np.isfinite(out), out, np.nan)
    return out


def blackstone_benefit(b_plus: float, kappa: float, p: float, avoid: str = "FN") -> dict[str, float]:
    """Utility as Fair Pricing's designs: a Blackstone-style ratio κ fixes b− from b+ (Utility as Fair Pricing, eqs. 13, 17, 18).

    ``avoid="FP"`` is Utility as Fair Pricing's punitive example (ŷ = 1 harms, e.g. detain; TN = FN = 1,
    FP = b−, TP = b+, b− = 1 − (1 − b+)κ p/q, eq. 13). ``avoid="FN"`` is its assistive
    example (ŷ = 1 helps, e.g. hire; TP = FP = 1, FN = b−, TN = b+, b− = 1 − (1 − b+)κ q/p,
    eq. 17). p = P(Y = 1), q = 1 − p. In this workbench positive always means the beneficial
    outcome, so a punitive model whose labels were flipped (COMPAS here) is ``avoid="FN"`` too:
    wrongly jailing an innocent person is wrongly withholding "released".
    """
    for name, v in (("b+", b_plus), ("κ", kappa), ("p", p)):
        if not np.isfinite(v):
            raise ValueError(f"{name} must be finite, got {v!r}")
    if not 0 < b_plus < 1:
        raise ValueError(f"b+ must lie in (0, 1), got {b_plus}")
    if kappa <= 0:
        raise ValueError(f"κ must be > 0, got {kappa}")
    if not 0 < p < 1:
        raise ValueError(f"P(Y = 1) must lie in (0, 1), got {p}")
    if avoid not in ("FN", "FP"):
        raise ValueError(f"avoid must be 'FN' or 'FP', got {avoid!r}")
    q = 1 - p
    ktilde = kappa * (q / p if avoid == "FN" else p / q)
    b_minus = 1 - (1 - b_plus) * ktilde
    if not 0 < b_minus < b_plus:
        raise ValueError(f"with κ = {kappa:g} and P(Y = 1) = {p:.3f}, κ̃ = {ktilde:.3g} and b− = 1 − (1 − b+)κ̃ = "
                         f"{b_minus:.3g}, outside (0, b+); choose b+ > 1 − 1/κ̃ = {1 - 1 / ktilde:.4f}"
                         + (" and κ̃ > 1" if ktilde <= 1 else ""))
    if avoid == "FN":
        return {"TP": 1.0, "FN": float(b_minus), "FP": 1.0, "TN": float(b_plus)}
    return {"TP": float(b_plus), "FN": 1.0, "FP": float(b_minus), "TN": 1.0}


def decomposition_over_alpha(cms_by_group: Mapping[str, ConfusionMatrix], benefit: Benefit = SPEICHER,
                             alphas: npt.ArrayLike = (-1.0, 0.0, 0.5, 1.0, 2.0, 3.0)) -> pd.DataFrame:
    """``decompose`` for several α: columns alpha, total, within, between, between share, note.

    Where an α is not allowed (α <= 0 with someone at benefit 0) the values are NaN and
    ``note`` says why, so one bad α never hides the others.
    """
    rows = []
    for a in np.asarray(alphas, dtype=float).tolist():
        try:
            parts = decompose(cms_by_group, benefit, a)
            share = parts["between"] / parts["total"] if parts["total"] > 0 else float("nan")
            rows.append({"alpha": a, **parts, "between share": share, "note": ""})
        except ValueError as exc:
            rows.append({"alpha": a, "total": np.nan, "within": np.nan, "between": np.nan,
                         "between share": np.nan, "note": str(exc)})
    return pd.DataFrame(rows)


def landscape(benefit: Benefit, alpha: float, size: int = 121, mu_range: tuple[float, float] | None = None,
              lam_range: tuple[float, float] = (0.0, 1.0)) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The index over a (μ, λ) grid for a {b−, b+, 1}-form benefit (Utility as Fair Pricing, Fig. 1/4): (mu, lam, I[λ, μ]).

    μ is in units of the unit reward (the whole domain [min(b−, 1), max(b+, 1)] by default);
    I is NaN outside Utility as Fair Pricing, eq. 6's domain.
    """
    form = unit_form(benefit)
    lam = np.linspace(*lam_range, size)
    lo, hi = mu_range if mu_range is not None else (min(form.b_minus, 1.0), max(form.b_plus, 1.0))
    mu = np.linspace(lo, hi, size)
    grid = index_mu_lambda(mu[None, :], lam[:, None], form.b_minus, form.b_plus, alpha)
    return mu, lam, grid


def ofi_link(benefit: Benefit) -> tuple[float, float] | None:
    """(u, d) when TP = TN = u and FP = u + d, FN = u − d with d > 0; then a group's mean benefit is
    μ_g = u + d·B_g, so μ_i − μ_j = d·OFI (Speicher: u = d = 1). None for other benefit matrices."""
    b = dict(zip(CELLS, check_benefit(benefit).tolist()))
    u, d = b["TP"], b["FP"] - b["TP"]
    if b["TN"] == u and d > 0 and np.isclose(u - b["FN"], d, rtol=1e-12, atol=1e-12):
        return u, d
    return None
