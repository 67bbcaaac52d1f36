"""The Bias Audit page's Local Law 144 summary: which rate it gives, the selection rate of the decisions or the
scoring rate of a score the session's data carry (the uploaded candidate models' scores, or the demo's)."""

import numpy as np
import streamlit as st

from fairness_core import datasets
from fairness_core.audit import Audit
from ui import cached
from ui.state import current_demo, get_candidates
from ui.widgets import BuiltIn

#: The Local Law 144 summary's choice of rate (a radio in its expander; the report follows it).
LL144_RATE = "ll144-rate"
DECISIONS = BuiltIn("selection rate (decisions)")   # never equal to a score column's name, whatever it is


@st.cache_resource(max_entries=4, ttl=cached.TTL_S, show_spinner="Loading the demo's scores…")
def demo_scores(key: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The labels and scores of the candidate models demo ``key`` ships (:data:`datasets.CANDIDATE_DEMOS`),
    read-only: shared by the sessions."""
    c = datasets.load_candidates(key)
    y, scores = np.array(c.y, dtype=bool), {k: np.array(v, dtype=float) for k, v in c.scores.items()}
    for values in (y, *scores.values()):
        values.setflags(write=False)
    return y, scores


def session_scores(audit: Audit) -> dict[str, np.ndarray]:
    """The scores the session's data carry, one per row of the audit's rows: the score columns of the candidate
    models uploaded with the rows, or those the demo's candidate models ship (COMPAS: its decile score; Adult:
    both models' scores). Only when their labels are the audit's rows' labels, row for row (the same individuals in
    the same order): never another data set's scores."""
    rows = audit.rows
    if rows is None:
        return {}
    if rows.scores:   # the score columns uploaded with the rows (or a demo's)
        return dict(rows.scores)
    demo = current_demo()
    if demo is None:
        candidates = get_candidates()
        if candidates is None or not candidates.scores:
            return {}
        y, scores = np.asarray(candidates.y, dtype=bool), candidates.scores
    else:
        key = demo.split("_")[0]   # compas_race, compas_sex -> compas; adult_race, adult_sex -> adult
        if key not in datasets.CANDIDATE_DEMOS:
            return {}
        y, scores = demo_scores(key)
    if len(y) != len(rows.y) or not np.array_equal(y, np.asarray(rows.y, dtype=bool)):
        return {}
    return dict(scores)


def chosen_score(audit: Audit, scores: dict[str, np.ndarray]) -> tuple[str, np.ndarray, str] | None:
    """The score whose scoring rate the Local Law 144 summary (and the report) give, with its content hash; None
    for the selection rate. Read before the choice is drawn (the report's expander comes first); a choice that is
    not among this data's options is forgotten."""
    choice = st.session_state.get(LL144_RATE)
    if choice is not None and choice != DECISIONS and not (isinstance(choice, str) and choice in scores):
        del st.session_state[LL144_RATE]
        return None
    if not isinstance(choice, str):
        return None
    return choice, scores[choice], cached.score_digest(audit, scores[choice])
