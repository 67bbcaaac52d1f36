"""Compare and Mitigate: which candidate model is fairer at what cost, and per-group decision thresholds from a
score, every number measured on held-out rows."""

import math

import streamlit as st

from fairness_core import datasets, mitigation, plots, reading
from fairness_core.compare import PERFORMANCE
from fairness_core.wording import mitigation as words
from ui import compare as cmp
from ui.state import current_demo, get_candidates, page_setup, verdict_settings
from ui.widgets import BuiltIn, chart, csv_download, md_escape, styled

audit = page_setup("Compare and Mitigate")
with st.sidebar:
    judged = verdict_settings()   # the verdict settings (one object); the comparison takes them apart below
    tolerance, alpha, adjust = judged.tolerance, judged.alpha, judged.adjust
ADDED = "cmp-added"   # {rows key: [Settings, ...]}: mitigated models added to the comparison
LOADED = BuiltIn("the loaded data")

st.title("Compare and mitigate")
st.markdown("Which of several candidate models is fairer, and at what cost? And which per-group decision thresholds "
            "on a score would remove the bias? Models are compared on the **same individuals**, so differences "
            "between them have paired intervals and tests.")

# --- 1. Source ------------------------------------------------------------------------------------
loaded = audit.rows is not None and audit.has_outcomes and current_demo() is None   # decisions alone: no labels
uploaded = get_candidates() if loaded else None
sources = list(datasets.CANDIDATE_DEMOS) + ([LOADED] if loaded else [])
c1, c2 = st.columns([3, 2])
source = c1.selectbox("Candidate models", sources, key="cmp-source",
                      index=len(sources) - 1 if uploaded is not None else 0,
                      format_func=lambda o: ("The loaded data (its one model)" if uploaded is None else
                                             f"The loaded data ({len(uploaded.predictions)} models, "
                                             f"{len(uploaded.scores)} score{'' if len(uploaded.scores) == 1 else 's'})") if o == LOADED
                      else datasets.CANDIDATE_DEMOS[o][0])
if source == LOADED:
    rows, attribute = cmp.loaded_rows(audit, uploaded), "the groups chosen in the sidebar"
    c2.caption("Groups: as chosen in the sidebar. " + (
        "Comparison needs at least two candidates: the loaded data carry one model, and a mitigated model (below) "
        "makes the second. Other prediction and score columns can be picked on the Upload page."
        if len(rows.predictions) < 2 else "Candidates: the prediction and score columns picked on the Upload page."))
else:
    attribute = c2.radio("Groups", list(cmp.ATTRIBUTES), horizontal=True, key="cmp-groups",
                         help="One attribute, or every combination of race and sex.")
    rows = cmp.demo_rows(source, attribute)
st.caption(f"**Data:** {md_escape(rows.title)} · n = {len(rows.y):,} · {len(set(rows.row_groups))} groups · positive "
           f"means **{md_escape(rows.positive_outcome)}** (the beneficial outcome; scores: higher = more likely)")
if rows.note:
    st.info(md_escape(rows.note), icon=":material/swap_vert:")
n_fit, n_held = int(rows.fit.sum()), int(rows.held.sum())
st.info(f"**Honest by construction.** The rows are split once, at random within each group and label (seed "
        f"{cmp.SEED}): thresholds are chosen on the **{n_fit:,} fitting rows**, and **every number on this page is "
        f"measured on the {n_held:,} held-out rows**, which no threshold saw.", icon=":material/call_split:")

added: list[cmp.Settings] = st.session_state.setdefault(ADDED, {}).get(rows.key, [])
names = list(rows.predictions) + [s.name for s in added if cmp.fit(rows, rows.key, s).rule is not None]

# --- 2. Compare -------------------------------------------------------------------------------------
st.header("Compare the candidates")
c1, c2, c3 = st.columns([2, 1, 1])
perf = c1.radio("Performance", list(PERFORMANCE), format_func=PERFORMANCE.get, horizontal=True, key="cmp-perf")
cost_fp = float(c2.number_input("Cost of a false positive", 0.0, 100.0, 1.0, 0.5, key="cmp-cost-fp",
                                help="Expected cost per row = (this × FP + the other × FN) / n; also the "
                                     "mitigation's cost objective."))
cost_fn = float(c3.number_input("Cost of a false negative", 0.0, 100.0, 1.0, 0.5, key="cmp-cost-fn"))
if cost_fp == 0 and cost_fn == 0:
    st.warning("Both costs are 0: every model costs nothing. Give one a positive weight.", icon=":material/warning:")
    cost_fp = cost_fn = 1.0
if len(names) < 2:
    st.info("Comparison needs at least two candidates. Mitigate below and add the mitigated model: it makes the "
            "second.", icon=":material/info:")
else:
    table = cmp.summary(rows, rows.key, tuple(added), tolerance, alpha, adjust, cost_fp, cost_fn, perf)
    fig = plots.model_tradeoff(table, perf, tolerance)
    chart(fig, "model_tradeoff.html", key="cmp-tradeoff")
    st.markdown(md_escape(cmp.fairest_reading(table, perf)))
    st.dataframe(cmp.summary_display(table, perf), hide_index=True, width="stretch")
    st.caption(f"Intervals: {md_escape(table['interval_level'].iloc[0])} for |OFI| and DI; performance at "
               f"{1 - alpha:.0%}. Pareto front (table and chart): no other model is both better by {PERFORMANCE[perf]}"
               f"{' (lower)' if perf == 'cost' else ''} and lower in |OFI|.")
    csv_download(table, "model_comparison.csv", "Download the comparison (CSV)", key="cmp-summary-csv", index=False)

    st.subheader("Compare two models")
    c1, c2 = st.columns(2)
    a = c1.selectbox("First model", names, index=0, key="cmp-a")
    b = c2.selectbox("Second model", names, index=1, key="cmp-b")
    if a == b:
        st.warning("Pick two different models.", icon=":material/warning:")
    else:
        diff = cmp.paired(rows, rows.key, tuple(added), a, b, alpha, adjust)
        pfig = plots.paired_differences(diff)
        chart(pfig, "paired_differences.html", key="cmp-paired")
        st.markdown(md_escape(cmp.paired_reading(diff, alpha, adjust)))
        st.dataframe(styled(diff[["what", "difference", "ci_low", "ci_high", "p_value", "p_adjusted", "significant"]],
                            4, {"p_value": "{:.3g}", "p_adjusted": "{:.3g}"}), hide_index=True, width="stretch")
        csv_download(diff, "paired_differences.csv", "Download the paired differences (CSV)", key="cmp-paired-csv",
                     index=False)

# --- 3. Mitigate --------------------------------------------------------------------------------------
st.header("Mitigate by per-group thresholds")
st.warning("**A legal note.** Group-specific thresholds are disparate treatment in some jurisdictions (for example, "
           "US employment law forbids adjusting scores by race). This page offers them as analysis, not advice.",
           icon=":material/gavel:")
if not rows.scores:
    st.info("These rows carry decisions but no score to threshold. Pick a demo above, or upload row-level "
            "predictions with score columns (or an ensemble's probability columns).", icon=":material/info:")
    st.stop()
c1, c2, c3, c4 = st.columns(4)
score = c1.selectbox("Score", list(rows.scores), key="mit-score")
target = c2.selectbox("Fairness target", list(words.TARGET_WORDS), format_func=words.TARGET_WORDS.get, key="mit-target")
tol = c3.slider("Tolerance", 0.0, 0.30, 0.05, 0.001, format="%.3f", key="mit-tol", disabled=target == "four_fifths",
                help="The largest |OFI| over pairs, or the largest difference in selection rate, TPR or FPR, allowed "
                     "on the fitting rows.")
objective = c4.selectbox("Objective (maximized; cost minimized)", list(PERFORMANCE), format_func=PERFORMANCE.get,
                         key="mit-objective", help="Expected cost uses the weights above.")
c1, c2 = st.columns(2)
estimate = c1.radio("Held-out estimate", list(cmp.ESTIMATES), format_func=cmp.ESTIMATES.get, key="mit-estimate",
                    help="Cross-fitting uses every row for measuring once: better for small groups.")
randomize = c2.radio("Rule", [False, True], key="mit-randomize", horizontal=True,
                     format_func=lambda r: "randomized (mix thresholds)" if r else "deterministic (one threshold)",
                     help="Which of the two rules below to download and add to the comparison.")
settings = cmp.Settings(score, target, 0.0 if target == "four_fifths" else round(float(tol), 3), objective,
                        cost_fp, cost_fn, randomize)
det_s, rnd_s = settings._replace(randomize=False), settings._replace(randomize=True)
fitted = cmp.fit(rows, rows.key, settings)
try:
    det, rnd = (cmp.measures(rows, rows.key, x, estimate, alpha) for x in (det_s, rnd_s))
except mitigation.InfeasibleTarget as exc:
    fitted = cmp.Fit(None, fitted.shared, str(exc), exc.smallest)
if fitted.rule is None:
    offer = math.ceil(fitted.smallest * 1000) / 1000
    st.error(f"**No thresholds meet this target on the fitting rows.** {md_escape(fitted.infeasible)}.",
             icon=":material/block:")
    if offer <= 0.30:
        st.button(f"Use tolerance {offer:.3f}", key="mit-offer",
                  on_click=lambda: st.session_state.__setitem__("mit-tol", offer))
    st.stop()

rule = fitted.rule if estimate == "split" else cmp.fit_all(rows, rows.key, settings)
if rule is None:
    st.error("The target can be met on each fold's rows but not on all rows together; use one split.",
             icon=":material/block:")
    st.stop()
chosen = rnd if randomize else det
held = cmp.before_after(rows, rows.key, settings, tolerance, alpha, adjust, estimate)
before, after = held.iloc[0], held.iloc[1]
label = PERFORMANCE[objective]
where = "held-out" if estimate == "split" else "cross-fitted"
st.markdown(f"**Before → after, {where}** ({md_escape(cmp.ESTIMATES[estimate])}; hover a number for its interval):")
cards = st.columns(len(words.TARGET_MEASURES[target]) + 2)
for col, name in zip(cards, [*words.TARGET_MEASURES[target], objective.replace("_", " ")]):
    r = chosen.loc[name]
    higher_better = name in ("smallest impact ratio", "accuracy", "balanced accuracy")
    col.metric(f"{name[0].upper() + name[1:]} (before → after)", f"{r['before estimate']:.3f} → {r['after estimate']:.3f}",
               cmp.delta_text(r["before estimate"], r["after estimate"]), delta_color="normal" if higher_better else "inverse",
               help=f"Before {words.interval_text(r, 'before')}; after {words.interval_text(r, 'after')} "
                    f"({chosen.attrs['interval']}).")
bias = [int(x.get("verdict: algorithmic bias", 0)) for x in (before, after)]
cards[-1].metric("Pairs with algorithmic bias", f"{bias[0]} → {bias[1]}", cmp.delta_text(bias[0], bias[1], 0),
                 delta_color="inverse" if bias[0] != bias[1] else "off")
level = md_escape(held["interval_level"].iloc[0])
st.markdown(reading.mitigation_held_out(before, after, objective, label, level, alpha) if estimate == "split"
            else words.cross_fitted_reading(before, after, objective, label, level, alpha))
st.caption(words.intervals_note(level, md_escape(det.attrs["interval"]), md_escape(label)))
st.markdown(f"**Deterministic or randomized, {where}.** Each estimate with its {md_escape(det.attrs['interval'])}.")
st.dataframe(cmp.side_by_side(det, rnd, target, objective), hide_index=True, width="stretch")
mixed = cmp.fit(rows, rows.key, rnd_s).rule
st.info(words.RANDOMIZING + f" On the fitting rows it improves {label} by {mixed.randomized_gain:.4f}." if mixed.randomized
        else "Randomizing cannot do better here: the deterministic thresholds are as good as any mixture on the fitting "
             "rows, so both columns hold the same rule.", icon=":material/casino:")
if estimate == "cross-fit":
    st.caption(f"Cross-fitting: every number above is measured on all {len(rows.y):,} rows, each decided by thresholds "
               f"fitted on the other {cmp.FOLDS - 1} folds. The rule below is fitted once on every row: the numbers "
               "estimate how thresholds fitted on rows like these do on new rows.")
thresholds = cmp.threshold_table(rows, settings, fitted)
cut = {c: (lambda v: v if isinstance(v, str) else "nobody selected" if v == math.inf else f"{v:.4g}")
       for c in ("shared threshold", "group threshold")}
st.dataframe(styled(thresholds, 3, cut), hide_index=True, width="stretch")
st.caption(f"Predicted **{md_escape(rows.positive_outcome)}** when the score is at or above the group's threshold"
           + (" (a randomized rule draws one of its group's thresholds, with the probability shown, for each row)"
              if rule.randomized else "") + ". Scores run in the audit's direction: "
           + md_escape(words.score_direction(score, rows.transform(score), rows.positive_outcome))
           + " (the rule file below says so)"
           + ". Selection rates and B are the held-out rows' (the split's, whichever estimate is shown above).")
c1, c2 = st.columns(2)
c1.download_button("Download the rule (JSON)", data=cmp.thresholds_json(rows, settings, rule, attribute, held, estimate),
                   file_name="thresholds.json", mime="application/json", key="mit-json", on_click="ignore",
                   icon=":material/download:")
with c2:
    csv_download(cmp.held_decisions(rows, settings, fitted.rule), "mitigated_predictions.csv",
                 "Download the mitigated decisions on the held-out rows (CSV)", key="mit-csv", index=False)
st.markdown("Apply the downloaded rule to next month's file (the score and group columns named as in that file):")
st.code(cmp.apply_command(settings, attribute, columns=rows.group_columns), language="bash", wrap_lines=True)


def _add() -> None:
    st.session_state[ADDED].setdefault(rows.key, [])
    if settings not in st.session_state[ADDED][rows.key]:
        st.session_state[ADDED][rows.key] = [*st.session_state[ADDED][rows.key], settings]


if settings in added:
    st.success(f"In the comparison above as “{md_escape(settings.name)}”.", icon=":material/check:")
else:
    st.button("Add the mitigated model to the comparison", key="mit-add", on_click=_add, icon=":material/add:",
              disabled=len(names) >= 12)

line, points = cmp.frontier(rows, rows.key, settings, tuple(added))
ffig = plots.mitigation_frontier(line, points, label)
chart(ffig, "mitigation_frontier.html", key="mit-frontier")
st.caption(("Four-fifths has no tolerance to vary: the line is demographic parity's. " if target == "four_fifths" else "")
           + "Each point of the line: thresholds fitted on the fitting rows at one tolerance (0 to 0.2), measured on "
             "the held-out rows, as are the models.")
