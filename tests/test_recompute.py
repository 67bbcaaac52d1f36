"""A change of one setting recomputes only what depends on it (one server, several analysts): the Bias Audit
page reads everything through caches keyed by the data and the settings each part depends on, so a new
tolerance reruns the verdicts and what is drawn from them, never the single-group tables, the benefit chart,
the other comparisons or the one-vs-reference table; and a second view recomputes nothing."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairness_core import ConfusionMatrix as CM
from fairness_core import plots
from fairness_core.audit import Audit

APP = str(Path(__file__).resolve().parents[1] / "app.py")


@pytest.fixture
def calls(monkeypatch):  # type: ignore[no-untyped-def]
    """Counts calls of the library functions behind each cached part of the page."""
    counted: Counter[str] = Counter()

    def count(owner, name):  # type: ignore[no-untyped-def]
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            counted[name] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, wrapper)

    for name in ("verdicts", "versus_reference", "undefined_reasons"):
        count(Audit, name)
    for name in ("benefit_chart", "group_metric_chart", "ofi_di_scatter"):
        count(plots, name)
    return counted


def test_a_new_tolerance_reruns_the_verdicts_only_and_a_second_view_nothing(calls):
    # counts no other test uses, so that no cache entry exists yet
    audit = Audit({"north": CM(311, 27, 95, 567), "south": CM(240, 131, 38, 591), "east": CM(97, 13, 25, 165)},
                  positive_is="benefit", source="recompute test")
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["audit"], at.session_state["demo_key"] = audit, None
    at.run()
    at.switch_page("pages/2_Bias_Audit.py").run()
    assert not at.exception
    first = Counter(calls)
    assert first["verdicts"] >= 1 and first["undefined_reasons"] == first["benefit_chart"] == 1

    at.run()                                          # the same view again: everything from the caches
    assert calls == first

    at.slider(key="ofi-tol").set_value(0.1).run()     # a new tolerance
    assert not at.exception
    changed = {k: calls[k] - first[k] for k in calls}
    # what depends on it, once more each: the verdicts (both orientations the page reads, every pair and against
    # the reference group, as on the first view) and the figures drawn from them
    # (Home computed a third, for its tiles, on the first view)
    assert changed["verdicts"] == 2 and changed["ofi_di_scatter"] == 1
    assert changed["benefit_chart"] == changed["versus_reference"] == 0
    assert changed["undefined_reasons"] == changed["group_metric_chart"] == 0

    at.slider(key="ofi-tol").set_value(0.05).run()    # back: the first setting's entries are still there
    assert calls["verdicts"] - first["verdicts"] == 2
