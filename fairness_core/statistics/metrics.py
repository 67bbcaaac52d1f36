"""Single-group confusion-matrix metrics (docs/methods.md; Briscoe 2024, Tables 2.2-2.4, Briscoe, Kepler et al., Tables 3-5).

Every metric is one vectorized function of the four cells. Where a metric is
undefined (a zero denominator) the value is NaN, and :func:`undefined_reason`
says why in words; it is never silently 0 or 1.

>>> from fairness_core import ConfusionMatrix, metrics
>>> metrics.compute("TPR", ConfusionMatrix(1, 0, 0, 5))
1.0
>>> metrics.undefined_reason("PPV", ConfusionMatrix(0, 1, 0, 5))
'no predicted positives (TP + FP = 0)'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, overload

import numpy as np
import numpy.typing as npt

from .confusion import ConfusionMatrix

FloatArray = npt.NDArray[np.float64]
Cells = tuple[FloatArray, FloatArray, FloatArray, FloatArray]

NAMES: tuple[str, ...] = (
    "ACC", "PREV", "PPR", "INACC", "NPREV", "PNR",
    "TPR", "FNR", "FPR", "TNR", "PPV", "FDR", "NPV", "FOR",
    "F1", "F1_ORIG", "MCC", "PT", "B",
)

BINOMIAL: tuple[str, ...] = NAMES[:6]
JOINT_RATIO: tuple[str, ...] = NAMES[6:14]


def _ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    """num / den, NaN where den == 0."""
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


# --- binomial metrics: a sum of cells over n -------------------------------------------

def accuracy(tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray) -> FloatArray:
    """ACC = (TP + TN) / n (Briscoe 2024, Table 2.2). Undefined when n = 0."""
    return _ratio(tp + tn, tp + fn + fp + tn)


def prevalence(tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray) -> FloatArray:
    """PREV = (TP + FN) / n, the expected benefit E[b] (Briscoe 2024, eq. 3.3). Undefined when n = 0."""
    return _ratio(tp + fn, tp + fn + fp + tn)


def positive_prediction_rate(tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray) -> FloatArray:
    """PPR = (TP + FP) / n, the benefit b (Briscoe 2024, eq. 3.2). Undefined when n = 0."""
    return _ratio(tp + fp, tp + fn + fp + tn)


def inaccuracy(tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray) -> FloatArray:
    """INACC = (FP + FN) / n. Undefined when n = 0."""
    return _ratio(fp + fn, tp + fn + fp + tn)


def negative_prevalence(tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray) -> FloatArray:
    """NPREV = (FP + TN) / n. Undefined when n = 0."""
    return _ratio(fp + tn, tp + fn + fp + tn)


def negative_prediction_rate(tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray) -> FloatArray:
    """PNR = (FN + TN) / n. Undefined when n = 0."""
    return _ratio(fn + tn, tp + fn + fp + tn)


# --- joint ratio metrics: one cell over the sum of two ---------------------------------

def true_positive_rate(tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray) -> FloatArray:
    """TPR = TP / (TP + FN) (Briscoe 2024, Table 2.3). Undefined when TP + FN = 0."""
    return _ratio(tp, tp + fn)


def false_negative_rate(tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray) -> FloatArray:
    """FNR = FN / (FN + TP). Undefined when TP + FN = 0."""
    return _ratio(fn, tp + fn)


def false_positive_rate(tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray) -> FloatArray:
    """FPR = FP / (FP + TN). Undefined when FP + TN = 0."""
    return _ratio(fp, fp + tn)


def true_negative_rate(tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray) -> FloatArray:
    """TNR = TN / (TN + FP). Undefined when FP + TN = 0."""
    return _ratio(tn, fp + tn)


def positive_predictive_value(tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray) -> FloatArray:
    """PPV = TP / (TP + FP). Undefined when TP + FP = 0."""
    return _ratio(tp, tp + fp)


def false_discovery_rate(tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray) -> FloatArray:
    """FDR = FP / (FP + TP). Undefined when TP + FP = 0."""
    return _ratio(fp, tp + fp)


def negative_predictive_value(tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray) -> FloatArray:
    """NPV = TN / (TN + FN) (the thesis's Table 2.3 typo TN/(TN+FP) corrected). Undefined when TN + FN = 0."""
    return _ratio(tn, tn + fn)


def false_omission_rate(tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray) -> FloatArray:
    """FOR = FN / (FN + TN). Undefined when TN + FN = 0."""
    return _ratio(fn, tn + fn)


# --- other metrics ----------------------------------------------------------------------

def f1_score(tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray) -> FloatArray:
    """Simplified F1 = 2TP / (2TP + FP + FN) (Briscoe 2024, Table 2.4). Undefined when TP = FP = FN = 0."""
    return _ratio(2 * tp, 2 * tp + fp + fn)


def f1_score_original(tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray) -> FloatArray:
    """Original F1 = 2 / (1/PPV + 1/TPR), the harmonic mean of precision and recall.

    Undefined when TP = 0 (a reciprocal is infinite or 0/0). Where defined it
    equals the simplified F1; the two differ only in their holes
    (C(n+2, 2) versus 1 over all CMs of sum n; Briscoe, Kepler et al., Table 1).
    """
    out = np.full(np.broadcast(tp, fn, fp, tn).shape, np.nan)
    ok = np.broadcast_to(tp > 0, out.shape)
    ppv = positive_predictive_value(tp, fn, fp, tn)
    tpr = true_positive_rate(tp, fn, fp, tn)
    with np.errstate(divide="ignore", invalid="ignore"):
        harmonic = 2.0 / (1.0 / ppv + 1.0 / tpr)
    out[ok] = np.broadcast_to(harmonic, out.shape)[ok]
    return out


def matthews_correlation(tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray) -> FloatArray:
    """MCC = (TP·TN − FP·FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)) (Briscoe 2024, Table 2.4).

    Undefined when any of the four marginals is 0 (4n of the CMs of sum n).
    The square roots are taken factor by factor so large counts do not overflow.
    """
    den = np.sqrt(tp + fp) * np.sqrt(tp + fn) * np.sqrt(tn + fp) * np.sqrt(tn + fn)
    return _ratio(tp * tn - fp * fn, den)


def prevalence_threshold(tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray) -> FloatArray:
    """PT = (sqrt(TPR·FPR) − FPR) / (TPR − FPR) (Briscoe, Kepler et al., Table 5).

    Undefined when TPR or FPR is undefined, or TPR = FPR (checked exactly on the
    integers, TP·N = FP·P, so no float round-off decides it).

    Evaluated in the equivalent stable form √FPR / (√TPR + √FPR) (divide numerator and
    denominator by √TPR − √FPR): the textbook form subtracts nearly equal numbers when
    TPR ≈ FPR, which smoothed (fractional) counts reach, and returns round-off noise there.
    """
    tpr = true_positive_rate(tp, fn, fp, tn)
    fpr = false_positive_rate(tp, fn, fp, tn)
    equal = tp * (fp + tn) == fp * (tp + fn)
    root_t, root_f = np.sqrt(tpr), np.sqrt(fpr)
    return _ratio(root_f, np.where(equal, 0.0, root_t + root_f))


def marginal_benefit(tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray) -> FloatArray:
    """B = (FP − FN) / n = b − E[b] (Briscoe 2024, Definition 3.6, eq. 3.4). Undefined when n = 0."""
    return _ratio(fp - fn, tp + fn + fp + tn)


@dataclass(frozen=True)
class MetricInfo:
    """Registry entry: the function, its long name, family and its undefined cases."""

    key: str
    func: Callable[..., FloatArray]
    long_name: str
    family: str
    formula: str


_INFO: dict[str, MetricInfo] = {
    m.key: m
    for m in (
        MetricInfo("ACC", accuracy, "accuracy", "binomial", "(TP+TN)/n"),
        MetricInfo("PREV", prevalence, "prevalence (expected benefit)", "binomial", "(TP+FN)/n"),
        MetricInfo("PPR", positive_prediction_rate, "positive prediction rate (benefit)", "binomial", "(TP+FP)/n"),
        MetricInfo("INACC", inaccuracy, "inaccuracy", "binomial", "(FP+FN)/n"),
        MetricInfo("NPREV", negative_prevalence, "negative prevalence", "binomial", "(FP+TN)/n"),
        MetricInfo("PNR", negative_prediction_rate, "negative prediction rate", "binomial", "(FN+TN)/n"),
        MetricInfo("TPR", true_positive_rate, "true positive rate (recall)", "joint ratio", "TP/(TP+FN)"),
        MetricInfo("FNR", false_negative_rate, "false negative rate", "joint ratio", "FN/(FN+TP)"),
        MetricInfo("FPR", false_positive_rate, "false positive rate", "joint ratio", "FP/(FP+TN)"),
        MetricInfo("TNR", true_negative_rate, "true negative rate (specificity)", "joint ratio", "TN/(TN+FP)"),
        MetricInfo("PPV", positive_predictive_value, "positive predictive value (precision)", "joint ratio", "TP/(TP+FP)"),
        MetricInfo("FDR", false_discovery_rate, "false discovery rate", "joint ratio", "FP/(FP+TP)"),
        MetricInfo("NPV", negative_predictive_value, "negative predictive value", "joint ratio", "TN/(TN+FN)"),
        MetricInfo("FOR", false_omission_rate, "false omission rate", "joint ratio", "FN/(FN+TN)"),
        MetricInfo("F1", f1_score, "F1 score (simplified)", "other", "2TP/(2TP+FP+FN)"),
        MetricInfo("F1_ORIG", f1_score_original, "F1 score (harmonic mean form)", "other", "2/(1/PPV+1/TPR)"),
        MetricInfo("MCC", matthews_correlation, "Matthews correlation coefficient", "other",
                   "(TP·TN−FP·FN)/sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN))"),
        MetricInfo("PT", prevalence_threshold, "prevalence threshold", "other", "(sqrt(TPR·FPR)−FPR)/(TPR−FPR)"),
        MetricInfo("B", marginal_benefit, "marginal benefit", "other", "(FP−FN)/n"),
    )
}
assert tuple(_INFO) == NAMES


def info(name: str) -> MetricInfo:
    """The registry entry of metric ``name``; ValueError lists the valid names."""
    try:
        return _INFO[name]
    except KeyError:
        raise ValueError(f"unknown metric {name!r}; expected one of {', '.join(NAMES)}") from None


def as_cells(tp: npt.ArrayLike, fn: npt.ArrayLike, fp: npt.ArrayLike, tn: npt.ArrayLike) -> Cells:
    """Validate four equal-shape count arrays and return them as float64 arrays.

    Counts are usually integers; fractional counts are accepted too, since smoothed CMs
    (:mod:`fairness_core.smoothing`) are float. Negative, non-finite and non-numeric
    values are rejected with the cell named.
    """
    arrs = [np.asarray(a) for a in (tp, fn, fp, tn)]
    shape = arrs[0].shape
    for label, a in zip(("tp", "fn", "fp", "tn"), arrs):
        if a.shape != shape:
            raise ValueError(f"{label} has shape {a.shape}, expected {shape} like tp")
        if a.dtype.kind not in "iubf":
            raise ValueError(f"{label} must hold numeric counts, got dtype {a.dtype}")
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise ValueError(f"{label} has a non-finite count")
        if a.size and a.min() < 0:
            raise ValueError(f"{label} has a negative count")
    return tuple(a.astype(np.float64) for a in arrs)  # type: ignore[return-value]


@overload
def compute(name: str, cm: ConfusionMatrix, /) -> float: ...
@overload
def compute(name: str, tp: npt.ArrayLike, fn: npt.ArrayLike, fp: npt.ArrayLike, tn: npt.ArrayLike, /) -> FloatArray: ...


def compute(name: str, *args):  # type: ignore[no-untyped-def]
    """Compute metric ``name`` for one CM (float) or for four cell arrays (ndarray).

    Parameters
    ----------
    name : str
        One of :data:`NAMES`.
    *args : ConfusionMatrix, or tp, fn, fp, tn arrays of equal shape

    Returns
    -------
    float or ndarray
        NaN where the metric is undefined (see :func:`undefined_reason`).
    """
    func = info(name).func
    if len(args) == 1 and isinstance(args[0], ConfusionMatrix):
        cells = tuple(np.float64(c) for c in args[0].as_array())
        return float(func(*cells))
    if len(args) != 4:
        raise TypeError("compute() takes a ConfusionMatrix or four arrays tp, fn, fp, tn")
    return func(*as_cells(*args))


def compute_all(cm: ConfusionMatrix) -> dict[str, float]:
    """Every metric of :data:`NAMES` for one CM."""
    return {name: compute(name, cm) for name in NAMES}


_REASONS = {
    "n": "empty group (n = 0)",
    "P": "no actual positives (TP + FN = 0)",
    "N": "no actual negatives (FP + TN = 0)",
    "Phat": "no predicted positives (TP + FP = 0)",
    "Nhat": "no predicted negatives (TN + FN = 0)",
}
_DENOMINATOR = {
    **{k: "n" for k in BINOMIAL + ("B",)},
    "TPR": "P", "FNR": "P", "FPR": "N", "TNR": "N",
    "PPV": "Phat", "FDR": "Phat", "NPV": "Nhat", "FOR": "Nhat",
}


def undefined_reason(name: str, cm: ConfusionMatrix) -> str | None:
    """Why metric ``name`` is undefined for ``cm``, or None where it is defined."""
    info(name)
    tp, fn, fp, tn = cm.as_array().tolist()
    zero = {"n": cm.n == 0, "P": tp + fn == 0, "N": fp + tn == 0,
            "Phat": tp + fp == 0, "Nhat": tn + fn == 0}
    if name in _DENOMINATOR:
        key = _DENOMINATOR[name]
        return _REASONS[key] if zero[key] else None
    if name == "F1":
        return "TP = FP = FN = 0 (only true negatives)" if tp == fp == fn == 0 else None
    if name == "F1_ORIG":
        return "TP = 0, so 1/PPV or 1/TPR is infinite" if tp == 0 else None
    if name == "MCC":
        empty = [lbl for lbl, k in (("TP+FP", "Phat"), ("TP+FN", "P"), ("TN+FP", "N"), ("TN+FN", "Nhat")) if zero[k]]
        return f"a marginal of the MCC denominator is 0 ({', '.join(empty)})" if empty else None
    # PT
    if zero["P"]:
        return "TPR is undefined: " + _REASONS["P"]
    if zero["N"]:
        return "FPR is undefined: " + _REASONS["N"]
    if tp * (fp + tn) == fp * (tp + fn):
        return "TPR = FPR, so the denominator TPR − FPR is 0"
    return None
