"""The report's Scores section: a score's analysis (:mod:`fairness_core.wording.scores_report`) as an HTML fragment,
every name escaped, and as JSON-able data."""

from __future__ import annotations

import html
import math
from typing import Any

import numpy as np
import pandas as pd

from ..wording.scores_report import ScoreAnalysis

__all__ = ["report_section"]


def _html_table(table: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row) + "</tr>"
                   for row in table.itertuples(index=False))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell(v: Any) -> str:
    if isinstance(v, (float, np.floating)):
        return "undefined" if not np.isfinite(v) else f"{float(v):.4g}"
    return str(v)


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    return [{str(k): (None if isinstance(v, float) and not math.isfinite(v) else
                      v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}
            for row in table.to_dict(orient="records")]


def report_section(analysis: ScoreAnalysis, max_rows: int = 200) -> tuple[str, dict[str, Any]]:
    """The report's Scores section: an HTML fragment (every name escaped) and the same as JSON-able data.

    The HTML holds the reading, the error rates at the threshold, the AUC tables and the calibration table
    (the first ``max_rows`` rows of a long one); the JSON every table in full (undefined numbers as null).
    The threshold sweep, long, is in the JSON only.
    """
    esc = html.escape
    reading = esc(analysis.reading)
    while "**" in reading:   # the reading's Markdown bold, on escaped text
        reading = reading.replace("**", "<b>", 1).replace("**", "</b>", 1)
    parts = [f"<section><h2>Scores: {esc(analysis.score_name)} — calibration, ROC and the threshold</h2>",
             f"<p>{reading}</p>", f"<p class='note'>Threshold: {esc(analysis.words.get('selected', 'selected'))} "
             f"(score ≥ {analysis.threshold:g}). Intervals at {1 - analysis.alpha:.0%}: Clopper–Pearson for rates, "
             "a score-type interval for each AUC, MOVER-D for differences (docs/methods.md).</p>"]
    for name in ("error rates at the threshold", "AUC by group", "AUC differences between groups",
                 "calibration by group"):
        table = analysis.tables()[name]
        note = (f"<p class='note'>The first {max_rows:,} of {len(table):,} rows; every row is in the JSON.</p>"
                if len(table) > max_rows else "")
        parts.append(f"<h3>{esc(name[0].upper() + name[1:])}</h3>{note}{_html_table(table.head(max_rows))}")
    parts.append("</section>")
    data = {"score": analysis.score_name, "threshold": analysis.threshold, "alpha": analysis.alpha,
            "calibration strategy": analysis.calibration.attrs.get("strategy"), "reading": analysis.reading,
            "tables": {name: _records(t) for name, t in analysis.tables().items()}}
    return "".join(parts), data
