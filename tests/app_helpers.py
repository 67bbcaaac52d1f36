"""Shared AppTest helper: render a page of the app with a given audit loaded."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def page_with_audit(audit, page: str = "app.py") -> AppTest:  # type: ignore[no-untyped-def]
    """A fresh session with ``audit`` loaded (no demo), run on Home and then on ``page``."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["audit"] = audit
    at.session_state["demo_key"] = None
    at.run()
    if page != "app.py":
        at.switch_page(page)
        at.run()
    return at


@pytest.fixture
def captured(monkeypatch):  # type: ignore[no-untyped-def]
    """Each deferred download's callable as a run registers it, by file name (AppTest drops its media manager).
    A fixture: a test module imports it to use it by name."""
    kept: dict[str, object] = {}
    add = MediaFileManager.add_deferred

    def keep(self, data, mimetype, coordinates, file_name=None, **kwargs):  # type: ignore[no-untyped-def]
        kept[file_name] = data
        return add(self, data, mimetype, coordinates, file_name=file_name, **kwargs)
    monkeypatch.setattr(MediaFileManager, "add_deferred", keep)
    return kept


def plain(markdown: str) -> str:
    """Markdown's backslash escapes taken off: the text as the reader sees it."""
    return re.sub(r"\\(.)", r"\1", markdown)


def shown(at: AppTest) -> str:
    """Every sentence on the page (markdown, captions, errors, warnings, notices), unescaped, one per line."""
    return "\n".join(plain(str(e.value)) for kind in ("markdown", "caption", "error", "warning", "info")
                     for e in getattr(at, kind))


def uploaded_file(frame: "pd.DataFrame", name: str) -> object:
    """``frame`` as Streamlit's uploader hands a CSV file to the page (name, file_id, size, getvalue)."""
    data = frame.to_csv(index=False).encode()

    class File:
        file_id, size = f"{name}-{hash(data)}", len(data)

        def getvalue(self) -> bytes:
            return data

    File.name = name
    return File()
