"""Demo audits built from the public data shipped in ``assets/`` (see assets/PROVENANCE.md).

>>> from fairness_core import datasets
>>> audit = datasets.load_demo("ricci_a")
>>> audit.groups
['Black', 'Hispanic', 'White']
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import warnings

import numpy as np
import pandas as pd

from ..audit import Audit
from ..compare import Candidates
from ..continuous import ContinuousAudit
from ..multiclass import MulticlassAudit
from ..wording import demos
from .io import audit_from_decisions, cms_from_predictions

ASSETS_DIR = Path(__file__).resolve().parents[2] / "assets"

RICCI_RACE = {"B": "Black", "H": "Hispanic", "W": "White"}
RICCI_PASS_MARK = 70.0

#: Feature columns each demo keeps for the app's own bootstrap ensemble (Virny stability).
#: Race and sex are left out, as in the Adult predictions' model.
COMPAS_FEATURES = ["age", "priors_count", "juv_fel_count", "juv_misd_count", "juv_other_count", "c_charge_degree"]
ADULT_FEATURES = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week",
                  "workclass", "marital-status", "occupation", "relationship"]
RICCI_FEATURES = ["Position", "Oral", "Written"]


@dataclass(frozen=True)
class Demo:
    """A named demo: its title, a loader, and a plain-words reading of its numbers."""

    key: str
    title: str
    load: Callable[[Path], Audit]
    explain: Callable[[Audit], str]


@lru_cache(maxsize=None)
def _read(path: Path) -> pd.DataFrame:
    # "round_trip": every float as written (pandas' default converter is not correctly rounded; issue 51)
    return pd.read_csv(path, float_precision="round_trip")


def compas_frame(assets: Path = ASSETS_DIR) -> pd.DataFrame:
    """ProPublica-filtered COMPAS rows (6,172) with a 0/1 ``predicted_high_risk`` column."""
    df = _read(assets / "compas_propublica.csv.gz").copy()
    df["predicted_high_risk"] = df["score_text"].isin(["Medium", "High"]).astype(int)
    return df


def _compas(by: str) -> Callable[[Path], Audit]:
    def load(assets: Path) -> Audit:
        df = compas_frame(assets)
        return cms_from_predictions(
            df, "two_year_recid", "predicted_high_risk", [by], positive_label=1, positive_is="harm",
            features=df[COMPAS_FEATURES],
            source=f"COMPAS (ProPublica, Broward County, n = {len(df):,}) by {by}",
            positive_outcome="not a recidivist / low risk",
        )
    return load


def _adult(by: str) -> Callable[[Path], Audit]:
    def load(assets: Path) -> Audit:
        df = _read(assets / "adult_predictions.csv.gz")
        features = df[ADULT_FEATURES].copy()
        features[["capital-gain", "capital-loss"]] = np.log1p(features[["capital-gain", "capital-loss"]])
        return cms_from_predictions(
            df, "income_over_50k", "predicted_over_50k", [by], positive_label=1, features=features,
            positive_is="benefit",
            source=f"UCI Adult (1994 census, n = {len(df):,}) by {by}; predictions from a cross-fitted "
                   "logistic regression without race or sex",
            positive_outcome="income over $50K",
        )
    return load


def ricci_frame(assets: Path = ASSETS_DIR) -> pd.DataFrame:
    """The 118 Ricci v. DeStefano candidates with ``passed`` = combined score >= 70."""
    df = _read(assets / "ricci.csv").copy()
    df["race"] = df["Race"].map(RICCI_RACE)
    df["passed"] = (df["Combine"] >= RICCI_PASS_MARK).astype(int)
    return df


def _ricci(scenario: str) -> Callable[[Path], Audit]:
    def load(assets: Path) -> Audit:
        df = ricci_frame(assets)
        # A: the results are certified, so every passing candidate is promotable.
        # B: the results are discarded, so nobody is promoted (Briscoe 2024, Table 3.1).
        df["promoted"] = df["passed"] if scenario == "A" else 0
        what = "results certified" if scenario == "A" else "results discarded, nobody promoted"
        return cms_from_predictions(
            df, "passed", "promoted", ["race"], positive_label=1, features=df[RICCI_FEATURES], positive_is="benefit",
            perfect_predictions=scenario == "A",
            source=f"Ricci v. DeStefano, New Haven firefighter exams (n = {len(df)}), scenario {scenario}: {what}",
            positive_outcome="promoted / passed the exam (combined score >= 70)",
        )
    return load


def _hr_screening(assets: Path) -> Audit:
    df = _read(assets / "demo_hr_screening.csv")
    return audit_from_decisions(
        df, "advanced_to_interview", ["sex", "race_ethnicity"], "Yes", positive_is="benefit",
        score_columns=["tool_score"],
        source=f"An AI screening tool's decisions on {len(df):,} synthetic applicants (no outcome observed)",
        positive_outcome="advanced to interview")


def _hr_resume_ranking(assets: Path) -> Audit:
    df = _read(assets / "demo_hr_resume_ranking.csv")
    return audit_from_decisions(
        df, "recommended", ["sex", "race_ethnicity"], "Yes", positive_is="benefit", score_columns=["resume_score"],
        source=f"An AI résumé-ranking tool's scores and recommendations on {len(df):,} synthetic applicants, "
               f"applications {df['applied_on'].min()} to {df['applied_on'].max()} (no outcome observed)",
        positive_outcome="recommended for interview")


DEMOS: dict[str, Demo] = {
    d.key: d
    for d in (
        Demo("compas_race", "COMPAS recidivism by race (flipped: positive = not a recidivist)",
             _compas("race"), demos.explain_compas),
        Demo("compas_sex", "COMPAS recidivism by sex (flipped)", _compas("sex"), demos.explain_compas),
        Demo("adult_race", "Adult income by race", _adult("race"), demos.explain_adult),
        Demo("adult_sex", "Adult income by sex", _adult("sex"), demos.explain_adult),
        Demo("ricci_a", "Ricci v. DeStefano, scenario A: results certified", _ricci("A"), demos.explain_ricci_a),
        Demo("ricci_b", "Ricci v. DeStefano, scenario B: results discarded", _ricci("B"), demos.explain_ricci_b),
        Demo("hr_screening", "AI hiring screen, decisions only (Local Law 144; synthetic)", _hr_screening,
             demos.explain_hr),
        Demo("hr_resume_ranking", "AI résumé ranking, decisions and scores (Local Law 144; synthetic)",
             _hr_resume_ranking, demos.explain_hr_resume_ranking),
    )
}

DEFAULT_DEMO = "compas_race"


def load_demo(key: str, assets: Path = ASSETS_DIR) -> Audit:
    """Load demo ``key`` (one of :data:`DEMOS`) as an Audit."""
    if key not in DEMOS:
        raise ValueError(f"unknown demo {key!r}; expected one of {', '.join(DEMOS)}")
    return DEMOS[key].load(assets)



# --- demos of amounts and of ordered categories (issue 53) ---------------------------------------------------

#: COMPAS's three tiers, from one end of the scale to the other; "Low" is the end good for the person.
COMPAS_TIERS = ("Low", "Medium", "High")


@dataclass(frozen=True)
class KindDemo:
    """A demo of amounts (``kind="amount"``: a :class:`ContinuousAudit`) or of ordered categories
    (``kind="ordered"``: a :class:`MulticlassAudit`), built from a row-level table (:attr:`frame`) as an upload of
    the same columns would be. ``unit`` is the amount's (``"$ per hour"``); ``order`` and ``favourable`` the tiers'."""

    key: str
    title: str
    kind: str
    frame: Callable[[Path], pd.DataFrame]
    label: str
    prediction: str
    groups: tuple[str, ...]
    explain: Callable[[Any], str]
    positive_is: str = "benefit"
    unit: str = ""
    order: tuple[str, ...] = ()
    favourable: str = ""
    source: str = ""

    def load(self, assets: Path = ASSETS_DIR) -> ContinuousAudit | MulticlassAudit:
        """The demo's audit."""
        df = self.frame(assets)
        source = self.source.format(n=len(df))
        if self.kind == "amount":
            return ContinuousAudit.from_predictions(df[self.label], df[self.prediction], df[list(self.groups)],
                                                    positive_is=self.positive_is, source=source)
        with warnings.catch_warnings():   # a tier predicted but never observed: the audit's notes say so
            warnings.simplefilter("ignore", UserWarning)
            return MulticlassAudit.from_predictions(df[self.label], df[self.prediction], df[list(self.groups)],
                                                    list(self.order), favourable=self.favourable, source=source)


def pay_frame(assets: Path = ASSETS_DIR) -> pd.DataFrame:
    """The pay model's held-out recommendations (``scripts/make_pay_demo.py``): person, sex, exper, school, wage
    (earned, 1980 $ per hour) and predicted_wage (recommended by a model fitted without sex, cross-fitted)."""
    return _read(assets / "demo_pay_model.csv")


def compas_tier_frame(assets: Path = ASSETS_DIR) -> pd.DataFrame:
    """COMPAS's rows with the observed outcome read as a tier, as docs/methods.md does: ``observed_tier`` is
    "High" for a defendant who reoffended within two years and "Low" for one who did not (nobody is observed
    "Medium"), beside the tool's ``score_text`` (Low / Medium / High)."""
    df = compas_frame(assets)
    df["observed_tier"] = np.where(df["two_year_recid"].to_numpy() == 1, "High", "Low")
    return df


KIND_DEMOS: dict[str, KindDemo] = {
    d.key: d
    for d in (
        KindDemo("pay_model", "Pay model: recommended hourly wage by sex (amounts; Ecdat Wages1)", "amount",
                 pay_frame, "wage", "predicted_wage", ("sex",), demos.explain_pay, positive_is="benefit",
                 unit="$ per hour",
                 source="Ecdat Wages1 (US, 1976–82, n = {n:,}): hourly wage recommended by a least-squares pay "
                        "model without sex (cross-fitted) against the wage earned, 1980 $ per hour"),
        KindDemo("compas_tiers", "COMPAS's three risk tiers by race (ordered: Low < Medium < High)", "ordered",
                 compas_tier_frame, "observed_tier", "score_text", ("race",), demos.explain_compas_tiers,
                 order=COMPAS_TIERS, favourable="Low",
                 source="COMPAS (ProPublica, Broward County, n = {n:,}): score_text against the outcome read as a "
                        "tier (reoffended = High, did not = Low)"),
    )
}


def load_kind_demo(key: str, assets: Path = ASSETS_DIR) -> ContinuousAudit | MulticlassAudit:
    """Load demo ``key`` of :data:`KIND_DEMOS` (an amount or ordered-tier audit).

    >>> load_kind_demo("compas_tiers").classes
    ('Low', 'Medium', 'High')
    """
    if key not in KIND_DEMOS:
        raise ValueError(f"unknown demo {key!r}; expected one of {', '.join(KIND_DEMOS)}")
    return KIND_DEMOS[key].load(assets)


#: Row-level demo tables for the synthetic-data page: protected attributes, a 0/1 label whose
#: 1 is the beneficial outcome, and the features. Adult's capital gain and loss are heavy-tailed
#: dollars, mostly 0: they are given as ln(1 + $), and their column names say so.
ROW_DEMOS = {"adult": "UCI Adult (income over $50K)", "compas": "COMPAS (not a recidivist, flipped)"}


def demo_table(key: str, assets: Path = ASSETS_DIR) -> tuple[pd.DataFrame, str, list[str]]:
    """(rows, label column, protected columns) for ``key`` in :data:`ROW_DEMOS`."""
    if key == "adult":
        df = _read(assets / "adult_predictions.csv.gz")
        out = df[["race", "sex"]].copy()
        out["income_over_50k"] = df["income_over_50k"].astype(int)
        features = df[ADULT_FEATURES].copy()
        features[["capital-gain", "capital-loss"]] = np.log1p(features[["capital-gain", "capital-loss"]])
        features = features.rename(columns={"age": "age (years)", "capital-gain": "capital gain, ln(1 + $)",
                                            "capital-loss": "capital loss, ln(1 + $)",
                                            "hours-per-week": "hours per week"})
        return pd.concat([out, features], axis=1), "income_over_50k", ["race", "sex"]
    if key == "compas":
        df = compas_frame(assets)
        out = df[["race", "sex"]].copy()
        out["not_recidivist"] = 1 - df["two_year_recid"].astype(int)
        return pd.concat([out, df[COMPAS_FEATURES]], axis=1).reset_index(drop=True), "not_recidivist", ["race", "sex"]
    raise ValueError(f"unknown row demo {key!r}; expected one of {', '.join(ROW_DEMOS)}")


# --- candidate models for the Compare and Mitigate page ---------------------------------------------------

def _compas_candidates(assets: Path) -> Candidates:
    df = compas_frame(assets)
    reoffends = df["two_year_recid"].to_numpy() == 1
    decile, logistic = df["decile_score"].to_numpy(dtype=float), df["score_logistic"].to_numpy(dtype=float)
    return Candidates(
        "COMPAS (ProPublica, Broward County)", ~reoffends, df[["race", "sex"]].astype(str),
        {"COMPAS decile ≥ 5 (medium or high risk)": ~(decile >= 5), "COMPAS decile ≥ 8 (high risk)": ~(decile >= 8),
         "logistic regression ≥ 0.5": ~(logistic >= 0.5)},
        {"COMPAS decile score": -decile, "logistic regression": -logistic},
        "not a recidivist / low risk",
        "A high-risk score is a harm: labels, decisions and scores are flipped so that positive means 'did not "
        "reoffend / low risk'.",
        score_transforms={"COMPAS decile score": "negate", "logistic regression": "negate"},
        negative_outcome="a recidivist / high risk")


def _adult_candidates(assets: Path) -> Candidates:
    df = _read(assets / "adult_predictions.csv.gz")
    logistic, boosting = df["score_logistic"].to_numpy(dtype=float), df["score_boosting"].to_numpy(dtype=float)
    return Candidates(
        "UCI Adult (1994 census)", df["income_over_50k"].to_numpy() == 1, df[["race", "sex"]].astype(str),
        {"logistic regression": df["predicted_over_50k"].to_numpy() == 1,
         "gradient-boosted trees ≥ 0.5": boosting >= 0.5},
        {"logistic regression": logistic, "gradient-boosted trees": boosting},
        "income over $50K", "Both models are cross-fitted out of fold, without race or sex among their features.")


#: Demos with several candidate models (title, builder).
CANDIDATE_DEMOS: dict[str, tuple[str, Callable[[Path], Candidates]]] = {
    "compas": ("COMPAS: its decile score against a logistic regression", _compas_candidates),
    "adult": ("Adult: logistic regression against gradient-boosted trees", _adult_candidates),
}


def load_candidates(key: str, assets: Path = ASSETS_DIR) -> Candidates:
    """The candidate models of demo ``key`` (:data:`CANDIDATE_DEMOS`).

    >>> c = load_candidates("adult")
    >>> sorted(c.scores), len(c.y)
    (['gradient-boosted trees', 'logistic regression'], 30162)
    """
    if key not in CANDIDATE_DEMOS:
        raise KeyError(f"no candidate demo {key!r}; choose one of {', '.join(CANDIDATE_DEMOS)}")
    return CANDIDATE_DEMOS[key][1](assets)
