"""Saved audits of amounts and of classes (issue 53): each kind saves and loads as itself, bit for bit, with the
settings it was judged at; the migration from schema 3 runs on a database the schema-3 code wrote
(tests/data/store_v3.sql) and its audits, shares and links read as before."""

from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairness_core import ConfusionMatrix as CM
from fairness_core import store as store_mod
from fairness_core.audit import Audit
from fairness_core.store import local_user as U
from fairness_core.continuous import ContinuousAudit
from fairness_core.multiclass import MulticlassAudit
from fairness_core.store import AuditStore
from test_store import new_url, url  # noqa: F401 - fixtures: SQLite and PostgreSQL stores

V3 = Path(__file__).parent / "data" / "store_v3.sql"


def pay_audit(positive_is: str | None = "benefit") -> ContinuousAudit:
    rng = np.random.default_rng(3)
    race = np.repeat(["<b>Black</b>", "White"], [60, 90])
    sex = np.tile(["F", "M"], 75)
    salary = rng.lognormal(10.8, 0.3, 150)
    recommended = salary * rng.lognormal(0, 0.05, 150) - np.where(sex == "F", 2000, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return ContinuousAudit.from_predictions(salary, recommended, {"race": race, "sex": sex}, positive_is)


def tiers_audit(outcomes: bool = True, order: bool = True) -> MulticlassAudit:
    rng = np.random.default_rng(5)
    tiers = np.array(["Low", "Medium", "High"])
    y, p = tiers[rng.integers(0, 3, 300)], tiers[rng.integers(0, 3, 300)]
    group = np.where(rng.random(300) < 0.4, "=cmd|' /C calc'!A0", "b")
    kw = dict(order=["Low", "Medium", "High"], favourable="Low") if order else dict(favourable=["Low"])
    if not outcomes:
        return MulticlassAudit.from_decisions(p, group, **kw)
    return MulticlassAudit.from_predictions(y, p, group, **kw)


def same_classes(a: MulticlassAudit, b: MulticlassAudit) -> bool:
    """MulticlassAudit has no ==: every field compared."""
    return (np.array_equal(a.counts, b.counts) and a.counts.dtype == b.counts.dtype
            and all(getattr(a, f) == getattr(b, f) for f in ("groups", "classes", "ordered", "favourable", "outcomes",
                                                             "group_columns", "unknown", "source", "notes"))
            and dict(a.provenance) == dict(b.provenance) and a.group_values == b.group_values)


def test_an_amount_audit_round_trips_bit_for_bit_with_its_unit_and_settings(url):  # noqa: F811
    audit = pay_audit()
    s = AuditStore(url)
    audit_id = s.save(audit, "pay <i>2026</i>", model="pay", period="2026-Q1", tolerance=1000, alpha=0.1,
                      adjust="bh", unit="$")
    saved = s.load(audit_id)
    assert saved.kind == "continuous" and isinstance(saved.audit, ContinuousAudit)
    assert saved.audit == audit                                    # every group's moments, exactly
    pd.testing.assert_frame_equal(saved.audit.stats(), audit.stats(), check_exact=True)
    assert saved.audit.group_values == audit.group_values and saved.audit.attributes == ("race", "sex")
    assert (saved.unit, saved.band, saved.tolerance, saved.alpha, saved.adjust) == ("$", (0.8, 1.25), 1000, 0.1, "bh")
    assert saved.settings.tolerance == 1000 and saved.settings.amounts
    want = audit.verdicts(1000, alpha=0.1, adjust="bh", unit="$")
    pd.testing.assert_frame_equal(pd.DataFrame(saved.verdicts()), pd.DataFrame(want), check_exact=True)
    assert "$" in saved.verdicts().loc[0, "explanation"]
    pd.testing.assert_frame_equal(saved.marginal("sex").by_group(), audit.marginal("sex").by_group())
    listed = s.list()
    assert listed[["kind", "groups", "n"]].values.tolist() == [["continuous", 4, 150]]
    s.close()


def test_an_undeclared_direction_reloads_undeclared_and_without_a_warning(url):  # noqa: F811
    audit = pay_audit(None)
    s = AuditStore(url)
    audit_id = s.save(audit, "undeclared", tolerance=500, unit="$")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = s.load(audit_id).audit
    assert again == audit and again.positive_is is None and "assumed" in again.direction
    s.close()


@pytest.mark.parametrize("outcomes, order", [(True, True), (False, True), (True, False)],
                         ids=["tiers", "decisions alone", "unordered"])
def test_a_class_audit_round_trips_and_judges_as_before(url, outcomes, order):  # noqa: F811
    audit = tiers_audit(outcomes, order)
    s = AuditStore(url)
    saved = s.load(s.save(audit, "tiers", model="risk", period="2026-Q1", tolerance=0.1))
    assert saved.kind == "multiclass" and same_classes(saved.audit, audit)
    assert saved.has_outcomes == outcomes and saved.audit.ordered == order
    if outcomes and order:
        want = audit.verdicts(0.1)
    else:
        want = audit.impact_ratios()
    pd.testing.assert_frame_equal(pd.DataFrame(saved.verdicts()), pd.DataFrame(want), check_exact=True)
    assert s.list()[["kind", "n"]].values.tolist() == [["multiclass", 300]]
    s.close()


def test_each_kind_keeps_its_own_tolerance_range(url):  # noqa: F811
    s = AuditStore(url)
    s.save(pay_audit(), "dollars", tolerance=2500.0, unit="$")            # amounts: any finite amount above 0
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="finite amount above 0"):
            s.save(pay_audit(), "dollars", tolerance=bad)
    binary = Audit({"a": CM(1, 2, 3, 4), "b": CM(4, 3, 2, 1)})
    with pytest.raises(ValueError, match=r"in \(0, 2\)"):
        s.save(binary, "share", tolerance=3)
    with pytest.raises(ValueError, match=r"in \(0, 2\)"):
        s.save(tiers_audit(), "tiers", tolerance=5)
    with pytest.raises(ValueError, match="not one of amounts"):
        s.save(binary, "share", unit="$")
    with pytest.raises(ValueError, match="expected an Audit, a ContinuousAudit or a MulticlassAudit"):
        s.save({"a": 1}, "nothing")
    assert len(s.list()) == 1
    s.close()


def _v3_store(tmp_path: Path) -> str:
    path = tmp_path / "v3.db"
    with sqlite3.connect(path) as raw:
        raw.executescript(V3.read_text(encoding="utf-8"))
    return f"sqlite:///{path}"


#: The audits tests/data/store_v3.sql holds, as the script that wrote it made them (its header names the commit).
V3_AUDITS = {
    "uGH_tUK4ruZOhLMKfGrgCQ": (Audit(
        {"Black & Female": CM(30, 5, 8, 57), "White & Male": CM(40, 6, 4, 50), "<b>Asian</b> & Female": CM(20, 3, 3, 24)},
        source="loans.csv", notes=("n < 30: wide CIs",), positive_outcome="approved", group_columns=("race", "sex"),
        positive_is="benefit", group_values={"Black & Female": ("Black", "Female"), "White & Male": ("White", "Male"),
                                             "<b>Asian</b> & Female": ("<b>Asian</b>", "Female")},
        provenance={"label": "y", "threshold": "0.5"}), (0.03, 0.01, "bh")),
    "wYbcDneLD7buaAnMsQellw": (Audit({"a": CM(300, 20, 90, 590), "b": CM(250, 120, 40, 590)}, positive_is="harm",
                                     source="q2.csv"), (0.05, 0.05, "holm")),
    "i84CD6k70Ng1cmyVVue90w": (Audit.from_decisions([1, 0, 1, 1, 0, 0, 1, 0],
                                                    ["F", "F", "M", "M", "M", None, "Decline to state", "F"],
                                                    positive_is="benefit"), (0.05, 0.05, "holm")),
}


def test_a_schema_3_store_written_by_the_previous_code_migrates_and_reads_the_same(tmp_path):
    s = AuditStore(_v3_store(tmp_path))
    assert s.schema_version() == store_mod.SCHEMA_VERSION == 5
    for audit_id, (audit, (tolerance, alpha, adjust)) in V3_AUDITS.items():
        owner = U("ana@example.org") if audit_id != "i84CD6k70Ng1cmyVVue90w" else store_mod.LOCAL_USER
        saved = s.load(audit_id, user=owner)
        assert saved.kind == "binary" and saved.audit == audit and saved.audit.fingerprint == audit.fingerprint
        assert saved.audit.group_values == audit.group_values and saved.audit.has_outcomes == audit.has_outcomes
        assert (saved.tolerance, saved.alpha, saved.adjust) == (tolerance, alpha, adjust)
        pd.testing.assert_frame_equal(pd.DataFrame(saved.verdicts()),
                                      pd.DataFrame(audit.verdicts(tolerance, alpha=alpha, adjust=adjust)))
    assert s.load("uGH_tUK4ruZOhLMKfGrgCQ", user=U("bob@example.org")).access == "shared"     # the share holds
    links = s.links("wYbcDneLD7buaAnMsQellw", user=U("ana@example.org"))
    assert len(links) == 1 and bool(links["active"].iloc[0])                               # the link holds
    assert [h.period for h in s.history("credit", user=U("ana@example.org"))] == ["2026-Q1", "2026-Q2"]
    assert set(s.list(user=U("ana@example.org"))["kind"]) == {"binary"}
    migrated = s.events(limit=None)
    assert migrated["detail"].str.startswith("schema 3 to 4: 3 saved audits").sum() == 1
    new = s.save(pay_audit(), "pay", model="credit", period="2026-Q3", user=U("ana@example.org"), tolerance=800,
                 unit="$")
    assert s.load(new, user=U("ana@example.org")).audit == pay_audit()
    s.close()
    again = AuditStore(s.url.render_as_string())
    assert (again.events(limit=None)["action"] == "migrate").sum() == 2          # 3 → 4 and 4 → 5, neither twice
    again.close()
