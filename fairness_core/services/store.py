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
that saved it, and is private to it. Every call takes ``user``; it defaults to :data:`LOCAL_USER`, the one
analyst of a workbench without sign-in, and a server with sign-in passes the signed-in user. The owner may
:meth:`~AuditStore.share` it read-only with named users, and make a :meth:`~AuditStore.link`: a token
(``secrets.token_urlsafe(32)``, returned once, kept only as its SHA-256) that opens it read-only for anyone
holding it (:meth:`~AuditStore.open_link`) until it expires or the owner revokes it. An audit the user may not
open answers :class:`AuditNotFound` with the same message as one that does not exist, and a forged, expired or
revoked link the same as an unknown one; a reader it is shared with who tries what only the owner may
(delete, share, link) gets :class:`NotOwner`. Every call that names an audit, allowed or refused, adds a row to
the append-only :meth:`~AuditStore.events` (in the action's own transaction; a refusal in a short write of its
own); :meth:`~AuditStore.list` and :meth:`~AuditStore.history` return only what the user may see and are not
recorded.

Reliability: a save is one transaction (interrupted, it leaves nothing); SQLite runs in WAL mode with a
busy timeout and takes the write lock at the start of a write, so the app's threads and several server
processes on one machine can save at once without losing anything; the schema carries a version
(:data:`SCHEMA_VERSION`) and older stores are migrated forward when opened.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import threading
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
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
from .store_schema import BUSY_TIMEOUT_S, LOCAL_USER, MAX_LABEL, MAX_USER, MIGRATIONS, SCHEMA_VERSION, SavedAudit
from .store_schema import ID_PATTERN as _ID
from .store_schema import audits as _audits, events as _events, groups as _groups, links as _links
from .store_schema import metadata as _metadata, shares as _shares, versions as _schema
from .store_schema import insert_groups as _insert_groups, link_row as _link, reach as _reach, saved as _saved
from .store_schema import KINDS, kind_of as _kind_of, payload as _payload
from .store_schema import iso as _iso, label as _label, sqlite_settings as _sqlite_settings, token_hash as _hash
from .store_schema import user_name as _user, user_names as _users, utc as _utc, visible as _visible

__all__ = ["AuditNotFound", "AuditStore", "BUSY_TIMEOUT_S", "DATA_DIR_VARIABLE", "DEFAULT_LINK_LIFETIME", "KINDS",
           "LINK_NOT_FOUND", "LOCAL_USER", "MAX_LABEL", "MAX_LINK_LIFETIME", "MAX_USER", "MIGRATIONS", "NotOwner",
           "SCHEMA_VERSION", "STORE_VARIABLE", "SavedAudit", "StoreError", "default_url"]

#: The environment variable naming the store (any SQLAlchemy URL); unset: SQLite in the data folder.
STORE_VARIABLE = "FAIRNESS_AUDIT_STORE"
#: The environment variable naming the data folder (default ``./data``), where the default SQLite file lives.
DATA_DIR_VARIABLE = "FAIRNESS_DATA_DIR"

#: How long a link opens its audit unless told otherwise, and the longest a link may live.
DEFAULT_LINK_LIFETIME = timedelta(days=7)
MAX_LINK_LIFETIME = timedelta(days=365)

_TOKEN = re.compile(r"^[A-Za-z0-9_-]{43}$")   # secrets.token_urlsafe(32)
_LINK_ID = re.compile(r"^[0-9a-f]{64}$")   # a token's SHA-256, the link's id in the store
#: PostgreSQL: the transaction-scoped advisory lock that serializes opening the store ("fairstor" as a number).
_PG_OPEN_LOCK = int.from_bytes(b"fairstor", "big")
_ADJUSTMENTS = ADJUSTMENT_KEYS   # the registry's keys (fairness_core.vocabulary)


class StoreError(RuntimeError):
    """The store cannot be opened or used (a bad URL, a database written by a newer version, a database
    error); the message says which, without the SQL traceback."""


class AuditNotFound(LookupError, ValueError):
    """No saved audit that this user may open has this id here (or this link opens none): the id is malformed,
    the audit was deleted, belongs to another store or is private to someone else; the link is forged, expired
    or revoked. One message for all, so that a refusal does not tell that the audit exists."""


class NotOwner(PermissionError):
    """The user may read this audit (it is shared with them) but only its owner may do this (delete, share, link)."""


#: The message of every link that opens nothing (forged, expired, revoked, or its audit deleted).
LINK_NOT_FOUND = ("this link opens no saved audit: it is mistyped, has expired or been revoked, or its audit "
                  "was deleted")


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


class AuditStore:
    """Saved audits in a database: ``AuditStore()`` opens the configured default (:func:`default_url`),
    ``AuditStore("sqlite:///audits.db")`` or ``AuditStore("postgresql+psycopg://…")`` a given one.

    One object may be shared by threads. Every method raises :class:`StoreError` (database trouble),
    :class:`AuditNotFound` (an unknown id, or one the user may not open) or :class:`NotOwner` with a message, never
    a bare database exception. ``now`` (an aware datetime, UTC by default) is the clock for times saved and links'
    expiry; tests pass their own.
    """

    def __init__(self, url: str | None = None, *, now: Callable[[], datetime] | None = None) -> None:
        self._now = now or (lambda: datetime.now(timezone.utc))
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
                with conn.begin():
                    yield conn
        except (AuditNotFound, NotOwner, StoreError, ValueError):
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
             detail: str = "") -> None:
        """One event, in ``conn``'s transaction. An id that is not an audit's is kept only in the detail, cut short."""
        known = audit_id if isinstance(audit_id, str) and _ID.fullmatch(audit_id) else None
        if audit_id is not None and known is None:
            detail = f"not an audit id: {text.terminal_safe(str(audit_id))[:60]!r}"
        conn.execute(_events.insert().values(time=_iso(self._now_utc()), username=user, action=action,
                                             audit_id=known, allowed=allowed, detail=detail))

    def _refuse(self, user: str | None, action: str, audit_id: Any, detail: str, error: Exception) -> Exception:
        """Record a refusal in a write of its own (the action's transaction did nothing), then give ``error``."""
        with self._write() as conn:
            self._log(conn, user, action, audit_id, False, detail)
        return error

    def _not_found(self, audit_id: Any) -> AuditNotFound:
        """The one answer for an id that is malformed, deleted, foreign or not this user's to open."""
        if not isinstance(audit_id, str) or not _ID.fullmatch(audit_id):
            shown = text.terminal_safe(str(audit_id))[:60]
            return AuditNotFound(f"{shown!r} is not a saved audit's id (an id is 22 letters, digits, - or _)")
        return AuditNotFound(f"no saved audit has the id {audit_id!r} here that you may open: it was "
                             "deleted, saved in another store, or is not shared with you")

    def _as_owner(self, conn: sa.Connection, action: str, audit_id: Any, user: str) -> tuple[sa.Row | None, Any]:
        """The audit row when ``user`` owns it, else (None, the refusal to raise once this transaction is over)."""
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
            row, access, why = _reach(conn, audit_id, user)
            if row is not None:
                groups = conn.execute(sa.select(_groups).where(_groups.c.audit_seq == row.seq)
                                      .order_by(_groups.c.position)).all()
                self._log(conn, user, "load", audit_id, True, why)
                return _saved(row, groups, access)
        raise self._refuse(user, "load", audit_id, why, self._not_found(audit_id))

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
        when it is shared with ``user`` to read."""
        user = _user(user)
        with self._write() as conn:
            row, refusal = self._as_owner(conn, "delete", audit_id, user)
            if row is not None:
                for table in (_groups, _shares, _links):
                    conn.execute(table.delete().where(table.c.audit_seq == row.seq))
                conn.execute(_audits.delete().where(_audits.c.seq == row.seq))
                self._log(conn, user, "delete", audit_id, True, row.name)
                return
        raise self._refuse(user, "delete", audit_id, *refusal)

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

    # ----------------------------------------------------------------- shares, links and events

    def share(self, audit_id: str, *, user: str = LOCAL_USER, with_users: Any) -> tuple[str, ...]:
        """Let ``with_users`` (a list of users) read ``user``'s audit ``audit_id``: load it, see it listed and in
        the history; never delete, share or link it. Only the owner may share; returns everyone it is shared
        with now. Refusals as :meth:`delete`."""
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
            row, refusal = self._as_owner(conn, action, audit_id, user)
            if row is not None:
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
        raise self._refuse(user, action, audit_id, *refusal)

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
            row, refusal = self._as_owner(conn, "link", audit_id, user)
            if row is not None:
                now = self._now_utc()
                expires = _iso(now + expires_in)
                conn.execute(_links.insert().values(token_hash=token_hash, audit_seq=row.seq, created_by=user,
                                                    created=_iso(now), expires=expires, revoked=None))
                self._log(conn, user, "link", audit_id, True, f"link {token_hash[:12]} until {expires}")
                return token
        raise self._refuse(user, "link", audit_id, *refusal)

    def links(self, audit_id: str, *, user: str = LOCAL_USER) -> pd.DataFrame:
        """The links to ``user``'s audit ``audit_id``, newest first: link_id (the token's SHA-256, which opens
        nothing but names the link to :meth:`revoke_link`), created, expires, revoked (a time, or NaT) and active.
        Only the owner may ask; refusals as :meth:`delete`."""
        user = _user(user)
        with self._write() as conn:
            row, refusal = self._as_owner(conn, "links", audit_id, user)
            if row is not None:
                rows = conn.execute(sa.select(_links.c.token_hash, _links.c.created, _links.c.expires,
                                              _links.c.revoked).where(_links.c.audit_seq == row.seq)
                                    .order_by(_links.c.created.desc(), _links.c.token_hash)).all()
                self._log(conn, user, "links", audit_id, True)
        if row is None:
            raise self._refuse(user, "links", audit_id, *refusal)
        df = pd.DataFrame([tuple(r) for r in rows], columns=["link_id", "created", "expires", "revoked"])
        for column in ("created", "expires", "revoked"):
            df[column] = pd.to_datetime(df[column], utc=True, format="ISO8601")
        df["active"] = df["revoked"].isna() & (df["expires"] > pd.Timestamp(self._now_utc()))
        return df

    def open_link(self, token: str, *, user: str | None = None) -> SavedAudit:
        """The saved audit a link's ``token`` opens, read-only (``.access`` "link"), for whoever holds it;
        ``user``, when signed in, is recorded in the event. A forged, expired or revoked token, or one whose
        audit was deleted, raises :class:`AuditNotFound` with one message (:data:`LINK_NOT_FOUND`)."""
        user = None if user is None else _user(user)
        if not isinstance(token, str) or not _TOKEN.fullmatch(token):
            raise self._refuse(user, "open_link", None, "not a link token", AuditNotFound(LINK_NOT_FOUND))
        token_hash = _hash(token)
        with self._write() as conn:
            link, row = _link(conn, token_hash)
            why = "unknown link" if link is None else self._dead(link)
            if row is not None and why is None:
                groups = conn.execute(sa.select(_groups).where(_groups.c.audit_seq == row.seq)
                                      .order_by(_groups.c.position)).all()
                self._log(conn, user, "open_link", row.id, True, f"link {token_hash[:12]}")
                return _saved(row, groups, "link")
        raise self._refuse(user, "open_link", None if row is None else row.id,
                           f"{why} {token_hash[:12]}", AuditNotFound(LINK_NOT_FOUND))

    def revoke_link(self, token: str, *, user: str = LOCAL_USER) -> None:
        """Revoke a link to ``user``'s audit, named by its token or its ``link_id`` (:meth:`links`): it opens
        nothing from now on. Revoking a revoked or expired link changes nothing. An unknown link, or one to an
        audit ``user`` may not see, raises :class:`AuditNotFound` (:data:`LINK_NOT_FOUND`); a reader of the
        audit, or anyone holding a live token, who is not its owner gets :class:`NotOwner`."""
        user = _user(user)
        by_id = isinstance(token, str) and bool(_LINK_ID.fullmatch(token))
        if not by_id and (not isinstance(token, str) or not _TOKEN.fullmatch(token)):
            raise self._refuse(user, "revoke_link", None, "not a link token", AuditNotFound(LINK_NOT_FOUND))
        token_hash = token if by_id else _hash(token)
        with self._write() as conn:
            link, row = _link(conn, token_hash, lock=True)
            if row is not None and row.owner == user:
                dead = self._dead(link)
                if dead is None:
                    conn.execute(_links.update().where(_links.c.token_hash == token_hash)
                                 .values(revoked=_iso(self._now_utc())))
                self._log(conn, user, "revoke_link", row.id, True,
                          f"link {token_hash[:12]}" + ("" if dead is None else f" ({dead} already)"))
                return
            shared = row is not None and _reach(conn, row.id, user)[1] == "shared"
            live = row is not None and not by_id and self._dead(link) is None
        why = "unknown link" if row is None else "not the owner"
        error: Exception = NotOwner(f"only its owner ({row.owner}) may revoke a link to the saved audit "
                                    f"{row.name!r}") if shared or live else AuditNotFound(LINK_NOT_FOUND)
        raise self._refuse(user, "revoke_link", None if row is None else row.id, f"{why} {token_hash[:12]}", error)

    def _dead(self, link: sa.Row) -> str | None:
        """Why a link opens nothing ("revoked link", "expired link"), or None while it opens its audit."""
        if link.revoked is not None:
            return "revoked link"
        return "expired link" if self._now_utc() >= _utc(link.expires) else None

    def events(self, audit_id: str | None = None, *, user: str | None = None, limit: int | None = 1000) \
            -> pd.DataFrame:
        """The record of every attempt, newest first (of one audit, of one user when given; at most ``limit`` rows,
        None for all): seq, time (UTC), user (None: a link opened without sign-in), action (save, load, delete,
        share, unshare, readers, link, links, open_link, revoke_link, migrate), audit_id (None: no audit was
        named, e.g. a malformed id or a forged link), allowed, and detail (why a refusal was refused: it tells an
        audit that exists from one that does not, so show it to operators, not to the refused user).
        Rows are only ever added."""
        query = sa.select(_events.c.seq, _events.c.time, _events.c.username, _events.c.action, _events.c.audit_id,
                          _events.c.allowed, _events.c.detail)
        if audit_id is not None:
            query = query.where(_events.c.audit_id == str(audit_id))
        if user is not None:
            query = query.where(_events.c.username == _user(user))
        if limit is not None:
            if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
                raise ValueError(f"limit must be a whole number of at least 1, or None, got {limit!r}")
            query = query.limit(limit)
        with self._read() as conn:
            rows = conn.execute(query.order_by(_events.c.seq.desc())).all()
        df = pd.DataFrame([tuple(r) for r in rows],
                          columns=["seq", "time", "user", "action", "audit_id", "allowed", "detail"])
        df["time"] = pd.to_datetime(df["time"], utc=True, format="ISO8601")
        return df.astype({"seq": "int64", "allowed": "bool"})
