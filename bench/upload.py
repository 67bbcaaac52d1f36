"""Benchmark: parse a 10^6-row predictions CSV with 3 group columns and aggregate it into CMs.

Goal (issue 2): <= 2 s for parse + aggregate on 2 cores. The baseline, run in
the same process on the same bytes, is the obvious pandas route (C parser,
then ``groupby(...).value_counts()``), so the ratio says what our path buys.
Prints the timings, rows/s and a JSON last line.

    python bench/upload.py [--rows 1000000] [--repeat 3] [--quick]

``--quick``: the same 10^6 rows (the goal's size), each side timed once.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import at_least, at_most, declare, timed  # noqa: E402
from fairness_core.io import cms_from_predictions, read_table  # noqa: E402


def make_csv(rows: int, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "label": rng.integers(0, 2, rows), "prediction": rng.integers(0, 2, rows),
        "race": rng.choice(["African-American", "Caucasian", "Hispanic", "Asian", "Other"], rows),
        "sex": rng.choice(["Female", "Male"], rows),
        "age_cat": rng.choice(["Less than 25", "25 - 45", "Greater than 45"], rows),
    })
    return df.to_csv(index=False).encode()


def ours(data: bytes):
    df = read_table(data, "bench.csv")
    return cms_from_predictions(df, "label", "prediction", ["race", "sex", "age_cat"], positive_label=1)


def baseline(data: bytes) -> pd.DataFrame:
    df = pd.read_csv(io.BytesIO(data), engine="c")
    return df.groupby(["race", "sex", "age_cat", "label", "prediction"]).size().unstack([-2, -1], fill_value=0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=None, help="best of this many (3; quick 1)")
    ap.add_argument("--quick", action="store_true", help="each side timed once")
    args = ap.parse_args()
    args.repeat = args.repeat or (1 if args.quick else 3)
    data = make_csv(args.rows)
    t_ours, audit = timed(ours, data, repeat=args.repeat)
    t_base, table = timed(baseline, data, repeat=args.repeat)
    # same answer both ways
    assert audit.total().n == args.rows == int(table.to_numpy().sum())
    goal = 2.0
    print(f"rows: {args.rows:,} ({len(data) / 1e6:.1f} MB CSV), groups: {len(audit.groups)}")
    print(f"parse + aggregate (ours):     {t_ours:.3f} s  ({args.rows / t_ours:,.0f} rows/s)  goal <= {goal} s")
    print(f"pandas C parser + groupby:    {t_base:.3f} s  ({args.rows / t_base:,.0f} rows/s)")
    print(f"speed-up vs baseline:         {t_base / t_ours:.2f}x")
    print(json.dumps(declare(
        {"rows": args.rows, "seconds": round(t_ours, 4), "rows_per_second": round(args.rows / t_ours),
         "baseline_seconds": round(t_base, 4), "ratio_vs_baseline": round(t_base / t_ours, 3),
         "goal_seconds": goal, "meets_goal": t_ours <= goal},
        goals={"seconds": at_most(goal)} if args.rows == 1_000_000 else {"rows_per_second": at_least(1e6 / goal)},
        ratio=(round(t_base / t_ours, 3), "pandas C parser + groupby / ours"), quick=args.quick)))


if __name__ == "__main__":
    main()
