"""The statistics floor: every formula and every test, on plain counts and arrays.

Confusion matrices and their metrics, bias measures, exact distributions and holes, the MATCH test, smoothing,
inference (intervals, p-values, multiplicity), verdicts, entropy, stability, scores, mitigation by thresholds.
It imports only the ground floor (``fairness_core.common``) and says nothing in sentences: wording is the floor
above.
"""
