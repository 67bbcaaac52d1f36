"""Issue 53 in Chromium: an analyst's own file of amounts (a recommended salary against the salary earned) through the
Upload page — read as an amount in one sentence, the unit typed, the direction declared — then the Bias Audit page's
verdict CSV, which equals the library's verdicts on the same rows; and the COMPAS tiers demo, whose heatmaps and
impact ratios are drawn. A module of its own (its own server)."""

import numpy as np
import pandas as pd
import pytest

from browser_helpers import IDLE, WAIT, choose, download, pick, press, skip_without_chromium
from browser_helpers import browser, context, open_page, server  # noqa: F401 - fixtures, used by name
from fairness_core.continuous import ContinuousAudit
from ui.kind_audit import default_tolerance

skip_without_chromium()
pytestmark = pytest.mark.browser   # drives the app in Chromium: run first (tests/conftest.py)


def salaries(n: int = 300, seed: int = 53) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    team = rng.choice(["north", "south", "east"], n)
    earned = rng.lognormal(11, 0.25, n).round(0)
    recommended = (earned * rng.lognormal(0, 0.06, n) - np.where(team == "south", 5000, 0)).round(0)
    return pd.DataFrame({"employee": np.arange(n), "team": team, "salary": earned, "recommended": recommended})


def test_an_amount_file_and_the_tier_demo_audited_in_the_browser(open_page, tmp_path):
    df = salaries()
    path = tmp_path / "pay.csv"
    df.to_csv(path, index=False)
    pg = open_page("Upload")
    pg.get_by_role("heading", name="Load data").wait_for(timeout=WAIT)
    pg.get_by_role("tab", name="Row-level predictions").click()
    pg.locator("[data-testid='stFileUploader'] input[type='file']").nth(1).set_input_files(str(path))
    pg.get_by_text("300 rows × 4 columns").wait_for(timeout=WAIT)
    pg.wait_for_function(IDLE, timeout=WAIT)
    for label, value in (("Label column (actual outcome)", "salary"), ("Prediction column", "recommended")):
        choose(pg, label, value)
    pg.get_by_text("so they are read as").wait_for(timeout=WAIT)
    pg.get_by_text("more than 20", exact=False).first.wait_for(timeout=WAIT)
    groups = pg.get_by_test_id("stMultiSelect").filter(has_text="Group column(s)")
    if not groups.get_by_text("team", exact=True).count():
        pick(pg, groups, "team")
    for chip in ("employee",):   # only the team is a group
        remove = groups.get_by_text(chip, exact=True)
        if remove.count():
            groups.locator("[data-baseweb='tag']").filter(has_text=chip).locator("[role='presentation']").click()
            pg.wait_for_function(IDLE, timeout=WAIT)
    unit = pg.get_by_label("unit", exact=True).and_(pg.get_by_test_id("stTextInputField"))
    unit.fill("$ a year")
    unit.press("Enter")
    pg.wait_for_function(IDLE, timeout=WAIT)
    pg.get_by_test_id("stMain").get_by_text("a benefit (a salary").click()
    pg.wait_for_function(IDLE, timeout=WAIT)
    press(pg, pg.get_by_role("button", name="Audit these amounts"))
    pg.get_by_text("Audited 300 rows of amounts in 3 groups").wait_for(timeout=WAIT)

    pg.get_by_test_id("stSidebar").get_by_role("link", name="Bias Audit").click()
    pg.get_by_role("heading", name="Bias audit").wait_for(timeout=WAIT)
    pg.wait_for_function(IDLE, timeout=WAIT)
    pg.get_by_text("Benefit per person by group").first.wait_for(timeout=WAIT)
    button = pg.get_by_role("button", name="Download verdicts with every number (CSV)")
    download(pg, button, tmp_path / "verdicts.csv")
    got = pd.read_csv(tmp_path / "verdicts.csv", keep_default_na=False, na_values=["undefined"])
    audit = ContinuousAudit.from_predictions(df["salary"], df["recommended"], df[["team"]], "benefit")
    want = audit.verdicts(default_tolerance(audit), unit="$")
    assert got["verdict"].tolist() == want["verdict"].tolist()
    assert got["ofi"].to_numpy(float) == pytest.approx(want["ofi"].to_numpy(float), rel=1e-12)
    assert "algorithmic bias" in got["verdict"].tolist()

    pg.get_by_test_id("stSidebar").get_by_role("link", name="Upload").click()
    pg.get_by_role("heading", name="Load data").wait_for(timeout=WAIT)
    pg.wait_for_function(IDLE, timeout=WAIT)
    box = pg.get_by_test_id("stSelectbox").filter(has_text="Demo data set").first
    box.click()
    pg.keyboard.type("three risk tiers")
    pg.get_by_role("option").filter(has_text="three risk tiers").first.click(timeout=WAIT)
    press(pg, pg.get_by_role("button", name="Load demo"))
    pg.get_by_text("The Bias Audit page now audits 3 ordered categories").wait_for(timeout=WAIT)
    pg.get_by_test_id("stSidebar").get_by_role("link", name="Bias Audit").click()
    pg.get_by_text("The four-fifths rule at every cut").wait_for(timeout=WAIT)
    pg.get_by_text("Impact ratios at every cut, adjusted across cuts and pairs").first.wait_for(timeout=WAIT)
    pg.wait_for_function(IDLE, timeout=WAIT)
    assert pg.locator(".js-plotly-plot").count() >= 2
