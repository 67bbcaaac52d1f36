"""PTN's test forecasts audited by group (issue 55): which sites (weather) or regimes (Lorenz) does PTN serve worse,
and does it beat both baselines at each of them? The audit is :func:`fairness_core.forecasts.audit` of the test
part's forecasts in the outcome's units, with the deterministic-normal baseline and TiDE as its baselines.

**How the 16 leads enter.** One row per (test window, lead): PTN's c quantiles of that lead, at the time the
forecast verifies, t = the window's issue time + lead (:func:`lead_rows`). :func:`~fairness_core.forecasts.audit`
adds up the rows of one group at one time point before it estimates a variance, so each time point's sum holds the
16 forecasts of that observation made at 16 issue times (and, for Lorenz, the same step of every trajectory of the
regime), and the long-run (HAC) variance of the series of sums allows for the overlap of consecutive windows. Why
rows rather than one audit per lead: a group's mean CRPS over its rows is then the mean over its windows of the
per-window CRPS that the pooled skill table scores (every lead weighs the same in both), so the per-group numbers
split the pooled ones by group, and the rows' weights add up to them; and the forecasts of one observation from
several issue times, which share its noise, enter as one sum instead of as independent rows. What rows at every
lead pool, the audit cannot separate: a group served well at lead 1 and badly at lead 16 shows its average. The
quartile form of skill (``skill_q1`` … ``share_improved`` of :meth:`~fairness_core.forecasts.ForecastAudit.skill`)
is over rows, so its quartiles are of one lead's CRPS, not of the 16 leads' mean as in the pooled Table 5.2 form.

**Which forecasts.** The first seed's PTN and TiDE (the seed whose per-forecast CRPS the result keeps), and the
deterministic-normal baseline, on the same test windows at the same c levels (j + ½)/c, j = 0 … c − 1. On these
midpoint levels the audit's quantile-score CRPS of the sorted quantiles is the ensemble CRPS that the run scores
(:func:`models.ptn.loss.crps`, the mean over leads), exactly: the quantiles are sorted first, as that CRPS sorts
them, so no crossing note arises. Both are in the outcome's units (°C for weather, Lorenz's x), unscaled from the
training part's scale. The intervals are over time for this seed: they do not hold the spread between seeds (the
page lists that for the pooled skill).

**Direction.** Neither a temperature nor Lorenz's x has a side that harms a group by itself, so the audit is run
with ``positive_is="benefit"`` as a convention: the benefit is the median forecast minus the observation
(over-forecasting positive) and the forecast OFI a difference of mean signed errors (biases). The page says so.

**Groups are independent.** The pairs' variances add (the audit's assumption): the Lorenz regimes are separate
systems, and the weather sites are typical years stitched from different calendar months per site, so their
errors share no weather front.

**Size.** A result lives in a user's session, so it keeps the finished :class:`~fairness_core.forecasts.
ForecastAudit` (per time point sums and two small integers per row: 1.5 MB for the demo's 93,000 rows), never the
quantiles (93,000 rows × 111 levels × 3 models, 120 MB in float32, only while the audit is computed: the run turns
its own float32 forecasts into the audit's rows in place, and the audit scores float32 without a float64 copy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from fairness_core import forecasts
from fairness_core.forecasts import ForecastAudit
from fairness_core.wording.forecasts import listed

from .. import forecast_data as FD

__all__ = ["BASELINE_NAMES", "DIRECTION", "OUTCOMES", "UNITS", "GroupView", "group_view", "lead_rows", "levels",
           "outcome_title", "skill_words", "view_words"]

#: The audit's names of the two baselines (its skill rows are "skill:<name>").
BASELINE_NAMES = ("deterministic (normal)", "TiDE")
#: The audit's direction: a larger forecast is counted a benefit (a convention: see the module docstring).
DIRECTION = "benefit"
#: The outcome's unit per data set.
UNITS = {"weather": "°C", "lorenz": ""}
#: The outcome (the forecast target) per data set.
OUTCOMES = {"weather": "dry-bulb temperature", "lorenz": "Lorenz's x"}


def outcome_title(dataset: str) -> str:
    """The outcome with its unit, as an axis reads it: "dry-bulb temperature (°C)", "Lorenz's x (no unit)"."""
    unit = UNITS.get(dataset, "")
    return f"{OUTCOMES.get(dataset, 'target')} ({unit or 'no unit'})"


def levels(c: int) -> np.ndarray:
    """The c quantile levels PTN, TiDE and the normal baseline output: (j + ½)/c, j = 0 … c − 1."""
    return (np.arange(c) + 0.5) / c


def lead_rows(test: FD.Samples, quantiles: np.ndarray, scaler: FD.Scaler, inplace: bool = False) -> np.ndarray:
    """(n·τ, c) float32: each (window, lead)'s quantiles (row w·τ + lead − 1), in the outcome's units, sorted along
    the levels. ``quantiles`` is (n, τ, c) on the training part's [0, 1] scale; with ``inplace`` a float32 array is
    turned into the rows itself (for a caller that no longer needs it: no copy), else it is left as it was.

    float32 loses nothing that matters here: the networks' outputs are float32 already, and the audit scores each
    block of rows in float64 (:func:`fairness_core.forecasts.audit`)."""
    n, steps, c = quantiles.shape
    if (n, steps) != test.target.shape:
        raise ValueError(f"quantiles of shape {quantiles.shape} do not match the {n:,} test windows × {steps} leads "
                         f"of targets {test.target.shape}")
    lo, hi = scaler.target_range()
    out = quantiles.reshape(n * steps, c)
    if not (inplace and out.dtype == np.float32 and np.shares_memory(out, quantiles)):
        out = out.astype(np.float32)
    out *= np.float32(hi - lo)
    out += np.float32(lo)
    out.sort(axis=1)
    return out


@dataclass(frozen=True, eq=False)
class GroupView:
    """PTN's test forecasts by group (module docstring): ``audit`` (None when there is no comparison, ``reason``
    says why), what a group is (``kind``: "site", "regime"), the outcome's ``unit``, the standard deviation of the
    observations (``observation_sd``: the page starts its tolerance at a tenth of it), and how many test windows
    and leads entered."""

    audit: ForecastAudit | None
    kind: str
    unit: str
    observation_sd: float
    windows: int
    leads: int
    reason: str = ""


def group_view(test: FD.Samples, model: np.ndarray, baselines: Mapping[str, np.ndarray], scaler: FD.Scaler,
               kind: str = "group", unit: str = "", inplace: bool = False) -> GroupView:
    """:func:`fairness_core.forecasts.audit` of PTN's quantiles ``model`` (n, τ, c) on the ``test`` windows against
    ``baselines`` (name → quantiles of the same shape), with rows (window, lead) at time issue time + lead, by the
    windows' groups, in the outcome's units (module docstring). No audit (``reason`` says why) when the windows
    carry no groups or fall in one group. ``inplace``: the float32 arrays given become the audit's rows
    (:func:`lead_rows`; the run's own arrays, which it no longer needs)."""
    n, steps = test.target.shape
    lo, hi = scaler.target_range()
    y = (test.target.astype(np.float64) * (hi - lo) + lo).ravel()
    sd = float(np.std(y)) if y.size else float("nan")
    if test.groups is None or test.time is None:
        return GroupView(None, kind, unit, sd, n, steps, "the test windows carry no groups")
    names = sorted({str(g) for g in test.groups})
    if len(names) < 2:
        where = f" ({names[0]})" if names else ""
        return GroupView(None, kind, unit, sd, n, steps,
                         f"every test window is from one {kind}{where}; a comparison by {kind} needs two")
    groups = np.repeat(np.asarray(test.groups, dtype=object), steps)
    time = (np.asarray(test.time, dtype=np.int64)[:, None] + np.arange(1, steps + 1)).ravel()
    tau = levels(model.shape[-1])
    audit = forecasts.audit(y, lead_rows(test, model, scaler, inplace), tau, groups,
                            baselines={name: lead_rows(test, q, scaler, inplace) for name, q in baselines.items()},
                            time=time, positive_is=DIRECTION)
    return GroupView(audit, kind, unit, sd, n, steps)


def view_words(view: GroupView) -> str:
    """How the audit was built, in words for the page: which forecasts, how the leads entered, the direction."""
    unit = f" ({view.unit})" if view.unit else ""
    return (f"The first seed's forecasts on the {view.windows:,} scored test windows, one row per window and lead "
            f"({view.windows * view.leads:,} rows), each at the time it verifies. A {view.kind}'s rows at one time "
            f"point (the forecasts of that step made at up to {view.leads} issue times) enter as one sum, and the "
            "intervals allow for the autocorrelation of the sums over time (HAC). Every lead weighs the same, as in "
            f"the pooled table: the {view.kind}s' mean CRPS, weighted by their rows, average to the pooled mean. "
            f"Amounts are in the outcome's units{unit}. Benefit is the median forecast minus the observation "
            f"(over-forecasting positive): a convention, since neither side harms a {view.kind} by itself, so the "
            "forecast OFI reads as a difference of biases.")


def skill_words(skill: pd.DataFrame, level: str = "95 %") -> str:
    """Per baseline, the groups where PTN's skill interval (:meth:`~fairness_core.forecasts.ForecastAudit.skill`)
    lies above 0 (better), below 0 (worse) or holds 0 (no difference shown), one sentence each.

    >>> t = pd.DataFrame({"group": ["a", "b", "c"] * 2, "baseline": ["TiDE"] * 3 + ["normal"] * 3,
    ...                   "skill_ci_low": [0.1, -0.2, 0.2, -0.3, -0.1, -0.4], "skill_ci_high": [0.3, 0.1, 0.4, -0.1, 0.2, -0.2]})
    >>> print(skill_words(t))
    Against TiDE: PTN is better at a and c. No difference shown at b. Against normal: PTN is worse at a and c. No difference shown at b. (95 % intervals of the skill 1 − CRPS_PTN / CRPS_baseline, not adjusted for the groups.)
    """
    if skill.empty:
        return ""
    low, high = skill["skill_ci_low"].to_numpy(dtype=float), skill["skill_ci_high"].to_numpy(dtype=float)
    side = np.select([low > 0, high < 0, np.isfinite(low) & np.isfinite(high)],
                     ["PTN is better at", "PTN is worse at", "No difference shown at"], "No interval at")
    said = []
    for baseline, rows in skill.assign(_side=side).groupby("baseline", sort=False):
        parts = [f"{word} {listed(list(rows.loc[rows['_side'] == word, 'group'].astype(str)))}"
                 for word in dict.fromkeys(rows["_side"])]
        said.append(f"Against {baseline}: " + ". ".join(parts) + ".")
    return " ".join(said) + f" ({level} intervals of the skill 1 − CRPS_PTN / CRPS_baseline, not adjusted for the groups.)"
