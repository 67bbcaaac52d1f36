"""Benchmark: io.aggregate on a Parquet log of 10^8 rows (3 group columns, label, score) on 2 cores.

    python bench/aggregate.py                 # 10^8 rows (writes ~1 GB of Parquet to a temp folder)
    python bench/aggregate.py --rows 1e7      # smaller
    python bench/aggregate.py --quick         # 10^7 rows, pandas on 2 x 10^6: the goal scaled to 3 s

Each measurement runs in a fresh process, so its peak memory (ru_maxrss) is its own. The baseline
is pandas in the same run on the largest slice it holds comfortably (--pandas-rows, default 10^7
rows, one of the files): read the Parquet, threshold, groupby. The counts of both are compared
exactly on that slice. Goal (issue 16): 10^8 rows in <= 30 s with < 2 GiB peak (at other sizes the time
goal scales with the rows: 0.3 s per 10^6). The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import at_most, declare, equal_to, stopwatch  # noqa: E402

CHILD_AGGREGATE = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
from fairness_core import io
t = time.perf_counter()
audit = io.aggregate({glob!r}, label="y", prediction="score", groups=["region", "age_band", "sex"], threshold=0.5)
seconds = time.perf_counter() - t
print(json.dumps({{"seconds": seconds, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                   "groups": len(audit.groups), "rows": audit.total().n,
                   "cells": {{g: list(c.as_array().tolist()) for g, c in audit.cms.items()}}}}))
"""

CHILD_PANDAS = """
import json, resource, sys, time
import pandas as pd
t = time.perf_counter()
df = pd.read_parquet({path!r})
df["tp"] = (df["y"] == 1) & (df["score"] >= 0.5)
df["fn"] = (df["y"] == 1) & (df["score"] < 0.5)
df["fp"] = (df["y"] == 0) & (df["score"] >= 0.5)
df["tn"] = (df["y"] == 0) & (df["score"] < 0.5)
counts = df.groupby(["region", "age_band", "sex"], observed=True)[["tp", "fn", "fp", "tn"]].sum()
seconds = time.perf_counter() - t
cells = {{" & ".join(map(str, k)): [int(v) for v in row] for k, row in zip(counts.index, counts.to_numpy())}}
print(json.dumps({{"seconds": seconds, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                   "rows": int(len(df)), "cells": cells}}))
"""


def _write(folder: Path, rows: int, files: int) -> list[Path]:
    """Synthetic logs written by DuckDB itself (fast, reproducible): 12 regions × 6 age bands × 2 sexes."""
    import duckdb

    con = duckdb.connect()
    con.execute("SET threads = 2")
    per = rows // files
    paths = []
    for k in range(files):
        path = folder / f"part-{k:02d}.parquet"
        con.execute(f"""
            COPY (SELECT
                    'region-' || ((i * 7919) % 12)::VARCHAR AS region,
                    ['18-24', '25-34', '35-44', '45-54', '55-64', '65+'][1 + (hash(i) % 6)::INT] AS age_band,
                    CASE WHEN hash(i + 1) % 2 = 0 THEN 'F' ELSE 'M' END AS sex,
                    (hash(i + 2) % 100 < 40 + (i * 7919) % 12)::INT AS y,
                    ((hash(i + 3) % 1000) / 1000.0)::FLOAT AS score
                  FROM range({k * per}, {(k + 1) * per}) t(i))
            TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 1000000)""")
        paths.append(path)
    return paths


def _child(code: str, threads: int) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "DUCKDB_THREADS": str(threads)}
    out = subprocess.run(["taskset", "-c", ",".join(map(str, range(threads))), sys.executable, "-c", code],
                         capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=float, default=None, help="rows written and aggregated (1e8; quick 1e7)")
    ap.add_argument("--pandas-rows", type=float, default=None, help="rows of pandas' slice (1e7; quick 2e6)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="10^7 rows, pandas on 2 x 10^6")
    args = ap.parse_args()
    args.rows = args.rows or (1e7 if args.quick else 1e8)
    args.pandas_rows = args.pandas_rows or (2e6 if args.quick else 1e7)
    rows, files = int(args.rows), max(1, int(args.rows // args.pandas_rows))
    with tempfile.TemporaryDirectory() as tmp:
        with stopwatch() as took:
            paths = _write(Path(tmp), rows, files)
        size = sum(p.stat().st_size for p in paths)
        print(f"wrote {rows:,} rows in {files} Parquet files ({size / 2**20:,.0f} MiB) in {took.seconds:.1f} s")
        glob = str(Path(tmp) / "part-*.parquet")
        ours = _child(CHILD_AGGREGATE.format(root=str(ROOT), glob=glob), args.threads)
        assert ours["rows"] == rows, ours["rows"]
        print(f"io.aggregate (DuckDB, {args.threads} cores): {rows:,} rows in {ours['seconds']:.2f} s, "
              f"peak {ours['peak_mib']:,.0f} MiB, {ours['groups']} groups")
        one = _child(CHILD_AGGREGATE.format(root=str(ROOT), glob=str(paths[0])), args.threads)
        base = _child(CHILD_PANDAS.format(path=str(paths[0])), args.threads)
        assert one["cells"] == base["cells"], "io.aggregate and pandas disagree on the same file"
        print(f"same {base['rows']:,}-row file: io.aggregate {one['seconds']:.2f} s (peak {one['peak_mib']:,.0f} MiB), "
              f"pandas {base['seconds']:.2f} s (peak {base['peak_mib']:,.0f} MiB); counts identical")
        ratio = base["seconds"] / one["seconds"]
        per_row = (base["seconds"] / base["rows"]) / (ours["seconds"] / rows)
        print(f"speed-up over pandas on its largest slice: {ratio:.1f}x; per row, against the full run: {per_row:.1f}x; "
              f"goal <= 30 s and < 2,048 MiB: {'met' if ours['seconds'] <= 30 and ours['peak_mib'] < 2048 else 'NOT met'}")
        goal_s = 30 * rows / 1e8
        print(json.dumps(declare(
            {"rows": rows, "threads": args.threads, "seconds": round(ours["seconds"], 3),
             "peak_mib": round(ours["peak_mib"]), "pandas_rows": base["rows"],
             "pandas_seconds": round(base["seconds"], 3), "pandas_peak_mib": round(base["peak_mib"]),
             "aggregate_seconds_same_slice": round(one["seconds"], 3), "ratio_vs_pandas": round(ratio, 2),
             "counts_agree_with_pandas": one["cells"] == base["cells"],
             "goal_met": ours["seconds"] <= goal_s and ours["peak_mib"] < 2048},
            goals={"seconds": at_most(round(goal_s, 3)), "peak_mib": at_most(2047),
                   "counts_agree_with_pandas": equal_to(True)},
            ratio=(round(ratio, 2), f"pandas / io.aggregate on the same {base['rows']:,}-row file"),
            quick=args.quick)))


if __name__ == "__main__":
    main()
