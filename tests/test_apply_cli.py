"""``python -m fairness_core apply RULE.json DATA --score COL --group COL --out OUT`` (issue 44): the decisions
beside the input's columns, identical to the rule's own predictions; refusals by name with nothing written."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairness_core import cli, mitigation


@pytest.fixture()
def files(tmp_path):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    n = 3000
    race, sex = rng.choice(["a", "b", "c"], n), rng.choice(["f", "m"], n)
    score = rng.normal(size=n) + (race == "a")
    y = (rng.random(n) < 1 / (1 + np.exp(-score))).astype(int)
    groups = np.char.add(np.char.add(race, " & "), sex)
    rule = mitigation.fit_thresholds(score, y, groups, "equalized_odds", 0.02, randomize=True)
    assert rule.randomized
    (tmp_path / "rule.json").write_text(rule.to_json(), encoding="utf-8")
    data = pd.DataFrame({"id": np.arange(n), "race": race, "sex": sex, "score": score,
                         "note": ["=HYPERLINK(\"x\")"] + ["-0.25"] + ["ok"] * (n - 2)})
    data.to_csv(tmp_path / "data.csv", index=False)
    return tmp_path, rule, data, groups


def run(*argv: object) -> int:
    return cli.main([str(a) for a in argv])


def test_decisions_are_the_rules_own_and_the_input_columns_stay(files, capsys):
    tmp, rule, data, groups = files
    out = tmp / "out.csv"
    code = run("apply", tmp / "rule.json", tmp / "data.csv", "--score", "score", "--group", "race", "--group", "sex",
               "--out", out, "--seed", 5)
    assert code == cli.EXIT_OK
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert list(written.columns) == [*data.columns, "decision"]
    expected = rule.predict(data["score"].to_numpy(), groups, random_state=5)
    assert (written["decision"].astype(int).to_numpy() == expected).all()
    assert written["note"].iloc[0].startswith("'=") and written["note"].iloc[1] == "-0.25"   # formulas neutralized
    assert "seed 5" in capsys.readouterr().out
    parquet = tmp / "out.parquet"
    assert run("apply", tmp / "rule.json", tmp / "data.csv", "--score", "score", "--group", "race", "--group", "sex",
               "--out", parquet, "--seed", 5) == cli.EXIT_OK
    assert (pd.read_parquet(parquet)["decision"].to_numpy() == expected).all()


def test_a_group_the_rule_never_saw_is_refused_by_name_and_nothing_is_written(files, capsys):
    tmp, rule, data, groups = files
    data.loc[7, "race"] = "d"
    data.to_csv(tmp / "data.csv", index=False)
    out = tmp / "out.csv"
    code = run("apply", tmp / "rule.json", tmp / "data.csv", "--score", "score", "--group", "race", "--group", "sex",
               "--out", out)
    assert code == cli.EXIT_BAD_INPUT and not out.exists() and not list(tmp.glob(".*part"))
    err = capsys.readouterr().err
    assert "never fitted for 1 group" in err and f"'d & {data.loc[7, 'sex']}'" in err


@pytest.mark.parametrize("change, message", [
    (lambda d: d.assign(score=d["score"].astype(object).where(d.index != 3, "high")), "not a finite number in 1 rows (data rows 4)"),
    (lambda d: d.assign(sex=d["sex"].where(d.index != 0)), "blank in 1 rows (data rows 1)"),
    (lambda d: d.assign(decision=0), "already have a column 'decision'"),
    (lambda d: d.drop(columns="score"), "no column 'score' in the data"),
])
def test_bad_data_are_refused_by_row_or_column(files, capsys, change, message):
    tmp, rule, data, groups = files
    change(data).to_csv(tmp / "data.csv", index=False)
    out = tmp / "out.csv"
    assert run("apply", tmp / "rule.json", tmp / "data.csv", "--score", "score", "--group", "race", "--group", "sex",
               "--out", out) == cli.EXIT_BAD_INPUT
    assert message in capsys.readouterr().err and not out.exists()


def test_a_rule_file_of_another_version_is_refused(files, capsys):
    tmp, rule, data, groups = files
    (tmp / "old.json").write_text(rule.to_json().replace('"version": 2', '"version": 0'), encoding="utf-8")
    assert run("apply", tmp / "old.json", tmp / "data.csv", "--score", "score", "--group", "race", "--out",
               tmp / "o.csv") == cli.EXIT_BAD_INPUT
    assert "rule file version 0: this fairness_core reads version 2" in capsys.readouterr().err


def test_apply_on_categorical_groups_decides_as_on_text_groups():
    """apply hands predict a categorical (one pass over the groups): its decisions are the text groups' own. The
    speed goal (10^7 rows/s) is bench/mitigation.py's, never a timed test."""
    rng = np.random.default_rng(1)
    g = pd.Series(rng.choice([f"g{i:02d}" for i in range(36)], 200_000)).astype("category")
    s = rng.random(200_000)
    rule = mitigation.fit_thresholds(s[:50_000], rng.random(50_000) < s[:50_000], g[:50_000].astype(str).to_numpy(),
                                     "demographic_parity", 0.02, randomize=True)
    np.testing.assert_array_equal(rule.predict(s, g, random_state=0),
                                  rule.predict(s, g.astype(str).to_numpy(), random_state=0))
