"""Audits of amounts and of categories in the session (issue 53): what is loaded, the binary audit the other pages
read in its place, and the one sentence a page that needs two-valued data says instead.

The session's one :class:`~fairness_core.audit.Audit` (:mod:`ui.state`) stays what every page reads. When an amount
(:class:`~fairness_core.continuous.ContinuousAudit`) or categories (:class:`~fairness_core.multiclass.MulticlassAudit`)
are loaded, they live under :data:`KIND_KEY` as a :class:`Loaded`, and the session's Audit is a stand-in with no
rows: the one-vs-rest audit of one class, or the amounts cut at their median outcome. The Upload and Bias Audit pages
read the loaded kind itself; a page that needs two-valued data (:data:`TWO_VALUED_PAGES`) says why in one sentence
and offers the one-vs-rest audit of a class the user picks (amounts: a cut at a threshold the user picks). Any
other data loaded (:func:`ui.state.set_audit`) drops the kind.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
import numpy as np
import pandas as pd
import streamlit as st

from fairness_core.audit import Audit
from fairness_core.continuous import ContinuousAudit
from fairness_core.multiclass import MulticlassAudit
from fairness_core.wording.kinds import amount_text
from ui.session import KIND_KEY
from ui.widgets import md_escape

#: Pages that read a two-valued audit: with an amount or categories loaded they say why and offer one.
TWO_VALUED_PAGES = ("Home", "Sample-Size Explorer", "Smoothing")


@dataclass(frozen=True)
class Loaded:
    """An audit of amounts or categories, as loaded: the audit, the amount's ``unit`` ("$ a year"), and for
    amounts the rows (``y``, ``y_pred`` and the group columns, as uploaded) that the benefit distributions and a
    cut at a threshold need. ``demo``: the key of :data:`fairness_core.datasets.KIND_DEMOS` it came from."""

    audit: ContinuousAudit | MulticlassAudit
    unit: str = ""
    rows: pd.DataFrame | None = field(default=None, repr=False, compare=False)
    demo: str | None = None
    label: str = "outcome"
    prediction: str = "prediction"

    @property
    def kind(self) -> str:
        """"amount", "ordered" or "unordered"."""
        if isinstance(self.audit, ContinuousAudit):
            return "amount"
        return "ordered" if self.audit.ordered else "unordered"

    @property
    def what(self) -> str:
        """The data in a few words, for the sentences that say why a page does not apply."""
        if self.kind == "amount":
            return f"amounts ({unit_phrase(self.unit) or 'the outcome’s units'})"
        a = self.audit
        assert isinstance(a, MulticlassAudit)
        joined = " < ".join(a.classes) if a.ordered else ", ".join(a.classes)
        return f"{a.k} {'ordered' if a.ordered else 'unordered'} categories ({joined})"

    def nbytes(self) -> int:
        return 0 if self.rows is None else int(self.rows.memory_usage(index=True, deep=True).sum())

    def group_labels(self) -> np.ndarray | None:
        """Each row's group as the audit names it ("A & B" for intersections), or None without rows."""
        if self.rows is None:
            return None
        cols = [c for c in self.rows.columns if c not in ("y", "y_pred")]
        text = self.rows[cols].astype(str).apply(lambda c: c.str.strip())
        return text.agg(" & ".join, axis=1).to_numpy() if len(cols) > 1 else text[cols[0]].to_numpy()

    def benefits(self) -> np.ndarray | None:
        """Each row's benefit (amounts with rows): prediction − outcome for a benefit, outcome − prediction for a harm."""
        if self.rows is None or self.kind != "amount":
            return None
        error = self.rows["y_pred"].to_numpy(dtype=float) - self.rows["y"].to_numpy(dtype=float)
        return -error if self.audit.positive_is == "harm" else error


def unit_phrase(unit: str) -> str:
    """How the unit reads alone ("$ a year")."""
    return unit.strip()


def loaded_kind() -> Loaded | None:
    """The amounts or categories loaded in this session, or None (a two-valued audit)."""
    value = st.session_state.get(KIND_KEY)
    return value if isinstance(value, Loaded) else None


def stand_in(loaded: Loaded) -> Audit:
    """The two-valued audit the session holds beside ``loaded`` (no rows, so no page mistakes it for an upload):
    categories' one-vs-rest audit of the favourable class (or the first), amounts cut at the median outcome."""
    a = loaded.audit
    if isinstance(a, MulticlassAudit):
        return one_vs_rest(a, a.favourable[0] if a.favourable else a.classes[0], undirected=not a.favourable)
    if loaded.rows is None:
        raise ValueError("amounts without rows have no two-valued stand-in")
    return cut_audit(loaded, float(np.median(loaded.rows["y"].to_numpy(dtype=float))))


def one_vs_rest(m: MulticlassAudit, cls: str, positive_is: str | None = None, undirected: bool = False) -> Audit:
    """``m.one_vs_rest(cls, positive_is, undirected=...)``, kept per audit, class and direction in the session
    (pages rerun on every click). ``undirected``: the rates-only audit of a class of no declared direction, for the
    pages that read no verdict (:data:`TWO_VALUED_PAGES`)."""
    store = st.session_state.setdefault("one-vs-rest-audits", {})
    key = (id(m), cls, positive_is, undirected)
    if key not in store or store[key][0] is not m:
        store.clear()   # one audit's views at a time
        store[key] = (m, m.one_vs_rest(cls, positive_is, undirected=undirected))
    return store[key][1]


def cut_audit(loaded: Loaded, threshold: float) -> Audit:
    """Amounts cut at ``threshold``: positive = outcome (prediction) at or above it, in the amounts' direction;
    without rows kept."""
    rows = loaded.rows
    assert rows is not None
    groups = rows[[c for c in rows.columns if c not in ("y", "y_pred")]]
    audit = Audit.from_predictions((rows["y"].to_numpy(dtype=float) >= threshold).astype(int),
                                   (rows["y_pred"].to_numpy(dtype=float) >= threshold).astype(int), groups,
                                   positive_is=loaded.audit.positive_is or "benefit",
                                   source=f"{loaded.audit.source}: cut at {amount_text(threshold, loaded.unit)}")
    return dataclasses.replace(audit, rows=None, positive_outcome=f"at least {amount_text(threshold, loaded.unit)}")


def two_valued_view(title: str, audit: Audit) -> Audit:
    """On a page of :data:`TWO_VALUED_PAGES` with amounts or categories loaded: one sentence saying why the page
    reads two-valued data, and the two-valued audit the user picks (a class against the rest; amounts: a cut at a
    threshold). Any other page, or a two-valued audit loaded: ``audit`` unchanged."""
    loaded = loaded_kind()
    if loaded is None or title not in TWO_VALUED_PAGES:
        return audit
    with st.container(border=True):
        if isinstance(loaded.audit, MulticlassAudit):
            m = loaded.audit
            st.info(f"**The data loaded are {md_escape(loaded.what)}, and this page reads a yes/no decision**, so it "
                    "audits one class against the rest; the Bias Audit page answers for every class at once.",
                    icon=":material/category:")
            default = m.favourable[0] if m.favourable else m.classes[0]
            # a class of no declared direction (a middle tier) has no binary audit here: the Bias Audit page asks
            # its direction first
            offered = [c for c in m.classes if m.class_direction(c) != "not declared"] or list(m.classes)
            cls = st.selectbox("One-vs-rest: the class audited against the rest", offered,
                               index=offered.index(default) if default in offered else 0, key=f"ovr-{title}",
                               format_func=lambda c: f"{c} against the rest")
            undirected = m.class_direction(cls) == "not declared"   # unordered, no class declared favourable
            if undirected and title == "Home":   # the only one of these pages that gives verdicts
                st.info(f"**No verdicts here.** {md_escape(m.no_direction(cls))}; the Bias Audit page answers for "
                        "every class at once.", icon=":material/help:")
                st.stop()
            return one_vs_rest(m, cls, undirected=undirected)
        st.info(f"**The data loaded are {md_escape(loaded.what)}, and this page reads a yes/no decision**, so it "
                "audits the amounts cut at a threshold (outcome and prediction at or above it); the Bias Audit page "
                "audits the amounts themselves.", icon=":material/straighten:")
        if loaded.rows is None:
            st.stop()
        y = loaded.rows["y"].to_numpy(dtype=float)
        threshold = st.number_input(f"Cut at ({unit_phrase(loaded.unit) or 'the outcome’s units'})",
                                    value=float(np.median(y)), key=f"cut-{title}", format="%.4g",
                                    help="Positive = an outcome (a prediction) at or above this amount; the default "
                                         "is the median outcome.")
        try:
            return cut_audit(loaded, float(threshold))
        except ValueError as exc:
            st.error(f"**No audit at this cut.** {md_escape(exc)}", icon=":material/block:")
            st.stop()
    return audit   # pragma: no cover - every branch above returns or stops
