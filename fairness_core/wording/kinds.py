"""The three questions of the Bias Audit page, answered for amounts and for categories (issue 53), in plain words.

The binary audit's questions (:func:`fairness_core.reading.three_questions`) are: is the algorithm at fault (OFI),
the four-fifths rule (DI), equal opportunity (error rates). The same three, asked of

- **amounts** (:class:`fairness_core.continuous.ContinuousAudit`): the OFI of mean benefits in the outcome's units;
  the ratio of mean predictions against its band (the amount's disparity, which the outcomes may share); the gap in
  mean absolute error (is the model equally accurate for each group), with Bonferroni-simultaneous intervals;
- **categories** (:class:`fairness_core.multiclass.MulticlassAudit`): the ordinal OFI in tiers (with an order and
  outcomes); the impact ratios at every cut (or of every class); the ordinal FNR/FPR gaps (with an order and
  outcomes).

Every number is written with its unit: :func:`amount_text` places a unit's leading symbol before the number and its
words after it ("$ a year": "$200 a year").

>>> amount_text(-2747.3, "$"), amount_text(0.25, "tiers"), amount_text(float("nan"), "$")
('−$2,747', '0.25 tiers', 'undefined')
>>> amount_range(-3086.2, -2408.0, "$")
'−$3,086 to −$2,408'
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..common.text import counted
from ..common.vocabulary import check_alpha
from ..statistics import ordinal
from ..statistics import verdicts as verdicts_
from ..statistics.amounts import MeanPairs
from .levels import interval_label, level_text

__all__ = ["AMOUNT_QUESTIONS", "CLASS_QUESTIONS", "UNORDERED_QUESTIONS", "amount_questions", "amount_range",
           "amount_text", "benefit_sides", "class_questions", "mae_gaps", "number_text", "unit_parts"]

#: The questions' headings, by kind.
AMOUNT_QUESTIONS = ("Is the model at fault (OFI of mean benefits)?", "Are the amounts themselves apart (mean "
                    "prediction ratio)?", "Equally accurate (mean absolute error)?")
CLASS_QUESTIONS = ("Is the tool at fault (ordinal OFI)?", "The four-fifths rule at every cut",
                   "Equal opportunity (ordinal error rates)")
UNORDERED_QUESTIONS = ("Is the tool at fault (OFI)?", "The four-fifths rule for every class",
                       "Equal opportunity (error rates)")


def unit_parts(unit: str) -> tuple[str, str]:
    """A unit as what goes before and after a number: a leading symbol (no letter or digit) before, words after.

    >>> unit_parts("$ a year"), unit_parts("€"), unit_parts("kg"), unit_parts("")
    (('$', ' a year'), ('€', ''), ('', ' kg'), ('', ''))
    """
    unit = unit.strip()
    if not unit:
        return "", ""
    head, _, rest = unit.partition(" ")
    if not any(ch.isalnum() for ch in head):
        return head, (f" {rest.strip()}" if rest.strip() else "")
    return "", f" {unit}"


def _number(x: float, digits: int) -> str:
    """|x| to ``digits`` significant digits, never in exponent form (whole numbers keep every digit), with commas."""
    x = abs(float(x))
    if x == 0:
        return "0"
    decimals = max(digits - 1 - int(np.floor(np.log10(x))), 0)
    shown = f"{round(x, decimals):,.{decimals}f}"
    return shown.rstrip("0").rstrip(".") if decimals else shown


def number_text(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits, the one rule for every amount, ratio and B on the page and in
    the sentences (:func:`amount_text` adds the unit): a true minus, commas, no exponent, "undefined" for NaN.

    >>> number_text(165.843), number_text(-0.0523456), number_text(0.975), number_text(2747.3), number_text(float("nan"))
    ('166', '−0.0523', '0.975', '2,747', 'undefined')
    """
    if value is None or not np.isfinite(value):
        return "undefined"
    return f"{'−' if value < 0 else ''}{_number(value, digits)}"


def amount_text(value: float, unit: str = "", digits: int = 3) -> str:
    """``value`` with its unit (``digits`` significant digits), a true minus for negatives, "undefined" for NaN.

    >>> amount_text(200, "$ a year"), amount_text(-1.3119, "$ per hour"), amount_text(0.25, "tiers")
    ('$200 a year', '−$1.31 per hour', '0.25 tiers')
    """
    if value is None or not np.isfinite(value):
        return "undefined"
    prefix, suffix = unit_parts(unit)
    return f"{'−' if value < 0 else ''}{prefix}{_number(value, digits)}{suffix}"


def amount_range(low: float, high: float, unit: str = "", digits: int = 3) -> str:
    """An interval with its unit once: "$1.1 to $1.52 per hour".

    >>> amount_range(1.105, 1.52, "$ per hour"), amount_range(-0.5, 0.25, "tiers")
    ('$1.1 to $1.52 per hour', '−0.5 to 0.25 tiers')
    """
    prefix, suffix = unit_parts(unit)
    return f"{amount_text(low, prefix, digits)} to {amount_text(high, prefix, digits)}{suffix}"


def benefit_sides(positive_is: str | None, outcome: str = "the outcome", prediction: str = "the prediction"
                  ) -> tuple[str, str]:
    """What a person's benefit is, and what lies right of 0 on its axis, in the direction the user declared and in
    the user's own words: ``outcome`` and ``prediction`` are the names of the columns (or what they hold) that the
    user chose, so a premium declared a harm reads "right of 0: predicted_premium below observed_premium".

    >>> benefit_sides("benefit")[0]
    'prediction − outcome'
    >>> benefit_sides("harm", "observed_premium", "predicted_premium")
    ('observed_premium − predicted_premium', "right of 0: predicted_premium below observed_premium, in the person's favour")
    """
    short = lambda name: name[4:] if name.startswith("the ") else name   # noqa: E731
    what = f"{short(outcome)} − {short(prediction)}" if positive_is == "harm" else \
        f"{short(prediction)} − {short(outcome)}"
    return what, f"right of 0: {prediction} {'below' if positive_is == 'harm' else 'above'} {outcome}, in the " \
                 "person's favour"


def _sentence(text: str) -> str:
    return text[0].upper() + text[1:] if text else text


# --------------------------------------------------------------------------- amounts


def mae_gaps(audit: Any, alpha: float) -> pd.DataFrame:
    """Every pair's gap in mean absolute error, MAE_i − MAE_j, with Bonferroni-simultaneous 1 − ``alpha`` intervals
    (the union of Hall's and Welch's, :class:`~fairness_core.statistics.amounts.MeanPairs`): group_i, group_j, n_i,
    n_j, mae_i, mae_j, gap, ci_low, ci_high, level, differs. Group i is the less accurate (larger MAE)."""
    check_alpha(alpha)
    mae = audit.moments["abs_error"]
    i, j = np.triu_indices(len(audit.groups), 1)
    swap = mae.mean[i] < mae.mean[j]
    i, j = np.where(swap, j, i), np.where(swap, i, j)
    pairs = MeanPairs(mae.take(i), mae.take(j), skew_limit=None)
    level = 1 - alpha / max(len(i), 1)
    low, high = pairs.bounds((1 - level) / 2)
    names = np.asarray(audit.groups, dtype=object)
    return pd.DataFrame({"group_i": names[i], "group_j": names[j], "n_i": audit.n[i].astype(int),
                         "n_j": audit.n[j].astype(int), "mae_i": mae.mean[i], "mae_j": mae.mean[j],
                         "gap": pairs.estimate, "ci_low": low, "ci_high": high, "level": level,
                         "differs": (low > 0) | (high < 0)})


def _amount_ofi_answer(v: pd.DataFrame, unit: str, what: str = "more benefit per person") -> str:
    tol = amount_text(v.settings.tolerance, unit)
    counts = v["verdict"].value_counts()
    skewed = int((v["reason"].astype(str).str.startswith("too skewed")).sum())
    bias = v[v["verdict"] == "algorithmic bias"]
    if len(bias):
        top = bias.loc[bias["ofi"].abs().idxmax()]
        loser = top["group_j"] if top["favours"] == top["group_i"] else top["group_i"]
        lo, hi = sorted((abs(top["ofi_ci_low"]), abs(top["ofi_ci_high"])))
        return (f"Yes for {len(bias):,} of {counted(len(v), 'pair')}: the largest, {top['favours']} gets "
                f"{amount_text(abs(top['ofi']), unit)} {what} than {loser} "
                f"({interval_label(v, 'ofi')} {amount_range(lo, hi, unit)}, beyond ±{tol}).")
    within = int(counts.get("systemic disparity", 0) + counts.get("no bias detected", 0))
    unclear = int(counts.get("materiality unclear", 0))
    open_ = int(counts.get("inconclusive", 0)) - skewed
    return (f"Not shown for any pair: no OFI interval lies beyond ±{tol}"
            + (f"; {counted(within, 'pair')} {'is' if within == 1 else 'are'} shown within it" if within else "")
            + (f"; {counted(unclear, 'pair')} {'differs' if unclear == 1 else 'differ'} but may be immaterial"
               if unclear else "")
            + (f"; {counted(open_, 'pair')} {'is' if open_ == 1 else 'are'} inconclusive" if open_ > 0 else "")
            + (f"; {counted(skewed, 'pair')} {'is' if skewed == 1 else 'are'} too skewed for their rows to tell"
               if skewed else "") + ".")


def _amount_ratio_answer(v: pd.DataFrame) -> str:
    band = v.settings.band
    ok = v.dropna(subset=["ratio"])
    if not len(ok):
        return "The mean prediction ratio is undefined for every pair (a mean prediction is not positive)."
    worst = ok.loc[ok["ratio"].idxmin()]
    ci = f"{interval_label(v, 'di')} {worst['ratio_ci_low']:.3f} to {worst['ratio_ci_high']:.3f}"
    beyond = int(v["ratio_beyond_band"].fillna(False).astype(bool).sum())
    lowest = f"the lowest, {worst['group_i']}'s mean prediction over {worst['group_j']}'s, {worst['ratio']:.3f} ({ci})"
    if beyond:
        return (f"{beyond:,} of {counted(len(v), 'pair')} {'has' if beyond == 1 else 'have'} mean predictions shown "
                "outside the band "
                f"[{band[0]:g}, {band[1]:g}]: {lowest}. With OFI within the tolerance that is a disparity the "
                "outcomes share (systemic), not the model's error.")
    return f"No pair's mean prediction ratio is shown outside the band [{band[0]:g}, {band[1]:g}]; {lowest}."


def _mae_answer(gaps: pd.DataFrame, unit: str) -> str:
    if not len(gaps):
        return "No pair to compare."
    top = gaps.loc[gaps["gap"].idxmax()]
    ci = f"simultaneous {level_text(top['level'])} CI {amount_range(top['ci_low'], top['ci_high'], unit)}"
    shown = int(gaps["differs"].sum())
    return (f"The largest gap: {top['group_i']}'s predictions miss by {amount_text(top['mae_i'], unit)} on average, "
            f"{top['group_j']}'s by {amount_text(top['mae_j'], unit)}, a gap of {amount_text(top['gap'], unit)} ({ci}: "
            + ("shown" if top["differs"] else "not shown") + f"); {shown} of {counted(len(gaps), 'pair')} shown to differ.")


def amount_questions(audit: Any, verdicts: pd.DataFrame, unit: str = "") -> dict[str, Any]:
    """The three questions of an amount audit: ``"text"`` maps each heading of :data:`AMOUNT_QUESTIONS` to its
    answer; ``"mae_gaps"`` is :func:`mae_gaps`' table (at the verdicts' α)."""
    gaps = mae_gaps(audit, verdicts.settings.alpha)
    answers = (_amount_ofi_answer(verdicts, unit), _amount_ratio_answer(verdicts), _mae_answer(gaps, unit))
    return {"text": dict(zip(AMOUNT_QUESTIONS, answers)), "mae_gaps": gaps}


# --------------------------------------------------------------------------- categories


def _ratio_answer(ratios: pd.DataFrame, label: str, order: list[str] | None = None) -> str:
    """The four-fifths reading of impact ratios at every cut (``label`` "cut") or class ("class"). With ``order``
    (the page's reference order, :func:`fairness_core.statistics.ordinal.oriented`) the pair quoted is turned as
    the page's table and chart turn it: its first group's rate over its reference's."""
    if not len(ratios):
        return "No pair of groups to compare."
    counts = ratios["verdict"].value_counts()
    adverse_rows = ratios[ratios["verdict"] == "adverse impact"].dropna(subset=["di"])
    pool = adverse_rows if len(adverse_rows) else ratios.dropna(subset=["di"])
    if not len(pool):
        return f"Every impact ratio is undefined (a group selected at no {label})."
    worst = pool.loc[pool["di"].idxmin()]
    where = f"at the cut “{worst[label]}”" if label == "cut" else f"for the class “{worst[label]}”"
    adverse = int(counts.get("adverse impact", 0))
    head = (f"Adverse impact shown for {adverse:,} of {len(ratios):,} pair-{label}s" if adverse
            else f"No adverse impact shown for any of {len(ratios):,} pair-{label}s")
    which = "the lowest shown" if len(adverse_rows) else "the lowest impact ratio"
    if order is not None:   # the page's orientation: the same pair, its reference second
        worst = ordinal.oriented(worst.to_frame().T.reset_index(drop=True), order).iloc[0]
        which = "the furthest from 1 shown" if len(adverse_rows) else "the impact ratio furthest from 1"
    adverse_to = f", against {worst['adverse_to']}" if str(worst.get('adverse_to', '') or '') else ""
    return (f"{head} ({interval_label(ratios, 'di')}, adjusted across {label}s and pairs); {which}, "
            f"{worst['group_i']}'s rate over {worst['group_j']}'s {where}: {number_text(float(worst['di']))} "
            f"({number_text(float(worst['di_ci_low']))} to {number_text(float(worst['di_ci_high']))}, "
            f"{worst['verdict']}{adverse_to}).")


def _ordinal_rates_answer(gaps: pd.DataFrame) -> str:
    largest = verdicts_.largest_gaps(gaps)
    if not len(largest):
        return "The ordinal error rates are undefined for every pair."
    parts = []
    def points(x: float) -> str:   # a gap of two rates given as %: percentage points, a true minus
        return f"{x * 100:+.1f}".replace("-", "−")

    for _, g in largest.iterrows():   # the few largest gaps, one per rate
        ci = f"simultaneous {level_text(g['level'])} CI {points(g['ci_low'])} to {points(g['ci_high'])} points"
        parts.append(f"the largest {g['rate']} gap ({g['meaning']}): {g['group_i']} {g['rate_i']:.1%} against "
                     f"{g['group_j']} {g['rate_j']:.1%}, {points(g['gap'])} percentage points ({ci}: "
                     + ("shown" if g["differs"] else "not shown") + ")")
    return _sentence("; ".join(parts) + ".")


def class_questions(audit: Any, ratios: pd.DataFrame, verdicts: pd.DataFrame | None = None,
                    gaps: pd.DataFrame | None = None, order: list[str] | None = None) -> dict[str, Any]:
    """The three questions of a categories audit: ``"text"`` maps each heading to its answer. ``verdicts`` (the
    ordinal OFI's) and ``gaps`` (:meth:`~fairness_core.multiclass.MulticlassAudit.error_rate_gaps`) exist only with
    an order and outcomes; without them the answers say what they need. ``order``: the page's reference order
    (:func:`fairness_core.statistics.ordinal.oriented`), so the pairs quoted are turned as its tables turn them."""
    label = "cut" if "cut" in ratios.columns else "class"
    if not audit.has_outcomes:
        needs = ("Needs outcomes: no observed class was given, so whether each person was placed too high or too "
                 "low cannot be known from the classes given alone.")
        ofi, rates = needs, needs
    elif not audit.ordered:
        needs = ("Needs an order: without one, “placed above or below the observed class” has no meaning. Open a "
                 "class's one-vs-rest audit below for its OFI and error rates.")
        ofi, rates = needs, needs
    else:
        assert verdicts is not None and gaps is not None
        ofi = _amount_ofi_answer(verdicts, "tiers", "more benefit per person (tiers toward the favourable end)")
        rates = _ordinal_rates_answer(gaps if order is None else ordinal.oriented(gaps, order))
    headings = CLASS_QUESTIONS if audit.ordered else UNORDERED_QUESTIONS
    return {"text": dict(zip(headings, (ofi, _ratio_answer(ratios, label, order), rates)))}
