"""Benchmark: coverage of the forecast audit's between-group intervals under autocorrelated errors (issue 55).

Two groups' forecasts are equally good (every true difference is 0); each group's errors e_t over T time points
follow one dependence case. The forecasts are the N(0, 1) quantiles at levels 0.1, …, 0.9 around the truth, so
each forecast's scores are the library's own (``forecast_scores.row_scores``): the signed error of the median
(the forecast OFI's series), CRPS and the 80 % band's coverage. Each group's mean gets the long-run variance of
every method of ``fairness_core.statistics.inference.hac`` and the difference of the two means a normal 95 %
interval, exactly as ``ForecastAudit.pairs`` builds it; the table is the share of draws whose interval holds 0.

Cases (hourly points where a day matters): AR(1) at ρ = 0 and 0.5 (200 and 2,000 points), ρ = 0.9 (400 and
2,000); "day shift": a day's 24 errors share one N(0, ½) shift plus N(0, ½) noise (no AR(1)); "daily cycle":
2·sin(2πt/24 + φ) with a random phase plus N(0, 1) noise; "seasonal AR(24)": e_t = ½e_{t−24} + noise, whose
dependence lies only at multiples of 24 lags (a limit: the sieve's order reaches 24 only from 2,000 points on;
the same data given one time point per day, ``time`` = the day, are shown beside it).

Goals (issue 55), for the default method ("union"): ≥ 0.93 at ρ = 0 and 0.5, ≥ 0.90 at ρ = 0.9 and on the day
shift (2,400 points), on the OFI series; the i.i.d. interval is shown to undercover on the same data.

    python bench/forecasts_coverage.py [--quick]     # --quick: 400 draws per case (default 2,000)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from scipy import signal, stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import at_least, check, declare, stopwatch  # noqa: E402
from fairness_core.statistics.forecast_scores import row_scores  # noqa: E402
from fairness_core.statistics.inference.hac import long_run_variance  # noqa: E402

LEVELS = np.round(np.arange(1, 10) / 10, 10)
#: (label, kind, parameter, time points, per-day aggregation)
CASES = (
    ("AR(1) rho=0", "ar1", 0.0, 200, False), ("AR(1) rho=0", "ar1", 0.0, 2000, False),
    ("AR(1) rho=0.5", "ar1", 0.5, 200, False), ("AR(1) rho=0.5", "ar1", 0.5, 2000, False),
    ("AR(1) rho=0.9", "ar1", 0.9, 400, False), ("AR(1) rho=0.9", "ar1", 0.9, 2000, False),
    ("day shift", "day", 0.0, 480, False), ("day shift", "day", 0.0, 2400, False),
    ("day shift, time = day", "day", 0.0, 2400, True),
    ("daily cycle", "cycle", 0.0, 480, False), ("daily cycle", "cycle", 0.0, 2400, False),
    ("seasonal AR(24)", "seasonal", 0.0, 480, False), ("seasonal AR(24)", "seasonal", 0.0, 2400, False),
    ("seasonal AR(24), time = day", "seasonal", 0.0, 2400, True),
)
#: The methods compared: (label, method, fixed bandwidth)
METHODS = (("iid", "iid", None), ("NW 10 lags", "newey-west", 11.0), ("NW Andrews", "newey-west", None),
           ("prewhitened", "prewhitened", None), ("AR sieve", "ar-sieve", None), ("union", "union", None))
STATISTICS = ("ofi", "crps", "coverage80")


def errors(kind: str, parameter: float, draws: int, length: int, rng: np.random.Generator) -> np.ndarray:
    """(draws, length) errors of unit variance with the case's dependence."""
    if kind == "ar1":
        e = rng.normal(size=(draws, length + 300)) * np.sqrt(1 - parameter ** 2)
        return signal.lfilter([1.0], [1.0, -parameter], e, axis=1)[:, 300:]
    if kind == "day":
        shift = np.repeat(rng.normal(size=(draws, length // 24 + 1)), 24, axis=1)[:, :length]
        return np.sqrt(0.5) * (shift + rng.normal(size=(draws, length)))
    if kind == "cycle":
        phase = rng.uniform(0, 2 * np.pi, (draws, 1))
        return (2 * np.sin(2 * np.pi * np.arange(length) / 24 + phase) + rng.normal(size=(draws, length))) / np.sqrt(3)
    e = rng.normal(size=(draws, length + 24 * 20)) * np.sqrt(0.75)
    return signal.lfilter([1.0], [1.0] + [0.0] * 23 + [-0.5], e, axis=1)[:, 24 * 20:]


def scores(e: np.ndarray) -> np.ndarray:
    """(draws, length, 3) per-forecast OFI series (median − y), CRPS and 80 % coverage of N(0, 1) quantile
    forecasts of y = e (the truth's signal cancels)."""
    y = e.reshape(-1)
    q = np.broadcast_to(stats.norm.ppf(LEVELS), (y.size, LEVELS.size))
    s = row_scores(y, np.ascontiguousarray(q), LEVELS)
    inside = ((s.at_or_below > 0) & (s.below <= LEVELS.size - 1)).astype(float)
    return np.stack([s.median - y, s.crps, inside], axis=1).reshape(*e.shape, 3)


def coverage(kind: str, parameter: float, length: int, per_day: bool, draws: int, seed: int) -> dict[str, dict]:
    """Per method and statistic: the share of draws whose 95 % interval of the difference holds 0."""
    rng = np.random.default_rng(seed)
    x = np.concatenate([scores(errors(kind, parameter, draws, length, rng)),
                        scores(errors(kind, parameter, draws, length, rng))])      # (2·draws, length, 3)
    rows = length
    estimate = x[:draws].mean(axis=1) - x[draws:].mean(axis=1)
    if per_day:                         # one time point per day: the day's sum, as the audit aggregates a time
        x = x[:, : length // 24 * 24].reshape(2 * draws, length // 24, 24, 3).sum(axis=2)
    points = x.shape[1]
    u = (x - x.mean(axis=1, keepdims=True)).reshape(-1, 3)     # each series centred (a day's sum on its mean)
    segment = np.repeat(np.arange(2 * draws), points)
    out: dict[str, dict] = {}
    z = stats.norm.ppf(0.975)
    for label, method, width in METHODS:
        v = long_run_variance(u, segment, 2 * draws, method, width)
        var = points * v.lrv / rows ** 2
        se = np.sqrt(var[:draws] + var[draws:])
        held = np.abs(estimate) <= z * se
        out[label] = {s: round(float(held[:, k].mean()), 4) for k, s in enumerate(STATISTICS)}
        out[label]["median_order"] = float(np.median(v.order[:, 0]))
        out[label]["median_bandwidth"] = round(float(np.median(v.bandwidth[:, 0])), 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    draws = 400 if args.quick else 2000
    results, goals = [], {}
    with stopwatch() as took:
        for k, (label, kind, parameter, length, per_day) in enumerate(CASES):
            c = coverage(kind, parameter, length, per_day, draws, seed=k)
            results.append({"case": label, "points": length, "draws": draws, "coverage": c})
            row = "  ".join(f"{m:>11}: {c[m]['ofi']:.3f}" for m, _, _ in METHODS)
            print(f"{label:<28} T={length:>5}  {row}   union crps {c['union']['crps']:.3f}, "
                  f"cov80 {c['union']['coverage80']:.3f}")
    figures: dict = {"draws": draws, "seconds": round(took.seconds, 1), "cases": results}
    for k, r in enumerate(results):
        label, kind, parameter, length, per_day = CASES[k]
        key = f"{kind}{parameter:g}_{length}{'_daily' if per_day else ''}"
        figures[f"union_ofi_{key}"] = r["coverage"]["union"]["ofi"]
        figures[f"iid_ofi_{key}"] = r["coverage"]["iid"]["ofi"]
        if kind == "ar1":
            goals[f"union_ofi_{key}"] = at_least(0.93 if parameter < 0.9 else 0.90)
        if kind == "day" and length == 2400:
            goals[f"union_ofi_{key}"] = at_least(0.90)
    figures["iid_undercovers"] = figures["iid_ofi_ar10.9_400"] < 0.9
    for name, bound in goals.items():
        print(f"goal {name} {bound}: {'met' if check(figures[name], bound) else 'MISSED'}")
    ratio = figures["union_ofi_ar10.9_400"] / figures["iid_ofi_ar10.9_400"]
    print(json.dumps(declare(figures, goals=goals, ratio=(ratio, "union / iid coverage at rho=0.9, 400 points"),
                             quick=args.quick)))


if __name__ == "__main__":
    main()
