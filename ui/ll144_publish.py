"""The Bias Audit page's publishable Local Law 144 summary: the user declares which data the audit used (historical
or test data, never assumed) and types what the published page states (the tool's name and version, the audit's
date, the data's dates and source, the distribution date); the page offers the one-page HTML summary and its CSV
(:mod:`fairness_core.presentation.ll144_summary`)."""

from __future__ import annotations

import datetime as dt
import re

import pandas as pd
import streamlit as st

from fairness_core.presentation import ll144_summary as publish
from fairness_core.wording import publication as words
from ui.widgets import md_escape

#: The widgets' keys: the declaration of the data used is read by the report too (:func:`declared`).
DATA_USED, REASON = "ll144-data-used", "ll144-test-reason"
TOOL, AUDIT_DATE, DISTRIBUTION, DATA_FROM, DATA_TO, SOURCE = (
    "ll144-tool", "ll144-audit-date", "ll144-distribution-date", "ll144-data-from", "ll144-data-to", "ll144-source")
#: Each field of :class:`~fairness_core.presentation.ll144_summary.PublicationDetails` by its box's label.
LABELS = {"tool": "Tool's name and version", "audit_date": "Date of this bias audit", "data_from": "Data from",
          "data_to": "Data to", "distribution_date": "Distribution date", "source": "Source of the data",
          "test_data_reason": "Why historical data were insufficient"}
FIELD = re.compile(r"\b(" + "|".join(LABELS) + r")\b")
#: The dates a date box offers.
EARLIEST, LATEST = dt.date(1990, 1, 1), dt.date(2100, 12, 31)


def declared() -> tuple[str | None, str]:
    """The user's declaration of the data the audit used ("historical", "test" or None: not declared) and, with test
    data only, the reason given (read before the widgets are drawn: the report's expander comes first)."""
    kind = st.session_state.get(DATA_USED)
    kind = kind if kind in words.DATA_USED else None
    reason = str(st.session_state.get(REASON) or "").strip() if kind == words.TEST else ""
    return kind, reason


def data_used_caption(where: str = "below") -> str:
    """What the page says of the data used, from the declaration (markdown, escaped); ``where`` the declaration is
    drawn, seen from the caption ("below", "above")."""
    kind, reason = declared()
    return f"**Data this audit used:** {md_escape(words.data_used_text(kind, reason))}" + (
        f" — declare it {where}." if kind is None else f" (as declared {where}).")


def publish_section(summary: pd.DataFrame) -> None:
    """The declaration, the details and the downloads of the published summary of ``summary`` (the Local Law 144
    table the page shows: its rate follows the page's choice)."""
    st.markdown("The rules ask the employer to publish a summary of the bias audit on its website before using the "
                "tool. The rate follows the choice under Local Law 144 summary.")
    st.radio("Data this audit used", list(words.DATA_USED), index=None, key=DATA_USED, horizontal=True,
             format_func=lambda k: {"historical": "historical data (the employer's own use of the tool)",
                                    "test": "test data"}[k],
             help="The rules ask for historical data of the employer's own use of the tool; test data only where "
                  "historical data are insufficient, with the reason and how the test data were made. Nothing is "
                  "assumed: until you choose, the page, the summary and the report say “not declared”.")
    if st.session_state.get(DATA_USED) == words.TEST:
        st.text_area("Why historical data were insufficient, and how the test data were made", key=REASON,
                     max_chars=publish.MAX_TEXT, placeholder="e.g. the tool is new to us; the vendor's test set of "
                     "2,400 anonymized résumés from 2024")
    st.markdown(data_used_caption("above"))
    c1, c2, c3 = st.columns(3)
    tool = c1.text_input("Tool's name and version", key=TOOL, max_chars=publish.MAX_NAME,
                         placeholder="e.g. HireScreen 3.1")
    audit_date = c2.date_input("Date of this bias audit", value=None, min_value=EARLIEST, max_value=LATEST,
                               key=AUDIT_DATE)
    distribution = c3.date_input("Distribution date", value=None, min_value=EARLIEST, max_value=LATEST,
                                 key=DISTRIBUTION, help="The date the employer began using the tool, as the rules "
                                                        "name it.")
    c1, c2, c3 = st.columns(3)
    data_from = c1.date_input("Data from", value=None, min_value=EARLIEST, max_value=LATEST, key=DATA_FROM)
    data_to = c2.date_input("Data to", value=None, min_value=EARLIEST, max_value=LATEST, key=DATA_TO)
    source = c3.text_input("Source of the data", key=SOURCE, max_chars=publish.MAX_TEXT,
                           placeholder="e.g. applications to our US roles, from the applicant tracking system")
    kind, reason = declared()
    try:
        details = publish.PublicationDetails(tool=tool, audit_date=audit_date, data_from=data_from, data_to=data_to,
                                             distribution_date=distribution, source=source, data_used=kind,
                                             test_data_reason=reason)
    except ValueError as exc:   # the library names the argument; the page names the box
        message = FIELD.sub(lambda m: f"“{LABELS[m.group(1)]}”", str(exc))
        st.error(f"**The summary cannot be written:** {md_escape(message)}.", icon=":material/error:")
        return
    if missing := details.missing():
        st.caption("Not given yet (the summary prints “not given” or “not declared”): " + ", ".join(missing) + ".")
    if not publish.fits_one_page(summary, details):
        st.caption("This table is long: the printed summary may continue on a second page.")
    d1, d2 = st.columns(2)
    d1.download_button("Publishable summary (HTML, one page)", data=lambda: publish.summary_html(summary, details),
                       file_name="ll144_bias_audit_summary.html", mime="text/html", key="ll144-publish-html",
                       on_click="ignore", icon=":material/download:")
    d2.download_button("Publishable summary (CSV)", data=lambda: publish.summary_csv(summary),
                       file_name="ll144_bias_audit_summary.csv", mime="text/csv", key="ll144-publish-csv",
                       on_click="ignore", icon=":material/download:")
