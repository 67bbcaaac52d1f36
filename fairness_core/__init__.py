"""fairness_core: confusion-matrix fairness metrics, bias comparisons and their statistics.

A pure library (no Streamlit): the dashboard's pages call it, and so can a
notebook or a script. See ``docs``-style docstrings on each module, and
docs/methods.md for the formulas it implements.
"""

from . import bias, entropy, imbalance, inference, match, metrics, sample_size, smoothing, stability
from .confusion import CELLS, ConfusionMatrix

__all__ = ["CELLS", "ConfusionMatrix", "bias", "entropy", "imbalance", "inference", "match", "metrics", "sample_size", "smoothing", "stability"]
__version__ = "0.1.0"
