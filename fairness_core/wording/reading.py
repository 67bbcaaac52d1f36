"""Every plain-words sentence about a result, in one place.

The verdicts (each pair's reading, the table as people read it, the findings, the three questions),
the MATCH tests (one result, the whole table) and the inequality tab's readings (the link between
the generalized entropy index and OFI, what the index responds to). The numbers come from the
library; this module only words them. Group names are returned as given: escape them for wherever
the text goes.

It imports no module that builds an audit: an :class:`~fairness_core.audit.Audit` is read through
its ``groups`` and ``cms``.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Protocol, Sequence

import numpy as np
import pandas as pd

from ..common.vocabulary import check_alpha
from ..statistics import bias as bias_mod, verdicts as verdicts_
from ..common import text
from ..statistics.confusion import ConfusionMatrix
from .decisions import selection_findings, selection_reading
from ..statistics.verdicts import VERDICTS
from .levels import interval_label, level_text
from ..common.vocabulary import DEFAULT_ALPHA, adjustment

_STR = text.STR

#: Above this many pairs the readings leave the rows-needed counts to their columns (writing 10^5 numbers as
#: text would double the verdict table's time).
MAX_PAIRS_WITH_COUNTS = 5_000


class _Groups(Protocol):
    """What the readings need of an audit."""

    @property
    def groups(self) -> list[str]: ...

    @property
    def cms(self) -> Mapping[str, ConfusionMatrix]: ...


# --------------------------------------------------------------------------- the verdict table


def findings_first(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The verdict table with findings first (algorithmic bias, systemic disparity, no bias,
    inconclusive), each by adjusted OFI p: the order pages and the report list pairs in."""
    order = verdicts["verdict"].map({v: k for k, v in enumerate(VERDICTS)})
    return verdicts.iloc[np.lexsort((verdicts["ofi_p_adjusted"].to_numpy(), order.to_numpy()))]


def _ofi_text(o: float, lo: float, hi: float) -> str:
    return f"{o:+.3f} [{text.bound(lo, 0.0, 3, signed=True)}, {text.bound(hi, 0.0, 3, signed=True)}]"


def verdict_reading(verdicts: pd.DataFrame, max_rows: int | None = None) -> pd.DataFrame:
    """The verdict table as people read it: pair, OFI [CI], DI [CI], verdict and the plain-words reading
    first, then the numbers. The intervals are the adjusted ones that decided the verdict, labelled with
    their level. Sorted with findings first, at most ``max_rows`` rows (all when None). The page and the
    report show it. Four-fifths verdicts of decisions alone are read by :func:`selection_reading`."""
    if not verdicts.outcomes:
        return selection_reading(verdicts, max_rows)
    v = findings_first(verdicts)
    v = v if max_rows is None else v.head(max_rows)
    out = pd.DataFrame({
        "pair": v["group_i"].astype(str) + " vs " + v["group_j"].astype(str),
        f"OFI [{interval_label(verdicts, 'ofi')}]": [_ofi_text(o, lo, hi) for o, lo, hi in
                                                     zip(v["ofi"], v["ofi_ci_low"], v["ofi_ci_high"])],
        f"DI = P̂_i / P̂_j [{interval_label(verdicts, 'di')}]": [
            text.ratio_text(d, lo, hi) for d, lo, hi in zip(v["di"], v["di_ci_low"], v["di_ci_high"])],
        "verdict": v["verdict"], "reading": v["explanation"],
        "n_i": v["n_i"], "n_j": v["n_j"], "OFI p (adjusted)": v["ofi_p_adjusted"], "DI p (adjusted)": v["di_p_adjusted"],
        "detectable |OFI|": v["ofi_mde"], "more rows i": v["rows_needed_i"], "more rows j": v["rows_needed_j"],
        "OFI method": v["ofi_method"], "DI method": v["di_method"],
    })
    return out.reset_index(drop=True)


# --------------------------------------------------------------------------- the findings


def _n_of(row: pd.Series, group: str) -> int:
    return int(row["n_i"] if row["group_i"] == group else row["n_j"])


def _bias_sentences(found: pd.DataFrame, ofi_ci: str, tol: float, max_items: int) -> list[str]:
    """The largest material difference, and who is disadvantaged most often."""
    top = found.loc[found["ofi"].abs().idxmax()]
    loser = top["group_j"] if top["favours"] == top["group_i"] else top["group_i"]
    lo, hi = sorted((abs(top["ofi_ci_low"]), abs(top["ofi_ci_high"])))
    largest = (f"The largest material difference: relative to their actual labels, {top['favours']} "
               f"(n = {_n_of(top, top['favours']):,}) fares better than {loser} (n = {_n_of(top, loser):,}), "
               f"OFI = {abs(top['ofi']):.3f} in {top['favours']}'s favour ({ofi_ci} {lo:.3f} to {hi:.3f}, "
               f"beyond the tolerance {tol:g}).")
    losers = pd.Series(np.where(found["favours"] == found["group_i"], found["group_j"], found["group_i"]))
    worst = losers.value_counts().head(max_items)
    often = "Disadvantaged most often: " + "; ".join(
        f"{g} (in {c} of {len(found)} such pair{'s' if len(found) > 1 else ''})" for g, c in worst.items()) + "."
    return [largest, often]


def _unclear_sentence(unclear: pd.DataFrame, ofi_ci: str, tol: float) -> str:
    u = unclear.loc[unclear["ofi"].abs().idxmax()]
    return (f"{len(unclear)} pair(s) differ for real but may be too small to matter: e.g. {u['favours']} "
            f"fares better in {u['group_i']} vs {u['group_j']}, OFI = {u['ofi']:+.3f} ({ofi_ci} "
            f"{text.bound(u['ofi_ci_low'], 0.0, 3, True)} to {text.bound(u['ofi_ci_high'], 0.0, 3, True)}: "
            f"excludes 0, reaches inside ±{tol:g}).")


def _systemic_sentence(systemic: pd.DataFrame, di_ci: str, tol: float) -> str:
    s = systemic.loc[np.log(systemic["di"]).abs().fillna(np.inf).idxmax()]   # undefined DI: the largest gap
    di_txt = "undefined (one group selects nobody)" if np.isnan(s["di"]) else f"{s['di']:.2f}"
    return (f"{len(systemic)} pair(s) differ in selection rates without the model being at fault, e.g. "
            f"{s['group_i']} vs {s['group_j']}: DI = {di_txt} ({di_ci} "
            f"{text.bound(s['di_ci_low'], text.RATIO_NULLS, 2)} to {text.bound(s['di_ci_high'], text.RATIO_NULLS, 2)}) "
            "with OFI shown "
            f"to be within ±{tol:g}.")


def _inconclusive_sentence(open_: pd.DataFrame, max_items: int) -> str:
    sizes = pd.concat([open_[["group_i", "n_i"]].set_axis(["group", "n"], axis=1),
                       open_[["group_j", "n_j"]].set_axis(["group", "n"], axis=1)])
    small = sizes.drop_duplicates("group").nsmallest(max_items, "n")
    return (f"{len(open_):,} pair(s) are inconclusive: their intervals are too wide to call bias or its "
            "absence. The smallest groups involved: " + ", ".join(
                f"{g} (n = {n:,})" for g, n in zip(small["group"], small["n"]))
            + "; the table says how many more rows would settle each pair.")


def verdict_findings(verdicts: pd.DataFrame, max_items: int = 3, answers: Mapping[str, Any] | None = None) -> str:
    """What the verdict table says, in plain words, for any data: the counts, the largest OFI shown beyond
    the tolerance (who is disadvantaged, how sure), real but possibly immaterial differences, systemic
    disparities, and what keeps pairs inconclusive. Every interval quoted is the adjusted one that
    decided the verdict. With ``answers`` (:func:`three_questions`), the closing sentence agrees with the
    equal-opportunity answer (an error-rate gap shown there is named, never denied). A table of four-fifths
    verdicts from decisions alone is read by :func:`selection_findings`.

    Group names are returned as given; escape them for wherever the text goes.

    >>> from fairness_core import datasets
    >>> text = verdict_findings(datasets.load_demo("ricci_b").verdicts())
    >>> text.startswith("Of 3 group pairs: 0 algorithmic bias, 1 materiality unclear")
    True
    """
    v = verdicts
    if not v.outcomes:
        return selection_findings(v, max_items)
    if v.empty:
        return "There are no group pairs to compare."
    alpha, adjust, tol = v.settings.alpha, v.settings.adjust, v.settings.tolerance
    ofi_ci, di_ci = interval_label(v, "ofi"), interval_label(v, "di")
    counts = v["verdict"].value_counts()
    parts = [f"Of {len(v):,} group pairs: " + ", ".join(f"{counts.get(k, 0):,} {k}" for k in VERDICTS)
             + f" (tolerance ±{tol:g} for OFI; every claim at α = {alpha:g}, {adjustment(adjust).controls})."]
    found = v[v["verdict"] == "algorithmic bias"]
    if len(found):
        parts += _bias_sentences(found, ofi_ci, tol, max_items)
    unclear = v[v["verdict"] == "materiality unclear"]
    if len(unclear):
        parts.append(_unclear_sentence(unclear, ofi_ci, tol))
    systemic = v[v["verdict"] == "systemic disparity"]
    if len(systemic):
        parts.append(_systemic_sentence(systemic, di_ci, tol))
    open_ = v[v["verdict"] == "inconclusive"]
    if len(open_):
        parts.append(_inconclusive_sentence(open_, max_items))
    if not len(found) and not len(systemic) and not len(unclear):
        shown_gaps = [] if answers is None else [
            g for _, g in answers["equal_opportunity"]["largest"].iterrows() if g["differs"]]
        if shown_gaps:
            parts.append("No pair's OFI shows a net difference in how the model treats the groups relative to "
                         "their labels" + (" at these sample sizes" if len(open_) else "") + "; OFI nets favourable "
                         "errors against unfavourable ones, so it does not contradict the "
                         + " and ".join(sorted({g["rate"] for g in shown_gaps}))
                         + " gap shown under equal opportunity: the groups' errors differ in kind, not in net benefit.")
        else:
            parts.append("No pair shows a difference in how the model treats the groups relative to their labels"
                         + (" at these sample sizes." if len(open_) else "."))
    return " ".join(parts)


# --------------------------------------------------------------------------- each pair's reading


class _Pairs:
    """What every pair's reading is built from: names as text (each converted once) and the settings."""

    def __init__(self, df: pd.DataFrame) -> None:
        self.df = df
        self.adj = adjustment(df.settings.adjust).prefix
        self.tol = df.settings.tolerance
        self.ofi_ci, self.di_ci = interval_label(df, "ofi"), interval_label(df, "di")
        groups = pd.Index(pd.unique(np.concatenate([df["group_i"].to_numpy(), df["group_j"].to_numpy()])))
        as_text = np.array(groups.tolist(), dtype=_STR)   # each name converted once, then gathered per pair
        self.names_i = as_text[groups.get_indexer(df["group_i"])]
        self.names_j = as_text[groups.get_indexer(df["group_j"])]

    def column(self, name: str, rows: np.ndarray) -> np.ndarray:
        return self.df[name].to_numpy()[rows]

    def winner_loser(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        i_favoured = self.column("ofi", rows) > 0
        return (np.where(i_favoured, self.names_i[rows], self.names_j[rows]).astype(_STR),
                np.where(i_favoured, self.names_j[rows], self.names_i[rows]).astype(_STR))

    def settle(self, rows: np.ndarray, what: str) -> np.ndarray:
        more_i, more_j = self.column("rows_needed_i", rows), self.column("rows_needed_j", rows)
        # both branches as StringDType already: np.where of two str constants makes fixed-width text, whose
        # conversion cost more than the rest of the sentence (0.03 s per 10^5 rows)
        unreachable = np.array(" More rows at these rates would not settle it (not reachable).", dtype=_STR)
        if len(self.df) > MAX_PAIRS_WITH_COUNTS:   # the counts stay in their own columns: no 10^5 numbers as text
            return np.where(np.isnan(more_i), unreachable, np.array(
                f" The rows_needed columns say how many more rows, at the same rates, would {what}.", dtype=_STR))
        sentence = (" About " + text.counts(more_i) + " more rows of " + self.names_i[rows] + " and "
                    + text.counts(more_j) + " of " + self.names_j[rows] + ", at the same rates, would " + what + ".")
        return np.where(np.isnan(more_i), unreachable, sentence.astype(_STR))


def _bias_readings(p: _Pairs, rows: np.ndarray) -> np.ndarray:
    winner, loser = p.winner_loser(rows)
    return ("The model is at fault: measured against what their actual labels warrant, " + winner
            + " fares better than " + loser + f" by more than the tolerance {p.tol:g} (OFI's {p.ofi_ci} lies beyond "
            f"±{p.tol:g}).")


def _unclear_readings(p: _Pairs, rows: np.ndarray) -> np.ndarray:
    winner, loser = p.winner_loser(rows)
    return ("A real difference that may not matter: " + winner + " fares better than " + loser
            + f" relative to their labels (OFI's {p.ofi_ci} excludes 0, " + p.adj
            + text.p_values(p.column("ofi_p_adjusted", rows)) + f"), but the interval reaches inside "
            f"±{p.tol:g}, so the difference is not shown to be material."
            + p.settle(rows, f"tell whether it exceeds ±{p.tol:g}"))


def _systemic_readings(p: _Pairs, rows: np.ndarray) -> np.ndarray:
    i_more = p.column("di_ci_low", rows) > 1
    high = np.where(i_more, p.names_i[rows], p.names_j[rows]).astype(_STR)
    low = np.where(i_more, p.names_j[rows], p.names_i[rows]).astype(_STR)
    return (f"The model treats both groups alike relative to their labels (OFI's {p.ofi_ci} lies inside "
            f"±{p.tol:g}), but " + high + " is selected far more often than " + low
            + f" (DI's {p.di_ci} lies beyond the four-fifths band, " + p.adj
            + text.p_values(p.column("di_p_adjusted", rows))
            + "): the gap comes from different base rates, outside the algorithm.")


def verdict_explanations(df: pd.DataFrame) -> np.ndarray:
    """The plain-words reading of each pair's verdict (the numbers themselves sit in the row's columns): the
    verdict table's ``explanation`` column.

    Built with NumPy string ufuncs on each verdict's rows only, so 124,750 pairs take a fraction of a second.
    """
    p = _Pairs(df)
    verdict = df["verdict"].to_numpy()
    out = np.full(len(df), "", dtype=_STR)
    for name, words in (("algorithmic bias", _bias_readings), ("materiality unclear", _unclear_readings),
                        ("systemic disparity", _systemic_readings)):
        rows = np.flatnonzero(verdict == name)
        out[rows] = words(p, rows)
    tol, ofi_ci, di_ci = p.tol, p.ofi_ci, p.di_ci
    nobody = np.isnan(df["di_p"].to_numpy())
    out[(verdict == "no bias detected") & nobody] = (
        f"No algorithmic bias: OFI's {ofi_ci} lies inside ±{tol:g}; nobody is selected in either group, "
        "so the four-fifths rule does not apply.")
    out[(verdict == "no bias detected") & ~nobody] = (
        f"No algorithmic bias and no four-fifths violation: OFI's {ofi_ci} lies inside ±{tol:g} and DI's "
        f"{di_ci} inside 4/5–5/4.")
    inconclusive = verdict == "inconclusive"
    within = df["ofi_within_tolerance"].to_numpy()
    rows = np.flatnonzero(inconclusive & within)
    out[rows] = (f"Cannot tell yet: the model treats both groups alike relative to their labels (OFI's {ofi_ci} "
                 f"inside ±{tol:g}), but DI's {di_ci} reaches across the four-fifths line." + p.settle(rows, "settle it"))
    rows = np.flatnonzero(inconclusive & ~within)
    out[rows] = (f"Cannot tell yet: OFI's {ofi_ci} includes 0 and reaches beyond ±{tol:g}; the smallest |OFI| "
                 "these sizes would show beyond the tolerance is about " + text.fixed(p.column("ofi_mde", rows))
                 + "." + p.settle(rows, "settle it"))
    return out.astype(object)


# --------------------------------------------------------------------------- the three questions


def _ofi_answer(verdicts: pd.DataFrame, counts: pd.Series) -> str:
    """Is the algorithm at fault? The largest OFI shown beyond the tolerance, or what the pairs show instead."""
    bias = verdicts[verdicts["verdict"] == "algorithmic bias"]
    tol = verdicts.settings.tolerance
    if len(bias):
        top = bias.loc[bias["ofi"].abs().idxmax()]
        loser = top["group_j"] if top["favours"] == top["group_i"] else top["group_i"]
        lo, hi = sorted((abs(top["ofi_ci_low"]), abs(top["ofi_ci_high"])))
        return (f"Yes for {len(bias):,} of {len(verdicts):,} pairs: the largest, {loser} against {top['favours']}: "
                f"|OFI| = {abs(top['ofi']):.3f} ({interval_label(verdicts, 'ofi')} {lo:.3f} to {hi:.3f}, beyond "
                f"the tolerance {tol:g}).")
    unclear = int(counts.get("materiality unclear", 0))
    within = int(counts.get("systemic disparity", 0) + counts.get("no bias detected", 0))
    return (f"Not shown for any pair: no OFI interval lies beyond ±{tol:g}"
            + (f"; {within} pair(s) are shown within it" if within else "")
            + (f"; {unclear} pair(s) differ but may be immaterial" if unclear else "")
            + (f"; {int(counts.get('inconclusive', 0))} pair(s) are inconclusive" if counts.get("inconclusive")
               else "") + ".")


def four_fifths_pairs(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Every pair whose impact ratio is below 0.8 by point estimate, lowest first, with its adjusted interval
    and what the data say ("shown below 0.8", "cannot tell", "within the band after all")."""
    # The impact ratio of each pair is the lower selection rate over the higher, whichever way the table orients
    # the pair (a reference group selected less often gives DI > 1 against it); a group that selects nobody
    # against one that does has ratio 0.
    v = verdicts
    flip = (v["di"] > 1) | (v["di"].isna() & (v["di_ci_low"] > 0))
    with np.errstate(divide="ignore"):
        ratio = np.where(flip, np.where(v["di"].isna(), 0.0, 1 / v["di"]), v["di"])
        low = np.where(flip, 1 / v["di_ci_high"], v["di_ci_low"])
        high = np.where(flip, 1 / v["di_ci_low"], v["di_ci_high"])
    ff = pd.DataFrame({"lower-rate group": np.where(flip, v["group_j"], v["group_i"]),
                       "higher-rate group": np.where(flip, v["group_i"], v["group_j"]),
                       "n lower": np.where(flip, v["n_j"], v["n_i"]), "n higher": np.where(flip, v["n_i"], v["n_j"]),
                       "impact ratio": ratio, "ci_low": low, "ci_high": high, "p_adjusted": v["di_p_adjusted"],
                       "data say": np.where(high < bias_mod.FOUR_FIFTHS_LOW, "shown below 0.8",
                                            np.where(low >= bias_mod.FOUR_FIFTHS_LOW, "within the band after all",
                                                     "cannot tell"))})
    return ff[ff["impact ratio"] < bias_mod.FOUR_FIFTHS_LOW].sort_values("impact ratio").reset_index(drop=True)


def _four_fifths_answer(verdicts: pd.DataFrame, ff: pd.DataFrame) -> str:
    if not len(ff):
        return "No pair falls below 0.8 by point estimate."
    shown = int((ff["data say"] == "shown below 0.8").sum())
    worst = ff.iloc[0]
    return (f"{len(ff):,} pair(s) fall below 0.8 by point estimate, {shown} of them shown by the data "
            f"({interval_label(verdicts, 'di')}); the lowest: {worst['lower-rate group']} against "
            f"{worst['higher-rate group']}, impact ratio "
            f"{text.ratio_text(worst['impact ratio'], worst['ci_low'], worst['ci_high'])} "
            f"({worst['data say']}).")


def _equal_opportunity_answer(largest: pd.DataFrame) -> str:
    """The largest FNR and FPR gaps with their simultaneous intervals, in one sentence."""
    parts = []
    for _, g in largest.iterrows():
        word = "denied to qualified" if g["rate"] == "FNR" else "granted to unqualified"
        ci = (f"simultaneous {level_text(g['level'])} CI {text.bound(g['ci_low'], 0.0, 3, True)} to "
              f"{text.bound(g['ci_high'], 0.0, 3, True)}")
        if g["gap"] == 0:
            parts.append(f"no {g['rate']} gap in the data (the favourable decision {word} individuals equally "
                         f"often; {ci})")
            continue
        parts.append(f"the largest {g['rate']} gap (the favourable decision {word} individuals): {g['group_i']} "
                     f"{g['rate_i']:.1%} against {g['group_j']} {g['rate_j']:.1%}, a gap of {g['gap']:+.3f} ("
                     f"{ci}: " + ("shown" if g["differs"] else "not shown") + ")")
    sentence = "; ".join(parts) + "." if parts else "error rates are undefined for every pair."
    return sentence[0].upper() + sentence[1:]


def three_questions(audit: _Groups, verdicts: pd.DataFrame) -> dict[str, Any]:
    """The three questions an audit is judged by, each answered with its interval and verdict.

    - ``"ofi"``: is the algorithm at fault? The verdict counts and the largest OFI shown beyond the tolerance.
    - ``"four_fifths"``: every pair whose impact ratio DI = P̂_i / P̂_j is below 0.8 by point estimate, with
      its adjusted interval and whether the data can tell ("shown below 0.8", "cannot tell", or "within the
      band" when the interval says the gap is inside [0.8, 1.25] after all).
    - ``"equal_opportunity"``: the largest gap in false-negative rate (qualified individuals denied the
      favourable decision) and in false-positive rate, each with a simultaneous interval
      (:func:`fairness_core.verdicts.error_rate_gaps`).

    Returns the answers as tables and one sentence per question (``"text"``).
    """
    alpha = verdicts.settings.alpha
    counts = verdicts["verdict"].value_counts()
    ff = four_fifths_pairs(verdicts)
    ff_text = _four_fifths_answer(verdicts, ff)
    groups = list(getattr(audit, "known_groups", audit.groups))
    if not getattr(audit, "outcomes", True):
        needs = ("Needs outcomes: no outcome was observed, so whether the decisions were right for each person — "
                 "and hence OFI and the error rates — cannot be known from decisions alone.")
        empty = verdicts_.error_rate_gaps(groups, np.zeros((len(groups), 4)), alpha).iloc[:0]
        return {"ofi": {"counts": {k: int(counts.get(k, 0)) for k in verdicts_.SELECTION_VERDICTS}, "text": needs},
                "four_fifths": {"pairs": ff, "text": ff_text},
                "equal_opportunity": {"gaps": empty, "largest": empty, "text": needs},
                "text": {"Is the algorithm at fault (OFI)?": needs, "The four-fifths rule": ff_text,
                         "Equal opportunity (error rates)": needs}}
    ofi_text = _ofi_answer(verdicts, counts)
    gaps = verdicts_.error_rate_gaps(groups, np.array([audit.cms[g].as_array() for g in groups], dtype=float), alpha)
    largest = verdicts_.largest_gaps(gaps)
    eo_text = _equal_opportunity_answer(largest)
    return {"ofi": {"counts": {k: int(counts.get(k, 0)) for k in VERDICTS}, "text": ofi_text},
            "four_fifths": {"pairs": ff, "text": ff_text},
            "equal_opportunity": {"gaps": gaps, "largest": largest, "text": eo_text},
            "text": {"Is the algorithm at fault (OFI)?": ofi_text, "The four-fifths rule": ff_text,
                     "Equal opportunity (error rates)": eo_text}}


# --------------------------------------------------------------------------- MATCH


def match_explain(result: Any, group: str, reference_score: float, alpha: float = DEFAULT_ALPHA) -> str:
    """One plain sentence reading a MATCH result (:class:`fairness_core.match.MatchResult`): "at n = 11, a TPR
    of 0.30 against ... has p = ..."."""
    check_alpha(alpha)
    if not np.isfinite(result.p_value):
        return f"{group}: the MATCH test of {result.metric} is undefined: {result.note}"
    gap = result.observed - reference_score
    head = (f"At n = {result.n:,}, {group}'s {result.metric} of {result.observed:.3f} against the reference's "
            f"{reference_score:.3f} (a gap of {gap:+.3f}) has p = {result.p_value:.3g}")
    if result.method.startswith("two-sample"):
        if result.p_value >= alpha:
            return head + (" (two-sample test: both are samples): a gap this size between two samples of these "
                           "sizes is common, so the data do not show a difference.")
        return head + (" (two-sample test: both are samples): a gap this size would rarely arise between two samples "
                       "of these sizes by chance, so the difference is unlikely to be a small-sample accident.")
    if result.p_value >= alpha:
        return head + (f": a group this size drawn from the reference would land this far out "
                       f"{result.p_value:.0%} of the time, so the score alone does not show a difference.")
    return head + (": a group this size drawn from the reference would rarely land this far out, so the "
                   "difference is unlikely to be a small-sample accident.")


def match_findings(table: pd.DataFrame) -> str:
    """The MATCH table (:meth:`fairness_core.audit.Audit.match_table`) in plain words: how many
    scores differ beyond small-sample noise, which groups differ most, and which groups are too
    small to tell from the reference at all.

    >>> t = pd.DataFrame({"group": ["a", "a", "b", "b"], "n": [900, 900, 9, 9], "metric": ["PPR", "TPR"] * 2,
    ...                   "adjusted p-value": [1e-9, 0.2, 0.6, 0.9],
    ...                   "verdict": ["differs from the reference", "indistinguishable from the reference",
    ...                               "indistinguishable from the reference"] * 1 + ["undefined"]})
    >>> match_findings(t)
    '1 of 4 scores differ from their reference beyond what a group of that size would show by chance: a (n = 900) on PPR. Not distinguishable on any metric: b (n = 9).'
    """
    if table.empty:
        return "No MATCH tests to report."
    differs = table["verdict"].eq("differs from the reference")
    parts = [f"{int(differs.sum())} of {len(table)} scores differ from their reference beyond what a group of that "
             "size would show by chance"]
    if differs.any():
        hit = table[differs].groupby("group", sort=False).agg(n=("n", "first"), metrics=("metric", list),
                                                              p=("adjusted p-value", "min")).sort_values("p")
        shown = [f"{g} (n = {int(r.n):,}) on {', '.join(r.metrics)}" for g, r in hit.head(4).iterrows()]
        more = f" and {len(hit) - 4} more groups" if len(hit) > 4 else ""
        parts[0] += ": " + "; ".join(shown) + more
    quiet = table.groupby("group", sort=False).agg(n=("n", "first"), any_diff=("verdict", lambda v: (
        v == "differs from the reference").any()))
    quiet = quiet[~quiet["any_diff"]].sort_values("n")
    if len(quiet):
        names = ", ".join(f"{g} (n = {int(r.n):,})" for g, r in quiet.head(6).iterrows())
        parts.append(f"Not distinguishable on any metric: {names}{' …' if len(quiet) > 6 else ''}")
    return ". ".join(parts) + "."


# --------------------------------------------------------------------------- several models compared


def ci_text(row: pd.Series, col: str) -> str:
    """``row[col]`` with its interval ``[col_ci_low, col_ci_high]``, or "undefined"."""
    if not np.isfinite(row[col]):
        return "undefined"
    return f"{row[col]:.3f} [{row[f'{col}_ci_low']:.3f}, {row[f'{col}_ci_high']:.3f}]"


def fairest_model(table: pd.DataFrame, perf: str, label: str) -> str:
    """Which model of a :meth:`fairness_core.compare.Comparison.summary` is fairer by the largest |OFI| and at
    what cost in ``perf`` (a column, named ``label`` in words), in plain words (raw names: escape the result)."""
    t = table.reset_index(drop=True)
    a = t.loc[t["max_abs_ofi"].idxmin()]
    best = t.loc[t[perf].idxmin() if perf == "cost" else t[perf].idxmax()]
    level = str(a["interval_level"]).split(" simultaneous")[0]
    words = (f"Fairest by the largest |OFI|: {a['model']}, {ci_text(a, 'max_abs_ofi')} (simultaneous {level} "
            f"intervals; worst pair {a['worst_pair']}).")
    ties = [r for _, r in t.iterrows() if r["model"] != a["model"] and r["max_abs_ofi_ci_low"] <= a["max_abs_ofi_ci_high"]]
    if ties:
        words += (" The data cannot tell it from " + "; ".join(f"{r['model']} ({ci_text(r, 'max_abs_ofi')})" for r in ties)
                 + ": the intervals overlap (the paired comparison below tests a difference directly).")
    else:
        words += " Its interval lies below every other model's."
    if best["model"] == a["model"]:
        return words + f" It is also the best by {label}: {ci_text(a, perf)}."
    return (words + f" Its price: {label} {ci_text(a, perf)} against {ci_text(best, perf)} for {best['model']}, the best by "
            f"{label}" + (" (the intervals overlap)." if a[f"{perf}_ci_high"] >= best[f"{perf}_ci_low"]
                          and best[f"{perf}_ci_high"] >= a[f"{perf}_ci_low"] else "."))


def paired_differences(diff: pd.DataFrame, alpha: float, adjust: str, shown: int = 8) -> str:
    """The differences between two models (:meth:`fairness_core.compare.Comparison.paired`) that are significant
    after adjustment, in plain words (raw names: escape the result)."""
    check_alpha(alpha)
    sig = diff[diff["significant"]]
    how = adjustment(adjust).after
    if sig.empty:
        return f"No difference between the two models is significant {how} (α = {alpha:g})."
    items = [f"{r.what}: {r.difference:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}]" for r in sig.head(shown).itertuples()]
    more = f"; and {len(sig) - shown} more (in the table)" if len(sig) > shown else ""
    return (f"{len(sig)} of {len(diff)} differences are significant {how} (α = {alpha:g}; "
            f"{diff['interval_level'].iloc[0]} intervals): " + "; ".join(items) + more + ".")


def mitigation_held_out(before: pd.Series, after: pd.Series, objective: str, label: str, interval_level: str,
                        alpha: float) -> str:
    """What per-group thresholds did on the held-out rows: the largest |OFI| and the ``objective`` (named ``label``)
    with one shared threshold (``before``) and with the group thresholds (``after``), rows of a comparison
    summary, each with its interval (|OFI|'s at ``interval_level``, the objective's at 1 − ``alpha``)."""
    return (f"On the held-out rows the largest |OFI| goes from {ci_text(before, 'max_abs_ofi')} with one shared "
            f"threshold (fitted on the same fitting rows, best by {label}) to {ci_text(after, 'max_abs_ofi')} with "
            f"per-group thresholds; {label} from {ci_text(before, objective)} to {ci_text(after, objective)} "
            f"(intervals: {interval_level} for |OFI|, {1 - alpha:.0%} for {label}).")


def randomized_rule(gain: float, note: str, label: str) -> str:
    """How much a randomized rule would improve the objective (``label``) over deterministic thresholds, or why
    that was not computed (``note``; :attr:`fairness_core.mitigation.ThresholdRule.randomized_gain`)."""
    if math.isnan(gain):
        return "Randomized rule: " + note + "."
    return (f"A randomized rule (mixing thresholds at random within a group) would improve {label} by {gain:.4f} "
            f"on the fitting rows{' — nothing: these thresholds are as good' if gain < 5e-5 else ''}; the thresholds "
            "here are deterministic, so equal scores are always treated alike within a group.")


# --------------------------------------------------------------------------- the inequality tab


def ofi_link_reading(u: float, d: float) -> str:
    """What the generalized entropy index's group means have to do with OFI, for benefits whose mean is
    μ_g = u + d·B_g (:func:`fairness_core.entropy.ofi_link`). Markdown."""
    return (f"**The link to OFI.** With these benefits a group's mean benefit is μ_g = {u:g} + {d:g}·B_g, "
            f"where B = (FP − FN)/n is its marginal benefit, so **μ_i − μ_j = {d:g}·OFI**: OFI compares "
            "the very group means the between-group index is built from. The between-group part is "
            "the index of those means; OFI is their pairwise difference.")


def gei_landscape_reading(unit_cells: Sequence[str], b_plus: float) -> str:
    """What the index responds to at a fixed mean benefit (Utility as Fair Pricing, Theorem 3.2), for benefits
    of the form {b−, b+, 1} with the unit reward on ``unit_cells`` (:func:`fairness_core.entropy.unit_form`).
    Markdown."""
    diagonal = set(unit_cells) == {"TP", "TN"}
    trend = ("falls" if b_plus > 1 else "rises") if not np.isclose(b_plus, 1) else "does not move"
    lam_words = "accuracy" if diagonal else f"the share in {' and '.join(unit_cells)}"
    words = (f"Here the unit reward goes to {' and '.join(unit_cells)}, so λ is {lam_words}. Utility as Fair "
             f"Pricing, Theorem 3.2: the index is a function of the mean benefit μ and λ alone, and at a fixed μ it "
             f"{trend} linearly as λ grows (b+ = {b_plus:.3g} {'>' if b_plus > 1 else '<'} 1).")
    if diagonal:
        words += (" **With equal rewards on the diagonal the index tracks accuracy**: part of what it reports as "
                  "unfairness is plain error rate, so compare it between models of similar accuracy, or use that "
                  "paper's designs that put the unit reward on a row instead.")
    return words


__all__ = ["MAX_PAIRS_WITH_COUNTS", "findings_first", "verdict_reading", "verdict_findings", "verdict_explanations",
           "four_fifths_pairs", "three_questions", "match_explain", "match_findings", "ofi_link_reading",
           "gei_landscape_reading", "ci_text", "fairest_model", "paired_differences",
           "mitigation_held_out", "randomized_rule"]
