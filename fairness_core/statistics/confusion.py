"""The binary confusion matrix, validated once at construction.

Cells follow docs/methods.md: TP, FN, FP, TN are integers >= 0; the positive
prediction is the *beneficial* outcome.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np
import numpy.typing as npt

CELLS: tuple[str, str, str, str] = ("TP", "FN", "FP", "TN")


def _as_count(name: str, value: Any) -> int:
    """Return ``value`` as a non-negative int or raise ValueError naming the cell."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer count, got a boolean ({value!r})")
    if isinstance(value, Integral):
        count = int(value)
    elif isinstance(value, (float, np.floating)):
        if not np.isfinite(value) or float(value) != int(value):
            raise ValueError(f"{name} must be a whole number, got {value!r}")
        count = int(value)
    else:
        raise ValueError(f"{name} must be an integer count, got {type(value).__name__} {value!r}")
    if count < 0:
        raise ValueError(f"{name} must be >= 0, got {count}")
    return count


@dataclass(frozen=True)
class ConfusionMatrix:
    """A binary confusion matrix ``[TP, FN, FP, TN]``.

    Parameters
    ----------
    tp, fn, fp, tn : int
        Cell counts, integers >= 0 (whole-valued floats are accepted).

    Raises
    ------
    ValueError
        If a count is negative, fractional, non-finite or not a number; the
        message names the cell.

    Examples
    --------
    >>> cm = ConfusionMatrix(tp=1, fn=0, fp=0, tn=5)
    >>> cm.n, cm.as_array().tolist()
    (6, [1, 0, 0, 5])
    """

    tp: int
    fn: int
    fp: int
    tn: int

    def __post_init__(self) -> None:
        for cell, attr in zip(CELLS, ("tp", "fn", "fp", "tn")):
            object.__setattr__(self, attr, _as_count(cell, getattr(self, attr)))

    # Marginals, named as in docs/methods.md's notation.
    @property
    def n(self) -> int:
        """Group size TP + FN + FP + TN."""
        return self.tp + self.fn + self.fp + self.tn

    @property
    def positives(self) -> int:
        """Actual positives P = TP + FN."""
        return self.tp + self.fn

    @property
    def negatives(self) -> int:
        """Actual negatives N = FP + TN."""
        return self.fp + self.tn

    @property
    def predicted_positives(self) -> int:
        """Predicted positives P^ = TP + FP."""
        return self.tp + self.fp

    @property
    def predicted_negatives(self) -> int:
        """Predicted negatives N^ = FN + TN."""
        return self.fn + self.tn

    def as_array(self) -> npt.NDArray[np.int64]:
        """The cells as ``array([tp, fn, fp, tn])``."""
        return np.array([self.tp, self.fn, self.fp, self.tn], dtype=np.int64)

    def as_dict(self) -> dict[str, int]:
        """The cells as ``{"TP": .., "FN": .., "FP": .., "TN": ..}``."""
        return dict(zip(CELLS, self.as_array().tolist()))

    def __add__(self, other: "ConfusionMatrix") -> "ConfusionMatrix":
        if not isinstance(other, ConfusionMatrix):
            return NotImplemented
        return ConfusionMatrix(*(self.as_array() + other.as_array()).tolist())

    def __sub__(self, other: "ConfusionMatrix") -> "ConfusionMatrix":
        if not isinstance(other, ConfusionMatrix):
            return NotImplemented
        diff = self.as_array() - other.as_array()
        if (diff < 0).any():
            raise ValueError("cannot subtract a confusion matrix with larger cells")
        return ConfusionMatrix(*diff.tolist())

    @classmethod
    def from_array(cls, cells: npt.ArrayLike, *, order: str | None = None) -> "ConfusionMatrix":
        """Build from four cells in the ``order`` you name, e.g. ``order="tp fn fp tn"``.

        The order must be said: scikit-learn's ``confusion_matrix(y, ŷ).ravel()`` is
        ``[TN, FP, FN, TP]``, and four numbers cannot tell which layout they are in. For a 2×2
        scikit-learn matrix use :meth:`from_sklearn`.

        >>> ConfusionMatrix.from_array([1, 0, 0, 5], order="tp fn fp tn")
        ConfusionMatrix(tp=1, fn=0, fp=0, tn=5)
        >>> ConfusionMatrix.from_array([5, 0, 0, 1], order="tn fp fn tp")  # sklearn's .ravel()
        ConfusionMatrix(tp=1, fn=0, fp=0, tn=5)
        """
        arr = np.asarray(cells)
        if arr.shape == (2, 2):
            raise ValueError("a 2×2 matrix: for scikit-learn's confusion_matrix ([[TN, FP], [FN, TP]]) use "
                             "ConfusionMatrix.from_sklearn(cm)")
        if arr.shape != (4,):
            raise ValueError(f"expected 4 cells, got shape {arr.shape}")
        if order is None:
            raise ValueError("say which order the four cells are in, e.g. order='tp fn fp tn'. scikit-learn's "
                             "confusion_matrix(y, y_pred).ravel() is order='tn fp fn tp' (or pass the 2×2 "
                             "matrix to ConfusionMatrix.from_sklearn)")
        names = order.lower().replace(",", " ").split()
        if sorted(names) != ["fn", "fp", "tn", "tp"]:
            raise ValueError(f"order must name tp, fn, fp and tn once each, got {order!r}")
        cells_by_name = dict(zip(names, arr.tolist()))
        return cls(cells_by_name["tp"], cells_by_name["fn"], cells_by_name["fp"], cells_by_name["tn"])

    @classmethod
    def from_sklearn(cls, matrix: npt.ArrayLike) -> "ConfusionMatrix":
        """From scikit-learn's ``confusion_matrix(y_true, y_pred)``: ``[[TN, FP], [FN, TP]]`` with
        labels sorted, so that row and column 1 are the positive class.

        >>> ConfusionMatrix.from_sklearn([[5, 0], [0, 1]])
        ConfusionMatrix(tp=1, fn=0, fp=0, tn=5)
        """
        arr = np.asarray(matrix)
        if arr.shape != (2, 2):
            raise ValueError(f"expected scikit-learn's 2×2 [[TN, FP], [FN, TP]], got shape {arr.shape}"
                             + ("; a flattened .ravel() is ConfusionMatrix.from_array(cells, order='tn fp fn tp')"
                                if arr.shape == (4,) else ""))
        (tn, fp), (fn, tp) = arr.tolist()
        return cls(tp, fn, fp, tn)

    @classmethod
    def from_predictions(cls, y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> "ConfusionMatrix":
        """Count a confusion matrix from 0/1 labels and predictions.

        Parameters
        ----------
        y_true, y_pred : array-like of 0/1 (or bool), equal length
            Actual labels and predictions; 1 is the positive (beneficial) class.

        Raises
        ------
        ValueError
            If the lengths differ or a value is not 0/1; the message gives the
            first offending position.
        """
        yt = np.asarray(y_true)
        yp = np.asarray(y_pred)
        if yt.ndim != 1 or yp.ndim != 1:
            raise ValueError("y_true and y_pred must be one-dimensional")
        if yt.shape != yp.shape:
            raise ValueError(f"y_true has {yt.size} values but y_pred has {yp.size}")
        for name, arr in (("y_true", yt), ("y_pred", yp)):
            bad = ~np.isin(arr, (0, 1))
            if bad.any():
                pos = int(np.flatnonzero(bad)[0])
                raise ValueError(f"{name}[{pos}] = {arr[pos].item()!r} is not 0 or 1")
        yt = yt.astype(bool)
        yp = yp.astype(bool)
        tp = int(np.count_nonzero(yt & yp))
        fn = int(np.count_nonzero(yt & ~yp))
        fp = int(np.count_nonzero(~yt & yp))
        tn = int(yt.size - tp - fn - fp)
        return cls(tp, fn, fp, tn)

    def __repr__(self) -> str:
        return f"ConfusionMatrix(tp={self.tp}, fn={self.fn}, fp={self.fp}, tn={self.tn})"
