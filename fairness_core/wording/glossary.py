"""Plain words for the terms an HR reader meets in an audit of decisions alone: "materiality unclear" and the
adjusted interval's label ("Holm-adjusted 99.9 % CI").

Names are returned as given: escape the text for wherever it goes.
"""

from __future__ import annotations

import pandas as pd

from ..common.vocabulary import adjustment
from .levels import interval_label

#: "Materiality unclear" for decisions alone, in plain words.
MATERIALITY_UNCLEAR = ("“Materiality unclear” means the two groups' selection rates differ by more than chance "
                       "explains, but the data cannot tell whether the impact ratio is below four fifths (0.8) or "
                       "not: more applicants would settle it.")


def interval_gloss(verdicts: pd.DataFrame) -> str:
    """What the label of the impact ratio's interval means, in plain words, for these four-fifths verdicts.

    >>> from fairness_core.audit import Audit
    >>> a = Audit.from_decisions([1] * 92 + [0] * 308 + [1] * 407 + [0] * 693 + [1] * 50 + [0] * 50,
    ...                          ["a"] * 400 + ["b"] * 1100 + ["c"] * 100, positive_is="benefit")
    >>> print(interval_gloss(a.verdicts()))  # doctest: +ELLIPSIS
    “Holm-adjusted 98.3 % CI” is the range the impact ratio lies in with 98.3 % confidence; ...3 pairs...
    """
    label = interval_label(verdicts, "di")
    level = label.removesuffix(" CI").removeprefix(adjustment(verdicts.settings.adjust).prefix)
    alpha, adjust, pairs = verdicts.settings.alpha, verdicts.settings.adjust, len(verdicts)
    words = f"“{label}” is the range the impact ratio lies in with {level} confidence; "
    if pairs <= 1 and adjust != "none":
        return words + "with a single pair there is nothing to adjust for."
    if adjust == "holm":
        return words + (f"it is wider than one comparison's would be because {pairs:,} pairs are compared at once "
                        f"(Holm's adjustment), so that the chance of even one false alarm among them stays at "
                        f"{alpha:.0%}.")
    if adjust == "bh":
        return words + (f"it is widened because {pairs:,} pairs are compared at once (Benjamini–Hochberg's "
                        f"adjustment), so that of the pairs called different, at most about {alpha:.0%} are expected "
                        "to be false alarms.")
    return words + "each pair's own interval, not widened for comparing many pairs at once."


def selection_terms(verdicts: pd.DataFrame) -> str:
    """Both glosses, for a caption beside the four-fifths verdicts of decisions alone."""
    return f"In plain words: {MATERIALITY_UNCLEAR} {interval_gloss(verdicts)}"


__all__ = ["MATERIALITY_UNCLEAR", "interval_gloss", "selection_terms"]
