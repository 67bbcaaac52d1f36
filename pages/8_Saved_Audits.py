"""Saved audits: the user's own and those shared with them (filter by model, open, and for the owner delete after
typing the audit's name, share, make and revoke links), and a read-only view of one saved audit — by id for its
owner and readers (``?audit=<id>``), or from a link anyone holding it may open until it expires or is revoked
(``?link=<token>``) — with its model's trend across saved periods and "Open in the workbench"."""

import time

import streamlit as st

from fairness_core import plots, regulatory, report
from fairness_core import store as audit_store
from fairness_core.store import AuditNotFound, NotOwner, SavedAudit, StoreError, TooManyAttempts
from fairness_core.wording.levels import level_text
from ui import cached, saved
from ui.state import ADJUSTMENTS, SAVED_MODEL_KEY, data_banner, page_setup, set_audit
from ui.widgets import BuiltIn, P_FORMATS, chart, csv_download, md_escape, styled, verdict_summary

page_setup("Saved audits")
st.title("Saved audits")

try:
    store = saved.store()
except StoreError as e:
    st.error(f"**The audit store cannot be opened.** {md_escape(saved.failure(e))}", icon=":material/error:")
    st.stop()


def label(row) -> str:  # type: ignore[no-untyped-def]
    """How a saved audit is named in a picker (plain text there: no markup is rendered)."""
    parts = [row["name"], row["model"], row["period"]]
    return " · ".join(str(p) for p in parts if isinstance(p, str) and p) + f" · {row['created']:%Y-%m-%d %H:%M} UTC"


def show(s: SavedAudit) -> None:
    """One saved audit, read-only: what it is, its verdicts, the Local Law 144 summary and its model's trend."""
    st.header(md_escape(s.name), anchor=False)
    meta = [("Model", s.model), ("Version", s.model_version), ("Period", s.period),
            ("Owner", saved.shown([s.owner])[s.owner])]
    st.markdown(" · ".join(f"**{k}:** {md_escape(v)}" for k, v in meta if v)
                + f" · **Saved:** {s.created:%Y-%m-%d %H:%M} UTC with version {md_escape(s.tool_version or '?')}")
    st.caption(f"Verdicts as saved: {'tolerance' if s.kind == 'paired' else 'OFI tolerance'} {saved.tolerance_text(s)} · α = {s.alpha:g} · "
               f"{ADJUSTMENTS.get(s.adjust, s.adjust)}. Read-only; the rows were not stored (no stability tab). "
               + {"owner": "Yours: share it or make a link below.", "shared": "Shared with you by its owner.",
                  "link": "Opened from a link."}.get(s.access, ""))
    if s.kind == "paired":   # a counterfactual test: its own banner in its view below
        pass
    elif s.kind != "binary":   # amounts and classes: what it is, then its reading below
        saved.kind_banner(s)
    else:
        data_banner(s.audit)
    if s.kind == "binary" and st.button("Open in the workbench", icon=":material/open_in_browser:", key="open-in-workbench",
                 help="Make it this session's data: every page then audits it, at the settings it was saved with."):
        set_audit(s.audit)
        if s.model:   # the Bias Audit report then carries this model's trend across its saved periods
            st.session_state[SAVED_MODEL_KEY] = s.model
        for key, value in (("ofi-tol", s.tolerance), ("alpha", s.alpha), ("adjust", s.adjust)):
            st.session_state[f"kept-{key}"] = value
        st.success("Loaded: every page now audits this saved audit.", icon=":material/check_circle:")
        st.page_link("pages/2_Bias_Audit.py", label="Go to the Bias Audit →", icon=":material/balance:")
    if s.access == "owner":
        try:
            saved.owner_tools(s)
        except (AuditNotFound, NotOwner, StoreError, TooManyAttempts) as e:
            st.error(md_escape(saved.failure(e)), icon=":material/error:")
    if s.kind == "binary":
        _verdicts(s)
    elif s.kind == "paired":
        saved.paired_view(s)
    else:
        saved.kind_view(s)
    if s.has_outcomes and s.kind != "paired":   # a counterfactual test has no series of OFI over periods   # a trend of OFI needs outcomes; it is the owner's series, as far as this user may see it
        try:
            _trend(s)
        except StoreError as e:
            st.error(f"**The model's trend is unavailable.** {md_escape(saved.failure(e))}", icon=":material/error:")


def _verdicts(s: SavedAudit) -> None:
    """The saved audit's verdicts and its Local Law 144 summary, at the settings it was saved with."""
    read = cached.verdicts_read(s.audit, s.settings)
    st.subheader("Verdict per pair", anchor=False)
    verdict_summary(read.table)
    st.markdown(f"**What the numbers say.** {md_escape(read.findings)}")
    st.dataframe(styled(read.shown, 3, P_FORMATS), width="stretch", hide_index=True, key="saved-verdicts",
                 column_config={"reading": st.column_config.TextColumn(width="large")})
    csv_download(read.table, "saved_pair_verdicts.csv", "Download verdicts (CSV)", key="saved-verdicts-csv",
                 index=False)
    st.subheader("Local Law 144 summary", anchor=False)
    ll144 = cached.ll144(s.audit, s.settings)
    st.caption(md_escape(regulatory.rules_text(ll144)))
    st.dataframe(styled(ll144, 3), width="stretch", hide_index=True, key="saved-ll144")
    csv_download(ll144, "ll144_summary.csv", "Download the Local Law 144 summary (CSV)", key="saved-ll144-csv",
                 index=False)


def _trend(s: SavedAudit) -> None:
    """The saved model's OFI and DI across its periods, and the changes between consecutive periods."""
    trend = saved.trend_of(s)
    st.subheader("The model over time", anchor=False)
    if trend is None:
        st.caption("Save this model's audit of another period (same model name, another period) to see its trend "
                   "here: each pair's OFI across periods and whether it changed significantly.")
    else:
        st.markdown(f"**{md_escape(s.model)}** has {len(trend.periods)} saved periods: "
                    + ", ".join(md_escape(p) for p in trend.periods) + ". Each change of a pair's OFI between "
                    "consecutive periods is tested as two independent samples (interval and p-value, "
                    f"{ADJUSTMENTS.get(trend.adjust, trend.adjust)} across all changes), at this audit's settings. "
                    "A change is significant when its adjusted p is below α; its adjusted interval "
                    f"(ci_low_adjusted, ci_high_adjusted: {md_escape(level_text(trend.level_adjusted))}, the level "
                    "the adjustment amounts to for each change) then excludes 0, and only then.")
        fig = plots.ofi_trend(trend)
        chart(fig, "ofi_trend.html", key="ofi-trend")
        if trend.kind == "binary":   # amounts and tiers: their ratios are in each period's verdicts
            chart(plots.di_trend(trend), "di_trend.html", key="di-trend")
        changes = trend.changes
        flagged = int(changes["significant"].sum()) if len(changes) else 0
        became = int(changes["became_bias"].sum()) if len(changes) else 0
        st.caption(f"{flagged} significant change(s) of {len(changes)}; {became} became algorithmic bias.")
        st.dataframe(styled(changes, 3, {"p": "{:.3g}", "p_adjusted": "{:.3g}"}), width="stretch", hide_index=True,
                     key="trend-changes")
        c1, c2 = st.columns(2)
        with c1:
            csv_download(changes, "trend_changes.csv", "Download the changes (CSV)", key="trend-csv", index=False)
        with c2:
            model = " ".join(filter(None, (s.model, s.model_version)))
            st.download_button("Audit report with the trend (HTML)", key="trend-report", on_click="ignore",
                               data=lambda: report.build(s.audit, settings=s.settings, model=model,
                                                         period=s.period or "", trend=trend,
                                                         **saved.report_options(s)).html(),
                               file_name="fairness_audit_report_with_trend.html", mime="text/html",
                               icon=":material/download:")


#: Seconds an opened audit is shown before its access is checked again (each check is recorded in the store's
#: events): a revoked link, a share taken back or a deletion closes an open view within this time.
RECHECK_S = 60


def _opened(kind: str, key: str) -> SavedAudit:
    """The saved audit an id or a link's token opens for this user, checked again every :data:`RECHECK_S` seconds;
    a refusal forgets it."""
    kept = st.session_state.setdefault("opened-audits", {})
    ident = (saved.user(), kind, key)
    when, found = kept.get(ident, (0.0, None))
    if found is None or time.time() - when > RECHECK_S:
        kept.pop(ident, None)
        found = (store.open_link(key, user=saved.user()) if kind == saved.LINK_PARAM
                 else store.load(key, user=saved.user()))
        kept[ident] = (time.time(), found)
    return found


def _link_view(kind: str, key: str) -> None:
    """What ``?audit=<id>`` (its owner and readers) or ``?link=<token>`` (anyone holding it) opens: that saved audit
    alone, read-only — no list of the others; the owner's tools only for its owner."""
    try:
        opened = _opened(kind, key)
    except AuditNotFound as e:
        st.error(f"**This address opens no saved audit.** {md_escape(saved.failure(e))}", icon=":material/link_off:")
    except TooManyAttempts as e:
        st.error(f"**Refused.** {md_escape(str(e)).capitalize()}.", icon=":material/block:")
    except StoreError as e:
        st.error(f"**The audit store failed.** {md_escape(saved.failure(e))}", icon=":material/error:")
    else:
        show(opened)
    st.divider()
    st.caption("A link opens one saved audit, read-only. The audits you saved, or that were shared with you, are "
               "listed on this page without a link (“Saved audits” in the sidebar).")


def _confirm_delete(audit_id: str, name: str) -> None:
    """The second step of Delete: the audit goes only once its name is typed exactly."""
    st.warning("**Deleting is permanent:** the saved audit, its links, its shares and its period in the model's trend "
               "are gone for you and for everyone you shared it with, and cannot be restored. To delete it, type its "
               "name exactly:", icon=":material/warning:")
    st.code(name, language=None)
    typed = st.text_input("Name of the audit to delete", key="saved-delete-name", max_chars=audit_store.MAX_LABEL)
    y, n, _ = st.columns([2, 1, 4])
    if y.button("Delete", type="primary", key="saved-delete-yes", disabled=typed != name,
                icon=":material/delete_forever:"):
        if typed != name:    # the button is disabled until then; a stale click deletes nothing
            st.error("The name typed is not the audit's name: nothing was deleted.", icon=":material/error:")
            return
        _forget_confirmation()
        try:
            store.delete(audit_id, user=saved.user())
        except (AuditNotFound, NotOwner, StoreError, TooManyAttempts) as e:
            st.error(md_escape(saved.failure(e)), icon=":material/error:")
        else:
            st.session_state["deleted"] = name
            st.rerun()
    if n.button("Cancel", key="saved-delete-no"):
        _forget_confirmation()
        st.rerun()


def _forget_confirmation() -> None:
    st.session_state.pop("confirm-delete", None)
    st.session_state.pop("saved-delete-name", None)


def _list() -> None:
    """Every saved audit: filter by model, open one (its link), delete one after typing its name."""
    st.subheader("Your saved audits", anchor=False)
    me = saved.user()
    st.caption(f"Saved by you ({md_escape(saved.shown([me])[me])}), and those other users shared with you "
               "(read-only). Nobody else sees them unless you share them or give them a link.")
    if "deleted" in st.session_state:
        st.success(f"Deleted “{md_escape(st.session_state.pop('deleted'))}”.", icon=":material/check_circle:")
    if "transferred" in st.session_state:
        name, to = st.session_state.pop("transferred")
        st.success(f"“{md_escape(name)}” is now {md_escape(to)}'s, with its links.", icon=":material/check_circle:")
    try:
        everything = store.list(user=saved.user())
    except StoreError as e:
        st.error(f"**The audit store failed.** {md_escape(saved.failure(e))}", icon=":material/error:")
        return
    if everything.empty:
        st.info("You have no saved audit yet, and none is shared with you: save one on the Bias Audit page (“Save "
                "this audit”).", icon=":material/info:")
        st.page_link("pages/2_Bias_Audit.py", label="Bias Audit", icon=":material/balance:")
        return
    every = BuiltIn("every model")
    models = sorted(everything["model"].dropna().unique())
    chosen = st.selectbox("Model", [every, *models], key="saved-filter",
                          format_func=lambda m: m.label if isinstance(m, BuiltIn) else f"“{m}”")
    listed = everything if isinstance(chosen, BuiltIn) else everything[everything["model"] == chosen]
    listed_shown = listed.assign(owner=listed["owner"].map(saved.shown(listed["owner"])))
    st.dataframe(listed_shown.drop(columns=["id", "saved_by"], errors="ignore"), width="stretch", hide_index=True,
                 key="saved-list",
                 column_config={"created": st.column_config.DatetimeColumn(format="YYYY-MM-DD HH:mm")})
    rows = {r["id"]: r for _, r in listed.iterrows()}
    pick = st.selectbox("Saved audit", list(rows), format_func=lambda i: label(rows[i]), key="saved-pick")
    c1, c2, _ = st.columns([1, 1, 5])
    if c1.button("Open", icon=":material/visibility:", key="saved-open",
                 help="Opens its link: that audit alone, read-only."):
        st.query_params[saved.PARAM] = pick
        st.rerun()
    if rows[pick]["access"] == "owner" and c2.button("Delete…", icon=":material/delete:", key="saved-delete"):
        st.session_state.pop("saved-delete-name", None)
        st.session_state["confirm-delete"] = pick
    if st.session_state.get("confirm-delete") == pick:
        _confirm_delete(pick, str(rows[pick]["name"]))


if token := st.query_params.get(saved.LINK_PARAM):
    _link_view(saved.LINK_PARAM, token)
elif wanted := st.query_params.get(saved.PARAM):
    _link_view(saved.PARAM, wanted)
else:
    _list()
