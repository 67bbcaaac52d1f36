"""Methods: the statistics behind every number the app prints, and the other documents of docs/, served in the app."""

import re
from pathlib import Path

import streamlit as st

from ui.state import page_setup

DOCS = Path(__file__).resolve().parents[1] / "docs"

page_setup("Methods")
DOCUMENTS = {"Methods": "methods.md", "Guide to the pages": "guide.md", "Data formats and limits": "data.md",
             "Server limits": "server.md", "Python library": "api.md", "Measured results": "results.md",
             "Benchmarks": "benchmarks.md"}
doc = st.radio("Document", list(DOCUMENTS), horizontal=True, key="methods-doc")
name = DOCUMENTS[doc]
# Our own documents, not user text; "$" is money here, not LaTeX. A link to another document names it (the
# radio above opens it): relative links lead nowhere inside the app.
body = (DOCS / name).read_text(encoding="utf-8").replace("$", "\\$")
st.markdown(re.sub(r"\[([^\]]+)\]\((?!https?:)[^)\s]+\)", r"**\1**", body))
