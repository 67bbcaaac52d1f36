"""Fairness-audit workbench: ``streamlit run app.py``.

The entry point only sets up the page and the navigation; each page lives in
``pages/`` and reads the session's one :class:`fairness_core.audit.Audit`.
"""

import streamlit as st

from ui.state import get_audit

st.set_page_config(page_title="Fairness audit workbench", page_icon="⚖️", layout="wide")

get_audit()  # preload the demo data on first open, whatever page the user lands on

pages = [
    st.Page("pages/upload.py", title="Upload", icon=":material/upload_file:", default=True),
    st.Page("pages/bias_audit.py", title="Bias Audit", icon=":material/balance:"),
]
st.navigation(pages).run()
