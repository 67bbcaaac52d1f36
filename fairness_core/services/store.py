"""Saved audits: a store behind one small interface, SQLite in a data folder by default, any SQLAlchemy URL.

>>> import tempfile, pathlib
>>> from fairness_core import ConfusionMatrix as CM
>>> from fairness_core.audit import Audit
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> s = AuditStore(f"sqlite:///{folder / 'audits.db'}")
>>> audit = Audit({"a": CM(30, 2, 9, 59), "b": CM(25, 12, 4, 59)}, positive_is="benefit")
>>> audit_id = s.save(audit, name="Q3 audit", model="credit", period="2026-Q3")
>>> saved = s.load(audit_id)
>>> saved.audit == audit, saved.name, saved.period
(True, 'Q3 audit', '2026-Q3')
>>> s.list(model="credit")[["name", "model", "period", "groups", "n"]].values.tolist()
[['Q3 audit', 'credit', '2026-Q3', 2, 200]]
>>> s.close()

What is kept: each group's confusion matrix (in order), the source, notes, what a positive prediction
means and whether it was declared a benefit or a harm, the group columns and each group's values in them,
the provenance, the verdict settings (tolerance, alpha, adjustment), a name, the model's name and version,
the period the data covers, who saved it (when known), the tool version and when it was saved. Not the
rows behind the matrices: a loaded audit has ``rows=None`` (the stability tab, the ensemble and anything
else that needs the individuals is not available for it). An audit of amounts
(:class:`~fairness_core.continuous.ContinuousAudit`) keeps each group's sufficient statistics, its direction, unit
and band instead; an audit of classes (:class:`~fairness_core.multiclass.MulticlassAudit`) each group's class counts,
the classes, their order and the favourable end (schema version 4; its ``kind``).

Stored text is kept exactly as given (markup included); showing it safely is the page's job, as with
uploads. Ids are unguessable (``secrets.token_urlsafe(16)``) but are not permissions.

Who may see what (deny by default, enforced here, not only in the page): every audit has an owner, the ``user``
that saved it, and is private to it. A user is an identity, the pair (issuer, subject) spelled ``issuer|subject``
by :func:`~fairness_core.services.identity.identity` — never an e-mail address or a bare subject, which two
providers may both hand out (a bare name is refused with a ValueError saying so). Every call takes ``user``; it
defaults to :data:`LOCAL_USER` (``local|local``), the one analyst of a workbench without sign-in, and a server with
sign-in passes the signed-in user's identity (:meth:`~AuditStore.remember` keeps its e-mail, for display and to
find it by, :meth:`~AuditStore.find_users`). The owner may :meth:`~AuditStore.share` it read-only with named users,
:meth:`~AuditStore.transfer` it to another user, and make a :meth:`~AuditStore.link`: a token
(``secrets.token_urlsafe(32)``, returned once, kept only as its SHA-256) that opens it read-only for anyone
holding it (:meth:`~AuditStore.open_link`) until it expires or the owner revokes it. An audit the user may not
open answers :class:`AuditNotFound` with the same message as one that does not exist, and a forged, expired or
revoked link the same as an unknown one; a reader it is shared with who tries what only the owner may
(delete, share, link, transfer) gets :class:`NotOwner`. Every call that names an audit, allowed or refused, adds
a row to the append-only :meth:`~AuditStore.events`, in the action's own transaction (a refusal's transaction
writes its event and nothing else); :meth:`~AuditStore.list` and :meth:`~AuditStore.history` return only what the
user may see and are not recorded. Refusals are rate-limited per user and per link token (:mod:`.store_access`):
after 20 in a minute, every attempt is refused without a lookup (:class:`TooManyAttempts`) for 5 minutes, each of
those refusals an event too; the count is the database's, so it holds across server processes.

Reliability: a save is one transaction (interrupted, it leaves nothing); SQLite runs in WAL mode with a
busy timeout and takes the write lock at the start of a write, so the app's threads and several server
processes on one machine can save at once without losing anything; the schema carries a version
(:data:`SCHEMA_VERSION`) and older stores are migrated forward when opened.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import threading
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import pandas as pd
import sqlalchemy as sa
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from ..common import text
from ..continuous import DEFAULT_BAND
from ..statistics.verdicts import DEFAULT_OFI_TOLERANCE, VerdictSettings, unpack_settings
from ..common.vocabulary import ADJUSTMENT_KEYS, DEFAULT_ALPHA, check_alpha
# The schema, re-exported where callers have always found it (store.SCHEMA_VERSION, store.SavedAudit, ...).
from .identity import identity, local_user
from .store_access import LINK_NOT_FOUND, AuditNotFound, NotOwner, Refused, StoreError, TooManyAttempts
from .store_access import locked_for as _locked_for, serialize as _serialize
from .store_migrations import LEGACY_ISSUER_VARIABLE, MIGRATIONS, legacy_issuer as _legacy_issuer
from .store_schema import BUSY_TIMEOUT_S, LOCAL_USER, MAX_LABEL, MAX_USER, SCHEMA_VERSION, SavedAudit
from .store_schema import ID_PATTERN as _ID
from .store_schema import audits as _audits, events as _events, groups as _groups, links as _links
from .store_schema import metadata as _metadata, shares as _shares, versions as _schema
from .store_schema import insert_groups as _insert_groups, reach as _reach, saved as _saved
from .store_schema import KINDS, kind_of as _kind_of, payload as _payload
from .store_schema import iso as _iso, label as _label, sqlite_settings as _sqlite_settings
from .store_schema import user_name as _user, visible as _visible
from .store_sharing import DEFAULT_LINK_LIFETIME, MAX_LINK_LIFETIME, Sharing

__all__ = ["AuditNotFound", "AuditStore", "BUSY_TIMEOUT_S", "DATA_DIR_VARIABLE", "DEFAULT_LINK_LIFETIME", "KINDS",
           "LEGACY_ISSUER_VARIABLE", "LINK_NOT_FOUND", "LOCAL_USER", "MAX_LABEL", "MAX_LINK_LIFETIME", "MAX_USER",
           "MIGRATIONS", "NotOwner", "SCHEMA_VERSION", "STORE_VARIABLE", "SavedAudit", "StoreError", "TooManyAttempts",
           "default_url", "identity", "local_user"]

#: The environment variable naming the store (any SQLAlchemy URL); unset: SQLite in the data folder.
STORE_VARIABLE = "FAIRNESS_AUDIT_STORE"
#: The environment variable naming the data folder (default ``./data``), where the default SQLite file lives.
DATA_DIR_VARIABLE = "FAIRNESS_DATA_DIR"

#: PostgreSQL: the transaction-scoped advisory lock that serializes opening the store ("fairstor" as a number).
_PG_OPEN_LOCK = int.from_bytes(b"fairstor", "big")
_ADJUSTMENTS = ADJUSTMENT_KEYS   # the registry's keys (fairness_core.vocabulary)


def default_url(environ: Mapping[str, str] | None = None) -> str:
    """The store's URL: ``FAIRNESS_AUDIT_STORE`` when set, else ``sqlite:///<data folder>/audits.db`` with the
    data folder ``FAIRNESS_DATA_DIR`` (default ``./data``), created when missing."""
    environ = os.environ if environ is None else environ
    url = (environ.get(STORE_VARIABLE) or "").strip()
    if url:
        return url
    folder = Path((environ.get(DATA_DIR_VARIABLE) or "").strip() or "data")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StoreError(f"cannot create the data folder {str(folder)!r} ({DATA_DIR_VARIABLE}): "
                         f"{e.strerror or e}") from None
    return f"sqlite:///{folder.resolve() / 'audits.db'}"


# --------------------------------------------------------------------------- the store


class AuditStore(Sharing):
    """Saved audits in a database: ``AuditStore()`` opens the configured default (:func:`default_url`),
    ``AuditStore("sqlite:///audits.db")`` or ``AuditStore("postgresql+psycopg://…")`` a given one.

    One object may be shared by threads. Every method raises :class:`StoreError` (database trouble),
    :class:`AuditNotFound` (an unknown id, or one the user may not open) or :class:`NotOwner` with a message, never
    a bare database exception. ``now`` (an aware datetime, UTC by default) is the clock for times saved, links'
    expiry and the rate limit; tests pass their own. ``legacy_issuer``: the issuer the bare user names of a
    schema-4 store belong to, used once, by the migration to schema 5 (default: ``FAIRNESS_LEGACY_ISSUER``, else
    local users; see docs/server.md).
    """

    def __init__(self, url: str | None = None, *, now: Callable[[], datetime] | None = None,
                 legacy_issuer: str | None = None) -> None:
        self._now = now or (lambda: datetime.now(timezone.utc))
        self._legacy_issuer = legacy_issuer
        raw = default_url() if url is None else url
        try:
            self.url = sa.engine.make_url(raw)
        except ArgumentError:
            where = f" (from {STORE_VARIABLE})" if url is None else ""
            raise StoreError(f"{raw!r}{where} is not a database URL; e.g. sqlite:///data/audits.db or "
                             "postgresql+psycopg://user@host/dbname") from None
        self._lock: threading.Lock | None = None
        sqlite = self.url.get_backend_name() == "sqlite"
        memory = sqlite and self.url.database in (None, "", ":memory:")
        kwargs: dict[str, Any] = {}
        if sqlite:
            kwargs["connect_args"] = {"timeout": BUSY_TIMEOUT_S, "check_same_thread": False}
            if memory:   # one database, one connection: the store serializes its own calls
                kwargs["poolclass"] = StaticPool
                self._lock = threading.Lock()
        try:
            self.engine = sa.create_engine(self.url, **kwargs)
        except (ArgumentError, ImportError, SQLAlchemyError) as e:
            raise StoreError(f"cannot open the audit store {self.where}: {e}") from None
        if sqlite:
            _sqlite_settings(self.engine)
        with self._write() as conn:
            self._open_schema(conn)

    @property
    def where(self) -> str:
        """Where audits are kept, for a note on the page (any password hidden)."""
        if self.url.get_backend_name() == "sqlite":
            return f"SQLite file {self.url.database}" if self.url.database not in (None, "", ":memory:") \
                else "SQLite in memory (lost when the server stops)"
        return self.url.render_as_string(hide_password=True)

    def __repr__(self) -> str:
        return f"AuditStore({self.where!r})"

    def close(self) -> None:
        """Close the database connections (the object can still be used: they reopen on demand)."""
        self.engine.dispose()

    # ----------------------------------------------------------------- transactions

    @contextmanager
    def _conn(self, write: bool) -> Iterator[sa.Connection]:
        """A connection in a transaction; database errors become :class:`StoreError`."""
        lock = self._lock
        if lock is not None:
            lock.acquire()
        try:
            with self.engine.connect() as conn:
                if write:
                    conn = conn.execution_options(store_write=True)
                transaction = conn.begin()
                try:
                    yield conn
                except Refused as refused:   # its event is written: keep it, give the refusal
                    transaction.commit()
                    raise refused.error from None
                except BaseException:
                    transaction.rollback()
                    raise
                transaction.commit()
        except (AuditNotFound, NotOwner, TooManyAttempts, StoreError, ValueError):
            raise
        except SQLAlchemyError as e:
            reason = getattr(e, "orig", None) or e
            raise StoreError(f"the audit store ({self.where}) failed: {type(reason).__name__}: "
                             f"{str(reason).splitlines()[0] if str(reason) else ''}") from None
        finally:
            if lock is not None:
                lock.release()

    def _write(self) -> Any:
        return self._conn(True)

    def _read(self) -> Any:
        return self._conn(False)

    def _open_schema(self, conn: sa.Connection) -> None:
        # Server processes started together open an empty database at once: one creates the tables and the
        # version row, the others wait and then find them. SQLite: the write transaction (BEGIN IMMEDIATE)
        # already holds the lock; PostgreSQL: an advisory lock, released with this transaction. Then each table
        # is created only where it is missing (CREATE TABLE IF NOT EXISTS).
        if conn.dialect.name == "postgresql":
            conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_PG_OPEN_LOCK)))
        _metadata.create_all(conn, checkfirst=True)
        version = conn.execute(sa.select(_schema.c.version)).scalar()
        if version is None:
            conn.execute(_schema.insert().values(version=SCHEMA_VERSION))
            return
        if version > SCHEMA_VERSION:
            raise StoreError(f"the audit store {self.where} is at schema version {version}, newer than this "
                             f"workbench's {SCHEMA_VERSION}: upgrade the workbench to open it")
        while version < SCHEMA_VERSION:
            if version == 4:   # bare names become identities of the legacy issuer
                issuer = _legacy_issuer() if self._legacy_issuer is None else self._legacy_issuer
                MIGRATIONS[version](conn, issuer)  # type: ignore[call-arg]
            else:
                MIGRATIONS[version](conn)
            version += 1
            conn.execute(_schema.update().values(version=version))

    def schema_version(self) -> int:
        """The schema version of the database (== :data:`SCHEMA_VERSION` once opened)."""
        with self._read() as conn:
            return int(conn.execute(sa.select(_schema.c.version)).scalar_one())

    # ----------------------------------------------------------------- who may do what

    def _now_utc(self) -> datetime:
        moment = self._now()
        if not isinstance(moment, datetime) or moment.tzinfo is None:
            raise ValueError(f"the store's clock must give an aware datetime, got {moment!r}")
        return moment.astimezone(timezone.utc)

    def _log(self, conn: sa.Connection, user: str | None, action: str, audit_id: Any, allowed: bool,
             detail: str = "", link: str | None = None) -> None:
        """One event, in ``conn``'s transaction. An id that is not an audit's is kept only in the detail, cut short;
        ``link``: the token's SHA-256 when the attempt named a link."""
        known = audit_id if isinstance(audit_id, str) and _ID.fullmatch(audit_id) else None
        if audit_id is not None and known is None:
            shown = f"not an audit id: {text.terminal_safe(str(audit_id))[:60]!r}"
            detail = shown if detail == "not an audit id" else f"{detail}; {shown}"
        conn.execute(_events.insert().values(time=_iso(self._now_utc()), username=user, action=action,
                                             audit_id=known, allowed=allowed, detail=detail, link=link))

    def _refused(self, conn: sa.Connection, user: str | None, action: str, audit_id: Any, detail: str,
                 error: Exception, link: str | None = None) -> Refused:
        """Record a refusal in ``conn``'s transaction (which changed nothing else); raise what this returns, and the
        transaction commits with the event and the caller gets ``error``."""
        self._log(conn, user, action, audit_id, False, detail, link)
        return Refused(error)

    def _gate(self, conn: sa.Connection, user: str | None, action: str, audit_id: Any,
              link: str | None = None) -> None:
        """The rate limit, first thing in every attempt's transaction: a user or a link token refused too often
        lately is refused now, without a lookup (the refusal an event)."""
        _serialize(conn, [f"user {user}"] * (user is not None) + [f"link {link}"] * (link is not None))
        left = _locked_for(conn, user, link, self._now_utc(), _iso)
        if left is not None:
            raise self._refused(conn, user, action, audit_id, "rate limited", TooManyAttempts(left), link)

    def _not_found(self, audit_id: Any) -> AuditNotFound:
        """The one answer for an id that is malformed, deleted, foreign or not this user's to open."""
        if not isinstance(audit_id, str) or not _ID.fullmatch(audit_id):
            shown = text.terminal_safe(str(audit_id))[:60]
            return AuditNotFound(f"{shown!r} is not a saved audit's id (an id is 22 letters, digits, - or _)")
        return AuditNotFound(f"no saved audit has the id {audit_id!r} here that you may open: it was "
                             "deleted, saved in another store, or is not shared with you")

    def _as_owner(self, conn: sa.Connection, action: str, audit_id: Any, user: str) -> tuple[sa.Row | None, Any]:
        """The audit row when ``user`` owns it, else (None, (why, the error)) for :meth:`_refused`."""
        row, access, why = _reach(conn, audit_id, user, lock=True)
        if access == "owner":
            return row, None
        if access == "shared":
            return None, (why, NotOwner(f"only its owner ({row.owner}) may {action} the saved audit {row.name!r}; "
                                        "it is shared with you to read"))
        return None, (why, self._not_found(audit_id))

    # ----------------------------------------------------------------- the interface

    def save(self, audit: Any, name: str, model: str | None = None, period: str | None = None, *,
             model_version: str | None = None, user: str = LOCAL_USER,
             tolerance: float | VerdictSettings = DEFAULT_OFI_TOLERANCE, alpha: float = DEFAULT_ALPHA,
             adjust: str = "holm", unit: str = "", source: str | None = None) -> str:
        """Save ``audit`` (not its rows) in one transaction; returns its new, unguessable id. ``user`` owns it and
        is recorded as ``saved_by``; it is private to them until shared.

        ``audit`` is an :class:`Audit` (its confusion matrices are kept), a
        :class:`~fairness_core.continuous.ContinuousAudit` (each group's sufficient statistics) or a
        :class:`~fairness_core.multiclass.MulticlassAudit` (each group's class counts); :meth:`load` gives back the
        same kind. ``name`` is required; ``model`` and ``period`` place it in a series (:meth:`history`). Each label is
        text of at most :data:`MAX_LABEL` characters without hidden characters. ``tolerance``, ``alpha`` and
        ``adjust`` are the verdict settings it was judged at (or one :class:`~fairness_core.verdicts.VerdictSettings`
        in place of ``tolerance``, whose band an amount audit keeps). The tolerance is in the OFI's units: in (0, 2)
        for a binary audit and for classes (tiers), any finite amount above 0 for amounts, whose ``unit`` ("$", "a
        year") is kept beside it. ``alpha`` passes :func:`~fairness_core.vocabulary.check_alpha` (in (0, 0.5)).

        A counterfactual test (:class:`~fairness_core.counterfactual.PairedAudit`, kind "paired") keeps every distinct
        pattern of a case's answers across the groups with its number of cases, and the per-pair discordant and
        per-group counts of its verdicts — never the texts or the case ids; :meth:`load` gives back a PairedAudit
        whose every table is the original's with its cases in sorted order (its verdicts bit for bit). Its tolerance
        is a difference of rates in (0, 1] (scores: in their units); ``source`` names its results file.
        """
        kind = _kind_of(audit)
        user = _user(user)
        labels = {"name": _label(name, "name", required=True), "model": _label(model, "model"),
                  "period": _label(period, "period"), "model_version": _label(model_version, "model version")}
        band = tolerance.band if isinstance(tolerance, VerdictSettings) else DEFAULT_BAND
        tolerance, alpha, adjust = unpack_settings(tolerance, alpha, adjust)
        amounts = kind == "continuous" or (kind == "paired" and audit.kind == "score")
        rates = kind == "paired" and not amounts
        if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not (
                0 < tolerance < (math.inf if amounts else 2)) or (rates and tolerance > 1):
            wanted = ("a finite amount above 0, in the outcome's units" if amounts else
                      "a difference of rates in (0, 1]" if rates else "a number in (0, 2)")
            raise ValueError(f"tolerance must be {wanted}, got {tolerance!r}")
        if not isinstance(unit, str) or len(unit) > MAX_LABEL or (unit and text.hidden_characters(unit) is not None):
            raise ValueError(f"unit must be short text without hidden characters (e.g. '$'), got {unit!r}")
        if unit and not amounts:
            raise ValueError("unit names an amount audit's units; this audit is not one of amounts")
        check_alpha(alpha)
        if adjust not in _ADJUSTMENTS:
            raise ValueError(f"adjust must be one of {', '.join(_ADJUSTMENTS)}, got {adjust!r}")
        try:
            provenance = json.dumps({str(k): v for k, v in dict(getattr(audit, "provenance", {})).items()},
                                    ensure_ascii=False)
            notes = json.dumps(list(getattr(audit, "notes", ())), ensure_ascii=False)
            columns = json.dumps(list(getattr(audit, "group_columns", ())), ensure_ascii=False)
            kept = _payload(audit, unit, band)
        except (TypeError, ValueError) as e:
            raise ValueError(f"the audit's notes, group columns and provenance must be plain text or numbers: {e}") \
                from None
        try:
            from .._version import __version__ as tool_version
        except ImportError:  # pragma: no cover - the package always has one
            tool_version = None
        audit_id = secrets.token_urlsafe(16)
        if kind == "binary":
            n, positive_outcome = int(sum(cm.n for cm in audit.cms.values())), audit.positive_outcome
        elif kind == "continuous":
            n, positive_outcome = int(audit.n.sum()), f"an amount ({audit.direction})"
        elif kind == "multiclass":
            n, positive_outcome = int(audit.counts.sum()), f"a class ({audit.direction})"
        else:   # a counterfactual test: n counts its cases
            n = int(len(audit.cases))
            positive_outcome = {"decision": f"a decision (a {audit.positive_is} when positive)",
                                "rank": "ranked first", "score": "a higher score"}[audit.kind]
        row = {"id": audit_id, **labels, "saved_by": user, "owner": user, "tool_version": tool_version,
               "created": _iso(self._now_utc()),
               "source": getattr(audit, "source", None) or source or "counterfactual test results", "notes": notes, "positive_outcome": positive_outcome,
               "positive_is": getattr(audit, "positive_is", None), "group_columns": columns, "provenance": provenance,
               "has_group_values": getattr(audit, "group_values", None) is not None, "tolerance": float(tolerance),
               "alpha": float(alpha), "adjust": adjust, "n_groups": len(audit.groups),
               "has_outcomes": bool(getattr(audit, "has_outcomes", True)),
               "unknown_groups": json.dumps(list(getattr(audit, "unknown", ())), ensure_ascii=False),
               "n": n, "kind": kind, "payload": kept}
        with self._write() as conn:
            seq = conn.execute(_audits.insert().values(**row)).inserted_primary_key[0]
            if kind == "binary":
                _insert_groups(conn, seq, audit)
            self._log(conn, user, "save", audit_id, True, labels["name"] or "")
        return audit_id

    def load(self, audit_id: str, *, user: str = LOCAL_USER) -> SavedAudit:
        """The saved audit ``audit_id`` as ``user`` may read it (theirs, or shared with them), with its metadata
        (``.audit`` is the :class:`Audit`, rows None; ``.access`` "owner" or "shared"). Recorded as an event.

        Raises :class:`AuditNotFound`, with one message, for a malformed, deleted or foreign id and for an audit
        that is not the user's and not shared with them."""
        user = _user(user)
        with self._write() as conn:
            self._gate(conn, user, "load", audit_id)
            row, access, why = _reach(conn, audit_id, user)
            if row is None:
                raise self._refused(conn, user, "load", audit_id, why, self._not_found(audit_id))
            groups = conn.execute(sa.select(_groups).where(_groups.c.audit_seq == row.seq)
                                  .order_by(_groups.c.position)).all()
            self._log(conn, user, "load", audit_id, True, why)
            return _saved(row, groups, access)

    def list(self, model: str | None = None, *, user: str = LOCAL_USER) -> pd.DataFrame:
        """The saved audits ``user`` may see, newest first (of one model when given): id, name, model, period,
        created, groups (how many), n (rows counted), model_version, saved_by, owner, access ("owner" for
        theirs, "shared" for those shared with them, read-only) and kind (binary, continuous or multiclass)."""
        user = _user(user)
        access = sa.case((_audits.c.owner == user, "owner"), else_="shared")
        query = sa.select(_audits.c.id, _audits.c.name, _audits.c.model, _audits.c.period, _audits.c.created,
                          _audits.c.n_groups, _audits.c.n, _audits.c.model_version, _audits.c.saved_by,
                          _audits.c.owner, access, _audits.c.kind).where(_visible(user))
        if model is not None:
            query = query.where(_audits.c.model == model)
        with self._read() as conn:
            rows = conn.execute(query.order_by(_audits.c.seq.desc())).all()
        df = pd.DataFrame([tuple(r) for r in rows],
                          columns=["id", "name", "model", "period", "created", "groups", "n", "model_version",
                                   "saved_by", "owner", "access", "kind"])
        df["created"] = pd.to_datetime(df["created"], utc=True, format="ISO8601")
        return df.astype({"groups": "int64", "n": "int64"})

    def delete(self, audit_id: str, *, user: str = LOCAL_USER) -> None:
        """Delete a saved audit, its shares and its links; only its owner may. Its events are kept.

        :class:`AuditNotFound` when ``user`` may not see it (as for no audit with this id); :class:`NotOwner`
        when it is shared with ``user`` to read; :class:`TooManyAttempts` when ``user`` was refused too often
        lately (every call that names an audit or a link)."""
        user = _user(user)
        with self._write() as conn:
            row = self._owned(conn, "delete", audit_id, user)
            for table in (_groups, _shares, _links):
                conn.execute(table.delete().where(table.c.audit_seq == row.seq))
            conn.execute(_audits.delete().where(_audits.c.seq == row.seq))
            self._log(conn, user, "delete", audit_id, True, row.name)

    def history(self, model: str, *, user: str = LOCAL_USER) -> list[SavedAudit]:
        """Every saved audit of ``model`` that ``user`` may see and that has a period, ordered by period (as text:
        use labels that sort, such as 2026-Q3 or 2026-07) then by when it was saved, oldest first."""
        _label(model, "model", required=True)
        user = _user(user)
        with self._read() as conn:
            # Text compares by byte on every backend (PostgreSQL's default follows the database's locale).
            period, created = ((c.collate("C") for c in (_audits.c.period, _audits.c.created))
                               if conn.dialect.name == "postgresql" else (_audits.c.period, _audits.c.created))
            rows = conn.execute(sa.select(_audits).where(_audits.c.model == model, _audits.c.period.is_not(None),
                                                         _visible(user))
                                .order_by(period, created, _audits.c.seq)).all()
            if not rows:
                return []
            groups = conn.execute(sa.select(_groups).where(_groups.c.audit_seq.in_([r.seq for r in rows]))
                                  .order_by(_groups.c.audit_seq, _groups.c.position)).all()
        by_audit: dict[int, list[sa.Row]] = {}
        for g in groups:
            by_audit.setdefault(g.audit_seq, []).append(g)
        return [_saved(r, by_audit.get(r.seq, []), "owner" if r.owner == user else "shared") for r in rows]
