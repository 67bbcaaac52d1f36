"""The Local Law 144 summary an employer publishes on its website: one self-contained HTML page, and its CSV.

New York City's rules (6 RCNY § 5-303) ask the employer to publish, before using an automated employment decision
tool, the date of its most recent bias audit, a summary of the results — the source and explanation of the data,
the number of applicants in an unknown category, and per category the number of applicants, the selection or
scoring rate and the impact ratio — and the tool's **distribution date** (the date the employer began using it).
:func:`summary_html` writes that page from :func:`fairness_core.regulatory.ll144_summary`'s table (read by column
name: the workbench's additions, such as intervals, are left out) and the user's :class:`PublicationDetails`;
it prints to one page on A4 and on Letter (the layout is chosen from the table's length: two or three columns of
tables, the type smaller for longer tables). :func:`summary_csv` is the same table as a formula-safe CSV.

>>> from fairness_core import datasets, regulatory
>>> s = regulatory.ll144_summary(datasets.load_demo("hr_screening"))
>>> page = summary_html(s, PublicationDetails(tool="Screener <v2>", data_used="historical"))
>>> "Screener &lt;v2&gt;" in page and "<script" not in page
True
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import html
import math
from typing import Any

import numpy as np
import pandas as pd

from .. import regulatory
from .._version import __version__
from ..services.io import to_safe_csv
from ..wording import publication as words

#: The longest text a field takes (the tool's name and version; the source and the reason for test data).
MAX_NAME, MAX_TEXT = 200, 1000
#: The printable area of the smaller of A4 (210 × 297 mm) and Letter (215.9 × 279.4 mm) with 10 mm margins, in pt.
PAGE_WIDTH_PT, PAGE_HEIGHT_PT = (210 - 20) / 25.4 * 72, (279.4 - 20) / 25.4 * 72
#: Base type sizes tried, largest first, and the share of the page the estimate may fill (the rest is slack).
SIZES_PT = (9.0, 8.5, 8.0, 7.5, 7.0, 6.5, 6.0, 5.5, 5.0)
FILL = 0.9
#: The average width of a character of the page's sans-serif type, in ems (generous, as DejaVu Sans is wide).
CHAR_EM = 0.55


@dataclasses.dataclass(frozen=True)
class PublicationDetails:
    """What the user states for the published summary. Every field may be left empty: it then reads "not given"
    (``data_used``: "not declared"), never a guess.

    ``tool``: the tool's name and version. ``audit_date``: the date of this bias audit. ``data_from`` and
    ``data_to``: the dates the data cover. ``distribution_date``: the date the employer began using the tool.
    ``source``: where the data came from. ``data_used``: "historical" or "test" (:data:`~fairness_core.wording.
    publication.DATA_USED`), ``test_data_reason``: with test data, why historical data were insufficient and how the
    test data were made. Dates are :class:`datetime.date` or ISO strings ("2025-06-30").

    Raises ValueError naming the field: a text too long, a date that is not one, the data's range reversed, an
    audit dated before the data it used end, a reason for test data given with historical data.
    """

    tool: str = ""
    audit_date: dt.date | str | None = None
    data_from: dt.date | str | None = None
    data_to: dt.date | str | None = None
    distribution_date: dt.date | str | None = None
    source: str = ""
    data_used: str | None = None
    test_data_reason: str = ""

    def __post_init__(self) -> None:
        for name, limit in (("tool", MAX_NAME), ("source", MAX_TEXT), ("test_data_reason", MAX_TEXT)):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise ValueError(f"{name} must be text, got {type(value).__name__}")
            if len(value.strip()) > limit:
                raise ValueError(f"{name} has {len(value.strip()):,} characters; the limit is {limit:,}")
            object.__setattr__(self, name, value.strip())
        for name in ("audit_date", "data_from", "data_to", "distribution_date"):
            object.__setattr__(self, name, _date(name, getattr(self, name)))
        words.data_used_text(self.data_used)   # raises on an unknown declaration
        if self.data_from and self.data_to and self.data_from > self.data_to:
            raise ValueError(f"data_from {self.data_from} is after data_to {self.data_to}: the data's range is reversed")
        end = self.data_to or self.data_from
        if self.audit_date and end and self.audit_date < end:
            raise ValueError(f"audit_date {self.audit_date} is before the data it audits end ({end})")
        if self.test_data_reason and self.data_used != words.TEST:
            raise ValueError("test_data_reason is given, but the data used are not declared test data")

    def missing(self) -> list[str]:
        """The fields the published summary shows as "not given" (or "not declared"), in words."""
        named = {"tool": "the tool's name and version", "audit_date": "the audit's date",
                 "data_from": "the data's first date", "data_to": "the data's last date",
                 "distribution_date": "the distribution date", "source": "the data's source",
                 "data_used": "whether the data are historical or test data"}
        out = [what for field, what in named.items() if not getattr(self, field)]
        if self.data_used == words.TEST and not self.test_data_reason:
            out.append("why test data were used and how they were made")
        return out


def _date(name: str, value: Any) -> dt.date | None:
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"{name} must be a date as YYYY-MM-DD, got {value[:40]!r}") from None
    raise ValueError(f"{name} must be a date, got {type(value).__name__}")


# --------------------------------------------------------------------------- the table


def summary_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The law's table from :func:`~fairness_core.regulatory.ll144_summary`: categories of, category, applicants,
    share of the applicants, the selection or scoring rate, the impact ratio (NaN where not computed) and what the
    row is ("in the impact ratios", "highest rate", "excluded: under 2 %", "unknown category"). Every other column
    (intervals, anything that needs outcomes) is left out."""
    rate = summary.attrs.get("rate", "selection rate")
    kinds = _kinds(summary)
    share = f"{summary.attrs.get('exclude_below', regulatory.EXCLUDE_BELOW) * 100:g} %"
    shown = {"in": "in the impact ratios", "top": "highest rate (impact ratio 1)",
             "excluded": f"excluded: under {share} of the applicants", "unknown": "unknown category: counted, not in "
             "the impact ratios"}
    return pd.DataFrame({"categories of": summary["categories of"].astype(str).to_numpy(),
                         "category": summary["category"].astype(str).to_numpy(),
                         "applicants": summary["n"].astype(int).to_numpy(),
                         "share of applicants": summary["share of data"].to_numpy(float),
                         rate: summary[rate].to_numpy(float),
                         "impact ratio": summary["impact ratio"].to_numpy(float),
                         "row": [shown[k] for k in kinds]})


def _kinds(summary: pd.DataFrame) -> list[str]:
    """Each row's kind: "top", "in", "excluded" or "unknown" (from the summary's status and numbers)."""
    out = []
    for status in summary["status"].astype(str):
        if status == regulatory.UNKNOWN_ROW:
            out.append("unknown")
        elif status.startswith("excluded"):
            out.append("excluded")
        elif status == regulatory.IN_RATIOS:
            out.append("in")
        else:   # the category whose rate the others are divided by
            out.append("top")
    return out


def summary_csv(summary: pd.DataFrame) -> bytes:
    """:func:`summary_table` as CSV (formula-safe: a cell that a spreadsheet would run is written as text)."""
    return to_safe_csv(summary_table(summary), index=False)


# --------------------------------------------------------------------------- the page


def _fmt(x: float, places: int = 3) -> str:
    return "undefined" if not math.isfinite(x) else f"{x:.{places}f}"


def _date_text(d: dt.date | None) -> str:
    return d.isoformat() if d else words.NOT_GIVEN


def _facts(summary: pd.DataFrame, table: pd.DataFrame, d: PublicationDetails) -> list[tuple[str, str]]:
    total = int(table.loc[table["categories of"] == table["categories of"].iloc[0], "applicants"].sum())
    span = (f"{_date_text(d.data_from)} to {_date_text(d.data_to)}" if d.data_from or d.data_to else words.NOT_GIVEN)
    rate = summary.attrs.get("rate", "selection rate")
    return [("Tool (name and version)", d.tool or words.NOT_GIVEN),
            ("Date of this bias audit", _date_text(d.audit_date)),
            ("Distribution date (the employer began using the tool)", _date_text(d.distribution_date)),
            ("Dates the data cover", span),
            ("Applicants assessed", f"{total:,}"),
            ("Rate reported", rate + (f" of the score “{summary.attrs['score']}”" if summary.attrs.get("score") else "")),
            ("Data used", words.data_used_text(d.data_used, d.test_data_reason)),
            ("Source of the data", d.source or words.NOT_GIVEN)]


def _prose_lines(label: str, text: str, share: float, size: float) -> int:
    """The lines a fact (label beside text, the label 12 em wide) or a paragraph (no label) takes, across ``share``
    of the page's width."""
    width = PAGE_WIDTH_PT * share - (0 if share == 1.0 else 0.6 * size)
    if not label:
        return _lines(text, width, size)
    return max(_lines(label, 12 * size, size), _lines(text, width - 12.4 * size, size))


def _lines(text: str, width_pt: float, size_pt: float) -> int:
    per_line = max(1, int(width_pt / (CHAR_EM * size_pt)))
    return max(1, math.ceil(len(text) / per_line))


def _layout(prose: list[tuple[str, str, float]], blocks: list[tuple[str, list[str]]]
            ) -> tuple[float, int, list[list[tuple[str, list[str], bool]]], bool]:
    """The largest type size (pt) and number of columns at which the page's text and tables fit one page, and the
    tables cut into columns: each column a list of (title, rows' category names, continued?). ``prose``: each fact's
    label (or "" for a paragraph), text and share of the page's width. The last: whether it fits (else three columns at the
    smallest size, continued on a second page)."""
    total_rows = sum(len(rows) for _, rows in blocks)
    choices = [(s, k) for s in SIZES_PT for k in ((1,) if total_rows <= 10 else (2, 3) if s <= 6.5 else (2,))]
    for size, k in choices:
        line = 1.3 * size
        head = 4.0 * size + sum(_prose_lines(label, t, w, size) * line + (0.5 * size if not label else 0.2 * size)
                                for label, t, w in prose)
        room = PAGE_HEIGHT_PT * FILL - head
        column_width = (PAGE_WIDTH_PT - (k - 1) * 1.5 * size) / k
        name_width = column_width * 0.43 - 0.7 * size
        row_height = [[_lines(r, name_width, size) * 1.2 * size + 0.35 * size for r in rows] for _, rows in blocks]
        columns = _fill(blocks, row_height, room, caption=2 * size + 2 * 1.2 * size + 0.35 * size, k=k)
        if columns is not None:
            return size, k, columns, True
    # too long for one page even so: three even columns at the smallest size, continued on the next page
    size, k = SIZES_PT[-1], 3
    heights = [[_lines(r, PAGE_WIDTH_PT / 3 * 0.43, size) * 1.2 * size + 0.35 * size for r in rows] for _, rows in blocks]
    room = sum(map(sum, heights)) / k
    while (columns := _fill(blocks, heights, room, 3.2 * size, k)) is None:
        room *= 1.1
    return size, k, columns, False


def _fill(blocks: list[tuple[str, list[str]]], heights: list[list[float]], room: float, caption: float,
          k: int) -> list[list[tuple[str, list[str], bool]]] | None:
    """The blocks' rows poured into ``k`` columns of height ``room`` (a block cut where a column is full, its
    title and header repeated), or None where they do not fit."""
    columns: list[list[tuple[str, list[str], bool]]] = [[]]
    left = room
    for (title, rows), hs in zip(blocks, heights):
        start = 0
        while start < len(rows):
            taken, used = 0, caption
            while start + taken < len(rows) and used + hs[start + taken] <= left:
                used += hs[start + taken]
                taken += 1
            whole = caption + sum(hs[start:])   # a block cut that would fit a column of its own starts one
            if taken == 0 or (taken < len(rows) - start and columns[-1] and (taken < 3 or whole <= room)):
                if len(columns) == k:
                    return None
                columns.append([])   # too little room here: the next column
                left = room
                continue
            columns[-1].append((title, rows[start:start + taken], start > 0))
            left -= used
            start += taken
    return columns if len(columns) <= k else None


CSS = """
*{box-sizing:border-box}
html{font-size:%(size)spt}
body{margin:0;font-family:"DejaVu Sans",Arial,Helvetica,sans-serif;color:#111;line-height:1.3}
main{max-width:190mm;margin:0 auto;padding:6mm 5mm}
h1{font-size:1.6rem;margin:0 0 .2rem;overflow-wrap:anywhere}
.sub{margin:0 0 .6rem;color:#444}
dl{display:grid;grid-template-columns:1fr 1fr;gap:.15rem 1.2rem;margin:0 0 .5rem}
dl div{display:flex;gap:.4rem;align-items:baseline}
dt{font-weight:bold;flex:0 0 12em}
dd{margin:0;white-space:pre-line;overflow-wrap:anywhere}
dl div.wide{grid-column:1/-1}
p{margin:0 0 .5rem}
.tables{display:grid;grid-template-columns:repeat(%(k)s,minmax(0,1fr));gap:0 1.5rem;align-items:start}
table{width:100%%;border-collapse:collapse;margin:0 0 .35rem;table-layout:fixed}
caption{text-align:left;font-weight:bold;padding:.3rem 0 .15rem}
th,td{padding:.1rem .2rem .1rem .45rem;border-bottom:.5pt solid #bbb;vertical-align:top}
th{text-align:left;border-bottom:1pt solid #111;font-weight:bold}
th.n,td.n{text-align:right;font-variant-numeric:tabular-nums}
td.c{overflow-wrap:anywhere}
col.c{width:43%%}
col.v{width:19%%}
tr.excluded td,tr.unknown td{color:#555;font-style:italic}
tr.top td{font-weight:bold}
footer{margin-top:.4rem;color:#444;font-size:.9rem;border-top:.5pt solid #bbb;padding-top:.3rem}
@page{margin:10mm}
@media print{main{max-width:none;padding:0}
  *{-webkit-print-color-adjust:exact;print-color-adjust:exact}}
"""


def summary_html(summary: pd.DataFrame, details: PublicationDetails | None = None, *,
                 created: str | None = None) -> str:
    """The published summary: one self-contained HTML page (no script, no external file) that prints to one page on
    A4 and on Letter. ``summary``: :func:`~fairness_core.regulatory.ll144_summary`'s table; ``details``: what the user
    states (empty fields read "not given"); ``created``: when it was written (default: now, UTC). Every text from
    the data or the user is HTML-escaped."""
    d = details or PublicationDetails()
    created = created or dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    table, kinds, facts, method, footer, prose, blocks = _parts(summary, d, created)
    size, k, columns, _ = _layout(prose, blocks)
    rate = summary.attrs.get("rate", "selection rate")
    order = [of for of, _ in blocks]
    rows_of = {of: [(r, kind) for (_, r), kind in zip(table.iterrows(), kinds) if r["categories of"] == of]
               for of in order}
    used = {of: 0 for of in order}
    parts = []
    for column in columns:
        pieces = []
        for title, names, continued in column:
            these = rows_of[title][used[title]:used[title] + len(names)]
            used[title] += len(names)
            pieces.append(_piece(title, these, rate, continued))
        parts.append("<div class='column'>" + "".join(pieces) + "</div>")
    e = html.escape
    fact_html = "".join(f"<div{' class=wide' if k_ in WIDE else ''}><dt>{e(a)}</dt><dd>{e(b)}</dd></div>"
                        for k_, (a, b) in enumerate(facts))
    title = f"Bias audit summary: {d.tool}" if d.tool and len(d.tool) <= 60 else "Bias audit summary"
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width,initial-scale=1'>"
            f"<title>{e(title)}</title><style>{CSS % {'size': f'{size:g}', 'k': k}}</style></head><body><main>"
            f"<h1>{e(title)}</h1><p class='sub'>Automated employment decision tool: bias audit under New York City "
            "Local Law 144 (6 RCNY § 5-300 ff.)</p>"
            f"<dl>{fact_html}</dl>" + "".join(f"<p>{e(m)}</p>" for m in method)
            + f"<div class='tables'>{''.join(parts)}</div><footer>{e(footer)}</footer></main></body></html>")


def _parts(summary: pd.DataFrame, d: PublicationDetails, created: str) -> tuple[Any, ...]:
    """The page's table, its rows' kinds, the facts, the method's paragraphs, the footer, every paragraph with its
    share of the page's width (for the layout), and the tables' blocks (categories of, category names)."""
    table = summary_table(summary)
    rate = summary.attrs.get("rate", "selection rate")
    kinds = _kinds(summary)
    share = float(summary.attrs.get("exclude_below", regulatory.EXCLUDE_BELOW))
    excluded = [(r["categories of"], r["category"], int(r["applicants"]), float(r["share of applicants"]))
                for (_, r), kind in zip(table.iterrows(), kinds) if kind == "excluded"]
    unknowns = [(r["categories of"], int(r["applicants"])) for (_, r), kind in zip(table.iterrows(), kinds)
                if kind == "unknown"]
    facts = _facts(summary, table, d)
    method = [words.rate_definition(rate, summary.attrs.get("median"), summary.attrs.get("score")),
              words.exclusion_text(share, excluded), words.unknown_text(unknowns)]
    footer = (f"Written by the fairness audit workbench {__version__} on {created} from the audit's data. The rates and "
              "ratios are the tool's decisions per category; they say nothing about whether any decision was right.")
    # a fact's two halves side by side (or across the page), then the paragraphs; the title's line counts as one
    title = f"Bias audit summary: {d.tool}" if d.tool and len(d.tool) <= 60 else "Bias audit summary"
    prose = [("", title + " " * len(title), 1.0)] \
        + [(a, b, 1.0 if k in WIDE else 0.5) for k, (a, b) in enumerate(facts)] \
        + [("", m, 1.0) for m in method] + [("", footer, 1.0)]
    order = list(dict.fromkeys(table["categories of"]))
    blocks = [(of, table.loc[table["categories of"] == of, "category"].tolist()) for of in order]
    return table, kinds, facts, method, footer, prose, blocks


def fits_one_page(summary: pd.DataFrame, details: PublicationDetails | None = None) -> bool:
    """Whether :func:`summary_html` lays this summary out on one page (A4 and Letter); a table too long for one
    page continues on a second, in three columns at the smallest type."""
    _, _, _, _, _, prose, blocks = _parts(summary, details or PublicationDetails(), "0000-00-00 00:00 UTC")
    return _layout(prose, blocks)[3]


#: The facts that take the page's whole width (the data used, the source).
WIDE = (6, 7)


def _piece(title: str, rows: list[tuple[pd.Series, str]], rate: str, continued: bool) -> str:
    e = html.escape
    body = []
    for r, kind in rows:
        ratio = {"excluded": "excluded", "unknown": "not in ratios"}.get(kind) or _fmt(float(r["impact ratio"]))
        body.append(f"<tr class='{kind}'><td class='c'>{e(str(r['category']))}</td>"
                    f"<td class='n'>{int(r['applicants']):,}</td><td class='n'>{_fmt(float(r[rate]))}</td>"
                    f"<td class='n'>{e(ratio)}</td></tr>")
    caption = f"Categories of {title}" + (" (continued)" if continued else "")
    return (f"<table><caption>{e(caption)}</caption><colgroup><col class='c'><col class='v'><col class='v'><col class='v'></colgroup>"
            f"<thead><tr><th>Category</th><th class='n'>Applicants</th><th class='n'>{e(rate.capitalize())}</th>"
            f"<th class='n'>Impact ratio</th></tr></thead><tbody>{''.join(body)}</tbody></table>")


__all__ = ["PublicationDetails", "summary_table", "summary_csv", "summary_html", "MAX_NAME", "MAX_TEXT"]
