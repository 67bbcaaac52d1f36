"""Many pairs at once: :class:`OFIPairs` and :class:`DIPairs`, with bounds and p-values at any level and null."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy import stats

from .common import (DI_METHODS, OFI_RANGE, PSEUDO_CORRECT, PSEUDO_FN, PSEUDO_FP, SMALL_N_DI, FloatArray,
                     _check_method, _round_df, _t_ppf)
from .limits import (_K, _Z_GRID, _b_limits, _cp_limits, _group_index, _GridBounds, _Limits, _mn_z, _mover_ratio,
                     _score_bounds, _t_side)


def _ofi_parts(fp: FloatArray, fn: FloatArray, n: FloatArray, pseudo: bool) -> tuple[FloatArray, FloatArray]:
    """(B, Var(B̂)) of one group, with or without the pseudo-counts."""
    if pseudo:
        m = n + PSEUDO_FP + PSEUDO_FN + PSEUDO_CORRECT
        pp, pm = (fp + PSEUDO_FP) / m, (fn + PSEUDO_FN) / m
    else:
        m = n
        pp, pm = fp / m, fn / m
    b = pp - pm
    return b, np.maximum(pp + pm - b * b, 0.0) / m

def di_methods_auto(n_i: npt.ArrayLike, n_j: npt.ArrayLike) -> npt.NDArray[np.str_]:
    """What ``method="auto"`` picks for DI: ``"score"`` or ``"exact"``."""
    n_i, n_j = np.asarray(n_i), np.asarray(n_j)
    return np.where((n_i >= SMALL_N_DI) & (n_j >= SMALL_N_DI), "score", "exact")

class OFIPairs:
    """OFI = B_i − B_j of many pairs with dual bounds and one-sided p-values at any level or null value.

    ``method`` per pair (see the module docstring); build with :func:`ofi_pairs`. ``p_value(null, "above")``
    tests H0: Δ ≤ null (small when the lower bound lies above ``null``), ``"below"`` H0: Δ ≥ null;
    ``bounds(gamma)`` gives the lower and upper bound, each one-sided at level 1 − gamma, so that
    ``p_value(null, "above") < gamma`` exactly when ``bounds(gamma)[0] > null``.
    """

    def __init__(self, fp_i: FloatArray, fn_i: FloatArray, n_i: FloatArray, fp_j: FloatArray, fn_j: FloatArray,
                 n_j: FloatArray, method: str) -> None:
        self.shape = fp_i.shape
        fp_i, fn_i, n_i, fp_j, fn_j, n_j = (a.ravel() for a in (fp_i, fn_i, n_i, fp_j, fn_j, n_j))
        self.size = fp_i.size
        self.method = (np.full(self.size, "score") if method == "auto" else np.full(self.size, method)).astype(str)
        self.estimate = (fp_i - fn_i) / n_i - (fp_j - fn_j) / n_j
        self._score = np.flatnonzero(self.method == "score")
        self._t = np.flatnonzero(self.method != "score")
        if self._t.size:
            wald = self.method[self._t] == "wald"
            s = self._t
            b_ai, v_ai = _ofi_parts(fp_i[s], fn_i[s], n_i[s], True)
            b_aj, v_aj = _ofi_parts(fp_j[s], fn_j[s], n_j[s], True)
            _, v_wi = _ofi_parts(fp_i[s], fn_i[s], n_i[s], False)
            _, v_wj = _ofi_parts(fp_j[s], fn_j[s], n_j[s], False)
            with np.errstate(divide="ignore", invalid="ignore"):
                df_adj = (v_ai + v_aj) ** 2 / (v_ai ** 2 / np.maximum(n_i[s] - 1, 1) + v_aj ** 2 / np.maximum(n_j[s] - 1, 1))
            self._centre = np.where(wald, self.estimate[s], b_ai - b_aj)
            self._se = np.sqrt(np.where(wald, v_wi + v_wj, v_ai + v_aj))
            self._df = np.where(wald, np.inf, _round_df(df_adj))
        if self._score.size:
            s = self._score
            keys, gi, gj = _group_index(fp_i[s], fn_i[s], n_i[s], fp_j[s], fn_j[s], n_j[s])
            limits = _Limits(_b_limits, keys, s.size)
            b = (keys[:, 0] - keys[:, 1]) / keys[:, 2]
            est = b[gi] - b[gj]

            if limits.table:   # squared distances from B̂ to each limit, flat: one gather per group and bound
                width = _Z_GRID.size
                below = ((np.repeat(b, width) - limits.low) ** 2)
                above = ((limits.high - np.repeat(b, width)) ** 2)

                def at(k: npt.NDArray[np.intp], rows: npt.NDArray[np.intp],
                       side: str = "both") -> tuple[FloatArray | None, FloatArray | None]:
                    a, c = gi[rows] * width + k, gj[rows] * width + k
                    low = high = None
                    if side != "high":
                        low = np.maximum(est[rows] - np.sqrt(below[a] + above[c]), -OFI_RANGE)
                    if side != "low":
                        high = np.minimum(est[rows] + np.sqrt(above[a] + below[c]), OFI_RANGE)
                    return low, high

                def prepare(rows: npt.NDArray[np.intp]):  # type: ignore[no-untyped-def]
                    first, second, centre = gi[rows] * width, gj[rows] * width, est[rows]

                    def at_k(k: npt.NDArray[np.intp],
                             side: str = "both") -> tuple[FloatArray | None, FloatArray | None]:
                        a, c = first + k, second + k
                        low = high = None
                        if side != "high":
                            low = np.maximum(centre - np.sqrt(below[a] + above[c]), -OFI_RANGE)
                        if side != "low":
                            high = np.minimum(centre + np.sqrt(above[a] + below[c]), OFI_RANGE)
                        return low, high
                    return at_k
            else:
                prepare = None  # type: ignore[assignment]

                def at(k: npt.NDArray[np.intp], rows: npt.NDArray[np.intp],
                       side: str = "both") -> tuple[FloatArray | None, FloatArray | None]:
                    a, c = gi[rows], gj[rows]
                    lo_i, hi_i = limits(a, k)
                    lo_j, hi_j = limits(c, k)
                    low = est[rows] - np.sqrt((b[a] - lo_i) ** 2 + (hi_j - b[c]) ** 2)
                    high = est[rows] + np.sqrt((hi_i - b[a]) ** 2 + (b[c] - lo_j) ** 2)
                    return np.maximum(low, -OFI_RANGE), np.minimum(high, OFI_RANGE)

            self._grid = _GridBounds(at, s.size, prepare=prepare)

    def p_value(self, null: float = 0.0, side: str = "two-sided") -> FloatArray:
        """p-value of H0: Δ ≤ null (``"above"``), Δ ≥ null (``"below"``) or Δ = null (``"two-sided"``: twice the
        smaller one-sided p, at most 1)."""
        if side == "two-sided":
            return np.minimum(1.0, 2 * np.minimum(self.p_value(null, "above"), self.p_value(null, "below")))
        out = np.full(self.size, np.nan)
        if self._score.size:
            out[self._score] = self._grid.p_value(null, side)
        if self._t.size:
            out[self._t] = _t_side(self._centre, self._se, self._df, np.float64(null), side)
        return out.reshape(self.shape)

    def bounds(self, gamma: float) -> tuple[FloatArray, FloatArray]:
        """Lower and upper bounds, each one-sided at level 1 − ``gamma`` (the two-sided interval at 1 − 2·gamma)."""
        low, high = np.full(self.size, np.nan), np.full(self.size, np.nan)
        if self._score.size:
            low[self._score], high[self._score] = np.clip(self._grid.bounds(gamma), -OFI_RANGE, OFI_RANGE)
        if self._t.size:
            q = _t_ppf(1 - gamma, self._df)
            low[self._t] = np.clip(self._centre - q * self._se, -OFI_RANGE, OFI_RANGE)
            high[self._t] = np.clip(self._centre + q * self._se, -OFI_RANGE, OFI_RANGE)
        return low.reshape(self.shape), high.reshape(self.shape)

    def bounds_at(self, *gammas: float) -> tuple[FloatArray, ...]:
        """:meth:`bounds` at several ``gammas``: (low, high) of the first, then of the next, ... in one tuple."""
        return tuple(b for gamma in gammas for b in self.bounds(gamma))


def ofi_pairs(fp_i: npt.ArrayLike, fn_i: npt.ArrayLike, n_i: npt.ArrayLike, fp_j: npt.ArrayLike,
              fn_j: npt.ArrayLike, n_j: npt.ArrayLike, method: str = "auto") -> OFIPairs:
    """OFI of many pairs (broadcastable arrays of counts) ready for bounds and p-values at any level and null.

    >>> o = ofi_pairs([0], [0], [40], [0], [0], [5000])     # no errors in either group
    >>> low, high = o.bounds(0.025)
    >>> bool(high[0] > 0.075)     # 0 errors in 40 rows allow an error rate above 7.5 %
    True
    """
    _check_method(method, ("auto", "score", "adjusted", "wald"), "vectorized OFI")
    arrays = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (fp_i, fn_i, n_i, fp_j, fn_j, n_j)))
    if np.any(arrays[2] < 1) or np.any(arrays[5] < 1):
        raise ValueError("every group needs at least one row for an OFI interval")
    return OFIPairs(*arrays, method)


class DIPairs:
    """DI = PPR_i / PPR_j of many pairs with dual bounds and one-sided p-values (as :class:`OFIPairs`).

    ``"score"`` pairs use the Miettinen–Nurminen statistic (closed-form p-values, bounds by root finding);
    ``"exact"`` pairs MOVER-R from Clopper–Pearson limits, with p-values read off the same bounds. NaN where
    neither group selects anyone.
    """

    def __init__(self, x1: FloatArray, n1: FloatArray, x2: FloatArray, n2: FloatArray, method: str) -> None:
        self.shape = x1.shape
        x1, n1, x2, n2 = (a.ravel() for a in (x1, n1, x2, n2))
        self.size = x1.size
        self.method = (di_methods_auto(n1, n2) if method == "auto" else np.full(self.size, method)).astype(str)
        self.nobody = (x1 == 0) & (x2 == 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.estimate = np.where(x2 > 0, (x1 / n1) / (x2 / n2), np.nan)
        self._counts = (x1, n1, x2, n2)
        self._z_at: dict[float, FloatArray] = {}     # the score statistic at a null, kept for the other side
        self._score = np.flatnonzero(self.method == "score")
        self._exact = np.flatnonzero(self.method == "exact")
        if self._exact.size:
            s = self._exact
            keys, gi, gj = _group_index(x1[s], n1[s], x2[s], n2[s])
            limits = _Limits(_cp_limits, keys, s.size)
            r = keys[:, 0] / keys[:, 1]
            zero1, zero2 = x1[s] == 0, x2[s] == 0

            def at(k: npt.NDArray[np.intp], rows: npt.NDArray[np.intp],
                   side: str = "both") -> tuple[FloatArray, FloatArray]:
                a, c = gi[rows], gj[rows]
                lo_i, hi_i = limits(a, k)
                lo_j, hi_j = limits(c, k)
                return _mover_ratio(r[a], r[c], lo_i, hi_i, lo_j, hi_j, zero1[rows], zero2[rows])

            def prepare(rows: npt.NDArray[np.intp]):  # type: ignore[no-untyped-def]
                a, c, r_a, r_c, zero_a, zero_c = gi[rows], gj[rows], r[gi[rows]], r[gj[rows]], zero1[rows], zero2[rows]

                def at_k(k: npt.NDArray[np.intp], side: str = "both") -> tuple[FloatArray, FloatArray]:
                    lo_i, hi_i = limits(a, k)
                    lo_j, hi_j = limits(c, k)
                    return _mover_ratio(r_a, r_c, lo_i, hi_i, lo_j, hi_j, zero_a, zero_c)
                return at_k

            self._grid = _GridBounds(at, s.size, log=True, prepare=prepare)

    def p_value(self, null: float = 1.0, side: str = "two-sided") -> FloatArray:
        """p-value of H0: DI ≤ null (``"above"``), DI ≥ null (``"below"``) or DI = null (``"two-sided"``)."""
        if side == "two-sided":
            return np.minimum(1.0, 2 * np.minimum(self.p_value(null, "above"), self.p_value(null, "below")))
        out = np.full(self.size, np.nan)
        if self._score.size:
            z = self._z_at.get(float(null))
            if z is None:
                x1, n1, x2, n2 = (a[self._score] for a in self._counts)
                z = self._z_at[float(null)] = _mn_z(x1, n1, x2, n2, np.full(x1.shape, float(null)))
            out[self._score] = stats.norm.sf(z) if side == "above" else stats.norm.cdf(z)
        if self._exact.size:
            out[self._exact] = self._grid.p_value(null, side)
        return np.where(self.nobody, np.nan, out).reshape(self.shape)

    def bounds(self, gamma: float) -> tuple[FloatArray, FloatArray]:
        """Lower and upper bounds, each one-sided at level 1 − ``gamma``."""
        low, high = self.bounds_at(gamma)
        return low, high

    def bounds_at(self, *gammas: float) -> tuple[FloatArray, ...]:
        """:meth:`bounds` at several ``gammas``: (low, high) of the first, then of the next, ... in one tuple. The
        score pairs' roots at every level are found together (each pair's search is its own, so the bounds are
        those of one level at a time)."""
        size, levels = self.size, len(gammas)
        low, high = np.full((levels, size), np.nan), np.full((levels, size), np.nan)
        if self._score.size:
            counts = (np.tile(a[self._score], levels) for a in self._counts)
            q = np.repeat([float(stats.norm.isf(gamma)) for gamma in gammas], self._score.size)
            score_low, score_high = _score_bounds(*counts, q)
            low[:, self._score] = score_low.reshape(levels, -1)
            high[:, self._score] = score_high.reshape(levels, -1)
        if self._exact.size:
            for row, gamma in enumerate(gammas):
                low[row, self._exact], high[row, self._exact] = self._grid.bounds(gamma)
        out = []
        for row in range(levels):
            out += [np.where(self.nobody, np.nan, low[row]).reshape(self.shape),
                    np.where(self.nobody, np.nan, high[row]).reshape(self.shape)]
        return tuple(out)


def di_pairs(sel_i: npt.ArrayLike, n_i: npt.ArrayLike, sel_j: npt.ArrayLike, n_j: npt.ArrayLike,
             method: str = "auto") -> DIPairs:
    """DI of many pairs (``sel`` = predicted positives TP + FP) ready for bounds and p-values at any level and null.

    >>> d = di_pairs([3], [10], [9], [12], "exact")
    >>> low, high = d.bounds(0.025)
    >>> bool((d.p_value(1.0)[0] < 0.05) == (high[0] < 1 or low[0] > 1))   # the test is the interval's dual
    True
    """
    _check_method(method, DI_METHODS, "DI")
    arrays = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (sel_i, n_i, sel_j, n_j)))
    if np.any(arrays[1] < 1) or np.any(arrays[3] < 1):
        raise ValueError("every group needs at least one row for a DI interval")
    return DIPairs(*arrays, method)
