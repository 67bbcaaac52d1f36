"""Methods: the statistics behind every number the app prints, served from the repository's docs/methods.md."""

from pathlib import Path

import streamlit as st

from ui.state import page_setup

DOCS = Path(__file__).resolve().parents[1] / "docs"

page_setup("Methods")
DOCUMENTS = {"Methods": "methods.md", "Data formats and limits": "data.md", "Server limits": "server.md",
             "Python library": "api.md"}
doc = st.radio("Document", list(DOCUMENTS), horizontal=True, key="methods-doc")
name = DOCUMENTS[doc]
# Our own documents, not user text; "$" is money here, not LaTeX.
st.markdown((DOCS / name).read_text(encoding="utf-8").replace("$", "\\$"))
