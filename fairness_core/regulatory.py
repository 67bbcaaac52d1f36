"""The regulator's summary: a bias audit in the form New York City's Local Law 144 asks for.

Local Law 144 (NYC Administrative Code § 20-870 ff., and the rules of the Department of Consumer and
Worker Protection, 6 RCNY § 5-300 ff.) asks a yearly bias audit of an automated employment decision
tool to publish, per category of sex, race/ethnicity and their intersections, the number of
individuals, the **selection rate** (binary decisions) or the **scoring rate** (scores: the share
scoring above the whole sample's median), and the **impact ratio**: the category's rate over the
highest rate. Categories under 2 % of the data may be left out of the ratios; individuals of an
unknown category are counted and reported.

:func:`ll144_summary` builds that table from an :class:`~fairness_core.audit.Audit` (or its rows),
and sets beside it what this workbench adds: each impact ratio's interval and, when outcomes were observed, the
OFI verdict of the category against the one of the highest rate, so a reader sees which ratios are noise and which
disparities are the algorithm's. An audit of decisions alone has no OFI columns: they need outcomes. Which
categories are in the ratios is decided by one rule (:func:`fairness_core.common.validation.under_share`), the one
the four-fifths verdicts and the selection-rate figure follow. docs/methods.md, "The regulator's summary", states the rules.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from .statistics import inference
from .audit import Audit
from .multiclass import MulticlassAudit
from .statistics.verdicts import DEFAULT_OFI_TOLERANCE, VerdictSettings, unpack_settings
from .wording.levels import level_text
from .common.vocabulary import DEFAULT_ALPHA, check_alpha
from .statistics.confusion import ConfusionMatrix
from .statistics.rows import RowData
from .common.validation import EXCLUDE_BELOW, UNKNOWN_CATEGORY, UNKNOWN_VALUES, under_share, unknown_key

#: Category values read as "unknown" (compared by :func:`fairness_core.validation.unknown_key`: case, spaces,
#: hyphens and trailing dots do not matter): blanks, "nan", "none" and every way of declining in
#: :data:`fairness_core.validation.UNKNOWN_VALUES` ("Decline to state", "Prefer not to say", "Not disclosed", …).
UNKNOWN = ("", "nan", "none", *UNKNOWN_VALUES)

#: What the status column says (the highest rate's row: ``MOST_SELECTED`` for selection rates, ``TOP_SCORING`` for
#: scoring rates).
IN_RATIOS, EXCLUDED, UNKNOWN_ROW, MOST_SELECTED = ("in the impact ratios", "excluded: under {share} of the data",
                                                   "unknown category: not in the impact ratios",
                                                   "most selected (impact ratio 1 by definition)")
TOP_SCORING = "highest scoring rate (impact ratio 1 by definition)"

#: The workbench's columns that need outcomes: absent from the summary of an audit of decisions alone.
OFI_COLUMNS = ("OFI", "OFI verdict")

#: The name of the row that pools every individual whose category is unknown.
UNKNOWN_NAME = "unknown"


def ll144_summary(audit_or_rows: Audit | RowData | MulticlassAudit, *, scores: npt.ArrayLike | None = None,
                  score_name: str | None = None, categories: Sequence[str] | None = None, exclude_below: float = EXCLUDE_BELOW,
                  alpha: float = DEFAULT_ALPHA, unknown: Iterable[str] = UNKNOWN,
                  tolerance: float | VerdictSettings = DEFAULT_OFI_TOLERANCE, adjust: str = "holm") -> pd.DataFrame:
    """The Local Law 144 bias-audit summary, with each impact ratio's interval (and, with outcomes, its OFI verdict).

    Parameters
    ----------
    audit_or_rows : Audit, RowData or MulticlassAudit
        An audit (its confusion matrices; its rows when ``scores`` are given) or row-level data alone
        (one attribute: the rows' groups). A :class:`~fairness_core.multiclass.MulticlassAudit` (a tool that
        sorts people into several classes) gives the table once per class — the rate of being placed in it and
        its impact ratio, as the rules ask of a tool that classifies into groups — and, with an order, once per
        cut ("Medium or better"; without outcomes the first cut, the favourable class alone, is its class's rows
        and is not repeated), in two leading columns ``classification`` and ``basis`` ("class" or "cut");
        with outcomes the cut rows carry the OFI verdict of the cut, the class rows none (a class in the middle
        of an order has no direction). ``scores`` are not taken with it.
    scores : array-like, optional
        One score per row of the audit's rows (or of ``audit_or_rows``): the table then gives the
        **scoring rate**, the share of a category scoring *strictly above* the median of the whole
        sample (every row, unknown categories included); a score equal to the median is not above it.
        The OFI verdict then judges "scored above the median" as the decision, against the rows' labels.
        Without scores: the **selection rate** (TP + FP)/n, the rate of the favourable decision in the
        audit's direction (for an audit whose positive prediction was declared a harm, that is the
        model's *negative* prediction; a note says so).
    score_name : str, optional
        What the scores are (e.g. the score column's name), with ``scores`` only: kept in
        ``attrs["score"]`` and named by :func:`rules_text` beside the scoring rate.
    categories : sequence of attribute names, optional
        The attributes to summarize (e.g. ``("sex", "race")``): each alone (:meth:`Audit.marginal`) and,
        with two or more, their intersection. Default: every attribute of the audit; an audit of one
        attribute is summarized by its groups.
    exclude_below : float
        Categories whose n is under this share of all individuals (unknowns included) are listed as
        excluded, with n and rate but no impact ratio. A share of exactly ``exclude_below`` is kept.
        0 excludes nothing.
    alpha : float
        The impact ratio's interval is at level 1 − ``alpha`` (per ratio, not adjusted); the OFI
        verdicts are at ``alpha`` with ``adjust`` across each table's pairs, as
        :meth:`Audit.verdicts`.
    unknown : iterable of str
        Category values that mean "unknown", compared after stripping spaces and ignoring case. In an
        intersection, a category is unknown when any of its parts is. Every unknown category of an
        attribute is pooled into one row named "unknown", counted and reported, never in the ratios.
    tolerance, adjust : as :meth:`Audit.verdicts`. A :class:`~fairness_core.verdicts.VerdictSettings` may stand in
        place of ``tolerance``: its tolerance, alpha and adjustment are then the ones used.

    Returns
    -------
    DataFrame
        One row per category: ``categories of`` (the attribute, or "sex × race" for an intersection),
        ``category``, ``n``, ``share of data``, ``selection rate`` or ``scoring rate``, ``impact ratio``
        (the rate over the highest rate among the categories in the ratios; NaN for excluded and
        unknown categories, and for all when the highest rate is 0), ``status``, then the workbench's
        additions: ``impact ratio CI low``/``high`` (against the category of the highest rate, level in
        ``attrs["level"]``, labelled in ``attrs["interval"]``) and, only when the audit has outcomes, ``OFI`` and
        ``OFI verdict`` (the category against that one). The highest rate's status reads "most selected" (or
        "highest scoring rate" for scores). The categories in the ratios are those :func:`under_share` keeps. ``attrs`` also holds ``rate`` (the rate column's
        name), ``notes`` (in words: what is counted, the exclusions, the unknowns), ``median`` (scores)
        and the settings.

    Raises
    ------
    ValueError
        Naming the bad argument: scores without rows, a score name without scores or of the wrong length or not finite, an unknown
        attribute, ``exclude_below`` outside [0, 1), ``alpha`` outside (0, 1).

    Examples
    --------
    >>> from fairness_core import ConfusionMatrix as CM
    >>> a = Audit({"F": CM(30, 10, 10, 50), "M": CM(45, 5, 15, 35), "X": CM(1, 0, 0, 1)}, positive_is="benefit")
    >>> s = ll144_summary(a)
    >>> s[["category", "n", "selection rate", "impact ratio"]].round(3).values.tolist()
    [['F', 100, 0.4, 0.667], ['M', 100, 0.6, 1.0], ['X', 2, 0.5, nan]]
    >>> s["status"].tolist()[2]
    'excluded: under 2 % of the data'
    """
    if isinstance(audit_or_rows, MulticlassAudit):
        if scores is not None or score_name is not None:
            raise ValueError("scores are not taken with a MulticlassAudit: its classes are the decisions")
        return _classes_summary(audit_or_rows, categories=categories, exclude_below=exclude_below, alpha=alpha,
                                unknown=unknown, tolerance=tolerance, adjust=adjust)
    tolerance, alpha, adjust = unpack_settings(tolerance, alpha, adjust)
    if not 0 <= exclude_below < 1:
        raise ValueError(f"exclude_below must be a share in [0, 1), got {exclude_below!r}")
    check_alpha(alpha)
    if score_name is not None and scores is None:
        raise ValueError(f"score_name {score_name!r} names scores, but no scores were given")
    audit = _as_audit(audit_or_rows)
    unknown_keys = {unknown_key(u) for u in unknown}
    median = None
    rate_name = "selection rate"
    if scores is not None:
        audit, median = _scored(audit, scores)
        rate_name = "scoring rate"
    attributes = _attributes(audit, categories)
    total = audit.total().n
    blocks = [(a, audit.marginal(a)) for a in attributes] if len(audit.attributes) else [(_label(audit), audit)]
    if len(attributes) > 1:
        blocks.append((" × ".join(attributes), _intersection(audit, attributes)))
    level = 1 - alpha
    frames = [_block(name, block, total, rate_name, exclude_below, alpha, unknown_keys, tolerance, adjust)
              for name, block in blocks]
    out = pd.concat(frames, ignore_index=True)
    if not audit.has_outcomes:   # OFI compares decisions with outcomes: no column for what cannot be computed
        out = out.drop(columns=list(OFI_COLUMNS))
    out.attrs.update(rate=rate_name, level=level, interval=f"{level_text(level)} CI, per ratio (not adjusted)",
                     alpha=alpha, tolerance=tolerance, adjust=adjust, exclude_below=exclude_below,
                     median=median, outcomes=audit.has_outcomes, score=None if scores is None else (score_name or None), notes=_notes(audit, rate_name, median, exclude_below, out))
    return out


def _classes_summary(audit: MulticlassAudit, **options: object) -> pd.DataFrame:
    """:func:`ll144_summary` of every class of ``audit`` (the rate of being placed in it), then of every cut."""
    decided = audit.decisions()
    parts = [("class", c, decided.one_vs_rest(c, positive_is="benefit")) for c in audit.classes]
    if audit.ordered:
        cuts = list(zip(audit.cuts, audit.cut_classes))
        # without outcomes the first cut (the favourable end alone) repeats that class's rows: left out
        parts += [("cut", label, audit.at_cut(c)) for label, c in (cuts if audit.has_outcomes else cuts[1:])]
    frames = []
    for basis, label, binary in parts:
        table = ll144_summary(binary, **options)  # type: ignore[arg-type]
        frames.append(table.assign(classification=label, basis=basis))
    out = pd.concat(frames, ignore_index=True)
    out = out[["classification", "basis", *[c for c in out.columns if c not in ("classification", "basis")]]]
    out.attrs.update({k: v for k, v in frames[0].attrs.items() if k != "notes"})
    out.attrs["outcomes"] = audit.has_outcomes
    out.attrs["notes"] = [
        f"A tool that sorts people into classes ({audit.direction}): the rate of each class is the share of a "
        "category placed in it, and its impact ratio that share over the highest share of the class"
        + (", in the direction of the data: for an unfavourable class a ratio under 1 favours the category."
           if audit.favourable else ".")
        + (" Each cut (a class or any more favourable one) is reported as a selection as well"
           + ("." if audit.has_outcomes else f", but the first, {audit.cuts[0]!r}, which is that class's rows.")
           if audit.ordered else ""),
        *dict.fromkeys(n for f in frames for n in f.attrs.get("notes", []) if "favourable decision" not in n)]
    return out


def rules_text(summary: pd.DataFrame) -> str:
    """The rules the summary follows, in one paragraph (the page's caption and the report's note)."""
    share = _share(summary.attrs.get("exclude_below", EXCLUDE_BELOW))
    rate = summary.attrs.get("rate", "selection rate")
    if summary.attrs.get("score"):
        rate = f"{rate} (of the score “{summary.attrs['score']}”)"
    return (f"Local Law 144's form: n and {rate} per category; impact ratio = "
            f"the category's rate over the highest rate among the categories in the ratios. Categories under {share} "
            f"of all individuals (exactly {share} is kept) are excluded from the ratios and listed as excluded; "
            f"individuals of an unknown category are counted in one row, not in the ratios. Added by this "
            f"workbench: each ratio's interval against the category of the highest rate "
            f"({summary.attrs.get('interval', '95 % CI')}"
            + ("), and the OFI verdict of the category against it (an interval across 1 means the ratio may "
               "be noise; \"algorithmic bias\" means the model, not the base rates, treats the category worse). "
               if summary.attrs.get("outcomes", True) else "; an interval across 1 means the ratio may be noise). ")
            + " ".join(summary.attrs.get("notes", [])))


def _as_audit(audit_or_rows: Audit | RowData) -> Audit:
    if isinstance(audit_or_rows, Audit):
        return audit_or_rows
    if isinstance(audit_or_rows, RowData):
        rows = dataclasses.replace(audit_or_rows, groups=np.asarray(audit_or_rows.groups, dtype=object).astype(str))
        return Audit(_cms(rows.groups, rows.y, rows.y_pred), source="rows", rows=rows)
    raise ValueError(f"audit_or_rows must be an Audit or RowData, got {type(audit_or_rows).__name__}")


def _cms(groups: np.ndarray, y: np.ndarray, decided: np.ndarray) -> dict[str, ConfusionMatrix]:
    """One confusion matrix per group (in order of first appearance), vectorized over the rows."""
    names, first, index = np.unique(np.asarray(groups, dtype=object).astype(str), return_index=True,
                                    return_inverse=True)
    cell = 2 * (~np.asarray(y, dtype=bool)) + (~np.asarray(decided, dtype=bool))   # tp 0, fn 1, fp 2, tn 3
    counts = np.bincount(index.ravel() * 4 + cell, minlength=4 * len(names)).reshape(-1, 4)
    return {str(names[k]): ConfusionMatrix(*map(int, counts[k])) for k in np.argsort(first, kind="stable")}


def _scored(audit: Audit, scores: npt.ArrayLike) -> tuple[Audit, float]:
    """The audit with "scored strictly above the whole sample's median" as each row's decision, and the median."""
    if audit.rows is None:
        raise ValueError("scores need the audit's rows (labels and groups per row); this audit has only counts")
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1 or len(s) != len(audit.rows.y):
        raise ValueError(f"scores must be one number per row: {len(audit.rows.y)} rows, got shape {s.shape}")
    if not np.isfinite(s).all():
        raise ValueError(f"scores must be finite numbers; {int((~np.isfinite(s)).sum())} are not")
    median = float(np.median(s))
    counted = _cms(audit.rows.groups, audit.rows.y, s > median)
    cms = {g: counted[g] for g in audit.groups if g in counted}   # the audit's order
    values = None if audit.group_values is None else {g: audit.group_values[g] for g in cms}
    return dataclasses.replace(audit, cms=cms, rows=None, group_values=values), median


def _attributes(audit: Audit, categories: Sequence[str] | None) -> tuple[str, ...]:
    if categories is None:
        return audit.attributes
    asked = (categories,) if isinstance(categories, str) else tuple(categories)
    if not audit.attributes:
        if asked and tuple(asked) != tuple(audit.group_columns):
            raise ValueError(f"categories {asked!r}: this audit has a single attribute "
                             f"({', '.join(audit.group_columns) or 'its groups'})")
        return ()
    bad = [c for c in asked if c not in audit.attributes]
    if bad or not asked:
        raise ValueError(f"categories must name some of the audit's attributes ({', '.join(audit.attributes)}), "
                         f"got {asked!r}")
    return tuple(dict.fromkeys(asked))


def _label(audit: Audit) -> str:
    return ", ".join(audit.group_columns) or "group"


def _intersection(audit: Audit, attributes: tuple[str, ...]) -> Audit:
    """The audit's groups pooled to the intersections of ``attributes`` (the audit itself when it has no others)."""
    assert audit.group_values is not None
    if attributes == tuple(audit.group_columns):
        return audit
    ks = [audit.group_columns.index(a) for a in attributes]
    pooled: dict[str, np.ndarray] = {}
    values: dict[str, tuple[str, ...]] = {}
    for g, cm in audit.cms.items():
        parts = tuple(audit.group_values[g][k] for k in ks)
        name = " & ".join(parts)
        pooled[name] = pooled.get(name, 0) + cm.as_array()
        values[name] = parts
    unknown = {n for g in audit.unknown for n in [" & ".join(audit.group_values[g][k] for k in ks)]
               if UNKNOWN_CATEGORY in n.split(" & ")}
    pooled_cms = {n: ConfusionMatrix(*map(int, c)) for n, c in pooled.items()}
    return Audit(pooled_cms, source=audit.source, positive_outcome=audit.positive_outcome, group_columns=attributes,
                 positive_is=audit.positive_is, group_values=values, outcomes=audit.outcomes,
                 unknown=tuple(n for n in pooled_cms if n in unknown))


def _block(name: str, audit: Audit, total: int, rate_name: str, exclude_below: float, alpha: float,
           unknown_keys: set[str], tolerance: float, adjust: str) -> pd.DataFrame:
    """The summary of one attribute (or one intersection): its categories, then the pooled unknowns."""
    values = audit.group_values or {g: (g,) for g in audit.groups}
    is_unknown = {g: g in audit.unknown or any(unknown_key(v) in unknown_keys for v in values[g])
                  for g in audit.groups}
    known = [g for g in audit.groups if not is_unknown[g]]
    cells = np.array([audit.cms[g].as_array() for g in known], dtype=float).reshape(-1, 4)
    n = cells.sum(axis=1)
    selected = cells[:, 0] + cells[:, 2]
    unknown_cells = sum((audit.cms[g].as_array() for g in audit.groups if is_unknown[g]), np.zeros(4))
    excluded = under_share(n, total, exclude_below)   # the one rule of who is compared (the verdicts' too)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = selected / n
    ratio = np.full(len(known), np.nan)
    low, high = np.full(len(known), np.nan), np.full(len(known), np.nan)
    ofi, verdict = np.full(len(known), np.nan), np.full(len(known), "", dtype=object)
    status = np.where(excluded, EXCLUDED.format(share=_share(exclude_below)), IN_RATIOS).astype(object)
    kept = np.flatnonzero(~excluded)
    if len(kept):
        top = kept[np.argmax(rate[kept])]   # the first of tied highest rates
        status[top] = MOST_SELECTED if rate_name == "selection rate" else TOP_SCORING
        if rate[top] > 0:
            ratio[kept] = rate[kept] / rate[top]
            others = kept[kept != top]
            if len(others):
                lo, hi = inference.di_pairs(selected[others], n[others], selected[top], n[top]).bounds(alpha / 2)
                low[others], high[others] = lo, hi
        if len(kept) > 1 and audit.has_outcomes:
            in_ratios = Audit({known[k]: audit.cms[known[k]] for k in kept}, positive_is=audit.positive_is)
            v = in_ratios.verdicts(tolerance, alpha=alpha, adjust=adjust, reference=known[top])
            v = v[v["group_j"] == known[top]].set_index("group_i")
            for k in kept[kept != top]:
                ofi[k], verdict[k] = v.loc[known[k], "ofi"], v.loc[known[k], "verdict"]
    shown = [" & ".join(values[g]) for g in known]   # the values: "F", not the marginal's "sex = F"
    frame = pd.DataFrame({"categories of": name, "category": shown, "n": n.astype(int), "share of data": n / total,
                          rate_name: rate, "impact ratio": ratio, "status": status, "impact ratio CI low": low,
                          "impact ratio CI high": high, "OFI": ofi, "OFI verdict": verdict})
    if unknown_cells.sum() > 0:
        un = int(unknown_cells.sum())
        frame.loc[len(frame)] = {"categories of": name, "category": UNKNOWN_NAME, "n": un, "share of data": un / total,
                                 rate_name: (unknown_cells[0] + unknown_cells[2]) / un, "impact ratio": np.nan,
                                 "status": UNKNOWN_ROW, "impact ratio CI low": np.nan, "impact ratio CI high": np.nan,
                                 "OFI": np.nan, "OFI verdict": ""}
    return frame


def _share(x: float) -> str:
    return f"{x * 100:g} %"


def _notes(audit: Audit, rate_name: str, median: float | None, exclude_below: float, out: pd.DataFrame) -> list[str]:
    notes = []
    if median is None:
        if audit.positive_is == "harm":
            notes.append(f"The model's positive prediction was declared a harm: the selection rate counts the "
                         f"favourable decision ({audit.positive_outcome}), i.e. the model's negative prediction, "
                         "as Local Law 144 counts selection for the favourable outcome.")
        else:
            notes.append(f"The selection rate counts the favourable decision: {audit.direction}.")
    else:
        notes.append(f"The scoring rate is the share scoring strictly above the whole sample's median "
                     f"({median:.6g}); a score equal to it is not above it."
                     + (" The OFI verdicts take 'scored above the median' as the decision, against the labels."
                        if audit.has_outcomes else ""))
    excluded = out[out["status"].str.startswith("excluded")]
    if len(excluded):
        notes.append(f"{len(excluded)} categor{'y' if len(excluded) == 1 else 'ies'} under {_share(exclude_below)} "
                     "of the data excluded from the impact ratios (listed with their n and rate).")
    unknowns = out.loc[out["category"].eq(UNKNOWN_NAME) & out["status"].eq(UNKNOWN_ROW)]
    if len(unknowns):
        notes.append(f"{int(unknowns['n'].max()):,} individual(s) of unknown category counted and reported, "
                     "not in the impact ratios.")
    top = out["status"].isin([MOST_SELECTED, TOP_SCORING])
    if top.any() and out[rate_name][top].eq(0).any():
        notes.append("Nobody is selected in some attribute's categories: its impact ratios are undefined.")
    return notes


__all__ = ["ll144_summary", "rules_text", "UNKNOWN", "EXCLUDE_BELOW"]
