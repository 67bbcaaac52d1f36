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
from fairness_core.compare import MAX_MODELS, PERFORMANCE, Candidates, Comparison
from fairness_core.io import INTERSECTION_SEP
from fairness_core.wording import mitigation as mitigation_words

FIT_SHARE, SEED, TTL_S, FOLDS = 0.5, 0, 3600, 5
#: Group attributes of the demos: one alone, or their intersections.
ATTRIBUTES = {"race": ("race",), "sex": ("sex",), "race & sex": ("race", "sex")}
#: How the held-out numbers are estimated: one split, or cross-fitting (every row measured once).
ESTIMATES = mitigation_words.estimates(FOLDS)


@dataclass(frozen=True)
class Rows:
    """One data set's candidate models (:class:`fairness_core.compare.Candidates`: labels, decisions and scores in
    the audit's direction, how each score was made from a file's) as this page splits them: ``key`` names the data
    for the caches, ``row_groups`` each row's group (the ``group_columns`` a file names the groups by, joined with
    :data:`INTERSECTION_SEP`), ``fit`` the rows thresholds are fitted on (the rest held out). The candidates' own
    fields are read through them, never copied."""

    key: str
    candidates: Candidates
    row_groups: np.ndarray
    fit: np.ndarray = field(repr=False)   # True: a row thresholds are fitted on; False: held out
    group_columns: tuple[str, ...] = ()

    @property
    def held(self) -> np.ndarray:
        return ~self.fit

    @property
    def title(self) -> str:
        return self.candidates.title

    @property
    def y(self) -> np.ndarray:
        return np.asarray(self.candidates.y, bool)

    @property
    def predictions(self) -> dict[str, np.ndarray]:
        return {k: np.asarray(v, bool) for k, v in self.candidates.predictions.items()}

    @property
    def scores(self) -> dict[str, np.ndarray]:
        return dict(self.candidates.scores)

    @property
    def positive_outcome(self) -> str:
        return self.candidates.positive_outcome

    @property
    def negative_outcome(self) -> str:
        return self.candidates.negative

    @property
    def note(self) -> str:
        return self.candidates.note

    def transform(self, score: str) -> str:
        """How ``score`` was made from the file's score (:meth:`Candidates.transform`)."""
        return self.candidates.transform(score)


@st.cache_data(max_entries=8, ttl=TTL_S, show_spinner="Loading the candidate models…")
def demo_rows(key: str, attribute: str) -> Rows:
    c = datasets.load_candidates(key)
    columns = [c.groups[a].astype(str).to_numpy() for a in ATTRIBUTES[attribute]]
    groups = np.array([INTERSECTION_SEP.join(p) for p in zip(*columns)], dtype=object)
    return Rows(f"demo:{key}:{attribute}", c, groups, mitigation.split_rows(groups, c.y, FIT_SHARE, SEED),
                ATTRIBUTES[attribute])


def loaded_rows(audit: Audit, candidates: Candidates | None = None) -> Rows:
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
        transforms: dict[str, str] = {}
    else:
        predictions = {k: np.asarray(v, bool) for k, v in candidates.predictions.items()}
        scores = {k: np.asarray(v, float) for k, v in candidates.scores.items()}
        transforms = dict(candidates.score_transforms)
    h = hashlib.sha1(y.tobytes())
    h.update(pd.util.hash_pandas_object(pd.Series(groups.astype(str)), index=False).to_numpy().tobytes())
    if r.probabilities is not None:   # the audit turned a harm's probabilities into 1 − p
        scores["ensemble mean probability"] = np.asarray(r.probabilities, float).mean(axis=1)
        transforms["ensemble mean probability"] = "complement" if audit.positive_is == "harm" else "identity"
    for what, values in (("prediction", predictions), ("score", scores)):
        for name, v in values.items():
            h.update(f"{what}:{name}:{transforms.get(name, 'identity') if what == 'score' else ''}".encode())
            h.update(v.tobytes())
    notes = [*audit.notes, *([candidates.note] if candidates is not None and candidates.note else [])]
    positive = audit.positive_outcome or "the positive prediction"
    these = Candidates(audit.source, y, pd.DataFrame({"group": groups}), predictions, scores, positive,
                       " ".join(notes), transforms, candidates.negative if candidates is not None else "")
    return Rows(f"loaded:{h.hexdigest()}", these, groups, mitigation.split_rows(groups, y, FIT_SHARE, SEED),
                tuple(audit.group_columns))


class Settings(NamedTuple):
    """One mitigation: the score and what its thresholds were fitted for."""

    score: str
    target: str
    tolerance: float
    objective: str
    cost_fp: float
    cost_fn: float
    randomize: bool = False

    @property
    def name(self) -> str:
        what = "DI ≥ 0.8" if self.target == "four_fifths" else f"{self.target} ≤ {self.tolerance:g}"
        return f"{self.score}, per-group thresholds ({what}{', randomized' if self.randomize else ''})"


@dataclass(frozen=True)
class Fit:
    rule: mitigation.ThresholdRule | None
    shared: mitigation.ThresholdRule
    infeasible: str = ""
    smallest: float = math.nan


@st.cache_data(max_entries=32, ttl=TTL_S, show_spinner="Fitting thresholds on the fitting rows…")
def fit(_rows: Rows, key: str, s: Settings) -> Fit:
    f = _rows.fit
    args = (_rows.scores[s.score][f], _rows.y[f], _rows.row_groups[f])
    kw = dict(objective=s.objective, cost_fp=s.cost_fp, cost_fn=s.cost_fn, score_transform=_rows.transform(s.score))
    shared = mitigation.fit_thresholds(*args, target="none", **kw)
    try:
        return Fit(mitigation.fit_thresholds(*args, target=s.target, tolerance=s.tolerance, randomize=s.randomize,
                                             **kw), shared)
    except mitigation.InfeasibleTarget as exc:
        return Fit(None, shared, str(exc), exc.smallest)


@st.cache_data(max_entries=16, ttl=TTL_S, show_spinner="Fitting thresholds on every row (the rule to deploy)…")
def fit_all(_rows: Rows, key: str, s: Settings) -> mitigation.ThresholdRule | None:
    """The rule to deploy under cross-fitting: fitted once on all rows (its honest numbers are the cross-fitted
    ones); None where the target cannot be met."""
    try:
        return mitigation.fit_thresholds(_rows.scores[s.score], _rows.y, _rows.row_groups, target=s.target,
                                         tolerance=s.tolerance, objective=s.objective, cost_fp=s.cost_fp,
                                         cost_fn=s.cost_fn, randomize=s.randomize,
                                         score_transform=_rows.transform(s.score))
    except mitigation.InfeasibleTarget:
        return None


@st.cache_data(max_entries=32, ttl=TTL_S, show_spinner="Measuring on rows no threshold saw…")
def decisions(_rows: Rows, key: str, s: Settings, estimate: str) -> dict[str, np.ndarray]:
    """The rows the numbers are measured on and their decisions: ``y``, ``groups``, ``before`` (one shared threshold)
    and ``after`` (the per-group rule; a randomized rule's draws with :data:`SEED`). "split": the held-out rows;
    "cross-fit": every row, each decided by thresholds fitted on the other folds. Raises InfeasibleTarget."""
    if estimate == "cross-fit":
        cf = mitigation.cross_fit(_rows.scores[s.score], _rows.y, _rows.row_groups, s.target, s.tolerance, s.objective,
                                  folds=FOLDS, seed=SEED, randomize=s.randomize, random_state=SEED,
                                  cost_fp=s.cost_fp, cost_fn=s.cost_fn)
        return {"y": _rows.y, "groups": _rows.row_groups, "before": cf.shared_predictions.astype(bool),
                "after": cf.predictions.astype(bool)}
    f, h = fit(_rows, key, s), _rows.held
    if f.rule is None:
        raise mitigation.InfeasibleTarget(f.infeasible, f.smallest)
    score, groups = _rows.scores[s.score][h], _rows.row_groups[h]
    return {"y": _rows.y[h], "groups": groups, "before": f.shared.predict(score, groups).astype(bool),
            "after": f.rule.predict(score, groups, random_state=SEED).astype(bool)}


@st.cache_data(max_entries=32, ttl=TTL_S, show_spinner="Bootstrapping the target's measures…")
def measures(_rows: Rows, key: str, s: Settings, estimate: str, alpha: float) -> pd.DataFrame:
    """Each target measure and the objective before and after (:func:`fairness_core.mitigation.target_measures`):
    one row per measure, columns before/after estimate, ci_low, ci_high and note."""
    d = decisions(_rows, key, s, estimate)
    kw = dict(alpha=alpha, seed=SEED, cost_fp=s.cost_fp, cost_fn=s.cost_fn)
    before = mitigation.target_measures(d["y"], d["before"], d["groups"], s.objective, **kw).set_index("measure")
    after = mitigation.target_measures(d["y"], d["after"], d["groups"], s.objective, **kw).set_index("measure")
    out = before.add_prefix("before ").join(after.add_prefix("after "))
    out.attrs.update(before.attrs)
    return out


def delta_text(before: float, after: float, places: int = 3) -> str | None:
    """A tile's change from ``before`` to ``after`` as shown ("+0.012", "-2"), or None where it rounds to nothing:
    Streamlit's metric draws an arrow for any delta text, "+0" and "+0.000" included, so an unchanged tile gets none.

    >>> delta_text(0.382, 0.271), delta_text(0, 0, 0), delta_text(0.5, 0.50004), delta_text(1, 3, 0)
    ('-0.111', None, None, '+2')
    """
    if not (math.isfinite(before) and math.isfinite(after)):
        return None
    change = round(after - before, places)
    return None if change == 0 else f"{change:+.{places}f}"


def side_by_side(det: pd.DataFrame, rnd: pd.DataFrame, target: str, objective: str) -> pd.DataFrame:
    """The deterministic and the randomized rule's held-out numbers beside the shared threshold's: the target's
    measures and the objective, each with its interval."""
    names, text = [*mitigation_words.TARGET_MEASURES[target], objective.replace("_", " ")], \
        mitigation_words.interval_text
    return pd.DataFrame({"measure": names,
                         "before: one shared threshold": [text(det.loc[m], "before") for m in names],
                         "after: deterministic thresholds": [text(det.loc[m], "after") for m in names],
                         "after: randomized rule": [text(rnd.loc[m], "after") for m in names]})


def apply_command(s: Settings, attribute: str, file_name: str = "thresholds.json",
                  columns: tuple[str, ...] = ()) -> str:
    """The command that applies the downloaded rule to a file of new rows holding the raw scores (the rule turns
    them as it was fitted); the score and group columns named as on this page (``columns``, else the demo
    attribute's), to be renamed to the file's own. A randomized rule draws with :data:`SEED`, as the page did: the
    page's held-out rows, in their order, are decided as the page decided them."""
    columns = tuple(columns) or ATTRIBUTES.get(attribute, ("GROUP_COLUMN",))
    quote = (lambda c: c if c.replace("_", "").isalnum() else "'" + c.replace("'", "'\\''") + "'")  # noqa: E731
    groups = " ".join(f"--group {quote(c)}" for c in columns)
    return (f"python -m fairness_core apply {file_name} NEW_ROWS.csv --score {quote(s.score)} {groups} "
            "--out decisions.csv" + (f" --seed {SEED}" if s.randomize else ""))


def held_predictions(rows: Rows, settings: list[Settings]) -> dict[str, np.ndarray]:
    """The candidates' decisions on the held-out rows, and each (feasible) mitigated model's."""
    out = {k: v[rows.held] for k, v in rows.predictions.items()}
    for s in settings:
        rule = fit(rows, rows.key, s).rule
        if rule is not None and len(out) < MAX_MODELS:
            out[s.name] = rule.predict(rows.scores[s.score][rows.held], rows.row_groups[rows.held],
                                       random_state=SEED).astype(bool)
    return out


def _comparison(y: np.ndarray, groups: np.ndarray, predictions: dict[str, np.ndarray]) -> Comparison:
    return Comparison.from_predictions(y, predictions, {"group": groups}, positive_is="benefit",
                                       source="held-out rows")


@st.cache_data(max_entries=32, ttl=TTL_S, show_spinner="Comparing the models on the held-out rows…")
def summary(_rows: Rows, key: str, added: tuple[Settings, ...], tolerance: float, alpha: float, adjust: str,
            cost_fp: float, cost_fn: float, perf: str = "accuracy") -> pd.DataFrame:
    """:meth:`Comparison.summary` on the held-out rows; its Pareto front by ``perf``, the measure the page's
    trade-off chart draws."""
    c = _comparison(_rows.y[_rows.held], _rows.row_groups[_rows.held], held_predictions(_rows, list(added)))
    return c.summary(tolerance, alpha, adjust, cost_fp, cost_fn, performance=perf)


@st.cache_data(max_entries=32, ttl=TTL_S, show_spinner="Pairing the two models' decisions…")
def paired(_rows: Rows, key: str, added: tuple[Settings, ...], a: str, b: str, alpha: float,
           adjust: str) -> pd.DataFrame:
    preds = held_predictions(_rows, list(added))
    h = _rows.held
    return _comparison(_rows.y[h], _rows.row_groups[h], {a: preds[a], b: preds[b]}).paired(a, b, alpha, adjust)


@st.cache_data(max_entries=32, ttl=TTL_S, show_spinner="Measuring before and after on the held-out rows…")
def before_after(_rows: Rows, key: str, s: Settings, tolerance: float, alpha: float, adjust: str,
                 estimate: str = "split") -> pd.DataFrame:
    """Two rows (the shared threshold, the per-group thresholds) of :meth:`Comparison.summary` on the rows
    :func:`decisions` measures on."""
    d = decisions(_rows, key, s, estimate)
    preds = {"before: one shared threshold": d["before"], "after: per-group thresholds": d["after"]}
    return _comparison(d["y"], d["groups"], preds).summary(tolerance, alpha, adjust, s.cost_fp, s.cost_fn,
                                                           performance=s.objective)


@st.cache_data(max_entries=16, ttl=TTL_S, show_spinner="Fitting thresholds for every tolerance…")
def frontier(_rows: Rows, key: str, s: Settings, added: tuple[Settings, ...]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The frontier (thresholds fitted on the fitting rows for each tolerance; ``four_fifths`` has none to
    vary, so demographic parity's) and the models as points, every value measured on the held-out rows."""
    f, h = _rows.fit, _rows.held
    target = "demographic_parity" if s.target == "four_fifths" else s.target
    front = mitigation.frontier(_rows.scores[s.score][f], _rows.y[f], _rows.row_groups[f], target=target,
                                objective=s.objective, cost_fp=s.cost_fp, cost_fn=s.cost_fn)
    y, g, score = _rows.y[h], _rows.row_groups[h], _rows.scores[s.score][h]

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
        points.append(("the score, per-group thresholds", *measured(mine.predict(score, g, random_state=SEED).astype(bool)),
                       "held-out rows"))
    return (pd.DataFrame(line, columns=["tolerance", "performance", "disparity"]),
            pd.DataFrame(points, columns=["model", "performance", "disparity", "where"]))


def thresholds_json(rows: Rows, s: Settings, rule: mitigation.ThresholdRule, attribute: str, held: pd.DataFrame,
                    estimate: str = "split") -> str:
    """The rule file (:meth:`ThresholdRule.to_json`, which ``python -m fairness_core apply`` reads) with a
    ``context``: the data, score, how the honest numbers were estimated and those numbers."""
    after = held.iloc[-1]
    how = ({"method": "split", "fitting_share": FIT_SHARE, "seed": SEED, "stratified_by": "group and label",
            "held_out_rows": int(rows.held.sum()), "rule_fitted_on": "the fitting rows"} if estimate == "split" else
           {"method": "cross-fitting", "folds": FOLDS, "seed": SEED, "rows_measured": len(rows.y),
            "rule_fitted_on": "every row (the numbers are the cross-fitted estimate of fitting on rows like these)"})
    out = {**json.loads(rule.to_json()), "context": {
        "data": rows.title, "groups": attribute, "score": s.score,
        "score_direction": mitigation_words.score_direction(s.score, rows.transform(s.score), rows.positive_outcome),
        "positive_outcome": rows.positive_outcome, "negative_outcome": rows.negative_outcome, "estimate": how,
        "held_out": {s.objective: float(after[s.objective]), "max_abs_ofi": float(after["max_abs_ofi"]),
                     "max_abs_ofi_interval": [float(after["max_abs_ofi_ci_low"]), float(after["max_abs_ofi_ci_high"])],
                     "interval_level": str(after["interval_level"])}}}
    return json.dumps(out, indent=2, ensure_ascii=False)


def held_decisions(rows: Rows, s: Settings, rule: mitigation.ThresholdRule) -> pd.DataFrame:
    """The mitigated decisions on the held-out rows: row index (position in the data), group, score, the chance of
    the positive decision (0 or 1 unless the rule randomizes), decision (a randomized rule's draw with :data:`SEED`)."""
    h = np.flatnonzero(rows.held)
    g, score = rows.row_groups[h], rows.scores[s.score][h]
    chosen = rule.predict(score, g, random_state=SEED).astype(bool)
    return pd.DataFrame({"row": h, "group": g, "score": score, "chance": rule.selection_probability(score, g),
                         "decision": np.where(chosen, rows.positive_outcome, rows.negative_outcome)})


def threshold_table(rows: Rows, s: Settings, f: Fit) -> pd.DataFrame:
    """Per group: the shared and the per-group threshold, and on the held-out rows the group's size and its
    selection rate and marginal benefit B under each."""
    assert f.rule is not None
    h = rows.held
    score, g, y = rows.scores[s.score][h], pd.Series(rows.row_groups[h]), rows.y[h]
    chosen = f.rule.predict(score, g.to_numpy(), random_state=SEED).astype(bool)
    out = []
    for name, grp in g.groupby(g, sort=True).groups.items():
        i = np.asarray(grp)
        before, after = score[i] >= f.shared.thresholds[name], chosen[i]
        out.append({"group": name, "shared threshold": f.shared.thresholds[name],
                    "group threshold": f.rule.thresholds[name], "held-out n": len(i),
                    "selection rate before": before.mean(), "selection rate after": after.mean(),
                    "B before": (before.sum() - y[i].sum()) / len(i), "B after": (after.sum() - y[i].sum()) / len(i)})
        if f.rule.randomized:
            out[-1]["group threshold"] = mitigation_words.mixture_text(f.rule.mixtures[name])
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
