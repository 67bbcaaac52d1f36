"""The deprecated spellings this release still accepts, in one place, and the warning they raise.

Each is accepted with a :class:`FairnessDeprecationWarning` naming its replacement and is removed in
:data:`REMOVED_IN`. The project's own code and tests never use them (the suite turns this warning into an
error); :data:`KEPT` lists them.
"""

from __future__ import annotations

#: The release that removes every spelling in :data:`KEPT`.
REMOVED_IN = "0.2.0"

#: Every deprecated spelling still accepted: where, and what to write instead.
KEPT: dict[str, str] = {
    "flip= (Audit.from_predictions, io.cms_from_predictions, io.cms_from_table, the CLI's --flip)":
        "positive_is='harm' (or 'benefit')",
    "level= / levels= (inference.ofi_test, di_interval, ofi_arrays, di_arrays, compare.paired_interval, "
    "trend.ofi_changes)": "alpha = 1 − level",
    "the dict keys of inference.ofi_arrays / di_arrays ('ci_low_0.95', …)": ".ci_low, .ci_high, .bounds(alpha / 2)",
    "reference=None (Audit.verdicts, difference, ratio, match_table, reference_for)":
        "fairness_core.vocabulary.Reference.PAIRS / RANGE / REST, or a group's name",
    "adjust=True / False (Audit.match_table)": "adjust='holm' / 'none'",
    "match.test(reference='sample' / 'population')": "reference_is='sample' / 'population'",
    "a progress callback taking (step, total, …)": "one fairness_core.progress.Progress record per step",
    "AuditStore.save(saved_by=)": "user= (the saved audit's owner)",
}


class FairnessDeprecationWarning(DeprecationWarning):
    """A spelling of :data:`KEPT` was used; it is removed in :data:`REMOVED_IN`."""


__all__ = ["KEPT", "REMOVED_IN", "FairnessDeprecationWarning"]
