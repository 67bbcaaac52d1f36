"""The audit store's refusals: its errors, the rate limit on refused attempts, and the users it has seen.

Rate limit (issue 51): refused attempts are counted per user and per link token, in the database's
``audit_events``, so every server process on one store sees the same count. When a user, or a link token, has
:data:`LIMIT` refusals within :data:`WINDOW`, every further attempt by that user, or on that token, is refused
without a lookup (:class:`TooManyAttempts`: "too many refused attempts; try again in N s") until :data:`LOCKOUT`
has passed since the last refusal that completed such a run; each of those refusals is an event too, so an attack
that goes on keeps the lock on. The count and the attempt's own event are in one write transaction, serialized per
user and per token (SQLite: the write lock taken at BEGIN; PostgreSQL: transaction-scoped advisory locks), so
processes racing each other cannot slip more than :data:`LIMIT` looked-up refusals through.

Attempts without a signed-in user (a link opened by anyone) are counted per token only: a token is 256 random
bits, so guessing one is hopeless anyway, and a shared count for everyone not signed in would let one visitor
lock every link out for everyone.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from hashlib import sha256
from typing import Any

import numpy as np
import pandas as pd
import sqlalchemy as sa

from .identity import parse
from .store_schema import events, people

__all__ = ["AuditNotFound", "LIMIT", "LINK_NOT_FOUND", "LOCKOUT", "NotOwner", "Refused", "StoreError",
           "TooManyAttempts", "WINDOW", "find_users", "locked_for", "names_of", "remember", "serialize"]

#: Refusals within :data:`WINDOW` that lock a user or a link token out, and for how long after the last of them.
LIMIT = 20
WINDOW = timedelta(minutes=1)
LOCKOUT = timedelta(minutes=5)
#: The newest refusals read to find the last run of LIMIT within WINDOW: enough, since LOCKOUT + WINDOW holds
#: at most (LOCKOUT + WINDOW) / WINDOW windows, one of which holds a run when this many are in it.
_SCAN = LIMIT * int((LOCKOUT + WINDOW) / WINDOW) + LIMIT


class StoreError(RuntimeError):
    """The store cannot be opened or used (a bad URL, a database written by a newer version, a database
    error); the message says which, without the SQL traceback."""


class AuditNotFound(LookupError, ValueError):
    """No saved audit that this user may open has this id here (or this link opens none): the id is malformed,
    the audit was deleted, belongs to another store or is private to someone else; the link is forged, expired
    or revoked. One message for all, so that a refusal does not tell that the audit exists."""


class NotOwner(PermissionError):
    """The user may read this audit (it is shared with them) but only its owner may do this (delete, share, link,
    transfer)."""


class TooManyAttempts(PermissionError):
    """This user, or this link token, was refused too often lately: the attempt is refused without a lookup.
    ``retry_after`` is how many seconds the lock has left."""

    def __init__(self, retry_after: float) -> None:
        self.retry_after = max(1, math.ceil(retry_after))
        super().__init__(f"too many refused attempts; try again in {self.retry_after} s")


#: The message of every link that opens nothing (forged, expired, revoked, or its audit deleted).
LINK_NOT_FOUND = ("this link opens no saved audit: it is mistyped, has expired or been revoked, or its audit "
                  "was deleted")


class Refused(Exception):
    """Inside the store: an attempt refused, its event already written in the transaction; the transaction
    commits (keeping the event) and ``error`` is raised to the caller."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def serialize(conn: sa.Connection, keys: list[str]) -> None:
    """PostgreSQL: one transaction at a time per key (a user, a link), until this transaction ends. SQLite needs
    nothing: a write transaction holds the database's write lock from its start."""
    if conn.dialect.name != "postgresql":
        return
    for key in keys:   # always the user's before the link's: no two transactions wait on each other in a circle
        number = int.from_bytes(sha256(f"fairness-limit {key}".encode()).digest()[:8], "big", signed=True)
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(number)))


def _last_run_end(times: np.ndarray) -> float | None:
    """The time (seconds) of the last refusal that completes LIMIT refusals within WINDOW, or None."""
    if len(times) < LIMIT:
        return None
    ends = times[LIMIT - 1:]
    runs = ends[ends - times[:len(times) - LIMIT + 1] <= WINDOW.total_seconds()]
    return float(runs.max()) if runs.size else None


def locked_for(conn: sa.Connection, user: str | None, link: str | None, now: datetime,
               iso: Any) -> float | None:
    """Seconds left of the lock on ``user`` or on ``link`` (a token's SHA-256), the longer of the two; None when
    neither is locked. Counts the refused events in the database (every process's)."""
    since = iso(now - WINDOW - LOCKOUT)
    left: list[float] = []
    for column, value in ((events.c.username, user), (events.c.link, link)):
        if value is None:
            continue
        stamps = conn.execute(sa.select(events.c.time).where(column == value, events.c.allowed.is_(False),
                                                             events.c.time >= since)
                              .order_by(events.c.time.desc(), events.c.seq.desc()).limit(_SCAN)).scalars().all()
        if len(stamps) < LIMIT:
            continue
        seconds = np.sort(pd.to_datetime(pd.Series(stamps), utc=True, format="ISO8601").astype("int64")
                          .to_numpy() / 1e9)
        end = _last_run_end(seconds)
        if end is not None and end + LOCKOUT.total_seconds() > now.timestamp():
            left.append(end + LOCKOUT.total_seconds() - now.timestamp())
    return max(left) if left else None


# --------------------------------------------------------------------------- the users the store has seen


def remember(conn: sa.Connection, user: str, email: str | None, name: str | None, seen: str) -> None:
    """Record (or refresh) a signed-in user's display e-mail and name. One row per identity."""
    values = {"username": user, "email": email, "name": name, "seen": seen}
    if conn.dialect.name in ("sqlite", "postgresql"):
        if conn.dialect.name == "sqlite":
            from sqlalchemy.dialects.sqlite import insert
        else:
            from sqlalchemy.dialects.postgresql import insert
        statement = insert(people).values(**values)
        conn.execute(statement.on_conflict_do_update(index_elements=[people.c.username],
                                                     set_={k: statement.excluded[k] for k in ("email", "name",
                                                                                                "seen")}))
        return
    if conn.execute(people.update().where(people.c.username == user).values(**values)).rowcount == 0:
        conn.execute(people.insert().values(**values))


def find_users(conn: sa.Connection, typed: str) -> tuple[str, ...]:
    """The identities ``typed`` may mean: itself when it is an identity; else every user seen with this e-mail
    address (compared without case), in the order they were first seen."""
    try:
        parse(typed)
    except ValueError:
        pass
    else:
        return (typed,)
    email = typed.strip().lower()
    if not email:
        return ()
    return tuple(conn.execute(sa.select(people.c.username).where(sa.func.lower(people.c.email) == email)
                              .order_by(people.c.seq)).scalars())


def names_of(conn: sa.Connection, users: list[str]) -> dict[str, str]:
    """``{identity: its display name}`` for the users seen with an e-mail or a name (e-mail first)."""
    wanted = sorted({u for u in users if isinstance(u, str)})
    if not wanted:
        return {}
    rows = conn.execute(sa.select(people.c.username, people.c.email, people.c.name)
                        .where(people.c.username.in_(wanted))).all()
    return {r.username: r.email or r.name for r in rows if r.email or r.name}
