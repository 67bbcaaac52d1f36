"""The deterministic forecaster whose forecasts feed PTN: an MLP on nonlinear vector
autoregression (NVAR) features (Briscoe 2024, §5.3.2, after Shahi et al. 2022).

NVAR features at time s: a constant, the states at s and s − 1 (``lags``), and every
quadratic monomial of those. The MLP maps them to the target channel over the next
``horizon`` steps at once.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch
from torch import nn

from .jobs_interface import Cancelled


def nvar_features(states: np.ndarray, lags: int = 2) -> np.ndarray:
    """(T, F) features; rows before the first full set of lags are NaN."""
    t, c = states.shape
    lin = np.full((t, c * lags), np.nan)
    for k in range(lags):
        lin[k:, k * c:(k + 1) * c] = states[: t - k] if k else states
    iu = np.triu_indices(c * lags)
    quad = (lin[:, :, None] * lin[:, None, :])[:, iu[0], iu[1]]
    return np.hstack([np.ones((t, 1)), lin, quad])


class NVARForecaster:
    """Fit on state sequences; ``predict(states)`` gives (T, horizon) forecasts issued at each time."""

    def __init__(self, target: int = 0, horizon: int = 16, lags: int = 2, hidden: int = 128, seed: int = 0):
        self.target, self.horizon, self.lags, self.hidden, self.seed = target, horizon, lags, hidden, seed
        self.net: nn.Module | None = None

    def _pairs(self, states: np.ndarray, allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        f = nvar_features(states, self.lags)
        t = len(states)
        times = np.arange(self.lags - 1, t - self.horizon)
        if allowed is not None:
            times = times[allowed[times]]
        y = states[times[:, None] + np.arange(1, self.horizon + 1)[None, :], self.target]
        return f[times], y

    def fit(self, sequences: list[np.ndarray], allowed: list[np.ndarray] | None = None, steps: int = 1500,
            batch: int = 256, should_stop: Callable[[], bool] | None = None) -> "NVARForecaster":
        """Train on every issue time of ``sequences`` (where ``allowed`` is True); ``should_stop`` is
        looked at before every step (True raises :class:`Cancelled`)."""
        xs, ys = zip(*(self._pairs(s, None if allowed is None else a)
                       for s, a in zip(sequences, allowed or [None] * len(sequences))))
        x, y = np.vstack(xs), np.vstack(ys)
        self.x_mean, self.x_std = x.mean(0), np.where(x.std(0) > 0, x.std(0), 1.0)
        self.y_mean, self.y_std = float(y.mean()), float(y.std() or 1.0)
        xt = torch.as_tensor((x - self.x_mean) / self.x_std, dtype=torch.float32)
        yt = torch.as_tensor((y - self.y_mean) / self.y_std, dtype=torch.float32)
        torch.manual_seed(self.seed)
        gen = torch.Generator().manual_seed(self.seed)
        self.net = nn.Sequential(nn.Linear(x.shape[1], self.hidden), nn.GELU(), nn.Linear(self.hidden, self.hidden),
                                 nn.GELU(), nn.Linear(self.hidden, self.horizon))
        opt = torch.optim.Adam(self.net.parameters(), lr=2e-3)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
        for step in range(steps):
            if should_stop is not None and should_stop():
                raise Cancelled(f"stopped after {step} of {steps} steps of the deterministic forecaster")
            idx = torch.randint(0, len(xt), (min(batch, len(xt)),), generator=gen)
            loss = ((self.net(xt[idx]) - yt[idx]) ** 2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
        self.net.eval()
        return self

    @torch.no_grad()
    def predict(self, states: np.ndarray) -> np.ndarray:
        f = nvar_features(states, self.lags)
        out = np.full((len(states), self.horizon), np.nan)
        ok = np.isfinite(f).all(axis=1)
        x = torch.as_tensor((f[ok] - self.x_mean) / self.x_std, dtype=torch.float32)
        out[ok] = self.net(x).numpy() * self.y_std + self.y_mean
        return out
