"""What the Home and Bias Audit pages compute, computed once per data and settings and shared by every
session of the server (one server, several analysts).

Every cache here is keyed by :attr:`fairness_core.audit.Audit.fingerprint` (a content hash of everything
the audit holds but its rows, which nothing here reads) and by every setting its output depends on, never
by ``id()``; so two sessions share an entry only when its output would be the same for both. Entries are
bounded in number and age. Values are shared: callers read them and never change them (``styled`` and
the downloads copy).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from fairness_core import bias, plots, regulatory
from fairness_core.audit import Audit
from fairness_core.reading import three_questions, verdict_findings
from fairness_core.vocabulary import Reference
from ui.widgets import reasons_frame, verdict_display

#: Seconds an entry is kept after it was made; the entries per cache are bounded below as well.
TTL_S = 3600


@st.cache_resource(max_entries=16, ttl=TTL_S, show_spinner="Testing every pair of groups…")
def _verdicts(_audit: Audit, fingerprint: str, tolerance: float, alpha: float, adjust: str,
              reference: str | None) -> pd.DataFrame:
    return _audit.verdicts(tolerance, alpha=alpha, adjust=adjust,
                           reference=Reference.PAIRS if reference is None else reference)


def verdicts_for(audit: Audit, tolerance: float, alpha: float, adjust: str,
                 reference: str | None = None) -> pd.DataFrame:
    """The audit's verdict table, computed once per data and settings and shared by Home and Bias Audit
    (read-only: callers copy before changing it). With a ``reference`` group, every pair with it has it as
    group j (DI = the other group's rate over the reference's)."""
    return _verdicts(audit, audit.fingerprint, tolerance, alpha, adjust, reference if reference in audit.cms else None)


@dataclass(frozen=True)
class Verdicts:
    """The verdict table with what is read from it: the three questions answered, the findings in words,
    and the table as people read it (at most :data:`ui.widgets.MAX_VERDICT_ROWS` rows)."""

    table: pd.DataFrame
    answers: dict[str, Any]
    findings: str
    shown: pd.DataFrame


@st.cache_resource(max_entries=16, ttl=TTL_S, show_spinner=False)
def _read(_audit: Audit, fingerprint: str, tolerance: float, alpha: float, adjust: str,
          reference: str | None) -> Verdicts:
    table = verdicts_for(_audit, tolerance, alpha, adjust, reference)
    answers = three_questions(_audit, table)
    return Verdicts(table, answers, verdict_findings(table, answers=answers), verdict_display(table))


def verdicts_read(audit: Audit, tolerance: float, alpha: float, adjust: str, reference: str | None = None) -> Verdicts:
    """:func:`verdicts_for` with the three questions, the findings and the displayed table, once per data and
    settings."""
    return _read(audit, audit.fingerprint, tolerance, alpha, adjust, reference if reference in audit.cms else None)


@st.cache_resource(max_entries=16, ttl=TTL_S, show_spinner="Drawing the verdicts…")
def _pair_figures(_audit: Audit, fingerprint: str, tolerance: float, alpha: float, adjust: str,
                  reference: str) -> dict[str, go.Figure]:
    v = verdicts_for(_audit, tolerance, alpha, adjust, reference)
    return {"scatter": plots.ofi_di_scatter(v), "forest": plots.ofi_forest(v, reference),
            "ofi": plots.pairwise_heatmap(_audit, "OFI", v), "di": plots.disparate_impact_heatmap(_audit, v)}


def pair_figures(audit: Audit, tolerance: float, alpha: float, adjust: str, reference: str) -> dict[str, go.Figure]:
    """The figures drawn from the verdicts (OFI against DI, the forest against ``reference``, the OFI and DI
    heatmaps), built once per data and settings."""
    return _pair_figures(audit, audit.fingerprint, tolerance, alpha, adjust, reference)


@dataclass(frozen=True)
class Groups:
    """What depends on the data alone: the single-group metrics, why some are undefined, the benefit chart."""

    table: pd.DataFrame
    reasons: pd.DataFrame
    benefit: go.Figure


@st.cache_resource(max_entries=16, ttl=TTL_S, show_spinner=False)
def _groups(_audit: Audit, fingerprint: str) -> Groups:
    return Groups(_audit.group_table(), reasons_frame(_audit.undefined_reasons()), plots.benefit_chart(_audit))


def groups(audit: Audit) -> Groups:
    return _groups(audit, audit.fingerprint)


@st.cache_resource(max_entries=64, ttl=TTL_S, show_spinner=False)
def _metric_chart(_audit: Audit, fingerprint: str, name: str) -> go.Figure:
    return plots.group_metric_chart(_audit, name)


def metric_chart(audit: Audit, name: str) -> go.Figure:
    """Single-group metric ``name`` across the groups."""
    return _metric_chart(audit, audit.fingerprint, name)


@st.cache_resource(max_entries=64, ttl=TTL_S, show_spinner=False)
def _comparison(_audit: Audit, fingerprint: str, name: str) -> tuple[go.Figure, pd.DataFrame]:
    return plots.pairwise_heatmap(_audit, name), _audit.pairwise(name)


def comparison(audit: Audit, name: str) -> tuple[go.Figure, pd.DataFrame]:
    """Comparison ``name`` of Table 3.2 for every pair: its heatmap and its matrix."""
    return _comparison(audit, audit.fingerprint, name)


@st.cache_resource(max_entries=32, ttl=TTL_S, show_spinner=False)
def _versus_reference(_audit: Audit, fingerprint: str, reference: str) -> pd.DataFrame:
    return _audit.versus_reference(reference)


def versus_reference(audit: Audit, reference: str) -> pd.DataFrame:
    """Each group against ``reference``, for every comparison."""
    return _versus_reference(audit, audit.fingerprint, reference)


@st.cache_resource(max_entries=16, ttl=TTL_S, show_spinner=False)
def _ll144(_audit: Audit, fingerprint: str, tolerance: float, alpha: float, adjust: str,
           score_name: str | None = None, score_digest: str | None = None, _scores: Any = None) -> pd.DataFrame:
    return regulatory.ll144_summary(_audit, alpha=alpha, tolerance=tolerance, adjust=adjust, scores=_scores,
                                    score_name=score_name if _scores is not None else None)


def score_digest(audit: Audit, scores: Any) -> str:
    """A content hash of ``scores`` together with what the scoring rate reads of the audit's rows (each row's
    label and group, in order), which :attr:`Audit.fingerprint` leaves out: two sessions whose audits share a
    fingerprint can still hold different rows, and the same scores on other rows give another summary."""
    rows = audit.rows
    h = hashlib.sha256(b"ll144-scores")
    values = np.ascontiguousarray(scores, dtype=float)
    h.update(len(values).to_bytes(8, "little") + values.tobytes())
    if rows is not None:
        h.update(np.ascontiguousarray(rows.y, dtype=bool).tobytes())
        codes, names = pd.factorize(np.asarray(rows.groups, dtype=object), sort=False)
        h.update(np.ascontiguousarray(codes, dtype=np.int64).tobytes())
        text = repr(list(names)).encode()
        h.update(len(text).to_bytes(8, "little") + text)
    return h.hexdigest()


def ll144(audit: Audit, tolerance: float, alpha: float, adjust: str, scores: Any = None,
          score_name: str | None = None, digest: str | None = None) -> pd.DataFrame:
    """The Local Law 144 summary with its intervals and OFI verdicts (one verdict table per attribute and
    intersection), once per data and settings. With ``scores`` (one per row of the audit's rows) it gives the
    scoring rate of the score ``score_name``; the entry is then keyed as well by that name and by
    :func:`score_digest` of the scores with the rows (``digest``, when the caller has it already), so two
    sessions share it only when its output is the same."""
    if scores is None:
        return _ll144(audit, audit.fingerprint, tolerance, alpha, adjust)
    return _ll144(audit, audit.fingerprint, tolerance, alpha, adjust, score_name,
                  digest or score_digest(audit, scores), scores)


@st.cache_resource(show_spinner=False)
def properties() -> pd.DataFrame:
    """The thesis's Table 3.2 of properties (the same for every data)."""
    return bias.properties_table()
