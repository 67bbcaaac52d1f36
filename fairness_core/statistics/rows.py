"""The row-level data behind an audit (:class:`RowData`: labels, decisions, groups, and what else the rows carry)
and the check of an ensemble's probabilities it holds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = ["RowData", "check_probabilities"]


def check_probabilities(probs: npt.ArrayLike, min_models: int = 2) -> np.ndarray:
    """``probs`` as a float ``(n, m)`` array with every value a probability; ValueError naming
    the first bad row and model (1-based) otherwise."""
    p = np.asarray(probs, dtype=float)
    if p.ndim != 2:
        raise ValueError(f"probabilities must be a 2-D array (individuals × models), got shape {p.shape}")
    if p.shape[0] == 0:
        raise ValueError("no individuals")
    if p.shape[1] < min_models:
        raise ValueError(f"an ensemble needs at least {min_models} models, got {p.shape[1]}")
    bad = ~np.isfinite(p) | (p < 0) | (p > 1)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise ValueError(f"row {r + 1}, model {c + 1}: {float(p[r, c])!r} is not a probability in [0, 1]")
    return p


@dataclass(frozen=True)
class RowData:
    """Row-level data behind an audit (uploads of predictions, and the demos).

    Parameters
    ----------
    y, y_pred : bool arrays
        Actual label and the audited model's prediction, positive = beneficial.
    groups : array of str
        Each row's group, named as in the audit.
    probabilities : (n, m) array, optional
        An ensemble's probabilities of the positive (beneficial) outcome, one column per model.
    model_names : names of those columns.
    features : DataFrame, optional
        Feature columns (numeric or categorical) from which the app can train its own
        bootstrap ensemble (:mod:`fairness_core.statistics.ensemble`).
    scores : mapping of name to float array, optional
        Scores the rows carry (an uploaded score column, the one a threshold was applied to), one finite
        number per row, higher = more likely the favourable decision: the Local Law 144 scoring rate and
        the scores view read them.
    """

    y: np.ndarray
    y_pred: np.ndarray
    groups: np.ndarray
    probabilities: np.ndarray | None = None
    model_names: tuple[str, ...] = ()
    features: pd.DataFrame | None = field(default=None, compare=False)
    description: str = ""
    scores: Mapping[str, np.ndarray] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        y = np.asarray(self.y, dtype=bool)
        yp = np.asarray(self.y_pred, dtype=bool)
        g = np.asarray(self.groups, dtype=object)
        if not (y.ndim == yp.ndim == g.ndim == 1) or not (len(y) == len(yp) == len(g)):
            raise ValueError("y, y_pred and groups must be 1-D and of equal length")
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "y_pred", yp)
        object.__setattr__(self, "groups", g)
        if self.probabilities is not None:
            p = check_probabilities(self.probabilities)
            if len(p) != len(y):
                raise ValueError(f"probabilities have {len(p)} rows, labels {len(y)}")
            object.__setattr__(self, "probabilities", p)
            if self.model_names and len(self.model_names) != p.shape[1]:
                raise ValueError("one model name per probability column")
        if self.features is not None and len(self.features) != len(y):
            raise ValueError(f"features have {len(self.features)} rows, labels {len(y)}")
        if self.scores is not None:
            scores = {str(k): np.asarray(v, dtype=float) for k, v in self.scores.items()}
            for name, v in scores.items():
                if v.shape != y.shape or not np.isfinite(v).all():
                    raise ValueError(f"score {name!r} must be one finite number per row")
            object.__setattr__(self, "scores", scores)

    def __len__(self) -> int:
        return len(self.y)

    def subset(self, index: npt.ArrayLike, probabilities: np.ndarray | None = None,
               description: str | None = None) -> "RowData":
        """The rows at ``index`` (e.g. a held-out test set), optionally with new probabilities."""
        idx = np.asarray(index)
        probs = probabilities if probabilities is not None else (
            None if self.probabilities is None else self.probabilities[idx])
        return RowData(self.y[idx], self.y_pred[idx], self.groups[idx], probs,
                       self.model_names if probabilities is None else (),
                       None if self.features is None else self.features.iloc[idx].reset_index(drop=True),
                       self.description if description is None else description,
                       None if self.scores is None else {k: v[idx] for k, v in self.scores.items()})
