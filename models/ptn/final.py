"""After the search: the derived architecture retrained and warm-started per seed, and the TiDE-style
baseline trained for its share of PTN's training time, warm-started the same way (Briscoe 2024, §5.5)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np
import torch

from .. import forecast_data as FD
from .fit import WARM_LR, build, fan, inherit, predict, train_darts, train_plain
from .layers import PTN, TiDE
from .loss import crps_numpy
from .progress import BaselineEpoch, Counter, FinalEpoch
from .search import SearchOutcome

if TYPE_CHECKING:
    from .run import PTNConfig


@dataclass
class Trained:
    """One model's training in one seed: the model, its seconds and steps (the warm start included)."""

    model: torch.nn.Module
    seconds: float
    steps: int
    warm_seconds: float = 0.0


def hypermodel_of(config: "PTNConfig", ds: FD.Dataset, search: SearchOutcome, device: torch.device) -> PTN:
    """The best agent's hypermodel as the search left it."""
    model = build(search.best.hparams, ds, config.quantiles, config.forecast_skip, device)
    if search.best_state:
        model.load_state_dict(search.best_state)
    return model


def train_final(config: "PTNConfig", ds: FD.Dataset, search: SearchOutcome, keep: dict[str, str] | None, seed: int,
                run: int, warm: FD.Samples, counter: Counter, device: torch.device, probe: FD.Samples,
                should_stop: Callable[[], bool] | None = None) -> Trained:
    """The derived architecture (``keep``; None: the whole hypermodel) trained for ``final_epochs`` epochs,
    starting from the weights the search trained (``config.inherit``), then warm-started on ``warm``."""
    torch.manual_seed(seed)
    h = search.best.hparams
    model = build(h, ds, config.quantiles, config.forecast_skip, device, keep)
    if config.inherit and search.best_state:
        inherit(model, hypermodel_of(config, ds, search, device))
    start = time.perf_counter()

    before = counter.done

    def on_epoch(epoch: int, train_loss: float, val_loss: float) -> None:
        if config.final_seconds:  # a time budget: the share of it used so far
            share = min(1.0, (time.perf_counter() - start) / config.final_seconds)
            counter.set(before + round(config.final_epochs * share))
        else:
            counter.advance()
        counter.report(FinalEpoch, run=run, epoch=epoch, train_loss=train_loss, val_loss=val_loss,
                       architecture=model.architecture(), fan=fan(predict(model, probe)[0]),
                       message=f"retraining the best agent (seed {run} of {config.seeds}), epoch {epoch}")

    steps = train_darts(model, h, ds.parts["darts_train"], ds.parts["darts_val"], config.final_epochs, seed=seed,
                        weight_steps=config.final_weight_steps, on_epoch=on_epoch, should_stop=should_stop,
                        paper_lr=config.paper_lr, seconds=config.final_seconds)
    counter.set(before + config.final_epochs)
    final_seconds = time.perf_counter() - start
    start = time.perf_counter()
    if len(warm) and config.warm_epochs:
        steps += train_plain(model, warm, config.warm_epochs, seed=seed + 1, steps=config.final_weight_steps,
                             lr=WARM_LR, should_stop=should_stop)
    warm_seconds = time.perf_counter() - start
    counter.advance()
    return Trained(model, final_seconds + warm_seconds, steps, warm_seconds)


def train_baseline(config: "PTNConfig", ds: FD.Dataset, seed: int, run: int, budget: float, warm_budget: float,
                   warm: FD.Samples, counter: Counter, device: torch.device,
                   should_stop: Callable[[], bool] | None = None) -> Trained:
    """The TiDE-style baseline on the same inputs and loss for ``budget`` seconds, then warm-started on ``warm``
    for ``warm_budget`` seconds at the same rate as PTN. Without a wall-time budget for PTN's final training
    (``final_seconds`` None: PTN trains exactly ``final_epochs``), TiDE trains at least ``final_epochs`` too; with
    one (``final_epochs`` then only caps PTN), TiDE's floor is one epoch, so it gets its share of PTN's time and
    not the cap's epochs (the demo's cap of 1,000 epochs had given TiDE 2.3 times PTN's time on the page)."""
    floor = config.final_epochs if config.final_seconds is None else 1
    s0 = ds.parts["darts_train"]
    n_in = s0.static.shape[1] + s0.history[0].size + s0.forecasts[0].size
    torch.manual_seed(seed)
    tide = TiDE(n_in, s0.target.shape[1], config.quantiles).to(device)
    start, before = time.perf_counter(), counter.done

    def on_epoch(epoch: int, train_loss: float) -> None:
        share = min(1.0, (time.perf_counter() - start) / max(budget, 1e-9))
        counter.set(before + min(config.final_epochs, round(config.final_epochs * share)))
        counter.report(BaselineEpoch, run=run, epoch=epoch, train_loss=train_loss, budget_seconds=budget,
                       message=f"training the TiDE baseline for {budget:.0f} s ({config.tide_time_share:.0%} of "
                               f"PTN's training time; seed {run} of {config.seeds}), epoch {epoch}")

    steps = train_plain(tide, s0, floor, seed=seed + 11, steps=config.final_weight_steps,
                        on_epoch=on_epoch, should_stop=should_stop, seconds=budget)
    counter.set(before + config.final_epochs)
    if len(warm) and config.warm_epochs:
        steps += train_plain(tide, warm, 1, seed=seed + 12, steps=config.final_weight_steps, lr=WARM_LR,
                             should_stop=should_stop, seconds=warm_budget)
    counter.advance()
    return Trained(tide, time.perf_counter() - start, steps)


def score(model: torch.nn.Module, test: FD.Samples) -> tuple[np.ndarray, np.ndarray]:
    """Quantiles and per-forecast CRPS of ``model`` on ``test``."""
    q = predict(model, test)
    return q, crps_numpy(q, test.target)
