"""The report of a counterfactual test (issue 54): a :class:`~fairness_core.counterfactual.PairedAudit` as one
self-contained HTML page, JSON and a zip of formula-safe CSVs, with the binary report's structure — the answer first
(which pairs differ, by how many percentage points, against the baseline's flip rate), the verdicts as people read
them, the figures (the forest plot of paired differences, the discordance matrix, each group's rate), every table,
the settings and methods (:class:`PairedReport`, a :class:`~fairness_core.presentation.report.Report`).

Tables: ``pairs`` (:meth:`PairedAudit.pairs`, every number), ``groups`` (:meth:`PairedAudit.by_group`),
``discordance`` (cases where the row's variant was selected and the column's was not), ``omnibus`` (Cochran's Q, the
first places against chance, or Friedman's test) and, when some variant went unanswered, ``incomplete cases``.
``fairness_core.report.build`` calls :func:`build` for a PairedAudit.

>>> import pandas as pd
>>> from fairness_core import counterfactual
>>> rows = pd.DataFrame({"case_id": [1, 1, 2, 2, 3, 3], "group": ["A", "B"] * 3, "decision": [1, 0, 1, 1, 0, 0]})
>>> r = build(counterfactual.audit(rows, positive_is="benefit"))
>>> sorted(r.tables), r.summary()["kind"]
(['discordance', 'groups', 'omnibus', 'pairs'], 'paired')
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np
import pandas as pd

from ..common.text import counted
from .._version import __version__
from ..common.vocabulary import adjustment
from ..counterfactual import PairedAudit
from ..statistics.paired import PAIRED_CC, PAIRED_VERDICTS
from ..statistics.verdicts import VerdictSettings
from ..wording.levels import level_text
from ..wording import paired as words
from ..wording.publication import data_used_text
from .plots.counterfactual import discordance_matrix, paired_forest, paired_rates
from .report_base import MAX_HTML_ROWS, Report, ReportOptions, _table, _table_json

__all__ = ["PairedReport", "build", "discordance_table", "level", "null_swaps", "omnibus_table", "reading",
           "tables"]

#: The kinds of output a paired audit reads, in words.
OUTPUTS = {"decision": "yes/no decisions", "rank": "positions in a ranked list (1 = first)", "score": "scores"}


def null_swaps(audit: PairedAudit) -> tuple[str, ...]:
    """The audit's null-swap groups (:attr:`PairedAudit.null_swaps`): baselines, never compared as groups."""
    return tuple(audit.null_swaps.values())


def level(pairs: pd.DataFrame, alpha: float) -> float:
    """The one level of every interval a counterfactual test's page and report print: the pairs' decision level
    (the smallest critical level of the verdicts' and the flips' families), 1 − ``alpha`` when there is no pair."""
    return float(pairs["level"].iloc[0]) if len(pairs) else 1 - alpha


def discordance_table(pairs: pd.DataFrame, groups: tuple[str, ...] | list[str]) -> pd.DataFrame:
    """The k × k counts: row i, column j = the cases complete for both where i's variant was selected (ranked first)
    and j's was not; the diagonal empty (NaN)."""
    where = {g: k for k, g in enumerate(groups)}
    k = len(groups)
    out = np.full((k, k), np.nan)
    a, b = pairs["group_i"].map(where).to_numpy(), pairs["group_j"].map(where).to_numpy()
    out[a, b], out[b, a] = pairs["only_i"].to_numpy(dtype=float), pairs["only_j"].to_numpy(dtype=float)
    index = pd.Index(list(groups), name="selected ↓ / not selected →")
    return pd.DataFrame(out, index=index, columns=list(groups)).astype("Int64")


def omnibus_table(audit: PairedAudit) -> pd.DataFrame:
    """The test across every real group (the baseline's null swap left out) as a one-row table."""
    o = audit.omnibus()
    return pd.DataFrame({"test": [o.test], "statistic": [o.statistic], "df": [o.df], "p_value": [o.p_value],
                         "method": [o.method], "cases": [o.cases]})


def tables(audit: PairedAudit, settings: VerdictSettings) -> dict[str, pd.DataFrame]:
    """Every table of the report at ``settings`` (tolerance in percentage points as a share, 0.05 = 5 pp; for
    scores in the score's units), every interval at the pairs' one :func:`level` — each group's rate too."""
    pairs = audit.pairs(tolerance=settings.tolerance, alpha=settings.alpha, adjust=settings.adjust)
    out = {"pairs": pairs, "groups": audit.by_group(alpha=1 - level(pairs, settings.alpha))}
    if audit.kind != "score":
        out["discordance"] = discordance_table(pairs, audit.real_groups)
    out["omnibus"] = omnibus_table(audit)
    if audit.incomplete:
        out["incomplete cases"] = audit.incomplete_cases()
    return out


def reading(pairs: pd.DataFrame, kind: str, unit: str = "", max_rows: int | None = None,
            secondary: tuple[str, ...] = ()) -> pd.DataFrame:
    """The pairs as people read them, most telling first (material differences, largest first; pairs of the
    ``secondary`` groups, the null swaps, after the others within each verdict): pair, verdict, favours, the
    difference with its adjusted interval, the discordant cases, the flip rate (and, with null swaps, the flip rates
    within each group and whether the pair flips more than within both), McNemar's adjusted p."""
    rank = pairs["verdict"].map({w: k for k, w in enumerate(PAIRED_VERDICTS)}).fillna(len(PAIRED_VERDICTS))
    later = (pairs["group_i"].isin(secondary).astype(int) + pairs["group_j"].isin(secondary)).to_numpy()
    order = np.lexsort((-pairs["difference"].abs().fillna(0).to_numpy(), later, rank.to_numpy()))
    p = pairs.iloc[order]
    score = kind == "score"
    fmt = (lambda x: words._units(x, "score", unit)) if score else (lambda x: words.points(x, signed=True))
    out = pd.DataFrame({"pair": (p["group_i"].astype(str) + " vs " + p["group_j"].astype(str)).to_numpy(),
                        "verdict": p["verdict"].to_numpy(), "favours": p["favours"].fillna("").to_numpy(),
                        "difference (i − j)": [fmt(x) for x in p["difference"]],
                        "adjusted interval": [f"{fmt(lo)} to {fmt(hi)}" for lo, hi in
                                              zip(p["difference_ci_low"], p["difference_ci_high"])],
                        "cases": p["n"].to_numpy()})
    if not score:
        out["only i / only j"] = [f"{int(a):,} / {int(b):,}" for a, b in zip(p["only_i"], p["only_j"])]
        out["flip rate"] = [words.percent(x) for x in p["flip_rate"]]
        if "baseline_flip_rate_i" in p:
            out["within i / within j"] = [f"{words.percent(a)} / {words.percent(b)}" for a, b in
                                          zip(p["baseline_flip_rate_i"], p["baseline_flip_rate_j"])]
            out["flips more than both"] = np.where(p["flips_beyond_baseline"].astype(bool), "yes", "not shown")
        out["McNemar p (adjusted)"] = [f"{x:.3g}" for x in p["p_adjusted"]]
    else:
        out["Wilcoxon p (adjusted)"] = [f"{x:.3g}" for x in p["wilcoxon_p_adjusted"]]
    out = out.reset_index(drop=True)
    return out if max_rows is None else out.head(max_rows)


@dataclass
class PairedReport(Report):
    """The report of a :class:`~fairness_core.counterfactual.PairedAudit`: :class:`Report`'s HTML, JSON and CSV zip
    with the answer, header and verdict reading of a counterfactual test. ``source``: what the results came from;
    ``unit``: a score's unit ("" for decisions and ranks, whose differences are in percentage points)."""

    source: str = ""
    unit: str = ""
    answer: tuple[str, ...] = ()
    tolerance: float = 0.05

    @property
    def _cases(self) -> int:
        return int(len(self.audit.cases))

    def summary(self) -> dict[str, Any]:
        """The verdict counts, the largest difference and the largest distance from 0 its adjusted interval keeps,
        the omnibus test, the baseline's flip rate, the incomplete cases and the answer."""
        pairs = self.tables["pairs"]
        outside = np.maximum(pairs["difference_ci_low"].to_numpy(float), -pairs["difference_ci_high"].to_numpy(float))
        omnibus = self.tables["omnibus"].iloc[0]
        out: dict[str, Any] = {
            "kind": "paired", "output": self.audit.kind, "pairs": int(len(pairs)), "cases": self._cases,
            "groups": list(self.audit.groups), "incomplete cases": int(self.audit.incomplete),
            "verdicts": {w: int((pairs["verdict"] == w).sum()) for w in PAIRED_VERDICTS},
            "tolerance": float(self.tolerance),
            "max |difference|": _num(pairs["difference"].abs().max()) if len(pairs) else None,
            "max |difference| lower bound": (float(max(0.0, np.nanmax(outside))) if len(pairs) and
                                             np.isfinite(outside).any() else 0.0),
            "difference interval level": level_text(float(pairs["level"].iloc[0])) if len(pairs) else None,
            "omnibus": {"test": omnibus["test"], "statistic": _num(omnibus["statistic"]),
                        "p_value": _num(omnibus["p_value"]), "df": int(omnibus["df"]), "method": omnibus["method"]},
            "baseline": dict(self.audit.null_swaps) or None, "answer": list(self.answer)}
        if "baseline_flip_rate_i" in pairs:
            out["within-group flip rates"] = {g: _num(r) for g, r in words.within_rates(pairs).items()}
            out["pairs flipping more than within both groups"] = int(pairs["flips_beyond_baseline"].sum())
        return out

    def lines(self) -> list[str]:
        """The summary as the command line prints it: what was audited, the notes, the answer, the test across all
        groups."""
        s, o = self.summary(), self.summary()["omnibus"]
        return [f"{self.source}: {len(self.audit.groups)} groups, {s['cases']:,} cases ({s['incomplete cases']:,} "
                f"incomplete), {s['pairs']} pairs; " + ", ".join(f"{k} {v}" for k, v in s["verdicts"].items()),
                *(f"note: {n}" for n in self.extra_notes), *self.answer,
                f"across all groups: {o['test']} ({o['method']}), p = "
                + ("undefined" if o["p_value"] is None else f"{o['p_value']:.3g}")]

    def to_json(self) -> str:
        """Settings, summary and every table as records; undefined numbers as null."""
        doc = {"tool": "fairness-audit-workbench", "version": __version__, "created": self.created, "kind": "paired",
               "source": self.source, "output": self.audit.kind, "positive is": self.audit.positive_is,
               "groups": list(self.audit.groups), "baseline": dict(self.audit.null_swaps) or None,
               "unit": self.unit, "notes": self.extra_notes, "settings": self.settings,
               "summary": self.summary(), "tables": "@TABLES@"}
        head = json.dumps(doc, indent=2, allow_nan=False, default=str)
        body = ", ".join(f"{json.dumps(k)}: {_table_json(t)}" for k, t in self.tables.items())
        return head.replace('"@TABLES@"', "{" + body + "}")

    def _html_header(self) -> list[str]:
        esc = html.escape
        a = self.audit
        parts = [f"<header><h1>Counterfactual test report</h1><p class='meta'>Paired audit · {esc(self.source)} · "
                 f"{len(a.groups)} groups · {self._cases:,} cases · {esc(OUTPUTS[a.kind])}"
                 f"<br>Model: {esc(str(self.settings.get('model (name and version)', '')))}"
                 f" · period: {esc(str(self.settings.get('period the data cover', '')))}"
                 f"<br>Created {esc(self.created)} by fairness-audit-workbench {esc(__version__)}</p>"]
        for note in self.extra_notes:
            parts.append(f"<p class='note'>{esc(note)}</p>")
        s = self.summary()
        counts = ", ".join(f"{esc(k)}: {n}" for k, n in s["verdicts"].items())
        answer = "".join(f"<p>{esc(line)}</p>" for line in self.answer)
        o = s["omnibus"]
        omnibus = (f"<p>Across all groups ({esc(o['test'])}, {esc(o['method'])}): statistic "
                   f"{'undefined' if o['statistic'] is None else format(o['statistic'], '.4g')}, df {o['df']}, "
                   f"p = {o['p_value']:.3g}.</p>") if o["p_value"] is not None else ""
        incomplete = (f"<p class='note'>{s['incomplete cases']:,} case(s) lack some group's answer; each is used "
                      "wherever the pair it belongs to is complete (listed in the table of incomplete cases).</p>"
                      if s["incomplete cases"] else "")
        parts.append(f"<h2>The answer</h2>{answer}<p>{counted(s['pairs'], 'pair of groups')} — {counts}.</p>{omnibus}"
                     f"{incomplete}<p>Each case was answered once per group with only the group's words changed, so "
                     "every comparison is paired: the same cases, compared within each case. Every verdict rests on "
                     "an adjusted interval, printed beside it; the settings and methods are at the end.</p>"
                     "</header>")
        return parts

    def _html_verdicts(self) -> list[str]:
        pairs = self.tables["pairs"]
        note = (f"<p class='note'>The first {MAX_HTML_ROWS:,} of {len(pairs):,} pairs, findings first; every pair "
                "with every number is in the JSON and the CSV zip.</p>" if len(pairs) > MAX_HTML_ROWS else "")
        return [f"<section><h2>Verdict per pair</h2>{note}"
                + _table(reading(pairs, self.audit.kind, self.unit, MAX_HTML_ROWS, null_swaps(self.audit)), index=False,
                         css="paired")   # not "reading": that style widens the binary reading's 5th column
                + "</section>"]


def _num(v: Any) -> Any:
    return None if v is None or not np.isfinite(v) else float(v)


def build(audit: PairedAudit, verdicts: pd.DataFrame | None = None, *, reference: str | None = None,
          settings: VerdictSettings | None = None, source: str = "", **options: Any) -> PairedReport:
    """The report of a counterfactual test. ``settings``: the tolerance (a difference of rates as a share, 0.05 =
    5 percentage points; for scores in the score's units, required, ``VerdictSettings(2.0, amounts=True)``), α and
    the adjustment across pairs; default :class:`VerdictSettings`' for decisions and ranks. ``verdicts``, when given,
    is ``audit.pairs()``'s table at those settings (kept as it is). ``source`` names what the results came from;
    ``options`` are :class:`ReportOptions`' fields (``model``, ``period``, ``data_used``, ``notes``,
    ``extra_tables``, ``unit`` for scores). ``reference`` is refused: a paired test compares every pair."""
    if not isinstance(audit, PairedAudit):
        raise ValueError(f"expected a PairedAudit, got {type(audit).__name__}")
    if reference is not None:
        raise ValueError("a counterfactual test compares every pair of groups; it has no reference group")
    opts = ReportOptions(**{k: (tuple(v) if k == "notes" and v is not None else v)
                            for k, v in options.items() if v is not None})
    if settings is None:
        if audit.kind == "score":
            raise ValueError("a score audit's report needs settings=VerdictSettings(tolerance, amounts=True) with the "
                             "tolerance in the score's units: the smallest difference of mean scores that matters")
        settings = VerdictSettings()
    found = tables(audit, settings)
    if verdicts is not None:
        found["pairs"] = verdicts
    found.update(opts.extra_tables or {})
    pairs = found["pairs"]
    unit = opts.unit if audit.kind == "score" else "pp"
    figures = {"Paired difference of every pair": paired_forest(pairs, settings.tolerance, unit or "points")}
    if audit.kind != "score":
        what = "ranked first" if audit.kind == "rank" else "selected"
        figures["Discordance matrix"] = discordance_matrix(pairs, list(audit.real_groups), what)
    figures["Rate per group"] = paired_rates(found["groups"], 1 - level(pairs, settings.alpha),
                                             null_swaps=null_swaps(audit))
    answer = tuple(words.answer(pairs, audit.kind, settings.tolerance, audit.baseline, opts.unit, alpha=settings.alpha,
                                secondary=null_swaps(audit)))
    described = _settings(audit, settings, opts, pairs)
    return PairedReport(audit, described, found, figures, datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                        list(opts.notes), source=source or "counterfactual test results",
                        unit=opts.unit if audit.kind == "score" else "", answer=answer, tolerance=settings.tolerance)


def _settings(audit: PairedAudit, s: VerdictSettings, opts: ReportOptions, pairs: pd.DataFrame) -> dict[str, Any]:
    """The settings and methods the report ends with."""
    score = audit.kind == "score"
    tol = f"±{s.tolerance:g}{(' ' + opts.unit) if opts.unit else ''} (mean score)" if score else \
        f"±{s.tolerance * 100:g} percentage points (difference of {words.RATE[audit.kind]})"
    out: dict[str, Any] = {
        "model (name and version)": opts.model.strip() or "not given",
        "period the data cover": opts.period.strip() or "not given",
        "data the audit used": data_used_text(opts.data_used, opts.test_data_reason),
        "kind of audit": f"counterfactual test (paired): each case answered once per group, only the group's words "
                         f"changed; output: {OUTPUTS[audit.kind]}",
        "what the output is for the person": f"a higher output is the {audit.positive_is}" if audit.kind == "decision"
        else ("being ranked first is the benefit" if audit.kind == "rank" else "a higher score is the benefit"),
        "groups": ", ".join(audit.groups), "cases": len(audit.cases),
        "incomplete cases": f"{audit.incomplete:,} (each used wherever its pair is complete)",
        "baseline (null swaps)": "; ".join(f"{n} against {g}" for g, n in audit.null_swaps.items()) or "none",
        "tolerance": tol, "α (significance level)": s.alpha, "multiplicity adjustment": adjustment(s.adjust).name,
        "interval level (every interval)": level_text(level(pairs, s.alpha))}
    if score:
        out.update({"difference": "mean of the paired differences, Student's t interval, dual p-values",
                    "test of each pair": "Wilcoxon signed-rank (SciPy's), adjusted across pairs",
                    "across all groups": "Friedman's chi-square (SciPy's)"})
    else:
        out.update({"difference": f"difference of {words.RATE[audit.kind]} on the cases complete for both: Tango's "
                                  f"score interval with a continuity correction of {PAIRED_CC:g} count, chosen by "
                                  "exact coverage (docs/methods.md, Counterfactual tests), p-values dual to it",
                    "verdict rule": "three-sided against the tolerance (beyond, within, ≠ 0), each kind of claim "
                                    "adjusted across pairs; the interval printed is the adjusted one that decided",
                    "flip rate": "(only i + only j)/n, Clopper–Pearson's exact interval at the one level",
                    "test of each pair": "exact McNemar (binomial on the discordant cases), adjusted across pairs; "
                                         "the conditional odds ratio only i/only j with the exact interval that "
                                         "agrees with it",
                    "against the baseline": "null swaps are baselines, not groups: each pair's flip rate minus the "
                                            "flip rate within each of its two groups (the group against its own null "
                                            "swap) on the same cases, Tango's interval at the one level; the pair "
                                            "flips beyond chance when both intervals lie above 0 (intersection–union; "
                                            "this family's critical level enters the one level); exact McNemar on "
                                            "the cases where one flipped and the other did not, the larger p of the "
                                            "two, adjusted across pairs",
                    "across all groups": "Cochran's Q (exact by enumerating each case's arrangements when few cases "
                                         "are informative), the null swaps left out" if audit.kind ==
                                         "decision" else "first places against chance 1/k (exact multinomial when "
                                                         "its outcomes are few)"})
    return out
