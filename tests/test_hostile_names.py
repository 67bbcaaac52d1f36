"""Hostile group names, sources and notes are shown as text everywhere: no markdown, links, images,
LaTeX or styled spans, in the app (every page, AppTest), in figures, and in the report in Chromium."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairness_core import ConfusionMatrix as CM
from fairness_core import plots, report
from fairness_core.audit import Audit
from app_helpers import page_with_audit

APP = str(Path(__file__).resolve().parents[1] / "app.py")
LINK = '<a href="https://evil.example/steal">click me</a>'
STYLED = '<span style="color:#123456">styled</span>'
IMAGE = "![pixel](https://evil.example/pixel.png)"
NAMES = [LINK, STYLED, IMAGE, "$x^2$ :red[alarm] **bold**", "plain"]
RAW_TOKENS = ("<a href", "<span style", "![pixel](", ":red[alarm]", "**bold**", "$x^2$")


def hostile_audit() -> Audit:
    cms = [CM(300, 20, 90, 590), CM(250, 120, 40, 590), CM(3, 1, 1, 2), CM(40, 10, 12, 60), CM(500, 60, 60, 500)]
    return Audit(dict(zip(NAMES, cms)), source=f"upload {IMAGE}.csv", notes=(f"note with {LINK}",),
                 positive_outcome=f"label {STYLED}")


def text_elements(at: AppTest) -> list[str]:
    out = []
    for kind in ("markdown", "caption", "error", "warning", "info", "success", "subheader", "header", "title"):
        out += [str(e.value) for e in getattr(at, kind)]
    return out


@pytest.mark.parametrize("page", ["app.py", "pages/1_Upload.py", "pages/2_Bias_Audit.py", "pages/3_Sample_Size_Explorer.py",
                                  "pages/4_Smoothing.py"])
def test_every_page_shows_hostile_names_as_text(page):
    at = page_with_audit(hostile_audit(), page)
    assert not at.exception, at.exception
    shown = text_elements(at)
    assert any("evil" in t for t in shown)  # the names do reach the page ...
    for text in shown:  # ... but only escaped: no token without a backslash in front of it
        for token in RAW_TOKENS:
            assert not re.search(r"(?<!\\)" + re.escape(token), text), (page, token, text[:200])


def test_figures_escape_hostile_names_in_labels_hover_and_titles():
    audit = hostile_audit()
    v = audit.verdicts()
    figures = [plots.pairwise_heatmap(audit, "OFI", v), plots.disparate_impact_heatmap(audit, v),
               plots.benefit_chart(audit), plots.group_metric_chart(audit, "TPR"), plots.ofi_di_scatter(v),
               plots.ofi_forest(v, LINK)]
    for fig in figures:
        js = fig.to_json()
        assert "<a href" not in js and "<span style" not in js and "\\u003ca href" not in js
        assert "evil.example" in js  # still there, as text


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
def test_report_in_chromium_has_no_hostile_link_or_styled_span(tmp_path):
    from playwright.sync_api import sync_playwright

    path = tmp_path / "report.html"
    path.write_text(report.build(hostile_audit()).html(), encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"),
                                    args=["--headless", "--no-sandbox", "--disable-gpu",
                                          "--disable-background-networking"])
        page = browser.new_page()
        page.goto(path.as_uri())
        page.wait_for_selector(".js-plotly-plot", timeout=30000)
        page.wait_for_timeout(1500)
        assert page.locator("a[href*='evil.example']").count() == 0
        assert page.locator("[style*='#123456'], [style*='rgb(18, 52, 86)']").count() == 0
        assert page.locator("img[src*='evil.example']").count() == 0
        assert "click me" in page.content()  # the name is there, as text
        browser.close()
