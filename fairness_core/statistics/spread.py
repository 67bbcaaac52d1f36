"""The largest difference, or the smallest ratio, of a single-group metric across groups (Fairlearn's
``MetricFrame.difference()`` and ``ratio()``), saying which pair and, for OFI and DI, how sure:
:meth:`fairness_core.audit.Audit.difference` and :meth:`~fairness_core.audit.Audit.ratio` document the columns."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from . import inference
from .confusion import ConfusionMatrix


def largest(table: pd.DataFrame, cms: Mapping[str, ConfusionMatrix], names: Sequence[str], reference: str | None,
            alpha: float, ratio: bool) -> pd.DataFrame:
    """For each metric in ``names`` (columns of the group ``table``): the pair behind the largest difference
    (``ratio`` False) or smallest ratio, across every group (``reference`` None) or against ``reference``, with
    B's OFI interval or PPR's DI interval at level 1 − α/m, Bonferroni over the m pairs it was picked from."""
    rows = {}
    for name in names:
        values = table[name]
        undefined = [g for g, v in values.items() if not np.isfinite(v)]
        ok = values[np.isfinite(values)]
        candidates = ok.drop(reference) if reference is not None and reference in ok.index else ok
        row = {"value": np.nan, "group_high": None, "group_low": None, "ci_low": np.nan, "ci_high": np.nan,
               "interval": "", "undefined_in": ", ".join(undefined)}
        if reference is not None and reference not in ok.index:
            row["interval"] = f"{name} is undefined for the reference {reference}"
        elif len(ok) < 2:
            row["interval"] = f"{name} is defined for fewer than two groups"
        else:
            if reference is None:
                ranked = ok.sort_values(kind="stable")
                high, low = ranked.index[-1], ranked.index[0]  # two distinct groups even when all tie
                pairs = len(ok) * (len(ok) - 1) // 2
            else:
                with np.errstate(divide="ignore", invalid="ignore"):
                    far = (np.log(candidates / ok[reference]).abs() if ratio
                           else (candidates - ok[reference]).abs())
                g = far.idxmax() if np.isfinite(far).any() else candidates.index[0]
                high, low = (g, reference) if candidates[g] >= ok[reference] else (reference, g)
                pairs = len(candidates)
            row["group_high"], row["group_low"] = high, low
            with np.errstate(divide="ignore", invalid="ignore"):
                row["value"] = float(ok[low] / ok[high]) if ratio else float(ok[high] - ok[low])
            level = 1 - alpha / max(pairs, 1)
            if not ratio and name == "B":
                r = inference.ofi_test(cms[high], cms[low], alpha=1 - level)
                row.update(ci_low=r.ci_low, ci_high=r.ci_high,
                           interval=f"OFI {level:.4g} interval ({r.method}), Bonferroni over {pairs} pair(s)")
            elif ratio and name == "PPR":
                r = inference.di_interval(cms[low], cms[high], alpha=1 - level)
                row.update(ci_low=r.ci_low, ci_high=r.ci_high,
                           interval=f"DI {level:.4g} interval ({r.method}), Bonferroni over {pairs} pair(s)")
            else:
                row["interval"] = "no interval for this metric (only B's difference and PPR's ratio have one)"
        rows[name] = row
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "metric"
    return out
