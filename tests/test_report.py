"""The audit report (HTML, JSON, CSV zip) and the command line."""

from __future__ import annotations

import io
import json
import os
import shutil
import zipfile

import pytest

from fairness_core.verdicts import VerdictSettings
from fairness_core import bias, cli, datasets, report
from fairness_core.audit import Audit
from fairness_core.confusion import ConfusionMatrix as CM


def test_report_carries_the_numbers_and_escapes_group_names():
    audit = Audit({"<script>alert(1)</script>": CM(1, 0, 0, 5), "=cmd|' /C calc'!A0": CM(7, 0, 1, 10)},
                  source="worked example")
    rep = report.build(audit)
    page = rep.html()
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Created" in page and "worked example" in page and page.count("plotly.js") >= 1
    doc = json.loads(rep.to_json())
    v = doc["tables"]["verdicts"][0]
    assert v["ofi"] == pytest.approx(bias.compare("OFI", CM(1, 0, 0, 5), CM(7, 0, 1, 10)))
    assert v["di"] == pytest.approx(0.375)
    assert v["ofi_ci_low"] < v["ofi"] < v["ofi_ci_high"] and 0 <= v["ofi_p_adjusted"] <= 1
    assert v["verdict"] == "inconclusive" and doc["summary"]["verdicts"]["inconclusive"] == 1
    assert doc["settings"]["multiplicity adjustment"] == "Holm" and doc["settings"]["α (significance level)"] == 0.05
    with zipfile.ZipFile(io.BytesIO(rep.csv_zip())) as z:
        cells = z.read("cells.csv").decode()
    assert "'=cmd" in cells  # formula-like group names are neutralized in CSV


def test_report_has_the_local_law_144_summary_with_its_rules():
    audit = Audit({"F": CM(30, 10, 10, 50), "M": CM(45, 5, 15, 35), "<b>X</b>": CM(1, 0, 0, 1)},
                  positive_is="benefit")
    rep = report.build(audit, settings=VerdictSettings(alpha=0.1))
    page = rep.html()
    assert "The regulator&#x27;s summary (NYC Local Law 144)" in page and "exactly 2 % is kept" in page
    assert "<b>X</b>" not in page and "excluded: under 2 % of the data" in page
    rows = {r["category"]: r for r in json.loads(rep.to_json())["tables"][report.LL144]}
    assert rows["F"]["impact ratio"] == pytest.approx(0.4 / 0.6) and rows["<b>X</b>"]["impact ratio"] is None
    assert rep.tables[report.LL144].attrs["level"] == pytest.approx(0.9)   # the report's α
    assert "Local Law 144 summary" in rep.settings


def test_report_gives_the_scoring_rate_of_a_named_score_when_given_scores():
    import numpy as np

    from fairness_core import regulatory
    audit = datasets.load_demo("compas_race")
    decile = datasets.load_candidates("compas").scores["COMPAS decile score"]
    rep = report.build(audit, scores=decile, score_name="<i>decile</i>")
    want = regulatory.ll144_summary(audit, scores=decile)
    table = rep.tables[report.LL144]
    assert table.attrs["rate"] == "scoring rate" and table.attrs["score"] == "<i>decile</i>"
    assert np.allclose(table["scoring rate"], want["scoring rate"]) and table["status"].tolist() == want["status"].tolist()
    doc = json.loads(rep.to_json())
    rows = doc["tables"][report.LL144]
    assert [r["scoring rate"] for r in rows] == pytest.approx(want["scoring rate"].tolist())
    assert doc["settings"]["Local Law 144 rate"].startswith("scoring rate of the score “<i>decile</i>”")
    page = rep.html()
    assert "<i>decile</i>" not in page and "scoring rate (of the score “&lt;i&gt;decile&lt;/i&gt;”)" in page
    with zipfile.ZipFile(io.BytesIO(rep.csv_zip())) as z:
        assert "scoring rate" in z.read("local_law_144_summary.csv").decode().splitlines()[0]
    plain = report.build(audit)
    assert "selection rate" in plain.tables[report.LL144] and plain.settings["Local Law 144 rate"] == \
        "selection rate (decisions)"


def test_undefined_values_are_null_in_json_and_words_in_html():
    rep = report.build(datasets.load_demo("ricci_b"))
    doc = json.loads(rep.to_json())
    di = [row["di"] for row in doc["tables"]["verdicts"]]
    assert all(d is None for d in di)  # nobody promoted: DI is 0/0 for every pair
    assert "undefined" in rep.html()


def test_cli_exit_codes(tmp_path, capsys):
    data = tmp_path / "cms.csv"
    data.write_text("group,TP,FN,FP,TN\nA,1,0,0,5\nB,7,0,1,10\n")
    out = tmp_path / "r.json"
    assert cli.main(["audit", str(data), "--group", "group", "--out", str(out), "--json"]) == cli.EXIT_OK
    assert json.loads(out.read_text())["summary"]["pairs"] == 1
    # |OFI| = 0.056 > 0.01 and DI = 0.375, but at n = 6 and 18 neither is significant: no gate fails
    assert cli.main(["audit", str(data), "--group", "group", "--fail-ofi", "0.01"]) == cli.EXIT_OK
    assert cli.main(["audit", str(data), "--group", "group", "--fail-four-fifths"]) == cli.EXIT_OK
    big = tmp_path / "big.csv"  # the same rates x 200: OFI's interval now lies beyond ±0.01 and DI below 4/5
    big.write_text("group,TP,FN,FP,TN\nA,200,0,0,1000\nB,1400,0,200,2000\n")
    assert cli.main(["audit", str(big), "--group", "group", "--fail-ofi", "0.01"]) == cli.EXIT_THRESHOLD
    assert "entirely beyond ±0.01" in capsys.readouterr().err
    assert cli.main(["audit", str(big), "--group", "group", "--fail-ofi", "0.5"]) == cli.EXIT_OK
    assert cli.main(["audit", str(big), "--group", "group", "--fail-four-fifths"]) == cli.EXIT_THRESHOLD
    assert cli.main(["audit", str(big), "--group", "group", "--fail-ofi", "0.01", "--alpha", "0.9"]) == cli.EXIT_BAD_INPUT
    assert cli.main(["audit", str(big), "--group", "group", "--adjust", "bh", "--alpha", "0.01"]) == cli.EXIT_OK
    bad = tmp_path / "bad.csv"
    bad.write_text("group,TP,FN,FP,TN\nA,1,-2,0,5\nB,7,0,1,10\n")
    assert cli.main(["audit", str(bad), "--group", "group"]) == cli.EXIT_BAD_INPUT
    assert "row 1 (file line 2), column 'FN'" in capsys.readouterr().err
    rows = tmp_path / "rows.csv"
    rows.write_text("y,p,g\n" + "\n".join(f"{i % 2},{(i // 2) % 2},{'ab'[i % 3 == 0]}" for i in range(60)))
    assert cli.main(["audit", str(rows), "--group", "g", "--label", "y", "--prediction", "p",
                     "--out", str(tmp_path / "r.html")]) == cli.EXIT_OK
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert cli.main(["audit", str(tmp_path / "missing.csv"), "--group", "g"]) == cli.EXIT_BAD_INPUT


def test_cli_refuses_bad_outputs_and_non_finite_thresholds_with_exit_2(tmp_path, capsys):
    data = tmp_path / "cms.csv"
    data.write_text("group,TP,FN,FP,TN\nA,1,0,0,5\nB,7,0,1,10\n")
    base = ["audit", str(data), "--group", "group"]
    assert cli.main([*base, "--out", str(tmp_path)]) == cli.EXIT_BAD_INPUT
    assert "is a directory" in capsys.readouterr().err
    assert cli.main([*base, "--out", str(tmp_path / "missing" / "r.html")]) == cli.EXIT_BAD_INPUT
    assert "does not exist" in capsys.readouterr().err
    for bad in (["--fail-ofi", "nan"], ["--fail-ofi", "inf"], ["--fail-ofi", "-1"], ["--tolerance", "nan"],
                ["--alpha", "0"], ["--threshold", "nan"], ["--adjust", "bonferroni"], ["--no-such-flag"]):
        assert cli.main([*base, *bad]) == cli.EXIT_BAD_INPUT, bad
    assert "finite number" in capsys.readouterr().err
    for level in ("0.95", "0.5", "yes"):      # a confidence level where the error rate belongs: the library's sentence
        assert cli.main([*base, "--alpha", level]) == cli.EXIT_BAD_INPUT
        assert "alpha is the error rate, not the confidence level: a number in (0, 0.5); alpha=0.05 gives a 95 % " \
               "interval" in capsys.readouterr().err
    for old in (["--flip"], ["--saved-by", "ana"]):       # removed spellings: --positive-is harm, --user
        assert cli.main([*base, *old]) == cli.EXIT_BAD_INPUT
        assert "unrecognized arguments" in capsys.readouterr().err


def test_cli_stops_cleanly_on_sigterm_without_a_partial_report(tmp_path, monkeypatch, capsys):
    import os
    import signal

    data = tmp_path / "cms.csv"
    data.write_text("group,TP,FN,FP,TN\nA,1,0,0,5\nB,7,0,1,10\n")
    out = tmp_path / "r.html"
    real_build = report.build

    def build_then_get_terminated(*args, **kwargs):  # type: ignore[no-untyped-def]
        rep = real_build(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)
        return rep

    monkeypatch.setattr(cli.report_mod, "build", build_then_get_terminated)
    assert cli.main(["audit", str(data), "--group", "group", "--out", str(out)]) == cli.EXIT_TERMINATED
    assert "SIGTERM" in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.glob(".*part"))
    assert signal.getsignal(signal.SIGTERM) is not None  # the previous handler is restored


def _forty_long_names() -> Audit:
    import numpy as np

    rng = np.random.default_rng(7)
    return Audit({f"Applicants from district {k:02d} of the east":
                  CM(*map(int, rng.multinomial(int(rng.integers(40, 400)), [0.3, 0.2, 0.1, 0.4]))) for k in range(40)},
                 source="forty districts")


@pytest.mark.skipif(shutil.which("chromium") is None and not os.environ.get("CI"), reason="Debian's chromium is absent")
@pytest.mark.parametrize("make,sizes", [(lambda: datasets.load_demo("compas_race"), ("A4", "Letter")),
                                        (_forty_long_names, ("A4",))], ids=["compas", "forty"])
def test_report_prints_to_a4_and_letter(tmp_path, make, sizes):
    """Printed (print media, after the browser's beforeprint), the report fits a page's width: figures
    redrawn at 680 px with every group's name inside them, no table wider than the page, each major
    section on a new page; the PDF has the pages to show for it. A4 is the narrower paper, so the forty
    long names are printed on A4 only (Letter cost Chromium another 3.6 s of CPU for them)."""
    from playwright.sync_api import sync_playwright

    from browser_helpers import assert_group_labels_visible

    audit = make()
    path = tmp_path / "report.html"
    path.write_text(report.build(audit).html(), encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"),
                                    args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        page = browser.new_page(viewport={"width": 690, "height": 1000})  # A4 less 14 mm margins: 182 mm ≈ 688 px
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(path.as_uri())
        page.wait_for_selector(".js-plotly-plot", timeout=60000)
        page.emulate_media(media="print")
        page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
        # the condition: every figure has been laid out again at the printed width
        page.wait_for_function("[...document.querySelectorAll('.js-plotly-plot')].every(d => d._fullLayout.width "
                               "=== 680)", timeout=60000)
        widths = page.evaluate("[...document.querySelectorAll('.js-plotly-plot')].map(d => d._fullLayout.width)")
        assert widths and all(w == 680 for w in widths), widths
        assert_group_labels_visible(page, audit.groups)
        too_wide = page.evaluate("[...document.querySelectorAll('table')].filter(t => t.offsetParent !== null)"
                                 ".map(t => t.getBoundingClientRect().width).filter(w => w > 691)")
        assert too_wide == [], too_wide
        breaks = page.evaluate("[...document.querySelectorAll('section')].filter(s => s.offsetParent !== null)"
                               ".map(s => getComputedStyle(s).breakBefore)")
        assert len(breaks) >= 6 and set(breaks) == {"page"}, breaks
        pdfs = {size: page.pdf(format=size) for size in sizes}
        page.evaluate("window.dispatchEvent(new Event('afterprint'))")
        # the condition: back to the window's width (690 px less the page's margins), not the printed 680
        page.wait_for_function("document.querySelector('.js-plotly-plot')._fullLayout.width !== 680", timeout=60000)
        browser.close()
    assert not errors, errors
    for size, pdf in pdfs.items():
        pages = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
        assert pdf.startswith(b"%PDF") and pages >= 7, (size, pages)


def test_the_command_line_saves_a_scheduled_audit_in_the_store(tmp_path, capsys):
    """Issue 27: `python -m fairness_core audit … --save NAME --model M --period P [--store URL]`."""
    from fairness_core.store import AuditStore

    data = tmp_path / "q3.csv"
    data.write_text("group,TP,FN,FP,TN\nA,10,2,3,20\nB,8,5,1,25\n")
    url = f"sqlite:///{tmp_path / 'audits.db'}"
    for period in ("2026-Q2", "2026-Q3"):
        code = cli.main(["audit", str(data), "--group", "group", "--positive-is", "benefit", "--save", f"credit {period}",
                         "--model", "credit", "--period", period, "--store", url])
        assert code == 0
        assert "saved as " in capsys.readouterr().out
    store = AuditStore(url)
    assert [s.period for s in store.history("credit")] == ["2026-Q2", "2026-Q3"]
    saved = store.load(store.list(model="credit")["id"].iloc[0])
    assert saved.audit.cms == cli_audit(data).cms and saved.alpha == 0.05 and saved.adjust == "holm"
    assert cli.main(["audit", str(data), "--group", "group", "--model", "credit"]) == cli.EXIT_BAD_INPUT
    assert "go with --save NAME" in capsys.readouterr().err
    assert cli.main(["audit", str(data), "--group", "group", "--save", "x", "--store", "nonsense"]) == cli.EXIT_BAD_INPUT
    assert "the audit was not saved" in capsys.readouterr().err


def cli_audit(path):  # type: ignore[no-untyped-def]
    from fairness_core.io import cms_from_table, read_table

    return cms_from_table(read_table(path.read_bytes(), path.name), positive_is="benefit")
