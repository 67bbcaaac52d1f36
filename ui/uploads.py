"""The Upload page's reading of files: each uploaded file parsed once (every later click reuses it), what is
derived from it computed once, and problems listed with their rows and columns."""

from __future__ import annotations

from typing import Any, Callable

import streamlit as st

from fairness_core.compare import MAX_MODELS
from fairness_core.io import (LARGE_UPLOAD_BYTES, MAX_CELLS, MAX_COLUMNS, DataValidationError, distinct_values,
                              parquet_shape, read_sample, read_table, sheet_names)

#: Uploads that can be counted in place when large (io.aggregate_upload).
IN_PLACE = (".csv", ".tsv", ".txt", ".parquet", ".pq")
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


def ensemble_columns(cols: list[str], label_col: str, pred_col: str, group_cols: list[str],
                     sampled: bool) -> tuple[list[str], list[str]]:
    """The row-level tab's optional ensemble: probability columns (one per model) and feature columns, for the
    stability and uncertainty tab. ``sampled``: a file counted in place keeps no rows, so both are off."""
    with st.expander("Optional: an ensemble's probabilities or features (stability and uncertainty)"):
        if sampled:
            st.caption("These need every row in memory: not for a file counted in place.")
        st.caption("For Virny's stability and uncertainty metrics on the Bias Audit page: map one column "
                   "per model holding that model's probability of the positive value, or pick feature "
                   "columns and the app trains its own bootstrap ensemble on them.")
        free = [c for c in cols if c not in (label_col, *group_cols)]
        prob_cols = st.multiselect("Probability columns (one per model, at least two)", free, key="prob-cols",
                                   disabled=sampled)
        feature_cols = st.multiselect("Feature columns", [c for c in free if c not in (pred_col, *prob_cols)],
                                      key="feature-cols", disabled=sampled)
    return prob_cols, feature_cols


def candidate_columns(rows: Any, derived: dict, cols: list[str], label_col: str, pred_col: str,
                      group_cols: list[str], main_positive: Any, use_threshold: bool,
                      sampled: bool) -> tuple[list[str], dict[str, Any], list[str]]:
    """The row-level tab's optional candidate models for the Compare and Mitigate page: other prediction columns
    (with a positive value picked where theirs differ from the main prediction's) and score columns."""
    with st.expander("Optional: other candidate models (to compare and mitigate)"):
        st.caption("For the Compare and Mitigate page: other models' predictions on the same rows (binary, "
                   "compared with this prediction, which is always the first candidate) and scores to fit "
                   "per-group decision thresholds to (numbers, higher = more likely the positive prediction "
                   "value; a harm is flipped like the prediction).")
        if sampled:
            st.caption("Candidates need every row in memory: not for a file counted in place.")
        others = [c for c in cols if c not in (label_col, pred_col, *group_cols)]
        other_preds = st.multiselect("Other prediction columns (binary)", others, key="cand-pred-cols",
                                     max_selections=MAX_MODELS - 1, disabled=sampled)
        positive_values = {}
        for col in other_preds:
            values = once(derived, ("values", col), lambda: distinct_values(rows[col]))
            if not any(str(v).strip() == str(main_positive).strip() for v in values):
                positive_values[col] = st.selectbox(f"Positive value of {md_escape(col)}", values,
                                                    index=max(len(values) - 1, 0), key=f"cand-pos-{col}")
        score_cols = st.multiselect("Score columns (numeric)",
                                    [c for c in cols if c not in (label_col, *group_cols, *other_preds)
                                     and (c != pred_col or use_threshold)], key="cand-score-cols",
                                    disabled=sampled,
                                    help="Higher = more likely the positive prediction value. With a harm "
                                         "the scores are negated, so that higher means the beneficial "
                                         "outcome.")
    return other_preds, positive_values, score_cols
