"""The ordered CRPS of Briscoe 2024, §5.4.2 (eqs. 5.5–5.9), on quantile forecasts.

T2 over all c² quantile pairs is computed exactly from the sorted quantiles in O(c log c).
"""

from __future__ import annotations

import numpy as np
import torch
from torch.nn import functional as F

OMEGA = 0.0075


def crps(q: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-forecast CRPS (eqs. 5.5–5.7) of quantiles ``q`` (B, τ, c) against ``y`` (B, τ): T1 − T2/2
    averaged over τ. T2 = (1/c²) Σ_j Σ_k |q_j − q_k| = (2/c²) Σ_j (2j − c − 1) q_(j) on sorted q."""
    c = q.shape[-1]
    t1 = (q - y.unsqueeze(-1)).abs().mean(-1)
    ranks = torch.arange(1, c + 1, dtype=q.dtype, device=q.device)
    t2 = 2.0 * (torch.sort(q, dim=-1).values * (2 * ranks - c - 1)).sum(-1) / c**2
    return (t1 - 0.5 * t2).mean(-1)


def ordering_penalty(q: torch.Tensor) -> torch.Tensor:
    """Eq. 5.8 per forecast: mean of max(0, q_j − q_{j+1}) over steps and adjacent quantile pairs."""
    return F.relu(q[..., :-1] - q[..., 1:]).mean(dim=(-1, -2))


def loss(q: torch.Tensor, y: torch.Tensor, omega: float = OMEGA) -> torch.Tensor:
    """Eq. 5.9, averaged over the batch."""
    return (crps(q, y) + omega * ordering_penalty(q)).mean()


def crps_numpy(q: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:func:`crps` on arrays (no gradient), in batches."""
    out = []
    with torch.no_grad():
        for s in range(0, len(q), 2048):
            out.append(crps(torch.as_tensor(q[s:s + 2048]), torch.as_tensor(y[s:s + 2048])).numpy())
    return np.concatenate(out) if out else np.empty(0)
