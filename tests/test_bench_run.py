"""bench/run.py judges each benchmark by the goals its JSON line declares, and docs/benchmarks.md's tables are
the latest full run in bench/history.jsonl (no benchmark is run here: speed is measured by bench/, never by a
timed test)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import run, write_docs  # noqa: E402
from bench._common import at_least, at_most, declare, equal_to  # noqa: E402


def fake_bench(tmp_path: Path, line: dict | str, exit_code: int = 0, name: str = "fake") -> run.Benchmark:
    """A script that prints a line of noise, then ``line`` (JSON unless a str), then exits with ``exit_code``."""
    text = line if isinstance(line, str) else json.dumps(line)
    script = tmp_path / f"{name}.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        print("a table for people")
        print({text!r})
        sys.exit({exit_code})
    """))
    return run.Benchmark(name, path=script, timeout=60)


def test_a_declared_goal_passes_or_fails_by_its_figure(tmp_path):
    line = declare({"seconds": 0.8, "nested": {"peak_mib": 3000}, "agree": True},
                   goals={"seconds": at_most(1.0), "nested.peak_mib": at_most(2047), "agree": equal_to(True)},
                   ratio=(25.0, "loop / vectorized"), quick=True)
    out = run.run_one(fake_bench(tmp_path, line), quick=True)
    assert [(c["figure"], c["pass"]) for c in out.checks] == [("seconds", True), ("nested.peak_mib", False),
                                                            ("agree", True)]
    assert not out.passed and out.ratio == {"value": 25.0, "of": "loop / vectorized"}
    assert out.load_before and out.wall_s >= 0


def test_at_least_and_a_missing_figure():
    checks, _ = run.judge({"rate": 5, "goals": {"rate": at_least(10), "absent": at_most(1)}})
    assert [c["pass"] for c in checks] == [False, False] and checks[1]["value"] is None


def test_a_script_without_a_json_line_or_with_an_error_fails(tmp_path):
    out = run.run_one(fake_bench(tmp_path, "not json"), quick=False)
    assert not out.passed and out.error.startswith("no JSON last line")
    line = declare({"s": 1}, goals={"s": at_most(2)}, ratio=None, quick=False)
    out = run.run_one(fake_bench(tmp_path, line, exit_code=3), quick=False)
    assert not out.passed and out.error == "exit 3" and out.checks[0]["pass"]


def test_a_script_that_declares_no_goals_fails(tmp_path):
    out = run.run_one(fake_bench(tmp_path, {"frontier_s": 1.5}), quick=False)
    assert not out.passed and out.error == "no goals declared" and out.checks == []


def test_the_run_is_appended_to_the_history(tmp_path, monkeypatch):
    line = declare({"s": 1}, goals={"s": at_most(2)}, ratio=(3.0, "x"), quick=True)
    bench = fake_bench(tmp_path, line)
    monkeypatch.setattr(run, "BENCHMARKS", (bench,))
    history = tmp_path / "history.jsonl"
    assert run.main(["--quick", "--history", str(history)]) == 0
    assert run.main(["fake", "--quick", "--history", str(history)]) == 0
    entries = [json.loads(x) for x in history.read_text().splitlines()]
    assert len(entries) == 2 and entries[0]["mode"] == "quick" and entries[1]["only"] == ["fake"]
    first = entries[0]
    assert {"commit", "date", "machine", "wall_s", "benchmarks"} <= set(first)
    assert first["benchmarks"]["fake"]["figures"]["s"] == 1 and first["machine"]["cpus"] >= 1


@pytest.mark.parametrize("bench", run.BENCHMARKS, ids=lambda b: b.name)
def test_every_script_declares_goals_and_takes_quick(bench):
    source = bench.script.read_text()
    assert "declare(" in source and '"--quick"' in source and bench.quick_args == ("--quick",), bench.name


def test_the_models_run_only_when_asked_and_mitigation_runs_last():
    assert run.BENCHMARKS[-1].name == "mitigation"
    assert {b.name for b in run.BENCHMARKS if b.models} == {"hydragan", "ptn", "job_memory"}


def test_the_docs_tables_are_the_latest_full_run_in_the_history():
    entry = write_docs.latest()
    assert write_docs.generated_part(write_docs.DOC.read_text()) == write_docs.expected(), (
        "docs/benchmarks.md is not the latest full run: python bench/write_docs.py")
    assert entry["mode"] == "full" and entry["benchmarks"]
