"""The publishable Local Law 144 summary (issue 52): the law's table only, its numbers equal to an independent pandas
computation from the demo files, the 2 % exclusions listed with their counts, unknowns counted, the user's details
validated and escaped, which data the audit used from the user's declaration only (never assumed) on the page, in the
summary and in the report, the second demo (decisions and scores, a tiny category), and the one printed page in
Chromium (A4 and Letter) for the hiring demo and for many intersections."""

from __future__ import annotations

import importlib.util
import io as io_
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import captured  # noqa: F401 - a fixture, used by name
from fairness_core import datasets, io, regulatory, report
from fairness_core.presentation import ll144_summary as publish

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = "<script>alert(1)</script> *x* =1+1 & \"q\""
#: Values a person uses to decline or leave blank (the demos' files): unknown, never in the ratios.
DECLINED = {"", "decline to state", "prefer not to say"}


def read_demo(name: str) -> pd.DataFrame:
    return pd.read_csv(ROOT / "assets" / name, keep_default_na=False, dtype=str)


def expected(df: pd.DataFrame, column: str, chosen: pd.Series, share: float = 0.02) -> pd.DataFrame:
    """Per category of ``column``: n, the rate of ``chosen``, whether excluded (n under 2 % of all rows), and the
    impact ratio against the highest rate of the categories kept (pandas, independent of the library)."""
    unknown = df[column].str.strip().str.lower().isin(DECLINED)
    known = df.loc[~unknown, column]
    out = chosen[~unknown].groupby(known).agg(["size", "mean"]).rename(columns={"size": "n", "mean": "rate"})
    out["excluded"] = out["n"] < share * len(df)
    top = out.loc[~out["excluded"], "rate"].max()
    out["ratio"] = np.where(out["excluded"], np.nan, out["rate"] / top)
    return out


def rows_of(table: pd.DataFrame, of: str) -> pd.DataFrame:
    return table[(table["categories of"] == of) & (table["category"] != "unknown")].set_index("category")


def test_the_published_table_is_the_laws_and_equals_an_independent_computation():
    df = read_demo("demo_hr_screening.csv")
    table = publish.summary_table(regulatory.ll144_summary(datasets.load_demo("hr_screening")))
    assert list(table.columns) == ["categories of", "category", "applicants", "share of applicants", "selection rate",
                                   "impact ratio", "row"]   # no interval, nothing that needs outcomes
    for column in ("sex", "race_ethnicity"):
        want, got = expected(df, column, df["advanced_to_interview"].eq("Yes")), rows_of(table, column)
        assert sorted(got.index) == sorted(want.index)
        got = got.loc[want.index]
        assert got["applicants"].tolist() == want["n"].tolist()
        assert got["selection rate"].to_numpy() == pytest.approx(want["rate"].to_numpy(), abs=1e-12)
        assert np.array_equal(np.isnan(got["impact ratio"].to_numpy(float)), want["excluded"].to_numpy())
        assert got["impact ratio"].dropna().to_numpy() == pytest.approx(want["ratio"].dropna().to_numpy(), abs=1e-12)
        assert got["row"].str.startswith("excluded").tolist() == want["excluded"].tolist()
        unknown = table[(table["categories of"] == column) & (table["category"] == "unknown")]
        assert unknown["applicants"].tolist() == [int(df[column].str.strip().str.lower().isin(DECLINED).sum())]
    csv = pd.read_csv(io_.BytesIO(publish.summary_csv(regulatory.ll144_summary(datasets.load_demo("hr_screening")))))
    assert csv["applicants"].tolist() == table["applicants"].tolist() and list(csv.columns) == list(table.columns)


def test_the_second_demo_is_its_generators_output_with_scores_and_its_tiny_category_excluded_and_listed():
    spec = importlib.util.spec_from_file_location("make_hr_scored_demo", ROOT / "scripts" / "make_hr_scored_demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = ROOT / "assets" / "demo_hr_resume_ranking.csv"
    assert module.make().to_csv(index=False, lineterminator="\n") == path.read_text(encoding="utf-8")   # seeded
    assert "hr_resume_ranking" in datasets.DEMOS
    audit = datasets.load_demo("hr_resume_ranking")
    assert not audit.has_outcomes and list(audit.rows.scores) == ["resume_score"]
    df = read_demo("demo_hr_resume_ranking.csv")
    declined = df["sex"].str.lower().eq("decline to state").mean()
    assert 0.03 < declined < 0.1 and df["sex"].eq("").sum() > 0 and df["race_ethnicity"].eq("").sum() > 0
    score = pd.to_numeric(df["resume_score"])
    summary = regulatory.ll144_summary(audit, scores=audit.rows.scores["resume_score"], score_name="resume_score")
    table = publish.summary_table(summary)
    assert "scoring rate" in table.columns
    want = expected(df, "race_ethnicity", score > score.median())   # scoring rate: above the whole sample's median
    got = rows_of(table, "race_ethnicity").loc[want.index]
    assert got["scoring rate"].to_numpy() == pytest.approx(want["rate"].to_numpy(), abs=1e-12)
    assert got["impact ratio"].dropna().to_numpy() == pytest.approx(want["ratio"].dropna().to_numpy(), abs=1e-12)
    tiny = "Native Hawaiian or Other Pacific Islander"
    assert want.loc[tiny, "excluded"] and int(want.loc[tiny, "n"]) == 36   # under 2 % of 3,000
    assert got.loc[tiny, "row"] == "excluded: under 2 % of the applicants" and np.isnan(got.loc[tiny, "impact ratio"])
    page = publish.summary_html(summary)
    assert f"{tiny} (race_ethnicity): 36 applicants, 1.2 %" in page   # listed with its count
    decisions = publish.summary_table(regulatory.ll144_summary(audit))   # and the recommendations' selection rate
    want = expected(df, "race_ethnicity", df["recommended"].eq("Yes"))
    got = rows_of(decisions, "race_ethnicity").loc[want.index]
    assert got["selection rate"].to_numpy() == pytest.approx(want["rate"].to_numpy(), abs=1e-12)


def test_the_details_are_validated_naming_the_field():
    bad = [(dict(data_from="2025-06-01", data_to="2025-01-01"), "data_from 2025-06-01 is after data_to"),
           (dict(audit_date="2025-01-01", data_to="2025-03-31"), "audit_date 2025-01-01 is before"),
           (dict(tool="x" * 201), "tool has 201 characters; the limit is 200"),
           (dict(source="y" * 1001), "source has 1,001 characters"),
           (dict(audit_date="31/12/2025"), "audit_date must be a date as YYYY-MM-DD"),
           (dict(data_used="historical", test_data_reason="why"), "test_data_reason is given"),
           (dict(data_used="synthetic"), "data used must be one of historical, test")]
    for kwargs, message in bad:
        with pytest.raises(ValueError, match=re.escape(message)):
            publish.PublicationDetails(**kwargs)
    ok = publish.PublicationDetails(tool="  T 1.0 ", audit_date="2025-07-01", data_to="2025-07-01", data_used="test")
    assert ok.tool == "T 1.0" and ok.audit_date.isoformat() == "2025-07-01"
    assert ok.missing() == ["the data's first date", "the distribution date", "the data's source",
                            "why test data were used and how they were made"]


def facts(page: str) -> dict[str, str]:
    return dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", page, flags=re.S))


def test_the_data_used_is_the_users_declaration_never_assumed_in_the_summary_and_the_report():
    audit = datasets.load_demo("hr_screening")
    summary = regulatory.ll144_summary(audit)
    assert facts(publish.summary_html(summary))["Data used"] == "not declared"
    assert facts(publish.summary_html(summary))["Date of this bias audit"] == "not given"
    hist = publish.PublicationDetails(data_used="historical")
    assert facts(publish.summary_html(summary, hist))["Data used"] == "historical data: the employer&#x27;s own use of the tool"
    test = publish.PublicationDetails(data_used="test", test_data_reason="a new tool: the vendor's 2024 test set")
    assert facts(publish.summary_html(summary, test))["Data used"].endswith("a new tool: the vendor&#x27;s 2024 test set")
    for kwargs, words in (({}, "not declared"), (dict(data_used="historical"), "historical data"),
                          (dict(data_used="test", test_data_reason="new"), "test data (historical data were "
                                                                           "insufficient): new")):
        built = report.build(audit, **kwargs)
        assert built.settings["data the audit used"].startswith(words)
        assert json.loads(built.to_json())["settings"]["data the audit used"].startswith(words)
    with_outcomes = report.build(datasets.load_demo("ricci_a"))
    assert with_outcomes.settings["data the audit used"] == "not declared"


def test_every_text_from_the_user_or_the_data_is_escaped():
    df = pd.DataFrame({"sex": np.repeat([HOSTILE, "M"], 50), "d": ["Y", "N"] * 50})
    summary = regulatory.ll144_summary(io.audit_from_decisions(df, "d", ["sex"], "Y", positive_is="benefit"))
    page = publish.summary_html(summary, publish.PublicationDetails(tool=HOSTILE, source=HOSTILE, data_used="test",
                                                                    test_data_reason=HOSTILE))
    assert "<script" not in page and page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 5   # title ×2, 3 facts, table
    assert "<b>" not in page


def test_an_undefined_ratio_reads_undefined():
    df = pd.DataFrame({"g": np.repeat(["A", "B"], 50), "d": ["N"] * 100})   # nobody selected: 0/0
    page = publish.summary_html(regulatory.ll144_summary(io.audit_from_decisions(df, "d", ["g"], "Y",
                                                                                 positive_is="benefit")))
    assert re.search(r"<td class='n'>0\.000</td><td class='n'>undefined</td>", page)


def many_intersections(sexes: int = 4, races: int = 12, n: int = 30_000) -> pd.DataFrame:
    """A summary of many intersections: ``sexes`` × ``races`` categories with realistic names, declined and blank
    values, some intersections under 2 %."""
    rng = np.random.default_rng(52)
    sex = [["Female", "Male", "Non-binary", "Another gender identity", "Two-spirit"][k] for k in range(sexes)]
    race = [f"{name} {k}" for k, name in zip(range(races), ["Black or African American", "Hispanic or Latino",
            "Asian", "White", "Two or More Races", "American Indian or Alaska Native", "Middle Eastern or North "
            "African", "Native Hawaiian or Other Pacific Islander"] * 3)]
    sex_p = np.array([0.45, 0.45, 0.05, 0.03, 0.02][:sexes]) * 0.9 / sum([0.45, 0.45, 0.05, 0.03, 0.02][:sexes])
    race_p = 0.96 * np.geomspace(1, 0.1, races) / np.geomspace(1, 0.1, races).sum()
    df = pd.DataFrame({"sex": rng.choice(sex + ["Decline to state", ""], n, p=[*sex_p, 0.07, 0.03]),
                       "race": rng.choice(race + [""], n, p=[*race_p, 0.04]), "d": rng.choice(["Y", "N"], n, p=[0.3, 0.7])})
    return regulatory.ll144_summary(io.audit_from_decisions(df, "d", ["sex", "race"], "Y", positive_is="benefit"))


REALISTIC = publish.PublicationDetails(
    tool="TalentMatch Screening Suite 7.4.2 (resume parser and ranking model)", audit_date="2025-08-15",
    data_from="2024-07-01", data_to="2025-06-30", distribution_date="2023-03-01",
    source="Applications to all US-based corporate roles through the careers site, exported from the applicant "
           "tracking system on 2025-07-10; one row per application, repeat applicants counted once per requisition.",
    data_used="test", test_data_reason="The tool was reconfigured in May 2025; fewer than 500 applications had "
    "been scored since, so the vendor's test set of 30,000 anonymized applications from 2024 was scored instead.")


def test_the_layout_fits_one_page_until_the_table_is_very_long():
    assert publish.fits_one_page(regulatory.ll144_summary(datasets.load_demo("hr_screening")), REALISTIC)
    assert publish.fits_one_page(many_intersections(), REALISTIC)
    huge = many_intersections(5, 24, 60_000)
    assert not publish.fits_one_page(huge, REALISTIC)
    assert "repeat(3," in publish.summary_html(huge, REALISTIC)   # three columns at the smallest type


@pytest.mark.skipif(shutil.which("chromium") is None and not os.environ.get("CI"), reason="Debian's chromium is absent")
def test_the_published_summary_prints_to_one_page_on_a4_and_letter(tmp_path):
    from playwright.sync_api import sync_playwright

    cases = {"hr_screening": (regulatory.ll144_summary(datasets.load_demo("hr_screening")), REALISTIC),
             "many intersections": (many_intersections(), REALISTIC)}
    assert len(cases["many intersections"][0]) > 60
    pages: dict[tuple[str, str], int] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"),
                                    args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        page = browser.new_page(viewport={"width": 718, "height": 1000})   # A4 less 10 mm margins: 190 mm ≈ 718 px
        for name, (summary, details) in cases.items():
            path = tmp_path / f"{name.replace(' ', '_')}.html"
            path.write_text(publish.summary_html(summary, details), encoding="utf-8")
            page.goto(path.as_uri())
            page.emulate_media(media="print")
            # the condition: every table of the summary is laid out (as many as the layout wrote)
            page.wait_for_function(f"document.querySelectorAll('table tbody tr').length === {len(summary)}")
            assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
            page.screenshot(path=str(tmp_path / f"{name}.png"), full_page=True)
            for size in ("A4", "Letter"):
                pdf = page.pdf(format=size)
                assert pdf.startswith(b"%PDF")
                pages[name, size] = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
        browser.close()
    assert pages == {(name, size): 1 for name in cases for size in ("A4", "Letter")}, pages


# ------------------------------------------------------------------------------------------ the Bias Audit page

APP = str(ROOT / "app.py")


def text(data: object) -> str:
    return data.decode() if isinstance(data, bytes) else str(data)


def publish_box(at: AppTest):  # type: ignore[no-untyped-def]
    (box,) = [e for e in at.expander if e.label.startswith("Publish the Local Law 144 summary")]
    return box


def test_the_page_declares_validates_and_offers_the_summary_with_the_scoring_rate(captured):
    at = AppTest.from_file(APP, default_timeout=180)
    at.session_state["audit"] = datasets.load_demo("hr_resume_ranking")
    at.session_state["demo_key"] = "hr_resume_ranking"
    at.run()
    at.switch_page("pages/2_Bias_Audit.py")
    at.run()
    assert not at.exception, at.exception
    box = publish_box(at)
    assert [b.proto.label for b in box.get("download_button")] == ["Publishable summary (HTML, one page)",
                                                                   "Publishable summary (CSV)"]
    assert any("Data this audit used:** not declared — declare it above" in m.value for m in box.markdown)   # never assumed
    assert any("Data this audit used:** not declared" in c.value for c in at.caption)   # beside the report
    assert facts(text(captured["ll144_bias_audit_summary.html"]()))["Data used"] == "not declared"
    assert json.loads(text(captured["fairness_audit_report.json"]()))["settings"]["data the audit used"] == "not declared"

    at.radio(key="ll144-rate").set_value("resume_score").run()   # the demo's score: the scoring rate
    at.radio(key="ll144-data-used").set_value("test").run()
    at.text_area(key="ll144-test-reason").input(HOSTILE).run()
    at.text_input(key="ll144-tool").input(HOSTILE).run()
    at.date_input(key="ll144-data-from").set_value("2025-01-06").run()
    at.date_input(key="ll144-data-to").set_value("2025-06-27").run()
    at.date_input(key="ll144-audit-date").set_value("2025-07-15").run()
    assert not at.exception, at.exception
    box = publish_box(at)
    assert not box.error
    said = [m.value for m in box.markdown if "Data this audit used" in m.value][0]
    assert "\\<script\\>" in said and "<script>" not in said   # escaped for markdown
    page = text(captured["ll144_bias_audit_summary.html"]())
    shown = facts(page)
    assert shown["Data used"].startswith("test data (historical data were insufficient): &lt;script&gt;")
    assert shown["Dates the data cover"] == "2025-01-06 to 2025-06-27" and shown["Date of this bias audit"] == "2025-07-15"
    assert "<script" not in page and "Scoring rate" in page
    audit = at.session_state["audit"]
    want = publish.summary_table(regulatory.ll144_summary(audit, scores=audit.rows.scores["resume_score"]))
    csv = pd.read_csv(io_.BytesIO(captured["ll144_bias_audit_summary.csv"]()))
    assert csv["scoring rate"].to_numpy() == pytest.approx(want["scoring rate"].to_numpy(), abs=1e-12)
    doc = json.loads(text(captured["fairness_audit_report.json"]()))
    assert doc["settings"]["data the audit used"] == f"test data (historical data were insufficient): {HOSTILE}"

    at.date_input(key="ll144-audit-date").set_value("2025-03-01").run()   # before the data end: refused, said why
    box = publish_box(at)
    assert not box.get("download_button") and "“Date of this bias audit”" in box.error[0].value


def test_the_second_demo_is_one_click_away_on_the_upload_page():
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page("pages/1_Upload.py")
    at.run()
    demo = at.selectbox[0]
    assert "AI résumé ranking, decisions and scores (Local Law 144; synthetic)" in demo.options   # as titled
    demo.set_value("hr_resume_ranking").run()
    at.button(key="load-demo").click().run()
    assert not at.exception, at.exception
    audit = at.session_state["audit"]
    assert audit.total().n == 3000 and not audit.has_outcomes and list(audit.rows.scores) == ["resume_score"]
