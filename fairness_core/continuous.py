"""Audits of amounts: a premium, a credit limit, a salary — a model that predicts a number (issue 53).

Each person's **benefit** is the signed error in the direction declared: b = ŷ − y when a larger prediction is a
benefit for the person (a credit limit, a salary), b = y − ŷ when it is a harm (a premium, a price, a risk). A
group's **marginal benefit** is its mean benefit B = b̄ — the continuous form of (FP − FN)/n — and the objective
fairness index of a pair is

    OFI = B_i − B_j, in the outcome's units (dollars a year, not a share).

On 0/1 outcomes and predictions b ∈ {−1 (FN), 0, +1 (FP)}, so B = (FP − FN)/n and the OFI is the binary audit's,
exactly (tests/test_continuous.py). Verdicts use the binary audit's machinery (:mod:`fairness_core.verdicts`):
three-sided claims against a tolerance in the outcome's units, Holm / Benjamini–Hochberg / no adjustment, one
interval per pair at the adjusted level, and "systemic disparity" read from the mean-prediction ratio's interval
against a band (the four-fifths band by default). The interval of a difference of mean benefits is the union of
Hall's skewness-corrected and Welch's intervals, and a pair too skewed for its sizes is "inconclusive" with the
reason (:mod:`fairness_core.statistics.amounts`; docs/methods.md, "Amounts").

>>> a = ContinuousAudit.from_predictions([10, 12, 9, 11, 20, 22, 19, 21], [11, 12, 10, 12, 18, 21, 18, 19],
...                                      ["a"] * 4 + ["b"] * 4, positive_is="benefit")
>>> list(a.groups), a.marginal_benefit().tolist()
(['a', 'b'], [0.75, -1.5])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .common import text
from .common.validation import DataValidationError, Problem, group_values as group_values_, intersection_names, \
    show_value
from .common.vocabulary import DEFAULT_ALPHA, check_alpha, resolve_positive_is
from .results import Verdicts
from .statistics import verdicts as verdicts_
from .statistics.amounts import SKEW_LIMIT, TOO_SKEWED, MeanPairs, Moments, RatioPairs
from .statistics.row_counts import _compact, _group_codes, _levels_of, _sensitive_frame, _vector
from .statistics.verdicts import VerdictSettings, VerdictTable
from .wording.amounts import amount_explanations

#: The amounts whose moments an audit keeps per group, in the order of :meth:`ContinuousAudit.stats`' columns.
AMOUNTS = ("outcome", "prediction", "benefit", "abs_error", "squared_error")
#: The band of the mean-prediction ratio inside which no disparity is claimed (the four-fifths band).
DEFAULT_BAND = (0.8, 1.25)
#: Why a pair's ratio question cannot be asked.
RATIO_UNDEFINED = "a group's mean prediction is not positive, so the mean prediction ratio is undefined"


def _amounts(values: Any, name: str) -> np.ndarray:
    """One amount column as float64; a value that is no number, missing or infinite is named by its position."""
    arr = _vector(values, name)
    if arr.dtype.kind in "biuf":
        x = arr.astype(float)
        bad_text = np.zeros(x.size, dtype=bool)
    else:
        x = pd.to_numeric(pd.Series(arr, dtype=object), errors="coerce").to_numpy(dtype=float)
        bad_text = np.isnan(x) & ~pd.isna(pd.Series(arr, dtype=object)).to_numpy()
    problems = []
    for what, bad in (("is not a number", bad_text), ("is missing", np.isnan(x) & ~bad_text),
                      ("is infinite", np.isinf(x))):
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            more = f" ({int(bad.sum()):,} such values)" if bad.sum() > 1 else ""
            shown = f" {show_value(arr[k])}" if what == "is not a number" else ""
            problems.append(Problem(f"{name}[{k}]:{shown} {what}{more}; an amount must be a finite number"))
    if problems:
        raise DataValidationError(problems)
    if x.size and x.min() == x.max():
        raise DataValidationError(f"{name}: every value is {x[0]:g}; an amount that never varies cannot be audited "
                                  "(is this the right column?)")
    return x


@dataclass(frozen=True)
class ContinuousAudit:
    """An audit of a model that predicts an amount: per-group moments of the outcome, the prediction, the benefit
    and the errors (:class:`~fairness_core.statistics.amounts.Moments`), and every question asked of them.

    Build it with :meth:`from_predictions` (rows) or :meth:`from_stats` (per-group sufficient statistics, e.g. from
    :func:`fairness_core.io.aggregate_amounts`). ``moments`` maps each of :data:`AMOUNTS` to its Moments, one entry
    per group of ``groups``; ``positive_is`` is "benefit" (a larger prediction is a benefit), "harm" or None
    (undeclared: a benefit assumed). No rows are kept.
    """

    groups: tuple[str, ...]
    moments: Mapping[str, Moments] = field(repr=False)
    positive_is: str | None = None
    source: str = "predictions"
    notes: tuple[str, ...] = ()
    group_columns: tuple[str, ...] = ()
    group_values: Mapping[str, tuple[str, ...]] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "groups", tuple(map(str, self.groups)))
        if len(self.groups) < 2:
            raise ValueError(f"an audit needs at least two groups, got {len(self.groups)}")
        if missing := [a for a in AMOUNTS if a not in self.moments]:
            raise ValueError(f"moments lacks {', '.join(missing)}")
        for name in AMOUNTS:
            if self.moments[name].n.shape != (len(self.groups),):
                raise ValueError(f"moments[{name!r}] needs one entry per group")
        n = self.n
        if (small := np.flatnonzero(n < 2)).size:
            raise DataValidationError([Problem(f"group {self.groups[k]!r} has {int(n[k])} row(s); a mean's interval "
                                               "needs at least two rows per group") for k in small])
        if self.positive_is not in (None, "benefit", "harm"):
            raise ValueError(f"positive_is must be 'benefit', 'harm' or None, got {self.positive_is!r}")

    # ------------------------------------------------------------------ building

    @classmethod
    def from_predictions(cls, y_true: Any, y_pred: Any, sensitive_features: Any, positive_is: str | None = None, *,
                         source: str = "predictions") -> "ContinuousAudit":
        """The audit of amounts in one call, as :meth:`fairness_core.audit.Audit.from_predictions`.

        Parameters
        ----------
        y_true, y_pred : array-like of numbers
            The observed amount and the model's prediction of it (lists, NumPy, pandas or polars). A value that is
            no number, missing or infinite is refused, named by array position (``y_true[3]``); so is a column whose
            values are all equal, and lengths that differ.
        sensitive_features : array-like, Series, DataFrame or dict
            One column, or several (groups are then their intersections, "A & B"; :meth:`marginal` gives each
            attribute alone). Every group needs at least two rows.
        positive_is : {"benefit", "harm"}
            Whether a larger prediction is a benefit for the person (a credit limit, a salary) or a harm (a
            premium, a price, a risk score). Omitted: a :class:`UserWarning` names the assumption (a benefit).

        Examples
        --------
        >>> a = ContinuousAudit.from_predictions([100, 120, 90, 300, 310, 280], [110, 125, 95, 290, 300, 285],
        ...                                      ["x", "x", "x", "y", "y", "y"], positive_is="harm")
        >>> a.marginal_benefit().round(3).tolist()      # harm: b = y − ŷ (overcharged rows are negative)
        [-6.667, 5.0]
        """
        positive_is = resolve_positive_is(positive_is, "a larger predicted amount")
        y = _vector(y_true, "y_true")
        p = _vector(y_pred, "y_pred")
        features = _sensitive_frame(sensitive_features)
        sizes = {"y_true": len(y), "y_pred": len(p), "sensitive_features": len(features)}
        if len(set(sizes.values())) != 1:
            raise DataValidationError("lengths differ: " + ", ".join(f"{k} has {v:,}" for k, v in sizes.items()))
        y, p = _amounts(y, "y_true"), _amounts(p, "y_pred")
        notes: list[str] = []
        try:
            codes, levels = _group_codes(features, list(features.columns), notes, positions=True)
        except DataValidationError as exc:
            raise DataValidationError([Problem(f"{q.column}[{q.row - 1}]: {q.message}" if q.row and q.column
                                               else q.message) for q in exc.problems]) from None
        joint, inverse = _compact(codes, int(np.prod([len(v) for v in levels])))
        parts = _levels_of(joint, levels)
        names = intersection_names(parts)
        k = len(names)
        if k < 2:
            raise DataValidationError(f"all {len(y):,} rows fall in one group; an audit compares at least two groups")
        counts = np.bincount(inverse, minlength=k)
        if (one := np.flatnonzero(counts < 2)).size:
            problems = [Problem(f"group {names[g]!r} has one row ({', '.join(features.columns)}[{int(np.argmax(inverse == g))}]); "
                                "a mean's interval needs at least two rows per group") for g in one]
            raise DataValidationError(problems)
        error = p - y
        benefit = error if positive_is != "harm" else -error
        moments = {"outcome": Moments.of(y, inverse, k), "prediction": Moments.of(p, inverse, k),
                   "benefit": Moments.of(benefit, inverse, k), "abs_error": Moments.of(np.abs(error), inverse, k),
                   "squared_error": Moments.of(error * error, inverse, k)}
        return cls(tuple(names), moments, positive_is, source, tuple(notes), tuple(features.columns),
                   group_values_(names, parts))

    @classmethod
    def from_stats(cls, stats: pd.DataFrame, positive_is: str | None = None, *, source: str = "per-group statistics",
                   group_columns: Sequence[str] = (), group_values: Mapping[str, tuple[str, ...]] | None = None
                   ) -> "ContinuousAudit":
        """The audit from per-group sufficient statistics: ``stats`` indexed by group, with ``n`` and, for each of
        :data:`AMOUNTS`, ``<amount>_mean``, ``<amount>_m2`` (Σ(x − x̄)²) and ``<amount>_m3`` (Σ(x − x̄)³) — the
        table :meth:`stats` returns. The benefit is taken as given (its direction is ``positive_is``'s).

        >>> a = ContinuousAudit.from_predictions([1, 2, 3, 5, 4, 8], [2, 2, 2, 4, 4, 4], list("aaabbb"),
        ...                                      positive_is="benefit")
        >>> ContinuousAudit.from_stats(a.stats(), "benefit") == a
        True
        """
        missing = [c for c in ("n", *(f"{a}_{m}" for a in AMOUNTS for m in ("mean", "m2", "m3"))) if c not in stats]
        if missing:
            raise ValueError(f"stats lacks the column(s) {', '.join(missing)}")
        n = stats["n"].to_numpy(dtype=float)
        moments = {a: Moments(n, *(stats[f"{a}_{m}"].to_numpy(dtype=float) for m in ("mean", "m2", "m3")))
                   for a in AMOUNTS}
        if positive_is is None:
            resolve_positive_is(None, "a larger predicted amount")
        return cls(tuple(map(str, stats.index)), moments, positive_is, source, (), tuple(group_columns), group_values)

    def stats(self) -> pd.DataFrame:
        """The per-group sufficient statistics (:meth:`from_stats` reads them back): n and each amount's mean, M2, M3."""
        columns: dict[str, np.ndarray] = {"n": self.n}
        for a in AMOUNTS:
            m = self.moments[a]
            columns.update({f"{a}_mean": m.mean, f"{a}_m2": m.m2, f"{a}_m3": m.m3})
        return pd.DataFrame(columns, index=pd.Index(self.groups, name="group"))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ContinuousAudit) and self.groups == other.groups
                and self.positive_is == other.positive_is
                and all(self.moments[a] == other.moments[a] for a in AMOUNTS))

    __hash__ = None  # type: ignore[assignment]

    # ------------------------------------------------------------------ per group

    @property
    def n(self) -> np.ndarray:
        """Rows per group."""
        return self.moments["benefit"].n

    @property
    def direction(self) -> str:
        """What the benefit is, in words, and whether that was declared."""
        if self.positive_is == "harm":
            return "a larger prediction is a harm (declared): benefit = outcome − prediction"
        said = "(declared)" if self.positive_is == "benefit" else "(assumed: not declared)"
        return f"a larger prediction is a benefit {said}: benefit = prediction − outcome"

    def marginal_benefit(self) -> pd.Series:
        """Each group's mean benefit B (the outcome's units), indexed by group."""
        return pd.Series(self.moments["benefit"].mean, index=list(self.groups), name="B")

    def by_group(self, alpha: float = DEFAULT_ALPHA, reference: str | None = None) -> pd.DataFrame:
        """Per group: n, mean outcome, mean prediction, mean benefit, MAE, RMSE and the mean prediction ratio to
        the ``reference`` group (default: the largest group), each with its interval at 1 − ``alpha`` (unadjusted).

        Means (outcome, prediction, benefit, MAE = mean |ŷ − y|): the union of Hall's skewness-corrected t and
        Student's t intervals (df = n − 1; :class:`~fairness_core.statistics.amounts.MeanPairs`). RMSE: the square
        root of the same interval for the mean squared error. Ratio: Fieller's interval
        (:class:`~fairness_core.statistics.amounts.RatioPairs`; NaN where a mean prediction is not positive, and
        for the reference itself). ``skew_index`` is the benefit's |G1|/√n; ``too_skewed`` says it exceeds
        :data:`~fairness_core.statistics.amounts.SKEW_LIMIT`, where the benefit's interval may undercover and the
        verdicts give no claim.
        """
        check_alpha(alpha)
        gamma = alpha / 2
        out = pd.DataFrame({"n": self.n.astype(np.int64)}, index=pd.Index(self.groups, name="group"))
        for label, amount in (("mean_outcome", "outcome"), ("mean_prediction", "prediction"),
                              ("mean_benefit", "benefit"), ("mae", "abs_error"), ("mse", "squared_error")):
            m = self.moments[amount]
            low, high = MeanPairs(m, skew_limit=None).bounds(gamma)
            if label == "mse":
                label, m_mean, low, high = "rmse", np.sqrt(m.mean), np.sqrt(np.maximum(low, 0)), np.sqrt(high)
            else:
                m_mean = m.mean
            out[label], out[f"{label}_ci_low"], out[f"{label}_ci_high"] = m_mean, low, high
        ref = self._index(reference) if reference is not None else int(np.argmax(self.n))
        pred = self.moments["prediction"]
        r = RatioPairs(pred, pred.take(np.full(len(self.groups), ref)))
        low, high = r.bounds(gamma)
        keep = np.arange(len(self.groups)) != ref
        out["prediction_ratio"] = r.estimate
        out["prediction_ratio_ci_low"] = np.where(keep, low, np.nan)
        out["prediction_ratio_ci_high"] = np.where(keep, high, np.nan)
        out["skew_index"] = MeanPairs(self.moments["benefit"], skew_limit=None).skew
        out["too_skewed"] = out["skew_index"] > SKEW_LIMIT
        out.attrs["reference"] = self.groups[ref]
        return out

    def _index(self, group: str) -> int:
        if group not in self.groups:
            raise ValueError(f"unknown group {group!r}; groups are {', '.join(self.groups)}")
        return self.groups.index(group)

    # ------------------------------------------------------------------ attributes

    @property
    def attributes(self) -> tuple[str, ...]:
        """The attributes whose intersections the groups are (empty unless there are two or more)."""
        return tuple(self.group_columns) if self.group_values is not None and len(self.group_columns) > 1 else ()

    def marginal(self, attribute: str) -> "ContinuousAudit":
        """The audit of one attribute alone, each value pooled over the other attributes (the groups' moments
        combined exactly, :meth:`~fairness_core.statistics.amounts.Moments.pool`), named as :meth:`Audit.marginal`
        names them."""
        if attribute not in self.attributes:
            raise ValueError(f"{attribute!r} is not one of this audit's attributes "
                             f"({', '.join(map(repr, self.attributes)) or 'it has a single one'})")
        assert self.group_values is not None
        k = self.group_columns.index(attribute)
        value_of = [self.group_values[g][k] for g in self.groups]
        values = list(dict.fromkeys(value_of))
        named = [f"{attribute} = {v}" if text.says_nothing_alone(v) else v for v in values]
        codes = np.array([values.index(v) for v in value_of])
        moments = {a: m.pool(codes, len(values)) for a, m in self.moments.items()}
        return ContinuousAudit(tuple(named), moments, self.positive_is, f"{self.source}, by {attribute} alone",
                               self.notes, (attribute,), {n: (v,) for v, n in zip(values, named)})

    # ------------------------------------------------------------------ verdicts

    def verdicts(self, tolerance: float, alpha: float = DEFAULT_ALPHA, adjust: str = "holm",
                 band: tuple[float, float] | None = DEFAULT_BAND, *, method: str = "union",
                 reference: str | None = None, unit: str = "") -> Verdicts:
        """A verdict for every pair of groups, in the five words of :meth:`fairness_core.audit.Audit.verdicts`.

        ``tolerance`` is the smallest difference of mean benefits that matters, **in the outcome's units** (200 for
        "$200 a year"). Each pair's OFI = B_i − B_j is judged by three-sided testing against ±tolerance, every
        claim adjusted across the pairs by ``adjust`` and read from one interval per pair at the adjusted level
        (:func:`fairness_core.verdicts.judge_pairs`); "systemic disparity" (OFI within the tolerance, the mean
        prediction ratio's interval outside ``band``) and "no bias detected" (both inside) read the ratio
        of mean predictions, group i's over group j's, with Fieller's interval. ``band=None`` asks no ratio
        question (for amounts that may be negative): OFI inside the tolerance is then "no bias detected".

        Pairs are oriented so that ``group_j`` has the larger mean prediction (ratio ≤ 1; on 0/1 data the binary
        audit's orientation), or is the ``reference`` group. A pair whose skew index exceeds
        :data:`~fairness_core.statistics.amounts.SKEW_LIMIT` gets no interval and no p-value: "inconclusive" with
        ``reason`` "too skewed for n rows to tell"; it takes no part in the adjustment.

        Columns: the binary table's where the meaning is the same — group_i, group_j, n_i, n_j, ofi (the
        outcome's units), ofi_ci_low, ofi_ci_high (adjusted), ofi_p, ofi_p_adjusted, verdict, favours,
        explanation, ofi_ci_low_unadjusted, ofi_ci_high_unadjusted, ofi_beyond_tolerance, ofi_within_tolerance,
        ofi_differs, ofi_p_beyond, ofi_p_within, ofi_equivalent, ofi_mde, rows_needed_i, rows_needed_j,
        rows_needed_note, B_i, B_j, ofi_method — and, in place of DI's: ratio (mean prediction i / j),
        ratio_ci_low, ratio_ci_high (adjusted), ratio_p, ratio_p_adjusted, ratio_ci_low_unadjusted,
        ratio_ci_high_unadjusted, ratio_within_band, ratio_beyond_band, ratio_method ("fieller"); and reason
        (why no verdict could be given, else ""), skew_index.

        >>> rng = np.random.default_rng(0)
        >>> y = rng.normal(1000, 100, 600)
        >>> group = np.repeat(["a", "b"], 300)
        >>> pred = y + np.where(group == "a", 300, 0) + rng.normal(0, 50, 600)
        >>> v = ContinuousAudit.from_predictions(y, pred, group, positive_is="benefit").verdicts(tolerance=100)
        >>> v.loc[0, ["group_i", "group_j", "verdict", "favours"]].tolist()
        ['b', 'a', 'algorithmic bias', 'a']
        """
        settings = VerdictSettings(tolerance, alpha, adjust, method, "fieller", band or DEFAULT_BAND, amounts=True)
        names = list(self.groups)
        pred, benefit = self.moments["prediction"], self.moments["benefit"]
        ref = None if reference is None else self._index(reference)
        i, j = verdicts_._orient(pred.mean * self.n, self.n, *np.triu_indices(len(names), 1), ref)
        o = MeanPairs(benefit.take(i), benefit.take(j), method)
        ratio = RatioPairs(pred.take(i), pred.take(j))
        if band is None:   # no ratio question: every ratio "undefined", counted as inside the band
            ratio.nobody = np.ones(ratio.size, dtype=bool)
        dc = verdicts_.ratio_claims(ratio, settings.alpha, settings.adjust, settings.band,
                                    undefined_within=band is None,
                                    labels=("differs from 1", "beyond the band", "within the band"))
        df, levels = verdicts_.judge_pairs(names, i, j, self.n, o, dc, benefit.mean, settings)
        df = df.drop(columns=["four_fifths"]).rename(columns=lambda c: c.replace("di", "ratio", 1)
                                                     if c.startswith("di") else c)
        reason = np.where(o.too_skewed, np.char.add(np.char.add(np.char.add(
            "too skewed for ", df["n_i"].astype(str).to_numpy()), " and "), df["n_j"].astype(str).to_numpy()), "")
        reason = np.char.add(reason, np.where(o.too_skewed, " rows to tell", "")).astype(object)
        if band is not None:
            no_ratio = ratio.nobody & (reason == "") & df["ofi_within_tolerance"].to_numpy()
            reason = np.where(no_ratio, RATIO_UNDEFINED, reason)
        df["rows_needed_note"] = np.where(o.too_skewed, "", df["rows_needed_note"])
        df["reason"], df["skew_index"] = reason, o.skew
        df.insert(list(df.columns).index("favours") + 1, "explanation",
                  amount_explanations(df, settings.tolerance, levels.ofi or 0.0, unit))
        table = VerdictTable.of(df, settings, levels, reference, outcomes=True)
        return Verdicts.judged(table, self)


assert TOO_SKEWED.startswith("too skewed for")   # the reason column's words are the module's
