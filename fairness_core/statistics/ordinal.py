"""Ordered and unordered categories: the ordinal benefit, the ordinal error rates and impact ratios at every cut.

The classes c_0, …, c_{k−1} of an ``order`` are ranked r = 0, …, k − 1; ``favourable`` names one end. With the
sign s = +1 when the last class is the favourable one and s = −1 when the first is, every formula below reads
"toward the favourable end" as up (docs/methods.md, "Ordered categories"):

- **Ordinal benefit** of a person observed in tier r(y) and placed in tier r(ŷ): b = s·(r(ŷ) − r(y)), in tiers;
  b > 0 the person was placed on the favourable side of their observed tier (the ordinal false positive, a
  benefit), b < 0 on the unfavourable side (the ordinal false negative). A group's **marginal benefit** is
  B = mean(b) and the **ordinal OFI** of two groups B_i − B_j, in tiers. With k = 2 and s = +1 this is the binary
  b = ŷ − y, B = (FP − FN)/n and OFI exactly (Briscoe 2024, the marginal benefit and OFI; docs/methods.md).
- **Ordinal FPR** = #{b > 0} / #{not observed at the favourable end}: among those who could be placed above
  their tier (toward the favourable end), the share who were. **Ordinal FNR** = #{b < 0} / #{not observed at
  the unfavourable end}. With k = 2 they are FP/(FP + TN) and FN/(TP + FN). Undefined (NaN, with the reason)
  when nobody could be so placed. Intervals: exact (Clopper–Pearson).
- **Cut at class c** ("c or better"): a person is selected when placed in c or any class on its favourable side;
  its selection rate per group, and each pair's **impact ratio** rate_i / rate_j at every one of the k − 1 cuts.
- **Class shares** (ordered or not): the share of a group placed in each class, and each pair's ratio of shares.

The impact ratios of all cuts (or all classes) and all pairs are one family per kind of claim: :func:`ratio_verdicts`
tests each ratio against 1 and the four-fifths band exactly as
:func:`fairness_core.statistics.verdicts.selection_verdicts` does for one cut, adjusting (Holm by default) across
the cuts × pairs together.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import special

from . import bias
from .verdicts import SELECTION_VERDICTS, VerdictLevels, VerdictSettings, VerdictTable, _check_settings, _di_claims

__all__ = ["exact_interval", "sign_of", "benefit_matrix", "ordinal_benefit", "ordinal_cells", "ordinal_rates",
           "cut_counts", "larger_first", "oriented", "ratio_verdicts", "DIRECTIONS"]

#: What a class (or a cut) is for the person placed in it: the words of the ``direction`` column.
DIRECTIONS = ("favourable", "unfavourable", "not declared")

_WORDS = np.array(SELECTION_VERDICTS, dtype=object)


def exact_interval(x: npt.ArrayLike, n: npt.ArrayLike, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided 1 − ``alpha`` Clopper–Pearson bounds of x/n, vectorized; NaN where n = 0.

    >>> [round(float(v), 4) for v in np.concatenate(exact_interval([3], [10], 0.05))]
    [0.0667, 0.6525]
    """
    x, n = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(n, dtype=float))
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(x <= 0, 0.0, special.betaincinv(np.maximum(x, 1e-300), n - x + 1, alpha / 2))
        high = np.where(x >= n, 1.0, special.betaincinv(x + 1, np.maximum(n - x, 1e-300), 1 - alpha / 2))
    empty = n <= 0
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def sign_of(classes: Sequence[str], favourable: str) -> int:
    """+1 when ``favourable`` is the last class of the order, −1 when it is the first; ValueError otherwise."""
    if favourable == classes[-1]:
        return 1
    if favourable == classes[0]:
        return -1
    raise ValueError(f"favourable must name one end of the order, {classes[0]!r} or {classes[-1]!r}; got "
                     f"{favourable!r}")


def benefit_matrix(k: int, sign: int) -> np.ndarray:
    """The ordinal benefit b = s·(r(ŷ) − r(y)) of every cell of a k × k matrix (rows y, columns ŷ).

    >>> benefit_matrix(3, -1).tolist()
    [[0, -1, -2], [1, 0, -1], [2, 1, 0]]
    """
    r = np.arange(k)
    return sign * (r[None, :] - r[:, None])


def ordinal_benefit(rank_true: npt.ArrayLike, rank_pred: npt.ArrayLike, sign: int) -> np.ndarray:
    """Each person's ordinal benefit s·(r(ŷ) − r(y)) from the ranks of their observed and predicted classes."""
    return sign * (np.asarray(rank_pred, dtype=np.int64) - np.asarray(rank_true, dtype=np.int64))


def ordinal_cells(counts: npt.ArrayLike, sign: int) -> np.ndarray:
    """Each group's k × k counts as the four cells of the ordinal error rates, (groups, 4) in the order TP, FN,
    FP, TN: FN = placed on the unfavourable side of their tier, TP = the others not observed at the unfavourable
    end; FP = placed on the favourable side, TN = the others not observed at the favourable end. With k = 2 and
    the last class favourable these are the binary cells themselves.

    >>> ordinal_cells([[[5, 2], [1, 3]]], +1).tolist()   # rows y = (0, 1), columns ŷ: TN 5, FP 2, FN 1, TP 3
    [[3, 1, 2, 5]]
    """
    c = np.asarray(counts, dtype=np.int64)
    k = c.shape[-1]
    b = benefit_matrix(k, sign)
    u = np.arange(k) if sign > 0 else np.arange(k)[::-1]       # the favourable rank of each observed class
    above = (c * (b > 0)).sum(axis=(1, 2))
    below = (c * (b < 0)).sum(axis=(1, 2))
    rows = c.sum(axis=2)                                        # each group's count per observed class
    can_fall = rows[:, u > 0].sum(axis=1)                       # not at the unfavourable end
    can_rise = rows[:, u < k - 1].sum(axis=1)                   # not at the favourable end
    return np.column_stack([can_fall - below, below, above, can_rise - above])


def ordinal_rates(groups: Sequence[str], counts: npt.ArrayLike, sign: int, alpha: float) -> pd.DataFrame:
    """Per group: n, the marginal benefit B (mean ordinal benefit, in tiers), the shares of all rows placed on
    the favourable and unfavourable side of their observed tier, and the ordinal FPR and FNR with exact
    1 − ``alpha`` intervals (NaN with the reason where nobody could be so placed)."""
    c = np.asarray(counts, dtype=np.int64)
    n = c.sum(axis=(1, 2)).astype(float)
    tp, fn, fp, tn = ordinal_cells(c, sign).T.astype(float)
    b = (c * benefit_matrix(c.shape[-1], sign)).sum(axis=(1, 2)) / n
    with np.errstate(invalid="ignore", divide="ignore"):
        fpr, fnr = fp / (fp + tn), fn / (fn + tp)
    fpr_lo, fpr_hi = exact_interval(fp, fp + tn, alpha)
    fnr_lo, fnr_hi = exact_interval(fn, fn + tp, alpha)
    reason = ["; ".join(r for r, bad in (("ordinal FPR: everyone observed at the favourable end", rise == 0),
                                          ("ordinal FNR: everyone observed at the unfavourable end", fall == 0)) if bad)
              for rise, fall in zip(fp + tn, fn + tp)]   # one per group
    return pd.DataFrame({"n": n.astype(np.int64), "B": b, "share_favoured": fp / n, "share_disfavoured": fn / n,
                         "ordinal_fpr": fpr, "ordinal_fpr_ci_low": fpr_lo, "ordinal_fpr_ci_high": fpr_hi,
                         "could_rise": (fp + tn).astype(np.int64),
                         "ordinal_fnr": fnr, "ordinal_fnr_ci_low": fnr_lo, "ordinal_fnr_ci_high": fnr_hi,
                         "could_fall": (fn + tp).astype(np.int64), "undefined_because": reason},
                        index=pd.Index(list(groups), name="group"))


def class_rates(groups: Sequence[str], counts: npt.ArrayLike, c: int, alpha: float) -> pd.DataFrame:
    """One class against the rest without a direction (a middle tier, a class nobody declared): per group n, the
    rows observed in class ``c`` and placed in it, the share placed in it, its recall (placed in it among those
    observed in it) and its false-placement rate (placed in it among those observed elsewhere), each rate with an
    exact 1 − ``alpha`` interval and NaN with the reason where nobody could be so placed. Nothing here says which
    way is better for the person; the pair verdicts of a binary audit need that direction.

    >>> class_rates(["a"], [[[3, 1, 0], [0, 2, 2], [0, 1, 1]]], 1, 0.05)[["observed", "placed", "recall"]].round(2)
           observed  placed  recall
    group                          
    a             4       4     0.5
    """
    cnt = np.asarray(counts, dtype=np.int64)
    n = cnt.sum(axis=(1, 2)).astype(float)
    observed = cnt[:, c, :].sum(axis=1).astype(float)
    placed = cnt[:, :, c].sum(axis=1).astype(float)
    hit = cnt[:, c, c].astype(float)
    elsewhere, false = n - observed, placed - hit
    with np.errstate(invalid="ignore", divide="ignore"):
        recall, fpr = hit / observed, false / elsewhere
    share_lo, share_hi = exact_interval(placed, n, alpha)
    rec_lo, rec_hi = exact_interval(hit, observed, alpha)
    fpr_lo, fpr_hi = exact_interval(false, elsewhere, alpha)
    reason = ["; ".join(r for r, bad in (("recall: nobody observed in this class", o == 0),
                                          ("false placements: everyone observed in this class", e == 0)) if bad)
              for o, e in zip(observed, elsewhere)]
    return pd.DataFrame({"n": n.astype(np.int64), "observed": observed.astype(np.int64),
                         "placed": placed.astype(np.int64), "share_placed": placed / n,
                         "share_placed_ci_low": share_lo, "share_placed_ci_high": share_hi,
                         "recall": recall, "recall_ci_low": rec_lo, "recall_ci_high": rec_hi,
                         "false_placement_rate": fpr, "false_placement_rate_ci_low": fpr_lo,
                         "false_placement_rate_ci_high": fpr_hi, "undefined_because": reason},
                        index=pd.Index(list(groups), name="group"))


def cut_counts(placed: npt.ArrayLike, sign: int) -> np.ndarray:
    """Each group's rows placed at each cut or better: ``placed`` is (groups, k) rows per predicted class; the
    result (groups, k − 1) holds, for the cut at each class but the unfavourable end (taken from the favourable
    end inward), the rows placed in that class or on its favourable side.

    >>> cut_counts([[5, 3, 2]], -1).tolist()   # favourable first: "c0", "c1 or better"
    [[5, 8]]
    """
    p = np.asarray(placed, dtype=np.int64)
    toward = p[:, ::-1] if sign > 0 else p                     # favourable end first
    return np.cumsum(toward, axis=1)[:, :-1]


def ratio_verdicts(names: Sequence[str], selected: npt.ArrayLike, n: npt.ArrayLike, labels: Sequence[str],
                   directions: Sequence[str], alpha: float, adjust: str, di_method: str = "auto",
                   reference: str | None = None, label_column: str = "cut") -> VerdictTable:
    """The impact ratio of every pair of groups at every cut (or class), tested as ONE family per kind of claim.

    ``selected`` is (families, groups): each family's selected rows per group (those placed at the cut or better,
    or in the class); ``n`` each group's rows; ``labels`` each family's name and ``directions`` what being
    selected in it is for the person (:data:`DIRECTIONS`). Each pair is oriented as the binary four-fifths verdicts
    orient it (group_j the more selected, or the ``reference``), so ``di`` = rate_i / rate_j is Local Law 144's
    impact ratio, and tested against 1 and the band [4/5, 5/4] by
    :func:`fairness_core.statistics.verdicts.selection_verdicts`' three families, adjusted by ``adjust`` across
    all families × pairs at once and read from one interval per ratio. ``adverse_to`` names the group the
    difference disadvantages (group_i, less often selected, for a favourable or undeclared selection; group_j,
    more often placed in it, for an unfavourable class) and ``favours`` the other one, when the interval excludes 1.

    >>> v = ratio_verdicts(["a", "b"], [[92, 407], [300, 900]], [400, 1100], ["top", "top two"],
    ...                    ["favourable", "favourable"], 0.05, "holm")
    >>> v[["cut", "group_i", "verdict"]].values.tolist()
    [['top', 'a', 'adverse impact'], ['top two', 'a', 'no adverse impact detected']]
    """
    _check_settings(0.0, alpha, adjust)
    sel = np.atleast_2d(np.asarray(selected, dtype=float))
    size = np.asarray(n, dtype=float)
    m, g = sel.shape
    if len(labels) != m or len(directions) != m or len(names) != g or size.shape != (g,):
        raise ValueError("ratio_verdicts: selected must be families × groups, with one label and direction per "
                         "family and one n per group")
    bad = sorted(set(directions) - set(DIRECTIONS))
    if bad:
        raise ValueError(f"directions must be among {DIRECTIONS}, got {bad}")
    i0, j0 = np.triu_indices(g, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = sel / size
    swap = rate[:, i0] > rate[:, j0]
    if reference is not None:
        ref = list(names).index(reference)
        swap = np.where(i0 == ref, True, np.where(j0 == ref, False, swap))
    i, j = np.where(swap, j0, i0), np.where(swap, i0, j0)         # (families, pairs)
    fam = np.repeat(np.arange(m), i0.size)
    i, j = i.ravel(), j.ravel()
    sel_i, sel_j = sel[fam, i], sel[fam, j]
    settings = VerdictSettings(0.0, alpha, adjust, "auto", di_method)
    if i.size == 0:
        raise ValueError("impact ratios need at least two groups to compare")
    dc = _di_claims(sel_i, size[i], sel_j, size[j], alpha, adjust, di_method)
    with np.errstate(invalid="ignore"):
        differs = ((dc.bounds[1] < 1) | (dc.bounds[0] > 1)) & ~dc.nobody
    verdict = _WORDS[np.select([dc.beyond, differs & ~dc.within, dc.within], [0, 1, 2], 3)]
    group = np.asarray(names, dtype=object)
    harm = np.asarray(directions, dtype=object)[fam] == "unfavourable"
    less = np.where(rate[fam, i] <= rate[fam, j], group[i], group[j])
    more = np.where(rate[fam, i] <= rate[fam, j], group[j], group[i])
    df = pd.DataFrame({
        label_column: np.asarray(labels, dtype=object)[fam], "direction": np.asarray(directions, dtype=object)[fam],
        "group_i": group[i], "group_j": group[j], "n_i": size[i].astype(np.int64), "n_j": size[j].astype(np.int64),
        "selected_i": sel_i.astype(np.int64), "selected_j": sel_j.astype(np.int64),
        "rate_i": rate[fam, i], "rate_j": rate[fam, j],
        "di": dc.di, "di_ci_low": dc.bounds[0], "di_ci_high": dc.bounds[1],
        "di_p": dc.p_null, "di_p_adjusted": dc.p_adjusted, "verdict": verdict,
        "favours": np.where(differs, np.where(harm, less, more), ""),
        "adverse_to": np.where(differs, np.where(harm, more, less), ""),
        "di_ci_low_unadjusted": dc.bounds_unadjusted[0], "di_ci_high_unadjusted": dc.bounds_unadjusted[1],
        "di_within_band": dc.within & ~dc.nobody, "di_beyond_band": dc.beyond,
        "four_fifths": bias.four_fifths_verdicts(dc.di), "di_method": dc.pairs.method.astype(object),
    })
    levels = VerdictLevels(None, 1 - dc.critical, {}, dc.families, 1 - alpha, len(df))
    return VerdictTable.of(df, settings, levels, reference, outcomes=False)


def larger_first(groups: Sequence[str], n: npt.ArrayLike) -> list[str]:
    """``groups`` ordered by their rows ``n``, largest first (ties in given order): the reference order of
    :func:`oriented` that makes each pair's larger group its reference.

    >>> larger_first(["a", "b", "c"], [5, 20, 5])
    ['b', 'a', 'c']
    """
    size = np.asarray(n, dtype=float)
    return [str(groups[k]) for k in np.argsort(-size, kind="stable")]


#: Pair tables' columns that change sign when a pair is turned round (a difference i − j), and those inverted (a
#: ratio i / j); each with its interval's two ends, which swap.
_DIFFERENCES = ("ofi", "gap")
_RATIOS = ("di", "ratio")


def oriented(table: pd.DataFrame, reference_order: Sequence[str]) -> pd.DataFrame:
    """``table`` (a pair table: verdicts, impact ratios, error-rate or MAE gaps) with every pair turned so that its
    ``group_j``, the pair's reference, is the one that comes first in ``reference_order`` (the page passes the groups
    largest first): one orientation for a pair in every table and at every cut. Turning a pair round swaps each
    ``*_i``/``*_j`` column, changes the sign of a difference (``ofi``, ``gap``: d → −d, interval [l, h] → [−h, −l])
    and inverts a ratio (``di``, ``ratio``: r → 1/r, [l, h] → [1/h, 1/l], which is the interval of the inverted
    ratio for Fieller's, Koopman's and the log methods alike); p-values, verdicts, ``favours`` and ``adverse_to``
    name no orientation and stay. Rows are sorted by family (``cut``/``class``, kept in first order) and then by the
    pair's reference and compared group in ``reference_order``. Vectorized: one mask, no loop over rows.

    >>> t = pd.DataFrame({"group_i": ["b", "a"], "group_j": ["a", "b"], "n_i": [10, 30], "n_j": [30, 10],
    ...                   "ofi": [0.2, -0.1], "ofi_ci_low": [0.1, -0.3], "ofi_ci_high": [0.3, 0.1],
    ...                   "di": [0.5, 0.8], "di_ci_low": [0.25, 0.5], "di_ci_high": [1.0, 2.0]})
    >>> oriented(t, ["a", "b"])[["group_i", "group_j", "n_i", "ofi", "ofi_ci_low", "di", "di_ci_low"]].values.tolist()
    [['b', 'a', 10, 0.2, 0.1, 0.5, 0.25], ['b', 'a', 10, 0.1, -0.1, 1.25, 0.5]]
    """
    rank = {g: r for r, g in enumerate(reference_order)}
    out = table.copy()
    gi, gj = out["group_i"].astype(str), out["group_j"].astype(str)
    far = len(rank)
    turn = (gi.map(rank).fillna(far).to_numpy() < gj.map(rank).fillna(far).to_numpy())
    if turn.any():
        cols = [str(c) for c in out.columns]
        for c in cols:   # a loop over columns, not rows
            if c.endswith("_i") and c[:-2] + "_j" in cols:
                a, b = out[c].to_numpy(copy=True), out[c[:-2] + "_j"].to_numpy(copy=True)
                out[c] = np.where(turn, b, a)
                out[c[:-2] + "_j"] = np.where(turn, a, b)
        for name, flip in [*((d, lambda x: -x) for d in _DIFFERENCES), *((r, lambda x: 1 / x) for r in _RATIOS)]:
            if name not in cols:
                continue
            with np.errstate(divide="ignore", invalid="ignore"):
                out[name] = np.where(turn, flip(out[name].to_numpy(dtype=float)), out[name].to_numpy(dtype=float))
                ends = [(f"{name}_ci_low", f"{name}_ci_high"), (f"{name}_ci_low_unadjusted",
                                                                f"{name}_ci_high_unadjusted")]
                if name == "gap":
                    ends.append(("ci_low", "ci_high"))
                for lo, hi in ends:
                    if lo in cols and hi in cols:
                        low, high = out[lo].to_numpy(dtype=float), out[hi].to_numpy(dtype=float)
                        out[lo] = np.where(turn, flip(high), low)
                        out[hi] = np.where(turn, flip(low), high)
    family = next((c for c in ("cut", "class", "rate") if c in out.columns), None)
    keys = [out["group_j"].astype(str).map(rank).fillna(far), out["group_i"].astype(str).map(rank).fillna(far)]
    if family is not None:
        first = {f: r for r, f in enumerate(dict.fromkeys(out[family]))}
        keys.insert(0, out[family].map(first))
    order = np.lexsort([k.to_numpy() for k in reversed(keys)])
    return out.iloc[order].reset_index(drop=True)
