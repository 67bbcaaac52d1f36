"""Checks on figures drawn in a real browser, shared by the app and report tests, and the app's server started for
them."""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

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
    import pytest

    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true", *args],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **env})
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
    page.wait_for_function(f"({TICKS_JS})().filter(t => t.title.startsWith('Benefit vs')).length >= {len(groups)}",
                           timeout=120000)
    page.wait_for_timeout(1000)
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
