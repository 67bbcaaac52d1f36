"""A job belongs to the browser session that started it (issues 28 and 35): a ``?job=`` link in another
session shows nothing of it, and a job the server cannot afford is refused with the numbers."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairness_core.services.jobs import RUNNER, Cancelled
from fairness_core.progress import Stage
from models import ptn
from ui import jobs as ui_jobs

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGE = "pages/6_Forecasting.py"


def forecasting() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception
    return at


def progress_texts(at: AppTest) -> list[str]:
    return [p.proto.text for p in at.get("progress")]


@pytest.fixture
def parked_training(monkeypatch):  # type: ignore[no-untyped-def]
    """PTN's training replaced by a job that waits (checking its cancel flag) until the test ends."""
    gate = threading.Event()

    def parked(config, on_progress=None, should_stop=None):  # type: ignore[no-untyped-def]
        on_progress(Stage(phase="data", message="parked test run", done=1, total=10))
        while not gate.wait(0.02):
            if should_stop():
                raise Cancelled("cancelled")
        return "a result only its owner may see"

    monkeypatch.setattr(ptn, "train", parked)
    yield gate
    gate.set()


def test_a_job_link_in_another_session_shows_nothing_of_the_job(parked_training):
    blocker = RUNNER.submit("someone else's training", lambda on_progress, should_stop: parked_training.wait(30),
                            owner="another-session", lane="torch")  # keeps the owner's run in the queue
    owner = forecasting()
    owner.button(key="ptn-train").click().run()
    job = RUNNER.get(owner.session_state["ptn-job"])
    try:
        assert job.owner == owner.session_state["sid"] and owner.query_params["job"] == job.id
        assert any(t.startswith("Queued, 0 ahead · PTN on") for t in progress_texts(owner))
        assert any(b.key == "ptn-cancel" for b in owner.button)

        visitor = AppTest.from_file(APP, default_timeout=120)
        visitor.query_params["job"] = job.id  # the owner's link, opened in another browser session
        visitor.run()
        visitor.switch_page(PAGE)
        visitor.run()
        assert not visitor.exception
        assert any(ui_jobs.NOT_YOURS in w.value for w in visitor.warning)
        assert "ptn-job" not in visitor.session_state and not progress_texts(visitor)
        assert not any(b.key == "ptn-cancel" for b in visitor.button)
        assert not any("Running in the background" in c.value for c in visitor.sidebar.caption)
        assert job.snapshot().status == "pending"  # nothing the visitor did touched it

        blocker.cancel()
        parked_training.set()
        assert job.wait(10) and job.snapshot().status == "done"
        visitor.run()  # the run ended: its result is still not the visitor's
        assert "ptn-result" not in visitor.session_state and not visitor.get("download_button")
        assert any(ui_jobs.NOT_YOURS in w.value for w in visitor.warning)
    finally:
        job.cancel()
        blocker.cancel()


def test_a_run_over_the_memory_budget_is_refused_on_the_page(parked_training, monkeypatch):
    monkeypatch.setattr(RUNNER, "limits", replace(RUNNER.limits, max_job_memory_mb=10))
    at = forecasting()
    at.button(key="ptn-train").click().run()
    assert not at.exception
    refusal = " ".join(e.value for e in at.error)
    needed = ptn.estimate(ptn.DEMO).memory_mb
    assert f"needs about {needed:,.0f} MB; the server allows 10 MB per job" in refusal
    assert "FAIRNESS\\_MAX\\_JOB\\_MEMORY\\_MB" in refusal or "FAIRNESS_MAX_JOB_MEMORY_MB" in refusal
    assert "ptn-job" not in at.session_state and not RUNNER.owned_by(at.session_state["sid"])


def test_the_paper_budget_is_refused_by_default_and_the_demos_fit():
    from fairness_core import datasets
    from fairness_core.services.jobs import JobRunner, OverBudget, ServerLimits
    from models import experiment, hydragan

    allowed = ServerLimits().max_job_memory_mb
    assert ptn.estimate(ptn.PAPER).memory_mb > 7000 > allowed  # issue 35 measured a 7 GB peak before the test part
    with pytest.raises(OverBudget, match=r"a PTN run on 1,250 Lorenz trajectories needs about 12,482 MB"):
        JobRunner().submit("paper", lambda on_progress, should_stop: None, estimate=ptn.estimate(ptn.PAPER))
    assert ptn.estimate(ptn.DEMO).memory_mb < allowed
    for key in datasets.ROW_DEMOS:
        df, label, groups = datasets.demo_table(key)
        config = experiment.ExperimentConfig(hydragan.HydraConfig(groups, label), label)
        assert experiment.estimate(config, df).memory_mb < allowed
        assert experiment.memory_mb(config, 5_000_000, df.shape[1]) > allowed  # issue 35's 5 M rows


def test_a_reload_of_the_same_browser_session_reattaches_its_job(parked_training):
    """A reload starts a new Streamlit session with a new id; the one that restores the old id's data (once:
    a duplicated tab or a shared link cannot) takes its jobs, so ?job= reattaches the running training."""
    owner = forecasting()
    owner.button(key="ptn-train").click().run()
    job = RUNNER.get(owner.session_state["ptn-job"])
    try:
        old_sid = owner.session_state["sid"]
        reloaded = AppTest.from_file(APP, default_timeout=120)
        reloaded.query_params["sid"], reloaded.query_params["job"] = old_sid, job.id
        reloaded.run()
        reloaded.switch_page(PAGE)
        reloaded.run()
        assert not reloaded.exception
        assert job.owner == reloaded.session_state["sid"] != old_sid
        assert reloaded.session_state["ptn-job"] == job.id and any(b.key == "ptn-cancel" for b in reloaded.button)

        duplicate = AppTest.from_file(APP, default_timeout=120)   # the same link opened again: nothing of it
        duplicate.query_params["sid"], duplicate.query_params["job"] = old_sid, job.id
        duplicate.run()
        duplicate.switch_page(PAGE)
        duplicate.run()
        assert job.owner == reloaded.session_state["sid"] and "ptn-job" not in duplicate.session_state
    finally:
        job.cancel()
        parked_training.set()
        job.wait(10)


def test_a_link_opened_in_another_browser_takes_neither_the_data_nor_the_jobs(parked_training, monkeypatch):
    """The URL carries ``?sid=``; a colleague who opens a link copied while its owner works must get nothing of
    the owner's session: not the data kept for a reload, not its running job. The owner's own reload still does."""
    import ui.session
    from fairness_core import ConfusionMatrix as CM
    from fairness_core.audit import Audit

    browser = {"value": "the owner's browser"}
    monkeypatch.setattr(ui.session, "browser_key", lambda: browser["value"])
    owner = AppTest.from_file(APP, default_timeout=120)
    owner.session_state["audit"] = Audit({"confidential A": CM(30, 2, 9, 59), "confidential B": CM(25, 12, 4, 59)},
                                         positive_is="benefit")
    owner.session_state["demo_key"] = None
    owner.run()
    owner.switch_page(PAGE)
    owner.run()
    owner.button(key="ptn-train").click().run()
    job = RUNNER.get(owner.session_state["ptn-job"])
    try:
        sid = owner.session_state["sid"]
        browser["value"] = "a colleague's browser"
        colleague = AppTest.from_file(APP, default_timeout=120)
        colleague.query_params["sid"], colleague.query_params["job"] = sid, job.id
        colleague.run()
        assert not colleague.exception
        assert "confidential A" not in colleague.session_state["audit"].groups
        assert any("belongs to another browser" in i.value for i in colleague.info)
        assert job.owner == sid and not RUNNER.owned_by(colleague.session_state["sid"])

        browser["value"] = "the owner's browser"          # the owner presses F5: data and job come back
        reloaded = AppTest.from_file(APP, default_timeout=120)
        reloaded.query_params["sid"], reloaded.query_params["job"] = sid, job.id
        reloaded.run()
        assert reloaded.session_state["audit"].groups == ["confidential A", "confidential B"]
        assert job.owner == reloaded.session_state["sid"] != sid
    finally:
        job.cancel()
        parked_training.set()


def test_the_browser_token_is_the_xsrf_cookies_unmasked_secret():
    """Streamlit masks its XSRF token afresh on every page load; the same browser gives the same digest (cookies
    captured from one headless Chromium before and after a reload), another browser another, and the digest
    holds neither the cookie nor its token."""
    from ui.session import browser_token

    first = "2|a0625a99|ab5dcda76efeb3261161dc7f86573191|1795625419"
    reload = "2|db1ca982|d0233ebc1580403d6a1f2f64fd29c28a|1795625419"
    other = "2|f16fbfc5|1fa4cba77bafa81f8f60c4b04d5bb9b2|1795625428"
    assert browser_token(first) == browser_token(reload) != browser_token(other)
    assert "0b3f973ece9ce9bfb10386e626356b08" not in browser_token(first) and "ab5dcda7" not in browser_token(first)
    assert browser_token(None) is None and browser_token("2|zz|qq|1") is None
    assert browser_token(None, "10.0.0.1", "UA") != browser_token(None, "10.0.0.2", "UA")
