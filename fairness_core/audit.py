"""The audit: a set of named group confusion matrices and every question asked of them.

Like Fairlearn's ``MetricFrame``, one object answers "per group" questions
(:meth:`Audit.group_table`) and "between groups" questions
(:meth:`Audit.pairwise`, :meth:`Audit.verdicts`). The dashboard keeps exactly
one :class:`Audit` in its session state; every page reads it.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from .statistics import bias, match, metrics as m, spread, verdicts as verdicts_
from .common import text
from .statistics.confusion import CELLS, ConfusionMatrix
from .wording.decisions import selection_explanations
from .wording.reading import verdict_explanations
from .results import Verdicts
from .statistics.row_counts import count_arrays
from .statistics.rows import RowData
from .common.validation import EXCLUDE_BELOW, UNKNOWN_CATEGORY, UNKNOWN_VALUES, under_share
from .statistics.verdicts import DEFAULT_OFI_TOLERANCE, VerdictSettings
from .common.vocabulary import (DEFAULT_ALPHA, POSITIVE_IS, Reference, ReferenceLike, adjustment, check_alpha,
                                check_reference, resolve_positive_is)

#: Why a measure is not given for an audit of decisions alone (:attr:`Audit.has_outcomes` False).
NEEDS_OUTCOMES = ("needs outcomes: no outcome was observed (decisions only), so a measure that compares the "
                  "decision with the actual outcome cannot be computed")
#: The single-group metrics that decisions alone define: the selection rate and its complement.
DECISION_METRICS = ("PPR", "PNR")
#: The comparisons of Table 3.2 that decisions alone define: the ratio and the differences of selection rates.
DECISION_COMPARISONS = ("DI", "SP", "DPPL")


class NeedsOutcomes(ValueError):
    """A measure that compares decisions with outcomes was asked of an audit of decisions alone."""


@dataclass(frozen=True)
class Audit:

    """Named group confusion matrices plus where they came from.

    Parameters
    ----------
    cms : mapping of group name to ConfusionMatrix
        At least two non-empty groups with distinct, non-blank names.
    source : str
        Where the data came from, in words (shown on every page).
    notes : sequence of str
        Caveats to show with the data (e.g. "labels flipped so positive = beneficial").
    positive_outcome : str
        What a positive prediction means here, in words.
    group_columns : sequence of str
        The columns the groups came from (row-level uploads).
    rows : RowData, optional
        The individuals behind the CMs (row-level uploads and demos): labels, predictions,
        group per row, and an ensemble's probabilities or features where available.
    positive_is : {"benefit", "harm"} or None
        What the model's positive prediction was declared to be for the person: "benefit" (a
        loan, a job) or "harm" (flagged as likely to reoffend; the classes were then flipped so
        that positive here is the benefit). None: not declared, a benefit assumed. Every page,
        the report and the JSON state it in words (:attr:`direction`).
    group_values : mapping of group name to its value in each of ``group_columns``, optional
        Set for intersections of several attributes, so that :meth:`marginal` can pool them.
    provenance : mapping of str to str
        How the groups were counted, for the report: the label and prediction columns, the positive
        values, the threshold, the group columns.
    outcomes : bool
        Whether observed outcomes (labels) stand behind the matrices. False for an audit of decisions
        alone (:meth:`from_decisions`): each group's selected rows are held as TP and the others as TN,
        and only what decisions can answer is answered (selection rates, impact ratios, the four-fifths
        rule); every measure that needs outcomes is NaN with the reason :data:`NEEDS_OUTCOMES`.
    unknown : sequence of group names
        Groups that are an attribute's unknown category (blank or declined values, or an intersection
        with one): counted and reported, never in the verdicts, the ratios or the reference.
    """

    cms: Mapping[str, ConfusionMatrix]
    source: str = "uploaded data"
    notes: tuple[str, ...] = ()
    positive_outcome: str = "the beneficial outcome"
    group_columns: tuple[str, ...] = field(default=())
    rows: RowData | None = field(default=None, compare=False, repr=False)
    positive_is: str | None = None
    group_values: Mapping[str, tuple[str, ...]] | None = field(default=None, compare=False, repr=False)
    provenance: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    outcomes: bool = True
    unknown: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        cms = dict(self.cms)
        if len(cms) < 2:
            raise ValueError(f"an audit needs at least two groups, got {len(cms)}")
        for name, cm in cms.items():
            if not isinstance(name, str) or not name.strip():
                raise ValueError(f"group names must be non-blank text, got {name!r}")
            if (shown := text.hidden_characters(name)) is not None:
                raise ValueError(f"group name {shown!r} holds a hidden character (shown as ⟨U+…⟩): it would print "
                                 "like another name or reorder the text around it")
            if not isinstance(cm, ConfusionMatrix):
                raise ValueError(f"group {name!r}: expected a ConfusionMatrix, got {type(cm).__name__}")
            if cm.n == 0:
                raise ValueError(f"group {name!r} is empty (TP = FN = FP = TN = 0)")
        object.__setattr__(self, "cms", cms)
        object.__setattr__(self, "notes", tuple(self.notes))
        if self.group_values is not None:
            values = {str(k): tuple(map(str, v)) for k, v in self.group_values.items()}
            if set(values) != set(cms) or any(len(v) != len(self.group_columns) for v in values.values()):
                raise ValueError("group_values needs one value per group column for every group")
            object.__setattr__(self, "group_values", values)
        object.__setattr__(self, "outcomes", bool(self.outcomes))
        object.__setattr__(self, "unknown", tuple(dict.fromkeys(map(str, self.unknown))))
        if set(self.unknown) - set(cms):
            raise ValueError("unknown names groups the CMs lack: "
                             + ", ".join(map(repr, sorted(set(self.unknown) - set(cms)))))
        if len(cms) - len(self.unknown) < 2:
            raise ValueError("an audit needs at least two groups of known category")
        if self.positive_is is not None and self.positive_is not in POSITIVE_IS:
            raise ValueError(f"positive_is must be one of {', '.join(POSITIVE_IS)} or None, got {self.positive_is!r}")
        if self.rows is not None:
            if not isinstance(self.rows, RowData):
                raise ValueError(f"rows must be RowData, got {type(self.rows).__name__}")
            unknown = set(self.rows.groups.tolist()) - set(cms)
            if unknown:
                raise ValueError(f"rows name groups the CMs lack: {', '.join(map(repr, sorted(unknown, key=str)))}")

    @classmethod
    def from_predictions(cls, y_true: Any, y_pred: Any, sensitive_features: Any, pos_label: Any = 1, *,
                         positive_is: str | None = None, threshold: float | None = None,
                         source: str = "predictions") -> "Audit":
        """An audit in one call from labels, predictions and sensitive features, as in Fairlearn.

        Parameters
        ----------
        y_true, y_pred : array-like
            Lists, NumPy arrays, pandas or polars Series. Binary, with ``pos_label`` the positive
            value of both; or, with ``threshold``, ``y_pred`` is a score and positive means
            ``score >= threshold``. ``y_true=None``: no outcome was observed, and the audit is
            :meth:`from_decisions`'.
        sensitive_features : array-like, Series, DataFrame or dict
            One column, or several: groups are then their intersections, named as in the app
            (``"Black & Female"``); :meth:`marginal` gives each attribute alone.
        pos_label : value
            The positive value of ``y_true`` (and ``y_pred``).
        positive_is : {"benefit", "harm"}
            What a positive prediction is for the person: "benefit" (approved, hired) or "harm"
            (flagged as likely to reoffend). It decides every verdict's direction, so declare it:
            "harm" negates labels and predictions so that positive means the benefit. Without it a
            :class:`UserWarning` names the assumption (a benefit).

        Raises
        ------
        fairness_core.io.DataValidationError
            With the same messages as an upload: the row and column of every problem.

        Examples
        --------
        >>> audit = Audit.from_predictions([1, 0, 1, 1, 0, 1], [1, 0, 0, 1, 1, 1],
        ...                                ["a", "a", "a", "b", "b", "b"], positive_is="benefit")
        >>> audit.cms["a"], audit.cms["b"]
        (ConfusionMatrix(tp=1, fn=1, fp=0, tn=1), ConfusionMatrix(tp=2, fn=0, fp=1, tn=0))
        >>> audit.direction
        'positive prediction = 1 = a benefit (declared)'
        """
        if y_true is None:   # no outcomes observed: the decisions alone
            return cls.from_decisions(y_pred, sensitive_features, pos_label, positive_is=positive_is,
                                      threshold=threshold, source=source)
        return Audit(**count_arrays(y_true, y_pred, sensitive_features, pos_label,
                                    positive_is=resolve_positive_is(positive_is, f"pos_label={pos_label!r}"),
                                    threshold=threshold, source=source))

    @classmethod
    def from_decisions(cls, y_pred: Any, sensitive_features: Any, pos_label: Any = 1, *,
                       positive_is: str | None = None, threshold: float | None = None,
                       unknown: Iterable[str] = UNKNOWN_VALUES, source: str = "decisions") -> "Audit":
        """An audit of decisions alone, where no outcome was observed (a hiring tool's "advance" or "reject").

        What decisions can answer is answered: selection rates, impact ratios and the four-fifths rule with
        adjusted intervals (:meth:`verdicts`), the Local Law 144 summary, intersections and unknowns. OFI,
        error rates, equal opportunity and calibration need outcomes: they are NaN with the reason
        :data:`NEEDS_OUTCOMES` (``has_outcomes`` is False), never numbers from invented labels.

        Parameters
        ----------
        y_pred : array-like
            The decisions (``pos_label`` = selected), or, with ``threshold``, a score: selected means
            ``score >= threshold`` (a threshold that selects everyone or no one is refused).
        sensitive_features : array-like, Series, DataFrame or dict
            As :meth:`from_predictions`. Missing or blank values and the usual ways of declining
            (:data:`~fairness_core.validation.UNKNOWN_VALUES`, or ``unknown``) become each attribute's
            category "unknown": counted and reported, never in the ratios, never the reference.
        positive_is : {"benefit", "harm"}
            What a positive decision is for the person; "harm" counts its opposite as the selection.

        Examples
        --------
        >>> a = Audit.from_decisions([1, 0, 1, 1, 0, 0, 1], ["F", "F", "M", "M", "M", None, "Decline to state"],
        ...                          positive_is="benefit")
        >>> a.has_outcomes, a.groups, a.unknown
        (False, ['F', 'M', 'unknown'], ('unknown',))
        >>> a.selection_rates().round(3).tolist()
        [0.5, 0.667, 0.5]
        """
        return Audit(**count_arrays(None, y_pred, sensitive_features, pos_label,
                                    positive_is=resolve_positive_is(positive_is, f"pos_label={pos_label!r}"),
                                    threshold=threshold, source=source, unknown=tuple(unknown)))

    @property
    def has_outcomes(self) -> bool:
        """Whether observed outcomes stand behind the audit (False: decisions alone, :meth:`from_decisions`)."""
        return self.outcomes

    @property
    def known_groups(self) -> list[str]:
        """The groups of known category, in order: the ones compared (every group but :attr:`unknown`)."""
        return [g for g in self.cms if g not in self.unknown]

    @property
    def compared_groups(self) -> list[str]:
        """The groups the verdicts compare: :attr:`known_groups` but, without outcomes, :attr:`small_groups`."""
        return [g for g in self.known_groups if g not in self.small_groups]

    @property
    def small_groups(self) -> list[str]:
        """Without outcomes, the known groups under 2 % of all individuals (Local Law 144's rule,
        :func:`~fairness_core.common.validation.under_share`): counted, never compared; none with outcomes."""
        known = [] if self.outcomes else self.known_groups
        return [g for g, u in zip(known, under_share([self.cms[g].n for g in known], self.total().n)) if u]

    def selection_rates(self) -> pd.Series:
        """Each group's selection rate (TP + FP)/n, the share given the favourable decision, indexed by group."""
        return pd.Series({g: (cm.tp + cm.fp) / cm.n for g, cm in self.cms.items()}, dtype=float, name="selection rate")

    @functools.cached_property
    def fingerprint(self) -> str:
        """A content hash of every field but ``rows``: the groups in order with their cells, the source,
        notes, what positive means and whether that was declared, the group columns and values, and the
        provenance. Two audits share it only when every table, figure, verdict and report built from their
        confusion matrices is the same, so it keys caches that sessions share (never ``id()``, which a
        later object can reuse). ``rows`` (read by the stability tab alone) is left out: hashing millions
        of rows would cost more than what it keys. Computed once per object.

        >>> from fairness_core import ConfusionMatrix as CM
        >>> a = Audit({"a": CM(1, 2, 3, 4), "b": CM(4, 3, 2, 1)}, positive_outcome="approved")
        >>> a.fingerprint == Audit({"a": CM(1, 2, 3, 4), "b": CM(4, 3, 2, 1)}, positive_outcome="approved").fingerprint
        True
        >>> a.fingerprint == dataclasses.replace(a, positive_outcome="hired").fingerprint
        False
        """
        h = hashlib.sha256()
        for part in ([(g, cm.as_array().tolist()) for g, cm in self.cms.items()], self.source, self.notes,
                     self.positive_outcome, self.group_columns, self.positive_is,
                     None if self.group_values is None else list(self.group_values.items()),
                     list(self.provenance.items()),
                     # only where they differ from the defaults, so that earlier audits keep their hash
                     *(() if self.outcomes and not self.unknown else ((self.outcomes, self.unknown),))):
            text_ = repr(part).encode()
            h.update(len(text_).to_bytes(8, "little") + text_)
        return h.hexdigest()

    @property
    def attributes(self) -> tuple[str, ...]:
        """The attributes whose intersections the groups are (empty unless there are two or more)."""
        return tuple(self.group_columns) if self.group_values is not None and len(self.group_columns) > 1 else ()

    def marginal(self, attribute: str) -> "Audit":
        """The audit of one attribute alone, each of its values pooled over the other attributes.

        Group names are the attribute's values, or "attribute = value" where a value alone would be
        ambiguous (a code such as "A92", a number, yes/no). Rows, notes and the declared direction
        carry over.

        >>> from fairness_core import ConfusionMatrix as CM
        >>> a = Audit({"F & young": CM(1, 2, 3, 4), "F & old": CM(5, 6, 7, 8), "M & young": CM(1, 1, 1, 1),
        ...            "M & old": CM(2, 2, 2, 2)}, group_columns=("sex", "age"),
        ...           group_values={"F & young": ("F", "young"), "F & old": ("F", "old"),
        ...                         "M & young": ("M", "young"), "M & old": ("M", "old")})
        >>> m = a.marginal("sex")
        >>> m.groups, m.cms["sex = F"]
        (['sex = F', 'sex = M'], ConfusionMatrix(tp=6, fn=8, fp=10, tn=12))
        >>> a.marginal("age").groups
        ['young', 'old']
        """
        if attribute not in self.attributes:
            raise ValueError(f"{attribute!r} is not one of this audit's attributes "
                             f"({', '.join(map(repr, self.attributes)) or 'it has a single one'})")
        assert self.group_values is not None
        k = self.group_columns.index(attribute)
        value_of = {g: self.group_values[g][k] for g in self.groups}
        values = list(dict.fromkeys(value_of.values()))
        named = {v: (f"{attribute} = {v}" if text.says_nothing_alone(v) else v) for v in values}
        pooled: dict[str, np.ndarray] = {}
        for g, cm in self.cms.items():
            name = named[value_of[g]]
            pooled[name] = pooled.get(name, 0) + cm.as_array()
        cms = {name: ConfusionMatrix(*map(int, cells)) for name, cells in pooled.items()}
        rows = None
        if self.rows is not None:
            mapping = {g: named[v] for g, v in value_of.items()}
            rows = dataclasses.replace(self.rows,
                                       groups=pd.Series(self.rows.groups).map(mapping).to_numpy(dtype=object))
        unknown = {named[value_of[g]] for g in self.unknown if value_of[g] == UNKNOWN_CATEGORY}
        return Audit(cms, source=f"{self.source}, by {attribute} alone", notes=self.notes,
                     positive_outcome=self.positive_outcome, group_columns=(attribute,), rows=rows,
                     positive_is=self.positive_is, group_values={n: (v,) for v, n in named.items()},
                     outcomes=self.outcomes, unknown=tuple(n for n in cms if n in unknown),
                     provenance={**self.provenance, "attribute audited": f"{attribute} alone (pooled over "
                                 + ", ".join(c for c in self.group_columns if c != attribute) + ")"})

    @property
    def direction(self) -> str:
        """What a positive prediction means here, in words, and whether that was declared.

        >>> from fairness_core import ConfusionMatrix as CM
        >>> Audit({"a": CM(1, 1, 1, 1), "b": CM(2, 1, 1, 1)}, positive_outcome="approved").direction
        'positive prediction = approved, assumed to be a benefit (not declared)'
        """
        if self.positive_is is None:
            return f"positive prediction = {self.positive_outcome}, assumed to be a benefit (not declared)"
        if self.positive_is == "benefit":
            return f"positive prediction = {self.positive_outcome} = a benefit (declared)"
        return (f"positive here = {self.positive_outcome} = a benefit: the model's positive prediction was declared "
                "a harm, so labels and predictions were flipped")

    @property
    def groups(self) -> list[str]:
        """Group names in their given order."""
        return list(self.cms)

    def total(self) -> ConfusionMatrix:
        """All groups pooled."""
        return ConfusionMatrix.from_array(np.sum([cm.as_array() for cm in self.cms.values()], axis=0),
                                          order="tp fn fp tn")

    def rest_of(self, group: str) -> ConfusionMatrix:
        """The pooled CM of every group of known category except ``group`` (the default reference)."""
        self._check(group)
        rest = [self.cms[g].as_array() for g in self.known_groups if g != group]
        return ConfusionMatrix.from_array(np.sum(rest, axis=0), order="tp fn fp tn")

    def require_outcomes(self, what: str) -> None:
        """Raise :class:`NeedsOutcomes` (a ValueError) when ``what`` needs outcomes and this audit has none."""
        if not self.outcomes:
            raise NeedsOutcomes(f"{what} {NEEDS_OUTCOMES}; this audit answers selection rates, impact ratios and "
                                "the four-fifths rule")

    def _check(self, group: str) -> str:
        if group not in self.cms:
            raise ValueError(f"unknown group {group!r}; groups are {', '.join(self.groups)}")
        return group

    def cells(self) -> pd.DataFrame:
        """TP, FN, FP, TN and n per group."""
        df = pd.DataFrame([cm.as_array() for cm in self.cms.values()], index=self.groups, columns=list(CELLS))
        df.insert(0, "n", df.sum(axis=1))
        df.index.name = "group"
        return df

    def group_table(self, names: Iterable[str] = m.NAMES) -> pd.DataFrame:
        """Every single-group metric per group (NaN where undefined), with n and the cells.

        Without outcomes (:attr:`has_outcomes` False) the cells are replaced by ``selected`` and every metric
        but the selection rates (:data:`DECISION_METRICS`) is NaN, with :data:`NEEDS_OUTCOMES` as the reason
        (:meth:`undefined_reasons`)."""
        names = list(names)
        cells = self.cells()
        arr = cells[list(CELLS)].to_numpy()
        values = {name: m.compute(name, *arr.T) if self.outcomes or name in DECISION_METRICS
                  else np.full(len(cells), np.nan) for name in names}
        if not self.outcomes:   # the cells are selected / not selected, not outcomes
            cells = cells.drop(columns=list(CELLS)).assign(selected=arr[:, 0] + arr[:, 2])
        return pd.concat([cells, pd.DataFrame(values, index=cells.index)], axis=1)

    def ofi_against(self, reference: str) -> pd.DataFrame:
        """Each group's marginal benefit B = (FP − FN)/n and its OFI against the ``reference`` group,
        B_g − B_reference (0 for the reference itself), indexed by group.

        >>> from fairness_core import ConfusionMatrix as CM
        >>> Audit({"a": CM(1, 1, 3, 5), "b": CM(2, 2, 2, 2)}).ofi_against("b").round(3).to_dict("index")
        {'a': {'B': 0.2, 'OFI': 0.2}, 'b': {'B': 0.0, 'OFI': 0.0}}
        """
        self.require_outcomes("OFI")
        b = pd.Series({g: m.compute("B", cm) for g, cm in self.cms.items()}, dtype=float)
        return pd.DataFrame({"B": b, "OFI": b - b[self._check(reference)]})

    def difference(self, metrics: str | Iterable[str] = ("B", "PPR", "TPR", "FPR"), *,
                   reference: ReferenceLike = Reference.RANGE, alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
        """The largest difference of each single-group metric across groups, as Fairlearn's
        ``MetricFrame.difference()``, saying which groups and, where the verdict work has one, how sure.

        ``reference=Reference.RANGE`` (the default): largest minus smallest group value
        (``method="between_groups"``); a group name: the largest |group − reference|. Columns: value, group_high, group_low (the
        pair behind it; value = high − low), ci_low, ci_high, interval, undefined_in. For B the
        difference is that pair's OFI with its interval; for every other metric there is no interval
        (NaN, and ``interval`` says so). The interval is at level 1 − α/m for the m pairs the
        largest was picked from (Bonferroni), so picking the largest does not make it too narrow.

        >>> from fairness_core import datasets
        >>> d = datasets.load_demo("adult_sex").difference("B")
        >>> d.loc["B", ["group_high", "group_low"]].tolist(), round(float(d.loc["B", "value"]), 3)
        (['Female', 'Male'], 0.017)
        >>> bool(d.loc["B", "ci_low"] > 0)  # small, but not noise
        True
        """
        return self._aggregate(metrics, check_reference(reference, Reference.RANGE, "Audit.difference"), alpha,
                               ratio=False)

    def ratio(self, metrics: str | Iterable[str] = ("PPR", "TPR", "FPR"), *,
              reference: ReferenceLike = Reference.RANGE, alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
        """The smallest ratio of each single-group metric across groups (Fairlearn's ``ratio()``):
        smallest over largest group value (``Reference.RANGE``, the default), or, with a group as ``reference``,
        the ratio group/reference furthest
        below 1 (its inverse when a group lies above). For PPR this is disparate impact, with the
        Miettinen–Nurminen or exact interval of the verdict work at level 1 − α/m (Bonferroni over
        the m pairs); other metrics carry no interval. Same columns as :meth:`difference`,
        value = group_low / group_high.

        >>> from fairness_core import datasets
        >>> r = datasets.load_demo("adult_sex").ratio("PPR")
        >>> round(float(r.loc["PPR", "value"]), 2), bool(r.loc["PPR", "ci_high"] < 0.8)  # four-fifths broken, not by chance
        (0.31, True)
        """
        return self._aggregate(metrics, check_reference(reference, Reference.RANGE, "Audit.ratio"), alpha,
                               ratio=True)

    def _aggregate(self, metrics: str | Iterable[str], reference: ReferenceLike, alpha: float,
                   ratio: bool) -> pd.DataFrame:
        check_alpha(alpha)
        names = [metrics] if isinstance(metrics, str) else list(metrics)
        if not self.outcomes and (needing := [n for n in names if n not in DECISION_METRICS]):
            self.require_outcomes(", ".join(needing))
        if reference is not Reference.RANGE:
            if isinstance(reference, Reference):
                raise ValueError(f"difference and ratio take a group or Reference.RANGE, not {reference!r}")
            self._check(reference)
        return spread.largest(self.group_table(names).loc[self.known_groups], self.cms, names,
                              None if reference is Reference.RANGE else reference, alpha, ratio)

    def undefined_reasons(self, names: Iterable[str] = m.NAMES) -> dict[str, dict[str, str]]:
        """``{group: {metric: reason}}`` for every undefined single-group value."""
        out: dict[str, dict[str, str]] = {}
        for g, cm in self.cms.items():
            reasons = {name: r for name in names if (r := m.undefined_reason(name, cm) if self.outcomes
                                                     or name in DECISION_METRICS else NEEDS_OUTCOMES)}
            if reasons:
                out[g] = reasons
        return out

    def pairwise(self, name: str) -> pd.DataFrame:
        """Comparison ``name`` for every ordered pair: rows i, columns j (decisions alone: only
        :data:`DECISION_COMPARISONS`)."""
        if name not in DECISION_COMPARISONS:
            self.require_outcomes(name)
        return bias.pairwise(name, {g: self.cms[g] for g in self.known_groups})   # unknowns are never compared

    def versus_reference(self, reference: str, names: Iterable[str] = bias.NAMES) -> pd.DataFrame:
        """Each group i compared with the reference group j, for every comparison in ``names``."""
        ref = self.cms[self._check(reference)]
        if reference in self.unknown:
            raise ValueError(f"{reference!r} is an unknown category: it is counted and reported, never the reference")
        names = list(names)
        if not self.outcomes and (needing := [n for n in names if n not in DECISION_COMPARISONS]):
            self.require_outcomes(", ".join(needing))
        rows = {g: {name: bias.compare(name, cm, ref) for name in names}
                for g, cm in self.cms.items() if g != reference and g not in self.unknown}
        df = pd.DataFrame.from_dict(rows, orient="index")
        df.index.name = f"group i (vs {reference})"
        return df

    def reference_for(self, group: str, reference: ReferenceLike = Reference.REST) -> ConfusionMatrix:
        """The MATCH reference for ``group``: the rest of the data (``Reference.REST``), or the named group."""
        reference = check_reference(reference, Reference.REST, "Audit.reference_for")
        if reference is Reference.REST:
            return self.rest_of(group)
        if isinstance(reference, Reference):
            raise ValueError(f"a MATCH reference is a group or Reference.REST, not {reference!r}")
        return self.cms[self._check(reference)]

    def match_table(self, names: Iterable[str] = ("PPR", "TPR", "FPR", "B"),
                    reference: ReferenceLike = Reference.REST, method: str = "exact",
                    alpha: float = DEFAULT_ALPHA, adjust: str = "holm", reference_is: str = "sample") -> pd.DataFrame:
        """The MATCH test (docs/methods.md) of every group against its reference, for every metric.

        Parameters
        ----------
        names : metrics from :data:`fairness_core.match.SUPPORTED`.
        reference : ``Reference.REST`` for "the rest of the data" (each group against all
            other groups pooled), or a group name (that group is then not tested).
        method : see :func:`fairness_core.match.test` (one-sample methods, for ``reference_is="population"``).
        alpha : the error rate, in (0, 0.5): a group "differs from the reference" when its (adjusted) p-value
            is below it.
        reference_is : "sample" (default: the reference is itself a sample; two-sample tests whose p
            does not depend on which group is the reference, equal to the verdict table's ``ofi_p`` for
            B and ``di_p`` for PPR) or "population" (the reference's rates are known: the one-sample test).
        adjust : a key of :data:`fairness_core.vocabulary.ADJUSTMENTS`, applied across the whole
            table: "holm" (family-wise error rate alpha, the default), "bh", or "none" (each test stands
            alone).

        Columns: group, n, metric, observed, reference score, percentile,
        p-value, adjusted p-value (NaN when ``adjust`` is "none"), verdict, note.
        """
        names = list(names)
        if not self.outcomes and (needing := [n for n in names if n not in DECISION_METRICS]):
            self.require_outcomes("the MATCH test of " + ", ".join(needing))
        return match.audit_table(self, names, check_reference(reference, Reference.REST, "Audit.match_table"),
                                 method, alpha, adjustment(adjust).key, reference_is)

    def verdicts(self, tolerance: float | VerdictSettings = DEFAULT_OFI_TOLERANCE, alpha: float = DEFAULT_ALPHA,
                 adjust: str = "holm", ofi_method: str = "auto", di_method: str = "auto",
                 reference: ReferenceLike = Reference.PAIRS) -> Verdicts:
        """A statistically qualified verdict for every unordered pair of groups (docs/methods.md, "Verdicts").

        Both groups are samples. Each pair's OFI is compared with the ``tolerance`` T, the size of a
        difference that matters, by three-sided testing (Goeman, Solari & Stijnen): beyond ±T, within ±T,
        or ≠ 0; each kind of claim is a family adjusted across the pairs by ``adjust`` ("holm": family-wise
        error; "bh": false discovery rate; "none"), and all are read from ONE interval per pair at the
        level that makes every claim one its family's procedure makes (:mod:`fairness_core.verdicts`). The
        verdict is

        - **algorithmic bias** (favouring one group) when OFI's adjusted interval lies beyond +T or −T;
        - **materiality unclear** when that interval excludes 0 but reaches inside ±T: a real difference
          that may be too small to matter — never headlined as bias, never as OFI ≈ 0;
        - **systemic disparity** when OFI's interval lies inside ±T and DI's beyond the four-fifths band;
        - **no bias detected** when OFI's interval lies inside ±T and DI's inside [4/5, 5/4] (or nobody is
          selected in either group);
        - **inconclusive** otherwise, with the rows per group that would settle it at the same rates
          (``rows_needed_i``, ``rows_needed_j``; NaN with ``rows_needed_note`` when not reachable).

        ``ofi_ci_low``/``ofi_ci_high`` and ``di_ci_low``/``di_ci_high`` are the multiplicity-adjusted
        intervals that decided the verdict (their levels in the result's ``levels.ofi`` and ``levels.di``); the
        ``*_unadjusted`` columns hold the plain 1 − α intervals. Pairs are oriented so that ``group_j`` is
        the ``reference`` group (when one is named) or, with ``Reference.PAIRS`` (the default), the group selected more often: DI = P̂_i / P̂_j is the impact
        ratio of the four-fifths rule. The settings are the result's ``settings``. Groups of unknown category
        (:attr:`unknown`) are left out, and so, without outcomes, are groups under 2 % of the data
        (:attr:`small_groups`, Local Law 144's rule: :attr:`compared_groups`).

        Without outcomes (:meth:`from_decisions`) the table holds the four-fifths verdicts alone, in their own
        words (:func:`fairness_core.verdicts.selection_verdicts`: adverse impact, materiality unclear, no adverse
        impact detected, inconclusive); ``tolerance`` and ``ofi_method`` are not used.

        The settings may be given as one :class:`~fairness_core.verdicts.VerdictSettings` in place of ``tolerance``
        (then ``alpha``, ``adjust`` and the methods are its own). The result is a
        :class:`~fairness_core.results.Verdicts`: a DataFrame subclass that carries its ``settings`` and ``levels``
        and reads itself (``findings()``, ``three_questions()``, ``reading()``).

        Examples
        --------
        >>> from fairness_core import ConfusionMatrix as CM
        >>> v = Audit({"a": CM(300, 20, 90, 590), "b": CM(250, 120, 40, 590)}).verdicts(0.05)
        >>> v.loc[0, ["group_i", "group_j", "verdict", "favours"]].tolist()
        ['b', 'a', 'algorithmic bias', 'a']
        >>> bool(v.loc[0, "ofi_ci_low"] < v.loc[0, "ofi"] < v.loc[0, "ofi_ci_high"] < -0.05)
        True
        """
        settings = (tolerance if isinstance(tolerance, VerdictSettings)
                    else VerdictSettings(tolerance, alpha, adjust, ofi_method, di_method))
        reference = check_reference(reference, Reference.PAIRS, "Audit.verdicts")
        if isinstance(reference, Reference):
            if reference is not Reference.PAIRS:
                raise ValueError(f"verdicts take a group or Reference.PAIRS as reference, not {reference!r}")
            reference = None   # the result's reference is None: no reference group
        else:
            self._check(reference)
            if reference in self.unknown or reference in self.small_groups:
                what = ("an unknown category" if reference in self.unknown
                        else f"under {EXCLUDE_BELOW * 100:g} % of the data")
                raise ValueError(f"{reference!r} is {what}: it is counted and reported, never the reference")
        groups = self.compared_groups
        cells = np.array([self.cms[g].as_array() for g in groups], dtype=float)
        if not self.outcomes:
            df = verdicts_.selection_verdicts(groups, cells[:, 0] + cells[:, 2], cells.sum(axis=1), settings.alpha,
                                              settings.adjust, settings.di_method, reference)
            df.insert(list(df.columns).index("favours") + 1, "explanation", selection_explanations(df))
        else:
            df = verdicts_.pair_verdicts(groups, cells, settings.tolerance, settings.alpha, settings.adjust,
                                         settings.ofi_method, settings.di_method, reference)
            df.insert(list(df.columns).index("favours") + 1, "explanation", verdict_explanations(df))
        return Verdicts.judged(df, self)

