"""The Bias Audit page's Scores view: when the session's data carry a score, its calibration by group (Northpointe's
side of the COMPAS debate), its ROC curves and error rates at a threshold (ProPublica's), the sweep of thresholds,
and one paragraph saying which fairness the score has and why, with these base rates, it cannot have both."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from fairness_core import plots
from fairness_core.audit import Audit
from fairness_core.io import DataValidationError
from fairness_core.scores import validate_score
from fairness_core.scores_report import ScoreAnalysis, matching_threshold, score_analysis
from ui import cached
from ui.widgets import chart, csv_download, md_escape

#: The strategies offered for the calibration bins (fairness_core.scores.calibration).
BINNING = {"auto": "auto (one bin per value for a score with few values)", "uniform": "equal-width bins",
           "quantile": "equal-count bins (per group)", "values": "one bin per score value"}


@st.cache_resource(max_entries=8, ttl=cached.TTL_S, show_spinner="Calibrating the score by group…")
def _analysis(_y: np.ndarray, _s: np.ndarray, _groups: np.ndarray, digest: str, threshold: float, score_name: str,
              strategy: str, alpha: float, label: str, selected: str, harm: bool) -> ScoreAnalysis:
    return score_analysis(_y, _s, _groups, threshold, score_name, strategy=strategy, alpha=alpha, label=label,
                          selected=selected, selected_is_favourable=not harm)


def _label_words(audit: Audit, harm: bool) -> str:
    """The label as the audit names it: "two_year_recid = 1" (the original positive label when it was a harm)."""
    column, positive = audit.provenance.get("label column"), audit.provenance.get("positive label")
    if column and positive is not None:
        return f"{column} = {positive}"
    return "the harmful outcome" if harm else "the positive label"


def _display(audit: Audit, values: np.ndarray, threshold: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                                  float | None]:
    """(label, score, audited decisions, threshold) as the reader wants them: un-flipped when a positive prediction
    was declared a harm (COMPAS: the decile score and the reoffence rate), so that higher = riskier. A threshold
    given on the flipped score (selected when −score ≥ t) becomes the lowest score flagged (score > −t)."""
    rows = audit.rows
    y, decisions = np.asarray(rows.y, dtype=bool), np.asarray(rows.y_pred, dtype=bool)
    if audit.positive_is != "harm":
        return y, values, decisions, threshold
    original = -values
    if threshold is not None:
        flagged = original[original > -threshold]
        threshold = float(flagged.min()) if flagged.size else None
    return ~y, original, ~decisions, threshold


def render(audit: Audit, scores: dict[str, np.ndarray], threshold: float | None = None, alpha: float = 0.05,
           key: str = "scores") -> ScoreAnalysis | None:
    """The Scores view for ``audit`` (row-level data) and its scores (name -> one score per row of ``audit.rows``,
    higher = the beneficial outcome, as :func:`ui.ll144.session_scores` gives them). ``threshold`` is the chosen
    one on that scale (selected when score ≥ threshold); without one, the view starts at the threshold that
    reproduces the audited decisions. Returns the analysis shown (for the report), or None when there is none;
    bad scores are reported by name and nothing is computed."""
    if audit.rows is None or not scores:
        return None
    harm = audit.positive_is == "harm"
    names = list(scores)
    c1, c2 = st.columns([2, 1])
    name = c1.selectbox("Score", names, key=f"{key}-name", format_func=str) if len(names) > 1 else names[0]
    strategy = c2.selectbox("Calibration bins", list(BINNING), format_func=BINNING.get, key=f"{key}-bins",
                            help="Uniform bins match scikit-learn's calibration_curve; a score with few values (a "
                                 "decile) gets one bin per value under auto.")
    try:
        values = validate_score(np.asarray(scores[name]), str(name), n=len(audit.rows.y))
        y, s, decisions, given = _display(audit, values, threshold)
    except (DataValidationError, ValueError) as exc:
        st.error(md_escape(str(exc)), icon=":material/error:")
        return None
    matched, exact = matching_threshold(s, decisions)
    distinct = np.unique(s)
    start = given if given is not None else matched
    if distinct.size <= 256:
        start = float(distinct[np.searchsorted(distinct, start).clip(0, distinct.size - 1)])
        chosen = float(st.select_slider("Threshold (flagged when score ≥ threshold)" if harm else
                                        "Threshold (selected when score ≥ threshold)", options=distinct.tolist(),
                                        value=start, key=f"{key}-threshold-{name}", format_func=lambda v: f"{v:g}"))
    else:
        chosen = float(st.number_input("Threshold (score ≥ threshold)", value=float(start), key=f"{key}-t-{name}",
                                       format="%.4g"))
    origin = ("the threshold you chose" if given is not None and chosen == start else
              "it reproduces the audited decisions row for row" if exact and chosen == matched else
              "its selection rate is closest to the audited decisions'" if chosen == matched else "set here")
    label = _label_words(audit, harm)
    selected = f"{'flagged' if harm else 'selected'}: {name} ≥ {chosen:g}"
    if harm:
        st.caption(md_escape(f"A positive prediction was declared a harm, so the audit flipped labels and scores. Here "
                             f"they are shown as recorded: the score un-flipped (higher = riskier) and the rate of "
                             f"{label}, so that the calibration reads as the tool's makers read it."))
    try:
        analysis = _analysis(y, s, np.asarray(audit.rows.groups, dtype=object),
                             cached.score_digest(audit, s) + str(harm), chosen, str(name), strategy, alpha, label,
                             selected, harm)
    except (DataValidationError, ValueError) as exc:
        st.error(md_escape(str(exc)), icon=":material/error:")
        return None
    st.markdown("**".join(md_escape(part) for part in analysis.reading.split("**")))   # names escaped, bold kept
    st.caption(md_escape(f"Threshold {chosen:g}: {origin}."))
    _tabs(analysis, str(name), label, chosen, key)
    return analysis


def _tabs(analysis: ScoreAnalysis, name: str, label: str, chosen: float, key: str) -> None:
    """The three figures and every table, each with its download."""
    calibration, roc, sweep, tables = st.tabs(["Calibration", "ROC and error rates", "Threshold sweep", "Tables"])
    score = {"score": name}   # the file names hold the score's name: each file keeps it as it is
    with calibration:
        chart(plots.reliability_diagram(analysis.calibration, name, f"rate of {label}"),
              f"calibration_{name}.html", key=f"{key}-calibration", names=score)
        csv_download(analysis.calibration, f"calibration_{name}.csv", "Download the calibration table (CSV)",
                     key=f"{key}-calibration-csv", index=False, names=score)
    with roc:
        chart(plots.roc_curves(analysis.sweep.by_group, analysis.auc.by_group), f"roc_{name}.html", key=f"{key}-roc",
              names=score)
        st.dataframe(_percent(analysis.at_threshold), width="stretch", hide_index=True, key=f"{key}-rates")
        csv_download(analysis.at_threshold, f"error_rates_{name}.csv", "Download the error rates (CSV)",
                     key=f"{key}-rates-csv", index=False, names=score)
    with sweep:
        chart(plots.threshold_sweep_chart(analysis.sweep.by_group, analysis.sweep.summary, chosen, name),
              f"sweep_{name}.html", key=f"{key}-sweep", names=score)
    with tables:
        for title, table in analysis.tables().items():
            st.markdown(f"**{md_escape(title[0].upper() + title[1:])}** ({len(table):,} rows)")
            st.dataframe(table, width="stretch", hide_index=True, key=f"{key}-table-{title}")
            csv_download(table, f"{title}_{name}.csv", "Download (CSV)", key=f"{key}-csv-{title}", index=False,
                         names=score)


def _percent(table: pd.DataFrame) -> pd.DataFrame:
    """The error-rate table for reading: rates in per cent, one decimal."""
    shown = table.copy()
    rates = [c for c in shown.columns if c not in ("group", "n", "positives", "negatives", "fp", "fn")]
    shown[rates] = (100 * shown[rates]).round(1)
    return shown.rename(columns={c: f"{c} (%)" for c in rates})
