"""Hostile group names, sources and notes are shown as text everywhere: no markdown, links (autolinks
included), images, LaTeX, templates or styled spans, in the app (every page, AppTest, with every hostile
name selected in every picker), in every figure builder, in the terminal (the CLI), and in the report in
Chromium; and no name is mistaken for one of the app's built-in choices."""

from __future__ import annotations

import base64
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairness_core import ConfusionMatrix as CM, cli, plots, report
from fairness_core.audit import Audit
from fairness_core.common.text import plotly_text, terminal_safe
from app_helpers import page_with_audit
from ui.widgets import WORD_JOINER, BuiltIn, md_escape, option_label

APP = str(Path(__file__).resolve().parents[1] / "app.py")
LINK = '<a href="https://evil.example/steal">click me</a>'
STYLED = '<span style="color:#123456">styled</span>'
IMAGE = "![pixel](https://evil.example/pixel.png)"
AUTOLINK = "mail a@evil.example or https://evil.example/x"
WWW = "WWW.evil.example"
TEMPLATE = "50%{meta} &lt;i&gt; $x$"
NAMES = [LINK, STYLED, IMAGE, "$x^2$ :red[alarm] **bold**", AUTOLINK, WWW, TEMPLATE, "plain"]
RAW_TOKENS = ("<a href", "<span style", "![pixel](", ":red[alarm]", "**bold**", "$x^2$")
#: What would be live in a figure if a name were not escaped: a link, a styled span, a template field,
#: an entity read as markup, LaTeX (the figures' own markup is <br>, <sup>, <sub>, <b>, <i> and %{x}-style fields).
FIGURE_MARKUP = ("<a ", "<span", "%{meta}", "&lt;i&gt;", "$x$", "$x^2$")
#: What the markdown renderer would turn into a link once backslash escapes are resolved.
AUTOLINK_TOKENS = ("https://evil", "a@evil", "WWW.evil", "www.evil")


def hostile_audit() -> Audit:
    cms = [CM(300, 20, 90, 590), CM(250, 120, 40, 590), CM(3, 1, 1, 2), CM(40, 10, 12, 60), CM(500, 60, 60, 500),
           CM(30, 8, 6, 40), CM(12, 3, 4, 20), CM(90, 30, 20, 160)]
    return Audit(dict(zip(NAMES, cms)), source=f"upload {IMAGE}.csv", notes=(f"note with {LINK}",),
                 positive_outcome=f"label {STYLED}")


def text_elements(at: AppTest) -> list[str]:
    out = []
    for kind in ("markdown", "caption", "error", "warning", "info", "success", "subheader", "header", "title"):
        out += [str(e.value) for e in getattr(at, kind)]
    return out


def strings_in(obj: object) -> Iterator[str]:
    """Every string anywhere in a figure's JSON: titles, axes, ticks, legends, annotations, hover, data."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for value in obj.values():
            yield from strings_in(value)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            yield from strings_in(value)
    elif isinstance(obj, np.ndarray) and obj.dtype.kind in "OUT":
        yield from strings_in(obj.ravel().tolist())


def live_markup(strings: list[str]) -> list[str]:
    """The strings of a figure in which a name's markup would be live (unescaped)."""
    return [s for s in strings if any(token in s for token in FIGURE_MARKUP)]


def live_autolinks(texts: list[str]) -> list[str]:
    """The markdown texts in which the renderer would find a bare URL or e-mail address of a name once
    backslash escapes are resolved (they are resolved before its autolinks are looked for)."""
    plain = [re.sub(r"\\(.)", r"\1", t) for t in texts]
    return [t for t in plain if any(token in t for token in AUTOLINK_TOKENS)]


def chart_strings(at: AppTest) -> list[str]:
    """Every string of every figure the page drew, from the JSON Streamlit sends to the browser."""
    return [s for chart in at.get("plotly_chart") for s in strings_in(json.loads(chart.proto.spec))]


def assert_shown_as_text(at: AppTest, where: object) -> None:
    """No exception; markdown with every hostile token escaped and no autolink; figures without live markup."""
    assert not at.exception, (where, at.exception)
    shown = text_elements(at)
    for text in shown:
        for token in RAW_TOKENS:  # only escaped: no token without a backslash in front of it
            assert not re.search(r"(?<!\\)" + re.escape(token), text), (where, token, text[:200])
    assert not live_autolinks(shown), (where, live_autolinks(shown)[:2])
    strings = chart_strings(at)
    assert not live_markup(strings), (where, live_markup(strings)[:2])


@pytest.mark.parametrize("page", ["app.py", "pages/1_Upload.py", "pages/2_Bias_Audit.py", "pages/3_Sample_Size_Explorer.py",
                                  "pages/4_Smoothing.py"])
def test_every_page_shows_hostile_names_as_text(page):
    at = page_with_audit(hostile_audit(), page)
    assert any("evil" in t for t in text_elements(at))  # the names do reach the page ...
    assert_shown_as_text(at, page)                       # ... as text


#: Every picker of group names on pages 2 to 4: (page, open tab as (state key, tab), widget key).
PICKERS = [("pages/2_Bias_Audit.py", None, "reference"),
           ("pages/2_Bias_Audit.py", ("view", "Inequality across individuals"), "reference"),
           ("pages/3_Sample_Size_Explorer.py", None, "match-reference"),
           ("pages/3_Sample_Size_Explorer.py", None, "match-group"),
           ("pages/3_Sample_Size_Explorer.py", ("tab", "Distributions as n grows"), "spread-group"),
           ("pages/3_Sample_Size_Explorer.py", ("tab", "Distributions as n grows"), "cdf-weighting"),
           ("pages/3_Sample_Size_Explorer.py", ("tab", "Normal approximation"), "normal-source"),
           ("pages/4_Smoothing.py", None, "err-group"),
           ("pages/4_Smoothing.py", None, "prior-group")]


@pytest.mark.parametrize("page, tab, key", PICKERS, ids=[f"{p[6:9]}{t[1][:5] if t else ''}-{k}" for p, t, k in PICKERS])
def test_every_hostile_name_selected_in_every_picker_stays_text(page, tab, key):
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["audit"], at.session_state["demo_key"] = hostile_audit(), None
    if tab is not None:
        at.session_state[tab[0]] = tab[1]  # the tabs are bound to a query parameter: the state opens one
    at.run()
    at.switch_page(page).run()
    for name in NAMES:
        picker = at.selectbox(key=key)
        assert picker.format_func(name) in picker.options, (key, name)
        picker.set_value(name).run()
        assert at.selectbox(key=key).value == name
        assert_shown_as_text(at, (page, key, name))


def rows_audit() -> Audit:
    """A row-level upload whose groups, feature columns and categories are hostile (Synthetic Data, stability)."""
    from fairness_core.io import cms_from_predictions

    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame({"y": rng.integers(0, 2, n), "yhat": rng.integers(0, 2, n),
                       "site": rng.choice([LINK, AUTOLINK, TEMPLATE], n),
                       STYLED: rng.choice([WWW, IMAGE], n), "age": rng.integers(18, 80, n)})
    probs = {f"m{k}": rng.uniform(size=n) for k in range(3)}
    df = df.assign(**probs)
    return cms_from_predictions(df, "y", "yhat", ["site"], 1, probability_columns=list(probs),
                                features=df[[STYLED, "age"]], source="upload.csv", positive_is="benefit")


def test_synthetic_data_and_stability_pickers_with_hostile_columns_and_groups():
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["audit"], at.session_state["demo_key"] = rows_audit(), None
    at.session_state["view"] = "Stability and uncertainty"
    at.run()
    at.switch_page("pages/2_Bias_Audit.py").run()
    for name in (LINK, AUTOLINK, TEMPLATE):
        at.selectbox(key="virny-priv").set_value(name).run()
        assert_shown_as_text(at, ("virny-priv", name))
    assert any("evil" in s for s in chart_strings(at))
    at.switch_page("pages/5_Synthetic_Data.py").run()
    at.selectbox(key="gan-source").set_value("uploaded").run()
    assert_shown_as_text(at, "synthetic data")
    picker = at.selectbox(key="gan-div-uploaded")
    assert picker.format_func(STYLED) in picker.options
    picker.set_value(STYLED).run()
    assert_shown_as_text(at, ("gan-div-uploaded", STYLED))
    assert any("123456" in t for t in text_elements(at))  # the column's name reaches the page, as text


# --- every figure builder ------------------------------------------------------------------------

def _figure_cases() -> dict:  # type: ignore[type-arg]
    """Every figure builder that shows user text, called with hostile names."""
    from fairness_core import entropy, sample_size, smoothing, stability

    audit = hostile_audit()
    v = audit.verdicts()
    mu, lam, grid = entropy.landscape(entropy.SPEICHER, 2.0, size=11)
    points = pd.DataFrame([{"group": g, "n": cm.n, "index": 0.1,
                            **dict(zip(("mu", "lambda"), entropy.mu_lambda(cm, entropy.SPEICHER)))}
                           for g, cm in audit.cms.items()])
    rng = np.random.default_rng(0)
    rows = stability.RowData(rng.integers(0, 2, 80), rng.integers(0, 2, 80), np.repeat(NAMES, 10),
                             rng.uniform(size=(80, 3)))
    pop = audit.cms[LINK].as_array()
    shares = pd.DataFrame({"real": 0.5, "synthetic": 0.4, "target": 0.5}, index=pd.Index(NAMES, name="category"))
    from fairness_core.compare import Comparison

    y, yhat = rng.integers(0, 2, 80), rng.integers(0, 2, 80)
    comparison = Comparison.from_predictions(y, {LINK: yhat, STYLED: 1 - yhat}, {TEMPLATE: np.repeat(NAMES, 10)},
                                             positive_is="benefit")
    from fairness_core.trend import series_changes

    shifted = Audit({g: (CM(cm.tp, cm.fn + 60, max(cm.fp - 30, 0), cm.tn) if g == LINK else cm)
                     for g, cm in audit.cms.items()}, positive_is="benefit")
    summary = pd.DataFrame([{"metric": "OFI", "group": g, "real": 0.1, "real sd": 0.01, "augmented": 0.05,
                             "augmented sd": 0.01, "improvement": 0.05} for g in NAMES])
    from fairness_core.scores_report import score_analysis

    decided = Audit.from_decisions(rng.integers(0, 2, 80), np.repeat(NAMES, 10), positive_is="benefit")
    probability = rng.uniform(size=80)
    scored = score_analysis(rng.uniform(size=80) < probability, probability, np.repeat(NAMES, 10), 0.5, LINK)
    from fairness_core.multiclass import MulticlassAudit

    tiers = np.array([LINK, "plain", STYLED], dtype=object)   # hostile class names as well as group names
    ranked = MulticlassAudit.from_predictions(tiers[np.arange(80) % 3], tiers[rng.integers(0, 3, 80)],
                                              np.repeat(NAMES, 10), order=list(tiers), favourable=LINK)
    from fairness_core import counterfactual
    from fairness_core.continuous import ContinuousAudit
    from fairness_core.presentation.plots import counterfactual as cf_plots

    amounts = ContinuousAudit.from_predictions(rng.lognormal(size=80), rng.lognormal(size=80), np.repeat(NAMES, 10),
                                               positive_is="benefit")
    cases = 30
    paired = counterfactual.audit(pd.DataFrame({"case_id": np.repeat(np.arange(cases), len(NAMES)),
                                                "group": np.tile(NAMES, cases),
                                                "decision": rng.integers(0, 2, cases * len(NAMES))}),
                                  case="case_id", group="group", decision="decision", positive_is="benefit")
    from fairness_core import forecasts
    from fairness_core.presentation.plots import forecasts as fc_plots

    q = rng.normal(size=80)[:, None] + np.array([-1.0, 0.0, 1.0])
    forecast = forecasts.audit(rng.normal(size=80), q, [0.1, 0.5, 0.9], np.repeat(NAMES, 10), positive_is="benefit",
                               min_time_points=3)
    series = pd.DataFrame({"time": np.arange(10), "observation": rng.normal(size=10), "0.1": -1.0, "0.5": 0.0,
                           "0.9": 1.0})
    return {
        "forecast_benefits": lambda: fc_plots.forecast_benefits(forecast, unit=f"{LINK} MW"),
        "forecast_coverage": lambda: fc_plots.forecast_coverage(forecast),
        "pit_histograms": lambda: fc_plots.pit_histograms(forecast),
        "forecast_fan": lambda: fc_plots.forecast_fan(series, [0.1, 0.5, 0.9], LINK, f"{STYLED} MW",
                                                      observation=AUTOLINK),
        "benefit_distributions": lambda: plots.benefit_distributions(amounts, unit=f"{LINK} $"),
        "discordance_matrix": lambda: cf_plots.discordance_matrix(paired.pairs(), list(paired.groups)),
        "paired_forest": lambda: cf_plots.paired_forest(paired.pairs(), 0.05),
        "paired_rates": lambda: cf_plots.paired_rates(paired.by_group()),
        "class_heatmaps": lambda: plots.class_heatmaps(ranked),
        "impact_ratio_chart": lambda: plots.impact_ratio_chart(ranked.impact_ratios()),
        "pairwise_heatmap": lambda: plots.pairwise_heatmap(audit, "OFI", v),
        "disparate_impact_heatmap": lambda: plots.disparate_impact_heatmap(audit, v),
        "benefit_chart": lambda: plots.benefit_chart(audit),
        "group_metric_chart": lambda: plots.group_metric_chart(audit, "TPR"),
        "ofi_di_scatter": lambda: plots.ofi_di_scatter(v),
        "ofi_forest": lambda: plots.ofi_forest(v, LINK),
        "gei_landscape": lambda: plots.gei_landscape(mu, lam, grid, points, 2.0, ("TP", "TN")),
        "stability_boxes": lambda: plots.stability_boxes(stability.distribution_table(rows)),
        "stability_disparities": lambda: plots.stability_disparities(
            stability.disparities(stability.group_table(rows), TEMPLATE)),
        "pmf_bars": lambda: plots.pmf_bars(np.array([0.1, 0.2]), np.array([0.5, 0.5]), f"PPR drawn from “{LINK}”",
                                           subtitle="red: the lower tail"),
        "match_overview": lambda: plots.match_overview(audit.match_table()),
        "spread_vs_n": lambda: plots.spread_vs_n(sample_size.monte_carlo("PPR", pop, (1, 2, 3), draws=20, seed=0),
                                                 sample_size.exact_spread("PPR", pop, (1, 2, 3)), "PPR", LINK),
        "smoothing_shift": lambda: plots.smoothing_shift(
            smoothing.smooth_groups(audit.cms, smoothing.Smoother("cps", 10.0), ["TPR"]), "TPR"),
        "share_bars": lambda: plots.share_bars(shares, f"{STYLED} = {LINK} within each group", "real vs synthetic"),
        "before_after": lambda: plots.before_after(summary),
        "model_tradeoff": lambda: plots.model_tradeoff(comparison.summary(), tolerance=0.05),
        "paired_differences": lambda: plots.paired_differences(comparison.paired(LINK, STYLED)),
        "ofi_trend": lambda: plots.ofi_trend(series_changes([("2026-Q1", audit), (f"2026-Q2 {LINK}", shifted)])),
        "di_trend": lambda: plots.di_trend(series_changes([("2026-Q1", audit), (f"2026-Q2 {LINK}", shifted)])),
        "selection_rates": lambda: plots.selection_rates(decided),
        "reliability_diagram": lambda: plots.reliability_diagram(scored.calibration, f"score “{LINK}”"),
        "roc_curves": lambda: plots.roc_curves(scored.sweep.by_group, scored.auc.by_group),
        "threshold_sweep_chart": lambda: plots.threshold_sweep_chart(scored.sweep.by_group, scored.sweep.summary, 0.5,
                                                                     f"score “{LINK}”"),
        "mitigation_frontier": lambda: plots.mitigation_frontier(
            pd.DataFrame({"tolerance": [0.0, 0.1], "performance": [0.7, 0.8], "disparity": [0.0, 0.1]}),
            pd.DataFrame({"model": [LINK, STYLED], "performance": [0.75, 0.8], "disparity": [0.05, 0.2],
                          "where": [TEMPLATE, "held-out rows"]})),
    }


#: Figure builders that never show user text, and what they show instead.
NO_USER_TEXT = {"gei_decomposition": "α values", "metric_cdfs": "metrics and sizes", "hole_counts": "metrics",
                "normal_convergence": "a metric and sizes", "normality_stats": "a metric",
                "imbalance_histograms": "fairness measures", "imbalance_lines": "fairness measures",
                "smoothing_curves": "metrics and smoothers", "gan_training_curves": "losses",
                "c2st_chart": "the compared sets", "quantile_fan": "forecast numbers", "ptn_losses": "losses",
                "ga_fitness": "agents", "architecture_bars": "operations", "crps_boxes": "models",
                "search_fidelity": "agents and their fitness"}


def test_every_figure_builder_shows_hostile_names_as_text():
    builders = {name for name, fn in vars(plots).items()
                if callable(fn) and hasattr(fn, "__wrapped__") and fn.__module__.startswith(plots.__name__)}
    assert {"discordance_matrix", "paired_forest", "paired_rates"} <= builders   # plots.counterfactual's too
    cases = _figure_cases()
    assert builders == set(cases) | set(NO_USER_TEXT), "a new figure builder: add it to one of the two lists"
    for name, make in cases.items():
        strings = list(strings_in(make().to_plotly_json()))
        assert any("evil.example" in s for s in strings), f"{name}: the names do not reach the figure"
        assert not live_markup(strings), (name, live_markup(strings)[:2])


@pytest.mark.parametrize("name", ["pmf_bars", "spread_vs_n", "share_bars"])
def test_a_name_in_a_title_is_never_broken_at_its_colon_or_parenthesis(name):
    title = _figure_cases()[name]().layout.title.text
    assert plotly_text(LINK) in title  # whole: "https:" is not a place to start a subtitle


def test_plotly_text_escapes_markup_templates_and_latex_and_nothing_else():
    assert plotly_text("Hispanic (n = 1,234) · 5–9") == "Hispanic (n = 1,234) · 5–9"
    escaped = plotly_text(LINK + TEMPLATE)
    assert "<" not in escaped and ">" not in escaped and "%{" not in escaped and "$" not in escaped
    # Plotly decodes these character references when it draws: the reader sees the name as typed
    decoded = re.sub(r"&#(\d+);", lambda m: chr(int(m.group(1))), escaped)
    assert decoded.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") == LINK + TEMPLATE


# --- markdown autolinks -------------------------------------------------------------------------

@pytest.mark.parametrize("text", [AUTOLINK, WWW, "http://x.y/z", "HTTPS://X.Y", "www.x.y", "mailto:a@b.co",
                                  "xmpp:a@b.co/r", "a.b+c@d-e.example.org"])
def test_md_escape_leaves_no_bare_url_or_email_address_to_autolink(text):
    out = md_escape(text)
    plain = re.sub(r"\\(.)", r"\1", out)
    assert plain.replace(WORD_JOINER, "") == text  # the text as typed, with invisible joiners only
    # GitHub-flavoured markdown's autolink literals (remark-gfm), on the text after escapes are resolved
    assert not re.search(r"(?i)(https?://|www\.)|[-.\w+]+@[-\w]+(\.[-\w]+)+", plain), plain


# --- the terminal -------------------------------------------------------------------------------

def test_cli_prints_control_characters_in_names_and_sources_visibly(tmp_path, capsys):
    path = tmp_path / "up\x1b[2J\n::error file=x::forged\u202e.csv"
    path.write_text("group,TP,FN,FP,TN\nA,30,5,10,55\nB,20,10,5,65\n")
    assert cli.main(["audit", str(path), "--group", "group", "--positive-is", "benefit"]) == 0
    assert cli.main(["audit", str(path), "--group", "group\x1b[31m\n::warning::x"]) == 2
    audit = Audit({"A": CM(300, 20, 90, 590), "B": CM(250, 120, 40, 590)},
                  source="s\x1b]8;;https://evil.example\x07\x9b\x7f\n::error::forged")
    # main() fills in the binary tolerance's default (an amount audit has none); _report is called here directly
    args = cli._parser().parse_args(["audit", "x.csv", "--group", "g", "--positive-is", "benefit", "--tolerance", "0.05"])
    assert cli._report(args, audit) == 0
    out, err = capsys.readouterr()
    printed = out + err
    assert "up\\x1b[2J\\n::error file=x::forged⟨U+202E⟩.csv" in printed  # shown, visibly
    for bad in ("\x1b", "\x07", "\x9b", "\x7f", "\u202e", "\r"):
        assert bad not in printed, repr(bad)
    assert not [line for line in printed.splitlines() if line.startswith("::")]


def test_terminal_safe_shows_every_control_and_direction_character():
    for char in [*map(chr, range(32)), "\x7f", "\x85", "\x9b", "\u200e", "\u200f", "\u202a", "\u202e", "\u2066",
                 "\u2069", "\u061c", "\u2028", "\u2029", "\ufeff", "\u200b"]:
        shown = terminal_safe(f"a{char}b")
        assert char not in shown and shown.startswith("a") and shown.endswith("b") and len(shown) > 3, repr(char)
    assert terminal_safe("Größe – 5 % · ✓ 名前") == "Größe – 5 % · ✓ 名前"


# --- names that collide with the app's own words ------------------------------------------------

BUILT_IN_WORDS = ["the rest of the data", "equally (the thesis's Fig. 4.2)", "thesis example (0.3, 0.1, 0.2, 0.4)"]


def colliding_audit() -> Audit:
    cms = {BUILT_IN_WORDS[0]: CM(5, 1, 0, 6), BUILT_IN_WORDS[1]: CM(40, 10, 12, 60),
           BUILT_IN_WORDS[2]: CM(1, 1, 1, 9), "other": CM(300, 20, 90, 590), "pooled": CM(30, 8, 6, 40)}
    return Audit(cms, source="collide.csv")


def test_option_labels_keep_built_in_choices_apart_from_user_values():
    rest = BuiltIn("the rest of the data")
    assert rest != "the rest of the data" and "the rest of the data" != rest
    assert rest == BuiltIn("the rest of the data")  # equal across reruns, which rebuild the page's objects
    assert option_label(rest) != option_label("the rest of the data")


def _trace_y(spec: str, k: int = 0) -> np.ndarray:
    """Trace ``k``'s y values from a chart's JSON (Plotly sends numeric arrays base64-encoded)."""
    y = json.loads(spec)["data"][k]["y"]
    if isinstance(y, dict):
        return np.frombuffer(base64.b64decode(y["bdata"]), dtype=np.dtype(y["dtype"]))
    return np.asarray(y, dtype=float)


def test_a_group_named_like_a_built_in_choice_is_that_group_on_the_sample_size_explorer():
    from fairness_core import sample_size

    audit = colliding_audit()
    at = page_with_audit(audit, "pages/3_Sample_Size_Explorer.py")
    labels = at.selectbox(key="match-reference").options
    assert len(set(labels)) == len(labels) and labels.count("the rest of the data") == 1  # no two look alike
    at.selectbox(key="match-reference").set_value(BUILT_IN_WORDS[0]).run()   # the group, not the built-in
    assert not at.exception, at.exception
    table = next(df.value for df in at.dataframe if "reference score" in df.value.columns)
    expected = audit.match_table(["PPR", "TPR", "FPR", "B"], reference=BUILT_IN_WORDS[0])
    assert BUILT_IN_WORDS[0] not in set(table["group"])  # the reference group is not tested against itself
    np.testing.assert_allclose(table["reference score"], expected["reference score"])
    title = json.loads(at.get("plotly_chart")[1].proto.spec)["layout"]["title"]["text"]
    assert "drawn from “the rest of the data”" in title  # the group, quoted; the built-in reads "(n = …)"

    for tab, key, name in (("Distributions as n grows", "cdf-weighting", BUILT_IN_WORDS[1]),
                           ("Normal approximation", "normal-source", BUILT_IN_WORDS[2])):
        at = AppTest.from_file(APP, default_timeout=120)
        at.session_state["audit"], at.session_state["demo_key"], at.session_state["tab"] = audit, None, tab
        at.run()
        at.switch_page("pages/3_Sample_Size_Explorer.py").run()
        labels = at.selectbox(key=key).options
        assert len(set(labels)) == len(labels) and labels.count(name) == 1  # the built-in's; the group's differs
        at.selectbox(key=key).set_value(name).run()
        assert not at.exception, at.exception
        if key == "cdf-weighting":   # every matrix weighted as drawn from the group, not equally
            cdfs = sample_size.cdf_table(("ACC", "TPR", "MCC", "PT"), (5, 10, 20, 50),
                                         audit.cms[name].as_array().astype(float))
            acc = cdfs[(cdfs["metric"] == "ACC") & (cdfs["n"] == 5)]["cdf"].to_numpy()
            np.testing.assert_allclose(_trace_y(at.get("plotly_chart")[0].proto.spec), [0.0, *acc])
        else:                        # the group's cell probabilities, not the thesis's example
            probs = audit.cms[name].as_array() / audit.cms[name].n
            assert any(c.value == "p_TP, p_FN, p_FP, p_TN = " + ", ".join(f"{p:.3f}" for p in probs)
                       for c in at.caption)


def test_an_attribute_named_like_the_intersections_choice_is_that_attribute():
    rng = np.random.default_rng(1)
    n = 300
    df = pd.DataFrame({"y": rng.integers(0, 2, n), "yhat": rng.integers(0, 2, n),
                       "every combination": rng.choice(["p", "q"], n), "sex": rng.choice(["f", "m"], n)})
    from fairness_core.io import cms_from_predictions

    audit = cms_from_predictions(df, "y", "yhat", ["every combination", "sex"], 1, source="x.csv",
                                 positive_is="benefit")
    at = page_with_audit(audit, "pages/4_Smoothing.py")
    view = at.sidebar.selectbox[0]
    assert view.label == "Groups" and len(set(view.options)) == len(view.options)
    view.set_value("every combination").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="prior-group").options == audit.marginal("every combination").groups  # p and q


def test_a_group_named_pooled_is_a_group_on_the_inequality_map():
    from fairness_core import entropy

    audit = colliding_audit()
    mu, lam, grid = entropy.landscape(entropy.SPEICHER, 2.0, size=11)
    points = pd.DataFrame([{"group": g, "n": cm.n, "index": 0.1,
                            **dict(zip(("mu", "lambda"), entropy.mu_lambda(cm, entropy.SPEICHER)))}
                           for g, cm in audit.cms.items()]
                          + [{"group": "everyone pooled", "everyone": True, "n": audit.total().n, "index": 0.1,
                              **dict(zip(("mu", "lambda"), entropy.mu_lambda(audit.total(), entropy.SPEICHER)))}])
    fig = plots.gei_landscape(mu, lam, grid, points, 2.0, ("TP", "TN"))
    dots, diamond = fig.data[1], fig.data[2]
    assert "pooled" in dots.text and diamond.marker.symbol == "diamond" and len(diamond.x) == 1
    labels = [a.text for a in fig.layout.annotations]
    assert labels.count("pooled") == 1 and labels.count("<i>everyone pooled</i>") == 1


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
def test_report_in_chromium_has_no_hostile_link_or_styled_span(tmp_path):
    from playwright.sync_api import sync_playwright

    path = tmp_path / "report.html"
    path.write_text(report.build(hostile_audit()).html(), encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"),
                                    args=["--headless", "--no-sandbox", "--disable-gpu",
                                          "--disable-background-networking"])
        page = browser.new_page()
        page.goto(path.as_uri())
        # the condition: every figure of the report has drawn (Plotly marks each div it has plotted)
        page.wait_for_function("document.querySelectorAll('.plotly-graph-div').length > 0 && [...document"
                               ".querySelectorAll('.plotly-graph-div')].every(d => d.querySelector('.main-svg'))",
                               timeout=60000)
        assert page.locator("a[href*='evil.example']").count() == 0
        assert page.locator("[style*='#123456'], [style*='rgb(18, 52, 86)']").count() == 0
        assert page.locator("img[src*='evil.example']").count() == 0
        assert "click me" in page.content()  # the name is there, as text
        browser.close()


def test_a_group_named_all_is_a_group_beside_the_row_of_everyone():
    from fairness_core import stability

    rng = np.random.default_rng(0)
    rows = stability.RowData(rng.integers(0, 2, 60), rng.integers(0, 2, 60), np.repeat(["all", "y", "z"], 20),
                             rng.uniform(size=(60, 3)))
    table = stability.group_table(rows)
    everyone = table.attrs["overall"]
    assert everyone == "all rows" and table.index.is_unique
    assert table.loc["all", "n"] == 20 and table.loc[everyone, "n"] == 60  # the group, not everyone
    assert list(stability.disparities(table, "y").index) == ["all", "z"]   # compared like any other group


# --- look-alike names: spaces of other kinds, runs of spaces, blank characters --------------------------------

#: "Black Male" as it prints, typed with a space that is not plain or with two: each is "Black Male".
LOOK_ALIKE_SPACES = {"no-break space": "\u00a0", "thin space": "\u2009", "ideographic space": "\u3000",
                     "narrow no-break space": "\u202f", "en quad": "\u2000", "two spaces": "  ",
                     "space and no-break space": " \u00a0"}
#: Characters drawn as a blank that are not spaces: refused as hidden characters, like a direction mark.
BLANK_CHARACTERS = {"Braille blank": "\u2800", "Hangul filler": "\u3164", "Hangul choseong filler": "\u115f",
                    "Hangul jungseong filler": "\u1160", "half-width Hangul filler": "\uffa0"}


def _rows_csv(names: list[str]) -> bytes:
    """A row-level upload: four rows (TP, FN, FP, TN) for each group, with White beside them."""
    lines = ["y,p,g"] + [f'{y},{p},"{name}"' for name in [*names, "White"] for y, p in ((1, 1), (1, 0), (0, 1),
                                                                                         (0, 0))]
    return ("\n".join(lines) + "\n").encode()


def _via_cm_table(names: list[str], tmp_path: Path) -> Audit:
    from fairness_core import io

    text = "group,TP,FN,FP,TN\n" + "".join(f'"{name}",1,1,1,1\n' for name in [*names, "White"])
    return io.cms_from_table(io.read_table(text.encode(), "table.csv"))


def _via_rows(names: list[str], tmp_path: Path) -> Audit:
    from fairness_core import io

    return io.cms_from_predictions(io.read_table(_rows_csv(names), "rows.csv"), "y", "p", ["g"], "1")


def _via_aggregate(names: list[str], tmp_path: Path) -> Audit:
    from fairness_core import io

    (tmp_path / "rows.csv").write_bytes(_rows_csv(names))
    return io.aggregate(str(tmp_path / "rows.csv"), label="y", prediction="p", groups=["g"])


def _via_aggregate_upload(names: list[str], tmp_path: Path) -> Audit:
    from fairness_core import io

    return io.aggregate_upload(_rows_csv(names), "rows.csv", label="y", prediction="p", groups=["g"])


def _via_notebook(names: list[str], tmp_path: Path) -> Audit:
    groups = [name for name in [*names, "White"] for _ in range(4)]
    return Audit.from_predictions([1, 1, 0, 0] * (len(names) + 1), [1, 0, 1, 0] * (len(names) + 1), groups,
                                  positive_is="benefit")


PATHS = {"CM table": _via_cm_table, "row-level upload": _via_rows, "in place (aggregate, CSV)": _via_aggregate,
         "in place (aggregate_upload)": _via_aggregate_upload, "notebook (Audit.from_predictions)": _via_notebook}


def test_the_folded_spaces_are_every_unicode_space_separator():
    import sys
    import unicodedata

    from fairness_core.common.text import fold_spaces, folded_spaces

    zs = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Zs"]
    assert len(zs) == 17
    for char in zs:
        assert fold_spaces(f"a{char}b") == "a b" and fold_spaces(f"a{char} {char}b") == "a b", repr(char)
        assert (folded_spaces(f"a{char}b") is None) == (char == " "), repr(char)


@pytest.mark.parametrize("path", PATHS.values(), ids=PATHS.keys())
@pytest.mark.parametrize("space", LOOK_ALIKE_SPACES.values(), ids=LOOK_ALIKE_SPACES.keys())
def test_a_name_with_another_kind_of_space_or_a_run_of_spaces_is_the_name_it_prints_as(space, path, tmp_path):
    audit = path([f"Black{space}Male"], tmp_path)
    assert audit.groups == ["Black Male", "White"]
    shown = "".join(f"⟨U+{ord(c):04X}⟩" for c in space)
    notes = [n for n in audit.notes if "normalized" in n]
    assert len(notes) == 1 and f"'Black{shown}Male' reads as 'Black Male'" in notes[0], audit.notes


@pytest.mark.parametrize("path", PATHS.values(), ids=PATHS.keys())
@pytest.mark.parametrize("space", LOOK_ALIKE_SPACES.values(), ids=LOOK_ALIKE_SPACES.keys())
def test_two_names_that_print_alike_are_refused_naming_the_name(space, path, tmp_path):
    from fairness_core.io import DataValidationError

    with pytest.raises(DataValidationError, match="'Black Male' (already appears in row 1|once invisible)"):
        path(["Black Male", f"Black{space}Male"], tmp_path)


@pytest.mark.parametrize("path", PATHS.values(), ids=PATHS.keys())
@pytest.mark.parametrize("blank", BLANK_CHARACTERS.values(), ids=BLANK_CHARACTERS.keys())
def test_a_character_drawn_as_a_blank_is_refused_and_shown(blank, path, tmp_path):
    from fairness_core.io import DataValidationError

    with pytest.raises(DataValidationError) as exc:
        path([f"Black{blank}Male"], tmp_path)
    message = str(exc.value)
    assert f"'Black⟨U+{ord(blank):04X}⟩Male' holds a hidden character" in message, message
    assert any(column in message for column in ("column 'g'", "column 'group'", "sensitive_feature[0]")), message
    assert blank not in message


def test_model_candidates_refuse_look_alike_and_blank_group_values():
    from fairness_core.io import DataValidationError, candidates_from_predictions

    frame = pd.DataFrame({"y": [1, 0, 1, 0], "g": ["Black Male", "Black\u00a0Male", "White", "White"],
                          "m": [1, 0, 0, 1]})
    with pytest.raises(DataValidationError, match="column 'g': two different group values both read as 'Black Male'"):
        candidates_from_predictions(frame, "y", 1, ["g"], ["m"])
    with pytest.raises(DataValidationError, match=r"row 1 .*'Black⟨U\+2800⟩Male' holds a hidden character"):
        candidates_from_predictions(frame.assign(g=["Black\u2800Male"] * 2 + ["White"] * 2), "y", 1, ["g"], ["m"])
    same = candidates_from_predictions(frame.assign(g=["Black\u3000Male"] * 2 + ["White"] * 2), "y", 1, ["g"], ["m"])
    assert sorted(same.groups["g"].unique()) == ["Black Male", "White"]
