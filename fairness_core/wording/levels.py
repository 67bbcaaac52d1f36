"""How a confidence level and the interval beside a verdict are written ("Holm-adjusted 99.7 % CI"): words, so on
the wording floor, read by every page, report and figure that prints an interval's level."""

from __future__ import annotations

import pandas as pd

from ..common.vocabulary import adjustment

__all__ = ["interval_label", "level_text"]


def level_text(level: float) -> str:
    """A confidence level as people write it, with the fewest decimals that keep it below 100 %.

    >>> level_text(0.95), level_text(0.99666), level_text(0.99983)
    ('95 %', '99.7 %', '99.98 %')
    """
    percent = level * 100
    for digits in range(0, 5):
        shown = f"{percent:.{digits}f}"
        if float(shown) < 100 and abs(float(shown) - percent) < 10 ** -(digits + 1) * 5 and (
                digits or abs(percent - round(percent)) < 1e-9):
            return f"{shown} %"
    return f"{percent:.5f} %"


def interval_label(verdicts: pd.DataFrame, what: str = "ofi") -> str:
    """How the interval beside a verdict is labelled: its level and, when adjusted, the adjustment
    ("Holm-adjusted 99.7 % CI"; "95 % CI" without adjustment). ``what``: "ofi" or "di"."""
    adjust = verdicts.settings.adjust
    level = verdicts.levels.ofi if what == "ofi" else verdicts.levels.di
    return f"{adjustment(adjust).prefix}{level_text(level)} CI"
