"""The library's floors, read from the folder list and enforced here.

Bottom up: ``common`` (vocabulary, validation, text, progress records) → ``statistics`` (every formula and
test) → ``wording`` (every sentence about a result) → the audit objects at the package's top (``audit``,
``compare``, ``results``, ``trend``, ``regulatory``: what a user holds) → ``services`` (files, the store, the
job runner, the demo data) → ``presentation`` (figures and the report) → the command line. A module imports
only modules on its own floor or below, an import inside a function or under ``if TYPE_CHECKING:`` included,
and the library imports its own modules where they live (the short public names of docs/api.md, such as
``fairness_core.metrics``, are for users)."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from fairness_core import _names
from floors_helpers import ROOT, files_of, from_module, graph_of, import_nodes, write_tree

#: The floors, bottom first. A top-level module is placed by name, so that a new one is placed on purpose.
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("common", ("fairness_core._version", "fairness_core._names", "fairness_core.common")),
    ("statistics", ("fairness_core.statistics",)),
    ("wording", ("fairness_core.wording",)),
    ("audit objects", ("fairness_core.audit", "fairness_core.compare", "fairness_core.results", "fairness_core.trend",
                       "fairness_core.regulatory", "fairness_core.multiclass", "fairness_core.continuous",
                       "fairness_core.counterfactual", "fairness_core.forecasts")),
    ("services", ("fairness_core.services",)),
    ("presentation", ("fairness_core.presentation",)),
    ("entry points", ("fairness_core.cli", "fairness_core.__main__", "fairness_core")),
)
RANK = {floor: k for k, (floor, _) in enumerate(FLOORS)}


def floor_of(module: str) -> str:
    """The floor of a library module: the floor whose prefix names it most closely."""
    best, length = "", -1
    for floor, prefixes in FLOORS:
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = floor, len(prefix)
    return best


def test_every_library_module_stands_on_a_floor() -> None:
    modules = files_of(packages=("fairness_core",))
    homeless = sorted(m for m in modules if not floor_of(m) or (floor_of(m) == "entry points" and m not in
                                                               ("fairness_core", "fairness_core.cli",
                                                                "fairness_core.__main__")))
    assert homeless == [], f"place these modules on a floor (a subpackage, or FLOORS for the top level): {homeless}"
    assert {floor_of(m) for m in modules} == set(RANK), "every floor holds modules"


#: File names that several library modules share on purpose: a topic (a kind of audit, or a measure) served by one
#: module per job, each on its own floor — its audit object or statistics, its sentences (``wording``), its files
#: (``services.io``), its figures (``presentation.plots``). Any other name is one module's: a name that says a job
#: (``results``, ``limits``) names one module, so that a reader and an import find the right one.
TOPICS = frozenset({"amounts", "audit", "compare", "counterfactual", "decisions", "forecasts", "multiclass", "paired",
                    "rows", "sample_size", "scores", "smoothing", "trend"})


def namesakes(modules: dict[str, Path]) -> dict[str, list[str]]:
    """The file names (a package's ``__init__`` left out) that two or more ``modules`` share, with the modules."""
    by_name: dict[str, list[str]] = {}
    for module, path in modules.items():
        if path.name != "__init__.py":
            by_name.setdefault(path.stem, []).append(module)
    return {name: sorted(found) for name, found in sorted(by_name.items()) if len(found) > 1}


def test_a_file_name_names_one_module_unless_it_is_a_topic() -> None:
    shared = namesakes(files_of(packages=("fairness_core",)))
    assert {n: m for n, m in shared.items() if n not in TOPICS} == {}, "two modules with one file name: rename one " \
        "to say its job (or, for a topic served by one module per job, add it to TOPICS)"
    crowded = {n: m for n, m in shared.items() if len({floor_of(x) for x in m}) < len(m)}
    assert crowded == {}, "a topic has one module per floor"
    assert set(shared) <= TOPICS and len(shared) >= 10


def test_the_namesake_finder(tmp_path: Path) -> None:
    write_tree(tmp_path, dict.fromkeys(("pkg/__init__.py", "pkg/a/__init__.py", "pkg/a/results.py", "pkg/b/__init__.py",
                                        "pkg/b/results.py", "pkg/a/limits.py", "pkg/b/c.py"), ""))
    assert namesakes(files_of(tmp_path, ("pkg",))) == {"results": ["pkg.a.results", "pkg.b.results"]}


#: Names moved to the floor of their job (issue 51): each is defined by its home module alone, and every module of
#: the library, the models and the app that uses it imports it from there, never through a module it used to live in.
ONE_HOME: dict[str, tuple[str, ...]] = {
    "fairness_core.statistics.design": ("Design", "MAX_LEVELS", "make_design"),   # feature encoding, not the ensemble
    "fairness_core.wording.demos": ("pair_text", "explain_adult", "explain_compas", "explain_compas_tiers",
                                    "explain_hr", "explain_hr_resume_ranking", "explain_pay", "explain_ricci_a",
                                    "explain_ricci_b"),
    "fairness_core.wording.mitigation": ("RANDOMIZING", "TARGET_MEASURES", "TARGET_WORDS", "cross_fitted_reading",
                                         "estimates", "interval_text", "intervals_note", "mixture_text",
                                         "score_direction"),   # not the Compare page's helpers
    "fairness_core.wording.levels": ("interval_label", "level_text"),   # words, not statistics
}


def _homes(modules: dict[str, Path], homes: dict[str, tuple[str, ...]]) -> list[str]:
    """Where a name of ``homes`` is defined (a top-level def, class or assignment) or imported away from its home."""
    where = {n: home for home, names in homes.items() for n in names}
    found = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                targets = [node.name]
            else:
                assigned = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, ast.AnnAssign) else []
                targets = [x.id for x in assigned if isinstance(x, ast.Name)]
            found += [f"{module} defines {n}" for n in targets if n in where and module != where[n]]
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in import_nodes(tree):
            if isinstance(node, ast.ImportFrom):
                source = from_module(node, package)
                found += [f"{module} imports {a.name} from {source}" for a in node.names
                          if a.name in where and _names.real_name(source) != where[a.name]]
    return found


def test_a_moved_name_has_one_home() -> None:
    assert _homes(files_of(), ONE_HOME) == []


def test_the_home_finder(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/home.py": "def f(): ...\nK = 1\n",
                          "pkg/old.py": "from .home import f\n", "pkg/user.py": "from .old import f\nfrom pkg.home import K\n",
                          "pkg/copy.py": "K: int = 2\n"})
    assert _homes(files_of(tmp_path, ("pkg",)), {"pkg.home": ("f", "K")}) == [
        "pkg.copy defines K", "pkg.user imports f from pkg.old"]


#: What a sentence about a result quotes: an estimate, its interval or p-value, a rate, a ratio, a benefit.
RESULT_VALUE = re.compile(r"estimate|ci_low|ci_high|p_value|benefit|\bofi\b|\bdi\b|ratio|_rate\b|_fnr|_fpr")
#: Calls whose text is a refusal or a warning about the input, which a service writes itself.
REFUSALS = ("warn", "DataValidationError", "KeyError", "Problem", "TypeError", "ValueError")


def _result_sentences(path: Path) -> list[str]:
    """The f-strings of ``path`` that quote a result (:data:`RESULT_VALUE` in a formatted value), a refusal's
    message (raised, or built by one of :data:`REFUSALS`) left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        values = [ast.unparse(v.value) for v in getattr(node, "values", []) if isinstance(v, ast.FormattedValue)]
        if not isinstance(node, ast.JoinedStr) or not any(RESULT_VALUE.search(v) for v in values):
            continue
        up, refusal = node, False
        while up in parents and not refusal:
            up = parents[up]
            refusal = isinstance(up, ast.Raise) or (isinstance(up, ast.Call) and getattr(
                up.func, "attr", getattr(up.func, "id", "")) in REFUSALS)
        if not refusal:
            found.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:{node.lineno}")
    return found


def test_services_write_no_sentence_about_a_result() -> None:
    """Files, the store, the job runner and the demo data hold no sentence reading a result: those are the wording
    floor's (the demos' readings are :mod:`fairness_core.wording.demos`)."""
    found = [line for path in sorted((ROOT / "fairness_core" / "services").rglob("*.py"))
             for line in _result_sentences(path)]
    assert found == [], "sentences about a result in services/ (move them to wording/):\n" + "\n".join(found)


def test_the_result_sentence_finder(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f(o, n, rows):\n"
                     "    if n < 0:\n        raise ValueError(f'OFI {o.estimate} needs n, got {n}')\n"
                     "    note = f'{n:,} rows read'\n"
                     "    return f'OFI = {o.estimate:+.3f} [{o.ci_low:.3f}, {o.ci_high:.3f}]' + "
                     "f'{rows[\"mean_benefit\"]}'\n")
    assert _result_sentences(probe) == ["probe.py:5", "probe.py:5"]


def _upward(graph: dict[str, set[str]]) -> list[str]:
    return [f"{m} ({floor_of(m)}) imports {t} ({floor_of(t)})" for m, targets in sorted(graph.items())
            for t in sorted(targets) if RANK[floor_of(t)] > RANK[floor_of(m)]]


def test_each_floor_imports_only_its_own_floor_and_those_below() -> None:
    upward = _upward(graph_of(packages=("fairness_core",)))
    assert upward == [], "imports up a floor:\n" + "\n".join(upward)


def test_the_floor_checker_sees_an_upward_import() -> None:
    assert floor_of("fairness_core.statistics.inference.pairs") == "statistics"
    assert floor_of("fairness_core.audit") == "audit objects"
    assert floor_of("fairness_core") == "entry points"
    assert _upward({"fairness_core.statistics.smoothing": {"fairness_core.services.jobs", "fairness_core.common.text"},
                    "fairness_core.presentation.report": {"fairness_core.audit"}}) == [
        "fairness_core.statistics.smoothing (statistics) imports fairness_core.services.jobs (services)"]


def test_the_library_imports_its_modules_where_they_live() -> None:
    """Inside the library every import names the module's own path: ``from ..statistics import metrics``, never
    the short public ``fairness_core.metrics`` (which the floor check would have to translate)."""
    files = files_of(packages=("fairness_core",))
    short = [f"{name}: {target}" for name, path in files.items()
             for target in _library_targets(name, path) if _names.real_name(target) != target]
    assert short == [], "short public names used inside the library:\n" + "\n".join(short)


def _library_targets(name: str, path: Path) -> list[str]:
    """The absolute names a library module imports (``from X import a`` gives X and X.a, as a may be a module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[str] = []
    for node in import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        else:
            module = from_module(node, package)
            out += [module] + [f"{module}.{a.name}" for a in node.names]
    return [t for t in out if t.startswith("fairness_core")]


@pytest.mark.parametrize("short", sorted(_names.SHORT_NAMES))
def test_a_short_name_is_its_floors_module_itself(short: str) -> None:
    real = f"fairness_core.{_names.SHORT_NAMES[short]}.{short}"
    module = importlib.import_module(f"fairness_core.{short}")
    assert module is importlib.import_module(real)
    assert module.__name__ == module.__spec__.name == real           # the module keeps its own name and spec
    assert (ROOT / (real.replace(".", "/") + ".py")).exists() or (ROOT / real.replace(".", "/") / "__init__.py").exists()


def test_a_short_name_reaches_a_subpackages_modules_without_copies() -> None:
    import fairness_core.inference.pairs as short
    import fairness_core.statistics.inference.pairs as real

    assert short is real
    from fairness_core.io import read_table
    from fairness_core.services.io.read import read_table as real_read_table

    assert read_table is real_read_table


def _api_imports() -> list[tuple[str, str]]:
    """Every ``from fairness_core... import name`` of docs/api.md, as (module, name)."""
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    found = []
    for module, names in re.findall(r"^(?:>>> )?from (fairness_core[\w.]*) import ([\w, ]+(?: as \w+)?)", text, flags=re.M):
        found += [(module, n.split(" as ")[0].strip()) for n in names.split(",") if n.strip()]
    modules = {name for module, name in found if module == "fairness_core" and name in _names.SHORT_NAMES}
    for module, attr in re.findall(r"\b(" + "|".join(sorted(modules)) + r")\.([A-Za-z]\w*)\(", text):
        found.append((f"fairness_core.{module}", attr))                  # bias.pairwise(...), inference.ofi_test(...)
    return found


def test_every_name_of_the_api_doc_has_one_home() -> None:
    """docs/api.md's names import, and each class or function is the one its defining file holds: its
    ``__module__`` is a library file that defines it at its top (a re-export in a package's ``__init__`` is an
    import of that very object, never a wrapper or a copy). Two modules may define the same spelling for
    parallel ideas (``metrics.undefined_reason`` of one matrix, ``bias.undefined_reason`` of a pair)."""
    imports = _api_imports()
    assert len(imports) >= 60, imports
    files = files_of(packages=("fairness_core",))
    defined: dict[str, set[str]] = {}
    for module, path in files.items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.setdefault(node.name, set()).add(module)
    problems, checked = [], 0
    for module, name in imports:
        obj = getattr(importlib.import_module(module), name)
        if isinstance(obj, type) or (callable(obj) and hasattr(obj, "__qualname__")):
            checked += 1
            home = obj.__module__
            if home not in defined.get(name, set()) or getattr(importlib.import_module(home), name) is not obj:
                problems.append(f"{module}.{name}: __module__ {home}, defined in {sorted(defined.get(name, []))}")
    assert problems == [], "\n".join(problems)
    assert checked >= 40


def test_every_short_name_is_an_attribute_of_the_package_on_first_use() -> None:
    import fairness_core

    for short in _names.SHORT_NAMES:
        assert short in dir(fairness_core) and short in fairness_core.__all__
        assert getattr(fairness_core, short) is importlib.import_module(f"fairness_core.{_names.SHORT_NAMES[short]}.{short}")


def test_short_names_imported_by_many_threads_at_once_keep_their_own_specs() -> None:
    """In a fresh interpreter (nothing imported yet), eight threads import the lazily loaded short names at once;
    each module keeps its own name and spec (the finder holds no state that two imports could share)."""
    import subprocess
    import sys

    code = """
import threading, importlib, fairness_core
from fairness_core import _names
names = [n for n in _names.SHORT_NAMES if n in fairness_core._ON_FIRST_USE] + ["inference.pairs", "io.read"]
barrier = threading.Barrier(len(names))
def load(n):
    barrier.wait()
    importlib.import_module("fairness_core." + n)
threads = [threading.Thread(target=load, args=(n,)) for n in names]
[t.start() for t in threads]; [t.join() for t in threads]
for n in names:
    m = importlib.import_module("fairness_core." + n)
    assert m.__name__ == m.__spec__.name == _names.real_name("fairness_core." + n), (n, m.__name__, m.__spec__.name)
print(len(names))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) >= 8
