"""What the owner of a saved audit may give others: read-only shares, links that expire, the audit itself
(:meth:`~Sharing.transfer`); the users the store knows by e-mail; and the record of every attempt (events).

:class:`Sharing` is a part of :class:`fairness_core.store.AuditStore` (which inherits it), kept apart by job: it
uses the store's transactions, its clock, its record of events and its refusals (the rate limit included,
:mod:`.store_access`).
"""

from __future__ import annotations

import re
import secrets
from datetime import timedelta
from typing import Any

import pandas as pd
import sqlalchemy as sa

from .identity import LOCAL_USER
from .store_access import LINK_NOT_FOUND, AuditNotFound, NotOwner, find_users, names_of, remember
from .store_schema import MAX_LABEL, SavedAudit
from .store_schema import audits as _audits, events as _events, groups as _groups, links as _links
from .store_schema import shares as _shares
from .store_schema import iso as _iso, link_row as _link, reach as _reach, saved as _saved, token_hash as _hash
from .store_schema import user_name as _user, user_names as _users, utc as _utc

#: How long a link opens its audit unless told otherwise, and the longest a link may live.
DEFAULT_LINK_LIFETIME = timedelta(days=7)
MAX_LINK_LIFETIME = timedelta(days=365)

__all__ = ["DEFAULT_LINK_LIFETIME", "MAX_LINK_LIFETIME", "Sharing"]

_TOKEN = re.compile(r"^[A-Za-z0-9_-]{43}$")   # secrets.token_urlsafe(32)
_LINK_ID = re.compile(r"^[0-9a-f]{64}$")   # a token's SHA-256, the link's id in the store


class Sharing:
    """Shares, links, transfer, known users and events: the part of :class:`~fairness_core.store.AuditStore` that
    gives an owner's audit to others and records who tried what."""

    # Provided by AuditStore.
    _write: Any
    _read: Any
    _now_utc: Any
    _log: Any
    _gate: Any
    _refused: Any
    _as_owner: Any

    # ----------------------------------------------------------------- shares

    def share(self, audit_id: str, *, user: str = LOCAL_USER, with_users: Any) -> tuple[str, ...]:
        """Let ``with_users`` (a list of identities) read ``user``'s audit ``audit_id``: load it, see it listed and
        in the history; never delete, share, link or transfer it. Only the owner may share; returns everyone it is
        shared with now. Refusals as :meth:`delete`."""
        return self._change_readers("share", audit_id, user, with_users)

    def unshare(self, audit_id: str, *, user: str = LOCAL_USER, with_users: Any) -> tuple[str, ...]:
        """Take back what :meth:`share` gave ``with_users``; returns everyone it is still shared with."""
        return self._change_readers("unshare", audit_id, user, with_users)

    def readers(self, audit_id: str, *, user: str = LOCAL_USER) -> tuple[str, ...]:
        """Whom ``user``'s audit ``audit_id`` is shared with, in order (only its owner may ask)."""
        return self._change_readers("readers", audit_id, user, None)

    def _change_readers(self, action: str, audit_id: str, user: str, with_users: Any) -> tuple[str, ...]:
        user = _user(user)
        named = [] if with_users is None else _users(with_users)
        with self._write() as conn:
            row = self._owned(conn, action, audit_id, user)
            rows = _shares.c.audit_seq == row.seq
            if action == "unshare":
                conn.execute(_shares.delete().where(rows, _shares.c.username.in_(named)))
            elif action == "share":
                had = set(conn.execute(sa.select(_shares.c.username).where(rows)).scalars())
                new = [u for u in named if u not in had and u != row.owner]
                if new:
                    created = _iso(self._now_utc())
                    conn.execute(_shares.insert(), [{"audit_seq": row.seq, "username": u, "created": created}
                                                     for u in new])
            readers = tuple(conn.execute(sa.select(_shares.c.username).where(rows)
                                         .order_by(_shares.c.created, _shares.c.username)).scalars())
            self._log(conn, user, action, audit_id, True, ", ".join(named))
            return readers

    def _owned(self, conn: sa.Connection, action: str, audit_id: Any, user: str) -> sa.Row:
        """The audit row when ``user`` owns it (after the rate limit); else the refusal, recorded, is raised."""
        self._gate(conn, user, action, audit_id)
        row, refusal = self._as_owner(conn, action, audit_id, user)
        if row is None:
            raise self._refused(conn, user, action, audit_id, *refusal)
        return row

    def transfer(self, audit_id: str, *, user: str = LOCAL_USER, to_user: str) -> None:
        """Hand ``user``'s audit ``audit_id`` to ``to_user`` (an identity): it becomes their audit (owner), its
        links theirs to list and revoke; ``user`` keeps no access (the new owner may share it back), and a share
        ``to_user`` had is gone (they own it now). Only the owner may; refusals as :meth:`delete`. Recorded as an
        event ("transfer", the detail naming both)."""
        user, to_user = _user(user), _user(to_user, "to_user")
        if to_user == user:
            raise ValueError(f"to_user is {user!r}, who owns the audit already")
        with self._write() as conn:
            row = self._owned(conn, "transfer", audit_id, user)
            conn.execute(_audits.update().where(_audits.c.seq == row.seq).values(owner=to_user))
            conn.execute(_links.update().where(_links.c.audit_seq == row.seq).values(created_by=to_user))
            conn.execute(_shares.delete().where(_shares.c.audit_seq == row.seq, _shares.c.username == to_user))
            self._log(conn, user, "transfer", audit_id, True, f"{row.name}: from {user} to {to_user}")

    # ----------------------------------------------------------------- links

    def link(self, audit_id: str, *, user: str = LOCAL_USER, expires_in: timedelta = DEFAULT_LINK_LIFETIME) -> str:
        """A new link to ``user``'s audit ``audit_id``: a token that opens it read-only for anyone who holds it
        (:meth:`open_link`) until ``expires_in`` (a positive timedelta up to :data:`MAX_LINK_LIFETIME`) has
        passed or the owner revokes it (:meth:`revoke_link`). The token is returned once: the store keeps only its
        SHA-256. Only the owner may make one; refusals as :meth:`delete`."""
        user = _user(user)
        if not isinstance(expires_in, timedelta) or not timedelta(0) < expires_in <= MAX_LINK_LIFETIME:
            raise ValueError(f"expires_in must be a timedelta above 0 and at most {MAX_LINK_LIFETIME.days} days, "
                             f"got {expires_in!r}")
        token = secrets.token_urlsafe(32)
        token_hash = _hash(token)
        with self._write() as conn:
            row = self._owned(conn, "link", audit_id, user)
            now = self._now_utc()
            expires = _iso(now + expires_in)
            conn.execute(_links.insert().values(token_hash=token_hash, audit_seq=row.seq, created_by=user,
                                                created=_iso(now), expires=expires, revoked=None))
            self._log(conn, user, "link", audit_id, True, f"link {token_hash[:12]} until {expires}", link=token_hash)
            return token

    def links(self, audit_id: str, *, user: str = LOCAL_USER) -> pd.DataFrame:
        """The links to ``user``'s audit ``audit_id``, newest first: link_id (the token's SHA-256, which opens
        nothing but names the link to :meth:`revoke_link`), created, expires, revoked (a time, or NaT) and active.
        Only the owner may ask; refusals as :meth:`delete`."""
        user = _user(user)
        with self._write() as conn:
            row = self._owned(conn, "links", audit_id, user)
            rows = conn.execute(sa.select(_links.c.token_hash, _links.c.created, _links.c.expires,
                                          _links.c.revoked).where(_links.c.audit_seq == row.seq)
                                .order_by(_links.c.created.desc(), _links.c.token_hash)).all()
            self._log(conn, user, "links", audit_id, True)
        df = pd.DataFrame([tuple(r) for r in rows], columns=["link_id", "created", "expires", "revoked"])
        for column in ("created", "expires", "revoked"):
            df[column] = pd.to_datetime(df[column], utc=True, format="ISO8601")
        df["active"] = df["revoked"].isna() & (df["expires"] > pd.Timestamp(self._now_utc()))
        return df

    def open_link(self, token: str, *, user: str | None = None) -> SavedAudit:
        """The saved audit a link's ``token`` opens, read-only (``.access`` "link"), for whoever holds it;
        ``user``, when signed in, is recorded in the event. A forged, expired or revoked token, or one whose
        audit was deleted, raises :class:`AuditNotFound` with one message (:data:`LINK_NOT_FOUND`); a token, or a
        signed-in user, refused too often lately :class:`~.store_access.TooManyAttempts`."""
        user = None if user is None else _user(user)
        token_hash = _hash(token) if isinstance(token, str) and token.isascii() else None
        with self._write() as conn:
            self._gate(conn, user, "open_link", None, link=token_hash)
            if token_hash is None or not _TOKEN.fullmatch(token):
                raise self._refused(conn, user, "open_link", None, "not a link token", AuditNotFound(LINK_NOT_FOUND),
                                    link=token_hash)
            link, row = _link(conn, token_hash)
            why = "unknown link" if link is None else self._dead(link)
            if row is None or why is not None:
                raise self._refused(conn, user, "open_link", None if row is None else row.id,
                                    f"{why} {token_hash[:12]}", AuditNotFound(LINK_NOT_FOUND), link=token_hash)
            groups = conn.execute(sa.select(_groups).where(_groups.c.audit_seq == row.seq)
                                  .order_by(_groups.c.position)).all()
            self._log(conn, user, "open_link", row.id, True, f"link {token_hash[:12]}", link=token_hash)
            return _saved(row, groups, "link")

    def revoke_link(self, token: str, *, user: str = LOCAL_USER) -> None:
        """Revoke a link to ``user``'s audit, named by its token or its ``link_id`` (:meth:`links`): it opens
        nothing from now on. Revoking a revoked or expired link changes nothing. An unknown link, or one to an
        audit ``user`` may not see, raises :class:`AuditNotFound` (:data:`LINK_NOT_FOUND`); a reader of the
        audit, or anyone holding a live token, who is not its owner gets :class:`NotOwner`."""
        user = _user(user)
        by_id = isinstance(token, str) and bool(_LINK_ID.fullmatch(token))
        token_hash = token if by_id else _hash(token) if isinstance(token, str) and token.isascii() else None
        with self._write() as conn:
            self._gate(conn, user, "revoke_link", None, link=token_hash)
            if token_hash is None or not by_id and not _TOKEN.fullmatch(token):
                raise self._refused(conn, user, "revoke_link", None, "not a link token",
                                    AuditNotFound(LINK_NOT_FOUND), link=token_hash)
            link, row = _link(conn, token_hash, lock=True)
            if row is not None and row.owner == user:
                dead = self._dead(link)
                if dead is None:
                    conn.execute(_links.update().where(_links.c.token_hash == token_hash)
                                 .values(revoked=_iso(self._now_utc())))
                self._log(conn, user, "revoke_link", row.id, True,
                          f"link {token_hash[:12]}" + ("" if dead is None else f" ({dead} already)"), link=token_hash)
                return
            shared = row is not None and _reach(conn, row.id, user)[1] == "shared"
            live = row is not None and not by_id and self._dead(link) is None
            why = "unknown link" if row is None else "not the owner"
            error: Exception = NotOwner(f"only its owner may revoke a link to the saved audit {row.name!r}") \
                if shared or live else AuditNotFound(LINK_NOT_FOUND)
            raise self._refused(conn, user, "revoke_link", None if row is None else row.id,
                                f"{why} {token_hash[:12]}", error, link=token_hash)

    def _dead(self, link: sa.Row) -> str | None:
        """Why a link opens nothing ("revoked link", "expired link"), or None while it opens its audit."""
        if link.revoked is not None:
            return "revoked link"
        return "expired link" if self._now_utc() >= _utc(link.expires) else None

    # ----------------------------------------------------------------- the users the store knows

    def remember(self, user: str, *, email: str | None = None, name: str | None = None) -> None:
        """Keep what to show for ``user`` (an identity) — the e-mail address its provider vouched for, its name —
        so that owners can find them by e-mail to share with (:meth:`find_users`) and read who did what. The
        e-mail is never a key: two identities may show the same one. Not an event (no audit is named)."""
        user = _user(user)
        email = None if email is None or not str(email).strip() else str(email).strip()
        name = None if name is None or not str(name).strip() else str(name).strip()[:MAX_LABEL]
        if email is not None and (len(email) > 254 or "@" not in email):
            raise ValueError(f"email must be an e-mail address of at most 254 characters, got {email[:60]!r}")
        with self._write() as conn:
            remember(conn, user, email, name, _iso(self._now_utc()))

    def find_users(self, typed: str) -> tuple[str, ...]:
        """The identities ``typed`` may name: itself when it is an identity (``issuer|subject``), else every user
        seen (:meth:`remember`) with this e-mail address, compared without case — none, one, or several (then the
        caller must ask which: an e-mail may be shown by two providers' users)."""
        if not isinstance(typed, str):
            raise ValueError(f"a user to find must be typed as text, got {type(typed).__name__}")
        with self._read() as conn:
            return find_users(conn, typed)

    def display_names(self, users: Any) -> dict[str, str]:
        """``{identity: e-mail (else name)}`` for those of ``users`` the store has seen (:meth:`remember`)."""
        with self._read() as conn:
            return names_of(conn, [u for u in users if isinstance(u, str)])

    # ----------------------------------------------------------------- the record

    def events(self, audit_id: str | None = None, *, user: str | None = None, limit: int | None = 1000) \
            -> pd.DataFrame:
        """The record of every attempt, newest first (of one audit, of one user when given; at most ``limit`` rows,
        None for all): seq, time (UTC), user (None: a link opened without sign-in), action (save, load, delete,
        share, unshare, readers, transfer, link, links, open_link, revoke_link, migrate), audit_id (None: no audit
        was named, e.g. a malformed id or a forged link), allowed, detail (why a refusal was refused: it tells an
        audit that exists from one that does not, so show it to operators and owners, not to the refused user)
        and link (the token's SHA-256, the link's ``link_id``, when a link was named). Of one audit: its events
        and every attempt on one of its links (refused without a lookup included). Rows are only ever added."""
        query = sa.select(_events.c.seq, _events.c.time, _events.c.username, _events.c.action, _events.c.audit_id,
                          _events.c.allowed, _events.c.detail, _events.c.link)
        if audit_id is not None:
            its_links = sa.select(_links.c.token_hash).join(_audits, _audits.c.seq == _links.c.audit_seq) \
                .where(_audits.c.id == str(audit_id))
            query = query.where(sa.or_(_events.c.audit_id == str(audit_id), _events.c.link.in_(its_links)))
        if user is not None:
            query = query.where(_events.c.username == _user(user))
        if limit is not None:
            if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
                raise ValueError(f"limit must be a whole number of at least 1, or None, got {limit!r}")
            query = query.limit(limit)
        with self._read() as conn:
            rows = conn.execute(query.order_by(_events.c.seq.desc())).all()
        df = pd.DataFrame([tuple(r) for r in rows],
                          columns=["seq", "time", "user", "action", "audit_id", "allowed", "detail", "link"])
        df["time"] = pd.to_datetime(df["time"], utc=True, format="ISO8601")
        return df.astype({"seq": "int64", "allowed": "bool"})

