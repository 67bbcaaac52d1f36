"""Issue 53 in the app: the pay-model and COMPAS-tier demos, an uploaded amount file and an uploaded tier file, each
audited on the Bias Audit page with the library's verdicts; every page opens with each kind loaded; each bad input
gets its own sentence naming column and row, and the data loaded before stay; the benefit figure and the Upload
page's reading of a column pair."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairness_core import datasets, plots
from tests.app_helpers import uploaded_file
from fairness_core.continuous import ContinuousAudit
from fairness_core.io import DataValidationError
from fairness_core.multiclass import MulticlassAudit
from ui.kind_audit import DEFAULT_TIER_TOLERANCE, default_tolerance
from ui.kind_upload import AMOUNT_MIN_DISTINCT, classify, located
from ui.session import KIND_KEY

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["app.py", "pages/1_Upload.py", "pages/2_Bias_Audit.py", "pages/3_Sample_Size_Explorer.py",
         "pages/4_Smoothing.py", "pages/5_Synthetic_Data.py", "pages/6_Forecasting.py",
         "pages/7_Compare_and_Mitigate.py", "pages/8_Saved_Audits.py", "pages/9_Methods.py"]
TIERS = ["Low", "Medium", "High"]


def text(at) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(e.value for kind in (at.markdown, at.caption, at.error, at.warning, at.info, at.success)
                     for e in kind).replace("\\", "")


def tiles(at) -> dict[str, int]:  # type: ignore[no-untyped-def]
    return {m.label.lower(): int(m.value.replace(",", "")) for m in at.metric}


def with_demo(key: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page("pages/1_Upload.py").run()
    at.selectbox[0].set_value(key)
    at.button(key="load-demo").click().run()
    assert not at.exception
    return at


def upload_page(monkeypatch, frame: pd.DataFrame, name: str = "rows.csv") -> AppTest:  # type: ignore[no-untyped-def]
    import streamlit as st

    file = uploaded_file(frame, name)
    monkeypatch.setattr(st, "file_uploader", lambda label, *a, key=None, **k: file if key == "rows-file" else None)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page("pages/1_Upload.py").run()
    assert not at.exception
    return at


def columns(at, label: str, prediction: str, groups: list[str]) -> None:  # type: ignore[no-untyped-def]
    at.selectbox(key="label-col").set_value(label).run()
    at.selectbox(key="pred-col").set_value(prediction).run()
    at.multiselect(key="group-cols").set_value(groups).run()


def radio(at, prefix: str):  # type: ignore[no-untyped-def]
    return next(r for r in at.radio if str(r.key).startswith(prefix))


def amount_rows(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    group = np.repeat(["a", "b", "c"], 80)
    salary = rng.lognormal(10.5, 0.3, group.size).round(0)
    recommended = (salary * rng.lognormal(0, 0.08, group.size) - np.where(group == "a", 4000, 0)).round(0)
    return pd.DataFrame({"salary": salary, "recommended": recommended, "dept": group})


def tier_rows(seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    group = np.repeat(["x", "y"], 150)
    observed = rng.choice(TIERS, group.size, p=[0.5, 0.3, 0.2])
    shift = np.where(group == "y", rng.choice([0, 1], group.size, p=[0.6, 0.4]), 0)
    given = np.array(TIERS)[np.minimum(np.array([TIERS.index(o) for o in observed]) + shift, 2)]   # y: a tier up
    return pd.DataFrame({"observed": observed, "given": given, "site": group})


# --------------------------------------------------------------------------- demos


def test_the_pay_demo_shows_the_librarys_verdicts_and_every_page_opens():
    at = with_demo("pay_model")
    loaded = at.session_state[KIND_KEY]
    library = datasets.load_kind_demo("pay_model")
    assert isinstance(loaded.audit, ContinuousAudit) and loaded.audit == library and loaded.unit == "$ per hour"
    at.switch_page("pages/2_Bias_Audit.py").run()
    assert not at.exception
    v = library.verdicts(default_tolerance(library), alpha=0.05, adjust="holm", unit="$")
    shown = tiles(at)
    assert shown == {w: int((v["verdict"] == w).sum()) for w in shown} and sum(shown.values()) == len(v)
    page = text(at)
    assert v.loc[0, "verdict"] == "algorithmic bias" and "female gets $1.31 per hour more benefit" in page
    assert f"Tolerance: **${default_tolerance(library):g} per hour**" in page   # the unit beside the tolerance
    for page_script in PAGES:
        at.switch_page(page_script).run()
        assert not at.exception, page_script
    at.switch_page("pages/4_Smoothing.py").run()
    assert "The data loaded are amounts ($ per hour), and this page reads a yes/no decision" in text(at)
    cut = next(n for n in at.number_input if n.label.startswith("Cut at"))
    assert cut.value == pytest.approx(float(np.median(datasets.pay_frame()["wage"])))


def test_the_compas_tier_demo_shows_the_librarys_verdicts_and_opens_a_class_against_the_rest():
    at = with_demo("compas_tiers")
    m = datasets.load_kind_demo("compas_tiers")
    assert isinstance(at.session_state[KIND_KEY].audit, MulticlassAudit)
    at.switch_page("pages/2_Bias_Audit.py").run()
    assert not at.exception
    v = m.verdicts(DEFAULT_TIER_TOLERANCE, alpha=0.05, adjust="holm")
    assert tiles(at) == {w: int((v["verdict"] == w).sum()) for w in tiles(at)}
    ratios = m.impact_ratios()
    page = text(at)
    assert f"Adverse impact shown for {int((ratios['verdict'] == 'adverse impact').sum())} of {len(ratios)}" in page
    assert "'Medium' is predicted (1,607 rows, first column 'score_text', row 5)" in page   # the audit's note
    at.selectbox(key="one-vs-rest-class").set_value("High").run()
    assert not at.exception
    assert "High against the rest" in [h.value for h in at.header]
    binary = m.one_vs_rest("High")
    assert binary.positive_is == "harm" and "One-vs-rest audit of the class 'High'" in text(at)
    notes = [i.value for i in at.info]   # the class's own note below, the data's once above, in the user's names
    assert sum("is predicted" in n for n in notes) == 1 and not any("y_pred" in n or "y_true" in n for n in notes)
    assert len(at.metric) == 10        # the tier tiles above, the binary audit's five below
    for page_script in PAGES:
        at.switch_page(page_script).run()
        assert not at.exception, page_script
    at.switch_page("pages/3_Sample_Size_Explorer.py").run()
    assert "this page reads a yes/no decision" in text(at)
    choice = next(s for s in at.selectbox if str(s.key).startswith("ovr-"))
    assert choice.value == "Low"                                   # the favourable class by default
    assert list(choice.options) == ["Low against the rest", "High against the rest"]   # no middle tier here
    choice.set_value("High").run()
    assert not at.exception


def test_a_middle_tier_against_the_rest_gives_no_verdict_until_its_direction_is_declared():
    at = with_demo("compas_tiers")
    m = datasets.load_kind_demo("compas_tiers")
    at.switch_page("pages/2_Bias_Audit.py").run()
    tier_tiles = len(at.metric)
    at.selectbox(key="one-vs-rest-class").set_value("Medium").run()
    assert not at.exception
    page = text(at)
    assert f"No verdicts for Medium against the rest:** {m.no_direction('Medium')}, and OFI" in page   # why
    assert len(at.metric) == tier_tiles                           # no binary verdict tiles below
    shown = next(d.value for d in at.dataframe if "share_placed" in d.value.columns)
    library = m.class_rates("Medium")
    assert shown["placed"].tolist() == library["placed"].tolist()
    assert shown["share_placed_ci_low"].tolist() == pytest.approx(library["share_placed_ci_low"].tolist())
    if int(library["observed"].sum()) == 0:
        assert "Nobody was observed in Medium" in page and library["recall"].isna().all()
    radio = next(r for r in at.radio if str(r.key).startswith("ovr-direction-"))
    radio.set_value("a harm").run()
    assert not at.exception
    assert len(at.metric) == tier_tiles + 5                      # the binary audit's tiles, its direction declared
    assert "Nobody was observed in 'Medium': its FPR and TNR are undefined here" in text(at)   # as flipped
    assert m.one_vs_rest("Medium", "harm").positive_is == "harm"


# --------------------------------------------------------------------------- uploads


def test_an_uploaded_amount_file_is_read_as_an_amount_and_audited_as_the_library_does(monkeypatch):
    rows = amount_rows()
    at = upload_page(monkeypatch, rows)
    columns(at, "salary", "recommended", ["dept"])
    assert f"more than {AMOUNT_MIN_DISTINCT}" in text(at) and radio(at, "kind-").value == "amount"
    at.text_input[-1].set_value("$ a year").run()
    assert at.button(key="use-amounts").disabled                  # the direction is asked first
    radio(at, "amount-dir-").set_value("benefit").run()
    at.button(key="use-amounts").click().run()
    assert not at.exception and not at.error
    loaded = at.session_state[KIND_KEY]
    library = ContinuousAudit.from_predictions(rows["salary"], rows["recommended"], rows[["dept"]], "benefit")
    assert loaded.audit == library and loaded.unit == "$ a year"
    at.switch_page("pages/2_Bias_Audit.py").run()
    v = library.verdicts(default_tolerance(library), unit="$")
    assert tiles(at) == {w: int((v["verdict"] == w).sum()) for w in tiles(at)}
    assert v.loc[v["verdict"] == "algorithmic bias", "group_i"].tolist() or \
        v.loc[v["verdict"] == "algorithmic bias", "group_j"].tolist()
    assert "$ a year" in text(at)


def test_an_uploaded_tier_file_is_read_as_ordered_and_audited_as_the_library_does(monkeypatch):
    rows = tier_rows()
    at = upload_page(monkeypatch, rows)
    columns(at, "observed", "given", ["site"])
    assert radio(at, "kind-").value == "ordered"
    order = next(m for m in at.multiselect if str(m.key).startswith("order-"))
    assert order.value == TIERS                                   # a known scale, in its order
    assert at.button(key="use-classes").disabled                  # the favourable end is asked first
    radio(at, "fav-").set_value("Low").run()
    at.button(key="use-classes").click().run()
    assert not at.exception and not at.error
    library = MulticlassAudit.from_predictions(rows["observed"], rows["given"], rows[["site"]], TIERS,
                                               favourable="Low")
    got = at.session_state[KIND_KEY].audit
    assert got.classes == library.classes and np.array_equal(got.counts, library.counts)
    at.switch_page("pages/2_Bias_Audit.py").run()
    v = library.verdicts(DEFAULT_TIER_TOLERANCE)
    assert tiles(at) == {w: int((v["verdict"] == w).sum()) for w in tiles(at)}
    assert not at.exception


def test_decisions_alone_in_tiers_are_audited_without_an_ofi(monkeypatch):
    rows = tier_rows().drop(columns="observed")
    at = upload_page(monkeypatch, rows)
    from ui.uploads import DECISIONS_ONLY
    columns(at, DECISIONS_ONLY, "given", ["site"])
    assert radio(at, "kind-").value == "ordered"
    radio(at, "fav-").set_value("Low").run()
    at.button(key="use-classes").click().run()
    assert not at.exception and not at.error
    assert not at.session_state[KIND_KEY].audit.has_outcomes
    at.switch_page("pages/2_Bias_Audit.py").run()
    assert not at.exception and "Needs outcomes" in text(at)


def _refused(at, before, kind_before, *sentences: str) -> None:  # type: ignore[no-untyped-def]
    shown = "\n".join(e.value for e in at.error).replace("\\", "")
    assert "Nothing was loaded" in shown, shown
    for sentence in sentences:
        assert sentence in shown, (sentence, shown)
    assert at.session_state["audit"] is before and at.session_state[KIND_KEY] is kind_before


@pytest.mark.parametrize("bad, column, sentences", [
    ({"salary": (7, "abc")}, "salary", ["row 8 (file line 9), column 'salary': 'abc' is not a number"]),
    ({"salary": (3, "")}, "salary", ["row 4 (file line 5), column 'salary': is missing"]),
    ({"recommended": (11, "inf")}, "recommended", ["row 12 (file line 13), column 'recommended': is infinite"]),
    ({"dept": (200, "z")}, "dept", ["group 'z' has one row (column 'dept', row 201)"]),
    ({"recommended": (None, 50000)}, "recommended", ["column 'recommended': every value is 50000"]),
])
def test_each_bad_amount_gets_its_sentence_and_the_loaded_data_stay(monkeypatch, bad, column, sentences):
    rows = amount_rows().astype(object)
    for col, (row, value) in bad.items():
        if row is None:
            rows[col] = value
        else:
            rows.loc[row, col] = value
    at = with_demo_then_upload(monkeypatch, rows)
    before, kind_before = at.session_state["audit"], at.session_state[KIND_KEY]
    columns(at, "salary", "recommended", ["dept"])
    radio(at, "kind-").set_value("amount").run()
    radio(at, "amount-dir-").set_value("benefit").run()
    at.button(key="use-amounts").click().run()
    assert not at.exception
    _refused(at, before, kind_before, *sentences)


def with_demo_then_upload(monkeypatch, rows: pd.DataFrame) -> AppTest:  # type: ignore[no-untyped-def]
    """The tier demo loaded first (what a bad upload must not lose), then the Upload page with ``rows``."""
    at = upload_page(monkeypatch, rows)
    at.selectbox[0].set_value("compas_tiers")
    at.button(key="load-demo").click().run()
    assert isinstance(at.session_state[KIND_KEY].audit, MulticlassAudit)
    return at


def test_an_amount_column_of_a_few_values_asks_whether_it_is_ordered_categories(monkeypatch):
    rows = amount_rows().assign(grade=lambda d: (np.arange(len(d)) % 5) + 1)
    at = upload_page(monkeypatch, rows)
    columns(at, "grade", "recommended", ["dept"])
    assert radio(at, "kind-").value == "ordered"                  # 5 numbers: read as tiers
    radio(at, "kind-").set_value("amount").run()
    radio(at, "amount-dir-").set_value("benefit").run()
    assert "Column 'grade' holds only 5 different values (1, 2, 3, 4, 5): are these ordered categories?" in text(at)
    assert at.button(key="use-amounts").disabled                  # nothing computed until the user says so


def test_a_tier_outside_the_declared_order_and_a_class_never_observed_get_their_sentences(monkeypatch):
    rows = tier_rows()
    at = with_demo_then_upload(monkeypatch, rows)
    before, kind_before = at.session_state["audit"], at.session_state[KIND_KEY]
    columns(at, "observed", "given", ["site"])
    order = next(m for m in at.multiselect if str(m.key).startswith("order-"))
    order.set_value(["Low", "Medium"]).run()                     # "High" left out of the order
    radio(at, "fav-").set_value("Low").run()
    at.button(key="use-classes").click().run()
    first_high = int(np.flatnonzero(rows["given"].to_numpy() == "High")[0])
    _refused(at, before, kind_before, f"row {first_high + 1} (file line {first_high + 2}), column 'given': 'High' is "
                                      "not one of the declared classes")
    # unordered classes read from the data: a class given but never observed is refused, named by column and row
    rows = tier_rows().assign(given=lambda d: np.where(np.arange(len(d)) == 5, "Severe", d["given"]))
    at = with_demo_then_upload(monkeypatch, rows)
    before, kind_before = at.session_state["audit"], at.session_state[KIND_KEY]
    columns(at, "observed", "given", ["site"])
    radio(at, "kind-").set_value("unordered").run()
    at.button(key="use-classes").click().run()
    _refused(at, before, kind_before, "'Severe' is predicted (1 row, first column 'given', row 6) but never an "
                                      "observed outcome in column 'observed'")


# --------------------------------------------------------------------------- pieces


def test_the_pair_is_read_as_an_amount_above_twenty_different_numbers_and_as_tiers_at_or_below():
    y = pd.Series(np.arange(AMOUNT_MIN_DISTINCT) % AMOUNT_MIN_DISTINCT, name="y")
    assert classify(y, y)[0] == "ordered"
    assert classify(pd.Series(np.arange(AMOUNT_MIN_DISTINCT + 1), name="y"), y)[0] == "amount"
    assert classify(pd.Series([0, 1] * 30, name="y"), pd.Series(np.linspace(0, 1, 60), name="s"))[0] == "two-valued"
    assert classify(None, pd.Series(np.linspace(0, 1, 60), name="s"))[0] == "two-valued"   # a score alone
    assert classify(pd.Series(["high", "Low", "medium"] * 3, name="t"), y)[0] == "ordered"
    assert classify(pd.Series(["cat", "dog", "emu"] * 3, name="t"), y)[0] == "unordered"


def test_library_positions_are_read_as_the_files_columns_and_rows():
    exc = DataValidationError(["y_true[3]: 'x' is not a number", "y_pred: every value is 2; an amount …",
                               "group 'q' has one row (g[9]); …"])
    out = [str(p) for p in located(exc, {"y_true": "salary", "y_pred": "pred", "g": "g"}).problems]
    assert out == ["row 4 (file line 5), column 'salary': 'x' is not a number",
                   "column 'pred': every value is 2; an amount …", "group 'q' has one row (column 'g', row 10); …"]


def test_the_benefit_figure_draws_each_groups_quartiles_and_mean_interval_with_names_escaped():
    rows = amount_rows(3).assign(dept=lambda d: d["dept"].map({"a": "<b>a</b>", "b": "b", "c": "c"}))
    audit = ContinuousAudit.from_predictions(rows["salary"], rows["recommended"], rows[["dept"]], "benefit")
    benefit = (rows["recommended"] - rows["salary"]).to_numpy(dtype=float)
    fig = plots.benefit_distributions(audit, benefit, rows["dept"], unit="$ a year")
    box, means = fig.data
    by_group = audit.by_group()
    for k, g in enumerate(audit.groups):
        b = benefit[rows["dept"].to_numpy() == g]
        assert box.median[k] == pytest.approx(np.quantile(b, 0.5))       # numpy's own quantiles, brute force
        assert box.q1[k] == pytest.approx(np.quantile(b, 0.25)) and box.upperfence[k] == pytest.approx(np.quantile(b, 0.95))
        assert means.x[k] == pytest.approx(b.mean())
        assert means.x[k] - means.error_x.arrayminus[k] == pytest.approx(by_group.loc[g, "mean_benefit_ci_low"])
    assert "&lt;b&gt;a&lt;/b&gt;" in means.y and "<b>a</b>" not in means.y
    assert "&#36; a year" in fig.layout.xaxis.title.text           # the unit, escaped as user text
    only_means = plots.benefit_distributions(audit)
    assert len(only_means.data) == 1


def test_the_pages_tables_print_numbers_by_one_rule_the_sentences_rule():
    """Amounts, ratios and B to 3 significant digits as the sentences print them, rates as %, p to 3 significant
    digits (the tables mixed 3 decimals, 2 decimals and the sentences' 4 significant digits)."""
    import re

    from ui.kind_audit import _table

    def cells(styler) -> list[str]:  # type: ignore[no-untyped-def]
        return re.findall(r">([^<>]+)</td>", styler.to_html())

    v = datasets.load_kind_demo("pay_model").verdicts(0.29, unit="$ per hour")
    shown = cells(_table(v[["ofi", "ofi_ci_low", "ofi_ci_high", "ofi_p_adjusted", "ratio", "ratio_ci_low"]]))
    row = v.iloc[0]
    assert shown[:3] == ["−1.31", "−1.52", "−1.11"] and shown[4:] == ["0.975", "0.964"]
    assert shown[3] == f"{row['ofi_p_adjusted']:.3g}"
    sentence = row["explanation"]   # the same digits, turned to the favoured group's side
    assert all(f"${x.lstrip('−')}" in sentence for x in shown[:3])
    m = datasets.load_kind_demo("compas_tiers")
    rates = m.class_rates("Medium")
    got = cells(_table(rates))
    first = rates.iloc[0]
    assert f"{first['share_placed']:.1%}" in got and f"{first['share_placed_ci_low']:.1%}" in got
    assert "undefined" in got                          # recall, nobody observed: NaN shown as undefined, never 0
    shares = m.shares()
    assert cells(_table(shares, rates=("ci",)))[4:7] == [f"{x:.1%}" for x in shares.iloc[0][["share", "ci_low",
                                                                                             "ci_high"]]]


def test_unordered_classes_with_none_favourable_give_rates_not_verdicts_on_every_page(monkeypatch):
    """No class declared favourable: no class has a direction, so the library refuses every one-vs-rest verdict;
    the Bias Audit page shows a class's rates with the reason, Home says why it has no verdict, and the pages that
    read rates alone (Sample-Size, Smoothing) still open."""
    colours = {"Low": "red", "Medium": "green", "High": "blue"}
    rows = tier_rows().replace({"observed": colours, "given": colours})
    at = upload_page(monkeypatch, rows)
    columns(at, "observed", "given", ["site"])
    radio(at, "kind-").set_value("unordered").run()
    at.button(key="use-classes").click().run()
    assert not at.exception and not at.error
    m = at.session_state[KIND_KEY].audit
    assert not m.ordered and not m.favourable
    with pytest.raises(ValueError, match="has no declared direction"):
        m.one_vs_rest("red")
    at.switch_page("pages/2_Bias_Audit.py").run()
    at.selectbox(key="one-vs-rest-class").set_value("red").run()
    assert not at.exception
    assert f"No verdicts for red against the rest:** {m.no_direction('red')}" in text(at)
    at.switch_page("app.py").run()
    assert not at.exception and "No verdicts here." in text(at) and not tiles(at)
    for page_script in ("pages/3_Sample_Size_Explorer.py", "pages/4_Smoothing.py"):
        at.switch_page(page_script).run()
        assert not at.exception, page_script
