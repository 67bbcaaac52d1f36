"""``python -m fairness_core audit ... --kind continuous|multiclass`` (issue 53): the report of each kind written
atomically, its numbers the library's, exit codes as the binary audit's (0, 1 a gate crossed, 2 bad input named by
column and row, 143 on SIGTERM with nothing written), --save keeps the kind, and --kind binary is unchanged."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairness_core import cli
from fairness_core.continuous import ContinuousAudit
from fairness_core.multiclass import MulticlassAudit
from fairness_core.store import AuditStore

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def pay_csv(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    sex = rng.choice(["F", "M"], 600)
    salary = rng.lognormal(10.8, 0.3, 600).round(2)
    recommended = (salary * rng.lognormal(0, 0.05, 600) - np.where(sex == "F", 3000, 0)).round(2)
    path = tmp_path / "pay.csv"
    pd.DataFrame({"salary": salary, "recommended": recommended, "sex": sex}).to_csv(path, index=False)
    return path


@pytest.fixture
def tiers_csv(tmp_path: Path) -> Path:
    rng = np.random.default_rng(1)
    names = np.array(["Low", "Medium", "High"])
    race = rng.choice(["a", "b"], 800)
    observed = names[rng.integers(0, 3, 800)]
    given = np.where((race == "b") & (rng.random(800) < 0.5), "High", names[rng.integers(0, 3, 800)])
    path = tmp_path / "tiers.csv"
    pd.DataFrame({"tier": observed, "score_text": given, "race": race}).to_csv(path, index=False)
    return path


def amounts(path: Path, *extra: str) -> list[str]:
    return ["audit", str(path), "--group", "sex", "--label", "salary", "--prediction", "recommended",
            "--kind", "continuous", *extra]


def test_an_amount_audit_writes_its_report_with_the_librarys_numbers_and_gates_in_units(pay_csv, tmp_path, capsys):
    out = tmp_path / "pay.json"
    code = cli.main(amounts(pay_csv, "--tolerance", "1000", "--unit", "$", "--positive-is", "benefit", "--json",
                            "--out", str(out)))
    assert code == cli.EXIT_OK
    printed = capsys.readouterr().out
    assert "M gets $" in printed and "wrote" in printed
    table = pd.read_csv(pay_csv)
    want = ContinuousAudit.from_predictions(table["salary"], table["recommended"], {"sex": table["sex"]},
                                            positive_is="benefit").verdicts(1000, unit="$")
    doc = json.loads(out.read_text())
    assert doc["kind"] == "continuous" and doc["unit"] == "$"
    assert [r["ofi"] for r in doc["tables"]["verdicts"]] == pytest.approx(want["ofi"].tolist(), rel=1e-12)
    bound = doc["summary"]["max |OFI| lower bound"]
    assert 1000 < bound < 3000                                     # the bias of $3,000, shown beyond $1,000
    assert cli.main(amounts(pay_csv, "--tolerance", "1000", "--positive-is", "benefit",
                            "--fail-ofi", "1500")) == cli.EXIT_THRESHOLD
    assert "entirely beyond ±1500" in capsys.readouterr().err
    assert cli.main(amounts(pay_csv, "--tolerance", "1000", "--positive-is", "benefit",
                            "--fail-ofi", str(round(bound + 1)))) == cli.EXIT_OK
    html = tmp_path / "pay.html"
    assert cli.main(amounts(pay_csv, "--tolerance", "1000", "--out", str(html))) == cli.EXIT_OK
    assert "assuming a larger predicted amount is a benefit" in capsys.readouterr().err
    assert html.read_text().startswith("<!DOCTYPE html>") and not list(tmp_path.glob(".*part"))


def test_a_tier_audit_reports_the_cuts_and_saves_as_classes(tiers_csv, tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'a.db'}"
    base = ["audit", str(tiers_csv), "--group", "race", "--label", "tier", "--prediction", "score_text",
            "--kind", "multiclass", "--order", "Low,Medium,High"]
    out = tmp_path / "t.json"
    assert cli.main([*base, "--positive-is", "harm", "--json", "--out", str(out), "--save", "tiers Q1",
                     "--model", "risk", "--period", "2026-Q1", "--store", url]) == cli.EXIT_OK
    doc = json.loads(out.read_text())
    table = pd.read_csv(tiers_csv)
    m = MulticlassAudit.from_predictions(table["tier"], table["score_text"], {"race": table["race"]},
                                         ["Low", "Medium", "High"], favourable="Low")
    assert doc["favourable"] == ["Low"] and doc["classes"] == ["Low", "Medium", "High"]
    assert [r["di"] for r in doc["tables"]["impact ratios"]] == pytest.approx(m.impact_ratios()["di"].tolist())
    saved = AuditStore(url).load(AuditStore(url).list()["id"].iloc[0])
    assert saved.kind == "multiclass" and np.array_equal(saved.audit.counts, m.counts)
    capsys.readouterr()
    # b is placed in High half the time: adverse impact at the cuts, shown
    assert cli.main([*base, "--favourable", "Low", "--fail-four-fifths"]) == cli.EXIT_THRESHOLD
    assert "outside its band" in capsys.readouterr().err
    decisions = ["audit", str(tiers_csv), "--group", "race", "--prediction", "score_text", "--kind", "multiclass",
                 "--order", "Low,Medium,High", "--favourable", "Low", "--decisions-only"]
    assert cli.main(decisions) == cli.EXIT_OK
    assert cli.main([*decisions, "--fail-ofi", "0.1"]) == cli.EXIT_BAD_INPUT
    assert "--fail-ofi needs an OFI" in capsys.readouterr().err


@pytest.mark.parametrize("extra, message", [
    ([], "needs --tolerance in the outcome's units"),
    (["--tolerance", "100", "--order", "a,b"], "--order goes with --kind multiclass"),
    (["--tolerance", "100", "--threshold", "5"], "--threshold is for yes/no decisions"),
    (["--tolerance", "100", "--decisions-only"], "--decisions-only is for yes/no decisions and classes"),
])
def test_amount_usage_errors_say_what_is_wrong(pay_csv, capsys, extra, message):
    assert cli.main(amounts(pay_csv, *extra)) == cli.EXIT_BAD_INPUT
    assert message in capsys.readouterr().err


def test_bad_amounts_and_bad_tiers_are_named_by_column_and_row(tmp_path, tiers_csv, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("salary,recommended,sex\n100,110,F\n120,abc,F\n130,125,M\n90,inf,M\n")
    assert cli.main(["audit", str(bad), "--group", "sex", "--label", "salary", "--prediction", "recommended",
                     "--kind", "continuous", "--tolerance", "5"]) == cli.EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "row 2 (file line 3), column 'recommended': 'abc' is not a number" in err
    assert "row 4 (file line 5), column 'recommended'" in err and "infinite" in err
    flat = tmp_path / "flat.csv"
    flat.write_text("salary,recommended,sex\n100,110,F\n100,120,F\n100,125,M\n100,130,M\n")
    assert cli.main(["audit", str(flat), "--group", "sex", "--label", "salary", "--prediction", "recommended",
                     "--kind", "continuous", "--tolerance", "5"]) == cli.EXIT_BAD_INPUT
    assert "every value is 100" in capsys.readouterr().err
    assert cli.main(["audit", str(tiers_csv), "--group", "race", "--label", "tier", "--prediction", "score_text",
                     "--kind", "multiclass", "--order", "Low,Medium,Top", "--favourable", "Low"]) == cli.EXIT_BAD_INPUT
    assert "column 'score_text'" in capsys.readouterr().err
    assert cli.main(["audit", str(tiers_csv), "--group", "race", "--label", "tier", "--prediction", "score_text",
                     "--kind", "multiclass", "--order", "Low,Medium,High"]) == cli.EXIT_BAD_INPUT
    assert "--order needs the end that is good for the person" in capsys.readouterr().err
    assert cli.main(["audit", str(tiers_csv), "--group", "race", "--label", "nope", "--prediction", "score_text",
                     "--kind", "multiclass"]) == cli.EXIT_BAD_INPUT
    assert "column 'nope': no such column" in capsys.readouterr().err


def test_binary_stays_the_default_and_refuses_the_new_flags(tmp_path, capsys):
    data = tmp_path / "cms.csv"
    data.write_text("group,TP,FN,FP,TN\nA,1,0,0,5\nB,7,0,1,10\n")
    out = tmp_path / "r.json"
    assert cli.main(["audit", str(data), "--group", "group", "--json", "--out", str(out)]) == cli.EXIT_OK
    doc = json.loads(out.read_text())
    assert "kind" not in doc and doc["settings"]["OFI tolerance"] == 0.05       # the binary report, as before
    assert cli.main(["audit", str(data), "--group", "group", "--tolerance", "3"]) == cli.EXIT_BAD_INPUT
    assert "--tolerance must be a finite number in [0, 2]" in capsys.readouterr().err
    assert cli.main(["audit", str(data), "--group", "group", "--unit", "$"]) == cli.EXIT_BAD_INPUT
    assert "--unit goes with --kind continuous" in capsys.readouterr().err


def test_sigterm_during_an_amount_audit_writes_nothing(pay_csv, tmp_path, monkeypatch, capsys):
    from fairness_core.presentation import report_kinds

    real = report_kinds.build

    def build_then_get_terminated(*args, **kwargs):  # type: ignore[no-untyped-def]
        rep = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)
        return rep

    monkeypatch.setattr(report_kinds, "build", build_then_get_terminated)
    out = tmp_path / "r.html"
    assert cli.main(amounts(pay_csv, "--tolerance", "1000", "--out", str(out))) == cli.EXIT_TERMINATED
    assert "SIGTERM" in capsys.readouterr().err and not out.exists() and not list(tmp_path.glob(".*part"))


def test_the_module_runs_as_a_command(pay_csv, tmp_path):
    out = tmp_path / "r.json"
    run = subprocess.run([sys.executable, "-m", "fairness_core", *amounts(pay_csv, "--tolerance", "1000", "--unit",
                                                                         "$", "--json", "--out", str(out))],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(out.read_text())["summary"]["verdicts"]["algorithmic bias"] == 1


def test_the_guides_examples_of_amounts_and_classes_run():
    """docs/guide.md's doctest of ``--kind continuous`` runs as written (docs/api.md's run with the doctest glob)."""
    import doctest

    result = doctest.testfile(str(ROOT / "docs" / "guide.md"), module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 10 and result.failed == 0
