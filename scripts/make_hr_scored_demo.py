"""Write ``assets/demo_hr_resume_ranking.csv``: 3,000 synthetic applicants ranked by an AI résumé-screening tool.

No real people: every row is drawn from a seeded generator, so the file is the same on every run.
The case it stands for is an employer's export of a tool that both **scores** (``resume_score``, 0–100 with
one decimal) and **decides** (``recommended`` = Yes exactly when the score is at least 70), with **no
outcome column**, as Local Law 144's bias audit sees it: the selection rate of the decisions and the
scoring rate of the scores (the share above the whole sample's median).

What an auditor meets in such a file, on purpose:

- a realistic share of applicants who declined to give their sex (6 %) or race/ethnicity (5 %),
  written "Decline to state", and blank cells in both columns (1.5 % each);
- a tiny category: Native Hawaiian or Other Pacific Islander, 36 applicants (1.2 %, under the law's 2 %),
  which the summary lists as excluded from the impact ratios with its count;
- ``applied_on``, the date of each application (6 January to 27 June 2025): the data's date range.

Race/ethnicity and sex counts are fixed; each applicant's score is drawn from a normal distribution whose mean
depends on the category (White and Asian applicants score a few points higher on average), so the impact ratios
show a moderate disparity. Run from the repository root:

    python scripts/make_hr_scored_demo.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parents[1] / "assets" / "demo_hr_resume_ranking.csv"
SEED = 20250706
CUTOFF = 70.0
FIRST_DAY, DAYS = np.datetime64("2025-01-06"), 172   # to 27 June 2025
#: race/ethnicity value ("" is a blank cell): (applicants, mean score)
RACE = {
    "White": (1050, 62.0),
    "Black or African American": (600, 56.5),
    "Hispanic or Latino": (540, 57.0),
    "Asian": (390, 63.0),
    "Two or More Races": (120, 60.0),
    "American Indian or Alaska Native": (69, 57.5),
    "Native Hawaiian or Other Pacific Islander": (36, 58.0),   # 1.2 %: under the 2 % rule
    "Decline to state": (150, 60.0),
    "": (45, 60.0),
}
#: sex value: (applicants, shift of the mean score)
SEX = {"Female": (1380, -1.0), "Male": (1395, 1.0), "Decline to state": (180, 0.0), "": (45, 0.0)}


def make(seed: int = SEED) -> pd.DataFrame:
    """The applicants in a shuffled order, with ids R0001… in that order and dates in order of application."""
    rng = np.random.default_rng(seed)
    race = np.repeat(list(RACE), [n for n, _ in RACE.values()])
    race_mean = np.repeat([m for _, m in RACE.values()], [n for n, _ in RACE.values()])
    sex_order = rng.permutation(race.size)
    sex = np.repeat(list(SEX), [n for n, _ in SEX.values()])[sex_order]
    shift = np.repeat([s for _, s in SEX.values()], [n for n, _ in SEX.values()])[sex_order]
    score = np.round(np.clip(rng.normal(race_mean + shift, 12.0), 0, 100), 1)
    order = rng.permutation(race.size)
    days = np.sort(rng.integers(0, DAYS + 1, race.size))
    df = pd.DataFrame({"applicant_id": [f"R{k + 1:04d}" for k in range(race.size)],
                       "applied_on": (FIRST_DAY + days).astype(str),
                       "sex": sex[order], "race_ethnicity": race[order], "resume_score": score[order],
                       "recommended": np.where(score[order] >= CUTOFF, "Yes", "No")})
    assert (df["recommended"].eq("Yes") == df["resume_score"].ge(CUTOFF)).all()
    return df


def main() -> None:
    make().to_csv(OUT, index=False, lineterminator="\n")
    print(f"wrote {OUT.relative_to(OUT.parents[1])}")


if __name__ == "__main__":
    main()
