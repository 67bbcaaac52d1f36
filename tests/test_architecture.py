"""The library's shape: no Streamlit inside fairness_core, and no import cycles between its modules."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "fairness_core"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top_level(tree: ast.Module) -> list[ast.AST]:
    """Statements run when the module is imported: the body, and inside top-level if/try blocks
    (not functions or classes, whose imports run later, once every module is initialized)."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, (ast.If, ast.Try)):
            todo.extend(node.body + node.orelse + getattr(node, "finalbody", [])
                        + [h for handler in getattr(node, "handlers", []) for h in handler.body])
    return out


def _imports(path: Path) -> set[str]:
    """fairness_core modules that ``path`` imports when it is imported (import-time cycles are what
    break: a module seen half-initialized). A late import inside a function is a deliberate, safe edge."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _top_level(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("fairness_core"))
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("fairness_core"):
                continue
            found.add(target)
            found.update(f"{target}.{a.name}" for a in node.names)  # "from . import metrics"
    return found


def _graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in files.items():
        # A package's __init__ imports its submodules by design; edges into a package are to its __init__.
        graph[name] = {t for t in _imports(path) if t in files and t != name}
    return graph


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


def test_no_import_cycles_between_modules() -> None:
    graph = _graph()
    # Edges from a package's __init__ to its own submodules (re-exports) are not cycles of design.
    for name in graph:
        if (PACKAGE.parent / name.replace(".", "/") / "__init__.py").exists():
            graph[name] = {t for t in graph[name] if not t.startswith(name + ".")}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_library_never_imports_streamlit() -> None:
    offenders = [str(p.relative_to(PACKAGE.parent)) for p in PACKAGE.rglob("*.py")
                 if any(isinstance(n, (ast.Import, ast.ImportFrom)) and any(
                     (getattr(n, "module", None) or "").startswith("streamlit") or a.name.startswith("streamlit")
                     for a in n.names) for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))))]
    assert offenders == []
