"""Caches shared by every session of one server never hand one analyst's data to another (issues 28, 35).

Sessions here are AppTest sessions in one process, so they share Streamlit's caches exactly as the
sessions of one server do. Each check reads everything a session can see: every element of its pages
(the protobufs sent to the browser, figures and tables included) and the bytes of every download.
The last test keeps what sessions leave behind for a reload within its memory budget.
"""

from __future__ import annotations

import io
import time
import zipfile

import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from app_helpers import page_with_audit
from fairness_core import ConfusionMatrix as CM
from fairness_core.audit import Audit
from fairness_core.io import cms_from_table, read_table

BIAS_AUDIT = "pages/2_Bias_Audit.py"


def shown(at: AppTest) -> str:
    """Everything the session's page sends to the browser, as text (element protobufs: labels, markdown,
    table bytes, figure JSON)."""
    return "\n".join(str(getattr(el, "proto", "")) for block in (at.main, at.sidebar) for el in block)


#: Every download button's callable, as registered by the last run: {file name: callable}.
REGISTERED: dict[str, object] = {}


@pytest.fixture(autouse=True, scope="module")
def record_downloads():  # type: ignore[no-untyped-def]
    """Keep each deferred download's callable when a run registers it (AppTest drops its media manager
    after the run), so a test can build the file as a click would."""
    original = MediaFileManager.add_deferred

    def add_deferred(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):  # type: ignore[no-untyped-def]
        REGISTERED[file_name] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name=file_name, **kwargs)

    MediaFileManager.add_deferred = add_deferred
    yield
    MediaFileManager.add_deferred = original


def run(at: AppTest) -> AppTest:
    """``at.run()`` with the downloads of this run alone recorded."""
    REGISTERED.clear()
    at.run()
    assert not at.exception, at.exception
    return at


def downloads(at: AppTest) -> dict[str, bytes]:
    """The bytes of every download button of the session's last run, by file name (a zip's members
    concatenated), built as a click would build them."""
    out = {}
    for name, make in REGISTERED.items():
        data = make()  # type: ignore[operator]
        data = data.encode() if isinstance(data, str) else data
        if name.endswith(".zip"):
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                data = b"\n".join(z.read(n) for n in z.namelist())
        out[name] = data
    return out


def report_texts(at: AppTest) -> dict[str, str]:
    files = downloads(at)
    return {name: files[name].decode() for name in ("fairness_audit_report.html", "fairness_audit_report.json")}


def test_report_downloads_of_two_sessions_differing_only_in_what_positive_means_and_provenance():
    """The report cache is shared by the sessions: two audits with the same groups, cells and source, but
    different words for the positive outcome and different provenance, each get their own report."""
    cms = {"north": CM(40, 10, 12, 38), "south": CM(30, 20, 8, 42)}
    a = Audit(cms, source="loans.csv", positive_outcome="approved under CONFIDENTIAL-ALPHA policy",
              positive_is="benefit", provenance={"label column": "alpha_repaid_flag"})
    b = Audit(cms, source="loans.csv", positive_outcome="hired under CONFIDENTIAL-BETA policy",
              positive_is="benefit", provenance={"label column": "beta_hire_flag"})
    own = {"a": ("CONFIDENTIAL-ALPHA", "alpha_repaid_flag"), "b": ("CONFIDENTIAL-BETA", "beta_hire_flag")}
    got = {}
    for name, audit in (("a", a), ("b", b)):   # b's report is asked for after a's is cached
        got[name] = report_texts(run(page_with_audit(audit, BIAS_AUDIT)))
    for name, texts in got.items():
        other = "b" if name == "a" else "a"
        for file, text in texts.items():
            assert all(word in text for word in own[name]), (name, file)
            assert not any(word in text for word in own[other]), f"session {name}'s {file} carries {other}'s text"


TABLES = {k: f"group,TP,FN,FP,TN\n{k}Kestrel,40,10,12,38\n{k}Marten,30,20,8,42\n{k}Osprey,25,15,10,50\n"
          for k in ("Amber", "Basalt", "Cobalt", "Dune")}


@pytest.fixture(scope="module")
def sessions() -> dict[str, AppTest]:
    """Four sessions, each with its own typed table (group names unique to it), read by the Upload page's
    own functions, opened one after another on Home and the Bias Audit page in one process."""
    out = {}
    for k, text in TABLES.items():
        audit = cms_from_table(read_table(text.encode(), f"{k}.csv"), source=f"{k}.csv", positive_is="benefit")
        out[k] = page_with_audit(audit)
        assert not out[k].exception, out[k].exception
    return out


def foreign(k: str) -> list[str]:
    return [f"{other}{g}" for other in TABLES if other != k for g in ("Kestrel", "Marten", "Osprey")]


def test_no_session_sees_another_sessions_groups(sessions):
    """Home, the Bias Audit page before and after a setting changes, its report and every CSV and figure
    download: each session's own group names and never another's."""
    for k, at in sessions.items():
        texts = {"Home": shown(at)}
        at.switch_page(BIAS_AUDIT)
        texts["Bias Audit"] = shown(run(at))
        at.sidebar.slider[0].set_value(0.08)          # the OFI tolerance: every verdict recomputed
        texts["after a change"] = shown(run(at))
        files = downloads(at)
        assert {"fairness_audit_report.html", "group_metrics.csv", "pair_verdicts.csv"} <= set(files)
        texts.update({name: data.decode(errors="replace") for name, data in files.items()})
        for where, text in texts.items():
            leaked = [g for g in foreign(k) if g in text]
            assert not leaked, f"session {k}: {where} shows {leaked}"
        assert all(f"{k}{g}" in texts["Bias Audit"] for g in ("Kestrel", "Marten", "Osprey"))
        assert f"{k}Kestrel" in texts["fairness_audit_report.html"] and f"{k}Osprey" in texts["pair_verdicts.csv"]


def test_the_reload_store_releases_the_oldest_uploads_beyond_its_memory_budget():
    """Sessions that ended keep their uploads for a reload, but never more than the store's budget in all:
    the oldest go first, the newest always stays; demos cost nothing; entries past their age go too."""
    from collections import OrderedDict

    from fairness_core import datasets
    from ui.session import held_bytes, release_oldest

    compas = datasets.load_demo("compas_race")
    assert held_bytes(None) == 0 and held_bytes(Audit({"a": CM(1, 1, 1, 1), "b": CM(2, 1, 1, 1)})) == 0
    assert held_bytes(compas) >= 3 * len(compas.rows.y)
    now = time.time()
    saved = OrderedDict((f"s{k}", {"time": now - 10 + k, "bytes": 100}) for k in range(5))
    release_oldest(saved, sessions=64, max_bytes=250, max_age_s=3600)
    assert list(saved) == ["s3", "s4"]                       # 200 bytes left, the newest two
    saved["big"] = {"time": now, "bytes": 10**9}
    release_oldest(saved, sessions=64, max_bytes=250, max_age_s=3600)
    assert list(saved) == ["big"]                            # the newest is kept whatever it holds
    saved = OrderedDict([("old", {"time": now - 7200, "bytes": 0}), ("new", {"time": now, "bytes": 0})])
    release_oldest(saved, sessions=64, max_bytes=250, max_age_s=3600)
    assert list(saved) == ["new"]


def test_a_released_upload_says_the_real_reason():
    """An old ?sid= link learns why its data left: released for room (naming FAIRNESS_SESSION_STORE_MB), too old,
    or moved to a new id by a reload — never a guess between them."""
    from ui import session

    now = time.time()
    with session._SAVED_LOCK:
        session._SAVED.clear()
        session._SAVED.update((f"room{k}", {"time": now - 5 + k, "bytes": 2**30}) for k in range(2))
        session._SAVED["stale"] = {"time": now - 10 * 3600, "bytes": 0}
        session._SAVED.move_to_end("stale", last=False)
        session.release_oldest(session._SAVED, 64, 2**30, session.SAVED_HOURS * 3600)
        session._note_gone("reloaded", "A reload of the page moved these data to a new session id")
    assert "8 hours" in session.gone_reason("stale")
    assert "FAIRNESS_SESSION_STORE_MB" in session.gone_reason("room0") and session.gone_reason("room1") is None
    assert "reload" in session.gone_reason("reloaded") and session.gone_reason("never-seen") is None
    with session._SAVED_LOCK:
        session._SAVED.clear()


def test_a_reload_gives_the_kept_data_only_to_the_same_browser_and_the_same_user():
    """The next person to sign in on the same browser never gets the previous user's upload from an old ?sid=."""
    from ui import session

    with session._SAVED_LOCK:
        session._SAVED["kept"] = {"browser": "b1", "user": "ana@example.org", "time": time.time(), "bytes": 0}
    assert session._recall("kept", "b1", "bob@example.org") is None
    assert session._recall("kept", "b2", "ana@example.org") is None
    assert session._recall("kept", "b1", "ana@example.org")["user"] == "ana@example.org"
    assert session._recall("kept", "b1", "ana@example.org") is None      # taken once
