"""A counterfactual test's report, saved audit, command line and figures (issue 54), each against the library's
numbers (:mod:`fairness_core.counterfactual`) and against independent counts: the report's HTML, JSON and CSV zip;
the store's "paired" kind saved and loaded bit for bit (never the texts); ``python -m fairness_core counterfactual
variants|audit`` with its exit codes and refusals by column and file row; the figures' data; the answer's words."""

from __future__ import annotations

import io
import json
import re
import sqlite3
import zipfile
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from fairness_core import cli, counterfactual, report
from fairness_core.presentation import report_paired
from fairness_core.presentation.plots import counterfactual as cf_plots
from fairness_core.services import counterfactual_files as files
from fairness_core.statistics.paired import PAIRED_VERDICTS
from fairness_core.statistics.verdicts import VerdictSettings
from fairness_core.store import AuditStore
from fairness_core.wording import paired as words
from test_hostile_names import LINK, STYLED, TEMPLATE, live_markup, strings_in

DEMO = pd.read_csv(files.DEMO_RESULTS)
BASELINE = "White male (null swap)"
REAL = ("White female", "Black female", "White male", "Black male")


def demo(**kwargs) -> counterfactual.PairedAudit:  # type: ignore[no-untyped-def]
    return counterfactual.audit(DEMO, decision="advanced", positive_is="benefit", **kwargs)


def random_results(seed: int = 1, cases: int = 60, k: int = 4, missing: float = 0.05) -> pd.DataFrame:
    """Decisions of k groups on shared cases, some unanswered (a variant the model failed on)."""
    rng = np.random.default_rng(seed)
    merit = rng.normal(size=(cases, 1)) + np.linspace(0, 0.6, k)[None, :]
    decision = (merit + rng.normal(0, 0.7, (cases, k)) > 0.3).astype(float)
    decision[rng.random((cases, k)) < missing] = np.nan
    return pd.DataFrame({"case_id": np.repeat(np.arange(cases), k), "group": np.tile([f"g{j}" for j in range(k)], cases),
                         "decision": decision.ravel()})


class Tables(HTMLParser):
    """Every table of an HTML page as rows of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        if self._cell is not None:
            self._cell.append(data)


# --- the report ---------------------------------------------------------------------------------------------------

def test_the_report_carries_the_librarys_numbers_in_html_json_and_zip():
    audit = demo()
    rep = report.build(audit, settings=VerdictSettings(0.05, 0.05, "holm"), source="demo.csv", model="screener v2")
    pairs = audit.pairs()
    assert isinstance(rep, report_paired.PairedReport)
    pd.testing.assert_frame_equal(rep.tables["pairs"], pairs, check_exact=True)
    doc = json.loads(rep.to_json())
    assert doc["kind"] == "paired" and doc["baseline"] == {g: f"{g} (null swap)" for g in REAL}
    assert doc["summary"]["verdicts"] == {w: int((pairs["verdict"] == w).sum()) for w in PAIRED_VERDICTS}
    records = pd.DataFrame(doc["tables"]["pairs"])
    np.testing.assert_allclose(records["difference_ci_high"], pairs["difference_ci_high"], rtol=1e-13)
    assert doc["summary"]["within-group flip rates"]["White male"] == pytest.approx(63 / 400)   # counted below
    o = audit.omnibus()
    assert doc["summary"]["omnibus"]["statistic"] == pytest.approx(o.statistic, rel=1e-14)
    # the HTML's reading table: White male vs Black male, from the raw rows counted by hand
    wide = DEMO.pivot(index="case_id", columns="group", values="advanced") == "Yes"
    only_w, only_b = int((wide["White male"] & ~wide["Black male"]).sum()), int((~wide["White male"]
                                                                                & wide["Black male"]).sum())
    flips_null = int((wide["White male"] != wide[BASELINE]).sum())
    assert flips_null == 63
    parsed = Tables()
    parsed.feed(rep.html())
    reading = parsed.tables[0]
    header, rows = reading[0], {r[0]: dict(zip(reading[0], r)) for r in reading[1:]}
    assert header[:4] == ["pair", "verdict", "favours", "difference (i − j)"]
    row = rows["White male vs Black male"]
    assert row["only i / only j"] == f"{only_w} / {only_b}"
    assert row["difference (i − j)"] == f"+{(only_w - only_b) / 400 * 100:.1f} pp"
    within_b = (wide["Black male"] != wide["Black male (null swap)"]).mean()
    assert row["within i / within j"] == f"15.8 % / {within_b * 100:.1f} %"
    assert set(rows) == {f"{a} vs {b}" for k, a in enumerate(REAL) for b in REAL[k + 1:]}     # no null swap pairs
    assert "screener v2" in rep.html() and "<h1>Counterfactual test report</h1>" in rep.html()
    with zipfile.ZipFile(io.BytesIO(rep.csv_zip())) as z:
        zipped = pd.read_csv(z.open("pairs.csv"))
        discordance = pd.read_csv(z.open("discordance.csv"))
    assert zipped["only_i"].tolist() == pairs["only_i"].tolist()
    assert discordance.set_index("selected ↓ / not selected →").loc["White male", "Black male"] == only_w


def test_the_discordance_table_is_the_brute_force_count_of_every_pair():
    rows = random_results()
    audit = counterfactual.audit(rows, positive_is="benefit")
    table = report_paired.discordance_table(audit.pairs(), audit.groups)
    wide = rows.pivot(index="case_id", columns="group", values="decision")
    for gi in audit.groups:
        for gj in audit.groups:
            if gi != gj:
                both = wide[[gi, gj]].dropna()
                assert table.loc[gi, gj] == int(((both[gi] == 1) & (both[gj] == 0)).sum()), (gi, gj)
    assert table.loc["g0", "g0"] is pd.NA
    rep = report.build(audit)
    assert "incomplete cases" in rep.tables and rep.summary()["incomplete cases"] == audit.incomplete > 0


def test_scores_need_a_tolerance_in_their_units_and_read_in_them():
    audit = counterfactual.audit(DEMO, score="score")
    with pytest.raises(ValueError, match="tolerance in the score's units"):
        report.build(audit)
    rep = report.build(audit, settings=VerdictSettings(2.0, amounts=True), unit="points")
    assert "discordance" not in rep.tables and rep.summary()["output"] == "score"
    assert "±2 points" in rep.answer[0]
    assert rep.tables["pairs"]["difference"].tolist() == audit.pairs(tolerance=2.0)["difference"].tolist()
    with pytest.raises(ValueError, match="no reference group"):
        report.build(demo(), reference="White male")


def test_the_answer_names_the_material_pairs_and_the_baseline_in_percentage_points():
    pairs = demo().pairs()
    said = words.answer(pairs, "decision", 0.05)
    material = int((pairs["verdict"] == "material difference").sum())
    assert said[0].startswith(f"Changing only the group's words changed the model's answers materially in {material} "
                              "of 6 pairs")
    top = pairs.loc[pairs["difference"].abs().idxmax()]
    assert f"{abs(top.difference) * 100:.1f} pp more often" in said[1]
    low, high = sorted((abs(top.difference_ci_low), abs(top.difference_ci_high)))
    assert f"interval {low * 100:.1f} to {high * 100:.1f} pp" in said[1]   # turned to read with the favoured first
    assert "15.8 % (White male)" in said[-1]
    unread = pairs.drop(columns=[c for c in pairs if "baseline" in c or "flip_excess" in c])
    none = words.answer(unread.assign(verdict="inconclusive"), "decision", 0.05)
    assert none[0].startswith("No pair of groups shows a material difference") and "No baseline" in none[-1]


# --- saved audits ---------------------------------------------------------------------------------------------------

def test_a_paired_audit_saves_and_loads_bit_for_bit_and_never_keeps_the_texts(tmp_path):
    rows = random_results(seed=4).assign(case_id=lambda d: "applicant-" + d["case_id"].astype(str))
    audit = counterfactual.audit(rows, positive_is="harm", baseline=("g0", "g1"))
    url = f"sqlite:///{tmp_path / 'a.db'}"
    s = AuditStore(url)
    audit_id = s.save(audit, "paired", model="screener", period="2026-Q1", tolerance=0.1, alpha=0.1, adjust="bh",
                      source="results.csv")
    loaded = s.load(audit_id)
    assert loaded.kind == "paired" and loaded.source == "results.csv" and loaded.tolerance == 0.1
    a = loaded.audit
    assert (a.groups, a.kind, a.positive_is, a.baseline) == (audit.groups, "decision", "harm", ("g0", "g1"))
    pd.testing.assert_frame_equal(loaded.verdicts(), audit.pairs(0.1, alpha=0.1, adjust="bh"), check_exact=True)
    # every table equals the original's with its cases in sorted order, bit for bit
    coded = np.where(np.isnan(audit.values), -np.inf, audit.values)
    order = np.lexsort(coded.T[::-1])
    resorted = counterfactual.PairedAudit(audit.groups, np.arange(len(order)), audit.values[order], audit.kind,
                                          audit.positive_is, audit.baseline)
    np.testing.assert_array_equal(a.values, resorted.values)
    pd.testing.assert_frame_equal(a.by_group(), resorted.by_group(), check_exact=True)
    assert a.omnibus() == resorted.omnibus() and a.incomplete == audit.incomplete
    pd.testing.assert_frame_equal(a.by_group(), audit.by_group(), rtol=1e-12)
    s.close()
    payload = sqlite3.connect(tmp_path / "a.db").execute("select payload from audits").fetchone()[0]
    assert "applicant-" not in payload                   # no case id
    doc = json.loads(payload)
    assert sum(doc["counts"]) == 60
    i, j = np.triu_indices(len(audit.groups), 1)          # the store keeps every pair of columns, null swaps too
    names = np.array(audit.groups)
    kept = dict(zip(zip(names[i], names[j]), doc["pair_counts"]["only_i"]))
    p = audit.pairs()
    assert [kept[(gi, gj)] for gi, gj in zip(p["group_i"], p["group_j"])] == p["only_i"].tolist()


def test_an_altered_payload_is_refused_and_tolerances_are_checked(tmp_path):
    url = f"sqlite:///{tmp_path / 'a.db'}"
    s = AuditStore(url)
    audit_id = s.save(demo(), "demo", tolerance=0.05)
    with pytest.raises(ValueError, match=r"difference of rates in \(0, 1\]"):
        s.save(demo(), "demo", tolerance=1.5)
    s.save(counterfactual.audit(DEMO, score="score"), "scores", tolerance=5.0)   # in the score's units
    s.close()
    con = sqlite3.connect(tmp_path / "a.db")
    doc = json.loads(con.execute("select payload from audits where id = ?", (audit_id,)).fetchone()[0])
    doc["counts"][0] += 1
    con.execute("update audits set payload = ? where id = ?", (json.dumps(doc), audit_id))
    con.commit()
    with pytest.raises(ValueError, match="counts do not match its answers"):
        AuditStore(url).load(audit_id)


# --- the command line ---------------------------------------------------------------------------------------------

def test_cli_variants_write_csv_and_jsonl(tmp_path, capsys):
    base = tmp_path / "base.csv"
    pd.DataFrame({"id": ["r1", "r2"], "resume": ["- Allison led sales", "Allison's SQL"]}).to_csv(base, index=False)
    out = tmp_path / "v.jsonl"
    assert cli.main(["counterfactual", "variants", str(base), "--text", "resume", "--case", "id", "--example-swaps",
                     "--null-swap", "White male", "--out", str(out)]) == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    want = counterfactual.variants(pd.DataFrame({"id": ["r1", "r2"], "resume": ["- Allison led sales",
                                                                                "Allison's SQL"]}),
                                   "resume", counterfactual.null_swap(counterfactual.example_swaps(), "White male"),
                                   case="id")
    assert [x["text"] for x in lines] == want["text"].tolist() and lines[1]["text"] == "- Aisha led sales"
    assert "wrote" in capsys.readouterr().out
    csv = tmp_path / "v.csv"
    assert cli.main(["counterfactual", "variants", str(base), "--text", "resume", "--example-swaps", "--out",
                     str(csv)]) == 0
    assert pd.read_csv(csv)["text"][1] == "'- Aisha led sales"           # neutralized for spreadsheets
    assert cli.main(["counterfactual", "variants", str(base), "--text", "nope", "--example-swaps", "--out",
                     str(csv)]) == 2
    assert "no text column 'nope'" in capsys.readouterr().err
    assert cli.main(["counterfactual", "variants", str(base), "--text", "resume", "--example-swaps", "--out",
                     str(tmp_path / "v.txt")]) == 2
    assert not list(tmp_path.glob(".*.part"))


def test_cli_audit_writes_the_report_gates_and_saves(tmp_path, capsys):
    out = tmp_path / "r.json"
    args = ["counterfactual", "audit", str(files.DEMO_RESULTS), "--decision", "advanced", "--positive-is", "benefit",
            "--baseline", BASELINE, "--out", str(out), "--json"]
    assert cli.main(args) == 0
    doc = json.loads(out.read_text())
    pairs = demo().pairs()
    assert pd.DataFrame(doc["tables"]["pairs"])["only_j"].tolist() == pairs["only_j"].tolist()
    printed = capsys.readouterr().out
    assert "across all groups: Cochran's Q" in printed and "15.8 % (White male)" in printed
    assert cli.main([*args, "--fail-material"]) == 1
    assert cli.main([*args, "--tolerance", "0.5", "--fail-material"]) == 0      # nothing beyond ±50 points
    store = f"sqlite:///{tmp_path / 's.db'}"
    assert cli.main([*args, "--save", "demo", "--model", "screener", "--store", store]) == 0
    saved = AuditStore(store).list()
    assert saved[["kind", "model", "n"]].values.tolist() == [["paired", "screener", 400]]


@pytest.mark.parametrize("extra, said", [
    (["--score", "score"], "--score needs --tolerance"),
    (["--tolerance", "5"], "at most 1"),
    (["--rank", "score", "--positive-is", "benefit"], "go with --decision"),
    (["--model", "m"], "go with --save NAME"),
    (["--decision", "group"], "column 'group', row 1 (file line 2): 'White female' is not a decision"),
    (["--baseline", "nobody (null swap)"], "baseline: no group 'nobody' in the results"),
])
def test_cli_audit_refuses_in_one_sentence(extra, said, capsys):
    output = [] if {"--decision", "--score", "--rank"} & set(extra) else ["--decision", "advanced"]
    assert cli.main(["counterfactual", "audit", str(files.DEMO_RESULTS), *output, *extra]) == 2
    assert said in capsys.readouterr().err


def test_cli_audit_names_a_duplicated_row_by_its_file_line(tmp_path, capsys):
    rows = DEMO.copy()
    rows.loc[9, "group"] = rows.loc[8, "group"]
    path = tmp_path / "dup.csv"
    rows.to_csv(path, index=False)
    assert cli.main(["counterfactual", "audit", str(path), "--decision", "advanced"]) == 2
    assert re.search(r"row 10 \(file line 11\): case 'R0002' and group '[^']+' appear twice \(rows 9 and 10\)",
                     capsys.readouterr().err)


# --- figures ---------------------------------------------------------------------------------------------------------

def test_the_figures_draw_the_librarys_numbers():
    audit = demo()
    pairs, groups = audit.pairs(), audit.by_group()
    heat = cf_plots.discordance_matrix(pairs, list(audit.real_groups))
    z = np.array([[np.nan if v is None else v for v in row] for row in heat.data[0].z], dtype=float)
    i, j = REAL.index("White male"), REAL.index("Black male")
    assert z[i, j] == 78 / 400 and z[j, i] == 5 / 400 and np.isnan(z[i, i])
    forest = cf_plots.paired_forest(pairs, 0.05)
    xs = np.concatenate([np.asarray(t.x, dtype=float) for t in forest.data])
    assert sorted(xs) == pytest.approx(sorted(pairs["difference"].to_numpy() * 100))
    assert {t.name for t in forest.data} <= set(cf_plots.VERDICT_COLORS)
    rates = cf_plots.paired_rates(groups, 0.05, null_swaps=report_paired.null_swaps(audit))
    assert rates.data[1].name == "baseline (null swap)"
    assert sorted(rates.data[1].y) == sorted(plotly_like(f"{g} (null swap)") for g in REAL)
    assert sorted(np.concatenate([np.asarray(t.x, dtype=float) for t in rates.data])) == pytest.approx(
        sorted(groups["rate"]))


def plotly_like(name: str) -> str:
    from fairness_core.common.text import plotly_text

    return plotly_text(name)


def test_the_figures_show_hostile_group_names_as_text():
    names = [LINK, STYLED, TEMPLATE]
    rows = pd.DataFrame({"case_id": np.repeat(np.arange(40), 3), "group": names * 40,
                         "decision": np.random.default_rng(0).integers(0, 2, 120)})
    audit = counterfactual.audit(rows, positive_is="benefit")
    for fig in (cf_plots.discordance_matrix(audit.pairs(), list(audit.groups)),
                cf_plots.paired_forest(audit.pairs(), 0.05), cf_plots.paired_rates(audit.by_group())):
        strings = list(strings_in(fig.to_plotly_json()))
        assert any("evil.example" in s for s in strings)
        assert not live_markup(strings), live_markup(strings)[:2]


@pytest.mark.parametrize("kind, high", [("decision", 2), ("rank", 6)])
def test_the_stores_integer_patterns_are_numpys_distinct_rows(kind, high):
    """Decisions and ranks are read as one integer per case; the patterns and counts are np.unique's of the rows."""
    from fairness_core.services.store_schema import _patterns

    rng = np.random.default_rng(7)
    values = rng.integers(0 if kind == "decision" else 1, high, (4000, 6)).astype(float)
    values[rng.random(values.shape) < 0.1] = np.nan
    patterns, counts = _patterns(values, kind)
    want, want_counts = np.unique(np.where(np.isnan(values), -np.inf, values), axis=0, return_counts=True)
    np.testing.assert_array_equal(patterns, want)
    np.testing.assert_array_equal(counts, want_counts)


def test_one_level_everywhere_in_the_answer_the_report_and_each_groups_rate():
    """The newcomer's finding: the baseline paragraph said "95 % interval" beside 99.8 % everywhere else. Every
    interval the answer, the report and the figures print is at the pairs' one level, said as the answer says it."""
    from statsmodels.stats.proportion import proportion_confint

    from fairness_core.wording.levels import level_text

    audit = demo()
    rep = report.build(audit, settings=VerdictSettings(0.05, 0.05, "holm"))
    level = float(rep.tables["pairs"]["level"].iloc[0])
    said = level_text(level)
    assert said == "99.2 %" and said != level_text(0.95)                 # Holm over the 6 pairs
    found = re.findall(r"(\d+(?:\.\d+)?) % (?:interval|adjusted)", " ".join(rep.answer))
    assert found and set(found) == {said.removesuffix(" %")}, found
    assert "99.2 % interval" in rep.answer[-1]                            # the baseline paragraph too
    text = re.sub(r"<[^>]+>", " ", rep.html())
    assert set(re.findall(r"(\d+(?:\.\d+)?) % (?:interval|adjusted|CI)", text)) == {said.removesuffix(" %")}
    assert rep.settings["interval level (every interval)"] == said
    groups = rep.tables["groups"]
    for row in groups.itertuples():                                       # each group's rate at the same level
        assert (row.rate_ci_low, row.rate_ci_high) == pytest.approx(
            proportion_confint(row.selected, row.n, alpha=1 - level, method="beta"), abs=1e-12)
    axis = rep.figures["Rate per group"].layout.xaxis.title.text
    assert said in axis and "95 %" not in axis
