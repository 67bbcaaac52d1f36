"""Benchmark: an audit of risk tiers, 5·10^6 rows (the upload limit) × 50 groups × 3 tiers in memory, and the family-wise error of the
impact ratios at every cut (issue 53).

Speed. Times ``MulticlassAudit.from_predictions`` (validation, class and group codes, the k × k counts), then the
answers read from the counts — ``rates()``, ``impact_ratios()`` (2 cuts × 1,225 pairs) and ``verdicts()`` (the
ordinal OFI through ``ContinuousAudit`` of the ranks, rows rebuilt from the counts) — and, as the baseline in the
same process, ``Audit.from_predictions`` of one cut of the same rows (the binary audit's counting). Goal: the
answers from the counts (rates + impact ratios) ≤ 2 s.

Family-wise error. Four groups (40, 60, 100 and 200 rows) drawn from ONE tier distribution (0.5, 0.3, 0.2): every
impact ratio is 1 in truth, so any interval that excludes 1 is a false claim. Holm across the 2 cuts × 6 pairs
(what ``impact_ratios`` does) against Holm within each cut alone (two families, each at α): the share of draws
with at least one false claim. Goal: the joint procedure's ≤ α + 0.025.

    python bench/multiclass.py [--quick]      # --quick: 10^6 rows, 500 draws
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import at_most, check, declare, timed  # noqa: E402
from fairness_core.audit import Audit  # noqa: E402
from fairness_core.common.validation import MAX_ROWS  # noqa: E402
from fairness_core.multiclass import MulticlassAudit  # noqa: E402
from fairness_core.statistics import ordinal  # noqa: E402
from fairness_core.statistics.verdicts import selection_verdicts  # noqa: E402

ALPHA = 0.05


def speed(rows: int, groups: int = 50) -> dict[str, float]:
    rng = np.random.default_rng(0)
    group = rng.integers(0, groups, rows)
    y = rng.integers(0, 3, rows)
    pred = np.where(rng.random(rows) < 0.6, y, rng.integers(0, 3, rows))
    base, _ = timed(Audit.from_predictions, (y == 0).astype(np.int8), (pred == 0).astype(np.int8), group,
                    positive_is="benefit", repeat=2)
    build, m = timed(MulticlassAudit.from_predictions, y, pred, group, [0, 1, 2], favourable=0, repeat=2)
    rates_s, _ = timed(m.rates, repeat=3)
    ratios_s, v = timed(m.impact_ratios, repeat=3)
    verdict_s, _ = timed(m.verdicts, 0.05, repeat=1)   # once: the ordinal audit is then cached on m
    print(f"{rows:,} rows × {groups} groups × 3 tiers ({len(v):,} impact ratios)")
    print(f"baseline Audit.from_predictions of one cut: {base:.3f} s")
    print(f"MulticlassAudit.from_predictions: {build:.3f} s ({build / base:.2f} × baseline)")
    print(f"rates(): {rates_s:.4f} s, impact_ratios(): {ratios_s:.4f} s, verdicts() (ordinal OFI, first call, "
          f"rows rebuilt): {verdict_s:.3f} s")
    return {"rows": rows, "groups": groups, "baseline_s": round(base, 4), "from_predictions_s": round(build, 4),
            "rates_s": round(rates_s, 4), "impact_ratios_s": round(ratios_s, 4),
            "answers_from_counts_s": round(rates_s + ratios_s, 4), "ordinal_verdicts_s": round(verdict_s, 4),
            "build_ratio": round(build / base, 3)}


def family_wise_error(draws: int) -> dict[str, float]:
    rng = np.random.default_rng(1)
    sizes = np.array([40, 60, 100, 200])
    names = ["a", "b", "c", "d"]
    joint = per_cut = adverse = 0
    for _ in range(draws):
        placed = np.stack([rng.multinomial(n, [0.5, 0.3, 0.2]) for n in sizes])   # favourable end first
        cuts = ordinal.cut_counts(placed, -1).T                                    # "0", "1 or better"
        v = ordinal.ratio_verdicts(names, cuts, sizes, ["0", "1 or better"], ["favourable"] * 2, ALPHA, "holm")
        joint += bool(((v["di_ci_high"] < 1) | (v["di_ci_low"] > 1)).any())
        adverse += bool((v["verdict"] == "adverse impact").any())
        alone = [selection_verdicts(names, c, sizes, ALPHA, "holm") for c in cuts]
        per_cut += any(bool(((t["di_ci_high"] < 1) | (t["di_ci_low"] > 1)).any()) for t in alone)
    print(f"{draws:,} draws under the null, 4 groups (40-200 rows), 2 cuts × 6 pairs, α = {ALPHA}")
    print(f"P(any false 'differs'): Holm across cuts and pairs {joint / draws:.4f}; Holm within each cut "
          f"{per_cut / draws:.4f}; P(any false 'adverse impact') {adverse / draws:.4f}")
    return {"draws": draws, "fwer_joint": round(joint / draws, 4), "fwer_per_cut": round(per_cut / draws, 4),
            "false_adverse_impact": round(adverse / draws, 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        figures = {**speed(10**6 if args.quick else MAX_ROWS), **family_wise_error(500 if args.quick else 4000)}
    goals = {"answers_from_counts_s": at_most(2.0), "fwer_joint": at_most(round(ALPHA + 0.025, 3))}
    for name, bound in goals.items():
        print(f"goal {name} {bound}: {'met' if check(figures[name], bound) else 'MISSED'}")
    print(json.dumps(declare(figures, goals=goals, ratio=(figures["build_ratio"], "multiclass counting / binary counting"),
                             quick=args.quick)))


if __name__ == "__main__":
    main()
