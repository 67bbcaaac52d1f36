"""Notebook inputs: labels, predictions and sensitive features as lists, NumPy arrays, pandas or polars
Series and DataFrames, or dicts, to an :class:`~fairness_core.audit.Audit` (as Fairlearn's ``MetricFrame``
takes them). The checks are an upload's; problems are named at array positions."""

from __future__ import annotations

from typing import Any

from ...audit import Audit
from ...statistics.row_counts import count_arrays


def audit_from_predictions(y_true: Any, y_pred: Any, sensitive_features: Any, pos_label: Any = 1, *,
                           positive_is: str | None = None, threshold: float | None = None,
                           source: str = "predictions") -> Audit:
    """The notebook path to an audit; :meth:`fairness_core.audit.Audit.from_predictions` documents it.

    >>> audit_from_predictions([1, 0, 1, 1], [1, 1, 0, 1], ["a", "a", "b", "b"], positive_is="benefit").groups
    ['a', 'b']
    """
    return Audit(**count_arrays(y_true, y_pred, sensitive_features, pos_label, positive_is=positive_is,
                                threshold=threshold, source=source))
