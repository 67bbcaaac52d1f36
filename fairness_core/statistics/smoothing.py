"""Smoothing a small group's confusion matrix (docs/methods.md; Briscoe 2024, §4.6, Briscoe, Kepler et al., §6).

- Additive ("Laplace") smoothing: every cell + ε (ε = 1e-10 "bashful", ε = 1 add-one).
- Cross-Prior Smoothing (CPS, Briscoe, Kepler et al., Algorithm 1): with r the normalized reference CM,
  α_c = c + λ·r_c and smoothed_c = α_c / Σα · n. The reference defaults to all other
  groups pooled. The smoothed CM keeps the group's n, so size-dependent metrics read right.

Smoothed CMs are float arrays ``[tp, fn, fp, tn]`` that every :mod:`fairness_core.metrics`
function accepts.

The error experiment (Briscoe 2024, Figs 4.4–4.6; Briscoe, Kepler et al., Figs 3–7) asks how far a metric of a random
subsample of size n lies from the whole group's score, raw and smoothed. :func:`error_curves`
computes it exactly, summing over all C(n+3, 3) CMs with their multinomial probabilities, or by
seeded Monte Carlo.

>>> from fairness_core import ConfusionMatrix, smoothing
>>> smoothing.cps(ConfusionMatrix(1, 0, 0, 1), ConfusionMatrix(10, 20, 30, 40), lam=10).round(4).tolist()
[0.3333, 0.3333, 0.5, 0.8333]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from . import metrics as m
from .confusion import ConfusionMatrix
from ..common.progress import Cancelled, Estimate, Progress, ProgressCallback, ignore
from .sample_size import MAX_DISTRIBUTION_N, enumerate_matrices, multinomial_pmf, reference_probs

FloatArray = npt.NDArray[np.float64]

#: The metrics of the papers' error experiment: 8 JRMs, ACC, PREV, PPR, B, MCC, F1, PT (Briscoe, Kepler et al., §6.2).
EXPERIMENT_METRICS: tuple[str, ...] = ("TPR", "FNR", "FPR", "TNR", "PPV", "FDR", "NPV", "FOR",
                                       "ACC", "PREV", "PPR", "B", "MCC", "F1", "PT")

#: Default reference size below which CPS is warned against (Briscoe, Kepler et al., §6.5: the reference is noisy itself).
MIN_REFERENCE_N = 100


@dataclass(frozen=True)
class Smoother:
    """One smoothing method: ``kind`` "none", "additive" (parameter ε) or "cps" (parameter λ)."""

    kind: str
    value: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in ("none", "additive", "cps"):
            raise ValueError(f"unknown smoother {self.kind!r}; expected none, additive or cps")
        if not np.isfinite(self.value) or self.value < 0:
            raise ValueError(f"the smoothing parameter must be a finite number >= 0, got {self.value}")

    @property
    def label(self) -> str:
        if self.kind == "none":
            return "raw"
        if self.kind == "additive":
            return f"additive ε = {self.value:g}"
        return f"CPS λ = {self.value:g}"

    def apply(self, cells: FloatArray, ref_probs: FloatArray | None = None) -> FloatArray:
        """Smooth CMs given as an array ``(..., 4)``."""
        cells = np.asarray(cells, dtype=float)
        if self.kind == "none":
            return cells
        if self.kind == "additive":
            return cells + self.value
        if ref_probs is None:
            raise ValueError("CPS needs reference probabilities")
        n = cells.sum(axis=-1, keepdims=True)
        alpha = cells + self.value * ref_probs
        total = alpha.sum(axis=-1, keepdims=True)
        # an empty group with λ = 0 has Σα = 0: it stays empty (no 0/0)
        return np.divide(alpha * n, total, out=np.zeros_like(alpha), where=total > 0)


#: The papers' six: raw, bashful, add-one, CPS λ = 5, 10, 20 (Briscoe, Kepler et al., §F.1).
SEED_SMOOTHERS: tuple[Smoother, ...] = (Smoother("none"), Smoother("additive", 1e-10), Smoother("additive", 1.0),
                                        Smoother("cps", 5.0), Smoother("cps", 10.0), Smoother("cps", 20.0))


def _cells(cm: ConfusionMatrix | npt.ArrayLike) -> FloatArray:
    c = cm.as_array() if isinstance(cm, ConfusionMatrix) else np.asarray(cm, dtype=float)
    if c.shape != (4,) or not np.isfinite(c).all() or (c < 0).any():
        raise ValueError("a confusion matrix must be four finite non-negative counts [tp, fn, fp, tn]")
    return c.astype(float)


def cps(cm: ConfusionMatrix | npt.ArrayLike, reference: ConfusionMatrix | npt.ArrayLike, lam: float = 5.0) -> FloatArray:
    """Cross-Prior Smoothing (Briscoe, Kepler et al., Algorithm 1): ``[tp, fn, fp, tn]`` as floats summing to the group's n.

    α_c = c + λ·r_c with r the normalized ``reference``; smoothed_c = α_c / Σα · n.
    λ = 0 returns the counts unchanged; an empty group stays empty.
    """
    cells = _cells(cm)
    return Smoother("cps", float(lam)).apply(cells, reference_probs(reference))


def additive(cm: ConfusionMatrix | npt.ArrayLike, eps: float = 1.0) -> FloatArray:
    """Additive smoothing: every cell + ε (ε = 1e-10 "bashful", ε = 1 add-one). The sum grows by 4ε."""
    return Smoother("additive", float(eps)).apply(_cells(cm))


def cps_bias(p: npt.ArrayLike, p_ref: npt.ArrayLike, n: npt.ArrayLike, lam: float) -> FloatArray:
    """Bias of the CPS cell-probability estimate (C + λ p'_c)/(n + λ): λ/(n + λ)·(p'_c − p_c) (Briscoe, Kepler et al., Thm 6.1)."""
    return lam / (np.asarray(n, dtype=float) + lam) * (np.asarray(p_ref, dtype=float) - np.asarray(p, dtype=float))


def cps_variance(p: npt.ArrayLike, n: npt.ArrayLike, lam: float) -> FloatArray:
    """Variance of the CPS cell-probability estimate: n·p_c(1 − p_c)/(n + λ)^2 (Briscoe, Kepler et al., Thm 6.1)."""
    p = np.asarray(p, dtype=float)
    n = np.asarray(n, dtype=float)
    return n * p * (1 - p) / (n + lam) ** 2


def smooth_groups(cms: Mapping[str, ConfusionMatrix], smoother: Smoother,
                  names: Sequence[str] = EXPERIMENT_METRICS) -> pd.DataFrame:
    """Every group's metrics raw and smoothed, each group against the rest pooled (CPS's default reference).

    Long table: group, n, metric, raw, smoothed, change (smoothed − raw), became_defined,
    reference_n.
    """
    total = np.sum([cm.as_array() for cm in cms.values()], axis=0)
    rows = []
    for g, cm in cms.items():
        ref = total - cm.as_array()
        raw_cells = cm.as_array().astype(float)
        sm = smoother.apply(raw_cells, reference_probs(ref) if smoother.kind == "cps" else None)
        for name in names:
            raw = float(m.compute(name, *raw_cells))
            new = float(m.compute(name, *sm))
            rows.append({"group": g, "n": cm.n, "metric": name, "raw": raw, "smoothed": new,
                         "change": new - raw, "became_defined": bool(np.isnan(raw) and np.isfinite(new)),
                         "reference_n": int(ref.sum())})
    return pd.DataFrame(rows)


def compare_priors(hidden: ConfusionMatrix, reference: ConfusionMatrix) -> pd.DataFrame:
    """Briscoe, Kepler et al., Table 2: how far each prior is from a hidden group's normalized CM.

    Rows: the hidden group, the reference ("all others"), then for each prior (no prior,
    CPS = the reference's proportions, uniform) its cell proportions and its absolute
    differences from the hidden group, with their L1 total.
    """
    truth = reference_probs(hidden)
    priors = {"no prior (zeros)": np.zeros(4), "CPS (reference proportions)": reference_probs(reference),
              "uniform (add-one)": np.full(4, 0.25)}
    rows = [{"row": "hidden group", **dict(zip(("TP", "FN", "FP", "TN"), truth)), "L1 distance": 0.0},
            {"row": "reference", **dict(zip(("TP", "FN", "FP", "TN"), priors["CPS (reference proportions)"])),
             "L1 distance": float(np.abs(priors["CPS (reference proportions)"] - truth).sum())}]
    for name, prior in priors.items():
        diff = np.abs(prior - truth)
        rows.append({"row": f"|{name} − hidden|", **dict(zip(("TP", "FN", "FP", "TN"), diff)),
                     "L1 distance": float(diff.sum())})
    return pd.DataFrame(rows)


# --- the error experiment -------------------------------------------------------------------

def _squared_errors(cells: FloatArray, truth: Mapping[str, float], smoothers: Sequence[Smoother],
                    ref: FloatArray, names: Sequence[str]) -> dict[tuple[str, str], tuple[FloatArray, FloatArray]]:
    """(metric, smoother label) -> (squared error, defined mask) for each CM row of ``cells``."""
    out = {}
    for sm in smoothers:
        s = sm.apply(cells, ref)
        for name in names:
            v = m.compute(name, s[:, 0], s[:, 1], s[:, 2], s[:, 3])
            ok = ~np.isnan(v)
            out[(name, sm.label)] = (np.where(ok, (v - truth[name]) ** 2, 0.0), ok)
    return out


#: Exact mode drops the least likely CMs whose probabilities sum to at most this; every squared
#: error here is <= 4 (scores lie in [−1, 1]), so an MSE moves by < 4·TAIL / P(defined).
TAIL = 1e-14


def _bulk(w: FloatArray) -> npt.NDArray[np.bool_]:
    """Mask of the CMs that carry all but at most :data:`TAIL` of the probability."""
    order = np.argsort(w)
    dropped = np.cumsum(w[order]) <= TAIL
    keep = np.ones(w.size, dtype=bool)
    keep[order[dropped]] = False
    return keep & (w > 0)


def estimate(ns: Sequence[int], mode: str = "exact", draws: int = 10_000) -> Estimate:
    """What :func:`error_curves` will cost, for the job runner to admit or refuse it. Its peak is one sample size's
    work: in exact mode every confusion matrix of the largest n (C(n + 3, 3) of them, about 180 bytes each with
    their probabilities and scores), by simulation ``draws`` subsamples (about 700 bytes each). Calibrated on
    measured peaks: exact n = 100 and 200, 53 and 241 MiB (the formula: 62 and 277 MB); 100,000 draws,
    95 MiB (100 MB). A light job."""
    largest = max((int(n) for n in ns), default=0)
    if mode == "exact":
        memory_mb = 30 + 1.8e-4 * math.comb(largest + 3, 3)
    else:
        memory_mb = 30 + 7e-4 * int(draws)
    return Estimate(memory_mb, heavy=False, what=f"error curves up to n = {largest:,} ({mode.replace('_', ' ')})")


def error_curves(group: ConfusionMatrix, reference: ConfusionMatrix, ns: Sequence[int],
                 names: Sequence[str] = EXPERIMENT_METRICS, smoothers: Sequence[Smoother] = SEED_SMOOTHERS,
                 mode: str = "exact", draws: int = 10_000, seed: int | None = 0,
                 on_progress: ProgressCallback | None = None,
                 should_stop: Callable[[], bool] | None = None) -> pd.DataFrame:
    """MSE of each metric of a size-n subsample of ``group`` against the whole group's score.

    Subsamples are drawn with replacement from the group's normalized CM (as the papers'
    code does); CPS uses the fixed normalized ``reference``. Undefined values are excluded
    and counted: ``mse`` is E[(S − s_full)^2 | S defined] and ``p_excluded`` = P(S undefined).

    Parameters
    ----------
    mode : "exact" or "monte_carlo"
        "exact" sums over all C(n+3, 3) CMs of size n with their multinomial probabilities
        (no sampling noise; n <= 200), skipping the least likely CMs whose probabilities
        sum to at most :data:`TAIL` = 1e-14 (an MSE error below 4e-14 / P(defined)). "monte_carlo" draws ``draws`` seeded subsamples per n
        and adds ``se``, the standard error of its MSE.
    on_progress : called with a :class:`~fairness_core.progress.Progress` record (``done`` of ``total`` sample
        sizes) after each n.
    should_stop : polled before each n; True raises :class:`fairness_core.progress.Cancelled`.

    Returns
    -------
    DataFrame with columns metric, smoother, n, mse, p_excluded, se (NaN in exact mode),
    truth (the whole group's score). A metric undefined on the whole group is left out, with the
    reason in ``attrs["dropped"]``.
    """
    if mode not in ("exact", "monte_carlo"):
        raise ValueError(f"mode must be 'exact' or 'monte_carlo', got {mode!r}")
    if group.n == 0:
        raise ValueError("the group is empty")
    for name in names:
        m.info(name)
    p = group.as_array() / group.n
    ref = reference_probs(reference)
    truth = {name: float(m.compute(name, group)) for name in names}
    dropped = {name: f"undefined on the whole group ({m.undefined_reason(name, group)}), so no subsample has a "
                     "score to be compared with" for name in names if not np.isfinite(truth[name])}
    names = [name for name in names if np.isfinite(truth[name])]
    ns = [int(n) for n in ns]
    if any(n < 1 for n in ns):
        raise ValueError("sample sizes must be >= 1")
    if mode == "exact" and max(ns, default=0) > MAX_DISTRIBUTION_N:
        raise ValueError(f"exact mode enumerates C(n+3, 3) matrices; n must be <= {MAX_DISTRIBUTION_N}")
    if mode == "monte_carlo" and draws < 2:
        raise ValueError("Monte Carlo needs at least 2 draws per n")
    report = on_progress or ignore
    rng = np.random.default_rng(seed)
    rows = []
    for k, n in enumerate(ns):
        if should_stop is not None and should_stop():
            raise Cancelled(f"stopped after {k} of {len(ns)} sample sizes")
        if mode == "exact":
            cells = np.column_stack(enumerate_matrices(n)).astype(float)
            w = multinomial_pmf(*cells.T, p)
            keep = _bulk(w)
            cells, w = cells[keep], w[keep]
        else:
            cells = rng.multinomial(n, p, size=draws).astype(float)
            w = np.full(draws, 1.0 / draws)
        for (name, label), (sq, ok) in _squared_errors(cells, truth, smoothers, ref, names).items():
            defined = float(w[ok].sum())
            mse = float((w * sq).sum() / defined) if defined > 0 else float("nan")
            se = float("nan")
            if mode == "monte_carlo" and ok.sum() > 1:
                se = float(np.std(sq[ok], ddof=1) / np.sqrt(ok.sum()))
            rows.append({"metric": name, "smoother": label, "n": n, "mse": mse,
                         "p_excluded": max(0.0, 1.0 - defined), "se": se, "truth": truth[name]})
        report(Progress(done=k + 1, total=len(ns), message=f"{k + 1} of {len(ns)} sample sizes"))
    out = pd.DataFrame(rows, columns=["metric", "smoother", "n", "mse", "p_excluded", "se", "truth"])
    out.attrs["dropped"] = dropped
    return out


#: A smoother undefined in more than this share of subsamples is never named the best.
MAX_UNDEFINED_FOR_BEST = 0.5


def best_smoother(curves: pd.DataFrame, metric: str, n: int) -> str:
    """The smoother with the lowest MSE for ``metric`` at subsample size ``n`` among those defined in at least
    half the subsamples (an MSE over the few defined samples says little); "none defined in most samples" else.

    >>> t = pd.DataFrame({"metric": ["TPR"] * 2, "smoother": ["raw", "CPS λ = 10"], "n": [5, 5],
    ...                   "mse": [0.001, 0.02], "p_excluded": [0.67, 0.0]})
    >>> best_smoother(t, "TPR", 5)
    'CPS λ = 10'
    """
    rows = curves[(curves["metric"] == metric) & (curves["n"] == n)
                  & (curves["p_excluded"] <= MAX_UNDEFINED_FOR_BEST)].dropna(subset=["mse"])
    return str(rows.loc[rows["mse"].idxmin(), "smoother"]) if len(rows) else "none defined in most samples"


def cps_verdicts(curves: pd.DataFrame) -> pd.DataFrame:
    """Per metric of :func:`error_curves`' table: does CPS (λ = 10) beat raw, and is add-one consistent?

    Columns: ``metric``; ``CPS λ = 10 below raw`` and ``add-one worse than raw`` ("k of m n": at how many of the
    sample sizes); the best smoother at the smallest and the largest n (:func:`best_smoother`); ``raw undefined
    at the smallest n`` (the share of subsamples where the raw score is undefined there).

    >>> t = error_curves(ConfusionMatrix(5, 2, 3, 6), ConfusionMatrix(50, 20, 30, 60), [5, 10], names=["ACC"])
    >>> cps_verdicts(t)[["metric", "CPS λ = 10 below raw"]].to_dict("records")
    [{'metric': 'ACC', 'CPS λ = 10 below raw': '2 of 2 n'}]
    """
    wide = curves.pivot_table(index=["metric", "n"], columns="smoother", values="mse")
    out = []
    for metric_name, g in wide.groupby(level="metric"):
        beats = int((g["CPS λ = 10"] < g["raw"]).sum())
        addone = int((g["additive ε = 1"] > g["raw"]).sum())
        first, last = g.index[0][1], g.index[-1][1]
        raw_undefined = curves[(curves["metric"] == metric_name) & (curves["smoother"] == "raw")
                               & (curves["n"] == first)]["p_excluded"]
        out.append({"metric": metric_name, "CPS λ = 10 below raw": f"{beats} of {len(g)} n",
                    "add-one worse than raw": f"{addone} of {len(g)} n",
                    "best at the smallest n": best_smoother(curves, metric_name, first),
                    "best at the largest n": best_smoother(curves, metric_name, last),
                    "raw undefined at the smallest n": float(raw_undefined.iloc[0]) if len(raw_undefined)
                    else float("nan")})
    return pd.DataFrame(out, columns=["metric", "CPS λ = 10 below raw", "add-one worse than raw",
                                      "best at the smallest n", "best at the largest n",
                                      "raw undefined at the smallest n"])
