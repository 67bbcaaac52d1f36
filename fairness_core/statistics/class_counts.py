"""Row-level classes (risk tiers, grade bands, any categories), checked and counted into one k × k matrix per group.

The counting behind :meth:`fairness_core.multiclass.MulticlassAudit.from_predictions` and ``from_decisions``, as
:mod:`.row_counts` is the binary audit's. :func:`count_classes` returns the keyword arguments of a
``MulticlassAudit``; no audit is built here. Every problem raises
:class:`~fairness_core.common.validation.DataValidationError` (a ValueError) naming the value, the array and the
first position (``y_pred[3]``), one sentence per kind of problem, before anything is counted:

- a missing value (None, NaN) in ``y_true`` or ``y_pred``;
- a class outside the declared ``order``;
- fewer than two classes in the data, or an ``order`` of fewer than two (or repeated) classes;
- a ``favourable`` class that is not one end of the ``order`` (ordered) or not a class (unordered);
- without an ``order``, a class predicted but never observed as an outcome: the classes are then read from the
  data, and a class only the predictions use is far more often a mismatch of spellings or codes ("high" against
  "High", 1–3 against 0–2) than a real class nobody belongs to. With an ``order`` the classes are declared, so
  the same case is allowed and a :class:`UserWarning` names the class (its one-vs-rest TPR is undefined);
- a known group with a single row (no spread, no interval: every comparison with it would be empty).
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .row_counts import _compact, _group_codes, _levels_of, _sensitive_frame, _vector
from ..common.validation import (MAX_GROUPS, MAX_ROWS, UNKNOWN_CATEGORY, UNKNOWN_VALUES, DataValidationError, Problem,
                                 group_values, intersection_names, show_value, unknown_key)

#: Most classes a multiclass audit takes (a k × k matrix per group is shown and stored).
MAX_CLASSES = 50

__all__ = ["MAX_CLASSES", "class_codes", "count_classes"]


def _at(column: str, position: int, message: str) -> Problem:
    return Problem(f"{column}[{position}]: {message}")


def _class_key(value: Any) -> str:
    """How a class value is matched with a declared class: as text, trimmed (``1`` matches ``"1"``)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def _check_missing(values: np.ndarray, column: str) -> None:
    missing = np.asarray(pd.isna(values))   # on the array as it is: numbers never go through Python objects
    if missing.any():
        rows = np.flatnonzero(missing)
        more = f" ({rows.size:,} such positions)" if rows.size > 1 else ""
        raise DataValidationError(_at(column, int(rows[0]), f"missing class{more}: every row needs one"))


def _declared_order(order: Sequence[Any]) -> list[str]:
    if isinstance(order, (str, bytes)) or not hasattr(order, "__iter__"):
        raise DataValidationError(f"order must be a list of the classes, got {order!r}")
    names = [_class_key(v) for v in order]
    if len(names) < 2:
        raise DataValidationError(f"order names {len(names)} class(es); an audit of categories needs at least two")
    if len(names) > MAX_CLASSES:
        raise DataValidationError(f"order names {len(names)} classes; the limit is {MAX_CLASSES}")
    seen = pd.Series(names)
    if seen.duplicated().any():
        raise DataValidationError(f"order names the class {seen[seen.duplicated()].iloc[0]!r} twice")
    if any(not n for n in names):
        raise DataValidationError("order holds a blank class name")
    return names


def class_codes(values: np.ndarray, column: str, classes: Sequence[str] | None) -> tuple[np.ndarray, list[str]]:
    """Each row's class index in ``classes`` (matched as trimmed text) and the classes; with ``classes`` None,
    the data's own classes, sorted. A value outside ``classes`` is refused with its first position."""
    _check_missing(values, column)
    codes, uniques = pd.factorize(np.asarray(values), sort=False)
    keys = [_class_key(u) for u in uniques]   # one per distinct value, never per row
    if classes is None:
        try:
            found = sorted(dict.fromkeys(keys), key=lambda k: (0, float(k), k))
        except ValueError:
            found = sorted(dict.fromkeys(keys))
        classes = found
    index = {c: k for k, c in enumerate(classes)}
    outside = [u for u, key in enumerate(keys) if key not in index]
    if outside:
        first = int(np.flatnonzero(np.isin(codes, outside))[0])
        raise DataValidationError(_at(column, first, (
            f"{show_value(uniques[codes[first]])} is not one of the declared classes "
            f"({', '.join(map(repr, classes))}); declare it in order, or correct the value")))
    lookup = np.array([index[key] for key in keys], dtype=np.int64)
    return lookup[codes], list(classes)


def count_classes(y_true: Any, y_pred: Any, sensitive_features: Any, order: Sequence[Any] | None = None, *,
                  unknown: Sequence[str] | None = None, blank_as_unknown: bool = False) -> dict[str, Any]:
    """Check the rows and count them: the keyword arguments of a ``MulticlassAudit`` but its direction.

    ``y_true`` None counts the decisions alone (``counts`` is then groups × classes, each group's rows per
    predicted class); otherwise ``counts`` is groups × k × k, rows the observed class and columns the predicted
    one, in ``classes`` order. ``unknown``/``blank_as_unknown`` read group values as the attribute's unknown
    category, as :func:`fairness_core.statistics.row_counts.count_rows` does (always so without outcomes).

    >>> f = count_classes(["lo", "hi", "hi", "lo"], ["lo", "hi", "lo", "lo"], ["a", "a", "b", "b"],
    ...                   order=["lo", "hi"])
    >>> f["classes"], f["groups"], f["counts"].tolist()
    (('lo', 'hi'), ('a', 'b'), [[[1, 0], [0, 1]], [[1, 0], [1, 0]]])
    """
    outcomes = y_true is not None
    if not outcomes:
        unknown = UNKNOWN_VALUES if unknown is None else unknown
        blank_as_unknown = True
    predictions = _vector(y_pred, "y_pred")
    labels = _vector(y_true, "y_true") if outcomes else None
    frame = _sensitive_frame(sensitive_features)
    sizes = {**({"y_true": len(labels)} if labels is not None else {}), "y_pred": len(predictions),
             "sensitive_features": len(frame)}
    if len(set(sizes.values())) != 1:
        raise DataValidationError("lengths differ: " + ", ".join(f"{k} has {v:,}" for k, v in sizes.items()))
    if len(predictions) == 0:
        raise DataValidationError("no rows")
    if len(predictions) > MAX_ROWS:   # the binary audit's limit (FAIRNESS_MAX_UPLOAD_ROWS)
        raise DataValidationError(f"{len(predictions):,} rows; the limit is {MAX_ROWS:,}")
    declared = None if order is None else _declared_order(order)
    if labels is not None:
        _check_missing(labels, "y_true")
    _check_missing(predictions, "y_pred")
    if declared is None and labels is not None:   # one set of classes for both columns
        both = np.concatenate([np.asarray(labels, dtype=object), np.asarray(predictions, dtype=object)])
        _, declared_from_data = class_codes(both, "y_true", None)
        yi, classes = class_codes(labels, "y_true", declared_from_data)
        pi, _ = class_codes(predictions, "y_pred", classes)
    else:
        pi, classes = class_codes(predictions, "y_pred", declared)
        yi = class_codes(labels, "y_true", classes)[0] if labels is not None else None
    k = len(classes)
    if k > MAX_CLASSES:
        raise DataValidationError(f"{k} classes; the limit is {MAX_CLASSES}")
    used = np.bincount(pi, minlength=k) + (np.bincount(yi, minlength=k) if yi is not None else 0)
    if int((used > 0).sum()) < 2:
        only = classes[int(np.argmax(used))]
        raise DataValidationError(f"every row is {only!r} in {'y_true and y_pred' if outcomes else 'y_pred'}: "
                                  "an audit of categories needs at least two classes in the data")
    notes: list[str] = []
    if yi is not None:
        observed = np.bincount(yi, minlength=k) > 0
        never = [c for c in range(k) if not observed[c] and (pi == c).any()]
        if never:
            c = never[0]
            count = int((pi == c).sum())
            sentence = (f"{classes[c]!r} is predicted ({count:,} row{'' if count == 1 else 's'}, first "
                        f"y_pred[{int(np.argmax(pi == c))}]) "
                        "but never an observed outcome in y_true")
            if order is None:
                raise DataValidationError(sentence + f" (outcomes: {', '.join(repr(classes[j]) for j in np.flatnonzero(observed))}); "
                                          "check the spelling or coding of the two columns, or declare order= to "
                                          "audit a class nobody was observed in")
            message = (sentence + ": its one-vs-rest TPR and FNR are undefined (no one observed in it)"
                       + (f"; also {', '.join(repr(classes[j]) for j in never[1:])}" if len(never) > 1 else ""))
            warnings.warn(message, UserWarning, stacklevel=3)
            notes.append(message[0].upper() + message[1:] + ".")

    try:
        codes, level_names = _group_codes(frame, list(frame.columns), notes, True,
                                          None if unknown is None else {unknown_key(u) for u in unknown},
                                          blank_as_unknown)
    except DataValidationError as exc:   # positions, not file rows: race[3], not "row 4"
        raise DataValidationError([_at(p.column, p.row - 1, p.message) if p.row is not None and p.column else p
                                   for p in exc.problems]) from None
    joint, inverse = _compact(codes, int(np.prod([len(v) for v in level_names])))
    inverse = inverse.ravel()
    if joint.size > MAX_GROUPS:
        raise DataValidationError(f"{joint.size} groups; the limit is {MAX_GROUPS}")
    parts = _levels_of(joint, level_names)
    names = intersection_names(parts)
    unknown_groups = tuple(name for g, name in enumerate(names) if any(p[g] == UNKNOWN_CATEGORY for p in parts)
                           ) if unknown is not None or blank_as_unknown else ()
    if len(names) - len(unknown_groups) < 2:
        raise DataValidationError(f"fewer than two known groups in {', '.join(frame.columns)}; an audit compares "
                                  "at least two groups")
    sizes_g = np.bincount(inverse, minlength=len(names))
    single = [g for g, name in enumerate(names) if sizes_g[g] == 1 and name not in unknown_groups]
    if single:
        g = single[0]
        raise DataValidationError(_at("sensitive_features", int(np.argmax(inverse == g)), (
            f"group {names[g]!r} has a single row: no interval and no comparison can rest on one person"
            + (f" (also {', '.join(repr(names[h]) for h in single[1:4])})" if len(single) > 1 else "")
            + "; merge it with another group or leave its rows out")))
    if yi is not None:
        counts = np.bincount((inverse * k + yi) * k + pi, minlength=len(names) * k * k).reshape(-1, k, k)
    else:
        counts = np.bincount(inverse * k + pi, minlength=len(names) * k).reshape(-1, k)
    return dict(counts=counts, groups=tuple(names), classes=tuple(classes), ordered=order is not None,
                outcomes=outcomes, group_columns=tuple(frame.columns),
                group_values=group_values(names, parts), unknown=unknown_groups, notes=tuple(notes))
