"""Benchmark: an amount audit of 10^7 rows × 50 groups in memory (issue 53).

Times ``ContinuousAudit.from_predictions`` (validation, group codes and every per-group moment),
``by_group()`` and ``verdicts()`` (1,225 pairs), and, as the baseline in the same process, NumPy's own per-group
means of the outcome and the prediction (two ``bincount`` calls with weights on the same group codes): the least
any audit of these rows must do. Goal: ``by_group()`` + ``verdicts()`` ≤ 2 s; the full audit from rows is reported
beside it with its ratio to the baseline.

    python bench/continuous_speed.py [--quick]      # --quick: 10^6 rows
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import at_most, check, declare, timed  # noqa: E402
from fairness_core.continuous import ContinuousAudit  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rows, groups = (10**6 if args.quick else 10**7), 50
    rng = np.random.default_rng(0)
    group = rng.integers(0, groups, rows)
    y = rng.lognormal(10, 0.5, rows)
    pred = y * rng.lognormal(0, 0.1, rows) + group * 10.0

    def baseline() -> tuple[np.ndarray, np.ndarray]:
        n = np.bincount(group, minlength=groups)
        return np.bincount(group, weights=y, minlength=groups) / n, np.bincount(group, weights=pred, minlength=groups) / n

    base, _ = timed(baseline, repeat=3)
    build, audit = timed(ContinuousAudit.from_predictions, y, pred, group, positive_is="benefit", repeat=2)
    table_s, _ = timed(audit.by_group, repeat=3)
    verdict_s, v = timed(audit.verdicts, 500.0, repeat=3)
    answer = table_s + verdict_s
    print(f"{rows:,} rows × {groups} groups ({len(v):,} pairs)")
    print(f"baseline (numpy bincount means of outcome and prediction): {base:.3f} s")
    print(f"from_predictions: {build:.3f} s ({build / base:.1f} × baseline)")
    print(f"by_group(): {table_s:.4f} s, verdicts(): {verdict_s:.4f} s, together {answer:.4f} s")
    print(f"from rows to verdicts: {build + answer:.3f} s ({(build + answer) / base:.1f} × baseline)")
    goals = {"by_group_and_verdicts_s": at_most(2.0)}
    figures = {"rows": rows, "groups": groups, "baseline_s": round(base, 4), "from_predictions_s": round(build, 4),
               "by_group_s": round(table_s, 4), "verdicts_s": round(verdict_s, 4),
               "by_group_and_verdicts_s": round(answer, 4), "rows_to_verdicts_s": round(build + answer, 4)}
    for name, bound in goals.items():
        print(f"goal {name} {bound}: {'met' if check(figures[name], bound) else 'MISSED'}")
    print(json.dumps(declare(figures, goals=goals, ratio=((build + answer) / base, "rows to verdicts / numpy means"),
                             quick=args.quick)))


if __name__ == "__main__":
    main()
