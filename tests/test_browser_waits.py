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


def test_an_act_the_page_never_sent_is_known_lost_in_seconds_and_one_it_sent_is_waited_out(tmp_path, monkeypatch):
    """browser_helpers.answered: a page at rest that has sent its server nothing since the act lost it (known after
    LOST_AFTER seconds, recorded in retries.log); an act the page did send (here a fetch) is waited for to the end of
    its time; an answer that comes returns at once."""
    import time

    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    import browser_helpers as bh

    monkeypatch.setattr(bh, "LOST_AFTER", 1)
    monkeypatch.setattr(bh, "ARTIFACTS", tmp_path)
    page_file = tmp_path / "page.html"
    page_file.write_text("<div data-testid='stApp' data-test-script-state='notRunning'><p>Load data</p></div>")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page()
        page.goto(page_file.as_uri())
        def done(ms: int) -> bool:   # the act's answer: "Loaded" shows
            try:
                page.get_by_text("Loaded").wait_for(timeout=ms)
                return True
            except PlaywrightTimeout:
                return False

        base = page.evaluate(bh.SENT_JS)
        start = time.monotonic()
        assert not bh.answered(page, base, done, "a lost click", 60_000)       # nothing sent: lost
        assert time.monotonic() - start < 10
        base = page.evaluate(bh.SENT_JS)
        page.evaluate("() => { fetch('data:text/plain,x'); }")                   # the act was sent
        start = time.monotonic()
        assert not bh.answered(page, base, done, "a sent click", 3_000)        # waited out, not called lost
        assert time.monotonic() - start >= 3
        page.evaluate("() => { const p = document.createElement('p'); p.textContent = 'Loaded'; "
                      "document.querySelector('[data-testid=stApp]').append(p); }")
        assert bh.answered(page, page.evaluate(bh.SENT_JS), done, "an answered click", 3_000)
        browser.close()
    log = (tmp_path / "retries.log").read_text()
    assert "the page sent nothing in" in log and "a lost click, at rest" in log
    assert "for a sent click" in log and "waited 3 s" in log and "an answered click" not in log
