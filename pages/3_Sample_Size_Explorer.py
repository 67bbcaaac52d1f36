"""Sample-Size Explorer: is a small group's score meaningful? MATCH for the loaded data, exact
distributions over M(n), holes, the normal approximation and the class-imbalance paper's PMFs."""

import numpy as np
import pandas as pd
import streamlit as st

from fairness_core import imbalance, match, metrics, plots, sample_size
from fairness_core.vocabulary import ADJUSTMENTS, Reference
from fairness_core.reading import match_explain, match_findings
from ui.state import outcomes_or_stop, data_banner, page_setup
from ui.widgets import (BuiltIn, P_FORMATS, chart, csv_download, md_escape, option_label, require,
                        styled)

audit = page_setup("Sample-Size Explorer", heading="Sample-size explorer")
outcomes_or_stop(audit, "The Sample-Size Explorer")
# Built-in choices offered beside the groups: never equal to a group name, labelled unlike any group.
REST = BuiltIn(Reference.REST.value)
EQUALLY = BuiltIn("equally (the thesis's Fig. 4.2)")
THESIS_EXAMPLE = BuiltIn("thesis example (0.3, 0.1, 0.2, 0.4)")
SEED_P = (0.3, 0.1, 0.2, 0.4)  # Briscoe 2024, §4.5.4: p_TP, p_FN, p_FP, p_TN
N_CHOICES = (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 75, 100, 125, 150, 200)


# --- cached library calls (arguments are plain tuples so Streamlit can hash them) ---------------

@st.cache_data(show_spinner=False, max_entries=64)
def cdf_table(names: tuple[str, ...], ns: tuple[int, ...], ref: tuple[int, ...] | None):
    return sample_size.cdf_table(names, ns, None if ref is None else np.array(ref, dtype=float))


@st.cache_data(show_spinner=False, max_entries=32)
def hole_table(names: tuple[str, ...], ns: tuple[int, ...]):
    return sample_size.hole_table(names, ns)


@st.cache_data(show_spinner=False, max_entries=32)
def spread(metric: str, pop: tuple[int, ...], ns: tuple[int, ...], draws: int):
    return (sample_size.monte_carlo(metric, np.array(pop), ns, draws=draws, seed=0),
            sample_size.exact_spread(metric, np.array(pop), ns))


@st.cache_data(show_spinner=False, max_entries=32)
def normality(metric: str, ref: tuple[float, ...], ns: tuple[int, ...]):
    return sample_size.normality(metric, ns, np.array(ref))


@st.cache_data(show_spinner=False, max_entries=32)
def fairness_pmfs(n: int, ir: float, gr: float):
    return [sample_size.fairness_pmf(k, n, ir, gr) for k in imbalance.MEASURES]


@st.cache_data(show_spinner=False, max_entries=32)
def imbalance_summary(n: int, gr: float):
    return imbalance.summary_across_ir(n, gr)


def group_label(g: str) -> str:
    return f"{g} (n = {audit.cms[g].n:,})"


def quoted_group(g: str) -> str:
    """A group in a picker beside built-in choices: in quotation marks, so it never reads like one."""
    return f"“{g}” (n = {audit.cms[g].n:,})"


def reference_choice(key: str, label: str = "Reference") -> str | Reference:
    choice = st.selectbox(label, [REST, *audit.groups], key=key,
                          format_func=lambda o: option_label(o, quoted_group),
                          help="MATCH asks: could a group of this size, drawn from the reference, score like this? "
                               "The default reference for each group is all other groups pooled.")
    return Reference.REST if choice == REST else choice


def ns_choice(key: str, default: tuple[int, ...], label: str = "Sample sizes n") -> tuple[int, ...]:
    ns = st.multiselect(label, N_CHOICES, default=list(default), key=key)
    require(ns, "sample size")
    return tuple(sorted(ns))


data_banner(audit)
st.markdown("Small groups make scores jagged, sometimes undefined, and easy to misread. The **MATCH test** "
            "asks whether a group's score is plausible for a group of its size drawn from a reference; the other "
            "tabs show why: the exact distribution of every metric as n grows, the undefined “holes”, and how "
            "fairness measures behave under class and group imbalance.")

#: Tab labels double as the ``?tab=`` query parameter, so a link can open any tab.
TABS = ("MATCH for your data", "Distributions as n grows", "Holes", "Normal approximation", "Class and group imbalance")
tab_match, tab_cdf, tab_holes, tab_normal, tab_imb = st.tabs(TABS, key="tab", bind="query-params")

# --- MATCH ---------------------------------------------------------------------------------------
if tab_match.open:
    with tab_match:
        c1, c2, c3, c4, c5 = st.columns([3, 2, 1.2, 1, 1.4])
        chosen = c1.multiselect("Metrics", match.SUPPORTED, default=["PPR", "TPR", "FPR", "B"], key="match-metrics",
                                help="Binomial metrics (ACC, PREV, PPR, INACC, NPREV, PNR), the marginal benefit B "
                                     "and the joint ratio metrics (TPR … FOR).")
        with c2:
            reference = reference_choice("match-reference")
        alpha = c3.select_slider("α", [0.001, 0.01, 0.05, 0.10], value=0.05, key="match-alpha")
        holm = c4.toggle(ADJUSTMENTS["holm"].name, value=True, key="match-holm",
                           help="Holm–Bonferroni controls the chance of any false “differs” in the whole table "
                                "at α. Off: each test alone at α.")
        population = c5.toggle("Population", value=False, key="match-population",
                               help="Is the reference a known population? Off (default): the reference is itself a "
                                    "sample, so its sampling error counts and the p-value does not depend on which "
                                    "group is called the reference — the same p the Bias Audit prints for that pair. "
                                    "On: the reference's rates are known exactly (the one-sample MATCH test of "
                                    "Briscoe 2024).")
        reference_is = "population" if population else "sample"
        adjust = "holm" if holm else "none"
        require(chosen, "metric")
        table = audit.match_table(chosen, reference=reference, alpha=alpha, adjust=adjust, reference_is=reference_is)
        st.caption("Two-sample tests: both the group and its reference are samples." if not population else
                   "One-sample MATCH tests: the reference's rates are taken as a known population.")
        differs = table["verdict"].eq("differs from the reference")
        same = table["verdict"].eq("indistinguishable from the reference")
        m1, m2, m3 = st.columns(3)
        m1.metric("Differ beyond small-sample noise", f"{int(differs.sum())} of {len(table)}")
        m2.metric("Indistinguishable from the reference", f"{int(same.sum())} of {len(table)}")
        m3.metric("Undefined", f"{int(table['verdict'].eq('undefined').sum())} of {len(table)}")
        st.markdown(f"**What the numbers say.** {md_escape(match_findings(table))}")
        chart(plots.match_overview(table, alpha), "match_overview.html", key="match-overview")
        st.dataframe(styled(table, 4, P_FORMATS), width="stretch", hide_index=True, key="match-table",
                     column_config={"percentile": st.column_config.NumberColumn(help="P(S ≤ observed) under the reference"),
                                    "note": st.column_config.TextColumn(width="medium")})
        csv_download(table, "match_tests.csv", "Download MATCH table (CSV)", index=False)

        st.subheader("One group, one metric, in detail")
        d1, d2 = st.columns(2)
        smallest = min(audit.groups, key=lambda g: audit.cms[g].n)
        groups = [g for g in audit.groups if g != reference]
        group = d1.selectbox("Group", groups, index=groups.index(smallest) if smallest in groups else 0,
                             key="match-group", format_func=group_label)
        metric = d2.selectbox("Metric", chosen, key="match-metric")
        cm = audit.cms[group]
        ref_cm = audit.reference_for(group, reference)
        result = match.test(metric, cm, ref_cm, reference_is=reference_is)
        one_sample = result if population else match.test(metric, cm, ref_cm, reference_is="population")
        ref_score = metrics.compute(metric, ref_cm)
        st.info(md_escape(match_explain(result, group, ref_score, alpha)), icon=":material/lightbulb:")
        x, mass, exact = match.reference_distribution(metric, cm.n, ref_cm)
        ref_name = f"{Reference.REST.value} (n = {ref_cm.n:,})" if reference is Reference.REST else f"“{reference}”"
        tail = "lower" if one_sample.cdf <= one_sample.sf else "upper"
        tail_p = min(one_sample.cdf, one_sample.sf)
        premise = "" if population else "if the reference were a known population: "
        fig = plots.pmf_bars(x, mass, f"{metric} of a group of n = {cm.n:,} drawn from {ref_name}",
                             subtitle=f"{premise}red: the {tail} tail P(S {'≤' if tail == 'lower' else '≥'} observed) "
                                      f"= {tail_p:.3g}; the two-sided one-sample p-value doubles it",
                             observed=one_sample.observed, tail=tail, p_value=one_sample.p_value, exact=exact,
                             x_title=metric)
        chart(fig, f"match_{metric}_{group}.html", "match-dist", names={"group": group})
        if not population:
            st.caption(f"The chart shows the one-sample view for intuition; the test above treats the reference as a "
                       f"sample too (two-sample p = {result.p_value:.3g}, one-sample p = {one_sample.p_value:.3g}).")
        st.markdown("**One-sample approximations beside exact** (error = method − exact)")
        methods = match.compare_methods(metric, cm, ref_cm)
        st.dataframe(styled(methods, 5, P_FORMATS), width="stretch", hide_index=True, key="match-methods",
                     column_config={"note": st.column_config.TextColumn(width="large")})
        csv_download(methods, f"match_methods_{metric}.csv", "Download (CSV)", index=False)
        st.caption("Exact: binomial CDF (binomial metrics), conditioning on FP + FN (B), conditioning on the "
                   "denominator K ≥ 1 (JRMs); all O(n). Normal uses the continuity correction and n in the "
                   "variance. The beta row is the thesis's shortcut, a posterior of the group's own rate — not "
                   "the reference's sampling distribution — shown only to measure its error.")

# --- distributions over M(n) ---------------------------------------------------------------------
if tab_cdf.open:
    with tab_cdf:
        c1, c2, c3 = st.columns([3, 3, 2])
        names = c1.multiselect("Metrics", metrics.NAMES, default=["ACC", "TPR", "MCC", "PT"], key="cdf-metrics")
        with c2:
            ns = ns_choice("cdf-ns", (5, 10, 20, 50))
        weighting = c3.selectbox("Every matrix of size n weighted", [EQUALLY, *audit.groups], key="cdf-weighting",
                                 format_func=lambda w: option_label(w, lambda g: f"as drawn from “{g}”"))
        require(names, "metric")
        ref = None if weighting == EQUALLY else tuple(int(c) for c in audit.cms[weighting].as_array())
        with st.spinner("Enumerating every confusion matrix…"):
            cdfs = cdf_table(tuple(names), ns, ref)
        fig = plots.metric_cdfs(cdfs)
        chart(fig, "metric_cdfs.html", key="cdf-fig", download_key="cdf-html")
        csv_download(cdfs, "metric_cdfs.csv", "Download CDF steps (CSV)", index=False)

        st.subheader("Spread of a group's score vs sample size (the thesis's Fig. 4.1)")
        s1, s2, s3, s4 = st.columns([2, 2, 2, 1])
        smallest = min(audit.groups, key=lambda g: audit.cms[g].n)
        group = s1.selectbox("Draw samples from", audit.groups, key="spread-group", format_func=group_label,
                             index=audit.groups.index(smallest))
        metric = s2.selectbox("Metric", metrics.NAMES, index=metrics.NAMES.index("PPR"), key="spread-metric")
        top = s3.slider("Largest n", 10, 150, 60, 5, key="spread-top")
        draws = s4.select_slider("Draws per n", [100, 300, 1000], value=300, key="spread-draws")
        sizes = tuple(range(1, top + 1))
        with st.spinner("Sampling and enumerating…"):
            mc, exact = spread(metric, tuple(int(c) for c in audit.cms[group].as_array()), sizes, draws)
        fig = plots.spread_vs_n(mc, exact, metric, group)
        chart(fig, f"spread_{metric}.html", key="spread-fig", download_key="spread-html")
        csv_download(exact, f"spread_{metric}_exact.csv", "Download exact quantiles (CSV)", index=False)
        st.caption(f"Dots: samples of each size drawn with replacement from {md_escape(group)} ({draws} per n, up to 100 "
                   "drawn on the chart); bands and median: the exact "
                   "multinomial quantiles over all confusion matrices of that size (conditional on a defined score). "
                   "Undefined samples are not drawn; their share is in the hover and the CSV.")

# --- holes ---------------------------------------------------------------------------------------
if tab_holes.open:
    with tab_holes:
        c1, c2 = st.columns([3, 2])
        names = c1.multiselect("Metrics", [k for k in metrics.NAMES if k not in metrics.BINOMIAL and k != "B"],
                               default=["TPR", "F1", "MCC", "PT", "F1_ORIG"], key="holes-metrics")
        lo, hi = c2.slider("n from … to", 3, 120, (3, 60), key="holes-range")
        require(names, "metric")
        ns = tuple(sorted(set(np.unique(np.linspace(lo, hi, 30).round().astype(int)).tolist())))
        holes = hole_table(tuple(names), ns)
        fig = plots.hole_counts(holes)
        chart(fig, "holes.html", key="holes-fig", download_key="holes-html")
        st.markdown("Binomial metrics and B have no holes; F1 one (the all-TN matrix); each JRM n + 1; MCC 4n; "
                    "F1_ORIG C(n+2, 2). **PT**: the thesis's upper bound e^γ·n·ln ln n + 0.6483·n/ln ln n is false "
                    "for every n ≥ 4 (enumeration above it); PT is undefined on the 4n MCC holes plus every matrix "
                    "with all cells ≥ 1 and TP·TN = FP·FN.")
        not_applicable = {"theorem_upper": lambda v: "—" if not np.isfinite(v) else f"{v:,.1f}"}
        st.dataframe(styled(holes, 4, not_applicable), width="stretch", hide_index=True, key="holes-table",
                     column_config={"theorem": st.column_config.NumberColumn(help="the thesis's Theorem 4.3 count; for "
                                                                             "PT its lower bound 2n + 2"),
                                    "theorem_upper": st.column_config.NumberColumn(
                                        help="PT only: the thesis's upper bound, false for n ≥ 4")})
        csv_download(holes, "holes.csv", "Download hole counts (CSV)", index=False)

# --- normal approximation ------------------------------------------------------------------------
if tab_normal.open:
    with tab_normal:
        c1, c2, c3 = st.columns([1, 2, 3])
        metric = c1.radio("Metric", ["ACC", "B"], key="normal-metric", horizontal=True)
        source = c2.selectbox("Cell probabilities", [THESIS_EXAMPLE, *audit.groups], key="normal-source",
                              format_func=lambda s: option_label(s, lambda g: f"from “{g}”"))
        with c3:
            ns = ns_choice("normal-ns", (5, 10, 30, 100))
        probs = SEED_P if source == THESIS_EXAMPLE else tuple((audit.cms[source].as_array() / audit.cms[source].n).tolist())
        st.caption("p_TP, p_FN, p_FP, p_TN = " + ", ".join(f"{p:.3f}" for p in probs))
        pmfs = {n: sample_size.exact_pmf(metric, n, np.array(probs)) for n in ns}
        fig = plots.normal_convergence(metric, pmfs)
        chart(fig, f"normal_{metric}.html", key="normal-fig", download_key="normal-html")
        table = normality(metric, probs, (1, 2, 3, 5, 8, 10, 15, 20, 30, 50, 75, 100, 200, 300, 500, 1000, *ns))
        table = table.drop_duplicates("n").sort_values("n", ignore_index=True)
        fig2 = plots.normality_stats(table, metric)
        chart(fig2, f"normal_{metric}_stats.html", "normal-stats")
        st.markdown(f"{metric}·n is a sum of n independent draws, so it tends to normal: skewness falls like "
                    "1/√n and excess kurtosis like 1/n. The Berry–Esseen theorem bounds the plain normal CDF's error by "
                    "C0·ρ/(σ³√n); the exact error, computed here over the whole support, sits well below it, and the "
                    "continuity correction the MATCH test uses cuts it further.")
        st.dataframe(styled(table, 5), width="stretch", hide_index=True, key="normal-table")
        csv_download(table, f"normality_{metric}.csv", "Download (CSV)", index=False)

# --- Properties of fairness measures ------------------------------------------------------------------------------------
if tab_imb.open:
    with tab_imb:
        st.markdown("Two groups, every pair of confusion matrices with the chosen size, share of positives (IR) "
                    "and share of the protected group (GR) taken as equally likely (the class-imbalance paper). Each measure is the "
                    "protected group's score minus the unprotected group's; the counts are exact.")
        c1, c2, c3 = st.columns(3)
        n = c1.slider("n (data set size)", 4, 60, 24, 4, key="imb-n")
        ir_k = c2.select_slider("IR (share of positives)", list(range(n + 1)), value=n // 2, key=f"imb-ir-{n}",
                                format_func=lambda k: f"{k}/{n} = {k / n:.3f}")
        gr_k = c3.select_slider("GR (share in the protected group)", list(range(n + 1)), value=n // 2, key=f"imb-gr-{n}",
                                format_func=lambda k: f"{k}/{n} = {k / n:.3f}")
        # the sliders are keyed by n, so a new n starts them at n/2 instead of keeping a count that now
        # means a different share
        with st.spinner("Counting every pair of confusion matrices…"):
            pmfs = fairness_pmfs(n, ir_k / n, gr_k / n)
            summary = imbalance_summary(n, gr_k / n)
        fig = plots.imbalance_histograms(pmfs)
        chart(fig, "imbalance_histograms.html", "imb-hist")
        fig2 = plots.imbalance_lines(summary, gr_k / n)
        chart(fig2, "imbalance_lines.html", "imb-lines")
        st.dataframe(styled(summary, 4), width="stretch", hide_index=True, key="imb-table", height=300)
        csv_download(summary, f"imbalance_n{n}_gr{gr_k}.csv", "Download P(perfect), P(undefined) across IR (CSV)",
                     index=False)
        exact_rows = [{"measure": p.measure, "value": v, "tuples": c, "probability": c / p.total}
                      for p in pmfs for v, c in zip(p.values.tolist(), p.counts.tolist())]
        exact_rows += [{"measure": p.measure, "value": np.nan, "tuples": p.undefined, "probability": p.p_undefined}
                       for p in pmfs]
        csv_download(pd.DataFrame(exact_rows), f"imbalance_pmf_n{n}_ir{ir_k}_gr{gr_k}.csv",
                     "Download the exact PMFs (CSV; undefined rows have no value)", index=False)
