"""Upload: demo data, a confusion-matrix table, row-level predictions, or a typed table."""

import hashlib
from pathlib import Path

import pandas as pd
import streamlit as st

from fairness_core import datasets
from fairness_core.audit import DECISION_METRICS
from fairness_core.compare import MAX_MODELS
from fairness_core.io import (MAX_ROWS, DataValidationError, cms_from_table, cms_to_table,
                              distinct_values, find_count_columns, guess_columns, read_table)
from ui.state import GONE_KEY, current_demo, data_banner, load_demo, page_setup, set_audit, set_candidates
from ui.uploads import (IN_PLACE_DECISIONS, aggregate_rows, candidate_columns, ensemble_columns, forget,
                        label_column, loaded_file_note, once, paired_rows_gate, positive_prediction, read_upload,
                        remember_file, show_problems, unknown_categories)
from ui.widgets import csv_download, md_escape
from ui import kind_upload
from ui.kinds import loaded_kind

DATA_DOC = Path(__file__).resolve().parents[1] / "docs" / "data.md"

audit = page_setup("Upload")
st.title("Load data")
st.write("Audit a model or a screening tool from what you have: its **per-group confusion matrices**, its "
         "**row-level predictions** with the outcomes observed, or its **decisions alone** (who was selected, no "
         "outcome column: selection rates, impact ratios and the Local Law 144 summary). Say for each upload whether "
         "the positive prediction is a benefit (hired, released, approved) or a harm (flagged as likely to reoffend) "
         "for the person: harms are flipped so that every measure reads the favourable decision.")


DIRECTIONS = {"benefit": "a **benefit** for the person (approved, hired, released, promoted)",
              "harm": "a **harm** for the person (flagged, denied, judged likely to reoffend)"}


def direction_question(key: str, what: str, context: tuple = ()) -> str | None:
    """Ask whether the positive value is a benefit or a harm, with no answer preselected: it decides the direction
    of every verdict. The answer belongs to ``context`` (the file, columns, positive values, threshold): when any
    of them changes the question is asked afresh. Returns "benefit", "harm" or None (not answered yet)."""
    if context:
        key = f"{key}-{hashlib.sha256(repr(context).encode()).hexdigest()[:12]}"
    return st.radio(f"For the person concerned, {md_escape(what)} is …", list(DIRECTIONS), index=None, key=key,
                    format_func=DIRECTIONS.get, horizontal=True,
                    help="Every measure here reads a positive prediction as the favourable decision. A harm (COMPAS's "
                         "'high risk') is flipped, so that the audit's positive is its opposite; auditing a harm as "
                         "if it were a benefit reverses every verdict.")


def commit(new_audit, message: str, candidates=None,  # type: ignore[no-untyped-def]
           file: tuple[str, str, str] | None = None) -> None:
    """Make ``new_audit`` the session's data (with the candidate models of its rows, if any; ``file``: the
    uploader, file name and what was read, named when the page opens again); the next run says so at the top
    and offers the audit."""
    set_audit(new_audit)
    if candidates is not None:
        set_candidates(candidates)
    if file is not None:
        remember_file(*file)
    st.session_state["just-loaded"] = message
    st.rerun()


if (loaded := st.session_state.pop("just-loaded", None)) and kind_upload.loaded_note(loaded):
    pass   # amounts or categories: what the Bias Audit page now audits
elif loaded:
    with st.container(border=True):
        unknown = f" ({len(audit.unknown)} of them an unknown category)" if audit.unknown else ""
        st.success(f"**{md_escape(loaded)}.** Every page now audits these data: {len(audit.groups)} groups{unknown}, "
                   f"n = {audit.total().n:,}, {md_escape(audit.direction)}.",
                   icon=":material/check_circle:")
        st.page_link("pages/2_Bias_Audit.py", label="Open the bias audit →", icon=":material/balance:")
else:
    loaded_file_note({"cm-file": "Confusion-matrix file", "rows-file": "Row-level predictions"})


with st.expander("Data formats and limits", icon=":material/help:"):
    st.markdown(DATA_DOC.read_text(encoding="utf-8").split("\n", 2)[2])  # the page's own title is enough

demo_tab, table_tab, rows_tab, type_tab = st.tabs(
    ["Demo data", "Confusion-matrix file", "Row-level predictions", "Type or paste"], key="upload-tab")

with demo_tab:
    keys = [*datasets.DEMOS, *datasets.KIND_DEMOS]   # yes/no demos, then amounts and tiers
    shown_demo = current_demo() or (loaded_kind().demo if loaded_kind() else None)
    chosen = st.selectbox("Demo data set", keys, format_func=kind_upload.demo_title,
                          index=keys.index(shown_demo) if shown_demo in keys else 0)
    if st.button("Load demo", type="primary", key="load-demo"):
        if chosen in datasets.KIND_DEMOS:
            kind_upload.load_kind_demo(chosen)
            st.session_state["just-loaded"] = f"Loaded the demo “{kind_upload.demo_title(chosen)}”"
        else:
            load_demo(chosen)
        st.rerun()
    st.caption("COMPAS: ProPublica's Broward County data and filter · Adult: UCI census income with predictions "
               "from a cross-fitted logistic regression · Ricci: New Haven firefighter exams (the thesis's Table 3.1) · "
               "the two hiring tools: synthetic applicants, decisions alone and decisions with a score (Local Law 144) · "
               "Pay model: an hourly wage recommended without sex (an amount) · COMPAS's three tiers (ordered). "
               "Provenance in assets/PROVENANCE.md.")

with table_tab:
    st.write("One row per group: a **group** column (or two, for intersections) and **TP, FN, FP, TN** "
             "(any case; *true positives* etc. also work). CSV, TSV, XLSX or Parquet.")
    st.code("group,TP,FN,FP,TN\nA,1,0,0,5\nB,7,0,1,10", language="text")
    upload = st.file_uploader("Confusion-matrix table", type=["csv", "tsv", "txt", "xlsx", "parquet"], key="cm-file")
    if upload is None:
        forget("cm-file")
    else:
        try:
            table, _ = read_upload(upload, "cm-file")
            others = [c for c in table.columns if c not in find_count_columns(table.columns).values()]
            chosen = None
            if len(others) > 2:  # extra columns (rates, notes): the user says which are groups
                chosen = st.multiselect("Besides TP, FN, FP, TN this table has several columns: pick the group "
                                        "column(s); the rest are ignored", others, default=others[:1],
                                        max_selections=2, key="cm-group-cols")
            meaning = st.text_input("In this table, positive means", placeholder="e.g. approved, hired, reoffends",
                                    key="cm-positive", max_chars=80)
            cm_direction = direction_question("cm-direction", "the table's positive class"
                                              + (f" ({meaning.strip()})" if meaning.strip() else ""),
                                              (upload.file_id, meaning.strip()))
            parsed = cms_from_table(table, group_columns=chosen or None, source=f"{upload.name}",
                                    positive=meaning, positive_is=cm_direction)
        except DataValidationError as exc:
            show_problems(exc)
        else:
            st.success(f"{len(parsed.groups)} groups read from {md_escape(upload.name)}; positive = "
                       f"{md_escape(parsed.positive_outcome)}.")
            for note in parsed.notes:
                st.caption(md_escape(note))
            st.dataframe(parsed.cells(), width="stretch")
            if cm_direction is None:
                st.caption("Say whether the positive class is a benefit or a harm to use these groups.")
            if st.button("Use these groups", type="primary", key="use-cm-file", disabled=cm_direction is None):
                commit(parsed, f"Loaded {len(parsed.groups)} groups from {upload.name}",
                       file=("cm-file", upload.name, f"{len(parsed.groups)} groups"))

with rows_tab:
    st.write(f"One row per individual: the model's or tool's **decision** (or a score), one or more **group** columns "
             f"(several give intersections) and, where it was observed, the actual **outcome** (the label). Without "
             f"an outcome the decisions are audited alone. Up to {MAX_ROWS:,} rows.")
    upload = st.file_uploader("Predictions table", type=["csv", "tsv", "txt", "xlsx", "parquet"], key="rows-file")
    if upload is None:
        forget("rows-file")
    else:
        try:
            rows, derived = read_upload(upload, "rows-file", in_place_when_large=True)
        except DataValidationError as exc:
            show_problems(exc)
            rows = None
        if rows is not None:
            sampled = bool(rows.attrs.get("in_place"))   # a large file counted in place: no rows kept
            st.caption(f"the first {len(rows):,} rows × {rows.shape[1]} columns of a {upload.size / 2**20:,.0f} MB file"
                       if sampled else f"{len(rows):,} rows × {rows.shape[1]} columns")
            preview = rows.head(8).set_axis(range(1, min(8, len(rows)) + 1))  # rows as errors count them
            preview.attrs = {}   # the reader's notices stay with the upload, not in the browser
            st.dataframe(preview, width="stretch")
            cols = rows.columns.tolist()
            guess = once(derived, ("guess",), lambda: guess_columns(rows))
            if guess.reasons:
                st.caption("Guessed from names and values — check them: " + md_escape("; ".join(guess.reasons)) + ".")
            for passed_over in guess.warnings:   # a decision column the guess could not take: why, at once
                st.warning(md_escape(passed_over), icon=":material/rule:")
            c1, c2, c3 = st.columns(3)
            label_col = label_column(c1, cols, guess)
            decisions_only = label_col is None
            pred_col = c2.selectbox("Prediction column (the decision or score)", cols, key="pred-col",
                                    index=cols.index(guess.prediction) if guess.prediction in cols
                                    else min(1, len(cols) - 1))
            candidates = [c for c in cols if c not in (label_col, pred_col)]
            default_groups = [c for c in guess.groups if c in candidates] or candidates[:1]
            group_cols = c3.multiselect("Group column(s)", candidates, default=default_groups, key="group-cols",
                                        help="Several columns: each attribute alone and their intersections are "
                                             "all audited (switch between them in the sidebar).")
            if label_col == pred_col:
                st.warning("The label and the prediction are the same column: a decision cannot be its own truth. "
                           "With no observed outcome, choose the label's first option and audit the decisions "
                           "alone.", icon=":material/warning:")
            paired_rows_gate(rows, group_cols, (label_col, pred_col))   # variants of one case are no independent rows
            kind = kind_upload.choose_kind(rows, label_col, pred_col, upload.file_id)
            if kind != "two-valued":   # amounts or categories: their own questions (ui.kind_upload)
                kind_upload.kind_flow(kind, upload, rows, label_col, pred_col, group_cols, sampled)
            else:
                c1, c2, c3 = st.columns(3)
                pos_label = None
                if not decisions_only:
                    label_values = once(derived, ("values", label_col), lambda: distinct_values(rows[label_col]))
                    pos_label = c1.selectbox("Positive label value", label_values, index=len(label_values) - 1,
                                             key="pos-label")
                else:
                    c1.caption("No outcome column: selection rates, impact ratios and the four-fifths rule are audited; "
                               "OFI and error rates need observed outcomes.")
                pos_pred, threshold, threshold_problem = positive_prediction((c2, c3), rows, derived, upload.file_id,
                                                                             pred_col, pos_label)
                refused = threshold_problem or (IN_PLACE_DECISIONS if sampled and decisions_only else None)
                if refused:   # asked again before anything is computed
                    st.error(md_escape(refused), icon=":material/block:")
                unknown, blank = unknown_categories(rows, derived, upload.file_id, group_cols, decisions_only,
                                                    "Unknown categories need every row in memory: not for a file counted "
                                                    "in place." if sampled else None)
                shown_positive = (f"a prediction of {pos_pred!r}" if pos_pred is not None
                                  else f"a score of {threshold:g} or more")
                row_direction = direction_question("rows-direction", shown_positive,
                                                   (upload.file_id, label_col, str(pos_label), pred_col, str(pos_pred),
                                                    threshold))
                in_memory = "These need every row in memory: not for a file counted in place." if sampled else None
                off = in_memory or ("These need an outcome column: not for decisions alone." if decisions_only else None)
                prob_cols, feature_cols = ensemble_columns(cols, label_col, pred_col, group_cols, off)
                other_preds, positive_values, score_cols = candidate_columns(
                    rows, derived, cols, label_col, pred_col, group_cols, pos_label if pos_pred is None else pos_pred,
                    threshold is not None, off, in_memory, decisions_only)
                if row_direction is None:
                    st.caption("Say whether the positive prediction is a benefit or a harm to aggregate.")
                if st.button("Aggregate and use", type="primary", key="use-rows",
                             disabled=row_direction is None or bool(refused)):
                    try:
                        if refused:   # never computed: the same refusal the library would give
                            raise DataValidationError(refused)
                        parsed, models = aggregate_rows(
                            upload, rows, label=label_col, prediction=pred_col, groups=group_cols, positive_label=pos_label,
                            positive_prediction=pos_pred, threshold=threshold, unknown=unknown, blank=blank,
                            positive_is=row_direction, probability_columns=prob_cols, feature_columns=feature_cols,
                            other_predictions=other_preds, positive_values=positive_values, score_columns=score_cols)
                    except DataValidationError as exc:
                        show_problems(exc)
                    else:
                        kept = list(parsed.rows.scores or {}) if decisions_only and parsed.rows is not None else []
                        extra = (f", with {len(models.predictions)} candidate models and {len(models.scores)} score(s) "
                                 "for Compare and Mitigate" if models is not None else
                                 f", with the scoring rate of {', '.join(map(repr, kept))} for Local Law 144" if kept
                                 else "")
                        what = "decisions" if decisions_only else "rows"
                        commit(parsed, f"Aggregated {parsed.total().n:,} {what} into {len(parsed.groups)} groups{extra}",
                               models, ("rows-file", upload.name, f"{parsed.total().n:,} rows"))


with type_tab:
    st.write("Edit the table (add rows at the bottom), or paste CSV text below it.")
    # decisions alone have no confusion matrices to edit: their selected rows are not true positives
    starting = cms_to_table(audit) if audit.has_outcomes else pd.DataFrame(
        {"group": ["A", "B"], "TP": [0, 0], "FN": [0, 0], "FP": [0, 0], "TN": [0, 0]})
    edited = st.data_editor(starting, num_rows="dynamic", width="stretch", key="cm-editor",
                            column_config={c: st.column_config.NumberColumn(c, min_value=0, step=1)
                                           for c in ("TP", "FN", "FP", "TN")})
    pasted = st.text_area("…or paste CSV (header: group,TP,FN,FP,TN)", height=120, key="cm-paste")
    typed_direction = direction_question("typed-direction", "the positive class (TP + FP predicted positive)")
    if st.button("Use this table", type="primary", key="use-typed", disabled=typed_direction is None):
        try:
            if pasted.strip():
                source = read_table(pasted.encode("utf-8"), "pasted.csv")
            else:
                source = pd.DataFrame(edited).dropna(how="all")
            parsed = cms_from_table(source, source="typed table", positive_is=typed_direction)
        except DataValidationError as exc:
            show_problems(exc)
        else:
            commit(parsed, f"Loaded {len(parsed.groups)} typed groups")

if st.session_state.get(GONE_KEY):
    st.stop()   # the page said the upload is gone; no demo shown in its place
st.divider()
st.subheader("Current data")
if loaded_kind() is not None:
    kind_upload.current_data(loaded_kind())
    st.page_link("pages/2_Bias_Audit.py", label="Go to the bias audit →", icon=":material/balance:")
    st.stop()
data_banner(audit)
if current_demo():
    st.markdown(f"**What the numbers say.** {datasets.DEMOS[current_demo()].explain(audit)}")
if audit.has_outcomes:
    st.dataframe(audit.cells(), width="stretch")
    csv_download(audit.cells(), "confusion_matrices.csv", "Download confusion matrices (CSV)")
else:   # decisions alone: who was selected, never as confusion matrices (no outcome was observed)
    selection = audit.group_table(DECISION_METRICS).rename(columns={"PPR": "selection rate", "PNR": "not selected"})
    st.dataframe(selection, width="stretch")
    csv_download(selection, "selection_rates.csv", "Download selection per group (CSV)")
st.page_link("pages/2_Bias_Audit.py", label="Go to the bias audit →", icon=":material/balance:")
