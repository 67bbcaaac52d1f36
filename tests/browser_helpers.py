"""Checks on figures drawn in a real browser, shared by the app and report tests, and the app's server started for
them."""

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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def app_server(log_path: Path, env: dict[str, str], port: int | None = None, args: tuple[str, ...] = (),
               forbidden: tuple[str, ...] = ("Traceback", "Warning")):
    """``streamlit run app.py`` on 127.0.0.1 (a free port unless given) with ``env`` added to the environment and
    ``args`` after the server's own; yields its address once it answers its health check (else the test fails),
    stops it after, and fails if its log (``log_path``) holds any of ``forbidden``."""
    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true", *args],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **env})
        deadline = time.time() + WAIT / 1000   # the condition: the server answers its health check
        while time.time() < deadline and proc.poll() is None:
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                    break
            except OSError:
                time.sleep(0.5)
        else:
            proc.terminate()
            log.flush()
            pytest.fail(f"streamlit did not answer its health check within {WAIT / 1000:.0f} s (exit code "
                        f"{proc.poll()}); its log ends:\n{Path(log_path).read_text(errors='replace')[-3000:]}")
        try:
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    text = Path(log_path).read_text()
    assert not any(word in text for word in forbidden), text

#: Every tick label of every figure on the page: its figure's title, its axis, its text and boxes.
TICKS_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(plot => {
  const box = plot.querySelector('.main-svg').getBoundingClientRect();
  const title = (plot.querySelector('.gtitle') || {}).textContent || '';
  return [...plot.querySelectorAll('g.xtick text, g.ytick text')].map(t => {
    const r = t.getBoundingClientRect();
    return {title, axis: t.closest('g.xtick') ? 'x' : 'y', text: t.textContent,
            left: r.left, right: r.right, top: r.top, bottom: r.bottom,
            fig: [box.left, box.top, box.right, box.bottom]};
  });
})"""


def assert_group_labels_visible(page, groups: list[str]) -> None:  # type: ignore[no-untyped-def]
    """In the OFI and DI heatmaps and the benefit chart, every group's name is a whole tick label
    that lies inside its figure, and no two column labels overlap."""
    # the condition: each of the three figures has a tick label per group on each of its axes, and none moved
    # between two looks a quarter of a second apart (Plotly lays a figure out again when its container resizes)
    page.wait_for_function(f"""n => {{
      const ticks = ({TICKS_JS})(), key = JSON.stringify(ticks);
      const count = (title, axis) => ticks.filter(t => t.title.startsWith(title) && t.axis === axis).length;
      const drawn = ['OFI = B', 'DI = ('].every(title => count(title, 'x') >= n && count(title, 'y') >= n)
                    && count('Benefit vs expected', 'y') >= n;
      const still = drawn && window.__groupTicks === key;
      window.__groupTicks = key;
      return still;
    }}""", arg=len(groups), timeout=WAIT, polling=250)
    ticks = page.evaluate(TICKS_JS)
    for title_start, axes in (("OFI = B", "xy"), ("DI = (", "xy"), ("Benefit vs expected", "y")):
        mine = [t for t in ticks if t["title"].startswith(title_start)]
        assert mine, f"no figure titled {title_start!r} among {sorted({t['title'][:40] for t in ticks})}"
        for axis in axes:
            labels = [t for t in mine if t["axis"] == axis]
            assert sorted(t["text"] for t in labels) == sorted(groups), (title_start, axis)
            for t in labels:
                left, top, right, bottom = t["fig"]
                assert t["right"] > t["left"] and t["bottom"] > t["top"], t  # drawn, not collapsed
                assert left - 1 <= t["left"] and t["right"] <= right + 1 and top - 1 <= t["top"] \
                    and t["bottom"] <= bottom + 1, f"{t['text']!r} falls outside its figure: {t}"
            if axis == "x":
                boxes = sorted((t["left"], t["right"]) for t in labels)
                assert all(a[1] <= b[0] + 0.5 for a, b in zip(boxes, boxes[1:])), "column labels collide"


# ------------------------------------------------------------------------------------------------ waits that say what they saw

#: What a page shows, read when a wait gives up: its address, its script's state (notRunning, running, initial),
#: how many elements are stale (drawn by an earlier run), the exceptions and figures on it, and the start of its text.
SEEN_JS = """() => {
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  return {url: location.href,
          script: (document.querySelector('[data-testid="stApp"]') || {getAttribute: () => 'no app'})
                    .getAttribute('data-test-script-state'),
          stale: document.querySelectorAll('[data-stale="true"]').length,
          exceptions: [...document.querySelectorAll('[data-testid="stException"]')].map(e => e.innerText.slice(0, 300)),
          figures: document.querySelectorAll('.js-plotly-plot').length,
          text: (main && main.innerText || '').slice(0, 1500)};
}"""


def describe_seen(seen: object) -> str:
    """:data:`SEEN_JS`'s answer as lines of a failure message."""
    if not isinstance(seen, dict):
        return f"  (the page could not be read: {seen})"
    text = "\n".join("    " + line for line in str(seen["text"]).splitlines() if line.strip())
    return (f"  at {seen['url']}; script {seen['script']}; "
            f"{seen['stale']} stale elements; {seen['figures']} figures; exceptions: {seen['exceptions'] or 'none'}\n"
            f"  its text begins:\n{text}")


#: The waits of Playwright's API that give up after a timeout, and how each finds its page.
WAITS = {"Locator": ("wait_for",), "Page": ("wait_for_function", "wait_for_selector", "wait_for_url")}


#: How often a page's ``wait_for_function`` predicate is evaluated, in ms, where a call names no ``polling``.
#: Playwright's own default evaluates it at every animation frame, which makes Chromium produce a frame for it:
#: measured on an idle Bias Audit page, 0.44 s of Chromium's CPU per 5 s of waiting, against 0.03 s at 100 ms.
POLL = 100


def name_what_waits_saw() -> None:
    """Make every Playwright wait (sync and async: a locator's ``wait_for``, a page's ``wait_for_function``,
    ``wait_for_selector`` and ``wait_for_url``) that gives up say what the page showed at that moment, after
    Playwright's own message (which names the condition waited for); ``wait_for_function`` polls every
    :data:`POLL` ms unless told otherwise. The error keeps its class, so a test that
    catches a timeout still does. Called once, by ``conftest.py``."""
    import functools

    try:
        import playwright.async_api as async_api
        import playwright.sync_api as sync_api
    except ImportError:   # no Playwright: no browser test runs
        return

    def page_of(obj):  # type: ignore[no-untyped-def]
        return obj.page if isinstance(obj, (sync_api.Locator, async_api.Locator)) else obj

    def message(exc: Exception, seen: object) -> str:
        return f"{exc}\nWhen the wait gave up, the page showed:\n{describe_seen(seen)}"

    for cls_name, methods in WAITS.items():
        for api, is_async in ((sync_api, False), (async_api, True)):
            cls = getattr(api, cls_name)
            for method in methods:
                original = getattr(cls, method)
                if getattr(original, "names_what_it_saw", False):
                    continue
                if is_async:
                    @functools.wraps(original)
                    async def wait(self, *args, __original=original, __m=method, **kwargs):  # type: ignore[no-untyped-def]
                        if __m == "wait_for_function":
                            kwargs.setdefault("polling", POLL)
                        try:
                            return await __original(self, *args, **kwargs)
                        except async_api.TimeoutError as exc:
                            try:
                                seen: object = await page_of(self).evaluate(SEEN_JS)
                            except Exception as read_error:  # noqa: BLE001 - a closed page says so
                                seen = read_error
                            raise type(exc)(message(exc, seen)) from exc
                else:
                    @functools.wraps(original)
                    def wait(self, *args, __original=original, __m=method, **kwargs):  # type: ignore[no-untyped-def]
                        if __m == "wait_for_function":
                            kwargs.setdefault("polling", POLL)
                        try:
                            return __original(self, *args, **kwargs)
                        except sync_api.TimeoutError as exc:
                            try:
                                seen = page_of(self).evaluate(SEEN_JS)
                            except Exception as read_error:  # noqa: BLE001 - a closed page says so
                                seen = read_error
                            raise type(exc)(message(exc, seen)) from exc
                wait.names_what_it_saw = True  # type: ignore[attr-defined]
                setattr(cls, method, wait)


#: How long a browser test waits for anything the server computes, in ms: generous, since only a failing test waits
#: it out, and a two-core machine running the suite beside other work is several times slower than a quiet one.
WAIT = 120_000

#: The page's script has ended its run: Streamlit marks its app element ``data-test-script-state="notRunning"`` (it
#: reads "initial" before the first run and "running" during one; Streamlit's own browser tests wait on it). The
#: status widget ("Running…") is no sign: with ``toolbarMode = "minimal"`` it is never drawn.
RUN_ENDED = ("(document.querySelector('[data-testid=\"stApp\"]') || {getAttribute: () => null})"
             ".getAttribute('data-test-script-state') === 'notRunning'")

#: The page has ended its run and holds no element left stale from an earlier one. Alone it holds before a click's
#: rerun has reached the server too, so a test waits for it together with what the run shows.
IDLE = f"() => {RUN_ENDED} && !document.querySelector('[data-stale=\"true\"]')"

#: ``[count, *texts]``: at least ``count`` figures are drawn and their text together holds each of ``texts``.
FIGURES_HOLD = """([count, ...texts]) => {
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  const text = plots.map(p => p.innerText).join('\\n');
  return plots.length >= count && texts.every(t => text.includes(t));
}"""

#: The page has ended its run (no stale element) with the radio option whose label holds ``arg``
#: checked.
ANSWERED = f"""words => {RUN_ENDED}
  && !document.querySelector('[data-stale="true"]')
  && [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stRadio"] label')].some(
       l => l.innerText.includes(words) && l.querySelector('input[type="radio"]:checked'))"""

# ------------------------------------------------------------------------------------------------ the app in Chromium
# The browser tests' shared fixtures (a module imports the ones it uses: ``server`` is one server per module) and
# the steps several of them take.

CHROMIUM = shutil.which("chromium")
#: ``--process-per-site``: a browser context's pages of the app share one renderer process, so the app's scripts,
#: compiled for one page, are compiled again for no other while a page of the app stays open (ten sessions in two
#: contexts: 118 -> 95 CPU-seconds of the machine, tests/test_isolation_browser.py).
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--process-per-site"]
#: Every browser context's settings: a desktop window, and reduced motion (the page's transitions, which the
#: tests never judge, are not animated frame by frame on the two cores).
CONTEXT = {"viewport": {"width": 1400, "height": 1000}, "reduced_motion": "reduce"}


def skip_without_chromium() -> None:
    """Skip the calling test module where Debian's chromium is absent, except under CI (where it must run)."""
    if CHROMIUM is None and not os.environ.get("CI"):
        pytest.skip("Debian chromium not installed (apt-get install chromium)", allow_module_level=True)



@pytest.fixture(scope="module")
def server(tmp_path_factory, request):
    """The app's server for one test module (each module its own, so that modules run side by side)."""
    data = tmp_path_factory.mktemp("data")   # saved audits of this server only, never the developer's ./data
    with app_server(ROOT / "tests" / f".streamlit-test-{request.module.__name__}.log",
                    {"FAIRNESS_DATA_DIR": str(data), "FAIRNESS_AUDIT_STORE": f"sqlite:///{data / 'audits.db'}"}) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    """One Chromium for a test module's tests. Launching it, and opening a page in a fresh browser context (an empty
    profile, whose cache holds none of the app's scripts), cost several seconds of CPU each on the two-core machine;
    measured: three Bias Audit pages opened in three fresh contexts took 25-33 s of Chromium's CPU, in one context
    16-20 s (the app's scripts compiled once, then taken from the context's cache)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def context(browser, server):
    """One browser context for a module's pages. Each page is still its own Streamlit session (a session is a
    WebSocket, and the app keeps a session's data under the ``?sid=`` of its own address); a test about separate
    browsers (cookies, sign-in, a link opened elsewhere) opens its own context from ``browser``.

    A page of the server (its health check) stays open as long as the context, so that the one renderer process
    of the app's pages (``--process-per-site`` in ``ARGS``) outlives each test's page: the app's scripts are
    compiled once for the module, not once a test."""
    ctx = browser.new_context(**CONTEXT, accept_downloads=True)
    keeper = ctx.new_page()
    keeper.goto(f"{server}/_stcore/health")
    yield ctx
    ctx.close()


@contextmanager
def page_in(context, url: str | None = None):
    """A new page of ``context``, opened at ``url`` if given; fails if the page threw a JavaScript error; closed
    after."""
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        if url is not None:
            pg.goto(url)
        yield pg
    finally:
        pg.close()
    assert not errors, errors


ARTIFACTS = ROOT / "test-artifacts"


def save_on_failure(request, pg) -> None:  # type: ignore[no-untyped-def]
    """On a failed test, keep a full-page screenshot in test-artifacts/ (CI uploads that folder)."""
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        ARTIFACTS.mkdir(exist_ok=True)
        pg.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)


@pytest.fixture()
def page(server, context, request):
    """A new page at the Upload page of the module's server, screenshotted if the test fails."""
    with page_in(context, f"{server}/Upload") as pg:
        pg.wait_for_selector("text=Load data", timeout=WAIT)
        yield pg
        save_on_failure(request, pg)


@pytest.fixture()
def open_page(server, context, request):
    """``open_page(path)``: a new page at ``server/path``, screenshotted if the test fails."""
    with page_in(context) as pg:
        def go(path: str):  # type: ignore[no-untyped-def]
            pg.goto(f"{server}/{path}")
            return pg

        yield go
        save_on_failure(request, pg)


def upload_cm_file(page, path, text: str, direction: str | None = "benefit") -> None:
    """Write ``text`` to ``path``, upload it on the Upload page's confusion-matrix tab and, unless ``direction`` is
    None, declare the positive class a benefit or a harm (the page preselects no answer)."""
    path.write_text(text)
    page.get_by_role("tab", name="Confusion-matrix file").click()
    # The condition that the server read the file: the file's chip under the uploader and, when a direction is to be
    # declared, the question it asks. On a loaded machine the browser's choice can be lost while the page is being
    # redrawn (the uploader replaced before its upload starts: a fresh-clone run at d954505 waited 120 s on a page
    # with no file), so a file not read after a third of the time is chosen again, at most three times in all.
    read = (page.get_by_test_id("stMain").locator("[data-testid='stRadio']:visible")
            .get_by_text({"benefit": "benefit for the person", "harm": "harm for the person"}[direction])
            if direction is not None else
            page.get_by_test_id("stFileChipName").get_by_text(path.name, exact=True))
    again_until(page, lambda: page.locator("[data-testid='stFileUploader'] input[type='file']").first
                .set_input_files(str(path)), read)
    if direction is not None:
        declare(page, direction)


def declare(page, direction: str) -> None:
    """Answer the Upload page's question: is the positive value a benefit or a harm for the person? The question
    is asked afresh whenever what it refers to changes (a rerun still under way may redraw it), so the answer
    is given until it holds."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    words = {"benefit": "benefit for the person", "harm": "harm for the person"}[direction]
    radios = page.get_by_test_id("stMain").locator("[data-testid='stRadio']:visible")
    for _ in range(5):
        option = radios.get_by_text(words)
        option.wait_for(timeout=WAIT)
        option.click()
        try:   # the condition: the run the click started has ended with the answer checked
            page.wait_for_function(ANSWERED, arg=words, timeout=WAIT // 4)
            return
        except PlaywrightTimeout:
            note_retry(page, f"waited {WAIT // 4000} s for the answer {direction!r} to hold")
            continue   # a rerun redrew the question unanswered: answer it again
    raise AssertionError(f"the answer {direction!r} did not hold")



def save_audit(pg, name: str, model: str, period: str) -> None:  # type: ignore[no-untyped-def]
    """Fill the Bias Audit page's "Save this audit" form and submit it; wait until it says it is saved."""
    pg.wait_for_function(IDLE, timeout=WAIT)   # the page's run has ended: a form filled while it draws may be redrawn
    form = pg.get_by_test_id("stForm")
    for label, value in (("Name", name), ("Model", model), ("Period", period)):
        form.get_by_label(label, exact=True).fill(value)
    form.get_by_role("button", name="Save this audit").click()
    pg.get_by_role("link", name="Open the saved audit").wait_for(timeout=WAIT)


def press(page, button, until=None) -> None:  # type: ignore[no-untyped-def]
    """Click ``button`` once the page's run has ended with nothing stale. A click that lands while a run is still
    drawing the page can be lost: under two CPU hogs, "Make a link" clicked as the saved audit's page was still
    drawing made no link, and the page sat idle without it for the whole wait. With ``until`` (a locator of what the
    click's run shows), a click lost even so (seen once more at rest: "Make a link" with three test workers on the
    two cores, the page idle and no link for 120 s) is made again: when ``until`` has not appeared after a third of
    the wait and the page is idle without it, at most three clicks in all."""
    if until is None:
        page.wait_for_function(IDLE, timeout=WAIT)
        button.click()
    else:
        again_until(page, button.click, until)


def note_retry(page, what: str, seen: object = None) -> None:  # type: ignore[no-untyped-def]
    """Record in test-artifacts/retries.log (which CI keeps) that an act was made again: the test, what was waited
    for, and what the page showed. A lost act costs :data:`LOST_AFTER` seconds, an unanswered one a third of the wait;
    the record shows which acts get lost."""
    if seen is None:
        try:
            seen = page.evaluate(SEEN_JS)
        except Exception as read_error:  # noqa: BLE001 - a closed page says so
            seen = read_error
    ARTIFACTS.mkdir(exist_ok=True)
    with open(ARTIFACTS / "retries.log", "a", encoding="utf-8") as log:
        log.write(f"{time.strftime('%H:%M:%S')} {os.environ.get('PYTEST_CURRENT_TEST', '?')}: {what}; "
                  f"acting again. The page showed:\n{describe_seen(seen)}\n\n")


#: Counts, in ``window.__sent``, what the page sends its server (WebSocket messages, fetches, XHRs): a click, a choice
#: or a file the page took is sent at once, whatever the server's load; installed once per document.
SENT_JS = """() => {
  if (window.__sent === undefined) {
    window.__sent = 0;
    const count = (proto, name) => { const f = proto[name];
      proto[name] = function (...a) { window.__sent++; return f.apply(this, a); }; };
    count(WebSocket.prototype, 'send'); count(window, 'fetch'); count(XMLHttpRequest.prototype, 'send');
  }
  return window.__sent;
}"""

#: Seconds after an act in which the page, at rest, must have sent its server something, or the act was lost.
LOST_AFTER = 10


def answered(page, base: int, done, what: str, timeout: int) -> bool:  # type: ignore[no-untyped-def]
    """Wait up to ``timeout`` ms for ``done(ms)`` (a bounded wait of its own, True once the act's answer is there),
    or until the act is known lost: the page, at rest, has sent its server nothing in :data:`LOST_AFTER` seconds since
    (the browser dropped the click as a run redrew the page; the server's load cannot delay this, since the page sends
    before the server answers). A lost act is recorded (:func:`note_retry`). An act the page did send waits out
    ``timeout`` for its answer. ``base`` is ``page.evaluate(SENT_JS)`` read before the act."""
    start = time.monotonic()
    while True:
        if done(1000):
            return True
        waited = time.monotonic() - start
        if waited * 1000 >= timeout:
            note_retry(page, f"waited {waited:.0f} s for {what}")
            return False
        try:
            sent, idle = page.evaluate(f"() => [window.__sent, ({IDLE})()]")
        except Exception:  # noqa: BLE001 - a page that navigated has acted
            continue
        if sent == base and idle and waited >= LOST_AFTER:
            note_retry(page, f"the page sent nothing in {waited:.0f} s after the act for {what}, at rest")
            return False


def again_until(page, act, shown) -> None:  # type: ignore[no-untyped-def]
    """Do ``act`` once the page's run has ended, until the locator ``shown`` appears: an act lost (the page at rest
    sent nothing, :func:`answered`) or not answered after a third of the wait is done again, at most three times in
    all (a click or a file choice made as a run redraws the page can be lost; the last attempt's error, with what the
    page showed, is what the test reports)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    def done(ms: int) -> bool:
        try:
            shown.first.wait_for(timeout=ms)
            return True
        except PlaywrightTimeout:
            return False

    for attempt in range(3):
        page.wait_for_function(IDLE, timeout=WAIT)
        if attempt and shown.first.is_visible():
            return   # the previous attempt's run showed it after all
        base = page.evaluate(SENT_JS)
        act()
        if attempt == 2:
            shown.first.wait_for(timeout=WAIT // 3)   # the last attempt's error is the test's
            return
        if answered(page, base, done, str(shown), WAIT // 3):
            return


def download(page, button, path: Path, timeout: int = WAIT) -> Path:  # type: ignore[no-untyped-def]
    """Press ``button`` and save the file the browser receives at ``path``. A press lost (the page at rest sent
    nothing, :func:`answered`) or that brings no file within ``timeout`` ms is made again once the page is idle, at
    most three times in all (the isolation test's record: one click of twenty on a loaded machine brought nothing);
    the last attempt's error, with what the page showed, is what the test reports."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    got: list = []  # type: ignore[type-arg]
    def keep(file) -> None:  # type: ignore[no-untyped-def]   # a function of ours: Playwright marks its listeners
        got.append(file)
    page.on("download", keep)

    def done(ms: int) -> bool:
        if not got:
            try:
                page.wait_for_event("download", timeout=ms)   # the listener above keeps it
            except PlaywrightTimeout:
                pass
        return bool(got)

    try:
        for attempt in range(3):
            page.wait_for_function(IDLE, timeout=WAIT)
            base = page.evaluate(SENT_JS)
            if attempt == 2:
                with page.expect_download(timeout=timeout) as info:   # the last attempt's error is the test's
                    button.click()
                got.append(info.value)
            else:
                button.click()
            if got or answered(page, base, done, f"the download of {button}", timeout):
                got[0].save_as(path)
                return path
    finally:
        page.remove_listener("download", keep)
    raise AssertionError("unreachable")


def choose(page, label: str, option: str, shown=None) -> None:  # type: ignore[no-untyped-def]
    """Pick ``option`` in the Streamlit selectbox labelled ``label`` (see :func:`pick`)."""
    pick(page, page.get_by_test_id("stSelectbox").filter(has_text=label).first, option, shown)


def pick(page, box, option: str, shown=None) -> None:  # type: ignore[no-untyped-def]
    """Choose ``option`` in the Streamlit selectbox or multiselect ``box`` (a locator): type to filter, then click
    the option or, when a rerun's layout shift keeps covering it (seen on a loaded machine), press Enter on it once
    it is the highlighted one. A choice lost as a run redraws the box (seen in a quiet serial run: a multiselect
    showing the text typed and no chip for the whole wait) is made again until ``shown`` (a locator of what the
    choice's run shows) appears (:func:`again_until`). A multiselect's ``shown`` is by default the option's chip; a
    selectbox has none by default (its box shows the text typed as it shows the choice), so without ``shown`` its
    choice is made once, after the page's run has ended."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    def act() -> None:
        box.locator("input").first.click()   # the box's own input: a click on its middle can miss it
        page.keyboard.press("ControlOrMeta+A")   # a lost attempt leaves its text typed in the box
        page.keyboard.type(option)
        target = page.get_by_role("option", name=option, exact=True).first
        try:
            target.click(timeout=10000)
        except PlaywrightTimeout:
            target.wait_for(timeout=10000)
            assert target.get_attribute("data-focused") == "true", f"{option!r} is not the highlighted option"
            page.keyboard.press("Enter")

    if shown is None and box.get_attribute("data-testid") == "stMultiSelect":
        shown = box.get_by_text(option, exact=True)   # the chip's text (a lost attempt's is the input's value)
    if shown is None:
        page.wait_for_function(IDLE, timeout=WAIT)
        act()
    else:
        again_until(page, act, shown)
