"""Run the benchmarks, check each against the goals it declares, and keep the result in bench/history.jsonl.

    python bench/run.py                   # every benchmark but the models' (a full run: see docs/benchmarks.md)
    python bench/run.py --quick           # the same, at the --quick sizes (about 3 minutes on 2 cores)
    python bench/run.py verdicts match    # some of them
    python bench/run.py --models          # the models' too (HydraGAN, PTN, a job's memory: minutes each)

Each benchmark runs in its own process, one after another (nothing else of ours on the cores). Its JSON
last line holds its figures, its ``goals`` (a figure, dotted into nested objects, and a bound:
``bench/_common.declare``) and its ``ratio`` against the baseline it ran in the same process; a line without
goals fails. The table printed at the end has one row per goal:
benchmark, figure, its value, the goal, PASS or FAIL, the ratio and the commit. The run is appended to
``bench/history.jsonl`` (commit, date, machine and its load before each benchmark, every figure), so that
a regression shows as a change between two commits; ``python bench/write_docs.py`` then writes
docs/benchmarks.md's tables from the latest full run. Exit status 1 when a goal fails or a benchmark
fails to report.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import check, figure, goal_text  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HISTORY = ROOT / "bench" / "history.jsonl"


@dataclass(frozen=True)
class Benchmark:
    """One script: its name (bench/<name>.py), whether it is a models' benchmark (run only with ``--models``),
    the arguments of a quick run and its time limit in seconds."""

    name: str
    models: bool = False
    quick_args: tuple[str, ...] = ("--quick",)
    full_args: tuple[str, ...] = ()
    timeout: float = 1800
    path: Path | None = None  # the script, when it is not bench/<name>.py

    @property
    def script(self) -> Path:
        return self.path or ROOT / "bench" / f"{self.name}.py"


#: In the order they run: quick ones first, the mitigation benchmark last (see docs/benchmarks.md).
BENCHMARKS = (
    Benchmark("verdicts", timeout=300),
    Benchmark("upload", timeout=300),
    Benchmark("imbalance_pmf", timeout=300),
    Benchmark("match", timeout=600),
    Benchmark("cps_mse", timeout=900),
    Benchmark("inference_coverage", timeout=3600),
    Benchmark("aggregate", timeout=1800),
    Benchmark("upload_memory", timeout=1800),
    Benchmark("server_load", timeout=1800),
    Benchmark("amounts_coverage", timeout=1800),
    Benchmark("continuous_speed", timeout=600),
    Benchmark("amounts_aggregate", timeout=1800),
    Benchmark("multiclass", timeout=600),
    Benchmark("paired_coverage", timeout=1800),
    Benchmark("counterfactual_speed", timeout=600),
    Benchmark("counterfactual_report", timeout=600),
    Benchmark("forecasts_speed", timeout=600),
    Benchmark("forecasts_coverage", timeout=1800),
    Benchmark("job_memory", models=True, timeout=1800),
    Benchmark("hydragan", models=True, timeout=3600),
    Benchmark("ptn", models=True, timeout=3600),
    Benchmark("mitigation", timeout=1800),
)


@dataclass
class Outcome:
    """What one benchmark reported: its JSON line (``figures``), the goals checked, its wall time and the
    machine's load just before it; ``error`` when it did not report."""

    name: str
    wall_s: float
    load_before: list[float]
    returncode: int
    figures: dict[str, Any] = field(default_factory=dict)
    checks: list[dict[str, Any]] = field(default_factory=list)
    ratio: dict[str, Any] | None = None
    error: str = ""

    @property
    def passed(self) -> bool:
        return not self.error and bool(self.checks) and all(c["pass"] for c in self.checks)


def judge(line: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The goals one JSON line declares, checked, and its ratio against its baseline."""
    goals = line.get("goals") or {}
    checks = []
    for path, bound in goals.items():
        try:
            value = figure(line, path)
        except (KeyError, TypeError):
            value = None
        checks.append({"figure": path, "value": value, "goal": bound, "pass": check(value, bound)})
    return checks, line.get("ratio")


def run_one(bench: Benchmark, quick: bool) -> Outcome:
    """Run one script in its own process and read its JSON last line."""
    args = [sys.executable, str(bench.script), *(bench.quick_args if quick else bench.full_args)]
    load = [round(x, 2) for x in os.getloadavg()]
    start = time.perf_counter()
    try:
        done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=bench.timeout)
    except subprocess.TimeoutExpired:
        return Outcome(bench.name, round(time.perf_counter() - start, 1), load, -1,
                       error=f"timed out after {bench.timeout:g} s")
    wall = round(time.perf_counter() - start, 1)
    lines = [x for x in done.stdout.strip().splitlines() if x.strip()]
    try:
        line = json.loads(lines[-1])
        if not isinstance(line, dict):
            raise ValueError("not an object")
    except (IndexError, ValueError):
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return Outcome(bench.name, wall, load, done.returncode,
                       error=f"no JSON last line (exit {done.returncode}): {tail[:200]}")
    checks, ratio = judge(line)
    out = Outcome(bench.name, wall, load, done.returncode, line, checks, ratio)
    if done.returncode != 0:
        out.error = f"exit {done.returncode}"
    elif not checks:
        out.error = "no goals declared"
    return out


def commit() -> dict[str, Any]:
    """The checked-out commit and whether the files a benchmark runs differ from it."""
    def git(*a: str) -> str:
        return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    status = subprocess.run(["git", "status", "--porcelain", "--", "fairness_core", "bench", "models", "ui", "pages",
                             "app.py"], cwd=ROOT, capture_output=True, text=True).stdout   # "XY path": not stripped,
    changed = [x[3:] for x in status.splitlines()   # X may be a space; the history and the doc writer run nothing
               if x[3:] not in ("bench/history.jsonl", "bench/write_docs.py")]
    return {"commit": git("rev-parse", "--short=10", "HEAD"), "subject": git("log", "-1", "--format=%s")[:80],
            "uncommitted": changed}


def machine() -> dict[str, Any]:
    return {"host": platform.node(), "cpus": os.cpu_count(), "platform": platform.platform(terse=True),
            "python": platform.python_version(), "load_before_run": [round(x, 2) for x in os.getloadavg()]}


def fmt(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e5 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def table_rows(outcomes: list[Outcome], head: str) -> list[list[str]]:
    """One row per goal (or per benchmark that did not report): benchmark, figure, value, goal, verdict, ratio,
    commit."""
    rows = []
    for o in outcomes:
        ratio = "" if not o.ratio or o.ratio.get("value") is None else f"{fmt(o.ratio['value'])}x"
        if o.error and not o.checks:
            rows.append([o.name, "-", "-", "-", "FAIL", ratio, head + f" ({o.error})"])
            continue
        for c in o.checks:
            verdict = "PASS" if c["pass"] and not o.error else "FAIL"
            rows.append([o.name, c["figure"], fmt(c["value"]), goal_text(c["goal"]), verdict, ratio, head])
    return rows


def print_table(rows: list[list[str]]) -> None:
    header = ["benchmark", "figure", "value", "goal", "", "ratio vs baseline", "commit"]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="benchmarks to run (default: all but the models')")
    ap.add_argument("--quick", action="store_true", help="each at its --quick sizes (about 3 minutes on 2 cores)")
    ap.add_argument("--models", action="store_true", help="also the models' benchmarks (minutes each)")
    ap.add_argument("--history", type=Path, default=HISTORY, help="JSON-lines file the run is appended to")
    ap.add_argument("--no-history", action="store_true", help="print the table only")
    args = ap.parse_args(argv)
    known = {b.name: b for b in BENCHMARKS}
    unknown = [n for n in args.names if n not in known]
    if unknown:
        ap.error(f"unknown benchmark(s) {unknown}; known: {', '.join(known)}")
    chosen = [b for b in BENCHMARKS if (b.name in args.names if args.names else (args.models or not b.models))]
    where = commit()
    head = where["commit"] + ("+" if where["uncommitted"] else "")
    box = machine()
    outcomes = []
    start = time.perf_counter()
    for bench in chosen:
        print(f"[{time.strftime('%H:%M:%S')}] {bench.name} (load {os.getloadavg()[0]:.2f}) ...", flush=True)
        outcomes.append(run_one(bench, args.quick))
        o = outcomes[-1]
        print(f"    {o.wall_s:.1f} s, " + ("PASS" if o.passed else "FAIL") + (f": {o.error}" if o.error else ""),
              flush=True)
    wall = round(time.perf_counter() - start, 1)
    print()
    print_table(table_rows(outcomes, head))
    print(f"\n{'quick' if args.quick else 'full'} run of {len(outcomes)} benchmark(s): {wall:.0f} s wall "
          f"({wall / 60:.1f} min) on {box['cpus']} cores; load before each: "
          + ", ".join(f"{o.name} {o.load_before[0]:.1f}" for o in outcomes))
    entry = {"commit": where["commit"], "subject": where["subject"], "uncommitted": where["uncommitted"],
             "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
             "mode": "quick" if args.quick else "full", "models": args.models or any(b.models for b in chosen),
             "only": args.names, "wall_s": wall, "machine": box,
             "benchmarks": {o.name: {"passed": o.passed, "error": o.error, "wall_s": o.wall_s,
                                     "load_before": o.load_before, "returncode": o.returncode,
                                     "checks": o.checks, "ratio": o.ratio, "figures": o.figures}
                            for o in outcomes}}
    if not args.no_history:
        with open(args.history, "a") as f:
            f.write(json.dumps(entry, default=str) + "\n")
        print(f"appended to {args.history.relative_to(ROOT) if args.history.is_relative_to(ROOT) else args.history}")
    return 0 if all(o.passed for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
