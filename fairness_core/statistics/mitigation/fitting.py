"""The fitting: per-group thresholds (:func:`fit_thresholds`, randomized or not), cross-fitted
(:func:`cross_fit`) and over many tolerances (:func:`frontier`); the package's docstring explains the method."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from typing import Any

import numpy as np
import pandas as pd

from .held_out import CrossFit, fold_rows
from .inputs import (DEFAULT_TOLERANCE, DEFAULT_TOLERANCES, TARGETS, FloatArray, InfeasibleTarget, _check_options,
                     _Rows, _rows)
from .rule import SCORE_TRANSFORMS, ThresholdRule, _disparities, _group_counts, _measure_counts, _min_di, _table_counts
from .search import (_bands, _choose, _Curves, _curves, _feasible_positions, _Mixed, _objective_values,
                     _randomized_lp, _randomized_roc_gain, _randomized_total, _search, _smallest_tolerance)

#: Most (band positions × groups) evaluated at once; beyond, the search is strided, then refined.
SEARCH_BUDGET = 250_000
#: Smallest gain (objective units, on the fitting rows) for which ``randomize=True`` returns a mixture.
RANDOMIZE_MIN_GAIN = 1e-9


# ------------------------------------------------------------------------------------------- fitting

def _shared_threshold(rows: _Rows, cv: _Curves) -> float:
    """The one threshold for everyone that maximizes the objective (the highest among equals)."""
    s, y = rows.scores[cv.by_score], rows.y[cv.by_score]
    last = np.ones(len(s), bool)
    last[:-1] = s[1:] != s[:-1]
    ends = np.flatnonzero(last)
    tp = np.concatenate([[0.0], np.cumsum(y)[ends]])
    fp = np.concatenate([[0.0], ends + 1.0]) - tp
    pos, neg = cv.pos.sum(), cv.neg.sum()
    value = _objective_values(tp, fp, pos, neg, cv.objective, cv.cost_fp, cv.cost_fn, pos, neg)
    best = int(np.argmax(value))
    return math.inf if best == 0 else float(s[ends[best - 1]])


def _fingerprint(rows: _Rows) -> str:
    """A SHA-256 of the fitting rows: scores, labels and each row's group name, in row order."""
    h = hashlib.sha256()
    for part in (rows.scores, rows.y, rows.codes.astype(np.int32)):
        h.update(np.ascontiguousarray(part).tobytes())
    h.update(json.dumps([str(x) for x in rows.names], ensure_ascii=False).encode())
    return "sha256:" + h.hexdigest()


def _mixtures(cv: _Curves, mixed: _Mixed) -> tuple[dict[Any, tuple[tuple[float, float], ...]], FloatArray, FloatArray]:
    """Each group's thresholds and probabilities from the linear program's weights (weights below 1e-9 dropped,
    the rest renormalized; highest threshold first), and every group's expected TP and FP under them."""
    keep = mixed.weights > 1e-9
    v, w = mixed.vertices[keep], mixed.weights[keep]
    g = cv.group[v]
    w = w / np.bincount(g, weights=w, minlength=cv.groups)[g]
    tp = np.bincount(g, weights=w * cv.tp[v], minlength=cv.groups)
    fp = np.bincount(g, weights=w * cv.fp[v], minlength=cv.groups)
    bounds = np.searchsorted(g, np.arange(cv.groups + 1))   # v is sorted, so group after group
    mixtures = {name: tuple((float(t), float(p)) for t, p in zip(cv.threshold[v[a:b]], w[a:b]))
                for name, a, b in zip(cv.rows.names, bounds[:-1], bounds[1:])}
    return mixtures, tp, fp


def _solve(cv: _Curves, target: str, tolerance: float, randomize: bool = False) -> ThresholdRule:
    rows = cv.rows
    exhaustive = True
    positions: dict[str, float] = {}
    mixtures: dict[Any, tuple[tuple[float, float], ...]] = {}
    if target == "none":
        t = _shared_threshold(rows, cv)
        cut = np.full(cv.groups, t)
        randomized, note = 0.0, "unconstrained: one shared threshold is optimal, randomizing cannot help"
    else:
        bands = _bands(target, tolerance)
        for band in bands:
            need = cv.pos if band.quantity == "TPR" else cv.neg if band.quantity == "FPR" else None
            if need is not None and (need == 0).any():
                which = [rows.names[g] for g in np.flatnonzero(need == 0)[:5]]
                kind = "actual positives" if band.quantity == "TPR" else "actual negatives"
                raise ValueError(f"target {target!r} compares each group's {band.quantity}, undefined in groups "
                                 f"without {kind}: {which!r} have none in these rows")
        candidates = [_feasible_positions(cv, band) for band in bands]
        if any(c.size == 0 for c in candidates):
            smallest = _smallest_tolerance(cv, bands[0])
            raise InfeasibleTarget(
                f"no thresholds keep every pair's |OFI| within {tolerance:g} on these rows (tied scores make "
                f"some counts unreachable); the smallest tolerance they allow is {smallest:.6f}", smallest)
        best_total, at, exhaustive = _search(cv, bands, candidates, SEARCH_BUDGET)
        positions = {band.quantity: float(c) for band, c in zip(bands, at)}
        chosen = _choose(cv, bands, at)
        cut = cv.threshold[chosen]
        if randomize:
            mixed = _randomized_lp(cv, target, tolerance, chosen)
            randomized = mixed.gain
            if not math.isnan(randomized) and randomized > RANDOMIZE_MIN_GAIN:
                mixtures, tp_mix, fp_mix = _mixtures(cv, mixed)
                positions = mixed.positions
                note = ("this rule randomizes between thresholds within groups (the constraint holding in "
                        "expectation; a linear program over each group's ROC hull, Hardt et al., 2016): it does this "
                        "much better than the best deterministic thresholds")
            elif math.isnan(randomized):
                note = f"not computed for {target!r}: the linear program over each group's ROC hull failed"
            else:
                note = "randomizing cannot do better here: these deterministic thresholds are optimal among mixtures"
        elif target != "equalized_odds":
            randomized = cv.gain(_randomized_total(cv, target, tolerance), float(cv.value[chosen].sum()))
            note = ("the best rule mixing two thresholds at random within groups (the constraint holding in "
                    "expectation) would do this much better")
        else:
            randomized = _randomized_roc_gain(cv, target, tolerance, chosen)
            note = ("the best rule mixing thresholds at random within groups (over each group's ROC hull, the "
                    "constraint holding in expectation; a linear program, Hardt et al., 2016) would do this much "
                    "better")
            if math.isnan(randomized):
                note = f"not computed for {target!r}: the linear program over each group's ROC hull failed"
        if not exhaustive and not math.isnan(randomized):
            note += "; measured against a strided search"
    if target == "none":
        tp, fp, n, pos = _group_counts(rows.y, rows.scores >= cut[rows.codes], rows.codes, cv.groups)
    elif mixtures:   # expected counts under the mixtures
        tp, fp, n, pos = tp_mix, fp_mix, cv.n, cv.pos
    else:  # the chosen candidates' counts are the fitting rows' counts under these thresholds
        tp, fp, n, pos = cv.tp[chosen], cv.fp[chosen], cv.n, cv.pos
    m = _measure_counts(tp, fp, n, pos, target, cv.objective, cv.cost_fp, cv.cost_fn)
    count = (lambda x: x) if mixtures else (lambda x: x.astype(np.int64))  # noqa: E731 (expected counts stay real)
    with np.errstate(divide="ignore", invalid="ignore"):
        table = pd.DataFrame({
            "group": rows.names, "threshold": cut, "n": n.astype(np.int64), "positives": pos.astype(np.int64),
            "selected": count(tp + fp), "TP": count(tp), "FP": count(fp),
            "FN": count(pos - tp), "TN": count(n - pos - fp),
            "selection_rate": (tp + fp) / n, "TPR": np.where(pos > 0, tp / pos, np.nan),
            "FPR": np.where(n > pos, fp / (n - pos), np.nan), "B": (tp + fp - pos) / n})
    return ThresholdRule(
        thresholds=dict(zip(rows.names, map(float, cut))), target=target, tolerance=tolerance,
        objective=cv.objective, cost_fp=cv.cost_fp, cost_fn=cv.cost_fn, objective_value=m["objective"],
        disparity=m["disparity"], max_abs_ofi=m["max_abs_ofi"], groups_table=table, exhaustive=exhaustive,
        randomized_gain=max(randomized, 0.0) if not math.isnan(randomized) else randomized,
        randomized_note=note, fitted_rows=len(rows.scores), mixtures=mixtures, band_positions=positions,
        fingerprint=_fingerprint(rows), score_range=(float(rows.scores.min()), float(rows.scores.max())))


def fit_thresholds(scores: Any, y_true: Any, groups: Any, target: str = "ofi",
                   tolerance: float = DEFAULT_TOLERANCE, objective: str = "accuracy", *,
                   cost_fp: float = 1.0, cost_fn: float = 1.0, randomize: bool = False,
                   score_transform: str = "identity") -> ThresholdRule:
    """Per-group thresholds on ``scores`` that maximize ``objective`` subject to ``target`` on these rows.

    Parameters
    ----------
    scores : array-like of finite numbers
        Higher = the beneficial positive outcome more likely (negate a harm's score first).
    y_true : array-like of 0/1 or bool
        1 = the beneficial outcome happened.
    groups : array-like
        Each row's group (2 to :data:`MAX_GROUPS` groups; join several attributes into one name first).
    target : str
        One of :data:`TARGETS` (the module's table gives each constraint).
    tolerance : float
        The band width T: the largest |OFI| over pairs, or the largest difference in selection rate / TPR /
        FPR. Unused by "four_fifths" (impact ratio >= 0.8) and "none".
    objective : str
        "accuracy", "balanced_accuracy" (½(TPR + TNR) over all rows) or "cost" (cost_fp·FP + cost_fn·FN per
        row, minimized).
    randomize : bool
        False (the default): one threshold per group. True: where mixing thresholds at random within a group
        reaches the target with a better objective (by more than :data:`RANDOMIZE_MIN_GAIN`), the rule holds the
        mixtures (``rule.mixtures``; :func:`_randomized_lp`) and ``rule.predict(..., random_state=seed)`` draws
        from them; the constraint then holds in expectation, and two rows with the same score and group may be
        decided differently. Otherwise the deterministic rule.
    score_transform : str
        How ``scores`` were made from the score a file of new rows will hold (one of :data:`SCORE_TRANSFORMS`):
        "identity" (the default: they are that score), "negate" (``scores`` = −file score, a harm's score turned
        around) or "complement" (1 − a harm's probability). Recorded in the rule (``rule.score_transform``) and its
        file, so that ``python -m fairness_core apply`` turns the file's column the same way; ``rule.predict``
        still takes scores on the fitted scale. The rule also records ``score_range``, the fitting scores' min and
        max.

    Returns
    -------
    ThresholdRule
        ``.thresholds`` ({group: threshold}), ``.predict(scores, groups)`` and the fitting rows' numbers.

    Raises
    ------
    InfeasibleTarget
        "ofi" only: no achievable thresholds meet the tolerance (ties); the message gives the smallest that can.
    ValueError
        Bad inputs, named; "equal_opportunity" / "equalized_odds" with a group without actual positives
        (negatives), whose TPR (FPR) is undefined.
    """
    tolerance = _check_options(target, tolerance, objective, cost_fp, cost_fn)
    if score_transform not in SCORE_TRANSFORMS:
        raise ValueError(f"score_transform must be one of {', '.join(map(repr, SCORE_TRANSFORMS))}; got "
                         f"{score_transform!r}")
    rows = _rows(scores, y_true, groups)
    rule = _solve(_curves(rows, objective, cost_fp, cost_fn), target, tolerance, bool(randomize))
    return dataclasses.replace(rule, score_transform=score_transform)


def cross_fit(scores: Any, y_true: Any, groups: Any, target: str = "ofi", tolerance: float = DEFAULT_TOLERANCE,
              objective: str = "accuracy", *, folds: int = 5, seed: int = 0, randomize: bool = False,
              random_state: Any = 0, cost_fp: float = 1.0, cost_fn: float = 1.0) -> CrossFit:
    """Fit thresholds k times, each on every fold but one (:func:`fold_rows` with ``seed``), and decide every row
    by the rule fitted without it (:mod:`.held_out` explains why). ``random_state`` draws the randomized rules'
    decisions, fold after fold. Raises :class:`InfeasibleTarget` naming the fold where the target cannot be met,
    and ValueError where a fold's fitting rows lack a group (a group needs at least 2 rows)."""
    _check_options(target, tolerance, objective, cost_fp, cost_fn)
    rows = _rows(scores, y_true, groups)
    names = np.asarray(rows.names, dtype=object)[rows.codes]
    fold = fold_rows(rows.codes, rows.y, folds, seed)
    rng = random_state if isinstance(random_state, np.random.Generator) else np.random.default_rng(random_state)
    pred, prob, before = np.zeros(len(fold), np.int8), np.zeros(len(fold)), np.zeros(len(fold), np.int8)
    rules, shared = [], []
    for j in range(folds):   # over folds (at most MAX_FOLDS), not rows
        out, inside = fold == j, fold != j
        args = (rows.scores[inside], rows.y[inside], names[inside])
        kw = dict(objective=objective, cost_fp=cost_fp, cost_fn=cost_fn)
        try:
            rule = fit_thresholds(*args, target=target, tolerance=tolerance, randomize=randomize, **kw)
        except InfeasibleTarget as exc:
            raise InfeasibleTarget(f"fold {j + 1} of {folds}: {exc}", exc.smallest) from None
        ref = fit_thresholds(*args, target="none", **kw)
        pred[out] = rule.predict(rows.scores[out], names[out], random_state=rng)
        prob[out] = rule.selection_probability(rows.scores[out], names[out])
        before[out] = ref.predict(rows.scores[out], names[out])
        rules.append(rule)
        shared.append(ref)
    return CrossFit(fold, tuple(rules), tuple(shared), pred, prob, before)


def frontier(scores: Any, y_true: Any, groups: Any, target: str = "ofi",
             tolerances: Any = DEFAULT_TOLERANCES, objective: str = "accuracy", *,
             cost_fp: float = 1.0, cost_fn: float = 1.0) -> pd.DataFrame:
    """The trade-off as the tolerance varies, on the fitting rows: one row per tolerance with the best
    ``objective``, the target's ``disparity``, ``max_abs_ofi`` (the largest |OFI| over pairs), ``min_di``,
    ``exhaustive``, ``randomized_gain``, ``feasible`` and a ``note`` (why a tolerance is infeasible), and
    ``thresholds``. The groups are sorted and the objective precomputed once for all tolerances.
    ``attrs["unconstrained"]`` holds the shared threshold's numbers (target "none"), the reference point.
    "four_fifths" has no tolerance to vary: use "demographic_parity" for its frontier.
    """
    if target in ("four_fifths", "none"):
        raise ValueError(f"target {target!r} has no tolerance to vary; frontier takes "
                         + ", ".join(repr(t) for t in TARGETS if t not in ("four_fifths", "none")))
    tols = np.atleast_1d(np.asarray(tolerances, dtype=float))
    if tols.size == 0:
        raise ValueError("tolerances is empty; give at least one")
    for t in tols:
        _check_options(target, t, objective, cost_fp, cost_fn)
    rows = _rows(scores, y_true, groups)
    cv = _curves(rows, objective, cost_fp, cost_fn)
    out = []
    for t in tols:
        try:
            r = _solve(cv, target, float(t))
        except InfeasibleTarget as exc:
            out.append({"tolerance": float(t), "objective": math.nan, "disparity": math.nan,
                        "max_abs_ofi": math.nan, "min_di": math.nan, "exhaustive": True,
                        "randomized_gain": math.nan, "feasible": False, "note": str(exc), "thresholds": None})
            continue
        out.append({"tolerance": float(t), "objective": r.objective_value, "disparity": r.disparity,
                    "max_abs_ofi": r.max_abs_ofi, "min_di": _min_di(r.groups_table), "exhaustive": r.exhaustive,
                    "randomized_gain": r.randomized_gain, "feasible": True, "note": "",
                    "thresholds": r.thresholds})
    df = pd.DataFrame(out)
    ref = _solve(cv, "none", 0.0)
    df.attrs.update({"target": target, "objective": objective, "rows": len(rows.scores),
                     "unconstrained": {"objective": ref.objective_value, "max_abs_ofi": ref.max_abs_ofi,
                                       "disparity": _disparities(*_table_counts(ref.groups_table))[target],
                                       "min_di": _min_di(ref.groups_table), "threshold": ref.thresholds}})
    return df


