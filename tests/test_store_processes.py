"""The audit store against real processes: a server process killed (SIGKILL) in the middle of a save, on SQLite
and on PostgreSQL, leaves a store that opens again with every audit whole or absent; two server processes on one
store save and list at once and lose nothing.

The server processes are this file run as a script (``python tests/test_store_processes.py MODE URL ...``) with
the interpreter running the tests. PostgreSQL as in tests/test_store.py (``FAIRNESS_TEST_POSTGRES_URL``: skipped
without it outside CI, failed under CI).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Groups of the audit being saved when the process is killed: enough rows that the kill lands while they are
#: written; the server then holds the transaction open, so the kill always lands before the commit.
BIG = 4000
SAVES_EACH = 20


def U(name: str) -> str:   # noqa: N802 - a local user's identity, as the other store tests write it
    from fairness_core.store import local_user

    return local_user(name)


def _audit(groups: int, shift: int = 0):  # type: ignore[no-untyped-def]
    from fairness_core import ConfusionMatrix as CM
    from fairness_core.audit import Audit

    return Audit({f"group {k}": CM(5 + (k + shift) % 7, 1, 2, 7) for k in range(groups)}, positive_is="benefit")


# --------------------------------------------------------------------------- the server processes


def _serve_then_die(url: str) -> None:
    """Save two audits whole, then start a large one and stay inside its transaction until killed."""
    from fairness_core import store as store_mod

    s = store_mod.AuditStore(url)
    for k in range(2):
        print("saved", s.save(_audit(3, k), name=f"whole {k}", model="m", period=f"2026-Q{k + 1}", user=U("ana")),
              flush=True)
    insert_groups = store_mod._insert_groups

    def slow_insert(conn, seq, audit):  # type: ignore[no-untyped-def]
        print("saving", flush=True)              # the audit's row is written, uncommitted
        insert_groups(conn, seq, audit)           # its thousands of groups
        time.sleep(60)                            # and no commit before the kill

    store_mod._insert_groups = slow_insert
    s.save(_audit(BIG), name="half", model="m", period="2026-Q3", user=U("ana"))
    print("committed", flush=True)                # never reached


def _restart(url: str) -> None:
    """A server started again on the store: what it finds, and that it can save."""
    from fairness_core.store import AuditStore

    s = AuditStore(url)
    listed = s.list(user=U("ana"))
    found = {i: len(s.load(i, user=U("ana")).cms) for i in listed["id"]}
    new = s.save(_audit(3), name="after the restart", user=U("ana"))
    print(json.dumps({"version": s.schema_version(), "found": found, "new": new}), flush=True)


def _save_and_list(url: str, user: str, other: str) -> None:
    """Save SAVES_EACH audits as ``user``, listing after each; never see ``other``'s."""
    from fairness_core.store import AuditStore

    print("ready", flush=True)
    sys.stdin.readline()                          # go: both processes start together
    s = AuditStore(url)                           # the first opening of an empty store races the other's
    mine: list[str] = []
    for k in range(SAVES_EACH):
        mine.append(s.save(_audit(3, k), name=f"{user} {k}", model="m", period=f"2026-{k:02d}", user=user))
        listed = set(s.list(user=user)["id"])
        assert set(mine) <= listed, "a saved audit is missing from its owner's list"
        assert not set(s.list(user=other)["id"]) & set(mine), "another user sees a private audit"
    print(json.dumps(mine), flush=True)


# --------------------------------------------------------------------------- the tests


def _refuse(url: str, user: str, attempts: str) -> None:
    """Wait for "go", then try to load audits that do not exist, as fast as it can; print what each answered."""
    from fairness_core.store import AuditNotFound, AuditStore, TooManyAttempts

    s = AuditStore(url)
    print("ready", flush=True)
    sys.stdin.readline()
    answers = []
    for k in range(int(attempts)):
        try:
            s.load(f"{k:022d}", user=user)
        except AuditNotFound:
            answers.append("not found")
        except TooManyAttempts:
            answers.append("limited")
    print(json.dumps(answers), flush=True)


def _child(*args: str, stdin: int | None = None) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen([sys.executable, __file__, *args], cwd=ROOT, env=env, stdin=stdin,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _read_until(proc: subprocess.Popen, word: str, deadline: float) -> list[str]:
    """The lines ``proc`` prints up to ``word``; a process silent past ``deadline`` is killed (its output ends)."""
    watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), proc.kill)
    watchdog.start()
    lines: list[str] = []
    try:
        while line := proc.stdout.readline():
            lines.append(line.strip())
            if line.strip() == word:
                return lines
    finally:
        watchdog.cancel()
    raise AssertionError(f"no {word!r} from the server process in time (got {lines}): {proc.stderr.read()[-2000:]}")


def test_a_server_killed_mid_save_leaves_every_audit_whole_or_absent(url):
    from fairness_core.store import SCHEMA_VERSION, AuditStore

    AuditStore(url).close()                           # the schema exists before the server starts
    server = _child("die", url)
    try:
        lines = _read_until(server, "saving", time.monotonic() + 20)
        time.sleep(0.05)                              # into the writing of the groups
        server.send_signal(signal.SIGKILL)
        assert server.wait(timeout=10) == -signal.SIGKILL
    finally:
        if server.poll() is None:
            server.kill()
        server.stdout.close()
        server.stderr.close()
    whole = [line.split()[1] for line in lines if line.startswith("saved ")]
    assert len(whole) == 2 and "committed" not in lines

    restarted = subprocess.run([sys.executable, __file__, "restart", url], cwd=ROOT, capture_output=True, text=True,
                               timeout=30, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert restarted.returncode == 0, restarted.stderr[-2000:]
    seen = json.loads(restarted.stdout.strip().splitlines()[-1])
    assert seen["version"] == SCHEMA_VERSION and seen["found"] == {i: 3 for i in whole}   # the half audit is absent

    s = AuditStore(url)
    listed = s.list(user=U("ana"))
    assert sorted(listed["id"]) == sorted([*whole, seen["new"]]) and "half" not in set(listed["name"])
    assert all(len(s.load(i, user=U("ana")).cms) == g for i, g in zip(listed["id"], listed["groups"]))
    with s.engine.connect() as conn:                  # no row of the half audit anywhere
        assert conn.exec_driver_sql("SELECT count(*) FROM audits").scalar() == 3
        assert conn.exec_driver_sql("SELECT count(*) FROM audit_groups").scalar() == 9
    saves = s.events(user=U("ana"))
    assert sorted(saves.loc[saves["action"] == "save", "audit_id"]) == sorted([*whole, seen["new"]])
    s.close()


def test_two_server_processes_save_and_list_at_once_and_lose_nothing(url):
    from fairness_core.store import AuditStore

    servers = [_child("save", url, U("ana"), U("bob"), stdin=subprocess.PIPE),
               _child("save", url, U("bob"), U("ana"), stdin=subprocess.PIPE)]
    outputs = _race(servers, grace=10)
    saved = {user: json.loads(out.strip().splitlines()[-1]) for user, (out, _) in zip((U("ana"), U("bob")), outputs)}
    s = AuditStore(url)
    for user, ids in saved.items():
        assert len(set(ids)) == SAVES_EACH and sorted(s.list(user=user)["id"]) == sorted(ids)
        assert all(s.load(i, user=user).name.startswith(user) for i in ids)
    assert len(s.list(user=U("carol"))) == 0
    with s.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM audits").scalar() == 2 * SAVES_EACH
        assert conn.exec_driver_sql("SELECT count(*) FROM store_schema").scalar() == 1
    s.close()


def _race(servers: list, grace: float) -> list[tuple[str, str]]:
    """Start ``servers`` together: each says "ready", then all are told "go" at once; their (stdout, stderr), each
    having exited 0 within 20 + ``grace`` seconds (a server still running is killed)."""
    try:
        deadline = time.monotonic() + 20
        for server in servers:
            _read_until(server, "ready", deadline)
        for server in servers:
            server.stdin.write("go\n")
            server.stdin.flush()
        outputs = [server.communicate(timeout=max(1.0, deadline + grace - time.monotonic())) for server in servers]
    finally:
        for server in servers:
            if server.poll() is None:
                server.kill()
                server.communicate()
    for server, (out, err) in zip(servers, outputs):
        assert server.returncode == 0, err[-2000:]
    return outputs


def test_the_rate_limit_holds_across_server_processes(url):
    """Three processes refuse one user at once: exactly 20 attempts are looked up, every other one is refused by
    the limit, and each is an event — the count is the database's, and the count and the event share a
    transaction."""
    from fairness_core.store import AuditStore

    AuditStore(url).close()          # the schema, made once before the processes race
    servers = [_child("refuse", url, U("eve"), "15", stdin=subprocess.PIPE) for _ in range(3)]
    outputs = _race(servers, grace=20)
    answers = [a for out, _ in outputs for a in json.loads(out.strip().splitlines()[-1])]
    assert len(answers) == 45 and answers.count("not found") == 20 and answers.count("limited") == 25
    s = AuditStore(url)
    events = s.events(user=U("eve"), limit=None)
    assert len(events) == 45 and not events["allowed"].any()
    assert (events["detail"] == "no such audit").sum() == 20 and (events["detail"] == "rate limited").sum() == 25
    s.close()


# The URL fixtures of tests/test_store.py (SQLite in tmp_path; PostgreSQL in a schema of its own). Imported
# last: the server processes run this file as a script, without pytest's test folder on the path.
if __name__ != "__main__":
    from test_store import new_url, url  # noqa: E402, F401


if __name__ == "__main__":
    mode, store_url, *rest = sys.argv[1:]
    {"die": _serve_then_die, "restart": _restart, "save": _save_and_list, "refuse": _refuse}[mode](store_url, *rest)
