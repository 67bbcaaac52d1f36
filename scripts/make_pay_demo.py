"""Write ``assets/demo_pay_model.csv``: a pay model's held-out recommendations of an hourly wage, for the pay demo.

The data are Ecdat's ``Wages1`` (``assets/wages1.csv``, 3,294 US workers observed 1976–1982; ``wage`` in 1980
dollars per hour, ``exper`` years of experience, ``school`` years of schooling, ``sex``). The "pay model" is an
ordinary least-squares fit of ``wage`` on ``exper``, ``exper²`` and ``school`` — **without** ``sex`` — and every
row's ``predicted_wage`` comes from the fold that did not see it (5-fold cross-fitting, folds shuffled with a
fixed seed), so each recommendation is held out. The app audits it as an amount: benefit = recommended − earned
wage ("a higher recommended wage benefits the person"), by sex. Deterministic; run from the repository root:

    python scripts/make_pay_demo.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import KFold

ASSETS = Path(__file__).resolve().parents[1] / "assets"
SOURCE, OUT = ASSETS / "wages1.csv", ASSETS / "demo_pay_model.csv"
SEED, FOLDS = 20250801, 5


def features(df: pd.DataFrame) -> np.ndarray:
    """The model's inputs: experience, its square and schooling (never sex)."""
    exper = df["exper"].to_numpy(dtype=float)
    return np.column_stack([exper, exper ** 2, df["school"].to_numpy(dtype=float)])


def cross_fitted(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each row's prediction from the model fitted on the other folds, and its fold."""
    x, y = features(df), df["wage"].to_numpy(dtype=float)
    pred, fold = np.empty(len(df)), np.empty(len(df), dtype=int)
    for k, (train, test) in enumerate(KFold(FOLDS, shuffle=True, random_state=SEED).split(x)):
        pred[test] = LinearRegression().fit(x[train], y[train]).predict(x[test])
        fold[test] = k
    return pred, fold


def main() -> None:
    df = pd.read_csv(SOURCE, index_col=0)
    pred, fold = cross_fitted(df)
    out = pd.DataFrame({"person": np.arange(1, len(df) + 1), "sex": df["sex"].to_numpy(),
                        "exper": df["exper"].to_numpy(), "school": df["school"].to_numpy(),
                        "wage": df["wage"].round(4).to_numpy(), "predicted_wage": pred.round(4), "fold": fold})
    out.to_csv(OUT, index=False)
    err = out["predicted_wage"] - out["wage"]
    print(f"{len(out):,} rows -> {OUT.relative_to(ASSETS.parent)}; held-out MAE {err.abs().mean():.3f} $/h, "
          f"mean (predicted - earned) by sex: {err.groupby(out['sex']).mean().round(3).to_dict()}")


if __name__ == "__main__":
    main()
