"""Coverage of the score intervals by simulation (docs/methods.md, "Scores: calibration, ROC and the threshold sweep").

Three questions, each at small groups (30 rows, one class rare) and larger:

1. The AUC interval of one group: the shipped score-type interval (``fairness_core.scores.auc``) against
   DeLong's Wald interval and DeLong's variance on the logit scale. Binormal scores (negatives N(0, 1),
   positives N(μ, σ)), μ tuned to the AUC asked; also a ten-valued score (ties, as COMPAS's deciles).
2. The difference of two groups' AUCs: the shipped MOVER-D interval against DeLong's Wald interval with the sum
   of the two variances.
3. The calibration interval of a bin: Clopper–Pearson on 30 rows whose score is a calibrated probability
   drawn from Beta(1, 8) (about 3 positives in 30), ten uniform bins; the truth is the bin's population rate.

Run ``python scripts/score_coverage.py [--reps N] [--seed S]``: prints the tables, and a JSON line last.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats, special

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fairness_core import scores  # noqa: E402

Z = float(stats.norm.isf(0.025))
#: (positives, negatives, true AUC, σ of the positives' scores, ten-valued score)
AUC_CASES = [(3, 27, 0.9, 1.0, False), (6, 24, 0.9, 1.0, False), (10, 20, 0.9, 1.0, False),
             (3, 27, 0.75, 1.0, False), (3, 27, 0.95, 1.0, False), (6, 24, 0.95, 1.0, False),
             (4, 26, 0.9, 2.0, False), (27, 3, 0.9, 2.0, False), (4, 26, 0.8, 3.0, False), (4, 26, 0.9, 0.5, False),
             (5, 25, 0.9, 1.0, True), (10, 90, 0.9, 1.0, False), (10, 90, 0.9, 2.0, False),
             (30, 270, 0.9, 1.0, False), (30, 270, 0.9, 2.0, False), (100, 900, 0.9, 1.0, False),
             (100, 900, 0.9, 2.0, False)]
#: pairs of (positives, negatives, AUC) for the difference
DIFF_CASES = [((3, 27, 0.9), (10, 90, 0.9)), ((6, 24, 0.9), (6, 24, 0.9)), ((3, 27, 0.9), (100, 900, 0.8)),
              ((10, 20, 0.95), (10, 20, 0.85)), ((100, 900, 0.9), (100, 900, 0.85))]
CUTS = np.linspace(-1.5, 3.0, 9)   # nine cut points: a ten-valued score


def _mu(auc: float, sigma: float) -> float:
    """The positives' mean for AUC = Φ(μ / √(1 + σ²))."""
    return float(stats.norm.ppf(auc) * np.sqrt(1 + sigma ** 2))


def _tied_auc(mu: float, sigma: float) -> float:
    """The true AUC of the ten-valued score: P(X > Y) + ½ P(X = Y) over the binned normals."""
    edges = np.r_[-np.inf, CUTS, np.inf]
    px, py = np.diff(stats.norm.cdf(edges, mu, sigma)), np.diff(stats.norm.cdf(edges))
    return float(np.sum(px * (np.cumsum(py) - py)) + 0.5 * np.sum(px * py))


def _draw(m: int, n: int, auc: float, sigma: float, tied: bool, reps: int,
          rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """Each replicate's AUC table row (``scores.auc`` with one group per replicate) and the true AUC."""
    mu = _mu(auc, sigma)
    y = np.tile(np.r_[np.ones(m, bool), np.zeros(n, bool)], reps)
    s = rng.normal(np.where(y, mu, 0.0), np.where(y, sigma, 1.0))
    truth = auc
    if tied:
        s, truth = np.searchsorted(CUTS, s).astype(float), _tied_auc(mu, sigma)
    g = np.repeat(np.arange(reps), m + n)
    table = scores.auc(y, s, g, pairs=False).by_group
    return table, truth


def _covers(low: np.ndarray, high: np.ndarray, truth: float) -> float:
    return float(np.mean((low <= truth) & (truth <= high)))


def auc_coverage(reps: int, rng: np.random.Generator) -> list[dict]:  # type: ignore[type-arg]
    out = []
    for m, n, auc, sigma, tied in AUC_CASES:
        r, truth = _draw(m, n, auc, sigma, tied, reps if m + n <= 100 else max(reps // 4, 1000), rng)
        a, se = r["auc"].to_numpy(), r["se"].fillna(0).to_numpy()   # se undefined (one positive): a point
        with np.errstate(divide="ignore", invalid="ignore"):
            logit, se_logit = np.log(a / (1 - a)), se / (a * (1 - a))
            lg_low = np.where(a < 1, special.expit(logit - Z * se_logit), 1.0)
            lg_high = np.where(a < 1, special.expit(logit + Z * se_logit), 1.0)
        out.append({"positives": m, "negatives": n, "auc": round(truth, 4), "sigma": sigma, "ten_valued": tied,
                    "replicates": len(r), "share_auc_1": round(float(np.mean(a == 1)), 3),
                    "shipped_score": round(_covers(r["ci_low"].to_numpy(), r["ci_high"].to_numpy(), truth), 4),
                    "delong_wald": round(_covers(a - Z * se, a + Z * se, truth), 4),
                    "delong_logit": round(_covers(lg_low, lg_high, truth), 4),
                    "shipped_width": round(float(np.mean(r["ci_high"] - r["ci_low"])), 3)})
    return out


def difference_coverage(reps: int, rng: np.random.Generator) -> list[dict]:  # type: ignore[type-arg]
    out = []
    for (m1, n1, a1), (m2, n2, a2) in DIFF_CASES:
        k = reps if max(m1 + n1, m2 + n2) <= 100 else max(reps // 4, 1000)
        r1, _ = _draw(m1, n1, a1, 1.0, False, k, rng)
        r2, _ = _draw(m2, n2, a2, 1.0, False, k, rng)
        d, truth = r1["auc"].to_numpy() - r2["auc"].to_numpy(), a1 - a2
        lo = d - np.sqrt((r1["auc"] - r1["ci_low"]) ** 2 + (r2["ci_high"] - r2["auc"]) ** 2).to_numpy()
        hi = d + np.sqrt((r1["ci_high"] - r1["auc"]) ** 2 + (r2["auc"] - r2["ci_low"]) ** 2).to_numpy()
        se = np.sqrt(r1["se"].fillna(0) ** 2 + r2["se"].fillna(0) ** 2).to_numpy()
        out.append({"group_1": f"{m1}+{n1} at {a1}", "group_2": f"{m2}+{n2} at {a2}", "replicates": k,
                    "shipped_mover_d": round(_covers(lo, hi, truth), 4),
                    "delong_wald": round(_covers(d - Z * se, d + Z * se, truth), 4)})
    return out


def calibration_coverage(reps: int, rng: np.random.Generator, n: int = 30, a: float = 1.0,
                         b: float = 8.0) -> dict:  # type: ignore[type-arg]
    """Clopper–Pearson per bin on n rows of calibrated Beta(a, b) probabilities, ten uniform bins."""
    s = rng.beta(a, b, (reps, n)).ravel()
    y = rng.random(s.size) < s
    table = scores.calibration(y, s, np.repeat(np.arange(reps), n), bins=10, strategy="uniform")
    edges = np.linspace(0, 1, 11)
    mass = np.diff(stats.beta.cdf(edges, a, b))
    truth = np.diff(a / (a + b) * stats.beta.cdf(edges, a + 1, b)) / mass   # E[s | s in bin]
    covered = (table["ci_low"] <= truth[table["bin"]]) & (truth[table["bin"]] <= table["ci_high"])
    per_bin = covered.groupby(table["bin"]).agg(["mean", "size"])
    return {"rows": n, "score": f"Beta({a:g}, {b:g}), calibrated", "positives_per_30": round(30 * a / (a + b), 2),
            "coverage_all_bins": round(float(covered.mean()), 4),
            "coverage_worst_bin": round(float(per_bin.loc[per_bin["size"] >= 200, "mean"].min()), 4),
            "bins_seen": int(len(table))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    rng, started = np.random.default_rng(args.seed), time.time()
    single = auc_coverage(args.reps, rng)
    print("AUC interval of one group: coverage at nominal 95 %")
    print(f"{'pos':>4} {'neg':>4} {'AUC':>6} {'σ':>4} {'ties':>5} {'P(A=1)':>7} {'shipped':>8} {'DeLong':>7} "
          f"{'logit':>7} {'width':>6}")
    for c in single:
        print(f"{c['positives']:>4} {c['negatives']:>4} {c['auc']:>6.3f} {c['sigma']:>4.1f} "
              f"{'yes' if c['ten_valued'] else 'no':>5} {c['share_auc_1']:>7.3f} {c['shipped_score']:>8.4f} "
              f"{c['delong_wald']:>7.4f} {c['delong_logit']:>7.4f} {c['shipped_width']:>6.3f}")
    diff = difference_coverage(args.reps, rng)
    print("\nDifference of two groups' AUCs: coverage at nominal 95 %")
    for c in diff:
        print(f"{c['group_1']:>14} vs {c['group_2']:<14} shipped MOVER-D {c['shipped_mover_d']:.4f}   "
              f"DeLong Wald {c['delong_wald']:.4f}")
    cal = calibration_coverage(args.reps, rng)
    print(f"\nCalibration (Clopper–Pearson) per bin, {cal['rows']} rows, {cal['score']}: coverage "
          f"{cal['coverage_all_bins']:.4f} over all bins, {cal['coverage_worst_bin']:.4f} in the worst bin")
    print(json.dumps({"reps": args.reps, "seed": args.seed, "seconds": round(time.time() - started, 1),
                      "auc": single, "difference": diff, "calibration": cal}))


if __name__ == "__main__":
    main()
