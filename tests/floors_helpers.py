"""What the floor and architecture tests share: the library's files and the import graph read from them.

tests/test_architecture.py checks the graph for cycles, tests/test_floors.py for imports up a floor; neither test
module imports the other (a test module is a place for tests, not a library of helpers)."""

from __future__ import annotations

import ast
from pathlib import Path

from fairness_core._names import real_name

ROOT = Path(__file__).resolve().parents[1]
#: The packages whose modules must import one another without a cycle, and stay small.
PACKAGES = ("fairness_core", "models", "ui")


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def files_of(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    return {module_name(p, root): p for package in packages for p in sorted((root / package).rglob("*.py"))}


def import_nodes(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth: a late import inside a function runs too, and a cycle it closes
    is a cycle of design even when Python survives it (one of the two modules is seen half-initialized when
    the import moves to the top, or when a new caller imports them in the other order). An import under
    ``if TYPE_CHECKING:`` counts as well: it never runs, but the two modules still cannot be read or changed
    apart, and the annotation it serves is one refactoring away from a runtime import."""
    return [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]


def from_module(node: ast.ImportFrom, package: str) -> str:
    """The absolute name of the module a ``from ... import`` reads, ``package`` being the importer's package."""
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts))]


def imports_of(path: Path, files: dict[str, Path], root: Path = ROOT) -> set[str]:
    """The modules of ``files`` that ``path`` imports, wherever the import stands.

    Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first, so a package is an edge whenever one of
    its submodules is imported from outside it (a package's ``__init__`` that re-exports its submodules is then
    on the path, and a cycle through it is real). The importer's own packages are not: they are already being
    initialized when it runs, and ``from . import sibling`` only loads the sibling."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    own = set(ancestors(name)) | ({name} if path.name == "__init__.py" else set())
    targets: set[str] = set()
    for node in import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(a.name for a in node.names)
            continue
        module = from_module(node, package)
        targets.add(module)
        targets.update(f"{module}.{a.name}" for a in node.names)   # "from . import metrics": a submodule
    edges: set[str] = set()
    for target in map(real_name, targets):   # a public short name (fairness_core.metrics) is its floor's module
        for t in [*ancestors(target), target]:
            if t in files and t != name and t not in own:
                edges.add(t)
    return edges


def graph_of(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    files = files_of(root, packages)
    return {name: imports_of(path, files, root) for name, path in files.items()}


def write_tree(root: Path, files: dict[str, str]) -> None:
    """Write ``files`` (path below ``root``: text) as a small package tree for a finder's own test."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
