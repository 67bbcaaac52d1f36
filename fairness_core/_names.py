"""The public short names of the library's modules: ``fairness_core.metrics`` is ``fairness_core.statistics.metrics``.

The modules live on floors (``common``, ``statistics``, ``wording``, ``presentation``, ``services``; see
docs/contributing.md), but a user imports the documented names of docs/api.md: ``from fairness_core import
metrics``, ``from fairness_core.store import AuditStore``, ``import fairness_core.inference``. Each short name is
the very module object of its floor, never a copy or a re-export, so every public name has one home. The finder
below answers ``import fairness_core.<short>[.<sub>]`` by importing the module where it lives, on first use (the
store, which needs SQLAlchemy, is imported only when used).

>>> import fairness_core.metrics, fairness_core.statistics.metrics
>>> fairness_core.metrics is fairness_core.statistics.metrics
True
>>> real_name("fairness_core.inference.pairs")
'fairness_core.statistics.inference.pairs'
>>> real_name("fairness_core.audit")
'fairness_core.audit'
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

PACKAGE = "fairness_core"

#: Each public short name, and the floor its module lives on.
SHORT_NAMES: dict[str, str] = {
    "progress": "common", "validation": "common", "vocabulary": "common",
    "bias": "statistics", "confusion": "statistics", "entropy": "statistics", "imbalance": "statistics",
    "inference": "statistics", "match": "statistics", "metrics": "statistics", "mitigation": "statistics",
    "realism": "statistics", "sample_size": "statistics", "scores": "statistics", "smoothing": "statistics",
    "forecast_scores": "statistics",
    "stability": "statistics", "verdicts": "statistics",
    "reading": "wording", "scores_report": "wording",
    "plots": "presentation", "report": "presentation",
    "datasets": "services", "io": "services", "store": "services",
}


def real_name(name: str) -> str:
    """The module name where ``name`` lives: a short name's floor inserted, any other name unchanged."""
    parts = name.split(".")
    if len(parts) >= 2 and parts[0] == PACKAGE and parts[1] in SHORT_NAMES:
        return ".".join([PACKAGE, SHORT_NAMES[parts[1]], *parts[1:]])
    return name


class _ShortNameFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``fairness_core.<short>...`` and loads it as the module of the real name (the same object).

    It keeps no state of its own, so two threads importing two short names at once cannot mix them up: each
    import's short spec carries the real name, then the real module's own spec, which ``exec_module`` puts back
    (the import system sets the short spec on the module it is given)."""

    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        real = real_name(fullname)
        if real == fullname:
            return None
        found = importlib.util.find_spec(real)   # imports the real module's packages, not the module itself
        if found is None:
            return None
        spec = importlib.util.spec_from_loader(fullname, self, is_package=found.submodule_search_locations is not None)
        if spec is not None:
            spec.loader_state = {"name": real}
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(spec.loader_state["name"])
        spec.loader_state["spec"] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        state = getattr(module.__spec__, "loader_state", None)
        if isinstance(state, dict) and "spec" in state:
            module.__spec__ = state["spec"]


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (before the path finders, which would not find the short names)."""
    if not any(isinstance(f, _ShortNameFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _ShortNameFinder())
