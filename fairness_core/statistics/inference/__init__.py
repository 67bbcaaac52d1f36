"""Uncertainty of a pairwise verdict: intervals and tests for OFI and DI when both groups are samples.

Every function takes ``alpha``, the error rate, in (0, 0.5) (an interval at confidence 1 − alpha;
:func:`fairness_core.vocabulary.check_alpha` refuses anything else); results say their ``level``, 1 − alpha. The parts, by job: :mod:`.intervals` (one
pair's test and interval and arrays of pairs, typed), :mod:`.pairs` (many pairs at any level or null value), :mod:`.limits`
(per-group limits and the dual grid), :mod:`.multiplicity` (adjusted p-values), :mod:`.common`.

Per individual, d = ŷ − y is −1 (a false negative), 0 (TP or TN) or +1 (a false
positive), so a group's marginal benefit B = (FP − FN)/n is the mean of d and
OFI = B_i − B_j estimates Δ = (π_FP − π_FN)_i − (π_FP − π_FN)_j (docs/methods.md).
d has variance v = π_FP + π_FN − (π_FP − π_FN)² per individual.

OFI methods (:data:`OFI_METHODS`), judged by their *exact* coverage (every outcome of both
groups' multinomials enumerated; ``bench/inference_coverage.py`` and ``docs/methods.md``):

``"score"``
    MOVER-D (Newcombe's method of variance estimates recovery) for B_i − B_j from each
    group's score limits for B = π_FP − π_FN. B is a difference of two cells of one
    multinomial — the paired-difference structure of Tango's score interval — so each
    group's limits invert Tango's score test (variance at the constrained maximum-likelihood
    estimate), with a continuity correction of :data:`SCORE_CC` counts. Small groups without
    errors get the width their size allows (0 errors in 40 rows: B within about ±0.09), not
    a width borrowed from a pseudo-count. Exact coverage ≥ 93 % at 95 % with each one-sided
    miss ≤ 3.5 % over a grid of groups from 5 to 5,000 rows with rare, frequent, one-kind and
    no errors.
``"adjusted"``
    Pseudo-counts of ½ false positive, ½ false negative and one correct prediction per group
    (Agresti–Min's paired-difference adjustment), then Welch's t. Kept for reference: its
    exact coverage falls to 0.87 for a small group with rare errors of one kind against an
    error-free group.
``"wald"``
    The asymptotic interval B̂_i − B̂_j ± z·sqrt(v̂_i/n_i + v̂_j/n_j).
``"permutation"``
    The exact conditional p-value: given the pooled counts of FP, FN and correct
    predictions, group i's counts are multivariate hypergeometric under the *strong*
    null that both groups share one outcome distribution. Exact for that null (tests
    compare it with brute-force enumeration of every assignment) but not for the weak
    null Δ = 0 with different spreads, where its size can be far above α; the interval
    is the score one. Offered for reference, never chosen by ``"auto"``.
``"auto"``
    ``"score"`` for every pair.

Every p-value is the dual of its interval, at every level and null value (:func:`ofi_pairs`,
:func:`di_pairs`): p < γ exactly when the bound at one-sided level 1 − γ excludes the null, so a
verdict and the interval shown beside it never disagree.

DI methods (:data:`DI_METHODS`) for the ratio of selection rates PPR_i / PPR_j:

``"score"``
    Miettinen–Nurminen score interval for a ratio of two independent proportions
    (the score test inverted; variance with the N/(N − 1) correction), and the score
    test of DI = 1; identical to statsmodels' ``confint_proportions_2indep(...,
    method="score", compare="ratio")``, vectorized here over all pairs.
``"exact"``
    MOVER-R (Donner & Zou) built from Clopper–Pearson limits of each rate, and as its
    test the dual of that interval (p < α exactly when the interval excludes the null),
    so the test and the interval are one procedure. Conservative; the score interval
    covers only 90 % at n = 5 when a rate is near 0.
``"auto"``
    ``"score"`` when both groups have at least :data:`SMALL_N_DI` rows, else ``"exact"``.

>>> from fairness_core import ConfusionMatrix, inference
>>> r = inference.ofi_test(ConfusionMatrix(5, 1, 9, 20), ConfusionMatrix(30, 12, 4, 60))
>>> round(r.estimate, 3), r.method, r.ci_low < r.estimate < r.ci_high
(0.304, 'score', True)
>>> d = inference.di_interval(ConfusionMatrix(5, 1, 9, 20), ConfusionMatrix(30, 12, 4, 60))
>>> round(d.estimate, 3), d.method
(1.247, 'score')
"""

from __future__ import annotations

from .common import (ADJUSTED_LABEL, ADJUSTMENTS, DI_METHODS, MAX_PERMUTATION_CELLS, OFI_METHODS, OFI_RANGE,
                     PSEUDO_CORRECT, PSEUDO_FN, PSEUDO_FP, SMALL_N_DI, FloatArray, _check_method,
                     _check_pair, _log_comb, _round_df, _t_ppf)
from .limits import (_K, _Z_GRID, P_FLOOR, SCORE_CC, Z_MAX, Z_STEP, _b_limits, _cp_limits, _group_index,
                     _GridBounds, _Limits, _mn_z, _mover_ratio, _score_bounds, _t_side, _tango_var,
                     cell_difference_limits)
from .multiplicity import adjust_p_values, minimum_detectable_ofi
from .pairs import DIPairs, OFIPairs, _ofi_parts, di_methods_auto, di_pairs, ofi_pairs
from .intervals import (DIArrays, DIResult, OFIArrays, OFIResult, di_arrays, di_interval, di_within, ofi_arrays,
                      ofi_test, permutation_p_value)

__all__ = ["OFI_METHODS", "DI_METHODS", "ADJUSTMENTS", "ADJUSTED_LABEL", "SMALL_N_DI", "OFI_RANGE", "PSEUDO_FP",
           "PSEUDO_FN", "PSEUDO_CORRECT", "MAX_PERMUTATION_CELLS", "Z_STEP", "Z_MAX", "P_FLOOR", "SCORE_CC",
           "OFIResult", "DIResult", "OFIArrays", "DIArrays", "OFIPairs", "DIPairs", "ofi_test", "di_interval",
           "ofi_arrays", "di_arrays", "di_within", "ofi_pairs", "di_pairs", "di_methods_auto",
           "permutation_p_value", "cell_difference_limits", "adjust_p_values", "minimum_detectable_ofi"]
