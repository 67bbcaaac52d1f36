"""Benchmark: a forecast audit of 10^6 forecasts × 111 quantiles × 20 groups (issue 55).

Times ``forecasts.audit`` (validation, the crossing check, every per-forecast score, the per-group sums),
``by_group()`` (CRPS, WIS and benefit with their HAC intervals, every band's coverage) and ``verdicts()`` (190
pairs) together — the goal, ≤ 3 s on 2 cores — and, beside it, ``pairs()`` (the difference of every measure with
intervals: 55 bands' coverage series get their long-run variances there). The baseline in the same process is
NumPy's sort of the same quantile array along its levels (what any check of crossing quantiles could cost).

    python bench/forecasts_speed.py [--quick]      # --quick: 2·10^5 forecasts
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from scipy import signal, stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import at_most, check, declare, timed  # noqa: E402
from fairness_core import forecasts  # noqa: E402

LEVELS = np.round(np.linspace(0.005, 0.995, 111), 10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rows, groups = (2 * 10**5 if args.quick else 10**6), 20
    rng = np.random.default_rng(0)
    group = np.repeat(np.arange(groups), rows // groups)
    time = np.tile(np.arange(rows // groups), groups)
    error = signal.lfilter([1.0], [1.0, -0.7], rng.normal(size=rows)) + 0.05 * group
    y = 20 + 5 * np.sin(time / 24) + error
    q = (y - error)[:, None] + 1.4 * stats.norm.ppf(LEVELS)

    base, _ = timed(np.sort, q, axis=1, repeat=2)
    build, audit = timed(forecasts.audit, y, q, LEVELS, group, time=time, positive_is="benefit", repeat=2)

    def answer() -> None:
        audit._variances.clear()
        audit.by_group()
        audit.verdicts(0.2)

    answer_s, _ = timed(answer, repeat=2)

    def all_pairs() -> int:
        audit._variances.clear()
        return len(audit.pairs())

    pairs_s, n_pairs = timed(all_pairs, repeat=1)
    total = build + answer_s
    print(f"{rows:,} forecasts × {LEVELS.size} quantiles × {groups} groups")
    print(f"baseline (numpy sort of the quantiles along the levels): {base:.3f} s")
    print(f"audit(): {build:.3f} s; by_group() + verdicts(): {answer_s:.3f} s; together {total:.3f} s "
          f"({total / base:.2f} × baseline)")
    print(f"pairs() of every measure ({n_pairs:,} rows, 55 bands' coverage series included): {pairs_s:.3f} s")
    goals = {"audit_by_group_verdicts_s": at_most(3.0)}
    figures = {"rows": rows, "levels": int(LEVELS.size), "groups": groups, "baseline_s": round(base, 4),
               "audit_s": round(build, 4), "by_group_verdicts_s": round(answer_s, 4),
               "audit_by_group_verdicts_s": round(total, 4), "pairs_all_measures_s": round(pairs_s, 4)}
    for name, bound in goals.items():
        print(f"goal {name} {bound}: {'met' if check(figures[name], bound) else 'MISSED'}")
    print(json.dumps(declare(figures, goals=goals, ratio=(total / base, "audit + by_group + verdicts / numpy sort"),
                             quick=args.quick)))


if __name__ == "__main__":
    main()
