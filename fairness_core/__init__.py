"""fairness_core: confusion-matrix fairness metrics, bias comparisons and their statistics.

A pure library (no Streamlit): the dashboard's pages call it, and so can a
notebook or a script. Its modules stand on floors, bottom up: ``common``, ``statistics``, ``wording``, the audit
objects (the modules at the package root: ``audit``, ``compare``, ``results``, ``trend``, ``regulatory``),
``services``, ``presentation``, and the entry points (this file, ``cli``). The public names of docs/api.md are short (``fairness_core.metrics``
is ``fairness_core.statistics.metrics``, the same module). docs/api.md tours them; each module's
docstrings give its formulas, and docs/methods.md the statistics behind them.
"""

from __future__ import annotations

import importlib
from typing import Any

from . import _names, audit, compare, regulatory, trend
from ._version import __version__

from .common import vocabulary
from .services import io
from .statistics import (bias, entropy, imbalance, inference, match, metrics, mitigation, realism, sample_size,
                         smoothing, stability, verdicts)
from .wording import reading
from .audit import Audit
from .statistics.confusion import CELLS, ConfusionMatrix

_names.install()

#: Public modules imported on first use, so that ``import fairness_core`` stays light: the store needs
#: SQLAlchemy, which only saving and loading audits does, and the report and figures need Plotly. Every short name of :data:`_names.SHORT_NAMES` not
#: imported above is imported on first use too (``fairness_core.datasets``, ``fairness_core.plots``, …).
#: The audit objects beyond yes/no decisions (amounts, classes, paired counterfactual tests, forecasts) are imported on first
#: use too: ``fairness_core.counterfactual`` works as ``from fairness_core import counterfactual`` does.
_BEYOND_BINARY = ("continuous", "counterfactual", "forecasts", "multiclass")
_ON_FIRST_USE = tuple(sorted((set(_names.SHORT_NAMES) | set(_BEYOND_BINARY)) - set(globals())))

__all__ = sorted({"CELLS", "Audit", "ConfusionMatrix", "audit", "compare", "regulatory", "trend", *_BEYOND_BINARY,
                  *_names.SHORT_NAMES})


def __getattr__(name: str) -> Any:
    if name in _ON_FIRST_USE:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_ON_FIRST_USE))
