"""The Bias Audit page's two further tabs: inequality across individuals (generalized
entropy index, Utility as Fair Pricing) and stability and uncertainty (Virny)."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import streamlit as st

from fairness_core import entropy, plots, reading, stability
from fairness_core.statistics import ensemble
from fairness_core.audit import Audit
from fairness_core.confusion import CELLS
from ui import jobs
from ui.widgets import chart, csv_download, figure_with_downloads, md_escape, styled

ALPHAS = (-1.0, 0.0, 0.5, 1.0, 2.0, 3.0)
AVOID_FN = "Utility as Fair Pricing design: avoid wrongly withholding the benefit (FN)"
AVOID_FP = "Utility as Fair Pricing design: avoid wrongly granting the benefit (FP)"
CUSTOM = "Custom benefit matrix"
ENSEMBLE_KEY = "virny-ensembles"  # session cache: {(data, settings): EnsembleFit}
ENSEMBLE_JOB = "virny"  # the background job that trains one (its button is "virny-train")


def _benefit_controls(audit: Audit) -> tuple[dict[str, float], float, str]:
    """Preset, benefits and α from the widgets; returns (benefit, alpha, provenance)."""
    presets = {p.label: p for p in entropy.PRESETS.values()}
    choice = st.selectbox("Benefit matrix", [*presets, AVOID_FN, AVOID_FP, CUSTOM], key="gei-preset",
                          help="What each individual gets from the decision, by confusion-matrix cell. The index "
                               "measures how unequally these benefits are spread.")
    total = audit.total()
    p = (total.tp + total.fn) / total.n
    if choice in presets:
        preset = presets[choice]
        benefit, default_alpha, provenance = dict(preset.benefit), preset.alpha, preset.provenance
    elif choice in (AVOID_FN, AVOID_FP):
        avoid = "FN" if choice == AVOID_FN else "FP"
        c1, c2 = st.columns(2)
        b_plus = c1.slider("b+ (the larger non-unit benefit)", 0.50, 0.999, 0.95, 0.001, format="%.3f",
                           key=f"gei-bplus-{avoid}")
        kappa = c2.number_input("κ (Blackstone: 10)", 1.0, 100.0, 10.0, 0.5, key=f"gei-kappa-{avoid}",
                                help="It is κ times worse to commit the avoided error than the other.")
        try:
            benefit = entropy.blackstone_benefit(b_plus, kappa, p, avoid=avoid)
        except ValueError as exc:
            st.error(str(exc), icon=":material/error:")
            st.stop()
        default_alpha = 0.5
        provenance = (f"Utility as Fair Pricing §3.2 with P(Y = 1) = {p:.3f} from the loaded data: b− = 1 − (1 − b+)κ̃ = "
                      f"{benefit['FN' if avoid == 'FN' else 'FP']:.4f} (eqs. {'17' if avoid == 'FN' else '13'}, 18). "
                      "Positive is the beneficial outcome here, so that paper's punitive example (avoid jailing the "
                      "innocent) and its assistive one (avoid rejecting the qualified) are both the FN design.")
    else:
        cols = st.columns(4)
        benefit = {c: col.number_input(f"benefit {c}", 0.0, 100.0, entropy.SPEICHER[c], 0.1, key=f"gei-b-{c}")
                   for c, col in zip(CELLS, cols)}
        default_alpha, provenance = 2.0, "Your own benefit matrix (benefits >= 0 on a ratio scale; only ratios matter)."
    alpha = st.number_input("α (0: mean log deviation, 1: Theil, 2: half the squared coefficient of variation)",
                            -3.0, 10.0, float(default_alpha), 0.1, key=f"gei-alpha-{choice}",
                            help="α > 1 weighs inequality among the best-off more, α < 1 among the worst-off. "
                                 "α <= 0 needs every benefit > 0.")
    return benefit, float(alpha), provenance


def inequality_section(audit: Audit, reference: str) -> None:
    """GEI per group and pooled, the decomposition, the (μ, λ) explainer and the OFI link."""
    st.markdown("The **generalized entropy index** (Speicher et al. 2018; AIF360, SageMaker Clarify) measures how "
                "unequally a *benefit* is spread over **individuals**: each person gets the benefit of their "
                "confusion-matrix cell, and I = (1/n) Σ f_α(b_i/μ) is 0 when everyone gets the same. It splits "
                "exactly into a **between-group** part (the index if everyone got their group's mean benefit) "
                "and a **within-group** part.")
    c1, c2 = st.columns([3, 2])
    with c1:
        benefit, alpha, provenance = _benefit_controls(audit)
    with c2:
        st.markdown("**Benefits by cell**")
        st.dataframe(pd.DataFrame([benefit], index=["benefit"])[list(CELLS)], width="stretch")
        st.caption(provenance)
    try:
        table = entropy.group_table(audit.cms, benefit, alpha)
    except ValueError as exc:
        st.error(f"The index is undefined here: {md_escape(exc)}.", icon=":material/error:")
        return
    total = table.attrs["total"]
    within, between = table["within contribution"].sum(), table["between contribution"].sum()
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Index, everyone pooled", f"{total:.4g}")
    m2.metric("Within groups", f"{within:.4g}")
    m3.metric("Between groups", f"{between:.4g}", help="The part group fairness sees: differences of group means.")
    m4.metric("Between share", f"{between / total:.1%}" if total > 0 else "undefined")

    over_alpha = entropy.decomposition_over_alpha(audit.cms, benefit, sorted({*ALPHAS, alpha}))
    figure_with_downloads(plots.gei_decomposition(over_alpha, alpha), "gei-decomposition", over_alpha,
                          "gei_by_alpha.csv", "Download index by α (CSV)")

    _per_group(audit, reference, table, benefit)
    _landscape(audit, benefit, alpha, table)


def _per_group(audit: Audit, reference: str, table: pd.DataFrame, benefit: dict[str, float]) -> None:
    """The index per group, with each group's B and OFI against the reference where the benefits link them."""
    mu = table.attrs["mean_benefit"]
    st.subheader("Per group")
    shown = table.copy()
    link = entropy.ofi_link(benefit)
    if link is not None:
        u, d = link
        ofi = audit.ofi_against(reference)
        shown.insert(2, "B = (FP − FN)/n", ofi["B"])
        scale = "" if d == 1 else f"/{d:g}"
        shown.insert(3, f"OFI vs {reference} = (μ_g − μ_ref){scale}", ofi["OFI"])
        st.markdown(reading.ofi_link_reading(u, d))
    if not shown["note"].astype(bool).any():
        shown = shown.drop(columns="note")
    st.dataframe(styled(shown, 4), width="stretch", key="gei-groups",
                 column_config={"note": st.column_config.TextColumn(width="medium")})
    csv_download(shown, "gei_groups.csv", "Download per-group index (CSV)")
    st.caption(f"Pooled mean benefit μ = {mu:.4f}. within contribution = (n_g/n)(μ_g/μ)^α · I(b_g); between "
               "contribution = (n_g/n) f_α(μ_g/μ) (Utility as Fair Pricing, eq. 2); each column sums to its part. A group's between "
               "contribution is negative when its mean is below μ for α < 1, or above it for α > 1 — only the sum "
               "is an inequality.")


def _landscape(audit: Audit, benefit: dict[str, float], alpha: float, table: pd.DataFrame) -> None:
    """The (μ, λ) map of the index with the groups on it (Utility as Fair Pricing §3), and what it responds to."""
    total = table.attrs["total"]
    st.subheader("What the index responds to")
    try:
        form = entropy.unit_form(benefit)
    except ValueError as exc:
        st.info(f"The (μ, λ) view of Utility as Fair Pricing §3 needs benefits of the form {{b−, b+, 1}}: {exc}.",
                icon=":material/info:")
        return
    points = [{"group": g, "n": cm.n, "index": table.loc[g, "index within group"],
               **dict(zip(("mu", "lambda"), entropy.mu_lambda(cm, benefit)))} for g, cm in audit.cms.items()]
    pooled = audit.total()
    points.append({"group": "everyone pooled", "everyone": True, "n": pooled.n, "index": total,
                   **dict(zip(("mu", "lambda"), entropy.mu_lambda(pooled, benefit)))})
    points = pd.DataFrame(points)
    if st.toggle("Zoom to the loaded groups", value=True, key="gei-zoom"):
        pad_mu = max(0.05, 0.15 * (points["mu"].max() - points["mu"].min()))
        pad_lam = max(0.05, 0.15 * (points["lambda"].max() - points["lambda"].min()))
        mu_grid, lam_grid, grid = entropy.landscape(
            benefit, alpha, mu_range=(max(0.0, points["mu"].min() - pad_mu), points["mu"].max() + pad_mu),
            lam_range=(max(0.0, points["lambda"].min() - pad_lam), min(1.0, points["lambda"].max() + pad_lam)))
    else:
        mu_grid, lam_grid, grid = entropy.landscape(benefit, alpha)
    fig = plots.gei_landscape(mu_grid, lam_grid, grid, points, alpha, form.unit_cells)
    if not np.isfinite(grid).any():
        st.info("With α <= 0 and b− = 0 the index is infinite wherever anyone gets b−; pick α > 0 to see the map.",
                icon=":material/info:")
    else:
        chart(fig, "gei_landscape.html", "gei-landscape")
    st.markdown(reading.gei_landscape_reading(form.unit_cells, form.b_plus))


# --- Virny stability and uncertainty --------------------------------------------------------

def _fingerprint(rows: stability.RowData) -> str:
    """A content hash of the labels and features, so a new upload never reuses an old ensemble."""
    h = hashlib.sha1(rows.y.tobytes())
    h.update(pd.util.hash_pandas_object(rows.features, index=False).to_numpy().tobytes())
    h.update(repr(list(rows.features.columns)).encode())
    return h.hexdigest()


def _ensemble_for(audit: Audit) -> tuple[stability.RowData, str] | None:
    """Rows with probabilities: the uploaded ensemble, or one the app trains on the features."""
    rows = audit.rows
    if rows is None:
        st.info("Stability and uncertainty need **row-level data**: load a demo, or upload row-level predictions "
                "on the Upload page with an ensemble's probability columns (one per model) or feature columns "
                "for the app to train its own ensemble. Confusion-matrix tables alone cannot show them.",
                icon=":material/info:")
        return None
    if rows.probabilities is not None:
        return rows, (f"Ensemble: the {rows.probabilities.shape[1]} uploaded probability columns "
                      f"({', '.join(rows.model_names)}).")
    if rows.features is None:
        st.info("These rows carry no ensemble probabilities and no features. Re-upload with probability columns "
                "(one per model) or feature columns (Upload → Row-level predictions → Optional).",
                icon=":material/info:")
        return None
    c1, c2, c3, c4 = st.columns(4)
    n_models = c1.slider("Models per fold", 5, 50, 20, 5, key="virny-models")
    fraction = c2.slider("Bootstrap size (share of training rows)", 0.5, 1.0, 0.8, 0.05, key="virny-fraction")
    folds = c3.select_slider("Cross-fitting folds", [3, 5, 10], value=5, key="virny-folds")
    seed = int(c4.number_input("Seed", 0, 10**6, 0, key="virny-seed"))
    cache = st.session_state.setdefault(ENSEMBLE_KEY, {})
    key = (_fingerprint(rows), n_models, fraction, folds, seed)
    job = jobs.finished(ENSEMBLE_JOB)
    if job is not None and st.session_state.get(f"{ENSEMBLE_JOB}-params") not in cache:
        cache[st.session_state[f"{ENSEMBLE_JOB}-params"]] = job.result
        while len(cache) > 8:
            cache.pop(next(iter(cache)))
    if key not in cache:
        _train_ensemble(rows, key, n_models, fraction, folds, seed)
        return None
    fit = cache[key]
    features = ", ".join(rows.features.columns)
    text = (f"Ensemble: the app's own, {n_models} L2-regularized logistic regressions per fold on "
            f"{fraction:.0%} bootstrap samples of [{features}] (no group column), {folds}-fold cross-fitted so "
            f"every individual is scored by {n_models} models that never saw them; out-of-fold accuracy "
            f"{fit.accuracy:.3f}. It stands in for the audited model's training variability; the error rates "
            "below are the audited model's own predictions.")
    return rows.subset(np.arange(len(rows)), fit.probabilities), text


def _train_ensemble(rows: stability.RowData, key: tuple, n_models: int, fraction: float, folds: int,
                    seed: int) -> None:
    """The button that trains the bootstrap ensemble in the background (progress, ETA, Cancel), and its panel."""
    try:
        ensemble.check_settings(rows.features, rows.y, n_models, fraction, folds)
    except ValueError as exc:
        st.error(f"Could not train the ensemble: {md_escape(exc)}", icon=":material/error:")
        return
    if st.button("Train the ensemble", type="primary", icon=":material/play_arrow:", key=f"{ENSEMBLE_JOB}-train",
                 disabled=jobs.running(ENSEMBLE_JOB)):
        features, y = rows.features, rows.y

        def train(on_progress, should_stop):  # type: ignore[no-untyped-def]
            return ensemble.bootstrap_ensemble(features, y, n_models=n_models, fraction=fraction, folds=folds,
                                               seed=seed, on_progress=on_progress, should_stop=should_stop)

        if jobs.start(ENSEMBLE_JOB, f"bootstrap ensemble of {folds} × {n_models} models", train,
                      estimate=ensemble.estimate(features, n_models, folds)) is not None:
            st.session_state[f"{ENSEMBLE_JOB}-params"] = key
            st.rerun()
    elif not jobs.running(ENSEMBLE_JOB):
        st.caption(f"{folds} folds × {n_models} logistic regressions on {len(rows):,} rows; it trains in the "
                   "background with a progress bar and a Cancel button.")
    jobs.live_panel(ENSEMBLE_JOB, lambda snap: None, interval=0.5)


def stability_section(audit: Audit, reference: str) -> None:
    """Virny's per-group stability and uncertainty, beside the audited model's error rates."""
    st.markdown("How **stable** and **certain** are the model's predictions for each group? An ensemble of models "
                "trained on bootstrap samples of the data (Virny) disagrees more on some individuals than "
                "others. **Label stability** (1 = every model gives the same label), **jitter** (share of model pairs "
                "that disagree), **epistemic uncertainty** (variance of the models' probabilities: what more data "
                "would fix) and **aleatoric uncertainty** (expected entropy, in nats, at most ln 2 ≈ 0.693: noise "
                "in the data itself).")
    got = _ensemble_for(audit)
    if got is None:
        return
    rows, description = got
    st.caption(description)
    threshold = st.slider("Label threshold for the ensemble's votes", 0.05, 0.95, 0.5, 0.05, key="virny-threshold")
    table = stability.group_table(rows, threshold, order=audit.groups)
    priv = st.selectbox("Privileged group (priv) for the disparities", audit.groups,
                        index=audit.groups.index(reference), key="virny-priv",
                        help="Virny reports every disparity as dis − priv; the default is the sidebar's reference.")
    overall = table.loc[table.attrs["overall"]]  # "all", or "all rows" when a group is named "all"
    m = st.columns(4)
    for col, name in zip(m, stability.INDIVIDUAL_METRICS):
        col.metric(f"{name.capitalize()} (all)", f"{overall[name]:.3g}")

    formats = {"epistemic uncertainty": "{:.3g}"}
    st.subheader("Per group")
    st.dataframe(styled(table, 3, formats), width="stretch", key="virny-groups")
    csv_download(table, "stability_by_group.csv", "Download per-group stability (CSV)")
    dist = stability.distribution_table(rows, threshold)
    figure_with_downloads(plots.stability_boxes(dist), "virny-boxes", dist, "stability_quantiles.csv",
                          "Download quantiles (CSV)")

    st.subheader(f"Disparities: each group vs {md_escape(priv)}")
    disp = stability.disparities(table, priv)
    if len(disp):
        fig = plots.stability_disparities(disp)
        chart(fig, "stability_disparities.html", "virny-disparities")
        st.dataframe(styled(disp, 4, {"Δepistemic": "{:+.3g}"}), width="stretch", key="virny-disp")
        csv_download(disp, f"stability_disparities_vs_{priv}.csv", "Download disparities (CSV)",
                     names={"privileged group": priv})
        st.caption("ΔFPR, ΔFNR, ΔAccuracy, SPD (selection-rate difference) and DI (selection-rate ratio; "
                   "undefined when priv selects nobody) come from the audited model's predictions; the Δ of "
                   "stability, jitter and uncertainties from the ensemble. Small groups' averages are noisy: "
                   "check their n.")
    individuals = stability.individual_table(rows.probabilities, threshold)
    individuals.insert(0, "group", rows.groups)
    individuals.insert(1, "label", rows.y.astype(int))
    individuals.insert(2, "prediction", rows.y_pred.astype(int))
    csv_download(individuals, "stability_per_individual.csv", "Download per-individual values (CSV)", index=False)
