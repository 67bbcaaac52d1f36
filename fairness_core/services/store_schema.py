"""The audit store's database side: its tables, the migrations that bring an older store to them, the SQLite
settings, the checks on what goes in, the queries of who may reach what, and rows to and from a SavedAudit.

:mod:`fairness_core.store` is the interface (``AuditStore``); this module is its schema, version
:data:`SCHEMA_VERSION`: ``audits`` (one row per saved audit, with its ``owner``), ``audit_groups`` (each group's
confusion matrix), ``audit_shares`` (who else may read an audit), ``audit_links`` (the SHA-256 of each link's
token, its expiry and revocation), ``audit_events`` (every attempt to reach an audit, allowed or refused;
append-only) and ``audit_people`` (the signed-in users seen, with the e-mail and name shown for them). Every user
column holds an identity, ``issuer|subject`` (:mod:`fairness_core.services.identity`; version 5).
"""

from __future__ import annotations

import dataclasses
import json
import re
import sqlite3
import time
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from hashlib import sha256
from typing import Any

import numpy as np
import pandas as pd
import sqlalchemy as sa
from sqlalchemy import event

from ..common import text
from ..audit import Audit
from ..continuous import DEFAULT_BAND, ContinuousAudit
from ..counterfactual import PairedAudit
from ..multiclass import MulticlassAudit
from ..statistics.confusion import ConfusionMatrix
from ..statistics.verdicts import VerdictSettings
from .identity import LOCAL_USER, MAX_USER, SEPARATOR, local_user, parse

#: The schema this code writes. A store at an older version is migrated forward by :data:`MIGRATIONS`
#: when opened; one at a newer version is refused (written by a newer workbench).
SCHEMA_VERSION = 5

#: The kinds of audit a store keeps (the ``kind`` column, version 4): yes/no decisions (:class:`Audit`), amounts
#: (:class:`~fairness_core.continuous.ContinuousAudit`), ordered or unordered classes
#: (:class:`~fairness_core.multiclass.MulticlassAudit`) — the names of the command line's ``--kind`` — and
#: counterfactual tests (:class:`~fairness_core.counterfactual.PairedAudit`, issue 54: ``counterfactual audit``).
KINDS = ("binary", "continuous", "multiclass", "paired")
#: Most distinct answer patterns (a case's answers across the groups) a saved counterfactual test keeps: decisions
#: have at most 3^k (selected, not, no answer), scores one per case.
MAX_PATTERNS = 200_000

#: Longest name, model name, model version, period or "saved by", in characters.
MAX_LABEL = 200

#: LOCAL_USER (``local|local``, the one analyst of a workbench without sign-in, every call's default ``user``) and
#: MAX_USER (the longest identity) come from :mod:`.identity`; the migrations are in :mod:`.store_migrations`.

#: How long a write waits for another process's write to finish (SQLite's busy timeout), in seconds.
BUSY_TIMEOUT_S = 30.0

#: An audit's id: ``secrets.token_urlsafe(16)``.
ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{22}$")


metadata = sa.MetaData()

versions = sa.Table("store_schema", metadata, sa.Column("version", sa.Integer, nullable=False))

audits = sa.Table(
    "audits", metadata,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),   # save order, for ties in time
    sa.Column("id", sa.String(32), nullable=False, unique=True),
    sa.Column("name", sa.String(MAX_LABEL), nullable=False),
    sa.Column("model", sa.String(MAX_LABEL), index=True),
    sa.Column("model_version", sa.String(MAX_LABEL)),
    sa.Column("period", sa.String(MAX_LABEL)),
    sa.Column("saved_by", sa.String(MAX_USER)),               # version 5: the saver's identity (before: any text)
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
    # version 3: the user who saved it, and alone may delete, share or link it; audits saved before: LOCAL_USER
    sa.Column("owner", sa.String(MAX_USER), nullable=False, server_default=LOCAL_USER, index=True),
    # version 4: the kind of audit (KINDS; audits saved before: "binary") and, for amounts and classes, everything
    # the audit is rebuilt from (JSON: per-group sufficient statistics, or per-group class counts; no rows)
    sa.Column("kind", sa.String(16), nullable=False, server_default="binary"),
    sa.Column("payload", sa.Text),
)

groups = sa.Table(
    "audit_groups", metadata,
    sa.Column("audit_seq", sa.Integer, sa.ForeignKey("audits.seq", ondelete="CASCADE"), primary_key=True),
    sa.Column("position", sa.Integer, primary_key=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("tp", sa.BigInteger, nullable=False),
    sa.Column("fn", sa.BigInteger, nullable=False),
    sa.Column("fp", sa.BigInteger, nullable=False),
    sa.Column("tn", sa.BigInteger, nullable=False),
    sa.Column("group_values", sa.Text),                       # JSON list, or NULL without group values
)

# Version 3. ("user" is a reserved word in SQL, hence "username".) Times are ISO 8601 UTC text, as "created".
shares = sa.Table(
    "audit_shares", metadata,
    sa.Column("audit_seq", sa.Integer, sa.ForeignKey("audits.seq", ondelete="CASCADE"), primary_key=True),
    sa.Column("username", sa.String(MAX_USER), primary_key=True),
    sa.Column("created", sa.String(32), nullable=False),
)

links = sa.Table(
    "audit_links", metadata,
    sa.Column("token_hash", sa.String(64), primary_key=True),           # SHA-256 of the token, hex; never the token
    sa.Column("audit_seq", sa.Integer, sa.ForeignKey("audits.seq", ondelete="CASCADE"), nullable=False, index=True),
    sa.Column("created_by", sa.String(MAX_USER), nullable=False),
    sa.Column("created", sa.String(32), nullable=False),
    sa.Column("expires", sa.String(32), nullable=False),
    sa.Column("revoked", sa.String(32)),                                 # when; NULL while not revoked
)

events = sa.Table(   # append-only: the store has no call that updates or deletes a row
    "audit_events", metadata,
    sa.Column("seq", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True),
    sa.Column("time", sa.String(32), nullable=False),
    sa.Column("username", sa.String(MAX_USER)),                          # NULL: a link opened without sign-in
    sa.Column("action", sa.String(16), nullable=False),
    sa.Column("audit_id", sa.String(32), index=True),                    # NULL: no audit (a malformed id, a forged link)
    sa.Column("allowed", sa.Boolean, nullable=False),
    sa.Column("detail", sa.Text, nullable=False),
    sa.Column("link", sa.String(64)),       # version 5: the link's token hash, when the attempt named a link
    sa.Index("ix_audit_events_user_time", "username", "time"),
    sa.Index("ix_audit_events_link_time", "link", "time"),
)

# Version 5: the signed-in users seen, and what is shown for them (the e-mail when the provider vouched for it,
# else the name). Never a key: an e-mail only finds the identities seen with it.
people = sa.Table(
    "audit_people", metadata,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("username", sa.String(MAX_USER), nullable=False, unique=True),
    sa.Column("email", sa.String(254)),
    sa.Column("name", sa.String(MAX_LABEL)),
    sa.Column("seen", sa.String(32), nullable=False),
)


def _text(value: Any, what: str, limit: int, hidden: str) -> str:
    """``value`` as checked text: a string, not blank, at most ``limit`` characters, no hidden character."""
    if not isinstance(value, str):
        raise ValueError(f"{what} must be text, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{what} must not be blank")
    if len(value) > limit:
        raise ValueError(f"{what} is {len(value):,} characters long; at most {limit} are kept")
    if (shown := text.hidden_characters(value)) is not None:
        raise ValueError(f"{what} {shown!r} holds a hidden character (shown as ⟨U+…⟩): it would print like {hidden}")
    return value


def label(value: Any, what: str, required: bool = False) -> str | None:
    """A name, model, version or period: text of 1 to :data:`MAX_LABEL` characters without hidden characters."""
    if value is None and not required:
        return None
    return _text(value, what, MAX_LABEL, "another name or reorder the text around it")


def user_name(value: Any, what: str = "user") -> str:
    """A user: an identity ``issuer|subject`` in its one spelling (:func:`~.identity.parse`), or a bare name, which
    names a *local* user (``"alice"`` is ``local_user("alice")`` = ``local|alice``: the library's API, a user without
    sign-in), never a signed-in one: a signed-in user is always ``identity(iss, sub)``, so no bare name or e-mail can
    stand for one. None is refused, never read as :data:`LOCAL_USER` (a page that lost its signed-in user must not
    act as the local analyst)."""
    if value is None:
        raise ValueError(f"{what} must be an identity (the signed-in user, or {LOCAL_USER!r} without sign-in), "
                         "got None")
    if isinstance(value, str) and SEPARATOR not in value and "%" not in value:
        return local_user(value)   # checked there: not blank, no spaces around it, no hidden characters
    parse(value, what)
    return str(value)


def user_names(values: Any) -> list[str]:
    """The users named in ``with_users`` (a list, not one string), each checked, once each, in order."""
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise ValueError(f"with_users must be a list of users, got {type(values).__name__}")
    users = list(dict.fromkeys(user_name(v, "each of with_users") for v in values))
    if not users:
        raise ValueError("with_users names no user")
    return users


def utc(created: str) -> datetime:
    return datetime.fromisoformat(created).astimezone(timezone.utc)


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")

# --------------------------------------------------------------------------- SQLite


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


def sqlite_settings(engine: sa.Engine) -> None:
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


# --------------------------------------------------------------------------- who may reach what, and rows


@dataclass(frozen=True)
class SavedAudit:
    """A saved audit with what was stored beside it. It reads as the audit it holds (every attribute and method not
    its own is the audit's; ``.audit`` is the audit itself: an :class:`Audit`, a
    :class:`~fairness_core.continuous.ContinuousAudit` or a :class:`~fairness_core.multiclass.MulticlassAudit`, as
    ``kind`` says). ``rows`` is None: rows are not stored.

    ``tolerance`` is in the OFI's units: a share for a binary audit, the outcome's units for amounts (``unit`` names
    them, e.g. "$"), tiers for ordered classes. ``band`` is an amount audit's band of the mean-prediction ratio (None:
    no ratio question was asked)."""

    id: str
    audit: Any
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
    owner: str = LOCAL_USER
    #: How the user reached it: "owner", "shared" (read-only) or "link" (read-only, through a link).
    access: str = "owner"
    #: One of :data:`KINDS`.
    kind: str = "binary"
    unit: str = ""
    band: tuple[float, float] | None = DEFAULT_BAND
    #: What the audit's data came from, as saved (a counterfactual test's results file; the other kinds' own source).
    source: str = ""

    @property
    def settings(self) -> VerdictSettings:
        """The verdict settings it was saved with (for amounts: the tolerance in the outcome's units, the band)."""
        if self.kind == "continuous":
            return VerdictSettings(self.tolerance, self.alpha, self.adjust, band=self.band or DEFAULT_BAND,
                                   amounts=True)
        if self.kind == "paired" and self.audit.kind == "score":   # a difference of mean scores, in their units
            return VerdictSettings(self.tolerance, self.alpha, self.adjust, amounts=True)
        return VerdictSettings(self.tolerance, self.alpha, self.adjust)

    @property
    def has_outcomes(self) -> bool:
        """Whether observed outcomes stand behind it (an audit of amounts always has them)."""
        return bool(getattr(self.audit, "has_outcomes", True))

    def verdicts(self, tolerance: float | None = None, *, alpha: float | None = None, adjust: str | None = None,
                 **options: Any) -> pd.DataFrame:
        """The audit's verdicts, at the settings it was saved with unless others are given: a binary audit's and an
        amount audit's pair verdicts (the latter in its unit, against its band), an ordered class audit's ordinal
        OFI verdicts; classes without an order or without outcomes have no OFI, and give their impact ratios."""
        tolerance = self.tolerance if tolerance is None else tolerance
        alpha = self.alpha if alpha is None else alpha
        adjust = self.adjust if adjust is None else adjust
        if self.kind == "continuous":
            options = {"band": self.band, "unit": self.unit, **options}
            return self.audit.verdicts(tolerance, alpha=alpha, adjust=adjust, **options)
        if self.kind == "paired":   # a counterfactual test: every pair of groups, paired
            return self.audit.pairs(tolerance, alpha=alpha, adjust=adjust)
        if self.kind == "multiclass":
            if self.audit.ordered and self.audit.has_outcomes:
                return self.audit.verdicts(tolerance, alpha=alpha, adjust=adjust)
            return self.audit.impact_ratios(alpha=alpha, adjust=adjust, **options)
        return self.audit.verdicts(tolerance, alpha=alpha, adjust=adjust, **options)

    def __getattr__(self, attribute: str) -> Any:
        """Everything else is the audit's: what :meth:`AuditStore.load` returns reads as the Audit it holds
        (``s.load(id).cms``, ``.groups``, ``.pairwise("OFI")`` …), with the stored metadata beside it."""
        if attribute.startswith("__") or attribute == "audit":
            raise AttributeError(attribute)
        return getattr(self.audit, attribute)


def kind_of(audit: Any) -> str:
    """The kind of ``audit`` (one of :data:`KINDS`); anything else is refused with a ValueError."""
    if isinstance(audit, Audit):
        return "binary"
    if isinstance(audit, ContinuousAudit):
        return "continuous"
    if isinstance(audit, MulticlassAudit):
        return "multiclass"
    if isinstance(audit, PairedAudit):
        return "paired"
    raise ValueError(f"expected an Audit, a ContinuousAudit or a MulticlassAudit (or a counterfactual test's "
                     f"PairedAudit), got {type(audit).__name__}")


def _values(group_values: Any) -> dict[str, list[str]] | None:
    return None if group_values is None else {str(g): list(v) for g, v in dict(group_values).items()}


def payload(audit: Any, unit: str = "", band: tuple[float, float] | None = DEFAULT_BAND) -> str | None:
    """What an audit of amounts or of classes is rebuilt from, as JSON (None for a binary audit, whose confusion
    matrices go to ``audit_groups``). Amounts: each group's n and the mean, M2 and M3 of every amount
    (:meth:`~fairness_core.continuous.ContinuousAudit.stats`; floats are written as Python's shortest repr, so they
    read back bit for bit), the direction, the unit and the band. Classes: each group's class counts and the
    classes, their order and the favourable end or classes."""
    kind = kind_of(audit)
    if kind == "binary":
        return None
    if kind == "paired":
        return _paired_payload(audit)
    common = {"groups": list(audit.groups), "source": audit.source, "notes": list(audit.notes),
              "group_columns": list(audit.group_columns), "group_values": _values(audit.group_values)}
    if kind == "continuous":
        stats = audit.stats()
        doc = {**common, "positive_is": audit.positive_is, "unit": unit,
               "band": None if band is None else [float(band[0]), float(band[1])],
               "stats": {c: stats[c].astype(float).tolist() for c in stats.columns}}
    else:
        doc = {**common, "counts": audit.counts.tolist(), "classes": list(audit.classes), "ordered": audit.ordered,
               "favourable": list(audit.favourable), "outcomes": audit.has_outcomes, "unknown": list(audit.unknown),
               "provenance": {str(k): str(v) for k, v in dict(audit.provenance).items()}}
    return json.dumps(doc, ensure_ascii=False)


def _from_payload(kind: str, text_: str) -> tuple[Any, str, tuple[float, float] | None]:
    """The audit, its unit and its band, rebuilt from :func:`payload`'s JSON."""
    doc = json.loads(text_)
    if kind == "paired":
        return _paired_from_payload(doc), "", DEFAULT_BAND
    values = None if doc["group_values"] is None else {g: tuple(v) for g, v in doc["group_values"].items()}
    if kind == "continuous":
        stats = pd.DataFrame(doc["stats"], index=pd.Index(doc["groups"], name="group"))
        with warnings.catch_warnings():   # an undeclared direction was warned about when the audit was made
            warnings.simplefilter("ignore", UserWarning)
            audit = ContinuousAudit.from_stats(stats, doc["positive_is"], source=doc["source"],
                                               group_columns=doc["group_columns"], group_values=values)
        audit = dataclasses.replace(audit, notes=tuple(doc["notes"]))
        band = None if doc["band"] is None else (float(doc["band"][0]), float(doc["band"][1]))
        return audit, doc["unit"], band
    if kind == "multiclass":
        audit = MulticlassAudit(np.asarray(doc["counts"], dtype=np.int64), tuple(doc["groups"]), tuple(doc["classes"]),
                                ordered=doc["ordered"], favourable=tuple(doc["favourable"]), outcomes=doc["outcomes"],
                                group_columns=tuple(doc["group_columns"]), group_values=values,
                                unknown=tuple(doc["unknown"]), source=doc["source"], notes=tuple(doc["notes"]),
                                provenance=doc["provenance"])
        return audit, "", DEFAULT_BAND
    raise ValueError(f"this store holds an audit of an unknown kind {kind!r}: upgrade the workbench to open it")


def _paired_payload(audit: PairedAudit) -> str:
    """What a counterfactual test is rebuilt from, as JSON, never its texts or case ids: its groups, kind of output,
    direction and baseline; every distinct pattern of a case's answers across the groups (null: no answer) with the
    number of cases that gave it, in sorted order — every statistic of the audit is a sum over cases, so these are
    sufficient — and, for decisions and ranks, the per-pair discordant counts and per-group counts the verdicts
    read, checked against the patterns when it is loaded."""
    values = np.asarray(audit.values, dtype=float)
    patterns, counts = _patterns(values, audit.kind)
    if len(patterns) > MAX_PATTERNS:
        raise ValueError(f"this counterfactual test has {len(patterns):,} distinct patterns of answers across its "
                         f"groups; a saved one keeps at most {MAX_PATTERNS:,} (a score audit keeps each case's scores)")
    doc: dict[str, Any] = {
        "groups": list(audit.groups), "output": audit.kind, "positive_is": audit.positive_is,
        "baseline": None if audit.baseline is None else list(audit.baseline), "cases": int(len(values)),
        "patterns": [[None if not np.isfinite(v) else float(v) for v in row] for row in patterns.tolist()],
        "counts": counts.astype(int).tolist()}
    doc.update(_paired_counts(audit))
    return json.dumps(doc, ensure_ascii=False)


def _patterns(values: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``values`` (NaN: no answer) in lexicographic order, "no answer" first, with their
    counts. Decisions and ranks are small integers: each row is read as one integer in base k + 2 (0 no answer,
    then the value + 1), first column most significant, so one sort of integers finds them (10^6 × 8: 0.2 s, where
    sorting rows takes 3 s); scores sort the rows themselves."""
    cases, k = values.shape
    base = k + 2
    if kind != "score" and cases and base ** k < 2 ** 62:
        digits = np.where(np.isnan(values), 0, values + 1).astype(np.int64)
        weights = base ** np.arange(k - 1, -1, -1, dtype=np.int64)
        codes, counts = np.unique(digits @ weights, return_counts=True)
        found = (codes[:, None] // weights[None, :]) % base
        return np.where(found == 0, -np.inf, found - 1.0), counts
    coded = np.where(np.isnan(values), -np.inf, values)    # outputs are finite: -inf stands for "no answer"
    return np.unique(coded, axis=0, return_counts=True) if cases else (coded, np.zeros(0, int))


def _paired_counts(audit: PairedAudit) -> dict[str, Any]:
    """The per-pair discordant counts (n, both, only_i, only_j) and per-group counts (answered, selected) of a
    decision or rank audit; nothing for scores."""
    if audit.kind == "score":
        return {}
    from ..statistics.paired import pair_counts   # the library's own counts, read back the same way

    seen = audit.observed.astype(float)
    selected = np.nan_to_num(audit._binary())
    n, both, only_i, only_j, _, _ = pair_counts(selected, seen)
    return {"pair_counts": {"n": n.astype(int).tolist(), "both": both.astype(int).tolist(),
                            "only_i": only_i.astype(int).tolist(), "only_j": only_j.astype(int).tolist()},
            "group_counts": {"n": seen.sum(axis=0).astype(int).tolist(),
                             "selected": selected.sum(axis=0).astype(int).tolist()}}


def _paired_from_payload(doc: dict[str, Any]) -> PairedAudit:
    """The counterfactual test rebuilt from :func:`_paired_payload`'s JSON: each pattern repeated by its count (the
    cases in sorted order, numbered from 0), its counts checked against those saved beside it."""
    k = len(doc["groups"])
    patterns = np.array([[np.nan if v is None else v for v in row] for row in doc["patterns"]],
                        dtype=float).reshape(-1, k)
    values = np.repeat(patterns, np.asarray(doc["counts"], dtype=np.int64), axis=0)
    audit = PairedAudit(tuple(doc["groups"]), np.arange(len(values)), values, doc["output"], doc["positive_is"],
                        None if doc["baseline"] is None else (doc["baseline"][0], doc["baseline"][1]))
    if len(values) != doc["cases"] or ({k_: doc[k_] for k_ in ("pair_counts", "group_counts") if k_ in doc}
                                       != _paired_counts(audit)):
        raise ValueError("this saved counterfactual test's counts do not match its answers: the store was altered")
    return audit


def reach(conn: sa.Connection, audit_id: Any, user: str, lock: bool = False) \
        -> tuple[sa.Row | None, str | None, str]:
    """The audit row, how ``user`` may reach it ("owner", "shared" or None) and why, for the event."""
    if not isinstance(audit_id, str) or not ID_PATTERN.fullmatch(audit_id):
        return None, None, "not an audit id"
    query = sa.select(audits).where(audits.c.id == audit_id)
    row = conn.execute(query.with_for_update() if lock else query).first()   # FOR UPDATE: PostgreSQL only
    if row is None:
        return None, None, "no such audit"
    if row.owner == user:
        return row, "owner", "owner"
    shared = conn.execute(sa.select(shares.c.username).where(shares.c.audit_seq == row.seq,
                                                              shares.c.username == user)).first()
    return (row, "shared", "shared with this user") if shared else (None, None, "private to another user")


def visible(user: str) -> Any:
    """The audits ``user`` may see: theirs and those shared with them."""
    shared = sa.exists().where(shares.c.audit_seq == audits.c.seq, shares.c.username == user)
    return sa.or_(audits.c.owner == user, shared)


def link_row(conn: sa.Connection, token_hash: str, lock: bool = False) -> tuple[sa.Row | None, sa.Row | None]:
    """The link with this token hash and its audit's row (None, None for no such link)."""
    query = sa.select(links).where(links.c.token_hash == token_hash)
    link = conn.execute(query.with_for_update() if lock else query).first()
    if link is None:
        return None, None
    return link, conn.execute(sa.select(audits).where(audits.c.seq == link.audit_seq)).first()


def token_hash(token: str) -> str:
    """What the store keeps of a link's token: its SHA-256, hex (the token itself is never stored)."""
    return sha256(token.encode("ascii")).hexdigest()


def insert_groups(conn: sa.Connection, seq: int, audit: Audit) -> None:
    values = audit.group_values
    conn.execute(groups.insert(), [
        {"audit_seq": seq, "position": k, "name": g, "tp": cm.tp, "fn": cm.fn, "fp": cm.fp, "tn": cm.tn,
         "group_values": None if values is None else json.dumps(list(values[g]), ensure_ascii=False)}
        for k, (g, cm) in enumerate(audit.cms.items())])


def saved(row: sa.Row, groups: list[sa.Row], access: str) -> SavedAudit:
    kind = getattr(row, "kind", "binary") or "binary"
    unit, band = "", DEFAULT_BAND
    if kind == "binary":
        cms = {g.name: ConfusionMatrix(int(g.tp), int(g.fn), int(g.fp), int(g.tn)) for g in groups}
        values = {g.name: tuple(json.loads(g.group_values)) for g in groups} if row.has_group_values else None
        audit: Any = Audit(cms, source=row.source, notes=tuple(json.loads(row.notes)),
                           positive_outcome=row.positive_outcome, group_columns=tuple(json.loads(row.group_columns)),
                           positive_is=row.positive_is, group_values=values, provenance=json.loads(row.provenance),
                           outcomes=bool(row.has_outcomes), unknown=tuple(json.loads(row.unknown_groups)))
    else:
        audit, unit, band = _from_payload(kind, row.payload)
    return SavedAudit(id=row.id, audit=audit, name=row.name, model=row.model, model_version=row.model_version,
                      period=row.period, saved_by=row.saved_by, tool_version=row.tool_version,
                      created=utc(row.created), tolerance=float(row.tolerance), alpha=float(row.alpha),
                      adjust=row.adjust, owner=row.owner, access=access, kind=kind, unit=unit, band=band,
                      source=row.source)
