"""The audit: a set of named group confusion matrices and every question asked of them.

Like Fairlearn's ``MetricFrame``, one object answers "per group" questions
(:meth:`Audit.group_table`) and "between groups" questions
(:meth:`Audit.pairwise`, :meth:`Audit.verdicts`). The dashboard keeps exactly
one :class:`Audit` in its session state; every page reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from . import bias, match
from . import metrics as m
from .confusion import CELLS, ConfusionMatrix
from .stability import RowData

#: Default |OFI| below which the two groups' marginal benefits count as equal.
DEFAULT_OFI_TOLERANCE = 0.05

READINGS = ("algorithmic bias", "systemic disparity", "no bias detected", "undefined")


@dataclass(frozen=True)
class Audit:
    """Named group confusion matrices plus where they came from.

    Parameters
    ----------
    cms : mapping of group name to ConfusionMatrix
        At least two non-empty groups with distinct, non-blank names.
    source : str
        Where the data came from, in words (shown on every page).
    notes : sequence of str
        Caveats to show with the data (e.g. "labels flipped so positive = beneficial").
    positive_outcome : str
        What a positive prediction means here, in words.
    group_columns : sequence of str
        The columns the groups came from (row-level uploads).
    rows : RowData, optional
        The individuals behind the CMs (row-level uploads and demos): labels, predictions,
        group per row, and an ensemble's probabilities or features where available.
    """

    cms: Mapping[str, ConfusionMatrix]
    source: str = "uploaded data"
    notes: tuple[str, ...] = ()
    positive_outcome: str = "the beneficial outcome"
    group_columns: tuple[str, ...] = field(default=())
    rows: RowData | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        cms = dict(self.cms)
        if len(cms) < 2:
            raise ValueError(f"an audit needs at least two groups, got {len(cms)}")
        for name, cm in cms.items():
            if not isinstance(name, str) or not name.strip():
                raise ValueError(f"group names must be non-blank text, got {name!r}")
            if not isinstance(cm, ConfusionMatrix):
                raise ValueError(f"group {name!r}: expected a ConfusionMatrix, got {type(cm).__name__}")
            if cm.n == 0:
                raise ValueError(f"group {name!r} is empty (TP = FN = FP = TN = 0)")
        object.__setattr__(self, "cms", cms)
        object.__setattr__(self, "notes", tuple(self.notes))
        if self.rows is not None:
            if not isinstance(self.rows, RowData):
                raise ValueError(f"rows must be RowData, got {type(self.rows).__name__}")
            unknown = set(self.rows.groups.tolist()) - set(cms)
            if unknown:
                raise ValueError(f"rows name groups the CMs lack: {', '.join(map(repr, sorted(unknown, key=str)))}")

    @property
    def groups(self) -> list[str]:
        """Group names in their given order."""
        return list(self.cms)

    def total(self) -> ConfusionMatrix:
        """All groups pooled."""
        return ConfusionMatrix.from_array(np.sum([cm.as_array() for cm in self.cms.values()], axis=0))

    def rest_of(self, group: str) -> ConfusionMatrix:
        """The pooled CM of every group except ``group`` (the default reference)."""
        return self.total() - self.cms[self._check(group)]

    def _check(self, group: str) -> str:
        if group not in self.cms:
            raise ValueError(f"unknown group {group!r}; groups are {', '.join(self.groups)}")
        return group

    def cells(self) -> pd.DataFrame:
        """TP, FN, FP, TN and n per group."""
        df = pd.DataFrame([cm.as_array() for cm in self.cms.values()], index=self.groups, columns=list(CELLS))
        df.insert(0, "n", df.sum(axis=1))
        df.index.name = "group"
        return df

    def group_table(self, names: Iterable[str] = m.NAMES) -> pd.DataFrame:
        """Every single-group metric per group (NaN where undefined), with n and the cells."""
        names = list(names)
        cells = self.cells()
        arr = cells[list(CELLS)].to_numpy()
        values = {name: m.compute(name, *arr.T) for name in names}
        return pd.concat([cells, pd.DataFrame(values, index=cells.index)], axis=1)

    def undefined_reasons(self, names: Iterable[str] = m.NAMES) -> dict[str, dict[str, str]]:
        """``{group: {metric: reason}}`` for every undefined single-group value."""
        out: dict[str, dict[str, str]] = {}
        for g, cm in self.cms.items():
            reasons = {name: r for name in names if (r := m.undefined_reason(name, cm))}
            if reasons:
                out[g] = reasons
        return out

    def pairwise(self, name: str) -> pd.DataFrame:
        """Comparison ``name`` for every ordered pair: rows i, columns j."""
        return bias.pairwise(name, self.cms)

    def versus_reference(self, reference: str, names: Iterable[str] = bias.NAMES) -> pd.DataFrame:
        """Each group i compared with the reference group j, for every comparison in ``names``."""
        ref = self.cms[self._check(reference)]
        rows = {g: {name: bias.compare(name, cm, ref) for name in names}
                for g, cm in self.cms.items() if g != reference}
        df = pd.DataFrame.from_dict(rows, orient="index")
        df.index.name = f"group i (vs {reference})"
        return df

    def reference_for(self, group: str, reference: str | None = None) -> ConfusionMatrix:
        """The MATCH reference for ``group``: the rest of the data, or the named ``reference`` group."""
        return self.rest_of(group) if reference is None else self.cms[self._check(reference)]

    def match_table(self, names: Iterable[str] = ("PPR", "TPR", "FPR", "B"), reference: str | None = None,
                    method: str = "exact", alpha: float = 0.05, adjust: bool = True) -> pd.DataFrame:
        """The MATCH test (SCIENCE.md §3) of every group against its reference, for every metric.

        Parameters
        ----------
        names : metrics from :data:`fairness_core.match.SUPPORTED`.
        reference : None for "the rest of the data" (each group against all
            other groups pooled), or a group name (that group is then not tested).
        method : see :func:`fairness_core.match.test`.
        alpha : level below which a group "differs from the reference".
        adjust : Holm-adjust the p-values across the whole table (family-wise
            error rate alpha); otherwise each test stands alone.

        Columns: group, n, metric, observed, reference score, percentile,
        p-value, adjusted p-value (NaN when ``adjust`` is off), verdict, note.
        """
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        names = list(names)
        rows = []
        for g, cm in self.cms.items():
            if g == reference:
                continue
            ref = self.reference_for(g, reference)
            for name in names:
                r = match.test(name, cm, ref, method=method)
                rows.append({"group": g, "n": cm.n, "metric": name, "observed": r.observed,
                             "reference score": m.compute(name, ref), "percentile": r.cdf,
                             "p-value": r.p_value, "note": r.note})
        df = pd.DataFrame(rows)
        df["adjusted p-value"] = match.holm(df["p-value"].to_numpy()) if adjust else np.nan
        decisive = df["adjusted p-value"] if adjust else df["p-value"]
        df["verdict"] = np.where(decisive.isna(), "undefined",
                                 np.where(decisive < alpha, "differs from the reference",
                                          "indistinguishable from the reference"))
        return df[["group", "n", "metric", "observed", "reference score", "percentile", "p-value",
                   "adjusted p-value", "verdict", "note"]]

    def verdicts(self, ofi_tolerance: float = DEFAULT_OFI_TOLERANCE) -> pd.DataFrame:
        """Per unordered pair: OFI, DI, the four-fifths verdict and their joint reading.

        The reading follows SCIENCE.md §2: |OFI| > tolerance means the
        algorithm is at fault (it gives one group more benefit than its labels
        warrant, relative to the other); |OFI| <= tolerance with DI outside
        [4/5, 5/4] means a systemic disparity outside the algorithm (different
        base rates); otherwise no bias is detected.

        "MATCH p (B)" is the exact two-sided MATCH p-value of the smaller group's
        marginal benefit under the larger group's cell rates (SCIENCE.md §3): a
        large p means the OFI could be a small-sample accident, and an
        "algorithmic bias" explanation then says so.
        """
        if not (0 <= ofi_tolerance <= 2):
            raise ValueError(f"ofi_tolerance must be in [0, 2], got {ofi_tolerance}")
        rows = []
        for gi, gj in combinations(self.groups, 2):
            ci, cj = self.cms[gi], self.cms[gj]
            ofi = bias.compare("OFI", ci, cj)
            di = bias.compare("DI", ci, cj)
            ff = bias.four_fifths_verdict(di)
            reading, explanation = _reading(gi, gj, ci, cj, ofi, di, ff, ofi_tolerance)
            small, large = (gi, gj) if ci.n <= cj.n else (gj, gi)
            noise = match.test("B", self.cms[small], self.cms[large]).p_value
            if reading == "algorithmic bias" and noise >= 0.05:
                explanation += (f" Caution: at n = {self.cms[small].n:,}, {small}'s marginal benefit is within "
                                f"small-sample noise of {large}'s (MATCH p = {noise:.3g}); see the "
                                "Sample-Size Explorer.")
            rows.append({
                "group i": gi, "group j": gj, "n_i": ci.n, "n_j": cj.n,
                "B_i": m.compute("B", ci), "B_j": m.compute("B", cj),
                "OFI": ofi, "OFI favours": _favours(ofi, gi, gj, ofi_tolerance),
                "DI": di, "four-fifths": ff.replace("for i", f"for {gi}").replace("for j", f"for {gj}"),
                "reading": reading, "MATCH p (B)": noise, "explanation": explanation,
            })
        return pd.DataFrame(rows)


def _favours(ofi: float, gi: str, gj: str, tol: float) -> str:
    if np.isnan(ofi):
        return "undefined"
    if abs(ofi) <= tol:
        return "neither (|OFI| ≤ tolerance)"
    return gi if ofi > 0 else gj


def _reading(gi: str, gj: str, ci: ConfusionMatrix, cj: ConfusionMatrix, ofi: float, di: float,
             ff: str, tol: float) -> tuple[str, str]:
    """The plain-words joint reading of OFI and DI for one pair."""
    if np.isnan(ofi):
        return "undefined", "OFI is undefined because a group is empty."
    di_text = (f"DI = {di:.3f}" if np.isfinite(di)
               else f"DI is undefined ({bias.undefined_reason('DI', ci, cj)})")
    if abs(ofi) > tol:
        winner, loser = (gi, gj) if ofi > 0 else (gj, gi)
        bw, bl = (m.compute("B", ci), m.compute("B", cj)) if ofi > 0 else (m.compute("B", cj), m.compute("B", ci))
        return "algorithmic bias", (
            f"The model is at fault: measured against what their actual labels warrant, {winner} fares "
            f"better than {loser} (marginal benefit {bw:+.3f} vs {bl:+.3f}; OFI = {ofi:+.3f}, beyond ±{tol:g}). "
            f"{di_text}."
        )
    if ff in ("bias for i", "bias for j"):
        high, low = (gi, gj) if ff == "bias for i" else (gj, gi)
        return "systemic disparity", (
            f"The model treats both groups alike relative to their labels (|OFI| = {abs(ofi):.3f} ≤ {tol:g}), "
            f"but {high} is selected far more often than {low} ({di_text}, outside 4/5–5/4): the gap "
            f"comes from different base rates, outside the algorithm."
        )
    if ff == "undefined":
        return "no bias detected", (
            f"No algorithmic bias (|OFI| = {abs(ofi):.3f} ≤ {tol:g}); {di_text}, so the four-fifths rule "
            f"cannot be applied."
        )
    return "no bias detected", (
        f"No algorithmic bias (|OFI| = {abs(ofi):.3f} ≤ {tol:g}) and selection rates within the "
        f"four-fifths band ({di_text})."
    )
