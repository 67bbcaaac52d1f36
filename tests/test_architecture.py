"""The code's shape: no Streamlit inside fairness_core or models, and no file of fairness_core, models or ui over
600 lines. There is no import cycle among their modules (an import inside a function counts, and so does one
under ``if TYPE_CHECKING:``; the library's floors, which allow imports on one's own floor and below, are checked
by tests/test_floors.py; both read the import graph of tests/floors_helpers.py), no module imports a name from its
own package's ``__init__`` (the floor above it, which imports it), and models/ reaches the job runner only
through the small interface it declares (models/jobs_interface.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from floors_helpers import ROOT, ancestors, files_of, from_module, graph_of, import_nodes, module_name

MAX_LINES = 600


def _own_package_inits(path: Path, files: dict[str, Path], root: Path = ROOT) -> list[str]:
    """The imports by which ``path`` reads a name from the ``__init__`` of a package it belongs to (``from .
    import __version__``, ``import fairness_core`` inside fairness_core). That ``__init__`` imports the module,
    so the name is there only if the ``__init__`` happened to define it before the import; importing one of
    the package's submodules (``from . import metrics``) reads no name of the ``__init__``, and is allowed."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    own = set(ancestors(name)) | ({name} if path.name == "__init__.py" else set())
    found: list[str] = []
    for node in import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [f"{name}: import {a.name}" for a in node.names if a.name in own]
            continue
        module = from_module(node, package)
        if module in own:
            found += [f"{name}: from {module} import {a.name}" for a in node.names if f"{module}.{a.name}" not in files]
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected group of modules, so that a failure lists every knot at once."""
    found, graph = [], {k: set(v) for k, v in graph.items()}
    while (cycle := _cycle(graph)) is not None:
        found.append(cycle)
        graph[cycle[-2]].discard(cycle[-1])   # cut the edge that closed it and look again
    return found


def test_no_import_cycles_in_fairness_core_models_and_ui() -> None:
    cycles = _cycles(graph_of())
    assert cycles == [], "import cycles (late imports included):\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_no_module_imports_its_own_package_init() -> None:
    files = files_of()
    found = [line for path in files.values() for line in _own_package_inits(path, files)]
    assert found == [], "imports from the module's own package __init__ (import from the module that defines the " \
                        "name instead):\n" + "\n".join(found)


def test_own_package_init_finder(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("VERSION = 1\nfrom . import a, sub\n")
    (pkg / "a.py").write_text("from . import VERSION, b\nimport pkg\n")
    (pkg / "b.py").write_text("from .sub import c\nimport pkg.sub.c\n")
    (pkg / "sub" / "__init__.py").write_text("from .c import g\nfrom .. import VERSION\n")
    (pkg / "sub" / "c.py").write_text("from pkg.sub import g\nfrom .. import b\ng = 1\n")
    files = files_of(tmp_path, ("pkg",))
    found = {m: _own_package_inits(p, files, tmp_path) for m, p in files.items()}
    assert found == {"pkg": [], "pkg.a": ["pkg.a: from pkg import VERSION", "pkg.a: import pkg"], "pkg.b": [],
                     "pkg.sub": ["pkg.sub: from pkg import VERSION"], "pkg.sub.c": ["pkg.sub.c: from pkg.sub import g"]}


def test_the_models_reach_jobs_only_through_their_interface() -> None:
    """models/ runs under the app's job runner without importing it: its modules import the few names a job
    needs (progress records, Cancelled, Estimate) from models/jobs_interface.py, and only that module imports
    the library's progress vocabulary."""
    graph = {m: edges for m, edges in graph_of(packages=("fairness_core", "models")).items() if m.startswith("models")}
    runner = sorted(m for m, edges in graph.items() if "fairness_core.services.jobs" in edges)
    progress = sorted(m for m, edges in graph.items()
                      if "fairness_core.common.progress" in edges and m != "models.jobs_interface")
    assert (runner, progress) == ([], []), f"import the runner: {runner}; the progress records directly: {progress}"
    assert sum("models.jobs_interface" in edges for edges in graph.values()) >= 5


def test_the_models_job_estimate_is_the_runners() -> None:
    """A model's Estimate is the runner's own (one class, in fairness_core.progress), and the runner admits and
    refuses it."""
    from fairness_core.services import jobs
    from fairness_core import progress
    from models import jobs_interface

    assert jobs_interface.Estimate is jobs.Estimate is progress.Estimate
    runner = jobs.JobRunner(limits=jobs.ServerLimits(max_job_memory_mb=100))
    with pytest.raises(jobs.OverBudget, match="a big run needs about 200 MB"):
        runner.submit("big", lambda on_progress, should_stop: None,
                      estimate=jobs_interface.Estimate(200, what="a big run"))
    job = runner.submit("small", lambda on_progress, should_stop: "ok", estimate=jobs_interface.Estimate(50))
    assert job.wait(5) and job.snapshot().result == "ok"
    with pytest.raises(ValueError, match="finite number"):
        jobs_interface.Estimate(float("nan"))


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
    assert len(_cycles({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}})) == 2


def test_late_imports_and_package_inits_are_edges(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("def f():\n    from .sub.c import g\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .d import T\n")
    (pkg / "d.py").write_text("T = int\n")
    (pkg / "sub" / "__init__.py").write_text("from .c import g\nfrom .. import b\n")
    (pkg / "sub" / "c.py").write_text("import pkg.a\ng = 1\n")
    graph = graph_of(tmp_path, ("pkg",))
    assert graph["pkg.a"] == {"pkg.sub", "pkg.sub.c"}      # late, and the package __init__ it runs
    assert graph["pkg.b"] == {"pkg.d"}                      # type-checking only, an edge all the same
    assert graph["pkg.sub"] == {"pkg.sub.c", "pkg.b"}
    assert graph["pkg"] == {"pkg.a"}
    assert _cycle(graph) == ["pkg.a", "pkg.sub", "pkg.sub.c", "pkg.a"]


def test_a_type_only_import_closes_a_cycle(tmp_path: Path) -> None:
    """The PTN run's old knot: run imports search, which imported run's config back for its annotations."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "run.py").write_text("from .search import search\nclass Config: ...\n")
    (pkg / "search.py").write_text("from __future__ import annotations\nimport typing\n"
                                   "if typing.TYPE_CHECKING:\n    from .run import Config\n"
                                   "def search(config: Config) -> None: ...\n")
    assert _cycles(graph_of(tmp_path, ("pkg",))) == [["pkg.run", "pkg.search", "pkg.run"]]


@pytest.mark.parametrize("package", ["fairness_core", "models"])
def test_the_library_and_the_models_never_import_streamlit(package: str) -> None:
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / package).rglob("*.py")
                 if any(isinstance(n, (ast.Import, ast.ImportFrom)) and any(
                     (getattr(n, "module", None) or "").startswith("streamlit") or a.name.startswith("streamlit")
                     for a in n.names) for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))))]
    assert offenders == []


def _long_files() -> list[str]:
    return [f"{p.relative_to(ROOT)} ({n} lines)" for p in files_of().values()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES]


def test_no_file_over_600_lines() -> None:
    """A room a maintainer can read: no module of fairness_core, models or ui over 600 lines."""
    assert _long_files() == []


def _test_modules_imported(path: Path) -> list[str]:
    """The test modules (``test_*``) that ``path`` imports, at any depth."""
    found = []
    for node in import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        found += [n for n in names if n.split(".")[0].startswith("test_")]
    return found


def test_the_structure_tests_share_helpers_not_test_modules(tmp_path: Path) -> None:
    """The floor and architecture tests read the library through tests/floors_helpers.py; neither imports the
    other (collecting one test module would run the other's tests' imports, and a helper renamed there breaks
    here)."""
    tests = ROOT / "tests"
    found = {name: _test_modules_imported(tests / name) for name in ("test_floors.py", "test_architecture.py",
                                                                     "floors_helpers.py")}
    assert found == {"test_floors.py": [], "test_architecture.py": [], "floors_helpers.py": []}
    probe = tmp_path / "probe.py"
    probe.write_text("import os\nfrom test_architecture import ROOT\ndef f():\n    import test_floors.x\n")
    assert _test_modules_imported(probe) == ["test_architecture", "test_floors.x"]


def test_the_compare_pages_rows_hold_candidates_not_a_copy() -> None:
    """ui.compare.Rows adds the page's split to a :class:`fairness_core.compare.Candidates` it holds: it declares
    none of the candidates' fields again (labels, decisions, scores, outcomes and score transforms have one home),
    and reads them through the candidates."""
    import dataclasses

    import numpy as np
    import pandas as pd

    from fairness_core.compare import Candidates
    from ui.compare import Rows

    own = {f.name for f in dataclasses.fields(Rows)}
    assert own & {f.name for f in dataclasses.fields(Candidates)} == set()
    assert {f.name: f.type for f in dataclasses.fields(Rows)}["candidates"] == "Candidates"
    y = np.array([True, False, True])
    c = Candidates("t", y, pd.DataFrame({"g": ["a", "b", "a"]}), {"m": y}, {"s": np.array([-1.0, -2.0, -3.0])},
                   "hired", score_transforms={"s": "negate"})
    rows = Rows("k", c, np.array(["a", "b", "a"], dtype=object), np.array([True, False, True]))
    assert (rows.title, rows.positive_outcome, rows.negative_outcome, rows.transform("s"), rows.transform("m")) == \
        ("t", "hired", "not hired", "negate", "identity")
    assert rows.y is not None and np.array_equal(rows.y, y) and rows.scores["s"] is c.scores["s"]
    assert rows.held.tolist() == [False, True, False]
