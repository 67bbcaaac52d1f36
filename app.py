"""Fairness-audit workbench: ``streamlit run app.py``.

This is the home page; Streamlit serves the pages in ``pages/`` (Upload, Bias
Audit, ...) as a multipage app. Every page reads the session's one
:class:`fairness_core.audit.Audit`, preloaded with demo data on first open.
"""

import streamlit as st

from ui.cached import verdicts_read
from ui.pages import PAGES
from ui.state import current_demo, data_banner, page_setup, verdict_settings
from ui.widgets import md_escape, questions_panel, verdict_summary
from fairness_core import datasets

audit = page_setup("Home")

st.title("Fairness audit workbench")
st.markdown(
    "Audit a classifier for bias from its **per-group confusion matrices**. The **Objective Fairness Index** "
    "(OFI, the difference of marginal benefits (FP − FN)/n) says whether the *algorithm* treats a group "
    "unfairly relative to its actual labels; **disparate impact** (DI) with the four-fifths rule says whether "
    "selection rates differ. Read together against the tolerance you set (the smallest OFI that matters): OFI "
    "shown beyond it means the algorithm is at fault; OFI shown within it with DI beyond the four-fifths band "
    "a systemic disparity outside it. Every verdict rests on an interval at the multiplicity-adjusted level, "
    "printed beside it; when the data cannot tell, the verdict says *inconclusive*."
)
with st.sidebar:
    settings = verdict_settings(outcomes=audit.has_outcomes)
data_banner(audit)
read = verdicts_read(audit, settings)
verdict_summary(read.table)
questions_panel(audit, read.table, read.answers)
st.markdown(f"**What the numbers say.** {md_escape(read.findings)}")
if current_demo():
    st.markdown(f"**About this demo.** {datasets.DEMOS[current_demo()].explain(audit)}")

for p in PAGES:
    if p.summary:
        st.page_link(p.script, label=p.summary, icon=p.icon)
st.caption("Demo data provenance: assets/PROVENANCE.md in the repository.")
