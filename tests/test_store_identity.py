"""Issue 51, part 3: identities that cannot collide, transfer, and a store that notices attacks.

- A user is (issuer, subject), spelled by ``identity`` alone: a property test checks that the spelling is
  one-to-one and that parsing gives the pair back; two providers that hand out the same ``sub`` never see each
  other's audits.
- A schema-4 store written by the previous code (tests/data/store_v4.sql) migrates: bare names become local users,
  or users of the deployment's single provider (``legacy_issuer``).
- ``transfer`` moves ownership and links; refused attempts are events.
- The rate limit: the 21st attempt within a minute after 20 refusals is refused without a lookup, for 5 minutes,
  per user and per link token; ``locked_for`` is checked against a brute-force reading of the rule.

Each store test runs on SQLite and on PostgreSQL (as tests/test_store.py). No sleeps: the store's clock is moved.
"""

from __future__ import annotations

import secrets
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from fairness_core.services import identity as ident
from fairness_core.services import store_access
from fairness_core.store import (LOCAL_USER, AuditNotFound, AuditStore, NotOwner, TooManyAttempts, identity,
                                 local_user)
from test_store import _audit, new_url, url  # noqa: F401 - fixtures: SQLite and PostgreSQL stores

START = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
GOOGLE, OKTA = "https://accounts.example.com", "https://example.okta.com"
ANA = identity(GOOGLE, "1001")          # two providers, the same sub
OTHER = identity(OKTA, "1001")
BOB = identity(GOOGLE, "2002")


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def tick(self, seconds: float = 1.0) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(url, clock):  # noqa: F811
    s = AuditStore(url, now=clock)
    yield s
    s.close()


# --------------------------------------------------------------------------- the spelling

parts = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Cf", "Zl", "Zp")), min_size=1, max_size=40) \
    .filter(lambda p: p.strip() == p and p.strip())


@settings(max_examples=400, deadline=None)
@given(parts, parts, parts, parts)
def test_the_spelling_is_one_to_one_and_parses_back(i1, s1, i2, s2):
    try:
        a, b = identity(i1, s1), identity(i2, s2)
    except ValueError:    # a hidden character the library refuses (e.g. a bidi mark): refused, never spelled
        return
    assert ident.parse(a) == (i1, s1) and ident.parse(b) == (i2, s2)
    assert (a == b) == ((i1, s1) == (i2, s2))
    assert a.count(ident.SEPARATOR) == 1


@pytest.mark.parametrize("issuer, subject, spelled", [
    ("https://a.example", "x|y", "https://a.example|x%7Cy"),
    ("https://a.example", "100%", "https://a.example|100%25"),
    ("https://a.example", "%7C", "https://a.example|%257C"),       # an escape typed as text stays text
    ("a|b", "c", "a%7Cb|c"),                                         # issuer "a|b", subject "c" ≠ issuer "a", "b|c"
    ("a", "b|c", "a|b%7Cc"),
])
def test_worked_spellings(issuer, subject, spelled):
    assert identity(issuer, subject) == spelled and ident.parse(spelled) == (issuer, subject)


def test_local_users():
    assert LOCAL_USER == local_user("local") == "local|local" and ident.is_local(local_user("ana"))
    assert not ident.is_local(ANA) and ident.subject_of(ANA) == "1001"


# --------------------------------------------------------------------------- two providers, one sub


def test_two_providers_with_the_same_sub_never_see_each_others_audits(store):
    mine = store.save(_audit(), name="mine", model="credit", period="2026-Q1", user=ANA)
    theirs = store.save(_audit(1), name="theirs", model="credit", period="2026-Q1", user=OTHER)
    for me, own, foreign in ((ANA, mine, theirs), (OTHER, theirs, mine)):
        assert store.list(user=me)["id"].tolist() == [own]
        assert [h.id for h in store.history("credit", user=me)] == [own]
        for call in (lambda: store.load(foreign, user=me), lambda: store.links(foreign, user=me),
                     lambda: store.link(foreign, user=me), lambda: store.delete(foreign, user=me),
                     lambda: store.transfer(foreign, user=me, to_user=BOB)):
            with pytest.raises(AuditNotFound):
                call()
    assert store.list(user=local_user("1001")).empty and store.list(user=BOB).empty
    events = store.events(limit=None)
    refused = events[~events["allowed"]]
    assert len(refused) == 10 and set(refused["user"]) == {ANA, OTHER}   # every refusal an event, by whom
    assert (refused["detail"] == "private to another user").all()


def test_shares_name_identities_and_email_lookup_refuses_ambiguity(store):
    store.remember(ANA, email="ana@example.org", name="Ana")
    store.remember(OTHER, email="Ana@Example.org")            # the other provider shows the same address
    store.remember(BOB, email="bob@example.org")
    assert store.find_users("bob@example.org") == (BOB,) and store.find_users(" BOB@example.org ") == (BOB,)
    assert store.find_users("ana@example.org") == (ANA, OTHER)     # both: the caller must ask which
    assert store.find_users("nobody@example.org") == () and store.find_users(OTHER) == (OTHER,)
    store.remember(ANA, email="ana@new.example.org")          # refreshed, not added
    assert store.find_users("ana@example.org") == (OTHER,)
    assert store.display_names([ANA, OTHER, BOB, local_user("x")]) == \
        {ANA: "ana@new.example.org", OTHER: "Ana@Example.org", BOB: "bob@example.org"}
    audit_id = store.save(_audit(), name="Q1", user=BOB)
    from fairness_core.services.store_schema import user_name
    assert user_name("ana@example.org") == local_user("ana@example.org") != ANA   # an e-mail names a local user only
    assert store.share(audit_id, user=BOB, with_users=[ANA]) == (ANA,)
    assert store.load(audit_id, user=ANA).access == "shared"
    with pytest.raises(AuditNotFound):
        store.load(audit_id, user=OTHER)
    with pytest.raises(ValueError, match="e-mail address"):
        store.remember(ANA, email="not an address")


# --------------------------------------------------------------------------- the migration from schema 4

V4 = Path(__file__).parent / "data" / "store_v4.sql"
#: What tests/data/store_v4.sql holds (its script: the schema-4 store code, see its header).
V4_IDS = {"ana_q1": "7QJ3Era0KomrWkajcuuHjg", "ana_q2": "6MV8I-M99ZXS7FXmo8SoNA",
          "local": "x8zy5jucfP-c0AkwMxJU0A", "bars": "cjVFkUtQmZMmPblEApA_6Q"}
V4_TOKEN = "iWmcxBgBeBzDdeIe1DaeC1HbTezYzr22l1GsXqR77rE"


def _v4(tmp_path: Path) -> str:
    path = tmp_path / "v4.db"
    with sqlite3.connect(path) as raw:
        raw.executescript(V4.read_text(encoding="utf-8"))
    return f"sqlite:///{path}"


@pytest.mark.parametrize("issuer", [None, GOOGLE])
def test_a_schema_4_store_written_by_the_previous_code_migrates_its_names_to_identities(tmp_path, clock, issuer):
    s = AuditStore(_v4(tmp_path), now=clock, legacy_issuer=issuer)
    assert s.schema_version() == 5
    made = (lambda n: local_user(n)) if issuer is None else (lambda n: identity(issuer, n))
    ana, bob = made("ana@example.org"), made("bob@example.org")
    assert sorted(s.list(user=ana)["id"]) == sorted([V4_IDS["ana_q1"], V4_IDS["ana_q2"]])
    assert s.list(user=LOCAL_USER)["id"].tolist() == [V4_IDS["local"]]            # 'local' is always LOCAL_USER
    assert s.list(user=made("sub|with|bars"))["id"].tolist() == [V4_IDS["bars"]]  # a name holding '|', escaped
    assert s.load(V4_IDS["ana_q1"], user=bob).access == "shared"                  # the share holds
    links = s.links(V4_IDS["ana_q2"], user=ana)
    assert len(links) == 1 and bool(links["active"].iloc[0])                      # the link holds, and its maker
    assert s.open_link(V4_TOKEN).id == V4_IDS["ana_q2"]
    assert s.load(V4_IDS["ana_q1"], user=ana).saved_by == ana
    # a bare name is the local user of that name: the same person after a migration to local users, nobody after
    # a migration to a provider's issuer
    bare = sorted(s.list(user="ana@example.org")["id"])
    assert bare == (sorted([V4_IDS["ana_q1"], V4_IDS["ana_q2"]]) if issuer is None else [])
    events = s.events(limit=None)
    assert set(events["user"].dropna()) <= {ana, bob, LOCAL_USER, made("eve@example.org"), made("sub|with|bars")}
    migrated = events[events["action"] == "migrate"]
    assert len(migrated) == 1 and migrated["detail"].iloc[0].startswith("schema 4 to 5: 5 user names")
    assert list(events.columns)[-1] == "link" and events["link"].isna().sum() == len(events) - 1   # the new open
    s.close()
    again = AuditStore(s.url.render_as_string(), now=clock)
    assert (again.events(limit=None)["action"] == "migrate").sum() == 1 and again.schema_version() == 5
    again.close()


# --------------------------------------------------------------------------- transfer


def test_transfer_moves_ownership_and_links_and_every_case_is_an_event(store):
    audit_id = store.save(_audit(), name="Q1", user=ANA)
    token = store.link(audit_id, user=ANA)
    store.share(audit_id, user=ANA, with_users=[BOB, OTHER])
    with pytest.raises(NotOwner):                    # a reader may not
        store.transfer(audit_id, user=BOB, to_user=OTHER)
    with pytest.raises(AuditNotFound):
        store.transfer(secrets.token_urlsafe(16), user=ANA, to_user=BOB)
    with pytest.raises(ValueError, match="owns the audit already"):
        store.transfer(audit_id, user=ANA, to_user=ANA)
    with pytest.raises(ValueError, match="is not an identity"):
        store.transfer(audit_id, user=ANA, to_user="local|a|b")
    store.transfer(audit_id, user=ANA, to_user=BOB)
    moved = store.load(audit_id, user=BOB)
    assert (moved.owner, moved.access, moved.saved_by) == (BOB, "owner", ANA)     # who saved it stays
    assert store.readers(audit_id, user=BOB) == (OTHER,)                           # BOB's share is gone: BOB owns it
    links = store.links(audit_id, user=BOB)
    assert len(links) == 1 and bool(links["active"].iloc[0])
    for call in (lambda: store.load(audit_id, user=ANA), lambda: store.links(audit_id, user=ANA),
                 lambda: store.transfer(audit_id, user=ANA, to_user=OTHER)):
        with pytest.raises(AuditNotFound):                                          # ANA keeps nothing
            call()
    with pytest.raises(NotOwner):                         # she holds a live token, but the link is BOB's now
        store.revoke_link(token, user=ANA)
    store.revoke_link(token, user=BOB)                                              # the link is BOB's to revoke
    events = store.events(audit_id)
    transfers = events[events["action"] == "transfer"]
    assert transfers[["user", "allowed"]].values.tolist() == [[ANA, False], [ANA, True], [BOB, False]]   # newest first
    assert transfers.loc[transfers["allowed"], "detail"].iloc[0] == f"Q1: from {ANA} to {BOB}"
    assert not store.events(user=ANA)[lambda e: e["action"] == "transfer"]["allowed"].all()


# --------------------------------------------------------------------------- the rate limit


def test_the_21st_attempt_in_a_minute_is_refused_without_a_lookup_for_five_minutes(store, clock):
    mine = store.save(_audit(), name="mine", user=BOB)
    audit_id = store.save(_audit(), name="Q1", user=ANA)
    for k in range(20):                  # 20 refusals within a minute: each looked up, each an event
        with pytest.raises(AuditNotFound):
            store.load(audit_id, user=BOB)
        clock.tick(2.9)
    with pytest.raises(TooManyAttempts, match=r"^too many refused attempts; try again in \d+ s$") as locked:
        store.load(mine, user=BOB)        # the 21st: refused although BOB owns it — no lookup
    assert 240 < locked.value.retry_after <= 300 and isinstance(locked.value, PermissionError)
    for call in (lambda: store.links(mine, user=BOB), lambda: store.open_link(secrets.token_urlsafe(32), user=BOB)):
        with pytest.raises(TooManyAttempts):
            call()
    assert store.load(audit_id, user=ANA).name == "Q1"       # another user is not locked out
    assert store.list(user=BOB)["id"].tolist() == [mine]     # listing names no audit: not an attempt
    bob = store.events(user=BOB, limit=None)
    assert bob["allowed"].tolist() == [False] * 23 + [True]   # every refusal an event (then BOB's save)
    bob = bob[~bob["allowed"]]
    assert (bob["detail"] == "rate limited").sum() == 3 and (bob["detail"] == "private to another user").sum() == 20
    clock.now = bob["time"].max().to_pydatetime() + store_access.LOCKOUT   # 5 minutes after the last refusal
    assert store.load(mine, user=BOB).name == "mine"


def test_twenty_refusals_spread_over_more_than_a_minute_do_not_lock(store, clock):
    mine = store.save(_audit(), name="mine", user=BOB)
    for k in range(40):
        with pytest.raises(AuditNotFound):
            store.load(secrets.token_urlsafe(16), user=BOB)
        clock.tick(3.2)                   # 19 refusals in any 60 s, never 20
    assert store.load(mine, user=BOB).name == "mine"


def test_a_link_token_is_limited_for_everyone_and_the_owner_sees_the_attempts(store, clock):
    audit_id = store.save(_audit(), name="Q1", user=ANA)
    token = store.link(audit_id, user=ANA)
    store.revoke_link(token, user=ANA)
    for k in range(20):
        with pytest.raises(AuditNotFound):
            store.open_link(token)                                  # nobody signed in: counted per token
        clock.tick(1)
    with pytest.raises(TooManyAttempts):
        store.open_link(token, user=BOB)                             # the token is locked for everyone
    with pytest.raises(AuditNotFound):
        store.open_link(secrets.token_urlsafe(32))                   # another token is not
    live = store.link(audit_id, user=ANA)
    assert store.open_link(live).id == audit_id
    link_id = store.links(audit_id, user=ANA)["link_id"]
    seen = store.events(audit_id)
    attempts = seen[(seen["action"] == "open_link") & ~seen["allowed"]]
    assert len(attempts) == 21 and set(attempts["link"]) <= set(link_id)
    limited = attempts[attempts["detail"] == "rate limited"]
    assert len(limited) == 1 and limited["audit_id"].isna().all() and limited["user"].tolist() == [BOB]


def _brute_force_lock(times: list[float], now: float) -> float | None:
    """The rule read literally: for every refusal that is the 20th within 60 s of the one 19 before it, the lock
    runs until 300 s after it; the seconds left at ``now`` of the longest such lock."""
    left = None
    ordered = sorted(times)
    for k in range(19, len(ordered)):
        if ordered[k] - ordered[k - 19] <= 60 and ordered[k] + 300 > now:
            left = max(left or 0, ordered[k] + 300 - now)
    return left


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 900, allow_nan=False), max_size=80), st.floats(0, 1300, allow_nan=False))
def test_locked_for_agrees_with_the_rule_read_literally(offsets, at):
    s = AuditStore("sqlite://", now=lambda: START)
    from fairness_core.services.store_schema import events, iso

    with s.engine.begin() as conn:
        if offsets:
            conn.execute(events.insert(), [{"time": iso(START + timedelta(seconds=o)), "username": BOB,
                                            "action": "load", "allowed": False, "detail": "x"} for o in offsets])
        now = START + timedelta(seconds=at)
        got = store_access.locked_for(conn, BOB, None, now, iso)
    s.close()
    seen = [o for o in offsets if o >= at - 360]          # what the window holds
    want = _brute_force_lock([round(o, 6) for o in seen], at)
    assert (got is None) == (want is None)
    if want is not None:
        assert got == pytest.approx(want, abs=1e-5)


def test_refusals_of_several_users_are_counted_apart(store, clock):
    ids = [store.save(_audit(), name=f"Q{k}", user=ANA) for k in range(2)]
    for who in [0, 1] * 19:                                   # 19 each, interleaved: nobody reaches 20
        with pytest.raises(AuditNotFound):
            store.load(ids[0], user=(BOB, OTHER)[who])
        clock.tick(0.5)
    for user in (BOB, OTHER):
        with pytest.raises(AuditNotFound):                   # the 20th each: still looked up
            store.load(ids[1], user=user)
    for user in (BOB, OTHER):
        with pytest.raises(TooManyAttempts):
            store.load(ids[1], user=user)


# --------------------------------------------------------------------------- the command line's --user


def test_the_command_line_user_names_a_local_user(tmp_path):
    from fairness_core import cli

    rows = tmp_path / "rows.csv"
    rows.write_text("g,y,p\n" + "".join(f"{'ab'[k % 2]},{k % 3 == 0:d},{k % 4 == 0:d}\n" for k in range(80)))
    db = f"sqlite:///{tmp_path / 'audits.db'}"
    base = ["audit", str(rows), "--group", "g", "--label", "y", "--prediction", "p", "--positive-is", "benefit",
            "--out", str(tmp_path / "r.html"), "--store", db]
    assert cli.main([*base, "--save", "ana's", "--user", "ana@example.org"]) == cli.EXIT_OK
    assert cli.main([*base, "--save", "the analyst's"]) == cli.EXIT_OK
    s = AuditStore(db)
    assert s.list(user=local_user("ana@example.org"))["name"].tolist() == ["ana's"]        # local|ana@example.org
    assert s.list()["name"].tolist() == ["the analyst's"]                                     # local|local
    assert s.list(user=identity("https://accounts.example.org", "ana@example.org")).empty   # never a signed-in user
    s.close()
    assert cli.main([*base, "--save", "x", "--user", "ana\u200b"]) == cli.EXIT_BAD_INPUT     # refused, with the reason
