"""The statistics floor: every formula and every test, on plain counts and arrays.

Confusion matrices and their metrics, bias measures, exact distributions and holes, the MATCH test, smoothing,
inference (intervals, p-values, multiplicity), verdicts, entropy, stability, scores, mitigation by thresholds.
It imports only the ground floor (``fairness_core.common``). Its words are labels (an interval's level, a
method's name) and the reasons a number is undefined; the sentences that read a result are the floor above
(``fairness_core.wording``).
"""
