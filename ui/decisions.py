"""The Bias Audit page for an audit of decisions alone (no outcome observed): each attribute's four-fifths answer
first, then the intersections; selection rates with exact intervals; every measure that needs outcomes named as
such, never computed from invented labels."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from fairness_core import plots
from fairness_core.audit import DECISION_METRICS, NEEDS_OUTCOMES, Audit
from fairness_core.wording.decisions import selection_findings, selection_reading
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


def _answer(audit: Audit, settings: VerdictSettings, title: str, reference: str | None = None) -> pd.DataFrame:
    v, findings, ff, _ = _read(audit, settings, reference)
    with st.container(border=True):
        st.markdown(f"**{md_escape(title)}** — {md_escape(findings)}")
        st.caption(md_escape(ff))
    return v


def decisions_view(audit: Audit, base: Audit, settings: VerdictSettings, reference: str) -> None:
    """The answer for decisions alone: each attribute of ``base`` (the audit as loaded) alone first, then the groups
    chosen in the sidebar (``audit``: the intersections or one attribute)."""
    st.info("**Decisions alone.** No outcome was observed, so this audit answers what decisions can: selection rates, "
            "impact ratios and the four-fifths rule, each with its adjusted interval, and the Local Law 144 summary "
            "above. OFI, error rates, equal opportunity and calibration need observed outcomes and are not computed.",
            icon=":material/how_to_reg:")
    if base.attributes:
        st.subheader("Each attribute alone")
        for attribute in base.attributes:
            _answer(base.marginal(attribute), settings, f"By {attribute} alone")
        st.subheader("Groups chosen in the sidebar" if audit is not base else "Intersections")
    v, _, _, shown = _read(audit, settings, reference)
    verdict_summary(v)
    _answer(audit, settings, "What the decisions say", reference)
    chart(plots.selection_rates(audit, settings.alpha), "selection_rates.html", key="selection-rates")
    st.dataframe(styled(shown, 3, P_FORMATS), width="stretch", hide_index=True, key="selection-verdicts",
                 column_config={"reading": st.column_config.TextColumn(width="large"),
                                "pair": st.column_config.TextColumn(pinned=True)})
    csv_download(v, "four_fifths_verdicts.csv", "Download verdicts with every number (CSV)", index=False)
    table = audit.group_table(DECISION_METRICS).rename(columns={"PPR": "selection rate", "PNR": "not selected"})
    table["unknown category"] = table.index.isin(audit.unknown)
    st.subheader("Selection per group")
    st.dataframe(styled(table, 3), width="stretch", key="selection-table")
    csv_download(table, "selection_rates.csv", "Download selection rates (CSV)")
    if audit.unknown:
        st.caption("Unknown categories (" + ", ".join(md_escape(g) for g in audit.unknown) + ") are counted and "
                   "reported, never in the ratios and never the reference.")
    with st.expander("What decisions alone cannot answer", icon=":material/block:"):
        st.markdown(md_escape(NEEDS_OUTCOMES.capitalize()) + ". Upload the observed outcome (who repaid, who "
                    "performed well, who reoffended) beside the decisions to see OFI, the error rates and "
                    "calibration.")
