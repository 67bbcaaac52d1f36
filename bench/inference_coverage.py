"""Benchmark: coverage and size of the OFI and DI intervals at small n (issue 13), by simulation and enumeration.

For every size pair (5 vs 5, 5 vs 3,000, 11 vs 31, 31 vs 2,103, 11 vs 3,000, 50 vs 50, 200 vs 500, 1,500 vs 3,000,
where "auto" uses the Wald interval for most multinomials)
and every pair of known 4-cell multinomials (the demo data's groups with >= 30 rows, plus hard
cases: no errors, many errors of both kinds, one kind only, rare selection), it reports

- OFI: the share of seeded Monte Carlo draws whose 95 % interval covers the true Δ, for "auto",
  "adjusted" and "wald"; the test's size (rejection rate at α = 0.05) under the strong null
  (both groups share one distribution) and the weak null (equal benefit, different spreads),
  for "auto" and for the exact permutation p-value;
- DI: the exact coverage of the 95 % interval ("auto"), summing binomial probabilities over all
  selection counts.

Goals: coverage >= 93 % and size <= 6.5 % everywhere for the methods "auto" picks. Prints a
table and a JSON last line. The cheaper version of this run is a test (tests/test_inference.py).

    python bench/inference_coverage.py [--draws 40000]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fairness_core import ConfusionMatrix, inference  # noqa: E402
from test_inference import EXTREMES, _demo_rates, _di_exact_coverage, _draw  # noqa: E402

SIZES = [(5, 5), (5, 3000), (11, 31), (31, 2103), (11, 3000), (50, 50), (200, 500), (1500, 3000)]
WEAK_NULLS = [((0.4, 0.1, 0.1), (0.45, 0.0, 0.0)), ((0.1, 0.3, 0.3), (0.5, 0.05, 0.05)),
              ((0.45, 0.0, 0.0), (0.2, 0.2, 0.2)), ((0.3, 0.1, 0.2), (0.4, 0.05, 0.15))]


def ofi_run(ni: int, nj: int, ri, rj, draws: int, rng) -> dict[str, float]:  # type: ignore[no-untyped-def]
    ci, cj = _draw(rng, ni, ri, draws), _draw(rng, nj, rj, draws)
    delta = (ri[2] - ri[1]) - (rj[2] - rj[1])
    out = {}
    for method in ("auto", "adjusted", "wald"):
        r = inference.ofi_arrays(ci[:, 2], ci[:, 1], ni, cj[:, 2], cj[:, 1], nj, (0.95,), method)
        out[f"cover_{method}"] = float(((r["ci_low_0.95"] <= delta + 1e-12) & (r["ci_high_0.95"] >= delta - 1e-12)).mean())
        out[f"reject_{method}"] = float((r["p_value"] < 0.05).mean())
    return out


def permutation_size(ni: int, nj: int, ri, rj, draws: int, rng) -> float:  # type: ignore[no-untyped-def]
    ci, cj = _draw(rng, ni, ri, draws), _draw(rng, nj, rj, draws)
    p = [inference.permutation_p_value(ConfusionMatrix(*a), ConfusionMatrix(*b)) for a, b in zip(ci, cj)]
    return float(np.mean(np.array(p) < 0.05))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=40000)
    ap.add_argument("--permutation-draws", type=int, default=400)
    args = ap.parse_args()
    rng = np.random.default_rng(20261122)
    real = _demo_rates()
    configs = [(a, b) for a in real[:6] for b in real[:6] if a != b][:12] + [(e, real[0]) for e in EXTREMES] \
        + [(real[1], e) for e in EXTREMES] + [(EXTREMES[1], EXTREMES[2])]
    strong = [(r, r) for r in real[:6]] + [(e, e) for e in EXTREMES]
    print(f"{'n_i':>5} {'n_j':>6} | {'OFI cover min: auto':>19} {'adjusted':>9} {'wald':>7} | {'size max: strong':>16} "
          f"{'weak':>6} {'perm weak':>9} | {'DI cover min':>12}")
    rows = []
    for ni, nj in SIZES:
        cov = [ofi_run(ni, nj, ri, rj, args.draws, rng) for ri, rj in configs]
        strong_size = max(ofi_run(ni, nj, r, r, args.draws, rng)["reject_auto"] for r, _ in strong)
        weak_size = max(ofi_run(ni, nj, ri, rj, args.draws, rng)["reject_auto"] for ri, rj in WEAK_NULLS)
        perm = (max(permutation_size(ni, nj, ri, rj, args.permutation_draws, rng) for ri, rj in WEAK_NULLS)
                if ni * nj <= 20000 or min(ni, nj) <= 11 else float("nan"))
        rates = sorted({round(tp + fp, 4) for tp, _, fp in real}) + [0.02, 0.95]
        ps = rates[:: max(1, len(rates) // 6)] + [0.02, 0.95]
        di_cover = min(_di_exact_coverage(ni, pi, nj, pj) for pi in ps for pj in ps)
        row = {"n_i": ni, "n_j": nj, **{f"min_cover_{m}": min(c[f"cover_{m}"] for c in cov)
                                          for m in ("auto", "adjusted", "wald")},
               "max_size_strong": strong_size, "max_size_weak": weak_size, "permutation_size_weak": perm,
               "di_min_cover": di_cover}
        rows.append(row)
        print(f"{ni:>5} {nj:>6} | {row['min_cover_auto']:19.3f} {row['min_cover_adjusted']:9.3f} "
              f"{row['min_cover_wald']:7.3f} | {strong_size:16.3f} {weak_size:6.3f} {perm:9.3f} | {di_cover:12.3f}",
              flush=True)
    ok = all(r["min_cover_auto"] >= 0.93 and r["di_min_cover"] >= 0.93 and
             max(r["max_size_strong"], r["max_size_weak"]) <= 0.065 for r in rows)
    print("goals (coverage >= 0.93, size <= 0.065):", "met" if ok else "NOT met")
    print(json.dumps({"rows": [{k: (None if isinstance(v, float) and v != v else round(v, 4) if isinstance(v, float)
                                    else v) for k, v in r.items()}
                               for r in rows], "goals_met": ok, "draws": args.draws}))


if __name__ == "__main__":
    main()
