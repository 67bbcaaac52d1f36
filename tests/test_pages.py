"""The page list is written once (ui/pages.py): it names every page script, each page's title is its label,
and the sidebar's list is the same list."""

from __future__ import annotations

import re
from pathlib import Path

from ui import pages

ROOT = Path(__file__).resolve().parents[1]


def test_the_registry_names_every_page_script_once():
    scripts = [p.script for p in pages.PAGES]
    assert len(scripts) == len(set(scripts))
    assert set(scripts) == {"app.py", *(f"pages/{f.name}" for f in (ROOT / "pages").glob("*.py"))}


def test_each_page_is_titled_with_its_label():
    for p in pages.PAGES:
        source = (ROOT / p.script).read_text(encoding="utf-8")
        titles = re.findall(r"page_setup\(\"([^\"]+)\"[,)]", source)
        assert titles == [p.label], p.script


def test_the_sidebar_and_the_home_page_read_the_registry():
    from ui import state

    assert tuple(state.PAGES) == pages.NAVIGATION
    home = (ROOT / "app.py").read_text(encoding="utf-8")
    assert "st.page_link(\"pages/" not in home   # every link on the home page comes from the registry
    assert pages.page("pages/2_Bias_Audit.py").label == "Bias Audit"
    assert pages.page(str(ROOT / "pages" / "9_Methods.py")).label == "Methods"
