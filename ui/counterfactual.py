"""The Counterfactual test page's steps (issue 54): make the variants (base texts and a swap table, or the shipped
name list, with a null swap as the baseline) and download them; load the model's results (or the synthetic demo,
one click); and the paired audit — the answer first, then the discordance matrix, the forest plot of paired
differences, each group's rate, every table downloadable, the report and "Save this audit".

Everything computed is the library's (:mod:`fairness_core.counterfactual`,
:mod:`fairness_core.services.counterfactual_files`, :mod:`fairness_core.presentation.report_paired`); a refused input
is said in the library's sentence, naming the column and the file's row, and changes nothing already loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from fairness_core import counterfactual
from fairness_core.counterfactual import NULL_SUFFIX, PairedAudit
from fairness_core.io import DataValidationError
from fairness_core.presentation import report_paired
from fairness_core.presentation.plots.counterfactual import discordance_matrix, paired_forest, paired_rates
from fairness_core.services import counterfactual_files as files
from fairness_core.statistics.paired import PAIRED_VERDICTS
from fairness_core.store import StoreError
from fairness_core.verdicts import VerdictSettings
from fairness_core.wording.levels import level_text
from fairness_core.vocabulary import DEFAULT_ALPHA
from fairness_core.vocabulary import adjustment
from fairness_core.wording.paired import answer, variants_made
from ui import saved
from ui.state import ADJUSTMENTS
from ui.widgets import BuiltIn, chart, csv_download, md_escape, styled

#: Session keys: the loaded results' audit (a :class:`Loaded`), the variants made (DataFrame, warnings).
AUDIT_KEY, VARIANTS_KEY = "cf-loaded", "cf-variants"
#: The built-in choices of the pickers, never equal to a user's value.
EXAMPLE, PASTE, UPLOAD = BuiltIn("the shipped names (Bertrand & Mullainathan 2004)"), BuiltIn("paste"), \
    BuiltIn("upload a file")
AUTOMATIC = BuiltIn("automatic (0/1, true/false, yes/no)")
POSITION = BuiltIn("the row's position")
#: Help for the verdict tiles.
HELP = {"material difference": "The difference's adjusted interval lies beyond ±tolerance: changing only the words "
                               "changed the model's answers by more than the difference you declared material.",
        "materiality unclear": "The interval excludes 0 but reaches inside ±tolerance: a real difference that may "
                               "be too small to matter.",
        "no material difference detected": "The interval lies inside ±tolerance.",
        "inconclusive": "The interval is too wide to decide with these many cases."}


@dataclass(frozen=True)
class Loaded:
    """A counterfactual test's results, audited: the audit, what they came from, a score's unit."""

    audit: PairedAudit
    source: str
    unit: str = ""


def loaded() -> Loaded | None:
    value = st.session_state.get(AUDIT_KEY)
    return value if isinstance(value, Loaded) else None


def load_demo() -> None:
    """The synthetic demo's results as decisions ("advanced" = Yes), each pair against its groups' null swaps."""
    d = files.DEMO
    audit = files.audit_results(files.demo_results(), d.case, d.group, decision=d.decision, positive_is="benefit")
    st.session_state[AUDIT_KEY] = Loaded(audit, d.source)


def settings(kind: str | None) -> VerdictSettings:
    """The sidebar: the tolerance (percentage points of a difference of rates, or a score's units), α and the
    adjustment across pairs."""
    if kind == "score":
        tol = st.number_input("Tolerance (mean score difference that matters)", min_value=0.0, value=2.0, step=0.5,
                              key="cf-tol-score", help="In the score's units: a difference of mean scores at or "
                              "below this counts as no material difference.")
    else:
        tol = st.slider("Tolerance (percentage points)", 0.0, 20.0, 5.0, 0.5, key="cf-tol",
                        help="The smallest difference of selection rates that matters. A pair differs materially "
                             "only when its adjusted interval lies beyond ±tolerance.") / 100
    alpha = st.select_slider("Significance level α", options=[0.01, 0.05, 0.10], value=DEFAULT_ALPHA, key="cf-alpha")
    adjust = st.selectbox("Adjust for many pairs", list(ADJUSTMENTS), format_func=ADJUSTMENTS.get, key="cf-adjust")
    return VerdictSettings(float(tol), float(alpha), str(adjust), amounts=kind == "score")


def _table_from(label: str, key: str, paste_default: str, paste_help: str, parse: Any,
                choices: tuple[BuiltIn, ...]) -> tuple[pd.DataFrame | None, str]:
    """A table the user pastes or uploads (or a built-in choice): (table or None for the built-in, its name)."""
    how = st.radio(label, choices, horizontal=True, key=f"{key}-how", format_func=str)
    if how == PASTE:
        return parse(st.text_area(paste_help, paste_default, height=160, key=f"{key}-paste")), "pasted"
    if how == UPLOAD:
        up = st.file_uploader("CSV, TSV, XLSX or Parquet", type=["csv", "tsv", "txt", "xlsx", "parquet"],
                              key=f"{key}-file")
        if up is None:
            return pd.DataFrame(), ""
        return files.read(up.getvalue(), up.name), up.name
    return None, str(how)


def variants_step() -> None:
    """Step 1: base texts and a swap table → the variants, shown and downloadable as CSV and JSON Lines."""
    st.markdown("Write each base text (a résumé) in the **first group's words**; each variant swaps in another "
                "group's words, by whole word, in three written forms (as written, Capitalized, ALL CAPS), "
                "possessives kept. Send the variants through your model, then load its answers in step 2.")
    left, right = st.columns(2)
    with left:
        try:
            base, _ = _table_from("Base texts", "cf-base", f"\n{files.SEPARATOR}\n".join(files.DEMO_BASE),
                                  f"Base texts, separated by a line holding only {files.SEPARATOR}",
                                  files.texts_from_paste, (PASTE, UPLOAD))
        except DataValidationError as e:
            st.error(md_escape(f"The base texts were not read: {e}"), icon=":material/block:")
            return
        columns = [] if base is None else list(base.columns)
        text = st.selectbox("Text column", columns, key="cf-text", disabled=len(columns) < 2)
        case = st.selectbox("Case id column", [POSITION, *[c for c in columns if c != text]], key="cf-case",
                            format_func=lambda c: str(c) if isinstance(c, BuiltIn) else f"“{c}”")
    with right:
        try:
            swaps, _ = _table_from("Swap table", "cf-swaps", counterfactual.example_swaps().to_csv(index=False),
                                   "A header row of group names, then one row of aligned words per line (CSV)",
                                   files.swaps_from_paste, (EXAMPLE, PASTE, UPLOAD))
        except DataValidationError as e:
            st.error(md_escape(f"The swap table was not read: {e}"), icon=":material/block:")
            return
        table = counterfactual.example_swaps() if swaps is None else swaps
        if swaps is None:
            st.caption("Nine first names per group, from Bertrand & Mullainathan, *Are Emily and Greg More "
                       "Employable than Lakisha and Jamal?* (2004), Table 8; rows aligned alphabetically only.")
        null = st.multiselect("Null swaps (the baseline: other names of the same group)", list(map(str, table.columns)),
                              default=list(map(str, table.columns)), key="cf-null",
                              help="Each pair of groups is read against the null swaps of its own two groups, so "
                                   "every group should have one.")
    if st.button("Make the variants", icon=":material/content_copy:", key="cf-make", disabled=not columns):
        try:
            made = files.make_variants(base, text, table, case=None if isinstance(case, BuiltIn) else case,
                                       null_swap_of=null)
        except ValueError as e:
            st.error(f"**No variants were made.** {md_escape(e)}", icon=":material/block:")
        else:
            st.session_state[VARIANTS_KEY] = made
    made = st.session_state.get(VARIANTS_KEY)
    if made is None:
        return
    v, warned = made
    for w in warned:
        st.warning(md_escape(w), icon=":material/warning:")
    k = v["group"].nunique()
    now = loaded()
    results = None if now is None else (len(now.audit.cases), len(now.audit.groups))
    said = variants_made(len(v) // max(k, 1), k, int(v["group"].astype(str).str.endswith(NULL_SUFFIX).groupby(
        v["group"]).first().sum()), results, demo=now is not None and now.source == files.DEMO.source)
    st.markdown(md_escape(said))
    st.dataframe(v.head(200), hide_index=True, width="stretch", key="cf-variants-table",
                 column_config={"text": st.column_config.TextColumn(width="large")})
    a, b = st.columns(2)
    a.download_button("Variants (JSON Lines: every text exact; send this to a model)",
                      data=lambda: files.variants_jsonl(v), file_name="counterfactual_variants.jsonl",
                      mime="application/jsonl", key="cf-variants-jsonl", on_click="ignore", icon=":material/download:")
    b.download_button("Variants (CSV: cells starting with = + - @ get a leading quote)",
                      data=lambda: files.variants_csv(v), file_name="counterfactual_variants.csv", mime="text/csv",
                      key="cf-variants-csv", on_click="ignore", icon=":material/download:")


def _pick(where: Any, label: str, columns: list[str], wanted: tuple[str, ...], fallback: int, key: str) -> str:
    """A column picker whose default is the first column named as ``wanted``, else the ``fallback``-th."""
    default = next((c for c in columns if c.casefold() in wanted), columns[min(fallback, len(columns) - 1)])
    return where.selectbox(label, columns, index=columns.index(default), key=key)


def results_step() -> None:
    """Step 2: the model's results (one row per case and group) → the paired audit; a refusal says the library's
    sentence and keeps what was loaded."""
    up = st.file_uploader("The model's results: one row per case and group (CSV, TSV, XLSX or Parquet)",
                          type=["csv", "tsv", "txt", "xlsx", "parquet"], key="cf-results-file")
    if up is None:
        st.caption("Columns: the case id, the group (as in the variants) and the model's output: a yes/no decision, "
                   "a score or a rank (1 = first). A variant the model failed on may be left blank: its case counts "
                   "as incomplete.")
        return
    try:
        table = files.read(up.getvalue(), up.name)
    except DataValidationError as e:
        st.error(f"**Nothing was loaded** — the results shown stay as they were. {md_escape(e)}", icon=":material/block:")
        return
    columns = [str(c) for c in table.columns]
    if len(columns) < 3:
        st.error("**Nothing was loaded**: the results need a case, a group and an output column.", icon=":material/block:")
        return
    c1, c2, c3, c4 = st.columns(4)
    case = _pick(c1, "Case id", columns, ("case_id", "case", "id"), 0, "cf-col-case")
    group = _pick(c2, "Group", columns, ("group",), 1, "cf-col-group")
    kind = c3.radio("Output", ["decision", "score", "rank"], key="cf-kind", horizontal=True)
    rest = [c for c in columns if c not in (case, group)] or columns
    output = _pick(c4, "Output column", rest, {"decision": ("decision", "advanced", "selected"), "score": ("score",),
                                               "rank": ("rank",)}[kind], 0, f"cf-col-{kind}")
    positive, direction, unit = None, None, ""
    d1, d2, d3 = st.columns(3)
    if kind == "decision":
        values = [AUTOMATIC, *sorted(table[output].dropna().astype(str).unique().tolist())[:20]]
        positive = d1.selectbox("Positive value", values, key="cf-positive",
                                format_func=lambda c: str(c) if isinstance(c, BuiltIn) else f"“{c}”")
        direction = d2.radio("The positive value is, for the person,", ["benefit", "harm"], key="cf-direction",
                             horizontal=True)
    elif kind == "score":
        unit = d1.text_input("The score's unit", "points", key="cf-unit", max_chars=40)
    groups = sorted(table[group].dropna().astype(str).unique().tolist())[:200]
    nulls = [g for g in groups if g.endswith(NULL_SUFFIX)]
    d3.caption(f"**Null swaps** (found by name, “X{md_escape(NULL_SUFFIX)}”): {len(nulls)} — each the baseline of "
               "its own group, never compared as a group." if nulls else "**No null swap** (a group named "
               f"“X{md_escape(NULL_SUFFIX)}”): the flip rates are not read against a baseline.")
    if st.button("Audit these results", type="primary", icon=":material/play_arrow:", key="cf-audit"):
        try:
            audit = files.audit_results(table, case, group, **{kind: output},
                                        positive=None if isinstance(positive, BuiltIn) else positive,
                                        positive_is=direction)
        except ValueError as e:
            st.error(f"**Nothing was loaded** — the results shown stay as they were. {md_escape(e)}",
                     icon=":material/block:")
        else:
            st.session_state[AUDIT_KEY] = Loaded(audit, up.name, unit)
            st.rerun()


def show_audit(loaded: Loaded, s: VerdictSettings) -> None:
    """Step 3: the answer first (which pairs differ, by how many percentage points, against the baseline), the
    verdict tiles, then the discordance matrix, the forest plot, each group's rate, every table and the report."""
    a = loaded.audit
    tables = _tables(a, s)
    pairs = tables["pairs"]
    unit = loaded.unit if a.kind == "score" else "pp"
    st.caption(f"**Data:** {md_escape(loaded.source)} · {len(a.groups)} groups · {len(a.cases):,} cases · "
               f"{report_paired.OUTPUTS[a.kind]}" + (f" · {a.incomplete:,} incomplete" if a.incomplete else ""))
    said = answer(pairs, a.kind, s.tolerance, a.baseline, loaded.unit, alpha=s.alpha,
                  secondary=report_paired.null_swaps(a))
    with st.container(border=True):
        st.markdown("**The answer.** " + md_escape(said[0]))
        for line in said[1:]:
            st.markdown(md_escape(line))
    counts = pairs["verdict"].value_counts()
    for col, verdict in zip(st.columns(len(PAIRED_VERDICTS)), PAIRED_VERDICTS):
        col.metric(verdict.capitalize(), f"{counts.get(verdict, 0):,}", help=HELP[verdict])
    o = tables["omnibus"].iloc[0]
    level = report_paired.level(pairs, s.alpha)
    st.caption(f"Across all groups ({md_escape(o['test'])}, {md_escape(o['method'])}, null swaps left out): p = "
               f"{o['p_value']:.3g} over {int(o['cases']):,} complete cases. Every interval on this page and in the "
               f"report is at one level, {md_escape(adjustment(s.adjust).prefix)}{level_text(level)} across the "
               f"{len(pairs):,} pairs.")
    st.dataframe(report_paired.reading(pairs, a.kind, loaded.unit, 500, report_paired.null_swaps(a)), hide_index=True,
                 width="stretch", key="cf-reading", column_config={"pair": st.column_config.TextColumn(width="large")})
    csv_download(pairs, "counterfactual_pairs.csv", "Download every pair with every number (CSV)", key="cf-pairs-csv",
                 index=False)
    if a.kind != "score":
        st.subheader("Discordance matrix", anchor=False)
        what = "ranked first" if a.kind == "rank" else "selected"
        chart(discordance_matrix(pairs, list(a.real_groups), what), "discordance_matrix.html", key="cf-discordance")
        csv_download(tables["discordance"], "counterfactual_discordance.csv", "Download the discordant counts (CSV)",
                     key="cf-discordance-csv")
    st.subheader("Paired differences", anchor=False)
    chart(paired_forest(pairs, s.tolerance, unit or "points"), "paired_differences.html", key="cf-forest")
    st.subheader("Each group's rate", anchor=False)
    chart(paired_rates(tables["groups"], 1 - level, null_swaps=report_paired.null_swaps(a)), "paired_rates.html",
          key="cf-rates")
    st.dataframe(styled(tables["groups"], 4), hide_index=True, width="stretch", key="cf-groups")
    csv_download(tables["groups"], "counterfactual_groups.csv", "Download the per-group rates (CSV)", key="cf-groups-csv",
                 index=False)
    if a.incomplete:
        st.caption(f"{a.incomplete:,} case(s) lack some group's answer; each is used wherever its pair is complete.")
        csv_download(tables["incomplete cases"], "incomplete_cases.csv", "Download the incomplete cases (CSV)",
                     key="cf-incomplete-csv", index=False)
    _report(loaded, s, pairs)


def _tables(a: PairedAudit, s: VerdictSettings) -> dict[str, pd.DataFrame]:
    """The report's tables of ``a`` at ``s``, computed once per audit and settings in this session (pages rerun on
    every click)."""
    kept = st.session_state.setdefault("cf-tables", {})
    key = (id(a), s)
    if key not in kept or kept[key][0] is not a:
        kept.clear()
        kept[key] = (a, report_paired.tables(a, s))
    return kept[key][1]


def _report(loaded: Loaded, s: VerdictSettings, pairs: pd.DataFrame) -> None:
    """The report's three downloads and the save form."""
    st.subheader("Report and saving", anchor=False)

    def built() -> report_paired.PairedReport:
        return report_paired.build(loaded.audit, pairs, settings=s, source=loaded.source, unit=loaded.unit)

    r1, r2, r3 = st.columns(3)
    r1.download_button("Counterfactual test report (HTML)", data=lambda: built().html(), key="cf-report-html",
                       file_name="counterfactual_test_report.html", mime="text/html", on_click="ignore",
                       icon=":material/download:")
    r2.download_button("Numbers (JSON)", data=lambda: built().to_json(), key="cf-report-json",
                       file_name="counterfactual_test_report.json", mime="application/json", on_click="ignore",
                       icon=":material/download:")
    r3.download_button("Tables (CSV, zip)", data=lambda: built().csv_zip(), key="cf-report-zip",
                       file_name="counterfactual_test_tables.zip", mime="application/zip", on_click="ignore",
                       icon=":material/download:")
    with st.expander("Save this audit", icon=":material/save:"):
        st.caption("Kept: each distinct pattern of a case's answers across the groups with its count, the pairs' "
                   "discordant counts, the groups, the baseline and these settings — never the texts or the case ids. "
                   "It opens read-only on the Saved audits page.")
        with st.form("cf-save", border=False):
            c1, c2, c3 = st.columns(3)
            name = c1.text_input("Name", key="cf-save-name", max_chars=200)
            model = c2.text_input("Model", key="cf-save-model", max_chars=200)
            period = c3.text_input("Period", key="cf-save-period", max_chars=200)
            go = st.form_submit_button("Save this audit", icon=":material/save:")
        if go:
            if not name.strip():
                st.error("Give the audit a name.", icon=":material/error:")
                return
            try:
                audit_id = saved.store().save(loaded.audit, name, model.strip() or None, period.strip() or None,
                                              user=saved.user(), tolerance=s, source=loaded.source)
            except (ValueError, StoreError) as e:
                st.error(f"**Not saved.** {md_escape(saved.failure(e))}", icon=":material/error:")
                return
            st.success(f"Saved “{md_escape(name)}”, private to you.", icon=":material/check_circle:")
            st.page_link(saved.PAGE, label="Open the saved audit", icon=":material/open_in_new:",
                         query_params={saved.PARAM: audit_id})
