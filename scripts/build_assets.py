"""Rebuild the demo data in ``assets/`` from the public data sets (a developer tool).

The app never runs this and never reads ``../shared``: it loads the files this
script writes. Run from the repository root:

    python scripts/build_assets.py ../shared/datasets

Adult ships no model predictions, so this fits a plain L2-regularized logistic
regression (no race or sex among its features) and keeps out-of-fold
predictions and probabilities from 5-fold cross-fitting, so no row is predicted
by a model that saw it; gradient-boosted trees on the same features and folds
give a second candidate (scikit-learn, needed only here). COMPAS gets a
cross-fitted logistic regression beside its own decile score. These candidates
serve the Compare and Mitigate page. See assets/PROVENANCE.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import minimize

ASSETS = Path(__file__).resolve().parents[1] / "assets"
#: Features kept for the app's own bootstrap ensembles (Virny stability); no race or sex.
COMPAS_FEATURES = ["age", "priors_count", "juv_fel_count", "juv_misd_count", "juv_other_count", "c_charge_degree"]
ADULT_NUMERIC = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
ADULT_CATEGORICAL = ["workclass", "marital-status", "occupation", "relationship"]


def build_compas(src: Path) -> None:
    df = pd.read_csv(src / "compas-scores-two-years.csv")
    keep = (
        df["days_b_screening_arrest"].between(-30, 30)
        & (df["is_recid"] != -1)
        & (df["c_charge_degree"] != "O")
        & (df["score_text"] != "N/A")
    )
    out = df.loc[keep, ["race", "sex", "age_cat", "decile_score", "score_text", "two_year_recid",
                        *COMPAS_FEATURES]].reset_index(drop=True)
    assert len(out) == 6172, len(out)
    # A second candidate beside COMPAS's own decile score: a logistic regression on the same features the app
    # offers its ensembles (no race or sex), out-of-fold from 5-fold cross-fitting.
    num = out[["age", "priors_count", "juv_fel_count", "juv_misd_count", "juv_other_count"]].astype(float)
    num = (num - num.mean()) / num.std()
    x = np.hstack([np.ones((len(out), 1)), num.to_numpy(), (out[["c_charge_degree"]] == "F").to_numpy(dtype=float)])
    out["score_logistic"] = _cross_fitted(x, out["two_year_recid"].to_numpy(dtype=float), seed=20092).round(6)
    out.to_csv(ASSETS / "compas_propublica.csv.gz", index=False, compression={"method": "gzip", "mtime": 0})


def _logistic_fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> np.ndarray:
    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ w
        p = 1 / (1 + np.exp(-z))
        ll = np.sum(np.logaddexp(0, z) - y * z) + 0.5 * l2 * np.sum(w[1:] ** 2)
        grad = x.T @ (p - y)
        grad[1:] += l2 * w[1:]
        return ll, grad

    res = minimize(loss, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": 500})
    return res.x


def _cross_fitted(x: np.ndarray, y: np.ndarray, seed: int) -> np.ndarray:
    """Out-of-fold probabilities of a logistic regression, 5 folds."""
    folds = np.random.default_rng(seed).integers(0, 5, size=len(y))
    prob = np.zeros(len(y))
    for k in range(5):
        w = _logistic_fit(x[folds != k], y[folds != k])
        prob[folds == k] = 1 / (1 + np.exp(-(x[folds == k] @ w)))
    return prob


def _boosting(df: pd.DataFrame, y: np.ndarray, folds: np.ndarray) -> np.ndarray:
    """Out-of-fold probabilities of gradient-boosted trees (scikit-learn, a developer dependency here) on the
    logistic regression's features, the same folds."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    x = df[ADULT_NUMERIC + ADULT_CATEGORICAL].copy()
    for col in ADULT_CATEGORICAL:
        x[col] = x[col].astype("category")
    prob = np.zeros(len(y))
    for k in range(5):
        model = HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=k, max_iter=200)
        model.fit(x[folds != k], y[folds != k])
        prob[folds == k] = model.predict_proba(x[folds == k])[:, 1]
    return prob


def build_adult(src: Path) -> None:
    df = pd.read_csv(src / "adult.csv")
    y = (df["income-per-year"].str.strip() == ">50K").to_numpy(dtype=float)
    numeric, categorical = ADULT_NUMERIC, ADULT_CATEGORICAL
    num = df[numeric].astype(float)
    num["capital-gain"] = np.log1p(num["capital-gain"])
    num["capital-loss"] = np.log1p(num["capital-loss"])
    num = (num - num.mean()) / num.std()
    x = pd.concat([num, pd.get_dummies(df[categorical], drop_first=True, dtype=float)], axis=1).to_numpy()
    x = np.hstack([np.ones((len(x), 1)), x])
    rng = np.random.default_rng(20091)
    folds = rng.integers(0, 5, size=len(df))
    pred = np.zeros(len(df), dtype=int)
    score = np.zeros(len(df))
    for k in range(5):
        w = _logistic_fit(x[folds != k], y[folds != k])
        pred[folds == k] = (x[folds == k] @ w > 0).astype(int)
        score[folds == k] = 1 / (1 + np.exp(-(x[folds == k] @ w)))
    acc = (pred == y).mean()
    print(f"adult: out-of-fold accuracy {acc:.4f}")
    stripped = df.copy()
    for col in ADULT_CATEGORICAL:
        stripped[col] = stripped[col].str.strip()
    boosted = _boosting(stripped, y, folds)
    print(f"adult: boosted trees out-of-fold accuracy {((boosted >= 0.5) == y).mean():.4f}")
    out = pd.DataFrame({
        "race": df["race"].str.strip(), "sex": df["sex"].str.strip(),
        "income_over_50k": y.astype(int), "predicted_over_50k": pred,
        "score_logistic": score.round(6), "score_boosting": boosted.round(6),
    })
    for col in numeric:
        out[col] = df[col].astype(int)
    for col in categorical:
        out[col] = df[col].str.strip()
    out.to_csv(ASSETS / "adult_predictions.csv.gz", index=False, compression={"method": "gzip", "mtime": 0})


def build_ricci(src: Path) -> None:
    df = pd.read_csv(src / "ricci.csv")
    df[["Position", "Oral", "Written", "Race", "Combine"]].to_csv(ASSETS / "ricci.csv", index=False)


WEATHER_COLUMNS = ["Date (MM/DD/YYYY)", "Time (HH:MM)", "Dry-bulb (C)", "Dew-point (C)", "Pressure (mbar)",
                   "Wspd (m/s)", "GHI (W/m^2)"]


def build_weather(src: Path) -> None:
    """The two TMY3 sites: the station line as is, then only the columns the forecaster uses."""
    import gzip

    for path in sorted((src / "weather").glob("tmy3_*.csv")):
        station = path.read_text().splitlines()[0]
        df = pd.read_csv(path, skiprows=1)[WEATHER_COLUMNS]
        with gzip.GzipFile(ASSETS / f"{path.name}.gz", "wb", mtime=0) as f:
            f.write((station + "\n" + df.to_csv(index=False)).encode())


def main(src: str) -> None:
    path = Path(src)
    ASSETS.mkdir(exist_ok=True)
    build_compas(path)
    build_adult(path)
    build_ricci(path)
    build_weather(path)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/datasets")
