"""AppTest smoke tests: every page renders on the preloaded demo without an exception."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGES = ["app.py", "pages/1_Upload.py", "pages/2_Bias_Audit.py", "pages/3_Sample_Size_Explorer.py"]


def fresh(page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    if page:
        at.switch_page(page)
        at.run()
        assert not at.exception
    return at


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_on_the_demo(page):
    at = fresh()
    at.switch_page(page)
    at.run()
    assert not at.exception, at.exception
    assert not at.error
    assert at.session_state["audit"].total().n == 6172  # COMPAS preloaded


def test_bias_audit_shows_verdicts_for_every_pair():
    at = fresh()
    at.switch_page("pages/2_Bias_Audit.py")
    at.run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Algorithmic bias"].endswith("of 15 pairs")  # 6 COMPAS groups
    at.selectbox(key="comparison").set_value("TE").run()
    assert not at.exception


def test_loading_a_demo_replaces_the_data():
    at = fresh("pages/1_Upload.py")
    at.selectbox[0].set_value("ricci_b").run()
    at.button(key="load-demo").click().run()
    assert at.session_state["audit"].groups == ["Black", "Hispanic", "White"]
    assert any("discarding" in m.value.lower() for m in at.markdown)


def test_bad_pasted_table_is_rejected_and_changes_nothing():
    at = fresh("pages/1_Upload.py")
    before = at.session_state["audit"]
    at.text_area(key="cm-paste").input("group,TP,FN,FP,TN\nA,1,-3,0,5\nB,1,1,1,1\n").run()
    at.button(key="use-typed").click().run()
    assert at.session_state["audit"] is before
    assert "row 1 (file line 2), column 'FN': negative count -3" in at.error[0].value


def test_good_pasted_table_is_loaded():
    at = fresh("pages/1_Upload.py")
    at.text_area(key="cm-paste").input("group,TP,FN,FP,TN\nA,1,0,0,5\nB,7,0,1,10\n").run()
    at.button(key="use-typed").click().run()
    assert at.session_state["audit"].groups == ["A", "B"]
