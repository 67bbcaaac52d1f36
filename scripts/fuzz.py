"""Fuzz every upload parser with N generated files per strategy and print what was tried.

    python scripts/fuzz.py [N]          # N files in all (default 10,000, the numbers in docs/benchmarks.md): 30% CM
                                        # tables, 30% row-level files, 10% each random bytes, workbooks
                                        # written from XML (no size, many sheets, shared and long strings,
                                        # formulas), Parquet files (every column type, wide ones) and
                                        # names with hidden characters (never accepted); then 10% more:
                                        # 2.5% each of shared-string bombs, Parquet that expands (a long
                                        # value repeated, narrow columns by the thousand), wide workbooks
                                        # and damaged zips, read under a 4 MB text limit (an accepted one
                                        # must hold no more)

Each file goes through the Upload page's path; anything other than an Audit or a clear
DataValidationError (non-empty messages, 1-based rows, named columns) is a failure.
Prints a table and a JSON last line.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fuzz_strategies import (Tally, check_names_printable, cm_files, hidden_name_files, parquet_files,  # noqa: E402
                             parse_cm_file, parse_row_file, row_files, workbook_files)
from fuzz_strategies import (damaged_zip_files, expanding_parquet_files, parse_under_limits,  # noqa: E402
                             shared_string_bomb_files, wide_workbook_files)


def parse_names(data: bytes, name: str):  # type: ignore[no-untyped-def]
    outcome = parse_cm_file(data, name)
    check_names_printable(outcome)
    return outcome


def parse_parquet(data: bytes, name: str):  # type: ignore[no-untyped-def]
    parse_row_file(data, name)
    return parse_cm_file(data, name)


def run(name: str, strategy, parse, n: int) -> Tally:  # type: ignore[no-untyped-def]
    tally = Tally()

    @settings(max_examples=n, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def fuzz(file):  # type: ignore[no-untyped-def]
        tally.record(parse(*file))

    fuzz()
    return tally


def main(n: int) -> None:
    start = time.perf_counter()
    out = {}
    for name, strategy, parse, share in (("confusion-matrix tables", cm_files(), parse_cm_file, 0.3),
                                         ("row-level predictions", row_files(), parse_row_file, 0.3),
                                         ("random bytes", st.tuples(st.binary(max_size=4096),
                                                                    st.sampled_from(["x.csv", "x.xlsx", "x.txt"])),
                                          parse_cm_file, 0.1),
                                         ("workbooks from XML", workbook_files(), parse_names, 0.1),
                                         ("Parquet files", parquet_files(), parse_parquet, 0.1),
                                         ("names with hidden characters", hidden_name_files(), parse_names, 0.1),
                                         ("shared-string bombs", shared_string_bomb_files(), parse_under_limits,
                                          0.025),
                                         ("Parquet that expands", expanding_parquet_files(), parse_under_limits,
                                          0.025),
                                         ("wide workbooks", wide_workbook_files(), parse_under_limits, 0.025),
                                         ("damaged zips", damaged_zip_files(), parse_under_limits, 0.025)):
        t = run(name, strategy, parse, int(round(share * n)))
        out[name] = {"tried": t.tried, "accepted": t.accepted, "rejected with a message": t.rejected,
                     "top reasons": dict(sorted(t.messages.items(), key=lambda kv: -kv[1])[:3])}
        top = sorted(t.messages.items(), key=lambda kv: -kv[1])[:5]
        print(f"{name:26s} tried {t.tried:6,}  accepted {t.accepted:6,}  rejected {t.rejected:6,}  "
              f"uncaught 0; top reasons: " + "; ".join(f"{m} ({c})" for m, c in top))
    wall = time.perf_counter() - start
    print(json.dumps({"fuzz": out, "uncaught_exceptions": 0, "seconds": round(wall, 1)}))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
