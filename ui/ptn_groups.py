"""The Forecasting page after a PTN run, by site (weather) or regime (Lorenz) (issue 55): which groups PTN serves
worse, and whether it beats both baselines at each. Beside the pooled skill table: the answer and the verdict
words (the "Audit forecasts" mode's renderers, :mod:`ui.forecast_audit`), PTN's skill against each baseline per
group with its interval, the between-group pairs (verdicts against a tolerance in the outcome's units, and the
differences of skill), the per-group CRPS, benefit and band coverage, two figures; every table downloadable. Then
the group picker of the test-forecast browser (:func:`browser`).

Everything computed is the library's (:class:`fairness_core.forecasts.ForecastAudit`, kept in the run's result by
:mod:`models.ptn.groups`); the sentences are :mod:`models.ptn.groups`' and :mod:`fairness_core.wording.forecasts`'.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from fairness_core.forecasts import ForecastAudit
from fairness_core import plots
from fairness_core.vocabulary import DEFAULT_ALPHA
from fairness_core.wording.levels import level_text
from fairness_core.wording.forecasts import tolerance_for_sd
from fairness_core.wording.kinds import amount_text
from models.ptn.groups import UNITS, GroupView, outcome_title, skill_words, view_words
from models.ptn.scoring import examples_of, in_units
from ui import forecast_audit
from ui.state import ADJUSTMENTS
from ui.widgets import chart, csv_download, figure_with_downloads, md_escape, styled

#: Pairs are adjusted for their number this way (the "Audit forecasts" mode's default).
ADJUST = "holm"


def _tables(a: ForecastAudit, tolerance: float, unit: str) -> dict[str, pd.DataFrame]:
    """The audit's tables at ``tolerance``, computed once per audit and tolerance in this session (a page reruns on
    every click)."""
    kept = st.session_state.setdefault("ptn-group-tables", {})
    key = (id(a), float(tolerance), unit)
    if key not in kept or kept[key][0] is not a:
        kept.clear()
        kept[key] = (a, {"verdicts": a.verdicts(tolerance, DEFAULT_ALPHA, ADJUST, unit=unit),
                         "groups": a.by_group(DEFAULT_ALPHA), "skill": a.skill(DEFAULT_ALPHA),
                         "pairs": a.pairs(DEFAULT_ALPHA, ADJUST)})
    return kept[key][1]


def skill_table(skill: pd.DataFrame, unit: str = "", kind: str = "group") -> pd.DataFrame:
    """PTN's skill per group and baseline as people read it: both mean CRPS (in ``unit``), the skill 1 − CRPS_PTN /
    CRPS_baseline with its interval, the thesis's median form and the share of forecasts PTN improves; the first
    column is named ``kind``."""
    u = f" ({unit})" if unit else ""
    return pd.DataFrame({kind: skill["group"], "against": skill["baseline"], f"PTN's CRPS{u}": skill["crps"],
                         f"baseline's CRPS{u}": skill["crps_baseline"], "skill": skill["skill"],
                         "skill low": skill["skill_ci_low"], "skill high": skill["skill_ci_high"],
                         "median skill": skill["skill_q2"], "share improved": skill["share_improved"]})


def skill_gaps(pairs: pd.DataFrame) -> pd.DataFrame:
    """The between-group differences of PTN's skill, per baseline (one baseline's pairs together): does PTN's
    advantage differ between groups?"""
    rows = pairs[pairs["measure"].str.startswith("skill:")]
    out = pd.DataFrame({"against": rows["measure"].str.removeprefix("skill:"),
                        "pair": rows["group_i"].astype(str) + " − " + rows["group_j"].astype(str),
                        "skill i": rows["value_i"], "skill j": rows["value_j"], "difference": rows["estimate"],
                        "low": rows["ci_low"], "high": rows["ci_high"], "p (adjusted)": rows["p_adjusted"]})
    order = {name: k for k, name in enumerate(dict.fromkeys(out["against"]))}
    return out.sort_values("against", key=lambda c: c.map(order), kind="stable")


def section(view: GroupView | None) -> None:
    """The whole view by group, or the reason there is none (one group in the test part)."""
    if view is None:
        return
    st.subheader(f"By {view.kind}", anchor=False)
    a = view.audit
    if a is None:
        st.info(f"No comparison by {md_escape(view.kind)}: {md_escape(view.reason)}.", icon=":material/info:")
        return
    unit = view.unit
    st.caption(md_escape(view_words(view)))
    suffix = f" ({unit})" if unit else ""
    start = tolerance_for_sd(view.observation_sd)
    tolerance = st.number_input(
        f"Tolerance{suffix}: the smallest difference of mean benefit (bias) between two {view.kind}s that matters",
        min_value=0.0, value=start, step=start / 2, format="%.4g", key=f"ptn-tol-{view.kind}",
        help=f"Starts at a tenth of the test observations' standard deviation ({view.observation_sd:.3g}{suffix}), "
             "the rule the Audit forecasts mode uses for an upload; set the one that matters for your use.")
    t = _tables(a, float(tolerance), unit)
    v, level = t["verdicts"], level_text(1 - DEFAULT_ALPHA)
    kind = md_escape(view.kind)
    with st.container(border=True):
        st.markdown(f"**Which {kind}s PTN serves worse.** "
                    + md_escape(forecast_audit.served_worse(v, view.kind, "PTN")))
        st.markdown(md_escape(v.findings(max_items=3, kind=view.kind)))
        st.markdown(md_escape(skill_words(t["skill"], level)))

    st.markdown(f"**PTN's skill against each baseline, per {kind}** — 1 − mean CRPS_PTN / mean CRPS_baseline with its "
                f"{level} interval (HAC, delta method); the median skill and the share of forecasts improved are the "
                "thesis's Table 5.2 form, per window and lead.")
    st.dataframe(styled(skill_table(t["skill"], unit, view.kind), 3), hide_index=True, width="stretch",
                 key="ptn-group-skill")
    csv_download(t["skill"], "ptn_skill_by_group.csv", "Download the skill per group (CSV)",
                 key="ptn-group-skill-csv", index=False)
    st.markdown(f"**Every pair of {kind}s** — the verdict on the forecast OFI (the difference of mean benefits) "
                f"against a tolerance of ±{md_escape(amount_text(tolerance, unit))}, with the CRPS ratio for systemic "
                f"disparity; adjusted across the pairs by {md_escape(ADJUSTMENTS.get(ADJUST, ADJUST))}.")
    forecast_audit.verdict_table(v, unit, key="ptn-group-verdicts", file_name="ptn_group_verdicts.csv")
    gaps = skill_gaps(t["pairs"])
    st.markdown(f"**Does PTN's advantage differ between {kind}s?** The difference of skill, {kind} i − {kind} j, with "
                f"its {level} interval and p adjusted across the pairs.")
    st.dataframe(styled(gaps, 3, formats={"p (adjusted)": "{:.3g}"}), hide_index=True, width="stretch",
                 key="ptn-group-gaps", height=min(38 + 35 * len(gaps), 740))
    csv_download(t["pairs"], "ptn_group_pairs.csv", "Download every pair's differences, every measure (CSV)",
                 key="ptn-group-pairs-csv", index=False)

    st.markdown(f"**Per {kind}** — PTN's mean CRPS and mean benefit with their {level} intervals; the share of "
                "observations inside each central band is in the figure below and, for every band, in the CSV.")
    st.dataframe(styled(forecast_audit.group_table(t["groups"], unit, view.kind, level), 3), width="stretch",
                 key="ptn-groups")
    csv_download(t["groups"], "ptn_groups.csv", "Download the per-group scores, every band (CSV)",
                 key="ptn-groups-csv")
    chart(plots.forecast_benefits(a, DEFAULT_ALPHA, unit), "ptn_group_benefits.html", key="ptn-group-benefits")
    figure_with_downloads(plots.forecast_coverage(a, DEFAULT_ALPHA), "ptn-group-coverage", a.coverage(DEFAULT_ALPHA),
                          "ptn_group_coverage.csv", "Download every band's coverage per group (CSV)")


def crps_chart(result: Any) -> None:
    """The per-forecast CRPS of PTN and both baselines on the test part (``result.crps``, in the outcome's units),
    the unit on the axis, and its CSV."""
    fig = plots.crps_boxes(result.crps)
    unit = UNITS.get(result.config.dataset, "")
    fig.update_yaxes(title_text=f"CRPS per test forecast ({unit or 'units of x'})")
    figure_with_downloads(fig, "ptn-crps", result.crps, "ptn_test_crps.csv", "Download the CRPS (CSV)")


def issued_words(dataset: str, time: int | None) -> str:
    """When a browsed forecast was issued: the weather's hour of its site's typical year (its row, counted from 1
    as the typical-year files count their hours), Lorenz's step of its trajectory; "" without a time.

    >>> issued_words("weather", 4999), issued_words("lorenz", 512), issued_words("weather", None)
    ("issued at hour 5,000 of the typical year's 8,760", 'issued at step 512 of its trajectory', '')
    """
    if time is None:
        return ""
    if dataset == "weather":
        return f"issued at hour {int(time) + 1:,} of the typical year's 8,760"
    return f"issued at step {int(time):,} of its trajectory"


def browser(result: Any) -> None:
    """The test-forecast browser: a group (when the forecasts carry more than one), a kind and one forecast, its fan
    chart in the outcome's units (:func:`models.ptn.scoring.in_units`, with the run's scaler). Opens at the group with
    PTN's largest mean CRPS (the worst served)."""
    examples = result.examples
    groups = [g for g in examples.get("groups", []) if g]
    dataset = result.config.dataset
    unit = UNITS.get(dataset, "")
    b0, b1, b2 = st.columns([1, 1, 2])
    group = None
    view = getattr(result, "by_group", None)
    if len(groups) > 1:
        crps = view.audit.means["crps"] if view is not None and view.audit is not None else None
        worst = groups.index(str(crps.idxmax())) if crps is not None and str(crps.idxmax()) in groups else 0
        kind = view.kind.capitalize() if view is not None else "Group"
        group = b0.selectbox(kind, groups, index=worst, key="ptn-browse-group",
                             help="Opens at the group where PTN's mean CRPS is largest (the worst served).")
    kind_of = b1.radio("Kind", list(examples["kinds"]), key="ptn-kind",
                       help="confident: the narrowest 90 % bands; multi-modal: the largest gap inside the band "
                            "relative to its width (several routes, the thesis's Fig. 5.6); random: any.")
    options = [in_units(ex, result.scaler) for ex in examples_of(examples, kind_of, group)]
    if not options:
        st.info("No test forecast of this kind here.", icon=":material/info:")
        return
    pick = b2.select_slider("Forecast", list(range(len(options))), key=f"ptn-pick-{kind_of}-{group}",
                            format_func=lambda i: f"#{options[i]['index']} "
                                                  f"(CRPS {amount_text(options[i]['crps'], unit)})")
    ex = options[pick]
    where = f" at {ex['group']}" if ex.get("group") else ""
    issued = issued_words(dataset, ex.get("time"))
    title = (f"Test forecast #{ex['index']}{where}{', ' + issued if issued else ''}<br><sup>CRPS "
             f"{amount_text(ex['crps'], unit)} (mean over the {len(ex['truth'])} leads), 90 % band "
             f"{amount_text(ex['width'], unit)} wide on average{'' if unit else ', in units of x'}</sup>")
    fig = plots.quantile_fan(ex["fan"], examples["fan_levels"], ex["truth"], ex["deterministic"], title,
                             y_title=outcome_title(dataset))
    chart(fig, f"ptn_forecast_{ex['index']}.html", key="ptn-browser")


__all__ = ["browser", "crps_chart", "issued_words", "section", "skill_gaps", "skill_table"]
