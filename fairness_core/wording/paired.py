"""A counterfactual test's answer in words (issue 54): which pairs of groups the model treats differently when only
the group's words change, by how many percentage points, and how that compares with what the model changes when
nothing meaningful changes (the null swap's flip rate).

Each sentence reads a table the library computed — :meth:`fairness_core.counterfactual.PairedAudit.pairs` and
``.omnibus()`` — and quotes the interval that decided each verdict, at its level. A difference of rates is written
in percentage points ("18.2 pp"), a difference of mean scores in the score's units.

>>> import pandas as pd
>>> pairs = pd.DataFrame({"group_i": ["A"], "group_j": ["B"], "n": [400], "only_i": [78], "only_j": [5],
...                       "difference": [0.1825], "difference_ci_low": [0.121], "difference_ci_high": [0.254],
...                       "verdict": ["material difference"], "favours": ["A"], "level": [0.95],
...                       "flip_rate": [0.2075]})
>>> print(answer(pairs, "decision", 0.05)[1])
A vs B: A was selected 18.2 pp more often (95 % interval 12.1 to 25.4 pp); of 400 cases, 78 selected A only and 5 B only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..common.text import counted
from ..common.vocabulary import check_alpha
from .levels import level_text

#: What a "hit" is for each kind of output, as the sentences say it, and the rate of hits.
SELECTED = {"decision": "selected", "rank": "ranked first"}
RATE = {"decision": "selection rates", "rank": "shares ranked first", "score": "mean scores"}


def points(x: float, digits: int = 1, signed: bool = False) -> str:
    """A difference of two rates in percentage points: ``0.1825`` → ``"18.2 pp"`` (``"+18.2 pp"`` when signed);
    undefined for NaN."""
    if x is None or not np.isfinite(x):
        return "undefined"
    value = x * 100
    sign = ("+" if value > 0 else "−" if value < 0 else "") if signed else ("−" if value < 0 else "")
    return f"{sign}{abs(value):.{digits}f} pp"


def _units(x: float, kind: str, unit: str) -> str:
    if kind != "score":
        return points(x)
    if x is None or not np.isfinite(x):
        return "undefined"
    return f"{'−' if x < 0 else ''}{abs(x):,.4g}{(' ' + unit) if unit else ''}"


def _interval(row: pd.Series, kind: str, unit: str) -> str:
    """The difference's interval, turned to read with the favoured group first (i − j, or j − i when j leads)."""
    low, high = float(row["difference_ci_low"]), float(row["difference_ci_high"])
    if float(row["difference"]) < 0:
        low, high = -high, -low
    if kind != "score":
        return f"{points(low).removesuffix(' pp')} to {points(high)}"
    return f"{_units(low, kind, '')} to {_units(high, kind, unit)}"


def percent(x: float) -> str:
    """A share as the workbench writes it: ``0.2075`` → ``"20.8 %"``."""
    return "undefined" if x is None or not np.isfinite(x) else f"{x * 100:.1f} %"


def pair_sentence(row: pd.Series, kind: str, unit: str = "") -> str:
    """One pair's difference in words, the favoured group first, with its interval at its level and, for decisions
    and ranks, the discordant cases behind it."""
    i, j, d = str(row["group_i"]), str(row["group_j"]), float(row["difference"])
    favoured, other = (i, j) if d >= 0 else (j, i)
    size = _units(abs(d), kind, unit)
    where = f"{level_text(float(row['level']))} interval {_interval(row, kind, unit)}"
    if kind == "score":
        return f"{i} vs {j}: {favoured}'s mean score is higher by {size} ({where}; {int(row['n']):,} cases)."
    said = SELECTED[kind]
    return (f"{i} vs {j}: {favoured} was {said} {size} more often ({where}); of {int(row['n']):,} cases, "
            f"{int(row['only_i']):,} {said} {i} only and {int(row['only_j']):,} {j} only.")


def answer(pairs: pd.DataFrame, kind: str, tolerance: float, baseline: tuple[str, str] | None = None,
           unit: str = "", shown: int = 3, alpha: float = 0.05, secondary: tuple[str, ...] = ()) -> list[str]:
    """The answer first: how many pairs differ materially (their difference's adjusted interval beyond
    ±``tolerance``), the ``shown`` largest of them in words — pairs of the ``secondary`` groups (null swaps) after
    the others — the other verdicts counted, and — with null swaps — each group's within-group flip rate and the
    pairs that flip more than within both of their groups (:func:`baseline_sentence`). Plain text, one sentence
    or paragraph per item (a page escapes it)."""
    total = len(pairs)
    verdict = pairs["verdict"].astype(str)
    material = pairs[verdict == "material difference"]
    later = (material["group_i"].isin(secondary).astype(int) + material["group_j"].isin(secondary)).to_numpy()
    material = material.iloc[np.lexsort((-material["difference"].abs().to_numpy(), later))]
    tol = _units(tolerance, kind, unit) if kind == "score" else points(tolerance, 3).replace(".000", "")
    what = RATE[kind]
    level = level_text(float(pairs["level"].iloc[0])) if total else ""
    if total == 0:
        return ["No pair of groups has a case answered for both."]
    if len(material):
        lead = (f"Changing only the group's words changed the model's answers materially in {len(material)} of "
                f"{counted(total, 'pair of groups')}: their difference of {what} lies beyond ±{tol} at the {level} adjusted "
                "level.")
    else:
        lead = (f"No pair of groups shows a material difference: in none of the {total} pairs does the difference "
                f"of {what} lie beyond ±{tol} at the {level} adjusted level.")
    out = [lead, *(pair_sentence(r, kind, unit) for _, r in material.head(shown).iterrows())]
    if len(material) > shown:
        out.append(f"… and {len(material) - shown} more: the table below has every pair.")
    counts = {w: int((verdict == w).sum()) for w in ("materiality unclear", "no material difference detected",
                                                     "inconclusive")}
    out.append(f"Of the others, {counts['materiality unclear']} differ but perhaps by less than ±{tol} (materiality "
               f"unclear), {counts['no material difference detected']} are shown within ±{tol} (no material "
               f"difference detected) and {counts['inconclusive']} are inconclusive at these numbers of cases.")
    if kind != "score":
        out.append(baseline_sentence(pairs, baseline, alpha))
    return out


def within_rates(pairs: pd.DataFrame) -> pd.Series:
    """Each group's within-group flip rate (the group against its own null swap), from the pairs' sides: the side
    with the most cases where they differ (an incomplete case is used wherever its pair is complete)."""
    sides = pd.concat([pd.DataFrame({"group": pairs[f"group_{s}"], "rate": pairs[f"baseline_flip_rate_{s}"],
                                     "n": pairs["n"]}) for s in ("i", "j")]).dropna(subset=["rate"])
    best = sides.sort_values("n", ascending=False, kind="stable").drop_duplicates("group")
    order = list(dict.fromkeys([*pairs["group_i"], *pairs["group_j"]]))
    return best.set_index("group")["rate"].reindex([g for g in order if g in set(best["group"])])


def baseline_sentence(pairs: pd.DataFrame, baseline: tuple[str, str] | None = None, alpha: float = 0.05) -> str:
    """How the pairs' flip rates compare with their own groups' null swaps (what the model changes when only the
    name changes, within one group): each group's within-group flip rate, then the pairs that flip more than within
    both of their groups — every side's interval above 0 at the table's one level (``pairs["level"]``, the level
    of every interval the page prints) — and the most telling one with the interval that decided. Without null
    swaps, what is missing. ``baseline`` is not needed (the pairs carry their baselines); ``alpha`` is checked."""
    check_alpha(alpha)
    if "baseline_flip_rate_i" not in pairs or not len(pairs):
        return ("No baseline: the flip rates (how often changing only the words changed the decision) are not read "
                "against what the model changes when nothing meaningful changes. Add a null swap of each group "
                "(other names of the same group, named 'X (null swap)').")
    level = level_text(float(pairs["level"].iloc[0]))
    rates = within_rates(pairs)
    listed = ", ".join(f"{percent(r)} ({g})" for g, r in rates.items())
    head = (f"Against the null swaps: within each group, swapping a name for another of the same group changed "
            f"{listed} of the decisions — what the model changes when nothing meaningful changes. Each pair is read "
            "against its own two groups' null swaps.")
    judged = pairs.dropna(subset=["flip_excess"])
    beyond = judged[judged["flips_beyond_baseline"].astype(bool)]
    if not len(beyond):
        top = judged.iloc[np.argsort(-judged["flip_excess_ci_low"].to_numpy(), kind="stable")].head(1)
        extra = "" if not len(top) else (
            f" The closest, {top.iloc[0]['group_i']} vs {top.iloc[0]['group_j']}, flips "
            f"{percent(top.iloc[0]['flip_rate'])}: {_excess(top.iloc[0], level)}.")
        return head + (f" No pair flips more often than within both of its groups at the {level} adjusted level."
                       + extra)
    r = beyond.iloc[np.argsort(-beyond["flip_excess_ci_low"].to_numpy(), kind="stable")].iloc[0]
    return head + (f" {len(beyond)} of {counted(len(pairs), 'pair')} flip more often than within both of their "
                   f"groups (every {level} adjusted interval above 0); the clearest, {r['group_i']} vs "
                   f"{r['group_j']}, flips {percent(r['flip_rate'])} of the same cases: {_excess(r, level)}.")


def _excess(row: pd.Series, level: str) -> str:
    """The deciding side's excess in words: over which group's null swap, with its interval at the table's level."""
    low = points(row["flip_excess_ci_low"], signed=True).removesuffix(" pp")
    return (f"{points(row['flip_excess'], signed=True)} over the {percent(row['baseline_flip_rate'])} within "
            f"{row['group_' + row['flip_excess_side']]} ({level} interval {low} to "
            f"{points(row['flip_excess_ci_high'], signed=True)})")


def variants_made(texts: int, groups: int, null_swaps: int, results: tuple[int, int] | None = None,
                  demo: bool = False) -> str:
    """What "Make the variants" made — ``texts`` base texts × ``groups`` groups, ``null_swaps`` of them null swaps —
    and, when the loaded ``results`` (cases, groups) are not these variants' answers, why, in one sentence more.

    >>> variants_made(3, 8, 4, (400, 8), demo=True).split(". ")[0]
    '24 variants: 3 base texts × 8 groups (4 groups and a null swap of each)'
    """
    real = groups - null_swaps
    kinds = ("" if not null_swaps else f" ({real} groups and a null swap of each)" if null_swaps == real else
             f" ({real} groups, {null_swaps} of them with a null swap)")
    out = f"{texts * groups:,} variants: {texts:,} base texts × {groups} groups{kinds}."
    if results is None or (results == (texts, groups) and not demo):
        return out
    cases, k = results
    if demo:
        return out + (f" They are not the loaded demo's {cases:,} × {k}: the demo's résumés are synthetic numbers with "
                      "no texts (scripts/make_counterfactual_demo.py), so these variants of the example texts above "
                      "show how its groups' variants are written, not the cases it scored.")
    return out + f" The loaded results ({cases:,} cases × {k} groups) are not these variants' answers."


__all__ = ["RATE", "SELECTED", "answer", "baseline_sentence", "pair_sentence", "percent", "points",
           "variants_made", "within_rates"]
