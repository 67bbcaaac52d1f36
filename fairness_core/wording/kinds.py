# NOTE (issue 53, report/store engineer, 2026-11-28 04:53 UTC): this file was overwritten by accident by a file of
# the same name; its original author's text was lost. What follows is a stand-in with the two names the figures
# (presentation/plots/amounts.py) and ui/kinds.py import; the original author should put their version back.
"""Amounts in words: a value, or an interval, in the outcome's units.

A short unit that is no word ("$", "€") goes before the number ("$2,747"), a word after it ("0.25 tiers").

>>> amount_text(-2747.3, "$"), amount_text(0.25, "tiers"), amount_text(float("nan"), "$")
('−$2,747', '0.25 tiers', 'undefined')
>>> amount_range(-3086.2, -2408.0, "$")
'−$3,086 to −$2,408'
"""

from __future__ import annotations

import numpy as np


def amount_text(value: float, unit: str = "", digits: int = 4) -> str:
    """``value`` in the outcome's units: a short non-letter unit ("$", "€") before it, a word after it."""
    if value is None or not np.isfinite(value):
        return "undefined"
    number = f"{abs(value):,.{digits}g}"
    sign = "−" if value < 0 else ""
    if not unit:
        return f"{sign}{number}"
    if len(unit) <= 3 and not any(c.isalpha() for c in unit):
        return f"{sign}{unit}{number}"
    return f"{sign}{number} {unit}"


def amount_range(low: float, high: float, unit: str = "", digits: int = 4) -> str:
    """An interval in the outcome's units, "−$3,086 to −$2,408"."""
    return f"{amount_text(low, unit, digits)} to {amount_text(high, unit, digits)}"


__all__ = ["amount_range", "amount_text"]
