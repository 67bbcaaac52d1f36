"""PTN's layers: the candidates of its DARTS mixed operations, the hypermodel and the TiDE-style baseline.

The search space holds the thesis's network (Briscoe 2024, §5.4.1: three embedding blocks whose
history and forecast blocks choose among multi-head attention, a causal 1-D CNN and a bidirectional
GRU, with a Conv2D or dense collapse of the forecast stack) and, as our addition, TiDE's dense
residual block (Das et al., Long-term Forecasting with TiDE: Time-series Dense Encoder) wherever a
layer chooses: as a fourth candidate of the history and forecast blocks, a plain MLP collapse of the
forecast stack, and the whole dense encoder–decoder on the three flattened inputs as the alternative
to the parallel-time trunk. With the trunk's "dense encoder-decoder" and ``dense_width`` 256, PTN's
network is the TiDE-style baseline's (plus, with ``forecast_skip``, PTN's output in standardized
residual units around the latest deterministic forecast).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from scipy.stats import norm
from torch import nn
from torch.nn import functional as F


class GaussianNoise(nn.Module):
    def __init__(self, std: float):
        super().__init__()
        self.std = std

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.std * torch.randn_like(x) if self.training and self.std > 0 else x


class CausalConv(nn.Module):
    """1-D CNN over time on (B, T, d) with causal padding, then LReLU."""

    def __init__(self, d: int, kernel: int, slope: float):
        super().__init__()
        self.pad, self.conv, self.slope = kernel - 1, nn.Conv1d(d, d, kernel), slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv(F.pad(x.transpose(1, 2), (self.pad, 0)))
        return F.leaky_relu(h, self.slope).transpose(1, 2)


class Attention(nn.Module):
    def __init__(self, d: int, heads: int, dropout: float):
        super().__init__()
        self.mha = nn.MultiheadAttention(d, heads, dropout=dropout, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.mha(x, x, x, need_weights=False)[0]


class BiGRU(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.gru = nn.GRU(d, d // 2, batch_first=True, bidirectional=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gru(x)[0]


class DenseResidual(nn.Module):
    """TiDE's residual block on the last axis: Linear → ReLU → Linear → dropout, plus a skip (the identity
    when the sizes agree, else a linear map; none with ``skip=False``)."""

    def __init__(self, n_in: int, hidden: int, n_out: int, dropout: float, skip: bool = True):
        super().__init__()
        self.dense = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, n_out), nn.Dropout(dropout))
        self.skip: nn.Module | None = (nn.Identity() if n_in == n_out else nn.Linear(n_in, n_out)) if skip else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dense(x)
        return y if self.skip is None else y + self.skip(x)


class DenseEncoderDecoder(nn.Module):
    """TiDE-style encoder–decoder on the flattened static data, history and forecasts: two residual
    encoder blocks, a dense decoder to 16 features per step, a per-step temporal decoder to c_t
    outputs, and a global linear skip from the inputs (Das et al., Long-term Forecasting with TiDE)."""

    def __init__(self, n_in: int, tau_t: int, c_t: int, hidden: int = 256, dropout: float = 0.1):
        super().__init__()
        self.enc1 = DenseResidual(n_in, hidden, hidden, dropout)
        self.enc2 = DenseResidual(hidden, hidden, hidden, dropout)
        self.dec = DenseResidual(hidden, hidden, tau_t * 16, dropout, skip=False)
        self.temporal = DenseResidual(16, hidden, c_t, dropout, skip=False)
        self.global_skip = nn.Linear(n_in, tau_t * c_t)
        self.tau_t, self.c_t = tau_t, c_t
        # The deterministic-normal baseline added to the output (start_at_baseline); empty: none (TiDE).
        self.register_buffer("base_index", torch.zeros(0, dtype=torch.long))
        self.register_buffer("base_offset", torch.zeros(tau_t, c_t))
        self._output_scaled = False

    def start_at_baseline(self, forecast_index: np.ndarray, sigma: torch.Tensor, z: torch.Tensor) -> None:
        """Our addition: learn corrections around the deterministic-normal baseline, q_t,j = f_t + σ_t z_j added
        to the network's output as a fixed offset, with the two output layers (the temporal decoder's last
        layer and the global linear skip) at a tenth of their default initialization, so that the network
        starts near the baseline and every layer gets gradient at once. The architecture stays TiDE's; only
        the starting point differs. ``forecast_index[t]``: the flattened input that holds step t's forecast.

        Measured on the GA-validation rows (Lorenz, demo data, 45 s of training, seeds 7 and 108): median CRPS
        0.0135 and 0.0121 this way; 0.0252 and 0.0126 when the start was made by the global skip itself
        (weight 1 on the forecast, the temporal decoder's last layer at std 1e-4), whose tiny last layer let
        one seed in two stall near the baseline (0.0285)."""
        self.base_index = torch.as_tensor(np.asarray(forecast_index), dtype=torch.long)
        self.base_offset = (sigma[:, None] * z[None, :]).to(self.base_offset)
        if not self._output_scaled:  # once: the error scale may be set again
            with torch.no_grad():
                for layer in (self.temporal.dense[2], self.global_skip):
                    layer.weight.mul_(0.1)
                    layer.bias.mul_(0.1)
            self._output_scaled = True

    def start_as_tide(self) -> None:
        """Drop the baseline start: no offset, every layer at its default initialization (TiDE's start).
        Draws fresh weights from PyTorch's random state."""
        self.base_index = torch.zeros(0, dtype=torch.long, device=self.base_index.device)
        for module in self.modules():
            if isinstance(module, nn.Linear):
                module.reset_parameters()
        self._output_scaled = False

    def forward(self, static: torch.Tensor, history: torch.Tensor, forecasts: torch.Tensor) -> torch.Tensor:
        x = torch.cat([static, history.flatten(1), forecasts.flatten(1)], dim=1)
        d = self.dec(self.enc2(self.enc1(x))).view(-1, self.tau_t, 16)
        out = self.temporal(d) + self.global_skip(x).view(-1, self.tau_t, self.c_t)
        if self.base_index.numel():
            out = out + x[:, self.base_index].unsqueeze(-1) + self.base_offset
        return out


class TiDE(DenseEncoderDecoder):
    """The TiDE-style baseline (Das et al. 2023): :class:`DenseEncoderDecoder` with width 256 and dropout
    0.1, trained on its own (no forecast skip, default initialization)."""


class MixedOp(nn.Module):
    """DARTS: Σ softmax(α)_i · op_i(inputs) with one architecture parameter per candidate layer.

    With ``sample`` set, a training forward pass runs one candidate only, drawn by the Gumbel-softmax
    of α and scaled by its straight-through weight (Dong and Yang, Searching for a Robust Neural
    Architecture in Four GPU Hours): a step costs one path instead of all, and α still gets gradient
    through the softmax. Evaluation always mixes every candidate."""

    def __init__(self, ops: dict[str, nn.Module]):
        super().__init__()
        self.names = list(ops)
        self.ops = nn.ModuleList(ops.values())
        self.alpha = nn.Parameter(torch.zeros(len(self.ops)))
        self.sample = False

    def weights(self) -> torch.Tensor:
        return F.softmax(self.alpha, dim=0)

    def forward(self, *x: torch.Tensor) -> torch.Tensor:
        if len(self.ops) == 1:  # a derived architecture: the one kept candidate
            return self.ops[0](*x)
        if self.sample and self.training:
            gumbel = -torch.empty_like(self.alpha).exponential_().log()
            soft = F.softmax(self.alpha + gumbel, dim=0)
            k = int(soft.argmax())
            return (1.0 - soft[k].detach() + soft[k]) * self.ops[k](*x)
        w = self.weights()
        return sum(w[i] * op(*x) for i, op in enumerate(self.ops))


class Collapse2D(nn.Module):
    """(B, f, τ, c) → (B, f, τ) by a 2-D CNN over (forecast, time) with the c channels in."""

    def __init__(self, c: int, kh: int, kw: int):
        super().__init__()
        self.conv = nn.Conv2d(c, 1, (kh, kw), padding=(kh // 2, kw // 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x.permute(0, 3, 1, 2)).squeeze(1)


class CollapseDense(nn.Module):
    def __init__(self, c: int):
        super().__init__()
        self.dense = nn.Linear(c, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dense(x).squeeze(-1)


class CollapseMLP(nn.Module):
    """The plain MLP collapse: TiDE's residual block over the c channels of each (forecast, step) cell."""

    def __init__(self, c: int, hidden: int, dropout: float):
        super().__init__()
        self.block = DenseResidual(c, hidden, 1, dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.block(x).squeeze(-1)


#: Candidates from the cheapest to the dearest per step (measured on 2 CPU cores, d = 48, batch 64:
#: a parallel-time step with every candidate ~170 ms, without the BiGRU ~86 ms, with 1-D convolutions
#: only ~44 ms; the dense encoder–decoder at width 256 ~16 ms).
COST_ORDER = ("dense collapse", "mlp collapse", "conv2d collapse", "dense residual", "conv1d", "attention", "bigru",
              "dense encoder-decoder", "parallel time")
#: Each mixed operation's place: the trunk chooses between the whole parallel-time network and the dense
#: encoder–decoder; the other three exist inside the parallel-time trunk only.
MIXED_OPS = ("trunk", "history", "forecast collapse", "forecasts")


def derive(architecture: dict[str, dict[str, float]], tie: float = 0.01) -> dict[str, str]:
    """DARTS's derivation (Liu et al., DARTS: Differentiable Architecture Search): keep each mixed
    operation's strongest candidate.

    Candidates whose architecture weight is within ``tie`` of the strongest are not told apart by
    the search; of those the cheapest per step is kept (:data:`COST_ORDER`), so a search too short
    to move the weights derives the cheap architecture rather than an arbitrary one. A trunk derived
    to the dense encoder–decoder leaves the parallel-time operations out (nothing of them is kept).
    """
    out = {}
    for name, weights in architecture.items():
        best = max(weights.values())
        close = [c for c, w in weights.items() if w >= best - tie]
        out[name] = min(close, key=COST_ORDER.index)
    if out.get("trunk") == "dense encoder-decoder":
        out = {"trunk": out["trunk"]}
    return out


class ParallelTime(nn.Module):
    """Briscoe 2024, §5.4.1's network for one hyperparameter set ``h``: static, history and forecast
    blocks fused by learnable scalars and summation, then the output convolutions to (τ_t, c_t)."""

    def __init__(self, h: dict[str, Any], c_s: int, tau_h: int, c_h: int, f_f: int, tau_f: int, c_f: int,
                 tau_t: int, c_t: int, keep: dict[str, str], forecast_skip: bool = False):
        super().__init__()

        def mixed(name: str, ops: dict[str, nn.Module]) -> MixedOp:
            """All candidates (the search), or only ``keep[name]`` (a derived architecture)."""
            if name not in keep:
                return MixedOp(ops)
            if keep[name] not in ops:
                raise ValueError(f"{name}: no candidate {keep[name]!r}; candidates are {', '.join(ops)}")
            return MixedOp({keep[name]: ops[keep[name]]})

        d, s, p = int(h["hidden"]), float(h["slope"]), float(h["dropout"])
        self.slope, self.d = s, d
        self.s_noise = GaussianNoise(float(h["noise"]))
        self.s_dense1, self.s_bn = nn.Linear(c_s, d), nn.BatchNorm1d(d)
        self.s_drop, self.s_dense2 = nn.Dropout(float(h["first_dropout"])), nn.Linear(d, d)
        self.h_dense, self.h_drop = nn.Linear(c_h, d), nn.Dropout(p)
        k = int(h["history_embed_kernel"])
        self.h_time = nn.Conv1d(tau_h, d, k, padding=k // 2)
        self.h_mixed = mixed("history", {"attention": Attention(d, int(h["history_heads"]), p),
                                         "conv1d": CausalConv(d, int(h["history_kernel"]), s), "bigru": BiGRU(d),
                                         "dense residual": DenseResidual(d, d, d, p)})
        self.f_collapse = mixed("forecast collapse", {
            "conv2d collapse": Collapse2D(c_f, int(h["collapse_kernel_h"]), int(h["collapse_kernel_w"])),
            "dense collapse": CollapseDense(c_f), "mlp collapse": CollapseMLP(c_f, d, p)})
        self.f_dense = nn.Linear(tau_f, d)
        k = int(h["forecast_embed_kernel"])
        self.f_time = nn.Conv1d(f_f, d, k, padding=k // 2)
        self.f_mixed = mixed("forecasts", {"attention": Attention(d, int(h["forecast_heads"]), p),
                                           "conv1d": CausalConv(d, int(h["forecast_kernel"]), s), "bigru": BiGRU(d),
                                           "dense residual": DenseResidual(d, d, d, p)})
        self.scales = nn.Parameter(torch.ones(3))
        self.norm_kind = h["norm"]
        self.norm = nn.LayerNorm(d) if h["norm"] == "layer" else (nn.BatchNorm1d(d) if h["norm"] == "batch" else None)
        k = int(h["output_kernel_t"])
        self.o_time, self.o_ln = nn.Conv1d(d, tau_t, k, padding=k // 2), nn.LayerNorm(d)
        k = int(h["output_kernel_f"])
        self.o_feat, self.o_dense = nn.Conv1d(d, c_t, k, padding=k // 2), nn.Linear(c_t, c_t)
        self.forecast_skip = forecast_skip
        if forecast_skip:
            # Our addition: outputs in standardized residual units, q = forecast + σ_lead · (z_q + correction),
            # with z_q the normal quantiles at the loss's levels and σ_lead the forecaster's error scale per
            # lead (set by PTN.set_error_scale from training data): it starts at the deterministic-normal baseline.
            nn.init.normal_(self.o_dense.weight, std=1e-3)  # small, not zero: every layer gets gradient
            nn.init.zeros_(self.o_dense.bias)
            self.o_bias = nn.Parameter(torch.zeros(tau_t, c_t))
            self.register_buffer("sigma", torch.ones(tau_t))
            self.register_buffer("z", torch.as_tensor(norm.ppf((np.arange(c_t) + 0.5) / c_t), dtype=torch.float32))

    def mixed_ops(self) -> dict[str, MixedOp]:
        return {"history": self.h_mixed, "forecast collapse": self.f_collapse, "forecasts": self.f_mixed}

    def forward(self, static: torch.Tensor, history: torch.Tensor, forecasts: torch.Tensor) -> torch.Tensor:
        lrelu = lambda x: F.leaky_relu(x, self.slope)  # noqa: E731
        s = lrelu(self.s_bn(self.s_dense1(self.s_noise(static))))
        s = s.unsqueeze(1).expand(-1, self.d, -1)  # repeat along time: (B, d, d)
        s = lrelu(self.s_dense2(self.s_drop(s)))
        h = self.h_drop(lrelu(self.h_dense(history)))  # (B, τ_h, d)
        h = self.h_mixed(lrelu(self.h_time(h)))  # time as channels: (B, d, d)
        f = self.f_collapse(forecasts)  # (B, f_f, τ_f)
        f = lrelu(self.f_dense(f))  # (B, f_f, d)
        f = self.f_mixed(lrelu(self.f_time(f)))  # (B, d, d)
        x = self.scales[0] * s + self.scales[1] * h + self.scales[2] * f
        if self.norm_kind == "layer":
            x = self.norm(x)
        elif self.norm_kind == "batch":
            x = self.norm(x.transpose(1, 2)).transpose(1, 2)
        x = lrelu(self.o_ln(self.o_time(x)))  # (B, τ_t, d)
        x = lrelu(self.o_feat(x.transpose(1, 2))).transpose(1, 2)  # (B, τ_t, c_t)
        out = self.o_dense(x)
        if self.forecast_skip:
            out = forecasts[:, -1, :, :1] + self.sigma[:, None] * (self.z + out + self.o_bias)
        return out


class PTN(nn.Module):
    """The hypermodel for one hyperparameter set ``h``: a trunk that mixes the parallel-time network and
    the dense encoder–decoder (DARTS), each with its own mixed operations; with ``keep``, the derived
    architecture that has only the named candidate in each mixed operation (:func:`derive`)."""

    def __init__(self, h: dict[str, Any], c_s: int, tau_h: int, c_h: int, f_f: int, tau_f: int, c_f: int,
                 tau_t: int, c_t: int, forecast_skip: bool = True, keep: dict[str, str] | None = None):
        super().__init__()
        keep = dict(keep or {})
        unknown = set(keep) - set(MIXED_OPS)
        if unknown:
            raise ValueError(f"no mixed operation {sorted(unknown)[0]!r}; they are {', '.join(MIXED_OPS)}")
        # Our addition (not in Briscoe 2024): start at the latest deterministic forecast read as a normal, so
        # the network learns corrections and spread around it from the first step. Needs τ_f = τ_t and the
        # target among the forecast channels.
        self.forecast_skip = forecast_skip and tau_f == tau_t
        n_in = c_s + tau_h * c_h + f_f * tau_f * c_f
        candidates: dict[str, nn.Module] = {}
        trunk = keep.get("trunk")
        if trunk not in (None, "parallel time", "dense encoder-decoder"):
            raise ValueError(f"trunk: no candidate {trunk!r}; candidates are parallel time, dense encoder-decoder")
        if trunk in (None, "parallel time"):
            candidates["parallel time"] = ParallelTime(h, c_s, tau_h, c_h, f_f, tau_f, c_f, tau_t, c_t, keep,
                                                       self.forecast_skip)
        if trunk in (None, "dense encoder-decoder"):
            candidates["dense encoder-decoder"] = DenseEncoderDecoder(n_in, tau_t, c_t, int(h.get("dense_width", 256)),
                                                                      float(h["dropout"]))
        self.trunk = MixedOp(candidates)
        self.n_in, self.tau_t, self.c_t = n_in, tau_t, c_t
        #: Where each step's latest deterministic forecast sits among the flattened inputs.
        self.forecast_index = c_s + tau_h * c_h + ((f_f - 1) * tau_f + np.arange(tau_t)) * c_f
        self.set_error_scale(np.ones(tau_t))

    def set_error_scale(self, sigma: np.ndarray) -> None:
        """σ per lead of the deterministic forecaster: with ``forecast_skip``, every trunk candidate starts at
        N(forecast, σ) (the parallel-time one predicts in units of σ; the dense one keeps TiDE's output layer
        and starts there through its linear skip)."""
        if not self.forecast_skip:
            return
        s = torch.as_tensor(np.asarray(sigma, dtype=np.float32))
        z = torch.as_tensor(norm.ppf((np.arange(self.c_t) + 0.5) / self.c_t), dtype=torch.float32)
        for name, op in zip(self.trunk.names, self.trunk.ops):
            if name == "parallel time":
                op.sigma.copy_(s)
            else:
                op.start_at_baseline(self.forecast_index, s, z)

    def start_dense_as_tide(self) -> None:
        """The dense encoder–decoder trunk candidate (if kept) starts as TiDE does (:meth:`DenseEncoderDecoder.start_as_tide`)."""
        for name, op in zip(self.trunk.names, self.trunk.ops):
            if name == "dense encoder-decoder":
                op.start_as_tide()

    def mixed_ops(self) -> dict[str, MixedOp]:
        """Every mixed operation of this network by name (those of a dropped trunk candidate excluded)."""
        ops = {"trunk": self.trunk}
        if "parallel time" in self.trunk.names:
            ops |= self.trunk.ops[self.trunk.names.index("parallel time")].mixed_ops()
        return ops

    def sample_paths(self, on: bool) -> None:
        """Training passes run one sampled candidate per mixed operation (on) or mix them all (off)."""
        for op in self.mixed_ops().values():
            op.sample = on

    def arch_parameters(self) -> list[nn.Parameter]:
        """The architecture weights of the mixed operations that still have a choice to make."""
        return [op.alpha for op in self.mixed_ops().values() if len(op.names) > 1]

    def weight_parameters(self) -> list[nn.Parameter]:
        arch = {id(op.alpha) for op in self.mixed_ops().values()}
        return [p for p in self.parameters() if id(p) not in arch]

    def architecture(self) -> dict[str, dict[str, float]]:
        """The softmax architecture weights of every mixed operation (a one-candidate trunk is left out
        when the trunk was not derived, so the thesis's network reads as before)."""
        return {name: dict(zip(op.names, op.weights().detach().tolist())) for name, op in self.mixed_ops().items()}

    def forward(self, static: torch.Tensor, history: torch.Tensor, forecasts: torch.Tensor) -> torch.Tensor:
        return self.trunk(static, history, forecasts)
