"""Forecasting: the Probabilistic Parallel Time Network, trained live, against two baselines; or any forecaster's
quantile forecasts audited by group (the "Audit forecasts" mode, ui/forecast_audit.py)."""

import numpy as np
import pandas as pd
import streamlit as st

from fairness_core import plots
from fairness_core.progress import Progress, of_kind
from models import ptn
from ui import forecast_audit, jobs, ptn_groups
from ui.state import page_setup
from ui.widgets import chart, csv_download, figure_with_downloads, styled

page_setup("Forecasting")
KEY = "ptn"
DATASETS = {"lorenz": "Chaotic Lorenz systems (generated)",
            "weather": "Typical-year hourly weather, five sites (NREL TMY3, TMY2, NSRDB; EU PVGIS)"}
BUDGETS = {"demo": "Demo: a few minutes on 2 CPU cores", "gpu": "GPU: about 8 minutes on one H100",
           "paper": "Paper (the thesis's §5.5): hours, for a GPU machine", "custom": "Custom"}

st.title("Forecasting: Probabilistic Parallel Time Networks")
MODES = {"train": "Train PTN", "audit": "Audit forecasts"}
if st.radio("Mode", list(MODES), format_func=MODES.get, horizontal=True, key="fc-mode",
            help="Train PTN against two baselines, or audit uploaded forecasts by group: which sites, regions or "
                 "regimes does a forecaster serve worse?") == "audit":
    forecast_audit.mode()
    st.stop()
st.markdown("Deterministic forecasts hide uncertainty and fail underrepresented settings (microclimates, chaotic "
            "regimes). **PTN** (Briscoe, The Art of Fairness, ch. 5) reads static data, recent history and a stack of earlier deterministic "
            "forecasts, and outputs **111 quantiles for each of the next 16 steps**. A genetic search picks its "
            "hyperparameters (Table 5.1) while DARTS weighs its candidate layers, among them TiDE's dense residual "
            "block, so the TiDE-style baseline's architecture is one point of the search space; it is trained on the "
            "ordered CRPS and compared, by skill scores, with the deterministic forecast read as a normal "
            "distribution and with that TiDE-style model given the same inputs, loss and 80 % of PTN's time.")

c1, c2 = st.columns(2)
dataset = c1.radio("Data", list(DATASETS), format_func=DATASETS.get, key="ptn-data")
budget = c2.radio("Budget", list(BUDGETS), format_func=BUDGETS.get, key="ptn-budget")
base = {"paper": ptn.PAPER, "gpu": ptn.GPU}.get(budget, ptn.DEMO)
with st.expander("Search budget", icon=":material/tune:", expanded=budget == "custom"):
    disabled = budget != "custom"
    b1, b2, b3, b4 = st.columns(4)
    population = int(b1.number_input("Population", 2, 64, base.population, key=f"ptn-pop-{budget}", disabled=disabled))
    generations = int(b2.number_input("Generations", 1, 50, base.generations, key=f"ptn-gen-{budget}",
                                      disabled=disabled))
    epochs = int(b3.number_input("Epochs per agent", 1, 100, base.epochs, key=f"ptn-ep-{budget}", disabled=disabled))
    final_epochs = int(b4.number_input("Final epochs, at most (TiDE trains for 80 % of PTN's time)", 1, 2000, base.final_epochs,
                                       key=f"ptn-final-{budget}", disabled=disabled))
    b1, b2, b3 = st.columns([1, 1, 2])
    seeds = int(b1.number_input("Seeds", 1, 7, base.seeds, key=f"ptn-seeds-{budget}", disabled=disabled,
                                help="The best agent and TiDE are retrained once per seed; the skill table pools "
                                     "every seed's forecasts (the thesis pools seven runs) and the spread per seed is "
                                     "shown beside it. Each seed adds a final training and a TiDE training."))
    warm = b2.toggle("Warm start", value=base.warm_epochs > 0, key=f"ptn-warm-{budget}", disabled=disabled,
                     help=f"The thesis's protocol: PTN and TiDE are fine-tuned on the first {base.warm_share:.0%} of "
                          "the held-out part (TiDE for 80 % of PTN's time), and every model is scored on the rest.")
    derived = b3.toggle("Retrain the derived architecture (DARTS)", value=base.derive, key=f"ptn-derive-{budget}",
                        disabled=disabled,
                        help="On: the best agent is retrained with only the strongest candidate of each mixed "
                             "operation (where the search could not tell candidates apart, the cheapest), as DARTS "
                             "does. Off: with every candidate mixed by its weights.")
    b1, b2, b3 = st.columns(3)
    hidden = b1.multiselect("Hidden sizes d", list(range(24, 241, 24)), default=list(base.hidden_sizes),
                            key=f"ptn-hidden-{budget}", disabled=disabled,
                            help="Table 5.1 uses 72, 96, …, 240; the demo uses 48 and 72 to fit two CPU cores.")
    seed = int(b2.number_input("Seed", 0, 10**6, 0, key="ptn-seed"))
    skip = b3.toggle("Add the latest deterministic forecast to the output (our addition)", value=True,
                     key="ptn-skip", help="Off: the thesis's architecture exactly. On: the network learns corrections and "
                                          "spread around the deterministic forecast, which a CPU budget can reach.")
    st.caption("Table 5.1's other hyperparameters (dropouts, slopes, heads, kernels, optimizers, normalization) are "
               "searched as published. Per search epoch: 10 weight steps on the DARTS training part and 5 architecture "
               "steps on the DARTS validation part, batches of 64; the derived architecture's final epochs are 10 "
               "weight steps each.")
if not hidden:
    st.warning("Pick at least one hidden size.", icon=":material/warning:")
    st.stop()
config = ptn.PTNConfig(dataset=dataset, population=population, generations=generations, epochs=epochs,
                       final_epochs=final_epochs, hidden_sizes=tuple(sorted(hidden)), forecast_skip=skip, seed=seed,
                       systems_per_part=base.systems_per_part, inits_per_system=base.inits_per_system,
                       fitness_samples=base.fitness_samples, elites=base.elites, patience=base.patience,
                       seeds=seeds, derive=derived, warm_epochs=base.warm_epochs if warm else 0,
                       final_seconds=base.final_seconds, search_seconds=base.search_seconds)
if budget == "paper":
    st.warning("The paper's budget takes hours and is meant for a GPU machine; this server trains on its CPU.",
               icon=":material/schedule:")

if st.button("Train PTN", type="primary", key="ptn-train", icon=":material/play_arrow:", disabled=jobs.running(KEY)):
    if jobs.start(KEY, f"PTN on {DATASETS[dataset]}",
                  lambda on_progress, should_stop: ptn.train(config, on_progress, should_stop), lane="torch",
                  estimate=ptn.estimate(config)) is not None:
        st.session_state["ptn-description"] = f"{DATASETS[dataset]}; {BUDGETS[budget].split(':')[0].lower()} budget"
        st.rerun()


def draw(snap) -> None:  # type: ignore[no-untyped-def]
    """The live charts, from the run's typed records (fields, never string keys)."""
    records = [r for r in snap.records if isinstance(r, Progress)]
    losses, agents = ptn.loss_frame(records), ptn.agent_frame(records)
    notes = [r.message for r in of_kind(records, ptn.DataStage) if r.message]
    if notes and losses.empty:
        st.caption(" · ".join(notes))
    left, right = st.columns(2)
    with left:
        if len(losses):
            st.plotly_chart(plots.ptn_losses(losses), width="stretch", key=f"ptn-loss-{len(records)}")
        if len(agents):
            st.plotly_chart(plots.ga_fitness(agents), width="stretch", key=f"ptn-ga-{len(records)}")
    with right:
        latest, probe = ptn.latest_fan(records), ptn.probe(records)
        if latest is not None and probe is not None:
            fig = plots.quantile_fan(latest[0], ptn.FAN_LEVELS, np.array(probe.probe_truth),
                                     np.array(probe.probe_deterministic),
                                     f"One validation forecast as training goes ({latest[1]})")
            st.plotly_chart(fig, width="stretch", key=f"ptn-fan-{len(records)}")
        architecture = ptn.latest_architecture(records)
        if architecture:
            st.plotly_chart(plots.architecture_bars(dict(architecture)), width="stretch",
                            key=f"ptn-arch-{len(records)}")


jobs.live_panel(KEY, draw, interval=2.0)

job = jobs.finished(KEY)
if job is not None:
    st.session_state["ptn-result"] = (job.result, st.session_state.get("ptn-description", ""))
stored = st.session_state.get("ptn-result")
if stored is None:
    if not jobs.running(KEY):
        st.info("Choose the data and budget and press **Train PTN**. The demo budget finishes in a few minutes on two "
                "CPU cores; loss curves, the population's fitness, the architecture weights and a quantile fan update "
                "live, and you can cancel at any time.", icon=":material/info:")
    st.stop()

result, description = stored
st.divider()
st.header("Results on the test part")
st.caption(f"{description} · {result.description} · best agent from generation {result.best.generation} "
           f"(d = {result.best.hparams['hidden']}, fitness {result.best.fitness:.4f}, validation "
           f"{result.best.val_fitness:.4f}: CRPS on the training scale [0, 1]); {len(result.crps):,} test forecasts")
seed_cols = (["Chaos vs Det.", "Chaos vs TiDE"] if result.config.dataset == "lorenz"
             else ["Microclimate vs NBM", "Microclimate vs TiDE"])
table = result.skill.copy()
table[[f"thesis Table 5.2: {c}" for c in seed_cols]] = ptn.SEED_TABLE_5_2[seed_cols].to_numpy()
m = st.columns(len(result.skill.columns))
for col, name in zip(m, result.skill.columns):
    median = result.skill.loc["second quartile", name]
    col.metric(f"Median skill {name}", f"{median:+.3f}",
               help="1 − CRPS_PTN / CRPS_baseline at the median of each CRPS set; > 0: PTN is better")
st.dataframe(styled(table, 3), width="stretch", key="ptn-skill")
csv_download(table, "ptn_skill_scores.csv", "Download skill scores (CSV)")
runs = getattr(result, "runs", None)
st.markdown(ptn.verdict_text(result.skill, runs) + " The thesis's numbers (right) come from hours of GPU search "
            "on far more data; ours from the budget you chose.")
if runs is not None and len(runs):
    st.markdown(f"**Seeds and spread** — the best agent and TiDE retrained with {len(runs)} seed(s); the table above "
                "pools their forecasts, each row here is one seed"
                + (f"; every model is scored on the last {result.test_rows:,} held-out windows after a warm start "
                   f"on the first {result.warm_rows:,}" if result.warm_rows else "") + ".")
    st.dataframe(runs, width="stretch", key="ptn-runs",
                 column_config={c: st.column_config.NumberColumn(format="%.3f" if "skill" in c else "%.1f")
                                for c in runs.columns if "steps" not in c})
    csv_download(runs, "ptn_seeds.csv", "Download per-seed budgets and skills (CSV)")
ptn_groups.section(getattr(result, "by_group", None))
budgets = getattr(result, "budgets", None)
if budgets is not None and len(budgets):
    st.markdown("**The budgets behind the comparison** — every model's training wall time and optimizer steps; "
                f"TiDE gets {result.config.tide_time_share:.0%} of PTN's training time, never a token budget. The "
                "budget in steps, " + (result.budget.words() if getattr(result, "budget", None) else "as given") + ".")
    st.dataframe(budgets.rename(columns={"train_seconds": "training (s)", "steps": "optimizer steps"}),
                 width="stretch", key="ptn-budgets",
                 column_config={"training (s)": st.column_config.NumberColumn(format="%.1f")})
    csv_download(budgets, "ptn_budgets.csv", "Download budgets (CSV)")
c1, c2 = st.columns(2)
with c1:
    ptn_groups.crps_chart(result)
with c2:
    searched = getattr(result, "searched_architecture", None) or result.architecture
    chart(plots.architecture_bars(searched), "ptn_architecture.html", key="ptn-arch-final")
    if getattr(result, "derived", None):
        st.caption(f"Architecture weights of the agent the search handed on: {ptn.chosen_words(result)}. Retrained "
                   "with: " + "; ".join(f"{k}: **{v}**" for k, v in result.derived.items())
                   + f" (the strongest candidate; within 0.01 of it, the cheapest per step), starting from "
                     f"{ptn.start_words(result)}.")
    agents = pd.DataFrame([{"generation": a.generation, "incumbent": a.incumbent, **a.hparams,
                            "low-fidelity fitness": a.low_fidelity, "fitness": a.fitness,
                            "validation fitness": a.val_fitness} for a in result.agents])
    csv_download(agents, "ptn_agents.csv", "Download every agent's hyperparameters and fitness (CSV)", index=False)
fidelity = result.fidelity
st.markdown("**The search's low-fidelity fitness** — every agent is first scored after its first rung; only the "
            f"better half trains on and is scored again: {ptn.fidelity_words(fidelity, result.fidelity_rho)}; "
            f"{ptn.BENCH_FIDELITY}.")
if len(fidelity):   # no agent past its first rung: nothing to draw (the sentence above says so)
    figure_with_downloads(plots.search_fidelity(fidelity["low_fidelity"], fidelity["val_fitness"], result.fidelity_rho),
                          "ptn-fidelity", fidelity, "ptn_search_fidelity.csv",
                          "Download the agents' two fitnesses (CSV)")

st.subheader("Browse test forecasts")
ptn_groups.browser(result)
