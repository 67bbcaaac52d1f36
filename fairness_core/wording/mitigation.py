"""The sentences of mitigation by per-group thresholds (the Compare and Mitigate page, the rule file's context): what
each fairness target and each held-out estimate means, what randomizing means for the people decided on, how the
rule's score is made from a file's score, a group's randomized thresholds, each before → after number with its
interval, and the cross-fitted reading. The numbers are :mod:`fairness_core.statistics.mitigation`'s; every interval
quoted is the one it computed, undefined ones with their reason.

>>> score_direction("COMPAS decile score", "negate", "not a recidivist / low risk")[:70]
"the rule's score is −(COMPAS decile score): higher = more likely not a"
>>> mixture_text(((0.62, 0.7), (float("inf"), 0.3)))
'0.62 (70%) or nobody (30%)'
"""

from __future__ import annotations

import math

import pandas as pd

from ..statistics.mitigation.held_out import MEASURES
from .reading import ci_text

#: The fairness targets thresholds can be fitted for, as the page offers them.
TARGET_WORDS = {"ofi": "OFI within ± tolerance (equal marginal benefit)",
                "demographic_parity": "demographic parity (selection rates within tolerance)",
                "four_fifths": "four-fifths rule (DI ≥ 0.8; tolerance unused)",
                "equal_opportunity": "equal opportunity (TPRs within tolerance)",
                "equalized_odds": "equalized odds (TPRs and FPRs within tolerance)"}
#: Each target's own measures, as :func:`fairness_core.statistics.mitigation.target_measures` names them (read off
#: its :data:`~fairness_core.statistics.mitigation.held_out.MEASURES`).
TARGET_MEASURES = {t: tuple(m for m, targets in MEASURES.items() if t in targets) for t in TARGET_WORDS}
#: What a randomized rule does to the people it decides on (Markdown: its first sentence in bold).
RANDOMIZING = ("**What randomizing means for the people decided on.** A randomized rule draws, for each person, "
               "one of two thresholds of their group (three at most for equalized odds) with fixed probabilities: "
               "two applicants with the same score and group may get different decisions, by chance alone. It meets "
               "the target on average, and can be more accurate than any one threshold per group; where equal "
               "treatment of equal scores matters more, keep the deterministic rule.")


def estimates(folds: int) -> dict[str, str]:
    """How the held-out numbers can be estimated: one split, or cross-fitting with ``folds`` folds."""
    return {"split": "one split: fit on half, measure on the other half",
            "cross-fit": f"cross-fitting, {folds} folds: every row measured once, by thresholds fitted without it"}


def score_direction(score: str, transform: str, positive_outcome: str) -> str:
    """How the rule's score is made from the file's ``score`` (``transform``: a key of
    :data:`fairness_core.statistics.mitigation.rule.SCORE_TRANSFORMS`), in a sentence: the rule file's context and
    the page's caption."""
    return {"negate": f"the rule's score is −({score}): higher = more likely {positive_outcome}, so a threshold "
                      f"of −t means {score} ≤ t; apply negates the file's {score} column itself, so give it the raw "
                      "scores",
            "complement": f"the rule's score is 1 − ({score}): higher = more likely {positive_outcome}; apply "
                          f"takes 1 − the file's {score} column itself, so give it the raw probabilities",
            }.get(transform, f"the rule's score is {score} as it is: higher = more likely "
                             f"{positive_outcome}")


def mixture_text(mix: tuple[tuple[float, float], ...]) -> str:
    """A group's randomized thresholds as people read them: "0.62 (70%) or 0.55 (30%)" (an infinite one is
    "nobody")."""
    return " or ".join(("nobody" if math.isinf(t) else f"{t:.4g}") + f" ({p:.0%})" for t, p in mix)


def interval_text(row: pd.Series, side: str) -> str:
    """A ``side`` ("before" or "after") estimate of :func:`fairness_core.statistics.mitigation.target_measures`'s
    table and its interval as people read it ("undefined" with the reason where it is NaN)."""
    est = row[f"{side} estimate"]
    if math.isnan(est):
        return f"undefined ({row[f'{side} note']})"
    return f"{est:.3f} [{row[f'{side} ci_low']:.3f}, {row[f'{side} ci_high']:.3f}]"


def cross_fitted_reading(before: pd.Series, after: pd.Series, objective: str, label: str, interval_level: str,
                         alpha: float) -> str:
    """:func:`fairness_core.wording.reading.mitigation_held_out`'s sentence for cross-fitted decisions (every row,
    each decided by thresholds fitted on the other folds)."""
    return (f"Cross-fitted over all rows, the largest |OFI| goes from {ci_text(before, 'max_abs_ofi')} with one "
            f"shared threshold to {ci_text(after, 'max_abs_ofi')} with per-group thresholds (each row decided by "
            f"thresholds fitted without its fold); {label} from {ci_text(before, objective)} to "
            f"{ci_text(after, objective)} (intervals: {interval_level} for |OFI|, {1 - alpha:.0%} for {label}).")


def intervals_note(simultaneous: str, bootstrap: str, label: str) -> str:
    """Which interval is which where the same number is printed twice: the sentence's (the comparison's: for the
    largest |OFI| the simultaneous interval across all pairs, at ``simultaneous``; for the objective ``label`` its
    own) and the tiles' and the table's (the bootstrap interval of the number itself, ``bootstrap``). Markdown; the
    levels are the library's words."""
    return (f"**Two intervals for the same numbers.** The sentence above gives the comparison's intervals: for the "
            f"largest |OFI| the *simultaneous interval across all pairs* ({simultaneous}), which holds whichever pair "
            f"has the largest gap and so is the wider; for {label}, its own. The tiles (hover) and the table below "
            f"give the *bootstrap interval of each number itself* ({bootstrap}).")


__all__ = ["RANDOMIZING", "TARGET_MEASURES", "TARGET_WORDS", "cross_fitted_reading", "estimates", "interval_text",
           "intervals_note", "mixture_text", "score_direction"]
