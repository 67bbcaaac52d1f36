"""The plain-words reading of an amount audit's verdicts (:meth:`fairness_core.continuous.ContinuousAudit.verdicts`).

An amount's OFI is a difference of mean benefits in the outcome's units, so every sentence says the unit's numbers
(``unit`` prefixes them: "$"), never a share. Built with vectorized string operations over the pairs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..statistics.verdicts import level_text


def _amount(x: pd.Series, unit: str) -> pd.Series:
    return x.map(lambda v: f"{'−' if v < 0 else ''}{unit}{abs(v):,.4g}" if np.isfinite(v) else "—")


def amount_explanations(df: pd.DataFrame, tolerance: float, level: float, unit: str = "") -> np.ndarray:
    """Each pair's reading: its verdict in words with the interval that decided it (``level``, the adjusted one)
    and, where no verdict can be given, why (the ``reason`` column)."""
    ofi, lo, hi = (_amount(df[c], unit) for c in ("ofi", "ofi_ci_low", "ofi_ci_high"))
    r_lo, r_hi = df["ratio_ci_low"].round(3).astype(str), df["ratio_ci_high"].round(3).astype(str)
    tol = f"±{unit}{tolerance:,.4g}"
    ci = f"{level_text(level)} interval"
    gap = _amount(df["ofi"].abs(), unit)
    favoured = df["favours"].astype(str)
    other = np.where(favoured == df["group_i"], df["group_j"], df["group_i"])
    verdict = df["verdict"].to_numpy()
    text = pd.Series("", index=df.index, dtype=object)
    bias_ = ("Algorithmic bias: " + favoured + " gets " + gap + " more benefit per person than " + other
             + " on average (" + ci + " " + lo + " to " + hi + ", beyond " + tol + ").")
    unclear = ("A real difference of " + gap + " per person in " + favoured + "'s favour (" + ci + " " + lo + " to "
               + hi + "), which may or may not exceed " + tol + ".")
    systemic = ("No algorithmic bias (OFI's " + ci + " " + lo + " to " + hi + " lies inside " + tol
                + "), but the mean prediction ratio's interval " + r_lo + " to " + r_hi
                + " lies outside the band: a disparity in the amounts that the outcomes share.")
    no_bias = "No algorithmic bias: OFI's " + ci + " " + lo + " to " + hi + " lies inside " + tol + "."
    ratio_open = ("Cannot tell yet: OFI's " + ci + " " + lo + " to " + hi + " lies inside " + tol
                  + ", but the mean prediction ratio's interval " + r_lo + " to " + r_hi + " reaches across the band.")
    open_ = ("Cannot tell yet: OFI's " + ci + " " + lo + " to " + hi + " includes 0 and reaches beyond " + tol + ".")
    reason = df["reason"].astype(str)
    told = "Cannot tell: " + reason + " (estimate " + ofi + "); no interval is trustworthy here."
    within = df["ofi_within_tolerance"].to_numpy(dtype=bool)
    choices = [verdict == "algorithmic bias", verdict == "materiality unclear", verdict == "systemic disparity",
               verdict == "no bias detected", (reason != "").to_numpy(), within]
    out = np.select(choices, [bias_, unclear, systemic, no_bias, told, ratio_open], open_.to_numpy())
    text[:] = out
    return text.to_numpy(dtype=object)
