"""Benchmark: exact coverage of the paired difference of selection rates' 95 % interval (issue 54).

For n cases answered by groups i and j, each case falls in one cell of a multinomial: selected by both, by i
only, by j only, by neither. The true difference is δ = P(i only) − P(j only). Every outcome of the multinomial
is enumerated (no simulation), so each coverage figure is exact:

- n = 20, 50, 200 cases;
- discordance P(i only) + P(j only) = 1, 2, 3, 5, 7.5, 10, 15, 20, 25, 30 %;
- the discordant cases' split: 50/50 (δ = 0), 70/30, 85/15, 100/0 (the mirror images give the same coverage);
- the concordant cases' split (both selected against neither): 10/90, 50/50, 90/10 (only Newcombe's interval
  depends on it).

Methods (:mod:`fairness_core.statistics.paired`): Tango's score interval with the continuity correction of
:data:`~fairness_core.statistics.paired.PAIRED_CC` count ("tango", the audits' method), Tango's without it
("tango0"), and Newcombe's hybrid score method 10 ("newcombe"). Reported per method: the worst coverage, where it
occurs, the largest one-sided miss and the mean expected width; per n the worst coverage (docs/methods.md prints
the table). Goal: the chosen method's worst coverage at least 0.94 at nominal 0.95.

    python bench/paired_coverage.py [--quick]

``--quick``: discordance 1, 5, 15, 30 % and the 50/50 concordant split only (seconds).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np
from scipy import special

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import at_least, check, declare, figure, stopwatch  # noqa: E402
from fairness_core.statistics.paired import PAIRED_CC, newcombe_interval, tango_interval  # noqa: E402

SIZES = (20, 50, 200)
DISCORDANCE = (0.01, 0.02, 0.03, 0.05, 0.075, 0.10, 0.15, 0.20, 0.25, 0.30)
SPLITS = (0.5, 0.7, 0.85, 1.0)
CONCORDANT = (0.1, 0.5, 0.9)
METHODS = ("tango", "tango0", "newcombe")


def outcomes(n: int) -> np.ndarray:
    """Every (both, only i, only j, neither) with sum n, as rows."""
    a, b, c = (g.ravel() for g in np.meshgrid(*(np.arange(n + 1),) * 3, indexing="ij"))
    keep = a + b + c <= n
    a, b, c = a[keep], b[keep], c[keep]
    return np.stack([a, b, c, n - a - b - c], axis=1).astype(float)


def intervals(n: int, cells: np.ndarray, alpha: float = 0.05) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    a, b, c, d = cells.T
    return {"tango": tango_interval(b, c, n, alpha, cc=PAIRED_CC),
            "tango0": tango_interval(b, c, n, alpha, cc=0.0),
            "newcombe": newcombe_interval(a, b, c, d, alpha)}


def coverage(n: int, cells: np.ndarray, bounds: dict, probs: np.ndarray) -> dict[str, tuple[float, float, float, float]]:
    """Per method: (coverage, miss below, miss above, expected width) at the cell probabilities ``probs``."""
    with np.errstate(divide="ignore"):
        log_p = (special.gammaln(n + 1) - special.gammaln(cells + 1).sum(axis=1)
                 + np.sum(np.where(cells > 0, cells * np.log(np.where(probs > 0, probs, 1.0)), 0.0), axis=1))
    impossible = np.any((cells > 0) & (probs[None, :] == 0), axis=1)
    weight = np.where(impossible, 0.0, np.exp(log_p))
    delta = probs[1] - probs[2]
    out = {}
    for method, (low, high) in bounds.items():
        below = float(weight[high < delta - 1e-12].sum())    # the interval lies below the truth
        above = float(weight[low > delta + 1e-12].sum())
        out[method] = (1 - below - above, below, above, float((weight * (high - low)).sum()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    discordance = (0.01, 0.05, 0.15, 0.30) if args.quick else DISCORDANCE
    concordant = (0.5,) if args.quick else CONCORDANT
    rows = []
    with stopwatch() as took:
        for n in SIZES:
            cells = outcomes(n)
            bounds = intervals(n, cells)
            for dis, split, conc in itertools.product(discordance, SPLITS, concordant):
                p_i, p_j = dis * split, dis * (1 - split)
                both = (1 - dis) * conc
                probs = np.array([both, p_i, p_j, 1 - dis - both])
                for method, (cov, below, above, width) in coverage(n, cells, bounds, probs).items():
                    rows.append({"n": n, "discordance": dis, "split": split, "concordant": conc, "method": method,
                                 "coverage": cov, "miss_below": below, "miss_above": above, "width": width})
    summary: dict[str, dict] = {}
    for method in METHODS:
        mine = [r for r in rows if r["method"] == method]
        worst = min(mine, key=lambda r: r["coverage"])
        summary[method] = {
            "worst_coverage": round(worst["coverage"], 4),
            "worst_at": {k: worst[k] for k in ("n", "discordance", "split", "concordant")},
            "largest_one_sided_miss": round(max(max(r["miss_below"], r["miss_above"]) for r in mine), 4),
            "mean_width": round(float(np.mean([r["width"] for r in mine])), 4),
            "worst_by_n": {str(n): round(min(r["coverage"] for r in mine if r["n"] == n), 4) for n in SIZES},
            "mean_width_by_n": {str(n): round(float(np.mean([r["width"] for r in mine if r["n"] == n])), 4)
                                for n in SIZES},
        }
    print(f"{len(rows) // len(METHODS)} configurations, exact enumeration, {took.seconds:.1f} s")
    print(f"{'method':10} {'worst':>7} {'n=20':>7} {'n=50':>7} {'n=200':>7} {'max miss':>9} {'mean width':>11}  worst at")
    for method, s in summary.items():
        by = s["worst_by_n"]
        print(f"{method:10} {s['worst_coverage']:7.4f} {by['20']:7.4f} {by['50']:7.4f} {by['200']:7.4f} "
              f"{s['largest_one_sided_miss']:9.4f} {s['mean_width']:11.4f}  {s['worst_at']}")
    line = declare({"configurations": len(rows) // len(METHODS), "seconds": round(took.seconds, 2),
                    "methods": summary, "chosen": "tango"},
                   goals={"methods.tango.worst_coverage": at_least(0.94)}, ratio=None, quick=args.quick)
    for name, bound in line["goals"].items():
        print(f"goal {name} {bound}: {'met' if check(figure(line, name), bound) else 'MISSED'}")
    print(json.dumps(line))


if __name__ == "__main__":
    main()
