"""The Bias Audit page's report for amounts and for categories is the kind's own report (report_kinds), built from
the page's settings: its JSON's verdicts are the library's on the same audit."""

from __future__ import annotations

import json
import zipfile
from io import BytesIO

import pytest

from app_helpers import captured  # noqa: F401 - a fixture, used by name
from fairness_core.datasets import load_kind_demo
from test_app_amounts import with_demo

AUDIT = "pages/2_Bias_Audit.py"


@pytest.mark.parametrize("key", ["pay_model", "compas_tiers"])
def test_the_kinds_report_downloads_hold_the_pages_audit(captured, key):
    at = with_demo(key)
    at.switch_page(AUDIT).run()
    assert not at.exception, at.exception
    html = captured["fairness_audit_report.html"]()
    report = json.loads(captured["fairness_audit_report.json"]())
    tables = zipfile.ZipFile(BytesIO(captured["fairness_audit_tables.zip"]()))
    assert "<html" in (html.decode() if isinstance(html, bytes) else html).lower()
    assert "contents.csv" in tables.namelist() and len(tables.namelist()) > 2
    audit = load_kind_demo(key)
    dumped = json.dumps(report, ensure_ascii=False)
    assert all(str(g) in dumped for g in audit.groups), (audit.groups, dumped[:300])
