"""Per-cell marginal calibration of Conditional HydraGAN's output: the generator supplies how the columns
depend on each other, the training rows each column's own distribution within the cell.

A cell is a condition (a joint level of the protected attributes) and, for a label-conditioned model, one
category of the diversity column. After training, the generator's rows for each cell are compared with the
real training rows of that cell:

- **numeric columns**: a monotone map (quantile mapping, as in the Gaussian-copula view of Sklar's theorem:
  a joint distribution is its marginals joined by a copula). A generated value v is taken to its level
  u = F_gen(v) in the generator's own distribution for the cell (ties, e.g. a point mass, spread uniformly
  over the levels they cover), then to the real quantile Q_real(u). The map is increasing, so the ranks
  within a cell, and with them every dependence the generator learned (its copula), are kept; the
  marginal becomes the real one up to the quantile grid.
- **categorical columns**: a bias added to each cell's logits, fitted by iterative proportional
  fitting so that the mean softmax over the generator's rows equals the real share of each category.
  Within the cell, which rows get which category still comes from the generator.

The diversity column of a model without label conditioning is left alone: its shares are the diversity
objective's target, not the real ones. Cells with fewer than :data:`MIN_CELL_ROWS` real rows take the
real distribution of their diversity category pooled over conditions (or of all rows).

What is kept (JSON): per cell and numeric column :data:`QUANTILES` quantiles of the generator's output and
of the real training rows; per cell and categorical column one bias per category. No row is stored.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

#: Points of each quantile grid (levels 0, 1/256, …, 1).
QUANTILES = 257
#: Real rows a cell needs for its own marginals; smaller cells use the pooled ones.
MIN_CELL_ROWS = 30
#: Generated rows per cell the maps are fitted on (fewer when there are many cells; see :func:`reference_rows`).
REFERENCE_ROWS = 4000
#: Iterations of proportional fitting for a categorical column's biases.
FIT_ITERATIONS = 30


def reference_rows(cells: int) -> int:
    """Generated rows per cell: :data:`REFERENCE_ROWS`, fewer (down to 1,000) so that all cells take
    at most 200,000 rows."""
    return int(max(1000, min(REFERENCE_ROWS, 200_000 // max(cells, 1))))


@dataclass
class Calibration:
    """Fitted maps, one per (cell, column). ``numeric[j]``: ``{"generated": [[q] per cell], "real": [[q] per
    cell]}``; ``categorical[j]``: a bias per cell and category, or None for a column left alone."""

    cells: int
    numeric: list[dict[str, list[list[float]]]]
    categorical: list[list[list[float]] | None]

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "Calibration":
        return cls(**json.loads(text))

    def numeric_values(self, j: int, values: np.ndarray, cell: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Numeric column ``j``'s generated ``values`` (rows of cells ``cell``) mapped to the real marginals."""
        out = np.array(values, dtype=float)
        levels = np.linspace(0.0, 1.0, QUANTILES)
        generated, real = self.numeric[j]["generated"], self.numeric[j]["real"]
        u = rng.uniform(size=len(values))  # drawn for every row: the stream does not depend on the cells' mix
        for k in np.unique(cell):
            rows = np.flatnonzero(cell == k)
            out[rows] = np.interp(level(values[rows], np.asarray(generated[k]), u[rows]), levels, np.asarray(real[k]))
        return out

    def logit_bias(self, j: int, cell: np.ndarray) -> np.ndarray | None:
        """Categorical column ``j``'s bias for each row's cell ([rows, categories]), or None (not calibrated)."""
        bias = self.categorical[j]
        return None if bias is None else np.asarray(bias, dtype=np.float32)[cell]


def level(v: np.ndarray, grid: np.ndarray, u: np.ndarray) -> np.ndarray:
    """F(v) for a distribution given by its quantiles ``grid`` at evenly spaced levels: linear between
    grid points, and for a value that several grid points equal (a point mass) a level spread uniformly
    (by ``u`` ∈ [0, 1)) over the levels it covers."""
    g = len(grid) - 1
    lo = np.searchsorted(grid, v, side="left")
    hi = np.searchsorted(grid, v, side="right")
    tie = hi - lo >= 2  # one equal grid point is an ordinary value; several are a point mass
    below = grid[np.clip(lo - 1, 0, g)]
    above = grid[np.clip(lo, 0, g)]
    gap = above - below
    frac = np.where(gap > 0, (v - below) / np.where(gap > 0, gap, 1.0), 0.5)
    between = (lo - 1 + frac) / g
    start, stop = np.clip((lo - 0.5) / g, 0, 1), np.clip((hi - 0.5) / g, 0, 1)
    spread = start + u * (stop - start)
    return np.clip(np.where(tie, spread, np.where(lo == 0, 0.0, np.where(lo > g, 1.0, between))), 0.0, 1.0)


def quantiles(values: np.ndarray) -> list[float]:
    """:data:`QUANTILES` evenly spaced quantiles (linear interpolation) of ``values``."""
    return np.quantile(np.asarray(values, dtype=float), np.linspace(0.0, 1.0, QUANTILES)).tolist()


def proportional_bias(logits: np.ndarray, shares: np.ndarray) -> np.ndarray:
    """Bias b with mean softmax(logits + b) = ``shares`` (categories with share 0 get −30: never drawn)."""
    target = np.clip(shares, 1e-12, None)
    b = np.where(shares > 0, 0.0, -30.0)
    for _ in range(FIT_ITERATIONS):
        z = logits + b
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        b = np.where(shares > 0, b + np.log(target) - np.log(np.clip(p.mean(0), 1e-12, None)), -30.0)
    return b - b[shares > 0].max()


def fit(real_numeric: np.ndarray, real_codes: list[np.ndarray], real_cell: np.ndarray, pool: np.ndarray,
        pool_of_cell: np.ndarray, generated_numeric: np.ndarray, generated_logits: list[np.ndarray],
        generated_cell: np.ndarray, cells: int, calibrated: list[bool]) -> Calibration:
    """Fit the maps.

    ``real_numeric`` [rows, numeric columns] and ``real_codes`` (one category index array per categorical
    column) are the training rows, ``real_cell`` their cells, ``pool`` their pooled stratum (e.g. the
    diversity category; one value for all rows pools everything) and ``pool_of_cell`` the stratum whose rows
    a cell with fewer than :data:`MIN_CELL_ROWS` real rows takes instead of its own. ``generated_*``:
    the generator's uncalibrated output for reference rows of every cell (values before rounding and
    clipping; logits). ``calibrated[j]``: whether categorical column ``j`` is calibrated."""
    counts = np.bincount(real_cell, minlength=cells)

    def real_rows(k: int) -> np.ndarray:
        return real_cell == k if counts[k] >= MIN_CELL_ROWS else pool == pool_of_cell[k]

    numeric: list[dict[str, Any]] = []
    for j in range(real_numeric.shape[1]):
        gen_q, real_q = [], []
        for k in range(cells):
            mine = generated_cell == k
            gen_q.append(quantiles(generated_numeric[mine, j]) if mine.any() else [0.0] * QUANTILES)
            rows = real_rows(k)
            real_q.append(quantiles(real_numeric[rows, j]) if rows.any() else gen_q[-1])
        numeric.append({"generated": gen_q, "real": real_q})
    categorical: list[list[list[float]] | None] = []
    for j, (codes, logits) in enumerate(zip(real_codes, generated_logits)):
        if not calibrated[j]:
            categorical.append(None)
            continue
        biases = []
        for k in range(cells):
            mine, rows = generated_cell == k, real_rows(k)
            if not mine.any() or not rows.any():
                biases.append([0.0] * logits.shape[1])
                continue
            shares = np.bincount(codes[rows], minlength=logits.shape[1]) / rows.sum()
            biases.append(proportional_bias(logits[mine].astype(float), shares).tolist())
        categorical.append(biases)
    return Calibration(cells, numeric, categorical)
