"""Browser journeys across pages (a real Streamlit server and Debian's Chromium driven by Playwright): three
sessions at once, a journalist's audit of the published COMPAS file, hostile group names, compare and mitigate.
Skipped only outside CI when Chromium is absent. Every wait names its condition and says what it saw when it
gives up (tests/browser_helpers.py)."""

import re

import pytest

from browser_helpers import (ARTIFACTS, IDLE, ROOT, WAIT, choose, declare, download, press, skip_without_chromium,
                             upload_cm_file)
from browser_helpers import browser, context, open_page, page, server  # noqa: F401 - fixtures, used by name

skip_without_chromium()
pytestmark = pytest.mark.browser   # drives the app in Chromium: run first (tests/conftest.py)


def test_three_sessions_at_once_do_not_cross_talk(server, context, tmp_path):
    """Two sessions train (HydraGAN, PTN) while a third uploads its own data and audits it: three tabs, each a
    Streamlit session of its own (sessions in separate browsers are tests/test_isolation_browser.py's)."""
    gan, fc, auditor = (context.new_page() for _ in range(3))
    try:
        gan.goto(f"{server}/Synthetic_Data")
        fc.goto(f"{server}/Forecasting")
        auditor.goto(f"{server}/Upload")   # opened before the trainings start, which then run only while it works
        auditor.get_by_role("heading", name="Load data").wait_for(timeout=WAIT)
        # one after the other: two clicks at once reach the server in either order on a loaded machine
        press(gan, gan.get_by_role("button", name="Train and evaluate"))
        gan.get_by_text("Running ·").first.wait_for(timeout=WAIT)
        press(fc, fc.get_by_role("button", name="Train PTN"))
        # PyTorch trainings take turns (one process-wide random state): PTN waits in the queue
        fc.get_by_text("Queued, 0 ahead ·").first.wait_for(timeout=WAIT)
        upload_cm_file(auditor, tmp_path / "mine.csv", "group,TP,FN,FP,TN\nX,1,0,0,5\nY,7,0,1,10\n")
        press(auditor, auditor.get_by_role("button", name="Use these groups"))
        auditor.get_by_text("Data: mine.csv").wait_for(timeout=WAIT)
        auditor.get_by_test_id("stSidebar").get_by_role("link", name="Bias Audit").click()  # same session
        auditor.get_by_role("heading", name="Bias audit").wait_for(timeout=WAIT)
        auditor.get_by_text("Data: mine.csv").wait_for(timeout=WAIT)
        # Each training session still shows its own job, and its data is still the demo.
        # (the GAN first learns each numeric column's modes, a few seconds, then reports its steps)
        gan.get_by_text(re.compile(r"Running ·.*step")).first.wait_for(timeout=WAIT)
        gan_status = gan.get_by_text("Running ·").first.inner_text()
        fc_status = fc.get_by_text("Queued, 0 ahead ·").first.inner_text()
        assert "step" in gan_status and "generation" not in gan_status, gan_status  # the GAN's own job
        assert "PTN on" in fc_status and "PTN" not in gan_status, fc_status
        assert gan.get_by_text("Data: mine.csv").count() == 0
        for pg in (gan, fc):   # a running training and a queued one: each cancels
            pg.get_by_role("button", name="Cancel").click()
            pg.get_by_text("Cancelled. Nothing from this run is used").wait_for(timeout=WAIT)
            assert pg.locator("[data-testid='stException']").count() == 0
        gan.get_by_test_id("stSidebar").get_by_role("link", name="Bias Audit").click()  # same session
        gan.get_by_text("Data: COMPAS").wait_for(timeout=WAIT)
        assert gan.get_by_text("mine.csv").count() == 0
    except Exception:
        ARTIFACTS.mkdir(exist_ok=True)
        for name, pg in (("gan", gan), ("forecasting", fc), ("auditor", auditor)):
            pg.screenshot(path=str(ARTIFACTS / f"three_sessions_{name}.png"), full_page=True)
        raise
    finally:
        for pg in (gan, fc, auditor):
            pg.close()


def test_a_journalists_audit_of_the_published_compas_file(page, tmp_path):
    """ProPublica's file as published: upload it, declare that 'high risk' (decile 5 or more) is a harm, audit
    race and sex, read each attribute and the intersections, the four-fifths and error-rate findings, download
    the report with every field a reviewer files, reload and keep the data."""
    import gzip

    path = tmp_path / "compas-scores-two-years.csv"
    path.write_bytes(gzip.decompress((ROOT / "assets" / "compas-scores-two-years.csv.gz").read_bytes()))
    page.get_by_role("tab", name="Row-level predictions").click()
    page.locator("[data-testid='stFileUploader'] input[type='file']").nth(1).set_input_files(str(path))
    page.get_by_text("7,214 rows × 51 columns").wait_for(timeout=WAIT)   # 53 columns, two identical copies kept once
    page.wait_for_function(IDLE, timeout=WAIT)
    assert page.get_by_text("'decile_score' appears more than once with identical values").count() == 1
    choose(page, "Label column", "two_year_recid")
    threshold = page.get_by_label("Positive when score ≥")   # decile_score is a numeric score: always thresholded
    threshold.fill("5")
    threshold.press("Enter")
    page.get_by_text("a score of 5 or more is").wait_for(timeout=WAIT)   # the question about score ≥ 5
    page.wait_for_function(IDLE, timeout=WAIT)
    aggregate = page.get_by_role("button", name="Aggregate and use")
    assert aggregate.is_disabled()   # the direction is not assumed
    from playwright.sync_api import expect

    for _ in range(3):   # a rerun still drawing may redraw the question unanswered: answer until it holds
        declare(page, "harm")
        try:
            expect(aggregate).to_be_enabled(timeout=WAIT // 4)
            break
        except AssertionError:
            continue
    aggregate.click()
    page.get_by_text("Aggregated 7,214 rows into").wait_for(timeout=WAIT)
    # the page stays on its tab with the mapping as chosen
    assert page.get_by_role("tab", name="Row-level predictions").get_attribute("aria-selected") == "true"
    label_box = page.get_by_test_id("stSelectbox").filter(has_text="Label column").first
    assert "two_year_recid" in (label_box.text_content() or "") + label_box.locator("input").first.input_value()
    page.get_by_test_id("stMain").get_by_text("was declared a harm").first.wait_for(timeout=WAIT)

    page.get_by_test_id("stSidebar").get_by_role("link", name="Bias Audit").click()
    page.get_by_role("heading", name="Bias audit").wait_for(timeout=WAIT)
    page.wait_for_function(IDLE, timeout=WAIT)
    for question in ("Is the algorithm at fault (OFI)?", "The four-fifths rule", "Equal opportunity (error rates)"):
        page.get_by_text(question).first.wait_for(timeout=WAIT)
    # each attribute's answers come first on the page now; the intersections' panel may still be drawing
    page.get_by_text("fall below 0.8 by point estimate").first.wait_for(timeout=WAIT)
    page.get_by_text("the largest FNR gap").first.wait_for(timeout=WAIT)
    findings = page.get_by_test_id("stMain").locator("p", has_text="What the numbers say.").first
    assert " & " in findings.inner_text()          # the intersections first: "Male & African-American", …
    choose(page, "Groups", "by race alone")
    page.wait_for_function(IDLE, timeout=WAIT)
    page.get_by_text(re.compile(r"by race alone · 6 groups")).first.wait_for(timeout=WAIT)
    page.wait_for_function(IDLE, timeout=WAIT)
    findings = page.get_by_test_id("stMain").locator("p", has_text="What the numbers say.").first
    expect(findings).not_to_contain_text(" & ", timeout=WAIT)
    expect(findings).to_contain_text("African-American")

    page.get_by_text("Download the audit report").click()
    page.get_by_role("textbox", name="Model name and version").fill("COMPAS v2.0 as scored in Broward County")
    page.get_by_role("textbox", name="Model name and version").press("Enter")
    page.get_by_role("textbox", name="Period the data cover").fill("2013-01-01 to 2014-12-31")
    page.get_by_role("textbox", name="Period the data cover").press("Enter")
    # the condition: the run that keeps both fields has ended, and the page says the report will name them
    page.get_by_text("the period “2013-01-01 to 2014-12-31”").wait_for(timeout=WAIT)
    page.wait_for_function(IDLE, timeout=WAIT)
    assert page.get_by_text("the model “COMPAS v2.0 as scored in Broward County”").count() == 1
    report = download(page, page.get_by_role("button", name="Audit report (HTML)"), tmp_path / "report.html")
    html = report.read_text(encoding="utf-8")
    for field in ("COMPAS v2.0 as scored in Broward County", "2013-01-01 to 2014-12-31", "attribute audited",
                  "label column", "two_year_recid", "prediction column", "decile_score", "score &gt;= 5",
                  "declared a harm", "fairness-audit-workbench", "Equal opportunity", "The four-fifths rule"):
        assert field in html, field

    page.wait_for_function(IDLE, timeout=WAIT)   # no run under way when the page goes away
    page.reload()
    page.get_by_role("heading", name="Bias audit").wait_for(timeout=WAIT)
    page.get_by_text("Data: compas-scores-two-years.csv").first.wait_for(timeout=WAIT)
    assert page.get_by_text("upload is gone").count() == 0


def test_hostile_group_names_stay_text_in_streamlit_and_its_figures(page, tmp_path):
    """Issue 35: names holding a link, a styled span, a bare URL and an e-mail address, uploaded and chosen as the
    MATCH reference: Streamlit's markdown makes no autolink of them and Plotly draws no link or styled text in the
    titles (the MATCH distribution's names the reference) or ticks; the names are there, as text."""
    import csv
    import io

    link, styled = '<a href="https://evil.example/steal">click me</a>', '<span style="color:#123456">styled</span>'
    autolink = "mail a@evil.example or https://evil.example/x"
    rows = io.StringIO()
    writer = csv.writer(rows, lineterminator="\n")
    writer.writerow(["group", "TP", "FN", "FP", "TN"])
    writer.writerows([[link, 30, 5, 10, 55], [styled, 20, 10, 5, 65], [autolink, 3, 1, 1, 4], ["plain", 50, 10, 10, 80]])
    upload_cm_file(page, tmp_path / "hostile.csv", rows.getvalue())
    page.get_by_text("4 groups read from hostile.csv").wait_for(timeout=WAIT)
    press(page, page.get_by_role("button", name="Use these groups"))
    page.get_by_text("Data: hostile.csv").first.wait_for(timeout=WAIT)
    page.get_by_test_id("stSidebar").get_by_role("link", name="Sample-Size Explorer").click()
    page.get_by_text("What the numbers say.").wait_for(timeout=WAIT)
    page.get_by_test_id("stSelectbox").filter(has_text="Reference").first.click()
    page.keyboard.type("click me")
    page.get_by_role("option").filter(has_text="“" + link + "” (n = 100)").first.click()  # the group, quoted
    page.wait_for_function("[...document.querySelectorAll('.js-plotly-plot .gtitle')].some(t => "
                           "t.textContent.includes('drawn from “<a href'))", timeout=WAIT)
    main = page.get_by_test_id("stMain")
    assert main.locator("a[href*='evil.example'], a[href^='mailto:']").count() == 0  # no link, autolinks included
    assert main.locator(".js-plotly-plot svg a").count() == 0  # Plotly draws a name's <a href> as an SVG link
    assert main.locator("[style*='#123456'], [style*='rgb(18, 52, 86)']").count() == 0
    assert "a@evil.example" in main.inner_text()  # the findings name the groups, as text


def test_compare_two_candidates_mitigate_and_download_the_thresholds(open_page, tmp_path):
    """Issue 26's path: two candidates paired, a mitigated model fitted on COMPAS and added to the comparison,
    its thresholds downloaded as JSON."""
    import json

    from playwright.sync_api import expect

    pg = open_page("Compare_and_Mitigate")
    pg.get_by_role("heading", name="Compare and mitigate").wait_for(timeout=WAIT)
    pg.wait_for_function(IDLE, timeout=WAIT)
    choose(pg, "Second model", "logistic regression ≥ 0.5")
    pg.wait_for_function("[...document.querySelectorAll('.js-plotly-plot .gtitle')].some(t => t.textContent"
                         ".includes('− logistic regression'))", timeout=WAIT)
    main = pg.get_by_test_id("stMain")
    expect(main.get_by_text(re.compile(r"differences are significant|No difference between"))).to_be_visible()
    expect(main.get_by_text("On the held-out rows the largest |OFI| goes from")).to_be_visible(timeout=WAIT)
    press(pg, pg.get_by_role("button", name="Add the mitigated model to the comparison"))
    main.get_by_text("In the comparison above as").wait_for(timeout=WAIT)
    pg.wait_for_function(IDLE, timeout=WAIT)
    choose(pg, "First model", "COMPAS decile score, per-group thresholds (ofi ≤ 0.05)")   # now a candidate
    pg.wait_for_function("[...document.querySelectorAll('.js-plotly-plot .gtitle')].some(t => t.textContent"
                         ".includes('(COMPAS decile score, per-group thresholds'))", timeout=WAIT)
    pg.wait_for_function(IDLE, timeout=WAIT)
    path = download(pg, pg.get_by_role("button", name="Download the rule (JSON)"), tmp_path / "thresholds.json")
    rule = json.loads(path.read_text(encoding="utf-8"))   # the rule file `python -m fairness_core apply` reads
    assert {"format", "version", "groups", "target", "tolerance", "objective", "fitting_rows", "context"} <= set(rule)
    groups = [g["group"] for g in rule["groups"]]
    assert rule["target"] == "ofi" and len(groups) == 6 and "African-American" in groups
    assert {"score", "estimate", "held_out"} <= set(rule["context"]) and rule["context"]["held_out"]["max_abs_ofi"] >= 0
    from fairness_core.mitigation import ThresholdRule
    assert sorted(map(str, ThresholdRule.from_json(path.read_text(encoding="utf-8")).thresholds)) == sorted(groups)
