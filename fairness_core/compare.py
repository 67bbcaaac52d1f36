"""Several candidate models scored on the same individuals: which is fairer, at what cost, and which of
their differences are real.

A :class:`Comparison` holds one :class:`~fairness_core.audit.Audit` per model, all built from the same
rows (the same labels and groups), so that differences between models are *paired*: each individual is
judged by both. For a group g the difference in marginal benefit between models A and B is

    B_A − B_B = (k_A − k_B) / n_g = mean over the group of (ŷ_A − ŷ_B),

because B = (FP − FN)/n = (k − P)/n with k the number predicted positive and P the actual positives,
which both models share. With b the group's individuals selected by A only and c those selected by B
only, the difference is (b − c)/n, a difference of two cells of one multinomial; its interval inverts
Tango's score test for paired proportions (variance at the constrained maximum-likelihood estimate,
continuity correction ¼ count: :func:`fairness_core.inference.cell_difference_limits`, the limits the
verdicts use for each group's B). Newcombe's hybrid score interval for paired proportions (method 10)
was tried and dropped: with rare discordance of one kind its exact coverage fell to 0.64 at n = 5, where
Tango's limits keep 0.94 (tests/test_compare.py enumerates every outcome). A pair's difference in OFI
between models, (B_A,i − B_B,i) − (B_A,j − B_B,j), combines two independent groups' intervals by
MOVER-D. Every p-value is the dual of its interval (p < γ exactly when the interval at level 1 − γ
excludes 0), so an adjusted p and the interval printed beside it never disagree.

References: Tango, T. "Equivalence test and confidence interval for the difference in proportions for the
paired-sample design", Statistics in Medicine (1998); Zou & Donner, "Construction of confidence limits
about effect measures: a general approach" (MOVER), Statistics in Medicine (2008).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import stats

from .statistics import inference
from .audit import Audit
from .statistics.verdicts import DEFAULT_OFI_TOLERANCE, critical_level
from .wording.levels import level_text
from .common.vocabulary import DEFAULT_ALPHA, check_alpha, opposite_outcome
from .statistics.row_counts import count_arrays
from .statistics.mitigation.rule import SCORE_TRANSFORMS

FloatArray = npt.NDArray[np.float64]

#: Performance measures a comparison reports (and the trade-off chart can put on its x axis).
PERFORMANCE = {"accuracy": "accuracy", "balanced_accuracy": "balanced accuracy", "cost": "expected cost"}
#: Most models one comparison holds.
MAX_MODELS = 12


def _wilson(x: FloatArray, n: FloatArray, z: FloatArray) -> tuple[FloatArray, FloatArray]:
    p = x / n
    centre = (p + z ** 2 / (2 * n)) / (1 + z ** 2 / n)
    half = z / (1 + z ** 2 / n) * np.sqrt(p * (1 - p) / n + z ** 2 / (4 * n ** 2))
    return np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)


def _dual_p(bounds: Any, estimate: FloatArray) -> FloatArray:
    """Two-sided p-values dual to ``bounds(z)`` (each one-sided bound at normal quantile z): 2·(1 − Φ(z*)) with
    z* the quantile at which the interval stops excluding 0, found by bisection (60 halvings, vectorized)."""
    lo_z, hi_z = np.zeros_like(estimate), np.full_like(estimate, 40.0)
    for _ in range(60):
        mid = (lo_z + hi_z) / 2
        low, high = bounds(mid)
        excludes = (low > 0) | (high < 0)
        lo_z = np.where(excludes, mid, lo_z)
        hi_z = np.where(excludes, hi_z, mid)
    return np.minimum(2 * stats.norm.sf(hi_z), 1.0)


@dataclass(frozen=True)
class Candidates:
    """Several models' decisions and scores on the same individuals, in the audit's direction.

    ``y``: the actual outcome, True = the beneficial one; ``groups``: the protected attribute(s), one column
    each; ``predictions``: each candidate's decisions (True = the beneficial decision); ``scores``: scores a
    threshold can be fitted to (higher = more likely the beneficial outcome: a harm's score is negated).
    ``score_transforms``: per score, how it was made from the score a file holds (a key of
    :data:`fairness_core.mitigation.SCORE_TRANSFORMS`: "negate" for a harm's score; a score not named is the file's
    own), so that a rule fitted on it can be applied to files of raw scores. ``negative_outcome``: the words for the
    opposite of ``positive_outcome`` where its negation would not read right ("a recidivist / high risk");
    :attr:`negative` gives it, or :func:`~fairness_core.common.vocabulary.opposite_outcome` of the positive.
    """

    title: str
    y: np.ndarray
    groups: pd.DataFrame
    predictions: dict[str, np.ndarray]
    scores: dict[str, np.ndarray]
    positive_outcome: str
    note: str = ""
    score_transforms: Mapping[str, str] = field(default_factory=dict)
    negative_outcome: str = ""

    @property
    def negative(self) -> str:
        """The opposite outcome's words: ``negative_outcome`` where stated, else composed from the positive."""
        return self.negative_outcome or opposite_outcome(self.positive_outcome)

    def transform(self, score: str) -> str:
        """How ``score`` was made from the file's score (a key of :data:`SCORE_TRANSFORMS`; "identity" where not
        named)."""
        return self.score_transforms.get(score, "identity")

    def __post_init__(self) -> None:
        for name, transform in self.score_transforms.items():
            if name not in self.scores or transform not in SCORE_TRANSFORMS:
                raise ValueError(f"score_transforms[{name!r}] = {transform!r}: name a score of the candidates and one "
                                 f"of {', '.join(map(repr, SCORE_TRANSFORMS))}")
        n = len(self.y)
        for name, values in {**self.predictions, **self.scores}.items():
            if len(values) != n:
                raise ValueError(f"candidate {name!r} has {len(values):,} rows; the labels have {n:,}")
        if len(self.groups) != n:
            raise ValueError(f"the group columns have {len(self.groups):,} rows; the labels have {n:,}")


@dataclass(frozen=True)
class Comparison:
    """Candidate models scored on the same individuals; one :class:`Audit` per model.

    Build with :meth:`from_predictions`. ``y`` and ``predictions`` are in the audit's direction (positive =
    the beneficial outcome: a harm was negated), ``groups`` each row's group name.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 400)
    >>> g = np.where(np.arange(400) % 2, "a", "b")
    >>> a = np.where(rng.random(400) < 0.8, y, 1 - y)
    >>> b = np.where(g == "a", 1, a)                       # B approves everyone in group a
    >>> c = Comparison.from_predictions(y, {"A": a, "B": b}, {"group": g}, positive_is="benefit")
    >>> c.summary()["model"].tolist()
    ['A', 'B']
    >>> d = c.paired("A", "B")
    >>> bool(d.loc[d["what"] == "B of a", "significant"].iloc[0])   # B selects more of group a
    True
    """

    models: Mapping[str, Audit]
    y: npt.NDArray[np.bool_]
    predictions: Mapping[str, npt.NDArray[np.bool_]]
    groups: npt.NDArray[np.object_]

    def __post_init__(self) -> None:
        names = list(self.models)
        if not 2 <= len(names) <= MAX_MODELS:
            raise ValueError(f"a comparison needs 2 to {MAX_MODELS} models, got {len(names)}")
        first = self.models[names[0]]
        for name in names[1:]:
            if self.models[name].groups != first.groups:
                raise ValueError(f"model {name!r} has other groups than {names[0]!r}; compare models on the same rows")

    @classmethod
    def from_predictions(cls, y_true: Any, predictions: Mapping[str, Any], sensitive_features: Any,
                         pos_label: Any = 1, *, positive_is: str | None = None,
                         thresholds: Mapping[str, float] | None = None, source: str = "predictions") -> "Comparison":
        """One audit per model from the same labels and groups.

        ``predictions`` maps a model's name to its 0/1 predictions (``pos_label`` positive) or, with a
        threshold in ``thresholds``, its scores (positive when score ≥ threshold). ``positive_is`` as in
        :meth:`Audit.from_predictions` ("harm" negates labels and predictions)."""
        if not isinstance(predictions, Mapping) or not 2 <= len(predictions) <= MAX_MODELS:
            raise ValueError(f"predictions must map 2 to {MAX_MODELS} model names to their predictions")
        thresholds = dict(thresholds or {})
        unknown = set(thresholds) - set(predictions)
        if unknown:
            raise ValueError(f"thresholds name models without predictions: {', '.join(map(repr, sorted(unknown)))}")
        models = {}
        for name, values in predictions.items():
            models[str(name)] = Audit(**count_arrays(y_true, values, sensitive_features, pos_label,
                                                     positive_is=positive_is, threshold=thresholds.get(name),
                                                     source=f"{source}: {name}"))
        rows = {name: audit.rows for name, audit in models.items()}
        first = next(iter(rows.values()))
        if first is None:
            raise ValueError("the audits carry no rows")
        return cls(models, first.y, {name: r.y_pred for name, r in rows.items()}, first.groups)

    @classmethod
    def from_audits(cls, audits: Mapping[str, Audit]) -> "Comparison":
        """Models already audited from the same rows (each audit built from row-level data, e.g. the Upload
        page's predictions and a mitigated model): their labels and groups must agree row by row."""
        names = list(audits)
        rows = [audits[n].rows for n in names]
        if any(r is None for r in rows):
            raise ValueError("every audit must carry its rows (built from row-level predictions)")
        first = rows[0]
        for name, r in zip(names[1:], rows[1:]):
            if len(r.y) != len(first.y) or not np.array_equal(r.y, first.y) or not np.array_equal(r.groups, first.groups):
                raise ValueError(f"model {name!r} was not scored on the same individuals as {names[0]!r}")
        return cls(dict(audits), first.y, {n: r.y_pred for n, r in zip(names, rows)}, first.groups)

    @property
    def names(self) -> list[str]:
        return list(self.models)

    # ---------------------------------------------------------------- per model

    def performance(self, cost_fp: float = 1.0, cost_fn: float = 1.0, alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
        """Accuracy (Wilson interval), balanced accuracy and expected cost per row (normal intervals) per model,
        at level 1 − ``alpha``; the cost weighs a false positive by ``cost_fp`` and a false negative by
        ``cost_fn``."""
        check_alpha(alpha)
        z = float(stats.norm.isf(alpha / 2))
        rows = []
        y = self.y
        pos, neg = int(y.sum()), int((~y).sum())
        for name, yhat in self.predictions.items():
            n = y.size
            tp, fp = int((y & yhat).sum()), int((~y & yhat).sum())
            fn, tn = pos - tp, neg - fp
            acc_lo, acc_hi = _wilson(np.float64(tp + tn), np.float64(n), np.float64(z))
            tpr = tp / pos if pos else np.nan
            tnr = tn / neg if neg else np.nan
            ba = (tpr + tnr) / 2
            ba_se = 0.5 * np.sqrt((tpr * (1 - tpr) / pos if pos else np.nan) + (tnr * (1 - tnr) / neg if neg else np.nan))
            costs = np.where(~y & yhat, cost_fp, 0.0) + np.where(y & ~yhat, cost_fn, 0.0)
            cost, cost_se = costs.mean(), costs.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan
            rows.append({"model": name, "n": n, "TP": tp, "FN": fn, "FP": fp, "TN": tn,
                         "accuracy": (tp + tn) / n, "accuracy_ci_low": float(acc_lo), "accuracy_ci_high": float(acc_hi),
                         "balanced_accuracy": ba, "balanced_accuracy_ci_low": ba - z * ba_se,
                         "balanced_accuracy_ci_high": ba + z * ba_se,
                         "cost": cost, "cost_ci_low": cost - z * cost_se, "cost_ci_high": cost + z * cost_se})
        return pd.DataFrame(rows)

    def summary(self, tolerance: float = DEFAULT_OFI_TOLERANCE, alpha: float = DEFAULT_ALPHA, adjust: str = "holm",
                cost_fp: float = 1.0, cost_fn: float = 1.0, performance: str = "accuracy") -> pd.DataFrame:
        """One row per model: performance with intervals; the largest |OFI| over pairs and the smallest DI,
        each with a simultaneous interval (every pair's interval at level 1 − α/m, m pairs: Bonferroni, so the
        extreme's interval holds with probability ≥ 1 − α whichever pair is the extreme); the worst pair; the
        verdict counts of :meth:`Audit.verdicts` at these settings; and ``pareto``, whether the model is on the
        Pareto front of ``performance`` (a key of :data:`PERFORMANCE`; the expected cost, at these weights,
        lower is better) against the largest |OFI| (:func:`pareto_by`, as the trade-off chart draws it). The
        measure is in ``attrs["pareto_by"]``."""
        check_alpha(alpha)
        if performance not in PERFORMANCE:
            raise ValueError(f"performance must be one of {', '.join(PERFORMANCE)}, got {performance!r}")
        perf = self.performance(cost_fp, cost_fn, alpha).set_index("model")
        out = []
        for name, audit in self.models.items():
            v = audit.verdicts(tolerance, alpha=alpha, adjust=adjust)
            cells = audit.cells()[["TP", "FN", "FP", "TN"]].to_numpy(dtype=float)
            k = len(audit.groups)
            i, j = np.triu_indices(k, 1)
            m = i.size
            n = cells.sum(axis=1)
            ofi = inference.ofi_pairs(cells[i, 2], cells[i, 1], n[i], cells[j, 2], cells[j, 1], n[j])
            lo, hi = ofi.bounds(alpha / (2 * m))
            abs_lo = np.where((lo <= 0) & (hi >= 0), 0.0, np.minimum(np.abs(lo), np.abs(hi)))
            abs_hi = np.maximum(np.abs(lo), np.abs(hi))
            worst = int(np.argmax(np.abs(ofi.estimate)))
            sel = cells[:, 0] + cells[:, 2]
            rate = sel / n
            # orient every pair so that DI ≤ 1 (the less selected group over the more selected one)
            low_first = rate[i] <= rate[j]
            a, b = np.where(low_first, i, j), np.where(low_first, j, i)
            di = inference.di_pairs(sel[a], n[a], sel[b], n[b])
            with np.errstate(divide="ignore", invalid="ignore"):
                di_est = rate[a] / rate[b]
            di_lo, di_hi = di.bounds(alpha / (2 * m))
            d_worst = int(np.nanargmin(di_est)) if np.isfinite(di_est).any() else None
            counts = v["verdict"].value_counts()
            row = {"model": name, "groups": k, "pairs": m,
                   **{c: perf.loc[name, c] for c in perf.columns if c != "n"},
                   "max_abs_ofi": float(np.abs(ofi.estimate).max()),
                   "max_abs_ofi_ci_low": float(abs_lo.max()), "max_abs_ofi_ci_high": float(abs_hi.max()),
                   "worst_pair": f"{audit.groups[i[worst]]} vs {audit.groups[j[worst]]}",
                   "worst_pair_ofi": float(ofi.estimate[worst]),
                   "min_di": float(np.nanmin(di_est)) if d_worst is not None else np.nan,
                   "min_di_ci_low": float(np.nanmin(di_lo)) if d_worst is not None else np.nan,
                   "min_di_ci_high": float(np.nanmin(di_hi)) if d_worst is not None else np.nan,
                   "min_di_pair": (f"{audit.groups[a[d_worst]]} / {audit.groups[b[d_worst]]}"
                                   if d_worst is not None else "undefined (no group is selected)"),
                   "interval_level": level_text(1 - alpha) + " simultaneous (Bonferroni over pairs)",
                   **{f"verdict: {c}": int(counts.get(c, 0)) for c in sorted(v["verdict"].unique())}}
            out.append(row)
        df = pd.DataFrame(out)
        verdict_cols = [c for c in df.columns if c.startswith("verdict: ")]
        df[verdict_cols] = df[verdict_cols].fillna(0).astype(int)
        df["pareto"] = pareto_by(df, performance)
        df.attrs["pareto_by"] = performance
        return df

    # ---------------------------------------------------------------- between two models

    def paired(self, a: str, b: str, alpha: float = DEFAULT_ALPHA, adjust: str = "holm") -> pd.DataFrame:
        """Differences between models ``a`` and ``b`` on the same individuals: each group's marginal benefit
        (B_a − B_b, a paired interval) and each pair's OFI (OFI_a − OFI_b, MOVER-D from the two groups'
        paired intervals), with dual p-values adjusted across all of them by ``adjust``; the intervals
        are at the matching level (:func:`~fairness_core.verdicts.critical_level`), so "significant" (adjusted
        p < α) holds exactly when the printed interval excludes 0."""
        check_alpha(alpha)
        for name in (a, b):
            if name not in self.predictions:
                raise KeyError(f"no model {name!r}; models are {', '.join(map(repr, self.names))}")
        if a == b:
            raise ValueError("compare two different models")
        groups = self.models[a].groups
        ya, yb = self.predictions[a], self.predictions[b]
        code = pd.Categorical(self.groups, categories=groups).codes
        only_a = np.bincount(code, weights=ya & ~yb, minlength=len(groups))
        only_b = np.bincount(code, weights=~ya & yb, minlength=len(groups))
        n = np.bincount(code, minlength=len(groups)).astype(float)
        delta = (only_a - only_b) / n
        i, j = np.triu_indices(len(groups), 1)

        def group_bounds(z: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
            return inference.cell_difference_limits(only_a, only_b, n, z)

        pairs = inference.ofi_pairs(only_a[i], only_b[i], n[i], only_a[j], only_b[j], n[j])
        p_group = _dual_p(group_bounds, delta)
        p_pair = pairs.p_value(0.0)
        p = np.concatenate([p_group, p_pair])
        a_crit = critical_level(p, alpha, adjust)     # the per-test error rate the adjustment amounts to
        g_lo, g_hi = group_bounds(np.full(delta.shape, stats.norm.isf(a_crit / 2)))
        p_lo, p_hi = pairs.bounds(a_crit / 2)
        adjusted = inference.adjust_p_values(p, adjust)
        what = [f"B of {g}" for g in groups] + [f"OFI of {groups[x]} vs {groups[y]}" for x, y in zip(i, j)]
        df = pd.DataFrame({"what": what, "kind": ["group"] * len(groups) + ["pair"] * i.size,
                           "difference": np.concatenate([delta, pairs.estimate]),
                           "ci_low": np.concatenate([g_lo, p_lo]), "ci_high": np.concatenate([g_hi, p_hi]),
                           "p_value": p, "p_adjusted": adjusted})
        df["significant"] = df["p_adjusted"] < alpha
        df["interval_level"] = level_text(1 - a_crit)
        df["models"] = f"{a} − {b}"
        return df


def pareto_front(performance: npt.ArrayLike, disparity: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Which points no other point beats: higher ``performance`` and lower ``disparity`` (ties kept).

    >>> pareto_front([0.8, 0.7, 0.9, 0.6], [0.10, 0.05, 0.20, 0.10]).tolist()
    [True, True, True, False]
    """
    x, y = np.asarray(performance, dtype=float), np.asarray(disparity, dtype=float)
    better_x = x[None, :] >= x[:, None]
    better_y = y[None, :] <= y[:, None]
    strictly = (x[None, :] > x[:, None]) | (y[None, :] < y[:, None])
    dominated = (better_x & better_y & strictly).any(axis=1)
    return ~dominated


def pareto_by(summary: pd.DataFrame, performance: str = "accuracy") -> npt.NDArray[np.bool_]:
    """The Pareto front of a :meth:`Comparison.summary` table by ``performance`` (higher is better, except the
    expected cost: lower) and the largest |OFI| (lower is better). The table's ``pareto`` column and the
    trade-off chart (:func:`fairness_core.plots.model_tradeoff`) both come from here."""
    if performance not in PERFORMANCE:
        raise ValueError(f"performance must be one of {', '.join(PERFORMANCE)}, got {performance!r}")
    x = summary[performance].to_numpy(dtype=float)
    return pareto_front(-x if performance == "cost" else x, summary["max_abs_ofi"].to_numpy(dtype=float))


def paired_interval(only_first: npt.ArrayLike, only_second: npt.ArrayLike, n: npt.ArrayLike,
                    alpha: float = DEFAULT_ALPHA) -> tuple[FloatArray, FloatArray]:
    """Interval, at confidence 1 − ``alpha``, of the difference between two selection rates measured on the same
    ``n`` individuals, from the counts selected by the first rule only and by the second only (vectorized). See
    the module docstring. ``alpha`` is in (0, 0.5) (:func:`~fairness_core.vocabulary.check_alpha`).

    >>> low, high = paired_interval([10], [2], [100])     # 15 % vs 7 % of 100 individuals (5 chosen by both)
    >>> bool(low[0] > 0), round(float(high[0]), 2)
    (True, 0.16)
    """
    z = stats.norm.isf(check_alpha(alpha) / 2)
    return inference.cell_difference_limits(only_first, only_second, n, z)
