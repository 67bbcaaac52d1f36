"""The Compare and Mitigate page's data and computations, cached once per data and settings.

Every cache is keyed by :attr:`Rows.key` (the demo and group attribute, or a content hash of the loaded rows)
and by every setting its output depends on, and bounded in entries and age. The rows are split once
(:data:`FIT_SHARE` to fit thresholds on, the rest held out, :data:`SEED` fixed); every number returned here
is measured on the held-out rows.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import pandas as pd
import streamlit as st

from fairness_core import datasets, mitigation, reading
from fairness_core.audit import Audit
from fairness_core.compare import MAX_MODELS, PERFORMANCE, Comparison
from fairness_core.io import INTERSECTION_SEP

FIT_SHARE, SEED, TTL_S = 0.5, 0, 3600
#: Group attributes of the demos: one alone, or their intersections.
ATTRIBUTES = {"race": ("race",), "sex": ("sex",), "race & sex": ("race", "sex")}
TARGETS = {"ofi": "OFI within ± tolerance (equal marginal benefit)",
           "demographic_parity": "demographic parity (selection rates within tolerance)",
           "four_fifths": "four-fifths rule (DI ≥ 0.8; tolerance unused)",
           "equal_opportunity": "equal opportunity (TPRs within tolerance)",
           "equalized_odds": "equalized odds (TPRs and FPRs within tolerance)"}


@dataclass(frozen=True)
class Rows:
    """One data set's candidates on the same individuals, in the audit's direction (True = beneficial)."""

    key: str
    title: str
    y: np.ndarray
    groups: np.ndarray
    predictions: dict[str, np.ndarray]
    scores: dict[str, np.ndarray]
    positive_outcome: str
    note: str
    fit: np.ndarray = field(repr=False)   # True: a row thresholds are fitted on; False: held out

    @property
    def held(self) -> np.ndarray:
        return ~self.fit


@st.cache_data(max_entries=8, ttl=TTL_S, show_spinner="Loading the candidate models…")
def demo_rows(key: str, attribute: str) -> Rows:
    c = datasets.load_candidates(key)
    columns = [c.groups[a].astype(str).to_numpy() for a in ATTRIBUTES[attribute]]
    groups = np.array([INTERSECTION_SEP.join(p) for p in zip(*columns)], dtype=object)
    fit = mitigation.split_rows(groups, c.y, FIT_SHARE, SEED)
    return Rows(f"demo:{key}:{attribute}", c.title, np.asarray(c.y, bool), groups,
                {k: np.asarray(v, bool) for k, v in c.predictions.items()}, dict(c.scores), c.positive_outcome,
                c.note, fit)


def loaded_rows(audit: Audit, candidates: datasets.Candidates | None = None) -> Rows:
    """The session's row-level data: the candidate models uploaded with them (their decisions and scores) when
    there are some, else its one model's decisions; and as a further score the mean of its ensemble's
    probabilities when it carries one. Groups and labels are the audit's (the sidebar's choice of groups)."""
    r = audit.rows
    assert r is not None
    if candidates is not None and len(candidates.y) != len(r.y):
        candidates = None   # never another data set's models (the session drops them with their data)
    y, groups = np.asarray(r.y, bool), np.asarray(r.groups, dtype=object)
    if candidates is None:
        predictions = {"the loaded model": np.asarray(r.y_pred, bool)}
        scores: dict[str, np.ndarray] = {}
    else:
        predictions = {k: np.asarray(v, bool) for k, v in candidates.predictions.items()}
        scores = {k: np.asarray(v, float) for k, v in candidates.scores.items()}
    h = hashlib.sha1(y.tobytes())
    h.update(pd.util.hash_pandas_object(pd.Series(groups.astype(str)), index=False).to_numpy().tobytes())
    if r.probabilities is not None:
        scores["ensemble mean probability"] = np.asarray(r.probabilities, float).mean(axis=1)
    for what, values in (("prediction", predictions), ("score", scores)):
        for name, v in values.items():
            h.update(f"{what}:{name}".encode())
            h.update(v.tobytes())
    notes = [*audit.notes, *([candidates.note] if candidates is not None and candidates.note else [])]
    return Rows(f"loaded:{h.hexdigest()}", audit.source, y, groups, predictions, scores,
                audit.positive_outcome or "the positive prediction", " ".join(notes),
                mitigation.split_rows(groups, y, FIT_SHARE, SEED))


class Settings(NamedTuple):
    """One mitigation: the score and what its thresholds were fitted for."""

    score: str
    target: str
    tolerance: float
    objective: str
    cost_fp: float
    cost_fn: float

    @property
    def name(self) -> str:
        what = "DI ≥ 0.8" if self.target == "four_fifths" else f"{self.target} ≤ {self.tolerance:g}"
        return f"{self.score}, per-group thresholds ({what})"


@dataclass(frozen=True)
class Fit:
    rule: mitigation.ThresholdRule | None
    shared: mitigation.ThresholdRule
    infeasible: str = ""
    smallest: float = math.nan


@st.cache_data(max_entries=32, ttl=TTL_S, show_spinner="Fitting thresholds on the fitting rows…")
def fit(_rows: Rows, key: str, s: Settings) -> Fit:
    f = _rows.fit
    args = (_rows.scores[s.score][f], _rows.y[f], _rows.groups[f])
    kw = dict(objective=s.objective, cost_fp=s.cost_fp, cost_fn=s.cost_fn)
    shared = mitigation.fit_thresholds(*args, target="none", **kw)
    try:
        return Fit(mitigation.fit_thresholds(*args, target=s.target, tolerance=s.tolerance, **kw), shared)
    except mitigation.InfeasibleTarget as exc:
        return Fit(None, shared, str(exc), exc.smallest)


def held_predictions(rows: Rows, settings: list[Settings]) -> dict[str, np.ndarray]:
    """The candidates' decisions on the held-out rows, and each (feasible) mitigated model's."""
    out = {k: v[rows.held] for k, v in rows.predictions.items()}
    for s in settings:
        rule = fit(rows, rows.key, s).rule
        if rule is not None and len(out) < MAX_MODELS:
            out[s.name] = rule.predict(rows.scores[s.score][rows.held], rows.groups[rows.held]).astype(bool)
    return out


def _comparison(y: np.ndarray, groups: np.ndarray, predictions: dict[str, np.ndarray]) -> Comparison:
    return Comparison.from_predictions(y, predictions, {"group": groups}, positive_is="benefit",
                                       source="held-out rows")


@st.cache_data(max_entries=32, ttl=TTL_S, show_spinner="Comparing the models on the held-out rows…")
def summary(_rows: Rows, key: str, added: tuple[Settings, ...], tolerance: float, alpha: float, adjust: str,
            cost_fp: float, cost_fn: float, perf: str = "accuracy") -> pd.DataFrame:
    """:meth:`Comparison.summary` on the held-out rows; its Pareto front by ``perf``, the measure the page's
    trade-off chart draws."""
    c = _comparison(_rows.y[_rows.held], _rows.groups[_rows.held], held_predictions(_rows, list(added)))
    return c.summary(tolerance, alpha, adjust, cost_fp, cost_fn, performance=perf)


@st.cache_data(max_entries=32, ttl=TTL_S, show_spinner="Pairing the two models' decisions…")
def paired(_rows: Rows, key: str, added: tuple[Settings, ...], a: str, b: str, alpha: float,
           adjust: str) -> pd.DataFrame:
    preds = held_predictions(_rows, list(added))
    return _comparison(_rows.y[_rows.held], _rows.groups[_rows.held], {a: preds[a], b: preds[b]}).paired(a, b, alpha, adjust)


@st.cache_data(max_entries=32, ttl=TTL_S, show_spinner="Measuring before and after on the held-out rows…")
def before_after(_rows: Rows, key: str, s: Settings, tolerance: float, alpha: float, adjust: str) -> pd.DataFrame:
    """Two rows (the shared threshold, the per-group thresholds) of :meth:`Comparison.summary` on the held-out rows."""
    f = fit(_rows, key, s)
    h = _rows.held
    score, groups = _rows.scores[s.score][h], _rows.groups[h]
    preds = {"before: one shared threshold": f.shared.predict(score, groups).astype(bool),
             "after: per-group thresholds": f.rule.predict(score, groups).astype(bool)}
    return _comparison(_rows.y[h], groups, preds).summary(tolerance, alpha, adjust, s.cost_fp, s.cost_fn,
                                                          performance=s.objective)


@st.cache_data(max_entries=16, ttl=TTL_S, show_spinner="Fitting thresholds for every tolerance…")
def frontier(_rows: Rows, key: str, s: Settings, added: tuple[Settings, ...]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The frontier (thresholds fitted on the fitting rows for each tolerance; ``four_fifths`` has none to
    vary, so demographic parity's) and the models as points, every value measured on the held-out rows."""
    f, h = _rows.fit, _rows.held
    target = "demographic_parity" if s.target == "four_fifths" else s.target
    front = mitigation.frontier(_rows.scores[s.score][f], _rows.y[f], _rows.groups[f], target=target,
                                objective=s.objective, cost_fp=s.cost_fp, cost_fn=s.cost_fn)
    y, g, score = _rows.y[h], _rows.groups[h], _rows.scores[s.score][h]

    def measured(pred: np.ndarray) -> tuple[float, float]:
        return (mitigation.objective_value(y, pred, s.objective, s.cost_fp, s.cost_fn), mitigation.disparity(y, pred, g, "ofi"))

    line = []
    for row in front[front["feasible"]].itertuples():
        cut = np.array([row.thresholds[x] for x in g], dtype=float)
        line.append((row.tolerance, *measured(score >= cut)))
    points = [(name, *measured(pred), "held-out rows") for name, pred in held_predictions(_rows, list(added)).items()]
    shared = fit(_rows, key, s).shared
    points.append(("the score, one shared threshold", *measured(shared.predict(score, g).astype(bool)), "held-out rows"))
    mine = fit(_rows, key, s).rule
    if mine is not None and s not in added:
        points.append(("the score, per-group thresholds", *measured(mine.predict(score, g).astype(bool)), "held-out rows"))
    return (pd.DataFrame(line, columns=["tolerance", "performance", "disparity"]),
            pd.DataFrame(points, columns=["model", "performance", "disparity", "where"]))


def thresholds_json(rows: Rows, s: Settings, rule: mitigation.ThresholdRule, attribute: str, held: pd.DataFrame) -> str:
    """The rule's JSON with the data, score, split and the held-out numbers that go with it."""
    after = held.iloc[-1]
    out = {**json.loads(rule.to_json()), "data": rows.title, "groups": attribute, "score": s.score,
           "positive_outcome": rows.positive_outcome,
           "split": {"fitting_share": FIT_SHARE, "seed": SEED, "stratified_by": "group and label",
                     "held_out_rows": int(rows.held.sum())},
           "held_out": {"accuracy": float(after["accuracy"]), "max_abs_ofi": float(after["max_abs_ofi"]),
                        "max_abs_ofi_interval": [float(after["max_abs_ofi_ci_low"]), float(after["max_abs_ofi_ci_high"])],
                        "interval_level": str(after["interval_level"])}}
    return json.dumps(out, indent=2, ensure_ascii=False)


def held_decisions(rows: Rows, s: Settings, rule: mitigation.ThresholdRule) -> pd.DataFrame:
    """The mitigated decisions on the held-out rows: row index (position in the data), group, score, threshold,
    decision."""
    h = np.flatnonzero(rows.held)
    g, score = rows.groups[h], rows.scores[s.score][h]
    cut = np.array([rule.thresholds[x] for x in g], dtype=float)
    return pd.DataFrame({"row": h, "group": g, "score": score, "threshold": cut,
                         "decision": np.where(score >= cut, rows.positive_outcome, "not " + rows.positive_outcome)})


def threshold_table(rows: Rows, s: Settings, f: Fit) -> pd.DataFrame:
    """Per group: the shared and the per-group threshold, and on the held-out rows the group's size and its
    selection rate and marginal benefit B under each."""
    assert f.rule is not None
    h = rows.held
    score, g, y = rows.scores[s.score][h], pd.Series(rows.groups[h]), rows.y[h]
    out = []
    for name, grp in g.groupby(g, sort=True).groups.items():
        i = np.asarray(grp)
        before, after = score[i] >= f.shared.thresholds[name], score[i] >= f.rule.thresholds[name]
        out.append({"group": name, "shared threshold": f.shared.thresholds[name],
                    "group threshold": f.rule.thresholds[name], "held-out n": len(i),
                    "selection rate before": before.mean(), "selection rate after": after.mean(),
                    "B before": (before.sum() - y[i].sum()) / len(i), "B after": (after.sum() - y[i].sum()) / len(i)})
    return pd.DataFrame(out)


def summary_display(table: pd.DataFrame, perf: str) -> pd.DataFrame:
    """The comparison as people read it: each estimate with its interval in one column."""
    out = pd.DataFrame({"model": table["model"],
                        f"{PERFORMANCE[perf]} [CI]": [ci_text(r, perf) for _, r in table.iterrows()],
                        "largest |OFI| [CI]": [ci_text(r, "max_abs_ofi") for _, r in table.iterrows()],
                        "worst pair": table["worst_pair"],
                        "smallest DI [CI]": [ci_text(r, "min_di") for _, r in table.iterrows()],
                        "smallest-DI pair": table["min_di_pair"]})
    for c in table.columns:
        if c.startswith("verdict: "):
            out[c.removeprefix("verdict: ")] = table[c]
    out["Pareto front"] = table["pareto"]
    return out


def fairest_reading(table: pd.DataFrame, perf: str) -> str:
    """Which model is fairer by the largest |OFI| and at what cost (:func:`fairness_core.reading.fairest_model`)."""
    return reading.fairest_model(table, perf, PERFORMANCE[perf])


ci_text, paired_reading = reading.ci_text, reading.paired_differences
