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

from datetime import datetime, timezone
from typing import Any

import pandas as pd

from . import plots
from .. import regulatory
from ..statistics import smoothing
from ..audit import Audit, DECISION_METRICS
from ..continuous import ContinuousAudit
from ..counterfactual import PairedAudit
from ..multiclass import MulticlassAudit
from ..statistics.verdicts import VerdictSettings
from ..wording.levels import interval_label
from ..results import Verdicts
from ..wording.decisions import SELECTION_WORDS
from ..wording.publication import data_used_text
from ..wording.reading import verdict_findings
from .scores_section import report_section
from ..common.vocabulary import adjustment
from .report_base import (  # noqa: F401 - the report's parts, where callers have always found them
    Report, ReportOptions, LL144, TREND_CHANGES, TREND_VERDICTS, ZIP_CONTENTS, MAX_HTML_ROWS, MAX_PRINT_COLUMNS,
    MAX_TRANSPOSED_ROWS, _TITLES, _CSS, _PRINT_JS, _print_tables, _keep_index, _num, _table_json,
    _fmt, _cell, _table, trend_tables, _decision_counts)


def build(audit: Audit | ContinuousAudit | MulticlassAudit | PairedAudit, verdicts: Verdicts | None = None, *,
          reference: str | None = None, settings: VerdictSettings | None = None, **options: Any) -> Report:
    """Compute everything the report shows for ``audit`` and its ``verdicts`` (:meth:`Audit.verdicts`' result, whose
    settings — tolerance, α, adjustment — govern every verdict, interval and the MATCH table's Holm control).

    An audit of amounts (:class:`~fairness_core.continuous.ContinuousAudit`) or of classes
    (:class:`~fairness_core.multiclass.MulticlassAudit`) gets the report of its kind
    (:func:`fairness_core.presentation.report_kinds.build`: amounts need ``verdicts`` or ``settings`` with a
    tolerance in the outcome's units, and take ``unit`` and ``band``). A counterfactual test
    (:class:`~fairness_core.counterfactual.PairedAudit`) gets its own
    (:func:`fairness_core.presentation.report_paired.build`: ``settings`` with the tolerance of a difference of rates,
    ``source`` naming the results; scores need the tolerance in their units).

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
    if isinstance(audit, (ContinuousAudit, MulticlassAudit)):   # amounts and classes: their own tables and words
        from . import report_kinds
        return report_kinds.build(audit, verdicts, reference=reference, settings=settings, **options)
    if isinstance(audit, PairedAudit):   # a counterfactual test: paired comparisons of every pair of groups
        from . import report_paired
        return report_paired.build(audit, verdicts, reference=reference, settings=settings, **options)
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
    tables, questions, findings = _tables(audit, verdicts, reference, opts)
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
                  list(opts.notes), questions=questions, findings=findings, score_section=section)


def _tables(audit: Audit, verdicts: Verdicts, reference: str, opts: ReportOptions
            ) -> tuple[dict[str, pd.DataFrame], dict, dict[str, str]]:
    """Every table of the report, the three questions' answers (pooled, then per attribute alone) and the findings
    composed from the pooled answers."""
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
    questions, findings = {"": answers["text"]}, {"": verdict_findings(verdicts, answers=answers)}
    gaps = answers["equal_opportunity"]["gaps"]
    tables["equal opportunity"] = gaps.set_index(gaps["rate"] + ": " + gaps["group_i"].astype(str) + " vs "
                                                 + gaps["group_j"].astype(str)).rename_axis("rate: pair")
    tables[LL144] = _ll144(audit, s, opts)
    _each_attribute(audit, s, tables, questions)
    tables.update(trend_tables(opts.trend))
    return tables, questions, findings


def _each_attribute(audit: Audit, s: VerdictSettings, tables: dict[str, pd.DataFrame],
                    questions: dict[str, dict[str, str]], findings: dict[str, str] | None = None) -> None:
    """Each attribute alone, beside the groups as loaded: its verdicts (a table), its answers (``questions``) and,
    when ``findings`` is given, what its verdicts say, composed from the same answers."""
    for attribute in audit.attributes:
        table = audit.marginal(attribute).verdicts(s)
        tables[f"verdicts by {attribute} alone"] = table
        answers = table.three_questions()
        questions[attribute] = answers["text"]
        if findings is not None:
            findings[attribute] = verdict_findings(table, answers=answers if table.outcomes else None)


def _ll144(audit: Audit, s: VerdictSettings, opts: ReportOptions) -> pd.DataFrame:
    return regulatory.ll144_summary(audit, alpha=s.alpha, tolerance=s.tolerance, adjust=s.adjust, scores=opts.scores,
                                    score_name=(opts.score_name or None) if opts.scores is not None else None)


def _build_decisions(audit: Audit, verdicts: Verdicts, reference: str, opts: ReportOptions) -> Report:
    """The report of an audit of decisions alone: selection rates, the four-fifths verdicts, the Local Law 144
    summary and each attribute alone; every measure that needs outcomes is named as such, never computed."""
    s = verdicts.settings
    tables = {"verdicts": verdicts, "cells": audit.group_table(DECISION_METRICS).rename(columns=SELECTION_WORDS),
              LL144: _ll144(audit, s, opts)}
    questions, findings = {"": verdicts.three_questions()["text"]}, {"": verdict_findings(verdicts)}
    _each_attribute(audit, s, tables, questions, findings)
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
                  list(opts.notes), questions=questions, findings=findings)


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
