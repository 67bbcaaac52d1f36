"""Scoring on the test part: the deterministic-normal baseline, skill scores (Briscoe 2024, §5.5, eq. 5.10),
the verdict in words and a browser of test forecasts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from .. import forecast_data as FD
from .fit import FAN_LEVELS, fan

#: Briscoe 2024, Table 5.2, for the page to print beside ours.
SEED_TABLE_5_2 = pd.DataFrame(
    {"Chaos vs Det.": [0.40, 0.57, 0.68, 0.943], "Chaos vs TiDE": [0.82, 0.73, 0.56, 0.998],
     "Microclimate vs NBM": [0.42, 0.59, 0.70, 0.964], "Microclimate vs TiDE": [0.21, 0.18, 0.16, 0.775]},
    index=["first quartile", "second quartile", "third quartile", "share of forecasts PTN improves"])


def normal_quantiles(mean: np.ndarray, sigma: np.ndarray, c: int) -> np.ndarray:
    """Baseline 1: the deterministic forecast as N(mean, σ = its MAE), at the same c quantile levels."""
    z = norm.ppf((np.arange(c) + 0.5) / c)
    return mean[..., None] + sigma[None, :, None] * z


def skill_table(ptn: np.ndarray, baselines: dict[str, np.ndarray]) -> pd.DataFrame:
    """Skill = 1 − CRPS_PTN / CRPS_baseline at the quartiles of each per-forecast CRPS set, and the
    share of forecasts whose own skill is >= 0 (Briscoe 2024, §5.5, eq. 5.10)."""
    out = {}
    for name, base in baselines.items():
        q_ptn, q_base = np.quantile(ptn, [0.25, 0.5, 0.75]), np.quantile(base, [0.25, 0.5, 0.75])
        per = 1 - ptn / np.where(base > 0, base, np.nan)
        out[f"vs {name}"] = [*(1 - q_ptn / q_base), float(np.nanmean(per >= 0))]
    return pd.DataFrame(out, index=SEED_TABLE_5_2.index)


def verdict(median: float, per_seed: np.ndarray) -> str:
    """"beats" when the pooled median skill and every seed's are > 0, "loses" when all are < 0, else
    "ties within seed spread" (the seeds' medians straddle 0, or sit on it)."""
    if median > 0 and (per_seed > 0).all():
        return "beats"
    if median < 0 and (per_seed < 0).all():
        return "loses"
    return "ties within seed spread"


def verdict_text(skill: pd.DataFrame, runs: pd.DataFrame | None = None) -> str:
    """The skill table in words. PTN "beats" a baseline only when the pooled median skill is > 0 and
    so is every seed's; seeds that disagree make it a tie within the seed spread, never a win."""
    out = []
    for name in skill.columns:
        s = skill[name]
        median, share = float(s.loc["second quartile"]), float(s.loc["share of forecasts PTN improves"])
        col = f"median skill {name}"
        per = runs[col].to_numpy(dtype=float) if runs is not None and col in runs else np.array([median])
        word = verdict(median, per)
        spread = (f"; per seed {per.min():+.3f} to {per.max():+.3f} over {len(per)} seeds" if len(per) > 1 else "")
        against = "against " if word == "ties within seed spread" else ""
        out.append(f"PTN **{word}** {against}the {name.removeprefix('vs ')} baseline at the median (skill "
                   f"{median:+.3f}{spread}) and improves {share:.0%} of forecasts.")
    return " ".join(out)


def examples(q: np.ndarray, s: FD.Samples, crps_ptn: np.ndarray, k: int = 12) -> dict[str, Any]:
    """Test forecasts to browse, picked within each group (site, regime) of ``s``: the most confident (narrowest
    90 % band), the most multi-modal (largest gap inside the central 90 % of sorted quantiles, relative to its
    width) and a random few, ``k`` of each kind per group. Each record carries its ``group`` ("" when ``s`` has no
    groups) and ``time`` (the issue time; None without times); ``groups`` lists the groups in order, so a page
    can filter the kinds by group."""
    qs = np.sort(q, axis=-1)
    c = qs.shape[-1]
    lo, hi = int(0.05 * c), int(0.95 * c) - 1
    width = (qs[..., hi] - qs[..., lo]).mean(-1)
    gaps = np.diff(qs[..., lo:hi + 1], axis=-1).max(-1) / np.maximum(qs[..., hi] - qs[..., lo], 1e-9)
    modal = gaps.max(-1)
    labels = (np.full(len(q), "", dtype=object) if s.groups is None
              else np.asarray([str(g) for g in s.groups], dtype=object))
    names = sorted(set(labels))
    rng = np.random.default_rng(0)
    out: dict[str, Any] = {"kinds": {"confident": [], "multi-modal": [], "random": []}, "fan_levels": FAN_LEVELS,
                           "groups": names}
    for group in names:
        rows = np.flatnonzero(labels == group)
        picks = {"confident": rows[np.argsort(width[rows], kind="stable")[:k]],
                 "multi-modal": rows[np.argsort(-modal[rows], kind="stable")[:k]],
                 "random": rng.choice(rows, min(k, rows.size), replace=False)}
        for kind, idx in picks.items():
            out["kinds"][kind] += [{"index": int(i), "group": group,
                                    "time": None if s.time is None else int(s.time[i]), "fan": fan(q[i]),
                                    "truth": s.target[i], "deterministic": s.forecasts[i, -1, :, 0],
                                    "crps": float(crps_ptn[i]), "width": float(width[i]), "gap": float(modal[i])}
                                   for i in idx]
    return out


def in_units(example: dict[str, Any], scaler: FD.Scaler) -> dict[str, Any]:
    """One browser record (:func:`examples`) in the outcome's units (°C for weather, Lorenz's x), from the training
    part's [0, 1] scale s: y = lo + (hi − lo)·s with the target's ``scaler`` (:meth:`~models.forecast_data.Scaler.
    target_unscale`). The fan, truth and deterministic forecast are unscaled; the CRPS and the 90 % band width are
    multiplied by hi − lo: a width is a difference, and CRPS(a·X + b, a·y + b) = a·CRPS(X, y) for a > 0 (in the
    CRPS ∫ (F(z) − 1{z ≥ y})² dz the variable changes, z = a·s + b, dz = a·ds). The gap is a share of the width:
    unchanged. A fan's quantiles stay quantiles, since the map is increasing."""
    lo, hi = scaler.target_range()
    span = hi - lo
    out = dict(example)
    for key in ("fan", "truth", "deterministic"):
        out[key] = scaler.target_unscale(np.asarray(example[key], dtype=float))
    out["crps"], out["width"] = example["crps"] * span, example["width"] * span
    return out


def examples_of(browser: dict[str, Any], kind: str, group: str | None = None) -> list[dict[str, Any]]:
    """The browser's forecasts of one ``kind`` in ``group`` (every group's when None, or when the browser was
    picked before forecasts carried groups)."""
    options = browser["kinds"][kind]
    if group is None:
        return list(options)
    return [ex for ex in options if ex.get("group", group) == group]
