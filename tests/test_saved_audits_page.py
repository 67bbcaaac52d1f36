"""Saved audits in the app: save from the Bias Audit page (as the session's user), open it by id as its owner, share it
and make a link that another user or session opens read-only (that audit alone, no list, no delete), links that
expire or are revoked, a bad id, delete after typing the name (owner only), the trend after a second period, the
report's trend section, hostile names as text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairness_core import ConfusionMatrix as CM
from fairness_core import plots, report
from fairness_core.audit import Audit
from fairness_core.store import AuditStore, identity
from fairness_core.trend import series_changes
from app_helpers import page_with_audit
from ui.state import SAVED_MODEL_KEY

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGE = "pages/8_Saved_Audits.py"
LINK = '<a href="https://evil.example/steal">click me</a>'
Q1 = Audit({"a": CM(300, 20, 90, 590), "b": CM(300, 25, 85, 590), LINK: CM(280, 30, 80, 600)},
           positive_is="benefit", source="q1.csv")
Q2 = Audit({"a": CM(300, 20, 90, 590), "b": CM(250, 120, 40, 590), LINK: CM(280, 30, 80, 600)},
           positive_is="benefit", source="q2.csv")


@pytest.fixture()
def signed_in(monkeypatch):
    """Sign-in configured (as far as the pages ask: who is named by e-mail); the gate is still the test's."""
    import ui.auth

    monkeypatch.setattr(ui.auth, "login_configured", lambda: True)


@pytest.fixture()
def store_url(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'audits.db'}"
    monkeypatch.setenv("FAIRNESS_AUDIT_STORE", url)
    return url


def save_from_bias_audit(audit: Audit, name: str, model: str, period: str) -> tuple[AppTest, str]:
    at = page_with_audit(audit, "pages/2_Bias_Audit.py")
    for key, value in (("save-name", name), ("save-model", model), ("save-period", period)):
        at.text_input(key=key).input(value)
    at.button(key="FormSubmitter:save-audit-Save this audit").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at, at.session_state["saved-audit-id"]


@pytest.fixture(autouse=True)
def signed_in_as(monkeypatch):
    """Pages act for the user the sign-in gate returns; a test names it in ``AS_USER`` (the real sign-in, against an
    OpenID provider, is tests/test_auth_browser.py's), with the e-mail it shows (its display, as the gate keeps
    it)."""
    import streamlit as st

    import ui.auth

    def gate() -> str:   # a session keeps the user it signed in as
        user = st.session_state.get("user") or AS_USER.get("user") or ui.auth.LOCAL_USER
        st.session_state["user"] = user
        if user in EMAILS:
            st.session_state[ui.auth.DISPLAY_KEY] = (EMAILS[user], None)
        return user

    monkeypatch.setattr(ui.auth, "require_user", gate)
    yield
    AS_USER.clear()


#: The user the next session signs in as (see :func:`signed_in_as`).
AS_USER: dict[str, str] = {}
#: Signed-in users: two at one provider, and one at another provider with Ana's subject and Bob's e-mail.
ISSUER, OTHER_ISSUER = "https://id.example.org", "https://login.other.example"
ANA, BOB, OTHER = identity(ISSUER, "sub-1"), identity(ISSUER, "sub-2"), identity(OTHER_ISSUER, "sub-1")
EMAILS = {ANA: "ana@example.org", BOB: "bob@example.org", OTHER: "bob@example.org"}


def saved_page(audit_id: str | None = None, user: str | None = None, link: str | None = None) -> AppTest:
    """The Saved audits page in a new session, as ``user`` (the local analyst by default), opened by id or link."""
    AS_USER.clear()
    if user is not None:
        AS_USER["user"] = user
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(PAGE)
    if audit_id is not None:
        at.query_params["audit"] = audit_id
    if link is not None:
        at.query_params["link"] = link
    at.run()
    assert not at.exception
    return at


def frame_with(at: AppTest, column: str):  # type: ignore[no-untyped-def]
    """The first table on the page with ``column``."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def plain(shown: str) -> str:
    """Text as read, without md_escape's backslashes and word joiners."""
    return shown.replace("\\", "").replace("\u2060", "")


def texts(at: AppTest) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "error", "warning", "info", "success", "header",
                                                 "subheader", "code") for e in getattr(at, kind))


def test_save_then_the_link_opens_a_read_only_copy_in_another_session(store_url):
    at, audit_id = save_from_bias_audit(Q1, f"Q1 {LINK}", "credit", "2026-Q1")
    assert "private to you" in at.success[0].value
    sidebar = " ".join(c.value for c in at.sidebar.caption)
    assert "kept on this server" in sidebar and "sqlite" not in sidebar.lower() and "audits.db" not in sidebar
    assert AuditStore(store_url).load(audit_id).owner == "local|local"
    other = saved_page(audit_id)
    shown = texts(other)
    assert "credit" in shown and "2026\\-Q1" in shown and "q1\\.csv" in shown
    assert "\\<a href" in shown and not re.search(r"(?<!\\)<a href", shown)   # the hostile name stays text
    assert "https://evil" not in shown
    assert len(frame_with(other, "impact ratio")) == 3               # the Local Law 144 summary
    assert len(other.metric) == 5                                       # the verdict tiles
    assert "Save this model's audit of another period" in shown         # no trend with one period
    other.button(key="open-in-workbench").click().run()
    assert other.session_state["audit"] == AuditStore(store_url).load(audit_id).audit
    assert other.session_state["kept-ofi-tol"] == pytest.approx(0.05)


def test_a_bad_or_deleted_id_gets_a_message_and_nothing_else(store_url):
    at = saved_page("not-an-id")
    assert "This address opens no saved audit" in at.error[0].value
    assert not at.info and not at.get("selectbox") and not at.button    # no list, no delete
    audit_id = AuditStore(store_url).save(Q1, "to delete", model="credit", period="2026-Q1")
    AuditStore(store_url).delete(audit_id)
    gone = saved_page(audit_id)
    assert "deleted" in gone.error[0].value and not gone.button


def test_a_link_shows_only_its_audit_with_no_list_and_no_delete(store_url):
    """A read-only link opened the page with every saved audit listed under it, each with Open and Delete."""
    store = AuditStore(store_url)
    linked = store.save(Q1, "shared one", model="credit", period="2026-Q1")
    store.save(Q2, "someone else's", model="hiring", period="2026-Q2")
    token = store.link(linked)
    at = saved_page(link=token, user=BOB)
    shown = texts(at)
    assert "shared one" in shown and "someone else" not in shown and "Your saved audits" not in shown
    keys = {b.key for b in at.button}
    assert keys == {"open-in-workbench"}                     # no Open, no Delete, no Share, no Link
    assert not any(s.key in ("saved-pick", "saved-filter") for s in at.selectbox)
    assert not any("saved-list" == d.key for d in at.dataframe)
    assert "read-only" in shown
    assert store.list().shape[0] == 2


def test_delete_needs_the_audits_name_typed_and_says_it_is_permanent_for_everyone(store_url):
    store = AuditStore(store_url)
    name = f"to delete {LINK}"
    audit_id = store.save(Q1, name, model="credit", period="2026-Q1")
    at = saved_page()
    assert "Nobody else sees them" in texts(at)
    at.button(key="saved-delete").click().run()
    warning = at.warning[0].value
    assert "permanent" in warning and "everyone you shared it with" in warning and "type its name" in warning
    assert name in [c.value for c in at.code]                                 # the name to type, as plain text
    assert at.button(key="saved-delete-yes").disabled
    at.text_input(key="saved-delete-name").input("to delete").run()            # not its name
    assert at.button(key="saved-delete-yes").disabled
    assert not at.exception and store.list().shape[0] == 1
    at.text_input(key="saved-delete-name").input(name).run()
    assert not at.button(key="saved-delete-yes").disabled
    at.button(key="saved-delete-yes").click().run()
    assert not at.exception and store.list().empty
    assert "Deleted" in at.success[0].value
    assert "You have no saved audit yet" in at.info[0].value
    gone = saved_page(audit_id)
    assert "deleted" in gone.error[0].value


def test_two_users_see_only_their_own_and_what_is_shared_with_them(store_url, signed_in):
    """Ana's private audit is not listed, opened, deleted or linked by Bob; once shared it reads but does not delete;
    Bob's refused attempt answers exactly as an id that never existed, and the events record it."""
    store = AuditStore(store_url)
    mine = store.save(Q1, "ana's audit", model="credit", period="2026-Q1", user=ANA)
    bob = saved_page(user=BOB)
    assert "ana's audit" not in texts(bob) and "You have no saved audit yet" in bob.info[0].value
    refused = saved_page(mine, user=BOB)
    never = saved_page("A" * 22, user=BOB)
    from ui.widgets import md_escape
    assert refused.error[0].value.replace(md_escape(mine), "ID") == never.error[0].value.replace("A" * 22, "ID")
    assert "audits.db" not in refused.error[0].value and "SQLite" not in refused.error[0].value   # no server path
    assert "ana's audit" not in texts(refused) and not refused.button
    ana = saved_page(mine, user=ANA)
    ana.text_input(key="share-with").input("bob@example.org").run()      # found by the e-mail Bob signed in with
    ana.button(key="share-do").click().run()
    assert not ana.exception and store.readers(mine, user=ANA) == (BOB,)
    ana.run()
    assert "Shared (read-only) with: bob@example.org" in plain(texts(ana))   # shown by e-mail
    bob = saved_page(user=BOB)
    assert frame_with(bob, "access")[["name", "access"]].values.tolist() == [["ana's audit", "shared"]]
    assert not any(b.key == "saved-delete" for b in bob.button)
    reader = saved_page(mine, user=BOB)
    assert "Shared with you" in texts(reader) and {b.key for b in reader.button} == {"open-in-workbench"}
    events = store.events(mine)
    assert ((events["user"] == BOB) & ~events["allowed"]).any()
    assert ((events["user"] == BOB) & events["allowed"] & (events["action"] == "load")).any()


def test_a_link_made_on_the_page_shows_its_full_address_and_stops_when_revoked(store_url):
    store = AuditStore(store_url)
    mine = store.save(Q1, "linked", model="credit", period="2026-Q1", user=ANA)
    ana = saved_page(mine, user=ANA)
    ana.selectbox(key="link-days").select(1).run()
    ana.button(key="link-make").click().run()
    assert not ana.exception
    address = next(c.value for c in ana.code if "link=" in c.value)
    assert address.startswith(("http://", "https://")) or address.startswith("/Saved_Audits?link=")
    token = address.split("link=", 1)[1]
    visitor = saved_page(link=token)
    assert "linked" in texts(visitor) and "Opened from a link" in texts(visitor)
    live = store.links(mine, user=ANA)
    assert len(live) == 1 and bool(live["active"].iloc[0])
    ana.button(key="link-revoke").click().run()
    assert not ana.exception and not ana.error, [e.value for e in ana.error]
    assert not store.links(mine, user=ANA)["active"].any()
    after = saved_page(link=token)
    assert "opens no saved audit" in after.error[0].value and "linked" not in texts(after)


def test_cancel_keeps_the_audit_and_forgets_the_typed_name(store_url):
    store = AuditStore(store_url)
    store.save(Q1, "keep me", model="credit", period="2026-Q1")
    at = saved_page()
    at.button(key="saved-delete").click().run()
    at.text_input(key="saved-delete-name").input("keep me").run()
    at.button(key="saved-delete-no").click().run()
    assert not at.exception and store.list().shape[0] == 1 and not at.warning
    at.button(key="saved-delete").click().run()
    assert at.text_input(key="saved-delete-name").value == "" and at.button(key="saved-delete-yes").disabled


def test_a_second_period_shows_the_trend_and_the_report_gains_it(store_url):
    _, first = save_from_bias_audit(Q1, "Q1", "credit", "2026-Q1")
    _, second = save_from_bias_audit(Q2, "Q2", "credit", "2026-Q2")
    at = saved_page(second)
    assert len(at.get("plotly_chart")) == 2                             # OFI and DI across periods
    changes = frame_with(at, "became_bias")
    assert len(changes) == 3 and changes["became_bias"].any()
    assert "2 saved periods" in texts(at)


def test_the_trend_figure_and_report_section():
    trend = series_changes([("2026-Q1", Q1), ("2026-Q2", Q2)])
    fig = plots.ofi_trend(trend)
    assert any(t.name == "became algorithmic bias" for t in fig.data)
    assert any("(changed)" in (t.name or "") for t in fig.data)
    r = report.build(Q2, trend=trend)
    assert report.TREND_CHANGES in r.tables and "OFI of each pair across periods" in r.figures
    html = r.html()
    assert "A model over time" in html and "<a href=\"https://evil" not in html
    assert report.TREND_CHANGES not in report.build(Q2).tables
    assert "DI of each pair across periods" in r.figures


def test_the_di_trend_shows_each_pairs_di_and_interval_as_in_the_verdicts():
    trend = series_changes([("2026-Q1", Q1), ("2026-Q2", Q2)])
    fig, ofi = plots.di_trend(trend), plots.ofi_trend(trend)
    pairs = [t for t in fig.data if t.customdata is not None]
    ofi_pairs = [t for t in ofi.data if t.customdata is not None and t.name != "became algorithmic bias"]
    assert len(pairs) == 3 and [(t.name, t.line.color) for t in pairs] == [(t.name, t.line.color) for t in ofi_pairs]
    v = trend.verdicts.set_index(["period", "group_i", "group_j"])
    seen = 0
    for t in pairs:
        gi, gj = [part.replace("&lt;", "<").replace("&gt;", ">") for part in
                  t.name.removesuffix(" (changed)").split(" vs ")]
        for period, di, low, high in zip(t.x, t.customdata[:, 4], t.customdata[:, 1], t.customdata[:, 2]):
            if (period, gi, gj) in v.index:                               # named as in the verdicts
                row = v.loc[(period, gi, gj)]
                want = (row["di"], row["di_ci_low"], row["di_ci_high"])
            else:                                                         # turned: 1 / DI, [1 / high, 1 / low]
                row = v.loc[(period, gj, gi)]
                want = (1 / row["di"], 1 / row["di_ci_high"], 1 / row["di_ci_low"])
            assert (float(di), float(low), float(high)) == pytest.approx(want)
            seen += 1
        assert list(t.y) == pytest.approx([float(d) for d in t.customdata[:, 4]])
        assert list(t.y + t.error_y.array) == pytest.approx([float(h) for h in t.customdata[:, 2]])
        assert list(t.y - t.error_y.arrayminus) == pytest.approx([float(lo) for lo in t.customdata[:, 1]])
    assert seen == len(trend.verdicts)
    assert {s.y0 for s in fig.layout.shapes if s.line.dash == "dash"} == {0.8, 1.25}


def report_html(at: AppTest, captured: dict) -> str:  # type: ignore[type-arg]
    """The Bias Audit report's HTML as its download button would make it (the deferred callable it registered)."""
    button = next(b for b in at.get("download_button") if b.proto.label == "Audit report (HTML)")
    data = captured[button.proto.deferred_file_id]()
    html = data.decode() if isinstance(data, bytes) else data
    assert "could not be built" not in html and "<html" in html.lower()
    return html


def test_the_bias_audit_report_gains_the_trend_when_opened_from_a_saved_series(store_url, monkeypatch):
    from streamlit.runtime.media_file_manager import MediaFileManager
    captured: dict = {}   # type: ignore[type-arg]
    add = MediaFileManager.add_deferred

    def keep(self, data, *args, **kwargs):  # type: ignore[no-untyped-def]
        file_id = add(self, data, *args, **kwargs)
        captured[file_id] = data
        return file_id
    monkeypatch.setattr(MediaFileManager, "add_deferred", keep)
    store = AuditStore(store_url)
    store.save(Q1, "Q1", model="credit", period="2026-Q1")
    second = store.save(Q2, "Q2", model="credit", period="2026-Q2")
    at = saved_page(second)
    at.button(key="open-in-workbench").click().run()
    assert at.session_state[SAVED_MODEL_KEY] == "credit"
    at.switch_page("pages/2_Bias_Audit.py").run()
    assert not at.exception
    assert any("carries the model's trend across its 2 saved periods" in c.value for c in at.caption)
    html = report_html(at, captured)
    assert "A model over time" in html and "DI of each pair across periods" in html
    at.switch_page("pages/1_Upload.py").run()
    at.button(key="load-demo").click().run()                 # a demo in the same session: no trend
    assert SAVED_MODEL_KEY not in at.session_state and at.session_state["demo_key"]
    at.switch_page("pages/2_Bias_Audit.py").run()
    assert not at.exception
    assert "A model over time" not in report_html(at, captured)


def test_filtering_the_saved_list_by_model_does_not_mark_the_audit_as_opened(store_url):
    """The list's model filter once shared its key with the 'opened from the store' marker: filtering by a
    model made the Bias Audit report of any other data carry that model's trend."""
    store = AuditStore(store_url)
    store.save(Q1, "Q1", model="credit", period="2026-Q1")
    store.save(Q2, "Q2", model="credit", period="2026-Q2")
    at = saved_page(None)
    at.selectbox(key="saved-filter").set_value("credit").run()
    assert not at.exception and SAVED_MODEL_KEY not in at.session_state
    at.switch_page("pages/2_Bias_Audit.py").run()
    assert not any("carries the model's trend" in c.value for c in at.caption)


def _pay(shift: float, seed: int):  # type: ignore[no-untyped-def]
    import numpy as np

    from fairness_core.continuous import ContinuousAudit
    rng = np.random.default_rng(seed)
    group = np.repeat(["F", LINK], 200)
    salary = rng.lognormal(10.8, 0.3, 400)
    recommended = salary * rng.lognormal(0, 0.05, 400) - np.where(group == "F", shift, 0)
    return ContinuousAudit.from_predictions(salary, recommended, group, positive_is="benefit")


def test_a_saved_amount_audit_reads_with_its_verdicts_in_its_unit_and_its_trend(store_url):
    """Issue 53: a ContinuousAudit opens read-only by id and by link, answers the three questions in its unit, and a
    second period gives the trend of its OFI in dollars (no DI chart: an amount's ratio is in the verdicts)."""
    store = AuditStore(store_url)
    first = store.save(_pay(0, 1), "pay Q1", model="pay", period="2026-Q1", tolerance=1000, unit="$")
    at = saved_page(first)
    shown = texts(at)
    plain = shown.replace("\\", "")                                              # markdown's escapes taken off
    assert "Error sizes (MAE)" in plain and "±$1,000" in plain and "Amounts" in plain
    assert "\\<a href" in shown and not re.search(r"(?<!\\)<a href", shown)     # the hostile group name stays text
    reading = frame_with(at, "in words")                                          # the verdicts as read
    assert len(reading) == 1 and reading["OFI"].iloc[0].startswith(("$", "−$"))
    assert len(at.metric) == 5                                                   # the verdict tiles
    assert "open-in-workbench" not in {b.key for b in at.button}
    groups = frame_with(at, "mae")
    assert groups["mae"].tolist() == pytest.approx(_pay(0, 1).by_group()["mae"].tolist())
    second = store.save(_pay(3000, 2), "pay Q2", model="pay", period="2026-Q2", tolerance=1000, unit="$")
    at = saved_page(second)
    assert len(at.get("plotly_chart")) == 1                                      # OFI across periods
    changes = frame_with(at, "became_bias")
    assert len(changes) == 1 and bool(changes["became_bias"].iloc[0])
    visitor = saved_page(link=store.link(second), user=BOB)
    assert "Opened from a link" in texts(visitor) and "Error sizes (MAE)" in texts(visitor).replace("\\", "")
    assert {b.key for b in visitor.button} == set()


def test_a_saved_tier_audit_reads_with_its_cuts_and_the_local_law_144_table(store_url):
    import numpy as np

    from fairness_core.multiclass import MulticlassAudit
    rng = np.random.default_rng(3)
    names = np.array(["Low", "Medium", "High"])
    m = MulticlassAudit.from_predictions(names[rng.integers(0, 3, 300)], names[rng.integers(0, 3, 300)],
                                         rng.choice(["a", "b"], 300), order=list(names), favourable="Low")
    audit_id = AuditStore(store_url).save(m, "tiers", model="risk", period="2026-Q1", tolerance=0.1)
    at = saved_page(audit_id)
    plain = texts(at).replace("\\", "")
    assert "The four-fifths rule at every cut" in plain and "0.1 tiers" in plain
    assert len(frame_with(at, "cut")) == len(m.impact_ratios())
    assert len(frame_with(at, "classification")) == len(regulatory_table(m))


def regulatory_table(m):  # type: ignore[no-untyped-def]
    from fairness_core import regulatory
    return regulatory.ll144_summary(m, tolerance=0.1)


def test_share_and_transfer_by_email_refuse_an_email_two_identities_show(store_url, signed_in):
    """Bob and a user of another provider both signed in with bob@example.org: Ana typing it gets both identities
    named and nothing shared; typing the identity shares; transfer by a unique e-mail moves the audit and its links,
    and Ana keeps nothing."""
    store = AuditStore(store_url)
    mine = store.save(Q1, "ana's audit", model="credit", period="2026-Q1", user=ANA)
    token = store.link(mine, user=ANA)
    for user in (BOB, OTHER):
        saved_page(user=user)                       # each signs in once: the store learns the e-mail they show
    assert store.find_users("bob@example.org") == (BOB, OTHER)
    ana = saved_page(mine, user=ANA)
    ana.text_input(key="share-with").input("bob@example.org").run()
    (problem,) = [plain(e.value) for e in ana.error]
    assert "shown by 2 users" in problem and "id.example.org" in problem and "login.other.example" in problem
    assert ana.button(key="share-do").disabled and store.readers(mine, user=ANA) == ()
    ana.text_input(key="share-with").input(BOB).run()
    ana.button(key="share-do").click().run()
    assert not ana.exception and store.readers(mine, user=ANA) == (BOB,)
    store.remember(OTHER, email="other@example.org")     # the e-mail is now Bob's alone
    ana = saved_page(mine, user=ANA)
    ana.text_input(key="transfer-to").input("bob@example.org").run()
    ana.button(key="transfer-do").click().run()
    assert not ana.exception and not ana.error, [e.value for e in ana.error]
    assert "now bob@example.org's" in plain(ana.success[0].value)
    assert store.load(mine, user=BOB).owner == BOB and len(store.links(mine, user=BOB)) == 1
    assert store.open_link(token).id == mine
    assert saved_page(mine, user=ANA).error           # Ana keeps nothing
    events = store.events(mine)
    assert events.loc[events["action"] == "transfer", ["user", "allowed"]].values.tolist() == [[ANA, True]]


def test_who_opened_it_shows_the_owner_refused_link_attempts(store_url):
    store = AuditStore(store_url)
    mine = store.save(Q1, "linked", model="credit", period="2026-Q1")
    token = store.link(mine)
    store.revoke_link(token)
    for _ in range(2):
        saved_page(link=token)                     # a revoked link: refused, recorded
    owner = saved_page(mine)
    refused = frame_with(owner, "why")
    assert refused["why"].tolist() == ["revoked link"] * 2 and (refused["who"] == "local (local)").all()
    link_id = store.links(mine)["link_id"].iloc[0]
    assert refused["link"].str.startswith(link_id[:12]).all() and "made " in refused["link"].iloc[0]
