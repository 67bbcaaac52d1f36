"""fairness_core: confusion-matrix fairness metrics, bias comparisons and their statistics.

A pure library (no Streamlit): the dashboard's pages call it, and so can a
notebook or a script. Its modules stand on floors (``common``, ``statistics``, ``wording``, the audit objects
at the top, ``presentation``, ``services``); the public names of docs/api.md are short (``fairness_core.metrics``
is ``fairness_core.statistics.metrics``, the same module). docs/api.md tours them; each module's
docstrings give its formulas, and docs/methods.md the statistics behind them.
"""

from __future__ import annotations

import importlib
from typing import Any

from . import _names
from ._version import __version__

from . import audit, compare, regulatory, trend
from .common import vocabulary
from .presentation import report
from .services import io
from .statistics import (bias, entropy, imbalance, inference, match, metrics, mitigation, realism, sample_size,
                         smoothing, stability, verdicts)
from .wording import reading
from .audit import Audit
from .statistics.confusion import CELLS, ConfusionMatrix

_names.install()

#: Public modules imported on first use, so that ``import fairness_core`` stays light: the store needs
#: SQLAlchemy, which only saving and loading audits does.
_ON_FIRST_USE = ("store",)

__all__ = ["CELLS", "Audit", "ConfusionMatrix", "audit", "bias", "compare", "entropy", "imbalance", "inference", "io",
           "match", "metrics", "mitigation", "reading", "realism", "regulatory", "report", "sample_size", "smoothing",
           "stability", "store", "trend", "verdicts", "vocabulary"]


def __getattr__(name: str) -> Any:
    if name in _ON_FIRST_USE:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
