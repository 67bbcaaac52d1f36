"""Smoothing: Cross-Prior Smoothing and additive smoothing of the loaded groups, and exact error curves
that show, per subsample size, how much error each smoother removes."""

import streamlit as st

from fairness_core import metrics, plots, smoothing
from ui import jobs
from ui.state import outcomes_or_stop, data_banner, page_setup
from ui.widgets import chart, csv_download, md_escape, require, styled

ERR_KEY = "err"
audit = page_setup("Smoothing", heading="Smoothing")
outcomes_or_stop(audit, "Smoothing")

data_banner(audit)
st.markdown(
    "Small groups' metrics are noisy and often undefined. **Cross-Prior Smoothing** (CPS, the small-data paper's Algorithm 1) "
    "borrows strength from the rest of the data: each cell becomes c + λ·r_c, with r the other groups' "
    "normalized confusion matrix, rescaled to the group's n. **Additive smoothing** adds ε to every cell "
    "(ε = 1e-10 “bashful”, ε = 1 add-one).")

with st.expander("When to use CPS (the small-data paper, §6.5)", icon=":material/menu_book:"):
    st.markdown(
        "- **The prior must be reasonable**: CPS helps when the rest of the data is expected to resemble the "
        "group more than a uniform prior (add-one) does. It pulls every group toward the others, so it also "
        "shrinks real differences: audit with raw scores and the MATCH test, use CPS to stabilize estimates.\n"
        f"- **Reference size**: the reference should have n ≥ {smoothing.MIN_REFERENCE_N}; below ~50 it carries "
        "its own sample-size noise.\n"
        "- **λ**: 5–20 worked in the papers' experiments; larger λ trades variance for bias "
        "(bias λ/(n+λ)·(p′ − p), variance n·p(1 − p)/(n + λ)² per cell, the small-data paper's Theorem 6.1).")

# --- the loaded groups, raw vs smoothed --------------------------------------------------------
st.subheader("Your groups, raw and smoothed")
c1, c2, c3 = st.columns([2, 2, 4])
method = c1.radio("Smoother", ["CPS", "additive"], horizontal=True, key="sm-method")
if method == "CPS":
    lam = c2.slider("λ (prior weight)", 0.0, 50.0, 10.0, 0.5, key="sm-lambda")
    smoother = smoothing.Smoother("cps", lam)
else:
    eps = c2.select_slider("ε", [1e-10, 0.01, 0.1, 0.5, 1.0], value=1.0, key="sm-eps",
                           format_func=lambda e: f"{e:g}")
    smoother = smoothing.Smoother("additive", eps)
chosen = c3.multiselect("Metrics", metrics.NAMES, default=["TPR", "FPR", "PPV", "MCC", "PT"], key="sm-metrics")
require(chosen, "metric")

table = smoothing.smooth_groups(audit.cms, smoother, chosen)
small_ref = sorted({g for g, r in zip(table["group"], table["reference_n"]) if r < smoothing.MIN_REFERENCE_N})
if method == "CPS" and small_ref:
    st.warning(f"The reference for {md_escape(', '.join(small_ref))} has fewer than {smoothing.MIN_REFERENCE_N} individuals; "
               "CPS's prior is then noisy itself (the small-data paper, §6.5).", icon=":material/warning:")

moved_all = table.dropna(subset=["change"]).assign(size=lambda d: d["change"].abs())
if len(moved_all):
    top = moved_all.nlargest(1, "size").iloc[0]
    big = moved_all[moved_all["n"] >= 500]
    st.markdown(f"**What the numbers say.** The largest change: {md_escape(top['group'])} (n = {int(top['n']):,}) "
                f"{md_escape(top['metric'])} {top['raw']:.3f} → {top['smoothed']:.3f}. "
                + (f"Groups of 500 or more move by at most {big['size'].max():.4f}: smoothing matters for the small "
                   "ones." if len(big) else "Every group is under 500 rows: smoothing moves all of them."))

left, right = st.columns([3, 2])
with left:
    shown = st.selectbox("Plot", chosen, key="sm-plot-metric")
    fig = plots.smoothing_shift(table, shown)
    chart(fig, f"smoothing_{shown}.html", key="sm-shift")
with right:
    became = table[table["became_defined"]]
    undefined = int(table["raw"].isna().sum())
    st.metric("Undefined scores made defined", f"{len(became)} of {undefined}" if undefined else "none undefined",
              help="Scores with a zero denominator before smoothing, and how many smoothing defines.")
    if len(became):
        st.markdown("**Became defined:** " + "; ".join(f"{md_escape(g)} {k}" for g, k in zip(became["group"], became["metric"])))
    moved = table.dropna(subset=["change"]).assign(size=lambda d: d["change"].abs()).nlargest(5, "size")
    st.markdown("**Moved most** (|smoothed − raw|)")
    st.dataframe(styled(moved[["group", "metric", "raw", "smoothed", "change"]], 4), hide_index=True,
                 width="stretch", key="sm-moved")
st.dataframe(styled(table, 4), width="stretch", hide_index=True, key="sm-table", height=320)
csv_download(table, f"smoothed_{smoother.label.replace(' ', '_')}.csv", "Download raw vs smoothed (CSV)", index=False)

# --- the error experiment ----------------------------------------------------------------------
st.subheader("How much error does each smoother remove? (the thesis's Figs 4.4–4.6)")
st.markdown("Draw subsamples of size n from one group (with replacement, as the papers do), score them raw and "
            "smoothed, and measure the mean squared error against the whole group's score. **Exact** sums over "
            "every confusion matrix of size n with its multinomial probability; **Monte Carlo** draws seeded "
            "samples and shows its standard error. Undefined values are excluded and counted.")
e1, e2, e3, e4 = st.columns([2, 3, 2, 2])
# default: the smallest group with every cell > 0 (a group with, say, no FP has a constant FPR that no
# smoother can improve on; it stays selectable and the verdict table explains it)
full = [g for g in audit.groups if (audit.cms[g].as_array() > 0).all()] or audit.groups
smallest = min(full, key=lambda g: audit.cms[g].n)
group = e1.selectbox("Group", audit.groups, index=audit.groups.index(smallest), key="err-group",
                     format_func=lambda g: f"{g} (n = {audit.cms[g].n:,})")
err_metrics = e2.multiselect("Metrics", smoothing.EXPERIMENT_METRICS, default=["MCC", "FPR", "TPR", "PT"],
                             key="err-metrics")
lo, hi = e3.slider("n from … to", 5, 150, (5, 100), key="err-range")
mode = e4.radio("Mode", ["exact", "monte_carlo"], key="err-mode", horizontal=True,
                format_func=lambda k: "exact" if k == "exact" else "Monte Carlo")
draws = 10_000
if mode == "monte_carlo":
    draws = st.select_slider("Draws per n", [1_000, 10_000, 100_000], value=10_000, key="err-draws")
step = max(1, (hi - lo) // 40)
ns = tuple(range(lo, hi + 1, step))
params = (group, tuple(err_metrics), ns, mode, draws, tuple(audit.cms[group].as_array()),
          tuple(audit.rest_of(group).as_array()))

require(err_metrics, "metric")
results = st.session_state.setdefault("err-results", {})
job = jobs.finished(ERR_KEY)
if job is not None and st.session_state.get("err-job-params") not in results:
    results[st.session_state["err-job-params"]] = job.result
if params not in results:
    if st.button("Compute the error curves", type="primary", icon=":material/play_arrow:", key="err-train",
                 disabled=jobs.running(ERR_KEY)):
        cm, ref = audit.cms[group], audit.rest_of(group)
        run_ns, run_metrics, run_mode, run_draws = ns, list(err_metrics), mode, draws

        def curves(on_progress, should_stop):  # type: ignore[no-untyped-def]
            return smoothing.error_curves(
                cm, ref, run_ns, names=run_metrics, mode=run_mode, draws=run_draws, seed=0, should_stop=should_stop,
                on_progress=on_progress)

        if jobs.start(ERR_KEY, f"error curves for {group}", curves,
                      estimate=smoothing.estimate(run_ns, run_mode, run_draws)) is not None:
            st.session_state["err-job-params"] = params
            st.rerun()
    elif not jobs.running(ERR_KEY):
        st.caption(f"{len(ns)} sample sizes × {len(err_metrics)} metrics × 6 smoothers. Exact mode takes a few "
                   "seconds for the default range; it runs in the background with a Cancel button.")
    jobs.live_panel(ERR_KEY, lambda snap: None, interval=0.5)
if params in results:
    curves = results[params]
    for name, why in curves.attrs.get("dropped", {}).items():
        st.info(f"{name} is not plotted: {md_escape(why)}.", icon=":material/info:")
if params in results and not results[params].empty:
    curves = results[params]
    fig = plots.smoothing_curves(curves)
    chart(fig, f"smoothing_error_{group}.html", key="err-fig", names={"group": group})
    verdict = smoothing.cps_verdicts(curves)
    st.markdown("**Does CPS beat raw here?** The papers report CPS below raw for every metric and add-one "
                "inconsistent; for this group and range:")
    st.dataframe(verdict, hide_index=True, width="stretch", key="err-verdict",
                 column_config={"raw undefined at the smallest n": st.column_config.NumberColumn(format="percent")})
    st.caption(f"'Best' is the lowest MSE among smoothers defined in at least "
               f"{1 - smoothing.MAX_UNDEFINED_FOR_BEST:.0%} of the subsamples: an MSE over the few samples where a "
               "score happens to be defined says little.")
    st.caption("Where CPS loses, the group differs from the rest of the data: CPS's bias λ/(n+λ)·(p′ − p) then "
               "outweighs the variance it removes (a group with no false positives, say, scores FPR = 0 at every "
               "n raw, while CPS pulls it toward the others' FPR).")
    left, right = st.columns(2)
    with left:
        csv_download(verdict, f"cps_verdicts_{group}.csv", "Download the verdicts (CSV)", key="err-verdict-csv",
                     index=False, names={"group": group})
    with right:
        csv_download(curves, f"smoothing_error_{group}.csv", "Download the curves (CSV)", index=False,
                     names={"group": group})

# --- priors for a hidden group (the small-data paper's Table 2) ---------------------------------------------------
st.subheader("Which prior is closest to a group you cannot see? (the small-data paper's Table 2)")
hidden = st.selectbox("Hidden group", audit.groups, key="prior-group",
                      index=max(range(len(audit.groups)), key=lambda k: audit.cms[audit.groups[k]].n))
priors = smoothing.compare_priors(audit.cms[hidden], audit.rest_of(hidden))
st.dataframe(styled(priors, 3), hide_index=True, width="stretch", key="prior-table")
best = priors.iloc[2:]["L1 distance"].idxmin()
st.caption(f"Cell proportions of {md_escape(hidden)} against three priors with none of its data. Closest (L1): "
           f"**{priors.loc[best, 'row'].strip('|').split(' − ')[0]}**.")
csv_download(priors, f"priors_{hidden}.csv", "Download (CSV)", index=False, names={"hidden group": hidden})
