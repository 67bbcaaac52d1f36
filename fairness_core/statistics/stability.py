"""Virny's stability and uncertainty dimensions (Virny), per individual and per group.

Input is an ensemble's predicted probabilities of the positive class: an ``(n, m)`` array,
one row per individual and one column per model (``h_{D_j}(x)`` in Virny). Per individual:

- **label stability** |#{h_j >= t} − #{h_j < t}| / m: 1 when every model agrees, 0 at a tie;
- **jitter**: the share of model pairs that disagree on the label, k(m − k) / C(m, 2) for k
  positive votes; its mean over individuals is Virny's dataset jitter, the mean pairwise churn;
- **epistemic uncertainty** Var_j[h_j] (population variance);
- **aleatoric uncertainty** −E_j[h_j ln h_j + (1 − h_j) ln(1 − h_j)], the expected entropy in
  nats, in [0, ln 2] (Virny prints it without the minus; docs/methods.md).

Per group these are averaged, and set beside the audited model's error rates; disparities
are ``dis − priv`` (and DI = ``dis / priv``) as in Virny.

>>> import numpy as np
>>> from fairness_core import stability
>>> h = np.array([[0.9, 0.8, 0.2, 0.7]])   # one individual, four models: 3 vote positive
>>> stability.label_stability(h).tolist(), stability.jitter(h).tolist()
([0.5], [0.5])
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.special import xlogy

from . import metrics as m
from .rows import RowData, check_probabilities
from .confusion import ConfusionMatrix

INDIVIDUAL_METRICS = ("label stability", "jitter", "epistemic uncertainty", "aleatoric uncertainty")

#: Per-group columns and the disparity each gives (dis − priv, except DI = dis / priv).
DISPARITIES = {
    "FPR": "ΔFPR", "FNR": "ΔFNR", "accuracy": "ΔAccuracy", "selection rate": "SPD",
    "label stability": "Δlabel stability", "jitter": "Δjitter",
    "epistemic uncertainty": "Δepistemic", "aleatoric uncertainty": "Δaleatoric",
}


def votes(probs: npt.ArrayLike, threshold: float = 0.5) -> np.ndarray:
    """Number of models voting positive (h >= threshold) per individual."""
    return (check_probabilities(probs, 1) >= threshold).sum(axis=1)


def label_stability(probs: npt.ArrayLike, threshold: float = 0.5) -> np.ndarray:
    """|#positive votes − #negative votes| / m per individual (Virny, label stability)."""
    p = check_probabilities(probs, 1)
    k = (p >= threshold).sum(axis=1)
    return np.abs(2 * k - p.shape[1]) / p.shape[1]


def jitter(probs: npt.ArrayLike, threshold: float = 0.5) -> np.ndarray:
    """Share of the C(m, 2) model pairs that disagree on each individual's label (Virny, jitter)."""
    p = check_probabilities(probs, 2)
    mm = p.shape[1]
    k = (p >= threshold).sum(axis=1)
    return k * (mm - k) / (mm * (mm - 1) / 2)


def epistemic_uncertainty(probs: npt.ArrayLike) -> np.ndarray:
    """Var_j[h_j(x)] per individual (population variance, Virny)."""
    return check_probabilities(probs, 1).var(axis=1)


def aleatoric_uncertainty(probs: npt.ArrayLike) -> np.ndarray:
    """−E_j[h ln h + (1 − h) ln(1 − h)] per individual: expected entropy in nats, >= 0."""
    p = check_probabilities(probs, 1)
    return -np.mean(xlogy(p, p) + xlogy(1 - p, 1 - p), axis=1)


def individual_table(probs: npt.ArrayLike, threshold: float = 0.5) -> pd.DataFrame:
    """All four per-individual metrics, plus the ensemble's mean probability and positive votes."""
    p = check_probabilities(probs)
    return pd.DataFrame({
        "mean probability": p.mean(axis=1), "positive votes": (p >= threshold).sum(axis=1),
        "label stability": label_stability(p, threshold), "jitter": jitter(p, threshold),
        "epistemic uncertainty": epistemic_uncertainty(p), "aleatoric uncertainty": aleatoric_uncertainty(p),
    })


def _cm(y: np.ndarray, yp: np.ndarray) -> ConfusionMatrix:
    return ConfusionMatrix.from_predictions(y.astype(int), yp.astype(int))


def overall_label(groups: Sequence[str]) -> str:
    """The label of the row of everyone: "all", or "all rows" (then "all rows (2)", …) when a group is itself
    named so, so that the row of everyone is never taken for a group or a group for it.

    >>> overall_label(["a", "b"]), overall_label(["all", "b"])
    ('all', 'all rows')
    """
    taken = set(groups)
    label, k = "all", 1
    while label in taken:
        label = "all rows" if k == 1 else f"all rows ({k})"
        k += 1
    return label


def group_table(rows: RowData, threshold: float = 0.5, order: Sequence[str] | None = None) -> pd.DataFrame:
    """Per group and for everyone (last, labelled :func:`overall_label`, also in ``attrs["overall"]``): n, the
    audited model's accuracy, FPR, FNR and selection rate, and the ensemble's mean label stability, jitter and
    uncertainties."""
    if rows.probabilities is None:
        raise ValueError("these rows carry no ensemble probabilities; train or upload an ensemble first")
    ind = individual_table(rows.probabilities, threshold)
    names = list(order) if order is not None else sorted(set(rows.groups.tolist()), key=str)
    overall = overall_label([*names, *rows.groups.tolist()])
    out = []
    for g, mask in [*((g, rows.groups == g) for g in names), (overall, np.ones(len(rows), dtype=bool))]:
        if not mask.any():
            continue
        cm = _cm(rows.y[mask], rows.y_pred[mask])
        row = {"group": g, "n": int(mask.sum()), "accuracy": m.compute("ACC", cm), "FPR": m.compute("FPR", cm),
               "FNR": m.compute("FNR", cm), "selection rate": m.compute("PPR", cm)}
        row.update({k: float(ind.loc[mask, k].mean()) for k in INDIVIDUAL_METRICS})
        out.append(row)
    table = pd.DataFrame(out).set_index("group")
    table.attrs["overall"] = overall
    return table


def disparities(table: pd.DataFrame, privileged: str) -> pd.DataFrame:
    """Virny's disparity metrics of every other group (dis) against ``privileged``: dis − priv,
    and DI = selection rate dis / priv (NaN where priv's selection rate is 0)."""
    if privileged not in table.index:
        raise ValueError(f"unknown group {privileged!r}")
    priv = table.loc[privileged]
    rows = {}
    for g in table.index:
        if g in (privileged, table.attrs.get("overall", "all")):
            continue
        dis = table.loc[g]
        row = {new: float(dis[old] - priv[old]) for old, new in DISPARITIES.items()}
        row["DI"] = float(dis["selection rate"] / priv["selection rate"]) if priv["selection rate"] > 0 else np.nan
        rows[g] = row
    order = ["ΔFPR", "ΔFNR", "ΔAccuracy", "SPD", "DI", "Δlabel stability", "Δjitter", "Δepistemic", "Δaleatoric"]
    df = pd.DataFrame.from_dict(rows, orient="index", columns=order)
    df.index.name = f"dis (vs priv = {privileged})"
    return df


def distribution_table(rows: RowData, threshold: float = 0.5,
                       quantiles: Sequence[float] = (0.05, 0.25, 0.5, 0.75, 0.95)) -> pd.DataFrame:
    """Long table of per-individual metric quantiles per group (what the box plots draw)."""
    if rows.probabilities is None:
        raise ValueError("these rows carry no ensemble probabilities")
    ind = individual_table(rows.probabilities, threshold)
    ind["group"] = rows.groups
    q = ind.groupby("group")[list(INDIVIDUAL_METRICS)].quantile(list(quantiles))
    q.index.names = ["group", "quantile"]
    long = q.stack().rename("value").reset_index().rename(columns={"level_2": "metric"})
    mean = ind.groupby("group")[list(INDIVIDUAL_METRICS)].mean().stack().rename("mean").reset_index()
    mean.columns = ["group", "metric", "mean"]
    wide = long.pivot_table(index=["group", "metric"], columns="quantile", values="value")
    wide.columns = [f"q{round(100 * c):02d}" for c in wide.columns]
    out = wide.reset_index().merge(mean, on=["group", "metric"])
    out["metric"] = pd.Categorical(out["metric"], categories=list(INDIVIDUAL_METRICS), ordered=True)
    return out.sort_values(["metric", "group"]).reset_index(drop=True).astype({"metric": str})
