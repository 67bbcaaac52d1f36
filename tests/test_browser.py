"""Browser tests of single pages: a real Streamlit server and Debian's Chromium driven by Playwright.

Uploads a CSV of group confusion matrices and checks that the OFI and DI heatmaps of those groups appear; every
page opens; a slider, a training, the report, saving and sharing. Skipped only outside CI when Chromium is absent.
The longer journeys across pages are in tests/test_browser_journeys.py (a module of their own, so that the two
run side by side on two workers). Every wait names its condition and says what it saw when it gives up
(tests/browser_helpers.py).
"""

import csv
from urllib.parse import urlsplit

import pytest

from browser_helpers import (CONTEXT, FIGURES_HOLD, IDLE, WAIT, assert_group_labels_visible, declare, download, page_in,
                             press, save_audit, skip_without_chromium, upload_cm_file)
from browser_helpers import browser, context, open_page, page, server  # noqa: F401 - fixtures, used by name

skip_without_chromium()
pytestmark = pytest.mark.browser   # drives the app in Chromium: run first (tests/conftest.py)


def test_upload_csv_and_see_heatmaps(page, tmp_path):
    upload_cm_file(page, tmp_path / "my_groups.csv",
                   "group,TP,FN,FP,TN\nAlpha,1,0,0,5\nBeta,7,0,1,10\nGamma,1,1,0,5\n")
    page.get_by_text("3 groups read from my_groups.csv").wait_for(timeout=WAIT)
    press(page, page.get_by_role("button", name="Use these groups"))
    page.get_by_text("Data: my_groups.csv").first.wait_for(timeout=WAIT)
    # the top of the page confirms it and offers the next step
    page.get_by_text("Loaded 3 groups from my_groups.csv.").wait_for(timeout=WAIT)
    page.get_by_test_id("stMain").get_by_role("link", name="Open the bias audit →").click()
    page.get_by_role("heading", name="Bias audit").wait_for(timeout=WAIT)
    # OFI vs DI, forest, OFI and DI heatmaps, benefit chart, the heatmaps naming the groups
    page.wait_for_function(FIGURES_HOLD, arg=[5, "Alpha", "Gamma", "OFI = B"], timeout=WAIT)
    page.wait_for_function(IDLE, timeout=WAIT)   # the run has ended: the tiles and readings below are all drawn
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
    page.get_by_text("2 groups read from harm.csv").wait_for(timeout=WAIT)   # slow under a loaded CI
    assert page.get_by_role("button", name="Use these groups").is_disabled()  # no answer preselected
    page.get_by_label("In this table, positive means").fill("reoffends")
    page.get_by_label("In this table, positive means").press("Enter")
    page.get_by_text("positive = reoffends").wait_for(timeout=WAIT)
    declare(page, "harm")
    page.get_by_text("positive = not reoffends").wait_for(timeout=WAIT)
    page.get_by_text("the classes were swapped (TP ↔ TN, FN ↔ FP)").wait_for(timeout=WAIT)
    press(page, page.get_by_role("button", name="Use these groups"))
    page.get_by_text("Loaded 2 groups from harm.csv.").wait_for(timeout=WAIT)
    current = page.get_by_test_id("stMain").get_by_text("positive = not reoffends")
    assert current.count() >= 1


def test_bad_upload_shows_row_and_column_and_keeps_data(page, tmp_path):
    upload_cm_file(page, tmp_path / "bad.csv", "group,TP,FN,FP,TN\nAlpha,1,0,0,5\nBeta,7,-1,1,10\n",
                   direction=None)
    page.get_by_text("Nothing was loaded").wait_for(timeout=WAIT)
    page.wait_for_function(IDLE, timeout=WAIT)
    assert page.get_by_text("row 2 (file line 3), column 'FN': negative count -1").count() == 1
    assert page.get_by_text("Data: COMPAS").count() == 1


def test_deep_link_to_a_sample_size_tab(server, context, tmp_path):
    with page_in(context, f"{server}/Sample_Size_Explorer?tab=Holes") as pg:
        pg.get_by_role("heading", name="Sample-size explorer").wait_for(timeout=WAIT)
        pg.wait_for_function(FIGURES_HOLD, arg=[1, "Holes: matrices of size n"], timeout=WAIT)
        assert "Holes: matrices of size n" in pg.locator(".js-plotly-plot").first.inner_text()
        assert pg.get_by_role("tab", name="Holes").get_attribute("aria-selected") == "true"
        pg.get_by_role("tab", name="MATCH for your data").click()
        pg.get_by_text("At n = 11, Native American").wait_for(timeout=WAIT)
        pg.screenshot(path=str(tmp_path / "sample_size.png"))


PAGES = {"": "Fairness audit workbench", "Upload": "Load data", "Bias_Audit": "Bias audit",
         "Sample_Size_Explorer": "Sample-size explorer", "Smoothing": "Smoothing",
         "Synthetic_Data": "Synthetic data: Conditional HydraGAN",
         "Forecasting": "Forecasting: Probabilistic Parallel Time Networks",
         "Compare_and_Mitigate": "Compare and mitigate", "Counterfactual_Test": "Counterfactual test",
         "Saved_Audits": "Saved audits", "Methods": "Methods"}


#: Each page's name in the sidebar.
NAV = {"": "Home", "Upload": "Upload", "Bias_Audit": "Bias Audit", "Sample_Size_Explorer": "Sample-Size Explorer",
       "Smoothing": "Smoothing", "Synthetic_Data": "Synthetic Data", "Forecasting": "Forecasting",
       "Compare_and_Mitigate": "Compare and Mitigate", "Counterfactual_Test": "Counterfactual test",
       "Saved_Audits": "Saved audits", "Methods": "Methods"}


def test_every_page_opens_without_an_exception(open_page):
    """Every page, reached through the sidebar of one session: its heading, no exception, the whole sidebar. (One
    session, where each page had a test and a page of its own: opening a page afresh costs Chromium 2.5-3.5 s of CPU
    for the app's scripts alone.) Opening a page by its address is the deep-link tests' job."""
    elsewhere: list[str] = []   # the app fetches nothing from another host (its tab icon included)
    pg = open_page("")
    pg.on("request", lambda r: urlsplit(r.url).hostname == "127.0.0.1" or elsewhere.append(r.url))
    sidebar = pg.get_by_test_id("stSidebar")
    failed = {}
    for path, heading in PAGES.items():
        if path:
            sidebar.get_by_role("link", name=NAV[path], exact=True).click()
        # the condition: the page's address, its run ended with nothing stale, and its heading
        pg.wait_for_function(f"path => location.pathname.replace(/\\/$/, '') === path && ({IDLE})()",
                             arg=f"/{path}" if path else "", timeout=WAIT)
        pg.get_by_role("heading", name=heading).first.wait_for(timeout=WAIT)
        exceptions = pg.locator("[data-testid='stException']").all_inner_texts()
        sidebar.get_by_role("link").nth(len(PAGES) - 1).wait_for(timeout=WAIT)
        links = sidebar.get_by_role("link").count()
        if exceptions or links != len(PAGES):
            failed[path or "Home"] = {"exceptions": exceptions, "sidebar links": links}
    assert not failed, failed
    assert not elsewhere, elsewhere


def test_smoothing_slider_moves_and_the_page_follows(open_page):
    pg = open_page("Smoothing")
    pg.get_by_role("heading", name="Smoothing").first.wait_for(timeout=WAIT)
    slider = pg.get_by_role("slider").first
    value = pg.get_by_test_id("stSliderThumbValue").first
    reading = pg.get_by_test_id("stMain").locator("p", has_text="The largest change:").first
    reading.wait_for(timeout=WAIT)
    before, said = value.inner_text(), reading.inner_text()
    slider.focus()
    pg.keyboard.press("ArrowRight")
    pg.keyboard.press("ArrowRight")
    # the condition: the run for the new λ has ended and its reading of the largest change is not the old one
    pg.wait_for_function(f"said => ({IDLE})() && [...document.querySelectorAll('[data-testid=\"stMain\"] p')]"
                         ".some(p => p.innerText.includes('The largest change:') && p.innerText !== said)",
                         arg=said, timeout=WAIT)
    assert value.inner_text() != before, before
    assert pg.locator("[data-testid='stException']").count() == 0


def test_training_starts_live_and_cancels(open_page):
    """PTN's training runs and is cancelled. HydraGAN's is tests/test_browser_journeys.py's three sessions at once,
    where PTN's waits in the queue."""
    pg = open_page("Forecasting")
    pg.get_by_role("button", name="Train PTN").wait_for(timeout=WAIT)
    press(pg, pg.get_by_role("button", name="Train PTN"))
    pg.get_by_text("Running ·").first.wait_for(timeout=WAIT)
    pg.get_by_role("button", name="Cancel").click()
    pg.get_by_text("Cancelled. Nothing from this run is used").wait_for(timeout=WAIT)
    assert pg.locator("[data-testid='stException']").count() == 0


def test_a_deep_link_to_the_bias_audit_preloads_the_demo_whose_report_downloads(open_page, tmp_path):
    """The Bias Audit page opened by its address, in a new session: the demo's audit, drawn, and its report. (The
    report's file opening offline in Chromium and drawing every figure with every group's name is
    tests/test_report.py's printing test, on the same demo's report.)"""
    pg = open_page("Bias_Audit")
    pg.get_by_role("heading", name="Bias audit").wait_for(timeout=WAIT)
    pg.wait_for_function(IDLE, timeout=WAIT)   # the run has ended: its download buttons are the ones a click uses
    pg.wait_for_function(FIGURES_HOLD, arg=[5], timeout=WAIT)   # the figures are drawn after the run, one by one
    assert pg.get_by_text("Data: COMPAS").count() == 1
    nav = pg.get_by_test_id("stSidebar").get_by_role("link")
    labels = [nav.nth(k).inner_text().split("\n")[-1].strip() for k in range(3)]  # icon name comes first
    assert labels == ["Home", "Upload", "Bias Audit"]
    pg.get_by_text("Download the audit report").click()
    path = download(pg, pg.get_by_role("button", name="Audit report (HTML)"), tmp_path / "report.html")
    html = path.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "Fairness audit report" in html
    assert "COMPAS" in html and "African-American" in html and "algorithmic bias" in html
    assert html.count('class="plotly-graph-div"') >= 3 and "<script src=" not in html   # its figures, offline


def test_save_share_by_link_trend_and_the_ll144_csv(open_page, tmp_path):
    pg = open_page("Bias_Audit")
    pg.get_by_role("heading", name="Bias audit").wait_for(timeout=WAIT)
    pg.locator("summary").filter(has_text="Save this audit").click()
    save_audit(pg, "COMPAS Q1", "recidivism score", "2026-Q1")
    pg.get_by_role("link", name="Open the saved audit").click()      # the owner makes a link to it
    pg.get_by_role("heading", name="COMPAS Q1").wait_for(timeout=WAIT)
    pg.locator("summary").filter(has_text="Links").click()
    box = pg.get_by_test_id("stCode").filter(has_text="/Saved_Audits?link=")
    press(pg, pg.get_by_role("button", name="Make a link"), until=box)
    address = box.inner_text().strip()
    assert address.startswith("http://") and "link=" in address          # the full address, copied as it is
    colleague = pg.context.browser.new_context(**CONTEXT, accept_downloads=True).new_page()   # another browser, no session
    colleague.goto(address)
    colleague.get_by_role("heading", name="COMPAS Q1").wait_for(timeout=WAIT)
    colleague.get_by_role("heading", name="Local Law 144 summary").wait_for(timeout=WAIT)
    colleague.get_by_text("Save this model's audit of another period").wait_for(timeout=WAIT)
    pg.get_by_test_id("stSidebar").get_by_role("link", name="Bias Audit").click()
    pg.get_by_role("heading", name="Bias audit").wait_for(timeout=WAIT)
    pg.locator("summary").filter(has_text="Save this audit").click()
    save_audit(pg, "COMPAS Q2", "recidivism score", "2026-Q2")
    colleague.reload()
    colleague.get_by_text("has 2 saved periods").wait_for(timeout=WAIT)
    colleague.wait_for_function(IDLE, timeout=WAIT)
    colleague.wait_for_function(FIGURES_HOLD, arg=[2, "OFI", "DI"], timeout=WAIT)   # the trend charts: OFI, then DI
    charts = colleague.locator(".js-plotly-plot")
    assert charts.count() == 2 and colleague.get_by_text("2026-Q2").count() >= 1
    assert "OFI" in charts.nth(0).inner_text() and "DI" in charts.nth(1).inner_text()
    assert colleague.locator("[data-testid='stException']").count() == 0
    path = download(colleague, colleague.get_by_role("button", name="Download the Local Law 144 summary (CSV)"),
                    tmp_path / "ll144.csv")
    header = next(csv.reader(path.read_text(encoding="utf-8").splitlines()))
    assert header[:6] == ["categories of", "category", "n", "share of data", "selection rate", "impact ratio"]
    colleague.context.close()


def test_report_downloaded_from_the_app_shows_forty_long_group_names(page, tmp_path):
    names = [f"Applicants from district {k:02d} of the east" for k in range(40)]  # 38 characters each
    rng = __import__("numpy").random.default_rng(7)
    rows = [f"{g},{','.join(map(str, rng.multinomial(int(rng.integers(40, 400)), [0.3, 0.2, 0.1, 0.4])))}"
            for g in names]
    upload_cm_file(page, tmp_path / "forty.csv", "group,TP,FN,FP,TN\n" + "\n".join(rows) + "\n")
    page.get_by_text("40 groups read from forty.csv").wait_for(timeout=WAIT)
    press(page, page.get_by_role("button", name="Use these groups"))
    page.get_by_text("Data: forty.csv").wait_for(timeout=WAIT)
    page.get_by_test_id("stSidebar").get_by_role("link", name="Bias Audit").click()
    page.get_by_role("heading", name="Bias audit").wait_for(timeout=WAIT)
    page.wait_for_function(IDLE, timeout=WAIT)
    assert_group_labels_visible(page, names)  # in the app
    page.get_by_text("Download the audit report").click()
    path = download(page, page.get_by_role("button", name="Audit report (HTML)"), tmp_path / "report.html")
    # the file a colleague opens holds every name (tests/test_report.py prints the same forty groups' report in
    # Chromium and finds each name whole inside its figures)
    html = path.read_text(encoding="utf-8")
    assert "forty.csv" in html and all(name in html for name in names)


def test_an_attribute_alone_leads_with_the_adverse_impact_the_intersections_do_not_show(page, tmp_path):
    """Decisions alone, uploaded row by row: race alone shows adverse impact (A 50 %, B 35 %, 1,800 a side), the
    28 sex × race pairs of 450 do not. Race's own tiles, words and table lead and say 1 adverse impact; the
    intersections' tiles follow with 0, never standing for the attributes."""
    from test_decisions_one_answer import race_alone_adverse

    df = race_alone_adverse()
    selected = df["advanced"].eq("Yes").groupby(df["race"]).mean()   # independent: 0.5 and 158/450
    path = tmp_path / "screen.csv"
    df.to_csv(path, index=False)
    page.get_by_role("tab", name="Row-level predictions").click()
    page.locator("[data-testid='stFileUploader'] input[type='file']").nth(1).set_input_files(str(path))
    page.get_by_text("3,600 rows × 3 columns").wait_for(timeout=WAIT)
    declare(page, "benefit")
    press(page, page.get_by_role("button", name="Aggregate and use"))
    page.get_by_text("Aggregated 3,600 decisions into").wait_for(timeout=WAIT)

    page.get_by_test_id("stSidebar").get_by_role("link", name="Bias Audit").click()
    page.get_by_role("heading", name="Bias audit").wait_for(timeout=WAIT)
    main = page.get_by_test_id("stMain")
    main.get_by_text("of 28 pairs of these groups in all").wait_for(timeout=WAIT)   # the last tiles are drawn
    page.wait_for_function(IDLE, timeout=WAIT)
    tiles = main.get_by_test_id("stMetric")
    tiles.nth(11).wait_for(timeout=WAIT)   # the condition: the twelfth tile is drawn
    assert tiles.count() == 12   # sex alone, race alone, then the intersections: four verdicts each
    values = [int(tiles.nth(k).get_by_test_id("stMetricValue").inner_text()) for k in range(12)]
    labels = [tiles.nth(k).get_by_test_id("stMetricLabel").inner_text().strip() for k in range(4)]
    assert labels == ["Adverse impact", "Materiality unclear", "No adverse impact detected", "Inconclusive"]
    assert values[4:8] == [1, 0, 0, 0]      # race alone: its one pair, adverse impact
    assert values[8] == 0 and sum(values[8:]) == 28   # the intersections show none
    assert sum(values[:4]) == 6             # the six pairs of sex categories
    text = main.inner_text()
    assert text.index("By race alone") < text.index("Intersections") < text.index("What the decisions say")
    assert "Of 1 group pair: 1 adverse impact" in text
    ratio = selected["B"] / selected["A"]
    assert f"the lowest: race = B against race = A, impact ratio {ratio:.2f} [" in text   # one-letter values keep their name
    assert text.count("OFI") == 1   # what needs outcomes, once
