"""Benchmark: the full OFI frontier (every tolerance's per-group thresholds) against Fairlearn's ThresholdOptimizer.

Data: 10^6 rows in 36 groups of unequal size (5,000 to 60,000 rows), continuous scores from a logistic
model whose calibration differs by group, labels drawn from it. Ours: ``mitigation.frontier`` with 20
tolerances (0.01 … 0.20), timed end to end (validation, the one sort, every tolerance's search), and
one ``fit_thresholds`` per target. Fairlearn: ``ThresholdOptimizer(constraints="demographic_parity",
objective="accuracy_score", prefit=True, predict_method="auto")`` over a fitted estimator that returns
the scores, on the same rows (or on ``--fairlearn-rows`` of them when that is set lower: then its time is
also given per row). Fairlearn fits one exact constraint per call and has no OFI target, so the ratios
are: our whole 20-tolerance frontier vs one Fairlearn fit, and our one demographic-parity fit vs its
fit at the same tolerance. Goal (issue 26): the frontier in <= 2 s.

Issue 44: every target fitted with ``randomize=True`` (the randomized rule itself) on the same 10^6 rows × 36 groups
(goal <= 2 s each); ``rule.predict`` on 10^7 rows in memory, groups as text and as a categorical (goal >= 10^7
rows/s, the ``apply`` command's work once the file is read); and the randomized rule against Fairlearn's
ThresholdOptimizer on rows generated here (tests/test_mitigation.py's generator: three groups with different base
rates, 12,000 rows, a logistic model fitted on the fitting half; ``--seeds`` seeds) at equalized odds and
demographic parity: held-out expected accuracy (each row counted with its chance of selection) and violation, ours
at tolerance 0.01 (Fairlearn's tol 0.01 for demographic parity; it cannot relax equalized odds) and, like for like,
both at 0. Goals: on the fitting rows, accuracy at least Fairlearn's less 0.01 points (the same problem solved as
well) with our constraint met there (violation at most the tolerance); on the held-out rows, accuracy within
0.5 points of Fairlearn's on average over the seeds (the lower end of
the mean gap's 95 % t interval: one seed's gap is mostly which of several equally good mixtures each method picked,
and goes either way by up to half a point), and violation at most Fairlearn's plus two standard errors in every seed.
Prints a table and a JSON last line: the figures, ``goals`` (a figure's dotted path -> its bound, as
bench/run.py reads them), ``ratio`` (Fairlearn's fit over ours, same process) and ``quick``.

    python bench/mitigation.py [--quick] [--rows 1000000] [--groups 36] [--tolerances 20] [--fairlearn-rows 1000000]
                               [--seeds 20]

``--quick``: 2 x 10^5 rows (Fairlearn on 10^5 of them), one repeat, five seeds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import check, declare, figure, timed  # noqa: E402
from fairness_core import mitigation  # noqa: E402


def make_data(rows: int, groups: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    sizes = rng.uniform(5_000, 60_000, groups)
    g = rng.choice(groups, rows, p=sizes / sizes.sum())
    offset = rng.normal(0, 0.6, groups)                       # the model's miscalibration per group
    base = rng.normal(0, 0.5, groups)                         # base rates differ
    x = rng.normal(size=rows)
    y = rng.random(rows) < 1 / (1 + np.exp(-(1.5 * x + base[g])))
    scores = 1 / (1 + np.exp(-(1.5 * x + base[g] + offset[g] + rng.normal(0, 0.3, rows))))
    names = np.array([f"group {i:02d}" for i in range(groups)], dtype=object)
    return scores, y.astype(np.int8), names[g]


class ScoreEstimator(BaseEstimator):
    """A fitted 'model' whose output is the score column, for ThresholdOptimizer(prefit=True)."""

    def fit(self, X, y=None):  # type: ignore[no-untyped-def]
        self.fitted_ = True
        return self

    def predict(self, X):  # type: ignore[no-untyped-def]
        return np.asarray(X)[:, 0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=None, help="rows of the frontier's data (10^6; quick 2 x 10^5)")
    ap.add_argument("--groups", type=int, default=36)
    ap.add_argument("--tolerances", type=int, default=20)
    ap.add_argument("--fairlearn-rows", type=int, default=None, help="rows for Fairlearn (default: all; quick 10^5)")
    ap.add_argument("--repeat", type=int, default=None, help="timings' repeats (3; quick 1)")
    ap.add_argument("--seeds", type=int, default=None, help="seeds of the comparison with Fairlearn (20; quick 5)")
    ap.add_argument("--quick", action="store_true", help="smaller sizes, one repeat, five seeds: the same code paths")
    args = ap.parse_args()
    quick = {"rows": 200_000, "fairlearn_rows": 100_000, "repeat": 1, "seeds": 5}
    full = {"rows": 1_000_000, "fairlearn_rows": None, "repeat": 3, "seeds": 20}
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)

    scores, y, g = make_data(args.rows, args.groups)
    tolerances = np.round(np.linspace(0.01, 0.01 * args.tolerances, args.tolerances), 4)
    t_frontier, front = timed(mitigation.frontier, scores, y, g, target="ofi", tolerances=tolerances,
                              repeat=args.repeat)
    fits = {}
    for target in ("ofi", "demographic_parity", "four_fifths", "equal_opportunity", "equalized_odds", "none"):
        fits[target] = timed(mitigation.fit_thresholds, scores, y, g, target=target, tolerance=0.02, repeat=1)

    fl_rows = min(args.fairlearn_rows or args.rows, args.rows)
    pick = np.random.default_rng(1).permutation(args.rows)[:fl_rows] if fl_rows < args.rows else slice(None)
    from fairlearn.postprocessing import ThresholdOptimizer

    X = pd.DataFrame({"score": scores[pick]})
    fl = ThresholdOptimizer(estimator=ScoreEstimator().fit(X), constraints="demographic_parity",
                            objective="accuracy_score", prefit=True, predict_method="auto", tol=0.02)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_fl, _ = timed(fl.fit, X, y[pick], sensitive_features=g[pick], repeat=1)
    t_fl_full = t_fl * args.rows / fl_rows  # Fairlearn's work grows at least linearly in rows
    t_dp = fits["demographic_parity"][0]

    print(f"{args.rows:,} rows, {args.groups} groups, {len(tolerances)} tolerances")
    print(f"{'':44} {'seconds':>9}")
    print(f"{'ours: OFI frontier, ' + str(len(tolerances)) + ' tolerances':44} {t_frontier:9.3f}")
    for target, (t, r) in fits.items():
        print(f"{'ours: fit_thresholds ' + target:44} {t:9.3f}  exhaustive={r.exhaustive}")
    label = f"Fairlearn ThresholdOptimizer DP, {fl_rows:,} rows"
    print(f"{label:44} {t_fl:9.3f}" + ("" if fl_rows == args.rows else f"  (x{args.rows / fl_rows:.0f} rows: "
                                                                          f">= {t_fl_full:.1f} s, linear)"))
    print(f"ratio Fairlearn one fit / our whole frontier: {t_fl_full / t_frontier:.1f}x; "
          f"Fairlearn DP fit / our DP fit: {t_fl_full / t_dp:.1f}x")
    print(f"frontier goal <= 2 s: {'met' if t_frontier <= 2 else 'NOT met'} (wall clock, best of {args.repeat}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores: timings on a shared machine are noisy)")
    randomized = {t: timed(mitigation.fit_thresholds, scores, y, g, target=t, tolerance=0.02, randomize=True,
                           repeat=1) for t in ("ofi", "demographic_parity", "four_fifths", "equal_opportunity",
                                               "equalized_odds")}
    for target, (t, r) in randomized.items():
        print(f"{'ours: randomized ' + target:44} {t:9.3f}  randomized={r.randomized}")
    rule = randomized["equalized_odds"][1]
    big_s, big_g = np.tile(scores, 10), np.tile(g, 10)
    cat = pd.Series(big_g).astype("category")
    rule.predict(big_s[:1000], big_g[:1000], random_state=0)
    t_obj, _ = timed(rule.predict, big_s, big_g, random_state=0, repeat=args.repeat)
    t_cat, _ = timed(rule.predict, big_s, cat, random_state=0, repeat=args.repeat)
    rate_obj, rate_cat = len(big_s) / t_obj, len(big_s) / t_cat
    print(f"apply (predict) on {len(big_s):,} rows: {rate_obj / 1e6:.1f} M rows/s (groups as text), "
          f"{rate_cat / 1e6:.1f} M rows/s (categorical)")
    versus = against_fairlearn(args.seeds)
    summary = {key: summarize(v) for key, v in versus.items()}
    for key, v in summary.items():
        print(f"vs Fairlearn {key:38} accuracy gap (ours − theirs), points: fitting rows min "
              f"{v['fit_accuracy_gap_points_min']:+.3f}; held-out mean {v['accuracy_gap_points_mean']:+.3f} "
              f"(95 % interval {v['accuracy_gap_points_low']:+.3f} to {v['accuracy_gap_points_high']:+.3f}), "
              f"seeds from {v['accuracy_gap_points_min']:+.3f} to {v['accuracy_gap_points_max']:+.3f}; "
              f"violation excess over 2 SE max {v['violation_excess_max']:+.4f}")
    t_random_max = max(t for t, _ in randomized.values())
    line = {"rows": args.rows, "groups": args.groups, "tolerances": len(tolerances),
            "frontier_s": round(t_frontier, 4), "fit_s": {k: round(v[0], 4) for k, v in fits.items()},
            "randomized_fit_s": {k: round(v[0], 4) for k, v in randomized.items()},
            "randomized_fit_s_max": round(t_random_max, 4),
            "apply_rows_per_s": {"text_groups": round(rate_obj), "categorical_groups": round(rate_cat)},
            "fairlearn_rows": fl_rows, "fairlearn_dp_fit_s": round(t_fl, 4),
            "fairlearn_dp_fit_s_at_all_rows": round(t_fl_full, 4),
            "ratio_fairlearn_dp_over_our_dp": round(t_fl_full / t_dp, 2),
            "ratio_fairlearn_fit_over_our_frontier": round(t_fl_full / t_frontier, 2),
            "frontier_all_exhaustive": bool(front["exhaustive"].all()),
            "seeds": args.seeds, "versus_fairlearn": versus, "versus_fairlearn_summary": summary,
            "load_average": round(os.getloadavg()[0], 2), "cpu_count": os.cpu_count()}
    # Goals name a figure of this line (dotted into nested objects) and its bound, as bench/run.py reads them.
    goals = {"frontier_s": {"at_most": 2.0}, "randomized_fit_s_max": {"at_most": 2.0},
             # apply factorizes the group column once and hands predict a categorical: that path is its rate
             "apply_rows_per_s.categorical_groups": {"at_least": 1e7}}
    for key in versus:
        # the same problem solved as well as Fairlearn solves it, on the rows both fit (a difference of optimizers);
        # on new rows, accuracy within 0.5 points on average over the seeds (the interval's lower end: one seed's
        # gap is mostly which of several equally good mixtures each picked, and goes either way by 0.2-0.5 points)
        goals[f"versus_fairlearn_summary.{key}.fit_accuracy_gap_points_min"] = {"at_least": -0.01}
        goals[f"versus_fairlearn_summary.{key}.fit_violation_over_tolerance_max"] = {"at_most": 1e-6}  # and meets it
        goals[f"versus_fairlearn_summary.{key}.accuracy_gap_points_low"] = {"at_least": -0.5}
        goals[f"versus_fairlearn_summary.{key}.violation_excess_max"] = {"at_most": 0.0}

    print("goals: " + "; ".join(f"{k} {'met' if check(figure(line, k), b) else 'NOT met'}" for k, b in goals.items()))
    print(json.dumps(declare(line, goals=goals, ratio=(round(t_fl_full / t_dp, 2), "Fairlearn ThresholdOptimizer DP fit / "
                                                       "our DP fit, same rows"), quick=args.quick)))


def summarize(v: dict[str, list[float]]) -> dict[str, float]:
    """One setting's seeds in points: the fitting rows' smallest accuracy gap, the held-out gaps' mean with its
    95 % t interval, smallest and largest, and the largest violation excess."""
    from scipy import stats

    gaps = np.asarray(v["accuracy_gap"]) * 100
    # one seed has no interval: None, which fails the goal, rather than an infinity JSON cannot hold
    half = float(stats.t.ppf(0.975, len(gaps) - 1) * gaps.std(ddof=1) / np.sqrt(len(gaps))) if len(gaps) > 1 else None
    return {"fit_accuracy_gap_points_min": round(min(v["fit_accuracy_gap"]) * 100, 4),
            "fit_violation_over_tolerance_max": round(max(v["fit_violation_over_tolerance"]), 6),
            "accuracy_gap_points_mean": round(float(gaps.mean()), 3),
            "accuracy_gap_points_low": None if half is None else round(float(gaps.mean()) - half, 3),
            "accuracy_gap_points_high": None if half is None else round(float(gaps.mean()) + half, 3),
            "accuracy_gap_points_min": round(float(gaps.min()), 3), "accuracy_gap_points_max": round(float(gaps.max()), 3),
            "violation_excess_max": round(max(v["violation_excess"]), 5)}


def against_fairlearn(seeds: int) -> dict[str, dict[str, list[float]]]:
    """Per setting, per seed: our randomized rule's expected accuracy minus ThresholdOptimizer's on the fitting rows
    and on the held-out rows, and our held-out violation minus (theirs + two standard errors of a held-out rate
    difference)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from fairlearn.postprocessing import ThresholdOptimizer
    from test_mitigation import generated, held_out_slack, held_out_tpr_fpr_slack

    out: dict[str, dict[str, list[float]]] = {}
    for target in ("equalized_odds", "demographic_parity"):
        for ours_tol in (0.01, 0.0):
            key = f"{target}_at_tolerance_{'0_01' if ours_tol else '0'}"
            out[key] = {"accuracy_gap": [], "fit_accuracy_gap": [], "fit_violation_over_tolerance": [],
                        "violation_excess": []}
            for seed in range(seeds):
                X, y, g, fit, model, s = generated(12_000, seed, groups=3)
                to = ThresholdOptimizer(estimator=model, constraints=target, objective="accuracy_score", prefit=True,
                                        predict_method="auto", tol=None if target == "equalized_odds" else ours_tol)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    to.fit(X[fit], y[fit], sensitive_features=g[fit])
                    theirs = to._pmf_predict(X[~fit], sensitive_features=g[~fit])[:, 1]
                    theirs_fit = to._pmf_predict(X[fit], sensitive_features=g[fit])[:, 1]
                rule = mitigation.fit_thresholds(s[fit], y[fit], g[fit], target, ours_tol, randomize=True)
                ours, ours_fit = rule.selection_probability(s[~fit], g[~fit]), rule.selection_probability(s[fit], g[fit])

                def measured(p: np.ndarray, rows: np.ndarray) -> tuple[float, float]:
                    """Expected accuracy and the target's violation of selection chances ``p`` on ``rows``."""
                    yh, codes = y[rows], np.unique(g[rows], return_inverse=True)[1]
                    counts = (np.bincount(codes, p * yh), np.bincount(codes, p * (1 - yh)),
                              np.bincount(codes).astype(float), np.bincount(codes, yh).astype(float))
                    return float(np.mean(np.where(yh == 1, p, 1 - p))), mitigation._disparities(*counts)[target]

                (acc_o, v_o), (acc_t, v_t) = measured(ours, ~fit), measured(theirs, ~fit)
                (fit_acc_o, fit_v_o), (fit_acc_t, _) = measured(ours_fit, fit), measured(theirs_fit, fit)
                out[key]["fit_accuracy_gap"].append(round(fit_acc_o - fit_acc_t, 8))
                out[key]["fit_violation_over_tolerance"].append(round(fit_v_o - ours_tol, 8))
                slack = held_out_tpr_fpr_slack(y, g, fit) if target == "equalized_odds" else held_out_slack(g, fit)
                out[key]["accuracy_gap"].append(round(acc_o - acc_t, 6))
                out[key]["violation_excess"].append(round(v_o - (v_t + slack), 6))
    return out


if __name__ == "__main__":
    main()
