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
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd
from scipy import stats

from . import bias, inference, match, text
from . import bias as bias_mod
from . import verdicts as verdicts_
from . import metrics as m
from .confusion import CELLS, ConfusionMatrix
from .row_counts import count_arrays
from .stability import RowData
from .vocabulary import Reference, ReferenceLike, adjust_from_bool, adjustment, reference_or_mode

#: Default |OFI| below which the two groups' marginal benefits count as equal.
DEFAULT_OFI_TOLERANCE = 0.05

#: Default significance level of the verdicts.
DEFAULT_ALPHA = 0.05

#: What a model's positive prediction can be declared to be, for the person it is about.
POSITIVE_IS = ("benefit", "harm")

#: What the verdict columns can say, in the order the app counts them.
VERDICTS = verdicts_.VERDICTS
level_text, interval_label = verdicts_.level_text, verdicts_.interval_label


def resolve_positive_is(positive_is: str | None, flip: bool | None, what: str) -> str | None:
    """``positive_is`` from the new argument or the deprecated ``flip``, with a warning when neither says it.

    Returns "benefit", "harm", or None (undeclared: a benefit is assumed and a :class:`UserWarning` says so).
    """
    if flip is not None:
        warnings.warn("flip= is deprecated; say positive_is='harm' (or 'benefit')", DeprecationWarning, stacklevel=3)
        from_flip = "harm" if flip else "benefit"
        if positive_is is not None and positive_is != from_flip:
            raise ValueError(f"positive_is={positive_is!r} contradicts flip={flip!r}")
        positive_is = from_flip
    if positive_is is None:
        warnings.warn(f"positive_is not given: assuming a positive prediction ({what}) is a benefit for the person. "
                      "If it is a harm (e.g. 'likely to reoffend'), every verdict's direction is reversed: pass "
                      "positive_is='harm'.", UserWarning, stacklevel=3)
        return None
    if positive_is not in POSITIVE_IS:
        raise ValueError(f"positive_is must be 'benefit' or 'harm', got {positive_is!r}")
    return positive_is


_CODE = re.compile(r"^[A-Za-z]{0,3}[-_]?\d+(\.\d+)?$")
_GENERIC = {"yes", "no", "true", "false", "y", "n", "t", "f", "other", "unknown", "none", "na", "n/a", "missing"}


def _ambiguous(value: str) -> bool:
    """Whether an attribute's value says nothing alone ("A92", "1", "yes"): then its name carries the attribute."""
    v = value.strip()
    return len(v) <= 1 or bool(_CODE.match(v)) or v.lower() in _GENERIC


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
                         positive_is: str | None = None, flip: bool | None = None, threshold: float | None = None,
                         source: str = "predictions") -> "Audit":
        """An audit in one call from labels, predictions and sensitive features, as in Fairlearn.

        Parameters
        ----------
        y_true, y_pred : array-like
            Lists, NumPy arrays, pandas or polars Series. Binary, with ``pos_label`` the positive
            value of both; or, with ``threshold``, ``y_pred`` is a score and positive means
            ``score >= threshold``.
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
        flip : bool, deprecated
            The former spelling: ``flip=True`` is ``positive_is="harm"``.

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
        return Audit(**count_arrays(y_true, y_pred, sensitive_features, pos_label,
                                    positive_is=resolve_positive_is(positive_is, flip, f"pos_label={pos_label!r}"),
                                    threshold=threshold, source=source))

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
                     list(self.provenance.items())):
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
        named = {v: (f"{attribute} = {v}" if _ambiguous(v) else v) for v in values}
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
        return Audit(cms, source=f"{self.source}, by {attribute} alone", notes=self.notes,
                     positive_outcome=self.positive_outcome, group_columns=(attribute,), rows=rows,
                     positive_is=self.positive_is, group_values={n: (v,) for v, n in named.items()},
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
        """The pooled CM of every group except ``group`` (the default reference)."""
        return self.total() - self.cms[self._check(group)]

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
        """Every single-group metric per group (NaN where undefined), with n and the cells."""
        names = list(names)
        cells = self.cells()
        arr = cells[list(CELLS)].to_numpy()
        values = {name: m.compute(name, *arr.T) for name in names}
        return pd.concat([cells, pd.DataFrame(values, index=cells.index)], axis=1)

    def difference(self, metrics: str | Iterable[str] = ("B", "PPR", "TPR", "FPR"), *,
                   reference: ReferenceLike | None = Reference.RANGE, alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
        """The largest difference of each single-group metric across groups, as Fairlearn's
        ``MetricFrame.difference()``, saying which groups and, where the verdict work has one, how sure.

        ``reference=Reference.RANGE`` (the default): largest minus smallest group value
        (``method="between_groups"``); a group name: the largest |group − reference|. (``None``, the former
        spelling of RANGE here, is deprecated.) Columns: value, group_high, group_low (the
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
        return self._aggregate(metrics, reference_or_mode(reference, Reference.RANGE, "Audit.difference"), alpha,
                               ratio=False)

    def ratio(self, metrics: str | Iterable[str] = ("PPR", "TPR", "FPR"), *,
              reference: ReferenceLike | None = Reference.RANGE, alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
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
        return self._aggregate(metrics, reference_or_mode(reference, Reference.RANGE, "Audit.ratio"), alpha,
                               ratio=True)

    def _aggregate(self, metrics: str | Iterable[str], reference: ReferenceLike, alpha: float,
                   ratio: bool) -> pd.DataFrame:
        names = [metrics] if isinstance(metrics, str) else list(metrics)
        table = self.group_table(names)
        if reference is not Reference.RANGE:
            if isinstance(reference, Reference):
                raise ValueError(f"difference and ratio take a group or Reference.RANGE, not {reference!r}")
            self._check(reference)
        else:
            reference = None  # below: None is the range
        rows = {}
        for name in names:
            values = table[name]
            undefined = [g for g, v in values.items() if not np.isfinite(v)]
            ok = values[np.isfinite(values)]
            candidates = ok.drop(reference) if reference is not None and reference in ok.index else ok
            row = {"value": np.nan, "group_high": None, "group_low": None, "ci_low": np.nan, "ci_high": np.nan,
                   "interval": "", "undefined_in": ", ".join(undefined)}
            if reference is not None and reference not in ok.index:
                row["interval"] = f"{name} is undefined for the reference {reference}"
            elif len(ok) < 2:
                row["interval"] = f"{name} is defined for fewer than two groups"
            else:
                if reference is None:
                    ranked = ok.sort_values(kind="stable")
                    high, low = ranked.index[-1], ranked.index[0]  # two distinct groups even when all tie
                    pairs = len(ok) * (len(ok) - 1) // 2
                else:
                    with np.errstate(divide="ignore", invalid="ignore"):
                        far = (np.log(candidates / ok[reference]).abs() if ratio
                               else (candidates - ok[reference]).abs())
                    g = far.idxmax() if np.isfinite(far).any() else candidates.index[0]
                    high, low = (g, reference) if candidates[g] >= ok[reference] else (reference, g)
                    pairs = len(candidates)
                row["group_high"], row["group_low"] = high, low
                with np.errstate(divide="ignore", invalid="ignore"):
                    row["value"] = float(ok[low] / ok[high]) if ratio else float(ok[high] - ok[low])
                level = 1 - alpha / max(pairs, 1)
                if not ratio and name == "B":
                    r = inference.ofi_test(self.cms[high], self.cms[low], alpha=1 - level)
                    row.update(ci_low=r.ci_low, ci_high=r.ci_high,
                               interval=f"OFI {level:.4g} interval ({r.method}), Bonferroni over {pairs} pair(s)")
                elif ratio and name == "PPR":
                    r = inference.di_interval(self.cms[low], self.cms[high], alpha=1 - level)
                    row.update(ci_low=r.ci_low, ci_high=r.ci_high,
                               interval=f"DI {level:.4g} interval ({r.method}), Bonferroni over {pairs} pair(s)")
                else:
                    row["interval"] = "no interval for this metric (only B's difference and PPR's ratio have one)"
            rows[name] = row
        out = pd.DataFrame.from_dict(rows, orient="index")
        out.index.name = "metric"
        return out

    def undefined_reasons(self, names: Iterable[str] = m.NAMES) -> dict[str, dict[str, str]]:
        """``{group: {metric: reason}}`` for every undefined single-group value."""
        out: dict[str, dict[str, str]] = {}
        for g, cm in self.cms.items():
            reasons = {name: r for name in names if (r := m.undefined_reason(name, cm))}
            if reasons:
                out[g] = reasons
        return out

    def pairwise(self, name: str) -> pd.DataFrame:
        """Comparison ``name`` for every ordered pair: rows i, columns j."""
        return bias.pairwise(name, self.cms)

    def versus_reference(self, reference: str, names: Iterable[str] = bias.NAMES) -> pd.DataFrame:
        """Each group i compared with the reference group j, for every comparison in ``names``."""
        ref = self.cms[self._check(reference)]
        rows = {g: {name: bias.compare(name, cm, ref) for name in names}
                for g, cm in self.cms.items() if g != reference}
        df = pd.DataFrame.from_dict(rows, orient="index")
        df.index.name = f"group i (vs {reference})"
        return df

    def reference_for(self, group: str, reference: ReferenceLike | None = Reference.REST) -> ConfusionMatrix:
        """The MATCH reference for ``group``: the rest of the data (``Reference.REST``), or the named group.
        (``None``, the former spelling of REST here, is deprecated.)"""
        reference = reference_or_mode(reference, Reference.REST, "Audit.reference_for")
        if reference is Reference.REST:
            return self.rest_of(group)
        if isinstance(reference, Reference):
            raise ValueError(f"a MATCH reference is a group or Reference.REST, not {reference!r}")
        return self.cms[self._check(reference)]

    def match_table(self, names: Iterable[str] = ("PPR", "TPR", "FPR", "B"),
                    reference: ReferenceLike | None = Reference.REST, method: str = "exact",
                    alpha: float = DEFAULT_ALPHA, adjust: str = "holm", reference_is: str = "sample") -> pd.DataFrame:
        """The MATCH test (docs/methods.md) of every group against its reference, for every metric.

        Parameters
        ----------
        names : metrics from :data:`fairness_core.match.SUPPORTED`.
        reference : ``Reference.REST`` for "the rest of the data" (each group against all
            other groups pooled), or a group name (that group is then not tested). ``None``, the
            former spelling of REST, is deprecated.
        method : see :func:`fairness_core.match.test` (one-sample methods, for ``reference_is="population"``).
        alpha : level below which a group "differs from the reference".
        reference_is : "sample" (default: the reference is itself a sample; two-sample tests whose p
            does not depend on which group is the reference, equal to the verdict table's ``ofi_p`` for
            B and ``di_p`` for PPR) or "population" (the reference's rates are known: the one-sample test).
        adjust : a key of :data:`fairness_core.vocabulary.ADJUSTMENTS`, applied across the whole
            table: "holm" (family-wise error rate alpha, the default), "bh", or "none" (each test stands
            alone). The former bool (True: "holm", False: "none") is deprecated.

        Columns: group, n, metric, observed, reference score, percentile,
        p-value, adjusted p-value (NaN when ``adjust`` is "none"), verdict, note.
        """
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        adjust = adjust_from_bool(adjust, "Audit.match_table")
        reference = reference_or_mode(reference, Reference.REST, "Audit.match_table")
        names = list(names)
        rows = []
        for g, cm in self.cms.items():
            if isinstance(reference, str) and g == reference:
                continue
            ref = self.reference_for(g, reference)
            for name in names:
                r = match.test(name, cm, ref, method=method, reference=reference_is)
                rows.append({"group": g, "n": cm.n, "metric": name, "observed": r.observed,
                             "reference score": m.compute(name, ref), "percentile": r.cdf,
                             "p-value": r.p_value, "note": r.note})
        df = pd.DataFrame(rows)
        adjusted = adjust != "none"
        df["adjusted p-value"] = inference.adjust_p_values(df["p-value"].to_numpy(), adjust) if adjusted else np.nan
        decisive = df["adjusted p-value"] if adjusted else df["p-value"]
        df["verdict"] = np.where(decisive.isna(), "undefined",
                                 np.where(decisive < alpha, "differs from the reference",
                                          "indistinguishable from the reference"))
        return df[["group", "n", "metric", "observed", "reference score", "percentile", "p-value",
                   "adjusted p-value", "verdict", "note"]]

    def verdicts(self, tolerance: float = DEFAULT_OFI_TOLERANCE, alpha: float = DEFAULT_ALPHA,
                 adjust: str = "holm", ofi_method: str = "auto", di_method: str = "auto",
                 reference: ReferenceLike | None = Reference.PAIRS) -> pd.DataFrame:
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
        intervals that decided the verdict (level in ``attrs["ofi_level"]``, ``attrs["di_level"]``); the
        ``*_unadjusted`` columns hold the plain 1 − α intervals. Pairs are oriented so that ``group_j`` is
        the ``reference`` group (when one is named) or, with ``Reference.PAIRS`` (the default; ``None``, its
        former spelling, is deprecated), the group selected more often: DI = P̂_i / P̂_j is the impact
        ratio of the four-fifths rule. Settings are kept in ``DataFrame.attrs``.

        Examples
        --------
        >>> from fairness_core import ConfusionMatrix as CM
        >>> v = Audit({"a": CM(300, 20, 90, 590), "b": CM(250, 120, 40, 590)}).verdicts(0.05)
        >>> v.loc[0, ["group_i", "group_j", "verdict", "favours"]].tolist()
        ['b', 'a', 'algorithmic bias', 'a']
        >>> bool(v.loc[0, "ofi_ci_low"] < v.loc[0, "ofi"] < v.loc[0, "ofi_ci_high"] < -0.05)
        True
        """
        reference = reference_or_mode(reference, Reference.PAIRS, "Audit.verdicts")
        if isinstance(reference, Reference):
            if reference is not Reference.PAIRS:
                raise ValueError(f"verdicts take a group or Reference.PAIRS as reference, not {reference!r}")
            reference = None   # the table's attrs keep None: no reference group
        else:
            self._check(reference)
        groups = self.groups
        cells = np.array([self.cms[g].as_array() for g in groups], dtype=float)
        df = verdicts_.pair_verdicts(groups, cells, tolerance, alpha, adjust, ofi_method, di_method, reference)
        df.insert(list(df.columns).index("favours") + 1, "explanation", _explanations(df))
        return df


def findings_first(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The verdict table with findings first (algorithmic bias, systemic disparity, no bias,
    inconclusive), each by adjusted OFI p: the order pages and the report list pairs in."""
    order = verdicts["verdict"].map({v: k for k, v in enumerate(VERDICTS)})
    return verdicts.iloc[np.lexsort((verdicts["ofi_p_adjusted"].to_numpy(), order.to_numpy()))]


def verdict_reading(verdicts: pd.DataFrame, max_rows: int | None = None) -> pd.DataFrame:
    """The verdict table as people read it: pair, OFI [CI], DI [CI], verdict and the plain-words reading
    first, then the numbers. The intervals are the adjusted ones that decided the verdict, labelled with
    their level. Sorted with findings first, at most ``max_rows`` rows (all when None). The page and the
    report show it."""
    v = findings_first(verdicts)
    v = v if max_rows is None else v.head(max_rows)

    def di_text(d: float, lo: float, hi: float) -> str:
        if np.isnan(lo):
            return "undefined (0/0)"
        top = "∞" if np.isinf(hi) else text.bound(hi, 1.0, 2)
        return f"{'undefined' if np.isnan(d) else f'{d:.2f}'} [{text.bound(lo, 1.0, 2)}, {top}]"

    def ofi_text(o: float, lo: float, hi: float) -> str:
        return f"{o:+.3f} [{text.bound(lo, 0.0, 3, signed=True)}, {text.bound(hi, 0.0, 3, signed=True)}]"

    out = pd.DataFrame({
        "pair": v["group_i"].astype(str) + " vs " + v["group_j"].astype(str),
        f"OFI [{interval_label(verdicts, 'ofi')}]": [ofi_text(o, lo, hi) for o, lo, hi in
                                                     zip(v["ofi"], v["ofi_ci_low"], v["ofi_ci_high"])],
        f"DI = P̂_i / P̂_j [{interval_label(verdicts, 'di')}]": [
            di_text(d, lo, hi) for d, lo, hi in zip(v["di"], v["di_ci_low"], v["di_ci_high"])],
        "verdict": v["verdict"], "reading": v["explanation"],
        "n_i": v["n_i"], "n_j": v["n_j"], "OFI p (adjusted)": v["ofi_p_adjusted"], "DI p (adjusted)": v["di_p_adjusted"],
        "detectable |OFI|": v["ofi_mde"], "more rows i": v["rows_needed_i"], "more rows j": v["rows_needed_j"],
        "OFI method": v["ofi_method"], "DI method": v["di_method"],
    })
    return out.reset_index(drop=True)


def verdict_findings(verdicts: pd.DataFrame, max_items: int = 3) -> str:
    """What the verdict table says, in plain words, for any data: the counts, the largest OFI shown beyond
    the tolerance (who is disadvantaged, how sure), real but possibly immaterial differences, systemic
    disparities, and what keeps pairs inconclusive. Every interval quoted is the adjusted one that
    decided the verdict.

    Group names are returned as given; escape them for wherever the text goes.

    >>> from fairness_core import datasets
    >>> text = verdict_findings(datasets.load_demo("ricci_b").verdicts())
    >>> text.startswith("Of 3 group pairs: 0 algorithmic bias, 1 materiality unclear")
    True
    """
    v = verdicts
    if v.empty:
        return "There are no group pairs to compare."
    alpha, adjust = v.attrs.get("alpha", DEFAULT_ALPHA), v.attrs.get("adjust", "holm")
    tol = v.attrs.get("tolerance", DEFAULT_OFI_TOLERANCE)
    ofi_ci, di_ci = interval_label(v, "ofi"), interval_label(v, "di")
    counts = v["verdict"].value_counts()
    claims = adjustment(adjust).controls
    parts = [f"Of {len(v):,} group pairs: " + ", ".join(f"{counts.get(k, 0):,} {k}" for k in VERDICTS)
             + f" (tolerance ±{tol:g} for OFI; every claim at α = {alpha:g}, {claims})."]
    found = v[v["verdict"] == "algorithmic bias"]
    if len(found):
        top = found.loc[found["ofi"].abs().idxmax()]
        loser = top["group_j"] if top["favours"] == top["group_i"] else top["group_i"]
        lo, hi = sorted((abs(top["ofi_ci_low"]), abs(top["ofi_ci_high"])))
        parts.append(f"The largest material difference: relative to their actual labels, {top['favours']} "
                     f"(n = {_n_of(top, top['favours']):,}) fares better than {loser} (n = {_n_of(top, loser):,}), "
                     f"OFI = {abs(top['ofi']):.3f} in {top['favours']}'s favour ({ofi_ci} {lo:.3f} to {hi:.3f}, "
                     f"beyond the tolerance {tol:g}).")
        losers = pd.Series(np.where(found["favours"] == found["group_i"], found["group_j"], found["group_i"]))
        worst = losers.value_counts().head(max_items)
        parts.append("Disadvantaged most often: " + "; ".join(
            f"{g} (in {c} of {len(found)} such pair{'s' if len(found) > 1 else ''})"
            for g, c in worst.items()) + ".")
    unclear = v[v["verdict"] == "materiality unclear"]
    if len(unclear):
        u = unclear.loc[unclear["ofi"].abs().idxmax()]
        parts.append(f"{len(unclear)} pair(s) differ for real but may be too small to matter: e.g. {u['favours']} "
                     f"fares better in {u['group_i']} vs {u['group_j']}, OFI = {u['ofi']:+.3f} ({ofi_ci} "
                     f"{text.bound(u['ofi_ci_low'], 0.0, 3, True)} to {text.bound(u['ofi_ci_high'], 0.0, 3, True)}: "
                     f"excludes 0, reaches inside ±{tol:g}).")
    systemic = v[v["verdict"] == "systemic disparity"]
    if len(systemic):
        s = systemic.loc[np.log(systemic["di"]).abs().fillna(np.inf).idxmax()]   # undefined DI: the largest gap
        di_txt = "undefined (one group selects nobody)" if np.isnan(s["di"]) else f"{s['di']:.2f}"
        parts.append(f"{len(systemic)} pair(s) differ in selection rates without the model being at fault, e.g. "
                     f"{s['group_i']} vs {s['group_j']}: DI = {di_txt} ({di_ci} "
                     f"{text.bound(s['di_ci_low'], 1.0, 2)} to {text.bound(s['di_ci_high'], 1.0, 2)}) with OFI shown "
                     f"to be within ±{tol:g}.")
    open_ = v[v["verdict"] == "inconclusive"]
    if len(open_):
        sizes = pd.concat([open_[["group_i", "n_i"]].set_axis(["group", "n"], axis=1),
                           open_[["group_j", "n_j"]].set_axis(["group", "n"], axis=1)])
        small = sizes.drop_duplicates("group").nsmallest(max_items, "n")
        parts.append(f"{len(open_):,} pair(s) are inconclusive: their intervals are too wide to call bias or its "
                     "absence. The smallest groups involved: " + ", ".join(
                         f"{g} (n = {n:,})" for g, n in zip(small["group"], small["n"]))
                     + "; the table says how many more rows would settle each pair.")
    if not len(found) and not len(systemic) and not len(unclear):
        parts.append("No pair shows a difference in how the model treats the groups relative to their labels"
                     + (" at these sample sizes." if len(open_) else "."))
    return " ".join(parts)


def _n_of(row: pd.Series, group: str) -> int:
    return int(row["n_i"] if row["group_i"] == group else row["n_j"])


_STR = text.STR


#: Above this many pairs the readings leave the rows-needed counts to their columns (writing 10^5 numbers as
#: text would double the verdict table's time).
MAX_PAIRS_WITH_COUNTS = 5_000


def _explanations(df: pd.DataFrame) -> np.ndarray:
    """The plain-words reading of each pair's verdict (the numbers themselves sit in the row's columns).

    Built with NumPy string ufuncs on each verdict's rows only, so 124,750 pairs take a fraction of a second.
    """
    adjust = df.attrs["adjust"]
    adj = adjustment(adjust).prefix
    tol = df.attrs["tolerance"]
    ofi_ci, di_ci = interval_label(df, "ofi"), interval_label(df, "di")
    groups = pd.Index(pd.unique(np.concatenate([df["group_i"].to_numpy(), df["group_j"].to_numpy()])))
    as_text = np.array(groups.tolist(), dtype=_STR)   # each name converted once, then gathered per pair
    names_i = as_text[groups.get_indexer(df["group_i"])]
    names_j = as_text[groups.get_indexer(df["group_j"])]
    verdict = df["verdict"].to_numpy()
    out = np.full(len(df), "", dtype=_STR)

    def winner_loser(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        i_favoured = df["ofi"].to_numpy()[rows] > 0
        return (np.where(i_favoured, names_i[rows], names_j[rows]).astype(_STR),
                np.where(i_favoured, names_j[rows], names_i[rows]).astype(_STR))

    def settle(rows: np.ndarray, what: str) -> np.ndarray:
        more_i, more_j = df["rows_needed_i"].to_numpy()[rows], df["rows_needed_j"].to_numpy()[rows]
        if len(df) > MAX_PAIRS_WITH_COUNTS:   # the counts stay in their own columns: no 10^5 numbers as text
            return np.where(np.isnan(more_i), " More rows at these rates would not settle it (not reachable).",
                            f" The rows_needed columns say how many more rows, at the same rates, would {what}."
                            ).astype(_STR)
        sentence = (" About " + text.counts(more_i) + " more rows of " + names_i[rows] + " and " + text.counts(more_j)
                    + " of " + names_j[rows] + ", at the same rates, would " + what + ".")
        return np.where(np.isnan(more_i), " More rows at these rates would not settle it (not reachable).",
                        sentence).astype(_STR)

    rows = np.flatnonzero(verdict == "algorithmic bias")
    winner, loser = winner_loser(rows)
    out[rows] = ("The model is at fault: measured against what their actual labels warrant, " + winner
                 + " fares better than " + loser + f" by more than the tolerance {tol:g} (OFI's {ofi_ci} lies beyond "
                 f"±{tol:g}).")

    rows = np.flatnonzero(verdict == "materiality unclear")
    winner, loser = winner_loser(rows)
    out[rows] = ("A real difference that may not matter: " + winner + " fares better than " + loser
                 + f" relative to their labels (OFI's {ofi_ci} excludes 0, " + adj
                 + text.p_values(df["ofi_p_adjusted"].to_numpy()[rows]) + f"), but the interval reaches inside "
                 f"±{tol:g}, so the difference is not shown to be material." + settle(rows, f"tell whether it exceeds ±{tol:g}"))

    rows = np.flatnonzero(verdict == "systemic disparity")
    i_more = df["di_ci_low"].to_numpy()[rows] > 1
    high = np.where(i_more, names_i[rows], names_j[rows]).astype(_STR)
    low = np.where(i_more, names_j[rows], names_i[rows]).astype(_STR)
    out[rows] = (f"The model treats both groups alike relative to their labels (OFI's {ofi_ci} lies inside "
                 f"±{tol:g}), but " + high + " is selected far more often than " + low
                 + f" (DI's {di_ci} lies beyond the four-fifths band, " + adj
                 + text.p_values(df["di_p_adjusted"].to_numpy()[rows])
                 + "): the gap comes from different base rates, outside the algorithm.")

    nobody = np.isnan(df["di_p"].to_numpy())
    out[(verdict == "no bias detected") & nobody] = (
        f"No algorithmic bias: OFI's {ofi_ci} lies inside ±{tol:g}; nobody is selected in either group, "
        "so the four-fifths rule does not apply.")
    out[(verdict == "no bias detected") & ~nobody] = (
        f"No algorithmic bias and no four-fifths violation: OFI's {ofi_ci} lies inside ±{tol:g} and DI's "
        f"{di_ci} inside 4/5–5/4.")

    inconclusive = verdict == "inconclusive"
    within = df["ofi_within_tolerance"].to_numpy()
    rows = np.flatnonzero(inconclusive & within)
    out[rows] = (f"Cannot tell yet: the model treats both groups alike relative to their labels (OFI's {ofi_ci} "
                 f"inside ±{tol:g}), but DI's {di_ci} reaches across the four-fifths line." + settle(rows, "settle it"))
    rows = np.flatnonzero(inconclusive & ~within)
    out[rows] = (f"Cannot tell yet: OFI's {ofi_ci} includes 0 and reaches beyond ±{tol:g}; the smallest |OFI| "
                 "these sizes would show beyond the tolerance is about " + text.fixed(df["ofi_mde"].to_numpy()[rows])
                 + "." + settle(rows, "settle it"))
    return out.astype(object)


def three_questions(audit: Audit, verdicts: pd.DataFrame) -> dict[str, Any]:
    """The three questions an audit is judged by, each answered with its interval and verdict.

    - ``"ofi"``: is the algorithm at fault? The verdict counts and the largest OFI shown beyond the tolerance.
    - ``"four_fifths"``: every pair whose impact ratio DI = P̂_i / P̂_j is below 0.8 by point estimate, with
      its adjusted interval and whether the data can tell ("shown below 0.8", "cannot tell", or "within the
      band" when the interval says the gap is inside [0.8, 1.25] after all).
    - ``"equal_opportunity"``: the largest gap in false-negative rate (qualified individuals denied the
      favourable decision) and in false-positive rate, each with a simultaneous interval
      (:func:`fairness_core.verdicts.error_rate_gaps`).

    Returns the answers as tables and one sentence per question (``"text"``).
    """
    alpha = verdicts.attrs.get("alpha", DEFAULT_ALPHA)
    counts = verdicts["verdict"].value_counts()
    bias = verdicts[verdicts["verdict"] == "algorithmic bias"]
    tol = verdicts.attrs.get("tolerance", DEFAULT_OFI_TOLERANCE)
    if len(bias):
        top = bias.loc[bias["ofi"].abs().idxmax()]
        loser = top["group_j"] if top["favours"] == top["group_i"] else top["group_i"]
        lo, hi = sorted((abs(top["ofi_ci_low"]), abs(top["ofi_ci_high"])))
        ofi_text = (f"Yes for {len(bias):,} of {len(verdicts):,} pairs: the largest, {loser} against {top['favours']}: "
                    f"|OFI| = {abs(top['ofi']):.3f} ({interval_label(verdicts, 'ofi')} {lo:.3f} to {hi:.3f}, beyond "
                    f"the tolerance {tol:g}).")
    else:
        unclear = int(counts.get("materiality unclear", 0))
        within = int(counts.get("systemic disparity", 0) + counts.get("no bias detected", 0))
        ofi_text = (f"Not shown for any pair: no OFI interval lies beyond ±{tol:g}"
                    + (f"; {within} pair(s) are shown within it" if within else "")
                    + (f"; {unclear} pair(s) differ but may be immaterial" if unclear else "")
                    + (f"; {int(counts.get('inconclusive', 0))} pair(s) are inconclusive" if counts.get("inconclusive")
                       else "") + ".")
    # The impact ratio of each pair is the lower selection rate over the higher, whichever way the table orients
    # the pair (a reference group selected less often gives DI > 1 against it); a group that selects nobody
    # against one that does has ratio 0.
    v = verdicts
    flip = (v["di"] > 1) | (v["di"].isna() & (v["di_ci_low"] > 0))
    with np.errstate(divide="ignore"):
        ratio = np.where(flip, np.where(v["di"].isna(), 0.0, 1 / v["di"]), v["di"])
        low = np.where(flip, 1 / v["di_ci_high"], v["di_ci_low"])
        high = np.where(flip, 1 / v["di_ci_low"], v["di_ci_high"])
    ff = pd.DataFrame({"lower-rate group": np.where(flip, v["group_j"], v["group_i"]),
                       "higher-rate group": np.where(flip, v["group_i"], v["group_j"]),
                       "n lower": np.where(flip, v["n_j"], v["n_i"]), "n higher": np.where(flip, v["n_i"], v["n_j"]),
                       "impact ratio": ratio, "ci_low": low, "ci_high": high, "p_adjusted": v["di_p_adjusted"],
                       "data say": np.where(high < bias_mod.FOUR_FIFTHS_LOW, "shown below 0.8",
                                            np.where(low >= bias_mod.FOUR_FIFTHS_LOW, "within the band after all",
                                                     "cannot tell"))})
    ff = ff[ff["impact ratio"] < bias_mod.FOUR_FIFTHS_LOW].sort_values("impact ratio").reset_index(drop=True)
    if len(ff):
        shown = int((ff["data say"] == "shown below 0.8").sum())
        worst = ff.iloc[0]
        ff_text = (f"{len(ff):,} pair(s) fall below 0.8 by point estimate, {shown} of them shown by the data "
                   f"({interval_label(verdicts, 'di')}); the lowest: {worst['lower-rate group']} against "
                   f"{worst['higher-rate group']}, impact ratio {worst['impact ratio']:.2f} "
                   f"[{text.bound(worst['ci_low'], 0.8, 2)}, {text.bound(worst['ci_high'], 0.8, 2)}] "
                   f"({worst['data say']}).")
    else:
        ff_text = "No pair falls below 0.8 by point estimate."
    gaps = verdicts_.error_rate_gaps(audit.groups, np.array([audit.cms[g].as_array() for g in audit.groups],
                                                             dtype=float), alpha)
    largest = verdicts_.largest_gaps(gaps)
    eo_parts = []
    for _, g in largest.iterrows():
        word = "denied to qualified" if g["rate"] == "FNR" else "granted to unqualified"
        if g["gap"] == 0:
            eo_parts.append(f"no {g['rate']} gap in the data (the favourable decision {word} individuals equally "
                            f"often; simultaneous {level_text(g['level'])} CI {text.bound(g['ci_low'], 0.0, 3, True)} "
                            f"to {text.bound(g['ci_high'], 0.0, 3, True)})")
            continue
        eo_parts.append(f"the largest {g['rate']} gap (the favourable decision {word} individuals): {g['group_i']} "
                        f"{g['rate_i']:.1%} against "
                        f"{g['group_j']} {g['rate_j']:.1%}, a gap of {g['gap']:+.3f} (simultaneous "
                        f"{level_text(g['level'])} CI {text.bound(g['ci_low'], 0.0, 3, True)} to "
                        f"{text.bound(g['ci_high'], 0.0, 3, True)}: "
                        + ("shown" if g["differs"] else "not shown") + ")")
    eo_text = "; ".join(eo_parts) + "." if eo_parts else "error rates are undefined for every pair."
    eo_text = eo_text[0].upper() + eo_text[1:]
    return {"ofi": {"counts": {k: int(counts.get(k, 0)) for k in VERDICTS}, "text": ofi_text},
            "four_fifths": {"pairs": ff, "text": ff_text},
            "equal_opportunity": {"gaps": gaps, "largest": largest, "text": eo_text},
            "text": {"Is the algorithm at fault (OFI)?": ofi_text, "The four-fifths rule": ff_text,
                     "Equal opportunity (error rates)": eo_text}}
