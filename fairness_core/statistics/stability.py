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

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.special import xlogy

from . import metrics as m
from .confusion import ConfusionMatrix

INDIVIDUAL_METRICS = ("label stability", "jitter", "epistemic uncertainty", "aleatoric uncertainty")

#: Per-group columns and the disparity each gives (dis − priv, except DI = dis / priv).
DISPARITIES = {
    "FPR": "ΔFPR", "FNR": "ΔFNR", "accuracy": "ΔAccuracy", "selection rate": "SPD",
    "label stability": "Δlabel stability", "jitter": "Δjitter",
    "epistemic uncertainty": "Δepistemic", "aleatoric uncertainty": "Δaleatoric",
}


def check_probabilities(probs: npt.ArrayLike, min_models: int = 2) -> np.ndarray:
    """``probs`` as a float ``(n, m)`` array with every value a probability; ValueError naming
    the first bad row and model (1-based) otherwise."""
    p = np.asarray(probs, dtype=float)
    if p.ndim != 2:
        raise ValueError(f"probabilities must be a 2-D array (individuals × models), got shape {p.shape}")
    if p.shape[0] == 0:
        raise ValueError("no individuals")
    if p.shape[1] < min_models:
        raise ValueError(f"an ensemble needs at least {min_models} models, got {p.shape[1]}")
    bad = ~np.isfinite(p) | (p < 0) | (p > 1)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise ValueError(f"row {r + 1}, model {c + 1}: {float(p[r, c])!r} is not a probability in [0, 1]")
    return p


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


@dataclass(frozen=True)
class RowData:
    """Row-level data behind an audit (uploads of predictions, and the demos).

    Parameters
    ----------
    y, y_pred : bool arrays
        Actual label and the audited model's prediction, positive = beneficial.
    groups : array of str
        Each row's group, named as in the audit.
    probabilities : (n, m) array, optional
        An ensemble's probabilities of the positive (beneficial) outcome, one column per model.
    model_names : names of those columns.
    features : DataFrame, optional
        Feature columns (numeric or categorical) from which the app can train its own
        bootstrap ensemble (:mod:`fairness_core.statistics.ensemble`).
    scores : mapping of name to float array, optional
        Scores the rows carry (an uploaded score column, the one a threshold was applied to), one finite
        number per row, higher = more likely the favourable decision: the Local Law 144 scoring rate and
        the scores view read them.
    """

    y: np.ndarray
    y_pred: np.ndarray
    groups: np.ndarray
    probabilities: np.ndarray | None = None
    model_names: tuple[str, ...] = ()
    features: pd.DataFrame | None = field(default=None, compare=False)
    description: str = ""
    scores: Mapping[str, np.ndarray] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        y = np.asarray(self.y, dtype=bool)
        yp = np.asarray(self.y_pred, dtype=bool)
        g = np.asarray(self.groups, dtype=object)
        if not (y.ndim == yp.ndim == g.ndim == 1) or not (len(y) == len(yp) == len(g)):
            raise ValueError("y, y_pred and groups must be 1-D and of equal length")
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "y_pred", yp)
        object.__setattr__(self, "groups", g)
        if self.probabilities is not None:
            p = check_probabilities(self.probabilities)
            if len(p) != len(y):
                raise ValueError(f"probabilities have {len(p)} rows, labels {len(y)}")
            object.__setattr__(self, "probabilities", p)
            if self.model_names and len(self.model_names) != p.shape[1]:
                raise ValueError("one model name per probability column")
        if self.features is not None and len(self.features) != len(y):
            raise ValueError(f"features have {len(self.features)} rows, labels {len(y)}")
        if self.scores is not None:
            scores = {str(k): np.asarray(v, dtype=float) for k, v in self.scores.items()}
            for name, v in scores.items():
                if v.shape != y.shape or not np.isfinite(v).all():
                    raise ValueError(f"score {name!r} must be one finite number per row")
            object.__setattr__(self, "scores", scores)

    def __len__(self) -> int:
        return len(self.y)

    def subset(self, index: npt.ArrayLike, probabilities: np.ndarray | None = None,
               description: str | None = None) -> "RowData":
        """The rows at ``index`` (e.g. a held-out test set), optionally with new probabilities."""
        idx = np.asarray(index)
        probs = probabilities if probabilities is not None else (
            None if self.probabilities is None else self.probabilities[idx])
        return RowData(self.y[idx], self.y_pred[idx], self.groups[idx], probs,
                       self.model_names if probabilities is None else (),
                       None if self.features is None else self.features.iloc[idx].reset_index(drop=True),
                       self.description if description is None else description,
                       None if self.scores is None else {k: v[idx] for k, v in self.scores.items()})


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
