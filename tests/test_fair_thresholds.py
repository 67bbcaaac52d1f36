"""FairThresholds, the scikit-learn wrapper of per-group thresholds (issue 44): scikit-learn's estimator checks, a
Pipeline, the same rule as fit_thresholds, Fairlearn's conventions (sensitive_features, prefit, random_state), and
scikit-learn loaded only when the wrapper is used."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from fairness_core import mitigation
from fairness_core.mitigation import FairThresholds


def groups_of(X):  # type: ignore[no-untyped-def]
    """A group for each row from its own first feature (so a resampled or reordered row keeps its group)."""
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=float)
    X = X.reshape(X.shape[0], -1)
    if X.shape[1] == 0 or not np.isfinite(X[:, 0]).all():
        return np.array(["even", "odd"] * len(X))[:len(X)]
    return np.where(np.floor(np.abs(X[:, 0]) * 7) % 2 == 0, "even", "odd")


class GroupsFromX(FairThresholds):
    """Every estimator check calls fit(X, y) and predict(X) without sensitive_features, which a post-processor
    needs; this adapter (for the checks only) supplies a group per row from the row itself."""

    def fit(self, X, y, sensitive_features=None, **kw):  # type: ignore[no-untyped-def,override]
        return super().fit(X, y, sensitive_features=groups_of(X) if sensitive_features is None else sensitive_features,
                           **kw)

    def predict(self, X, sensitive_features=None, random_state=None):  # type: ignore[no-untyped-def,override]
        return super().predict(X, sensitive_features=groups_of(X) if sensitive_features is None else sensitive_features,
                               random_state=random_state)

    def predict_proba(self, X, sensitive_features=None):  # type: ignore[no-untyped-def,override]
        return super().predict_proba(X, sensitive_features=groups_of(X) if sensitive_features is None
                                     else sensitive_features)


#: Checks that do not apply to a post-processor, and why.
NOT_APPLICABLE = {
    "check_classifiers_one_label_sample_weights": "sample_weight goes to the estimator; the thresholds are fitted on "
                                                  "the rows unweighted, so a zero-weight class can still be selected",
}


def test_passes_scikit_learns_estimator_checks_that_apply_to_a_post_processor():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(GroupsFromX(LogisticRegression()), on_fail=None)
    failed = {r["check_name"]: str(r["exception"]) for r in results if r["status"] == "failed"}
    passed = {r["check_name"] for r in results if r["status"] == "passed"}
    assert set(failed) == set(NOT_APPLICABLE), failed
    assert len(passed) >= 50 and {"check_estimators_pickle", "check_fit_idempotent", "check_n_features_in",
                                  "check_classifiers_train", "check_estimators_nan_inf"} <= passed


def test_without_groups_fit_fails_by_name():
    with pytest.raises(ValueError, match="sensitive_features is required"):
        FairThresholds(LogisticRegression()).fit(np.zeros((4, 1)), [0, 1, 0, 1])


def data(n: int = 4000, seed: int = 0):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    g = rng.choice(np.array(["a", "b", "c"]), n, p=[0.5, 0.3, 0.2])
    X = rng.normal(size=(n, 3)) + np.select([g == "a", g == "b"], [0.8, 0.0], -0.6)[:, None] * [1, 0, 0]
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-(1.2 * X[:, 0] + 0.5 * X[:, 1]))), "approved", "declined")
    return X, y, g


def test_in_a_pipeline_it_is_fit_thresholds_on_the_estimators_score():
    X, y, g = data()
    pipe = Pipeline([("scale", StandardScaler()),
                     ("fair", FairThresholds(LogisticRegression(), target="equalized_odds", tolerance=0.02))])
    pipe.fit(X, y, fair__sensitive_features=g)
    fair = pipe.named_steps["fair"]
    assert list(fair.classes_) == ["approved", "declined"]
    score = fair.estimator_.predict_proba(pipe.named_steps["scale"].transform(X))[:, 1]   # P("declined")
    direct = mitigation.fit_thresholds(score, y == "declined", g, "equalized_odds", 0.02)
    assert fair.rule_.thresholds == direct.thresholds
    out = pipe.predict(X, sensitive_features=g)
    assert set(out) <= {"approved", "declined"}
    assert (out == np.where(direct.predict(score, g) == 1, "declined", "approved")).all()


def test_randomized_draws_are_reproducible_and_follow_the_rule():
    X, y, g = data(seed=1)
    fair = FairThresholds(LogisticRegression(), target="demographic_parity", tolerance=0.01, randomize=True)
    fair.fit(X, y, sensitive_features=g)
    assert fair.rule_.randomized
    first = fair.predict(X, sensitive_features=g, random_state=7)
    assert (first == fair.predict(X, sensitive_features=g, random_state=7)).all()
    assert (first != fair.predict(X, sensitive_features=g, random_state=8)).any()
    proba = fair.predict_proba(X, sensitive_features=g)
    assert proba.shape == (len(y), 2) and np.allclose(proba.sum(axis=1), 1)
    assert ((proba[:, 1] > 0) & (proba[:, 1] < 1)).any()


def test_prefit_uses_the_fitted_model_and_several_columns_are_joined():
    X, y, g = data(seed=2)
    model = LogisticRegression().fit(X, y)
    sex = np.where(np.arange(len(y)) % 2 == 0, "f", "m")
    groups = pd.DataFrame({"race": g, "sex": sex})
    fair = FairThresholds(model, target="demographic_parity", prefit=True).fit(X, y, sensitive_features=groups)
    assert fair.estimator_ is model and len(fair.rule_.thresholds) == 6
    assert set(fair.rule_.thresholds) == {f"{r} & {x}" for r in "abc" for x in "fm"}
    with pytest.raises(ValueError, match="prefit=True but the estimator is not fitted"):
        FairThresholds(LogisticRegression(), prefit=True).fit(X, y, sensitive_features=g)
    with pytest.raises(ValueError, match="sensitive_features has 3 rows and X has"):
        fair.predict(X, sensitive_features=["a", "b", "c"])
    with pytest.raises(ValueError, match="target must be one of"):
        FairThresholds(LogisticRegression(), target="parity").fit(X, y, sensitive_features=g)


def test_importing_the_library_does_not_import_scikit_learn():
    code = ("import sys, fairness_core, fairness_core.mitigation as m; assert 'sklearn' not in sys.modules; "
            "m.FairThresholds; assert 'sklearn' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
