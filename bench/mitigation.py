"""Benchmark: the full OFI frontier (every tolerance's per-group thresholds) against Fairlearn's ThresholdOptimizer.

Data: 10^6 rows in 36 groups of unequal size (5,000 to 60,000 rows), continuous scores from a logistic
model whose calibration differs by group, labels drawn from it. Ours: ``mitigation.frontier`` with 20
tolerances (0.01 … 0.20), timed end to end (validation, the one sort, every tolerance's search), and
one ``fit_thresholds`` per target. Fairlearn: ``ThresholdOptimizer(constraints="demographic_parity",
objective="accuracy_score", prefit=True, predict_method="auto")`` over a fitted estimator that returns
the scores, on the same rows (or on ``--fairlearn-rows`` of them when that is set lower: then its time is
also given per row). Fairlearn fits one exact constraint per call and has no OFI target, so the ratios
are: our whole 20-tolerance frontier vs one Fairlearn fit, and our one demographic-parity fit vs its
fit at the same tolerance. Goal (issue 26): the frontier in <= 2 s. Prints a table and a JSON last line.

    python bench/mitigation.py [--rows 1000000] [--groups 36] [--tolerances 20] [--fairlearn-rows 1000000]
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

from bench._common import timed  # noqa: E402
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
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--groups", type=int, default=36)
    ap.add_argument("--tolerances", type=int, default=20)
    ap.add_argument("--fairlearn-rows", type=int, default=None, help="rows for Fairlearn (default: all)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

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
    print(json.dumps({"rows": args.rows, "groups": args.groups, "tolerances": len(tolerances),
                      "frontier_s": round(t_frontier, 4),
                      "fit_s": {k: round(v[0], 4) for k, v in fits.items()},
                      "fairlearn_rows": fl_rows, "fairlearn_dp_fit_s": round(t_fl, 4),
                      "fairlearn_dp_fit_s_at_all_rows": round(t_fl_full, 4),
                      "ratio_fairlearn_fit_over_our_frontier": round(t_fl_full / t_frontier, 2),
                      "ratio_fairlearn_dp_over_our_dp": round(t_fl_full / t_dp, 2),
                      "frontier_all_exhaustive": bool(front["exhaustive"].all()),
                      "goal_met": t_frontier <= 2, "load_average": round(os.getloadavg()[0], 2),
                      "cpu_count": os.cpu_count()}))


if __name__ == "__main__":
    main()
