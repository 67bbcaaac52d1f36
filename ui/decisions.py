"""The Bias Audit page for an audit of decisions alone (no outcome observed): each attribute's four-fifths answer
first, then the intersections; selection rates with exact intervals; every measure that needs outcomes named as
such, never computed from invented labels."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from fairness_core import plots
from fairness_core.audit import DECISION_METRICS, Audit
from fairness_core.common.validation import EXCLUDE_BELOW
from fairness_core.wording.decisions import SELECTION_WORDS, selection_findings, selection_reading
from fairness_core.wording.glossary import MATERIALITY_UNCLEAR, interval_gloss, selection_terms
from fairness_core.reading import three_questions
from fairness_core.verdicts import VerdictSettings
from ui import cached
from ui.widgets import P_FORMATS, chart, csv_download, md_escape, styled, verdict_summary

@cached.per_audit(max_entries=16, ttl=cached.TTL_S, show_spinner="Testing every pair of groups…")
def _read(audit: Audit, settings: VerdictSettings, reference: str | None) -> tuple[pd.DataFrame, str, str, pd.DataFrame]:
    """The four-fifths verdicts, their findings, the four-fifths answer and the table as people read it."""
    v = audit.verdicts(settings, **({"reference": reference} if reference else {}))
    answers = three_questions(audit, v)
    return v, selection_findings(v), answers["four_fifths"]["text"], selection_reading(v)


def _answer(audit: Audit, settings: VerdictSettings, title: str, reference: str | None = None,
            attribute: str | None = None) -> pd.DataFrame:
    """The answer in words; for an ``attribute`` alone, its tiles first and its verdict table below, so the tiles,
    the words and the table give the attribute's counts alike."""
    v, findings, ff, shown = _read(audit, settings, reference)
    with st.container(border=True):
        st.markdown(f"**{md_escape(title)}**")
        if attribute is not None:
            verdict_summary(v, f"pairs of {attribute} categories")
        st.markdown(md_escape(findings))
        st.caption(md_escape(ff))
        st.caption(md_escape(selection_terms(v)))   # the terms above in plain words, where an HR reader meets them
        if attribute is not None:
            with st.expander(f"Every pair of {md_escape(attribute)} categories"):
                _verdict_table(v, shown, attribute)
    return v


def _verdict_table(v: pd.DataFrame, shown: pd.DataFrame, attribute: str | None = None) -> None:
    """The verdicts as people read them, and the CSV with every number (of one ``attribute`` alone, or of the
    groups chosen)."""
    suffix = "" if attribute is None else f"-{attribute}"
    interval = next((c for c in shown.columns if str(c).startswith("impact ratio [")), None)
    st.dataframe(styled(shown, 3, P_FORMATS), width="stretch", hide_index=True, key=f"selection-verdicts{suffix}",
                 column_config={"reading": st.column_config.TextColumn(width="large"),
                                "pair": st.column_config.TextColumn(pinned=True),
                                "verdict": st.column_config.TextColumn(help=MATERIALITY_UNCLEAR),
                                **({interval: st.column_config.TextColumn(help=interval_gloss(v))} if interval else {})})
    if attribute is None:
        csv_download(v, "four_fifths_verdicts.csv", "Download verdicts with every number (CSV)", index=False)
    else:
        csv_download(v, f"four_fifths_verdicts_{attribute}.csv", "Download verdicts with every number (CSV)",
                     key=f"selection-verdicts-csv{suffix}", index=False, names={"attribute": attribute})


def decisions_view(audit: Audit, base: Audit, settings: VerdictSettings, reference: str) -> None:
    """The answer for decisions alone: each attribute of ``base`` (the audit as loaded) alone first — its tiles, its
    words, its table — then the groups chosen in the sidebar (``audit``: the intersections or one attribute). What
    needs outcomes is said once, in the box on top."""
    st.info("**Decisions alone.** No outcome was observed, so this audit answers what decisions can: selection rates, "
            "impact ratios and the four-fifths rule, each with its adjusted interval, and the Local Law 144 summary "
            "above. Whether each decision was right — OFI, error rates, equal opportunity, calibration — needs the "
            "observed outcome (who performed well, who repaid) uploaded beside the decisions.",
            icon=":material/how_to_reg:")
    if base.attributes:
        st.subheader("Each attribute alone")
        for attribute in base.attributes:
            _answer(base.marginal(attribute), settings, f"By {attribute} alone", attribute=attribute)
        st.subheader("Groups chosen in the sidebar" if audit is not base else "Intersections")
    v, _, _, shown = _read(audit, settings, reference)
    verdict_summary(v, "pairs of these groups" if base.attributes else "pairs")
    _answer(audit, settings, "What the decisions say", reference)
    chart(plots.selection_rates(audit, settings.alpha), "selection_rates.html", key="selection-rates")
    _verdict_table(v, shown)
    table = audit.group_table(DECISION_METRICS).rename(columns=SELECTION_WORDS)
    table["unknown category"] = table.index.isin(audit.unknown)
    table[f"under {EXCLUDE_BELOW * 100:g} % of the data"] = table.index.isin(audit.small_groups)
    st.subheader("Selection per group")
    st.dataframe(styled(table, 3), width="stretch", key="selection-table")
    csv_download(table, "selection_rates.csv", "Download selection rates (CSV)")
    left_out = [*audit.small_groups, *audit.unknown]
    if left_out:
        st.caption("Counted and reported, never in the ratios and never the reference: "
                   + ", ".join(md_escape(g) for g in left_out) + f" (groups under {EXCLUDE_BELOW * 100:g} % of the "
                   "data, Local Law 144's rule, and unknown categories).")
