"""Per-group thresholds as a scikit-learn estimator, in Fairlearn's conventions (``ThresholdOptimizer``):
:class:`FairThresholds` wraps a classifier, thresholds its score per group to meet a fairness target, and takes
``sensitive_features`` in ``fit`` and ``predict``. Importing this module imports scikit-learn; the package imports
it on first use of ``mitigation.FairThresholds``, so ``import fairness_core`` does not.

>>> import numpy as np
>>> from sklearn.linear_model import LogisticRegression
>>> from fairness_core.mitigation import FairThresholds
>>> rng = np.random.default_rng(0)
>>> X, g = rng.normal(size=(400, 2)), rng.choice(["a", "b"], 400)
>>> y = (X[:, 0] + (g == "a") + rng.normal(size=400) > 0.5).astype(int)
>>> fair = FairThresholds(LogisticRegression(), target="demographic_parity", tolerance=0.02).fit(
...     X, y, sensitive_features=g)
>>> fair.predict(X, sensitive_features=g).shape, sorted(fair.rule_.thresholds)
((400,), ['a', 'b'])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ...common.validation import INTERSECTION_SEP
from .fitting import fit_thresholds
from .inputs import DEFAULT_TOLERANCE, _check_options
from .rule import ThresholdRule

#: How ``predict_method="auto"`` reads a score from the estimator: the first it has.
SCORE_METHODS = ("predict_proba", "decision_function", "predict")


def _sensitive(sensitive_features: Any, n: int) -> np.ndarray:
    """One group name per row: a column as it is, several columns (a DataFrame or a 2-D array) joined with
    :data:`INTERSECTION_SEP` as the audit joins intersections."""
    if sensitive_features is None:
        raise ValueError("sensitive_features is required: the group of each row (a post-processor fits and applies "
                         "one threshold per group)")
    if isinstance(sensitive_features, pd.DataFrame):
        columns = [sensitive_features[c].astype(str).to_numpy() for c in sensitive_features.columns]
    else:
        arr = np.asarray(sensitive_features.to_numpy() if isinstance(sensitive_features, pd.Series)
                         else sensitive_features)
        columns = [arr] if arr.ndim == 1 else [arr[:, j].astype(str) for j in range(arr.shape[1])] if arr.ndim == 2 \
            else None
        if columns is None:
            raise ValueError(f"sensitive_features must be one or more columns; got shape {arr.shape}")
    if len(columns) == 1:
        out = columns[0]
    else:
        out = columns[0].astype(object)
        for c in columns[1:]:
            out = out + INTERSECTION_SEP + c.astype(object)
    if len(out) != n:
        raise ValueError(f"sensitive_features has {len(out):,} rows and X has {n:,}: give one group per row")
    return out


class FairThresholds(ClassifierMixin, BaseEstimator):
    """A classifier's score thresholded per group to meet a fairness target (:func:`fit_thresholds`).

    Parameters
    ----------
    estimator : a scikit-learn classifier (binary)
        Its score (``predict_method``) is thresholded; higher = the positive class, ``classes_[1]``, more likely
        (the beneficial outcome; for a harm, fit the estimator so that its positive class is the benefit).
    target, tolerance, objective, cost_fp, cost_fn
        As :func:`fairness_core.mitigation.fit_thresholds`.
    randomize : bool
        Hold the randomized rule where mixing thresholds does better; ``predict`` then draws with ``random_state``.
    prefit : bool
        The estimator is already fitted: ``fit`` fits the thresholds only (Fairlearn's meaning). Else ``fit``
        fits a clone of the estimator on the same rows first.
    predict_method : {"auto", "predict_proba", "decision_function", "predict"}
        "auto": the first of :data:`SCORE_METHODS` the estimator has (``predict_proba``'s positive column).

    Attributes
    ----------
    estimator_ : the fitted estimator; rule_ : :class:`ThresholdRule`; classes_ : the two class labels;
    n_features_in_ (and feature_names_in_ where the estimator has them).
    """

    def __init__(self, estimator: Any = None, *, target: str = "demographic_parity",
                 tolerance: float = DEFAULT_TOLERANCE, objective: str = "accuracy", randomize: bool = False,
                 prefit: bool = False, predict_method: str = "auto", cost_fp: float = 1.0,
                 cost_fn: float = 1.0) -> None:
        self.estimator = estimator
        self.target = target
        self.tolerance = tolerance
        self.objective = objective
        self.randomize = randomize
        self.prefit = prefit
        self.predict_method = predict_method
        self.cost_fp = cost_fp
        self.cost_fn = cost_fn

    def _score(self, X: Any) -> np.ndarray:
        method = self.predict_method
        if method == "auto":
            method = next(m for m in SCORE_METHODS if hasattr(self.estimator_, m))
        elif method not in SCORE_METHODS:
            raise ValueError(f"predict_method must be 'auto' or one of {', '.join(SCORE_METHODS)}; got {method!r}")
        out = np.asarray(getattr(self.estimator_, method)(X), dtype=float)
        if method == "predict_proba":
            out = out[:, 1]
        elif out.ndim != 1:
            raise ValueError(f"the estimator's {method} must give one score per row for a binary classifier; got "
                             f"shape {out.shape}")
        return out

    def fit(self, X: Any, y: Any, *, sensitive_features: Any = None, **fit_params: Any) -> FairThresholds:
        """Fit the estimator (unless ``prefit``), then the thresholds of its score on these rows."""
        if self.estimator is None:
            raise ValueError("FairThresholds needs an estimator: FairThresholds(LogisticRegression(), ...)")
        _check_options(self.target, self.tolerance, self.objective, self.cost_fp, self.cost_fn)
        if y is None:
            raise ValueError("FairThresholds requires y to be passed, but the target y is None: thresholds are fitted "
                             "on actual outcomes")
        y_arr = column_or_1d(y, warn=True)
        groups = _sensitive(sensitive_features, len(y_arr))
        if self.prefit:
            try:
                check_is_fitted(self.estimator)
            except NotFittedError:
                raise ValueError("prefit=True but the estimator is not fitted: fit it first, or say prefit=False") \
                    from None
            self.estimator_ = self.estimator
        else:
            self.estimator_ = clone(self.estimator).fit(X, y_arr, **fit_params)
        classes = getattr(self.estimator_, "classes_", None)
        self.classes_ = np.asarray(classes) if classes is not None else np.unique(y_arr)
        if len(self.classes_) != 2:
            raise ValueError(f"Only binary classification is supported. FairThresholds needs two classes (a binary "
                             f"decision); y has {len(self.classes_)}: {self.classes_[:5].tolist()!r}")
        for attr in ("n_features_in_", "feature_names_in_"):
            if hasattr(self.estimator_, attr):
                setattr(self, attr, getattr(self.estimator_, attr))
        self.rule_: ThresholdRule = fit_thresholds(
            self._score(X), y_arr == self.classes_[1], groups, target=self.target, tolerance=self.tolerance,
            objective=self.objective, cost_fp=self.cost_fp, cost_fn=self.cost_fn, randomize=self.randomize)
        return self

    def predict(self, X: Any, *, sensitive_features: Any = None, random_state: Any = None) -> np.ndarray:
        """The class labels of the thresholded score (``classes_[1]`` where selected); a randomized rule draws
        with ``random_state`` (an int: reproducible)."""
        check_is_fitted(self, "rule_")
        score = self._score(X)
        chosen = self.rule_.predict(score, _sensitive(sensitive_features, len(score)), random_state=random_state)
        return self.classes_[chosen.astype(np.intp)]

    def predict_proba(self, X: Any, *, sensitive_features: Any = None) -> np.ndarray:
        """Each row's chance of each class under the rule (0 or 1 unless it randomizes), columns in ``classes_``."""
        check_is_fitted(self, "rule_")
        score = self._score(X)
        p = self.rule_.selection_probability(score, _sensitive(sensitive_features, len(score)))
        return np.column_stack([1 - p, p])

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        if self.estimator is not None:   # the inputs X may be are the estimator's
            inner = get_tags(self.estimator)
            tags.input_tags.sparse = inner.input_tags.sparse
            tags.input_tags.allow_nan = inner.input_tags.allow_nan
        tags.non_deterministic = bool(self.randomize)
        return tags
