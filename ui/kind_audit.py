"""The Bias Audit page for amounts and categories (issue 53): the page's three questions answered for the kind of
audit loaded, the verdict tiles and table with their intervals, figures that fit the data, the tables' downloads,
and (categories) the one-vs-rest selector that opens a class's ordinary binary audit below.

The page calls :func:`render` first when :func:`ui.kinds.loaded_kind` holds an audit; it returns the one-vs-rest
:class:`~fairness_core.audit.Audit` the user opened (the page then goes on as for any binary audit) or stops.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from fairness_core import plots
from fairness_core.audit import Audit
from fairness_core.continuous import ContinuousAudit
from fairness_core.multiclass import MulticlassAudit
from fairness_core.statistics import ordinal as ordinal_stats
from fairness_core.vocabulary import DEFAULT_ALPHA
from fairness_core.wording.amounts import amount_explanations
from fairness_core.wording.kinds import amount_questions, amount_text, benefit_sides, class_questions, number_text
from fairness_core.io import DataValidationError
from ui.kind_upload import located
from ui.kinds import Loaded, one_vs_rest
from ui.state import ADJUSTMENTS, INTERSECTIONS, _kept
from ui.widgets import P_FORMATS, chart, csv_download, md_escape, or_failure, styled, verdict_summary

#: The ordinal OFI's default tolerance, in tiers.
DEFAULT_TIER_TOLERANCE = 0.1
#: The one-vs-rest selector's first option: stay with every class at once.
ALL_CLASSES = "every class at once"


def default_tolerance(audit: ContinuousAudit) -> float:
    """An amount's default tolerance: 5 % of the mean outcome's size, to two significant digits (the user sets the
    one that matters; the input shows it with its unit)."""
    m = audit.moments["outcome"]
    scale = abs(float(np.average(m.mean, weights=m.n))) * 0.05 or 1.0
    return float(f"{scale:.2g}")


def settings_sidebar(loaded: Loaded) -> tuple[float, float, str]:
    """The sidebar: the tolerance in the amount's unit (in tiers for an order), α and the adjustment (kept
    across pages with the binary audit's)."""
    st.header("Audit settings")
    a = loaded.audit
    tolerance = math.nan
    if isinstance(a, ContinuousAudit):
        default = default_tolerance(a)
        key = f"amount-tol-{loaded.demo or ''}-{loaded.unit}"
        tolerance = st.number_input(f"Tolerance ({md_escape(loaded.unit.strip()) or 'the outcome’s units'}): a "
                                    "difference of mean benefits at or below it counts as ≈ 0", min_value=0.0,
                                    value=default, key=key, format="%.4g",
                                    help="The smallest difference of mean benefits per person that matters, in the "
                                         "outcome's own units. Algorithmic bias is called only when OFI's adjusted "
                                         "interval lies beyond ±tolerance.")
        st.caption(f"Tolerance: **{md_escape(amount_text(tolerance, loaded.unit))}** per person.")
    elif a.ordered and a.has_outcomes:
        tolerance = st.number_input("Tolerance (tiers): a difference of mean ordinal benefits at or below it counts "
                                    "as ≈ 0", min_value=0.0, max_value=float(a.k - 1), step=0.05,
                                    **_kept("tier-tol", DEFAULT_TIER_TOLERANCE),
                                    help="The ordinal benefit counts tiers placed toward the favourable end (+1) or "
                                         "away from it (−1) relative to the observed tier.")
    alpha = st.select_slider("Significance level α", options=[0.01, 0.05, 0.10], **_kept("alpha", DEFAULT_ALPHA))
    adjust = st.selectbox("Adjust for many pairs", list(ADJUSTMENTS), format_func=ADJUSTMENTS.get,
                          **_kept("adjust", "holm"))
    return float(tolerance), float(alpha), str(adjust)


def _viewed(loaded: Loaded) -> ContinuousAudit | MulticlassAudit:
    """The audit of the groups the sidebar's "Groups" choice names (one attribute alone, or every combination)."""
    a = loaded.audit
    choice = st.session_state.get("kept-groups-view")
    if a.attributes and choice != INTERSECTIONS and choice in a.attributes:
        return a.marginal(choice)
    return a


def banner(loaded: Loaded, audit: ContinuousAudit | MulticlassAudit) -> None:
    """One line saying which data every number comes from, and the audit's notes."""
    n = int(np.sum(audit.n))
    st.caption(f"**Data:** {md_escape(audit.source)} · {len(audit.groups)} groups · n = {n:,} · "
               f"{md_escape(audit.direction)}" + (f" · unit: {md_escape(loaded.unit)}" if loaded.unit.strip() else ""))
    names = {"y_true": loaded.label, "y_pred": loaded.prediction}
    for note in audit.notes:   # the library's array positions read as the data's columns and rows
        st.info(md_escape(str(located(DataValidationError(note), names).problems[0])), icon=":material/info:")


def questions(answers: dict) -> None:
    """The three questions side by side, each answered in one or two sentences."""
    for col, (question, answer) in zip(st.columns(3), answers["text"].items()):
        with col.container(border=True):
            st.markdown(f"**{md_escape(question)}**")
            st.markdown(md_escape(answer))


def _pairs(df: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    shown = df[[c for c in columns if c in df.columns]].copy()
    shown.insert(0, "pair", df["group_i"].astype(str) + " vs " + df["group_j"].astype(str))
    return shown.drop(columns=["group_i", "group_j"], errors="ignore")


#: The page's one rule for numbers in tables: shares and rates as percentages, p-values to 3 significant digits,
#: every other number (amounts, ratios, B) to 3 significant digits as the sentences print them
#: (:func:`fairness_core.wording.kinds.number_text`).
RATE_COLUMNS = ("share", "share_placed", "recall", "false_placement_rate", "rate_i", "rate_j", "share_favoured",
                "share_disfavoured", "ordinal_fpr", "ordinal_fnr", "level")


def _percent(v: float) -> str:
    return f"{v:.1%}" if np.isfinite(v) else "undefined"


def _table(df: pd.DataFrame, rates: tuple[str, ...] = ()) -> "pd.io.formats.style.Styler":
    """``df`` styled by the page's rule (:data:`RATE_COLUMNS` and ``rates`` as %, p to 3 significant digits,
    the rest :func:`~fairness_core.wording.kinds.number_text`); a column "x low"/"x_ci_high" follows x."""
    def base(c: str) -> str:
        for end in ("_ci_low", "_ci_high", " low", " high", "_low", "_high"):
            if c.endswith(end):
                return c[: -len(end)]
        return c

    formats: dict = {}
    for c in df.columns:
        name = str(c)
        if name in P_FORMATS or name.startswith("p (") or name.endswith("_p_adjusted") or name.endswith("_p"):
            formats[c] = "{:.3g}"
        elif base(name) in RATE_COLUMNS or base(name) in rates or name in rates:
            formats[c] = _percent
        else:
            formats[c] = number_text
    return styled(df, 3, formats)


#: An amount table's columns that hold the outcome's units (their headers carry the unit on the page).
_AMOUNT_COLUMNS = ("mean_outcome", "mean_prediction", "mean_benefit", "mae", "rmse", "mae_i", "mae_j", "gap")


def _headed(table: pd.DataFrame, unit: str) -> pd.DataFrame:
    """An amount table with readable headers for the page: "mean outcome ($ a year)", "… low", "… high" (the CSV
    download keeps the library's names)."""
    suffix = f" ({unit.strip()})" if unit.strip() else ""

    def header(c: str) -> str:
        for end, word in (("_ci_low", " low"), ("_ci_high", " high")):
            if c.endswith(end):
                return c[: -len(end)].replace("_", " ") + word
        return c.replace("_", " ") + (suffix if c in _AMOUNT_COLUMNS else "")
    return table.rename(columns={c: header(str(c)) for c in table.columns})


def larger_first(audit: ContinuousAudit | MulticlassAudit) -> list[str]:
    """The groups, largest first: each pair's reference is its larger group, in every table and chart of the page
    (the per-group table's mean prediction ratio is over the largest group too)."""
    return ordinal_stats.larger_first(list(audit.groups), np.asarray(audit.n, dtype=float))


def turned(v: pd.DataFrame, order: list[str], tolerance: float, unit: str) -> pd.DataFrame:
    """OFI verdicts with each pair turned to the page's one orientation (:func:`fairness_core.statistics.ordinal.
    oriented`), their sentences written again from the turned numbers, so a sentence quoting OFI's interval quotes
    the table's."""
    level = v.levels.ofi if getattr(v, "levels", None) is not None else None
    out = ordinal_stats.oriented(pd.DataFrame(v), order)
    out["explanation"] = amount_explanations(out, tolerance, level or 0.0, unit)
    return out


def pairs_in_words(v: pd.DataFrame) -> None:
    """Each pair's sentence under its table, whole (a table column cut it off)."""
    with st.expander("Each pair in words", expanded=len(v) <= 6):
        st.markdown("\n".join(f"- **{md_escape(i)} vs {md_escape(j)}:** {md_escape(e)}"
                              for i, j, e in zip(v["group_i"], v["group_j"], v["explanation"])))


def amounts_view(loaded: Loaded, a: ContinuousAudit, tolerance: float, alpha: float, adjust: str) -> None:
    """An amount audit: its questions, verdicts, benefit distributions and per-group table."""
    what, _ = benefit_sides(a.positive_is, loaded.label or "the outcome", loaded.prediction or "the prediction")
    st.markdown(f"**OFI for amounts** = Bᵢ − Bⱼ, the difference of mean **benefits** per person, in "
                f"{md_escape(loaded.unit.strip() or 'the outcome’s units')}: benefit = {md_escape(what)} (a larger "
                f"{md_escape(loaded.prediction or 'prediction')} was declared "
                f"{'a harm' if a.positive_is == 'harm' else 'a benefit'})"
                + ". OFI beyond the tolerance: the model is at fault; within it with the **mean prediction ratio** "
                  "outside [0.8, 1.25]: a disparity the outcomes share. Too skewed for its rows: no verdict.")
    v = a.verdicts(tolerance, alpha=alpha, adjust=adjust, unit=loaded.unit)
    verdict_summary(v, "pairs of groups")
    questions(amount_questions(a, v, loaded.unit))
    unit = f" ({loaded.unit.strip()})" if loaded.unit.strip() else ""
    order = larger_first(a)
    pairs = turned(v, order, tolerance, loaded.unit)
    shown = _pairs(pairs, ["group_i", "group_j", "n_i", "n_j", "ofi", "ofi_ci_low", "ofi_ci_high", "ofi_p_adjusted",
                       "ratio", "ratio_ci_low", "ratio_ci_high", "verdict"]).rename(columns={
        "ofi": f"OFI{unit}", "ofi_ci_low": "OFI low", "ofi_ci_high": "OFI high", "ofi_p_adjusted": "p (adjusted)",
        "ratio": "mean prediction ratio", "ratio_ci_low": "ratio low", "ratio_ci_high": "ratio high"})
    st.subheader("Verdict per pair")
    st.caption(f"OFI = B(first of the pair) − B(second), in {md_escape(loaded.unit.strip() or 'the outcome’s units')}"
               "; low and high: its adjusted interval. The mean prediction ratio is the first's mean prediction over "
               "the second's. Each pair's second is its reference, the larger group, in every table of the page.")
    st.dataframe(_table(shown), width="stretch", hide_index=True, key="amount-verdicts")
    pairs_in_words(pairs)
    csv_download(v.table if hasattr(v, "table") else v, "amount_verdicts.csv",
                 "Download verdicts with every number (CSV)", index=False)
    fig = plots.benefit_distributions(a, loaded.benefits() if a is loaded.audit else None,
                                      loaded.group_labels() if a is loaded.audit else None, unit=loaded.unit,
                                      alpha=alpha, outcome=loaded.label or "the outcome",
                                      prediction=loaded.prediction or "the prediction")
    chart(fig, "benefit_distributions.html", key="benefit-distributions")
    st.subheader("Per group")
    st.caption(f"Means with their {1 - alpha:.0%} intervals (unadjusted); the mean prediction ratio is each group's "
               f"mean prediction over {md_escape(a.by_group().attrs['reference'])}'s (the largest group).")
    table = a.by_group(alpha=alpha)
    st.dataframe(_table(_headed(table, loaded.unit)), width="stretch", key="amount-groups")
    csv_download(table, "amount_by_group.csv", "Download per-group numbers (CSV)")
    gaps = amount_questions(a, v, loaded.unit)["mae_gaps"]
    with st.expander("Mean absolute error gaps for every pair"):
        st.dataframe(_table(_headed(ordinal_stats.oriented(gaps, order), loaded.unit)), width="stretch",
                     hide_index=True, key="mae-gaps")
        csv_download(gaps, "mae_gaps.csv", "Download (CSV)", index=False)


def classes_view(m: MulticlassAudit, tolerance: float, alpha: float, adjust: str) -> None:
    """A categories audit: its questions, verdicts, heatmaps, impact ratios and tables."""
    ratios = m.impact_ratios(alpha=alpha, adjust=adjust)
    label = "cut" if "cut" in ratios.columns else "class"
    ordinal = m.ordered and m.has_outcomes
    if ordinal:
        st.markdown("**Ordinal OFI** = Bᵢ − Bⱼ in tiers: each person's benefit is the number of tiers they were "
                    "placed toward the favourable end (" + md_escape(m.favourable[0]) + ") relative to their observed "
                    "tier. **Impact ratios at every cut** (“Medium or better” against the rest) read the four-fifths "
                    "rule, adjusted across cuts and pairs.")
        v = m.verdicts(tolerance, alpha=alpha, adjust=adjust)
        gaps = m.error_rate_gaps(alpha=alpha)
        verdict_summary(v, "pairs of groups")
    else:
        st.markdown(("**Classes given alone** (no observed class): " if not m.has_outcomes else
                     "**Unordered classes**: ") + "each group's share placed in each class and the impact ratios "
                    f"of every {label}, adjusted across {label}s and pairs.")
        v = gaps = None
        verdict_summary(ratios, f"pair-{label}s")
    order = larger_first(m)
    questions(class_questions(m, ratios, v, gaps, order))
    if v is not None:
        st.subheader("Ordinal OFI per pair")
        pairs = turned(v, order, tolerance, "tiers")
        shown = _pairs(pairs, ["group_i", "group_j", "n_i", "n_j", "ofi", "ofi_ci_low", "ofi_ci_high", "ofi_p_adjusted",
                           "verdict"]).rename(columns={"ofi": "OFI (tiers)", "ofi_ci_low": "OFI low",
                                                       "ofi_ci_high": "OFI high", "ofi_p_adjusted": "p (adjusted)"})
        st.dataframe(_table(shown), width="stretch", hide_index=True, key="ordinal-verdicts")
        pairs_in_words(pairs)
        csv_download(v.table if hasattr(v, "table") else v, "ordinal_verdicts.csv",
                     "Download ordinal OFI verdicts (CSV)", index=False)
    chart(plots.class_heatmaps(m), "class_heatmaps.html", key="class-heatmaps")
    chart(plots.impact_ratio_chart(ratios, order), "impact_ratios.html", key="impact-ratio-chart")
    st.subheader(f"Impact ratios at every {label}")
    st.caption(f"Each pair's first group's rate over its reference's (the larger group), the same way at every {label}, "
               "in the chart and in every table of the page; the CSV keeps the library's orientation (the lower rate "
               "over the higher).")
    shown = _pairs(ordinal_stats.oriented(ratios, order), [label, "group_i", "group_j", "n_i", "n_j", "rate_i", "rate_j", "di", "di_ci_low",
                            "di_ci_high", "di_p_adjusted", "verdict", "adverse_to"])
    st.dataframe(_table(shown), width="stretch", hide_index=True, key="impact-ratios")
    csv_download(ratios.table if hasattr(ratios, "table") else ratios, "impact_ratios.csv",
                 "Download impact ratios (CSV)", index=False)
    if ordinal:
        st.subheader("Placed above and below the observed tier")
        rates = m.rates(alpha=alpha)
        st.dataframe(_table(rates), width="stretch", key="ordinal-rates")
        csv_download(rates, "ordinal_rates.csv", "Download ordinal rates (CSV)")
        with st.expander("Ordinal error-rate gaps for every pair"):
            assert gaps is not None
            st.dataframe(_table(ordinal_stats.oriented(gaps, order), rates=("gap", "ci")), width="stretch",
                         hide_index=True, key="ordinal-gaps")
            csv_download(gaps, "ordinal_error_rate_gaps.csv", "Download (CSV)", index=False)
    shares = m.shares(alpha=alpha)
    with st.expander("Share of each group placed in each class"):
        st.dataframe(_table(shares, rates=("ci",)), width="stretch", hide_index=True, key="class-shares")
        csv_download(shares, "class_shares.csv", "Download (CSV)", index=False)
    if m.has_outcomes:
        csv_download(m.confusion_table(), "class_counts.csv", "Download every group's k × k counts (CSV)",
                     index=False)


def report_downloads(loaded: Loaded, audit: ContinuousAudit | MulticlassAudit, tolerance: float, alpha: float,
                     adjust: str) -> None:
    """The kind's own report (:mod:`fairness_core.presentation.report_kinds`): HTML, JSON and the tables' CSV zip,
    each built when its button is pressed; a failure becomes a file that says why."""
    from fairness_core.presentation import report_kinds
    from fairness_core.statistics.verdicts import VerdictSettings

    st.subheader("Download the audit report")

    def built():  # type: ignore[no-untyped-def]
        if isinstance(audit, ContinuousAudit):
            return report_kinds.build(audit, audit.verdicts(tolerance, alpha=alpha, adjust=adjust,
                                                            unit=loaded.unit), unit=loaded.unit)
        return report_kinds.build(audit, settings=VerdictSettings(tolerance, alpha, adjust))

    r1, r2, r3 = st.columns(3)
    r1.download_button("Audit report (HTML)", data=or_failure(lambda: built().html(), "audit report"),
                       file_name="fairness_audit_report.html", mime="text/html", key="kind-report-html")
    r2.download_button("Report data (JSON)", data=or_failure(lambda: built().to_json(), "report's JSON"),
                       file_name="fairness_audit_report.json", mime="application/json", key="kind-report-json")
    r3.download_button("Every table (CSV zip)", data=or_failure(lambda: built().csv_zip(), "tables' zip"),
                       file_name="fairness_audit_tables.zip", mime="application/zip", key="kind-report-zip")


def render(loaded: Loaded) -> Audit:
    """The whole page for ``loaded``; returns the one-vs-rest audit the user opened, or stops the page."""
    with st.sidebar:
        tolerance, alpha, adjust = settings_sidebar(loaded)
    audit = _viewed(loaded)
    st.title("Bias audit")
    banner(loaded, audit)
    if isinstance(audit, ContinuousAudit):
        amounts_view(loaded, audit, tolerance, alpha, adjust)
        report_downloads(loaded, audit, tolerance, alpha, adjust)
        st.stop()
    assert isinstance(audit, MulticlassAudit)
    classes_view(audit, tolerance, alpha, adjust)
    report_downloads(loaded, audit, tolerance, alpha, adjust)
    st.divider()
    st.subheader("One class against the rest")
    st.caption("Every class is also an ordinary yes/no audit: placed in it or not. Opening one shows the binary "
               "audit's verdicts, metrics, figures, report and Local Law 144 summary below; its direction follows "
               "the favourable class (a middle tier has none declared).")
    cls = st.selectbox("One-vs-rest audit", [ALL_CLASSES, *audit.classes], key="one-vs-rest-class",
                       format_func=lambda c: "— none: every class at once —" if c == ALL_CLASSES
                       else f"{c} against the rest")
    if cls == ALL_CLASSES:
        st.stop()
    st.header(f"{cls} against the rest")
    positive_is = None
    if audit.class_direction(cls) == "not declared":
        choice = st.radio(f"Being placed in {md_escape(cls)} is, for the person,", list(DIRECTION_CHOICES),
                          horizontal=True, key=f"ovr-direction-{cls}")
        positive_is = DIRECTION_CHOICES[choice]
        if positive_is is None:
            undeclared_class(audit, cls, alpha)
            st.stop()
    return one_vs_rest(audit, cls, positive_is)


#: The one-vs-rest direction of a class nobody declared (a middle tier): the user's choice, none by default.
DIRECTION_CHOICES = {"not declared": None, "a benefit": "benefit", "a harm": "harm"}


def undeclared_class(m: MulticlassAudit, cls: str, alpha: float) -> None:
    """A class of no declared direction against the rest: why there is no verdict, and its rates with intervals."""
    level = f"{(1 - alpha) * 100:g} %"
    st.info(f"**No verdicts for {md_escape(cls)} against the rest:** {md_escape(m.no_direction(cls))}, and OFI and "
            "the four-fifths rule both need that direction.", icon=":material/help:")
    st.caption(f"Each group's share placed in {md_escape(cls)}"
               + (", its recall and its false placements" if m.has_outcomes else "")
               + f", with exact {level} intervals; declare a direction above for the binary audit.")
    rates = m.class_rates(cls, alpha)
    if m.has_outcomes and int(rates["observed"].sum()) == 0:
        st.warning(f"**Nobody was observed in {md_escape(cls)}.** Every placement there is a false placement, "
                   "and its recall is undefined in every group.", icon=":material/warning:")
    st.dataframe(_table(rates), width="stretch", key="class-rates")
    csv_download(rates, f"class_rates_{cls}.csv", "Download (CSV)")
