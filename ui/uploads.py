"""The Upload page's reading of files: each uploaded file parsed once (every later click reuses it), what is
derived from it computed once, and problems listed with their rows and columns."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd
import streamlit as st

from fairness_core.audit import Audit
from fairness_core.compare import MAX_MODELS, Candidates
from fairness_core.io import (LARGE_UPLOAD_BYTES, MAX_CELLS, MAX_COLUMNS, ColumnGuess, DataValidationError,
                              aggregate_upload, audit_from_decisions, candidates_from_predictions, cms_from_predictions,
                              distinct_values, parquet_shape, read_sample, read_table, sheet_names, to_numbers)
from fairness_core.statistics.row_counts import as_numbers
from fairness_core.validation import UNKNOWN_VALUES, unknown_values_in

#: Uploads that can be counted in place when large (io.aggregate_upload).
IN_PLACE = (".csv", ".tsv", ".txt", ".parquet", ".pq")
from ui.session import LOADED_FILE_KEY
from ui.widgets import md_escape


def show_problems(exc: DataValidationError) -> None:
    """Every problem with its row and column; the current data stays as it was."""
    lines = "\n".join(f"- {md_escape(p)}" for p in exc.problems[:20])
    more = f"\n- … and {len(exc.problems) - 20} more" if len(exc.problems) > 20 else ""
    st.error(f"**Nothing was loaded** — the current data is unchanged.\n\n{lines}{more}", icon=":material/block:")


PARSED = "parsed-uploads"


def parsed(key: str, ident: tuple, make: Callable[[], Any]) -> tuple[Any, dict]:
    """``make()`` once per uploaded file (``ident``: Streamlit's id of this upload, the sheet): every later
    widget change reuses it. One entry per uploader, kept in this session only; a failure is kept too, so a
    refused file is not parsed again on every click."""
    store = st.session_state.setdefault(PARSED, {})
    entry = store.get(key)
    if entry is None or entry[0] != ident:
        try:
            entry = (ident, make(), {})
        except DataValidationError as exc:
            entry = (ident, exc, {})
        store[key] = entry
    if isinstance(entry[1], DataValidationError):
        raise entry[1]
    return entry[1], entry[2]


def forget(key: str) -> None:
    """The uploader is empty: release its parsed file."""
    st.session_state.get(PARSED, {}).pop(key, None)
    for part in ("sheets", "shape"):
        st.session_state.get(PARSED, {}).pop(f"{key}-{part}", None)


def read_upload(upload, key: str, in_place_when_large: bool = False):  # type: ignore[no-untyped-def]
    """The uploaded file as a text table, parsed once per file and sheet, with a sheet picker for workbooks with
    several sheets and the reader's notices (encoding, a dropped index column) shown; raises
    DataValidationError. Also returns a dict for what is derived from the table (guesses, distinct values)."""
    sheet = None
    if upload.name.lower().endswith((".xlsx", ".xlsm")):
        names, _ = parsed(f"{key}-sheets", (upload.file_id,), lambda: sheet_names(upload.getvalue()))
        if len(names) > 1:
            sheet = st.selectbox("Sheet", names, key=f"{key}-sheet")
    if in_place_when_large and upload.size > LARGE_UPLOAD_BYTES and upload.name.lower().endswith(IN_PLACE):
        table, derived = parsed(key, (upload.file_id, "sample"), lambda: read_sample(upload.getvalue(), upload.name))
        table.attrs["in_place"] = True
        st.info(f"**A large file ({upload.size / 2**20:,.0f} MB).** The page shows its first {len(table):,} rows to "
                "choose the columns and values; *Aggregate and use* then counts every row in place (DuckDB), "
                "without loading the rows into memory. What needs every row in memory (ensemble probabilities, "
                f"features) needs a file under {LARGE_UPLOAD_BYTES / 2**20:,.0f} MB.", icon=":material/database:")
        return table, derived
    columns = None
    if upload.name.lower().endswith((".parquet", ".pq")):
        columns = _parquet_columns(upload, key)
    table, derived = parsed(key, (upload.file_id, sheet, columns),
                            lambda: read_table(upload.getvalue(), upload.name, sheet=sheet, columns=columns))
    for notice in table.attrs.get("notices", []):
        st.info(md_escape(notice), icon=":material/info:")
    return table, derived


def _parquet_columns(upload: Any, key: str) -> tuple[str, ...] | None:
    """For a Parquet file too large to read whole (its footer says so), the columns to read, chosen by the
    user; None reads every column."""
    rows, names = parsed(f"{key}-shape", (upload.file_id,), lambda: parquet_shape(upload.getvalue(), upload.name))[0]
    most = min(MAX_COLUMNS, MAX_CELLS // max(rows, 1))
    if len(names) <= MAX_COLUMNS and rows * len(names) <= MAX_CELLS:
        return None
    chosen = st.multiselect(f"This file has {rows:,} rows × {len(names):,} columns, more than the "
                            f"{MAX_CELLS:,}-cell limit: choose the columns to read (at most {most:,} — the label, the "
                            "prediction, the group columns and any features)", names, max_selections=most,
                            key=f"{key}-columns")
    if not chosen:
        raise DataValidationError(f"{upload.name} is too large to read whole: choose the columns to read above")
    return tuple(chosen)


def once(derived: dict, key: tuple, make: Callable[[], Any]) -> Any:
    """``make()`` once per parsed file and ``key`` (a column's distinct values, the column guess)."""
    if key not in derived:
        derived[key] = make()
    return derived[key]


def ensemble_columns(cols: list[str], label_col: str | None, pred_col: str, group_cols: list[str],
                     off: str | None) -> tuple[list[str], list[str]]:
    """The row-level tab's optional ensemble: probability columns (one per model) and feature columns, for the
    stability and uncertainty tab. ``off``: why neither can be used here (a file counted in place keeps no rows;
    decisions alone have no outcome), or None."""
    with st.expander("Optional: an ensemble's probabilities or features (stability and uncertainty)"):
        if off:
            st.caption(off)
        st.caption("For Virny's stability and uncertainty metrics on the Bias Audit page: map one column "
                   "per model holding that model's probability of the positive value, or pick feature "
                   "columns and the app trains its own bootstrap ensemble on them.")
        free = [c for c in cols if c not in (label_col, *group_cols)]
        prob_cols = st.multiselect("Probability columns (one per model, at least two)", free, key="prob-cols",
                                   disabled=bool(off))
        feature_cols = st.multiselect("Feature columns", [c for c in free if c not in (pred_col, *prob_cols)],
                                      key="feature-cols", disabled=bool(off))
    return ([], []) if off else (prob_cols, feature_cols)


def candidate_columns(rows: Any, derived: dict, cols: list[str], label_col: str | None, pred_col: str,
                      group_cols: list[str], main_positive: Any, use_threshold: bool,
                      off: str | None, scores_off: str | None = None,
                      decisions_only: bool = False) -> tuple[list[str], dict[str, Any], list[str]]:
    """The row-level tab's optional candidate models for the Compare and Mitigate page: other prediction columns
    (with a positive value picked where theirs differ from the main prediction's) and score columns. ``off``: why
    other predictions cannot be used here, or None; ``scores_off``: why scores cannot (a file counted in place).
    For decisions alone (``decisions_only``) the score columns are the tool's scores, kept with the decisions for
    the Local Law 144 scoring rate; other predictions need outcomes."""
    title = ("Optional: the tool's score (Local Law 144 scoring rate)" if decisions_only and not scores_off
             else "Optional: other candidate models (to compare and mitigate)")
    with st.expander(title):
        if decisions_only and not scores_off:
            st.caption("A tool that scores the people it decides on: pick its score column (numbers, higher = more "
                       "likely selected). It is kept with the decisions, and the Bias Audit page's Local Law 144 "
                       "summary then offers its **scoring rate** (the share of a category scoring above the whole "
                       "sample's median) beside the selection rate. Other models' predictions need an outcome "
                       "column.")
        else:
            st.caption("For the Compare and Mitigate page: other models' predictions on the same rows (binary, "
                       "compared with this prediction, which is always the first candidate) and scores to fit "
                       "per-group decision thresholds to (numbers, higher = more likely the positive prediction "
                       "value; a harm is flipped like the prediction).")
            if off:
                st.caption(off)
        others = [c for c in cols if c not in (label_col, pred_col, *group_cols)]
        other_preds = st.multiselect("Other prediction columns (binary)", others, key="cand-pred-cols",
                                     max_selections=MAX_MODELS - 1, disabled=bool(off))
        positive_values = {}
        for col in other_preds:
            values = once(derived, ("values", col), lambda: distinct_values(rows[col]))
            if not any(str(v).strip() == str(main_positive).strip() for v in values):
                positive_values[col] = st.selectbox(f"Positive value of {md_escape(col)}", values,
                                                    index=max(len(values) - 1, 0), key=f"cand-pos-{col}")
        score_cols = st.multiselect("Score columns (numeric)",
                                    [c for c in cols if c not in (label_col, *group_cols, *other_preds)
                                     and (c != pred_col or use_threshold)], key="cand-score-cols",
                                    disabled=bool(scores_off),
                                    help="Higher = more likely the positive prediction value. With a harm "
                                         "the scores are negated, so that higher means the beneficial "
                                         "outcome.")
        if scores_off and scores_off != off:
            st.caption(scores_off)
    if off:
        other_preds, positive_values = [], {}
    return other_preds, positive_values, [] if scores_off else score_cols


#: Why a large file counted in place (io.aggregate_upload) cannot be audited without outcomes, for now.
IN_PLACE_DECISIONS = (f"Decisions alone are not yet counted in place: audit a file under "
                      f"{LARGE_UPLOAD_BYTES / 2**20:,.0f} MB, or choose its outcome column.")

#: The label selectbox's first option: no column holds an observed outcome, so the decisions are audited alone.
DECISIONS_ONLY = "— none: decisions only —"


def _key(*parts: object) -> str:
    """A widget key of its own for each file and column (a new file or column asks afresh, with its own default)."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:12]


def label_column(where: Any, cols: list[str], guess: ColumnGuess) -> str | None:
    """The label column, or None for decisions alone: the first option, preselected when the guess found no
    column named like an actual outcome."""
    options = [DECISIONS_ONLY, *cols]
    chosen = where.selectbox("Label column (actual outcome)", options, key="label-col",
                             index=options.index(guess.label) if guess.label in cols else 0,
                             help="The outcome actually observed for each person (repaid, performed well in the "
                                  "job, reoffended). A tool's own decision (advanced, shortlisted) is the "
                                  "prediction, never the label: with no observed outcome choose the first option, "
                                  "and the decisions are audited alone (selection rates, impact ratios, the "
                                  "four-fifths rule).")
    return None if chosen == DECISIONS_ONLY else chosen


@dataclass(frozen=True)
class Score:
    """A numeric prediction column with more than two values: it is thresholded, never read value by value."""

    values: np.ndarray   # the column's numbers, sorted (missing ones left out; the library names them)
    integer: bool

    @property
    def n(self) -> int:
        return int(self.values.size)

    def selected(self, threshold: float) -> int:
        """How many rows a cutoff selects (score ≥ threshold)."""
        return self.n - int(np.searchsorted(self.values, threshold, side="left"))

    def default(self) -> float:
        """The median, or, where the median is the lowest score (it would select everyone), the next score up."""
        median = float(np.median(self.values))
        if median <= self.values[0]:
            median = float(self.values[np.searchsorted(self.values, self.values[0], side="right")])
        return float(np.ceil(median)) if self.integer else median


def score_of(rows: pd.DataFrame, col: str) -> Score | None:
    """The column as a :class:`Score` when every value present is a number and there are more than two of them."""
    values = as_numbers(rows[col], rows.attrs.get("delimiter", ","))
    present = rows[col].notna().to_numpy()
    numbers = values.to_numpy(dtype=float)[present]
    if not numbers.size or not np.isfinite(numbers).all() or np.unique(numbers).size <= 2:
        return None
    return Score(np.sort(numbers), bool((numbers % 1 == 0).all()))


def positive_prediction(where: tuple[Any, Any], rows: pd.DataFrame, derived: dict, ident: object, pred_col: str,
                        pos_label: Any) -> tuple[Any, float | None, str | None]:
    """The prediction's positive value, or its threshold: ``(positive value, threshold, problem)``. A numeric
    score (more than two numbers) is always thresholded, never read as positive values, with a default inside
    its range (the median) and the rows the cutoff selects shown live; a cutoff that selects every row or none is
    the ``problem`` (the commit waits for another)."""
    value_box, toggle_box = where
    score = once(derived, ("score", pred_col), lambda: score_of(rows, pred_col))
    if score is None:
        values = once(derived, ("values", pred_col), lambda: distinct_values(rows[pred_col]))
        if len(values) > 2 and toggle_box.toggle("Prediction is a score: threshold it", key="use-threshold",
                                                 help="Not every value is a number; thresholding names the first "
                                                      "that is not, by row."):
            numbers = as_numbers(rows[pred_col], rows.attrs.get("delimiter", ",")).dropna()
            start = float(numbers.median()) if len(numbers) else 0.5   # inside the numbers' range, never 0.5 on 0-100
            threshold = value_box.number_input("Positive when score ≥", value=start, key=_key("t", ident, pred_col))
            return None, threshold, None
        default = values.index(pos_label) if pos_label in values else len(values) - 1
        chosen = value_box.selectbox("Positive prediction value", values, index=max(default, 0), key="pos-pred")
        return chosen, None, None
    lo, hi = score.values[0], score.values[-1]
    toggle_box.caption(f"**{md_escape(pred_col)}** is a numeric score ({lo:g} to {hi:g}, median "
                       f"{np.median(score.values):g}): a row is a positive prediction when its score reaches the "
                       "threshold, which must select some rows and not all.")
    default = score.default()
    threshold = value_box.number_input("Positive when score ≥", key=_key("t", ident, pred_col),
                                       value=int(default) if score.integer else default,
                                       step=1 if score.integer else None)
    chosen = score.selected(threshold)
    value_box.caption(f"selects {chosen:,} of {score.n:,} ({chosen / score.n:.0%})".replace("%", " %"))
    if 0 < chosen < score.n:
        return None, float(threshold), None
    return None, float(threshold), (
        f"Threshold {threshold:g} selects {'every row' if chosen else 'no row'}: all {score.n:,} scores in "
        f"'{pred_col}' are {'≥' if chosen else '<'} {threshold:g} (they range from {lo:g} to {hi:g}). Choose a "
        "cutoff inside that range.")


UNKNOWN_SHOWN = 300   # distinct values offered per column in the unknown multiselect


def unknown_categories(rows: pd.DataFrame, derived: dict, ident: object, group_cols: list[str],
                       decisions_only: bool, off: str | None) -> tuple[tuple[str, ...] | None, bool]:
    """Which group values are each attribute's unknown category: ``(values, blank)`` for the library's
    ``unknown`` and ``blank_as_unknown``. Pre-filled with what the library reads as unknown (the usual ways of
    declining, :data:`UNKNOWN_VALUES`); the user adds or removes values per column. Blank values are unknown
    without outcomes and refused with them unless the user ticks the box. Shown: per column, the values read as
    unknown and their rows. ``off``: why unknowns cannot be set here (a file counted in place), or None."""
    if not group_cols:
        return None, False
    read = {col: once(derived, ("unknown", col), lambda: unknown_values_in(rows, [col], UNKNOWN_VALUES)[col])
            for col in group_cols}
    with st.expander("Unknown categories: blank or declined group values", icon=":material/help:",
                     expanded=not off and any(read.values())):   # open where something is read as unknown
        if off:
            st.caption(off)
            return None, False
        st.caption("Values read as an attribute's **unknown** category are counted and reported in their own row, "
                   "never in the ratios and never the reference (as Local Law 144 asks). Add any other value that "
                   "means the person's category is not known, or remove one that is a real category.")
        blank = decisions_only or st.checkbox(
            "Count blank group values as unknown", key=_key("blank", ident),
            help="With outcomes a blank group value is refused unless you say it means 'not known'.")
        chosen: list[str] = []
        for col in group_cols:
            options = once(derived, ("all-values", col), lambda: _named_values(rows[col]))
            default = [v for v, _ in read[col] if v in options]
            blanks = dict(read[col]).get("(blank)", 0) if blank else 0   # unknown without being chosen here
            besides = f", besides its {blanks:,} blank row{'s' if blanks != 1 else ''}" if blanks else ""
            chosen += st.multiselect(f"Values of {md_escape(col)} read as unknown{besides}", options,
                                     default=default, key=_key("unknown", ident, col),
                                     placeholder="no other value" if blanks else "none",
                                     help="Blank values are always an attribute's unknown category here; this box "
                                          "lists the other values read as unknown." if blanks else None)
        found = unknown_values_in(rows, group_cols, tuple(chosen), blank=True)
        for col, values in found.items():
            listed = ", ".join(f"{md_escape(v)} ({n:,} row{'s' if n != 1 else ''})" for v, n in values
                               if blank or v != "(blank)")
            refused = "" if blank else next((f" — {n:,} blank row{'s' if n != 1 else ''}: refused unless counted "
                                             "as unknown" for v, n in values if v == "(blank)"), "")
            st.markdown(f"**{md_escape(col)}** — read as unknown: {listed or 'nothing'}{refused}")
        if len(group_cols) > 1:
            st.caption("A value chosen for one column is read as unknown in every group column.")
    return tuple(chosen), blank


def remember_file(uploader: str, name: str, what: str) -> None:
    """After :func:`ui.state.set_audit`: the current data came from file ``name``, read by the uploader keyed
    ``uploader`` (``what``: "2,400 rows", "12 groups")."""
    st.session_state[LOADED_FILE_KEY] = {"uploader": uploader, "name": name, "what": what}


def loaded_file_note(tabs: dict[str, str]) -> None:
    """At the top of the Upload page, when the uploader (``tabs``: uploader key → its tab's name) that read the
    current data is empty again: which file every page audits. Streamlit's uploader forgets its file when the user
    leaves the page, while the data stay loaded; without this the empty box reads as "nothing loaded"."""
    record = st.session_state.get(LOADED_FILE_KEY)
    if not isinstance(record, dict) or record.get("uploader") not in tabs or st.session_state.get(record["uploader"]):
        return
    st.info(f"**Loaded: {md_escape(record['name'])}, {md_escape(record['what'])}** — every page audits these data. "
            f"The upload box of *{tabs[record['uploader']]}* is empty because the browser does not keep a file "
            "across pages: upload again only to change the data.", icon=":material/task:")


def _named_values(s: pd.Series) -> list[str]:
    """The column's distinct values that are not blank, most frequent first, at most :data:`UNKNOWN_SHOWN`."""
    counts = s.dropna().astype(str).value_counts()
    return [v for v in counts.index[:UNKNOWN_SHOWN] if v.strip()]


def aggregate_rows(upload: Any, rows: pd.DataFrame, *, label: str | None, prediction: str, groups: list[str],
                   positive_label: Any, positive_prediction: Any, threshold: float | None,
                   unknown: tuple[str, ...] | None, blank: bool, positive_is: str | None,
                   probability_columns: list[str], feature_columns: list[str], other_predictions: list[str],
                   positive_values: dict[str, Any], score_columns: list[str]) -> tuple[Audit, Candidates | None]:
    """The row-level tab's choices counted into an audit (and candidate models, when any were picked): a large file
    in place by DuckDB, decisions alone when there is no label, else labels and predictions. Raises
    DataValidationError naming rows and columns."""
    if rows.attrs.get("in_place"):   # every row counted by DuckDB from the bytes; no table of the rows is built
        if label is None:
            raise DataValidationError(IN_PLACE_DECISIONS)
        return aggregate_upload(upload.getvalue(), upload.name, label=label, prediction=prediction, groups=groups,
                                positive=positive_label, positive_prediction=positive_prediction,
                                threshold=threshold, positive_is=positive_is), None
    if label is None:
        return audit_from_decisions(rows, prediction, groups, positive_prediction, threshold=threshold,
                                    unknown=UNKNOWN_VALUES if unknown is None else unknown,
                                    positive_is=positive_is, source=f"{upload.name}",
                                    score_columns=score_columns), None
    parsed = cms_from_predictions(rows, label, prediction, groups, positive_label, positive_prediction,
                                  positive_is=positive_is, threshold=threshold, source=f"{upload.name}",
                                  unknown=unknown or None, blank_as_unknown=blank,
                                  probability_columns=probability_columns,
                                  features=to_numbers(rows[feature_columns]) if feature_columns else None)
    models = None
    if (other_predictions or score_columns) and parsed.rows is not None:
        models = candidates_from_predictions(
            rows, label, positive_label, groups, [prediction, *other_predictions], score_columns, positive_is,
            positive_prediction=positive_prediction, positive_values=positive_values,
            thresholds=None if threshold is None else {prediction: threshold}, title=upload.name)
    return parsed, models


def paired_rows_gate(rows: pd.DataFrame, group_cols: list[str], used: tuple[str | None, ...]) -> None:
    """Stop the Upload page before rows laid out as a counterfactual test (each case once per group:
    :func:`fairness_core.validation.paired_column`) are audited as independent people, unless the user says they
    are: their intervals would be wrong, so the page points to the paired statistics instead."""
    from fairness_core.validation import paired_column

    if len(group_cols) != 1 or bool(rows.attrs.get("in_place")):
        return
    case = paired_column(rows, group_cols[0], exclude=[c for c in used if c])
    if case is None:
        return
    st.warning(f"These rows look paired: column {md_escape(repr(case))} holds each case once per "
               f"{md_escape(repr(group_cols[0]))} group, as a counterfactual test sends each base case once per group. "
               "Variants of one case are not independent people, so an audit of them as rows would print wrong "
               "intervals. Audit them on the Counterfactual test page, with paired statistics.",
               icon=":material/swap_horiz:")
    st.page_link("pages/10_Counterfactual_Test.py", label="Open the counterfactual test →", icon=":material/swap_horiz:")
    if not st.checkbox("These rows are independent people: audit them as rows", key=f"unpaired-{case}"):
        st.stop()
