"""The Forecasting page's "Audit forecasts" mode in Chromium (issue 55): the synthetic demo loads with one click and the
page draws its answer and its four figures, the count of algorithmic-bias pairs being the library's; a full-page
screenshot is kept in test-artifacts/ to look at. A module of its own (its own server); every wait names its
condition (tests/browser_helpers.py)."""

import pytest

from browser_helpers import ARTIFACTS, FIGURES_HOLD, IDLE, WAIT, press, skip_without_chromium
from browser_helpers import browser, context, open_page, server  # noqa: F401 - fixtures, used by name

skip_without_chromium()
pytestmark = pytest.mark.browser   # drives the app in Chromium: run first (tests/conftest.py)


def test_the_demo_loads_with_one_click_and_draws_the_answer_and_five_figures(open_page):
    from fairness_core.services import forecast_files as files

    d = files.DEMO
    verdicts = files.audit(files.demo_table(), d.positive_is).verdicts(d.tolerance, unit=d.unit)
    bias = int((verdicts["verdict"] == "algorithmic bias").sum())
    pg = open_page("Forecasting")
    pg.get_by_role("heading", name="Forecasting").first.wait_for(timeout=WAIT)
    press(pg, pg.get_by_text("Audit forecasts", exact=True))
    press(pg, pg.get_by_role("button", name="Load the demo forecasts (synthetic)"))
    pg.wait_for_function(f"() => ({IDLE})() && ({FIGURES_HOLD})([4, 'Mean benefit of the median forecast', "
                         "'Band coverage by group', 'PIT histogram by group', 'Forecasts for Riverside'])",
                         timeout=WAIT)
    answer = pg.get_by_test_id("stMain").locator("p", has_text="The answer.").first.inner_text()
    assert "algorithmic bias against Riverside" in answer
    findings = pg.get_by_test_id("stMain").locator("p", has_text="group pairs:").first.inner_text()
    assert f"Of 6 group pairs: {bias} algorithmic bias" in findings
    assert pg.locator("[data-testid='stException']").count() == 0
    # Streamlit scrolls inside its main block: a viewport as tall as the page shows all of it
    height = pg.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    pg.set_viewport_size({"width": 1400, "height": int(height) + 100})
    pg.mouse.move(0, 0)   # no button's help left open over the page
    # the condition: the figures are drawn and their sizes held between two looks a quarter of a second apart
    # (Plotly lays a figure out again when its container resizes)
    pg.wait_for_function(f"""() => {{
      const key = JSON.stringify([...document.querySelectorAll('.js-plotly-plot .main-svg')].map(
        s => [s.getBoundingClientRect().width, s.getBoundingClientRect().height]));
      const still = ({IDLE})() && ({FIGURES_HOLD})([4, 'Forecasts for Riverside']) && window.__fcSizes === key;
      window.__fcSizes = key;
      return still;
    }}""", timeout=WAIT, polling=250)
    ARTIFACTS.mkdir(exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / "forecast_audit_demo.png"), full_page=True)
