"""The shareable audit report: one self-contained HTML file, plus the same numbers as JSON and CSV.

The HTML inlines plotly.js once (so it opens offline), embeds the interactive figures, and
escapes every piece of text that came from the data. Numbers that are undefined read
"undefined", never 0 or 1.

>>> from fairness_core import datasets, report
>>> r = report.build(datasets.load_demo("ricci_a"))
>>> sorted(r.tables)[:5]
['cells', 'equal opportunity', 'group metrics', 'local law 144 summary', 'match']
>>> "<html" in r.html() and "Ricci" in r.html()
True
"""

from __future__ import annotations

import html
import io
import json
import math
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from . import plots
from .. import regulatory
from ..statistics import smoothing
from .._version import __version__
from ..audit import Audit, DECISION_METRICS
from ..statistics.verdicts import SELECTION_VERDICTS, VERDICTS, VerdictSettings, interval_label
from ..results import Verdicts
from ..wording.decisions import NEEDS_OUTCOMES_ONCE as NEEDS_ONCE, SELECTION_WORDS, pairs_of
from ..wording.reading import findings_first, verdict_reading
from ..wording.publication import data_used_text
from ..services.io import to_safe_csv
from .scores_section import report_section
from ..common.vocabulary import adjustment
from ..common.text import safe_file_name


@dataclass
class Report:
    """Everything the report shows: settings, tables and figures."""

    audit: Audit
    settings: dict[str, Any]
    tables: dict[str, pd.DataFrame]
    figures: dict[str, go.Figure]
    created: str
    extra_notes: list[str] = field(default_factory=list)
    #: The three questions answered in words: "" for the groups as loaded, then each attribute alone.
    questions: dict[str, dict[str, str]] = field(default_factory=dict)
    #: A risk score's section (:func:`fairness_core.presentation.scores_section.report_section`): its HTML and its JSON.
    score_section: tuple[str, dict[str, Any]] | None = None

    def summary(self) -> dict[str, Any]:
        v = self.tables["verdicts"]
        if not self.audit.has_outcomes:
            return {"each attribute alone": {a: _decision_counts(self.tables[f"verdicts by {a} alone"])
                                             for a in self.audit.attributes},
                    "pairs of": pairs_of(self.audit.attributes),
                    "pairs": int(len(v)), "has outcomes": False, "needs outcomes": NEEDS_ONCE,
                    "verdicts": {k: int((v["verdict"] == k).sum()) for k in SELECTION_VERDICTS},
                    "DI interval level": interval_label(v, "di"),
                    "four-fifths violations (point estimate)": int((~v["four_fifths"].isin(["no bias", "undefined"])).sum()),
                    "four-fifths violations (significant)": int(v["di_beyond_band"].sum()),
                    "unknown categories": list(self.audit.unknown),
                    "findings": v.findings(), "three questions": self.questions[""]}
        outside = np.maximum(v["ofi_ci_low"].to_numpy(float), -v["ofi_ci_high"].to_numpy(float))
        return {"pairs": int(len(v)), "has outcomes": True,
                "verdicts": {k: int((v["verdict"] == k).sum()) for k in VERDICTS},
                "max |OFI|": _num(v["ofi"].abs().max()),
                "OFI interval level": interval_label(v, "ofi"), "DI interval level": interval_label(v, "di"),
                # the largest distance from 0 that some pair's adjusted OFI interval keeps entirely (0 if none excludes 0)
                "max |OFI| lower bound": _num(float(max(0.0, np.nanmax(outside))) if len(v) else None),
                "four-fifths violations (point estimate)": int((~v["four_fifths"].isin(["no bias", "undefined"])).sum()),
                # DI's adjusted interval (the one printed) beyond the four-fifths band
                "four-fifths violations (significant)": int(v["di_beyond_band"].sum()),
                "findings": v.findings(),
                "three questions": self.questions[""]}

    def to_json(self) -> str:
        """Settings, summary and every table as records; undefined numbers as null.

        The tables are written by pandas' JSON writer (fast for 124,750 pairs) and spliced in."""
        doc = {"tool": "fairness-audit-workbench", "version": __version__, "created": self.created,
               "source": self.audit.source, "positive outcome": self.audit.positive_outcome,
               "positive is": self.audit.positive_is or "undeclared (a benefit assumed)",
               "direction": self.audit.direction,
               "notes": list(self.audit.notes) + self.extra_notes, "settings": self.settings,
               "summary": self.summary(), "tables": "@TABLES@"}
        if self.score_section is not None:
            doc["scores"] = self.score_section[1]
        head = json.dumps(doc, indent=2, allow_nan=False, default=str)
        tables = ", ".join(f"{json.dumps(k)}: {_table_json(t)}" for k, t in self.tables.items())
        return head.replace('"@TABLES@"', "{" + tables + "}")

    def csv_zip(self) -> bytes:
        """Every table as a formula-safe CSV, in one zip, after :data:`ZIP_CONTENTS` (each entry's file name beside
        its table's name).

        A table's name holds user text ("verdicts by Race/Ethnicity alone"), so its entry is named by
        :func:`~fairness_core.common.text.safe_file_name` (``verdicts_by_Race_Ethnicity_alone.csv``, never a folder
        ``verdicts_by_Race/``; two names that slug alike get ``-2``), and the name as it is stays inside the file:
        each CSV's first column, ``table``, holds it on every row."""
        taken = {ZIP_CONTENTS}
        files = [safe_file_name(name, ".csv", taken) for name in self.tables]
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
            z.writestr(ZIP_CONTENTS, to_safe_csv(pd.DataFrame({"file": files, "table": list(self.tables)}),
                                                 index=False))
            for file, (name, table) in zip(files, self.tables.items()):
                named = (table.reset_index() if _keep_index(table) else table).copy(deep=False)
                named.insert(0, "table", name, allow_duplicates=True)
                z.writestr(file, to_safe_csv(named, index=False))
        return buf.getvalue()

    def html(self) -> str:
        """The report as one self-contained HTML page: the answer first (summary, then the verdicts as
        people read them), the figures, every table, and the settings; prints cleanly to A4 or Letter."""
        parts = [*self._html_header(), *self._html_verdicts(),
                 *([self.score_section[0]] if self.score_section is not None else []),
                 *self._html_figures(), *self._html_tables()]
        parts.append("<section><h2>Settings and methods</h2>" + _table(pd.DataFrame(
            {"setting": list(self.settings), "value": [str(v) for v in self.settings.values()]}), index=False)
            + "</section>")
        body = "\n".join(parts)
        return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
                f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>Fairness audit report"
                f"</title><style>{_CSS}</style></head><body>{body}<script>{_PRINT_JS}</script></body></html>")

    def _html_header(self) -> list[str]:
        """What was audited, the notes, and the summary: the three questions, the verdict counts, the findings."""
        esc = html.escape
        parts = [f"<header><h1>Fairness audit report</h1><p class='meta'>{esc(self.audit.source)} · "
                 f"{len(self.audit.groups)} groups · n = {self.audit.total().n:,} · "
                 f"{esc(self.audit.direction)}<br>Model: {esc(str(self.settings.get('model (name and version)', '')))}"
                 f" · period: {esc(str(self.settings.get('period the data cover', '')))}"
                 + "".join(f" · {esc(k)}: {esc(str(v))}" for k, v in self.audit.provenance.items())
                 + f"<br>Created {esc(self.created)} by fairness-audit-workbench {esc(__version__)}</p>"]
        for note in [*self.audit.notes, *self.extra_notes]:
            parts.append(f"<p class='note'>{esc(note)}</p>")
        s = self.summary()
        counts = ", ".join(f"{esc(k)}: {v}" for k, v in s["verdicts"].items())
        questions = "".join(f"<li><b>{esc(q)}</b> {esc(a)}</li>" for q, a in s["three questions"].items())
        if not s["has outcomes"]:   # each attribute alone leads; the groups as loaded follow
            parts.append(f"<h2>Summary</h2><p class='note'>Decisions alone: {esc(NEEDS_ONCE)}</p>")
            for attribute, a in s["each attribute alone"].items():
                tally = ", ".join(f"{esc(k)}: {n}" for k, n in a["verdicts"].items())
                parts.append(f"<h3>By {esc(attribute)} alone</h3><p>{a['pairs']} pairs of {esc(attribute)} categories "
                             f"— {tally}.</p><p>{esc(a['findings'])}</p><p>{esc(a['four-fifths rule'])}</p>")
            parts.append(f"<h3>{esc(s['pairs of'].capitalize())}</h3><p>{s['pairs']} pairs — {counts}.</p>"
                         f"<p>{esc(s['findings'])}</p><ol class='questions'>{questions}</ol>"
                         "<p>Every verdict rests on a multiplicity-adjusted interval of the impact ratio, printed "
                         "beside it.</p></header>")
            return parts
        parts.append(f"<h2>Summary</h2><ol class='questions'>{questions}</ol>"
                     f"<p>{s['pairs']} group pairs — {counts}.</p><p>{esc(s['findings'])}</p>"
                     f"<p>Largest |OFI| = {_fmt(s['max |OFI|'])}; four-fifths rule violated by the point estimate in "
                     f"{s['four-fifths violations (point estimate)']} pairs, significantly in "
                     f"{s['four-fifths violations (significant)']}. OFI beyond the tolerance: the algorithm is at fault; OFI "
                     "within it with DI beyond the four-fifths band: a systemic disparity. Every verdict rests on a "
                     "multiplicity-adjusted interval, printed beside it; the settings and methods are at the end.</p>"
                     "</header>")
        return parts

    def _html_verdicts(self) -> list[str]:
        """The verdicts as people read them: every pair, then each attribute alone."""
        esc = html.escape
        verdicts = self.tables["verdicts"]
        reading = verdict_reading(verdicts, MAX_HTML_ROWS).iloc[:, :9]  # pair … p-values; the rest is in the CSV
        shown_note = (f"<p class='note'>The first {MAX_HTML_ROWS:,} of {len(verdicts):,} pairs, findings first; "
                      "every pair with every number is in the JSON and the CSV zip.</p>"
                      if len(verdicts) > MAX_HTML_ROWS else "")
        parts = [f"<section><h2>Verdict per pair</h2>{shown_note}"
                 + _table(reading, index=False, css="reading") + "</section>"]
        alone = []
        for attribute in self.audit.attributes:   # each attribute alone, beside the intersections above
            table = self.tables[f"verdicts by {attribute} alone"]
            items = "".join(f"<li><b>{esc(q)}</b> {esc(a)}</li>" for q, a in self.questions[attribute].items())
            alone.append(f"<section><h2>By {esc(attribute)} alone</h2><ol class='questions'>{items}</ol>"
                         + _table(verdict_reading(table, MAX_HTML_ROWS).iloc[:, :9], index=False, css="reading")
                         + "</section>")
        return [*parts, *alone] if self.audit.has_outcomes else [*alone, *parts]   # decisions: each attribute leads

    def _html_figures(self) -> list[str]:
        """Every figure, interactive; plotly.js inlined once, with the first."""
        parts = ["<section><h2>Figures</h2>"]
        for k, (name, fig) in enumerate(self.figures.items()):
            parts.append(f"<div class='figure' aria-label='{html.escape(name)}'>"
                         + fig.to_html(full_html=False, include_plotlyjs="inline" if k == 0 else False,
                                       config={"displaylogo": False, "responsive": True}) + "</div>")
        return [*parts, "</section>"]

    def _html_tables(self) -> list[str]:
        """Every table (the first :data:`MAX_HTML_ROWS` rows of a long one), each with its printed form when it is
        too wide for a page."""
        parts = []
        for name, table in self.tables.items():
            if name.startswith(("verdicts by ", "scores: ")):
                continue   # shown in their own sections; every number is in the JSON and the CSV zip
            shown, note = table, ""
            if len(table) > MAX_HTML_ROWS:
                shown = (findings_first(table) if name == "verdicts" else table).head(MAX_HTML_ROWS)
                note = (f"<p class='note'>The first {MAX_HTML_ROWS:,} of {len(table):,} rows"
                        f"{' (findings first)' if name == 'verdicts' else ''}; every row is in the JSON and the "
                        "CSV zip.</p>")
            title = html.escape(_TITLES.get(name, name))
            if name == LL144:   # the rules it follows, and what the workbench adds, above the table
                note = f"<p class='note'>{html.escape(regulatory.rules_text(table))}</p>" + note
            printed = _print_tables(shown, name)
            if printed is None:
                parts.append(f"<section><h2>{title}</h2>{note}" + _table(shown, index=_keep_index(shown)) + "</section>")
                continue
            parts.append(f"<section class='screen-only'><h2>{title}</h2>{note}"
                         + _table(shown, index=_keep_index(shown)) + "</section>")
            parts.append(f"<section class='print-only'><h2>{title}</h2>{note}" + printed + "</section>")
        return parts


#: The report's table in Local Law 144's form (:func:`fairness_core.regulatory.ll144_summary`).
LL144 = "local law 144 summary"
#: The trend section's tables (a model with two or more saved periods): the changes, and each period's verdicts.
TREND_CHANGES, TREND_VERDICTS = "trend changes between periods", "trend verdicts by period"
#: The CSV zip's first entry: each table's file name beside its name (:meth:`Report.csv_zip`).
ZIP_CONTENTS = "contents.csv"

#: Each table's heading in the HTML report.
_TITLES = {"verdicts": "Every number behind the verdicts", "cells": "Groups and sizes",
           "group metrics": "Single-group metrics",
           "versus reference": "Every comparison against the reference group",
           "match": "MATCH: is each group's score plausible under the rest of the data?",
           "smoothing": "Cross-Prior Smoothing: raw and smoothed scores (Briscoe 2024, §4.6)",
           "undefined": "Why values are undefined",
           "equal opportunity": "Equal opportunity: FNR and FPR gaps of every pair (simultaneous intervals)",
           LL144: "The regulator's summary (NYC Local Law 144)",
           TREND_CHANGES: "A model over time: each pair's change of OFI between consecutive periods",
           TREND_VERDICTS: "A model over time: each period's verdicts"}

#: Widest table (columns, the index included) printed as it is on screen; wider ones are printed
#: transposed (up to :data:`MAX_TRANSPOSED_ROWS` rows) or in slices of this many columns.
MAX_PRINT_COLUMNS = 12
MAX_TRANSPOSED_ROWS = 10


def _print_tables(table: pd.DataFrame, name: str) -> str | None:
    """The printed form of a table too wide for a page, or None when it fits as it is.

    Few rows: transposed (one column per row, e.g. per group). Many rows: slices of columns, each
    led by the row's name. The verdicts' every number is left to the screen: the reading table
    above prints the essentials."""
    index = _keep_index(table)
    if table.shape[1] + index <= MAX_PRINT_COLUMNS:
        return None
    if name == "verdicts":
        return ("<p class='note'>29 columns, too wide for a page: the verdict table above has the essentials; "
                "every number is in the HTML on screen, the JSON and the CSV zip.</p>")
    t = table if index else table.set_index(table.columns[0])
    if len(t) <= MAX_TRANSPOSED_ROWS:
        flipped = t.astype(object).T  # object first: each value keeps its type (counts stay integers)
        flipped.index.name = "metric"
        return _table(flipped, index=True)
    step = MAX_PRINT_COLUMNS - 4  # room for a long row name beside the numbers
    return "".join(_table(t.iloc[:, k:k + step], index=True) for k in range(0, t.shape[1], step))

#: Most rows of one table in the HTML report (the JSON and CSV carry all of them).
MAX_HTML_ROWS = 1000

#: Screen and print styles. In print: A4 or Letter with 14 mm margins (about 690 px of width), each
#: major section on a new page, figures and table rows never split, tables in a smaller type and
#: wide tables in landscape-friendly 7 pt, no Plotly toolbar.
_CSS = """
body{font-family:Inter,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem auto;max-width:1200px;padding:0 1rem;color:#222}
table{border-collapse:collapse;font-size:13px;margin:.5rem 0 1.5rem}
td,th{border:1px solid #ddd;padding:3px 8px;vertical-align:top}
th{background:#f4f4f4;text-align:left}td.n{text-align:right;white-space:nowrap}td.t{text-align:left}
table.reading td:nth-child(5){text-align:left;min-width:22rem}
.meta{color:#666}.note{background:#eef4fb;padding:.5rem 1rem;border-radius:6px}h2{margin-top:2rem}
.figure{margin-bottom:1.5rem}.print-only{display:none}
@page{size:auto;margin:14mm}
@media print{
 body{margin:0;max-width:none;padding:0;font-size:10pt}
 h1{font-size:18pt;margin:0 0 .3rem}h2{font-size:13pt;margin-top:0}h3{font-size:11pt}
 section{break-before:page}
 .figure,.note,tr,h2,h3{break-inside:avoid}h2,h3{break-after:avoid}
 table{font-size:8pt;width:100%}td,th{padding:1px 4px}thead{display:table-header-group}
 table.reading td:nth-child(5){min-width:0}
 .screen-only{display:none}.print-only{display:block}
 .modebar-container{display:none!important}
 .note{background:none;border:1px solid #bbb}
}
"""

#: Before printing, every figure is redrawn at the page's width (and at most a page tall); after, it
#: takes the window's width again. Figures are responsive on screen.
_PRINT_JS = """
(function(){
 function each(f){document.querySelectorAll('.js-plotly-plot').forEach(f);}
 function shrinkTicks(d){  // narrower than on screen: category labels get a font that fits their slots
   var upd={}, L=d._fullLayout;
   ['xaxis','yaxis'].forEach(function(a){
     var ax=L[a]; if(!ax||ax.type!=='category'||!ax.tickvals||!ax.tickvals.length)return;
     var slot=ax._length/ax.tickvals.length, size=ax.tickfont.size;
     if(slot<size*1.25){upd[a+'.tickfont.size']=Math.max(5,Math.floor(slot/1.25));}
   });
   if(Object.keys(upd).length)Plotly.relayout(d,upd);
 }
 function fitPage(){each(function(d){
   var L=d._fullLayout, h=L?L.height:450;
   d.dataset.h=h; d.dataset.fx=L.xaxis?L.xaxis.tickfont.size:''; d.dataset.fy=L.yaxis?L.yaxis.tickfont.size:'';
   Plotly.relayout(d,{width:680,height:Math.min(h,900)}).then(function(){shrinkTicks(d);});});}
 function fitWindow(){each(function(d){
   var upd={width:null,height:Number(d.dataset.h)||null,autosize:true};
   if(d.dataset.fx)upd['xaxis.tickfont.size']=Number(d.dataset.fx);
   if(d.dataset.fy)upd['yaxis.tickfont.size']=Number(d.dataset.fy);
   Plotly.relayout(d,upd);});}
 window.addEventListener('beforeprint',fitPage);window.addEventListener('afterprint',fitWindow);
})();
"""



def _keep_index(table: pd.DataFrame) -> bool:
    return not isinstance(table.index, pd.RangeIndex)


def _num(v: Any) -> Any:
    if isinstance(v, (float, np.floating)):
        return None if not math.isfinite(float(v)) else float(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return v


def _table_json(table: pd.DataFrame) -> str:
    """One table as JSON records: NaN and ±inf as null, NumPy scalars as plain numbers."""
    t = table.reset_index() if _keep_index(table) else table
    t = t.rename(columns=str)
    floats = t.select_dtypes("float").columns
    if len(floats):
        t = t.copy()
        t[floats] = t[floats].where(np.isfinite(t[floats].to_numpy()), np.nan)
    return t.to_json(orient="records", double_precision=15, force_ascii=False)


def _fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "undefined"
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e-3 and v != 0 else f"{v:.4f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def _cell(x: Any) -> str:
    """One value as the report writes it: yes/no, 1,234, 0.1234, or "undefined"."""
    if x is None or x is pd.NA:
        return "undefined"
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    if isinstance(x, (float, np.floating)):
        return _fmt(float(x))
    return str(x)


def _table(table: pd.DataFrame, index: bool, css: str = "") -> str:
    """An HTML table, every cell escaped: numbers right-aligned (undefined ones say so), text left-aligned
    and free to wrap, the index (when kept) as the first column."""
    t = table.reset_index() if index else table
    if t.empty:
        return "<p class='empty'>None.</p>"
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in t.columns)
    columns = []
    for c in t.columns:
        col = t[c]
        if pd.api.types.is_bool_dtype(col) or pd.api.types.is_numeric_dtype(col):
            numeric = not pd.api.types.is_bool_dtype(col)
        else:  # mixed (a transposed table): numbers only if every value is one
            numeric = bool(col.map(lambda x: isinstance(x, (int, float, np.integer, np.floating))
                                   and not isinstance(x, (bool, np.bool_))).all())
        kind = "n" if numeric else "t"
        columns.append([f"<td class='{kind}'>{html.escape(v, quote=False)}</td>" for v in col.map(_cell)])
    rows = "".join("<tr>" + "".join(r) + "</tr>" for r in zip(*columns))
    return f"<table class='{css}'><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


@dataclass(frozen=True)
class ReportOptions:
    """What the report adds to an audit and its verdicts: the user's words (``model``, ``period``), the MATCH
    metrics and Cross-Prior Smoothing's λ, a model's ``trend`` across saved periods, a score for the Local Law 144
    scoring rate (``scores``, ``score_name``), a risk score's analysis (``score_analysis``), and extra tables and
    notes."""

    model: str = ""
    period: str = ""
    match_metrics: tuple[str, ...] = ("PPR", "TPR", "FPR", "B")
    cps_lambda: float = 10.0
    trend: Any = None
    scores: Any = None
    score_name: str = ""
    score_analysis: Any = None
    #: Which data the audit used, as the user declared it ("historical", "test"; None: not declared), and why
    #: test data (:func:`fairness_core.wording.publication.data_used_text`).
    data_used: str | None = None
    test_data_reason: str = ""
    extra_tables: dict[str, pd.DataFrame] | None = None
    notes: tuple[str, ...] = ()


def build(audit: Audit, verdicts: Verdicts | None = None, *, reference: str | None = None,
          settings: VerdictSettings | None = None, **options: Any) -> Report:
    """Compute everything the report shows for ``audit`` and its ``verdicts`` (:meth:`Audit.verdicts`' result, whose
    settings — tolerance, α, adjustment — govern every verdict, interval and the MATCH table's Holm control).

    Without ``verdicts`` they are computed at ``settings`` (default :class:`~fairness_core.verdicts.VerdictSettings`)
    against ``reference`` (the largest group of known category by default). ``options`` are
    :class:`ReportOptions`' fields: ``model`` (name and version) and ``period`` (the time the data cover) are the
    user's words, printed in the report's header, settings and JSON; the attribute(s) audited, the label and
    prediction columns, the threshold and what positive means come from the audit. With several attributes the
    report has a verdict table per attribute beside the intersections. ``trend`` (a
    :class:`fairness_core.trend.Trend` of this model's saved periods, two or more) adds the trend section.
    ``scores`` (one number per row of the audit's rows, higher = more likely the beneficial outcome) make the Local
    Law 144 summary give the scoring rate instead of the selection rate; ``score_name`` is printed beside it.
    ``score_analysis`` (:func:`fairness_core.scores_report.score_analysis`) adds the Scores section, its tables to
    the CSV zip and its numbers to the JSON; an audit of decisions alone has no such section (it needs outcomes).
    ``data_used`` ("historical" or "test") and ``test_data_reason``: the user's declaration of the data the audit
    used, printed in the settings and the JSON; none given reads "not declared"."""
    opts = ReportOptions(**{k: (tuple(v) if k in ("notes", "match_metrics") and v is not None else v)
                            for k, v in options.items() if v is not None or k in ("trend", "scores")})
    if verdicts is None:
        reference = reference or max(audit.known_groups, key=lambda g: audit.cms[g].n)
        if reference not in audit.cms:
            raise ValueError(f"unknown reference group {reference!r}; groups are {', '.join(audit.groups)}")
        verdicts = audit.verdicts(settings or VerdictSettings(), reference=reference)
    reference = verdicts.reference or reference or max(audit.known_groups, key=lambda g: audit.cms[g].n)
    if not audit.has_outcomes:
        return _build_decisions(audit, verdicts, reference, opts)
    tables, questions = _tables(audit, verdicts, reference, opts)
    tables.update(opts.extra_tables or {})
    figures = {"OFI against DI for every pair": plots.ofi_di_scatter(verdicts),
               f"OFI of each group against {reference}": plots.ofi_forest(verdicts, reference),
               "OFI for every pair": plots.pairwise_heatmap(audit, "OFI", verdicts),
               "Disparate impact and the four-fifths rule": plots.disparate_impact_heatmap(audit, verdicts),
               "Benefit vs expected benefit": plots.benefit_chart(audit),
               "MATCH p-values": plots.match_overview(tables["match"], verdicts.settings.alpha)}
    if TREND_CHANGES in tables:
        figures["OFI of each pair across periods"] = plots.ofi_trend(opts.trend)
        figures["DI of each pair across periods"] = plots.di_trend(opts.trend)
    settings_ = _settings(audit, verdicts, tables, reference, opts)
    section = None
    if opts.score_analysis is not None:
        analysis = opts.score_analysis
        section = report_section(analysis)
        tables.update({f"scores: {name}": table for name, table in analysis.tables().items()})
        settings_["risk score section"] = (f"{analysis.score_name}, threshold {analysis.threshold:g}, "
                                           f"calibration bins {analysis.calibration.attrs.get('strategy')}")
    return Report(audit, settings_, tables, figures, datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                  list(opts.notes), questions=questions, score_section=section)


def _tables(audit: Audit, verdicts: Verdicts, reference: str, opts: ReportOptions
            ) -> tuple[dict[str, pd.DataFrame], dict]:
    """Every table of the report, and the three questions' answers (pooled, then per attribute alone)."""
    s = verdicts.settings
    reasons = [{"group": g, "metric": k, "undefined because": r}
               for g, rs in audit.undefined_reasons().items() for k, r in rs.items()]
    tables = {"verdicts": verdicts, "cells": audit.cells(), "group metrics": audit.group_table(),
              "versus reference": audit.versus_reference(reference),
              "match": audit.match_table(list(opts.match_metrics), alpha=s.alpha),
              "smoothing": smoothing.smooth_groups(audit.cms, smoothing.Smoother("cps", opts.cps_lambda),
                                                   list(opts.match_metrics)),
              "undefined": pd.DataFrame(reasons, columns=["group", "metric", "undefined because"])}
    answers = verdicts.three_questions()
    questions = {"": answers["text"]}
    gaps = answers["equal_opportunity"]["gaps"]
    tables["equal opportunity"] = gaps.set_index(gaps["rate"] + ": " + gaps["group_i"].astype(str) + " vs "
                                                 + gaps["group_j"].astype(str)).rename_axis("rate: pair")
    tables[LL144] = _ll144(audit, s, opts)
    _each_attribute(audit, s, tables, questions)
    trend = opts.trend
    if trend is not None and len(trend.periods) >= 2:
        c, v = trend.changes, trend.verdicts   # a pair and its periods as the index: each row printed by its name
        pair_c, pair_v = c["group_i"].astype(str) + " vs " + c["group_j"].astype(str), \
            v["group_i"].astype(str) + " vs " + v["group_j"].astype(str)
        tables[TREND_CHANGES] = c.set_index(c["period_before"].astype(str) + " → " + c["period_after"].astype(str)
                                            + ": " + pair_c).rename_axis("periods: pair")
        tables[TREND_VERDICTS] = v.set_index(v["period"].astype(str) + ": " + pair_v).rename_axis("period: pair")
    return tables, questions


def _each_attribute(audit: Audit, s: VerdictSettings, tables: dict[str, pd.DataFrame],
                    questions: dict[str, dict[str, str]]) -> None:
    """Each attribute alone, beside the groups as loaded: its verdicts (a table) and its answers (``questions``)."""
    for attribute in audit.attributes:
        table = audit.marginal(attribute).verdicts(s)
        tables[f"verdicts by {attribute} alone"] = table
        questions[attribute] = table.three_questions()["text"]


def _ll144(audit: Audit, s: VerdictSettings, opts: ReportOptions) -> pd.DataFrame:
    return regulatory.ll144_summary(audit, alpha=s.alpha, tolerance=s.tolerance, adjust=s.adjust, scores=opts.scores,
                                    score_name=(opts.score_name or None) if opts.scores is not None else None)


def _build_decisions(audit: Audit, verdicts: Verdicts, reference: str, opts: ReportOptions) -> Report:
    """The report of an audit of decisions alone: selection rates, the four-fifths verdicts, the Local Law 144
    summary and each attribute alone; every measure that needs outcomes is named as such, never computed."""
    s = verdicts.settings
    tables = {"verdicts": verdicts, "cells": audit.group_table(DECISION_METRICS).rename(columns=SELECTION_WORDS),
              LL144: _ll144(audit, s, opts)}
    questions = {"": verdicts.three_questions()["text"]}
    _each_attribute(audit, s, tables, questions)
    # decisions answer one of the three questions; what the other two need is said once (NEEDS_ONCE)
    questions = {k: {q_: a for q_, a in q.items() if q_ == "The four-fifths rule"} for k, q in questions.items()}
    tables.update(opts.extra_tables or {})
    figures = {"Selection rate per group": plots.selection_rates(audit, s.alpha)}
    settings = {"model (name and version)": opts.model.strip() or "not given",
                "period the data cover": opts.period.strip() or "not given",
                "data the audit used": data_used_text(opts.data_used, opts.test_data_reason),
                "what a positive prediction is": audit.direction, **dict(audit.provenance),
                "outcomes": "none observed: decisions alone", "reference group": reference,
                "α (significance level)": s.alpha, "multiplicity adjustment": adjustment(s.adjust).name,
                "DI interval": "auto: Miettinen–Nurminen score when both groups have >= 30 rows, else MOVER-R from "
                               "Clopper–Pearson limits with its dual test",
                "verdict rule": "the impact ratio's adjusted interval against 1 and the four-fifths band [0.8, 1.25], "
                                "each kind of claim adjusted across pairs",
                "DI interval level": interval_label(verdicts, "di"),
                "Local Law 144 rate": _ll144_rate(tables[LL144]),
                "Local Law 144 summary": regulatory.rules_text(tables[LL144])}
    return Report(audit, settings, tables, figures, datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                  list(opts.notes), questions=questions)


def _decision_counts(v: Verdicts) -> dict[str, Any]:
    """One attribute's four-fifths verdicts in the summary: pairs, counts, findings and the four-fifths answer."""
    return {"pairs": int(len(v)), "verdicts": {k: int((v["verdict"] == k).sum()) for k in SELECTION_VERDICTS},
            "findings": v.findings(), "four-fifths rule": v.three_questions()["four_fifths"]["text"]}


def _ll144_rate(table: pd.DataFrame) -> str:
    """Which rate the Local Law 144 summary gives, in words."""
    if table.attrs.get("rate") != "scoring rate":
        return "selection rate (decisions)"
    score = table.attrs.get("score")
    return (f"scoring rate{f' of the score “{score}”' if score else ''}: the share scoring strictly above the whole "
            f"sample's median ({table.attrs['median']:.6g})")


def _settings(audit: Audit, verdicts: Verdicts, tables: dict[str, pd.DataFrame], reference: str,
              opts: ReportOptions) -> dict[str, Any]:
    """The settings and methods the report ends with."""
    s, trend = verdicts.settings, opts.trend
    settings = {"model (name and version)": opts.model.strip() or "not given",
                "period the data cover": opts.period.strip() or "not given",
                "data the audit used": data_used_text(opts.data_used, opts.test_data_reason),
                "what a positive prediction is": audit.direction, **dict(audit.provenance),
                "reference group": reference, "OFI tolerance": s.tolerance, "α (significance level)": s.alpha,
                "multiplicity adjustment": adjustment(s.adjust).name,
                "OFI interval": "score: MOVER-D from per-group Tango score limits (continuity correction ¼), judged "
                                "by exact coverage; p-values dual to the interval",
                "DI interval": "auto: Miettinen–Nurminen score when both groups have >= 30 rows, else MOVER-R from "
                               "Clopper–Pearson limits with its dual test",
                "verdict rule": "three-sided against the tolerance (beyond, within, ≠ 0), each kind of claim adjusted "
                                "across pairs; every interval printed is the adjusted one that decided its verdict",
                "OFI interval level": interval_label(verdicts, "ofi"), "DI interval level": interval_label(verdicts, "di"),
                "MATCH metrics": ", ".join(opts.match_metrics),
                "Local Law 144 rate": _ll144_rate(tables[LL144]),
                "Local Law 144 summary": regulatory.rules_text(tables[LL144]),
                "MATCH α (Holm-adjusted)": s.alpha,
                "Cross-Prior Smoothing λ (each group against the rest)": opts.cps_lambda}
    if TREND_CHANGES in tables:
        settings["trend"] = (f"periods {', '.join(trend.periods)}; each change of a pair's OFI between consecutive "
                             "periods: MOVER-D interval from the two periods' intervals (independent samples), p-value "
                             f"dual to it, {trend.adjust} across all changes at α = {trend.alpha:g}")
    return settings
