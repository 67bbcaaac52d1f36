"""Counterfactual test: change only the name (or the pronouns) in each base text, send every variant through the
model, and count what the model changes — a paired audit of every pair of groups against a null swap's baseline
(issue 54). The steps and the answer are in ui/counterfactual.py; every number is the library's."""

import streamlit as st

from ui import counterfactual as cf
from ui.state import page_setup

page_setup("Counterfactual test")
st.title("Counterfactual test")
st.markdown(
    "Does the model treat *Lakisha Washington* and *Emily Walsh* differently when nothing else in the résumé "
    "differs? Each base case is answered once per group with only the group's words swapped, so the groups differ "
    "in nothing else and every comparison is **paired**: the same cases, compared within each case (exact McNemar, "
    "Tango's paired interval, Cochran's Q). A **null swap** — other names of the same group — shows what the model "
    "changes when nothing meaningful changes.")
loaded = cf.loaded()
with st.sidebar:
    settings = cf.settings(loaded.audit.kind if loaded else None)

if st.button("Load the demo results (synthetic)", icon=":material/science:", key="cf-demo",
                help="400 synthetic résumés × 8 name groups with a built-in preference for White-named variants "
                     "(scripts/make_counterfactual_demo.py)."):
    cf.load_demo()
    st.rerun()
with st.expander("Step 1 · Make the variants", expanded=loaded is None, icon=":material/content_copy:"):
    cf.variants_step()
with st.expander("Step 2 · Load the model's results", expanded=loaded is None, icon=":material/upload_file:"):
    cf.results_step()

if loaded is None:
    st.info("Load the model's results (step 2), or the synthetic demo, to see the paired audit here.",
            icon=":material/info:")
    st.stop()
st.header("The paired audit", anchor=False)
cf.show_audit(loaded, settings)
