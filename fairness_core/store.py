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
else that needs the individuals is not available for it).

Stored text is kept exactly as given (markup included); showing it safely is the page's job, as with
uploads. Ids are unguessable (``secrets.token_urlsafe(16)``), so a link ``?audit=<id>`` can be shared.

Reliability: a save is one transaction (interrupted, it leaves nothing); SQLite runs in WAL mode with a
busy timeout and takes the write lock at the start of a write, so the app's threads and several server
processes on one machine can save at once without losing anything; the schema carries a version
(:data:`SCHEMA_VERSION`) and older stores are migrated forward when opened.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import pandas as pd
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from . import text
from .audit import DEFAULT_ALPHA, DEFAULT_OFI_TOLERANCE, Audit
from .confusion import ConfusionMatrix
from .vocabulary import ADJUSTMENT_KEYS

#: The environment variable naming the store (any SQLAlchemy URL); unset: SQLite in the data folder.
STORE_VARIABLE = "FAIRNESS_AUDIT_STORE"
#: The environment variable naming the data folder (default ``./data``), where the default SQLite file lives.
DATA_DIR_VARIABLE = "FAIRNESS_DATA_DIR"

#: The schema this code writes. A store at an older version is migrated forward by :data:`MIGRATIONS`
#: when opened; one at a newer version is refused (written by a newer workbench).
SCHEMA_VERSION = 2

#: Longest name, model name, model version, period or "saved by", in characters.
MAX_LABEL = 200

#: How long a write waits for another process's write to finish (SQLite's busy timeout), in seconds.
BUSY_TIMEOUT_S = 30.0

_ID = re.compile(r"^[A-Za-z0-9_-]{22}$")   # secrets.token_urlsafe(16)
#: PostgreSQL: the transaction-scoped advisory lock that serializes opening the store ("fairstor" as a number).
_PG_OPEN_LOCK = int.from_bytes(b"fairstor", "big")
_ADJUSTMENTS = ADJUSTMENT_KEYS   # the registry's keys (fairness_core.vocabulary)


def _switch_to_wal(cursor: Any) -> None:
    """Put a SQLite database in WAL mode. Switching takes an exclusive lock and SQLite answers "database is
    locked" at once, without its busy handler, while another connection switches or writes; so this waits
    and tries again (up to :data:`BUSY_TIMEOUT_S`), and does nothing when the database is in WAL mode already."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    pause = 0.002
    while True:
        try:
            if str(cursor.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
                return
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) and "busy" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.1)


class StoreError(RuntimeError):
    """The store cannot be opened or used (a bad URL, a database written by a newer version, a database
    error); the message says which, without the SQL traceback."""


class AuditNotFound(LookupError, ValueError):
    """No saved audit has this id here: it is malformed, was deleted, or belongs to another store."""


@dataclass(frozen=True)
class SavedAudit:
    """A saved audit with what was stored beside it. It reads as the :class:`Audit` it holds (every attribute and
    method not its own is the audit's; ``.audit`` is the Audit itself). ``rows`` is None: rows are not stored."""

    id: str
    audit: Audit
    name: str
    model: str | None
    model_version: str | None
    period: str | None
    saved_by: str | None
    tool_version: str | None
    created: datetime
    tolerance: float
    alpha: float
    adjust: str

    def verdicts(self, tolerance: float | None = None, *, alpha: float | None = None, adjust: str | None = None,
                 **options: Any) -> pd.DataFrame:
        """The audit's verdicts, at the settings it was saved with unless others are given."""
        return self.audit.verdicts(self.tolerance if tolerance is None else tolerance,
                                   alpha=self.alpha if alpha is None else alpha,
                                   adjust=self.adjust if adjust is None else adjust, **options)

    def __getattr__(self, attribute: str) -> Any:
        """Everything else is the audit's: what :meth:`AuditStore.load` returns reads as the Audit it holds
        (``s.load(id).cms``, ``.groups``, ``.pairwise("OFI")`` …), with the stored metadata beside it."""
        if attribute.startswith("__") or attribute == "audit":
            raise AttributeError(attribute)
        return getattr(self.audit, attribute)


# --------------------------------------------------------------------------- schema

_metadata = sa.MetaData()

_schema = sa.Table("store_schema", _metadata, sa.Column("version", sa.Integer, nullable=False))

_audits = sa.Table(
    "audits", _metadata,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),   # save order, for ties in time
    sa.Column("id", sa.String(32), nullable=False, unique=True),
    sa.Column("name", sa.String(MAX_LABEL), nullable=False),
    sa.Column("model", sa.String(MAX_LABEL), index=True),
    sa.Column("model_version", sa.String(MAX_LABEL)),
    sa.Column("period", sa.String(MAX_LABEL)),
    sa.Column("saved_by", sa.String(MAX_LABEL)),
    sa.Column("tool_version", sa.String(64)),
    sa.Column("created", sa.String(32), nullable=False),      # ISO 8601 UTC with microseconds: sorts as text
    sa.Column("source", sa.Text, nullable=False),
    sa.Column("notes", sa.Text, nullable=False),              # JSON list of text
    sa.Column("positive_outcome", sa.Text, nullable=False),
    sa.Column("positive_is", sa.String(16)),
    sa.Column("group_columns", sa.Text, nullable=False),      # JSON list
    sa.Column("provenance", sa.Text, nullable=False),         # JSON object, order kept
    sa.Column("has_group_values", sa.Boolean, nullable=False),
    sa.Column("tolerance", sa.Float, nullable=False),
    sa.Column("alpha", sa.Float, nullable=False),
    sa.Column("adjust", sa.String(8), nullable=False),
    sa.Column("n_groups", sa.Integer, nullable=False),
    sa.Column("n", sa.BigInteger, nullable=False),
    # version 2: False for an audit of decisions alone (no outcomes); the groups of unknown category (JSON list)
    sa.Column("has_outcomes", sa.Boolean, nullable=False, server_default=sa.true()),
    sa.Column("unknown_groups", sa.Text, nullable=False, server_default="[]"),
)

_groups = sa.Table(
    "audit_groups", _metadata,
    sa.Column("audit_seq", sa.Integer, sa.ForeignKey("audits.seq", ondelete="CASCADE"), primary_key=True),
    sa.Column("position", sa.Integer, primary_key=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("tp", sa.BigInteger, nullable=False),
    sa.Column("fn", sa.BigInteger, nullable=False),
    sa.Column("fp", sa.BigInteger, nullable=False),
    sa.Column("tn", sa.BigInteger, nullable=False),
    sa.Column("group_values", sa.Text),                       # JSON list, or NULL without group values
)

def _add_outcomes_columns(conn: sa.Connection) -> None:
    """Version 1 → 2: audits of decisions alone and unknown categories. Every audit saved before had outcomes
    and no unknown category."""
    true = "TRUE" if conn.dialect.name == "postgresql" else "1"
    conn.execute(sa.text(f"ALTER TABLE audits ADD COLUMN has_outcomes BOOLEAN NOT NULL DEFAULT {true}"))
    conn.execute(sa.text("ALTER TABLE audits ADD COLUMN unknown_groups TEXT NOT NULL DEFAULT '[]'"))


#: ``{version: step}``: ``step(connection)`` brings a store at ``version`` to ``version + 1``, inside the
#: opening transaction.
MIGRATIONS: dict[int, Callable[[sa.Connection], None]] = {1: _add_outcomes_columns}


# --------------------------------------------------------------------------- configuration


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


def _label(value: Any, what: str, required: bool = False) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{what} must be text, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{what} must not be blank")
    if len(value) > MAX_LABEL:
        raise ValueError(f"{what} is {len(value):,} characters long; at most {MAX_LABEL} are kept")
    if (shown := text.hidden_characters(value)) is not None:
        raise ValueError(f"{what} {shown!r} holds a hidden character (shown as ⟨U+…⟩): it would print like "
                         "another name or reorder the text around it")
    return value


def _utc(created: str) -> datetime:
    return datetime.fromisoformat(created).astimezone(timezone.utc)


# --------------------------------------------------------------------------- the store


class AuditStore:
    """Saved audits in a database: ``AuditStore()`` opens the configured default (:func:`default_url`),
    ``AuditStore("sqlite:///audits.db")`` or ``AuditStore("postgresql+psycopg://…")`` a given one.

    One object may be shared by threads. Every method raises :class:`StoreError` (database trouble) or
    :class:`AuditNotFound` (an unknown id) with a message, never a bare database exception.
    """

    def __init__(self, url: str | None = None) -> None:
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
            self._sqlite_settings(self.engine)
        with self._write() as conn:
            self._open_schema(conn)

    @staticmethod
    def _sqlite_settings(engine: sa.Engine) -> None:
        """WAL, a busy timeout, foreign keys; transactions begun by the store (writes take the lock at once)."""

        @event.listens_for(engine, "connect")
        def _connect(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None   # the store emits BEGIN itself
            cur = dbapi_connection.cursor()
            cur.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            _switch_to_wal(cur)
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        @event.listens_for(engine, "begin")
        def _begin(conn: sa.Connection) -> None:
            # A write starts with the write lock (BEGIN IMMEDIATE), so two writers queue on the busy timeout
            # instead of one failing when it upgrades a read lock.
            conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("store_write") else "BEGIN")

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
        except (AuditNotFound, StoreError, ValueError):
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

    # ----------------------------------------------------------------- the interface

    def save(self, audit: Audit, name: str, model: str | None = None, period: str | None = None, *,
             model_version: str | None = None, saved_by: str | None = None,
             tolerance: float = DEFAULT_OFI_TOLERANCE, alpha: float = DEFAULT_ALPHA, adjust: str = "holm") -> str:
        """Save ``audit`` (not its rows) in one transaction; returns its new, unguessable id.

        ``name`` is required; ``model`` and ``period`` place it in a series (:meth:`history`). Each label is
        text of at most :data:`MAX_LABEL` characters without hidden characters. ``tolerance``, ``alpha`` and
        ``adjust`` are the verdict settings it was judged at.
        """
        if not isinstance(audit, Audit):
            raise ValueError(f"expected an Audit, got {type(audit).__name__}")
        labels = {"name": _label(name, "name", required=True), "model": _label(model, "model"),
                  "period": _label(period, "period"), "model_version": _label(model_version, "model version"),
                  "saved_by": _label(saved_by, "saved by")}
        if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not (0 < tolerance < 2):
            raise ValueError(f"tolerance must be a number in (0, 2), got {tolerance!r}")
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not (0 < alpha < 1):
            raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}")
        if adjust not in _ADJUSTMENTS:
            raise ValueError(f"adjust must be one of {', '.join(_ADJUSTMENTS)}, got {adjust!r}")
        try:
            provenance = json.dumps({str(k): v for k, v in dict(audit.provenance).items()}, ensure_ascii=False)
            notes = json.dumps(list(audit.notes), ensure_ascii=False)
            columns = json.dumps(list(audit.group_columns), ensure_ascii=False)
        except (TypeError, ValueError) as e:
            raise ValueError(f"the audit's notes, group columns and provenance must be plain text or numbers: {e}") \
                from None
        try:
            from . import __version__ as tool_version
        except ImportError:  # pragma: no cover - the package always has one
            tool_version = None
        audit_id = secrets.token_urlsafe(16)
        row = {"id": audit_id, **labels, "tool_version": tool_version,
               "created": datetime.now(timezone.utc).isoformat(timespec="microseconds"),
               "source": audit.source, "notes": notes, "positive_outcome": audit.positive_outcome,
               "positive_is": audit.positive_is, "group_columns": columns, "provenance": provenance,
               "has_group_values": audit.group_values is not None, "tolerance": float(tolerance),
               "alpha": float(alpha), "adjust": adjust, "n_groups": len(audit.cms),
               "has_outcomes": audit.has_outcomes, "unknown_groups": json.dumps(list(audit.unknown), ensure_ascii=False),
               "n": int(sum(cm.n for cm in audit.cms.values()))}
        with self._write() as conn:
            seq = conn.execute(_audits.insert().values(**row)).inserted_primary_key[0]
            _insert_groups(conn, seq, audit)
        return audit_id

    def _row(self, conn: sa.Connection, audit_id: Any) -> sa.Row:
        if not isinstance(audit_id, str) or not _ID.fullmatch(audit_id):
            shown = text.terminal_safe(str(audit_id))[:60]
            raise AuditNotFound(f"{shown!r} is not a saved audit's id (an id is 22 letters, digits, - or _)")
        row = conn.execute(sa.select(_audits).where(_audits.c.id == audit_id)).first()
        if row is None:
            raise AuditNotFound(f"no saved audit has the id {audit_id!r} in {self.where}: it was deleted, "
                                "or saved in another store")
        return row

    def load(self, audit_id: str) -> SavedAudit:
        """The saved audit ``audit_id`` with its metadata (``.audit`` is the :class:`Audit`, rows None).

        Raises :class:`AuditNotFound` for a malformed, deleted or foreign id."""
        with self._read() as conn:
            row = self._row(conn, audit_id)
            groups = conn.execute(sa.select(_groups).where(_groups.c.audit_seq == row.seq)
                                  .order_by(_groups.c.position)).all()
        return _saved(row, groups)

    def list(self, model: str | None = None) -> pd.DataFrame:
        """The saved audits, newest first (of one model when given): id, name, model, period, created,
        groups (how many), n (rows counted), model_version, saved_by."""
        query = sa.select(_audits.c.id, _audits.c.name, _audits.c.model, _audits.c.period, _audits.c.created,
                          _audits.c.n_groups, _audits.c.n, _audits.c.model_version, _audits.c.saved_by)
        if model is not None:
            query = query.where(_audits.c.model == model)
        with self._read() as conn:
            rows = conn.execute(query.order_by(_audits.c.seq.desc())).all()
        df = pd.DataFrame([tuple(r) for r in rows],
                          columns=["id", "name", "model", "period", "created", "groups", "n", "model_version",
                                   "saved_by"])
        df["created"] = pd.to_datetime(df["created"], utc=True, format="ISO8601")
        return df.astype({"groups": "int64", "n": "int64"})

    def delete(self, audit_id: str) -> None:
        """Delete a saved audit; :class:`AuditNotFound` when there is none with this id."""
        with self._write() as conn:
            row = self._row(conn, audit_id)
            conn.execute(_groups.delete().where(_groups.c.audit_seq == row.seq))
            conn.execute(_audits.delete().where(_audits.c.seq == row.seq))

    def history(self, model: str) -> list[SavedAudit]:
        """Every saved audit of ``model`` that has a period, ordered by period (as text: use labels that sort,
        such as 2026-Q3 or 2026-07) then by when it was saved, oldest first."""
        _label(model, "model", required=True)
        with self._read() as conn:
            # Text compares by byte on every backend (PostgreSQL's default follows the database's locale).
            period, created = ((c.collate("C") for c in (_audits.c.period, _audits.c.created))
                               if conn.dialect.name == "postgresql" else (_audits.c.period, _audits.c.created))
            rows = conn.execute(sa.select(_audits).where(_audits.c.model == model, _audits.c.period.is_not(None))
                                .order_by(period, created, _audits.c.seq)).all()
            if not rows:
                return []
            groups = conn.execute(sa.select(_groups).where(_groups.c.audit_seq.in_([r.seq for r in rows]))
                                  .order_by(_groups.c.audit_seq, _groups.c.position)).all()
        by_audit: dict[int, list[sa.Row]] = {}
        for g in groups:
            by_audit.setdefault(g.audit_seq, []).append(g)
        return [_saved(r, by_audit.get(r.seq, [])) for r in rows]


def _insert_groups(conn: sa.Connection, seq: int, audit: Audit) -> None:
    values = audit.group_values
    conn.execute(_groups.insert(), [
        {"audit_seq": seq, "position": k, "name": g, "tp": cm.tp, "fn": cm.fn, "fp": cm.fp, "tn": cm.tn,
         "group_values": None if values is None else json.dumps(list(values[g]), ensure_ascii=False)}
        for k, (g, cm) in enumerate(audit.cms.items())])


def _saved(row: sa.Row, groups: list[sa.Row]) -> SavedAudit:
    cms = {g.name: ConfusionMatrix(int(g.tp), int(g.fn), int(g.fp), int(g.tn)) for g in groups}
    values = {g.name: tuple(json.loads(g.group_values)) for g in groups} if row.has_group_values else None
    audit = Audit(cms, source=row.source, notes=tuple(json.loads(row.notes)), positive_outcome=row.positive_outcome,
                  group_columns=tuple(json.loads(row.group_columns)), positive_is=row.positive_is,
                  group_values=values, provenance=json.loads(row.provenance), outcomes=bool(row.has_outcomes),
                  unknown=tuple(json.loads(row.unknown_groups)))
    return SavedAudit(id=row.id, audit=audit, name=row.name, model=row.model, model_version=row.model_version,
                      period=row.period, saved_by=row.saved_by, tool_version=row.tool_version,
                      created=_utc(row.created), tolerance=float(row.tolerance), alpha=float(row.alpha),
                      adjust=row.adjust)
