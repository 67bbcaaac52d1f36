"""Cancel means stop: every long phase of a training job looks at ``should_stop`` often enough that a
cancel ends it within about a second (issue 35).

Each test starts one phase on a configuration that would run far longer than the bound (its size
is noted beside it), turns the flag True after 0.2 s and measures how long the phase ran on past
that moment. Time is the CPU time of the thread that runs the phase (and polls the flag), so that
other work does not make the tests flaky: neither other processes on a shared machine nor threads
that earlier tests left in this process (a background job winding down, BLAS workers spinning)
count. On an idle 2-core machine the bound of 2 CPU seconds is at most 2 s of wall time. A phase
that never looks at the flag runs on for its whole length and fails it.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
import torch

from fairness_core import realism
from fairness_core.statistics import ensemble
from fairness_core.services.jobs import Cancelled
from models import experiment as E
from models import forecast_data as FD
from models import hydragan as H
from models import ptn
from models.nvar import NVARForecaster

#: CPU seconds a phase may run on after the flag turned True.
BOUND_S = 2.0
clock = time.thread_time


class StopAfter:
    """A ``should_stop`` that turns True ``seconds`` (CPU) after its first call; records when it did."""

    def __init__(self, seconds: float = 0.2):
        self.seconds = seconds
        self.start: float | None = None
        self.calls = 0

    def __call__(self) -> bool:
        self.calls += 1
        now = clock()
        if self.start is None:
            self.start = now
        return now - self.start >= self.seconds

    def now(self) -> None:
        """Turn True from this moment (for a phase that begins after the first look)."""
        if self.start is None:
            self.start = clock()
        self.seconds = min(self.seconds, clock() - self.start)

    def overrun(self) -> float:
        """Seconds from the moment the flag turned True until now."""
        assert self.start is not None, "the phase never looked at should_stop"
        return clock() - (self.start + self.seconds)


def stops_in_time(run, stop: StopAfter, expect_raise: bool = True):  # type: ignore[no-untyped-def]
    """Run ``run()``; it must raise Cancelled (or return, when ``expect_raise`` is False) within BOUND_S."""
    if expect_raise:
        with pytest.raises(Cancelled):
            run()
        result = None
    else:
        result = run()
    assert stop.overrun() < BOUND_S, f"ran on for {stop.overrun():.2f} s after the cancel"
    return result


def table(n: int, numeric: int = 2, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.choice(["A", "B"], n)
    out = {"group": g, "y": (rng.uniform(size=n) < np.where(g == "A", 0.7, 0.3)).astype(int)}
    for k in range(numeric):
        out[f"x{k}"] = rng.normal(size=n) + (g == "A") * k
    out["kind"] = rng.choice(["p", "q", "r"], n)
    return pd.DataFrame(out)


def gan_config(**kw) -> H.HydraConfig:  # type: ignore[no-untyped-def]
    base = dict(condition_columns=["group"], diversity_column="y", steps=1, batch_size=64, hidden=32, noise_dim=8,
                n_critic=1, quality_every=0)
    return H.HydraConfig(**{**base, **kw})


def test_hydragan_training_stops():
    stop = StopAfter(3600)  # 1,000,000 steps: hours

    def at_step(record):  # type: ignore[no-untyped-def]
        if isinstance(record, H.GanStep) and record.step == 3:
            stop.now()

    model = stops_in_time(lambda: H.train(gan_config(steps=1_000_000), table(400), at_step, stop), stop,
                          expect_raise=False)
    assert 0 < model.steps_done < 1_000_000  # training returns the model it has, stopped early


def test_learning_the_columns_stops():
    stop = StopAfter()  # 80 numeric columns, a Gaussian mixture fitted to each: about 10 s
    stops_in_time(lambda: H.fit_schema(table(5000, numeric=80), gan_config(), should_stop=stop), stop)


@pytest.fixture(scope="module")
def small_model() -> H.HydraGAN:
    return H.train(gan_config(hidden=512), table(200))  # one step: wide, so a batch of rows costs something


def test_sampling_stops(small_model):
    stop = StopAfter()  # 4,000,000 rows through a 512-wide generator: half a minute
    stops_in_time(lambda: small_model.sample(4_000_000, should_stop=stop), stop)


def test_realism_test_stops():
    stop = StopAfter()  # 5 folds of boosting on 300,000 rows a side: about half a minute
    real, other = table(300_000, numeric=4, seed=1), table(300_000, numeric=4, seed=2)
    stops_in_time(lambda: realism.c2st(real, other, should_stop=stop), stop)


def test_realism_test_with_a_flag_that_never_turns_gives_the_same_result():
    real, other = table(300, seed=1), table(300, seed=2)  # fitted in chunks, looking at the flag between them
    chunked = realism.c2st(real, other, folds=2, max_iter=30, should_stop=lambda: False)
    assert chunked == realism.c2st(real, other, folds=2, max_iter=30)


def test_assess_realism_passes_the_flag_down(small_model):
    stop = StopAfter(0.0)  # already True: the first look ends it
    frame = table(400)
    with pytest.raises(Cancelled):
        E.assess_realism(small_model, frame.iloc[:200], frame.iloc[200:], should_stop=stop)


def test_classifier_training_stops():
    stop = StopAfter()  # 3,000,000 rows × 5 epochs of minibatches: minutes
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(3_000_000, 8)).astype(np.float32), rng.integers(0, 2, 3_000_000)
    stops_in_time(lambda: E.mlp_predict(x, y, x[:10], seed=0, epochs=5, should_stop=stop), stop)


def test_ensemble_stops():
    stop = StopAfter()  # 500 models × 5 folds of Newton fits on 200,000 rows: minutes
    rng = np.random.default_rng(0)
    features = pd.DataFrame(rng.normal(size=(200_000, 10)), columns=[f"f{k}" for k in range(10)])
    y = (features["f0"] + rng.normal(size=len(features)) > 0).astype(int)
    stops_in_time(lambda: ensemble.bootstrap_ensemble(features, y, n_models=500, should_stop=stop), stop)


def test_lorenz_integration_stops():
    stop = StopAfter()  # 400 systems at rtol 1e-9: tens of seconds
    rng = np.random.default_rng(0)
    params = np.array([FD.lorenz_parameters(rng) for _ in range(400)])
    initials = np.array([FD.lorenz_initial(rng) for _ in range(400)])
    stops_in_time(lambda: FD.lorenz_trajectories(params, initials, should_stop=stop), stop)


def test_deterministic_forecaster_training_stops():
    stop = StopAfter()  # 1,000,000 steps: an hour
    states = np.random.default_rng(0).normal(size=(300, 3))
    stops_in_time(lambda: NVARForecaster().fit([states], steps=1_000_000, should_stop=stop), stop)


def test_ptn_search_stops(monkeypatch):
    """The whole run, cancelled once its genetic search has begun (the data phase faked to be quick)."""
    from test_ptn import tiny_dataset

    monkeypatch.setattr(FD, "lorenz_dataset", lambda *a, **k: (tiny_dataset(), None))
    stop = StopAfter(3600)
    searching = []

    def report(record):  # type: ignore[no-untyped-def]
        if isinstance(record, ptn.SearchEpoch) and not searching:
            searching.append(1)
            stop.now()  # in the search's first epoch

    config = ptn.PTNConfig(population=50, generations=50, epochs=30, hidden_sizes=(24,), quantiles=11, device="cpu")
    torch.manual_seed(0)
    stops_in_time(lambda: ptn.train(config, report, stop), stop)  # 50 × 50 agents: hours
    assert searching


def test_ptn_final_and_baseline_training_stop():
    from test_ptn import hparams, tiny_dataset

    ds, h = tiny_dataset(), hparams()
    stop = StopAfter()  # 100,000 epochs: hours
    stops_in_time(lambda: ptn.train_darts(ptn.build(h, ds, c_t=11), h, ds.parts["darts_train"],
                                          ds.parts["darts_val"], epochs=100_000, seed=0, should_stop=stop), stop)
    stop = StopAfter()
    tide = ptn.TiDE(3 + 16 * 3 + 10 * 16, FD.HORIZON, 11)
    stops_in_time(lambda: ptn.train_plain(tide, ds.parts["darts_train"], epochs=100_000, seed=0,
                                          should_stop=stop), stop)
