"""The report answers the three questions once, when it is built: :meth:`Report.summary` (and the HTML and JSON that
read it) takes the answers and the findings the report already holds, and they equal what the verdicts say
afresh."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fairness_core.results as results
from fairness_core import datasets, report
from fairness_core.io import audit_from_predictions
from fairness_core.wording.reading import verdict_findings


@pytest.fixture
def answered(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the calls of the answer function every Verdicts.three_questions goes through."""
    calls: list[int] = []
    original = results.three_questions

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(results, "three_questions", counted)
    return calls


def _two_attributes() -> "report.Report":
    rng = np.random.default_rng(7)
    n = 1200
    groups = pd.DataFrame({"sex": rng.choice(["f", "m"], n), "race": rng.choice(["a", "b", "c"], n)})
    y = rng.integers(0, 2, n)
    pred = np.where(rng.random(n) < 0.8, y, 1 - y)
    pred[(groups["race"] == "c").to_numpy() & (rng.random(n) < 0.3)] = 1
    return audit_from_predictions(y, pred, groups, positive_is="benefit")


@pytest.mark.parametrize("kind", ["outcomes", "decisions alone"])
def test_the_summary_answers_nothing_again(answered: list[int], kind: str) -> None:
    audit = _two_attributes() if kind == "outcomes" else datasets.load_demo("hr_screening")
    assert len(audit.attributes) == 2 and audit.has_outcomes == (kind == "outcomes")
    r = report.build(audit)
    built = len(answered)
    assert built == 1 + len(audit.attributes)          # the groups as loaded, then each attribute alone
    summary = r.summary()
    r.to_json(), r.html()
    assert len(answered) == built                       # read, not computed again

    # equal by construction to what the verdicts say afresh
    v = r.tables["verdicts"]
    assert summary["findings"] == v.findings() and summary["three questions"] == r.questions[""]
    if kind == "decisions alone":
        for a in audit.attributes:
            alone = r.tables[f"verdicts by {a} alone"]
            assert summary["each attribute alone"][a]["findings"] == alone.findings() == verdict_findings(alone)
            assert summary["each attribute alone"][a]["four-fifths rule"] == \
                alone.three_questions()["four_fifths"]["text"]
    else:
        assert summary["three questions"] == v.three_questions()["text"]
