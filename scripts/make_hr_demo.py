"""Write ``assets/demo_hr_screening.csv``: 2,400 synthetic applicants scored by an AI screening tool.

No real people: every row is drawn from a seeded generator, so the file is the same on every run.
The case it stands for is an HR analyst's export of a screening tool with **no outcome column**:
sex and race/ethnicity (71 blanks, a few who declined), the tool's score (whole numbers 0–100) and
whether it advanced the applicant (``advanced_to_interview`` = Yes exactly when ``tool_score`` ≥ 65).

Each race/ethnicity category has a fixed number of applicants and of applicants advanced, so its
selection rate is exact: Hispanic or Latino applicants (n = 400) are advanced at 0.23, White
applicants (n = 1,100) at 0.37 (impact ratio 0.62, below the four-fifths line); the others lie
between. Sex is assigned independently of the score. Run from the repository root:

    python scripts/make_hr_demo.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parents[1] / "assets" / "demo_hr_screening.csv"
SEED = 20240711
CUTOFF = 65
#: race/ethnicity value ("" is a blank cell): (applicants, applicants advanced)
RACE = {
    "White": (1100, 407),                                   # 0.37
    "Hispanic or Latino": (400, 92),                        # 0.23
    "Black or African American": (420, 143),                # 0.34
    "Asian": (230, 83),                                     # 0.36
    "Two or more races": (110, 38),                         # 0.35
    "American Indian or Alaska Native": (35, 11),           # 0.31
    "Native Hawaiian or Pacific Islander": (25, 8),         # 0.32
    "": (71, 23),                                           # blank: not answered
    "Prefer not to say": (9, 3),
}
SEX = {"Female": 1150, "Male": 1205, "Decline to state": 45}


def make(seed: int = SEED) -> pd.DataFrame:
    """The applicants, in a shuffled order, with ids A0001… in that order."""
    rng = np.random.default_rng(seed)
    race, advanced = [], []
    for value, (n, k) in RACE.items():
        race += [value] * n
        advanced += [True] * k + [False] * (n - k)
    advanced_ = np.array(advanced)
    n = advanced_.size
    above = np.clip(np.rint(CUTOFF + np.abs(rng.normal(0, 10, n))), CUTOFF, 100)
    below = np.clip(np.rint(rng.normal(48, 11, n)), 0, CUTOFF - 1)
    score = np.where(advanced_, above, below).astype(int)
    sex = np.repeat(list(SEX), list(SEX.values()))
    rng.shuffle(sex)
    order = rng.permutation(n)
    df = pd.DataFrame({"applicant_id": [f"A{k + 1:04d}" for k in range(n)],
                       "sex": sex[order],
                       "race_ethnicity": np.array(race, dtype=object)[order],
                       "tool_score": score[order],
                       "advanced_to_interview": np.where(advanced_[order], "Yes", "No")})
    assert (df["advanced_to_interview"].eq("Yes") == df["tool_score"].ge(CUTOFF)).all()
    return df


def main() -> None:
    make().to_csv(OUT, index=False, lineterminator="\n")
    print(f"wrote {OUT.relative_to(OUT.parents[1])}")


if __name__ == "__main__":
    main()
