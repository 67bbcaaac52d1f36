"""Benchmark: time and peak memory of large uploads, each case in its own process (issue 35).

    python bench/upload_memory.py [--rows 4000000] [--quick]

Cases, on one generated row-level CSV (6 columns; 4 M rows is ~160 MB, the issue's 177 MiB file) and its
Parquet copy:

- ``duckdb``: the baseline — DuckDB counts the confusion matrices straight from the CSV file.
- ``read_table``: the upload's bytes to a table of text (the Upload page's parse).
- ``upload_to_cms``: the bytes to the per-group confusion matrices through a table (parse +
  ``cms_from_predictions``: the path of uploads up to ``io.LARGE_UPLOAD_BYTES``, which keep their rows).
- ``upload_in_place``: the bytes to the confusion matrices counted in place (``io.aggregate_upload``: the
  Upload page's path for larger files).
- ``parquet``: the same through the Parquet copy.
- ``xlsx_6m_rows``: the issue-28 workbook (6 M rows of five cells, no declared size) refused.
- ``csv_33m_rows``: a 33 M-row CSV refused at the row limit.
- ``parquet_1000_columns``: a million rows of a thousand small-integer columns refused from its footer.
- ``xlsx_4_95m_numbers``: the largest workbook accepted, 495,000 rows × 10 columns of numbers (~0.4 MB).
- ``xlsx_4_95m_shared_text``: the same size in 30-character shared strings, near the text limit.
- ``xlsx_shared_string_bomb``: 60,000 cells naming one 10 KB shared string (13 KB) refused.
- ``xlsx_damaged``: a workbook whose sheet's compressed bytes are overwritten, refused in words.
- ``parquet_20m_float_cells``: 5 M rows × 4 float columns (20 M cells, ~0.5 GB of text) accepted.
- ``parquet_near_expansion_limit``: one 10,000-character value in 63,000 rows, dictionary-encoded (a few KB
  decoding to 601 MB, under the 640 MB limit) accepted.
- ``parquet_repeated_text_bomb``: the same value in 200,000 rows (2 GB decoded) refused part-way.

Each process reports its wall time and peak RSS (``VmHWM``); the baseline RSS after imports is
subtracted so the numbers compare what each path adds. Goals: upload to CMs within 3× DuckDB's time and
added memory; ``read_table`` ≤ 1.5 GiB peak and ≤ 20 s; every upload answered (accepted, or refused as it
should be) in ≤ 30 s and ≤ 1 GiB peak, printed PASS/FAIL per case and goal. JSON last line.

``--quick``: the row-level CSV and its Parquet copy at 10^6 rows (the time ratio against DuckDB is then reported
without its goal, which is set at the 4 M-row file); every refusal and the accepted Parquet files as in the full
run; the two largest workbooks (495,000 rows, 5-9 s to read) only in the full run.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import Stopwatch, at_most, declare, equal_to  # noqa: E402


def make_files(rows: int, folder: Path) -> dict[str, Path]:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"id": np.arange(rows) + 10**9,
                       "race": rng.choice(["African-American", "Caucasian", "Hispanic", "Other"], rows),
                       "sex": rng.choice(["Male", "Female"], rows), "label": rng.integers(0, 2, rows),
                       "prediction": rng.integers(0, 2, rows), "score": rng.random(rows).round(6)})
    paths = {"csv": folder / "rows.csv", "parquet": folder / "rows.parquet", "csv33m": folder / "33m.csv",
             "wide": folder / "wide.parquet", "xlsx": folder / "nodim.xlsx"}
    df.to_csv(paths["csv"], index=False)
    df.to_parquet(paths["parquet"], index=False)
    with open(paths["csv33m"], "wb") as f:
        f.write(b"y,p\n")
        chunk = b"1,0\n" * 1_000_000
        for _ in range(33):
            f.write(chunk)
    zeros = pa.array(np.zeros(1_000_000, dtype=np.int8))
    pq.write_table(pa.table({f"c{k}": zeros for k in range(1000)}), paths["wide"], compression="zstd")
    sys.path.insert(0, str(ROOT / "tests"))
    from workbooks import workbook

    def rows_xml():  # type: ignore[no-untyped-def]
        yield b'<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        yield b"<sheetData>"
        row = b"<row><c><v>1</v></c><c><v>0</v></c><c><v>1</v></c><c><v>2</v></c><c><v>3</v></c></row>"
        for _ in range(300):
            yield row * 20_000
        yield b"</sheetData></worksheet>"

    paths["xlsx"].write_bytes(workbook({"Sheet1": rows_xml()}))
    paths.update(_worst_cases(folder, workbook))
    return paths


_SHEET = b'<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'


def _worst_cases(folder: Path, workbook) -> dict[str, Path]:  # type: ignore[no-untyped-def]
    """The largest uploads accepted, bombs, a damaged workbook."""
    import io
    import zipfile

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    paths = {name: folder / name for name in ("numbers.xlsx", "shared.xlsx", "bomb.xlsx", "damaged.xlsx",
                                              "floats.parquet", "near.parquet", "bomb.parquet")}
    header = b"<row>" + b"".join(b'<c t="inlineStr"><is><t>c%d</t></is></c>' % k for k in range(10)) + b"</row>"

    def sheet(row: bytes, n: int):  # type: ignore[no-untyped-def]
        yield _SHEET + header
        for _ in range(n // 5_000):
            yield row * 5_000
        yield row * (n % 5_000) + b"</sheetData></worksheet>"

    paths["numbers.xlsx"].write_bytes(workbook({"Sheet1": sheet(b"<row>" + b"<c><v>1</v></c>" * 10 + b"</row>",
                                                                 494_999)}))
    rng = np.random.default_rng(0)
    strings = b"".join(b"<si><t>%03d%s</t></si>" % (k, b"y" * 27) for k in range(1000))
    block = b"".join(b"<row>" + b"".join(b'<c t="s"><v>%d</v></c>' % v for v in rng.integers(0, 1000, 10))
                     + b"</row>" for _ in range(5_000))

    def shared_rows():  # type: ignore[no-untyped-def]
        yield _SHEET + header
        for _ in range(99):   # 495,000 rows
            yield block
        yield b"</sheetData></worksheet>"

    sst = b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">%s</sst>'
    paths["shared.xlsx"].write_bytes(workbook({"Sheet1": shared_rows()}, shared_strings=sst % strings))
    one = sst % (b"<si><t>" + b"x" * 10_000 + b"</t></si><si><t>g</t></si>")
    paths["bomb.xlsx"].write_bytes(workbook({"Sheet1": [_SHEET, b'<row><c t="s"><v>1</v></c><c><v>2</v></c></row>',
                                                        b'<row><c t="s"><v>0</v></c><c><v>1</v></c></row>' * 60_000,
                                                        b"</sheetData></worksheet>"]}, shared_strings=one))
    small = bytearray(workbook({"Sheet1": sheet(b"<row>" + b"<c><v>1</v></c>" * 10 + b"</row>", 2_000)}))
    info = zipfile.ZipFile(io.BytesIO(bytes(small))).getinfo("xl/worksheets/sheet1.xml")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + 20
    small[start: start + 40] = bytes(b ^ 0x55 for b in small[start: start + 40])
    paths["damaged.xlsx"].write_bytes(bytes(small))
    pq.write_table(pa.table({f"f{k}": rng.random(5_000_000) for k in range(4)}), paths["floats.parquet"])

    def repeated(rows: int, path: Path) -> None:
        text = pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, dtype=np.int32)), pa.array(["x" * 10_000]))
        pq.write_table(pa.table({"group": text, "label": pa.array(np.arange(rows) % 2),
                                 "prediction": pa.array(np.arange(rows) // 2 % 2)}), path, compression="zstd")

    repeated(63_000, paths["near.parquet"])
    repeated(200_000, paths["bomb.parquet"])
    return paths


def _peak_mib() -> float:
    """This process's peak resident memory (VmHWM: unlike ru_maxrss, not inherited from the parent)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(case: str, path: str) -> None:
    """One case in this process: print {"seconds", "peak_mib", "base_mib", "outcome"} as JSON."""
    sys.path.insert(0, str(ROOT))
    import duckdb  # noqa: F401 - imported by every case, so the baselines match

    from fairness_core.io import DataValidationError, cms_from_predictions, read_table

    base = _peak_mib()
    data = None if case == "duckdb" else Path(path).read_bytes()   # an upload arrives as bytes
    clock = Stopwatch()
    try:
        if case == "duckdb":
            con = duckdb.connect()
            out = con.execute("select race, sex, count(*) filter (label = 1 and prediction = 1), "
                              "count(*) filter (label = 1 and prediction = 0), count(*) filter (label = 0 and "
                              f"prediction = 1), count(*) filter (label = 0 and prediction = 0) from read_csv('{path}') "
                              "group by race, sex").fetchall()
            outcome = f"{len(out)} groups"
        elif case in ACCEPTED:
            df = read_table(data, Path(path).name)
            outcome = f"accepted: {df.shape[0]:,} rows × {df.shape[1]} columns"
        elif case in ("read_table", "parquet_table"):
            df = read_table(data, Path(path).name)
            outcome = f"{df.shape[0]:,} rows × {df.shape[1]} columns"
        elif case == "upload_in_place":
            from fairness_core.io import aggregate_upload

            audit = aggregate_upload(data, Path(path).name, label="label", prediction="prediction",
                                     groups=["race", "sex"], positive="1", positive_is="benefit")
            outcome = f"{len(audit.groups)} groups, n = {audit.total().n:,}"
        elif case in ("upload_to_cms", "parquet"):
            audit = cms_from_predictions(read_table(data, Path(path).name), "label", "prediction", ["race", "sex"],
                                         "1", positive_is="benefit")
            outcome = f"{len(audit.groups)} groups, n = {audit.total().n:,}"
        else:
            read_table(data, Path(path).name)
            outcome = "accepted (should have been refused)"
    except DataValidationError as exc:
        outcome = f"refused: {str(exc)[:150]}"
    seconds = clock.elapsed()
    peak = _peak_mib()
    print(json.dumps({"seconds": seconds, "peak_mib": peak, "base_mib": base, "outcome": outcome}))


#: Cases that must be read (case: file) and cases that must be refused with a message.
ACCEPTED = {"xlsx_4_95m_numbers": "numbers.xlsx", "xlsx_4_95m_shared_text": "shared.xlsx",
            "parquet_20m_float_cells": "floats.parquet", "parquet_near_expansion_limit": "near.parquet"}
REFUSED = {"xlsx_shared_string_bomb": "bomb.xlsx", "xlsx_damaged": "damaged.xlsx",
           "parquet_repeated_text_bomb": "bomb.parquet"}
#: Every upload is answered within these (wall seconds, peak MiB of the whole process).
GOAL_SECONDS, GOAL_MIB = 30, 1024


def goals(case: str, r: dict) -> dict:
    """PASS/FAIL of one case against the upload goals: answered as it should be, ≤ 30 s, ≤ 1 GiB peak."""
    refused = r["outcome"].startswith("refused")
    should_refuse = case in REFUSED or case in ("xlsx_6m_rows", "csv_33m_rows", "parquet_1000_columns")
    return {"answer": "PASS" if refused == should_refuse else "FAIL",
            "seconds": "PASS" if r["seconds"] <= GOAL_SECONDS else "FAIL",
            "memory": "PASS" if r["peak_mib"] <= GOAL_MIB else "FAIL"}


def run(case: str, path: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", case, str(path)], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=None, help="rows of the generated CSV (4 x 10^6; quick 10^6)")
    ap.add_argument("--quick", action="store_true", help="the generated CSV at 10^6 rows")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.rows = args.rows or (1_000_000 if args.quick else 4_000_000)
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory() as tmp:
        paths = make_files(args.rows, Path(tmp))
        cases = {"duckdb": paths["csv"], "read_table": paths["csv"], "upload_to_cms": paths["csv"],
                 "upload_in_place": paths["csv"],
                 "parquet": paths["parquet"], "xlsx_6m_rows": paths["xlsx"], "csv_33m_rows": paths["csv33m"],
                 "parquet_1000_columns": paths["wide"]}
        cases.update({case: paths[name] for case, name in ACCEPTED.items()
                      if not (args.quick and name.endswith(".xlsx"))})
        cases.update({case: paths[name] for case, name in REFUSED.items()})
        results = {case: run(case, path) for case, path in cases.items()}
        size = paths["csv"].stat().st_size
    base = results["duckdb"]
    print(f"CSV: {args.rows:,} rows, {size / 2**20:,.0f} MiB")
    print(f"{'case':22s} {'seconds':>8s} {'peak MiB':>9s} {'added MiB':>10s}  outcome")
    for case, r in results.items():
        r["added_mib"] = r["peak_mib"] - r["base_mib"]
        print(f"{case:22s} {r['seconds']:8.2f} {r['peak_mib']:9.0f} {r['added_mib']:10.0f}  {r['outcome']}")
    print(f"\nupload goals: answered as it should be, ≤ {GOAL_SECONDS} s, ≤ {GOAL_MIB} MiB peak (whole process)")
    verdicts = {}
    for case, r in results.items():
        if case == "duckdb":
            continue
        verdicts[case] = goals(case, r)
        print(f"{case:30s} " + "  ".join(f"{goal} {verdict}" for goal, verdict in verdicts[case].items()))
    ours = results["upload_in_place"]
    # our path holds the upload's bytes (Streamlit hands them over, before any of our code runs); DuckDB reads
    # the file. Both ratios are printed: with the bytes counted as ours, and beyond them.
    time_ratio = ours["seconds"] / base["seconds"]
    memory_ratio = ours["added_mib"] / max(base["added_mib"], 1.0)
    beyond_bytes = (ours["added_mib"] - size / 2**20) / max(base["added_mib"], 1.0)
    print(f"large upload to CMs (in place) vs DuckDB: {time_ratio:.1f}× the time, {memory_ratio:.1f}× the added "
          f"memory with the upload's bytes, {beyond_bytes:.1f}× beyond them (goal ≤ 3×)")
    refusals = [results[c] for c in ("xlsx_6m_rows", "csv_33m_rows", "parquet_1000_columns")]
    print(json.dumps(declare({"rows": args.rows, "csv_mib": round(size / 2**20, 1),
                      "cases": {c: {k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()}
                                for c, r in results.items()},
                      "time_ratio_vs_duckdb": round(time_ratio, 2), "memory_ratio_vs_duckdb": round(memory_ratio, 2),
                      "memory_ratio_beyond_bytes": round(beyond_bytes, 2),
                      "read_table_meets_goal": results["read_table"]["peak_mib"] <= 1536
                      and results["read_table"]["seconds"] <= 20,
                      "refusals_meet_goal": all(r["outcome"].startswith("refused") and r["seconds"] <= 30
                                                and r["peak_mib"] <= 1024 for r in refusals),
                      "upload_goals": verdicts,
                      "all_uploads_meet_goals": all(v == "PASS" for g in verdicts.values() for v in g.values())},
        goals={"all_uploads_meet_goals": equal_to(True), "read_table_meets_goal": equal_to(True),
               "refusals_meet_goal": equal_to(True), "memory_ratio_beyond_bytes": at_most(3),
               # at the 177 MiB file; on a smaller one a process's fixed costs weigh more than DuckDB's
               **({"time_ratio_vs_duckdb": at_most(3)} if args.rows >= 4_000_000 else {})},
        ratio=(round(time_ratio, 2), "upload to CMs in place / DuckDB, time"), quick=args.quick)))


if __name__ == "__main__":
    main()
