"""The code's shape: no Streamlit inside fairness_core or models, no import cycles in fairness_core, models and ui
(an import inside a function counts), and no file of theirs over 600 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The packages whose modules must import one another without a cycle, and stay small.
PACKAGES = ("fairness_core", "models", "ui")
MAX_LINES = 600


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _files(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    return {_module_name(p, root): p for package in packages for p in sorted((root / package).rglob("*.py"))}


def _type_checking_only(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:``: never run, so not an edge."""
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _import_nodes(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth: a late import inside a function runs too, and a cycle it closes
    is a cycle of design even when Python survives it (one of the two modules is seen half-initialized when
    the import moves to the top, or when a new caller imports them in the other order)."""
    found: list[ast.Import | ast.ImportFrom] = []
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif not _type_checking_only(node):
            todo.extend(ast.iter_child_nodes(node))
    return found


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts))]


def _imports(path: Path, files: dict[str, Path], root: Path = ROOT) -> set[str]:
    """The modules of ``files`` that ``path`` imports, wherever the import stands.

    Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first, so a package is an edge whenever one of
    its submodules is imported from outside it (a package's ``__init__`` that re-exports its submodules is then
    on the path, and a cycle through it is real). The importer's own packages are not: they are already being
    initialized when it runs, and ``from . import sibling`` only loads the sibling."""
    name = _module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    own = set(_ancestors(name)) | ({name} if path.name == "__init__.py" else set())
    targets: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(a.name for a in node.names)
            continue
        if node.level:
            base = package.split(".")
            base = base[: len(base) - (node.level - 1)]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        targets.add(module)
        targets.update(f"{module}.{a.name}" for a in node.names)   # "from . import metrics": a submodule
    edges: set[str] = set()
    for target in targets:
        for t in [*_ancestors(target), target]:
            if t in files and t != name and t not in own:
                edges.add(t)
    return edges


def _graph(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    files = _files(root, packages)
    return {name: _imports(path, files, root) for name, path in files.items()}


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
    cycles = _cycles(_graph())
    assert cycles == [], "import cycles (late imports included):\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
    assert len(_cycles({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}})) == 2


def test_late_imports_and_package_inits_are_edges(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("def f():\n    from .sub.c import g\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n")
    (pkg / "sub" / "__init__.py").write_text("from .c import g\nfrom .. import b\n")
    (pkg / "sub" / "c.py").write_text("import pkg.a\ng = 1\n")
    graph = _graph(tmp_path, ("pkg",))
    assert graph["pkg.a"] == {"pkg.sub", "pkg.sub.c"}      # late, and the package __init__ it runs
    assert graph["pkg.b"] == set()                          # type-checking only
    assert graph["pkg.sub"] == {"pkg.sub.c", "pkg.b"}
    assert graph["pkg"] == {"pkg.a"}
    assert _cycle(graph) == ["pkg.a", "pkg.sub", "pkg.sub.c", "pkg.a"]


@pytest.mark.parametrize("package", ["fairness_core", "models"])
def test_the_library_and_the_models_never_import_streamlit(package: str) -> None:
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / package).rglob("*.py")
                 if any(isinstance(n, (ast.Import, ast.ImportFrom)) and any(
                     (getattr(n, "module", None) or "").startswith("streamlit") or a.name.startswith("streamlit")
                     for a in n.names) for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))))]
    assert offenders == []


def _long_files() -> list[str]:
    return [f"{p.relative_to(ROOT)} ({n} lines)" for p in _files().values()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES]


def test_no_file_over_600_lines() -> None:
    """A room a maintainer can read: no module of fairness_core, models or ui over 600 lines."""
    assert _long_files() == []
