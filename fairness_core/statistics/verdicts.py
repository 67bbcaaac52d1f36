"""The verdict for every pair of groups: three-sided decisions at one multiplicity-adjusted level.

For a pair (i, j) the Objective Fairness Index Δ = B_i − B_j is compared with the user's tolerance
T, the size of a difference that matters (docs/methods.md, "Verdicts"). Each pair can support one of
three OFI claims (Goeman, Solari & Stijnen, *Three-sided hypothesis testing*):

- **beyond ±T** (Δ > T or Δ < −T): the difference is material — *algorithmic bias*;
- **within ±T** (|Δ| < T): the model treats the groups alike up to the tolerance;
- **≠ 0**: a real difference, whatever its size.

Each kind of claim is a family of tests across the pairs, adjusted by the user's method (Holm,
Benjamini–Hochberg or none). For each family the adjustment is equivalent to a *critical level*
``a_F``: a pair's claim is made exactly when its unadjusted p-value is below ``a_F``
(:func:`critical_level`). The verdicts are read from ONE interval per pair, at level 1 − a with
``a = min(a_F)`` over the three families: every claim made is then a claim its own family's
procedure makes (so each family keeps its error rate), and the interval printed beside a verdict
is exactly the one that decided it. Disparate impact gets the same treatment against the
four-fifths band [4/5, 5/4].

The verdicts:

``algorithmic bias``      OFI's adjusted interval lies beyond +T or beyond −T.
``materiality unclear``   OFI's adjusted interval excludes 0 but reaches across ±T: a real difference
                          that may or may not be material.
``systemic disparity``    OFI's interval lies inside ±T and DI's lies beyond the four-fifths band.
``no bias detected``      OFI's interval inside ±T and DI's inside the band (or nobody is selected).
``inconclusive``          otherwise, with the rows per group that would settle it at the same rates.

Pairs are oriented so that group j is selected at least as often as group i (DI = PPR_i / PPR_j ≤ 1,
the impact ratio of the four-fifths rule), or j is the ``reference`` group when one is given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import stats

from . import bias, inference
from ..common.vocabulary import adjustment, check_alpha

FloatArray = npt.NDArray[np.float64]

#: What the verdict column can say, in the order pages count and list them.
VERDICTS = ("algorithmic bias", "materiality unclear", "systemic disparity", "no bias detected", "inconclusive")

#: What the four-fifths verdict of a pair says when no outcome was observed (decisions alone): the impact
#: ratio's adjusted interval below the band (or above it, against a named reference), across its edge but
#: excluding 1, inside the band, or none of these.
SELECTION_VERDICTS = ("adverse impact", "materiality unclear", "no adverse impact detected", "inconclusive")

#: Default |OFI| below which the two groups' marginal benefits count as equal.
DEFAULT_OFI_TOLERANCE = 0.05

#: Past this many more rows per group a pair is "not reachable at these rates".
MAX_ROWS_NEEDED = 1e9

#: Power used for the detectable-difference column.
POWER = 0.8


@dataclass(frozen=True)
class VerdictSettings:
    """Everything that decides a verdict, in one frozen object (checked once, here).

    tolerance : |OFI| at or below which two groups' marginal benefits count as equal, in [0, 2].
    alpha : every claim's error rate, in (0, 0.5) (:func:`fairness_core.vocabulary.check_alpha`).
    adjust : the multiplicity adjustment across pairs (a key of :data:`fairness_core.vocabulary.ADJUSTMENTS`).
    ofi_method, di_method : the interval methods ("auto" picks by group size).
    band : the band of the ratio (DI, or an amount audit's mean-prediction ratio) inside which no disparity is
        claimed; the four-fifths band [4/5, 5/4] by default.
    amounts : the OFI is a difference of amounts in the outcome's units (:mod:`fairness_core.continuous`), so the
        tolerance is any finite value >= 0, not one in [0, 2].

    >>> VerdictSettings(tolerance=0.02, alpha=0.1)
    VerdictSettings(tolerance=0.02, alpha=0.1, adjust='holm', ofi_method='auto', di_method='auto')
    """

    tolerance: float = 0.05
    alpha: float = 0.05
    adjust: str = "holm"
    ofi_method: str = "auto"
    di_method: str = "auto"
    band: tuple[float, float] = field(default=(bias.FOUR_FIFTHS_LOW, bias.FOUR_FIFTHS_HIGH), repr=False)
    amounts: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        _check_settings(self.tolerance, self.alpha, self.adjust, bounded=not self.amounts)
        low, high = (float(x) for x in self.band)
        if not (0 < low < 1 < high < np.inf):
            raise ValueError(f"band must be (low, high) with 0 < low < 1 < high, got {self.band!r}")
        object.__setattr__(self, "band", (low, high))
        object.__setattr__(self, "tolerance", float(self.tolerance))
        object.__setattr__(self, "alpha", float(self.alpha))


def unpack_settings(tolerance: Any, alpha: Any, adjust: Any) -> tuple[Any, Any, Any]:
    """The convention of every function that judges (``Audit.verdicts``, ``ll144_summary``, ``series_changes``,
    ``AuditStore.save``): a :class:`VerdictSettings` may stand in place of ``tolerance``, and then its tolerance,
    alpha and adjustment are the ones used; otherwise the three values are returned as given (each function
    checks them as it always has).

    >>> unpack_settings(VerdictSettings(0.02, 0.1, "bh"), 0.05, "holm")
    (0.02, 0.1, 'bh')
    >>> unpack_settings(0.03, None, None)
    (0.03, None, None)
    """
    if isinstance(tolerance, VerdictSettings):
        return tolerance.tolerance, tolerance.alpha, tolerance.adjust
    return tolerance, alpha, adjust


@dataclass(frozen=True)
class VerdictLevels:
    """The levels a verdict table's intervals were read at: ``ofi`` and ``di`` (1 − the decision level of each, the
    level of the adjusted intervals printed beside the verdicts; ``ofi`` None without outcomes), each kind of
    claim's critical level (``ofi_families``, ``di_families``), the unadjusted level ``plain`` = 1 − α, and the
    number of ``pairs``."""

    ofi: float | None
    di: float
    ofi_families: dict[str, float]
    di_families: dict[str, float]
    plain: float
    pairs: int


class VerdictTable(pd.DataFrame):
    """The verdict of every pair of groups: a DataFrame (one row per pair, the columns documented by
    :meth:`fairness_core.audit.Audit.verdicts`) that also carries what the numbers mean — ``settings``
    (:class:`VerdictSettings`), ``levels`` (:class:`VerdictLevels`), ``reference`` (the group every pair is oriented
    against, or None) and ``outcomes`` (False: the four-fifths verdicts of decisions alone). Rows and columns taken
    from it keep them; ``table`` is the plain DataFrame. Nothing of its meaning lives in ``attrs``."""

    _metadata = ["settings", "levels", "reference", "outcomes"]

    @property
    def _constructor(self):  # type: ignore[no-untyped-def]
        return VerdictTable

    @classmethod
    def of(cls, frame: pd.DataFrame, settings: VerdictSettings, levels: VerdictLevels, reference: str | None,
           outcomes: bool) -> "VerdictTable":
        table = cls(frame)
        table.settings, table.levels, table.reference, table.outcomes = settings, levels, reference, outcomes
        return table

    @property
    def table(self) -> pd.DataFrame:
        """The verdicts as a plain DataFrame."""
        return pd.DataFrame(self)


def critical_level(p_values: npt.ArrayLike, alpha: float, adjust: str) -> float:
    """The per-test level ``a`` of an adjustment: ``p < a`` exactly when the adjusted p < ``alpha``.

    Holm rejects the R smallest p-values, and those are exactly the p-values below α/(m − R);
    Benjamini–Hochberg's R rejections are those below R·α/m; "none" is α. The returned level is
    moved, where floating point demands it, to lie strictly above every rejected p-value and at or
    below every other one, so the equivalence holds exactly. NaN p-values are not tests.

    >>> critical_level([0.001, 0.02, 0.3], 0.05, "holm")   # two rejected: α / (3 − 2)
    0.05
    >>> critical_level([0.02, 0.03, 0.3], 0.05, "holm")    # none rejected: Bonferroni
    0.016666666666666666
    """
    check_alpha(alpha)
    p = np.asarray(p_values, dtype=float)
    return _critical_level(p, None, alpha, adjust)


def _critical_level(p: FloatArray, adjusted: FloatArray | None, alpha: float, adjust: str) -> float:
    """:func:`critical_level` of ``p``, given its adjusted p-values when they are at hand (NaN where p is)."""
    tested = ~np.isnan(p)
    p = p[tested]
    m = p.size
    if m == 0 or adjust == "none":
        return float(alpha)
    rejected = _rejected(p, alpha, adjust) if adjusted is None else adjusted[tested] < alpha
    r = int(rejected.sum())
    if adjust == "holm":
        a = alpha / (m - r) if r < m else alpha
    else:
        a = max(r, 1) * alpha / m
    if r:
        a = max(a, float(np.nextafter(p[rejected].max(), np.inf)))
    if r < m:
        a = min(a, float(p[~rejected].min()))
    return float(a)


def _rejected(p: FloatArray, alpha: float, adjust: str) -> npt.NDArray[np.bool_]:
    """``adjust_p_values(p, adjust) < alpha`` (p without NaN), sorting only the p-values below ``alpha``: a larger
    one is never rejected (Holm's and BH's factors are at least 1), and the smaller ones hold the first ranks, so
    their adjusted values are those of the full sort."""
    candidates = np.flatnonzero(p < alpha)
    order = candidates[np.argsort(p[candidates], kind="stable")]
    m, ranks = p.size, np.arange(1, order.size + 1)
    if adjust == "holm":
        adjusted = np.maximum.accumulate((m - ranks + 1) * p[order])
    else:
        adjusted = np.minimum.accumulate((m / ranks * p[order])[::-1])[::-1]
    rejected = np.zeros(p.size, dtype=bool)
    rejected[order] = np.minimum(adjusted, 1.0) < alpha
    return rejected


def _two_sided(p_above: FloatArray, p_below: FloatArray) -> FloatArray:
    return np.minimum(1.0, 2 * np.minimum(p_above, p_below))


def _three_families(pairs: inference.OFIPairs | inference.DIPairs, null: float, low: float, high: float, alpha: float,
                    adjust: str, labels: tuple[str, str, str]):  # type: ignore[no-untyped-def]
    """The three claims about each pair's value θ — differs from ``null``, beyond [low, high], within it — as
    families of tests with their critical levels; the decision level a = the smallest; and the bounds at a and
    at α (each one-sided at half the level). Returns ((p against null, beyond, within), {label: level}, a,
    bounds at a, bounds at α, the adjusted p against null)."""
    p_null = pairs.p_value(null)
    p_beyond = _two_sided(pairs.p_value(high, "above"), pairs.p_value(low, "below"))
    p_within = np.minimum(1.0, 2 * np.maximum(pairs.p_value(low, "above"), pairs.p_value(high, "below")))
    adjusted_null = inference.adjust_p_values(p_null, adjust)
    levels = {label: _critical_level(p, adjusted, alpha, adjust)
              for label, p, adjusted in zip(labels, (p_null, p_beyond, p_within), (adjusted_null, None, None))}
    a = min(levels.values())
    low_a, high_a, low_alpha, high_alpha = pairs.bounds_at(a / 2, alpha / 2)
    return (p_null, p_beyond, p_within), levels, a, (low_a, high_a), (low_alpha, high_alpha), adjusted_null


def _orient(sel: FloatArray, n: FloatArray, i: np.ndarray, j: np.ndarray,
            reference: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Swap pairs so that j is the reference (when in the pair) or the more often selected group."""
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = sel / n
    swap = rate[i] > rate[j]
    if reference is not None:
        swap = np.where(i == reference, True, np.where(j == reference, False, swap))
    return np.where(swap, j, i), np.where(swap, i, j)


@dataclass(frozen=True)
class _DIClaims:
    """DI of every pair against 1 and the four-fifths band: the pairs, p against 1, the families' critical
    levels and the decision one (``critical``, an error rate: the interval is at 1 − critical), the bounds at it
    and at α, and which claims hold."""

    pairs: inference.DIPairs
    p_null: FloatArray
    families: dict[str, float]
    critical: float
    bounds: tuple[FloatArray, FloatArray]
    bounds_unadjusted: tuple[FloatArray, FloatArray]
    p_adjusted: FloatArray
    nobody: npt.NDArray[np.bool_]
    beyond: npt.NDArray[np.bool_]
    within: npt.NDArray[np.bool_]
    di: FloatArray


def _check_settings(tolerance: float, alpha: float, adjust: str, bounded: bool = True) -> None:
    if bounded and not (0 <= tolerance <= 2):
        raise ValueError(f"tolerance must be in [0, 2], got {tolerance}")
    if not bounded and not (0 <= tolerance < np.inf):
        raise ValueError(f"tolerance must be a finite amount >= 0 in the outcome's units, got {tolerance}")
    check_alpha(alpha)
    adjustment(adjust)  # validates the name


def _di_claims(sel_i: FloatArray, n_i: FloatArray, sel_j: FloatArray, n_j: FloatArray, alpha: float, adjust: str,
               di_method: str) -> _DIClaims:
    return ratio_claims(inference.di_pairs(sel_i, n_i, sel_j, n_j, method=di_method), alpha, adjust)


def ratio_claims(d: Any, alpha: float, adjust: str, band: tuple[float, float] = (bias.FOUR_FIFTHS_LOW,
                 bias.FOUR_FIFTHS_HIGH), undefined_within: bool = True,
                 labels: tuple[str, str, str] = ("differs from 1", "beyond the four-fifths band",
                                                 "within the four-fifths band")) -> _DIClaims:
    """A ratio of every pair (DI, or any pairs object with DIPairs' interface: ``estimate``, ``nobody``,
    ``p_value``, ``bounds_at``, ``method``) against 1 and the ``band``, as three families. ``undefined_within``:
    a pair whose ratio is undefined (``nobody``: nobody selected) counts as inside the band."""
    band_low, band_high = band
    (q_zero, _, _), di_fam, a_di, (d_lo, d_hi), unadjusted, q_adjusted = _three_families(
        d, 1.0, band_low, band_high, alpha, adjust, labels)
    nobody = np.asarray(d.nobody, dtype=bool)
    with np.errstate(invalid="ignore"):
        di_beyond = ((d_hi < band_low) | (d_lo > band_high)) & ~nobody
        di_within = ((d_lo > band_low) & (d_hi < band_high)) | (nobody & undefined_within)
    return _DIClaims(d, q_zero, di_fam, a_di, (d_lo, d_hi), unadjusted, _adjusted(q_zero, q_adjusted, alpha, a_di),
                     nobody, di_beyond, di_within, np.asarray(d.estimate, dtype=float))


def pair_verdicts(names: list[str], cells: npt.ArrayLike, tolerance: float, alpha: float, adjust: str,
                  ofi_method: str = "auto", di_method: str = "auto",
                  reference: str | None = None) -> pd.DataFrame:
    """The verdict table for groups ``names`` with confusion-matrix rows ``cells`` (TP, FN, FP, TN).

    See :meth:`fairness_core.audit.Audit.verdicts` for the columns.
    """
    _check_settings(tolerance, alpha, adjust)
    cells = np.asarray(cells, dtype=float)
    tp, fn, fp, tn = cells.T
    n = cells.sum(axis=1)
    sel = tp + fp
    ref = None if reference is None else names.index(reference)
    i, j = _orient(sel, n, *np.triu_indices(len(names), 1), ref)
    args = (fp[i], fn[i], n[i], fp[j], fn[j], n[j])
    t = float(tolerance)
    o = inference.ofi_pairs(*args, method=ofi_method)
    dc = _di_claims(sel[i], n[i], sel[j], n[j], alpha, adjust, di_method)
    settings = VerdictSettings(t, alpha, adjust, ofi_method, di_method)
    df, levels = judge_pairs(names, i, j, n, o, dc, (fp - fn) / n, settings)
    return VerdictTable.of(df, settings, levels, reference, outcomes=True)


def judge_pairs(names: list[str], i: np.ndarray, j: np.ndarray, n: FloatArray, o: Any, dc: _DIClaims,
                b: FloatArray, settings: VerdictSettings) -> tuple[pd.DataFrame, VerdictLevels]:
    """The verdict of every pair (i[k], j[k]) of groups ``names`` (sizes ``n``, marginal benefits ``b``) from its
    OFI pairs object ``o`` (:class:`fairness_core.inference.OFIPairs`, or any object with its interface: an amount
    audit's :class:`fairness_core.statistics.amounts.MeanPairs`) and its ratio claims ``dc`` (:func:`ratio_claims`),
    read against ``settings``' tolerance and band: the table's columns and its levels. A pair whose OFI p-values
    are NaN is no test (no claim is made: "inconclusive")."""
    t, alpha, adjust = settings.tolerance, settings.alpha, settings.adjust
    # OFI against 0 and ±T, DI against 1 and the band: each with its three families' critical
    # levels and the one decision level, read from the interval printed beside the verdict.
    (p_zero, p_beyond, p_within), ofi_fam, a, (lo, hi), (lo_u, hi_u), p_zero_adjusted = _three_families(
        o, 0.0, -t, t, alpha, adjust, ("differs from 0", "beyond the tolerance", "within the tolerance"))
    with np.errstate(invalid="ignore"):
        nonzero, beyond = (lo > 0) | (hi < 0), (lo > t) | (hi < -t)
        within = (lo > -t) & (hi < t)
    estimate = o.estimate

    code = np.select([beyond, nonzero & ~within, within & dc.beyond, within & dc.within], [0, 1, 2, 3], 4)
    verdict = _VERDICT_OBJECTS[code]
    rows_i, rows_j, reach = _rows_needed((code == 1) | (code == 4), estimate, lo, hi, t, n[i], n[j], within,
                                         (dc.di, *dc.bounds), settings.band)
    z_a = stats.norm.ppf(1 - a / 2)
    se = (hi - lo) / (2 * z_a)
    group_i, group_j = np.array(names, dtype=object)[i], np.array(names, dtype=object)[j]
    df = pd.DataFrame({
        "group_i": group_i, "group_j": group_j,
        "n_i": n[i].astype(np.int64), "n_j": n[j].astype(np.int64),
        "ofi": estimate, "ofi_ci_low": lo, "ofi_ci_high": hi,
        "ofi_p": p_zero, "ofi_p_adjusted": _adjusted(p_zero, p_zero_adjusted, alpha, a),
        "di": dc.di, "di_ci_low": dc.bounds[0], "di_ci_high": dc.bounds[1],
        "di_p": dc.p_null, "di_p_adjusted": dc.p_adjusted,
        "verdict": verdict,
        "favours": np.where(beyond | (nonzero & ~within), np.where(estimate > 0, group_i, group_j), ""),
        "ofi_ci_low_unadjusted": lo_u, "ofi_ci_high_unadjusted": hi_u,
        "di_ci_low_unadjusted": dc.bounds_unadjusted[0], "di_ci_high_unadjusted": dc.bounds_unadjusted[1],
        "ofi_beyond_tolerance": beyond, "ofi_within_tolerance": within, "ofi_differs": nonzero,
        "ofi_p_beyond": p_beyond, "ofi_p_within": p_within,
        "ofi_equivalent": within, "di_within_band": dc.within & ~dc.nobody, "di_beyond_band": dc.beyond,
        "four_fifths": bias.four_fifths_verdicts(dc.di),
        "ofi_mde": t + (z_a + stats.norm.ppf(POWER)) * se,
        "rows_needed_i": rows_i, "rows_needed_j": rows_j, "rows_needed_note": reach,
        "B_i": b[i], "B_j": b[j], "ofi_method": _as_objects(o.method), "di_method": _as_objects(dc.pairs.method),
    })
    levels = VerdictLevels(1 - a, 1 - dc.critical, ofi_fam, dc.families, 1 - alpha, len(df))
    return df, levels


def selection_verdicts(names: list[str], selected: npt.ArrayLike, n: npt.ArrayLike, alpha: float, adjust: str,
                       di_method: str = "auto", reference: str | None = None) -> pd.DataFrame:
    """The four-fifths verdict of every pair of groups from decisions alone (no outcomes).

    Each pair's impact ratio DI = rate_i / rate_j (j the more selected group, or the ``reference``) is
    tested against 1 and against the four-fifths band [4/5, 5/4] as three families adjusted across the
    pairs, read from one interval per pair at the decision level (as :func:`pair_verdicts` reads DI). The
    verdict (:data:`SELECTION_VERDICTS`):

    - **adverse impact** when the adjusted interval lies beyond the band (below 4/5: group i is selected at
      under four fifths of j's rate, beyond what chance explains);
    - **materiality unclear** when it excludes 1 but reaches into the band;
    - **no adverse impact detected** when it lies inside the band (or nobody is selected in either group);
    - **inconclusive** otherwise.

    Columns: group_i, group_j, n_i, n_j, selected_i, selected_j, rate_i, rate_j, di, di_ci_low,
    di_ci_high (adjusted; level in ``levels.di``), di_p, di_p_adjusted, verdict, favours,
    di_ci_low_unadjusted, di_ci_high_unadjusted, di_within_band, di_beyond_band, four_fifths (the point
    estimate's reading), di_method.

    >>> v = selection_verdicts(["a", "b"], [92, 407], [400, 1100], 0.05, "holm")
    >>> v.loc[0, ["group_i", "group_j", "verdict"]].tolist(), round(float(v.loc[0, "di"]), 3)
    (['a', 'b', 'adverse impact'], 0.622)
    """
    _check_settings(0.0, alpha, adjust)
    sel, size = np.asarray(selected, dtype=float), np.asarray(n, dtype=float)
    ref = None if reference is None else names.index(reference)
    i, j = _orient(sel, size, *np.triu_indices(len(names), 1), ref)
    dc = _di_claims(sel[i], size[i], sel[j], size[j], alpha, adjust, di_method)
    with np.errstate(invalid="ignore"):
        differs = ((dc.bounds[1] < 1) | (dc.bounds[0] > 1)) & ~dc.nobody
    verdict = _SELECTION_OBJECTS[np.select([dc.beyond, differs & ~dc.within, dc.within], [0, 1, 2], 3)]
    group_i, group_j = np.array(names, dtype=object)[i], np.array(names, dtype=object)[j]
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = sel / size
    df = pd.DataFrame({
        "group_i": group_i, "group_j": group_j, "n_i": size[i].astype(np.int64), "n_j": size[j].astype(np.int64),
        "selected_i": sel[i].astype(np.int64), "selected_j": sel[j].astype(np.int64),
        "rate_i": rate[i], "rate_j": rate[j],
        "di": dc.di, "di_ci_low": dc.bounds[0], "di_ci_high": dc.bounds[1],
        "di_p": dc.p_null, "di_p_adjusted": dc.p_adjusted,
        "verdict": verdict,
        "favours": np.where(differs, np.where(rate[i] > rate[j], group_i, group_j), ""),
        "di_ci_low_unadjusted": dc.bounds_unadjusted[0], "di_ci_high_unadjusted": dc.bounds_unadjusted[1],
        "di_within_band": dc.within & ~dc.nobody, "di_beyond_band": dc.beyond,
        "four_fifths": bias.four_fifths_verdicts(dc.di), "di_method": _as_objects(dc.pairs.method),
    })
    levels = VerdictLevels(None, 1 - dc.critical, {}, dc.families, 1 - alpha, len(df))
    return VerdictTable.of(df, VerdictSettings(0.0, alpha, adjust, "auto", di_method), levels, reference,
                           outcomes=False)


def _adjusted(p: FloatArray, adjusted: FloatArray, alpha: float, a: float) -> FloatArray:
    """The adjusted p printed beside a verdict: the family's ``adjusted`` p, and never below p·α/a, so that it is
    below α exactly when the adjusted interval (level 1 − a) excludes the null value."""
    with np.errstate(invalid="ignore"):
        return np.maximum(adjusted, np.minimum(1.0, p * alpha / a))


#: The verdict words as one array of str objects: a table's column is gathered from it by code (no new string per
#: pair, no conversion of fixed-width text when the frame is built).
_VERDICT_OBJECTS = np.array(VERDICTS, dtype=object)
_SELECTION_OBJECTS = np.array(SELECTION_VERDICTS, dtype=object)


def _as_objects(words: npt.NDArray[np.str_]) -> npt.NDArray[np.object_]:
    """A column of a few distinct words (the interval methods) as str objects, one object per distinct word."""
    out = np.empty(words.shape, dtype=object)
    todo = np.ones(words.shape, dtype=bool)
    while todo.any():
        word = words[np.argmax(todo)]
        same = words == word
        out[same] = str(word)
        todo &= ~same
    return out


def _rows_needed(open_: npt.NDArray[np.bool_], estimate: FloatArray, lo: FloatArray, hi: FloatArray, t: float,
                 n_i: FloatArray, n_j: FloatArray, within: np.ndarray,
                 di_parts: tuple[FloatArray, FloatArray, FloatArray],
                 band: tuple[float, float] = (bias.FOUR_FIFTHS_LOW, bias.FOUR_FIFTHS_HIGH)
                 ) -> tuple[FloatArray, FloatArray, np.ndarray]:
    """More rows per group (both grown by one factor k at the same rates) that would settle an open pair at
    the current adjusted level: OFI's interval beyond or inside ±T, or, when OFI is settled inside ±T, DI's
    interval beyond or inside the four-fifths band. Each side of the interval shrinks towards the estimate as
    1/√k (normal approximation); ``open_``: the pairs whose verdict is inconclusive or materiality unclear. NaN
    with a note past :data:`MAX_ROWS_NEEDED` rows or when no growth can
    settle it (an estimate exactly on the edge: |OFI| = T)."""
    c = np.abs(estimate)
    near = np.where(estimate >= 0, estimate - lo, hi - estimate)    # the side facing 0
    wide = np.maximum(estimate - lo, hi - estimate)
    with np.errstate(divide="ignore", invalid="ignore"):
        k_beyond = np.where(c > t, (near / (c - t)) ** 2, np.inf)
        k_within = np.where(c < t, (wide / (t - c)) ** 2, np.inf)
        k = np.minimum(k_beyond, k_within)
        di, d_lo, d_hi = di_parts
        log_di, log_lo, log_hi = np.log(di), np.log(np.maximum(d_lo, 1e-300)), np.log(d_hi)
        edge_lo, edge_hi = np.log(band[0]), np.log(band[1])
        up, down = log_hi - log_di, log_di - log_lo
        k_out = np.where(log_di < edge_lo, (up / (edge_lo - log_di)) ** 2,
                         np.where(log_di > edge_hi, (down / (log_di - edge_hi)) ** 2, np.inf))
        k_in = np.where((log_di > edge_lo) & (log_di < edge_hi),
                        np.maximum((down / (log_di - edge_lo)) ** 2, (up / (edge_hi - log_di)) ** 2), np.inf)
        k_di = np.minimum(k_out, k_in)
    k = np.where(within, np.where(np.isnan(k_di), np.inf, k_di), k)
    k = np.where(np.isfinite(k), np.maximum(k, 1 + 1e-6), np.inf)
    with np.errstate(invalid="ignore", over="ignore"):
        more_i, more_j = np.ceil((k - 1) * n_i - 1e-9), np.ceil((k - 1) * n_j - 1e-9)
    reachable = np.isfinite(more_i) & np.isfinite(more_j) & (np.maximum(more_i, more_j) <= MAX_ROWS_NEEDED)
    note = _NOTES[(open_ & ~reachable).astype(np.intp)]
    keep = open_ & reachable
    return np.where(keep, more_i, np.nan), np.where(keep, more_j, np.nan), note


_NOTES = np.array(["", "not reachable at these rates"], dtype=object)


#: The error rates of the equal-opportunity question: (name, errors, denominator) as cell indices TP, FN, FP, TN.
ERROR_RATES = {"FNR": ("qualified individuals denied the favourable outcome", 1, (0, 1)),
               "FPR": ("unqualified individuals given the favourable outcome", 2, (2, 3))}


def _wilson(x: FloatArray, n: FloatArray, gamma: float) -> tuple[FloatArray, FloatArray]:
    """Wilson score bounds, each one-sided at ``gamma``."""
    z = stats.norm.ppf(1 - gamma)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = x / n
        centre = (x + z * z / 2) / (n + z * z)
        half = z * np.sqrt(n * p * (1 - p) + z * z / 4) / (n + z * z)
    return np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)


def error_rate_gaps(names: list[str], cells: npt.ArrayLike, alpha: float) -> pd.DataFrame:
    """Equal opportunity: every pair's FNR and FPR difference with simultaneous intervals.

    FNR = FN/(TP + FN) is the share of qualified individuals (positive label) denied the favourable
    outcome; FPR = FP/(FP + TN) the share of unqualified ones given it. For each rate the difference
    rate_i − rate_j of every pair where both are defined gets Newcombe's hybrid score interval (MOVER
    with Wilson limits) at level 1 − α/m, Bonferroni over the m such pairs, so that the largest gap,
    picked after looking, is still covered; ``differs`` when the interval excludes 0. Undefined rates
    (no qualified, or no unqualified, individuals in a group) give NaN with the reason.
    """
    check_alpha(alpha)
    cells = np.asarray(cells, dtype=float)
    i, j = np.triu_indices(len(names), 1)
    group = np.array(names, dtype=object)
    frames = []
    for rate, (meaning, err, denominator) in ERROR_RATES.items():
        x, d = cells[:, err], cells[:, list(denominator)].sum(axis=1)
        defined = (d[i] > 0) & (d[j] > 0)
        m = max(int(defined.sum()), 1)
        gamma = alpha / m / 2
        with np.errstate(divide="ignore", invalid="ignore"):
            r = x / d
            li, ui = _wilson(x[i], d[i], gamma)
            lj, uj = _wilson(x[j], d[j], gamma)
            diff = r[i] - r[j]
            low = diff - np.sqrt((r[i] - li) ** 2 + (uj - r[j]) ** 2)
            high = diff + np.sqrt((ui - r[i]) ** 2 + (r[j] - lj) ** 2)
        who = np.where(d[i] == 0, group[i], group[j]).astype(str)
        kind = "qualified" if rate == "FNR" else "unqualified"
        reason = np.where(defined, "", np.char.add(f"no {kind} individuals in ", who)).astype(object)
        frames.append(pd.DataFrame({
            "rate": rate, "meaning": meaning, "group_i": group[i],
            "group_j": group[j], "rate_i": np.where(d[i] > 0, r[i], np.nan),
            "rate_j": np.where(d[j] > 0, r[j], np.nan), "denominator_i": d[i].astype(np.int64),
            "denominator_j": d[j].astype(np.int64),
            "gap": np.where(defined, diff, np.nan), "ci_low": np.where(defined, np.clip(low, -1, 1), np.nan),
            "ci_high": np.where(defined, np.clip(high, -1, 1), np.nan),
            "differs": defined & ((low > 0) | (high < 0)), "level": 1 - alpha / m, "undefined_because": reason,
        }))
    return pd.concat(frames, ignore_index=True)


def largest_gaps(gaps: pd.DataFrame) -> pd.DataFrame:
    """The pair with the largest |gap| for each error rate (rows of :func:`error_rate_gaps`; none where undefined)."""
    ok = gaps.dropna(subset=["gap"])
    if ok.empty:
        return ok
    return ok.loc[ok["gap"].abs().groupby(ok["rate"]).idxmax()].reset_index(drop=True)


__all__ = ["VERDICTS", "DEFAULT_OFI_TOLERANCE", "MAX_ROWS_NEEDED", "ERROR_RATES", "critical_level", "pair_verdicts", "error_rate_gaps",
           "largest_gaps"]
