"""The library installs: `pip install -r requirements.txt` (or `pip install -e .`) makes ``fairness_core``
importable from any folder, a notebook's or a script's, and pyproject.toml declares every package the library
imports."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTION = "fairness-audit-workbench"

#: A notebook's first cell, run from a folder outside the checkout: no demo data, two groups typed in.
NOTEBOOK = """
import json
import fairness_core
from fairness_core import Audit, ConfusionMatrix, bias
audit = Audit({"a": ConfusionMatrix(1, 0, 0, 5), "b": ConfusionMatrix(7, 0, 1, 10)}, source="typed in")
print(json.dumps({"file": fairness_core.__file__, "version": fairness_core.__version__,
                  "groups": list(audit.cms), "ofi": bias.compare("OFI", audit.cms["a"], audit.cms["b"])}))
"""


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _installed() -> bool:
    try:
        metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return False
    return True


def test_a_notebook_outside_the_checkout_imports_the_library(tmp_path: Path) -> None:
    if not _installed():
        message = f"{DISTRIBUTION} is not installed here (pip install -r requirements.txt, or pip install -e .)"
        if os.environ.get("CI"):
            pytest.fail(message + "; .ci/run installs it")
        pytest.skip(message)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", NOTEBOOK], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["groups"] == ["a", "b"] and seen["ofi"] == pytest.approx(-1 / 18)
    assert seen["version"] == metadata.version(DISTRIBUTION)
    # Editable: the notebook runs the checkout's code, not a copy taken at some earlier install.
    assert Path(seen["file"]).resolve().is_relative_to(ROOT / "fairness_core"), (
        f"fairness_core is imported from {seen['file']}, not from this checkout: pip install -e . here")


def _imported_distributions() -> dict[str, list[str]]:
    """Each distribution whose modules fairness_core imports (at the top or inside a function), with where."""
    by_module = metadata.packages_distributions()
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "fairness_core").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            for top in {n.split(".")[0] for n in names} - set(sys.stdlib_module_names) - {"fairness_core"}:
                for dist in by_module.get(top, [f"(no installed distribution has the module {top!r})"]):
                    found.setdefault(_normalized(dist), []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_pyproject_declares_every_package_the_library_imports() -> None:
    """`pip install .` alone must give a working library: nothing it imports may come only from
    requirements.txt (the app's and the tests' pins), and PyTorch, for models/, is not among them."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {_normalized(re.split(r"[\s\[<>=!~;]", d, maxsplit=1)[0]) for d in project["dependencies"]}
    missing = {dist: where for dist, where in _imported_distributions().items() if dist not in declared}
    assert missing == {}, f"imported by fairness_core but not in pyproject's dependencies: {missing}"
    assert "torch" not in declared


def test_requirements_install_the_library_too() -> None:
    """The README's one setup command gives notebooks the library, editable, beside the app's pins."""
    lines = [line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    assert "-e ." in lines
