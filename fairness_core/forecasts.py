"""Forecasts audited by group: which sites, regions or regimes does a forecaster serve worse (issue 55)?

:func:`audit` takes probabilistic forecasts as quantiles (K levels; a point forecast is one level, 0.5), the
observations and each forecast's group (and time), and returns a :class:`ForecastAudit`:

- per group (:meth:`~ForecastAudit.by_group`): the mean CRPS (quantile-score form), the weighted interval score,
  the mean **benefit** of the median (its signed error in the declared direction, the forecast's "marginal
  benefit"), the coverage of each central band (:meth:`~ForecastAudit.coverage`) and the PIT histogram
  (:meth:`~ForecastAudit.pit`); formulas in :mod:`fairness_core.statistics.forecast_scores`;
- per pair (:meth:`~ForecastAudit.pairs`): the difference of each, the **forecast OFI** = B_i − B_j (the
  difference of mean benefits, in the outcome's units), with normal intervals whose variances are HAC long-run
  variances over time (:mod:`fairness_core.statistics.inference.hac`: the larger of the AR(1)-prewhitened
  Andrews–Monahan estimate and an AR sieve; the AR(1) coefficient, bandwidth and AR order used are stated per
  group), Holm-adjusted across pairs;
- verdicts (:meth:`~ForecastAudit.verdicts`) in the binary audit's five words, the OFI against a tolerance in the
  outcome's units and the ratio of mean CRPS against a band for "systemic disparity";
- with baselines, skill (:meth:`~ForecastAudit.skill`): 1 − CRPS_model/CRPS_baseline per group with its interval,
  the thesis's Table 5.2 form (skill at the CRPS quartiles, the share of forecasts improved), and the difference
  of skill between groups in :meth:`~ForecastAudit.pairs`.

**Time.** Each group's forecasts form one series in time order (row order when ``time`` is None). Several rows of
one group at one time point (sites of a region) enter as that time point's sum, so their correlation is allowed
for. Groups are compared as **independent** samples: Var(x̄_i − x̄_j) = Var(x̄_i) + Var(x̄_j). Where groups share
time points and their errors move together (one weather front over two sites), that assumption errs: positive
cross-correlation makes the intervals conservative, negative ones too narrow; the honest comparison is then the
difference series on common times, d_t = x_{i,t} − x_{j,t} (left to the caller: :func:`audit` of the differences).

A group with fewer than ``min_time_points`` time points gets its scores but no interval, and its pairs no verdict
("inconclusive", with the reason).

>>> rng = np.random.default_rng(0)
>>> levels = [0.1, 0.25, 0.5, 0.75, 0.9]
>>> y = rng.normal(size=400)
>>> z = np.array([-1.2816, -0.6745, 0.0, 0.6745, 1.2816])
>>> shift = np.repeat([0.0, -0.8], 200)                   # site "b" is under-forecast by 0.8
>>> a = audit(y, shift[:, None] + z, levels, np.repeat(["a", "b"], 200), positive_is="benefit")
>>> a.by_group()["benefit"].round(2).tolist()               # median − y
[-0.02, -0.71]
>>> a.verdicts(tolerance=0.3).loc[0, ["group_i", "group_j", "verdict", "favours"]].tolist()
['b', 'a', 'algorithmic bias', 'a']
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
import pandas as pd
from scipy import stats

from .common.validation import DataValidationError, Problem, show_value
from .common.vocabulary import DEFAULT_ALPHA, check_alpha, resolve_positive_is
from .results import Verdicts
from .statistics import forecast_scores as fs
from .statistics import verdicts as verdicts_
from .statistics.inference import adjust_p_values
from .statistics.inference.hac import HAC_METHODS, LogRatioPairs, NormalPairs, long_run_variance
from .statistics.row_counts import _vector
from .statistics.verdicts import VerdictSettings, VerdictTable
from .wording.forecasts import forecast_direction, forecast_explanations, forecast_findings, too_few_points

__all__ = ["MIN_TIME_POINTS", "DEFAULT_BAND", "ForecastAudit", "ForecastVerdicts", "audit"]

#: Fewest time points a group needs for an interval (and its pairs for a verdict).
MIN_TIME_POINTS = 30
#: The band of the mean-CRPS ratio inside which no accuracy disparity is claimed.
DEFAULT_BAND = (0.8, 1.25)


def _finite_column(values: Any, name: str) -> np.ndarray:
    arr = _vector(values, name)
    x = pd.to_numeric(pd.Series(arr), errors="coerce").to_numpy(dtype=float) if arr.dtype.kind not in "biuf" \
        else arr.astype(float)
    for what, bad in (("is missing or not a number", np.isnan(x)), ("is infinite", np.isinf(x))):
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            more = f" ({int(bad.sum()):,} such rows)" if bad.sum() > 1 else ""
            raise DataValidationError(Problem(f"{name}[{k}] = {show_value(arr[k])} {what}{more}; every "
                                              "observation must be a finite number", column=name))
    return x


def _float_array(values: Any) -> np.ndarray:
    """``values`` as float64, or as they are when float32: the scores take each block of rows to float64 as they go
    (:func:`~fairness_core.statistics.forecast_scores.row_scores`), which is exact, so float32 quantiles are scored
    as their float64 values without a float64 copy of the whole matrix (half the memory)."""
    arr = np.asarray(values)
    return arr if arr.dtype == np.float32 else np.asarray(values, dtype=float)


def _quantile_matrix(values: Any, name: str, n: int, tau: np.ndarray, notes: list[str]) -> np.ndarray:
    """(n, K) finite quantiles, crossing rows sorted with a warning (a 1-D array is a point forecast, K = 1); float32
    kept as it is (:func:`_float_array`)."""
    q = _float_array(values)
    if q.ndim == 1 and tau.size == 1:
        q = q[:, None]
    if q.shape != (n, tau.size):
        raise DataValidationError(f"{name} has shape {q.shape}; expected (rows, levels) = ({n}, {tau.size})")
    bad = ~np.isfinite(q)
    if bad.any():
        r, c = (int(v) for v in np.argwhere(bad)[0])
        more = f" ({int(bad.sum()):,} such values)" if bad.sum() > 1 else ""
        raise DataValidationError(Problem(f"{name}[{r}, {c}] (level {tau[c]:g}) is missing or infinite{more}; "
                                          "every quantile must be a finite number", column=name))
    crossing = fs.crossing_rows(q)
    if crossing.size:
        q = q.copy()
        q[crossing] = np.sort(q[crossing], axis=1)
        note = (f"{name}: the quantiles cross (decrease along the levels) in {crossing.size:,} row"
                f"{'s' if crossing.size > 1 else ''} (first: row {int(crossing[0])}); they were sorted")
        warnings.warn(note, UserWarning, stacklevel=3)
        notes.append(note)
    return q


def _time_order(time: Any, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows sorted by group then time, and each sorted row's time key (row position without ``time``)."""
    if time is None:
        order = np.argsort(codes, kind="stable")
        return order, order.astype(np.int64)
    arr = _vector(time, "time")
    if len(arr) != len(codes):
        raise DataValidationError(f"lengths differ: time has {len(arr):,} rows, y has {len(codes):,}")
    if arr.dtype.kind in "Mm":
        key = arr.astype("datetime64[ns]" if arr.dtype.kind == "M" else "timedelta64[ns]").astype(np.int64)
        missing = np.isnat(arr)
    elif arr.dtype.kind in "biuf":
        key, missing = arr.astype(float), np.isnan(arr.astype(float))
    else:
        parsed = pd.to_datetime(pd.Series(arr, dtype=object), errors="coerce")
        missing = parsed.isna().to_numpy()
        key = parsed.to_numpy().astype(np.int64)
    if missing.any():
        k = int(np.flatnonzero(missing)[0])
        raise DataValidationError(Problem(f"time[{k}] = {show_value(arr[k])} is missing or not a time; every "
                                          "forecast needs its time", column="time"))
    order = np.lexsort((key, codes))
    return order, np.asarray(key)[order]


def _group_codes(groups: Any, n: int) -> tuple[np.ndarray, list[str]]:
    arr = _vector(groups, "groups")
    if len(arr) != n:
        raise DataValidationError(f"lengths differ: groups has {len(arr):,} rows, y has {n:,}")
    s = pd.Series(arr, dtype=object)
    if (missing := s.isna().to_numpy()).any():
        k = int(np.flatnonzero(missing)[0])
        raise DataValidationError(Problem(f"groups[{k}] is missing; every forecast needs its group", column="groups"))
    codes, names = pd.factorize(s.astype(str), sort=True)
    if len(names) < 2:
        raise DataValidationError(f"all {n:,} forecasts fall in one group; an audit compares at least two groups")
    return codes.astype(np.intp), [str(v) for v in names]


def audit(y: Any, quantiles: Any, levels: Any, groups: Any, baselines: Any = None, time: Any = None,
          positive_is: str | None = None, *, method: str = "union",
          min_time_points: int = MIN_TIME_POINTS) -> "ForecastAudit":
    """Audit probabilistic forecasts by group (module docstring).

    Parameters
    ----------
    y : array-like (n,)
        The observations; a missing or infinite one is refused, named by row (``y[3]``).
    quantiles : array-like (n, K)
        Each forecast's quantiles at ``levels`` (a 1-D array when K = 1: point forecasts). Missing values are
        refused by row and level; rows whose quantiles cross are sorted, with a :class:`UserWarning` (and a note)
        naming how many.
    levels : sequence of K floats
        Quantile levels, each strictly inside (0, 1), increasing and unique; 0.5 must lie within their range (the
        median is interpolated between the neighbouring levels when it is not one of them).
    groups : array-like (n,)
        Each forecast's group (site, region, regime).
    baselines : None, array-like, or mapping name → array-like
        Other forecasts of the same observations to measure skill against: (n, K) quantiles at ``levels``, or
        (n,) point forecasts (their CRPS is the absolute error). One array is named "baseline".
    time : array-like (n,), optional
        Each forecast's time (numbers or datetimes); rows are sorted by it within each group. Without it, row order
        is time order.
    positive_is : {"benefit", "harm"}
        Whether a larger forecast serves the group (benefit: under-forecasting demand or frost harms it) or harms it
        (a forecast of losses that sets a premium). Omitted: a :class:`UserWarning` names the assumption (benefit).
    method : str
        The long-run variance estimator (:data:`~fairness_core.statistics.inference.hac.HAC_METHODS`).
    min_time_points : int
        Fewest time points for a group's intervals (:data:`MIN_TIME_POINTS`).
    """
    positive_is = resolve_positive_is(positive_is, "a larger forecast")
    if method not in HAC_METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {', '.join(HAC_METHODS)}")
    if int(min_time_points) < 3:
        raise ValueError(f"min_time_points must be at least 3, got {min_time_points!r}")
    tau = fs.check_levels(levels)
    fs.median_weights(tau)
    obs = _finite_column(y, "y")
    n = obs.size
    notes: list[str] = []
    q = _quantile_matrix(quantiles, "quantiles", n, tau, notes)
    codes, names = _group_codes(groups, n)
    if baselines is None:
        base_items: list[tuple[str, Any]] = []
    elif isinstance(baselines, Mapping):
        base_items = [(str(k), v) for k, v in baselines.items()]
    else:
        base_items = [("baseline", baselines)]
    base_crps = []
    for name, values in base_items:
        arr = _float_array(values)
        if arr.ndim == 1:
            if arr.shape != (n,):
                raise DataValidationError(f"baseline {name!r} has {arr.size:,} point forecasts; expected {n:,}")
            bad = ~np.isfinite(arr)
            if bad.any():
                raise DataValidationError(Problem(f"baseline {name!r}[{int(np.flatnonzero(bad)[0])}] is missing or "
                                                  "infinite", column=name))
            base_crps.append(np.abs(obs - arr))
        else:
            bq = _quantile_matrix(arr, f"baseline {name!r}", n, tau, notes)
            base_crps.append(fs.row_scores(obs, bq, tau).crps)
    order, key = _time_order(time, codes)
    scores = fs.row_scores(obs, q, tau)
    sign = -1.0 if positive_is == "harm" else 1.0
    columns = {"crps": scores.crps, "wis": scores.wis, "benefit": sign * (scores.median - obs)}
    columns.update({f"crps:{name}": c for (name, _), c in zip(base_items, base_crps)})
    return ForecastAudit._build(names, codes, order, key, columns, scores, tau, positive_is,
                                tuple(name for name, _ in base_items), tuple(notes), method, int(min_time_points),
                                {f"crps:{name}": c for (name, _), c in zip(base_items, base_crps)})


@dataclass(frozen=True)
class _Series:
    """Each group's per-time-point sums in group, then time, order: ``sums`` (points, columns) of the named
    ``columns``, ``rows`` at each point, ``segment`` (each point's group)."""

    sums: np.ndarray
    rows: np.ndarray
    segment: np.ndarray
    columns: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class ForecastAudit:
    """An audit of probabilistic forecasts by group (module docstring); built by :func:`audit`.

    ``groups``; ``levels``; ``rows`` and ``points`` (forecasts and time points per group); ``means`` (group ×
    measure, :attr:`measures`); ``pit_counts`` (group × PIT bin); ``joint`` (group × #{q ≤ y} × #{q < y}
    counts, from which every band's coverage is read); ``baselines`` (their names); ``notes``; ``method`` (the
    long-run variance's); ``min_time_points``.
    """

    groups: tuple[str, ...]
    levels: np.ndarray = field(repr=False)
    rows: np.ndarray = field(repr=False)
    points: np.ndarray = field(repr=False)
    means: pd.DataFrame = field(repr=False)
    joint: np.ndarray = field(repr=False)
    positive_is: str | None
    baselines: tuple[str, ...]
    notes: tuple[str, ...]
    method: str
    min_time_points: int
    series: _Series = field(repr=False)
    coverage_keys: tuple[np.ndarray, np.ndarray] = field(repr=False)
    quartiles: pd.DataFrame = field(repr=False)
    _variances: dict = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ building

    @classmethod
    def _build(cls, names: list[str], codes: np.ndarray, order: np.ndarray, key: np.ndarray,
               columns: dict[str, np.ndarray], scores: fs.RowScores, tau: np.ndarray, positive_is: str | None,
               baselines: tuple[str, ...], notes: tuple[str, ...], method: str, min_points: int,
               base_crps: dict[str, np.ndarray]) -> "ForecastAudit":
        g, k = len(names), tau.size
        sorted_codes = codes[order]
        new_point = np.ones(order.size, dtype=bool)
        new_point[1:] = (sorted_codes[1:] != sorted_codes[:-1]) | (key[1:] != key[:-1])
        starts = np.flatnonzero(new_point)
        names_ = tuple(columns)
        x = np.stack([columns[c][order] for c in names_], axis=1)
        sums = x if starts.size == order.size else np.add.reduceat(x, starts, axis=0)
        per_point = np.diff(np.append(starts, order.size)).astype(float)
        segment = sorted_codes[starts]
        rows = np.bincount(codes, minlength=g).astype(float)
        points = np.bincount(segment, minlength=g).astype(float)
        group_starts = np.searchsorted(segment, np.arange(g))
        means = np.add.reduceat(sums, group_starts, axis=0) / rows[:, None]
        sums = sums - per_point[:, None] * means[segment]
        joint = np.bincount((codes * (k + 1) + scores.at_or_below) * (k + 1) + scores.below,
                            minlength=g * (k + 1) ** 2).reshape(g, k + 1, k + 1)
        frame = pd.DataFrame(means, index=pd.Index(names, name="group"), columns=list(names_))
        quartiles = fs.quartile_skill(names, codes, columns["crps"], base_crps)
        return cls(tuple(names), tau, rows, points, frame, joint, positive_is, baselines, notes, method, min_points,
                   _Series(sums, per_point, segment, names_),
                   (scores.at_or_below[order], scores.below[order]), quartiles)

    # ------------------------------------------------------------------ variances

    @property
    def measures(self) -> tuple[str, ...]:
        """The per-forecast measures averaged per group: crps, wis, benefit, and crps:<baseline> for each."""
        return tuple(self.means.columns)

    @property
    def bands(self) -> fs.Bands:
        """The central bands of the levels (:func:`~fairness_core.statistics.forecast_scores.central_bands`)."""
        return fs.central_bands(self.levels)

    @property
    def direction(self) -> str:
        """What the benefit is, in words, and whether that was declared."""
        return forecast_direction(self.positive_is)

    def _reasons(self) -> np.ndarray:
        few = self.points < self.min_time_points
        return np.array([too_few_points(gname, int(p), self.min_time_points) if f else ""
                         for gname, p, f in zip(self.groups, self.points, few)], dtype=object)

    def _long_run(self, name: str, u: np.ndarray) -> dict[str, np.ndarray]:
        """The variance of each group's mean of the centred per-point sums ``u`` (points, columns), cached by name:
        T·LRV/n² (NaN for a group below ``min_time_points``), with the AR(1) coefficient, bandwidth and order."""
        if name not in self._variances:
            s = self.series
            v = long_run_variance(u, s.segment, len(self.groups), self.method)
            few = (self.points < self.min_time_points)[:, None]
            var = np.where(few, np.nan, self.points[:, None] * v.lrv / self.rows[:, None] ** 2)
            self._variances[name] = {"var": var, "rho": v.rho, "bandwidth": v.bandwidth, "order": v.order}
        return self._variances[name]

    def variance(self, measure: str) -> np.ndarray:
        """Each group's variance of its mean ``measure`` (a name of :attr:`measures`, "coverage" for every band's
        coverage as columns, or "skill:<baseline>")."""
        s = self.series
        if measure in self.measures:
            u = s.sums[:, [self.measures.index(measure)]]
        elif measure == "coverage":
            u = self._coverage_sums()
        elif measure.startswith("skill:") and f"crps:{measure[6:]}" in self.measures:
            a, b = self.means["crps"].to_numpy(), self.means[f"crps:{measure[6:]}"].to_numpy()
            ua, ub = s.sums[:, self.measures.index("crps")], s.sums[:, self.measures.index(f"crps:{measure[6:]}")]
            with np.errstate(divide="ignore", invalid="ignore"):
                u = (-(ua - (a / b)[s.segment] * ub) / b[s.segment])[:, None]     # the delta method's series
            u = np.nan_to_num(u)
        else:
            raise ValueError(f"unknown measure {measure!r}; expected one of {', '.join(self.measures)}, coverage "
                             f"or skill:<baseline>")
        return self._long_run(measure, u)["var"]

    def _coverage_sums(self) -> np.ndarray:
        b, s = self.bands, self.series
        at_or_below, below = self.coverage_keys
        covered = ((at_or_below[:, None] > b.low) & (below[:, None] <= b.high)).astype(float)
        starts = np.append(0, np.cumsum(s.rows)[:-1]).astype(np.intp)
        sums = covered if starts.size == covered.shape[0] else np.add.reduceat(covered, starts, axis=0)
        return sums - s.rows[:, None] * self.coverage_table().to_numpy()[s.segment]

    # ------------------------------------------------------------------ per group

    def coverage_table(self) -> pd.DataFrame:
        """Each group's coverage of each central band (columns: the nominal coverage), read from :attr:`joint`:
        #{q ≤ y} > the lower level's index and #{q < y} ≤ the upper's."""
        b = self.bands
        # cum[g, a, c] = forecasts with #{q ≤ y} ≥ a and #{q < y} ≤ c
        tail = np.cumsum(self.joint[:, ::-1, :], axis=1)[:, ::-1, :]
        cum = np.cumsum(tail, axis=2)
        covered = cum[:, b.low + 1, b.high] if b.size else np.zeros((len(self.groups), 0))
        return pd.DataFrame(covered / self.rows[:, None], index=pd.Index(self.groups, name="group"),
                            columns=pd.Index(np.round(b.nominal, 10), name="nominal"))

    def by_group(self, alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
        """Per group: rows, time points, mean CRPS, WIS and benefit (the median's signed error in the declared
        direction), each with its interval at 1 − ``alpha`` (normal, HAC variance; unadjusted), the coverage of
        each band (``coverage_80%``: nominal 80 %), the benefit's AR(1) coefficient, bandwidth and AR order used
        (``hac_rho``, ``hac_bandwidth``, ``hac_order``), and ``reason`` (why a group has no interval)."""
        z = stats.norm.ppf(1 - check_alpha(alpha) / 2)
        out = pd.DataFrame({"rows": self.rows.astype(np.int64), "time_points": self.points.astype(np.int64)},
                           index=pd.Index(self.groups, name="group"))
        for m in ("crps", "wis", "benefit"):
            se = np.sqrt(self.variance(m)[:, 0])
            mean = self.means[m].to_numpy()
            out[m], out[f"{m}_ci_low"], out[f"{m}_ci_high"] = mean, mean - z * se, mean + z * se
        cov = self.coverage_table()
        for nominal in cov.columns:
            out[f"coverage_{nominal:.4g}"] = cov[nominal].to_numpy()
        info = self._variances["benefit"]
        out["hac_rho"], out["hac_bandwidth"], out["hac_order"] = (info["rho"][:, 0], info["bandwidth"][:, 0],
                                                                  info["order"][:, 0])
        out["reason"] = self._reasons()
        return out

    def coverage(self, alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
        """Long table, one row per group and band: nominal, coverage, ci_low, ci_high (1 − ``alpha``, HAC; a
        coverage is a share, so its interval is cut to [0, 1], which keeps every value it held that a share can
        take)."""
        z = stats.norm.ppf(1 - check_alpha(alpha) / 2)
        cov = self.coverage_table()
        se = np.sqrt(self.variance("coverage"))
        g, b = cov.shape
        value = cov.to_numpy()
        return pd.DataFrame({"group": np.repeat(self.groups, b), "nominal": np.tile(cov.columns.to_numpy(), g),
                             "coverage": value.ravel(), "ci_low": np.clip(value - z * se, 0.0, 1.0).ravel(),
                             "ci_high": np.clip(value + z * se, 0.0, 1.0).ravel(),
                             "reason": np.repeat(self._reasons(), b)})

    def pit(self) -> pd.DataFrame:
        """The PIT histogram: one row per group and bin [low, high) of the levels, its count, share and the share
        expected under calibration (:func:`~fairness_core.statistics.forecast_scores.pit_expected`)."""
        counts = self.joint.sum(axis=2)
        g, bins = counts.shape
        edges = np.concatenate([[0.0], self.levels, [1.0]])
        return pd.DataFrame({"group": np.repeat(self.groups, bins), "low": np.tile(edges[:-1], g),
                             "high": np.tile(edges[1:], g), "count": counts.ravel(),
                             "share": (counts / self.rows[:, None]).ravel(),
                             "expected": np.tile(fs.pit_expected(self.levels), g)})

    # ------------------------------------------------------------------ pairs

    def _pair_index(self) -> tuple[np.ndarray, np.ndarray]:
        return np.triu_indices(len(self.groups), 1)

    def pairs(self, alpha: float = DEFAULT_ALPHA, adjust: str = "holm") -> pd.DataFrame:
        """Every pair's difference (group_i − group_j) in each measure, long: ``measure`` ("crps", "wis", "ofi" —
        the forecast OFI, the difference of mean benefits —, "coverage_<nominal>" for each band, and
        "skill:<baseline>" with baselines), value_i, value_j, estimate, se, ci_low and ci_high (normal, 1 −
        ``alpha``, unadjusted), p (against 0), p_adjusted (``adjust`` across the pairs of each measure), differs
        (p_adjusted < alpha) and reason (why a pair has no interval)."""
        check_alpha(alpha)
        values, variances, labels = [], [], []
        for m, label in (("crps", "crps"), ("wis", "wis"), ("benefit", "ofi")):
            if m == "wis" and np.isnan(self.means["wis"]).all():
                continue
            values.append(self.means[m].to_numpy()[:, None])
            variances.append(self.variance(m))
            labels.append(label)
        cov = self.coverage_table()
        if cov.shape[1]:
            values.append(cov.to_numpy())
            variances.append(self.variance("coverage"))
            labels += [f"coverage_{c:.4g}" for c in cov.columns]
        skill = self._skill_values()
        for name in self.baselines:
            values.append(skill[name][:, None])
            variances.append(self.variance(f"skill:{name}"))
            labels.append(f"skill:{name}")
        v, var = np.concatenate(values, axis=1), np.concatenate(variances, axis=1)
        i, j = self._pair_index()
        p_count, m_count = i.size, v.shape[1]
        est, se = v[i] - v[j], np.sqrt(var[i] + var[j])
        o = NormalPairs(est.ravel(), se.ravel(), "HAC")
        low, high = o.bounds(check_alpha(alpha) / 2)
        p = o.p_value(0.0).reshape(p_count, m_count)
        p_adj = np.column_stack([adjust_p_values(p[:, c], adjust) for c in range(m_count)]) if p_count else p
        reasons = self._reasons()
        reason = np.where(reasons[i] != "", reasons[i], reasons[j])
        names = np.array(self.groups, dtype=object)
        return pd.DataFrame({
            "measure": np.tile(np.array(labels, dtype=object), p_count), "group_i": np.repeat(names[i], m_count),
            "group_j": np.repeat(names[j], m_count), "value_i": v[i].ravel(), "value_j": v[j].ravel(),
            "estimate": est.ravel(), "se": se.ravel(), "ci_low": low, "ci_high": high, "p": p.ravel(),
            "p_adjusted": p_adj.ravel(), "differs": (p_adj < alpha).ravel(),
            "reason": np.repeat(reason, m_count)})

    # ------------------------------------------------------------------ verdicts

    def verdicts(self, tolerance: float, alpha: float = DEFAULT_ALPHA, adjust: str = "holm",
                 band: tuple[float, float] | None = DEFAULT_BAND, *, reference: str | None = None,
                 unit: str = "") -> "ForecastVerdicts":
        """A verdict for every pair of groups, in the five words of :meth:`fairness_core.audit.Audit.verdicts`.

        ``tolerance`` is the smallest difference of mean benefits that matters, **in the outcome's units**. Each
        pair's forecast OFI = B_i − B_j is judged by three-sided testing against ±tolerance, every claim adjusted
        across the pairs by ``adjust`` and read from one normal interval per pair (HAC variances) at the adjusted
        level (:func:`fairness_core.verdicts.judge_pairs`). "Systemic disparity" (the OFI inside the tolerance,
        the ratio of mean CRPS outside ``band``: one group's forecasts are less accurate without leaning either
        way) and "no bias detected" (both inside) read the ratio's log-scale interval; ``band=None`` asks no
        ratio question. Pairs are oriented so that ``group_i`` has the larger mean CRPS (ratio ≥ 1; the worse
        served), or ``group_j`` is the ``reference``. A pair with a group below ``min_time_points`` gets no
        interval: "inconclusive", with the reason.

        Columns: those of :meth:`fairness_core.continuous.ContinuousAudit.verdicts` (``n_i``, ``n_j`` and
        ``rows_needed_*`` count time points; ``ratio`` is mean CRPS i / j), and ``hac_rho_i``, ``hac_rho_j``,
        ``hac_bandwidth_i``, ``hac_bandwidth_j``, ``hac_order_i``, ``hac_order_j`` (the benefit's long-run
        variance: AR(1) coefficient, Bartlett bandwidth, sieve order).
        """
        settings = VerdictSettings(tolerance, alpha, adjust, f"normal, HAC {self.method}", "log-ratio HAC",
                                   band or DEFAULT_BAND, amounts=True)
        names = list(self.groups)
        crps, b = self.means["crps"].to_numpy(), self.means["benefit"].to_numpy()
        var_c, var_b = self.variance("crps")[:, 0], self.variance("benefit")[:, 0]
        i, j = self._pair_index()
        swap = crps[i] < crps[j]
        if reference is not None:
            if reference not in names:
                raise ValueError(f"unknown group {reference!r}; groups are {', '.join(names)}")
            ref = names.index(reference)
            swap = np.where(i == ref, True, np.where(j == ref, False, swap))
        i, j = np.where(swap, j, i), np.where(swap, i, j)
        o = NormalPairs(b[i] - b[j], np.sqrt(var_b[i] + var_b[j]), f"normal, HAC {self.method}")
        ratio = LogRatioPairs(crps[i], var_c[i], crps[j], var_c[j])
        if band is None:
            ratio.nobody = np.ones(ratio.size, dtype=bool)
        dc = verdicts_.ratio_claims(ratio, settings.alpha, settings.adjust, settings.band,
                                    undefined_within=band is None,
                                    labels=("differs from 1", "beyond the band", "within the band"))
        df, levels = verdicts_.judge_pairs(names, i, j, self.points, o, dc, b, settings)
        df = df.drop(columns=["four_fifths"]).rename(columns=lambda c: c.replace("di", "ratio", 1)
                                                     if c.startswith("di") else c)
        reasons = self._reasons()
        df["reason"] = np.where(reasons[i] != "", reasons[i], reasons[j])
        info = self._variances["benefit"]
        for what in ("rho", "bandwidth", "order"):
            df[f"hac_{what}_i"], df[f"hac_{what}_j"] = info[what][i, 0], info[what][j, 0]
        df.insert(list(df.columns).index("favours") + 1, "explanation",
                  forecast_explanations(df, settings.tolerance, levels.ofi or 0.0, unit))
        out = ForecastVerdicts.judged(VerdictTable.of(df, settings, levels, reference, outcomes=True), self)
        out.unit = unit
        return out

    # ------------------------------------------------------------------ skill

    def _skill_values(self) -> dict[str, np.ndarray]:
        a = self.means["crps"].to_numpy()
        with np.errstate(divide="ignore", invalid="ignore"):
            return {name: 1 - a / self.means[f"crps:{name}"].to_numpy() for name in self.baselines}

    def skill(self, alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
        """Per group and baseline: ``skill`` = 1 − mean CRPS_model / mean CRPS_baseline with its interval at
        1 − ``alpha`` (the delta method: the series (crps_t − R·crps_baseline_t)/CRPS_baseline, R the ratio, with
        its HAC variance), the thesis's Table 5.2 form — ``skill_q1``, ``skill_q2``, ``skill_q3``: 1 − Q_k(CRPS
        model)/Q_k(CRPS baseline) at the quartiles of each group's two CRPS sets — and ``share_improved``, the
        share of forecasts whose CRPS is at most the baseline's (a per-forecast skill ≥ 0). Empty without
        baselines; the between-group differences of skill are :meth:`pairs`' "skill:<baseline>" rows."""
        z = stats.norm.ppf(1 - check_alpha(alpha) / 2)
        frames = []
        for name, value in self._skill_values().items():
            se = np.sqrt(self.variance(f"skill:{name}")[:, 0])
            q = self.quartiles[self.quartiles["baseline"] == name].set_index("group").loc[list(self.groups)]
            frames.append(pd.DataFrame({
                "group": self.groups, "baseline": name, "crps": self.means["crps"].to_numpy(),
                "crps_baseline": self.means[f"crps:{name}"].to_numpy(), "skill": value,
                "skill_ci_low": value - z * se, "skill_ci_high": value + z * se,
                "skill_q1": q["skill_q1"].to_numpy(), "skill_q2": q["skill_q2"].to_numpy(),
                "skill_q3": q["skill_q3"].to_numpy(), "share_improved": q["share_improved"].to_numpy(),
                "reason": self._reasons()}))
        columns = ["group", "baseline", "crps", "crps_baseline", "skill", "skill_ci_low", "skill_ci_high",
                   "skill_q1", "skill_q2", "skill_q3", "share_improved", "reason"]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


class ForecastVerdicts(Verdicts):
    """The verdicts of a :class:`ForecastAudit` (a :class:`~fairness_core.results.Verdicts`, the same table and
    words), read in the forecasts' words by :meth:`findings`; ``unit`` is the outcome's unit."""

    _metadata = [*Verdicts._metadata, "unit"]

    @property
    def _constructor(self):  # type: ignore[no-untyped-def]
        return ForecastVerdicts

    def findings(self, max_items: int = 3, kind: str = "group") -> str:
        """The verdict counts and the leading pairs' readings, ``kind`` naming what a group is
        (:func:`fairness_core.wording.forecasts.forecast_findings`)."""
        return forecast_findings(self, getattr(self, "unit", ""), max_items, kind)
