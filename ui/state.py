"""The one typed object every page reads: the current :class:`Audit`."""

from __future__ import annotations

import streamlit as st

from fairness_core import datasets, vocabulary
from fairness_core.audit import Audit
from fairness_core.verdicts import DEFAULT_OFI_TOLERANCE, VerdictSettings
from fairness_core.vocabulary import DEFAULT_ALPHA
from ui import jobs, saved
from ui.pages import NAVIGATION
from ui.kinds import Loaded, stand_in, two_valued_view
from ui.session import (AUDIT_KEY, CANDIDATES_KEY, DEMO_KEY, GONE_KEY, KIND_KEY, LOADED_FILE_KEY, SAVED_HOURS,
                        SAVED_MODEL_KEY, SAVED_SESSIONS, cached_demo, remember, session_id)
from ui.server import freeze_imports, keep_generated_downloads, return_freed_memory
from ui.widgets import BuiltIn, md_escape

#: The browser tab's icon (a balance, drawn for this project).
FAVICON = datasets.ASSETS_DIR / "favicon.png"


def load_demo(key: str) -> Audit:
    """Load demo ``key`` into the session and return it."""
    audit = cached_demo(key)
    set_audit(audit, demo_key=key)
    return audit


def get_audit() -> Audit:
    """The session's audit; the default demo is preloaded on first open."""
    if AUDIT_KEY not in st.session_state:
        load_demo(datasets.DEFAULT_DEMO)
    return st.session_state[AUDIT_KEY]


def outcomes_or_stop(audit: Audit, what: str) -> None:
    """On a page whose every answer compares decisions with outcomes: for an audit of decisions alone, say so
    in one sentence and stop the page (never numbers from invented labels)."""
    if audit.has_outcomes:
        return
    st.info(f"**{what} needs outcomes.** These data are decisions alone (no outcome column), so there is nothing "
            "here to compute: the Bias Audit page answers what decisions can (selection rates, impact ratios, the "
            "four-fifths rule and the Local Law 144 summary).", icon=":material/how_to_reg:")
    st.page_link("pages/2_Bias_Audit.py", label="Open the bias audit →", icon=":material/balance:")
    st.stop()


def base_audit() -> Audit:
    """The session's audit as loaded (every attribute's intersections), whatever view the sidebar chose."""
    return get_audit()


def current_demo() -> str | None:
    """The demo key when the current data is a demo, else None."""
    return st.session_state.get(DEMO_KEY)


def set_audit(audit: Audit, demo_key: str | None = None) -> None:
    """Replace the current data (only ever called with a validated Audit); a reload of the page keeps it."""
    if not isinstance(audit, Audit):
        raise TypeError("set_audit needs a validated Audit")
    st.session_state[AUDIT_KEY] = audit
    st.session_state[DEMO_KEY] = demo_key
    st.session_state.pop(CANDIDATES_KEY, None)   # candidates belong to the data they came with, never to others
    st.session_state.pop(GONE_KEY, None)
    st.session_state.pop(SAVED_MODEL_KEY, None)   # set again only by "Open in the workbench"
    st.session_state.pop(LOADED_FILE_KEY, None)   # set again only by the Upload page, for the file just read
    st.session_state.pop(KIND_KEY, None)          # amounts or categories: set again only by set_kind
    remember()


def set_kind(loaded: Loaded) -> None:
    """Make an audit of amounts or categories the session's data (issue 53), with its two-valued stand-in as the
    session's Audit (:func:`ui.kinds.stand_in`); the stand-in is built first, so a failure loses nothing."""
    binary = stand_in(loaded)
    set_audit(binary)
    st.session_state[KIND_KEY] = loaded
    remember()


def set_candidates(candidates: datasets.Candidates) -> None:
    """Keep the candidate models of the rows just loaded (call right after :func:`set_audit` with their audit);
    the next :func:`set_audit` or :func:`load_demo` drops them. A reload keeps them with the audit."""
    audit = st.session_state.get(AUDIT_KEY)
    if audit is None or audit.rows is None or len(audit.rows.y) != len(candidates.y):
        raise ValueError("candidates need the row-level audit of the same rows, loaded first")
    st.session_state[CANDIDATES_KEY] = candidates
    remember()


def get_candidates() -> datasets.Candidates | None:
    """The candidate models uploaded with the current data, or None."""
    return st.session_state.get(CANDIDATES_KEY)


#: The adjustments as the sidebar offers them (the registry's labels, fairness_core.vocabulary.ADJUSTMENTS).
ADJUSTMENTS = {key: entry.choice for key, entry in vocabulary.ADJUSTMENTS.items()}


def _kept(key: str, default: object) -> dict:
    """Widget arguments that keep a setting across pages: Streamlit forgets a widget's value when a
    page without it runs, so the value is mirrored in a plain session key and restored from it."""
    store = f"kept-{key}"
    st.session_state.setdefault(store, default)
    st.session_state[key] = st.session_state[store]  # before the widget exists in this run: allowed

    def remember() -> None:
        st.session_state[store] = st.session_state[key]

    return {"key": key, "on_change": remember}


def verdict_settings(outcomes: bool = True, shared: bool = False) -> VerdictSettings:
    """OFI tolerance, significance level and multiplicity adjustment, as one settings object: sidebar widgets shared by Home and
    Bias Audit, kept when moving between pages. Without ``outcomes`` (decisions alone) OFI has no tolerance to
    set: its kept value is returned unused. ``shared``: α and the adjustment were asked already on this run (the
    settings of an amount or categories audit, :mod:`ui.kind_audit`): their values are used, not asked again."""
    if not outcomes:   # no tolerance to set; the page says once what needs outcomes
        tolerance = st.session_state.get("kept-ofi-tol", DEFAULT_OFI_TOLERANCE)
    else:
        tolerance = st.slider("OFI tolerance (|OFI| at or below this counts as ≈ 0)", 0.0, 0.20, step=0.005,
                              format="%.3f", **_kept("ofi-tol", DEFAULT_OFI_TOLERANCE),
                              help="The smallest OFI that matters (a difference of two rates in [−2, 2]). Algorithmic "
                                   "bias is called only when OFI's adjusted interval lies beyond ±tolerance; OFI ≈ 0 "
                                   "only when it lies inside.")
    if shared:
        return VerdictSettings(float(tolerance), float(st.session_state["kept-alpha"]),
                               str(st.session_state["kept-adjust"]))
    alpha = st.select_slider("Significance level α", options=[0.01, 0.05, 0.10], **_kept("alpha", DEFAULT_ALPHA),
                             help="Every claim (beyond, within, or ≠ the null) keeps its error rate α across the pairs "
                                  "under the adjustment below; the intervals printed beside the verdicts are at the "
                                  "matching adjusted level, labelled with it.")
    adjust = st.selectbox("Adjust for many pairs", list(ADJUSTMENTS), format_func=ADJUSTMENTS.get,
                          **_kept("adjust", "holm"),
                          help="With many pairs some look significant by chance. Holm keeps the chance of any false "
                               "call below α; Benjamini–Hochberg keeps the share of false calls below α.")
    return VerdictSettings(float(tolerance), float(alpha), str(adjust))


def data_banner(audit: Audit) -> None:
    """One line saying which data every number on the page comes from."""
    total = audit.total().n
    st.caption(f"**Data:** {md_escape(audit.source)} · {len(audit.groups)} groups · n = {total:,} · "
               f"{md_escape(audit.direction)}")
    if audit.positive_is is None:
        st.warning("Whether a positive prediction is a benefit or a harm for the person was not declared, so a "
                   "benefit is assumed. If it is a harm (e.g. 'likely to reoffend'), every verdict's direction is "
                   "reversed: declare it on the Upload page.", icon=":material/help:")
    for note in audit.notes:
        st.info(md_escape(note), icon=":material/swap_vert:")


#: The sidebar's navigation, (script, label, icon) in order: :data:`ui.pages.NAVIGATION`, the one list of pages.
PAGES = NAVIGATION


def page_setup(title: str, heading: str | None = None) -> Audit:
    """Every page's first call: wide layout, title, sign-in (:func:`ui.auth.require_user`: the sign-in screen
    stops here) and navigation with who is signed in, the session's background jobs kept alive, a notice after
    a server restart, then the session's audit. ``heading``: the page's title, written here when given so that it
    stands above the notice of a page that reads a yes/no view of amounts or categories."""
    from ui import auth

    freeze_imports()
    return_freed_memory()
    keep_generated_downloads()
    # the tab's icon is a file of ours: a Material icon's name makes the browser fetch its picture from a font CDN
    st.set_page_config(page_title=f"{title} · Fairness audit workbench", page_icon=str(FAVICON), layout="wide")
    auth.require_user()   # the sign-in screen (or a server that must not serve) stops here, before any data
    session_id()
    with st.sidebar:
        for script, label, icon in PAGES:
            st.page_link(script, label=label, icon=icon)
        st.divider()
        auth.user_sidebar()
        jobs.keep_alive()
        audit = get_audit()
        if audit.attributes:
            audit = _view(audit)
        saved.sidebar_note()
    if st.session_state.pop("restarted", False):   # after get_audit, whose demo must not clear the notice
        st.session_state[GONE_KEY] = True
        st.session_state["gone-why"] = ("The server restarted since this page was opened (or this link belongs to "
                                        "another browser session)")
    if why := st.session_state.pop("expired", False):
        st.session_state[GONE_KEY] = True
        st.session_state["gone-why"] = why if isinstance(why, str) else (
            f"The data of this link were kept for {SAVED_HOURS} hours and for the {SAVED_SESSIONS} most recent "
            "sessions; they have been released")
    if st.session_state.pop("foreign-link", False):
        st.info("**This link belongs to another browser's session.** Its data and background jobs stay with that "
                "browser; nothing of them is shown here, and this page starts with the demo. To share an audit, "
                "save it on the Bias Audit page and send the link the Saved audits page gives.",
                icon=":material/lock:")
    remember()
    if st.session_state.get(GONE_KEY):
        why = st.session_state.get("gone-why", "The data of this link have been released")
        st.error(f"**Your upload is gone.** {why}, so the data loaded there are no longer on the server. Nothing "
                 "from them is shown. Load your data again on the Upload page, or continue with the demo.",
                 icon=":material/restart_alt:")
        if title != "Upload":
            st.page_link("pages/1_Upload.py", label="Load your data again →", icon=":material/upload_file:")
            if st.button("Continue with the COMPAS demo", key="gone-demo"):
                st.session_state.pop(GONE_KEY, None)
                st.rerun()
            st.stop()
    if heading is not None:   # the page's title first, then (amounts or categories loaded) why it reads a yes/no view
        st.title(heading)
    return two_valued_view(title, audit)


INTERSECTIONS = BuiltIn("every combination")  # never equal to an attribute, whatever its name


def _view(audit: Audit) -> Audit:
    """The sidebar's choice of groups for an audit of several attributes: their intersections or one attribute
    alone (pooled over the others), kept across pages."""
    options = [INTERSECTIONS, *audit.attributes]
    store = "kept-groups-view"
    if st.session_state.get(store) not in options:
        st.session_state[store] = INTERSECTIONS
    choice = st.selectbox("Groups", options, **_kept("groups-view", INTERSECTIONS),
                          format_func=lambda o: (f"every combination of {', '.join(audit.attributes)}"
                                                 if o == INTERSECTIONS else f"by {o} alone"),
                          help="Each attribute alone (its values pooled over the other attributes) or their "
                               "intersections. Every page audits the groups chosen here.")
    if choice == INTERSECTIONS:
        return audit
    cached = st.session_state.get("marginal-audit")
    if not cached or cached[0] is not audit or cached[1] != choice:   # the base audit itself, not its id
        cached = (audit, choice, audit.marginal(choice))
        st.session_state["marginal-audit"] = cached
    return cached[2]
