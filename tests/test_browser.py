"""Browser test: a real Streamlit server and Debian's Chromium driven by Playwright.

Uploads a CSV of group confusion matrices and checks that the OFI and DI
heatmaps of those groups appear. Skipped only outside CI when Chromium is absent.
"""

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]

if CHROMIUM is None and not os.environ.get("CI"):
    pytest.skip("Debian chromium not installed (apt-get install chromium)", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = _free_port()
    log = open(ROOT / "tests" / ".streamlit-test.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                break
        except OSError:
            time.sleep(0.5)
    else:
        proc.terminate()
        pytest.fail("streamlit did not start within 60 s")
    yield url
    proc.terminate()
    proc.wait(timeout=20)
    log.close()
    text = (ROOT / "tests" / ".streamlit-test.log").read_text()
    assert "Traceback" not in text and "Warning" not in text, text


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


@pytest.fixture()
def page(server):
    with browser_at(f"{server}/Upload") as pg:
        pg.wait_for_selector("text=Load data", timeout=60000)
        yield pg


def upload_cm_file(page, path, text: str) -> None:
    """Write ``text`` to ``path`` and upload it on the Upload page's confusion-matrix tab."""
    path.write_text(text)
    page.get_by_role("tab", name="Confusion-matrix file").click()
    page.locator("[data-testid='stFileUploader'] input[type='file']").first.set_input_files(str(path))


def test_upload_csv_and_see_heatmaps(page, tmp_path):
    upload_cm_file(page, tmp_path / "my_groups.csv",
                   "group,TP,FN,FP,TN\nAlpha,1,0,0,5\nBeta,7,0,1,10\nGamma,1,1,0,5\n")
    page.get_by_text("3 groups read from my_groups.csv").wait_for(timeout=30000)
    page.get_by_role("button", name="Use these groups").click()
    page.get_by_text("Data: my_groups.csv").wait_for(timeout=30000)

    page.get_by_test_id("stSidebar").get_by_role("link", name="Bias Audit").click()
    page.get_by_role("heading", name="Bias audit").wait_for(timeout=30000)
    page.wait_for_selector(".js-plotly-plot", timeout=30000)
    page.wait_for_timeout(1500)
    assert page.locator(".js-plotly-plot").count() >= 3  # OFI, DI, benefit chart
    first_two = page.locator(".js-plotly-plot").nth(0).inner_text() + page.locator(".js-plotly-plot").nth(1).inner_text()
    for text in ("Alpha", "Beta", "Gamma", "OFI = B_i − B_j", "-0.056", "0.38"):
        assert text in first_two, text
    page.screenshot(path=str(tmp_path / "bias_audit.png"))


def test_bad_upload_shows_row_and_column_and_keeps_data(page, tmp_path):
    upload_cm_file(page, tmp_path / "bad.csv", "group,TP,FN,FP,TN\nAlpha,1,0,0,5\nBeta,7,-1,1,10\n")
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
