"""The plain-words reading of a forecast audit (:mod:`fairness_core.forecasts`): each pair's verdict, the
direction of a forecast's benefit, and the findings, with every amount in the outcome's unit.

A forecast's **benefit** is the signed error of its median in the declared direction: over-forecasting is the
benefit where a larger forecast serves the group (demand provisioned, frost warned of), under-forecasting where a
larger forecast harms it (losses that set a premium). The forecast OFI of a pair is the difference of mean benefits.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..common.vocabulary import adjustment
from ..statistics.verdicts import VERDICTS
from .levels import level_text
from .amounts import amount_texts, range_texts, verdict_sentences
from .kinds import amount_text

__all__ = ["forecast_direction", "forecast_explanations", "forecast_findings", "too_few_points"]


def forecast_direction(positive_is: str | None) -> str:
    """What a forecast's benefit is, in words, and whether it was declared.

    >>> forecast_direction("harm")
    'a larger forecast is a harm (declared): benefit = observation − median forecast; over-forecasting harms'
    """
    if positive_is == "harm":
        return ("a larger forecast is a harm (declared): benefit = observation − median forecast; "
                "over-forecasting harms")
    said = "(declared)" if positive_is == "benefit" else "(assumed: not declared)"
    return (f"a larger forecast is a benefit {said}: benefit = median forecast − observation; "
            "under-forecasting harms")


def too_few_points(group: str, points: int, minimum: int) -> str:
    """The reason a group gets no interval.

    >>> too_few_points("site 3", 12, 30)
    "group 'site 3' has 12 time points; an interval needs at least 30"
    """
    plural = "s" if points != 1 else ""
    return f"group {group!r} has {points:,} time point{plural}; an interval needs at least {minimum:,}"


def forecast_explanations(df: pd.DataFrame, tolerance: float, level: float, unit: str = "") -> np.ndarray:
    """Each pair's reading: the verdict in words with the adjusted interval that decided it, the forecast OFI's
    advantage stated for the favoured group (its interval turned round when that is ``group_j``), the CRPS ratio
    where it decides "systemic disparity", and the ``reason`` where no verdict could be given."""
    ofi = df["ofi"].to_numpy(dtype=float)
    lo, hi = df["ofi_ci_low"].to_numpy(dtype=float), df["ofi_ci_high"].to_numpy(dtype=float)
    favoured = df["favours"].astype(str).reset_index(drop=True)
    i_favoured = (favoured == df["group_i"].astype(str).reset_index(drop=True)).to_numpy()
    other = pd.Series(np.where(i_favoured, df["group_j"], df["group_i"]), dtype=object).astype(str)
    gap = amount_texts(np.abs(ofi), unit)
    adv = range_texts(np.where(i_favoured, lo, -hi), np.where(i_favoured, hi, -lo), unit)
    ofi_ci = range_texts(lo, hi, unit)
    r_lo = df["ratio_ci_low"].round(3).astype(str).reset_index(drop=True)
    r_hi = df["ratio_ci_high"].round(3).astype(str).reset_index(drop=True)
    worse = df["group_i"].astype(str).reset_index(drop=True)
    tol = "±" + amount_text(tolerance, unit)
    ci = f"{level_text(level)} interval"
    bias_ = ("Algorithmic bias: " + favoured + "'s forecasts carry " + gap + " more benefit per forecast than "
             + other + "'s (the median's error in the declared direction; " + ci + " of the difference: " + adv
             + ", beyond " + tol + ").")
    unclear = ("A real difference of " + gap + " per forecast in " + favoured + "'s favour (" + ci + ": " + adv
               + "), which may or may not exceed " + tol + ".")
    systemic = ("No algorithmic bias (the forecast OFI's " + ci + " " + ofi_ci + " lies inside " + tol + "), but "
                + worse + "'s mean CRPS is " + r_lo + " to " + r_hi + " times the other's: forecasts there are "
                "less accurate without leaning either way.")
    no_bias = ("No algorithmic bias: the forecast OFI's " + ci + " " + ofi_ci + " lies inside " + tol
               + ", and the CRPS ratio's interval " + r_lo + " to " + r_hi + " lies inside the band.")
    ratio_open = ("Cannot tell yet: the forecast OFI's " + ci + " " + ofi_ci + " lies inside " + tol
                  + ", but the CRPS ratio's interval " + r_lo + " to " + r_hi + " reaches across the band.")
    open_ = "Cannot tell yet: the forecast OFI's " + ci + " " + ofi_ci + " includes 0 and reaches beyond " + tol + "."
    reason = df["reason"].astype(str).reset_index(drop=True)
    told = "Cannot tell: " + reason + " (estimate " + amount_texts(ofi, unit) + ")."
    return verdict_sentences(df, reason, bias_, unclear, systemic, no_bias, told, ratio_open, open_)


def forecast_findings(verdicts: pd.DataFrame, unit: str = "", max_items: int = 3) -> str:
    """The verdict counts and the first ``max_items`` pairs' readings, algorithmic bias first.

    Group names are returned as given; escape them for wherever the text goes."""
    if verdicts.empty:
        return "There are no group pairs to compare."
    counts = verdicts["verdict"].value_counts()
    settings = verdicts.settings
    head = (f"Of {len(verdicts):,} group pairs: " + ", ".join(f"{counts.get(k, 0):,} {k}" for k in VERDICTS)
            + f" (tolerance ±{amount_text(settings.tolerance, unit)} for the forecast OFI; every claim at "
            f"α = {settings.alpha:g}, {adjustment(settings.adjust).controls}).")
    rank = verdicts["verdict"].map({v: k for k, v in enumerate(VERDICTS)})
    shown = verdicts.assign(_rank=rank).sort_values("_rank", kind="stable").head(max_items)
    return " ".join([head, *shown["explanation"].astype(str)])
