"""Judging synthetic data: distances to a target distribution (Briscoe 2024, Table 3.5) and the bias of a
classifier trained with and without it (Briscoe 2024, Table 3.4), per group against the rest.

>>> import pandas as pd
>>> d = distances(pd.Series(["a", "a", "b", "b"]), {"a": 0.5, "b": 0.5})
>>> d["KS statistic"], d["KL divergence"], d["JS distance"]
(0.0, 0.0, 0.0)
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy

from . import bias
from .confusion import ConfusionMatrix

#: Briscoe 2024, Table 3.4's metrics.
TABLE_3_4 = ("OFI", "DI", "DCA", "DPPL")


def shares(values: pd.Series, categories: Sequence[str]) -> np.ndarray:
    """Share of each category (in the given order) among ``values``."""
    counts = values.astype(str).value_counts()
    v = np.array([counts.get(c, 0) for c in categories], dtype=float)
    return v / v.sum() if v.sum() else v


def distances(values: pd.Series, target: Mapping[str, float], categories: Sequence[str] | None = None
              ) -> dict[str, float]:
    """KS statistic, KL divergence D(observed ‖ target) and JS distance (natural log) of the
    categorical ``values`` against ``target`` proportions (Briscoe 2024, Table 3.5; SciPy's ``entropy``
    and ``jensenshannon``). KS compares the two CDFs over the categories in ``categories``
    order (default: the target's); KL is inf where the target gives 0 to an observed category."""
    cats = list(categories) if categories is not None else list(target)
    q = np.array([float(target.get(c, 0.0)) for c in cats])
    if q.sum() <= 0 or np.any(q < 0):
        raise ValueError("target proportions must be >= 0 and not all 0")
    q = q / q.sum()
    p = shares(values, cats)
    return {"KS statistic": float(np.max(np.abs(np.cumsum(p) - np.cumsum(q)))),
            "KL divergence": float(entropy(p, q)), "JS distance": float(jensenshannon(p, q))}


#: Below this the real data already matches the target, and "improvement" is not reported.
MATCHED = 1e-3


def _table(s: Mapping[str, float], r: Mapping[str, float]) -> pd.DataFrame:
    rows = []
    for k in s:
        imp = 1 - s[k] / r[k] if r[k] > MATCHED and np.isfinite(r[k]) else np.nan
        rows.append({"metric": k, "synthetic": s[k], "real": r[k], "improvement": imp})
    return pd.DataFrame(rows).set_index("metric")


def distance_table(real: pd.Series, synthetic: pd.Series, target: Mapping[str, float],
                   categories: Sequence[str] | None = None) -> pd.DataFrame:
    """Briscoe 2024, Table 3.5 for one column: rows KS / KL / JS; columns synthetic, real, improvement
    (1 − synthetic/real, as a share; NaN where real is already within 0.001 of the target)."""
    return _table(distances(synthetic, target, categories), distances(real, target, categories))


def per_group_distance_table(real: pd.Series, real_groups: pd.Series, synthetic: pd.Series,
                             synthetic_groups: pd.Series, target: Mapping[str, float]) -> pd.DataFrame:
    """Like :func:`distance_table`, but each distance is a mean over groups of the distance of that
    group's category mix to the target (the diversity objective acts within every group).

    The first three columns weight each group by its number of real rows, so the table speaks for
    the people in the data; the ``(unweighted)`` columns give every group the same weight, as the
    thesis's Table 3.5 does, where a few tiny groups can carry the whole improvement. Groups
    without synthetic rows are left out of both sides."""
    real, real_groups = real.reset_index(drop=True), real_groups.reset_index(drop=True)
    synthetic, synthetic_groups = synthetic.reset_index(drop=True), synthetic_groups.reset_index(drop=True)
    groups = [g for g in pd.unique(real_groups) if (synthetic_groups.to_numpy() == g).any()]
    size = np.array([(real_groups.to_numpy() == g).sum() for g in groups], dtype=float)

    def mean_distances(values: pd.Series, labels: pd.Series, weights: np.ndarray) -> dict[str, float]:
        per = [distances(values[labels.to_numpy() == g], target) for g in groups]
        return {k: float(np.average([d[k] for d in per], weights=weights)) for k in per[0]}

    weighted = _table(mean_distances(synthetic, synthetic_groups, size), mean_distances(real, real_groups, size))
    flat = np.ones(len(groups))
    plain = _table(mean_distances(synthetic, synthetic_groups, flat), mean_distances(real, real_groups, flat))
    return weighted.join(plain.add_suffix(" (unweighted)"))


def group_share_table(real: pd.Series, real_groups: pd.Series, synthetic: pd.Series, synthetic_groups: pd.Series,
                      category: str, target: float) -> pd.DataFrame:
    """Per group: the share of ``category`` among real and synthetic rows, and its target."""
    def share(values: pd.Series, groups: pd.Series) -> pd.Series:
        hit = (values.astype(str).to_numpy() == category).astype(float)
        return pd.Series(hit, index=groups.to_numpy()).groupby(level=0).mean()

    out = pd.DataFrame({"real": share(real, real_groups), "synthetic": share(synthetic, synthetic_groups)})
    out["target"] = target
    out.index.name = "group"
    out.attrs["category"] = category
    return out


def share_table(real: pd.Series, synthetic: pd.Series, target: Mapping[str, float]) -> pd.DataFrame:
    """Per category: real, synthetic and target shares (what the bar chart draws)."""
    cats = list(target)
    q = np.array([float(target[c]) for c in cats])
    return pd.DataFrame({"real": shares(real, cats), "synthetic": shares(synthetic, cats), "target": q / q.sum()},
                        index=pd.Index(cats, name="category"))


def bias_by_group(y_true: npt.ArrayLike, y_pred: npt.ArrayLike, groups: npt.ArrayLike,
                  names: Iterable[str] = TABLE_3_4) -> pd.DataFrame:
    """Each group i against the rest of the data j, for each comparison in ``names`` (NaN where
    undefined). Rows: groups; columns: metrics; plus n."""
    y, yp = np.asarray(y_true).astype(int), np.asarray(y_pred).astype(int)
    g = np.asarray(groups, dtype=object)
    names = list(names)
    total = ConfusionMatrix.from_predictions(y, yp)
    rows = {}
    for name in sorted(set(g.tolist()), key=str):
        mask = g == name
        cm = ConfusionMatrix.from_predictions(y[mask], yp[mask])
        rest = total - cm
        rows[name] = {"n": int(mask.sum()),
                      **{k: (bias.compare(k, cm, rest) if rest.n else np.nan) for k in names}}
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "group (vs the rest)"
    return out


#: Groups with fewer test rows than this are flagged: their bias metrics swing between seeds.
MIN_TEST_ROWS = 30


def summarize(runs: pd.DataFrame, names: Iterable[str] = TABLE_3_4, min_rows: int = MIN_TEST_ROWS) -> pd.DataFrame:
    """Mean and spread over seeds, before (``real``) and after (``augmented``), with the
    improvement |before − pivot| − |after − pivot| (> 0: closer to no bias).

    ``improves`` reads the improvement against its noise: "yes" / "no" only when it is more than
    twice its standard error over the classifier seeds (√(sd²_real/k + sd²_augmented/k)); "within
    seed noise" otherwise; "too few test rows" when the group has fewer than ``min_rows`` test
    rows (n); "undefined" when a metric is. ``runs`` is long: columns seed, data ("real" /
    "augmented"), group, n, and one column per metric.
    """
    out = []
    for name in names:
        pivot = bias.info(name).pivot
        for g, part in runs.groupby("group", sort=False):
            before = part.loc[part["data"] == "real", name].to_numpy(dtype=float)
            after = part.loc[part["data"] == "augmented", name].to_numpy(dtype=float)
            mb, ma = _mean(before), _mean(after)
            imp = abs(mb - pivot) - abs(ma - pivot) if np.isfinite(mb) and np.isfinite(ma) else np.nan
            n = int(part["n"].iloc[0]) if "n" in part else None
            sb, sa = _sd(before), _sd(after)
            k = max(min(np.isfinite(before).sum(), np.isfinite(after).sum()), 1)
            se = float(np.sqrt(np.nan_to_num(sb) ** 2 / k + np.nan_to_num(sa) ** 2 / k))
            if not np.isfinite(imp):
                word = "undefined"
            elif n is not None and n < min_rows:
                word = "too few test rows"
            elif abs(imp) <= 2 * se:
                word = "within seed noise"
            else:
                word = "yes" if imp > 0 else "no"
            out.append({"metric": name, "group": g, **({"n": n} if n is not None else {}), "real": mb, "real sd": sb,
                        "augmented": ma, "augmented sd": sa, "improvement": imp, "improvement se": se,
                        "improves": word})
    return pd.DataFrame(out)


def _mean(v: np.ndarray) -> float:
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else np.nan


def _sd(v: np.ndarray) -> float:
    v = v[np.isfinite(v)]
    return float(v.std(ddof=1)) if v.size > 1 else np.nan
