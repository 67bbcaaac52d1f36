"""What the Home and Bias Audit pages compute, computed once per data and settings and shared by every
session of the server (one server, several analysts).

Every cache here is keyed by :attr:`fairness_core.audit.Audit.fingerprint` (a content hash of everything
the audit holds but its rows, which nothing here reads) and by every setting its output depends on, never
by ``id()``; so two sessions share an entry only when its output would be the same for both. Entries are
bounded in number and age. Values are shared: callers read them and never change them (``styled`` and
the downloads copy).
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from fairness_core import bias, plots, regulatory
from fairness_core.audit import Audit
from fairness_core.reading import three_questions, verdict_findings
from fairness_core.verdicts import VerdictSettings
from fairness_core.vocabulary import Reference
from ui.widgets import reasons_frame, verdict_display

T = TypeVar("T")

#: Seconds an entry is kept after it was made; the entries per cache are bounded below as well.
TTL_S = 3600


def per_audit(**cache: Any) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Share ``fn(audit, *settings)`` across sessions: one ``st.cache_resource`` entry (``cache`` its options) per
    :attr:`Audit.fingerprint` and settings, the audit itself never hashed. The one decorator for every cache here
    (each had a private twin taking the fingerprint by hand)."""
    def decorate(fn: Callable[..., T]) -> Callable[..., T]:
        def compute(_audit: Audit, fingerprint: str, *args: Any) -> T:
            return fn(_audit, *args)
        # Streamlit keys a cache by its function's module, qualified name and source: the name makes it fn's own
        compute.__module__, compute.__qualname__ = fn.__module__, f"{fn.__qualname__}.shared"
        shared = st.cache_resource(**cache)(compute)

        @functools.wraps(fn)
        def call(audit: Audit, *args: Any) -> T:
            return shared(audit, audit.fingerprint, *args)
        return call
    return decorate


@per_audit(max_entries=16, ttl=TTL_S, show_spinner="Testing every pair of groups…")
def _verdicts(audit: Audit, settings: VerdictSettings, reference: str | None) -> pd.DataFrame:
    return audit.verdicts(settings, reference=Reference.PAIRS if reference is None else reference)


def verdicts_for(audit: Audit, settings: VerdictSettings, reference: str | None = None) -> pd.DataFrame:
    """The audit's verdict table, computed once per data and settings and shared by Home and Bias Audit
    (read-only: callers copy before changing it). With a ``reference`` group, every pair with it has it as
    group j (DI = the other group's rate over the reference's)."""
    return _verdicts(audit, settings, reference if reference in audit.cms else None)


@dataclass(frozen=True)
class Verdicts:
    """The verdict table with what is read from it: the three questions answered, the findings in words,
    and the table as people read it (at most :data:`ui.widgets.MAX_VERDICT_ROWS` rows)."""

    table: pd.DataFrame
    answers: dict[str, Any]
    findings: str
    shown: pd.DataFrame


@per_audit(max_entries=16, ttl=TTL_S, show_spinner=False)
def _read(audit: Audit, settings: VerdictSettings, reference: str | None) -> Verdicts:
    table = verdicts_for(audit, settings, reference)
    answers = three_questions(audit, table)
    return Verdicts(table, answers, verdict_findings(table, answers=answers), verdict_display(table))


def verdicts_read(audit: Audit, settings: VerdictSettings, reference: str | None = None) -> Verdicts:
    """:func:`verdicts_for` with the three questions, the findings and the displayed table, once per data and
    settings."""
    return _read(audit, settings, reference if reference in audit.cms else None)


@per_audit(max_entries=16, ttl=TTL_S, show_spinner="Drawing the verdicts…")
def pair_figures(audit: Audit, settings: VerdictSettings, reference: str) -> dict[str, go.Figure]:
    """The figures drawn from the verdicts (OFI against DI, the forest against ``reference``, the OFI and DI
    heatmaps), built once per data and settings."""
    v = verdicts_for(audit, settings, reference)
    return {"scatter": plots.ofi_di_scatter(v), "forest": plots.ofi_forest(v, reference),
            "ofi": plots.pairwise_heatmap(audit, "OFI", v), "di": plots.disparate_impact_heatmap(audit, v)}


@dataclass(frozen=True)
class Groups:
    """What depends on the data alone: the single-group metrics, why some are undefined, the benefit chart."""

    table: pd.DataFrame
    reasons: pd.DataFrame
    benefit: go.Figure


@per_audit(max_entries=16, ttl=TTL_S, show_spinner=False)
def groups(audit: Audit) -> Groups:
    """The single-group metrics, why some are undefined, the benefit chart."""
    return Groups(audit.group_table(), reasons_frame(audit.undefined_reasons()), plots.benefit_chart(audit))


@per_audit(max_entries=64, ttl=TTL_S, show_spinner=False)
def metric_chart(audit: Audit, name: str) -> go.Figure:
    """Single-group metric ``name`` across the groups."""
    return plots.group_metric_chart(audit, name)


@per_audit(max_entries=64, ttl=TTL_S, show_spinner=False)
def comparison(audit: Audit, name: str) -> tuple[go.Figure, pd.DataFrame]:
    """Comparison ``name`` of Table 3.2 for every pair: its heatmap and its matrix."""
    return plots.pairwise_heatmap(audit, name), audit.pairwise(name)


@per_audit(max_entries=32, ttl=TTL_S, show_spinner=False)
def versus_reference(audit: Audit, reference: str) -> pd.DataFrame:
    """Each group against ``reference``, for every comparison."""
    return audit.versus_reference(reference)


@st.cache_resource(max_entries=16, ttl=TTL_S, show_spinner=False)
def _ll144(_audit: Audit, fingerprint: str, settings: VerdictSettings, score_name: str | None = None,
           score_digest: str | None = None, _scores: Any = None) -> pd.DataFrame:
    return regulatory.ll144_summary(_audit, tolerance=settings, scores=_scores,
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


def ll144(audit: Audit, settings: VerdictSettings, scores: Any = None, score_name: str | None = None,
          digest: str | None = None) -> pd.DataFrame:
    """The Local Law 144 summary with its intervals and OFI verdicts (one verdict table per attribute and
    intersection), once per data and settings. With ``scores`` (one per row of the audit's rows) it gives the
    scoring rate of the score ``score_name``; the entry is then keyed as well by that name and by
    :func:`score_digest` of the scores with the rows (``digest``, when the caller has it already), so two
    sessions share it only when its output is the same."""
    if scores is None:
        return _ll144(audit, audit.fingerprint, settings)
    return _ll144(audit, audit.fingerprint, settings, score_name, digest or score_digest(audit, scores), scores)


@st.cache_resource(show_spinner=False)
def properties() -> pd.DataFrame:
    """The thesis's Table 3.2 of properties (the same for every data)."""
    return bias.properties_table()
