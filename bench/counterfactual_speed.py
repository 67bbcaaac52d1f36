"""Benchmark: counterfactual tests at scale (issue 54).

1. Variants: 10,000 synthetic résumés (about 2,000 characters each, every one with a first name, a last name, a
   possessive and pronouns in several case forms) × 8 groups written by
   :func:`fairness_core.counterfactual.variants`. Baseline, in the same process: a plain ``str.replace`` of every
   table word in every text for every group (no word boundaries, no case forms, no record of what changed) —
   the ratio says what the whole-word, case-preserving swap with its ``changed`` column costs over it.
2. Audit: 10^6 cases × 8 groups of 0/1 decisions (8 million rows) read by :func:`~fairness_core.counterfactual.audit`,
   then ``by_group()``, ``pairs()`` (28 pairs) and ``omnibus()``. Baseline: pandas' groupby mean of the decisions by
   group (the unpaired selection rates alone).

Goals: variants ≤ 5 s, audit end to end ≤ 2 s (on the project's 2-core machine; wall time, best of ``repeat``).

    python bench/counterfactual_speed.py [--quick]

``--quick``: 1,000 résumés and 10^5 cases (goals 1 s and 0.5 s).
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
from fairness_core import counterfactual  # noqa: E402

FILLER = ("Managed a team of analysts and delivered quarterly reports on time. Built data pipelines in Python "
          "and SQL; mentored junior staff; presented results to the board. ")


def swaps() -> pd.DataFrame:
    """Eight groups (Bertrand & Mullainathan's four and a null swap of each), White male first — the base texts'
    words — with a last-name row and the pronouns' case forms (he/she, his/her, him/her, himself/herself)."""
    names = counterfactual.example_swaps()
    names = names[["White male", "White female", "Black male", "Black female"]]
    for group in list(names.columns):
        names = counterfactual.null_swap(names, group)
    male = ["he", "his", "him", "himself"]
    female = ["she", "her", "her", "herself"]
    pronouns = pd.DataFrame({g: male if " male" in g else female for g in names.columns})
    last = pd.DataFrame({g: ["Baker" if g.startswith("White") else "Washington"] for g in names.columns})
    return pd.concat([names, last, pronouns], ignore_index=True)


def resumes(n: int, table: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    first = table.iloc[:9, 0].to_numpy()[rng.integers(0, 9, n)]
    texts = [f"{name.upper()} BAKER\n{name} Baker is a senior analyst. {FILLER * 6}He led {name}'s team; his "
             f"manager told him he exceeded targets. {FILLER * 4}He describes himself as careful." for name in first]
    return pd.DataFrame({"resume": texts})


def plain_replace(texts: list[str], table: pd.DataFrame) -> list[str]:
    out = []
    source = table.iloc[:, 0].tolist()
    for group in table.columns:
        targets = table[group].tolist()
        for t in texts:
            for a, b in zip(source, targets):
                t = t.replace(a, b)
            out.append(t)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n_texts, n_cases = (1_000, 100_000) if args.quick else (10_000, 1_000_000)
    table = swaps()
    base = resumes(n_texts, table, rng)
    v_seconds, v = timed(counterfactual.variants, base, "resume", table, repeat=2)
    r_seconds, _ = timed(plain_replace, base["resume"].tolist(), table, repeat=1)
    k = 8
    y = (rng.random((n_cases, k)) < 0.4).astype(np.int8)
    groups = np.array([f"group {g}" for g in range(k)], dtype=object)
    rows = pd.DataFrame({"case_id": np.repeat(np.arange(n_cases), k), "group": np.tile(groups, n_cases),
                         "decision": y.ravel()})

    def whole() -> tuple:
        a = counterfactual.audit(rows, positive_is="benefit")
        return a.by_group(), a.pairs(), a.omnibus()

    a_seconds, (_, pairs, _) = timed(whole, repeat=2)
    g_seconds, _ = timed(lambda: rows.groupby("group")["decision"].mean(), repeat=2)
    print(f"variants: {n_texts:,} résumés x {len(table.columns)} groups = {len(v):,} rows in {v_seconds:.2f} s "
          f"(str.replace baseline {r_seconds:.2f} s: ratio {v_seconds / r_seconds:.2f})")
    print(f"audit: {n_cases:,} cases x {k} groups, {len(pairs)} pairs, by_group + pairs + omnibus in {a_seconds:.2f} s "
          f"(groupby-mean baseline {g_seconds:.2f} s: ratio {a_seconds / g_seconds:.1f})")
    line = declare({"texts": n_texts, "groups": len(table.columns), "variants_seconds": round(v_seconds, 3),
                    "replace_seconds": round(r_seconds, 3), "cases": n_cases, "audit_seconds": round(a_seconds, 3),
                    "groupby_seconds": round(g_seconds, 3)},
                   goals={"variants_seconds": at_most(1.0), "audit_seconds": at_most(0.5)} if args.quick else
                   {"variants_seconds": at_most(5.0), "audit_seconds": at_most(2.0)},
                   ratio=(round(v_seconds / r_seconds, 3), "variants / plain str.replace"), quick=args.quick)
    for name, bound in line["goals"].items():
        print(f"goal {name} {bound}: {'met' if check(figure(line, name), bound) else 'MISSED'}")
    print(json.dumps(line))


if __name__ == "__main__":
    main()
