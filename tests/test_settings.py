"""The verdict settings travel as one object: every function that judges takes a VerdictSettings where it took the
tolerance, alpha and adjustment, with the same result as the three values given apart."""

from __future__ import annotations

import pandas as pd
import pytest

from fairness_core import ConfusionMatrix as CM, regulatory
from fairness_core.audit import Audit
from fairness_core.store import AuditStore
from fairness_core.trend import series_changes
from fairness_core.verdicts import VerdictSettings

SETTINGS = VerdictSettings(tolerance=0.03, alpha=0.1, adjust="bh")


def _audit(shift: int = 0) -> Audit:
    return Audit({"a": CM(300, 20 + shift, 90, 590), "b": CM(250, 120, 40 + shift, 590), "c": CM(80, 30, 20, 170)},
                 positive_is="benefit")


def test_ll144_summary_takes_the_settings_in_one_object() -> None:
    one = regulatory.ll144_summary(_audit(), tolerance=SETTINGS)
    apart = regulatory.ll144_summary(_audit(), tolerance=0.03, alpha=0.1, adjust="bh")
    pd.testing.assert_frame_equal(one, apart)
    assert (one.attrs["alpha"], one.attrs["tolerance"], one.attrs["adjust"]) == (0.1, 0.03, "bh")
    default = regulatory.ll144_summary(_audit())
    assert default.attrs["alpha"] == 0.05


def test_series_changes_takes_the_settings_in_one_object() -> None:
    history = [("2026-Q1", _audit()), ("2026-Q2", _audit(40))]
    one, apart = series_changes(history, SETTINGS), series_changes(history, 0.03, 0.1, "bh")
    pd.testing.assert_frame_equal(one.changes, apart.changes)
    pd.testing.assert_frame_equal(one.verdicts, apart.verdicts)


def test_a_saved_audit_keeps_the_settings_object_it_was_saved_with(tmp_path) -> None:
    store = AuditStore(f"sqlite:///{tmp_path / 'a.db'}")
    audit_id = store.save(_audit(), "q3", tolerance=SETTINGS)
    assert store.load(audit_id).settings == SETTINGS
    pd.testing.assert_frame_equal(store.load(audit_id).verdicts().table, _audit().verdicts(SETTINGS).table)
    with pytest.raises(ValueError, match="alpha"):
        VerdictSettings(alpha=1.5)
