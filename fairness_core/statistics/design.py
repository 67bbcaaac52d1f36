"""Feature encoding: raw feature columns to the numeric design matrix a model is fitted on (:class:`Design`), learnt
from the training rows by :func:`make_design` — numbers standardized, text and booleans one-hot with the first level
dropped, an intercept first. The bootstrap ensemble (:mod:`.ensemble`), the realism test (:mod:`.realism`), the
row-level checks (:mod:`.row_counts`) and the HydraGAN experiment encode their features here.

>>> import pandas as pd
>>> d = make_design(pd.DataFrame({"age": [20.0, 40.0], "sex": ["f", "m"]}))
>>> d.names, d.transform(pd.DataFrame({"age": [30.0], "sex": ["m"]})).tolist()
(['age', 'sex=m'], [[1.0, 0.0, 1.0]])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

MAX_LEVELS = 50  # a categorical column with more distinct values is refused (likely an ID)


@dataclass(frozen=True)
class Design:
    """How raw feature columns become a numeric matrix: one-hot categories, standardized numbers."""

    numeric: tuple[str, ...]
    categories: dict[str, tuple[str, ...]]
    mean: np.ndarray
    scale: np.ndarray

    @property
    def names(self) -> list[str]:
        return [*self.numeric, *(f"{c}={v}" for c, vs in self.categories.items() for v in vs[1:])]

    def transform(self, features: pd.DataFrame) -> np.ndarray:
        """Intercept, standardized numeric columns, then dummies (first level dropped)."""
        parts = [np.ones((len(features), 1))]
        if self.numeric:
            num = features[list(self.numeric)].to_numpy(dtype=float)
            parts.append((num - self.mean) / self.scale)
        for col, levels in self.categories.items():
            values = features[col].astype(str).to_numpy()
            parts.append((values[:, None] == np.asarray(levels[1:], dtype=object)[None, :]).astype(float))
        return np.hstack(parts)


def make_design(features: pd.DataFrame, max_levels: int = MAX_LEVELS) -> Design:
    """Learn the encoding from ``features`` (the training rows). ValueError naming a bad column,
    or one with more than ``max_levels`` distinct text values."""
    if features.shape[1] == 0:
        raise ValueError("no feature columns")
    numeric, categories = [], {}
    for col in features.columns:
        s = features[col]
        if s.isna().any():
            r = int(np.flatnonzero(s.isna().to_numpy())[0])
            raise ValueError(f"row {r + 1}, column {col!r}: missing value in a feature")
        if pd.api.types.is_bool_dtype(s) or not pd.api.types.is_numeric_dtype(s):
            levels = tuple(sorted(s.astype(str).unique()))
            if len(levels) > max_levels:
                raise ValueError(f"column {col!r} has {len(levels)} distinct text values (limit {max_levels}); "
                                 "an identifier is not a feature")
            categories[str(col)] = levels
        else:
            numeric.append(str(col))
    num = features[numeric].to_numpy(dtype=float) if numeric else np.empty((len(features), 0))
    mean = num.mean(axis=0) if numeric else np.empty(0)
    scale = num.std(axis=0) if numeric else np.empty(0)
    scale = np.where(scale > 0, scale, 1.0)
    return Design(tuple(numeric), categories, mean, scale)
