"""Saved audits in the app: one store for the server process, the sidebar note, the "Save this audit" form of the
Bias Audit page, the owner's tools (share, links, who opened it) and a model's trend across its saved periods.
Every call names the session's user (:func:`user`), an identity (issuer, subject): the store enforces who may see,
open, delete, share, transfer and link. People are shown by the e-mail (else name) they signed in with
(:func:`shown`), and an owner names whom to share or transfer with by that e-mail (:func:`resolve`): one e-mail
shown by two identities (two providers) is refused with both shown, never guessed.

The store is :class:`fairness_core.store.AuditStore` at :func:`fairness_core.store.default_url`
(``FAIRNESS_AUDIT_STORE``, else SQLite in ``FAIRNESS_DATA_DIR``), opened on first use and shared by every session
and thread of the process (the store is thread-safe). A store that cannot be opened is said in words
(:class:`~fairness_core.store.StoreError`), never as a traceback; the rest of the app works without it.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from urllib.parse import urlsplit

import streamlit as st

from fairness_core import store as audit_store
from fairness_core.audit import Audit
from fairness_core.services.identity import is_local, local_user, parse, subject_of
from fairness_core.store import AuditStore, SavedAudit, StoreError, TooManyAttempts
from fairness_core.trend import Trend, series_changes
from fairness_core.verdicts import VerdictSettings
from ui import auth
from ui.cached import TTL_S
from ui.session import SAVED_MODEL_KEY
from ui.widgets import csv_download, md_escape, styled, verdict_summary
from fairness_core.presentation.report_kinds import kind_tables, reading
from fairness_core.report import LL144
from fairness_core.wording.kind_answers import amount_text

#: The page that opens saved audits; its query parameters: an audit the user may open by id (the owner's or one
#: shared with them), and a link's token (anyone holding it, until it expires or is revoked).
PAGE, PARAM, LINK_PARAM = "pages/8_Saved_Audits.py", "audit", "link"
#: How long a new link may live: the choices offered (days).
LINK_DAYS = (1, 7, 30, 90, 365)

_STORES: dict[str, AuditStore] = {}
_LOCK = threading.Lock()


def store() -> AuditStore:
    """The process-wide store at the configured URL, opened on first use (another URL, e.g. in tests, opens
    another). Raises :class:`StoreError` with a message when it cannot be opened."""
    url = audit_store.default_url()
    with _LOCK:
        opened = _STORES.get(url)
        if opened is None:
            opened = _STORES[url] = AuditStore(url)
        return opened


_LOG = logging.getLogger("fairness.store")


def failure(e: Exception) -> str:
    """What a visitor reads about a failure: a store's error names where the server keeps its data (a file path,
    a database host), which stays in the server's log; any other refusal is said as it is."""
    if isinstance(e, StoreError):
        _LOG.error("audit store: %s", e)
        return "The audit store failed; the server's operator can see why in its log. Nothing was changed."
    return str(e)


def user() -> str:
    """The identity this session acts for (kept by the sign-in gate, ``ui.auth.require_user``; the local analyst
    without sign-in). The first time in a session, a signed-in user's e-mail and name are given to the store, so
    that others can find them to share with and read who they are."""
    me = str(st.session_state.get(auth.USER_KEY) or auth.current_user())
    display = st.session_state.get(auth.DISPLAY_KEY)
    if display and st.session_state.get("user-remembered") != me:
        try:
            store().remember(me, email=display[0], name=display[1])
            st.session_state["user-remembered"] = me
        except (StoreError, ValueError) as e:   # the rest of the page works without it
            _LOG.error("audit store: could not remember the signed-in user: %s", e)
    return me


def shown(users) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """``{identity: what to show for it}``: the e-mail (else name) it signed in with, a local user's name with
    "(local)", else the identity itself."""
    users = [u for u in dict.fromkeys(users) if isinstance(u, str)]
    try:
        known = store().display_names(users)
    except StoreError:
        known = {}
    named = {}
    for u in users:
        try:
            local = is_local(u)
        except ValueError:
            local = False
        named[u] = known.get(u) or (f"{subject_of(u)} (local)" if local else u)
    return named


def resolve(typed: str) -> tuple[str | None, str | None]:
    """The identity an owner means by ``typed`` (an e-mail address someone signed in with here, an identity
    ``issuer|subject``, or — on a workbench without sign-in — a local user's name), or (None, why not): nobody
    found, or several identities showing that e-mail, each named."""
    typed = typed.strip()
    if not auth.login_configured():
        try:
            parse(typed)
            return typed, None
        except ValueError:
            return local_user(typed), None
    found = store().find_users(typed)
    if len(found) == 1:
        return found[0], None
    if not found:
        return None, (f"nobody who signed in here shows the e-mail {typed!r}: ask them to sign in once, or type "
                      "their identity (issuer|subject, shown in their sidebar)")
    return None, (f"{typed!r} is shown by {len(found)} users (" + "; ".join(found) + "): type the identity of the "
                  "one you mean")


def address(query: str) -> str:
    """The full address of the Saved audits page with ``query`` (``link=…``), as the browser reached this server
    (a reverse proxy's public address when it forwards the host), so that a copied link works as it is."""
    url = ""
    try:
        url = st.context.url or ""
    except Exception:  # noqa: BLE001 - no request context (a bare script run)
        pass
    base = urlsplit(url)
    root = f"{base.scheme}://{base.netloc}" if base.scheme and base.netloc else ""
    prefix = base.path.rsplit("/", 1)[0] if base.path else ""   # a server under a path prefix keeps it
    return f"{root}{prefix}/Saved_Audits?{query}"


def sidebar_note() -> None:
    """Whether audits can be saved (one line in the sidebar of every page); never where the server keeps them."""
    try:
        store()
    except StoreError as e:
        _LOG.error("audit store: %s", e)
        st.caption(":material/error: **Saved audits are unavailable** on this server (its operator can see why "
                   "in the server's log).")
        return
    st.caption(":material/database: Saved audits are kept on this server, private to whoever saves them unless "
               "shared.")


def _text(value: str) -> str | None:
    return value if value.strip() else None


@st.fragment
def save_form(audit: Audit, settings: VerdictSettings) -> None:
    """A form that saves ``audit`` (not its rows) with its verdict settings, then shows the link that opens it."""
    st.caption("Kept: each group's confusion matrix, the source, notes, what a positive prediction means, the group "
               f"columns, the verdict settings ({'OFI tolerance, ' if audit.has_outcomes else ''}α, adjustment), the "
               "names below, who saved it and the "
               "tool version. Not the rows: an opened copy has no stability tab. Saves with the same model and "
               "different periods form a series (a trend on the Saved audits page); use periods that sort, such "
               "as 2026-Q3 or 2026-07.")
    with st.form("save-audit", border=False):
        c1, c2 = st.columns(2)
        name = c1.text_input("Name", max_chars=audit_store.MAX_LABEL, key="save-name",
                             placeholder="e.g. credit scorecard, Q3 audit")
        period = c2.text_input("Period", max_chars=audit_store.MAX_LABEL, key="save-period",
                               placeholder="e.g. 2026-Q3", help="The time the data cover; saves of one model form a "
                               "series in the order of their periods (as text).")
        c3, c4 = st.columns(2)
        model = c3.text_input("Model", max_chars=audit_store.MAX_LABEL, key="save-model",
                              placeholder="e.g. credit scorecard")
        version = c4.text_input("Model version", max_chars=audit_store.MAX_LABEL, key="save-version",
                                placeholder="e.g. v3.2")
        st.caption(f"Saved as **{md_escape(shown([user()])[user()])}**: private to you until you share it or make a link on the "
                   "Saved audits page.")
        submitted = st.form_submit_button("Save this audit", icon=":material/save:")
    if submitted:
        if not name.strip():
            st.error("Give the audit a name.", icon=":material/error:")
        else:
            try:
                st.session_state["saved-audit-id"] = store().save(
                    audit, name, _text(model), _text(period), model_version=_text(version), user=user(),
                    tolerance=settings)
                st.session_state["saved-audit-name"] = name
            except (ValueError, StoreError) as e:
                st.error(f"**Not saved.** {md_escape(failure(e))}", icon=":material/error:")
    audit_id = st.session_state.get("saved-audit-id")
    if audit_id:
        st.success(f"Saved “{md_escape(st.session_state.get('saved-audit-name', ''))}”, private to you. Share it, or "
                   "make a link that expires, on the Saved audits page.", icon=":material/check_circle:")
        st.page_link(PAGE, label="Open the saved audit", icon=":material/open_in_new:", query_params={PARAM: audit_id})


@st.cache_resource(max_entries=16, ttl=TTL_S, show_spinner="Comparing the periods…")
def _trend(_history: tuple[SavedAudit, ...], ids: tuple[str, ...], settings: VerdictSettings) -> Trend:
    return series_changes(_history, settings)


def model_trend(model: str | None, settings: VerdictSettings, owner: str | None = None,
                kind: str = "binary") -> tuple[Trend | None, tuple]:
    """The trend of ``model`` across its saved periods at these settings, and its identity (the saved audits' ids
    and periods, () without a trend) for keying anything built from it; no trend when the model has fewer than two
    periods (or none); with ``owner``, that owner's audits alone (one series); of ``kind`` alone (a series mixes no
    kinds of audit). Shared by sessions: keyed by the ids (saved audits never change) and the settings."""
    if not model:
        return None, ()
    history = tuple(h for h in store().history(model, user=user())   # what this user may see
                    if h.has_outcomes and h.kind == kind and h.owner == (owner or h.owner))   # OFI needs outcomes
    if len({h.period for h in history}) < 2:
        return None, ()
    ids = tuple(h.id for h in history)
    return _trend(history, ids, settings), tuple((h.id, h.period) for h in history)


def trend_of(saved: SavedAudit) -> Trend | None:
    """The trend of ``saved``'s model across its saved periods, judged at ``saved``'s settings; None when the model
    has fewer than two periods (or no model)."""
    if saved.kind == "multiclass" and not saved.audit.ordered:
        return None   # classes without an order have no ordinal OFI to follow
    return model_trend(saved.model, saved.settings, saved.owner, saved.kind)[0]


def opened_trend(settings: VerdictSettings) -> tuple[Trend | None, tuple]:
    """The trend (and its identity, as :func:`model_trend`) of the saved audit's model when this session's data was
    opened from the store ("Open in the workbench"), at the given settings; (None, ()) for any other data or when
    the store fails (the report is then built without it)."""
    try:
        return model_trend(st.session_state.get(SAVED_MODEL_KEY), settings)
    except StoreError:
        return None, ()


def owner_tools(s: SavedAudit) -> None:
    """What the owner of ``s`` may do beyond reading it: share it with other users (read-only), make links that
    expire (the full address, copied with the button beside it) and revoke them, and see who opened it."""
    me = user()
    readers, links = _owned(s.id)
    names = shown(readers)
    with st.expander("Share with other users", icon=":material/group_add:"):
        st.caption(("Shared (read-only) with: " + ", ".join(md_escape(names[r]) for r in readers)) if readers else
                   "Private: nobody else can see or open it.")
        typed = st.text_input("Users to share with (the e-mail they sign in with, comma-separated)" if
                              auth.login_configured() else "Users to share with (names, comma-separated)",
                              key="share-with", max_chars=2000)
        a, b = st.columns(2)
        wanted, problems = _resolved(typed)
        for problem in problems:
            st.error(md_escape(problem), icon=":material/error:")
        if a.button("Share", key="share-do", disabled=not wanted or bool(problems), icon=":material/share:"):
            _act(lambda: store().share(s.id, user=me, with_users=wanted), "Shared.")
        if readers and b.button("Stop sharing with them", key="share-undo", disabled=not wanted or bool(problems)):
            _act(lambda: store().unshare(s.id, user=me, with_users=wanted), "No longer shared with them.")
    with st.expander("Transfer to another user", icon=":material/move_item:"):
        st.caption("The audit and its links become theirs: you keep no access unless they share it back.")
        typed = st.text_input("The new owner (the e-mail they sign in with)" if auth.login_configured() else
                              "The new owner (a name)", key="transfer-to", max_chars=600)
        to, problem = resolve(typed) if typed.strip() else (None, None)
        if problem:
            st.error(md_escape(problem), icon=":material/error:")
        if st.button("Transfer", key="transfer-do", disabled=to is None, icon=":material/move_item:"):
            try:
                store().transfer(s.id, user=me, to_user=to)
            except (ValueError, StoreError, audit_store.AuditNotFound, audit_store.NotOwner, TooManyAttempts) as e:
                st.error(md_escape(failure(e)), icon=":material/error:")
            else:
                st.session_state["transferred"] = (s.name, shown([to])[to])
                st.session_state.pop("opened-audits", None)
                st.session_state.pop("owner-view", None)
                st.query_params.clear()
                st.rerun()
    with st.expander("Links", icon=":material/link:"):
        st.caption("A link opens this audit read-only for anyone who has it, signed in or not, until it expires or "
                   "you revoke it. Its address is shown once, here: copy it now.")
        days = st.selectbox("Expires after", LINK_DAYS, index=1, key="link-days",
                            format_func=lambda d: f"{d} day{'s' if d > 1 else ''}")
        if st.button("Make a link", key="link-make", icon=":material/add_link:"):
            try:
                token = store().link(s.id, user=me, expires_in=timedelta(days=days))
            except (ValueError, StoreError, audit_store.AuditNotFound, audit_store.NotOwner, TooManyAttempts) as e:
                st.error(md_escape(failure(e)), icon=":material/error:")
            else:
                st.session_state.pop("owner-view", None)
                st.session_state["link-made"] = (s.id, address(f"{LINK_PARAM}={token}"))
                st.rerun()
        made = st.session_state.get("link-made")
        if made and made[0] == s.id:
            st.code(made[1], language=None)   # the copy button sits at its right
        if len(links):
            st.dataframe(links.drop(columns="link_id"), hide_index=True, width="stretch", key="link-list")
            live = links[links["active"]]
            if len(live):
                when = live.set_index("link_id")
                pick = st.selectbox("Link", list(live["link_id"]), key="link-pick",
                                    format_func=lambda i: f"made {when.loc[i, 'created']:%Y-%m-%d %H:%M}, expires "
                                                          f"{when.loc[i, 'expires']:%Y-%m-%d %H:%M} UTC")
                if st.button("Revoke this link", key="link-revoke", icon=":material/link_off:"):
                    _act(lambda: store().revoke_link(pick, user=me), "Revoked: the link opens nothing now.")
    with st.expander("Who opened it", icon=":material/history:"):
        events = store().events(s.id, user=None, limit=200)
        refused = refused_link_attempts(events, links)
        if len(refused):
            st.markdown(f"**Refused link attempts** ({len(refused)}): a link that was revoked or had expired, "
                        "or one tried too often (refused without a lookup).")
            st.dataframe(refused, hide_index=True, width="stretch", key="audit-refused-links",
                         column_config={"when": st.column_config.DatetimeColumn(format="YYYY-MM-DD HH:mm:ss")})
        events = events.assign(user=events["user"].map(shown(events["user"].dropna())),
                               link=events["link"].str[:12])
        st.dataframe(events.drop(columns=["seq"]), hide_index=True, width="stretch", key="audit-events")


def refused_link_attempts(events, links):  # type: ignore[no-untyped-def]
    """The refused attempts on this audit's links, newest first: when, which link (its id's first 12 characters and
    when it was made), who (None: not signed in) and why refused."""
    import pandas as pd

    refused = events[events["link"].notna() & ~events["allowed"]]
    made = dict(zip(links["link_id"], links["created"])) if len(links) else {}
    which = [f"{i[:12]} (made {made[i]:%Y-%m-%d %H:%M} UTC)" if i in made else i[:12] for i in refused["link"]]
    why = refused["detail"].str.replace(r" [0-9a-f]{12}$", "", regex=True).replace(
        {"rate limited": "too many refused attempts: refused without a lookup"})
    names = shown(refused["user"].dropna())
    return pd.DataFrame({"when": refused["time"], "link": which, "who": refused["user"].map(names),
                         "why": why}).reset_index(drop=True)


def _resolved(typed: str) -> tuple[list[str], list[str]]:
    """The identities a comma-separated list names, and why any could not be named."""
    wanted: list[str] = []
    problems: list[str] = []
    for n in (n.strip() for n in typed.split(",")):
        if n:
            found, problem = resolve(n)
            if found is None:
                problems.append(str(problem))
            else:
                wanted.append(found)
    return wanted, problems


def _owned(audit_id: str):  # type: ignore[no-untyped-def]
    """Whom the owner's audit is shared with and its links, read once per session and audit (each read is
    recorded in the store's events) and again after the owner changes them."""
    kept = st.session_state.setdefault("owner-view", {})
    if audit_id not in kept:
        kept[audit_id] = (store().readers(audit_id, user=user()), store().links(audit_id, user=user()))
    return kept[audit_id]


def _act(action, done: str) -> None:  # type: ignore[no-untyped-def]
    """Run an owner's action; say what happened, or why not, in words."""
    st.session_state.pop("owner-view", None)
    try:
        action()
    except (ValueError, StoreError, audit_store.AuditNotFound, audit_store.NotOwner, TooManyAttempts) as e:
        st.error(md_escape(failure(e)), icon=":material/error:")
    else:
        st.success(done, icon=":material/check_circle:")


# --------------------------------------------------------------------------- audits of amounts and of classes


def tolerance_text(s: SavedAudit) -> str:
    """The saved OFI tolerance in its units: "±$1,000" for amounts, "0.1 tiers" for ordered classes."""
    if s.kind == "continuous":
        return f"±{amount_text(s.tolerance, s.unit)}"
    if s.kind == "paired":   # a counterfactual test: a difference of rates (or of mean scores)
        return f"±{s.tolerance:g} (mean score)" if s.audit.kind == "score" else f"±{s.tolerance * 100:g} percentage points"
    return f"{s.tolerance:g} tiers" if s.kind == "multiclass" else f"{s.tolerance:g}"


def report_options(s: SavedAudit) -> dict:  # type: ignore[type-arg]
    """What the report of ``s`` needs beyond its settings: an amount audit's unit and band."""
    return {"unit": s.unit, "band": s.band} if s.kind == "continuous" else {}


def kind_banner(s: SavedAudit) -> None:
    """One line saying what the saved audit of amounts or classes is (the binary audit's data banner)."""
    a = s.audit
    n = int(a.n.sum()) if s.kind == "continuous" else int(a.counts.sum())
    what = "Amounts" if s.kind == "continuous" else "Classes" + ("" if a.has_outcomes else ", decisions alone")
    st.caption(f"**Data:** {md_escape(a.source)} · {what} · {len(a.groups)} groups · n = {n:,} · "
               f"{md_escape(a.direction)}" + (f" · unit: {md_escape(s.unit)}" if s.unit else ""))
    for note in a.notes:
        st.info(md_escape(note), icon=":material/swap_vert:")
    st.caption("An audit of amounts or of classes opens here, read-only; the workbench's pages audit yes/no "
               "decisions.")


@st.cache_resource(max_entries=16, ttl=TTL_S, show_spinner="Reading the saved audit…")
def _kind_tables(audit_id: str, _s: SavedAudit) -> tuple[dict, dict]:  # type: ignore[type-arg]
    return kind_tables(_s.audit, _s.settings, unit=_s.unit, band=_s.band)


def kind_view(s: SavedAudit) -> None:
    """A saved audit of amounts or of classes, read-only, at the settings it was saved with: the three questions
    answered, the verdict tiles and reading, the per-group table, and for classes the impact ratios at every cut and
    the Local Law 144 table — every number the library's (:func:`fairness_core.presentation.report_kinds.kind_tables`)."""
    tables, questions = _kind_tables(s.id, s)
    verdicts = tables["verdicts"]
    st.subheader("The three questions", anchor=False)
    for question, answer in questions[""].items():
        st.markdown(f"**{md_escape(question)}** {md_escape(answer)}")
    st.subheader("Verdict per pair", anchor=False)
    verdict_summary(verdicts)
    st.dataframe(reading(verdicts, s.unit if s.kind == "continuous" else ""), width="stretch", hide_index=True,
                 key="saved-verdicts", column_config={"in words": st.column_config.TextColumn(width="large")})
    csv_download(verdicts, "saved_pair_verdicts.csv", "Download verdicts (CSV)", key="saved-verdicts-csv",
                 index=False)
    shown = [("groups", "Per group, with intervals"), ("impact ratios", "Impact ratios at every cut"),
             ("ordinal error rates", "Ordinal error rates"), ("one-vs-rest verdicts", "Each class against the rest"),
             (LL144, "Local Law 144 summary")]
    for name, title in shown:
        if name in tables:
            st.subheader(title, anchor=False)
            st.dataframe(styled(tables[name], 3), width="stretch", hide_index=name != "groups",
                         key=f"saved-{name.replace(' ', '-')}")


# --------------------------------------------------------------------------- counterfactual tests (issue 54)


def paired_view(s: SavedAudit) -> None:
    """A saved counterfactual test, read-only, at the settings it was saved with: what it is, the answer, the
    verdict per pair, the discordant counts and each group's rate — every number the library's
    (:func:`fairness_core.presentation.report_paired.tables`), its report downloadable."""
    from fairness_core.presentation import report_paired
    from fairness_core.statistics.paired import PAIRED_VERDICTS
    from fairness_core.wording.paired import answer

    a = s.audit
    st.caption(f"**Data:** {md_escape(s.source)} · counterfactual test · {len(a.groups)} groups · {len(a.cases):,} "
               f"cases · {report_paired.OUTPUTS[a.kind]}" + (f" · {a.incomplete:,} incomplete" if a.incomplete else "")
               + ". Kept: each pattern of answers with its count and the pairs' counts; never the texts or case ids.")
    tables = _paired_tables(s.id, s)
    pairs = tables["pairs"]
    said = answer(pairs, a.kind, s.tolerance, a.baseline, alpha=s.alpha, secondary=report_paired.null_swaps(a))
    st.subheader("The answer", anchor=False)
    for line in said:
        st.markdown(md_escape(line))
    counts = pairs["verdict"].value_counts()
    for col, verdict in zip(st.columns(len(PAIRED_VERDICTS)), PAIRED_VERDICTS):
        col.metric(verdict.capitalize(), f"{counts.get(verdict, 0):,}")
    st.dataframe(report_paired.reading(pairs, a.kind, "", 500, report_paired.null_swaps(a)), width="stretch",
                 hide_index=True,
                 key="saved-paired-reading")
    csv_download(pairs, "saved_counterfactual_pairs.csv", "Download every pair (CSV)", key="saved-paired-csv",
                 index=False)
    for name, title in (("discordance", "Discordant cases"), ("groups", "Each group's rate"),
                        ("omnibus", "One test across all groups")):
        if name in tables:
            st.subheader(title, anchor=False)
            st.dataframe(styled(tables[name], 4), width="stretch", hide_index=name != "discordance",
                         key=f"saved-paired-{name}")
    st.download_button("Counterfactual test report (HTML)", key="saved-paired-report", on_click="ignore",
                       data=lambda: report_paired.build(a, pairs, settings=s.settings, source=s.source,
                                                        model=" ".join(filter(None, (s.model, s.model_version))),
                                                        period=s.period or "").html(),
                       file_name="counterfactual_test_report.html", mime="text/html", icon=":material/download:")


@st.cache_resource(max_entries=16, ttl=TTL_S, show_spinner="Reading the saved audit…")
def _paired_tables(audit_id: str, _s: SavedAudit) -> dict:  # type: ignore[type-arg]
    from fairness_core.presentation.report_paired import tables

    return tables(_s.audit, _s.settings)
