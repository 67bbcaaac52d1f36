"""The report's parts shared by every kind of audit: :class:`Report` (HTML, JSON, CSV zip), :class:`ReportOptions`,
the tables' HTML and JSON writers, the styles and the trend section's tables. :mod:`fairness_core.report` builds
the report of yes/no decisions on them, :mod:`fairness_core.presentation.report_kinds` that of amounts and classes."""

from __future__ import annotations

import html
import io
import json
import math
import zipfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .. import regulatory
from .._version import __version__
from ..audit import Audit
from ..continuous import DEFAULT_BAND
from ..statistics.verdicts import SELECTION_VERDICTS, VERDICTS
from ..wording.levels import interval_label
from ..results import Verdicts
from ..wording.decisions import NEEDS_OUTCOMES_ONCE as NEEDS_ONCE, pairs_of
from ..wording.reading import findings_first, verdict_reading
from ..services.io import to_safe_csv
from ..common.text import counted, safe_file_name


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
    #: What the verdicts say, agreeing with the answers they were composed from when the report was built (the
    #: same answers as :attr:`questions`): "" for the groups as loaded, and, for decisions alone, each attribute.
    #: :meth:`summary` reads them; it answers nothing again.
    findings: dict[str, str] = field(default_factory=dict)
    #: A risk score's section (:func:`fairness_core.presentation.scores_section.report_section`): its HTML and its JSON.
    score_section: tuple[str, dict[str, Any]] | None = None

    def summary(self) -> dict[str, Any]:
        """The verdict counts, the largest OFI and the four-fifths violations read off the verdict table, with the
        findings and the three answers the report was built with (:attr:`findings`, :attr:`questions`)."""
        v = self.tables["verdicts"]
        if not self.audit.has_outcomes:
            alone = {a: _decision_counts(self.tables[f"verdicts by {a} alone"], self.findings[a],
                                         self.questions[a]["The four-fifths rule"]) for a in self.audit.attributes}
            return {"each attribute alone": alone,
                    "pairs of": pairs_of(self.audit.attributes),
                    "pairs": int(len(v)), "has outcomes": False, "needs outcomes": NEEDS_ONCE,
                    "verdicts": {k: int((v["verdict"] == k).sum()) for k in SELECTION_VERDICTS},
                    "DI interval level": interval_label(v, "di"),
                    "four-fifths violations (point estimate)": int((~v["four_fifths"].isin(["no bias", "undefined"])).sum()),
                    "four-fifths violations (significant)": int(v["di_beyond_band"].sum()),
                    "unknown categories": list(self.audit.unknown),
                    "findings": self.findings[""], "three questions": self.questions[""]}
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
                "findings": self.findings[""],
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
                parts.append(f"<h3>By {esc(attribute)} alone</h3><p>{esc(counted(a['pairs'], f'pair of {attribute} categories'))} "
                             f"— {tally}.</p><p>{esc(a['findings'])}</p><p>{esc(a['four-fifths rule'])}</p>")
            parts.append(f"<h3>{esc(s['pairs of'].capitalize())}</h3><p>{counted(s['pairs'], 'pair')} — {counts}.</p>"
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
           TREND_VERDICTS: "A model over time: each period's verdicts",
           # audits of amounts and of classes (report_kinds)
           "groups": "Per group, with intervals",
           "error sizes": "Error sizes: every pair's MAE gap (simultaneous intervals)",
           "sufficient statistics": "Per-group sufficient statistics (n, mean, M2, M3 of each amount)",
           "confusion matrices": "Each group's k × k matrix (rows observed, columns predicted)",
           "class shares": "Share of each group placed in each class",
           "impact ratios": "Every impact ratio at every cut",
           "ordinal error rates": "Ordinal error rates: every pair's gap (simultaneous intervals)",
           "one-vs-rest verdicts": "Each class against the rest: the binary verdicts",
           # counterfactual tests (report_paired)
           "pairs": "Every pair of groups: every number behind the verdicts",
           "discordance": "Discordant cases: the row's variant selected, the column's not",
           "omnibus": "One test across all groups",
           "incomplete cases": "Incomplete cases: the groups each lacks"}

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
        return (f"<p class='note'>{table.shape[1]} columns, too wide for a page: the verdict table above has the "
                "essentials; every number is in the HTML on screen, the JSON and the CSV zip.</p>")
    t = table if index else table.set_index(table.columns[0])
    if len(t) <= MAX_TRANSPOSED_ROWS and t.index.is_unique:   # each row one column, named by it
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
    #: An audit of amounts: the outcome's unit ("$", "a year"), and the mean prediction ratio's band (None: no ratio
    #: question; :mod:`fairness_core.presentation.report_kinds`).
    unit: str = ""
    band: tuple[float, float] | None = DEFAULT_BAND


def trend_tables(trend: Any) -> dict[str, pd.DataFrame]:
    """The trend section's two tables (a :class:`fairness_core.trend.Trend` of two or more periods; none else), each
    row named by its pair and periods."""
    if trend is None or len(trend.periods) < 2:
        return {}
    c, v = trend.changes, trend.verdicts   # a pair and its periods as the index: each row printed by its name
    pair_c, pair_v = c["group_i"].astype(str) + " vs " + c["group_j"].astype(str), \
        v["group_i"].astype(str) + " vs " + v["group_j"].astype(str)
    return {TREND_CHANGES: c.set_index(c["period_before"].astype(str) + " → " + c["period_after"].astype(str)
                                       + ": " + pair_c).rename_axis("periods: pair"),
            TREND_VERDICTS: v.set_index(v["period"].astype(str) + ": " + pair_v).rename_axis("period: pair")}


def _decision_counts(v: Verdicts, findings: str, four_fifths: str) -> dict[str, Any]:
    """One attribute's four-fifths verdicts in the summary: pairs and counts, with the findings and the four-fifths
    answer the report was built with."""
    return {"pairs": int(len(v)), "verdicts": {k: int((v["verdict"] == k).sum()) for k in SELECTION_VERDICTS},
            "findings": findings, "four-fifths rule": four_fifths}
