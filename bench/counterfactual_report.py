"""Benchmark: a counterfactual test's report and saved audit at scale (issue 54).

10^6 cases × 8 groups of 0/1 decisions with 0.1 % of the answers missing (about 8,000 incomplete cases), against a
null swap's baseline, audited by :func:`fairness_core.counterfactual.audit`; then

- the report: :func:`fairness_core.report.build` (every table: pairs, groups, discordance, omnibus, incomplete cases;
  the three figures; the answer) and its HTML, JSON and CSV zip;
- the store: :meth:`AuditStore.save` of the audit (its distinct answer patterns and counts) and :meth:`~AuditStore.load`.

Baseline, in the same process: ``pairs()`` alone, the one table every verdict reads — the ratio says what the whole
report costs over it. Goals (the project's 2-core machine): report build ≤ 3 s, HTML + JSON + zip ≤ 1 s, save ≤ 5 s,
load ≤ 1 s.

    python bench/counterfactual_report.py [--quick]

``--quick``: 10^5 cases (goals 1 s, 0.5 s, 1 s, 0.5 s).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import at_most, check, declare, figure, timed  # noqa: E402
from fairness_core import counterfactual, report  # noqa: E402
from fairness_core.services.store import AuditStore  # noqa: E402
from fairness_core.statistics.verdicts import VerdictSettings  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    cases, k = (100_000, 8) if args.quick else (1_000_000, 8)
    merit = rng.normal(size=(cases, 1)) + np.linspace(0, 0.3, k)[None, :] + rng.normal(0, 0.5, (cases, k))
    decision = (merit > 0).astype(float)
    decision[rng.random((cases, k)) < 0.001] = np.nan
    groups = np.array([*(f"group {g}" for g in range(k - 1)), "group 0 (null swap)"], dtype=object)
    rows = pd.DataFrame({"case_id": np.repeat(np.arange(cases), k), "group": np.tile(groups, cases),
                         "decision": decision.ravel()})
    audit = counterfactual.audit(rows, positive_is="benefit", baseline="group 0 (null swap)")
    p_seconds, _ = timed(audit.pairs, repeat=2)
    b_seconds, rep = timed(report.build, audit, settings=VerdictSettings(), source="bench", repeat=2)
    h_seconds, _ = timed(lambda: (rep.html(), rep.to_json(), rep.csv_zip()), repeat=2)
    store = AuditStore("sqlite://")
    s_seconds, audit_id = timed(store.save, audit, "bench", tolerance=0.05, repeat=1)
    l_seconds, loaded = timed(store.load, audit_id, repeat=2)
    assert loaded.verdicts().equals(audit.pairs())
    print(f"{cases:,} cases x {k} groups ({audit.incomplete:,} incomplete): pairs() {p_seconds:.2f} s; report build "
          f"{b_seconds:.2f} s (ratio {b_seconds / p_seconds:.2f}), HTML + JSON + zip {h_seconds:.2f} s; store save "
          f"{s_seconds:.2f} s, load {l_seconds:.2f} s")
    line = declare({"cases": cases, "groups": k, "incomplete": audit.incomplete, "pairs_seconds": round(p_seconds, 3),
                    "build_seconds": round(b_seconds, 3), "render_seconds": round(h_seconds, 3),
                    "save_seconds": round(s_seconds, 3), "load_seconds": round(l_seconds, 3)},
                   goals={"build_seconds": at_most(1.0), "render_seconds": at_most(0.5), "save_seconds": at_most(1.0),
                          "load_seconds": at_most(0.5)} if args.quick else
                   {"build_seconds": at_most(3.0), "render_seconds": at_most(1.0), "save_seconds": at_most(5.0),
                    "load_seconds": at_most(1.0)},
                   ratio=(round(b_seconds / p_seconds, 3), "report build / pairs() alone"), quick=args.quick)
    for name, bound in line["goals"].items():
        print(f"goal {name} {bound}: {'met' if check(figure(line, name), bound) else 'MISSED'}")
    print(json.dumps(line))


if __name__ == "__main__":
    main()
