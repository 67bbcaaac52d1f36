"""Bias Audit: OFI beside disparate impact for every pair of groups, inequality across
individuals (generalized entropy index), and stability and uncertainty (Virny)."""

import numpy as np
import streamlit as st

from fairness_core import bias, metrics, regulatory, report
from fairness_core.audit import Audit
from fairness_core.verdicts import VerdictSettings
from ui import cached, saved
from ui.audit_sections import inequality_section, stability_section
from ui import scores as scores_view
from fairness_core.wording.decisions import report_contents
from ui.decisions import decisions_view
from ui import kind_audit
from ui.kinds import loaded_kind
from ui.ll144 import DECISIONS, LL144_RATE, chosen_score, session_scores
from ui.ll144_publish import data_used_caption, declared, publish_section
from ui.state import base_audit, data_banner, page_setup, verdict_settings
from ui.widgets import (MAX_VERDICT_ROWS, P_FORMATS, chart, csv_download, md_escape, option_label, or_failure, styled,
                        questions_panel, verdict_summary)

audit = page_setup("Bias Audit")
kind = loaded_kind()   # amounts or categories: their own answers first; a class's one-vs-rest audit continues below
if kind is not None:
    audit = kind_audit.render(kind)

with st.sidebar:
    st.header("Audit settings" if kind is None else "One-vs-rest audit settings")
    settings = verdict_settings(outcomes=audit.has_outcomes, shared=kind is not None)
    known = audit.compared_groups   # unknown categories (and, for decisions alone, those under 2 %) never are
    reference = st.selectbox("Reference group (every pair with it reads DI = group / reference)", known,
                             index=max(range(len(known)), key=lambda k: audit.cms[known[k]].n), key="reference")

if kind is None:
    st.title("Bias audit")
data_banner(audit)
if audit.has_outcomes:
    st.markdown("**OFI** (Objective Fairness Index) = Bᵢ − Bⱼ, the difference of marginal benefits "
                "B = (FP − FN)/n: how much more benefit a group gets than its actual labels warrant. A *false positive* "
                "is a favourable decision the label says was not earned (a loan to someone who then defaulted); a "
                "*false negative* a favourable decision withheld from someone the label says had earned it (a good "
                "payer refused). "
                "**OFI beyond the tolerance: the algorithm is at fault. OFI within it with DI beyond the four-fifths band: "
                "a systemic disparity** (different base rates) that disparate impact alone cannot tell apart. A difference "
                "shown to exist but not to exceed the tolerance reads *materiality unclear*. The intervals beside the "
                "verdicts are adjusted for the number of pairs and labelled with their level.")
else:
    st.markdown("**Decisions alone**: each group's **selection rate** (the share given the favourable decision) and "
                "the **impact ratio** (a group's rate over the other's) against the four-fifths rule, with intervals "
                "adjusted for the number of pairs.")

@st.cache_data(show_spinner="Building the report…", max_entries=4, ttl=cached.TTL_S)
def audit_report(_audit: Audit, fingerprint: str, reference: str, settings: VerdictSettings,  # type: ignore[no-untyped-def]
                 model: str, period: str, _trend=None, trend_key: tuple = (),
                 score_name: str | None = None, score_digest: str | None = None, _scores=None,
                 _analysis=None, analysis_key: tuple = (), data_used: tuple = (None, "")):
    """Shared by the sessions: keyed by everything the report prints (the audit's content hash covers its groups,
    cells, source, notes, what positive means, whether that was declared, and the provenance), every setting,
    the trend's identity (its saved audits' ids and periods; the trend is judged at the same settings) and the
    Local Law 144 score's name and content hash with the rows' labels and groups (:func:`ui.cached.score_digest`)."""
    return report.build(_audit, reference=reference, settings=settings, model=model,
                        period=period, trend=_trend, scores=_scores, score_name=score_name or "",
                        score_analysis=_analysis, data_used=data_used[0], test_data_reason=data_used[1])


@st.fragment
def report_downloads(audit: Audit, reference: str, settings: VerdictSettings,
                     score: tuple[str, np.ndarray, str] | None = None) -> None:
    """The report's downloads; typing a model name or period reruns this part alone. ``score``: the Local Law 144
    summary's scoring rate of that score (name, values, content hash), as chosen in its expander."""
    st.caption(report_contents(audit.has_outcomes))
    m1, m2 = st.columns(2)
    model = m1.text_input("Model name and version", max_chars=120, key="report-model",
                          placeholder="e.g. credit scorecard v3.2", help="Printed in the report's header and settings.")
    period = m2.text_input("Period the data cover", max_chars=120, key="report-period",
                           placeholder="e.g. 2025-01-01 to 2025-06-30")
    if model.strip() or period.strip():
        st.caption("The report's header names " + " and ".join(
            f"the {what} “{md_escape(value.strip())}”" for what, value in (("model", model), ("period", period))
            if value.strip()) + ".")

    trend, trend_key = saved.opened_trend(settings)   # opened from the store: its model's trend
    if trend is not None:
        st.caption(f"Opened from the saved audits: the report carries the model's trend across its "
                   f"{len(trend.periods)} saved periods (" + ", ".join(md_escape(p) for p in trend.periods) + ").")
    if score is not None:
        st.caption(f"The report's Local Law 144 summary gives the scoring rate of “{md_escape(score[0])}”, as chosen "
                   "under Local Law 144 summary.")

    name, values, digest = score if score is not None else (None, None, None)
    shown_on, analysis = st.session_state.get(SCORE_ANALYSIS, (None, None))
    analysis = analysis if shown_on == audit.fingerprint and audit.has_outcomes else None   # this data's, or none
    if analysis is not None:
        st.caption(f"The report's Scores section gives “{md_escape(analysis.score_name)}” at the threshold "
                   f"{analysis.threshold:g}, as last shown under Scores.")
    key = () if analysis is None else (analysis.score_name, analysis.threshold, analysis.alpha,
                                       str(analysis.calibration.attrs.get("strategy")))

    data_used = declared()   # the user's declaration under "Publish the Local Law 144 summary"
    st.caption(data_used_caption() + " The report says so.")

    def built():  # type: ignore[no-untyped-def]
        return audit_report(audit, audit.fingerprint, reference, settings, model, period,
                            trend, trend_key, name, digest, values, analysis, key, data_used)  # cached

    r1, r2, r3 = st.columns(3)
    r1.download_button("Audit report (HTML)", data=or_failure(lambda: built().html(), "audit report"), file_name="fairness_audit_report.html",
                       mime="text/html", icon=":material/download:", key="report-html", on_click="ignore")
    r2.download_button("Numbers (JSON)", data=or_failure(lambda: built().to_json(), "JSON report"), file_name="fairness_audit_report.json",
                       mime="application/json", icon=":material/download:", key="report-json", on_click="ignore")
    r3.download_button("Tables (CSV, zip)", data=or_failure(lambda: built().csv_zip(), "tables zip"), file_name="fairness_audit_tables.zip",
                       mime="application/zip", icon=":material/download:", key="report-zip", on_click="ignore")


@st.fragment
def metric_across_groups(audit: Audit) -> None:
    """The picker of a single-group metric and its chart: a new pick reruns this part alone."""
    shown = st.selectbox("Plot a metric across groups", metrics.NAMES, index=metrics.NAMES.index("B"),
                         key="group-metric", format_func=lambda k: f"{k} — {metrics.info(k).long_name}")
    metric_fig = cached.metric_chart(audit, shown)
    chart(metric_fig, f"{shown.lower()}_by_group.html", key="group-metric-chart", download_key="group-metric-html")


@st.fragment
def other_comparison(audit: Audit, reference: str) -> None:
    """Any other comparison of Table 3.2: a new pick reruns this part alone."""
    others = [k for k in bias.NAMES if k not in ("OFI", "DI")]  # both are drawn above
    name = st.selectbox("Comparison", others, index=others.index("DPPL"), key="comparison",
                        format_func=lambda k: f"{k} — {bias.info(k).long_name}")
    c1, c2 = st.columns([3, 2])
    with c1:
        fig, pair = cached.comparison(audit, name)
        chart(fig, f"{name.lower()}_heatmap.html", key="metric-heatmap", download_key="metric-html")
        csv_download(pair, f"{name.lower()}_pairwise.csv", f"Download {name} matrix (CSV)")
    with c2:
        st.markdown(f"**{name}** = {bias.info(name).formula}; pivot {bias.info(name).pivot:g}. "
                    "A greater score means more bias toward group i.")
        vs_ref = cached.versus_reference(audit, reference)
        st.markdown(f"**Each group vs {md_escape(reference)}** (all comparisons)")
        st.dataframe(styled(vs_ref, 3), width="stretch", key="vs-reference")
        csv_download(vs_ref, f"vs_{reference}.csv", "Download one-vs-reference (CSV)",
                     names={"reference group": reference})


ll144_scores = session_scores(audit)
#: The Scores view's last analysis (the report's Scores section follows it).
SCORE_ANALYSIS = "score-analysis"
ll144_score = chosen_score(audit, ll144_scores) if ll144_scores else None

with st.expander("Download the audit report", icon=":material/description:"):
    report_downloads(audit, reference, settings, ll144_score)

with st.expander("Save this audit", icon=":material/save:"):
    saved.save_form(audit, settings)

with st.expander("Local Law 144 summary", icon=":material/gavel:"):
    if ll144_scores:
        st.radio("Rate per category", [DECISIONS, *ll144_scores], key=LL144_RATE, horizontal=True,
                 format_func=lambda o: option_label(o, lambda name: f"scoring rate ({md_escape(name)})"),
                 help="Local Law 144 asks for the selection rate of binary decisions or, for scores, the scoring "
                      "rate: the share of a category scoring above the whole sample's median. The downloaded "
                      "report follows this choice.")
    score_name, score_values, score_hash = ll144_score if ll144_score is not None else (None, None, None)
    ll144 = cached.ll144(audit, settings, scores=score_values, score_name=score_name, digest=score_hash)
    st.caption(md_escape(regulatory.rules_text(ll144)))
    st.dataframe(styled(ll144, 3), width="stretch", hide_index=True, key="ll144")
    if score_name is None:
        csv_download(ll144, "ll144_summary.csv", "Download the Local Law 144 summary (CSV)", index=False)
    else:
        csv_download(ll144, f"ll144_summary_scoring_rate_{score_name}.csv",
                     f"Download the Local Law 144 summary, scoring rate of “{md_escape(score_name)}” (CSV)",
                     key="ll144-scoring-csv", index=False, names={"score": score_name})

with st.expander("Publish the Local Law 144 summary (one page, HTML and CSV)", icon=":material/public:"):
    publish_section(ll144)

if not audit.has_outcomes:
    decisions_view(audit, base_audit() if kind is None else audit, settings, reference)
    st.stop()

#: Tab labels double as the ``?view=`` query parameter, so a link can open any tab; "Scores" when the rows carry a
#: score (calibration, ROC and the threshold sweep by group).
TABS = ("Group fairness", "Inequality across individuals", "Stability and uncertainty", "Scores")
tab_groups, tab_gei, tab_virny, *tab_scores = st.tabs(TABS if ll144_scores else TABS[:3], key="view",
                                                      bind="query-params")

if tab_groups.open:
    with tab_groups:
        read = cached.verdicts_read(audit, settings, reference)
        verdicts, figures = read.table, cached.pair_figures(audit, settings, reference)
        if audit.attributes:   # each attribute's own answer first: Holm over every intersection can drown it
            st.subheader("Each attribute alone")
            for attribute in audit.attributes:
                alone = cached.verdicts_read(audit.marginal(attribute), settings)
                with st.container(border=True):
                    st.markdown(f"**By {md_escape(attribute)} alone**\n\n" + "\n".join(
                        f"- *{md_escape(q)}* {md_escape(a)}" for q, a in alone.answers["text"].items()))
            st.subheader("Intersections")
        st.subheader("Verdict per pair")
        verdict_summary(verdicts)
        questions_panel(audit, verdicts, read.answers)
        st.markdown(f"**What the numbers say.** {md_escape(read.findings)}")

        chart(figures["scatter"], "ofi_vs_di.html", key="ofi-di-scatter", download_key="scatter-html")
        chart(figures["forest"], f"ofi_vs_{reference}.html", key="ofi-forest", download_key="forest-html",
              names={"reference group": reference})

        if len(verdicts) > MAX_VERDICT_ROWS:
            st.caption(f"Showing the {MAX_VERDICT_ROWS:,} most significant of {len(verdicts):,} pairs; the CSV has all.")
        st.dataframe(styled(read.shown, 3, P_FORMATS), width="stretch", hide_index=True, key="verdicts",
                     height="content" if len(read.shown) <= 30 else "auto",
                     column_config={"reading": st.column_config.TextColumn(width="large"),
                                    "pair": st.column_config.TextColumn(pinned=True)})
        csv_download(verdicts, "pair_verdicts.csv", "Download verdicts with every number (CSV)", index=False)

        chart(figures["ofi"], "ofi_heatmap.html", key="ofi-heatmap", download_key="ofi-html")
        chart(figures["di"], "di_heatmap.html", key="di-heatmap", download_key="di-html")

        by_group = cached.groups(audit)
        chart(by_group.benefit, "benefit_chart.html", key="benefit-chart", download_key="benefit-html")

        st.subheader("Single-group metrics")
        st.caption("All 19 single-group metrics per group (formulas under Metric definitions). “undefined” means a zero denominator; the reasons are listed "
                   "below the table.")
        st.dataframe(styled(by_group.table), width="stretch", key="group-table")
        csv_download(by_group.table, "group_metrics.csv", "Download group metrics (CSV)")
        reasons = by_group.reasons
        if len(reasons):
            with st.expander(f"Why {len(reasons)} values are undefined"):
                st.dataframe(reasons, width="stretch", hide_index=True)
                csv_download(reasons, "undefined_reasons.csv", "Download reasons (CSV)", index=False)
        metric_across_groups(audit)
        with st.expander("Metric definitions"):
            st.dataframe([{"metric": k, "name": metrics.info(k).long_name, "family": metrics.info(k).family,
                           "formula": metrics.info(k).formula} for k in metrics.NAMES], hide_index=True, width="stretch")

        st.subheader("Every other comparison of Table 3.2")
        other_comparison(audit, reference)

        st.markdown("**Properties** (the thesis's Table 3.2): OBJ objective testing · R real-valued · DIR directed · "
                    "SYM symmetric · BND bounded · ALL defined everywhere. Only OFI has all six.")
        props = cached.properties()
        st.dataframe(props.replace({True: "✓", False: "✗"}), width="stretch", height="content", key="properties")
        csv_download(props, "metric_properties.csv", "Download properties (CSV)")

if tab_gei.open:
    with tab_gei:
        inequality_section(audit, reference)

if tab_virny.open:
    with tab_virny:
        stability_section(audit, reference)

if tab_scores and tab_scores[0].open:
    with tab_scores[0]:
        st.session_state[SCORE_ANALYSIS] = (audit.fingerprint, scores_view.render(audit, ll144_scores, alpha=settings.alpha))
