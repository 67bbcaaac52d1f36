"""Browser test: a real Streamlit server and Debian's Chromium driven by Playwright.

Uploads a CSV of group confusion matrices and checks that the OFI and DI
heatmaps of those groups appear. Skipped only outside CI when Chromium is absent.
"""

import csv
import os
import re
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest

from browser_helpers import app_server, assert_group_labels_visible

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]

if CHROMIUM is None and not os.environ.get("CI"):
    pytest.skip("Debian chromium not installed (apt-get install chromium)", allow_module_level=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")   # saved audits of this server only, never the developer's ./data
    with app_server(ROOT / "tests" / ".streamlit-test.log",
                    {"FAIRNESS_DATA_DIR": str(data), "FAIRNESS_AUDIT_STORE": f"sqlite:///{data / 'audits.db'}"}) as url:
        yield url


@contextmanager
def browser_at(url: str):
    """A fresh Chromium page opened at ``url``; fails if the page threw a JavaScript error."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        pg = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(url)
        yield pg
        browser.close()
        assert not errors, errors


ARTIFACTS = ROOT / "test-artifacts"


def save_on_failure(request, pg) -> None:  # type: ignore[no-untyped-def]
    """On a failed test, keep a full-page screenshot in test-artifacts/ (CI uploads that folder)."""
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        ARTIFACTS.mkdir(exist_ok=True)
        pg.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)


@pytest.fixture()
def page(server, request):
    with browser_at(f"{server}/Upload") as pg:
        pg.wait_for_selector("text=Load data", timeout=60000)
        yield pg
        save_on_failure(request, pg)


@pytest.fixture()
def open_page(server, request):
    """``open_page(path)``: a fresh browser at ``server/path``, screenshotted if the test fails."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        pg = browser.new_page(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))

        def go(path: str):  # type: ignore[no-untyped-def]
            pg.goto(f"{server}/{path}")
            return pg

        yield go
        save_on_failure(request, pg)
        browser.close()
        assert not errors, errors


def upload_cm_file(page, path, text: str, direction: str | None = "benefit") -> None:
    """Write ``text`` to ``path``, upload it on the Upload page's confusion-matrix tab and, unless ``direction`` is
    None, declare the positive class a benefit or a harm (the page preselects no answer)."""
    path.write_text(text)
    page.get_by_role("tab", name="Confusion-matrix file").click()
    page.locator("[data-testid='stFileUploader'] input[type='file']").first.set_input_files(str(path))
    if direction is not None:
        declare(page, direction)


def declare(page, direction: str) -> None:
    """Answer the Upload page's question: is the positive value a benefit or a harm for the person? The question
    is asked afresh whenever what it refers to changes (a rerun still under way may redraw it), so the answer
    is given until it holds."""
    words = {"benefit": "benefit for the person", "harm": "harm for the person"}[direction]
    radios = page.get_by_test_id("stMain").locator("[data-testid='stRadio']:visible")
    for _ in range(5):
        option = radios.get_by_text(words)
        option.wait_for(timeout=30000)
        option.click()
        page.wait_for_timeout(1000)
        page.wait_for_function(IDLE, timeout=60000)
        if radios.locator("input[type='radio']:checked").count():
            return
    raise AssertionError(f"the answer {direction!r} did not hold")


def test_upload_csv_and_see_heatmaps(page, tmp_path):
    upload_cm_file(page, tmp_path / "my_groups.csv",
                   "group,TP,FN,FP,TN\nAlpha,1,0,0,5\nBeta,7,0,1,10\nGamma,1,1,0,5\n")
    page.get_by_text("3 groups read from my_groups.csv").wait_for(timeout=30000)
    page.get_by_role("button", name="Use these groups").click()
    page.get_by_text("Data: my_groups.csv").first.wait_for(timeout=30000)
    # the top of the page confirms it and offers the next step
    page.get_by_text("Loaded 3 groups from my_groups.csv.").wait_for(timeout=30000)
    page.get_by_test_id("stMain").get_by_role("link", name="Open the bias audit →").click()
    page.get_by_role("heading", name="Bias audit").wait_for(timeout=30000)
    page.wait_for_selector(".js-plotly-plot", timeout=30000)
    page.wait_for_timeout(1500)
    assert page.locator(".js-plotly-plot").count() >= 5  # OFI vs DI, forest, OFI and DI heatmaps, benefit chart
    assert "OFI against DI for every pair" in page.locator(".js-plotly-plot").nth(0).inner_text()
    heatmaps = page.locator(".js-plotly-plot").nth(2).inner_text() + page.locator(".js-plotly-plot").nth(3).inner_text()
    # groups of 6 to 18 rows: every value shown, in parentheses because none is significant
    for text in ("Alpha", "Beta", "Gamma", "OFI = B", "(-0.056)", "(0.38)"):
        assert text in heatmaps, text
    assert page.get_by_text("of 3 pairs in all").count() == 1  # all three inconclusive
    tiles = page.get_by_test_id("stMetricValue").all_inner_texts()
    assert tiles[-1] == "3" and tiles[:-1] == ["0"] * 4
    assert page.get_by_text("What the numbers say.").count() == 1
    page.screenshot(path=str(tmp_path / "bias_audit.png"))


def test_cm_table_says_what_positive_means_and_flips_a_harmful_one(page, tmp_path):
    upload_cm_file(page, tmp_path / "harm.csv", "group,TP,FN,FP,TN\nAlpha,5,1,3,9\nBeta,2,2,0,8\n", direction=None)
    page.get_by_text("2 groups read from harm.csv").wait_for(timeout=90000)   # slow under a loaded CI
    assert page.get_by_role("button", name="Use these groups").is_disabled()  # no answer preselected
    page.get_by_label("In this table, positive means").fill("reoffends")
    page.get_by_label("In this table, positive means").press("Enter")
    page.get_by_text("positive = reoffends").wait_for(timeout=30000)
    declare(page, "harm")
    page.get_by_text("positive = not reoffends").wait_for(timeout=30000)
    page.get_by_text("the classes were swapped (TP ↔ TN, FN ↔ FP)").wait_for(timeout=30000)
    page.get_by_role("button", name="Use these groups").click()
    page.get_by_text("Loaded 2 groups from harm.csv.").wait_for(timeout=30000)
    current = page.get_by_test_id("stMain").get_by_text("positive = not reoffends")
    assert current.count() >= 1


def test_bad_upload_shows_row_and_column_and_keeps_data(page, tmp_path):
    upload_cm_file(page, tmp_path / "bad.csv", "group,TP,FN,FP,TN\nAlpha,1,0,0,5\nBeta,7,-1,1,10\n",
                   direction=None)
    page.get_by_text("Nothing was loaded").wait_for(timeout=30000)
    assert page.get_by_text("row 2 (file line 3), column 'FN': negative count -1").count() == 1
    assert page.get_by_text("Data: COMPAS").count() == 1


def test_deep_link_to_bias_audit_preloads_the_demo(server):
    with browser_at(f"{server}/Bias_Audit") as pg:
        pg.get_by_role("heading", name="Bias audit").wait_for(timeout=60000)
        pg.wait_for_selector(".js-plotly-plot", timeout=30000)
        assert pg.get_by_text("Data: COMPAS").count() == 1
        nav = pg.get_by_test_id("stSidebar").get_by_role("link")
        labels = [nav.nth(k).inner_text().split("\n")[-1].strip() for k in range(3)]  # icon name comes first
        assert labels == ["Home", "Upload", "Bias Audit"]


def test_deep_link_to_a_sample_size_tab(server, tmp_path):
    with browser_at(f"{server}/Sample_Size_Explorer?tab=Holes") as pg:
        pg.get_by_role("heading", name="Sample-size explorer").wait_for(timeout=60000)
        pg.wait_for_selector(".js-plotly-plot", timeout=60000)
        pg.wait_for_timeout(1000)
        assert "Holes: matrices of size n" in pg.locator(".js-plotly-plot").first.inner_text()
        assert pg.get_by_role("tab", name="Holes").get_attribute("aria-selected") == "true"
        pg.get_by_role("tab", name="MATCH for your data").click()
        pg.get_by_text("At n = 11, Native American").wait_for(timeout=60000)
        pg.screenshot(path=str(tmp_path / "sample_size.png"))


IDLE = "!document.querySelector('[data-testid=\"stStatusWidget\"]')"  # the script has stopped running
PAGES = {"": "Fairness audit workbench", "Upload": "Load data", "Bias_Audit": "Bias audit",
         "Sample_Size_Explorer": "Sample-size explorer", "Smoothing": "Smoothing",
         "Synthetic_Data": "Synthetic data: Conditional HydraGAN",
         "Forecasting": "Forecasting: Probabilistic Parallel Time Networks",
         "Compare_and_Mitigate": "Compare and mitigate", "Saved_Audits": "Saved audits", "Methods": "Methods"}


@pytest.mark.parametrize("path", list(PAGES))
def test_every_page_opens_without_an_exception(open_page, path):
    pg = open_page(path)
    pg.get_by_role("heading", name=PAGES[path]).first.wait_for(timeout=60000)
    pg.wait_for_function(IDLE, timeout=120000)
    assert pg.locator("[data-testid='stException']").count() == 0
    links = pg.get_by_test_id("stSidebar").get_by_role("link")
    links.nth(len(PAGES) - 1).wait_for(timeout=30000)
    assert links.count() == len(PAGES)


def test_smoothing_slider_moves_and_the_page_follows(open_page):
    pg = open_page("Smoothing")
    pg.get_by_role("heading", name="Smoothing").first.wait_for(timeout=60000)
    slider = pg.get_by_role("slider").first
    value = pg.get_by_test_id("stSliderThumbValue").first
    before = value.inner_text()
    slider.focus()
    pg.keyboard.press("ArrowRight")
    pg.keyboard.press("ArrowRight")
    pg.wait_for_timeout(1500)
    pg.wait_for_function(IDLE, timeout=120000)
    assert value.inner_text() != before, before
    assert pg.locator("[data-testid='stException']").count() == 0


@pytest.mark.parametrize("path,button", [("Synthetic_Data", "Train and evaluate"), ("Forecasting", "Train PTN")])
def test_training_starts_live_and_cancels(open_page, path, button):
    pg = open_page(path)
    pg.get_by_role("button", name=button).wait_for(timeout=60000)
    pg.get_by_role("button", name=button).click()
    pg.get_by_text("Running ·").first.wait_for(timeout=60000)
    pg.get_by_role("button", name="Cancel").click()
    pg.get_by_text("Cancelled. Nothing from this run is used").wait_for(timeout=120000)
    assert pg.locator("[data-testid='stException']").count() == 0


def test_report_downloads_and_holds_the_numbers(open_page, tmp_path):
    pg = open_page("Bias_Audit")
    pg.get_by_role("heading", name="Bias audit").wait_for(timeout=60000)
    pg.get_by_text("Download the audit report").click()
    with pg.expect_download(timeout=120000) as info:
        pg.get_by_role("button", name="Audit report (HTML)").click()
    path = tmp_path / "report.html"
    info.value.save_as(path)
    html = path.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "Fairness audit report" in html
    assert "COMPAS" in html and "African-American" in html and "algorithmic bias" in html
    report_page = pg.context.browser.new_page()  # the file opens offline and draws its figures
    report_page.goto(path.as_uri())
    report_page.wait_for_selector(".js-plotly-plot", timeout=30000)
    assert report_page.locator(".js-plotly-plot").count() >= 3
    assert_group_labels_visible(report_page, ["African-American", "Asian", "Caucasian", "Hispanic",
                                              "Native American", "Other"])


def save_audit(pg, name: str, model: str, period: str) -> None:  # type: ignore[no-untyped-def]
    """Fill the Bias Audit page's "Save this audit" form and submit it; wait until it says it is saved."""
    form = pg.get_by_test_id("stForm")
    for label, value in (("Name", name), ("Model", model), ("Period", period)):
        form.get_by_label(label, exact=True).fill(value)
    form.get_by_role("button", name="Save this audit").click()
    pg.get_by_role("link", name="Open the saved audit").wait_for(timeout=90000)


def test_save_share_by_link_trend_and_the_ll144_csv(open_page, tmp_path):
    pg = open_page("Bias_Audit")
    pg.get_by_role("heading", name="Bias audit").wait_for(timeout=60000)
    pg.locator("summary").filter(has_text="Save this audit").click()
    save_audit(pg, "COMPAS Q1", "recidivism score", "2026-Q1")
    pg.get_by_role("link", name="Open the saved audit").click()      # the owner makes a link to it
    pg.get_by_role("heading", name="COMPAS Q1").wait_for(timeout=60000)
    pg.locator("summary").filter(has_text="Links").click()
    pg.get_by_role("button", name="Make a link").click()
    box = pg.get_by_test_id("stCode").filter(has_text="/Saved_Audits?link=")
    box.wait_for(timeout=90000)
    address = box.inner_text().strip()
    assert address.startswith("http://") and "link=" in address          # the full address, copied as it is
    colleague = pg.context.browser.new_context(accept_downloads=True).new_page()   # another browser, no session
    colleague.goto(address)
    colleague.get_by_role("heading", name="COMPAS Q1").wait_for(timeout=60000)
    colleague.get_by_role("heading", name="Local Law 144 summary").wait_for(timeout=30000)
    assert colleague.get_by_text("Save this model's audit of another period").count() == 1
    pg.get_by_test_id("stSidebar").get_by_role("link", name="Bias Audit").click()
    pg.get_by_role("heading", name="Bias audit").wait_for(timeout=60000)
    pg.locator("summary").filter(has_text="Save this audit").click()
    save_audit(pg, "COMPAS Q2", "recidivism score", "2026-Q2")
    colleague.reload()
    colleague.get_by_text("has 2 saved periods").wait_for(timeout=60000)
    colleague.wait_for_function(IDLE, timeout=60000)
    colleague.wait_for_selector(".js-plotly-plot", timeout=30000)   # the trend charts: OFI, then DI
    charts = colleague.locator(".js-plotly-plot")
    assert charts.count() == 2 and colleague.get_by_text("2026-Q2").count() >= 1
    assert "OFI" in charts.nth(0).inner_text() and "DI" in charts.nth(1).inner_text()
    assert colleague.locator("[data-testid='stException']").count() == 0
    with colleague.expect_download(timeout=60000) as info:
        colleague.get_by_role("button", name="Download the Local Law 144 summary (CSV)").click()
    path = tmp_path / "ll144.csv"
    info.value.save_as(path)
    header = next(csv.reader(path.read_text(encoding="utf-8").splitlines()))
    assert header[:6] == ["categories of", "category", "n", "share of data", "selection rate", "impact ratio"]
    colleague.context.close()


def test_report_downloaded_from_the_app_shows_forty_long_group_names(page, tmp_path):
    names = [f"Applicants from district {k:02d} of the east" for k in range(40)]  # 38 characters each
    rng = __import__("numpy").random.default_rng(7)
    rows = [f"{g},{','.join(map(str, rng.multinomial(int(rng.integers(40, 400)), [0.3, 0.2, 0.1, 0.4])))}"
            for g in names]
    upload_cm_file(page, tmp_path / "forty.csv", "group,TP,FN,FP,TN\n" + "\n".join(rows) + "\n")
    page.get_by_text("40 groups read from forty.csv").wait_for(timeout=30000)
    page.get_by_role("button", name="Use these groups").click()
    page.get_by_text("Data: forty.csv").wait_for(timeout=30000)
    page.get_by_test_id("stSidebar").get_by_role("link", name="Bias Audit").click()
    page.get_by_role("heading", name="Bias audit").wait_for(timeout=30000)
    page.wait_for_function(IDLE, timeout=120000)
    assert_group_labels_visible(page, names)  # in the app
    page.get_by_text("Download the audit report").click()
    with page.expect_download(timeout=180000) as info:
        page.get_by_role("button", name="Audit report (HTML)").click()
    path = tmp_path / "report.html"
    info.value.save_as(path)
    report_page = page.context.browser.new_page()
    report_page.goto(path.as_uri())
    report_page.wait_for_selector(".js-plotly-plot", timeout=60000)
    assert_group_labels_visible(report_page, names)  # and in the file a colleague opens


def test_three_sessions_at_once_do_not_cross_talk(server, tmp_path):
    """Two sessions train (HydraGAN, PTN) while a third uploads its own data and audits it."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        gan, fc, auditor = (browser.new_context(viewport={"width": 1400, "height": 1000}).new_page() for _ in range(3))
        try:
            gan.goto(f"{server}/Synthetic_Data")
            fc.goto(f"{server}/Forecasting")
            # one after the other: two clicks at once reach the server in either order on a loaded machine
            gan.get_by_role("button", name="Train and evaluate").click()
            gan.get_by_text("Running ·").first.wait_for(timeout=60000)
            fc.get_by_role("button", name="Train PTN").click()
            # PyTorch trainings take turns (one process-wide random state): PTN waits in the queue
            fc.get_by_text("Queued, 0 ahead ·").first.wait_for(timeout=60000)
            auditor.goto(f"{server}/Upload")
            upload_cm_file(auditor, tmp_path / "mine.csv", "group,TP,FN,FP,TN\nX,1,0,0,5\nY,7,0,1,10\n")
            auditor.get_by_role("button", name="Use these groups").click()
            auditor.get_by_text("Data: mine.csv").wait_for(timeout=60000)
            auditor.get_by_test_id("stSidebar").get_by_role("link", name="Bias Audit").click()  # same session
            auditor.get_by_role("heading", name="Bias audit").wait_for(timeout=60000)
            auditor.get_by_text("Data: mine.csv").wait_for(timeout=60000)
            # Each training session still shows its own job, and its data is still the demo.
            # (the GAN first learns each numeric column's modes, a few seconds, then reports its steps)
            gan.get_by_text(re.compile(r"Running ·.*step")).first.wait_for(timeout=60000)
            gan_status = gan.get_by_text("Running ·").first.inner_text()
            fc_status = fc.get_by_text("Queued, 0 ahead ·").first.inner_text()
            assert "step" in gan_status and "generation" not in gan_status, gan_status  # the GAN's own job
            assert "PTN on" in fc_status and "PTN" not in gan_status, fc_status
            assert gan.get_by_text("Data: mine.csv").count() == 0
            for pg, button in ((gan, "Train and evaluate"), (fc, "Train PTN")):
                pg.get_by_role("button", name="Cancel").click()
                pg.get_by_text("Cancelled. Nothing from this run is used").wait_for(timeout=120000)
            gan.get_by_test_id("stSidebar").get_by_role("link", name="Bias Audit").click()  # same session
            gan.get_by_text("Data: COMPAS").wait_for(timeout=60000)
            assert gan.get_by_text("mine.csv").count() == 0
        except Exception:
            ARTIFACTS.mkdir(exist_ok=True)
            for name, pg in (("gan", gan), ("forecasting", fc), ("auditor", auditor)):
                pg.screenshot(path=str(ARTIFACTS / f"three_sessions_{name}.png"), full_page=True)
            raise
        finally:
            browser.close()


def choose(page, label: str, option: str) -> None:
    """Pick ``option`` in the Streamlit selectbox labelled ``label``: type to filter, then click the option, or,
    when a rerun's layout shift keeps covering it (seen on a loaded machine), press Enter on it once it is the
    highlighted one."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    box = page.get_by_test_id("stSelectbox").filter(has_text=label).first
    box.click()
    page.keyboard.type(option)
    target = page.get_by_role("option", name=option, exact=True).first
    try:
        target.click(timeout=10000)
    except PlaywrightTimeout:
        target.wait_for(timeout=10000)
        assert target.get_attribute("data-focused") == "true", f"{option!r} is not the highlighted option"
        page.keyboard.press("Enter")


def test_a_journalists_audit_of_the_published_compas_file(page, tmp_path):
    """ProPublica's file as published: upload it, declare that 'high risk' (decile 5 or more) is a harm, audit
    race and sex, read each attribute and the intersections, the four-fifths and error-rate findings, download
    the report with every field a reviewer files, reload and keep the data."""
    import gzip

    path = tmp_path / "compas-scores-two-years.csv"
    path.write_bytes(gzip.decompress((ROOT / "assets" / "compas-scores-two-years.csv.gz").read_bytes()))
    page.get_by_role("tab", name="Row-level predictions").click()
    page.locator("[data-testid='stFileUploader'] input[type='file']").nth(1).set_input_files(str(path))
    page.get_by_text("7,214 rows × 51 columns").wait_for(timeout=60000)   # 53 columns, two identical copies kept once
    assert page.get_by_text("'decile_score' appears more than once with identical values").count() == 1
    choose(page, "Label column", "two_year_recid")
    threshold = page.get_by_label("Positive when score ≥")   # decile_score is a numeric score: always thresholded
    threshold.fill("5")
    threshold.press("Enter")
    page.get_by_text("a score of 5 or more is").wait_for(timeout=60000)   # the question about score ≥ 5
    page.wait_for_function(IDLE, timeout=60000)
    aggregate = page.get_by_role("button", name="Aggregate and use")
    assert aggregate.is_disabled()   # the direction is not assumed
    from playwright.sync_api import expect

    for _ in range(3):   # a rerun still drawing may redraw the question unanswered: answer until it holds
        declare(page, "harm")
        try:
            expect(aggregate).to_be_enabled(timeout=10000)
            break
        except AssertionError:
            continue
    aggregate.click()
    page.get_by_text("Aggregated 7,214 rows into").wait_for(timeout=60000)
    # the page stays on its tab with the mapping as chosen
    assert page.get_by_role("tab", name="Row-level predictions").get_attribute("aria-selected") == "true"
    label_box = page.get_by_test_id("stSelectbox").filter(has_text="Label column").first
    assert "two_year_recid" in (label_box.text_content() or "") + label_box.locator("input").first.input_value()
    page.get_by_test_id("stMain").get_by_text("was declared a harm").first.wait_for(timeout=30000)

    page.get_by_test_id("stSidebar").get_by_role("link", name="Bias Audit").click()
    page.get_by_role("heading", name="Bias audit").wait_for(timeout=60000)
    page.wait_for_function(IDLE, timeout=120000)
    for question in ("Is the algorithm at fault (OFI)?", "The four-fifths rule", "Equal opportunity (error rates)"):
        page.get_by_text(question).first.wait_for(timeout=30000)
    # each attribute's answers come first on the page now; the intersections' panel may still be drawing
    page.get_by_text("fall below 0.8 by point estimate").first.wait_for(timeout=60000)
    page.get_by_text("the largest FNR gap").first.wait_for(timeout=60000)
    findings = page.get_by_test_id("stMain").locator("p", has_text="What the numbers say.").first
    assert " & " in findings.inner_text()          # the intersections first: "Male & African-American", …
    choose(page, "Groups", "by race alone")
    page.wait_for_function(IDLE, timeout=120000)
    page.get_by_text(re.compile(r"by race alone · 6 groups")).first.wait_for(timeout=60000)
    page.wait_for_function(IDLE, timeout=120000)
    findings = page.get_by_test_id("stMain").locator("p", has_text="What the numbers say.").first
    expect(findings).not_to_contain_text(" & ", timeout=60000)
    expect(findings).to_contain_text("African-American")

    page.get_by_text("Download the audit report").click()
    page.get_by_role("textbox", name="Model name and version").fill("COMPAS v2.0 as scored in Broward County")
    page.get_by_role("textbox", name="Model name and version").press("Enter")
    page.get_by_role("textbox", name="Period the data cover").fill("2013-01-01 to 2014-12-31")
    page.get_by_role("textbox", name="Period the data cover").press("Enter")
    page.wait_for_timeout(1500)   # the rerun that keeps the period starts, then ends: the button is the new one
    page.wait_for_function(IDLE, timeout=60000)
    with page.expect_download(timeout=180000) as info:
        page.get_by_role("button", name="Audit report (HTML)").click()
    report = tmp_path / "report.html"
    info.value.save_as(report)
    html = report.read_text(encoding="utf-8")
    for field in ("COMPAS v2.0 as scored in Broward County", "2013-01-01 to 2014-12-31", "attribute audited",
                  "label column", "two_year_recid", "prediction column", "decile_score", "score &gt;= 5",
                  "declared a harm", "fairness-audit-workbench", "Equal opportunity", "The four-fifths rule"):
        assert field in html, field

    page.wait_for_timeout(1000)                  # the download is served before the page goes away
    page.wait_for_function(IDLE, timeout=60000)
    page.reload()
    page.get_by_role("heading", name="Bias audit").wait_for(timeout=60000)
    page.get_by_text("Data: compas-scores-two-years.csv").first.wait_for(timeout=60000)
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
    page.get_by_text("4 groups read from hostile.csv").wait_for(timeout=90000)
    page.get_by_role("button", name="Use these groups").click()
    page.get_by_text("Data: hostile.csv").first.wait_for(timeout=30000)
    page.get_by_test_id("stSidebar").get_by_role("link", name="Sample-Size Explorer").click()
    page.get_by_text("What the numbers say.").wait_for(timeout=60000)
    page.get_by_test_id("stSelectbox").filter(has_text="Reference").first.click()
    page.keyboard.type("click me")
    page.get_by_role("option").filter(has_text="“" + link + "” (n = 100)").first.click()  # the group, quoted
    page.wait_for_timeout(1000)
    page.wait_for_function(IDLE, timeout=60000)
    page.wait_for_function("[...document.querySelectorAll('.js-plotly-plot .gtitle')].some(t => "
                           "t.textContent.includes('drawn from “<a href'))", timeout=60000)
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
    pg.get_by_role("heading", name="Compare and mitigate").wait_for(timeout=60000)
    pg.wait_for_function(IDLE, timeout=120000)
    choose(pg, "Second model", "logistic regression ≥ 0.5")
    pg.wait_for_function("[...document.querySelectorAll('.js-plotly-plot .gtitle')].some(t => t.textContent"
                         ".includes('− logistic regression'))", timeout=60000)
    main = pg.get_by_test_id("stMain")
    expect(main.get_by_text(re.compile(r"differences are significant|No difference between"))).to_be_visible()
    expect(main.get_by_text("On the held-out rows the largest |OFI| goes from")).to_be_visible(timeout=60000)
    pg.get_by_role("button", name="Add the mitigated model to the comparison").click()
    main.get_by_text("In the comparison above as").wait_for(timeout=60000)
    pg.wait_for_function(IDLE, timeout=60000)
    choose(pg, "First model", "COMPAS decile score, per-group thresholds (ofi ≤ 0.05)")   # now a candidate
    pg.wait_for_function("[...document.querySelectorAll('.js-plotly-plot .gtitle')].some(t => t.textContent"
                         ".includes('(COMPAS decile score, per-group thresholds'))", timeout=60000)
    pg.wait_for_function(IDLE, timeout=60000)
    with pg.expect_download(timeout=60000) as info:
        pg.get_by_role("button", name="Download the rule (JSON)").click()
    path = tmp_path / "thresholds.json"
    info.value.save_as(path)
    rule = json.loads(path.read_text(encoding="utf-8"))   # the rule file `python -m fairness_core apply` reads
    assert {"format", "version", "groups", "target", "tolerance", "objective", "fitting_rows", "context"} <= set(rule)
    groups = [g["group"] for g in rule["groups"]]
    assert rule["target"] == "ofi" and len(groups) == 6 and "African-American" in groups
    assert {"score", "estimate", "held_out"} <= set(rule["context"]) and rule["context"]["held_out"]["max_abs_ofi"] >= 0
    from fairness_core.mitigation import ThresholdRule
    assert sorted(map(str, ThresholdRule.from_json(path.read_text(encoding="utf-8")).thresholds)) == sorted(groups)
