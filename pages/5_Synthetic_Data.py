"""Synthetic Data: Conditional HydraGAN with diversity quotas, trained live, judged by OFI."""

import io

import pandas as pd
import streamlit as st

from fairness_core import datasets, plots
from fairness_core.statistics import augmentation
from fairness_core.io import DataValidationError
from fairness_core.progress import of_kind
from models import experiment, hydragan
from ui import jobs
from ui.state import page_setup
from ui.widgets import csv_download, figure_with_downloads, md_escape, styled

audit = page_setup("Synthetic Data")
KEY = "gan"
UPLOADED = "uploaded"


@st.cache_data(show_spinner=False)
def demo(key: str) -> tuple[pd.DataFrame, str, list[str]]:
    return datasets.demo_table(key)


def uploaded_table() -> tuple[pd.DataFrame, str, list[str]] | None:
    rows = audit.rows
    if rows is None or rows.features is None or not audit.has_outcomes:
        return None
    df = rows.features.copy()
    df.insert(0, "group", rows.groups.astype(str))
    df["label"] = rows.y.astype(int)
    return df, "label", ["group"]


st.title("Synthetic data: Conditional HydraGAN")
st.markdown("Underrepresented groups get worse models. **Conditional HydraGAN** (Briscoe, The Art of Fairness, §3.5) generates synthetic rows "
            "for any mix of protected groups you ask for (the *condition* makes the group quotas exact) while a "
            "Wasserstein critic keeps each group's rows realistic. The share of a chosen category (the label) in "
            "every group is set to a target: exactly, by making the category part of the condition (the default), "
            "or by the thesis's *diversity* objective. A classifier two-sample test then asks whether the synthetic "
            "rows can be told from held-out real ones, and a classifier trained on real data and on synthetic data "
            "(only, as in the thesis, or added to the real rows) is tested on held-out real rows: **OFI says whether "
            "the synthetic rows reduced algorithmic bias for each group**.")

sources = {k: v for k, v in datasets.ROW_DEMOS.items()}
if uploaded_table() is not None:
    sources[UPLOADED] = "Your uploaded rows (groups, label and feature columns)"
c1, c2 = st.columns([2, 3])
source = c1.selectbox("Rows", list(sources), format_func=sources.get, key="gan-source",
                      help="Uploaded row-level predictions appear here when you mapped feature columns on the Upload page.")
data, label, protected = demo(source) if source != UPLOADED else uploaded_table()
chosen = c2.multiselect("Protected attributes forming the condition", protected, default=protected[:1],
                        key=f"gan-protected-{source}")
if not chosen:
    st.warning("Pick at least one protected attribute.", icon=":material/warning:")
    st.stop()
st.caption(f"{len(data):,} rows · label **{md_escape(label)}** (1 = the beneficial outcome) · "
           f"features: {md_escape(', '.join(str(c) for c in data.columns if c not in (*protected, label)))}")

try:
    counts = hydragan.check_conditions(data, chosen)
except DataValidationError as exc:
    st.error(md_escape(str(exc)), icon=":material/error:")
    st.stop()
left, right = st.columns(2)
with left:
    st.markdown("**Group quotas** (shares of the synthetic rows; uniform by default — edit the last column)")
    quota_df = pd.DataFrame({"condition": counts.index, "real rows": counts.to_numpy(),
                             "real share": counts.to_numpy() / counts.sum(), "target share": 1 / len(counts)})
    quota_df = st.data_editor(quota_df, hide_index=True, width="stretch", key=f"gan-quota-{source}-{'|'.join(chosen)}",
                              disabled=["condition", "real rows", "real share"],
                              column_config={"real share": st.column_config.NumberColumn(format="percent"),
                                             "target share": st.column_config.NumberColumn(min_value=0.0, step=0.01)})
candidates = [c for c in data.columns if c not in chosen
              and (c == label or not pd.api.types.is_numeric_dtype(data[c]) or data[c].nunique() <= 10)]
with right:
    div_col = st.selectbox("Diversity category (its share in every group is set to the target)", candidates,
                           index=candidates.index(label), key=f"gan-div-{source}")
    cats = data[div_col].astype(str).value_counts().sort_index()
    preset = st.radio("Target", ["pooled real shares", "uniform"], horizontal=True, key="gan-divpreset",
                      help="Pooled: every group gets the whole data's mix (group base rates converge). Uniform: "
                           "equal shares, the thesis's §3.5 target — it changes the base rate itself.")
    div_df = pd.DataFrame({"category": cats.index, "real share": cats.to_numpy() / cats.sum()})
    div_df["target share"] = div_df["real share"].round(4) if preset.startswith("pooled") else 1 / len(cats)
    div_df = st.data_editor(div_df, hide_index=True, width="stretch",
                            key=f"gan-divtarget-{source}-{div_col}-{preset}",
                            disabled=["category", "real share"],
                            column_config={"real share": st.column_config.NumberColumn(format="percent"),
                                           "target share": st.column_config.NumberColumn(min_value=0.0, step=0.01)})

with st.expander("Training budget and objective weights", icon=":material/tune:"):
    s1, s2, s3, s4 = st.columns(4)
    steps = int(s1.number_input("Generator steps", 10, 20000, hydragan.HydraConfig.steps, 100, key="gan-steps",
                                help="Speed depends on the machine, the columns and what else runs: on one core of a "
                                     "two-core machine, about 25 steps/s for Adult by race (the default run, training "
                                     "and evaluation, about 100 s). The progress bar estimates the time left from the "
                                     "recent pace."))
    batch = int(s2.select_slider("Batch size", [64, 128, 256, 512], 256, key="gan-batch"))
    label_condition = st.session_state.get("gan-labelcond", True)
    div_weight = float(s3.number_input("Diversity weight", 0.0, 1000.0, 10.0, 1.0, key="gan-divw",
                                       disabled=label_condition,
                                       help="The thesis's diversity objective (used when the category is not part "
                                            "of the condition). 0 switches it off; realism alone then keeps each "
                                            "group's real label mix."))
    gp_weight = float(s4.number_input("Gradient-penalty weight λ", 0.0, 100.0, 10.0, 1.0, key="gan-gp"))
    s1, s2, s3, s4 = st.columns(4)
    lr = float(s1.select_slider("Learning rate", [5e-5, 1e-4, 2e-4, 5e-4, 1e-3], hydragan.HydraConfig.lr,
                                key="gan-lr"))
    seed = int(s2.number_input("Seed", 0, 10**6, 0, key="gan-seed"))
    n_syn = int(s3.number_input("Synthetic rows (0 = as many as real training rows)", 0, 10**6, 0, 1000,
                                key="gan-nsyn"))
    n_eval = int(s4.number_input("Classifier seeds", 1, 10, 3, key="gan-evalseeds"))
    s1, s2, s3 = st.columns(3)
    mode = s1.radio("Augmented classifier trains on", experiment.MODES, key="gan-mode", horizontal=True,
                    help="Synthetic only: the thesis's setting (the classifier never sees a real row). Real + "
                         "synthetic: the synthetic rows are added to the real training rows.")
    epochs = int(s2.number_input("Classifier epochs", 1, 100, 8, key="gan-epochs"))
    sees = s3.toggle("Classifier sees the protected attributes", value=True, key="gan-sees")
    st.toggle("Condition on the diversity category (its target met exactly in every group)", value=True,
              key="gan-labelcond",
              help="On: the category joins the condition, so each group's synthetic rows are split by the target "
                   "to within one row, large groups included. Off: the thesis's diversity objective pulls the "
                   "generated shares toward the target during training, which moves small groups more than large.")


def shares_from(table: pd.DataFrame, name_col: str, what: str) -> dict[str, float] | None:
    try:
        return hydragan.shares_from_table(table, name_col, "target share", what)
    except DataValidationError as exc:
        st.error(md_escape(str(exc)), icon=":material/error:")
        return None


quota = shares_from(quota_df, "condition", "Group quotas")
div_target = shares_from(div_df, "category", "Diversity targets")
config = None
if quota is not None and div_target is not None:
    config = experiment.ExperimentConfig(
        gan=hydragan.HydraConfig(condition_columns=list(chosen), diversity_column=div_col,
                                 diversity_target=div_target, steps=steps, batch_size=batch,
                                 diversity_weight=div_weight, gp_weight=gp_weight, lr=lr, seed=seed,
                                 label_condition=label_condition),
        label=label, quota=quota, n_synthetic=n_syn or None, mode=mode,
        eval_seeds=list(range(seed, seed + n_eval)), epochs=epochs, classifier_sees_protected=sees, threads=1)

busy = jobs.running(KEY)
if st.button("Train and evaluate", type="primary", key="gan-train", icon=":material/play_arrow:",
             disabled=busy or config is None):
    frame = data.copy()
    job = jobs.start(KEY, f"HydraGAN on {sources[source]}",
                     lambda on_progress, should_stop: experiment.run(config, frame, on_progress, should_stop),
                     lane="torch", estimate=experiment.estimate(config, frame))
    if job is not None:
        st.session_state["gan-description"] = (f"{sources[source]}; condition {' × '.join(chosen)}; "
                                               f"{steps:,} steps; {div_col} toward the {preset} "
                                               + ("(exact, by the condition)" if label_condition
                                                  else f"(diversity objective, weight {div_weight:g})")
                                               + f"; after: trained on {mode}")
        st.rerun()


def draw(snap) -> None:  # type: ignore[no-untyped-def]
    now = hydragan.training_summary(snap.records)
    if now is None:
        return
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Step", f"{now.step:,} of {steps:,}" if snap.status == "running" else f"{now.step:,}")
    m2.metric("Steps per second", f"{now.steps_per_s:.0f}")
    m3.metric("Wasserstein estimate", f"{now.wasserstein:.3f}",
              help="E D(real) − E D(fake), mean of the last 50 steps: shrinks as fake rows become realistic.")
    m4.metric("Diversity gap", f"{now.quality:.3f}" if now.quality is not None else ("exact" if label_condition else "—"),
              help="Mean |generated − target| share of the diversity category over groups (every 100 steps); "
                   "exact when the category is part of the condition.")
    records = of_kind(snap.records, hydragan.GanStep)
    st.plotly_chart(plots.gan_training_curves(records), width="stretch", key=f"gan-curves-{len(records)}")


jobs.live_panel(KEY, draw)

job = jobs.finished(KEY)
if job is not None:
    st.session_state["gan-result"] = (job.id, job.result, st.session_state.get("gan-description", ""))
stored = st.session_state.get("gan-result")
if stored is None:
    if not jobs.running(KEY):
        st.info("Set the quotas and press **Train and evaluate**. The default budget trains and evaluates in about two "
                "minutes on two CPU cores; the page updates live and you can cancel at any time.",
                icon=":material/info:")
    st.stop()

_, result, description = stored
st.divider()
st.header("Results")
st.caption(f"{md_escape(description)} · trained on {result.train_rows:,} real rows, tested on {result.test_rows:,} held-out real "
           f"rows · {len(result.synthetic):,} synthetic rows")
ofi = result.summary[result.summary["metric"] == "OFI"]
better = int((ofi["improves"] == "yes").sum())
readable = int((~ofi["improves"].isin(["too few test rows", "undefined"])).sum())
mode_used = getattr(result, "mode", "real + synthetic")
realism_table = getattr(result, "realism", pd.DataFrame())
t1, t2, t3, t4 = st.columns(4)
t1.metric("Groups whose OFI moved toward 0", f"{better} of {len(ofi)}",
          help=f"Beyond twice its standard error over the classifier seeds; {readable} of {len(ofi)} groups have "
               f"at least {augmentation.MIN_TEST_ROWS} test rows and a defined OFI.")
acc = result.runs.groupby("data")["accuracy"].mean()
t2.metric("Test accuracy, real → augmented", f"{acc['real']:.3f} → {acc['augmented']:.3f}",
          help=f"Augmented: trained on {mode_used}.")
t3.metric("Condition quota met (KS to target)", f"{result.condition_distances.loc['KS statistic', 'synthetic']:.3f}")
if len(realism_table):
    row = realism_table.iloc[0]
    t4.metric("Realism: two-sample AUC", f"{row['AUC']:.3f}",
              help="0.5: a classifier cannot tell the synthetic rows from held-out real ones; 1: it always can. "
                   f"95 % interval {row['95% low']:.3f}–{row['95% high']:.3f}.")

if len(realism_table):
    st.subheader("Realism: can the synthetic rows be told from real ones?")
    ref, indep = realism_table.iloc[1], realism_table.iloc[2]
    st.markdown(f"Synthetic rows: {md_escape(realism_table.iloc[0]['reading'])}. For scale: another sample of real "
                f"rows scores {ref['AUC']:.3f}, rows with every column drawn on its own within each group and label "
                f"score {indep['AUC']:.3f}.")
    r1, r2 = st.columns(2)
    with r1:
        figure_with_downloads(plots.c2st_chart(realism_table), "gan-c2st", realism_table, "hydragan_realism.csv",
                              "Download the two-sample tests (CSV)", index=True)
    with r2:
        st.dataframe(styled(realism_table.drop(columns="reading"), 3), width="stretch", key="gan-c2st-table")
        corr = getattr(result, "correlations", pd.DataFrame())
        if len(corr):
            st.dataframe(styled(corr.rename(columns={"max": "largest |Δ correlation|", "mean": "mean |Δ correlation|",
                                                     "columns": "numeric columns"}), 3),
                         width="stretch", key="gan-corr")
    st.caption("A gradient-boosted classifier, cross-fitted over 5 folds, tries to tell each set from the held-out "
               "real rows; every set has exactly their mix of groups × label, so only realism is tested, not the "
               "quotas or targets. Interval: Hanley and McNeil's standard error. Correlations: Pearson, between "
               "numeric columns, synthetic minus held-out real.")
    with st.expander("Each column: synthetic vs held-out real", icon=":material/table:"):
        st.dataframe(styled(result.marginals, 3), width="stretch", key="gan-marginals")
        csv_download(result.marginals, "hydragan_marginals.csv", "Download (CSV)")
        st.caption("Numeric columns: Kolmogorov–Smirnov statistic, moments and the share of the most common real "
                   "value (a count's spike at zero); categorical: total variation distance.")

st.subheader("Before and after: the audit (the thesis's Table 3.4)")
st.caption(f"Before: a classifier trained on the {result.train_rows:,} real training rows. After: trained on "
           f"**{md_escape(mode_used)}**. Both tested on the same {result.test_rows:,} held-out real rows.")
figure_with_downloads(plots.before_after(result.summary), "gan-before-after", result.summary,
                      "hydragan_bias_summary.csv", "Download summary (CSV)")
st.dataframe(styled(result.summary, 4), hide_index=True, width="stretch", key="gan-summary",
             column_config={"n": st.column_config.NumberColumn("test n", help="held-out real rows of the group"),
                            "improves": st.column_config.TextColumn(
                                help="|real − pivot| − |augmented − pivot|: yes/no only beyond twice its standard "
                                     f"error over the classifier seeds; groups under {augmentation.MIN_TEST_ROWS} "
                                     "test rows are too few to read")})
csv_download(result.runs, "hydragan_bias_runs.csv", "Download every seed's run (CSV)", index=False)
st.caption("Each group is compared with the rest of the test rows. Improvement = |real − pivot| − |augmented − pivot| "
           "(pivot 0, or 1 for DI): positive means closer to no bias. Spread: the standard deviation over classifier "
           f"seeds (the GAN is trained once). Groups with fewer than {augmentation.MIN_TEST_ROWS} test rows are "
           "flagged: their metrics swing between seeds.")

st.subheader("Distributions against the targets (the thesis's Table 3.5)")
d1, d2 = st.columns(2)
with d1:
    figure_with_downloads(plots.share_bars(result.condition_shares, "Groups", "real training rows vs synthetic vs quota"),
                          "gan-cond-bars", result.condition_shares, "hydragan_group_shares.csv",
                          "Download the shares (CSV)", index=True)
    st.dataframe(styled(result.condition_distances, 4, {"improvement": "{:.1%}"}), width="stretch", key="gan-cond-dist")
    csv_download(result.condition_distances, "hydragan_group_distances.csv", "Download (CSV)")
with d2:
    dcol = result.model.schema.diversity_column
    category = result.label_group_shares
    figure_with_downloads(plots.share_bars(category, f"{dcol} = {category.attrs.get('category', '')} within each group",
                                           "real vs synthetic vs target"),
                          "gan-label-bars", category, "hydragan_label_shares.csv", "Download the shares (CSV)",
                          index=True)
    gap = (category["synthetic"] - category["target"]).abs()
    big = gap[[g in counts.index and counts[g] >= 100 for g in gap.index]]
    st.caption(f"Largest gap between a group's synthetic share and the target: {gap.max():.3f}"
               + (f"; among the {len(big)} groups with at least 100 real rows: {big.max():.3f}" if len(big) else "")
               + ".")
    st.dataframe(styled(result.label_distances, 4, {"improvement": "{:.1%}", "improvement (unweighted)": "{:.1%}"}),
                 width="stretch", key="gan-label-dist")
    csv_download(result.label_distances, "hydragan_label_distances.csv", "Download (CSV)")
st.caption("KS statistic over the categories' CDFs, KL divergence D(observed ‖ target) and Jensen–Shannon distance "
           "(natural log), from SciPy. For the diversity category, the mean over groups of each group's distance, "
           "weighted by the group's real rows (first columns) and unweighted as in the thesis's Table 3.5, where "
           "tiny groups can carry the whole improvement. Improvement = 1 − synthetic/real, undefined where the real "
           "rows already match the target.")

st.subheader("Synthetic rows")
st.dataframe(result.synthetic.head(200), width="stretch", key="gan-samples")
s1, s2 = st.columns(2)
with s1:
    csv_download(result.synthetic, "hydragan_synthetic_rows.csv", f"Download all {len(result.synthetic):,} rows (CSV)",
                 index=False)
with s2:
    buffer = io.BytesIO()
    result.model.save(buffer)
    st.download_button("Download the trained model (.pt)", buffer.getvalue(), "hydragan.pt",
                       mime="application/octet-stream", icon=":material/download:", key="gan-model",
                       help="State dicts and JSON config only; load with HydraGAN.load(path) "
                            "(torch.load(..., weights_only=True)).")
