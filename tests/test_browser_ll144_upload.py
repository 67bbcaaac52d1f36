"""An HR analyst's screening-tool export through the Upload page in Chromium (issue 52): decisions **and** the tool's
score, no outcome column. The Bias Audit page's Local Law 144 summary then gives both the selection rate and the
scoring rate; both downloaded CSVs equal a pandas computation made here from the CSV uploaded (never from the
library's numbers). A module of its own (its own server), so that it runs beside the other browser tests. Every
wait names its condition and says what it saw when it gives up (tests/browser_helpers.py)."""

import io

import numpy as np
import pandas as pd
import pytest

from browser_helpers import IDLE, WAIT, declare, download, pick, press, skip_without_chromium
from browser_helpers import browser, context, open_page, server  # noqa: F401 - fixtures, used by name

skip_without_chromium()
pytestmark = pytest.mark.browser   # drives the app in Chromium: run first (tests/conftest.py)

UNKNOWN = "unknown"
RACES = {"White": 0.44, "Black or African American": 0.20, "Hispanic or Latino": 0.17, "Asian": 0.12,
         "Two or more races": 0.025, "Native Hawaiian or Pacific Islander": 0.0125, "": 0.0325}   # "" a blank cell


def screening_export(n: int = 2400, seed: int = 52) -> pd.DataFrame:
    """A tool's export as an analyst gets it: sex (some "Decline to state"), race/ethnicity (some blank, one category
    under 2 %), the tool's score 0-100 and whether it advanced the applicant (its cutoff, with a few overrides)."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["Female", "Male", "Decline to state"], n, p=[0.50, 0.47, 0.03])
    race = rng.choice(list(RACES), n, p=list(RACES.values()))
    lift = pd.Series(race).map({"White": 6, "Asian": 4, "Black or African American": -5, "Hispanic or Latino": -3})
    score = np.clip(np.round(rng.normal(55, 14, n) + lift.fillna(0).to_numpy() + 3 * (sex == "Male")), 0, 100)
    advanced = (score >= 65) ^ (rng.random(n) < 0.05)      # a recruiter's override now and then
    return pd.DataFrame({"applicant_id": [f"A{k:05d}" for k in range(n)], "sex": sex, "race_ethnicity": race,
                         "tool_score": score.astype(int), "advanced_to_interview": np.where(advanced, "yes", "no")})


def law_table(df: pd.DataFrame, rate: str) -> pd.DataFrame:
    """Local Law 144's table by pandas alone: per category of sex, of race/ethnicity and of their intersection,
    n and the rate (selection: advanced; scoring: a score strictly above the whole sample's median), unknowns
    (declined or blank) pooled in one row and kept out of the ratios, as are categories under 2 % of everyone; the
    impact ratio is the rate over the highest rate among the categories left."""
    known = {"sex": df["sex"].where(df["sex"] != "Decline to state"),
             "race_ethnicity": df["race_ethnicity"].where(df["race_ethnicity"].fillna("").str.strip() != "")}
    both = (known["sex"] + " & " + known["race_ethnicity"]).where(
        known["sex"].notna() & known["race_ethnicity"].notna())
    hit = (df["advanced_to_interview"] == "yes") if rate == "selection rate" else \
        (df["tool_score"] > df["tool_score"].median())
    frames = []
    for name, category in (("sex", known["sex"]), ("race_ethnicity", known["race_ethnicity"]),
                           ("sex × race_ethnicity", both)):
        t = hit.groupby(category.fillna(UNKNOWN)).agg(["size", "mean"]).rename(columns={"size": "n", "mean": rate})
        kept = (t.index != UNKNOWN) & (t["n"] / len(df) >= 0.02)
        t["impact ratio"] = (t[rate] / t.loc[kept, rate].max()).where(kept)
        frames.append(t.assign(**{"categories of": name}).reset_index(names="category"))
    return pd.concat(frames, ignore_index=True).set_index(["categories of", "category"])


def same_as_pandas(csv: bytes, want: pd.DataFrame, rate: str) -> None:
    # an undefined number is written "undefined" (the house rule), never left blank or 0
    got = pd.read_csv(io.BytesIO(csv), keep_default_na=False, na_values=["undefined"])
    got = got.set_index(["categories of", "category"])
    assert sorted(got.index) == sorted(want.index)            # every category, the unknowns and the excluded too
    got = got.loc[want.index]
    assert got["n"].tolist() == want["n"].tolist()
    assert got[rate].to_numpy(float) == pytest.approx(want[rate].to_numpy(float), abs=1e-12)
    ratio, expected = got["impact ratio"].to_numpy(float), want["impact ratio"].to_numpy(float)
    assert np.array_equal(np.isnan(ratio), np.isnan(expected))   # the same categories left out of the ratios
    assert ratio[~np.isnan(ratio)] == pytest.approx(expected[~np.isnan(expected)], abs=1e-12)


def downloaded(pg, name: str, path) -> bytes:  # type: ignore[no-untyped-def]
    button = pg.get_by_role("button", name=name)
    button.wait_for(timeout=WAIT)
    return download(pg, button, path).read_bytes()   # the press waits until the run has ended


def test_an_hr_export_with_the_tools_score_gives_both_rates_as_pandas_computes_them(open_page, tmp_path):
    df = screening_export()
    assert 0 < (df["race_ethnicity"] == "").sum() and (df["sex"] == "Decline to state").sum() > 0
    assert (df["race_ethnicity"] == "Native Hawaiian or Pacific Islander").mean() < 0.02   # one category excluded
    path = tmp_path / "hr_export.csv"
    df.to_csv(path, index=False)
    uploaded = pd.read_csv(path, dtype={"race_ethnicity": str})   # what the page reads: blanks are blank
    selection, scoring = law_table(uploaded, "selection rate"), law_table(uploaded, "scoring rate")
    assert selection["impact ratio"].notna().sum() >= 8 and selection["impact ratio"].isna().sum() >= 3
    assert not np.allclose(selection["selection rate"], scoring["scoring rate"])   # two different questions

    pg = open_page("Upload")
    pg.get_by_role("heading", name="Load data").wait_for(timeout=WAIT)
    pg.get_by_role("tab", name="Row-level predictions").click()
    pg.locator("[data-testid='stFileUploader'] input[type='file']").nth(1).set_input_files(str(path))
    pg.get_by_text("2,400 rows × 5 columns").wait_for(timeout=WAIT)
    pg.wait_for_function(IDLE, timeout=WAIT)   # the upload's run has ended: the expander below is not redrawn
    # decisions alone (no outcome column guessed): the score's box is offered under a title that says what for
    pg.locator("summary").filter(has_text="Optional: the tool's score (Local Law 144 scoring rate)").click(timeout=WAIT)
    box = pg.get_by_test_id("stMultiSelect").filter(has_text="Score columns (numeric)")
    pick(pg, box, "tool_score")
    pg.wait_for_function(IDLE, timeout=WAIT)
    box.get_by_text("tool_score", exact=True).wait_for(timeout=WAIT)   # the choice holds after its run
    declare(pg, "benefit")
    press(pg, pg.get_by_role("button", name="Aggregate and use"))
    pg.get_by_text("Aggregated 2,400 decisions into").wait_for(timeout=WAIT)
    pg.get_by_text("with the scoring rate of 'tool_score' for Local Law 144").wait_for(timeout=WAIT)

    pg.get_by_test_id("stSidebar").get_by_role("link", name="Bias Audit").click()
    pg.get_by_role("heading", name="Bias audit").wait_for(timeout=WAIT)
    pg.wait_for_function(IDLE, timeout=WAIT)
    pg.locator("summary").filter(has_text="Local Law 144 summary").first.click()
    same_as_pandas(downloaded(pg, "Download the Local Law 144 summary (CSV)", tmp_path / "selection.csv"),
                   selection, "selection rate")
    pg.get_by_test_id("stRadio").get_by_text("scoring rate (tool_score)").click()
    scoring_button = "Download the Local Law 144 summary, scoring rate of “tool_score” (CSV)"
    pg.get_by_role("button", name=scoring_button).wait_for(timeout=WAIT)
    pg.wait_for_function(IDLE, timeout=WAIT)
    same_as_pandas(downloaded(pg, scoring_button, tmp_path / "scoring.csv"), scoring, "scoring rate")
