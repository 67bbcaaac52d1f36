"""What an audit of decisions alone says, in words: each four-fifths verdict's sentence, the table as people
read it, and the findings (:func:`fairness_core.verdicts.selection_verdicts` makes the verdicts).

Group names are returned as given: escape them for wherever the text goes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..common import text
from ..statistics.verdicts import SELECTION_VERDICTS
from .levels import interval_label
from ..common.vocabulary import adjustment

#: The selection metrics in the page's words (the groups table of decisions alone, on the page and in the report).
SELECTION_WORDS = {"PPR": "selection rate", "PNR": "not selected"}

#: What an audit of decisions alone cannot answer, said once (the report's summary and its JSON).
NEEDS_OUTCOMES_ONCE = ("no outcome was observed, so this audit answers what decisions can — selection rates, impact "
                       "ratios and the four-fifths rule. Whether each decision was right — OFI, error rates, equal "
                       "opportunity, calibration — needs the observed outcome beside the decisions.")


def report_contents(has_outcomes: bool) -> str:
    """What the audit report's downloads hold, in words (the caption above them): an audit of decisions alone is
    promised only what its report holds."""
    body = ("the verdicts with their intervals, p-values and methods, the OFI-vs-DI and forest charts, the OFI and DI "
            "heatmaps, every metric table, MATCH tests, Cross-Prior Smoothing of every group"
            if has_outcomes else
            "each attribute's and the groups' four-fifths verdicts with their intervals, p-values and methods, the "
            "selection rate of every group, the Local Law 144 summary")
    return ("One self-contained HTML file (interactive figures, opens offline): provenance, groups and sizes, "
            f"{body}, the settings used, the date and the tool version. The same numbers as JSON, and every table as "
            "CSV in a zip.")


def pairs_of(attributes: tuple[str, ...]) -> str:
    """What the groups as loaded are, in words: "the sex × race intersections", or "the groups as loaded"."""
    return f"the {' × '.join(attributes)} intersections" if len(attributes) > 1 else "the groups as loaded"


def _ratio_text(row: pd.Series) -> str:
    return (f"{row['group_i']} selected at {row['rate_i']:.1%} of {int(row['n_i']):,} against {row['group_j']} at "
            f"{row['rate_j']:.1%} of {int(row['n_j']):,}: impact ratio {text.ratio_text(row['di'], row['di_ci_low'], row['di_ci_high'])}")


def selection_reading(verdicts: pd.DataFrame, max_rows: int | None = None) -> pd.DataFrame:
    """The four-fifths verdicts of decisions alone as people read them: pair, impact ratio [adjusted CI],
    verdict, the reading, then the rates and numbers; adverse impact first, then by impact ratio."""
    order = verdicts["verdict"].map({v: k for k, v in enumerate(SELECTION_VERDICTS)})
    v = verdicts.iloc[np.lexsort((verdicts["di"].to_numpy(), order.to_numpy()))]
    v = v if max_rows is None else v.head(max_rows)
    out = pd.DataFrame({
        "pair": v["group_i"].astype(str) + " vs " + v["group_j"].astype(str),
        f"impact ratio [{interval_label(verdicts, 'di')}]": [
            text.ratio_text(d, lo, hi) for d, lo, hi in zip(v["di"], v["di_ci_low"], v["di_ci_high"])],
        "verdict": v["verdict"], "reading": v["explanation"],
        "selection rate i": v["rate_i"], "selection rate j": v["rate_j"], "n_i": v["n_i"], "n_j": v["n_j"],
        "impact ratio p (adjusted)": v["di_p_adjusted"], "interval method": v["di_method"],
    })
    return out.reset_index(drop=True)


def selection_explanations(df: pd.DataFrame) -> np.ndarray:
    """Each four-fifths verdict of decisions alone (:func:`fairness_core.verdicts.selection_verdicts`) in a
    sentence that quotes the adjusted interval that decided it."""
    ci = interval_label(df, "di")
    out = []
    for _, r in df.iterrows():
        ratio = _ratio_text(r)
        verdict = r["verdict"]
        if verdict == "adverse impact":
            out.append(f"{ratio} ({ci}): below four fifths beyond what chance explains.")
        elif verdict == "materiality unclear":
            out.append(f"{ratio} ({ci}): the rates differ, but the ratio may lie above or below 0.8.")
        elif verdict == "no adverse impact detected":
            out.append(f"{ratio} ({ci}): shown inside the four-fifths band [0.8, 1.25].")
        else:
            out.append(f"{ratio} ({ci}): too few rows to tell whether it is inside the band or below it.")
    return np.array(out, dtype=object)


def selection_findings(verdicts: pd.DataFrame, max_items: int = 3) -> str:
    """What the four-fifths verdicts of decisions alone say, in plain words: the counts, the lowest impact
    ratios shown below 0.8 with their adjusted intervals. What needs outcomes is said once, where the audit is shown
    (not in every findings).

    >>> from fairness_core.audit import Audit
    >>> a = Audit.from_decisions([1] * 92 + [0] * 308 + [1] * 407 + [0] * 693, ["a"] * 400 + ["b"] * 1100,
    ...                          positive_is="benefit")
    >>> selection_findings(a.verdicts()).startswith("Of 1 group pair: 1 adverse impact")
    True
    """
    v = verdicts
    if v.empty:
        return "There are no group pairs to compare."
    alpha, adjust = v.settings.alpha, v.settings.adjust
    counts = v["verdict"].value_counts()
    parts = [f"Of {len(v):,} group pair{'s' if len(v) != 1 else ''}: "
             + ", ".join(f"{counts.get(k, 0):,} {k}" for k in SELECTION_VERDICTS)
             + f" (four-fifths rule on the selection rates; every claim at α = {alpha:g}, "
             f"{adjustment(adjust).controls})."]
    adverse = v[v["verdict"] == "adverse impact"].sort_values("di")
    if len(adverse):
        shown = "; ".join(_ratio_text(r) for _, r in adverse.head(max_items).iterrows())
        parts.append(f"Shown below four fifths ({interval_label(v, 'di')}): {shown}"
                     + (f"; and {len(adverse) - max_items} more." if len(adverse) > max_items else "."))
    unclear = int(counts.get("materiality unclear", 0))
    if unclear:
        parts.append(f"{unclear} pair(s) are selected at different rates, but the data cannot tell whether the "
                     "ratio is below 0.8.")
    if not len(adverse) and not unclear:
        parts.append("No pair's selection rates are shown to differ"
                     + (" at these sample sizes." if counts.get("inconclusive", 0) else "."))
    return " ".join(parts)


__all__ = ["NEEDS_OUTCOMES_ONCE", "SELECTION_WORDS", "pairs_of", "report_contents", "selection_explanations", "selection_findings", "selection_reading"]
