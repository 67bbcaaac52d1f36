"""What :meth:`fairness_core.audit.Audit.verdicts` returns: the verdict table with its settings and levels
(:class:`fairness_core.verdicts.VerdictTable`) and the audit it judged, so that its readings are methods —
``findings()``, ``three_questions()``, ``reading()`` — in the style of SciPy's result objects."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .wording.reading import three_questions, verdict_findings, verdict_reading
from .statistics.verdicts import VerdictLevels, VerdictSettings, VerdictTable


class Verdicts(VerdictTable):
    """The verdict of every pair of groups of ``audit``: a DataFrame (usable wherever one was; ``table`` is the plain
    one) with ``settings`` (:class:`~fairness_core.verdicts.VerdictSettings`), ``levels``
    (:class:`~fairness_core.verdicts.VerdictLevels`), ``reference``, ``outcomes`` and ``audit``, and the readings.

    >>> from fairness_core import ConfusionMatrix as CM
    >>> from fairness_core.audit import Audit
    >>> v = Audit({"a": CM(300, 20, 90, 590), "b": CM(250, 120, 40, 590)}).verdicts(VerdictSettings(0.05))
    >>> v.settings.tolerance, v["verdict"].tolist(), v.findings().startswith("Of 1 group pairs: 1 algorithmic bias")
    (0.05, ['algorithmic bias'], True)
    >>> sorted(v.three_questions()["text"])[0]
    'Equal opportunity (error rates)'
    """

    _metadata = [*VerdictTable._metadata, "audit"]

    @property
    def _constructor(self):  # type: ignore[no-untyped-def]
        return Verdicts

    @classmethod
    def judged(cls, table: VerdictTable, audit: Any) -> "Verdicts":
        """``table`` (with its settings and levels) as the verdicts of ``audit``."""
        out = cls(table)
        for name in VerdictTable._metadata:
            setattr(out, name, getattr(table, name))
        out.audit = audit
        return out

    def three_questions(self) -> dict[str, Any]:
        """The three questions an audit is judged by, answered (:func:`fairness_core.reading.three_questions`)."""
        return three_questions(self.audit, self)

    def findings(self, max_items: int = 3) -> str:
        """What the verdicts say in plain words, agreeing with the three answers
        (:func:`fairness_core.reading.verdict_findings`)."""
        return verdict_findings(self, max_items, answers=self.three_questions() if self.outcomes else None)

    def reading(self, max_rows: int | None = None) -> pd.DataFrame:
        """The table as people read it, findings first (:func:`fairness_core.reading.verdict_reading`)."""
        return verdict_reading(self, max_rows)


__all__ = ["Verdicts", "VerdictLevels", "VerdictSettings", "VerdictTable"]
