"""Comparisons of group i with group j (docs/methods.md; Briscoe 2024, Table 3.2).

A greater score means more bias toward group i; the *pivot* is the no-bias
value. Undefined comparisons are NaN, with :func:`undefined_reason` saying why.

>>> from fairness_core import ConfusionMatrix, bias
>>> i, j = ConfusionMatrix(1, 0, 0, 5), ConfusionMatrix(7, 0, 1, 10)
>>> round(bias.compare("OFI", i, j), 3), round(bias.compare("DI", i, j), 3)
(-0.056, 0.375)
>>> bias.four_fifths(i, j)
'bias for j'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np
import numpy.typing as npt
import pandas as pd

from . import metrics as m
from .confusion import ConfusionMatrix

FloatArray = npt.NDArray[np.float64]

NAMES: tuple[str, ...] = (
    "ACCD", "MCCD", "DI", "PP", "TE", "EO_TPR", "EO_FPR", "SP", "AAOD",
    "DCA", "DCR", "DPPL", "OFI",
)

FOUR_FIFTHS_LOW = 4 / 5
FOUR_FIFTHS_HIGH = 5 / 4


def _diff(metric: str) -> Callable[..., FloatArray]:
    f = m.info(metric).func

    def difference(ci: m.Cells, cj: m.Cells) -> FloatArray:
        return f(*ci) - f(*cj)

    return difference


def disparate_impact(ci: m.Cells, cj: m.Cells) -> FloatArray:
    """DI = (P^_i/n_i) / (P^_j/n_j) (Briscoe 2024, Table 3.2). Pivot 1.

    Undefined when either group is empty or group j has no predicted positives
    (0/0 in the thesis's Scenario B, where the thesis shows 1 by convention).
    """
    return m._ratio(m.positive_prediction_rate(*ci), m.positive_prediction_rate(*cj))


def treatment_equality(ci: m.Cells, cj: m.Cells) -> FloatArray:
    """TE = FN_i/FP_i − FN_j/FP_j (Briscoe 2024, Table 3.2). Undefined when FP_i = 0 or FP_j = 0."""
    return m._ratio(ci[1], ci[2]) - m._ratio(cj[1], cj[2])


def average_absolute_odds_difference(ci: m.Cells, cj: m.Cells) -> FloatArray:
    """AAOD = ½(|FPR_i − FPR_j| + |TPR_i − TPR_j|). Undefined where a TPR or FPR is."""
    dfpr = m.false_positive_rate(*ci) - m.false_positive_rate(*cj)
    dtpr = m.true_positive_rate(*ci) - m.true_positive_rate(*cj)
    return 0.5 * (np.abs(dfpr) + np.abs(dtpr))


def difference_conditional_acceptance(ci: m.Cells, cj: m.Cells) -> FloatArray:
    """DCA = P_i/P^_i − P_j/P^_j. Undefined when a group has no predicted positives."""
    return m._ratio(ci[0] + ci[1], ci[0] + ci[2]) - m._ratio(cj[0] + cj[1], cj[0] + cj[2])


def difference_conditional_rejection(ci: m.Cells, cj: m.Cells) -> FloatArray:
    """DCR = N_j/N^_j − N_i/N^_i (note the order). Undefined when a group has no predicted negatives."""
    return m._ratio(cj[2] + cj[3], cj[1] + cj[3]) - m._ratio(ci[2] + ci[3], ci[1] + ci[3])


def objective_fairness_index(ci: m.Cells, cj: m.Cells) -> FloatArray:
    """OFI = B_i − B_j = (FP_i−FN_i)/n_i − (FP_j−FN_j)/n_j in [−2, 2] (Briscoe 2024, Definition 3.7, eq. 3.5).

    Defined for every pair of non-empty groups. OFI > 0: group i receives more
    benefit, relative to what its labels warrant, than group j does.
    """
    return m.marginal_benefit(*ci) - m.marginal_benefit(*cj)


@dataclass(frozen=True)
class BiasInfo:
    """Registry entry for a comparison: function, long name, formula and pivot."""

    key: str
    func: Callable[[m.Cells, m.Cells], FloatArray]
    long_name: str
    formula: str
    pivot: float


_INFO: dict[str, BiasInfo] = {
    b.key: b
    for b in (
        BiasInfo("ACCD", _diff("ACC"), "accuracy difference", "ACC_i − ACC_j", 0.0),
        BiasInfo("MCCD", _diff("MCC"), "MCC difference", "MCC_i − MCC_j", 0.0),
        BiasInfo("DI", disparate_impact, "disparate impact", "(P^_i/n_i) / (P^_j/n_j)", 1.0),
        BiasInfo("PP", _diff("PPV"), "predictive parity", "PPV_i − PPV_j", 0.0),
        BiasInfo("TE", treatment_equality, "treatment equality", "FN_i/FP_i − FN_j/FP_j", 0.0),
        BiasInfo("EO_TPR", _diff("TPR"), "equalized odds, TPR part", "TPR_i − TPR_j", 0.0),
        BiasInfo("EO_FPR", _diff("FPR"), "equalized odds, FPR part", "FPR_i − FPR_j", 0.0),
        BiasInfo("SP", _diff("PPR"), "statistical parity (real-valued)", "PPR_i − PPR_j", 0.0),
        BiasInfo("AAOD", average_absolute_odds_difference, "average absolute odds difference",
                 "½(|FPR_i − FPR_j| + |TPR_i − TPR_j|)", 0.0),
        BiasInfo("DCA", difference_conditional_acceptance, "difference in conditional acceptance",
                 "P_i/P^_i − P_j/P^_j", 0.0),
        BiasInfo("DCR", difference_conditional_rejection, "difference in conditional rejection",
                 "N_j/N^_j − N_i/N^_i", 0.0),
        BiasInfo("DPPL", _diff("PPR"), "difference in positive proportions of predicted labels",
                 "P^_i/n_i − P^_j/n_j", 0.0),
        BiasInfo("OFI", objective_fairness_index, "Objective Fairness Index",
                 "(FP_i−FN_i)/n_i − (FP_j−FN_j)/n_j", 0.0),
    )
}
assert tuple(_INFO) == NAMES


def info(name: str) -> BiasInfo:
    """The registry entry of comparison ``name``; ValueError lists the valid names."""
    try:
        return _INFO[name]
    except KeyError:
        raise ValueError(f"unknown bias metric {name!r}; expected one of {', '.join(NAMES)}") from None


def _cells(cm: ConfusionMatrix) -> m.Cells:
    return tuple(np.float64(c) for c in cm.as_array())  # type: ignore[return-value]


def compare(name: str, cm_i: ConfusionMatrix, cm_j: ConfusionMatrix) -> float:
    """Score comparison ``name`` of group i against group j; NaN where undefined.

    EO_TPR / EO_FPR are the real-valued parts of equalized odds and SP the
    real-valued PPR difference (the thesis's boolean forms are these == 0).
    """
    return float(info(name).func(_cells(cm_i), _cells(cm_j)))


def compare_arrays(name: str, cells_i: m.Cells, cells_j: m.Cells) -> FloatArray:
    """Vectorized :func:`compare` over cell arrays ``(tp, fn, fp, tn)`` for each group."""
    return info(name).func(m.as_cells(*cells_i), m.as_cells(*cells_j))


def pairwise(name: str, cms: Mapping[str, ConfusionMatrix]) -> pd.DataFrame:
    """Comparison ``name`` for every ordered pair of groups: rows i, columns j."""
    groups = list(cms)
    arr = np.array([cms[g].as_array() for g in groups], dtype=np.float64).reshape(-1, 4)
    ci = tuple(arr[:, k][:, None] for k in range(4))
    cj = tuple(arr[:, k][None, :] for k in range(4))
    values = info(name).func(ci, cj)  # type: ignore[arg-type]
    values = np.broadcast_to(values, (len(groups), len(groups)))
    return pd.DataFrame(values, index=pd.Index(groups, name="i"), columns=pd.Index(groups, name="j"))


def four_fifths(cm_i: ConfusionMatrix, cm_j: ConfusionMatrix) -> str:
    """The four-fifths rule on DI: "bias for i" | "bias for j" | "no bias" | "undefined".

    DI < 4/5 means group i is selected at under four fifths of j's rate (bias for j);
    DI > 5/4 the reverse (bias for i).
    """
    return four_fifths_verdict(compare("DI", cm_i, cm_j))


def four_fifths_verdict(di: float) -> str:
    """The four-fifths verdict for a DI value (NaN gives "undefined")."""
    return str(four_fifths_verdicts(np.array([di]))[0])


def four_fifths_verdicts(di: npt.ArrayLike) -> npt.NDArray[np.object_]:
    """:func:`four_fifths_verdict` for an array of DI values at once."""
    di = np.asarray(di, dtype=float)
    with np.errstate(invalid="ignore"):
        code = np.select([~np.isfinite(di), di < FOUR_FIFTHS_LOW, di > FOUR_FIFTHS_HIGH], [0, 1, 2], 3)
    return _FOUR_FIFTHS_WORDS[code]    # one str object per word, gathered: no new string per pair


_FOUR_FIFTHS_WORDS = np.array(["undefined", "bias for j", "bias for i", "no bias"], dtype=object)


def undefined_reason(name: str, cm_i: ConfusionMatrix, cm_j: ConfusionMatrix) -> str | None:
    """Why comparison ``name`` is undefined for this pair, or None where it is defined."""
    info(name)
    if not np.isnan(compare(name, cm_i, cm_j)):
        return None
    parts = []
    for label, cm in (("i", cm_i), ("j", cm_j)):
        if cm.n == 0:
            parts.append(f"group {label} is empty")
    if parts:
        return "; ".join(parts)
    single = {"ACCD": ("ACC",), "MCCD": ("MCC",), "PP": ("PPV",), "EO_TPR": ("TPR",),
              "EO_FPR": ("FPR",), "SP": ("PPR",), "DPPL": ("PPR",), "AAOD": ("TPR", "FPR")}
    if name in single:
        for metric in single[name]:
            for label, cm in (("i", cm_i), ("j", cm_j)):
                reason = m.undefined_reason(metric, cm)
                if reason:
                    parts.append(f"{metric}_{label} undefined: {reason}")
        return "; ".join(parts)
    if name == "DI":
        if cm_j.predicted_positives == 0:
            if cm_i.predicted_positives == 0:
                return "neither group has predicted positives, 0/0"
            return "group j has no predicted positives, P^_j = 0"
    if name == "TE":
        return "; ".join(f"FP_{lbl} = 0, so FN_{lbl}/FP_{lbl} is undefined"
                         for lbl, cm in (("i", cm_i), ("j", cm_j)) if cm.fp == 0)
    if name == "DCA":
        return "; ".join(f"group {lbl} has no predicted positives (P^_{lbl} = 0)"
                         for lbl, cm in (("i", cm_i), ("j", cm_j)) if cm.predicted_positives == 0)
    if name == "DCR":
        return "; ".join(f"group {lbl} has no predicted negatives (N^_{lbl} = 0)"
                         for lbl, cm in (("i", cm_i), ("j", cm_j)) if cm.predicted_negatives == 0)
    return "undefined"


# Briscoe 2024, Table 3.2, as the thesis marks it. EO and SP are the thesis's boolean checks;
# the real-valued parts offered here (EO_TPR, EO_FPR, SP as a difference) are
# listed beside them for completeness.
PROPERTY_NAMES: tuple[str, ...] = ("OBJ", "R", "DIR", "SYM", "BND", "ALL")
_PROPERTIES: dict[str, tuple[str, tuple[bool, ...]]] = {
    "ACCD": ("Accuracy difference", (False, True, True, True, True, True)),
    "MCCD": ("MCC difference", (False, True, True, True, True, False)),
    "DI": ("Disparate impact", (False, True, True, False, False, False)),
    "PP": ("Predictive parity", (False, True, True, True, True, False)),
    "TE": ("Treatment equality", (False, True, True, True, False, False)),
    "EO": ("Equalized odds (boolean)", (False, False, False, True, True, False)),
    "SP": ("Statistical parity (boolean)", (False, False, False, True, True, True)),
    "AAOD": ("Average absolute odds difference", (False, True, False, True, True, False)),
    "DCA": ("Difference in conditional acceptance", (False, True, True, True, False, False)),
    "DCR": ("Difference in conditional rejection", (False, True, True, True, False, False)),
    "DPPL": ("Difference in positive proportions of predicted labels", (False, True, True, True, True, True)),
    "OFI": ("Objective Fairness Index", (True, True, True, True, True, True)),
}


def properties_table() -> pd.DataFrame:
    """Briscoe 2024, Table 3.2's properties: OBJ objective testing, R real-valued, DIR directed,
    SYM symmetric, BND bounded, ALL defined everywhere. Only OFI has all six."""
    rows = [
        {"metric": key, "name": name, **dict(zip(PROPERTY_NAMES, flags))}
        for key, (name, flags) in _PROPERTIES.items()
    ]
    return pd.DataFrame(rows).set_index("metric")
