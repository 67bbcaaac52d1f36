"""An audit of decisions alone gives one answer (issue 52, items 2-4): each attribute alone leads with the counts of
its own verdict table; one rule (Local Law 144's 2 %, unknowns out) decides which groups every figure, headline,
verdict and LL144 row compares, printed with one rounding; and nothing that needs outcomes has a column, a row or a
second sentence, on the page, in the report, its JSON and its CSVs."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairness_core import datasets, plots, regulatory, report
from fairness_core.common import text
from fairness_core.common.validation import under_share
from fairness_core.io import audit_from_decisions
from fairness_core.statistics.verdicts import SELECTION_VERDICTS
from fairness_core.wording.decisions import NEEDS_OUTCOMES_ONCE, selection_reading

ROOT = Path(__file__).resolve().parents[1]
HR = ROOT / "assets" / "demo_hr_screening.csv"
UNKNOWN = {"Decline to state", "Prefer not to say"}


def race_alone_adverse() -> pd.DataFrame:
    """Race A selected at 50 %, race B at 35 %, within each of four sex categories of 900: race alone shows adverse
    impact (1,800 a side), the 28 intersection pairs of 450 each, Holm-adjusted, do not."""
    rows = []
    for sex in ("F", "M", "N", "X"):
        for race, n, selected in (("A", 450, 225), ("B", 450, 158)):
            rows += [(sex, race, "Yes")] * selected + [(sex, race, "No")] * (n - selected)
    return pd.DataFrame(rows, columns=["sex", "race", "advanced"])


def test_the_one_rule_keeps_exactly_two_percent_and_leaves_out_less():
    assert under_share([1, 2, 3, 94], 100).tolist() == [True, False, False, False]
    assert under_share([7, 7, 86], 350).tolist() == [False, False, False]   # 7/350 = 2 % exactly, despite rounding
    assert under_share([5, 995], 1000, exclude_below=0).tolist() == [False, False]


def hr_frame() -> pd.DataFrame:
    df = pd.read_csv(HR, keep_default_na=False)
    for c in ("sex", "race_ethnicity"):
        df[c] = df[c].where(~df[c].isin(UNKNOWN | {""}), "unknown")
    return df


@pytest.mark.parametrize("by", [["sex"], ["race_ethnicity"], ["sex", "race_ethnicity"]])
def test_every_figure_headline_verdict_and_ll144_row_compares_the_same_groups(by):
    """The HR demo (decisions alone): the groups compared, computed here with pandas from the CSV (known categories
    of at least 2 % of all 2,400 applicants), are the verdicts' groups, the figure's, the LL144 table's rows in the
    ratios; the 4/5 line, the headline's lowest pair and the LL144 impact ratios rest on the same highest rate, and
    the headline prints the interval exactly as the verdict table does."""
    audit = datasets.load_demo("hr_screening")
    block = audit if len(by) == 2 else audit.marginal(by[0])
    df = hr_frame()
    key = df[by].agg(" & ".join, axis=1)
    known = ~df[by].eq("unknown").any(axis=1)
    size = key[known].value_counts()
    rate = df["advanced_to_interview"].eq("Yes").groupby(key).mean()
    expected = set(size[size >= 0.02 * len(df)].index)
    assert {"American Indian or Alaska Native", "Native Hawaiian or Pacific Islander"}.isdisjoint(expected)

    def plain(g: str) -> str:   # a marginal's group reads "sex = unknown" only for values that say nothing alone
        return g.split(" = ", 1)[-1]

    assert {plain(g) for g in block.compared_groups} == expected
    v = block.verdicts()
    assert {plain(g) for g in set(v["group_i"]) | set(v["group_j"])} == expected
    assert len(v) == len(expected) * (len(expected) - 1) // 2

    summary = regulatory.ll144_summary(audit)
    rows = summary[summary["categories of"] == " × ".join(by)]
    in_ratios = rows[rows["impact ratio"].notna()]
    assert set(in_ratios["category"]) == expected
    top = rate[list(expected)].max()
    assert in_ratios["selection rate"].max() == pytest.approx(top)
    assert in_ratios.set_index("category")["impact ratio"].to_dict() == pytest.approx(
        (rate[list(expected)] / top).to_dict())

    fig = plots.selection_rates(block)
    compared = next(t for t in fig.data if t.name == "selection rate")
    assert {plain(str(g)).replace("&amp;", "&") for g in compared.y} == expected
    line = next(s for s in fig.layout.shapes if s.line.dash == "dash")
    assert line.x0 == pytest.approx(0.8 * top)
    assert f"{top:.1%}" in fig.layout.annotations[0].text

    answer = v.three_questions()["four_fifths"]["text"]
    lowest = in_ratios.loc[in_ratios["impact ratio"].idxmin()]
    highest = in_ratios.loc[in_ratios["selection rate"].idxmax()]
    if lowest["impact ratio"] >= 0.8:   # sex alone: 0.894
        assert answer == "No pair falls below 0.8 by point estimate."
        return
    assert f"the lowest: {lowest['category']} against {highest['category']}, impact ratio " in answer.replace(
        f"{by[0]} = ", "")
    printed = re.search(r"impact ratio (\d\.\d\d \[[^\]]+\])", answer).group(1)
    assert printed.startswith(f"{lowest['impact ratio']:.2f} [")   # the LL144 row's ratio, rounded alike
    shown = selection_reading(v)
    pair = shown.iloc[:, 1][shown["pair"].str.replace(f"{by[0]} = ", "") == f"{lowest['category']} vs "
                                                                             f"{highest['category']}"]
    assert pair.tolist() == [printed]   # one number, one rounding: the headline's interval is the table's


def test_a_bound_near_a_threshold_prints_alike_everywhere():
    assert text.ratio_text(0.48, 0.2612, 1.0021) == "0.48 [0.26, 1.002]"
    assert text.ratio_text(0.7, 0.55, 0.7996) == "0.70 [0.55, 0.7996]"   # not "0.80": it is shown below 0.8


def test_tiles_headline_and_report_summary_give_each_attribute_its_own_counts():
    df = race_alone_adverse()
    audit = audit_from_decisions(df, "advanced", ["sex", "race"], "Yes", positive_is="benefit")
    race = audit.marginal("race").verdicts()
    assert race["verdict"].tolist() == ["adverse impact"]
    assert (audit.verdicts()["verdict"] == "adverse impact").sum() == 0   # the intersections do not show it
    r = report.build(audit)
    alone = r.summary()["each attribute alone"]
    assert list(r.summary())[0] == "each attribute alone"   # it leads
    for attribute in ("sex", "race"):
        table = r.tables[f"verdicts by {attribute} alone"]
        counts = table["verdict"].value_counts()
        assert alone[attribute]["verdicts"] == {k: int(counts.get(k, 0)) for k in SELECTION_VERDICTS}
        assert alone[attribute]["pairs"] == len(table)
    assert alone["race"]["findings"].startswith("Of 1 group pair: 1 adverse impact")
    page = r.html()
    head = page[:page.index("</header>")]
    assert head.index("By race alone") < head.index("The sex × race intersections")
    assert "1 pair of race categories — adverse impact: 1" in head
    assert head.index("By race alone") < page.index("Verdict per pair")   # its section before the intersections'


def visible_text(html: str) -> str:
    body = re.sub(r"<script.*?</script>|<style.*?</style>", " ", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", body)


@pytest.mark.parametrize("scores", [False, True])
def test_nothing_that_needs_outcomes_has_a_column_or_a_second_sentence(scores):
    audit = datasets.load_demo("hr_screening")
    kw = {"scores": audit.rows.scores["tool_score"], "score_name": "tool_score"} if scores else {}
    r = report.build(audit, **kw)
    ll144 = r.tables[report.LL144]
    assert not {"OFI", "OFI verdict"} & set(ll144.columns)
    assert ("most selected" in " ".join(ll144["status"])) is not scores   # a scoring rate's top is not "selected"
    page = visible_text(r.html())
    assert page.count("OFI") == 1 and page.count(NEEDS_OUTCOMES_ONCE) == 1    # said once, in the summary
    for word in ("PPR", "PNR", "MATCH", "Smoothing", "needs outcomes", "need observed outcomes"):
        assert word not in page, word
    doc = json.loads(r.to_json())
    assert json.dumps(doc, ensure_ascii=False).count("OFI") == 1 and doc["summary"]["needs outcomes"] == NEEDS_OUTCOMES_ONCE
    assert not {"OFI", "OFI verdict", "PPR", "PNR"} & set().union(*(row.keys() for t in doc["tables"].values()
                                                                    for row in t))
    with zipfile.ZipFile(io.BytesIO(r.csv_zip())) as z:
        for name in z.namelist():
            csv = z.read(name).decode()
            for word in ("OFI", "PPR", "PNR", "needs outcomes"):
                assert word not in csv, (name, word)
    assert set(r.tables["cells"].columns) >= {"selection rate", "not selected"}


def test_the_page_says_what_needs_outcomes_once_in_its_words():
    from app_helpers import page_with_audit

    at = page_with_audit(datasets.load_demo("hr_screening"), "pages/2_Bias_Audit.py")
    assert not at.exception
    said = [e.value for kind in (at.markdown, at.caption, at.info, at.warning, at.sidebar.markdown,
                                 at.sidebar.caption) for e in kind]
    words = "\n".join(map(str, said))
    assert words.count("OFI") == 1 and "observed outcome" in next(e.value for e in at.info if "OFI" in e.value)
    for word in ("PPR", "PNR", "needs outcomes", "need observed outcomes", "MATCH", "Smoothing"):
        assert word not in words, word
    for df in at.dataframe:
        columns = " ".join(map(str, df.value.columns))
        assert not re.search(r"\b(OFI|PPR|PNR|DI)\b", columns), columns
    labels = [m.label for m in at.metric]
    assert labels == list(map(str.capitalize, SELECTION_VERDICTS)) * 3   # sex alone, race alone, the intersections
    values = [int(m.value) for m in at.metric]
    audit = datasets.load_demo("hr_screening")
    for k, attribute in enumerate(audit.attributes):
        counts = audit.marginal(attribute).verdicts()["verdict"].value_counts()
        assert values[4 * k:4 * k + 4] == [int(counts.get(v, 0)) for v in SELECTION_VERDICTS]
