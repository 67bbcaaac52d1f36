"""The Upload page for amounts and categories (issue 53): the demos of an amount and of ordered tiers, the one
sentence that says what an outcome/prediction pair holds (two-valued, ordered categories, unordered categories or
an amount — the user can change it), the questions each kind needs (direction; the amount's unit; the tiers' order
and favourable end), and bad input named by column and row, with nothing computed from it and nothing loaded lost.

An outcome (or, for decisions alone, the prediction) with more than :data:`AMOUNT_MIN_DISTINCT` different numbers is
read as an amount: 20 keeps a COMPAS decile (10 values) or a 1–5 grade a category and a wage, a premium or a limit
an amount. A two-valued outcome beside a many-valued prediction stays two-valued (a score, cut at a threshold), and
so do numbers given without an outcome (decisions alone: a score); text tiers without an outcome are categories.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from fairness_core import datasets
from fairness_core.continuous import ContinuousAudit
from fairness_core.io import DataValidationError
from fairness_core.io.rows import NUMERIC_SHARE
from fairness_core.multiclass import MulticlassAudit
from fairness_core.validation import Problem, lines_for
from fairness_core.wording.kinds import number_text
from ui.kinds import Loaded, loaded_kind
from ui.state import set_kind
from ui.uploads import remember_file, show_problems
from ui.widgets import csv_download, md_escape, styled

#: More different numbers than this in the outcome: an amount; this many or fewer: categories (ask).
AMOUNT_MIN_DISTINCT = 20
KINDS = {"two-valued": "two values (yes/no: the binary audit)",
         "ordered": "ordered categories (tiers, grades)",
         "unordered": "unordered categories (classes)",
         "amount": "an amount (a number: a wage, a premium, a limit)"}
#: Words of a known scale, in order, for guessing the order of text tiers.
_SCALE = {"very low": 0, "low": 1, "medium": 2, "moderate": 2, "med": 2, "high": 3, "very high": 4}


# --------------------------------------------------------------------------- demos


@st.cache_resource(show_spinner="Loading the demo…", max_entries=4)
def demo_loaded(key: str) -> Loaded:
    """Demo ``key`` of :data:`fairness_core.datasets.KIND_DEMOS` as a :class:`Loaded` (built once per server)."""
    demo = datasets.KIND_DEMOS[key]
    frame = demo.frame(datasets.ASSETS_DIR)
    rows = None
    if demo.kind == "amount":
        rows = frame[[demo.label, demo.prediction, *demo.groups]].rename(
            columns={demo.label: "y", demo.prediction: "y_pred"}).reset_index(drop=True)
    return Loaded(demo.load(datasets.ASSETS_DIR), demo.unit, rows, key, demo.label, demo.prediction)


def load_kind_demo(key: str) -> None:
    set_kind(demo_loaded(key))


def demo_title(key: str) -> str:
    return datasets.KIND_DEMOS[key].title if key in datasets.KIND_DEMOS else datasets.DEMOS[key].title


# --------------------------------------------------------------------------- what the columns hold


def _numbers(values: pd.Series) -> pd.Series | None:
    """The column as numbers (NaN where a value is not one) when :data:`~fairness_core.io.rows.NUMERIC_SHARE` of
    its non-missing values read as one, else None: a stray "n/a" does not make an amount text (the guess of the
    columns counts the same way, and the cell is named by :func:`not_numbers`)."""
    x = pd.to_numeric(values, errors="coerce")
    present = int(values.notna().sum())
    return x if present and x.notna().sum() >= NUMERIC_SHARE * present else None


def not_numbers(rows: pd.DataFrame, columns: list[str], most: int = 5) -> list[Problem]:
    """The cells that are not numbers in each of ``columns`` that otherwise holds numbers, by row (as the preview
    and the audit number them) and column: the first ``most`` of each column, and how many more."""
    problems = []
    for column in dict.fromkeys(columns):
        values = rows[column]
        x = _numbers(values)
        if x is None:
            continue
        bad = np.flatnonzero((x.isna() & values.notna()).to_numpy())
        problems += [Problem(f"{values.iloc[i]!r} is not a number", row=int(i) + 1, column=column)
                     for i in bad[:most]]
        if len(bad) > most:
            problems.append(Problem(f"and {len(bad) - most} more cells that are not numbers", column=column))
    return lines_for(problems, rows)


def classify(y: pd.Series | None, p: pd.Series) -> tuple[str, str]:
    """(kind, the sentence saying why) for an outcome ``y`` (None: decisions alone) and a prediction ``p``. The
    different numbers are counted among the values that read as numbers: one bad cell changes no guess.

    >>> classify(pd.Series([1.5, 2.5, "n/a", *range(30)], name="wage"), pd.Series(range(33), name="pred"))
    ('amount', 'the outcome column “wage” holds 32 different numbers (more than 20) and 1 value that is not a number')
    >>> classify(pd.Series(["High", "Low", "Low"], name="seen"), pd.Series(["Low", "Medium", "High"], name="tier"))
    ('ordered', 'the outcome column “seen” holds 2 of the 3 values of a known scale in the prediction column “tier”')
    """
    column = p if y is None else y
    what = f"the {'prediction' if y is None else 'outcome'} column “{column.name}”"
    distinct = column.dropna().unique()
    numbers = _numbers(column)
    if len(distinct) <= 2 and y is not None and _numbers(p) is None:
        tiers = {str(v).strip() for v in p.dropna().unique()}
        seen = {str(v).strip() for v in distinct}
        if len(tiers) > 2 and seen <= tiers:   # an outcome observed as some of the tool's tiers (High / Low)
            known = {t.lower() for t in tiers} <= set(_SCALE)
            return ("ordered" if known else "unordered"), (
                f"{what} holds {len(distinct)} of the {len(tiers)} "
                + ("values of a known scale" if known else "different values")
                + f" in the prediction column “{p.name}”")
    if len(distinct) <= 2:
        return "two-valued", f"{what} holds {len(distinct)} different values"
    if numbers is not None:
        n_numbers = int(numbers.dropna().nunique())
        stray = int((numbers.isna() & column.notna()).sum())
        besides = f" and {stray:,} value{'s' * (stray != 1)} that {'is' if stray == 1 else 'are'} not a number" \
            if stray else ""
        if y is None:   # a score given alone: cut at a threshold
            return "two-valued", (f"{what} holds {n_numbers:,} different numbers{besides} and no outcome was chosen: "
                                  "a score, cut at a threshold")
        if n_numbers > AMOUNT_MIN_DISTINCT:
            return "amount", f"{what} holds {n_numbers:,} different numbers (more than {AMOUNT_MIN_DISTINCT}){besides}"
        return "ordered", f"{what} holds {n_numbers} different numbers ({AMOUNT_MIN_DISTINCT} or fewer){besides}"
    words = {str(v).strip().lower() for v in distinct}
    if words <= set(_SCALE):
        return "ordered", f"{what} holds {len(distinct)} values of a known scale"
    return "unordered", f"{what} holds {len(distinct)} different values"


def guessed_order(values: np.ndarray) -> list[str]:
    """The classes of an outcome and a prediction in a likely order: numbers by value, a known scale by rank,
    anything else alphabetically."""
    keys = list(dict.fromkeys(str(v).strip() for v in values if not pd.isna(v)))
    try:
        return sorted(keys, key=float)
    except ValueError:
        pass
    if all(k.lower() in _SCALE for k in keys):
        return sorted(keys, key=lambda k: _SCALE[k.lower()])
    return sorted(keys)


def choose_kind(rows: pd.DataFrame, label: str | None, prediction: str, ident: Any) -> str:
    """The one sentence saying what the pair holds, and the radio to change it; returns the kind chosen."""
    guess, why = classify(None if label is None else rows[label], rows[prediction])
    options = list(KINDS)
    sentence = st.empty()   # above the radio, written after it: the sentence says what the user chose
    chosen = st.radio("Read the outcome and the prediction as", options, index=options.index(guess),
                      horizontal=True, format_func=KINDS.get,
                      key=f"kind-{hash((ident, label, prediction)) & 0xFFFFFFFF:x}", label_visibility="collapsed")
    sentence.markdown(kind_sentence(why, guess, chosen))
    if chosen == "amount":   # a cell that is no number, named now: the audit will refuse the file until it is fixed
        bad = not_numbers(rows, [c for c in (label, prediction) if c is not None])
        if bad:
            lines = "\n".join(f"- {md_escape(p)}" for p in bad)
            st.warning("**Not every cell is a number.** The guess reads these columns from their other rows, but "
                       "nothing is audited from this file until these cells are corrected (the current data stays):"
                       f"\n\n{lines}", icon=":material/rule:")
    return chosen


def kind_sentence(why: str, guess: str, chosen: str) -> str:
    """What the pair holds, in one sentence that follows the user's choice.

    >>> kind_sentence("the outcome column “y” holds 3 different values", "unordered", "ordered")
    '**What these columns hold:** the outcome column “y” holds 3 different values; you chose to read them as **ordered categories (tiers, grades)** (the guess was unordered categories (classes)).'
    """
    if chosen == guess:
        return (f"**What these columns hold:** {md_escape(why)}, so they are read as **{KINDS[guess]}** — change it "
                "if that is wrong.")
    return (f"**What these columns hold:** {md_escape(why)}; you chose to read them as **{KINDS[chosen]}** (the "
            f"guess was {KINDS[guess]}).")


# --------------------------------------------------------------------------- bad input, by column and row


def located(exc: DataValidationError, columns: dict[str, str]) -> DataValidationError:
    """The library's problems with array positions (``y_true[3]``) read as the file's columns and rows (row 4, as
    the preview numbers them): ``columns`` maps the library's argument names to the file's column names."""
    out = []
    for p in exc.problems:
        message = str(getattr(p, "message", p))
        lead = re.match(r"^(\w+)\[(\d+)\]:\s*(.*)$", message, re.S)
        if lead and lead.group(1) in columns:
            out.append(Problem(lead.group(3), row=int(lead.group(2)) + 1, column=columns[lead.group(1)]))
            continue
        message = re.sub(r"\b(\w+)\[(\d+)\]", lambda m: (f"column {columns[m.group(1)]!r}, row {int(m.group(2)) + 1}"
                                                          if m.group(1) in columns else m.group(0)), message)
        whole = re.match(r"^(y_true|y_pred):\s*(.*)$", message, re.S)
        if whole and whole.group(1) in columns:
            out.append(Problem(whole.group(2), column=columns[whole.group(1)]))
            continue
        message = re.sub(r"\b(y_true|y_pred)\b(?!\[)", lambda m: (f"column {columns[m.group(1)]!r}"
                                                                   if columns.get(m.group(1)) else m.group(0)), message)
        out.append(Problem(message, row=getattr(p, "row", None), column=getattr(p, "column", None)))
    return DataValidationError(out)


def _located_warnings(caught: list, columns: dict[str, str]) -> list[str]:
    return [str(located(DataValidationError(str(w.message)), columns).problems[0]) for w in caught]


# --------------------------------------------------------------------------- each kind's questions


def _direction(key: str, prediction: str) -> str | None:
    return st.radio(f"For the person concerned, a larger “{md_escape(prediction)}” is …", ["benefit", "harm"],
                    index=None, key=key, horizontal=True,
                    format_func={"benefit": "a **benefit** (a salary, a credit limit, a recommended wage)",
                                 "harm": "a **harm** (a premium, a price, a risk score)"}.get,
                    help="The benefit of each person is prediction − outcome for a benefit, outcome − prediction "
                         "for a harm; declaring it wrongly reverses every verdict.")


def amount_flow(rows: pd.DataFrame, label: str | None, prediction: str, groups: list[str], key: str,
                source: str) -> Loaded | None:
    """The amount's questions (direction, unit) and checks; returns the :class:`Loaded` when the user asks to use
    it and it is good, else None (problems shown, nothing loaded)."""
    if label is None:
        st.error("**An amount needs its observed outcome.** Choose the outcome column above: without it there is "
                 "no benefit (prediction against outcome) to measure.", icon=":material/block:")
        return None
    c1, c2 = st.columns([2, 1])
    with c1:
        direction = _direction(f"amount-dir-{key}", prediction)
    unit = c2.text_input("unit", placeholder="e.g. $ a year", key=f"amount-unit-{key}", max_chars=40,
                         help="How the amounts are counted, printed with every number: a leading symbol goes before "
                              "the number (“$ a year” → $200 a year).")
    distinct = rows[label].dropna().unique()
    refused = False
    if len(distinct) <= AMOUNT_MIN_DISTINCT:
        shown = ", ".join(map(str, sorted(distinct, key=str)[:8]))
        st.warning(f"**Column {md_escape(repr(label))} holds only {len(distinct)} different values ({md_escape(shown)}):"
                   " are these ordered categories?** Choose *ordered categories* above, or confirm that they are "
                   "amounts.", icon=":material/help:")
        refused = not st.checkbox("They are amounts all the same", key=f"amount-few-{key}")
    if direction is None:
        st.caption("Say whether a larger prediction is a benefit or a harm to audit the amounts.")
    if not st.button("Audit these amounts", type="primary", key="use-amounts", disabled=direction is None or refused):
        return None
    names = {"y_true": label, "y_pred": prediction, "sensitive_features": " × ".join(groups),
             **{g: g for g in groups}}
    try:
        if not groups:
            raise DataValidationError("choose at least one group column")
        audit = ContinuousAudit.from_predictions(rows[label].to_numpy(), rows[prediction].to_numpy(), rows[groups],
                                                 positive_is=direction, source=source)
    except DataValidationError as exc:
        show_problems(located(exc, names))
        return None
    kept = pd.DataFrame({"y": pd.to_numeric(rows[label]).to_numpy(dtype=float),
                         "y_pred": pd.to_numeric(rows[prediction]).to_numpy(dtype=float)})
    kept[groups] = rows[groups].to_numpy()
    return Loaded(audit, unit.strip(), kept, None, label, prediction)


def classes_flow(rows: pd.DataFrame, label: str | None, prediction: str, groups: list[str], key: str, ordered: bool,
                 source: str) -> Loaded | None:
    """The categories' questions (order and favourable end, or favourable classes) and checks; returns the
    :class:`Loaded` when the user asks to use it and it is good, else None."""
    values = np.concatenate([rows[prediction].to_numpy(dtype=object)]
                            + ([rows[label].to_numpy(dtype=object)] if label is not None else []))
    found = guessed_order(pd.unique(values))
    favourable: Any
    if ordered:
        order = st.multiselect("Order of the tiers, from one end of the scale to the other (remove a tier and add it "
                               "again to move it to the end)", found, default=found, key=f"order-{key}")
        ends = [order[0], order[-1]] if len(order) >= 2 else []
        favourable = st.radio("The end that is good for the person", ends, index=None, key=f"fav-{key}",
                              horizontal=True, format_func=lambda c: f"“{c}” (the {'first' if c == ends[0] else 'last'})")
        ready = favourable is not None and len(order) >= 2
        if not ready:
            st.caption("Declare the order and the end that is good for the person (“Low” for a risk tier) to audit "
                       "the tiers.")
    else:
        order = None
        favourable = st.multiselect("Classes that are good for the person (optional: without them no class's "
                                    "direction is declared)", found, key=f"fav-classes-{key}")
        ready = True
    if not st.button("Audit these categories", type="primary", key="use-classes", disabled=not ready):
        return None
    names = {"y_true": label or "", "y_pred": prediction, "sensitive_features": " × ".join(groups),
             **{g: g for g in groups}}
    try:
        if not groups:
            raise DataValidationError("choose at least one group column")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            audit = MulticlassAudit.from_predictions(None if label is None else rows[label].to_numpy(),
                                                     rows[prediction].to_numpy(), rows[groups], order,
                                                     favourable=favourable or None, source=source)
    except (DataValidationError, ValueError) as exc:
        problems = exc if isinstance(exc, DataValidationError) else DataValidationError(str(exc))
        show_problems(located(problems, names))
        return None
    for sentence in _located_warnings([w for w in caught if issubclass(w.category, UserWarning)], names):
        st.session_state.setdefault("kind-warnings", []).append(sentence)
    return Loaded(audit, "", None, None, label or "", prediction)


def kind_flow(kind: str, upload: Any, rows: pd.DataFrame, label: str | None, prediction: str, groups: list[str],
              sampled: bool) -> None:
    """The rows tab for a pair read as amounts or categories: its questions, its checks, and on success the data
    made the session's (the page reruns and says so)."""
    if sampled:
        st.error("**Amounts and categories need every row in memory**, and this file is counted in place: upload a "
                 "smaller file (or, from Python, fairness_core.io.aggregate_amounts reads it out of core).",
                 icon=":material/block:")
        return
    key = f"{hash((upload.file_id, label, prediction, kind)) & 0xFFFFFFFF:x}"
    source = f"{upload.name}: {prediction} against {label}" if label else f"{upload.name}: {prediction} alone"
    if kind == "amount":
        loaded = amount_flow(rows, label, prediction, groups, key, source)
    else:
        loaded = classes_flow(rows, label, prediction, groups, key, kind == "ordered", source)
    if loaded is None:
        return
    set_kind(loaded)
    remember_file("rows-file", upload.name, f"{len(rows):,} rows")
    what = "amounts" if kind == "amount" else "categories"
    st.session_state["just-loaded"] = f"Audited {len(rows):,} rows of {what} in {len(loaded.audit.groups)} groups"
    st.rerun()


# --------------------------------------------------------------------------- what is loaded


def loaded_note(message: str) -> bool:
    """After loading amounts or categories: what every page now audits (True when shown)."""
    loaded = loaded_kind()
    if loaded is None:
        return False
    with st.container(border=True):
        st.success(f"**{md_escape(message)}.** The Bias Audit page now audits {md_escape(loaded.what)}: "
                   f"{len(loaded.audit.groups)} groups, n = {int(np.sum(loaded.audit.n)):,}, "
                   f"{md_escape(loaded.audit.direction)}.", icon=":material/check_circle:")
        for sentence in st.session_state.pop("kind-warnings", []):
            st.warning(md_escape(sentence), icon=":material/warning:")
        st.page_link("pages/2_Bias_Audit.py", label="Open the bias audit →", icon=":material/balance:")
    return True


def current_data(loaded: Loaded) -> None:
    """The Upload page's "Current data" for amounts or categories."""
    a = loaded.audit
    st.caption(f"**Data:** {md_escape(a.source)} · {len(a.groups)} groups · n = {int(np.sum(a.n)):,} · "
               f"{md_escape(a.direction)}" + (f" · unit: {md_escape(loaded.unit)}" if loaded.unit else ""))
    if loaded.demo:
        explain = datasets.KIND_DEMOS[loaded.demo].explain(a)
        st.markdown(f"**What the numbers say.** {md_escape(explain)}")
    if isinstance(a, ContinuousAudit):   # amounts to 3 significant digits, as the Bias Audit page prints them
        table = a.by_group()[list(AMOUNT_HEADERS)]
        headed = table.rename(columns=AMOUNT_HEADERS)
        st.caption("Per group: the mean observed and predicted amounts, the mean benefit and the prediction's "
                   "errors" + (f", in {md_escape(loaded.unit.strip())}." if loaded.unit.strip() else "."))
        st.dataframe(styled(headed, 3, {h: ("{:,}" if h == "people" else number_text) for h in headed.columns}),
                     width="stretch", key="kind-current")
        csv_download(table, "amounts_by_group.csv", "Download per-group amounts (CSV)")
    else:
        table = a.shares()
        headed = table.rename(columns=SHARE_HEADERS)
        st.dataframe(styled(headed, 3, {h: "{:.1%}" if h.startswith("share") else "{:,}" for h in headed.columns
                                        if h not in ("group", "class")}),
                     width="stretch", hide_index=True, key="kind-current")
        csv_download(table, "class_shares.csv", "Download class shares (CSV)", index=False)


#: The Upload page's headers for the library's names (the CSV downloads keep the library's).
AMOUNT_HEADERS = {"n": "people", "mean_outcome": "mean observed", "mean_prediction": "mean predicted",
                  "mean_benefit": "mean benefit", "mae": "mean absolute error", "rmse": "root mean square error"}
SHARE_HEADERS = {"n": "people in the group", "placed": "placed in the class", "share": "share of the group",
                 "ci_low": "share of the group low", "ci_high": "share of the group high"}
