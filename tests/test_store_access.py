"""Who may see what in the audit store (fairness_core.store): owners, read-only shares, links that expire and can
be revoked, the record of every attempt, and the migration that gives existing audits to the local user.

Anchors: OWASP ASVS V4 (access control: deny by default, enforced on the server) and V7 (log failures). Each
test runs on SQLite and on PostgreSQL (``FAIRNESS_TEST_POSTGRES_URL``, as tests/test_store.py: skipped without
it outside CI, failed under CI).
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest
import sqlalchemy as sa

from fairness_core import ConfusionMatrix as CM
from fairness_core import store as store_mod
from fairness_core.audit import Audit
from fairness_core.store import local_user as U
from fairness_core.store import LINK_NOT_FOUND, LOCAL_USER, AuditNotFound, AuditStore, NotOwner
from test_store import _audit, new_url, url  # noqa: F401 - fixtures: SQLite and PostgreSQL stores

START = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


class Clock:
    """The store's clock, moved by hand."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(url, clock):  # noqa: F811 - url is the imported fixture
    s = AuditStore(url, now=clock)
    yield s
    s.close()


def _unknown_id() -> str:
    return secrets.token_urlsafe(16)


def _same_answer(error: BaseException, audit_id: str, store: AuditStore) -> None:
    """``error`` is exactly what an id that was never saved gets: same type, same message."""
    unknown = _unknown_id()
    with pytest.raises(AuditNotFound) as missing:
        store.load(unknown, user=U("nobody"))
    assert type(error) is AuditNotFound
    assert str(error).replace(audit_id, "<id>") == str(missing.value).replace(unknown, "<id>")


def test_two_users_cannot_see_open_delete_share_or_link_each_others_private_audits(store):
    ana = store.save(_audit(), name="ana's", model="credit", period="2026-Q1", user=U("ana@example.org"))
    bob = store.save(_audit(1), name="bob's", model="credit", period="2026-Q1", user=U("bob@example.org"))
    for me, mine, theirs in ((U("ana@example.org"), ana, bob), (U("bob@example.org"), bob, ana)):
        assert store.list(user=me)["id"].tolist() == [mine]
        assert [h.id for h in store.history("credit", user=me)] == [mine]
        assert store.load(mine, user=me).access == "owner"
        calls = [lambda: store.load(theirs, user=me), lambda: store.delete(theirs, user=me),
                 lambda: store.share(theirs, user=me, with_users=[me]), lambda: store.link(theirs, user=me),
                 lambda: store.links(theirs, user=me), lambda: store.readers(theirs, user=me)]
        for call in calls:
            with pytest.raises(AuditNotFound) as refused:
                call()
            _same_answer(refused.value, theirs, store)
    assert store.list()["id"].tolist() == []                       # the local user owns neither
    assert store.load(ana, user=U("ana@example.org")).name == "ana's"   # nothing was deleted or shared
    assert store.readers(ana, user=U("ana@example.org")) == () and store.links(bob, user=U("bob@example.org")).empty


def test_a_shared_audit_reads_but_does_not_delete(store):
    audit_id = store.save(_audit(), name="Q1", model="credit", period="2026-Q1", user=U("ana"))
    assert store.share(audit_id, user=U("ana"), with_users=[U("bob"), U("bob"), U("ana")]) == (U("bob"),)   # once; the owner skipped
    listed = store.list(user=U("bob"))
    assert listed[["id", "owner", "access"]].values.tolist() == [[audit_id, U("ana"), "shared"]]
    read = store.load(audit_id, user=U("bob"))
    assert read.audit == _audit() and (read.owner, read.access) == (U("ana"), "shared")
    assert [h.access for h in store.history("credit", user=U("bob"))] == ["shared"]
    for call, verb in ((lambda: store.delete(audit_id, user=U("bob")), "delete"),
                       (lambda: store.share(audit_id, user=U("bob"), with_users=[U("carol")]), "share"),
                       (lambda: store.link(audit_id, user=U("bob")), "link"),
                       (lambda: store.transfer(audit_id, user=U("bob"), to_user=U("carol")), "transfer")):
        with pytest.raises(NotOwner, match=f"only its owner \\(local\\|ana\\) may {verb}") as refused:
            call()
        assert isinstance(refused.value, PermissionError) and not isinstance(refused.value, LookupError)
    assert store.load(audit_id, user=U("ana")).name == "Q1" and store.list(user=U("carol")).empty
    with pytest.raises(AuditNotFound):
        store.load(audit_id, user=U("carol"))
    assert store.unshare(audit_id, user=U("ana"), with_users=[U("bob")]) == ()
    with pytest.raises(AuditNotFound):
        store.load(audit_id, user=U("bob"))
    assert store.list(user=U("bob")).empty


def test_the_owner_deletes_and_its_shares_and_links_go_with_it(store):
    audit_id = store.save(_audit(), name="Q1", user=U("ana"))
    store.share(audit_id, user=U("ana"), with_users=[U("bob")])
    token = store.link(audit_id, user=U("ana"))
    store.delete(audit_id, user=U("ana"))
    for call in (lambda: store.load(audit_id, user=U("bob")), lambda: store.load(audit_id, user=U("ana"))):
        with pytest.raises(AuditNotFound):
            call()
    with pytest.raises(AuditNotFound, match=LINK_NOT_FOUND):
        store.open_link(token)
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM audit_shares").scalar() == 0
        assert conn.exec_driver_sql("SELECT count(*) FROM audit_links").scalar() == 0


def test_a_link_opens_read_only_until_it_expires(store, clock):
    audit_id = store.save(_audit(), name="Q1", user=U("ana"))
    token = store.link(audit_id, user=U("ana"), expires_in=timedelta(hours=2))
    assert len(token) == 43 and token != store.link(audit_id, user=U("ana"), expires_in=timedelta(hours=2))
    opened = store.open_link(token)
    assert opened.id == audit_id and opened.audit == _audit() and opened.access == "link"
    with pytest.raises(NotOwner):          # holding the link lets one read, not revoke it
        store.revoke_link(token, user=U("bob"))
    with pytest.raises(AuditNotFound):     # a link is not a share: the audit stays out of bob's list and loads
        store.load(audit_id, user=U("bob"))
    clock.now = START + timedelta(hours=2)   # expires at its expiry time, to the microsecond
    with pytest.raises(AuditNotFound) as expired:
        store.open_link(token)
    answers = {str(expired.value)}
    for forged in (secrets.token_urlsafe(32), "not a token", None, token[:-1] + ("A" if token[-1] != "A" else "B")):
        with pytest.raises(AuditNotFound) as refused:
            store.open_link(forged)  # type: ignore[arg-type]
        answers.add(str(refused.value))
    assert answers == {LINK_NOT_FOUND}
    active = store.links(audit_id, user=U("ana"))
    assert len(active) == 2 and not active["active"].any() and active["revoked"].isna().all()


def test_a_revoked_link_opens_nothing_and_only_the_owner_revokes(store):
    audit_id = store.save(_audit(), name="Q1", user=U("ana"))
    token, other = store.link(audit_id, user=U("ana")), store.link(audit_id, user=U("ana"))
    link_id = hashlib.sha256(token.encode()).hexdigest()
    assert set(store.links(audit_id, user=U("ana"))["link_id"]) == {link_id, hashlib.sha256(other.encode()).hexdigest()}
    with pytest.raises(AuditNotFound, match=LINK_NOT_FOUND):      # bob neither owns nor reads it: by id, nothing
        store.revoke_link(link_id, user=U("bob"))
    store.revoke_link(token, user=U("ana"))
    store.revoke_link(token, user=U("ana"))                            # again: nothing changes, nothing fails
    with pytest.raises(AuditNotFound) as revoked:
        store.open_link(token)
    assert str(revoked.value) == LINK_NOT_FOUND
    assert store.open_link(other).id == audit_id                    # the other link still opens it
    store.revoke_link(hashlib.sha256(other.encode()).hexdigest(), user=U("ana"))   # by its id, token long lost
    with pytest.raises(AuditNotFound):
        store.open_link(other)
    links = store.links(audit_id, user=U("ana"))
    assert links["revoked"].notna().all() and not links["active"].any()
    with store.engine.connect() as conn:       # the tokens themselves are nowhere in the database
        kept = [tuple(map(str, r)) for r in conn.execute(sa.text("SELECT * FROM audit_links"))]
        kept += [tuple(map(str, r)) for r in conn.execute(sa.text("SELECT * FROM audit_events"))]
    assert not any(token in v or other in v for row in kept for v in row)


@pytest.mark.parametrize("expires_in", [timedelta(0), timedelta(seconds=-1), timedelta(days=366), 3600, None])
def test_a_link_must_expire_within_a_year(store, expires_in):
    audit_id = store.save(_audit(), name="Q1")
    with pytest.raises(ValueError, match="expires_in must be a timedelta above 0 and at most 365 days"):
        store.link(audit_id, expires_in=expires_in)
    assert store.links(audit_id).empty


def test_the_events_show_every_attempt_allowed_or_refused(store, clock):
    audit_id = store.save(_audit(), name="Q1", user=U("ana"))
    clock.now += timedelta(seconds=1)
    store.load(audit_id, user=U("ana"))
    with pytest.raises(AuditNotFound):
        store.load(audit_id, user=U("bob"))
    with pytest.raises(AuditNotFound):
        store.load("'; DROP TABLE audits; --", user=U("bob"))
    store.share(audit_id, user=U("ana"), with_users=[U("bob")])
    with pytest.raises(NotOwner):
        store.delete(audit_id, user=U("bob"))
    token = store.link(audit_id, user=U("ana"), expires_in=timedelta(minutes=5))
    store.open_link(token)
    with pytest.raises(AuditNotFound):
        store.open_link(secrets.token_urlsafe(32), user=U("mallory"))
    clock.now += timedelta(minutes=5)
    with pytest.raises(AuditNotFound):
        store.open_link(token, user=U("bob"))
    store.delete(audit_id, user=U("ana"))
    events = store.events()
    assert list(events.columns) == ["seq", "time", "user", "action", "audit_id", "allowed", "detail", "link"]
    seen = [(e.user, e.action, e.audit_id, e.allowed) for e in events.itertuples()][::-1]
    assert seen == [(U("ana"), "save", audit_id, True), (U("ana"), "load", audit_id, True),
                    (U("bob"), "load", audit_id, False), (U("bob"), "load", None, False),
                    (U("ana"), "share", audit_id, True), (U("bob"), "delete", audit_id, False),
                    (U("ana"), "link", audit_id, True), (None, "open_link", audit_id, True),
                    (U("mallory"), "open_link", None, False), (U("bob"), "open_link", audit_id, False),
                    (U("ana"), "delete", audit_id, True)]
    assert events["seq"].is_monotonic_decreasing and str(events["time"].dt.tz) == "UTC"
    assert events["time"].iloc[-1] == START and events["time"].iloc[0] == START + timedelta(minutes=5, seconds=1)
    details = events.set_index("seq")["detail"].tolist()[::-1]
    assert details[2] == "private to another user" and details[3].startswith("not an audit id")
    assert details[9].startswith("expired link") and details[8].startswith("unknown link")
    assert token not in "".join(details)
    assert len(store.events(audit_id)) == 9 and store.events(user=U("bob"))["action"].tolist() == \
        ["open_link", "delete", "load", "load"]
    assert len(store.events(limit=2)) == 2
    assert not hasattr(store, "delete_events") and not hasattr(store, "clear_events")   # append-only


@pytest.mark.parametrize("user, message", [
    (None, "must be an identity"), ("", "must not be blank"), ("   ", "must not be blank"),
    (" ana", "begins or ends with a space"), ("an\u200ba", "hidden character"), (" local|ana", "begins or ends with a space"),
    ("local|a|b", "is not an identity"), ("local|a%7cb", "one spelling"), ("local|a%b", "one spelling"),
    ("local| ", "must not be blank"), ("local|" + "x" * 600, "at most 600"), ("local|ana\u200b", "hidden character"),
    ("local|an\na", "hidden character"), (5, "must be an identity"),
])
def test_users_are_named_plainly(store, user, message):
    audit_id = store.save(_audit(), name="Q1")
    for call in (lambda: store.save(_audit(), name="x", user=user), lambda: store.load(audit_id, user=user),
                 lambda: store.list(user=user), lambda: store.delete(audit_id, user=user),
                 lambda: store.share(audit_id, with_users=[user])):
        with pytest.raises(ValueError, match=message):
            call()
    assert store.list()["id"].tolist() == [audit_id]


def test_a_bare_name_is_a_local_user_as_the_librarys_api_writes_it(store):
    """``user="alice"`` (the public API's example) is the local user alice, ``local|alice``: never a signed-in user,
    whose identity always names its issuer, so a bare name or e-mail can reach no provider's user."""
    audit_id = store.save(_audit(), name="Q1", user="alice")
    assert store.load(audit_id, user="local|alice").saved_by == "local|alice"
    store.share(audit_id, user="alice", with_users=["bob"])
    assert store.readers(audit_id, user="alice") == ("local|bob",)
    assert store.load(audit_id, user="bob").name == "Q1"
    with pytest.raises(Exception):
        store.load(audit_id, user="https://accounts.example.org|alice")   # the same sub at a provider: another user


def test_users_are_kept_exactly_and_the_default_is_the_local_user(store):
    audit_id = store.save(_audit(), name="Q1", user=U("ana@example.org"))
    assert store.load(audit_id, user=U("ana@example.org")).saved_by == U("ana@example.org")
    with pytest.raises(AuditNotFound):     # a subject is compared as it is: no trimming, no case folding
        store.load(audit_id, user=U("Ana@example.org"))
    local = store.save(_audit(), name="mine")
    assert store.load(local).owner == LOCAL_USER and store.list()["id"].tolist() == [local]
    with pytest.raises(ValueError, match="list of users"):
        store.share(local, with_users=U("bob"))        # one string is not a list of users
    with pytest.raises(ValueError, match="names no user"):
        store.share(local, with_users=[])


def test_saved_by_is_refused_and_the_user_is_who_saved(store):
    with pytest.raises(TypeError, match="saved_by"):       # removed: who saves is user=
        store.save(_audit(), name="Q1", saved_by="someone else", user=U("ana"))
    assert store.list(user=U("ana")).empty
    saved = store.load(store.save(_audit(), name="Q1", user=U("ana")), user=U("ana"))
    assert (saved.saved_by, saved.owner) == (U("ana"), U("ana"))


def test_the_clock_must_tell_the_time_zone(url):  # noqa: F811
    s = AuditStore(url, now=lambda: datetime(2026, 3, 1))
    with pytest.raises(ValueError, match="aware datetime"):
        s.save(_audit(), name="Q1")
    s.close()


#: The schema as version 2 wrote it (version 1's plus has_outcomes and unknown_groups), frozen here so that a
#: later version must still open it. {serial}: the autoincrementing key of each backend.
_V2 = [
    "CREATE TABLE store_schema (version INTEGER NOT NULL)",
    "INSERT INTO store_schema VALUES (2)",
    """CREATE TABLE audits (seq {serial}, id VARCHAR(32) NOT NULL UNIQUE,
  name VARCHAR(200) NOT NULL, model VARCHAR(200), model_version VARCHAR(200), period VARCHAR(200),
  saved_by VARCHAR(200), tool_version VARCHAR(64), created VARCHAR(32) NOT NULL, source TEXT NOT NULL,
  notes TEXT NOT NULL, positive_outcome TEXT NOT NULL, positive_is VARCHAR(16), group_columns TEXT NOT NULL,
  provenance TEXT NOT NULL, has_group_values BOOLEAN NOT NULL, tolerance FLOAT NOT NULL, alpha FLOAT NOT NULL,
  adjust VARCHAR(8) NOT NULL, n_groups INTEGER NOT NULL, n BIGINT NOT NULL,
  has_outcomes BOOLEAN NOT NULL DEFAULT TRUE, unknown_groups TEXT NOT NULL DEFAULT '[]')""",
    "CREATE INDEX ix_audits_model ON audits (model)",
    """CREATE TABLE audit_groups (audit_seq INTEGER NOT NULL REFERENCES audits (seq) ON DELETE CASCADE,
  position INTEGER NOT NULL, name TEXT NOT NULL, tp BIGINT NOT NULL, fn BIGINT NOT NULL, fp BIGINT NOT NULL,
  tn BIGINT NOT NULL, group_values TEXT, PRIMARY KEY (audit_seq, position))""",
    """INSERT INTO audits (id, name, model, model_version, period, saved_by, tool_version, created, source, notes,
  positive_outcome, positive_is, group_columns, provenance, has_group_values, tolerance, alpha, adjust, n_groups,
  n, has_outcomes, unknown_groups) VALUES
  ('AAAAAAAAAAAAAAAAAAAAAA', 'old', 'credit', NULL, '2025-Q4', 'ana (typed)', '0.1.0',
  '2025-12-31T10:00:00.000000+00:00', 'old.csv', '["a note"]', 'approved', 'benefit', '["sex"]',
  '{{"label": "y"}}', TRUE, 0.05, 0.05, 'holm', 2, 20, TRUE, '[]'),
  ('BBBBBBBBBBBBBBBBBBBBBB', 'screening', 'hiring', NULL, NULL, NULL, '0.2.0',
  '2026-01-31T10:00:00.000000+00:00', 'hr.csv', '[]', 'advanced', 'benefit', '[]', '{{}}', FALSE, 0.05, 0.05,
  'holm', 3, 12, FALSE, '["unknown"]')""",
    """INSERT INTO audit_groups VALUES (1, 0, 'F', 1, 2, 3, 4, '["F"]'), (1, 1, 'M', 4, 3, 2, 1, '["M"]'),
  (2, 0, 'F', 2, 0, 1, 0, NULL), (2, 1, 'M', 1, 0, 2, 0, NULL),
  (2, 2, 'unknown', 1, 0, 2, 3, NULL)""",
]


def test_a_version_2_store_gives_its_audits_to_the_local_user(url):  # noqa: F811
    engine = sa.create_engine(url)
    serial = "SERIAL PRIMARY KEY" if engine.dialect.name == "postgresql" else "INTEGER PRIMARY KEY AUTOINCREMENT"
    with engine.begin() as conn:
        for statement in _V2:
            conn.exec_driver_sql(statement.format(serial=serial))
    engine.dispose()
    s = AuditStore(url)
    assert s.schema_version() == store_mod.SCHEMA_VERSION == 5
    listed = s.list()
    assert listed["id"].tolist() == ["BBBBBBBBBBBBBBBBBBBBBB", "AAAAAAAAAAAAAAAAAAAAAA"]
    assert set(listed["owner"]) == {LOCAL_USER} and set(listed["access"]) == {"owner"}
    assert listed["saved_by"].tolist() == [None, "ana (typed)"]   # what was typed stays; it was never a user
    old = s.load("AAAAAAAAAAAAAAAAAAAAAA")
    assert old.audit == Audit({"F": CM(1, 2, 3, 4), "M": CM(4, 3, 2, 1)}, source="old.csv", notes=("a note",),
                              positive_outcome="approved", group_columns=("sex",), positive_is="benefit",
                              group_values={"F": ("F",), "M": ("M",)})
    assert not s.load("BBBBBBBBBBBBBBBBBBBBBB").audit.has_outcomes
    assert s.list(user=U("ana")).empty and s.list(user=U("ana (typed)")).empty   # private to the local user
    with pytest.raises(AuditNotFound):
        s.load("AAAAAAAAAAAAAAAAAAAAAA", user=U("ana"))
    migrate = s.events().iloc[-1]    # the first event: its user 'local' made LOCAL_USER by the migration to 5
    assert (migrate["action"], migrate["user"], migrate["allowed"]) == ("migrate", LOCAL_USER, True)
    assert "2 saved audits given to 'local'" in migrate["detail"]
    new = s.save(_audit(), name="new", model="credit", period="2026-Q1", user=U("ana"))
    s.share("AAAAAAAAAAAAAAAAAAAAAA", with_users=[U("ana")])
    assert [h.id for h in s.history("credit", user=U("ana"))] == ["AAAAAAAAAAAAAAAAAAAAAA", new]
    s.close()
    again = AuditStore(url)      # opened again: no migration runs twice (2 → 3, 3 → 4, 4 → 5: three events)
    assert again.schema_version() == 5 and (again.events()["action"] == "migrate").sum() == 3
    again.close()


def test_a_version_1_sqlite_store_is_carried_through_both_migrations(tmp_path):
    from test_store import _V1
    path = tmp_path / "v1.db"
    with sqlite3.connect(path) as raw:
        raw.executescript(_V1)
    s = AuditStore(f"sqlite:///{path}")
    assert s.schema_version() == 5 and s.list()[["owner", "access"]].values.tolist() == [[LOCAL_USER, "owner"]]
    s.close()
