"""The inputs of a threshold fit, checked once: scores, labels, groups and the options; the split into fitting and
held-out rows; the names every part shares (targets, objectives, limits)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
BoolArray = npt.NDArray[np.bool_]

#: Fairness targets :func:`fit_thresholds` can hold (see the module's table).
TARGETS = ("ofi", "demographic_parity", "four_fifths", "equal_opportunity", "equalized_odds", "none")
#: Targets whose quantity is linear in the count selected (their randomized optimum is found over k; equal
#: opportunity's over TP, equalized odds' by a linear program over each group's ROC hull).
LINEAR_TARGETS = ("ofi", "demographic_parity", "four_fifths")
#: Performance measures, additive over groups; "cost" is minimized, the others maximized.
OBJECTIVES = ("accuracy", "balanced_accuracy", "cost")
#: Most groups one fit takes.
MAX_GROUPS = 500
#: The four-fifths rule's smallest impact ratio.
FOUR_FIFTHS = 0.8
#: Tolerance when none is given (the OFI tolerance the audit uses by default).
DEFAULT_TOLERANCE = 0.05
#: Tolerances :func:`frontier` sweeps when none are given: 0, 0.01, …, 0.20.
DEFAULT_TOLERANCES = tuple(round(0.01 * i, 2) for i in range(21))
#: Slack for comparing ratios of counts in floating point.
ROUNDING = 1e-12


class InfeasibleTarget(ValueError):
    """No deterministic thresholds meet the target on these rows; ``smallest`` is the smallest tolerance
    that can be met (rounded up to 1e-6)."""

    def __init__(self, message: str, smallest: float) -> None:
        super().__init__(message)
        self.smallest = smallest


# --------------------------------------------------------------------------------------------- inputs

@dataclass(frozen=True)
class _Rows:
    scores: FloatArray
    y: BoolArray
    codes: IntArray
    names: list[Any]


def _vector(values: Any, name: str) -> np.ndarray:
    if isinstance(values, (pd.DataFrame, dict)):
        raise ValueError(f"{name} must be one column (one value per row); for several sensitive attributes "
                         "join them into one group name per row first")
    arr = np.asarray(values.to_numpy() if isinstance(values, pd.Series) else values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one value per row); got shape {arr.shape}")
    return arr


def _scores(values: Any) -> FloatArray:
    arr = _vector(values, "scores")
    try:
        s = arr.astype(float)
    except (TypeError, ValueError):
        raise ValueError(f"scores must be numbers; found {arr.dtype} values such as {arr[:3].tolist()!r}") from None
    bad = np.flatnonzero(~np.isfinite(s))
    if bad.size:
        raise ValueError(f"scores must be finite; {bad.size:,} are not (first at position {bad[0]}: {s[bad[0]]!r})")
    return s


def _labels(values: Any) -> BoolArray:
    arr = _vector(values, "y_true")
    if arr.dtype == bool:
        return arr
    try:
        f = arr.astype(float)
    except (TypeError, ValueError):
        f = None
    bad = np.ones(len(arr), bool) if f is None else ~((f == 0) | (f == 1))
    if bad.any():
        found = pd.unique(arr[bad])[:5].tolist()
        raise ValueError(f"y_true must hold only 0 and 1 (or True and False), 1 the beneficial outcome; found {found!r}")
    return f == 1


def _groups(values: Any) -> tuple[IntArray, list[Any]]:
    arr = _vector(values, "groups")
    try:
        codes, uniques = pd.factorize(arr, sort=True)
    except TypeError:  # values of several types cannot be sorted
        codes, uniques = pd.factorize(arr, sort=False)
    missing = np.flatnonzero(codes < 0)
    if missing.size:
        raise ValueError(f"groups has {missing.size:,} missing values (first at position {missing[0]}); "
                         "name a group for every row")
    names = list(uniques.tolist() if hasattr(uniques, "tolist") else uniques)
    if len(names) < 2:
        raise ValueError(f"groups must name at least two groups; every row is in {names[0]!r}" if names
                         else "groups must name at least two groups")
    if len(names) > MAX_GROUPS:
        raise ValueError(f"groups names {len(names):,} groups; at most {MAX_GROUPS} can be fitted")
    return codes.astype(np.intp), names


def _rows(scores: Any, y_true: Any, groups: Any) -> _Rows:
    s, y, g = _vector(scores, "scores"), _vector(y_true, "y_true"), _vector(groups, "groups")
    sizes = {"scores": len(s), "y_true": len(y), "groups": len(g)}
    if len(set(sizes.values())) != 1:
        raise ValueError("scores, y_true and groups need one value per row: "
                         + ", ".join(f"{k} has {v:,}" for k, v in sizes.items()))
    if len(s) == 0:
        raise ValueError("scores is empty: there are no rows to fit")
    codes, names = _groups(g)
    return _Rows(_scores(s), _labels(y), codes, names)


def _check_options(target: str, tolerance: float, objective: str, cost_fp: float, cost_fn: float) -> float:
    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(map(repr, TARGETS))}; got {target!r}")
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(map(repr, OBJECTIVES))}; got {objective!r}")
    for name, v in (("cost_fp", cost_fp), ("cost_fn", cost_fn)):
        if not (isinstance(v, (int, float, np.integer, np.floating)) and math.isfinite(v) and v >= 0):
            raise ValueError(f"{name} must be a finite number >= 0; got {v!r}")
    if objective == "cost" and cost_fp == 0 and cost_fn == 0:
        raise ValueError("cost_fp and cost_fn are both 0: every threshold costs nothing; give a positive weight")
    try:
        t = float(tolerance)
    except (TypeError, ValueError):
        raise ValueError(f"tolerance must be a number; got {tolerance!r}") from None
    top = 2.0 if target == "ofi" else 1.0
    if not (0 <= t <= top):
        raise ValueError(f"tolerance must be in [0, {top:g}] for target {target!r}; got {tolerance!r}")
    return t


def split_rows(groups: Any, y_true: Any, fraction: float = 0.5, seed: int = 0) -> BoolArray:
    """A stratified random split: True for the rows to fit thresholds on, False for the held-out rows on
    which every number after mitigation is measured.

    Within each stratum (group × label) a share ``fraction`` of the rows is drawn; where that share is
    not a whole number the count is rounded up or down at random (by ``seed``), so the expected share is
    exact in every stratum.

    >>> mask = split_rows(["a"] * 6 + ["b"] * 4, [1, 0] * 5, fraction=0.5)
    >>> int(mask.sum()), mask.dtype
    (5, dtype('bool'))
    """
    if not (isinstance(fraction, (int, float, np.floating)) and 0 < fraction < 1):
        raise ValueError(f"fraction must be strictly between 0 and 1; got {fraction!r}")
    g = _vector(groups, "groups")
    y = _labels(y_true)
    if len(g) != len(y):
        raise ValueError(f"groups and y_true need one value per row: groups has {len(g):,}, y_true has {len(y):,}")
    if len(g) == 0:
        raise ValueError("groups is empty: there are no rows to split")
    codes, _ = pd.factorize(g)
    if (codes < 0).any():
        raise ValueError(f"groups has missing values (first at position {int(np.argmax(codes < 0))}); name a group "
                         "for every row")
    stratum = codes.astype(np.int64) * 2 + y
    rng = np.random.default_rng(seed)
    order = np.lexsort((rng.random(len(g)), stratum))
    sizes = np.bincount(stratum)
    take = np.floor(fraction * sizes + rng.random(len(sizes))).astype(np.int64)
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rank = np.arange(len(g)) - first[stratum[order]]
    mask = np.zeros(len(g), bool)
    mask[order] = rank < take[stratum[order]]
    return mask
