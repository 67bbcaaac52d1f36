"""Benchmark: one Streamlit server, N analysts at once on the Bias Audit page (issue 28).

Starts ``streamlit run app.py`` on a free port and drives N headless Chromium sessions (one browser
context each) that open the Bias Audit page on the preloaded COMPAS demo, wait until it has rendered
(the verdict table and every chart of the first tab drawn, no "Running…" status), then change one
setting (the OFI tolerance, one keyboard step of its slider) and wait again, then follow the sidebar
to Methods and back: the page's second view in the same session (the data loaded, the browser's
assets cached), the "warm view" of issue 28.

Reported per round of N sessions:

- **server CPU seconds per view** (a new session), **per second view** and **per change**: utime + stime of the server process from
  ``/proc/<pid>/stat`` before and after the round (the server idle at both reads), divided by N.
  This is the robust number; the browsers share the same cores, so wall times are noisy.
- the same **net of the idle server's CPU** (``idle_cpu_s_per_s``, measured before the rounds: Streamlit polls
  the secrets files five times a second) times each window's length, which on a loaded machine (views of
  5-10 s wall) is otherwise counted as the view's.
- **wall seconds** of each, the mean over the sessions.
- **RSS growth per session** (server RSS with the N sessions open, minus before, over N) and the
  RSS after the sessions close and Streamlit drops them (``--ttl`` seconds after the last
  websocket closes; a probe session then makes Streamlit reap them), with the share returned.

Each session count runs twice (``--assets``): in new browsers, which fetch Streamlit's frontend files from
the server (about 130 files, 9.4 MB for this page, ~0.17 s of server CPU that a plain page pays too), and in
browsers that have opened the app before and have them cached (content-hashed, sent "immutable" for a
year), which is what a returning analyst's new session costs.

A warm-up session first loads the demo (the cold view, reported), then a baseline session opens a
plain page (Methods) in the same server, both ways, so every Bias Audit number can be read against it.
Prints a table and a JSON last line.

    python bench/server_load.py [--sessions 1,3,10] [--ttl 10] [--assets fresh,cached] [--quick]

Declared goals, on the rounds in browsers with the frontend cached (a returning analyst): a new session's
first view at most 0.25 s of server CPU and a setting change at most 0.1 s (both net of the idle server; the
first round's change, which computes the new tolerance's verdicts once for the whole server, is reported apart),
at most 50 MiB per session, every session served. A new browser's first view also fetches Streamlit's frontend
files (0.16-0.20 s of server CPU by themselves, a plain page pays them too): it is reported, without a goal.
The ratio is a new session's Bias Audit view against the plain page's in the same server (cached browsers).

``--proxy nginx``: the browsers reach the server through nginx configured as docs/server.md deploys the team
server (``/static/`` answered from the installed package's files on disk, everything else proxied, the WebSocket
included); then a brand-new browser's first view is held to the 0.25 s goal too.

``--quick``: rounds of 1 and 3 sessions in cached browsers (and the warm-up and the plain-page baselines), 2 s
of idle measurement, closed sessions kept 3 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import at_most, declare, equal_to  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
TICK = os.sysconf("SC_CLK_TCK")
MIB = 1024 * 1024

#: The Bias Audit page has drawn its first tab: the verdict table, every chart, nothing running, no error.
RENDERED_JS = """(want) => {
  if (document.querySelector('[data-testid="stException"]')) return 'exception';
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector('[data-stale="true"]')) return false;
  if (document.querySelectorAll('.js-plotly-plot').length < want.charts) return false;
  if (document.querySelectorAll('[data-testid="stDataFrame"]').length < want.tables) return false;
  if (want.text && !document.body.innerText.includes(want.text)) return false;
  return true;
}"""
#: A rerun is under way (Streamlit marks its app element's script state; the status widget is never drawn with
#: toolbarMode "minimal").
STARTED_JS = """() => !!document.querySelector('[data-testid="stApp"][data-test-script-state="running"], [data-stale="true"]')"""
#: A plain page has drawn: its title, nothing running.
PLAIN_JS = """() => !!document.querySelector('[data-testid="stApp"][data-test-script-state="notRunning"]')
  && !!document.querySelector('h1') && document.body.innerText.includes('Methods')"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` (all its threads), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def wait_idle(pid: int, quiet: float = 0.03, step: float = 0.5, limit: float = 60.0) -> None:
    """Until the server spends under ``quiet`` CPU seconds in ``step`` seconds (its work for the round done)."""
    end = time.monotonic() + limit
    last = cpu_seconds(pid)
    while time.monotonic() < end:
        time.sleep(step)
        now = cpu_seconds(pid)
        if now - last < quiet:
            return
        last = now


def start_server(port: int, ttl: int) -> tuple[subprocess.Popen, Path]:
    log = ROOT / "bench" / f".server_load-{port}.log"
    exe = Path(sys.executable).with_name("streamlit")
    cmd = [str(exe) if exe.exists() else sys.executable, *([] if exe.exists() else ["-m", "streamlit"]),
           "run", str(ROOT / "app.py"), "--server.headless", "true", "--server.port", str(port),
           "--server.disconnectedSessionTTL", str(ttl), "--browser.gatherUsageStats", "false"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log.open("w"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/_stcore/health"
    for _ in range(240):
        try:
            if urllib.request.urlopen(url, timeout=1).read() == b"ok":
                return proc, log
        except OSError:
            time.sleep(0.25)
    proc.kill()
    raise SystemExit(f"streamlit did not start within 60 s; see {log}")


NGINX_CONF = """worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log;
events {{ worker_connections 1024; }}
http {{
    include {mime};
    access_log off;
    client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy; fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi; scgi_temp_path {tmp}/scgi;
    server {{
        listen 127.0.0.1:{port};
        client_max_body_size 200m;
        location /static/ {{                  # Streamlit's frontend files, from disk (docs/server.md, step 5)
            alias {static}/;
            expires 1y;
            add_header Cache-Control "public, immutable";
        }}
        location / {{
            proxy_pass http://127.0.0.1:{upstream};
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection "upgrade";
            proxy_set_header Host $host;
            proxy_read_timeout 86400;
        }}
    }}
}}
"""


def streamlit_static() -> Path:
    """The folder Streamlit serves at ``/static/``: ``static/static`` inside the installed package."""
    import streamlit

    return Path(streamlit.__file__).parent / "static" / "static"


def start_proxy(upstream: int) -> tuple[subprocess.Popen, int, Path]:
    """nginx in front of the server as docs/server.md deploys it: ``/static/`` from disk, the rest proxied
    (WebSocket included). Returns the process, its port and its temporary folder."""
    import tempfile

    exe = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(exe).exists():
        raise SystemExit("--proxy nginx needs nginx (Debian: apt-get install nginx-light)")
    tmp = Path(tempfile.mkdtemp(prefix="server_load_nginx_"))
    port = free_port()
    mime = next((m for m in ("/etc/nginx/mime.types", "/usr/local/nginx/conf/mime.types") if Path(m).exists()), None)
    conf = tmp / "nginx.conf"
    conf.write_text(NGINX_CONF.format(tmp=tmp, port=port, upstream=upstream, static=streamlit_static(),
                                      mime=mime or "/dev/null"))
    proc = subprocess.Popen([exe, "-c", str(conf), "-p", str(tmp)], stdout=subprocess.DEVNULL,
                            stderr=(tmp / "stderr.log").open("w"))
    for _ in range(80):
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1).read() == b"ok":
                return proc, port, tmp
        except OSError:
            time.sleep(0.25)
    proc.kill()
    raise SystemExit(f"nginx did not start: {(tmp / 'stderr.log').read_text()[:500]}")


class Sessions:
    """N browser contexts against one server, opened, changed and closed together."""

    def __init__(self, browser, base: str, timeout_s: float, assets: dict[str, tuple] | None = None,  # type: ignore[no-untyped-def]
                 fill_only: bool = False) -> None:
        self.browser, self.base, self.timeout = browser, base, timeout_s * 1000
        self.contexts: list = []
        self.failures: list[str] = []
        self.assets, self.fill_only = assets, fill_only

    async def _from_cache(self, route) -> None:  # type: ignore[no-untyped-def]
        """Serve Streamlit's frontend files (``/static/``: content-hashed, sent "immutable, max-age=1 year") from
        :attr:`assets`, filling it on a miss: a browser that has opened the app before asks the server for none."""
        url = route.request.url
        hit = None if self.fill_only else self.assets.get(url)  # type: ignore[union-attr]
        try:
            if hit is None:
                response = await route.fetch()
                hit = (response.status, dict(response.headers), await response.body())
                if response.ok:
                    self.assets[url] = hit  # type: ignore[index]
            await route.fulfill(status=hit[0], headers=hit[1], body=hit[2])
        except Exception:  # noqa: BLE001 - the page closed while a file was on its way
            pass

    async def _rendered(self, page, ready: str, arg: object) -> None:  # type: ignore[no-untyped-def]
        got = await page.wait_for_function(ready, arg=arg, timeout=self.timeout, polling=100)
        if await got.json_value() == "exception":
            raise RuntimeError("the page shows an exception")

    async def _timed(self, what: str, steps) -> float | None:  # type: ignore[no-untyped-def]
        """Seconds ``steps()`` took, or None with the failure counted and named (a failed session is not fatal)."""
        t0 = time.perf_counter()
        try:
            await steps()
        except Exception as exc:  # noqa: BLE001
            self.failures.append(f"{what}: {type(exc).__name__}: {str(exc)[:200]}")
            return None
        return time.perf_counter() - t0

    async def _open(self, path: str, ready: str, arg: object) -> tuple[object, float] | None:
        ctx = await self.browser.new_context(viewport={"width": 1400, "height": 1000})
        self.contexts.append(ctx)
        if self.assets is not None:
            await ctx.route("**/static/**", self._from_cache)
        page = await ctx.new_page()

        async def steps() -> None:
            await page.goto(f"{self.base}/{path}", wait_until="domcontentloaded", timeout=self.timeout)
            await page.wait_for_selector("[data-testid='stApp']", timeout=self.timeout)
            await asyncio.sleep(0.5)  # the script starts after the websocket opens
            await self._rendered(page, ready, arg)

        took = await self._timed(f"open {path}", steps)
        return None if took is None else (page, took)

    async def open(self, n: int, path: str, ready: str, arg: object = None) -> list[tuple[object, float]]:
        got = await asyncio.gather(*(self._open(path, ready, arg) for _ in range(n)))
        return [g for g in got if g is not None]

    async def _change(self, page) -> float | None:  # type: ignore[no-untyped-def]
        """One keyboard step of the OFI tolerance slider (0.050 → 0.055), then the page redrawn with it."""
        async def steps() -> None:
            thumb = page.locator('[data-testid="stSidebar"] [data-testid="stSlider"] input[type="range"]').first
            await thumb.focus()
            await thumb.press("ArrowRight")
            try:   # the rerun has started: the status shows "Running…" or the old elements are marked stale
                await page.wait_for_function(STARTED_JS, timeout=5000, polling=50)
            except Exception:  # noqa: BLE001 - a rerun faster than the poll; the text check below decides
                pass
            await self._rendered(page, RENDERED_JS, {**AUDIT_READY, "text": "±0.055 for OFI"})

        return await self._timed("change", steps)

    async def change(self, pages: list) -> list[float]:  # type: ignore[type-arg]
        got = await asyncio.gather(*(self._change(p) for p in pages))
        return [g for g in got if g is not None]

    async def _navigate(self, page, label: str, ready: str, arg: object) -> float | None:  # type: ignore[no-untyped-def]
        """Follow the sidebar's link to another page in the same session (no new assets, no new session)."""
        async def steps() -> None:
            await page.locator('[data-testid="stSidebar"] [data-testid="stPageLink"] a', has_text=label).first.click()
            await asyncio.sleep(0.3)
            await self._rendered(page, ready, arg)

        return await self._timed(f"navigate to {label}", steps)

    async def navigate(self, pages: list, label: str, ready: str, arg: object = None) -> list[float]:  # type: ignore[type-arg]
        got = await asyncio.gather(*(self._navigate(p, label, ready, arg) for p in pages))
        return [g for g in got if g is not None]

    async def close(self) -> None:
        for ctx in self.contexts:
            await ctx.close()
        self.contexts = []


#: The first tab of the Bias Audit page: 7 charts (scatter, forest, OFI and DI heatmaps, benefit, metric,
#: comparison heatmap) and at least 4 tables (verdicts, group metrics, one-vs-reference, properties).
AUDIT_READY = {"charts": 7, "tables": 4, "text": "for OFI; every claim"}


def mean(xs: list[float]) -> float | None:
    return round(sum(xs) / len(xs), 3) if xs else None


async def run(args: argparse.Namespace) -> dict:
    from playwright.async_api import async_playwright

    port = free_port()
    proc, log = start_server(port, args.ttl)
    pid, base = proc.pid, f"http://127.0.0.1:{port}"
    out: dict = {"bench": "server_load", "page": "Bias Audit (COMPAS demo)", "cores": os.cpu_count(), "rounds": [],
                 "proxy": args.proxy}
    proxy = None
    try:
        if args.proxy == "nginx":
            proxy, proxy_port, proxy_tmp = start_proxy(port)
            base = f"http://127.0.0.1:{proxy_port}"
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
            wait_idle(pid)
            rss_start = rss_mib(pid)

            # warm-up: the first view ever loads the demo and fills the caches (reported as the cold view); the
            # frontend files it and the baseline fetch are kept for the rounds with the assets cached
            assets: dict[str, tuple] = {}
            s = Sessions(browser, base, args.timeout, assets, fill_only=True)
            c0 = cpu_seconds(pid)
            opened = await s.open(1, "Bias_Audit", RENDERED_JS, AUDIT_READY)
            wait_idle(pid)
            out["cold_view"] = {"cpu_s": round(cpu_seconds(pid) - c0, 3),
                                "wall_s": mean([w for _, w in opened]), "failures": s.failures}
            await s.close()

            # baseline: a plain page (Methods) in the same server, a new browser and one with the assets cached
            for mode in ("fresh", "cached"):
                s = Sessions(browser, base, args.timeout, assets, fill_only=mode == "fresh")
                wait_idle(pid)
                c0 = cpu_seconds(pid)
                opened = await s.open(1, "Methods", PLAIN_JS)
                wait_idle(pid)
                out["baseline_plain_view" + ("" if mode == "fresh" else "_cached_assets")] = {
                    "page": "Methods", "cpu_s": round(cpu_seconds(pid) - c0, 3),
                    "wall_s": mean([w for _, w in opened]), "failures": s.failures}
                await s.close()
            await asyncio.sleep(args.ttl + 2)

            # what the server spends with nobody on it (Streamlit's secrets-file polling, five times a second, the
            # event loop): counted in every window below for as long as it lasts, whatever the sessions do
            wait_idle(pid)
            c0, t0 = cpu_seconds(pid), time.monotonic()
            await asyncio.sleep(args.idle)
            out["idle_cpu_s_per_s"] = idle = round((cpu_seconds(pid) - c0) / (time.monotonic() - t0), 4)
            for n in args.sessions:
                for mode in args.assets:
                    out["rounds"].append(await one_round(browser, base, pid, n, mode, assets, args, idle))
            out["rss_mib_start"] = round(rss_start, 1)
            await browser.close()
    finally:
        for process in (proxy, proc):
            if process is None:
                continue
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        if proxy is not None:
            shutil.rmtree(proxy_tmp, ignore_errors=True)
    errors = [line for line in log.read_text().splitlines() if "Traceback" in line or "Error" in line]
    out["server_log_errors"] = errors[:5]
    log.unlink(missing_ok=True)
    return out


async def one_round(browser, base: str, pid: int, n: int, mode: str, assets: dict[str, tuple],  # type: ignore[no-untyped-def]
                    args: argparse.Namespace, idle: float = 0.0) -> dict:
    """N sessions at once: open the Bias Audit page, change the tolerance, away to Methods and back, close.
    ``mode`` "fresh": each a new browser (every frontend file fetched from the server); "cached": each a browser
    that has opened the app before (Streamlit's frontend files, content-hashed and cached for a year, not asked
    for), which is what a returning analyst's new session costs the server. ``idle``: the server's CPU seconds
    per second with nobody on it; the ``net`` figures subtract it for each window's length."""
    s = Sessions(browser, base, args.timeout, assets if mode == "cached" else None)
    wait_idle(pid)
    rss0, c0, t0 = rss_mib(pid), cpu_seconds(pid), time.monotonic()
    opened = await s.open(n, "Bias_Audit", RENDERED_JS, AUDIT_READY)
    wait_idle(pid)
    c1, t1 = cpu_seconds(pid), time.monotonic()
    changed = await s.change([pg for pg, _ in opened])
    wait_idle(pid)
    c2, t2 = cpu_seconds(pid), time.monotonic()
    pages = [pg for pg, _ in opened]
    await s.navigate(pages, "Methods", PLAIN_JS)   # away and back: the second view of the page
    wait_idle(pid)
    c3, t3 = cpu_seconds(pid), time.monotonic()
    again = await s.navigate(pages, "Bias Audit", RENDERED_JS, AUDIT_READY)
    wait_idle(pid)
    c4, t4, rss_open = cpu_seconds(pid), time.monotonic(), rss_mib(pid)
    await s.close()
    await asyncio.sleep(args.ttl + 2)          # Streamlit keeps a closed session this long
    probe = Sessions(browser, base, args.timeout, assets)   # a write to the session store reaps expired ones
    await probe.open(1, "Methods", PLAIN_JS)
    await probe.close()
    await asyncio.sleep(2)
    wait_idle(pid)
    rss_after = rss_mib(pid)
    grown = rss_open - rss0
    row = {"sessions": n, "assets": mode, "failed": len(s.failures), "failures": s.failures[:5],
           "cpu_s_per_view": round((c1 - c0) / n, 3), "cpu_s_per_change": round((c2 - c1) / n, 3),
           "cpu_s_per_second_view": round((c4 - c3) / n, 3),
           "net_cpu_s_per_view": round((c1 - c0 - idle * (t1 - t0)) / n, 3),
           "net_cpu_s_per_change": round((c2 - c1 - idle * (t2 - t1)) / n, 3),
           "net_cpu_s_per_second_view": round((c4 - c3 - idle * (t4 - t3)) / n, 3),
           "wall_s_per_view": mean([w for _, w in opened]), "wall_s_per_change": mean(changed),
           "wall_s_per_second_view": mean(again),
           "rss_mib_before": round(rss0, 1), "rss_mib_open": round(rss_open, 1),
           "rss_mib_per_session": round(grown / n, 1), "rss_mib_after_close": round(rss_after, 1),
           "rss_returned_share": round((rss_open - rss_after) / grown, 2) if grown > 1 else None}
    print(f"N={n:>3}, {mode:>6} browser: CPU {row['cpu_s_per_view']:.3f} s/view (new session), "
          f"{row['cpu_s_per_second_view']:.3f} s/second view, {row['cpu_s_per_change']:.3f} s/change "
          f"(net of idle: {row['net_cpu_s_per_view']:.3f}, {row['net_cpu_s_per_second_view']:.3f}, "
          f"{row['net_cpu_s_per_change']:.3f}); "
          f"wall {row['wall_s_per_view']} s/view, {row['wall_s_per_second_view']} s/second view, "
          f"{row['wall_s_per_change']} s/change; RSS "
          f"{rss0:.0f} → {rss_open:.0f} MiB open ({row['rss_mib_per_session']:+.1f}/session) → "
          f"{rss_after:.0f} MiB closed; failed {row['failed']}", flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", default="1,3,10", help="comma-separated session counts, one round each")
    ap.add_argument("--ttl", type=int, default=10,
                    help="server.disconnectedSessionTTL in seconds (Streamlit's default is 120)")
    ap.add_argument("--timeout", type=float, default=240, help="seconds a session may take to render")
    ap.add_argument("--idle", type=float, default=10,
                    help="seconds the idle server's CPU is measured before the rounds (subtracted in the net figures)")
    ap.add_argument("--assets", default="fresh,cached",
                    help="comma-separated, one round each per session count: 'fresh' (a new browser fetches "
                         "Streamlit's frontend files from the server) and/or 'cached' (a browser that has them)")
    ap.add_argument("--quick", action="store_true", help="rounds of 1 and 3 sessions in cached browsers")
    ap.add_argument("--proxy", choices=("none", "nginx"), default="none",
                    help="'nginx': the browsers reach the server through nginx configured as docs/server.md deploys "
                         "it (Streamlit's frontend files served from disk, the rest proxied)")
    args = ap.parse_args()
    if args.quick:
        args.sessions, args.assets, args.idle, args.ttl = "1,3", "cached", min(args.idle, 2), min(args.ttl, 3)
    args.sessions = [int(x) for x in args.sessions.split(",")]
    args.assets = [a for a in args.assets.split(",") if a]
    if not set(args.assets) <= {"fresh", "cached"}:
        ap.error("--assets takes 'fresh' and/or 'cached'")
    out = asyncio.run(run(args))
    print(f"cold view (loads the demo): {out['cold_view']}")
    print(f"baseline, plain page: {out['baseline_plain_view']}")
    print(f"baseline, plain page, assets cached: {out['baseline_plain_view_cached_assets']}")
    print(f"idle server: {out['idle_cpu_s_per_s']} CPU s per s")
    print(json.dumps(declared(out, args.quick)))


def declared(out: dict, quick: bool) -> dict:
    """The JSON line with the goals' figures: the worst round in cached browsers, and every round's failures."""
    cached = [r for r in out["rounds"] if r["assets"] == "cached"]
    fresh = [r for r in out["rounds"] if r["assets"] == "fresh"]
    # The first round's change computes the new tolerance's verdicts and figures for the whole server (then shared
    # by every session): reported on its own, not held to the goal of a change.
    first, later = out["rounds"][:1], out["rounds"][1:]
    worst = {"cached_view_net_cpu_s": max((r["net_cpu_s_per_view"] for r in cached), default=None),
             "cached_change_net_cpu_s": max((r["net_cpu_s_per_change"] for r in cached if r in later), default=None),
             "first_change_net_cpu_s": first[0]["net_cpu_s_per_change"] if first else None,
             "rss_mib_per_session": max((r["rss_mib_per_session"] for r in out["rounds"]), default=None),
             "failed_sessions": sum(r["failed"] for r in out["rounds"]),
             "fresh_view_net_cpu_s": max((r["net_cpu_s_per_view"] for r in fresh), default=None)}
    plain = out.get("baseline_plain_view_cached_assets", {}).get("cpu_s")
    view = min((r["cpu_s_per_view"] for r in cached), default=None)
    ratio = None if not plain or view is None else (round(view / plain, 2),
                                                    "Bias Audit first view / plain page, server CPU, cached browsers")
    goals = {"cached_view_net_cpu_s": at_most(0.25), "cached_change_net_cpu_s": at_most(0.1),
             "rss_mib_per_session": at_most(50), "failed_sessions": equal_to(0)}
    if out.get("proxy") == "nginx" and fresh:
        # behind the documented proxy a brand-new browser's frontend files come from disk: its first view is held
        # to the same goal as a returning analyst's
        goals["fresh_view_net_cpu_s"] = at_most(0.25)
    return declare({**out, **worst}, goals=goals, ratio=ratio, quick=quick)


if __name__ == "__main__":
    main()
