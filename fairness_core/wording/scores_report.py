"""A score's audit in words and in the report: which fairness the score has, and why it cannot have both.

:func:`score_analysis` runs :mod:`fairness_core.scores` once for a score; :func:`score_reading` words it —
calibrated within groups (Northpointe's claim about COMPAS)? equal error rates at the chosen threshold
(ProPublica's)? — with numbers, "inconclusive" where the intervals are too wide, and the theorem
(Kleinberg, Mullainathan & Raghavan; Chouldechova): with different base rates a score calibrated within
groups cannot also equalize false-positive and false-negative rates, unless it predicts perfectly.
:func:`fairness_core.presentation.scores_section.report_section` puts it in the report (HTML and JSON).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import stats

from ..statistics import scores
from ..statistics.inference.multiplicity import adjust_p_values

__all__ = ["ScoreAnalysis", "matching_threshold", "score_analysis", "score_reading"]

#: Widest mean interval (half-width, n-weighted over the bins) at which agreement of groups is read as calibration.
CALIBRATION_PRECISION = 0.10
#: Widest error-rate interval (half-width) at which equal rates are read as equal rather than inconclusive.
RATE_PRECISION = 0.10


def matching_threshold(s: npt.ArrayLike, decisions: npt.ArrayLike) -> tuple[float, bool]:
    """The score threshold t (one of the scores) whose decisions ``s >= t`` come closest to ``decisions`` in
    selection rate, and whether they equal them row for row (the decisions were this score, thresholded).

    >>> matching_threshold([1, 4, 5, 9, 7], [False, False, True, True, True])
    (5.0, True)
    """
    values = np.asarray(s, dtype=float)
    chosen = np.asarray(decisions, dtype=bool)
    distinct = np.unique(values)
    rates = 1 - np.searchsorted(np.sort(values), distinct, side="left") / values.size
    t = float(distinct[int(np.argmin(np.abs(rates - chosen.mean())))])
    return t, bool(np.array_equal(values >= t, chosen))


@dataclass(frozen=True)
class ScoreAnalysis:
    """Everything the Scores view and the report section show for one score (:func:`score_analysis`).

    ``at_threshold``: per group ``group``, ``n``, ``positives``, ``negatives``, ``base_rate`` (share of positive
    labels), ``selection_rate``, ``fp``, ``fn``, ``fpr``, ``fpr_ci_low``, ``fpr_ci_high``, ``fnr``, ``fnr_ci_low``, ``fnr_ci_high`` (Clopper–Pearson),
    at ``threshold``. ``words``: how the reading names the label and the decision.
    """

    score_name: str
    threshold: float
    calibration: pd.DataFrame
    auc: scores.AUCResult
    sweep: scores.Sweep
    at_threshold: pd.DataFrame
    reading: str
    alpha: float
    words: dict[str, str] = field(default_factory=dict)

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table, by the name its download and the report give it."""
        return {"calibration by group": self.calibration, "AUC by group": self.auc.by_group,
                "AUC differences between groups": self.auc.pairs, "error rates at the threshold": self.at_threshold,
                "threshold sweep by group": self.sweep.by_group, "threshold sweep": self.sweep.summary}


def score_analysis(y_true: npt.ArrayLike, s: npt.ArrayLike, groups: npt.ArrayLike, threshold: float,
                   score_name: str = "score", bins: int = 10, strategy: str = "auto", alpha: float = 0.05,
                   adjust: str = "holm", label: str = "the positive label",
                   selected: str = "selected", selected_is_favourable: bool = True) -> ScoreAnalysis:
    """Calibration, AUC and the sweep of one score, the error rates at ``threshold`` and :func:`score_reading`.

    ``label`` names the positive label in the reading ("reoffended"), ``selected`` a row with ``s >= threshold``
    ("rated high risk"), ``selected_is_favourable`` False when that is a harm (the sweep's impact ratio then reads
    the favourable decision, not being selected). Bad input raises as :mod:`fairness_core.scores` does, naming
    ``score_name``.

    >>> rng = np.random.default_rng(0)
    >>> g = rng.choice(["a", "b"], 2000)
    >>> p = rng.beta(np.where(g == "a", 2, 4), 4)             # calibrated probabilities, base rates differ
    >>> a = score_analysis(rng.random(2000) < p, p, g, 0.5, "risk")
    >>> a.at_threshold[["group", "base_rate"]].round(2).values.tolist()
    [['a', 0.31], ['b', 0.53]]
    >>> "cannot also" in a.reading
    True
    """
    if not math.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")
    cal = scores.calibration(y_true, s, groups, bins=bins, strategy=strategy, alpha=alpha, score_name=score_name)
    area = scores.auc(y_true, s, groups, alpha=alpha, adjust=adjust, score_name=score_name)
    sweep = scores.threshold_sweep(y_true, s, groups, score_name=score_name,
                                   selected_is_favourable=selected_is_favourable)
    at = scores.threshold_sweep(y_true, s, groups, [threshold], score_name=score_name).by_group
    negatives, positives = at["fp"] + at["tn"], at["tp"] + at["fn"]
    fpr_low, fpr_high = scores.clopper_pearson(at["fp"], negatives, alpha)
    fnr_low, fnr_high = scores.clopper_pearson(at["fn"], positives, alpha)
    table = pd.DataFrame({"group": at["group"], "n": at["n"], "positives": positives, "negatives": negatives,
                          "base_rate": positives / at["n"], "selection_rate": at["selection_rate"], "fp": at["fp"],
                          "fn": at["fn"], "fpr": at["fpr"], "fpr_ci_low": fpr_low,
                          "fpr_ci_high": fpr_high, "fnr": at["fnr"], "fnr_ci_low": fnr_low, "fnr_ci_high": fnr_high})
    words = {"label": label, "selected": selected, "score": score_name}
    reading = score_reading(cal, area.by_group, table, alpha=alpha, words=words)
    return ScoreAnalysis(score_name, float(threshold), cal, area, sweep, table, reading, alpha, words)


def _pct(x: float) -> str:
    return "undefined" if not np.isfinite(x) else f"{100 * x:.1f} %"


def _calibration_sentence(cal: pd.DataFrame, alpha: float) -> str:
    """Calibrated within groups? Each group's rate in a bin against the other groups' pooled rate in that bin:
    Fisher's exact tests (both rates are estimates), Holm-adjusted over every bin and group; agreement counts only when the intervals are
    narrow enough to see a gap (:data:`CALIBRATION_PRECISION`)."""
    if not cal.attrs.get("common_bins", True):
        return ("Calibration within groups is not compared: quantile bins differ from group to group; choose "
                "uniform bins or one bin per score value.")
    bins_total = cal.groupby("bin")[["n", "positives"]].transform("sum")
    other_n, other_pos = bins_total["n"] - cal["n"], bins_total["positives"] - cal["positives"]
    shared = (other_n > 0).to_numpy()
    if not shared.any():
        return "Calibration within groups cannot be compared: no score bin holds rows of two groups."
    part = cal[shared]
    rest_n, rest_pos = other_n[shared].to_numpy(), other_pos[shared].to_numpy()
    rest = rest_pos / rest_n
    p = np.array([stats.fisher_exact([[k, n - k], [rk, rn - rk]]).pvalue   # a loop over bins × groups, not rows
                  for k, n, rk, rn in zip(part["positives"], part["n"], rest_pos, rest_n)])
    adjusted = adjust_p_values(p, "holm")
    half = float(np.average((part["ci_high"] - part["ci_low"]) / 2, weights=part["n"]))
    if (adjusted < alpha).any():
        worst = int(np.argmin(adjusted))
        row = part.iloc[worst]
        where = (f"score {row['bin_low']:g}" if row["bin_low"] == row["bin_high"]
                 else f"scores {row['bin_low']:.3g}–{row['bin_high']:.3g}")
        return (f"**Not calibrated within groups** in {int((adjusted < alpha).sum())} of {len(part)} group-and-bin "
                f"cells: there a group's rate differs from the other groups' rate in the same bin (Fisher's exact tests, Holm-adjusted, "
                f"α = {alpha:g}); the clearest, at {where}, {row['group']} has {_pct(row['observed_rate'])} "
                f"[{_pct(row['ci_low'])}, {_pct(row['ci_high'])}] against {_pct(rest[worst])} for the others "
                f"(adjusted p = {adjusted[worst]:.2g}).")
    if half > CALIBRATION_PRECISION:
        return (f"**Calibration within groups: inconclusive.** No bin shows a group's rate differing from the "
                f"others' (Holm-adjusted, α = {alpha:g}), but the intervals are too wide to say they agree (mean "
                f"half-width {_pct(half)}, over {CALIBRATION_PRECISION:.0%} allowed).")
    return (f"**Calibrated within groups**: in every score bin each group's observed rate agrees with the other "
            f"groups' in that bin ({len(part)} group-and-bin cells; none differs after Holm adjustment at "
            f"α = {alpha:g}; mean interval half-width {_pct(half)}) — the same score means the same rate.")


def _rate_sentence(at: pd.DataFrame, alpha: float, words: dict[str, str]) -> str:
    """Equal error rates at the threshold? Each group's FPR and FNR against the rest pooled: Fisher's exact
    tests, Holm-adjusted over both rates and every group."""
    parts, p_values, labels = [], [], []
    for rate, err, base in (("fpr", "fp", "negatives"), ("fnr", "fn", "positives")):
        errors, totals = at[err].to_numpy(dtype=float), at[base].to_numpy(dtype=float)
        for e, t in zip(errors, totals):   # one group against the rest: a loop over groups
            rest_e, rest_t = errors.sum() - e, totals.sum() - t
            if t == 0 or rest_t == 0:
                p_values.append(np.nan)
            else:
                p_values.append(stats.fisher_exact([[e, t - e], [rest_e, rest_t - rest_e]]).pvalue)
            labels.append(rate)
        shown = ", ".join(f"{g} {_pct(v)}" for g, v in zip(at["group"], at[rate]))
        parts.append(f"{'false-positive' if rate == 'fpr' else 'false-negative'} rate {shown}")
    adjusted = adjust_p_values(np.array(p_values), "holm")
    lab = np.array(labels)
    differs = {r: bool((adjusted[lab == r] < alpha).any()) for r in ("fpr", "fnr")}
    half = float(np.nanmax(np.r_[(at["fpr_ci_high"] - at["fpr_ci_low"]) / 2, (at["fnr_ci_high"] - at["fnr_ci_low"]) / 2]))
    numbers = "; ".join(parts)
    if differs["fpr"] or differs["fnr"]:
        which = " and ".join(n for r, n in (("fpr", "false-positive"), ("fnr", "false-negative")) if differs[r])
        return (f"**Unequal error rates** at the threshold ({words['selected']}): the {which} rates differ between "
                f"groups (each group against the rest, Fisher's exact test, Holm-adjusted, α = {alpha:g}): {numbers}.")
    if half > RATE_PRECISION:
        return (f"**Equal error rates: inconclusive** at the threshold ({words['selected']}): no group's rate differs "
                f"from the rest's, but the widest interval has half-width {_pct(half)}: {numbers}.")
    return f"**Equal error rates** at the threshold ({words['selected']}), within the noise: {numbers}."


def _theorem_sentence(at: pd.DataFrame, alpha: float, words: dict[str, str]) -> str:
    """The base rates, whether they differ (χ² test of homogeneity), and the impossibility theorem."""
    positives, n = at["positives"].to_numpy(dtype=float), at["n"].to_numpy(dtype=float)
    table = np.column_stack([positives, n - positives])
    keep = table.sum(axis=1) > 0
    p = (stats.chi2_contingency(table[keep]).pvalue
         if keep.sum() >= 2 and (table[keep].sum(axis=0) > 0).all() else np.nan)
    large = at[at["n"] >= 0.05 * n.sum()] if (at["n"] >= 0.05 * n.sum()).sum() >= 2 else at   # not a tiny group
    hi, lo = large.loc[large["base_rate"].idxmax()], large.loc[large["base_rate"].idxmin()]
    rates = ", ".join(f"{g} {_pct(r)}" for g, r in zip(at["group"], at["base_rate"]))
    if not np.isfinite(p) or p >= alpha:
        return (f"Base rates ({words['label']}): {rates}; they do not differ detectably (χ² p = {p:.2g}), so the "
                "impossibility theorem (Kleinberg, Mullainathan & Raghavan; Chouldechova) does not force a trade-off "
                "between calibration and equal error rates on these data.")
    return (f"Base rates ({words['label']}) differ: {rates} (χ² p = {p:.2g}). **With base rates "
            f"p = {_pct(hi['base_rate'])} ({hi['group']}) and {_pct(lo['base_rate'])} ({lo['group']}), a score "
            "calibrated within groups cannot also give the groups equal false-positive and equal false-negative "
            "rates, unless it predicts perfectly** (Kleinberg, Mullainathan & Raghavan, “Inherent Trade-Offs in the "
            "Fair Determination of Risk Scores”; Chouldechova, “Fair prediction with disparate impact”): one of the "
            "two fairness claims has to give.")


def score_reading(calibration_table: pd.DataFrame, auc_table: pd.DataFrame, at_threshold: pd.DataFrame,
                  alpha: float = 0.05, words: dict[str, str] | None = None) -> str:
    """One paragraph (Markdown bold, no other markup; names as given, so escape them where shown): calibrated
    within groups? equal error rates at the threshold? the AUC by group, and the theorem with these base rates.

    ``calibration_table`` is :func:`fairness_core.scores.calibration`'s, ``auc_table`` the ``by_group`` of
    :func:`fairness_core.scores.auc`, ``at_threshold`` :attr:`ScoreAnalysis.at_threshold` (or any table with
    ``group``, ``n``, ``positives``, ``base_rate``, ``fp``, ``fn``, ``negatives``, ``fpr``, ``fnr`` and their
    ``_ci_low``/``_ci_high``). The theorem's two base rates are the extremes among groups of at least 5 % of rows.
    """
    words = {"label": "the positive label", "selected": "selected", **(words or {})}
    defined = auc_table[np.isfinite(auc_table["auc"].to_numpy(dtype=float))]
    aucs = ", ".join(f"{g} {a:.2f} [{lo:.2f}, {hi:.2f}]" for g, a, lo, hi in
                     zip(defined["group"], defined["auc"], defined["ci_low"], defined["ci_high"]))
    undefined = auc_table[~auc_table["group"].isin(defined["group"])]
    missing = "".join(f" {g}: undefined ({why})." for g, why in zip(undefined["group"], undefined["undefined_because"]))
    return " ".join([_calibration_sentence(calibration_table, alpha), _rate_sentence(at_threshold, alpha, words),
                     f"AUC by group: {aucs or 'undefined in every group'}.{missing}",
                     _theorem_sentence(at_threshold, alpha, words)])
