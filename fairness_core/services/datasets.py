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

from ..statistics import inference
from ..audit import Audit
from ..compare import Candidates
from ..continuous import ContinuousAudit
from ..multiclass import MulticlassAudit
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


def _pair_text(audit: Audit, i: str, j: str) -> str:
    """"i vs j: OFI = x [lo, hi], DI = y [lo, hi]" with 95 % intervals (both groups as samples)."""
    ci, cj = audit.cms[i], audit.cms[j]
    o, d = inference.ofi_test(ci, cj), inference.di_interval(ci, cj)
    di_text = (f"DI = {d.estimate:.2f} [{d.ci_low:.2f}, {d.ci_high:.2f}]" if d.estimate == d.estimate
               else "DI is undefined (0/0)")
    return f"{i} vs {j}: OFI = {o.estimate:+.3f} [{o.ci_low:+.3f}, {o.ci_high:+.3f}], {di_text}"


def _explain_ricci_a(audit: Audit) -> str:
    return (
        f"{_pair_text(audit, 'Black', 'White')}; {_pair_text(audit, 'Hispanic', 'White')}. "
        "Promotion follows the objective test exactly, so no group gets more or less than its results "
        "warrant: OFI = 0 for every pair. DI is far below 4/5, so the four-fifths rule flags bias — but "
        "with OFI = 0 that gap is a systemic disparity in pass rates, not the fault of the test, as the "
        "Supreme Court found. How sure can we be? With 27 Black and 23 Hispanic candidates the 95 % "
        "intervals (square brackets) are wide: the data cannot rule out an |OFI| of 0.05 for the underlying "
        "population, and after Holm's adjustment for three pairs the DI gap is only borderline significant, "
        "so the verdict table reads these pairs as inconclusive."
    )


def _explain_ricci_b(audit: Audit) -> str:
    return (
        f"{_pair_text(audit, 'Black', 'White')}; {_pair_text(audit, 'Hispanic', 'White')}. "
        "Discarding the results denies promotion to everyone who passed. Each group's marginal benefit "
        "is minus its pass rate, so OFI is positive for Black and Hispanic against White: the candidates "
        "who passed — most of them White — lost what the test said they earned. DI is 0/0 (undefined; "
        "the original paper shows 1 by convention, 'no bias'). The Court ruled this discriminatory, agreeing "
        "with OFI, not DI; both groups' OFI against White is significant even at these sizes."
    )


def _explain_compas(audit: Audit) -> str:
    if {"African-American", "Caucasian"} <= set(audit.groups):
        return (
            f"{_pair_text(audit, 'African-American', 'Caucasian')}. Positive here means 'not a "
            "recidivist / low risk' (labels and predictions flipped). OFI < 0: relative to who actually "
            "did not reoffend, African-American defendants are rated low risk less often than Caucasian "
            "defendants — the algorithm is at fault, beyond any difference in base rates, and the interval "
            "excludes 0 by a wide margin. Pairs involving the small groups (Native American, n = 11; Asian, "
            "n = 31) are inconclusive: their intervals are too wide to tell."
        )
    return "Positive here means 'not a recidivist / low risk' (labels and predictions flipped)."


def _explain_adult(audit: Audit) -> str:
    pairs = {"sex": ("Female", "Male"), "race": ("Black", "White")}
    for i, j in pairs.values():
        if {i, j} <= set(audit.groups):
            return (
                f"{_pair_text(audit, i, j)}. DI flags a large gap in predicted high incomes; OFI says how "
                "much of it is the model's doing (its errors favouring one group) rather than the census "
                "labels' own base rates."
            )
    return ""


def _hr_screening(assets: Path) -> Audit:
    df = _read(assets / "demo_hr_screening.csv")
    return audit_from_decisions(
        df, "advanced_to_interview", ["sex", "race_ethnicity"], "Yes", positive_is="benefit",
        score_columns=["tool_score"],
        source=f"An AI screening tool's decisions on {len(df):,} synthetic applicants (no outcome observed)",
        positive_outcome="advanced to interview")


def _explain_hr(audit: Audit) -> str:
    return ("No outcome was observed: nobody knows who would have been a good hire. Decisions alone answer Local "
            "Law 144's questions — each category's selection rate and impact ratio, and the tool's scoring rate — "
            "with intervals; OFI and error rates need outcomes and are not computed. Blank and declined "
            "race/ethnicity and sex values are counted as unknown, never in the ratios.")


def _hr_resume_ranking(assets: Path) -> Audit:
    df = _read(assets / "demo_hr_resume_ranking.csv")
    return audit_from_decisions(
        df, "recommended", ["sex", "race_ethnicity"], "Yes", positive_is="benefit", score_columns=["resume_score"],
        source=f"An AI résumé-ranking tool's scores and recommendations on {len(df):,} synthetic applicants, "
               f"applications {df['applied_on'].min()} to {df['applied_on'].max()} (no outcome observed)",
        positive_outcome="recommended for interview")


def _explain_hr_resume_ranking(audit: Audit) -> str:
    return ("The tool both scores each applicant (resume_score, 0–100) and recommends the ones scoring 70 or more; "
            "no outcome was observed. Local Law 144 asks for the selection rate of the recommendations and the "
            "scoring rate of the scores (the share above the whole sample's median): pick either under Local Law "
            "144 summary on the Bias Audit page. About 6 % declined to state their sex and 5 % their race/ethnicity, "
            "and some cells are blank: all counted as unknown, never in the ratios. Native Hawaiian or Other Pacific "
            "Islander applicants are 1.2 % of the data, under the law's 2 %: listed with their count, excluded from "
            "the impact ratios.")


DEMOS: dict[str, Demo] = {
    d.key: d
    for d in (
        Demo("compas_race", "COMPAS recidivism by race (flipped: positive = not a recidivist)",
             _compas("race"), _explain_compas),
        Demo("compas_sex", "COMPAS recidivism by sex (flipped)", _compas("sex"), _explain_compas),
        Demo("adult_race", "Adult income by race", _adult("race"), _explain_adult),
        Demo("adult_sex", "Adult income by sex", _adult("sex"), _explain_adult),
        Demo("ricci_a", "Ricci v. DeStefano, scenario A: results certified", _ricci("A"), _explain_ricci_a),
        Demo("ricci_b", "Ricci v. DeStefano, scenario B: results discarded", _ricci("B"), _explain_ricci_b),
        Demo("hr_screening", "AI hiring screen, decisions only (Local Law 144; synthetic)", _hr_screening,
             _explain_hr),
        Demo("hr_resume_ranking", "AI résumé ranking, decisions and scores (Local Law 144; synthetic)",
             _hr_resume_ranking, _explain_hr_resume_ranking),
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


def _dollars(x: float) -> str:
    return f"{'−' if x < 0 else '+'}${abs(x):.2f}"


def _explain_pay(audit: ContinuousAudit) -> str:
    g = audit.by_group(reference="male")
    f, m = g.loc["female"], g.loc["male"]
    return (f"A pay model fitted without sex recommends women {_dollars(f['mean_benefit'])} an hour against what "
            f"they later earned (95 % interval {_dollars(f['mean_benefit_ci_low'])} to "
            f"{_dollars(f['mean_benefit_ci_high'])}) and men {_dollars(m['mean_benefit'])} "
            f"({_dollars(m['mean_benefit_ci_low'])} to {_dollars(m['mean_benefit_ci_high'])}): relative to the wages "
            "observed, the model favours women. The observed wages are no neutral yardstick — women earned less at "
            "the same experience and schooling — so this OFI measures how far the recommendations depart from the "
            "pay gap in the data, not a gap the model makes; the recommendations themselves are close "
            f"(women's mean over men's: {f['prediction_ratio']:.3f}).")


def _explain_compas_tiers(audit: MulticlassAudit) -> str:
    r = audit.rates()
    aa, w = r.loc["African-American"], r.loc["Caucasian"]
    return (f"COMPAS's three tiers against what happened (reoffended within two years = High, did not = Low). Among "
            f"defendants who did not reoffend, {aa['ordinal_fnr']:.0%} of African-American and {w['ordinal_fnr']:.0%}"
            " of Caucasian defendants were placed above Low (the ordinal FNR): ProPublica's finding, read from the "
            "three tiers rather than one cut. The impact ratios at each cut (Low; Medium or better) give the Local "
            "Law 144 reading. Nobody is observed Medium, so Medium's one-vs-rest TPR is undefined.")


KIND_DEMOS: dict[str, KindDemo] = {
    d.key: d
    for d in (
        KindDemo("pay_model", "Pay model: recommended hourly wage by sex (amounts; Ecdat Wages1)", "amount",
                 pay_frame, "wage", "predicted_wage", ("sex",), _explain_pay, positive_is="benefit",
                 unit="$ per hour",
                 source="Ecdat Wages1 (US, 1976–82, n = {n:,}): hourly wage recommended by a least-squares pay "
                        "model without sex (cross-fitted) against the wage earned, 1980 $ per hour"),
        KindDemo("compas_tiers", "COMPAS's three risk tiers by race (ordered: Low < Medium < High)", "ordered",
                 compas_tier_frame, "observed_tier", "score_text", ("race",), _explain_compas_tiers,
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
