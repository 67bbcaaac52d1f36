"""The audit report (HTML, JSON, CSV zip) and the command line."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

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
    assert v["OFI"] == pytest.approx(bias.compare("OFI", CM(1, 0, 0, 5), CM(7, 0, 1, 10)))
    assert v["DI"] == pytest.approx(0.375)
    with zipfile.ZipFile(io.BytesIO(rep.csv_zip())) as z:
        cells = z.read("cells.csv").decode()
    assert "'=cmd" in cells  # formula-like group names are neutralized in CSV


def test_undefined_values_are_null_in_json_and_words_in_html():
    rep = report.build(datasets.load_demo("ricci_b"))
    doc = json.loads(rep.to_json())
    di = [row["DI"] for row in doc["tables"]["verdicts"]]
    assert all(d is None for d in di)  # nobody promoted: DI is 0/0 for every pair
    assert "undefined" in rep.html()


def test_cli_exit_codes(tmp_path, capsys):
    data = tmp_path / "cms.csv"
    data.write_text("group,TP,FN,FP,TN\nA,1,0,0,5\nB,7,0,1,10\n")
    out = tmp_path / "r.json"
    assert cli.main(["audit", str(data), "--group", "group", "--out", str(out), "--json"]) == cli.EXIT_OK
    assert json.loads(out.read_text())["summary"]["pairs"] == 1
    assert cli.main(["audit", str(data), "--group", "group", "--fail-ofi", "0.01"]) == cli.EXIT_THRESHOLD
    assert cli.main(["audit", str(data), "--group", "group", "--fail-ofi", "0.5"]) == cli.EXIT_OK
    assert cli.main(["audit", str(data), "--group", "group", "--fail-four-fifths"]) == cli.EXIT_THRESHOLD
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
