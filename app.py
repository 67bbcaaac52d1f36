"""Fairness-audit workbench: ``streamlit run app.py``.

This is the home page; Streamlit serves the pages in ``pages/`` (Upload, Bias
Audit, ...) as a multipage app. Every page reads the session's one
:class:`fairness_core.audit.Audit`, preloaded with demo data on first open.
"""

import streamlit as st

from ui.cached import verdicts_read
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
    tolerance, alpha, adjust = verdict_settings()
data_banner(audit)
read = verdicts_read(audit, tolerance, alpha, adjust)
verdict_summary(read.table)
questions_panel(audit, read.table, read.answers)
st.markdown(f"**What the numbers say.** {md_escape(read.findings)}")
if current_demo():
    st.markdown(f"**About this demo.** {datasets.DEMOS[current_demo()].explain(audit)}")

st.page_link("pages/1_Upload.py", label="Load your own data (CSV, Excel, row-level predictions, typed)",
             icon=":material/upload_file:")
st.page_link("pages/2_Bias_Audit.py", label="Open the bias audit: OFI and DI heatmaps, verdicts, all metrics, "
             "inequality across individuals, stability and uncertainty, the shareable report",
             icon=":material/balance:")
st.page_link("pages/3_Sample_Size_Explorer.py", label="Can the numbers be trusted at these group sizes? MATCH, exact "
             "distributions, holes", icon=":material/scatter_plot:")
st.page_link("pages/4_Smoothing.py", label="Smooth small groups' scores (Cross-Prior Smoothing) and see the error it "
             "removes", icon=":material/blur_linear:")
st.page_link("pages/5_Synthetic_Data.py", label="Generate synthetic rows with group quotas (Conditional HydraGAN) and "
             "check with OFI whether they reduce bias", icon=":material/auto_awesome:")
st.page_link("pages/6_Forecasting.py", label="Probabilistic forecasts with quantile fans (PTN) against two baselines",
             icon=":material/ssid_chart:")
st.page_link("pages/7_Compare_and_Mitigate.py", label="Compare candidate models (which is fairer, at what cost) and "
             "mitigate by per-group thresholds, measured on held-out rows", icon=":material/compare_arrows:")
st.page_link("pages/9_Methods.py", label="Methods: the statistics behind every verdict and the papers cited; data "
             "formats and limits; the Python library", icon=":material/menu_book:")
st.caption("Demo data provenance: assets/PROVENANCE.md in the repository.")
