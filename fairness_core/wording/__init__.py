"""The wording floor: every sentence about a result (verdict readings, the three questions, decisions alone,
the scores' reading). It imports statistics and the ground floor; the audit objects (``fairness_core.audit``,
``compare``, ``results``, ``trend``, ``regulatory``, the modules at the package root) stand on it, so that a verdict table
can read itself.
"""
