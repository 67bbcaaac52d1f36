"""The demos' readings: what each demo's numbers say, in plain words, under its verdicts (the Upload page's "What the
numbers say"). :mod:`fairness_core.services.datasets` builds the demo audits and names the reading of each; the
sentences are here, on the wording floor, with every interval quoted as the library computed it.

>>> from fairness_core.statistics.confusion import ConfusionMatrix as CM
>>> class Two:
...     groups = ["a", "b"]
...     cms = {"a": CM(30, 10, 10, 50), "b": CM(20, 20, 20, 40)}
>>> pair_text(Two(), "a", "b")    # B = (FP − FN)/n = 0 in both, 40 % selected in both
'a vs b: OFI = +0.000 [-0.159, +0.159], DI = 1.00 [0.71, 1.41]'
"""

from __future__ import annotations

from typing import Mapping, Protocol

import pandas as pd

from ..statistics import inference
from ..statistics.confusion import ConfusionMatrix


class _Pairs(Protocol):
    """What a reading of yes/no decisions needs of an audit: its groups and their confusion matrices."""

    @property
    def groups(self) -> list[str]: ...

    @property
    def cms(self) -> Mapping[str, ConfusionMatrix]: ...


class _Amounts(Protocol):
    """What the pay demo's reading needs of an audit of amounts: each group's mean benefit with its interval."""

    def by_group(self, reference: str | None = None) -> pd.DataFrame: ...


class _Tiers(Protocol):
    """What the COMPAS tiers' reading needs of an audit of classes: each group's rates."""

    def rates(self) -> pd.DataFrame: ...


def pair_text(audit: _Pairs, i: str, j: str) -> str:
    """"i vs j: OFI = x [lo, hi], DI = y [lo, hi]" with 95 % intervals (both groups as samples)."""
    ci, cj = audit.cms[i], audit.cms[j]
    o, d = inference.ofi_test(ci, cj), inference.di_interval(ci, cj)
    di_text = (f"DI = {d.estimate:.2f} [{d.ci_low:.2f}, {d.ci_high:.2f}]" if d.estimate == d.estimate
               else "DI is undefined (0/0)")
    return f"{i} vs {j}: OFI = {o.estimate:+.3f} [{o.ci_low:+.3f}, {o.ci_high:+.3f}], {di_text}"


def explain_ricci_a(audit: _Pairs) -> str:
    return (
        f"{pair_text(audit, 'Black', 'White')}; {pair_text(audit, 'Hispanic', 'White')}. "
        "Promotion follows the objective test exactly, so no group gets more or less than its results "
        "warrant: OFI = 0 for every pair. DI is far below 4/5, so the four-fifths rule flags bias — but "
        "with OFI = 0 that gap is a systemic disparity in pass rates, not the fault of the test, as the "
        "Supreme Court found. How sure can we be? With 27 Black and 23 Hispanic candidates the 95 % "
        "intervals (square brackets) are wide: the data cannot rule out an |OFI| of 0.05 for the underlying "
        "population, and after Holm's adjustment for three pairs the DI gap is only borderline significant, "
        "so the verdict table reads these pairs as inconclusive."
    )


def explain_ricci_b(audit: _Pairs) -> str:
    return (
        f"{pair_text(audit, 'Black', 'White')}; {pair_text(audit, 'Hispanic', 'White')}. "
        "Discarding the results denies promotion to everyone who passed. Each group's marginal benefit "
        "is minus its pass rate, so OFI is positive for Black and Hispanic against White: the candidates "
        "who passed — most of them White — lost what the test said they earned. DI is 0/0 (undefined; "
        "the original paper shows 1 by convention, 'no bias'). The Court ruled this discriminatory, agreeing "
        "with OFI, not DI; both groups' OFI against White is significant even at these sizes."
    )


def explain_compas(audit: _Pairs) -> str:
    if {"African-American", "Caucasian"} <= set(audit.groups):
        return (
            f"{pair_text(audit, 'African-American', 'Caucasian')}. Positive here means 'not a "
            "recidivist / low risk' (labels and predictions flipped). OFI < 0: relative to who actually "
            "did not reoffend, African-American defendants are rated low risk less often than Caucasian "
            "defendants — the algorithm is at fault, beyond any difference in base rates, and the interval "
            "excludes 0 by a wide margin. Pairs involving the small groups (Native American, n = 11; Asian, "
            "n = 31) are inconclusive: their intervals are too wide to tell."
        )
    return "Positive here means 'not a recidivist / low risk' (labels and predictions flipped)."


def explain_adult(audit: _Pairs) -> str:
    pairs = {"sex": ("Female", "Male"), "race": ("Black", "White")}
    for i, j in pairs.values():
        if {i, j} <= set(audit.groups):
            return (
                f"{pair_text(audit, i, j)}. DI flags a large gap in predicted high incomes; OFI says how "
                "much of it is the model's doing (its errors favouring one group) rather than the census "
                "labels' own base rates."
            )
    return ""


def explain_hr(audit: _Pairs) -> str:
    return ("No outcome was observed: nobody knows who would have been a good hire. Decisions alone answer Local "
            "Law 144's questions — each category's selection rate and impact ratio, and the tool's scoring rate — "
            "with intervals; OFI and error rates need outcomes and are not computed. Blank and declined "
            "race/ethnicity and sex values are counted as unknown, never in the ratios.")


def explain_hr_resume_ranking(audit: _Pairs) -> str:
    return ("The tool both scores each applicant (resume_score, 0–100) and recommends the ones scoring 70 or more; "
            "no outcome was observed. Local Law 144 asks for the selection rate of the recommendations and the "
            "scoring rate of the scores (the share above the whole sample's median): pick either under Local Law "
            "144 summary on the Bias Audit page. About 6 % declined to state their sex and 5 % their race/ethnicity, "
            "and some cells are blank: all counted as unknown, never in the ratios. Native Hawaiian or Other Pacific "
            "Islander applicants are 1.2 % of the data, under the law's 2 %: listed with their count, excluded from "
            "the impact ratios.")


def _dollars(x: float) -> str:
    return f"{'−' if x < 0 else '+'}${abs(x):.2f}"


def explain_pay(audit: _Amounts) -> str:
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


def explain_compas_tiers(audit: _Tiers) -> str:
    r = audit.rates()
    aa, w = r.loc["African-American"], r.loc["Caucasian"]
    return (f"COMPAS's three tiers against what happened (reoffended within two years = High, did not = Low). Among "
            f"defendants who did not reoffend, {aa['ordinal_fnr']:.0%} of African-American and {w['ordinal_fnr']:.0%}"
            " of Caucasian defendants were placed above Low (the ordinal FNR): ProPublica's finding, read from the "
            "three tiers rather than one cut. The impact ratios at each cut (Low; Medium or better) give the Local "
            "Law 144 reading. Nobody is observed Medium, so Medium's one-vs-rest TPR is undefined.")
