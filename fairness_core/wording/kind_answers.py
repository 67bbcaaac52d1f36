"""The three questions answered in words for an audit of amounts or of classes (issue 53), as
:func:`fairness_core.wording.reading.three_questions` answers them for yes/no decisions: is the algorithm at fault
(OFI), is there a disparity of the four-fifths kind, and do the errors fall alike on every group.

Each answer reads a table the library computed — the pair verdicts (:meth:`ContinuousAudit.verdicts`,
:meth:`MulticlassAudit.verdicts`), the impact ratios at every cut (:meth:`MulticlassAudit.impact_ratios`), the
error gaps — and quotes the interval that decided it, at its level. An amount is written in the outcome's units:
a short unit that is no word before the number ("$2,747"), a word after it ("0.25 tiers").

>>> amount_text(-2747.3, "$"), amount_text(0.25, "tiers"), amount_text(float("nan"), "$")
('−$2,747', '0.25 tiers', 'undefined')
"""

from __future__ import annotations

import pandas as pd

from ..common.text import counted
from ..common import text
from ..statistics.verdicts import SELECTION_VERDICTS, VERDICTS
from .levels import interval_label, level_text
from .kinds import _amount_ofi_answer, amount_text   # one home for an amount in words (the Bias Audit page's too)

#: The three questions of an audit of amounts, in order (the keys of the ``text`` its answers give).
AMOUNT_QUESTIONS = ("Is the algorithm at fault (OFI)?", "The mean prediction ratio (four-fifths band)",
                    "Error sizes (MAE)")
#: The three questions of an audit of classes.
CLASS_QUESTIONS = ("Is the algorithm at fault (OFI)?", "The four-fifths rule at every cut",
                   "Equal opportunity (error rates)")
#: The second question without an order: the four-fifths rule for every class's share.
CLASS_SHARE_QUESTION = "The four-fifths rule for every class"


def ofi_answer(verdicts: pd.DataFrame, unit: str = "") -> str:
    """Is the algorithm at fault? The largest OFI shown beyond the tolerance (in ``unit``), or what the pairs show
    instead, with the pairs too skewed for their rows to tell counted apart: the Bias Audit page's sentence
    (:mod:`.kinds`), its one home."""
    return _amount_ofi_answer(verdicts, unit)


def ratio_answer(verdicts: pd.DataFrame, asked: bool = True) -> str:
    """An amount audit's mean prediction ratio against its band: the pairs shown outside it (the lowest quoted),
    shown inside, and the systemic disparities (OFI within the tolerance, the ratio outside the band)."""
    if not asked:
        return ("Not asked: a ratio of mean predictions needs amounts that are positive, and this audit was judged "
                "without a band (OFI inside the tolerance then reads \"no bias detected\").")
    low, high = verdicts.settings.band
    band = f"[{low:g}, {high:g}]"
    beyond = verdicts[verdicts["ratio_beyond_band"].astype(bool)]
    inside = int(verdicts["ratio_within_band"].astype(bool).sum())
    undefined = int(verdicts["ratio"].isna().sum())
    tail = ((f"; shown inside it for {counted(inside, 'pair')}" if inside else "")
            + (f"; undefined for {counted(undefined, 'pair')} (a mean prediction not above 0)" if undefined else ""))
    if not len(beyond):
        return f"No pair's mean prediction ratio is shown outside {band} ({interval_label(verdicts, 'di')}){tail}."
    worst = beyond.loc[(beyond["ratio"] - 1).abs().idxmax()]
    systemic = int((verdicts["verdict"] == "systemic disparity").sum())
    return (f"{counted(len(beyond), 'pair')} {'has' if len(beyond) == 1 else 'have'} a mean prediction ratio shown outside {band} "
            f"({interval_label(verdicts, 'di')}); the farthest: {worst['group_i']} against {worst['group_j']}, "
            f"{text.ratio_text(worst['ratio'], worst['ratio_ci_low'], worst['ratio_ci_high'])}"
            + (f"; {systemic} of them with OFI inside the tolerance: a systemic disparity" if systemic else "")
            + f"{tail}.")


def error_size_answer(gaps: pd.DataFrame, by_group: pd.DataFrame, unit: str = "") -> str:
    """Do the errors fall alike? The range of the groups' MAE, and the pairs whose MAE gap is shown by its
    simultaneous interval (``gaps``: group_i, group_j, mae_i, mae_j, gap, ci_low, ci_high, differs, level)."""
    mae = by_group["mae"]
    head = (f"MAE ranges from {amount_text(mae.min(), unit)} ({mae.idxmin()}) to {amount_text(mae.max(), unit)} "
            f"({mae.idxmax()})")
    if not len(gaps):
        return head + "."
    level = level_text(float(gaps["level"].iloc[0]))
    shown = gaps[gaps["differs"].astype(bool)]
    if not len(shown):
        return head + f"; no pair's gap is shown (simultaneous {level} intervals all include 0)."
    top = shown.loc[shown["gap"].abs().idxmax()]
    return (head + f"; the gap is shown for {len(shown):,} of {counted(len(gaps), 'pair')} (simultaneous {level} intervals), "
            f"the largest: {top['group_i']} {amount_text(top['mae_i'], unit)} against {top['group_j']} "
            f"{amount_text(top['mae_j'], unit)}, a gap of {amount_text(top['gap'], unit)} "
            f"({amount_text(top['ci_low'], unit)} to {amount_text(top['ci_high'], unit)}).")


def cut_ratio_answer(ratios: pd.DataFrame) -> str:
    """The impact ratios at every cut (or of every class's share): how many (cut, pair)s show adverse impact,
    the lowest quoted with its adjusted interval."""
    label = "cut" if "cut" in ratios.columns else "class"
    counts = ratios["verdict"].value_counts()
    tally = ", ".join(f"{k} {int(counts.get(k, 0))}" for k in SELECTION_VERDICTS if counts.get(k, 0))
    if not len(ratios):
        return "No pair of groups is compared (fewer than two groups hold 2 % of the rows or more)."
    adverse = ratios[ratios["verdict"] == "adverse impact"]
    where = f"{len(ratios):,} comparisons ({'cuts' if label == 'cut' else 'classes'} × pairs, {interval_label(ratios, 'di')})"
    if not len(adverse):
        return f"No adverse impact shown at any {label}: of {where}, {tally}."
    worst = adverse.loc[adverse["di"].idxmin()]
    return (f"Adverse impact shown in {len(adverse):,} of {where}: the lowest, {label} “{worst[label]}”: "
            f"{worst['group_i']} against {worst['group_j']}, impact ratio "
            f"{text.ratio_text(worst['di'], worst['di_ci_low'], worst['di_ci_high'])}; {tally}.")


def ordinal_error_answer(gaps: pd.DataFrame) -> str:
    """The largest gap in the ordinal FNR (placed on the unfavourable side of the observed tier) and FPR (on the
    favourable side), each with its simultaneous interval (:meth:`MulticlassAudit.error_rate_gaps`)."""
    parts = []
    for rate, grp in gaps.dropna(subset=["gap"]).groupby("rate", sort=True):
        g = grp.loc[grp["gap"].abs().idxmax()]
        ci = (f"simultaneous {level_text(g['level'])} CI {text.bound(g['ci_low'], 0.0, 3, True)} to "
              f"{text.bound(g['ci_high'], 0.0, 3, True)}")
        parts.append(f"the largest {rate} gap ({g['meaning']}): {g['group_i']} {g['rate_i']:.1%} against "
                     f"{g['group_j']} {g['rate_j']:.1%}, a gap of {g['gap']:+.3f} ({ci}: "
                     + ("shown" if g["differs"] else "not shown") + ")")
    sentence = "; ".join(parts) + "." if parts else "the ordinal error rates are undefined for every pair."
    return sentence[0].upper() + sentence[1:]


def verdict_counts(verdicts: pd.DataFrame, words: tuple[str, ...] = VERDICTS) -> dict[str, int]:
    """How many pairs got each verdict word, every word listed."""
    counts = verdicts["verdict"].value_counts()
    return {k: int(counts.get(k, 0)) for k in words}


def findings(verdicts: pd.DataFrame, answers: dict[str, str]) -> str:
    """One sentence that agrees with the answers: the verdict counts, then the answer to the first question."""
    counts = verdict_counts(verdicts)
    tally = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    return f"Of {len(verdicts):,} group pairs: {tally or 'none'}. {next(iter(answers.values()))}"


__all__ = ["AMOUNT_QUESTIONS", "CLASS_QUESTIONS", "CLASS_SHARE_QUESTION", "amount_text", "cut_ratio_answer", "error_size_answer",
           "findings", "ofi_answer", "ordinal_error_answer", "ratio_answer", "verdict_counts"]
