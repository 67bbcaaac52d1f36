"""The report of an audit of amounts or of classes (issue 53): the binary report's structure — the three questions
answered, the verdicts with their intervals and levels, the tables, the figures that fit, the settings and methods —
as one self-contained HTML page, JSON and a zip of formula-safe CSVs (:class:`KindReport`, a
:class:`~fairness_core.presentation.report.Report`).

- Amounts (:class:`~fairness_core.continuous.ContinuousAudit`): the pair verdicts of OFI = B_i − B_j in the
  outcome's units (the unit named) and of the mean prediction ratio against its band; per group n, the means of the
  outcome, the prediction and the benefit, MAE and RMSE, each with its interval; every pair's MAE gap with
  Bonferroni-simultaneous intervals (:func:`error_size_gaps`); the per-group sufficient statistics.
- Classes (:class:`~fairness_core.multiclass.MulticlassAudit`): each group's k × k matrix, the impact ratios at every
  cut (or of every class's share) adjusted across cuts and pairs, the Local Law 144 table per class and cut; with an
  order and outcomes the ordinal OFI verdicts (in tiers), the ordinal error rates and their gaps; without an order,
  each class's one-vs-rest verdicts; decisions alone answer what decisions can, and say what needs outcomes.

:func:`kind_tables` computes the tables and the answers (the Saved audits page shows them as they are);
:func:`build` adds the figures and the settings. ``fairness_core.report.build`` calls it for these kinds.

>>> from fairness_core.multiclass import MulticlassAudit
>>> m = MulticlassAudit.from_predictions(["L", "M", "H", "L", "H", "M"] * 5, ["L", "H", "H", "M", "M", "M"] * 5,
...                                      ["a", "a", "a", "b", "b", "b"] * 5, order=["L", "M", "H"], favourable="L")
>>> r = build(m)
>>> sorted(r.tables)[:4], r.summary()["kind"]
(['class shares', 'confusion matrices', 'groups', 'impact ratios'], 'multiclass')
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..common.vocabulary import check_alpha
from . import plots
from .plots._base import PALETTE, _plain
from .. import regulatory
from .._version import __version__
from ..common.text import plotly_text, ratio_text
from ..common.vocabulary import adjustment
from ..continuous import DEFAULT_BAND, ContinuousAudit
from ..multiclass import MulticlassAudit
from ..statistics.amounts import SKEW_LIMIT, MeanPairs
from ..statistics.verdicts import SELECTION_VERDICTS, VERDICTS, VerdictSettings
from ..wording.levels import interval_label, level_text
from ..wording import kind_answers as answers
from ..wording.decisions import NEEDS_OUTCOMES_ONCE as NEEDS_ONCE
from ..wording.kind_answers import amount_text
from ..wording.publication import data_used_text
from .report_base import (LL144, MAX_HTML_ROWS, TREND_CHANGES, Report, ReportOptions, _table, _table_json,
                          trend_tables)

__all__ = ["KindReport", "build", "error_size_gaps", "kind_tables", "reading"]

#: Most groups drawn as k × k heatmaps in the report (the largest; every group's matrix is in the tables).
MAX_HEATMAPS = 12

#: The words of an impact ratio's verdict and of an OFI verdict, most telling first (the reading's order).
_ORDER = {w: k for k, w in enumerate((*VERDICTS[:3], "adverse impact", "materiality unclear", *VERDICTS[3:],
                                      *SELECTION_VERDICTS[2:]))}


def error_size_gaps(audit: ContinuousAudit, alpha: float = 0.05) -> pd.DataFrame:
    """Every pair's gap in mean absolute error, MAE_i − MAE_j, with intervals simultaneous over the pairs
    (Bonferroni: each at 1 − α/m, m pairs), the union of Hall's and Welch's intervals of a difference of means
    (:class:`~fairness_core.statistics.amounts.MeanPairs` on each group's |ŷ − y|), as the binary audit's
    equal-opportunity table gives the error-rate gaps. A pair whose absolute errors are too skewed for its rows
    (skew index above :data:`~fairness_core.statistics.amounts.SKEW_LIMIT`) gets no interval, and says so.

    Columns: measure ("MAE"), group_i, group_j, n_i, n_j, mae_i, mae_j, gap, ci_low, ci_high, differs (the interval
    excludes 0), level (the simultaneous level), undefined_because.

    >>> a = ContinuousAudit.from_predictions([10, 12, 9, 11, 20, 22, 19, 21], [11, 12, 10, 12, 18, 21, 18, 19],
    ...                                      ["a"] * 4 + ["b"] * 4, positive_is="benefit")
    >>> error_size_gaps(a)[["group_i", "group_j", "mae_i", "mae_j", "gap"]].values.tolist()
    [['a', 'b', 0.75, 1.5, -0.75]]
    """
    check_alpha(alpha)
    k = len(audit.groups)
    i, j = np.triu_indices(k, 1)
    m = audit.moments["abs_error"]
    pairs = MeanPairs(m.take(i), m.take(j))
    level = 1 - alpha / max(len(i), 1)
    low, high = pairs.bounds((1 - level) / 2)
    names = np.asarray(audit.groups, dtype=object)
    return pd.DataFrame({"measure": "MAE", "group_i": names[i], "group_j": names[j],
                         "n_i": audit.n[i].astype(np.int64), "n_j": audit.n[j].astype(np.int64),
                         "mae_i": m.mean[i], "mae_j": m.mean[j], "gap": pairs.estimate, "ci_low": low,
                         "ci_high": high, "differs": (low > 0) | (high < 0), "level": level,
                         "undefined_because": np.where(pairs.too_skewed, "too skewed for its rows to tell "
                                                       f"(skew index above {SKEW_LIMIT:g})", "")})


def reading(table: pd.DataFrame, unit: str = "", max_rows: int | None = None) -> pd.DataFrame:
    """A verdict table as people read it, most telling first: an OFI table (amounts, tiers) gives pair, verdict,
    favours, OFI and its interval in the unit, the ratio with its interval and the explanation; an impact-ratio
    table (cuts, classes) the cut or class, pair, verdict, impact ratio with its interval and whom it is adverse to."""
    pair = table["group_i"].astype(str) + " vs " + table["group_j"].astype(str)
    rank = table["verdict"].map(_ORDER).fillna(len(_ORDER)).to_numpy()
    if "ofi" in table:
        out = pd.DataFrame({"pair": pair, "verdict": table["verdict"], "favours": table["favours"].fillna(""),
                            "OFI": [amount_text(x, unit) for x in table["ofi"]],
                            "OFI interval": [f"{amount_text(lo, unit)} to {amount_text(hi, unit)}"
                                             for lo, hi in zip(table["ofi_ci_low"], table["ofi_ci_high"])]})
        if "ratio" in table and table["ratio_ci_low"].notna().any():
            out["mean prediction ratio"] = [ratio_text(r, lo, hi) for r, lo, hi in
                                            zip(table["ratio"], table["ratio_ci_low"], table["ratio_ci_high"])]
        out["in words"] = table["explanation"]
        size = -table["ofi"].abs().fillna(0).to_numpy()
    else:
        label = "cut" if "cut" in table else "class"
        out = pd.DataFrame({label: table[label], "pair": pair, "verdict": table["verdict"],
                            "impact ratio": [ratio_text(r, lo, hi) for r, lo, hi in
                                             zip(table["di"], table["di_ci_low"], table["di_ci_high"])],
                            "adverse to": table["adverse_to"].fillna("")})
        size = table["di"].fillna(1).to_numpy()
    order = np.lexsort((size, rank))
    out = out.iloc[order].reset_index(drop=True)
    return out if max_rows is None else out.head(max_rows)


def _matrices(audit: MulticlassAudit) -> pd.DataFrame:
    """Each group's k × k counts stacked: rows (group, observed class), columns the predicted classes."""
    g, k = len(audit.groups), audit.k
    index = pd.MultiIndex.from_arrays([np.repeat(np.asarray(audit.groups, dtype=object), k),
                                       np.tile(np.asarray(audit.classes, dtype=object), g)],
                                      names=["group", "observed"])
    return pd.DataFrame(audit.counts.reshape(g * k, k), index=index,
                        columns=pd.Index([f"predicted {c}" for c in audit.classes]))


def _judged(audit: Any, s: VerdictSettings, unit: str, band: tuple[float, float] | None,
            reference: str | None) -> tuple[pd.DataFrame, dict[str, pd.DataFrame], dict[str, str]]:
    """The verdict table of ``audit``, its companion tables and its three answers."""
    if isinstance(audit, ContinuousAudit):
        v = audit.verdicts(s.tolerance, alpha=s.alpha, adjust=s.adjust, band=band, reference=reference, unit=unit)
        groups = audit.by_group(alpha=s.alpha)
        gaps = error_size_gaps(audit, s.alpha)
        text = dict(zip(answers.AMOUNT_QUESTIONS, (answers.ofi_answer(v, unit), answers.ratio_answer(v, band is not None),
                                                   answers.error_size_answer(gaps, groups, unit))))
        return v, {"groups": groups, "error sizes": gaps}, text
    ratios = audit.impact_ratios(alpha=s.alpha, adjust=s.adjust)
    q_ofi, q_ratio, q_eo = answers.CLASS_QUESTIONS
    q_ratio = q_ratio if audit.ordered else answers.CLASS_SHARE_QUESTION
    if not audit.has_outcomes:
        return ratios, {}, {q_ofi: f"Needs outcomes: {NEEDS_ONCE}", q_ratio: answers.cut_ratio_answer(ratios),
                            q_eo: f"Needs outcomes: {NEEDS_ONCE}"}
    if audit.ordered:
        v = audit.verdicts(s.tolerance, alpha=s.alpha, adjust=s.adjust)
        gaps = audit.error_rate_gaps(s.alpha)
        b = audit.ordinal_audit().by_group(alpha=s.alpha)   # B's interval: the amounts' interval on the ranks
        rates = audit.rates(s.alpha)
        b_ci = b[["mean_benefit_ci_low", "mean_benefit_ci_high"]].rename(columns=lambda c: c.replace("mean_benefit", "B"))
        groups = pd.concat([rates.iloc[:, :2], b_ci.reindex(rates.index), rates.iloc[:, 2:]], axis=1)
        return v, {"groups": groups, "impact ratios": ratios, "ordinal error rates": gaps}, \
            {q_ofi: answers.ofi_answer(v, "tiers"), q_ratio: answers.cut_ratio_answer(ratios),
             q_eo: answers.ordinal_error_answer(gaps)}
    # unordered with outcomes: each class of declared direction against the rest is an ordinary binary audit; a
    # class of none has no verdict (MulticlassAudit.one_vs_rest), only its rates with intervals
    parts, ofi_text, eo_text, rates = [], [], [], []
    for c in audit.classes:
        if audit.class_direction(c) == "not declared":
            rates.append(audit.class_rates(c, s.alpha).reset_index().assign(**{"class": c}))
            ofi_text.append(f"“{c}” against the rest: no verdict, {audit.no_direction(c)}.")
            eo_text.append(f"“{c}” against the rest: its recall and false placements are in the class rates table.")
            continue
        binary = audit.one_vs_rest(c).verdicts(VerdictSettings(s.tolerance, s.alpha, s.adjust))
        said = binary.three_questions()["text"]
        parts.append(pd.DataFrame(binary).assign(**{"class": c}))
        ofi_text.append(f"“{c}” against the rest: {said['Is the algorithm at fault (OFI)?']}")
        eo_text.append(f"“{c}” against the rest: {said['Equal opportunity (error rates)']}")
    tables = {}
    for name, got in (("one-vs-rest verdicts", parts), ("class rates (no direction declared)", rates)):
        if got:
            table = pd.concat(got, ignore_index=True)
            table.insert(0, "class", table.pop("class"))
            tables[name] = table
    return ratios, tables, \
        {q_ofi: " ".join(ofi_text), q_ratio: answers.cut_ratio_answer(ratios), q_eo: " ".join(eo_text)}


def kind_tables(audit: ContinuousAudit | MulticlassAudit, settings: VerdictSettings, *, unit: str = "",
                band: tuple[float, float] | None = DEFAULT_BAND, reference: str | None = None
                ) -> tuple[dict[str, pd.DataFrame], dict[str, dict[str, str]]]:
    """Every table of the report of an audit of amounts or of classes at ``settings``, and the three questions'
    answers ("" for the groups as loaded, then each attribute alone). ``tables["verdicts"]`` is the verdict table
    the summary counts: the OFI verdicts (amounts; ordered classes with outcomes, in tiers), else the impact ratios.
    ``unit`` names the amounts' unit ("$"); ``band`` the mean prediction ratio's band (None: not asked)."""
    v, extra, text = _judged(audit, settings, unit, band, reference)
    tables: dict[str, pd.DataFrame] = {"verdicts": v, **extra}
    questions = {"": text}
    if isinstance(audit, ContinuousAudit):
        tables["sufficient statistics"] = audit.stats()
    else:
        if audit.has_outcomes:
            tables["confusion matrices"] = _matrices(audit)
        tables["class shares"] = audit.shares(settings.alpha)
        tables[LL144] = regulatory.ll144_summary(audit, alpha=settings.alpha, tolerance=settings.tolerance,
                                                 adjust=settings.adjust)
    for attribute in audit.attributes:
        alone, _, said = _judged(audit.marginal(attribute), settings, unit, band, None)
        tables[f"verdicts by {attribute} alone"] = alone
        questions[attribute] = said
    return tables, questions


# --------------------------------------------------------------------------- figures


def _forest(v: pd.DataFrame, unit: str, what: str) -> go.Figure:
    """Every pair's OFI with the adjusted interval that decided its verdict, the tolerance band shaded."""
    tol = v.settings.tolerance
    order = np.argsort(-v["ofi"].abs().fillna(0).to_numpy(), kind="stable")[:60]
    part = v.iloc[order]
    names = [plotly_text(f"{i} vs {j}") for i, j in zip(part["group_i"], part["group_j"])]
    x, lo, hi = (part[c].to_numpy(dtype=float) for c in ("ofi", "ofi_ci_low", "ofi_ci_high"))
    hover = [f"<b>{n}</b><br>OFI {plotly_text(amount_text(a, unit))} [{plotly_text(amount_text(b, unit))}, "
             f"{plotly_text(amount_text(c, unit))}]<br>{plotly_text(w)}"
             for n, a, b, c, w in zip(names, x, lo, hi, part["verdict"])]
    fig = go.Figure(go.Scatter(x=x, y=names, mode="markers", marker=dict(size=10, color="#4a6fa5"),
                               error_x=dict(type="data", symmetric=False, array=np.nan_to_num(hi - x),
                                            arrayminus=np.nan_to_num(x - lo), thickness=2, width=5),
                               hovertext=hover, hoverinfo="text", name="OFI"))
    fig.add_vrect(x0=-tol, x1=tol, fillcolor="#4a6fa5", opacity=0.1, line_width=0, layer="below")
    fig.add_vline(x=0, line_dash="dot", line_color="#888", line_width=1)
    fig.update_yaxes(type="category", autorange="reversed")
    fig.update_xaxes(title_text=f"OFI = B_i − B_j ({plotly_text(what)}; {interval_label(v, 'ofi')})")
    return _plain(fig, f"OFI of every pair, with its adjusted interval<br><sup>shaded: within ±"
                             f"{plotly_text(amount_text(tol, unit))}</sup>",
                        height=140 + 28 * len(part), wrap=False)


def _per_group(groups: pd.DataFrame, columns: tuple[str, ...], unit: str, alpha: float, title: str) -> go.Figure:
    """Each group's means (``columns`` of a by-group table) with their 1 − α intervals, one marker per measure."""
    names = [plotly_text(g) for g in groups.index]
    fig = go.Figure()
    for k, c in enumerate(columns):
        x, lo, hi = (groups[n].to_numpy(dtype=float) for n in (c, f"{c}_ci_low", f"{c}_ci_high"))
        fig.add_trace(go.Scatter(x=x, y=names, mode="markers", name=c.replace("_", " "),
                                 marker=dict(size=10, color=PALETTE[k % len(PALETTE)]),
                                 error_x=dict(type="data", symmetric=False, array=np.nan_to_num(hi - x),
                                              arrayminus=np.nan_to_num(x - lo), thickness=2, width=5),
                                 hovertext=[f"<b>{n}</b><br>{c}: {plotly_text(amount_text(a, unit))} "
                                            f"[{plotly_text(amount_text(b, unit))}, {plotly_text(amount_text(d, unit))}]"
                                            for n, a, b, d in zip(names, x, lo, hi)], hoverinfo="text"))
    fig.add_vline(x=0, line_dash="dot", line_color="#888", line_width=1)
    fig.update_yaxes(type="category", autorange="reversed")
    fig.update_xaxes(title_text=f"{plotly_text(unit) or 'outcome units'} · {level_text(1 - alpha)} intervals")
    return _plain(fig, title, height=160 + 40 * len(names), legend_below=True, wrap=False)


def _figures(audit: Any, tables: dict[str, pd.DataFrame], unit: str, alpha: float, trend: Any) -> dict[str, go.Figure]:
    v = tables["verdicts"]
    figures: dict[str, go.Figure] = {}
    if isinstance(audit, ContinuousAudit):
        figures["Mean benefit per group, with its interval"] = _per_group(
            tables["groups"], ("mean_benefit",), unit, alpha, "Mean benefit per group (the marginal benefit B)")
        figures["OFI of every pair, with its adjusted interval"] = _forest(v, unit, unit or "the outcome's units")
        figures["Error sizes per group: MAE and RMSE"] = _per_group(tables["groups"], ("mae", "rmse"), unit, alpha,
                                                                    "Error sizes per group: MAE and RMSE")
    else:
        if audit.has_outcomes and len(audit.groups) > MAX_HEATMAPS:   # the largest groups; every matrix is a table
            largest = list(audit.n.sort_values(ascending=False, kind="stable").index[:MAX_HEATMAPS])
            figures[f"Observed against predicted class, the {MAX_HEATMAPS} largest groups"] = \
                plots.class_heatmaps(audit, [g for g in audit.groups if g in largest])
        else:
            figures["Observed against predicted class, per group"] = plots.class_heatmaps(audit)
        ratios = tables.get("impact ratios", v)
        if len(ratios):
            figures["Impact ratios at every cut" if "cut" in ratios else "Impact ratios of every class's share"] = \
                plots.impact_ratio_chart(ratios)
        if "ofi" in v:
            figures["Ordinal OFI of every pair (tiers), with its adjusted interval"] = _forest(v, "tiers", "tiers")
    if TREND_CHANGES in tables:
        figures["OFI of each pair across periods"] = plots.ofi_trend(trend)
    return figures


# --------------------------------------------------------------------------- the report


@dataclass
class KindReport(Report):
    """The report of a :class:`~fairness_core.continuous.ContinuousAudit` or a
    :class:`~fairness_core.multiclass.MulticlassAudit`: :class:`Report`'s HTML, JSON and CSV zip, with the summary,
    header and verdict reading of its kind. ``unit``: the amounts' unit ("$"; "tiers" for ordered classes)."""

    kind: str = "continuous"
    unit: str = ""

    @property
    def _n(self) -> int:
        return int(self.audit.n.sum()) if self.kind == "continuous" else int(self.audit.counts.sum())

    @property
    def _outcomes(self) -> bool:
        return bool(getattr(self.audit, "has_outcomes", True))

    def summary(self) -> dict[str, Any]:
        """The verdict counts, the largest OFI and the largest distance from 0 its adjusted interval keeps, the
        significant band violations (the mean prediction ratio; the impact ratios at every cut), the findings and
        the three answers."""
        v = self.tables["verdicts"]
        text = self.questions[""]
        out: dict[str, Any] = {"kind": self.kind, "pairs": int(len(v)), "has outcomes": self._outcomes,
                               "unit": self.unit}
        if "ofi" in v:
            outside = np.maximum(v["ofi_ci_low"].to_numpy(float), -v["ofi_ci_high"].to_numpy(float))
            out.update({"verdicts": answers.verdict_counts(v), "OFI tolerance": float(v.settings.tolerance),
                        "max |OFI|": _num(v["ofi"].abs().max()) if len(v) else None,
                        "max |OFI| lower bound": (float(max(0.0, np.nanmax(outside))) if len(v) and
                                                  np.isfinite(outside).any() else 0.0),
                        "OFI interval level": interval_label(v, "ofi"),
                        "too skewed to tell": int(v["reason"].astype(str).str.startswith("too skewed").sum())})
            out["findings"] = answers.findings(v, text)
        else:
            out["verdicts"] = answers.verdict_counts(v, SELECTION_VERDICTS)
            out["findings"] = list(text.values())[1]   # the impact ratios' answer: what these verdicts are
        if self.kind == "continuous":
            out["band violations (significant)"] = int(v["ratio_beyond_band"].sum())
        else:
            ratios = self.tables.get("impact ratios", v)
            out["impact ratio verdicts"] = answers.verdict_counts(ratios, SELECTION_VERDICTS)
            out["band violations (significant)"] = int(ratios["di_beyond_band"].sum()) if len(ratios) else 0
            out["impact ratio interval level"] = interval_label(ratios, "di") if len(ratios) else None
        out["three questions"] = text
        return out

    def to_json(self) -> str:
        """Settings, summary and every table as records; undefined numbers as null."""
        doc = {"tool": "fairness-audit-workbench", "version": __version__, "created": self.created, "kind": self.kind,
               "source": self.audit.source, "direction": self.audit.direction, "unit": self.unit,
               "notes": list(self.audit.notes) + self.extra_notes, "settings": self.settings,
               "summary": self.summary(), "tables": "@TABLES@"}
        if self.kind == "multiclass":
            doc.update({"classes": list(self.audit.classes), "ordered": self.audit.ordered,
                        "favourable": list(self.audit.favourable)})
        head = json.dumps(doc, indent=2, allow_nan=False, default=str)
        tables = ", ".join(f"{json.dumps(k)}: {_table_json(t)}" for k, t in self.tables.items())
        return head.replace('"@TABLES@"', "{" + tables + "}")

    def _html_header(self) -> list[str]:
        esc = html.escape
        what = {"continuous": "Audit of amounts", "multiclass": "Audit of classes"}[self.kind]
        provenance = dict(getattr(self.audit, "provenance", {}) or {})
        parts = [f"<header><h1>Fairness audit report</h1><p class='meta'>{what} · {esc(self.audit.source)} · "
                 f"{len(self.audit.groups)} groups · n = {self._n:,} · {esc(self.audit.direction)}"
                 + (f" · unit: {esc(self.unit)}" if self.unit else "")
                 + f"<br>Model: {esc(str(self.settings.get('model (name and version)', '')))}"
                 f" · period: {esc(str(self.settings.get('period the data cover', '')))}"
                 + "".join(f" · {esc(str(k))}: {esc(str(v))}" for k, v in provenance.items())
                 + f"<br>Created {esc(self.created)} by fairness-audit-workbench {esc(__version__)}</p>"]
        for note in [*self.audit.notes, *self.extra_notes]:
            parts.append(f"<p class='note'>{esc(note)}</p>")
        s = self.summary()
        counts = ", ".join(f"{esc(k)}: {n}" for k, n in s["verdicts"].items())
        questions = "".join(f"<li><b>{esc(q)}</b> {esc(a)}</li>" for q, a in s["three questions"].items())
        if not self._outcomes:
            parts.append(f"<h2>Summary</h2><p class='note'>Decisions alone: {esc(NEEDS_ONCE)}</p>")
        parts.append(f"<h2>Summary</h2><ol class='questions'>{questions}</ol>"
                     f"<p>{s['pairs']} comparisons — {counts}.</p><p>{esc(s['findings'])}</p>"
                     + (f"<p>Largest |OFI| = {esc(amount_text(s['max |OFI|'], self.unit))}, tolerance "
                        f"±{esc(amount_text(s['OFI tolerance'], self.unit))}.</p>" if "max |OFI|" in s else "")
                     + "<p>Every verdict rests on a multiplicity-adjusted interval, printed beside it; the settings and "
                     "methods are at the end.</p></header>")
        return parts

    def _html_verdicts(self) -> list[str]:
        esc = html.escape
        v = self.tables["verdicts"]
        unit = self.unit
        shown_note = (f"<p class='note'>The first {MAX_HTML_ROWS:,} of {len(v):,} comparisons, findings first; every "
                      "one with every number is in the JSON and the CSV zip.</p>" if len(v) > MAX_HTML_ROWS else "")
        title = "Verdict per pair" if "ofi" in v else "Verdict per pair at every cut" if "cut" in v else \
            "Verdict per pair for every class"
        parts = [f"<section><h2>{title}</h2>{shown_note}" + _table(reading(v, unit, MAX_HTML_ROWS), index=False,
                                                                    css="reading") + "</section>"]
        if "impact ratios" in self.tables:
            parts.append("<section><h2>Impact ratios at every cut</h2>"
                         + _table(reading(self.tables["impact ratios"], unit, MAX_HTML_ROWS), index=False)
                         + "</section>")
        for attribute in self.audit.attributes:
            table = self.tables[f"verdicts by {attribute} alone"]
            items = "".join(f"<li><b>{esc(q)}</b> {esc(a)}</li>" for q, a in self.questions[attribute].items())
            parts.append(f"<section><h2>By {esc(attribute)} alone</h2><ol class='questions'>{items}</ol>"
                         + _table(reading(table, unit, MAX_HTML_ROWS), index=False, css="reading") + "</section>")
        return parts


def _num(v: Any) -> Any:
    return None if v is None or not np.isfinite(v) else float(v)


def build(audit: ContinuousAudit | MulticlassAudit, verdicts: pd.DataFrame | None = None, *,
          reference: str | None = None, settings: VerdictSettings | None = None, **options: Any) -> KindReport:
    """The report of an audit of amounts or of classes (``fairness_core.report.build`` calls this for them).

    Amounts need a tolerance in the outcome's units: ``verdicts`` (:meth:`ContinuousAudit.verdicts`' result, whose
    settings then govern every table) or ``settings`` (``VerdictSettings(tolerance, alpha, adjust, band=...,
    amounts=True)``); ``unit`` ("$", "a year") names the units; ``band=None`` asks no ratio question. Classes take
    ``settings`` (tolerance in tiers, default :class:`VerdictSettings`'). ``options`` are :class:`ReportOptions`'
    fields (``model``, ``period``, ``data_used``, ``trend``, ``notes``, ``extra_tables``); scores and MATCH are binary
    only."""
    opts = ReportOptions(**{k: (tuple(v) if k in ("notes", "match_metrics") and v is not None else v)
                            for k, v in options.items() if v is not None or k in ("trend", "band")})
    band = opts.band
    if verdicts is not None:
        settings = verdicts.settings
    if isinstance(audit, ContinuousAudit):
        kind, unit = "continuous", opts.unit
        if settings is None:
            raise ValueError("an audit of amounts needs a tolerance in the outcome's units: pass verdicts= or "
                             "settings=VerdictSettings(tolerance, amounts=True) (e.g. 200 for $200 a year)")
        if band is not None and tuple(settings.band) != tuple(band):
            band = settings.band
        if verdicts is not None and not verdicts["ratio_ci_low"].notna().any() and verdicts["ratio"].notna().any():
            band = None   # judged with band=None: no ratio question was asked
    elif isinstance(audit, MulticlassAudit):
        kind, unit = "multiclass", "tiers" if audit.ordered and audit.has_outcomes else ""
        settings = settings or VerdictSettings()
    else:
        raise ValueError(f"expected a ContinuousAudit or a MulticlassAudit, got {type(audit).__name__}")
    tables, questions = kind_tables(audit, settings, unit=unit, band=band, reference=reference)
    if verdicts is not None:
        tables["verdicts"] = verdicts
    tables.update(trend_tables(opts.trend))
    tables.update(opts.extra_tables or {})
    figures = _figures(audit, tables, unit, settings.alpha, opts.trend)
    described = _settings(audit, kind, unit, band, settings, tables, reference, opts)
    if TREND_CHANGES in tables:
        trend = opts.trend
        described["trend"] = (f"periods {', '.join(trend.periods)}; each change of a pair's OFI between consecutive "
                              "periods: MOVER-D interval from the two periods' intervals (independent samples), "
                              f"p-value dual to it, {trend.adjust} across all changes at α = {trend.alpha:g}")
    report = KindReport(audit, described, tables, figures,
                        datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), list(opts.notes),
                        questions=questions, kind=kind, unit=unit)
    return report


def _settings(audit: Any, kind: str, unit: str, band: Any, s: VerdictSettings, tables: dict[str, pd.DataFrame],
              reference: str | None, opts: ReportOptions) -> dict[str, Any]:
    """The settings and methods the report ends with."""
    v = tables["verdicts"]
    out: dict[str, Any] = {"model (name and version)": opts.model.strip() or "not given",
                           "period the data cover": opts.period.strip() or "not given",
                           "data the audit used": data_used_text(opts.data_used, opts.test_data_reason),
                           "kind of audit": ("amounts (a model that predicts a number)" if kind == "continuous" else
                                             "ordered classes" if audit.ordered else "unordered classes")
                           + ("" if getattr(audit, "has_outcomes", True) else ", decisions alone"),
                           "direction": audit.direction,
                           "attribute(s) audited": " × ".join(audit.group_columns) or "group",
                           "α (significance level)": s.alpha, "multiplicity adjustment": adjustment(s.adjust).name}
    amount_interval = ("union of Hall's skewness-corrected t and Welch's t intervals of a difference of means, "
                       "p-values the larger of the two; a pair whose skew index |G1|/√n exceeds "
                       f"{SKEW_LIMIT:g} is 'too skewed for n rows to tell' (docs/methods.md, Amounts)")
    if kind == "continuous":
        out.update({"unit": unit or "not named", "OFI tolerance": f"±{amount_text(s.tolerance, unit)}",
                    "OFI interval": amount_interval,
                    "mean prediction ratio": ("not asked (band=None)" if band is None else
                                              f"Fieller's interval against the band [{s.band[0]:g}, {s.band[1]:g}]"),
                    "verdict rule": "three-sided against the tolerance (beyond, within, ≠ 0) and the ratio against "
                                    "its band, each kind of claim adjusted across pairs; every interval printed is "
                                    "the adjusted one that decided its verdict",
                    "OFI interval level": interval_label(v, "ofi"), "ratio interval level": interval_label(v, "di"),
                    "per-group intervals": f"{level_text(1 - s.alpha)}, unadjusted: means by the amounts' interval, "
                                           "RMSE the square root of the MSE's, the ratio to the reference Fieller's",
                    "error sizes": "each pair's MAE gap, the amounts' interval, Bonferroni-simultaneous over the pairs"})
        return out
    if audit.ordered and audit.has_outcomes:
        out.update({"ordinal OFI tolerance": f"±{s.tolerance:g} tiers",
                    "ordinal OFI interval": amount_interval + "; on the tiers' ranks, no ratio question",
                    "OFI interval level": interval_label(v, "ofi"),
                    "ordinal error rates": "exact per-group intervals; every pair's gap Bonferroni-simultaneous"})
    elif audit.has_outcomes:
        out["one-vs-rest verdicts"] = (f"each class against the rest as a binary audit, tolerance {s.tolerance:g}, "
                                       "its direction from the favourable classes (a class of none: its rates "
                                       "with exact intervals, no verdict)")
    ratios = tables.get("impact ratios", v)
    out.update({"impact ratios": "each cut's (class's) selection rate over the other group's, intervals adjusted "
                                 f"across cuts (classes) and pairs at once ({adjustment(s.adjust).name})",
                "impact ratio interval level": interval_label(ratios, "di") if len(ratios) else "no pair compared",
                "Local Law 144 summary": regulatory.rules_text(tables[LL144])})
    if reference is not None:
        out["reference group"] = reference
    return out
