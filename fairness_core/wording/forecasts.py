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
from .kinds import amount_range, amount_text

__all__ = ["forecast_direction", "forecast_explanations", "forecast_findings", "listed", "tolerance_for_sd",
           "too_few_points"]


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


def tolerance_for_sd(sd: float) -> float:
    """A tenth of ``sd`` to 2 significant digits, as a tolerance is first offered to a reader (the one to set is the
    reader's); 1.0 when ``sd`` is 0 or not finite. The Forecasting page's starting tolerance for an upload and after
    a PTN run (from its test observations' deviation), and bench/ptn.py's.

    >>> tolerance_for_sd(7.234), tolerance_for_sd(0.0)
    (0.72, 1.0)
    """
    if not np.isfinite(sd) or sd <= 0:
        return 1.0
    return float(f"{sd / 10:.2g}")


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


def listed(items: list[str]) -> str:
    """Items as a sentence lists them; with semicolons when an item holds a comma (a site such as "Miami, FL").

    >>> listed(["a"]), listed(["a", "b"]), listed(["a", "b", "c"])
    ('a', 'a and b', 'a, b and c')
    >>> listed(["Miami, FL", "Sand Point, AK"]), listed(["Miami, FL", "Sand Point, AK", "Piedmont, Italy"])
    ('Miami, FL and Sand Point, AK', 'Miami, FL; Sand Point, AK; and Piedmont, Italy')
    """
    if len(items) == 1:
        return items[0]
    if len(items) > 2 and any("," in i for i in items):
        return "; ".join(items[:-1]) + "; and " + items[-1]
    return ", ".join(items[:-1]) + " and " + items[-1]


def _leans(pairs: pd.DataFrame, unit: str, ci: str, first: str = "'s forecasts carry less benefit than ",
           then: str = "'s less than ") -> str:
    """The leaning pairs' clauses, grouped by the group the lean is against, each favoured group's advantage with
    its interval (turned round when that group is ``group_j``), the level said once: "X's forecasts carry less
    benefit than A's (by 5 MW; 98 % interval 4 to 6 MW) and B's (…); Y's less than C's (…)" (``first`` and
    ``then`` join the group to its list)."""
    i_favoured = (pairs["favours"].astype(str) == pairs["group_i"].astype(str)).to_numpy()
    against = np.where(i_favoured, pairs["group_j"], pairs["group_i"]).astype(str)
    favoured = pairs["favours"].astype(str).to_numpy()
    ofi = pairs["ofi"].to_numpy(dtype=float)
    lo, hi = pairs["ofi_ci_low"].to_numpy(dtype=float), pairs["ofi_ci_high"].to_numpy(dtype=float)
    gap = amount_texts(np.abs(ofi), unit).to_numpy()
    adv = range_texts(np.where(i_favoured, lo, -hi), np.where(i_favoured, hi, -lo), unit).to_numpy()
    adv[0] = f"{ci} {adv[0]}"
    items = np.char.add(np.char.add(np.char.add(np.char.add(favoured.astype(str), "'s (by "), gap.astype(str)),
                                    "; "), np.char.add(adv.astype(str), ")"))
    groups = list(dict.fromkeys(against))
    return "; ".join(g + (first if n == 0 else then) + listed(list(items[against == g])) for n, g in enumerate(groups))


def _ratios(pairs: pd.DataFrame, ci: str) -> str:
    """The less accurate sides' clauses, grouped by that group, the level said once: "H's mean CRPS is 2.1 to 2.8
    times A's (98 % interval) and 1.8 to 2.4 times B's; G's is …"."""
    worse, other = pairs["group_i"].astype(str).to_numpy(), pairs["group_j"].astype(str).to_numpy()
    low, high = pairs["ratio_ci_low"].round(3).astype(str), pairs["ratio_ci_high"].round(3).astype(str)
    items = (low + " to " + high + " times " + pd.Series(other, index=low.index) + "'s").to_numpy()
    items[0] += f" ({ci})"
    groups = list(dict.fromkeys(worse))
    return "; ".join((f"{g}'s mean CRPS is " if n == 0 else f"{g}'s is ") + listed(list(items[worse == g]))
                     for n, g in enumerate(groups))


def _open(pairs: pd.DataFrame, unit: str, band: tuple[float, float]) -> str:
    """The inconclusive pairs grouped by what kept them open: the forecast OFI's interval across the tolerance, the
    CRPS ratio's across the band (each pair with its interval), or a ``reason`` (each pair with its own)."""
    names = (pairs["group_i"].astype(str) + " vs " + pairs["group_j"].astype(str)).to_numpy(dtype=object)
    reason = pairs["reason"].astype(str).to_numpy(dtype=object)
    within = pairs["ofi_within_tolerance"].to_numpy(dtype=bool) & (reason == "")
    ofi = range_texts(pairs["ofi_ci_low"].to_numpy(dtype=float), pairs["ofi_ci_high"].to_numpy(dtype=float),
                      unit).to_numpy(dtype=object)
    ratio = (pairs["ratio_ci_low"].round(3).astype(str) + " to "
             + pairs["ratio_ci_high"].round(3).astype(str)).to_numpy(dtype=object)
    parts = []
    for head, rows, detail in (("the forecast OFI's interval reaches beyond the tolerance for ",
                                 ~within & (reason == ""), ofi),
                               (f"the CRPS ratio's interval reaches across the band {band[0]:g} to {band[1]:g} for ",
                                within, ratio),
                               ("", reason != "", reason)):
        if rows.any():
            parts.append(head + listed(list(names[rows] + " (" + detail[rows] + ")")))
    return "; ".join(parts)


def forecast_findings(verdicts: pd.DataFrame, unit: str = "", max_items: int = 3, kind: str = "group") -> str:
    """The verdict counts, then the first ``max_items`` pairs (algorithmic bias first) in one sentence per verdict:
    the pairs leaning against one group are said together, so no phrase is repeated pair by pair. Every interval is
    the adjusted one that decided the verdict. ``kind`` is what a group is ("site pairs" with "site").

    Group names are returned as given; escape them for wherever the text goes."""
    if verdicts.empty:
        return f"There are no {kind} pairs to compare."
    counts = verdicts["verdict"].value_counts()
    settings = verdicts.settings
    tol = "±" + amount_text(settings.tolerance, unit)
    head = (f"Of {len(verdicts):,} {kind} pairs: " + ", ".join(f"{counts.get(k, 0):,} {k}" for k in VERDICTS)
            + f" (tolerance {tol} for the forecast OFI; every claim at "
            f"α = {settings.alpha:g}, {adjustment(settings.adjust).controls}).")
    rank = verdicts["verdict"].map({v: k for k, v in enumerate(VERDICTS)})
    shown = pd.DataFrame(verdicts).assign(_rank=rank).sort_values("_rank", kind="stable").head(max_items)
    levels = getattr(verdicts, "levels", None)
    ci = f"{level_text(levels.ofi)} interval" if levels is not None and levels.ofi else "interval"
    said = [head]
    for verdict, pairs in shown.groupby("_rank", sort=True):
        word = VERDICTS[int(verdict)]
        if word == "algorithmic bias":
            said.append(f"Algorithmic bias: {_leans(pairs, unit, ci)}, beyond {tol} (benefit: the median "
                        "forecast's error in the declared direction).")
        elif word == "materiality unclear":
            short = _leans(pairs, unit, ci, first="'s forecasts fall short of ", then="'s of ")
            said.append(f"A real lean that may or may not exceed {tol}: {short}.")
        elif word == "systemic disparity":
            said.append(f"Systemic disparity, less accurate forecasts without a lean beyond {tol}: "
                        f"{_ratios(pairs, ci)}.")
        elif word == "no bias detected":
            between = listed(list(pairs["group_i"].astype(str) + " vs " + pairs["group_j"].astype(str)))
            said.append(f"No bias detected for {between}: the forecast OFI's {ci} inside {tol} and the CRPS "
                        "ratio's inside the band.")
        else:
            said.append(f"Cannot tell yet: {_open(pairs, unit, settings.band)}.")
    if len(verdicts) > len(shown):
        rest = len(verdicts) - len(shown)
        said.append(f"{rest:,} more pair{'s' if rest > 1 else ''} in the verdict table.")
    return " ".join(said)
