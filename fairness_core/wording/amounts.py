"""The plain-words reading of an amount audit's verdicts (:meth:`fairness_core.continuous.ContinuousAudit.verdicts`).

An amount's OFI is a difference of mean benefits in the outcome's units, so every sentence says the unit's numbers
(the whole unit: "$1.31 per hour"), never a share. Built with vectorized string operations over the pairs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .levels import level_text
from .kinds import amount_range, amount_text


def amount_texts(x: pd.Series | np.ndarray, unit: str) -> pd.Series:
    return pd.Series([amount_text(v, unit) for v in np.asarray(x, dtype=float)], dtype=object)


def range_texts(low: np.ndarray, high: np.ndarray, unit: str) -> pd.Series:
    return pd.Series([amount_range(a, b, unit) for a, b in zip(low, high)], dtype=object)


def amount_explanations(df: pd.DataFrame, tolerance: float, level: float, unit: str = "") -> np.ndarray:
    """Each pair's reading: its verdict in words with the interval that decided it (``level``, the adjusted one)
    and, where no verdict can be given, why (the ``reason`` column).

    A sentence that names the favoured group states its advantage as a positive amount with the interval of that
    advantage (OFI's interval turned round when the favoured group is ``group_j``), so the number and its interval
    always agree in sign; the other sentences quote OFI = B(group_i) − B(group_j) and its interval as they are.
    Amounts carry the whole unit ("$1.31 per hour"), through :func:`~fairness_core.wording.kinds.amount_text`."""
    ofi = df["ofi"].to_numpy(dtype=float)
    lo, hi = df["ofi_ci_low"].to_numpy(dtype=float), df["ofi_ci_high"].to_numpy(dtype=float)
    favoured = df["favours"].astype(str).reset_index(drop=True)
    i_favoured = (favoured == df["group_i"].astype(str).reset_index(drop=True)).to_numpy()
    other = pd.Series(np.where(i_favoured, df["group_j"], df["group_i"]), dtype=object).astype(str)
    adv_lo, adv_hi = np.where(i_favoured, lo, -hi), np.where(i_favoured, hi, -lo)
    gap, adv = amount_texts(np.abs(ofi), unit), range_texts(adv_lo, adv_hi, unit)
    ofi_ci = range_texts(lo, hi, unit)
    r_lo = df["ratio_ci_low"].round(3).astype(str).reset_index(drop=True)
    r_hi = df["ratio_ci_high"].round(3).astype(str).reset_index(drop=True)
    tol = "±" + amount_text(tolerance, unit)
    ci = f"{level_text(level)} interval"
    bias_ = ("Algorithmic bias: " + favoured + " gets " + gap + " more benefit per person than " + other
             + " on average (" + ci + " of the difference: " + adv + ", beyond " + tol + ").")
    unclear = ("A real difference of " + gap + " per person in " + favoured + "'s favour (" + ci + ": " + adv
               + "), which may or may not exceed " + tol + ".")
    systemic = ("No algorithmic bias (OFI's " + ci + " " + ofi_ci + " lies inside " + tol
                + "), but the mean prediction ratio's interval " + r_lo + " to " + r_hi
                + " lies outside the band: a disparity in the amounts that the outcomes share.")
    no_bias = "No algorithmic bias: OFI's " + ci + " " + ofi_ci + " lies inside " + tol + "."
    ratio_open = ("Cannot tell yet: OFI's " + ci + " " + ofi_ci + " lies inside " + tol
                  + ", but the mean prediction ratio's interval " + r_lo + " to " + r_hi + " reaches across the band.")
    open_ = "Cannot tell yet: OFI's " + ci + " " + ofi_ci + " includes 0 and reaches beyond " + tol + "."
    reason = df["reason"].astype(str).reset_index(drop=True)
    told = ("Cannot tell: " + reason + " (estimate " + amount_texts(ofi, unit)
            + "); no interval is trustworthy here.")
    return verdict_sentences(df, reason, bias_, unclear, systemic, no_bias, told, ratio_open, open_)


def verdict_sentences(df: pd.DataFrame, reason: pd.Series, bias_: pd.Series, unclear: pd.Series,
                      systemic: pd.Series, no_bias: pd.Series, told: pd.Series, ratio_open: pd.Series,
                      open_: pd.Series) -> np.ndarray:
    """Each pair's sentence by its verdict (the five words), a ``reason`` for no verdict, or — inconclusive — by
    whether OFI lay within the tolerance (the ratio undecided) or not: one choice for every audit of amounts
    (amounts, forecasts)."""
    verdict = df["verdict"].to_numpy()
    within = df["ofi_within_tolerance"].to_numpy(dtype=bool)
    choices = [verdict == "algorithmic bias", verdict == "materiality unclear", verdict == "systemic disparity",
               verdict == "no bias detected", (reason != "").to_numpy(), within]
    return np.select(choices, [s.to_numpy(dtype=object) for s in (bias_, unclear, systemic, no_bias, told,
                                                                   ratio_open)],
                     open_.to_numpy(dtype=object)).astype(object)
