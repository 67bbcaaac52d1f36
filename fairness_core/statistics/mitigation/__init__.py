"""Per-group decision thresholds from a score: the best performance subject to a fairness target.

**Direction.** A higher score means the positive outcome — the *beneficial* one (hired, released,
approved; docs/methods.md) — is more likely. Where a model scores a harm (COMPAS's risk of
reoffending), pass ``-scores`` and labels with positive = the beneficial outcome, as the audit does
when it flips a harm. A row is predicted positive when its score is at or above its group's threshold.

**Why a band.** In a group of n rows with P actual positives, thresholded so that k rows are predicted
positive, TP_k + FP_k = k, so the marginal benefit B = (FP − FN)/n = (k − P)/n rises with k; so do
the selection rate k/n, the true positive rate TP_k/P and the false positive rate FP_k/N. Every target
asks one such quantity to lie, for every group, in a band whose position c is free:

=====================  ====================  ==============  =============================================
target                 quantity per group    band            constraint on the fitting rows
=====================  ====================  ==============  =============================================
``"ofi"``              B = (k − P)/n         [c, c + T]      every pair's \\|OFI\\| = \\|B_i − B_j\\| ≤ T
``"demographic_parity"`` selection rate k/n  [c, c + T]      max rate − min rate ≤ T
``"four_fifths"``      selection rate k/n    [c, c / 0.8]    min rate ≥ 0.8 · max rate (DI ≥ 4/5; T unused)
``"equal_opportunity"`` TPR                  [c, c + T]      max TPR − min TPR ≤ T
``"equalized_odds"``   TPR and FPR           two bands       both ranges ≤ T
``"none"``             —                     —               one threshold shared by every group
=====================  ====================  ==============  =============================================

**How.** Each group's scores are sorted once (descending); cumulative counts give TP_k and FP_k at
every threshold. Only k at the end of a run of tied scores is achievable (tied rows move together), so a
group with m distinct scores has m + 1 candidate thresholds (+inf: nobody selected). For a band position
c each group's admissible candidates form an interval of indices (its quantity is monotone in k), and
the best candidate in it is a range-maximum query on a sparse table, O(1) per query and vectorized over
many positions. The objective is additive over groups — accuracy, balanced accuracy
½(ΣTP/P + ΣTN/N) over all rows, or expected cost ``cost_fp``·FP + ``cost_fn``·FN (minimized) — so the
best total at c is the sum of the groups' maxima. The optimal band has its lower edge at some group's
achievable value, so searching those positions (the feasible ones, found exactly by an interval sweep)
is exact. When there are more than :data:`SEARCH_BUDGET` (positions × groups), the search takes an
evenly strided subset of the positions and then every position around the best (``exhaustive`` is then
False: the result satisfies the constraint exactly and is optimal among the positions searched).

**Exactness.** The returned thresholds satisfy the constraint on the fitting rows exactly (quantities
are ratios of counts, compared with a slack of :data:`ROUNDING` for floating point). Fit on one part of
the rows and measure on the rest (:func:`split_rows`): a constraint met exactly where it was tuned is
only estimated elsewhere.

**Infeasible.** Every target but ``"ofi"`` is always feasible (selecting nobody equalizes rates). OFI
within T needs, in every group, an achievable k near P + n·c; ties in the scores can make a small T
impossible. Then :func:`fit_thresholds` raises :class:`InfeasibleTarget`, whose message and
``smallest`` attribute give the smallest tolerance these rows allow (the page can offer it), rather than
returning thresholds that break the user's target.

**Randomized rules.** A rule that mixes two thresholds at random within a group reaches any expected k
and the upper concave envelope of the group's objective over k. For the targets linear in k (``"ofi"``,
``"demographic_parity"``, ``"four_fifths"``, constraints holding in expectation) the best randomized
rule is the maximum over c of the sum of the envelopes over each group's band, a concave function of c
found exactly. The objective is linear in (FP, TP), so for ``"equal_opportunity"`` the same holds over the
expected TP with the upper envelope of (TP, objective). For ``"equalized_odds"`` a group's randomized rules
reach exactly the convex hull of its ROC points (mixing up to three thresholds): the best randomized rule is
a small linear program over mixing weights of each group's hull vertices and the two band positions
(Hardt et al., 2016), solved by HiGHS. ``randomized_gain`` is the best randomized rule's advantage over the
deterministic thresholds (>= 0), in the objective's units, on the fitting rows; NaN with a reason only if
the solver fails.

**Deploying a rule.** ``fit_thresholds(..., randomize=True)`` returns the randomized rule itself where it does
better (``rule.mixtures``; ``rule.predict(scores, groups, random_state=seed)`` draws from them). A rule travels as
versioned JSON (``rule.to_json()``, ``ThresholdRule.from_json(text)``), is applied to a file by ``python -m
fairness_core apply RULE.json DATA.csv --score COL --group COL --out OUT.csv``, which turns the file's score as the
fitting scores were turned (``fit_thresholds(..., score_transform="negate")`` for a harm's score fitted as −score)
and refuses a file whose scores mostly lie outside the fitted range (``rule.range_check``), and fits in a scikit-learn
pipeline as :class:`FairThresholds` (:mod:`.estimator`, imported on first use: scikit-learn loads only then).

The parts, by job: :mod:`.inputs` (checks, the split, the shared names), :mod:`.search` (curves, bands, the
search, randomized rules), :mod:`.rule` (the fitted rule, its JSON, its disparities), :mod:`.held_out`
(cross-fitting's folds, the held-out measures with intervals), :mod:`.fitting` (:func:`fit_thresholds`,
:func:`cross_fit`, :func:`frontier`), :mod:`.estimator` (the scikit-learn wrapper).

>>> import numpy as np
>>> from fairness_core import mitigation
>>> scores = np.array([.9, .8, .7, .6, .3, .2,   .6, .5, .45, .4, .35, .1])
>>> y_true = np.array([1,  1,  0,  1,  0,  0,    1,  1,  0,   1,  0,   0])
>>> groups = np.array(["a"] * 6 + ["b"] * 6)         # the model scores group b lower
>>> shared = mitigation.fit_thresholds(scores, y_true, groups, target="none")
>>> shared.thresholds, round(shared.objective_value, 3), round(shared.max_abs_ofi, 3)
({'a': 0.5, 'b': 0.5}, 0.833, 0.333)
>>> rule = mitigation.fit_thresholds(scores, y_true, groups, target="ofi", tolerance=0.1)
>>> rule.thresholds, round(rule.objective_value, 3), rule.max_abs_ofi
({'a': 0.8, 'b': 0.5}, 0.833, 0.0)
>>> rule.predict(scores, groups).tolist()
[1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0]
"""

from __future__ import annotations

from typing import Any

from .fitting import (RANDOMIZE_MIN_GAIN, SEARCH_BUDGET, _fingerprint, _mixtures, _shared_threshold,  # noqa: F401
                      _solve, cross_fit, fit_thresholds, frontier)
from .held_out import MAX_FOLDS, MEASURES, MIN_FOLDS, REPLICATES, CrossFit, fold_rows, target_measures
from .inputs import (  # noqa: F401  (the private names stay importable from here)
                     DEFAULT_TOLERANCE, DEFAULT_TOLERANCES, FOUR_FIFTHS, LINEAR_TARGETS, MAX_GROUPS, OBJECTIVES,
                     ROUNDING, TARGETS, BoolArray, FloatArray, InfeasibleTarget, IntArray, _check_options, _groups,
                     _labels, _Rows, _rows, _scores, _vector, split_rows,
                     )
from .rule import (  # noqa: F401
                   MAX_OUTSIDE_SHARE, RULE_FORMAT, RULE_VERSION, SCORE_TRANSFORMS, RuleFileError, ThresholdRule,
                   _disparities, _group_counts, _measure, _measure_counts, _min_di, _table_counts, disparity,
                   transform_scores,
                   )
from .search import (  # noqa: F401
                     _admissible, _Band, _bands, _choose, _Curves, _curves, _feasible_positions, _Mixed,
                     _objective_values, _randomized_lp, _randomized_roc_gain, _randomized_total, _roc_hull, _search,
                     _smallest_tolerance, _sparse_table, _totals, _upper_hull, objective_value,
                     )

__all__ = ["RULE_FORMAT", "RULE_VERSION", "SCORE_TRANSFORMS", "MAX_OUTSIDE_SHARE", "transform_scores", "RuleFileError",
           "RANDOMIZE_MIN_GAIN", "MIN_FOLDS", "MAX_FOLDS", "REPLICATES", "MEASURES", "CrossFit", "cross_fit",
           "fold_rows", "target_measures", "FairThresholds", "TARGETS", "LINEAR_TARGETS", "OBJECTIVES", "MAX_GROUPS",
           "FOUR_FIFTHS", "DEFAULT_TOLERANCE", "DEFAULT_TOLERANCES", "ROUNDING", "SEARCH_BUDGET", "InfeasibleTarget",
           "ThresholdRule", "fit_thresholds", "frontier", "disparity", "objective_value", "split_rows"]


def __getattr__(name: str) -> Any:
    """:class:`FairThresholds` on first use, so that importing the library does not import scikit-learn."""
    if name == "FairThresholds":
        from .estimator import FairThresholds
        return FairThresholds
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
