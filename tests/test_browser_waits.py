"""The browser tests' waits (tests/browser_helpers.name_what_waits_saw): one that gives up names what it waited for
and says what the page showed, in its own error class; one that is met returns as Playwright's does."""

import os
import shutil

import pytest

CHROMIUM = shutil.which("chromium")
if CHROMIUM is None and not os.environ.get("CI"):
    pytest.skip("Debian chromium not installed (apt-get install chromium)", allow_module_level=True)

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
PAGE = ("<html><body><div data-testid='stMain'><h1>Load data</h1><p>3 groups read from mine.csv</p>"
        "<div data-testid='stException'>ValueError: boom</div></div></body></html>")


def test_a_wait_that_gives_up_says_what_the_page_showed(tmp_path):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    path = tmp_path / "page.html"
    path.write_text(PAGE)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page()
        page.goto(path.as_uri())
        page.get_by_text("3 groups read from mine.csv").wait_for(timeout=5000)   # met: returns quietly
        for wait in (lambda: page.get_by_text("Loaded 3 groups").wait_for(timeout=300),
                     lambda: page.wait_for_function("() => document.title === 'never'", timeout=300),
                     lambda: page.wait_for_selector(".js-plotly-plot", timeout=300)):
            with pytest.raises(PlaywrightTimeout) as info:
                wait()
            text = str(info.value)
            assert "300ms" in text                                   # Playwright's own words: what and how long
            assert "When the wait gave up, the page showed:" in text
            assert "3 groups read from mine.csv" in text and "ValueError: boom" in text
            assert "script no app" in text and "0 figures" in text
        browser.close()


def test_an_async_wait_that_gives_up_says_what_the_page_showed(tmp_path):
    import asyncio

    from playwright.async_api import TimeoutError as PlaywrightTimeout
    from playwright.async_api import async_playwright

    path = tmp_path / "page.html"
    path.write_text(PAGE)

    async def run() -> str:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = await browser.new_page()
            await page.goto(path.as_uri())
            try:
                await page.get_by_text("Loaded 3 groups").wait_for(timeout=300)
            except PlaywrightTimeout as exc:
                return str(exc)
            finally:
                await browser.close()
        return "no timeout"

    text = asyncio.run(run())
    assert "When the wait gave up, the page showed:" in text and "3 groups read from mine.csv" in text


def test_no_browser_test_waits_for_a_time():
    """A fixed pause is a guess about the machine's speed: no test under tests/ calls Playwright's
    ``wait_for_timeout`` or sleeps in a Playwright test (the one poll of the server's health check is bounded and
    named in browser_helpers.app_server)."""
    import re
    from pathlib import Path

    here = Path(__file__).resolve().parent
    found = []
    for path in sorted(here.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if path.name == Path(__file__).name:
            continue
        found += [f"{path.name}:{text[:m.start()].count(chr(10)) + 1}" for m in re.finditer(r"wait_for_timeout\(", text)]
        if "playwright" in text:
            found += [f"{path.name}:{text[:m.start()].count(chr(10)) + 1}"
                      for m in re.finditer(r"(?<![\w.])(?:time|asyncio)\.sleep\(", text)
                      if path.name != "browser_helpers.py"]
    assert not found, f"fixed pauses in browser tests: {found}"
