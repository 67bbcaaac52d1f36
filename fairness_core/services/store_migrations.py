"""The audit store's migrations: each step brings a store written by an older version of the workbench to the next
schema version, inside the transaction that opens it (:data:`MIGRATIONS`); each is recorded as an event."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable

import sqlalchemy as sa

from .identity import LOCAL_ISSUER, LOCAL_USER, MAX_USER, identity
from .store_schema import audits, events, iso, links, people, shares

__all__ = ["LEGACY_ISSUER_VARIABLE", "MIGRATIONS", "legacy_issuer"]

#: What schema versions 3 and 4 called the local analyst: a bare name, made ``local|local`` by the migration to 5.
_OLD_LOCAL = "local"
#: The environment variable naming the issuer that the bare names of a schema-4 store belong to (the deployment's
#: single sign-in provider); unset: they become local users (see :func:`_add_identities`).
LEGACY_ISSUER_VARIABLE = "FAIRNESS_LEGACY_ISSUER"


def _add_outcomes_columns(conn: sa.Connection) -> None:
    """Version 1 → 2: audits of decisions alone and unknown categories. Every audit saved before had outcomes
    and no unknown category."""
    true = "TRUE" if conn.dialect.name == "postgresql" else "1"
    conn.execute(sa.text(f"ALTER TABLE audits ADD COLUMN has_outcomes BOOLEAN NOT NULL DEFAULT {true}"))
    conn.execute(sa.text("ALTER TABLE audits ADD COLUMN unknown_groups TEXT NOT NULL DEFAULT '[]'"))


def _add_owners(conn: sa.Connection) -> None:
    """Version 2 → 3: owners, shares, links and events. Every audit saved before goes to the one analyst of a
    workbench without sign-in, then called ``local`` (version 5 makes it :data:`LOCAL_USER`); the migration is the
    first event."""
    conn.execute(sa.text(f"ALTER TABLE audits ADD COLUMN owner VARCHAR(254) NOT NULL DEFAULT '{_OLD_LOCAL}'"))
    conn.execute(sa.text("CREATE INDEX ix_audits_owner ON audits (owner)"))
    for table in (shares, links, events):   # opening created them already; a migration says what it needs
        table.create(conn, checkfirst=True)
    n = conn.execute(sa.select(sa.func.count()).select_from(audits)).scalar_one()
    _event(conn, f"schema 2 to 3: {n} saved audits given to {_OLD_LOCAL!r}", _OLD_LOCAL)


def _add_kinds(conn: sa.Connection) -> None:
    """Version 3 → 4: audits of amounts and of classes (issue 53). Every audit saved before is a binary one, kept
    as it was in ``audit_groups``; the migration is recorded as an event."""
    conn.execute(sa.text("ALTER TABLE audits ADD COLUMN kind VARCHAR(16) NOT NULL DEFAULT 'binary'"))
    conn.execute(sa.text("ALTER TABLE audits ADD COLUMN payload TEXT"))
    n = conn.execute(sa.select(sa.func.count()).select_from(audits)).scalar_one()
    _event(conn, f"schema 3 to 4: {n} saved audits kept as binary audits", _OLD_LOCAL)


def _event(conn: sa.Connection, detail: str, user: str) -> None:
    """A migration's event (the columns every version since 3 has)."""
    conn.execute(events.insert().values(time=iso(datetime.now(timezone.utc)), username=user,
                                                       action="migrate", allowed=True, detail=detail))


def legacy_issuer(environ: Any = None) -> str:
    """The issuer the bare names of a schema-4 store belong to: ``FAIRNESS_LEGACY_ISSUER`` when set (the
    deployment's single sign-in provider's issuer), else :data:`~.identity.LOCAL_ISSUER`."""
    import os

    value = ((os.environ if environ is None else environ).get(LEGACY_ISSUER_VARIABLE) or "").strip()
    return value or LOCAL_ISSUER


#: (table, column) of every user name a schema-4 store keeps.
_USER_COLUMNS = (("audits", "owner"), ("audit_shares", "username"), ("audit_links", "created_by"),
                 ("audit_events", "username"))


def _add_identities(conn: sa.Connection, issuer: str | None = None) -> None:
    """Version 4 → 5: users become identities (issuer, subject). The rule: every bare name ``n`` a schema-4 store
    keeps (owners, readers, link makers, events' users) becomes ``identity(issuer, n)`` with ``issuer`` =
    :func:`legacy_issuer` (``FAIRNESS_LEGACY_ISSUER``, the deployment's single provider, else "local": local users),
    except the local analyst ``local``, which becomes :data:`LOCAL_USER` (``local|local``). ``saved_by`` was typed
    text before version 3 and a user after: the same rule where it names the owner, kept as it is otherwise.
    Events gain ``link``; ``audit_people`` is created (empty: nobody has been seen with an identity yet). Recorded
    as one event."""
    issuer = legacy_issuer() if issuer is None else issuer
    postgres = conn.dialect.name == "postgresql"
    if postgres:    # wider user columns (SQLite does not check a VARCHAR's length)
        for table, column in (*_USER_COLUMNS, ("audits", "saved_by")):
            conn.execute(sa.text(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE VARCHAR({MAX_USER})"))
        conn.execute(sa.text(f"ALTER TABLE audits ALTER COLUMN owner SET DEFAULT '{LOCAL_USER}'"))
    if "link" not in {c["name"] for c in sa.inspect(conn).get_columns("audit_events")}:   # new tables have it
        conn.execute(sa.text("ALTER TABLE audit_events ADD COLUMN link VARCHAR(64)"))
    for index in events.indexes:
        index.create(conn, checkfirst=True)
    people.create(conn, checkfirst=True)
    names: set[str] = set()
    for table, column in _USER_COLUMNS:
        names.update(conn.execute(sa.text(f"SELECT DISTINCT {column} FROM {table} WHERE {column} IS NOT NULL"))
                     .scalars())
    new = {n: LOCAL_USER if n == _OLD_LOCAL else identity(issuer, n) for n in names}
    for table, column in _USER_COLUMNS:
        for old, key in new.items():
            conn.execute(sa.text(f"UPDATE {table} SET {column} = :key WHERE {column} = :old"), {"key": key, "old": old})
    for old, key in new.items():   # "saved by" the owner: the owner's identity
        conn.execute(sa.text("UPDATE audits SET saved_by = :key WHERE saved_by = :old AND owner = :key"),
                     {"key": key, "old": old})
    _event(conn, f"schema 4 to 5: {len(new)} user names made identities of {issuer!r} ('local' is {LOCAL_USER!r})",
           LOCAL_USER)


#: ``{version: step}``: ``step(connection)`` brings a store at ``version`` to ``version + 1``, inside the
#: opening transaction (4 → 5 reads :func:`legacy_issuer`).
MIGRATIONS: dict[int, Callable[[sa.Connection], None]] = {1: _add_outcomes_columns, 2: _add_owners, 3: _add_kinds,
                                                          4: _add_identities}
