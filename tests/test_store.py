"""Saved audits (fairness_core.store) and the trend between periods (fairness_core.trend): round trip,
list/filter/delete, history, transactions, concurrency, ids, schema version, the default location, and the
change interval's coverage and size by simulation.

The store's tests run twice: on SQLite in a temporary folder, and on PostgreSQL in a schema of their own
(dropped afterwards) at ``FAIRNESS_TEST_POSTGRES_URL``, which .ci/run sets after starting a local server.
Without it they are skipped, outside CI only, as the Spark test is: under CI they fail.
"""

from __future__ import annotations

import itertools
import os
import secrets
import sqlite3
import threading
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

from fairness_core import ConfusionMatrix as CM
from fairness_core import datasets
from fairness_core import store as store_mod
from fairness_core.audit import Audit
from fairness_core.store import local_user as U
from fairness_core.store import AuditNotFound, AuditStore, SavedAudit, StoreError
from fairness_core.trend import ofi_changes, series_changes


def _audit(shift: int = 0, **kw) -> Audit:
    cms = {"Black & Female": CM(30 + shift, 5, 8, 57), "White & Male": CM(40, 6, 4 + shift, 50),
           "<b>Asian</b> & Female": CM(20, 3, 3, 24)}
    values = {"Black & Female": ("Black", "Female"), "White & Male": ("White", "Male"),
              "<b>Asian</b> & Female": ("<b>Asian</b>", "Female")}
    defaults = dict(source="loans.csv <script>alert(1)</script>", notes=("labels flipped", "n < 30: *wide* CIs"),
                    positive_outcome="approved 'yes' & \"ok\"", group_columns=("race", "sex"), positive_is="harm",
                    group_values=values, provenance={"label": "y", "threshold": "0.5", "ünïcode": "日本"})
    return Audit(cms, **{**defaults, **kw})


#: The PostgreSQL database the store's tests use (a SQLAlchemy URL, e.g. postgresql+psycopg://user@host/db).
POSTGRES_VARIABLE = "FAIRNESS_TEST_POSTGRES_URL"


@pytest.fixture(params=["sqlite", "postgresql"])
def new_url(request, tmp_path):
    """Makes URLs of empty stores on one backend: files in tmp_path (SQLite), or schemas of their own in the
    test database, dropped afterwards (PostgreSQL), so that runs do not see each other's audits."""
    if request.param == "sqlite":
        count = itertools.count()
        yield lambda: f"sqlite:///{tmp_path / f'audits{next(count)}.db'}"
        return
    base = (os.environ.get(POSTGRES_VARIABLE) or "").strip()
    if not base:
        if os.environ.get("CI"):
            pytest.fail(f"{POSTGRES_VARIABLE} is not set: under CI the store's tests must run on PostgreSQL "
                        "(.ci/run starts a local server and sets it)")
        pytest.skip(f"no PostgreSQL to test the store on ({POSTGRES_VARIABLE} is unset; required under CI)")
    admin = sa.create_engine(base)
    schemas: list[str] = []

    def make() -> str:
        schema = f"store_test_{secrets.token_hex(6)}"
        with admin.begin() as conn:
            conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
        schemas.append(schema)
        return sa.engine.make_url(base).update_query_dict({"options": f"-csearch_path={schema}"}) \
            .render_as_string(hide_password=False)

    yield make
    with admin.begin() as conn:
        for schema in schemas:
            conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    admin.dispose()


@pytest.fixture
def url(new_url):
    """The URL of an empty store, on each backend."""
    return new_url()


@pytest.fixture
def store(url):
    s = AuditStore(url)
    yield s
    s.close()


def test_round_trip_keeps_every_field_exactly(store):
    audit = _audit()
    audit_id = store.save(audit, name="Q3 <i>audit</i>", model="credit", period="2026-Q3", model_version="v2.1",
                          user=U("ana"), tolerance=0.03, alpha=0.01, adjust="bh")
    saved = store.load(audit_id, user=U("ana"))
    assert isinstance(saved, SavedAudit)
    got = saved.audit
    assert got == audit and got.fingerprint == audit.fingerprint
    assert list(got.cms) == list(audit.cms) and got.cms == audit.cms
    assert (got.source, got.notes, got.positive_outcome, got.positive_is) == \
        (audit.source, audit.notes, audit.positive_outcome, audit.positive_is)
    assert got.group_columns == audit.group_columns and got.group_values == audit.group_values
    assert dict(got.provenance) == dict(audit.provenance) and got.rows is None
    assert (saved.name, saved.model, saved.period, saved.model_version, saved.saved_by) == \
        ("Q3 <i>audit</i>", "credit", "2026-Q3", "v2.1", U("ana"))    # markup kept as given: escaping is the page's
    assert (saved.owner, saved.access) == (U("ana"), "owner")            # who saved it is the user
    assert (saved.tolerance, saved.alpha, saved.adjust) == (0.03, 0.01, "bh")
    assert saved.tool_version == __import__("fairness_core").__version__
    assert saved.created.tzinfo is not None
    assert saved.verdicts().settings.adjust == "bh"


def test_audit_without_group_values_round_trips(store):
    audit = Audit({"a": CM(1, 2, 3, 4), "b": CM(4, 3, 2, 1)})
    got = store.load(store.save(audit, name="plain")).audit
    assert got == audit and got.group_values is None and got.positive_is is None and got.group_columns == ()


def test_list_filter_delete(store):
    a = store.save(_audit(), name="one", model="credit", period="2026-Q1")
    b = store.save(_audit(1), name="two", model="hiring", period="2026-Q1")
    c = store.save(_audit(2), name="three", model="credit", period="2026-Q2")
    everything = store.list()
    assert list(everything.columns) == ["id", "name", "model", "period", "created", "groups", "n", "model_version",
                                        "saved_by", "owner", "access", "kind"]
    assert set(everything["owner"]) == {store_mod.LOCAL_USER} and set(everything["access"]) == {"owner"}
    assert everything["id"].tolist() == [c, b, a]                  # newest first
    credit = store.list(model="credit")
    assert credit["id"].tolist() == [c, a] and credit["groups"].tolist() == [3, 3]
    assert credit["n"].tolist() == [sum(cm.n for cm in _audit(2).cms.values()), sum(cm.n for cm in _audit().cms.values())]
    assert str(credit["created"].dt.tz) == "UTC"
    store.delete(a)
    assert store.list(model="credit")["id"].tolist() == [c]
    assert store.list(model="nobody").empty


def test_history_is_ordered_by_period_then_time(store):
    q3 = store.save(_audit(2), name="q3", model="credit", period="2026-Q3")
    q1 = store.save(_audit(0), name="q1", model="credit", period="2026-Q1")
    q1_again = store.save(_audit(1), name="q1 redone", model="credit", period="2026-Q1")
    store.save(_audit(), name="other", model="hiring", period="2026-Q2")
    store.save(_audit(), name="no period", model="credit")
    history = store.history("credit")
    assert [h.id for h in history] == [q1, q1_again, q3]
    assert history[1].audit == _audit(1)
    assert store.history("nobody") == []
    periods = ["2026-q1", "2026-Q2", "2026 Q3", "2026-Q10", "2026-Ä"]   # sorted by byte, as on SQLite
    for period in periods:
        store.save(_audit(), name=period, model="labels", period=period)
    assert [h.period for h in store.history("labels")] == sorted(periods, key=lambda p: p.encode())


def test_bad_deleted_and_foreign_ids_say_so(store, new_url):
    with pytest.raises(AuditNotFound, match="not a saved audit's id"):
        store.load("'; DROP TABLE audits; --")
    with pytest.raises(AuditNotFound, match="not a saved audit's id"):
        store.load(None)   # type: ignore[arg-type]
    audit_id = store.save(_audit(), name="gone")
    store.delete(audit_id)
    with pytest.raises(AuditNotFound, match="deleted, saved in another store, or is not shared with you") as e:
        store.load(audit_id)
    assert isinstance(e.value, LookupError) and isinstance(e.value, ValueError)
    with pytest.raises(AuditNotFound):
        store.delete(audit_id)
    other = AuditStore(new_url())
    foreign = other.save(_audit(), name="elsewhere")
    with pytest.raises(AuditNotFound, match="another store"):
        store.load(foreign)
    other.close()


@pytest.mark.parametrize("kw, message", [
    ({"name": ""}, "name must not be blank"),
    ({"name": "x" * 201}, "201 characters"),
    ({"name": 5}, "name must be text"),
    ({"name": "ok", "model": "credit\u200e"}, "hidden character"),
    ({"name": "ok", "period": "2026\nQ3"}, "hidden character"),
    ({"name": "ok", "alpha": 1.5}, "alpha"),
    ({"name": "ok", "alpha": 0.95}, r"alpha is the error rate, not the confidence level: .*\(got 0\.95\)"),
    ({"name": "ok", "adjust": "sidak"}, "adjust"),
])
def test_inputs_are_validated(store, kw, message):
    with pytest.raises(ValueError, match=message):
        store.save(_audit(), **kw)
    assert store.list().empty


def test_a_failed_save_leaves_nothing(store, monkeypatch):
    def broken(conn, seq, audit):
        raise RuntimeError("killed mid-save")
    monkeypatch.setattr(store_mod, "_insert_groups", broken)
    with pytest.raises(RuntimeError, match="killed mid-save"):
        store.save(_audit(), name="half", model="credit", period="2026-Q1")
    monkeypatch.undo()
    assert store.list().empty
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM audits").scalar() == 0
        assert conn.exec_driver_sql("SELECT count(*) FROM audit_groups").scalar() == 0
        assert conn.exec_driver_sql("SELECT count(*) FROM audit_events").scalar() == 0   # no event of a save undone


def test_concurrent_saves_lose_nothing(url):
    shared = AuditStore(url)
    ids: list[str] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def work(k: int) -> None:
        try:
            s = shared if k % 2 else AuditStore(url)   # one store shared by threads, and separate stores
            for r in range(5):
                audit_id = s.save(_audit(k + r), name=f"t{k}-{r}", model="credit", period=f"2026-{r:02d}")
                with lock:
                    ids.append(audit_id)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(ids) == len(set(ids)) == 30
    assert sorted(shared.list()["id"]) == sorted(ids)
    assert all(shared.load(i).audit.cms for i in ids[:3])
    if url.startswith("sqlite"):
        with shared.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() > 0
    shared.close()


def _open_at_once(url: str, processes: int) -> tuple[list[AuditStore], list[BaseException]]:
    start = threading.Barrier(processes)
    stores: list[AuditStore] = []
    errors: list[BaseException] = []

    def open_store() -> None:
        try:
            start.wait()
            stores.append(AuditStore(url))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=open_store) for _ in range(processes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return stores, errors


def test_stores_opening_an_empty_database_at_once_create_it_once(url):
    """Server processes starting together all open the store: one creates the tables, the others wait for it."""
    stores, errors = _open_at_once(url, 4)
    assert not errors
    with stores[0].engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM store_schema").scalar() == 1   # one version row
    audit_id = stores[0].save(_audit(), name="after the race")
    assert all(s.load(audit_id).name == "after the race" for s in stores)
    for s in stores:
        s.close()


def test_sqlite_stores_opened_at_once_all_wait_for_the_switch_to_wal(tmp_path):
    """Switching a new SQLite file to WAL is refused at once ("database is locked", no busy handler) while
    another connection switches it; a CI run failed so about once in fifteen races. Forty races on fresh files."""
    for round_ in range(40):
        stores, errors = _open_at_once(f"sqlite:///{tmp_path / f'race{round_}.db'}", 6)
        assert not errors, f"round {round_}: {errors[0]}"
        for s in stores:
            s.close()


#: The schema as version 1 wrote it, frozen here so that a later version must still open it.
_V1 = """
CREATE TABLE store_schema (version INTEGER NOT NULL);
INSERT INTO store_schema VALUES (1);
CREATE TABLE audits (seq INTEGER PRIMARY KEY AUTOINCREMENT, id VARCHAR(32) NOT NULL UNIQUE,
  name VARCHAR(200) NOT NULL, model VARCHAR(200), model_version VARCHAR(200), period VARCHAR(200),
  saved_by VARCHAR(200), tool_version VARCHAR(64), created VARCHAR(32) NOT NULL, source TEXT NOT NULL,
  notes TEXT NOT NULL, positive_outcome TEXT NOT NULL, positive_is VARCHAR(16), group_columns TEXT NOT NULL,
  provenance TEXT NOT NULL, has_group_values BOOLEAN NOT NULL, tolerance FLOAT NOT NULL, alpha FLOAT NOT NULL,
  adjust VARCHAR(8) NOT NULL, n_groups INTEGER NOT NULL, n BIGINT NOT NULL);
CREATE TABLE audit_groups (audit_seq INTEGER NOT NULL REFERENCES audits (seq) ON DELETE CASCADE,
  position INTEGER NOT NULL, name TEXT NOT NULL, tp BIGINT NOT NULL, fn BIGINT NOT NULL, fp BIGINT NOT NULL,
  tn BIGINT NOT NULL, group_values TEXT, PRIMARY KEY (audit_seq, position));
INSERT INTO audits VALUES (1, 'AAAAAAAAAAAAAAAAAAAAAA', 'old', 'credit', NULL, '2025-Q4', NULL, '0.1.0',
  '2025-12-31T10:00:00.000000+00:00', 'old.csv', '["a note"]', 'approved', 'benefit', '["sex"]',
  '{"label": "y"}', 1, 0.05, 0.05, 'holm', 2, 20);
INSERT INTO audit_groups VALUES (1, 0, 'F', 1, 2, 3, 4, '["F"]'), (1, 1, 'M', 4, 3, 2, 1, '["M"]');
"""


def test_a_version_1_store_opens(tmp_path):
    path = tmp_path / "v1.db"
    with sqlite3.connect(path) as raw:
        raw.executescript(_V1)
    s = AuditStore(f"sqlite:///{path}")
    assert s.schema_version() == store_mod.SCHEMA_VERSION
    old = s.load("AAAAAAAAAAAAAAAAAAAAAA")
    assert old.audit == Audit({"F": CM(1, 2, 3, 4), "M": CM(4, 3, 2, 1)}, source="old.csv", notes=("a note",),
                              positive_outcome="approved", group_columns=("sex",), positive_is="benefit")
    assert old.audit.group_values == {"F": ("F",), "M": ("M",)} and old.period == "2025-Q4"
    assert old.audit.has_outcomes and old.audit.unknown == ()   # version 1 knew only audits with outcomes
    assert old.owner == store_mod.LOCAL_USER                         # version 3 gave it to the local user
    new = s.save(_audit(), name="new", model="credit", period="2026-Q1")
    assert [h.id for h in s.history("credit")] == ["AAAAAAAAAAAAAAAAAAAAAA", new]
    s.close()


def test_migrations_run_forward_and_newer_stores_are_refused(url, monkeypatch):
    AuditStore(url).close()
    ran = []
    now = store_mod.SCHEMA_VERSION
    monkeypatch.setattr(store_mod, "SCHEMA_VERSION", now + 1)
    monkeypatch.setattr(store_mod, "MIGRATIONS", {now: lambda conn: ran.append(now)})
    assert AuditStore(url).schema_version() == now + 1 and ran == [now]
    monkeypatch.setattr(store_mod, "SCHEMA_VERSION", now)
    with pytest.raises(StoreError, match="newer than this workbench"):
        AuditStore(url)


def test_default_location_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv(store_mod.STORE_VARIABLE, raising=False)
    monkeypatch.setenv(store_mod.DATA_DIR_VARIABLE, str(tmp_path / "data"))
    s = AuditStore()
    assert (tmp_path / "data" / "audits.db").exists() and "audits.db" in s.where
    s.close()
    monkeypatch.setenv(store_mod.STORE_VARIABLE, f"sqlite:///{tmp_path / 'team.db'}")
    assert store_mod.default_url() == f"sqlite:///{tmp_path / 'team.db'}"
    s = AuditStore()
    s.save(_audit(), name="x")
    assert (tmp_path / "team.db").exists()
    s.close()
    monkeypatch.setenv(store_mod.STORE_VARIABLE, "not a url")
    with pytest.raises(StoreError, match="FAIRNESS_AUDIT_STORE"):
        AuditStore()
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    assert store_mod.default_url({}) == f"sqlite:///{cwd.resolve() / 'data' / 'audits.db'}"
    documented = (Path(__file__).resolve().parents[1] / "docs" / "server.md").read_text(encoding="utf-8")
    assert all(f"`{v}`" in documented for v in (store_mod.STORE_VARIABLE, store_mod.DATA_DIR_VARIABLE))


def test_database_errors_are_messages_not_sql_tracebacks(url):
    s = AuditStore(url)
    with s.engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE audit_groups")
    with pytest.raises(StoreError, match="audit store .* failed: (OperationalError|UndefinedTable): "
                                         r"(no such table|relation \"audit_groups\" does not exist)"):
        s.save(_audit(), name="x")
    s.close()


# --------------------------------------------------------------------------- the trend


def test_series_changes_from_a_saved_history(store):
    base = {"a": CM(300, 20, 90, 590), "b": CM(300, 25, 85, 590), "c": CM(100, 10, 30, 200)}
    store.save(Audit(base, positive_is="benefit"), name="q1", model="m", period="2026-Q1", tolerance=0.04)
    store.save(Audit({**base, "b": CM(250, 120, 40, 590)}, positive_is="benefit"), name="q2", model="m",
               period="2026-Q2", tolerance=0.04)
    store.save(Audit({"a": base["a"], "b": CM(250, 120, 40, 590)}, positive_is="benefit"), name="q3", model="m",
               period="2026-Q3", tolerance=0.04)
    t = series_changes(store.history("m"))
    assert t.periods == ["2026-Q1", "2026-Q2", "2026-Q3"] and t.tolerance == 0.04
    assert len(t.verdicts) == 3 + 3 + 1 and set(t.verdicts["period"]) == set(t.periods)
    assert len(t.changes) == 3 + 1                       # c is absent in Q3: only a-b changes there
    ab = t.changes[(t.changes["group_i"] == "a") & (t.changes["group_j"] == "b")].iloc[0]
    assert ab["significant"] and ab["became_bias"] and ab["ci_low"] > 0
    assert ab["ci_low_adjusted"] <= ab["ci_low"] and ab["p"] <= ab["p_adjusted"]
    last = t.changes[t.changes["period_after"] == "2026-Q3"].iloc[0]
    assert last["change"] == 0 and not last["significant"] and last["p"] == 1.0


def test_change_interval_coverage_and_size_by_simulation():
    rng = np.random.default_rng(2026)
    m = 1000
    p_i, p_j, p_i_later = [.3, .05, .1, .55], [.3, .1, .05, .55], [.3, .03, .12, .55]
    ofi = lambda a, b: (a[2] - a[1]) - (b[2] - b[1])   # noqa: E731
    # a known change of OFI (+0.04) between two periods of different sizes
    r = ofi_changes(rng.multinomial(400, p_i, m), rng.multinomial(300, p_j, m), rng.multinomial(500, p_i_later, m),
                    rng.multinomial(250, p_j, m))
    true = ofi(p_i_later, p_j) - ofi(p_i, p_j)
    assert np.mean((r["ci_low"] <= true) & (true <= r["ci_high"])) >= 0.93
    # no change: the test's size, and the p-value is the interval's dual
    r = ofi_changes(rng.multinomial(400, p_i, m), rng.multinomial(300, p_j, m), rng.multinomial(500, p_i, m),
                    rng.multinomial(250, p_j, m))
    reject = r["p_value"] < 0.05
    assert reject.mean() <= 0.06
    assert np.array_equal(reject, (r["ci_low"] > 0) | (r["ci_high"] < 0))


def _random_series(rng: np.random.Generator) -> list[tuple[str, Audit]]:
    """Two to four periods of three groups with random rates and sizes: many changes near the edge."""
    periods = []
    for k in range(int(rng.integers(2, 5))):
        cms = {g: CM(*map(int, rng.multinomial(int(rng.integers(80, 400)), rng.dirichlet([4, 2, 2, 4]))))
               for g in "abc"}
        periods.append((f"2026-Q{k + 1}", Audit(cms, positive_is="benefit")))
    return periods


@pytest.mark.parametrize("adjust", ["holm", "bh", "none"])
def test_a_change_is_significant_exactly_when_its_printed_adjusted_interval_excludes_0(adjust):
    """The adjusted interval was Bonferroni while significance was Holm's or BH's adjusted p: 41 of 300 random
    series called a change significant with 0 inside its printed interval. It is now at the adjustment's
    critical level, labelled, and agrees with the adjusted p printed beside it."""
    rng = np.random.default_rng({"holm": 1, "bh": 2, "none": 3}[adjust])
    label = {"holm": "Holm-adjusted ", "bh": "BH-adjusted ", "none": ""}[adjust]
    flagged = kept = 0
    for _ in range(40):
        t = series_changes(_random_series(rng), alpha=0.05, adjust=adjust)
        c = t.changes
        excludes = (c["ci_low_adjusted"] > 0) | (c["ci_high_adjusted"] < 0)
        assert (excludes == c["significant"]).all() and (c["significant"] == (c["p_adjusted"] < 0.05)).all()
        assert (c["ci_low_adjusted"] <= c["ci_low"]).all() and (c["ci_high"] <= c["ci_high_adjusted"]).all()
        assert 0.95 <= t.level_adjusted < 1 and (c["interval_level"] == c["interval_level"].iloc[0]).all()
        assert c["interval_level"].iloc[0].startswith(label) and c["interval_level"].iloc[0].endswith(" % CI")
        if adjust == "none":
            assert t.level_adjusted == 0.95 and (c["ci_low_adjusted"] == c["ci_low"]).all()
        flagged, kept = flagged + int(c["significant"].sum()), kept + int((~c["significant"]).sum())
    assert flagged > 20 and kept > 20          # both kinds of change are exercised


def test_a_loaded_audit_reads_as_the_audit_it_holds(tmp_path):
    """The planned API's `s.load(audit_id)` is the audit: every Audit attribute and method works on it."""
    from fairness_core.store import AuditStore

    store = AuditStore(f"sqlite:///{tmp_path / 'a.db'}")
    audit = datasets.load_demo("ricci_a")
    saved = store.load(store.save(audit, name="Ricci", tolerance=0.02, alpha=0.01, adjust="bh"))
    assert saved.cms == audit.cms and saved.groups == audit.groups and saved.positive_is == audit.positive_is
    assert saved.pairwise("OFI").equals(audit.pairwise("OFI")) and saved.rows is None
    assert saved.verdicts().equals(audit.verdicts(0.02, alpha=0.01, adjust="bh"))      # its saved settings
    assert saved.verdicts(0.05, alpha=0.05, adjust="holm").equals(audit.verdicts(0.05, alpha=0.05, adjust="holm"))
    with pytest.raises(AttributeError):
        saved.no_such_thing


def test_a_decisions_only_audit_reopens_as_one(url):
    audit = Audit.from_decisions([1, 0, 1, 1, 0, 0, 1, 0], ["F", "F", "M", "M", "M", None, "Decline to state", "F"],
                                 positive_is="benefit")
    s = AuditStore(url)
    again = s.load(s.save(audit, name="screening")).audit
    assert again == audit and not again.has_outcomes and again.unknown == ("unknown",)
    assert again.fingerprint == audit.fingerprint
    assert list(again.verdicts()["verdict"]) == list(audit.verdicts()["verdict"])
    s.close()
