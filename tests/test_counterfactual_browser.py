"""The Counterfactual test page in Chromium (issue 54): the synthetic demo loads with one click and the page draws
its answer and its three figures, the answer's count of material pairs being the library's. A module of its own (its
own server); every wait names its condition (tests/browser_helpers.py)."""

import pandas as pd

import pytest

from browser_helpers import FIGURES_HOLD, IDLE, WAIT, press, skip_without_chromium
from browser_helpers import browser, context, open_page, server  # noqa: F401 - fixtures, used by name

skip_without_chromium()
pytestmark = pytest.mark.browser   # drives the app in Chromium: run first (tests/conftest.py)


def test_the_demo_loads_with_one_click_and_draws_the_answer_and_three_figures(open_page, tmp_path):
    from fairness_core import counterfactual
    from fairness_core.services import counterfactual_files as files

    pairs = counterfactual.audit(pd.read_csv(files.DEMO_RESULTS), decision="advanced", positive_is="benefit").pairs()
    material = int((pairs["verdict"] == "material difference").sum())
    pg = open_page("Counterfactual_Test")
    pg.get_by_role("heading", name="Counterfactual test").first.wait_for(timeout=WAIT)
    press(pg, pg.get_by_role("button", name="Load the demo results (synthetic)"))
    pg.wait_for_function(f"() => ({IDLE})() && ({FIGURES_HOLD})([3, 'Discordance', 'Paired difference', "
                         "'Selection rate per group'])", timeout=WAIT)
    answer = pg.get_by_test_id("stMain").locator("p", has_text="The answer.").first.inner_text()
    assert f"materially in {material} of 6 pairs" in answer
    assert pg.locator("[data-testid='stException']").count() == 0
    pg.screenshot(path=str(tmp_path / "counterfactual.png"))
