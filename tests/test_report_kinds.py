"""The report of an audit of amounts or of classes (issue 53): the HTML is parsed and its numbers read back, the JSON
and the CSV zip carry the library's numbers exactly, user text is escaped (HTML) and neutralized (CSV), zip entries
are safe file names; the amounts' per-group errors equal Fairlearn's MetricFrame and the error-size gaps contain
SciPy's Welch intervals at the simultaneous level; the class matrices equal scikit-learn's per group."""

from __future__ import annotations

import io
import json
import warnings
import zipfile
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fairness_core import regulatory, report
from fairness_core.continuous import ContinuousAudit
from fairness_core.multiclass import MulticlassAudit
from fairness_core.presentation.report_kinds import error_size_gaps
from fairness_core.verdicts import VerdictSettings

HOSTILE = "<script>alert(1)</script>"
FORMULA = "=HYPERLINK(\"x\")"


class Tables(HTMLParser):
    """Every <table> of a page as rows of cell texts, each under the last <h2> before it."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[str, list[list[str]]]] = []
        self.heading, self._in, self._text = "", None, ""

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        if tag == "table":
            self.tables.append((self.heading, []))
        elif tag == "tr" and self.tables:
            self.tables[-1][1].append([])
        if tag in ("td", "th", "h2"):
            self._in, self._text = tag, ""

    def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
        if tag in ("td", "th") and self._in == tag:
            self.tables[-1][1][-1].append(self._text)
        elif tag == "h2" and self._in == "h2":
            self.heading = self._text
        if tag == self._in:
            self._in = None

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        if self._in:
            self._text += data


def parsed(page: str, heading: str) -> pd.DataFrame:
    """The first table under ``heading`` as a DataFrame of text."""
    p = Tables()
    p.feed(page)
    rows = next(rows for h, rows in p.tables if h == heading)
    return pd.DataFrame(rows[1:], columns=rows[0])


def number(cell: str) -> float:
    return float(cell.replace(",", "").replace("−", "-"))


def pay_rows(seed: int = 0, n: int = 900):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    race = rng.choice([HOSTILE, FORMULA, "White"], n)
    sex = rng.choice(["F", "M"], n)
    salary = rng.lognormal(10.8, 0.3, n)
    recommended = salary * rng.lognormal(0, 0.05, n) - np.where(sex == "F", 3000, 0)
    return salary, recommended, race, sex


def pay_audit() -> ContinuousAudit:
    salary, recommended, race, sex = pay_rows()
    return ContinuousAudit.from_predictions(salary, recommended, {"race/ethnicity": race, "sex": sex},
                                            positive_is="benefit")


SETTINGS = VerdictSettings(1000, amounts=True)


def test_the_amount_report_answers_the_three_questions_with_the_librarys_numbers():
    audit = pay_audit()
    rep = report.build(audit, settings=SETTINGS, unit="$", model="pay <i>v2</i>", period="2026")
    want = audit.verdicts(1000, unit="$")
    groups = audit.by_group()
    doc = json.loads(rep.to_json())
    assert doc["kind"] == "continuous" and doc["unit"] == "$"
    got = pd.DataFrame(doc["tables"]["groups"]).set_index("group")
    for column in ("n", "mean_benefit", "mean_benefit_ci_low", "mean_benefit_ci_high", "mae", "mae_ci_low",
                   "rmse", "rmse_ci_high", "prediction_ratio"):
        assert np.allclose(got[column].to_numpy(float), groups[column].to_numpy(float), rtol=1e-12, equal_nan=True)
    v = pd.DataFrame(doc["tables"]["verdicts"])
    assert v["verdict"].tolist() == want["verdict"].tolist()
    assert np.allclose(v["ofi"], want["ofi"], rtol=1e-12) and np.allclose(v["ofi_ci_low"], want["ofi_ci_low"], rtol=1e-12)
    summary = doc["summary"]
    assert summary["verdicts"]["algorithmic bias"] == int((want["verdict"] == "algorithmic bias").sum()) > 0
    outside = np.maximum(want["ofi_ci_low"], -want["ofi_ci_high"]).max()
    assert summary["max |OFI| lower bound"] == pytest.approx(max(0.0, outside))
    assert set(summary["three questions"]) == {"Is the algorithm at fault (OFI)?", "Error sizes (MAE)",
                                               "The mean prediction ratio (four-fifths band)"}
    assert "$" in summary["three questions"]["Is the algorithm at fault (OFI)?"]
    assert doc["settings"]["OFI tolerance"] == "±$1,000" and doc["settings"]["unit"] == "$"

    page = rep.html()
    assert HOSTILE not in page and "&lt;script&gt;" in page and "<i>v2</i>" not in page
    shown = parsed(page, "Verdict per pair")
    assert sorted(shown["verdict"]) == sorted(want["verdict"])
    assert shown["OFI"].str.contains(r"\$").all()          # the unit is named beside every OFI
    table = parsed(page, "Per group, with intervals").set_index("group")
    assert np.allclose(table["mae"].map(number).to_numpy(), groups["mae"].round(4).to_numpy(), atol=1e-4)
    assert table["n"].map(number).tolist() == groups["n"].tolist()

    with zipfile.ZipFile(io.BytesIO(rep.csv_zip())) as z:
        names = z.namelist()
        assert names[0] == "contents.csv" and "verdicts_by_race_ethnicity_alone.csv" in names
        assert not any("/" in n for n in names)
        csv = pd.read_csv(z.open("groups.csv"))
        assert np.allclose(csv["mean_benefit"], groups["mean_benefit"], rtol=1e-12)
        text = z.read("verdicts_by_race_ethnicity_alone.csv").decode()
    assert "'=HYPERLINK" in text and "\n=HYPERLINK" not in text and ",=HYPERLINK" not in text


def test_per_group_errors_equal_fairlearns_metricframe():
    from fairlearn.metrics import MetricFrame
    from sklearn.metrics import mean_absolute_error, mean_squared_error

    salary, recommended, race, sex = pay_rows(4, 400)
    audit = ContinuousAudit.from_predictions(salary, recommended, sex, positive_is="benefit")
    rep = report.build(audit, settings=SETTINGS, unit="$")
    frame = MetricFrame(metrics={"mae": mean_absolute_error,
                                 "rmse": lambda y, p: np.sqrt(mean_squared_error(y, p))},
                        y_true=salary, y_pred=recommended, sensitive_features=sex).by_group
    table = rep.tables["groups"]
    assert np.allclose(table["mae"], frame.loc[table.index, "mae"], rtol=1e-12)
    assert np.allclose(table["rmse"], frame.loc[table.index, "rmse"], rtol=1e-12)


def test_error_size_gaps_contain_welchs_interval_at_the_simultaneous_level():
    salary, recommended, race, sex = pay_rows(1, 600)
    groups = np.where(race == "White", "w", np.where(race == HOSTILE, "h", "f"))
    audit = ContinuousAudit.from_predictions(salary, recommended, groups, positive_is="benefit")
    gaps = error_size_gaps(audit, alpha=0.05)
    assert len(gaps) == 3 and (gaps["level"] == 1 - 0.05 / 3).all()
    err = np.abs(recommended - salary)
    for _, g in gaps.iterrows():
        a, b = err[groups == g["group_i"]], err[groups == g["group_j"]]
        assert g["gap"] == pytest.approx(a.mean() - b.mean(), rel=1e-12)
        welch = stats.ttest_ind(a, b, equal_var=False).confidence_interval(g["level"])
        assert g["ci_low"] <= welch.low + 1e-9 and g["ci_high"] >= welch.high - 1e-9   # the union holds Welch's
        assert bool(g["differs"]) == (g["ci_low"] > 0 or g["ci_high"] < 0)


def test_an_amount_report_needs_a_tolerance_in_units_and_says_when_no_ratio_was_asked():
    audit = pay_audit()
    with pytest.raises(ValueError, match="tolerance in the outcome's units"):
        report.build(audit)
    rep = report.build(audit, verdicts=audit.verdicts(500, band=None, unit="$"), unit="$")
    assert rep.settings["mean prediction ratio"] == "not asked (band=None)"
    assert rep.summary()["three questions"]["The mean prediction ratio (four-fifths band)"].startswith("Not asked")
    assert rep.tables["verdicts"].settings.tolerance == 500


def tier_rows(seed: int = 2, n: int = 600):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    tiers = np.array(["Low", "Medium", HOSTILE])
    y = tiers[rng.integers(0, 3, n)]
    shift = rng.random(n) < 0.3
    p = np.where(shift, tiers[np.minimum(rng.integers(0, 3, n) + 1, 2)], y)
    group = rng.choice(["a", FORMULA, "c"], n, p=[0.4, 0.35, 0.25])
    return y, p, group


def test_the_tier_report_shows_each_groups_matrix_the_cuts_and_the_local_law_144_table():
    from sklearn.metrics import confusion_matrix

    y, p, group = tier_rows()
    order = ["Low", "Medium", HOSTILE]
    m = MulticlassAudit.from_predictions(y, p, group, order=order, favourable="Low")
    rep = report.build(m, settings=VerdictSettings(0.1))
    doc = json.loads(rep.to_json())
    assert doc["kind"] == "multiclass" and doc["ordered"] and doc["classes"] == order
    want = m.verdicts(0.1)
    got = pd.DataFrame(doc["tables"]["verdicts"])
    assert np.allclose(got["ofi"], want["ofi"], rtol=1e-12) and got["verdict"].tolist() == want["verdict"].tolist()
    ratios = pd.DataFrame(doc["tables"]["impact ratios"])
    lib = m.impact_ratios(alpha=0.05)
    assert np.allclose(ratios["di"], lib["di"], rtol=1e-12, equal_nan=True)
    assert np.allclose(ratios["di_ci_low"], lib["di_ci_low"], rtol=1e-12, equal_nan=True)
    ll144 = pd.DataFrame(doc["tables"][report.LL144])
    lib_ll = regulatory.ll144_summary(m, alpha=0.05, tolerance=0.1)
    assert ll144["classification"].tolist() == lib_ll["classification"].tolist()
    assert np.allclose(ll144["impact ratio"].astype(float), lib_ll["impact ratio"], equal_nan=True)
    page = rep.html()
    assert HOSTILE not in page
    shown = parsed(page, "Each group's k × k matrix (rows observed, columns predicted)")
    for g in m.groups:
        rows = shown[shown["group"] == g]
        sk = confusion_matrix(y[group == g], p[group == g], labels=order)
        assert rows[[f"predicted {c}" for c in order]].map(number).to_numpy().tolist() == sk.tolist()
    cuts = parsed(page, "Impact ratios at every cut")
    assert set(cuts["cut"]) == set(m.cuts) and len(cuts) == len(lib)
    questions = doc["summary"]["three questions"]
    assert "tiers" in questions["Is the algorithm at fault (OFI)?"]
    assert "ordinal FNR" in questions["Equal opportunity (error rates)"]
    with zipfile.ZipFile(io.BytesIO(rep.csv_zip())) as z:
        assert "'=HYPERLINK" in z.read("confusion_matrices.csv").decode()
        assert "local_law_144_summary.csv" in z.namelist()


def test_decisions_alone_and_unordered_classes_answer_what_they_can():
    y, p, group = tier_rows(3)
    d = MulticlassAudit.from_decisions(p, group, ["Low", "Medium", HOSTILE], favourable="Low")
    rep = report.build(d)
    assert "confusion matrices" not in rep.tables and "Needs outcomes" in rep.html()
    assert rep.summary()["has outcomes"] is False
    pd.testing.assert_frame_equal(pd.DataFrame(rep.tables["verdicts"]), pd.DataFrame(d.impact_ratios()))
    loose = MulticlassAudit.from_predictions(y, p, group, favourable=["Low"])
    rep = report.build(loose, settings=VerdictSettings(0.1))
    one = rep.tables["one-vs-rest verdicts"]
    for c in loose.classes:
        want = loose.one_vs_rest(c).verdicts(VerdictSettings(0.1))
        assert one.loc[one["class"] == c, "ofi"].tolist() == pytest.approx(want["ofi"].tolist(), rel=1e-12)
    assert "The four-fifths rule for every class" in rep.summary()["three questions"]
    json.loads(rep.to_json())


def test_the_report_of_binary_data_through_the_amount_audit_carries_the_binary_ofi():
    """0/1 outcomes and predictions: the amount report's OFI is the binary report's, pair by pair."""
    from fairness_core.audit import Audit

    rng = np.random.default_rng(9)
    g = rng.choice(["a", "b"], 400)
    y = rng.integers(0, 2, 400)
    p = np.where(rng.random(400) < 0.8, y, 1 - y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        binary = report.build(Audit.from_predictions(y, p, g, positive_is="benefit"))
    amounts = report.build(ContinuousAudit.from_predictions(y, p, g, positive_is="benefit"),
                           settings=VerdictSettings(0.05, amounts=True))
    b, c = binary.tables["verdicts"], amounts.tables["verdicts"]
    assert (b["group_i"].tolist(), b["group_j"].tolist()) == (c["group_i"].tolist(), c["group_j"].tolist())
    assert c["ofi"].tolist() == pytest.approx(b["ofi"].tolist(), abs=1e-15)


def test_many_groups_draw_the_largest_twelve_matrices_and_table_every_one():
    from fairness_core.presentation.report_kinds import MAX_HEATMAPS

    rng = np.random.default_rng(4)
    names = np.array(["L", "M", "H"])
    group = np.repeat([f"g{k:02d}" for k in range(50)], np.arange(20, 70))   # g49 largest, g00 smallest
    m = MulticlassAudit.from_predictions(names[rng.integers(0, 3, group.size)], names[rng.integers(0, 3, group.size)],
                                         group, order=list(names), favourable="L")
    rep = report.build(m)
    fig = rep.figures[f"Observed against predicted class, the {MAX_HEATMAPS} largest groups"]
    assert sorted(t.name for t in fig.data) == [f"g{k}" for k in range(38, 50)]
    assert rep.tables["confusion matrices"].index.get_level_values("group").nunique() == 50
