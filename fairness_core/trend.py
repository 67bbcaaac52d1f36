"""A model over time: the verdicts of each period and whether each pair's OFI changed between periods.

The audits of one model (:meth:`fairness_core.store.AuditStore.history`) form a series by period. Two
consecutive periods are independent samples, so the change of a pair's OFI, Δ = OFI_after − OFI_before,
gets a MOVER-D interval (Newcombe; Zou & Donner) built from each period's own OFI interval
(:func:`fairness_core.inference.ofi_pairs`, itself MOVER from each group's B limits):

    L = Δ̂ − √((OFÎ_a − l_a)² + (u_b − OFÎ_b)²),   U = Δ̂ + √((u_a − OFÎ_a)² + (OFÎ_b − l_b)²)

with (l, u) each period's bounds at the same one-sided level. The p-value of H0: Δ = 0 is the interval's
dual: the smallest two-sided level at which the interval excludes 0, found by bisection on the level. The
changes of all pairs and all consecutive periods are one family, adjusted by Holm (or as asked); a change
is flagged significant when its adjusted p-value is below α. The adjustment amounts to one per-change error
rate a (:func:`fairness_core.verdicts.critical_level`: p < a exactly when the adjusted p < α), so the
adjusted interval printed beside each change is the one at level 1 − a, labelled with that level: it
excludes 0 exactly when the change is flagged. tests/test_store.py checks the interval's coverage and the
test's size by simulation, and that agreement over many random series.

A series of audits of amounts (:class:`~fairness_core.continuous.ContinuousAudit`) gives the trend of OFI in the
outcome's units, and a series of ordered classes (:class:`~fairness_core.multiclass.MulticlassAudit`) the trend of
the ordinal OFI in tiers, by the same MOVER-D from each period's interval of the difference of mean benefits
(:class:`fairness_core.statistics.amounts.MeanPairs`; a pair too skewed to tell in either period has no change
interval). A series mixes no kinds: periods of yes/no decisions and of amounts are refused in one sentence.

>>> from fairness_core import ConfusionMatrix as CM
>>> from fairness_core.audit import Audit
>>> q1 = Audit({"a": CM(300, 20, 90, 590), "b": CM(300, 25, 85, 590)}, positive_is="benefit")
>>> q2 = Audit({"a": CM(300, 20, 90, 590), "b": CM(250, 120, 40, 590)}, positive_is="benefit")
>>> t = series_changes([("2026-Q1", q1), ("2026-Q2", q2)])
>>> c = t.changes.iloc[0]
>>> c["group_i"], c["group_j"], round(float(c["change"]), 2), bool(c["ci_low"] > 0), bool(c["became_bias"])
('a', 'b', 0.14, True, True)
>>> t.verdicts[["period", "verdict"]].values.tolist()
[['2026-Q1', 'no bias detected'], ['2026-Q2', 'algorithmic bias']]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
import numpy.typing as npt
import pandas as pd

from .statistics import inference
from .audit import Audit, NEEDS_OUTCOMES, NeedsOutcomes
from .continuous import DEFAULT_BAND, ContinuousAudit
from .multiclass import MulticlassAudit
from .statistics.amounts import MeanPairs
from .statistics.verdicts import DEFAULT_OFI_TOLERANCE, VerdictSettings, critical_level, unpack_settings
from .wording.levels import level_text
from .common.vocabulary import DEFAULT_ALPHA, adjustment, check_alpha

FloatArray = npt.NDArray[np.float64]

#: Columns of each period's verdicts kept in :attr:`Trend.verdicts` (besides ``period``).
VERDICT_COLUMNS = ("group_i", "group_j", "n_i", "n_j", "ofi", "ofi_ci_low", "ofi_ci_high", "di", "di_ci_low",
                   "di_ci_high", "verdict", "favours")
#: The same for a series of amounts (the mean prediction ratio in place of DI, and why a pair has no verdict) and
#: of ordered classes (no ratio: the ordinal OFI asks none).
AMOUNT_VERDICT_COLUMNS = ("group_i", "group_j", "n_i", "n_j", "ofi", "ofi_ci_low", "ofi_ci_high", "ratio",
                          "ratio_ci_low", "ratio_ci_high", "verdict", "favours", "reason")
TIER_VERDICT_COLUMNS = ("group_i", "group_j", "n_i", "n_j", "ofi", "ofi_ci_low", "ofi_ci_high", "verdict", "favours",
                        "reason")
#: Each kind of audit in words, for the sentence that refuses a series mixing them.
KIND_WORDS = {"binary": "yes/no decisions", "continuous": "amounts", "multiclass": "classes"}


@dataclass(frozen=True)
class Trend:
    """What :func:`series_changes` finds: ``periods`` in order, ``verdicts`` (one row per period and pair,
    the columns of :data:`VERDICT_COLUMNS`, oriented as :meth:`Audit.verdicts` orients them) and
    ``changes`` (one row per pair present in two consecutive periods: period_before, period_after, group_i,
    group_j, ofi_before, ofi_after, change, ci_low, ci_high (the 1 − α interval), ci_low_adjusted,
    ci_high_adjusted (the interval at the adjustment's critical level, ``level_adjusted``: it excludes 0
    exactly when the change is significant), interval_level (that level in words, e.g. "Holm-adjusted
    99.2 % CI"), p, p_adjusted, significant (p_adjusted < α), verdict_before, verdict_after, became_bias).
    OFI in ``changes`` is B_i − B_j for the pair as named there, in the kind's units (``kind``, ``unit``); the
    verdicts of a series of amounts have :data:`AMOUNT_VERDICT_COLUMNS`, of ordered classes
    :data:`TIER_VERDICT_COLUMNS`."""

    periods: list[str]
    verdicts: pd.DataFrame
    changes: pd.DataFrame
    tolerance: float
    alpha: float
    adjust: str
    level_adjusted: float = 0.95
    #: "binary", "continuous" (OFI in the outcome's units, ``unit``) or "multiclass" (the ordinal OFI, in tiers).
    kind: str = "binary"
    unit: str = ""


def _parts(cells: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """FP, FN and n of an (m, 4) array of [tp, fn, fp, tn]."""
    return cells[:, 2], cells[:, 1], cells.sum(axis=1)


def ofi_changes(before_i: npt.ArrayLike, before_j: npt.ArrayLike, after_i: npt.ArrayLike, after_j: npt.ArrayLike,
                alpha: float = DEFAULT_ALPHA) -> dict[str, FloatArray]:
    """The change of OFI = B_i − B_j between two independent samples, for many pairs at once.

    Each argument is an (m, 4) array of cells [tp, fn, fp, tn] (one row per pair). Returns ``estimate``
    (OFI after − OFI before), ``ci_low``/``ci_high`` (MOVER-D at confidence 1 − ``alpha``), ``p_value``
    (two-sided, H0: no change; the interval's dual), ``ofi_before`` and ``ofi_after``. ``alpha`` is in (0, 0.5)
    (:func:`~fairness_core.vocabulary.check_alpha`).

    >>> r = ofi_changes([[30, 5, 5, 60]], [[30, 5, 5, 60]], [[30, 5, 5, 60]], [[30, 5, 5, 60]])
    >>> float(r["estimate"][0]), bool(r["ci_low"][0] < 0 < r["ci_high"][0]), float(r["p_value"][0])
    (0.0, True, 1.0)
    """
    alpha = check_alpha(alpha)
    change = _Changes.of_cells(before_i, before_j, after_i, after_j)
    low, high = change.bounds(alpha / 2)
    return {"estimate": change.estimate, "ci_low": low, "ci_high": high, "ofi_before": change.ofi_before,
            "ofi_after": change.ofi_after, "p_value": change.p_value()}


class _Changes:
    """The change of OFI between two independent samples for many pairs: the estimate, its MOVER-D bounds at
    any one-sided level and the two-sided p-value dual to them. ``before`` and ``after`` are each period's pairs
    (anything with ``estimate`` and ``bounds(gamma)``: :class:`fairness_core.inference.OFIPairs` for yes/no
    decisions, :class:`fairness_core.statistics.amounts.MeanPairs` of the benefits for amounts and tiers); a pair
    whose period has no interval (too skewed to tell) has no change interval and no p-value (NaN)."""

    def __init__(self, before: Any, after: Any) -> None:
        self.before, self.after = before, after
        self.ofi_before, self.ofi_after = np.ravel(before.estimate), np.ravel(after.estimate)
        self.estimate = self.ofi_after - self.ofi_before

    @classmethod
    def of_cells(cls, before_i: npt.ArrayLike, before_j: npt.ArrayLike, after_i: npt.ArrayLike,
                 after_j: npt.ArrayLike) -> "_Changes":
        """The changes of binary OFI from (m, 4) arrays of cells [tp, fn, fp, tn], one row per pair."""
        bi, bj, ai, aj = (np.atleast_2d(np.asarray(a, dtype=float)) for a in (before_i, before_j, after_i, after_j))
        return cls(inference.ofi_pairs(*_parts(bi), *_parts(bj)), inference.ofi_pairs(*_parts(ai), *_parts(aj)))

    def bounds(self, gamma: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Lower and upper bounds, each one-sided at ``gamma`` (the two-sided interval at 1 − 2γ)."""
        oa, ob, est = self.ofi_after, self.ofi_before, self.estimate
        la, ua = (b.ravel() for b in self.after.bounds(gamma))
        lb, ub = (b.ravel() for b in self.before.bounds(gamma))
        low = est - np.sqrt((oa - la) ** 2 + (ub - ob) ** 2)
        high = est + np.sqrt((ua - oa) ** 2 + (ob - lb) ** 2)
        return low, high

    def p_value(self) -> FloatArray:
        """Two-sided p of H0: no change, the bounds' dual (p < γ exactly when the 1 − γ interval excludes 0)."""
        size = self.estimate.size
        p_above = _dual_p(lambda g: self.bounds(g)[0], size)      # H0: Δ <= 0, rejected when L > 0
        p_below = _dual_p(lambda g: -self.bounds(g)[1], size)     # H0: Δ >= 0, rejected when U < 0
        untold = np.isnan(np.add(*self.bounds(0.25)))             # a period too skewed to tell: no test
        return np.where(untold, np.nan, np.minimum(1.0, 2 * np.minimum(p_above, p_below)))


def _dual_p(excess: Any, size: int, steps: int = 40) -> FloatArray:
    """The smallest one-sided level γ at which ``excess(γ) > 0`` (excess rises with γ), by bisection on log γ
    between :data:`inference.P_FLOOR` and 0.5."""
    lo_g, hi_g = np.log(inference.P_FLOOR), np.log(0.5)
    at_floor, at_half = excess(np.full(size, inference.P_FLOOR)), excess(np.full(size, 0.5))
    p = np.where(at_floor > 0, inference.P_FLOOR, 0.5)
    todo = np.flatnonzero((at_floor <= 0) & (at_half > 0))
    if todo.size:
        lo, hi = np.full(todo.size, lo_g), np.full(todo.size, hi_g)   # excess(lo) <= 0 < excess(hi)
        for _ in range(steps):
            mid = (lo + hi) / 2
            gamma = np.full(size, 0.5)
            gamma[todo] = np.exp(mid)
            up = excess(gamma)[todo] > 0
            lo, hi = np.where(up, lo, mid), np.where(up, mid, hi)
        p[todo] = np.exp(hi)
    return p


def _kind(audit: Any) -> str | None:
    for kind, cls in (("binary", Audit), ("continuous", ContinuousAudit), ("multiclass", MulticlassAudit)):
        if isinstance(audit, cls):
            return kind
    return None


def _entries(history: Iterable[Any]) -> list[tuple[str, Any, Any]]:
    out: dict[str, tuple[Any, Any]] = {}
    for item in history:
        if isinstance(item, tuple) and len(item) == 2:
            period, audit, saved = item[0], item[1], None
        else:
            period, audit, saved = getattr(item, "period", None), getattr(item, "audit", None), item
        if _kind(audit) is None:
            raise ValueError("history holds saved audits (AuditStore.history) or (period, audit) pairs, the audits "
                             f"an Audit, a ContinuousAudit or a MulticlassAudit; got {type(item).__name__}")
        if not isinstance(period, str) or not period:
            raise ValueError("every audit in a series needs a period")
        out.pop(period, None)
        out[period] = (audit, saved)      # a period saved twice: the later save counts
    return [(p, a, s) for p, (a, s) in out.items()]


def _one_kind(entries: list[tuple[str, Any, Any]]) -> str:
    """The series' one kind, or a ValueError in one sentence naming the periods of each kind."""
    kinds: dict[str, list[str]] = {}
    for period, audit, _ in entries:
        kinds.setdefault(str(_kind(audit)), []).append(period)
    if len(kinds) > 1:
        raise ValueError("a trend compares periods of one kind of audit, and this series mixes "
                         + " with ".join(f"{KIND_WORDS[k]} (period{'s' if len(p) > 1 else ''} {', '.join(p)})"
                                         for k, p in kinds.items())
                         + ": save each kind under a model name of its own")
    return next(iter(kinds), "binary")


def _amount_series(entries: list[tuple[str, Any, Any]], kind: str) -> tuple[list[tuple[str, ContinuousAudit]], str]:
    """Each period's audit of the benefit as an amount, and its unit: an amount audit as it is; an audit of ordered
    classes as its ordinal audit (tiers), refused without an order, without outcomes, or with other classes than the
    series' first period."""
    if kind == "continuous":
        return [(p, a) for p, a, _ in entries], ""
    if blind := [p for p, a, _ in entries if not a.has_outcomes]:
        raise NeedsOutcomes(f"the trend of OFI {NEEDS_OUTCOMES} (period(s) {', '.join(blind)} hold decisions alone)")
    if loose := [p for p, a, _ in entries if not a.ordered]:
        raise ValueError(f"the trend of the ordinal OFI needs an order of the classes (period(s) {', '.join(loose)} "
                         "have none): audit each class against the rest (one_vs_rest) and follow those")
    first = entries[0][1]
    if other := [p for p, a, _ in entries if (a.classes, a.favourable) != (first.classes, first.favourable)]:
        raise ValueError(f"the periods' tiers differ (period(s) {', '.join(other)} against "
                         f"{' < '.join(first.classes)}, favourable {first.favourable[0]}): a change in tiers would "
                         "compare unlike scales")
    return [(p, a.ordinal_audit()) for p, a, _ in entries], "tiers"


def series_changes(history: Iterable[Any], tolerance: float | VerdictSettings | None = None, alpha: float | None = None,
                   adjust: str | None = None) -> Trend:
    """Each period's verdicts and each pair's change of OFI between consecutive periods.

    ``history``: saved audits oldest first (:meth:`AuditStore.history`), or ``(period, audit)`` pairs in
    order; a period given twice counts once, with its later audit. ``tolerance``, ``alpha`` and ``adjust``
    default to the settings the latest saved audit was saved with (else the verdicts' defaults); a
    :class:`~fairness_core.verdicts.VerdictSettings` may stand in place of ``tolerance``. Pairs are
    named in the earlier period's group order; a pair missing from either period has no change. Audits of
    decisions alone have no OFI: a series holding one raises :class:`~fairness_core.audit.NeedsOutcomes`.

    Every period must be of one kind (a ValueError in one sentence otherwise): yes/no decisions (:class:`Audit`),
    amounts (:class:`~fairness_core.continuous.ContinuousAudit`: OFI and the tolerance in the outcome's units, the
    latest saved audit's unit and band) or ordered classes with outcomes and the same tiers
    (:class:`~fairness_core.multiclass.MulticlassAudit`: the ordinal OFI, in tiers).
    """
    entries = _entries(history)
    kind = _one_kind(entries)
    if kind == "binary" and (blind := [p for p, a, _ in entries if not a.has_outcomes]):
        raise NeedsOutcomes(f"the trend of OFI {NEEDS_OUTCOMES} (period(s) {', '.join(blind)} hold decisions alone)")
    tolerance, alpha, adjust = unpack_settings(tolerance, alpha, adjust)
    last = entries[-1][2] if entries else None
    tolerance = tolerance if tolerance is not None else getattr(last, "tolerance", DEFAULT_OFI_TOLERANCE)
    alpha = alpha if alpha is not None else getattr(last, "alpha", DEFAULT_ALPHA)
    adjust = adjust if adjust is not None else getattr(last, "adjust", "holm")
    check_alpha(alpha)
    unit, columns_kept = "", VERDICT_COLUMNS
    if kind == "binary":
        series: list[tuple[str, Any]] = [(p, a) for p, a, _ in entries]
        judge = lambda a: a.verdicts(tolerance, alpha=alpha, adjust=adjust)   # noqa: E731
    else:
        series, unit = _amount_series(entries, kind)
        band = getattr(last, "band", DEFAULT_BAND) if kind == "continuous" else None
        unit = getattr(last, "unit", "") if kind == "continuous" else unit
        columns_kept = AMOUNT_VERDICT_COLUMNS if kind == "continuous" else TIER_VERDICT_COLUMNS
        judge = lambda a: a.verdicts(tolerance, alpha=alpha, adjust=adjust, band=band,   # noqa: E731
                                     unit=unit if kind == "continuous" else "")
    verdicts, by_period = [], {}
    for period, audit in series:
        v = judge(audit)
        by_period[period] = {frozenset((i, j)): verdict for i, j, verdict in
                             zip(v["group_i"], v["group_j"], v["verdict"])}
        v = v[list(columns_kept)].copy()
        v.insert(0, "period", period)
        verdicts.append(v)
    rows, pairs = [], []
    for (p0, a0), (p1, a1) in zip(series, series[1:]):
        shared = [g for g in a0.groups if g in a1.groups]
        for k, gi in enumerate(shared):
            for gj in shared[k + 1:]:
                rows.append({"period_before": p0, "period_after": p1, "group_i": gi, "group_j": gj})
                pairs.append((a0, a1, gi, gj))
    columns = ["period_before", "period_after", "group_i", "group_j", "ofi_before", "ofi_after", "change",
               "ci_low", "ci_high", "ci_low_adjusted", "ci_high_adjusted", "interval_level", "p", "p_adjusted",
               "significant", "verdict_before", "verdict_after", "became_bias"]
    changes = pd.DataFrame(rows, columns=columns[:4])
    critical = float(alpha)
    if rows:
        change = _changes(kind, pairs)
        p_values = change.p_value()
        # The adjustment amounts to one per-change error rate a (p < a exactly when the adjusted p < α): the
        # adjusted interval is at 1 − a, so it excludes 0 exactly when the change is flagged significant.
        critical = critical_level(p_values, alpha, adjust)
        low, high = change.bounds(alpha / 2)
        low_adj, high_adj = change.bounds(critical / 2)
        p_adj = inference.adjust_p_values(p_values, adjust)
        changes = changes.assign(ofi_before=change.ofi_before, ofi_after=change.ofi_after, change=change.estimate,
                                 ci_low=low, ci_high=high, ci_low_adjusted=low_adj, ci_high_adjusted=high_adj,
                                 interval_level=f"{adjustment(adjust).prefix}{level_text(1 - critical)} CI",
                                 p=p_values, p_adjusted=p_adj, significant=p_adj < alpha)
        changes["verdict_before"] = [by_period[p][frozenset((i, j))] for p, i, j in
                                     zip(changes["period_before"], changes["group_i"], changes["group_j"])]
        changes["verdict_after"] = [by_period[p][frozenset((i, j))] for p, i, j in
                                    zip(changes["period_after"], changes["group_i"], changes["group_j"])]
        changes["became_bias"] = ((changes["verdict_after"] == "algorithmic bias")
                                  & (changes["verdict_before"] != "algorithmic bias"))
    else:
        changes = pd.DataFrame(columns=columns)
    verdict_table = (pd.concat([pd.DataFrame(v) for v in verdicts], ignore_index=True) if verdicts
                     else pd.DataFrame(columns=["period", *columns_kept]))
    return Trend(periods=[p for p, _ in series], verdicts=verdict_table, changes=changes,
                 tolerance=float(tolerance), alpha=float(alpha), adjust=adjust,
                 level_adjusted=1 - critical, kind=kind, unit=unit)


def _changes(kind: str, pairs: list[tuple[Any, Any, str, str]]) -> _Changes:
    """The changes of every (period before, period after, group i, group j): from the confusion matrices of yes/no
    decisions, from each group's benefit moments (amounts, tiers)."""
    if kind == "binary":
        c = np.asarray([[a0.cms[gi].as_array(), a0.cms[gj].as_array(), a1.cms[gi].as_array(), a1.cms[gj].as_array()]
                        for a0, a1, gi, gj in pairs], dtype=float)
        return _Changes.of_cells(c[:, 0], c[:, 1], c[:, 2], c[:, 3])
    sides = []
    for when in (0, 1):   # the before periods' pairs, then the after periods': one MeanPairs each
        moments, index_i, index_j = [], [], []
        audits = list(dict.fromkeys(id(p[when]) for p in pairs))
        by_id = {id(p[when]): p[when] for p in pairs}
        offset, start = 0, {}
        for key in audits:
            start[key] = offset
            moments.append(by_id[key].moments["benefit"])
            offset += len(by_id[key].groups)
        joined = moments[0]
        for m in moments[1:]:
            joined = type(m)(*(np.concatenate([getattr(joined, f), getattr(m, f)]) for f in ("n", "mean", "m2", "m3")))
        for p in pairs:
            a = p[when]
            index_i.append(start[id(a)] + a.groups.index(p[2]))
            index_j.append(start[id(a)] + a.groups.index(p[3]))
        sides.append(MeanPairs(joined.take(index_i), joined.take(index_j)))
    return _Changes(*sides)


__all__ = ["AMOUNT_VERDICT_COLUMNS", "TIER_VERDICT_COLUMNS", "Trend", "ofi_changes", "series_changes"]
