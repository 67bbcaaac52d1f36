"""Isolation under load (issue 28), in real browsers against one server: ten sessions at once (two browsers, five
tabs each) each upload their own confusion-matrix file with group names of their own, open the Bias Audit page and
download the report and the verdicts; no page, report or CSV of one session names another's groups.

Driven like bench/server_load.py (one server, one Chromium, all at once).
The same property for every download and element, without a browser: tests/test_shared_caches.py.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from server_load import AUDIT_READY, RENDERED_JS, free_port, start_server  # noqa: E402

if not shutil.which("chromium"):
    pytest.skip("Debian chromium not installed (apt-get install chromium)", allow_module_level=True)
pytestmark = pytest.mark.browser   # drives the app in Chromium: run first (tests/conftest.py)

GROUPS = ("Kestrel", "Marten", "Osprey")
#: Ten analysts at once, as issue 28 asks ("while 10 sessions run").
SESSIONS = ("Amber", "Basalt", "Cobalt", "Dune", "Ember", "Fjord", "Garnet", "Heath", "Iris", "Jade")
#: The sessions take turns between two browsers (browser contexts): five sessions each.
BROWSERS = 2
#: The page has finished its run; the same with a radio option checked whose label holds the argument.
from browser_helpers import ANSWERED, ARGS, CONTEXT, IDLE, SEEN_JS, note_retry  # noqa: E402


def table(k: str) -> str:
    rows = [(40, 10, 12, 38), (30, 20, 8, 42), (25, 15, 10, 50)]
    return "group,TP,FN,FP,TN\n" + "".join(f"{k}{g},{','.join(map(str, r))}\n" for g, r in zip(GROUPS, rows))


from playwright.async_api import TimeoutError as PlaywrightTimeout  # noqa: E402


async def seen_now(page) -> object:  # type: ignore[no-untyped-def]
    """What the page shows (SEEN_JS) for the record of a retry, or the error that kept it from being read: the
    record never stops the retry it notes (note_retry does the same for a sync page)."""
    try:
        return await page.evaluate(SEEN_JS)
    except Exception as read_error:  # noqa: BLE001 - a closed page says so
        return read_error


async def upload(page, path: Path, read: str, timeout: int) -> None:  # type: ignore[no-untyped-def]
    """Choose ``path`` in the confusion-matrix uploader until the page says ``read``. On a loaded two-core
    machine the browser's choice can be lost while the page is being redrawn (the uploader is replaced
    before its upload starts), so a file not read after a third of the time is chosen again, at most
    three times in all; what the server then answers is what the test judges."""
    for attempt in range(3):
        await page.wait_for_function(IDLE, timeout=timeout)
        await page.locator("[data-testid='stFileUploader'] input[type='file']").first.set_input_files(str(path))
        try:
            await page.get_by_text(read).wait_for(timeout=timeout // 3)
            return
        except Exception:
            if attempt == 2:
                raise
            note_retry(page, f"waited {timeout // 3000} s for {read!r}", await seen_now(page))


async def download(page, button: str, saved: Path, timeout: int) -> None:  # type: ignore[no-untyped-def]
    """Click ``button`` until the browser has the file, at most three times, a third of the time each. On the
    loaded two-core machine of a fresh-clone CI run with two CPU hogs beside it, one click of ten sessions' twenty
    once brought no download at all within 240 s (run 3 of docs/contributing.md's record; not reproduced since, its
    cause not found): the file a click asks for is made on request, so a click answered by nothing is clicked
    again, and the last attempt's error, with what the page showed, is what the test reports."""
    for attempt in range(3):
        try:
            async with page.expect_download(timeout=timeout // 3) as info:
                await page.get_by_role("button", name=button).click(timeout=timeout // 3)
            await (await info.value).save_as(saved)
            return
        except PlaywrightTimeout:
            if attempt == 2:
                raise
            note_retry(page, f"waited {timeout // 3000} s for the download of {button!r}", await seen_now(page))
            await page.wait_for_function(IDLE, timeout=timeout)


async def one_session(context, base: str, k: str, tmp: Path, after: asyncio.Event | None,
                      opened: asyncio.Event) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Upload session ``k``'s file, use it, open the Bias Audit page; its page text and downloads. The session
    opens its tab once the one before it has its Upload page (``after`` is set), and then sets ``opened``:
    all ten still run at once (each takes tens of seconds), but ten tabs are not opened in the same
    instant on a two-core machine."""
    timeout = 240_000  # ten sessions on two cores, after the whole suite: generous, since only a failure waits it out
    if after is not None:
        await asyncio.wait_for(after.wait(), timeout / 1000)
    page = await context.new_page()
    try:
        path = tmp / f"{k}.csv"
        path.write_text(table(k))
        await page.goto(f"{base}/Upload", timeout=timeout)
        await page.get_by_role("heading", name="Load data").wait_for(timeout=timeout)
        opened.set()
        await page.wait_for_function(IDLE, timeout=timeout)
        await page.get_by_role("tab", name="Confusion-matrix file").click(timeout=timeout)
        await upload(page, path, f"3 groups read from {k}.csv", timeout)
        radios = page.get_by_test_id("stMain").locator("[data-testid='stRadio']:visible")
        for _ in range(5):   # the question is redrawn while a rerun is under way: answer until it holds
            await radios.get_by_text("benefit for the person").click(timeout=timeout)
            try:   # the condition: the click's run has ended with the answer checked
                await page.wait_for_function(ANSWERED, arg="benefit for the person", timeout=timeout // 4)
                break
            except PlaywrightTimeout:
                continue
        await page.wait_for_function(IDLE, timeout=timeout)   # a click while a run draws the page can be lost
        await page.get_by_role("button", name="Use these groups").click(timeout=timeout)
        await page.get_by_text(f"Loaded 3 groups from {k}.csv.").wait_for(timeout=timeout)
        await page.get_by_test_id("stMain").get_by_role("link", name="Open the bias audit →").click(timeout=timeout)
        await page.wait_for_function(RENDERED_JS, arg=AUDIT_READY, timeout=timeout, polling=200)
        # the run has ended: a download button clicked while a run is under way may hold a file id that run replaces
        await page.wait_for_function(IDLE, timeout=timeout)
        out = {"page": await page.evaluate("() => document.body.innerText")}
        await page.get_by_text("Download the audit report").click()
        for name, button in (("report", "Audit report (HTML)"),
                             ("verdicts", "Download verdicts with every number (CSV)")):
            saved = tmp / f"{k}-{name}"
            await download(page, button, saved, timeout)
            out[name] = saved.read_text(encoding="utf-8")
        return out
    finally:
        opened.set()   # a session that failed before its page opened does not hold the next one back
        await page.close()


async def all_sessions(tmp: Path) -> dict[str, dict[str, str]]:
    from playwright.async_api import async_playwright

    port = free_port()
    proc, log = start_server(port, ttl=10)
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
            # Two browsers' worth of sessions: each context is a browser of its own (its own cookies, the XSRF
            # cookie that binds a session's kept data among them), each page in it a Streamlit session of its own.
            # Ten contexts cost twice the Chromium CPU of two (each compiles the app's scripts afresh).
            contexts = [await browser.new_context(**CONTEXT, accept_downloads=True)
                        for _ in range(BROWSERS)]
            opened = [asyncio.Event() for _ in SESSIONS]
            got = await asyncio.gather(*(one_session(contexts[i % BROWSERS], f"http://127.0.0.1:{port}", k, tmp,
                                                     opened[i - 1] if i else None, opened[i])
                                         for i, k in enumerate(SESSIONS)))
            await browser.close()
    except BaseException:
        print("the server's log ends:\n" + log.read_text(errors="replace")[-4000:])
        raise
    finally:
        proc.terminate()
        proc.wait(10)
        log.unlink(missing_ok=True)
    return dict(zip(SESSIONS, got))


def test_concurrent_sessions_see_only_their_own_groups(tmp_path):
    seen = asyncio.run(all_sessions(tmp_path))
    for k, texts in seen.items():
        assert all(f"{k}{g}" in texts["page"] for g in GROUPS), f"session {k}'s page lacks its groups"
        assert f"{k}Kestrel" in texts["report"] and f"{k}Osprey" in texts["verdicts"]
        foreign = [f"{o}{g}" for o in SESSIONS if o != k for g in GROUPS]
        for where, text in texts.items():
            leaked = [name for name in foreign if name in text]
            assert not leaked, f"session {k}'s {where} shows {leaked}"
