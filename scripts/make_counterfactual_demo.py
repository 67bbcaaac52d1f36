"""Write ``assets/demo_counterfactual_screening_synthetic.csv``: a synthetic counterfactual test of a résumé screener.

No real people and no real model: every number is drawn from a seeded generator, so the file is the same on every
run. The case it stands for: 400 base résumés, each sent to a screening model once per name group with only the
first name changed, and the model's score (0–100, one decimal) and decision (``advanced`` = Yes exactly when
``score`` ≥ 65) recorded. The 8 name groups are the four race × sex groups of Bertrand & Mullainathan (2004; the
names of assets/bertrand_mullainathan_2004_first_names.csv) and, for each, a **null swap**: another name of the same
group (the list moved one place, :func:`fairness_core.counterfactual.null_swap`), which shows how much the model
changes when nothing meaningful changes.

The built-in preference, known by construction: résumé c's latent merit q_c ~ N(0, 1) is shared by all its
variants; each variant adds independent noise ε ~ N(0, 0.35²) (what a model does when a word changes) and the
names of the two White groups add +0.45; sex adds nothing, and a null swap adds what its own group adds. Score =
60 + 15·(q_c + preference + ε), clipped to [0, 100]. So White-named variants are advanced more often than
Black-named ones, and no other pair (sex within race, a group against its null swap) differs except by chance.
Run from the repository root:

    python scripts/make_counterfactual_demo.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fairness_core import counterfactual  # noqa: E402

OUT = ROOT / "assets" / "demo_counterfactual_screening_synthetic.csv"
SEED = 20250154
CASES = 400
CUTOFF = 65
NOISE = 0.35
#: The built-in preference on the latent scale, by race of the name group (the only one there is).
PREFERENCE = {"White": 0.45, "Black": 0.0}


def make(seed: int = SEED) -> pd.DataFrame:
    """One row per résumé and name group: case_id, group, first_name, score, advanced."""
    rng = np.random.default_rng(seed)
    table = counterfactual.example_swaps()
    for group in list(table.columns):
        table = counterfactual.null_swap(table, group)
    groups = list(table.columns)
    merit = rng.normal(0.0, 1.0, CASES)
    shift = np.array([PREFERENCE[g.split()[0]] for g in groups])
    latent = merit[:, None] + shift[None, :] + rng.normal(0.0, NOISE, (CASES, len(groups)))
    score = np.clip(np.round(60 + 15 * latent, 1), 0, 100)
    names = table.to_numpy(dtype=object)[np.arange(CASES) % len(table)]     # résumé c uses row c mod 9
    df = pd.DataFrame({"case_id": np.repeat([f"R{c + 1:04d}" for c in range(CASES)], len(groups)),
                       "group": np.tile(np.array(groups, dtype=object), CASES),
                       "first_name": names.ravel(), "score": score.ravel(),
                       "advanced": np.where(score.ravel() >= CUTOFF, "Yes", "No")})
    return df


def main() -> None:
    make().to_csv(OUT, index=False, lineterminator="\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
