"""The Forecasting page's "Audit forecasts" mode (issue 55), in AppTest: the demo in one click with the library's
verdicts, tables and figures, every table downloadable with the library's numbers, the fan chart's group selector, an
upload read with its quantile levels said, bad uploads refused by row and column with nothing loaded replaced (a
level of 1.2, a missing observation) and a crossing row sorted with its note by row; hostile group names shown as
text. The PTN mode stays the page's default (tests/test_app.py)."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from fairness_core import forecasts
from fairness_core.services import forecast_files as files
from app_helpers import captured, plain, shown  # noqa: F401 - captured: a fixture
from test_hostile_names import LINK, assert_shown_as_text

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGE = "pages/6_Forecasting.py"
LEVELS = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)


def page(monkeypatch=None, uploads: list[tuple[bytes, str]] | None = None) -> AppTest:  # type: ignore[no-untyped-def]
    """The page in a fresh session, in the "Audit forecasts" mode; ``uploads`` stand in for Streamlit's uploader
    (AppTest cannot upload a file): each run gets the first of them still left, the last one staying."""
    if uploads is not None:
        import streamlit as st

        class File:
            def __init__(self, data: bytes, name: str) -> None:
                self.data, self.name, self.size, self.file_id = data, name, len(data), f"{name}-{hash(data)}"

            def getvalue(self) -> bytes:
                return self.data

        monkeypatch.setattr(st, "file_uploader", lambda label, *a, key=None, **k:
                            File(*uploads[0]) if key == "fc-file" else None)
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(PAGE).run()
    at.radio(key="fc-mode").set_value("audit").run()
    assert not at.exception, at.exception
    return at




def figures(at: AppTest) -> dict[str, dict]:
    """The page's figures by the start of their title."""
    out = {}
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        out[spec["layout"]["title"]["text"].split("<br>")[0]] = spec
    return out


def numbers(values: object) -> np.ndarray:
    """A figure's array as sent to the browser: a list, or plotly's base64 typed array."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=np.dtype(values["dtype"])).astype(float)
    return np.asarray(values, dtype=float)


def demo_audit() -> forecasts.ForecastAudit:
    """The demo's audit computed here from the file, independently of the page's reading of it."""
    d = files.DEMO
    raw = pd.read_csv(files.DEMO_FILE)
    return forecasts.audit(raw[d.observation], raw[[f"q{v:g}" for v in LEVELS]].to_numpy(), LEVELS, raw[d.group],
                           time=pd.to_datetime(raw[d.time]), positive_is=d.positive_is)


def test_the_demo_shows_the_librarys_verdicts_tables_and_figures(captured):  # noqa: F811
    at = page()
    assert "Upload forecasts, or load the synthetic demo" in shown(at)
    at.button(key="fc-demo").click().run()
    assert not at.exception and not at.error
    a, d = demo_audit(), files.DEMO
    v = a.verdicts(d.tolerance, unit=d.unit)
    tiles = {m.label: m.value for m in at.metric}
    counts = v["verdict"].value_counts()
    assert tiles == {k.capitalize(): str(int(counts.get(k, 0))) for k in
                     ("algorithmic bias", "materiality unclear", "systemic disparity", "no bias detected",
                      "inconclusive")}
    assert tiles["Algorithmic bias"] == "3" and tiles["Systemic disparity"] == "2"   # built into the demo
    text = shown(at)
    assert "algorithmic bias against Riverside (in 3 of its 3 pairs)" in text
    assert "systemic disparity (less accurate forecasts) at Hillside (in 2 of its 3 pairs)" in text
    assert v.findings() in text
    # the verdict table holds no sentence (a cell cut it off): each pair's reading is under it, whole
    table = next(d.value for d in at.dataframe if "verdict" in d.value.columns)
    assert "reading" not in table.columns and len(table) == len(v)
    assert all(f"{i} vs {j}:** {e}" in text for i, j, e in zip(v["group_i"], v["group_j"], v["explanation"]))
    assert "time from date" in text and "7 quantile levels (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)" in text
    rho = a.by_group()["hac_rho"]
    assert f"ρ̂ runs from {rho.min():.2f} to {rho.max():.2f}" in text          # the long-run variance said
    assert at.sidebar.number_input(key="fc-tol").value == d.tolerance
    # every table on the page has its download, and each download holds the library's numbers
    assert len(at.dataframe) == 3
    got = pd.read_csv(io.BytesIO(captured["forecast_verdicts.csv"]()))
    assert got["verdict"].tolist() == v["verdict"].tolist()
    np.testing.assert_allclose(got["ofi_ci_low"], v["ofi_ci_low"], rtol=1e-12)
    groups = pd.read_csv(io.BytesIO(captured["forecast_groups.csv"]()), index_col=0)
    np.testing.assert_allclose(groups["crps"], a.by_group()["crps"], rtol=1e-12)
    # the per-group table as shown: the unit in its headers, each mean beside its interval
    table = next(d.value for d in at.dataframe if "mean CRPS (MW)" in d.value.columns)
    np.testing.assert_allclose(table["mean benefit (MW)"], a.by_group()["benefit"], rtol=1e-12)
    said = [[float(x.replace("−", "-")) for x in text.removesuffix(" MW").split(" to ")]
            for text in table["benefit's 95 % interval"]]    # 3 significant digits
    np.testing.assert_allclose(said, a.by_group()[["benefit_ci_low", "benefit_ci_high"]], rtol=5e-3)
    np.testing.assert_allclose(groups["coverage_0.8"], a.coverage_table()[0.8], rtol=1e-12)
    pairs = pd.read_csv(io.BytesIO(captured["forecast_pairs.csv"]()))
    np.testing.assert_allclose(pairs["p_adjusted"], a.pairs()["p_adjusted"], rtol=1e-9)
    pit = pd.read_csv(io.BytesIO(captured["forecast_pit.csv"]()))
    assert pit["count"].tolist() == a.pit()["count"].tolist()
    coverage = pd.read_csv(io.BytesIO(captured["forecast_coverage.csv"]()))
    np.testing.assert_allclose(coverage["ci_high"], a.coverage()["ci_high"], rtol=1e-12)
    # the figures: benefits (most harmed first), coverage against nominal, PIT per group, the fan
    figs = figures(at)
    assert set(figs) == {"Mean benefit of the median forecast by group", "Band coverage by group",
                         "PIT histogram by group", "Forecasts for Riverside over time"}
    benefit = figs["Mean benefit of the median forecast by group"]["data"][0]
    assert benefit["y"][0] == "Riverside"
    np.testing.assert_allclose(numbers(benefit["x"]), a.by_group().loc[benefit["y"], "benefit"], rtol=1e-12)
    panels = [ann["text"] for ann in figs["Band coverage by group"]["layout"]["annotations"]]
    assert panels == ["50 % band", "80 % band", "90 % band"]
    assert len([t for t in figs["PIT histogram by group"]["data"] if t["type"] == "bar"]) == 4


def test_the_fan_chart_follows_its_group_selector(captured):  # noqa: F811
    at = page()
    at.button(key="fc-demo").click().run()
    assert at.selectbox(key="fc-fan-group").value == "Riverside"   # opens on the group leaning most against it
    at.selectbox(key="fc-fan-group").set_value("North").run()
    assert not at.exception
    fan = figures(at)["Forecasts for North over time"]
    raw = pd.read_csv(files.DEMO_FILE)
    north = raw[raw["district"] == "North"]
    outside = (north["peak_mw"] < north["q0.05"]) | (north["peak_mw"] > north["q0.95"])
    assert f"{outside.mean():.1%} of 730 observations outside the 5–95 % band" in \
        fan["layout"]["title"]["text"].replace("&#37;", "%")
    series = pd.read_csv(io.BytesIO(captured["forecast_series.csv"]()))
    np.testing.assert_allclose(series["observation"], north["peak_mw"])
    np.testing.assert_allclose(series["0.95"], north["q0.95"])


def upload_file(rows: list[str], header: str = "date,site,obs,q0.1,q0.5,q0.9") -> bytes:
    return (header + "\n" + "\n".join(rows) + "\n").encode()


def good_rows(names: tuple[str, str] = ("a", "b"), n: int = 40) -> list[str]:
    rng = np.random.default_rng(5)
    out = []
    for g, shift in zip(names, (0.0, -2.0)):
        for t in range(n):
            y = rng.normal()
            out.append(f"2024-01-{1 + t % 28:02d}T{t // 28:02d}:00,{g},{y:.3f},{shift - 1.28:.3f},{shift:.3f},"
                       f"{shift + 1.28:.3f}")
    return out


def test_bad_uploads_are_refused_by_row_and_column_and_change_nothing_loaded(monkeypatch):
    level = upload_file(["2024-01-01,a,1,0,1,2"], header="date,site,obs,q0.1,q0.5,q1.2")
    missing = upload_file(["2024-01-01,a,1,0,1,2", "2024-01-02,a,,0,1,2", "2024-01-03,b,x,0,1,2"])
    uploads = [(level, "levels.csv")]
    at = page(monkeypatch, uploads)
    at.button(key="fc-demo").click().run()
    before = {m.label: m.value for m in at.metric}
    assert "column 'q1.2': the header reads as quantile level 1.2, which is not strictly between 0 and 1" in \
        plain(at.error[0].value)
    assert "Nothing was loaded" in at.error[0].value
    assert {m.label: m.value for m in at.metric} == before and "Riverside" in shown(at)
    uploads[0] = (missing, "missing.csv")
    at.run()
    assert "Read as quantile levels:** q0.1 → 0.1, q0.5 → 0.5, q0.9 → 0.9." in shown(at)
    at.radio(key="fc-direction").set_value("benefit").run()
    at.button(key="fc-audit").click().run()
    errors = plain(at.error[0].value)
    assert "row 2 (file line 3), column 'obs': the observation is missing" in errors
    assert "row 3 (file line 4), column 'obs': 'x' is not a number (observation)" in errors
    assert {m.label: m.value for m in at.metric} == before and "Riverside" in shown(at)


def test_a_crossing_row_is_sorted_with_its_note_and_hostile_names_stay_text(monkeypatch):
    rows = good_rows((LINK, "**bold** $x^2$"))
    rows[2] = "2024-01-03T00:00,{},0.5,1.0,0.0,2.0".format(LINK)     # q0.1 > q0.5: crossing, in file row 3
    at = page(monkeypatch, [(upload_file(rows), "crossing.csv")])
    at.radio(key="fc-direction").set_value("benefit").run()
    at.button(key="fc-audit").click().run()
    assert not at.exception and not at.error
    text = shown(at)
    assert "The quantiles cross (decrease along the levels) in 1 row (first: row 3, file line 4)" in text
    assert "Data:** crossing.csv · 2 groups · 80 forecasts" in text
    expected = files.audit(files.forecast_table(files.read(upload_file(rows), "x.csv"), "site", "obs", "date"),
                           "benefit").verdicts(at.sidebar.number_input(key="fc-tol").value)
    tiles = {m.label: m.value for m in at.metric}
    assert tiles["Algorithmic bias"] == str(int((expected["verdict"] == "algorithmic bias").sum()))
    assert_shown_as_text(at, "forecast audit")
