"""Audits of ordered and unordered categories: risk tiers, grade bands, any classifier of more than two classes.

:class:`MulticlassAudit` holds one k × k matrix of counts per group (rows: the observed class, columns: the
predicted one, in the classes' order) — or, for decisions alone, each group's rows per predicted class — and
answers, in the library's vocabulary (docs/methods.md, "Ordered categories and multiclass"):

- per class, the one-vs-rest audit (:meth:`MulticlassAudit.one_vs_rest`), an ordinary
  :class:`~fairness_core.audit.Audit` with every verdict, metric and figure of the binary workbench;
- with an ``order``, the cut "c or better" as an ``Audit`` (:meth:`~MulticlassAudit.at_cut`), the impact ratios at
  every cut with intervals adjusted across cuts and pairs (:meth:`~MulticlassAudit.impact_ratios`), and, with
  outcomes, the ordinal benefit b = s·(r(ŷ) − r(y)), the ordinal FPR and FNR (:meth:`~MulticlassAudit.rates`) and
  the ordinal OFI with its verdicts (:meth:`~MulticlassAudit.verdicts`, through
  :class:`fairness_core.continuous.ContinuousAudit` on the tiers' ranks);
- without an order, the class shares and their impact ratios; no ordinal benefit (it needs an order).

The convention of ``order`` and ``favourable``: ``order`` lists the classes from one end of the scale to the other
(``["Low", "Medium", "High"]``), in whatever direction the data speak; ``favourable`` names the end that is good
for the person (``"Low"`` for a risk tier, ``"A"`` for a grade). Without an order, ``favourable`` may name one or
several classes that are good for the person (the others are then declared unfavourable), or be left out (no
class's direction is declared, and the one-vs-rest audits say so).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .audit import NEEDS_OUTCOMES, Audit, NeedsOutcomes
from .common import text
from .common.validation import UNKNOWN_CATEGORY, UNKNOWN_VALUES, under_share
from .common.vocabulary import DEFAULT_ALPHA, check_alpha, opposite_outcome
from .statistics import ordinal
from .statistics.class_counts import _class_key, count_classes
from .statistics.confusion import ConfusionMatrix
from .statistics.verdicts import ERROR_RATES, VerdictTable, error_rate_gaps

__all__ = ["MulticlassAudit", "NeedsOutcomes", "NEEDS_OUTCOMES"]


@dataclass(frozen=True, eq=False)
class MulticlassAudit:
    """Named groups' k × k class counts (or, for decisions alone, their rows per predicted class).

    Parameters
    ----------
    counts : array, (groups, k, k) with outcomes or (groups, k) without
        Rows per group, observed class (axis 1) by predicted class (axis 2), in ``classes`` order.
    groups, classes : sequences of str
        The groups' names and the classes' names (at least two of each).
    ordered : bool
        Whether ``classes`` is a declared order (first to last end of the scale).
    favourable : sequence of str
        Ordered: the one end that is good for the person. Unordered: the classes that are good (empty: none
        declared).
    outcomes : bool
        False for decisions alone: every measure that compares with an observed class raises
        :class:`~fairness_core.audit.NeedsOutcomes`.
    group_columns, group_values, unknown, source, notes, provenance : as :class:`~fairness_core.audit.Audit`.
    """

    counts: np.ndarray
    groups: tuple[str, ...]
    classes: tuple[str, ...]
    ordered: bool = False
    favourable: tuple[str, ...] = ()
    outcomes: bool = True
    group_columns: tuple[str, ...] = ()
    group_values: Mapping[str, tuple[str, ...]] | None = field(default=None, repr=False)
    unknown: tuple[str, ...] = ()
    source: str = "predictions"
    notes: tuple[str, ...] = ()
    provenance: Mapping[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        counts = np.asarray(self.counts, dtype=np.int64)
        k, g = len(self.classes), len(self.groups)
        shape = (g, k, k) if self.outcomes else (g, k)
        if counts.shape != shape:
            raise ValueError(f"counts must have shape {shape} (groups, classes{', classes' if self.outcomes else ''}),"
                             f" got {counts.shape}")
        if k < 2 or g < 2:
            raise ValueError(f"a multiclass audit needs at least two classes and two groups, got {k} and {g}")
        if (counts < 0).any():
            raise ValueError("counts must be integers >= 0")
        empty = [name for name, size in zip(self.groups, counts.reshape(g, -1).sum(axis=1)) if size == 0]
        if empty:
            raise ValueError(f"group {empty[0]!r} is empty")
        bad = [f for f in self.favourable if f not in self.classes]
        if bad:
            raise ValueError(f"favourable class {bad[0]!r} is not one of the classes ({', '.join(map(repr, self.classes))})")
        if self.ordered:
            if len(self.favourable) != 1:
                raise ValueError(f"an ordered audit needs favourable= naming one end of the order, {self.classes[0]!r} "
                                 f"or {self.classes[-1]!r}")
            ordinal.sign_of(self.classes, self.favourable[0])
        counts.setflags(write=False)
        object.__setattr__(self, "counts", counts)
        for name in ("groups", "classes", "favourable", "group_columns", "notes", "unknown"):
            object.__setattr__(self, name, tuple(map(str, getattr(self, name))))

    # --- construction ---------------------------------------------------------------------------------------------

    @classmethod
    def from_predictions(cls, y_true: Any, y_pred: Any, sensitive_features: Any, order: Sequence[Any] | None = None,
                         *, favourable: Any = None, source: str = "predictions") -> "MulticlassAudit":
        """An audit from observed and predicted classes per person and their sensitive features.

        Parameters
        ----------
        y_true, y_pred : array-like
            The observed and the predicted class of each person (text or numbers; lists, NumPy, pandas, polars).
            ``y_true=None``: no outcome was observed, as :meth:`from_decisions`.
        sensitive_features : array-like, Series, DataFrame or dict
            One column, or several (the groups are then their intersections; :meth:`marginal` gives one alone).
        order : sequence, optional
            The classes from one end of the scale to the other (``["Low", "Medium", "High"]``). A value outside it
            is refused with its position. Without it the classes are the data's own, sorted, and unordered.
        favourable : class or sequence of classes
            Ordered: the end that is good for the person (required). Unordered: the class(es) good for the person,
            or None (no direction declared).

        Raises
        ------
        fairness_core.io.DataValidationError
            One sentence per problem, naming the value and its first position (class_counts' module docstring).

        Examples
        --------
        >>> m = MulticlassAudit.from_predictions(["L", "M", "H", "L", "H", "M"], ["L", "H", "H", "M", "M", "M"],
        ...                                      ["a", "a", "a", "b", "b", "b"], order=["L", "M", "H"],
        ...                                      favourable="L")
        >>> m.confusion("a").values.tolist()
        [[1, 0, 0], [0, 0, 1], [0, 0, 1]]
        >>> m.rates()["B"].round(3).tolist()      # a: one placed a tier too high (−1 of 3); b: one low, one high
        [-0.333, 0.0]
        """
        if y_true is None:
            return cls.from_decisions(y_pred, sensitive_features, order, favourable=favourable, source=source)
        return cls._built(count_classes(y_true, y_pred, sensitive_features, order), order, favourable, source)

    @classmethod
    def from_decisions(cls, y_pred: Any, sensitive_features: Any, order: Sequence[Any] | None = None, *,
                       favourable: Any = None, unknown: Iterable[str] = UNKNOWN_VALUES,
                       source: str = "decisions") -> "MulticlassAudit":
        """An audit of the classes a tool gave, where no outcome was observed: class shares, impact ratios at
        every cut (ordered) or of every class, the Local Law 144 summary per category; never an OFI or an error
        rate (:class:`NeedsOutcomes`). Blank and declined group values become the attribute's "unknown" category,
        as :meth:`fairness_core.audit.Audit.from_decisions`.

        >>> m = MulticlassAudit.from_decisions(["Low", "High", "Medium", "Low", "Low", "High"],
        ...                                    ["a", "a", "a", "b", "b", "b"], ["Low", "Medium", "High"],
        ...                                    favourable="Low")
        >>> m.has_outcomes, m.cuts
        (False, ['Low', 'Medium or better'])
        """
        fields = count_classes(None, y_pred, sensitive_features, order, unknown=tuple(unknown))
        return cls._built(fields, order, favourable, source)

    @classmethod
    def _built(cls, fields: dict[str, Any], order: Any, favourable: Any, source: str) -> "MulticlassAudit":
        classes = fields["classes"]
        if favourable is None:
            chosen: tuple[str, ...] = ()
        elif isinstance(favourable, (str, bytes, int, float, np.generic)):
            chosen = (_class_key(favourable),)
        else:
            chosen = tuple(_class_key(f) for f in favourable)
        if fields["ordered"] and len(chosen) != 1:
            raise ValueError(f"with an order, favourable= names the end that is good for the person: {classes[0]!r} "
                             f"or {classes[-1]!r}")
        missing = [c for c in chosen if c not in classes]
        if missing:
            raise ValueError(f"favourable class {missing[0]!r} is not one of the classes ({', '.join(map(repr, classes))})")
        provenance = {"classes": " < ".join(classes) if fields["ordered"] else ", ".join(classes),
                      "favourable": ", ".join(chosen) or "not declared",
                      "attribute(s) audited": " × ".join(fields["group_columns"])}
        return cls(favourable=chosen, source=source, provenance=provenance, **fields)

    # --- what it is -----------------------------------------------------------------------------------------------

    @property
    def has_outcomes(self) -> bool:
        """Whether observed classes stand behind the audit (False: decisions alone)."""
        return self.outcomes

    @property
    def k(self) -> int:
        return len(self.classes)

    @property
    def sign(self) -> int:
        """+1 when the favourable end is the last class of the order, −1 when it is the first (ordered only)."""
        self._require_order("the direction of the order")
        return ordinal.sign_of(self.classes, self.favourable[0])

    @property
    def direction(self) -> str:
        """The classes and which of them is good for the person, in words."""
        if self.ordered:
            return f"ordered {' < '.join(self.classes)}; favourable end: {self.favourable[0]} (declared)"
        if self.favourable:
            return f"classes {', '.join(self.classes)}; favourable: {', '.join(self.favourable)} (declared)"
        return f"classes {', '.join(self.classes)}; no class declared favourable"

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(self.group_columns) if self.group_values is not None and len(self.group_columns) > 1 else ()

    @property
    def known_groups(self) -> list[str]:
        return [g for g in self.groups if g not in self.unknown]

    @property
    def small_groups(self) -> list[str]:
        """Without outcomes, the known groups under 2 % of all rows: counted, never compared (Audit's rule)."""
        if self.outcomes:
            return []
        known = self.known_groups
        return [g for g, u in zip(known, under_share([self.n[g] for g in known], int(self.counts.sum()))) if u]

    @property
    def compared_groups(self) -> list[str]:
        return [g for g in self.known_groups if g not in self.small_groups]

    @functools.cached_property
    def n(self) -> pd.Series:
        """Rows per group."""
        return pd.Series(self.counts.reshape(len(self.groups), -1).sum(axis=1), index=list(self.groups), name="n")

    @property
    def placed(self) -> np.ndarray:
        """(groups, k): each group's rows per predicted class."""
        return self.counts.sum(axis=1) if self.outcomes else self.counts

    @property
    def cuts(self) -> list[str]:
        """The k − 1 cuts of an ordered audit, from the favourable end inward: its end class alone, then
        "c or better" for each next class."""
        self._require_order("cuts")
        toward = list(self.classes[::-1] if self.sign > 0 else self.classes)
        return [toward[0]] + [f"{c} or better" for c in toward[1:-1]]

    @property
    def cut_classes(self) -> list[str]:
        """The class at each of :attr:`cuts` (the least favourable class each cut still selects)."""
        self._require_order("cuts")
        return list(self.classes[::-1] if self.sign > 0 else self.classes)[:-1]

    def decisions(self) -> "MulticlassAudit":
        """The same audit with the outcomes set aside: each group's rows per predicted class (what the tool
        decided), for the questions decisions alone answer (the Local Law 144 rates)."""
        if not self.outcomes:
            return self
        return dataclasses.replace(self, counts=self.placed, outcomes=False)

    def require_outcomes(self, what: str) -> None:
        if not self.outcomes:
            raise NeedsOutcomes(f"{what} {NEEDS_OUTCOMES}; this audit answers class shares, impact ratios and the "
                                "Local Law 144 summary")

    def _require_order(self, what: str) -> None:
        if not self.ordered:
            raise ValueError(f"{what} need an order of the classes: pass order=[...] (from one end of the scale to "
                             "the other) and favourable= (the good end)")

    def _group(self, group: str) -> int:
        if group not in self.groups:
            raise ValueError(f"unknown group {group!r}; groups are {', '.join(self.groups)}")
        return self.groups.index(group)

    def _class(self, cls: Any) -> int:
        key = _class_key(cls)
        if key not in self.classes:
            raise ValueError(f"unknown class {cls!r}; classes are {', '.join(self.classes)}")
        return self.classes.index(key)

    # --- per group ------------------------------------------------------------------------------------------------

    def confusion(self, group: str) -> pd.DataFrame:
        """The k × k counts of ``group``: rows the observed class, columns the predicted one, in class order."""
        self.require_outcomes("a confusion matrix")
        return pd.DataFrame(self.counts[self._group(group)], index=pd.Index(self.classes, name="outcome"),
                            columns=pd.Index(self.classes, name="prediction"))

    def confusion_table(self) -> pd.DataFrame:
        """Every group's counts, long: group, outcome, prediction, count (decisions alone: group, prediction,
        count)."""
        g, k = len(self.groups), self.k
        if self.outcomes:
            grid = np.indices((g, k, k)).reshape(3, -1)
            return pd.DataFrame({"group": np.asarray(self.groups, dtype=object)[grid[0]],
                                 "outcome": np.asarray(self.classes, dtype=object)[grid[1]],
                                 "prediction": np.asarray(self.classes, dtype=object)[grid[2]],
                                 "count": self.counts.ravel()})
        grid = np.indices((g, k)).reshape(2, -1)
        return pd.DataFrame({"group": np.asarray(self.groups, dtype=object)[grid[0]],
                             "prediction": np.asarray(self.classes, dtype=object)[grid[1]], "count": self.counts.ravel()})

    def shares(self, alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
        """Each group's share placed in each class, with its exact 1 − ``alpha`` interval: group, class, n,
        placed, share, ci_low, ci_high."""
        check_alpha(alpha)
        placed = self.placed
        n = np.repeat(self.n.to_numpy(), self.k)
        low, high = ordinal.exact_interval(placed.ravel(), n, alpha)
        return pd.DataFrame({"group": np.repeat(np.asarray(self.groups, dtype=object), self.k),
                             "class": np.tile(np.asarray(self.classes, dtype=object), len(self.groups)),
                             "n": n, "placed": placed.ravel(), "share": placed.ravel() / n,
                             "ci_low": low, "ci_high": high})

    def benefits(self) -> pd.DataFrame:
        """The distribution of the ordinal benefit b = s·(r(ŷ) − r(y)) per group: group, benefit (tiers), count."""
        self.require_outcomes("the ordinal benefit")
        self._require_order("the ordinal benefit")
        b = ordinal.benefit_matrix(self.k, self.sign)
        values = np.arange(-(self.k - 1), self.k)
        per = np.stack([np.bincount((b + self.k - 1).ravel(), weights=c.ravel(), minlength=values.size)
                        for c in self.counts]).astype(np.int64)   # one pass per group
        return pd.DataFrame({"group": np.repeat(np.asarray(self.groups, dtype=object), values.size),
                             "benefit": np.tile(values, len(self.groups)), "count": per.ravel()})

    def rates(self, alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
        """Per group (docs/methods.md): n, B (the mean ordinal benefit, in tiers), the shares placed on the
        favourable and unfavourable side of their observed tier, and the ordinal FPR and FNR with exact intervals
        (:func:`fairness_core.statistics.ordinal.ordinal_rates`). Intervals for B and the OFI: :meth:`verdicts`."""
        check_alpha(alpha)
        self.require_outcomes("the ordinal error rates")
        self._require_order("the ordinal error rates")
        return ordinal.ordinal_rates(self.groups, self.counts, self.sign, alpha)

    def error_rate_gaps(self, alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
        """Every pair's gap in ordinal FNR and FPR with Bonferroni-simultaneous intervals, as the binary audit's
        equal-opportunity table (:func:`fairness_core.statistics.verdicts.error_rate_gaps`, on
        :func:`~fairness_core.statistics.ordinal.ordinal_cells`)."""
        self.require_outcomes("the ordinal error rates")
        self._require_order("the ordinal error rates")
        known = [self._group(g) for g in self.known_groups]
        gaps = error_rate_gaps(self.known_groups, ordinal.ordinal_cells(self.counts[known], self.sign), alpha)
        meaning = {"FNR": "placed on the unfavourable side of their observed tier",
                   "FPR": "placed on the favourable side of their observed tier"}
        assert set(meaning) == set(ERROR_RATES)
        return gaps.assign(meaning=gaps["rate"].map(meaning), rate="ordinal " + gaps["rate"])

    # --- as binary audits -----------------------------------------------------------------------------------------

    def class_direction(self, cls: Any) -> str:
        """What being placed in ``cls`` is for the person: one of :data:`fairness_core.statistics.ordinal.DIRECTIONS`
        (a middle tier of an order is neither end: "not declared")."""
        c = self.classes[self._class(cls)]
        if self.ordered:
            ends = {self.favourable[0]: "favourable",
                    (self.classes[0] if self.sign > 0 else self.classes[-1]): "unfavourable"}
            return ends.get(c, "not declared")
        if not self.favourable:
            return "not declared"
        return "favourable" if c in self.favourable else "unfavourable"

    def class_rates(self, cls: Any, alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
        """``cls`` against the rest where no direction is declared (a middle tier): per group the shares observed
        and placed in it, its recall and false-placement rate with exact intervals
        (:func:`fairness_core.statistics.ordinal.class_rates`); decisions alone: the share placed in it. No OFI and
        no pair verdict: which way is better for the person is not known (:meth:`no_direction` says why), so
        :meth:`one_vs_rest` of such a class needs ``positive_is``."""
        check_alpha(alpha)
        c = self._class(cls)
        if self.outcomes:
            return ordinal.class_rates(self.groups, self.counts, c, alpha)
        placed, n = self.counts[:, c].astype(float), self.n.to_numpy(dtype=float)   # decisions alone: the shares
        low, high = ordinal.exact_interval(placed, n, alpha)
        return pd.DataFrame({"n": n.astype(np.int64), "placed": placed.astype(np.int64), "share_placed": placed / n,
                             "share_placed_ci_low": low, "share_placed_ci_high": high},
                            index=pd.Index(list(self.groups), name="group"))

    def one_vs_rest(self, cls: Any, positive_is: str | None = None, *, undirected: bool = False) -> Audit:
        """The binary audit of ``cls`` against the rest: positive = placed in (observed in) ``cls``.

        Its direction is declared from ``favourable`` (:meth:`class_direction`): a favourable class is a benefit,
        an unfavourable one a harm (labels and predictions flipped, as ``Audit.from_predictions(...,
        positive_is="harm")``, so positive there means "not in ``cls``"). ``positive_is`` overrides it.

        A class of undeclared direction (a middle tier, or any class when no class was declared favourable) has no
        binary audit by default: being placed in it is neither clearly a benefit nor a harm, so OFI, the
        four-fifths rule and every pair verdict are undefined, and a ``ValueError`` says so. What is defined
        there, its rates with exact intervals (NaN with the reason where nobody could be so placed), is
        :meth:`class_rates`; a user who declares its direction passes ``positive_is``. ``undirected=True`` returns
        the audit anyway (``positive_is`` None), for pages that read its rates alone and never its verdicts.

        Its one note names the class, and says so when nobody was observed in it (naming the rates that are then
        undefined in this audit's own orientation); the category audit's own notes, about the data as a whole, stay
        with it.

        >>> m = MulticlassAudit.from_predictions([0, 1, 2, 2, 1, 0], [0, 2, 2, 1, 1, 0], ["a"] * 3 + ["b"] * 3,
        ...                                      order=[0, 1, 2], favourable=2)
        >>> m.one_vs_rest(2).cms["a"], m.one_vs_rest(2).positive_is
        (ConfusionMatrix(tp=1, fn=0, fp=1, tn=1), 'benefit')
        >>> m.one_vs_rest(1)
        Traceback (most recent call last):
        ...
        ValueError: '1' is neither end of the order, so being placed in it is neither clearly a benefit nor a harm: its one-vs-rest audit has no direction and no pair verdict. Its rates with intervals: class_rates('1'); to audit it as a binary decision, declare its direction: one_vs_rest('1', positive_is='benefit' or 'harm').
        """
        c = self._class(cls)
        name = self.classes[c]
        declared = {"favourable": "benefit", "unfavourable": "harm", "not declared": None}[self.class_direction(name)]
        positive_is = declared if positive_is is None else positive_is
        if positive_is is None and not undirected:
            raise ValueError(f"{self.no_direction(name)}: its one-vs-rest audit has no direction and no pair verdict. "
                             f"Its rates with intervals: class_rates({name!r}); to audit it as a binary decision, "
                             f"declare its direction: one_vs_rest({name!r}, positive_is='benefit' or 'harm').")
        if self.outcomes:
            tp = self.counts[:, c, c]
            cells = np.column_stack([tp, self.counts[:, c, :].sum(axis=1) - tp, self.counts[:, :, c].sum(axis=1) - tp])
            cells = np.column_stack([cells, self.n.to_numpy() - cells.sum(axis=1)])
        else:
            sel = self.counts[:, c]
            cells = np.column_stack([sel, 0 * sel, 0 * sel, self.n.to_numpy() - sel])
        outcome = f"placed in {name}"
        note = f"One-vs-rest audit of the class {name!r} ({self.direction})."
        if self.outcomes and int(self.counts[:, c, :].sum()) == 0:
            # flipped (a harm), positive means "not in the class": nobody observed in it is nobody observed negative
            rates, placement = (("FPR and TNR", "false negative") if positive_is == "harm"
                                else ("TPR and FNR", "false positive"))
            note += (f" Nobody was observed in {name!r}: its {rates} are undefined here, and every placement in it "
                     f"is a {placement}.")
        if positive_is == "harm":
            cells, outcome = cells[:, ::-1], opposite_outcome(outcome)   # TP, FN, FP, TN = TN, FP, FN, TP
        elif positive_is is None:
            note += f" {self.no_direction(name)}: read its rates, not its verdicts."
        return self._binary(cells, outcome, positive_is, note, f"{name} against the rest")

    def no_direction(self, cls: Any) -> str:
        """Why ``cls`` against the rest has no direction, in one clause ("" for a class whose direction is declared).

        >>> m = MulticlassAudit.from_decisions(["L", "M", "H", "L"], list("aabb"), ["L", "M", "H"], favourable="L")
        >>> m.no_direction("M")
        "'M' is neither end of the order, so being placed in it is neither clearly a benefit nor a harm"
        """
        name = self.classes[self._class(cls)]
        if self.class_direction(name) != "not declared":
            return ""
        why = ("is neither end of the order" if self.ordered
               else "has no declared direction (no class was declared favourable)")
        return f"{name!r} {why}, so being placed in it is neither clearly a benefit nor a harm"

    def at_cut(self, cls: Any) -> Audit:
        """The binary audit of the cut "``cls`` or better" (ordered only): positive = observed (predicted) in
        ``cls`` or a class on its favourable side, a benefit.

        >>> m = MulticlassAudit.from_decisions(["L", "M", "H", "L", "H", "H"], ["a"] * 3 + ["b"] * 3,
        ...                                    ["L", "M", "H"], favourable="L")
        >>> m.at_cut("M").selection_rates().round(3).tolist()
        [0.667, 0.333]
        """
        self._require_order("cuts")
        c = self._class(cls)
        u = np.arange(self.k) if self.sign > 0 else np.arange(self.k)[::-1]   # favourable rank of each class
        if u[c] == 0:
            raise ValueError(f"{self.classes[c]!r} is the unfavourable end: its cut would select everyone")
        good = u >= u[c]
        label = self.cuts[self.k - 1 - u[c]]
        if self.outcomes:
            inner = lambda a, b: self.counts[:, a][:, :, b].sum(axis=(1, 2))   # noqa: E731
            cells = np.column_stack([inner(good, good), inner(good, ~good), inner(~good, good), inner(~good, ~good)])
        else:
            sel = self.counts[:, good].sum(axis=1)
            cells = np.column_stack([sel, 0 * sel, 0 * sel, self.n.to_numpy() - sel])
        return self._binary(cells, label, "benefit", f"Cut at {label!r} against the rest ({self.direction}).",
                            f"cut {label}")

    def _binary(self, cells: np.ndarray, outcome: str, positive_is: str | None, note: str, what: str) -> Audit:
        cms = {g: ConfusionMatrix(*map(int, row)) for g, row in zip(self.groups, cells)}
        return Audit(cms, source=f"{self.source}: {what}", notes=(note,), positive_outcome=outcome,
                     group_columns=self.group_columns, positive_is=positive_is, group_values=self.group_values,
                     outcomes=self.outcomes, unknown=self.unknown,
                     provenance={**self.provenance, "one-vs-rest": what})

    # --- between groups -------------------------------------------------------------------------------------------

    def impact_ratios(self, alpha: float = DEFAULT_ALPHA, adjust: str = "holm", by: str | None = None,
                      di_method: str = "auto", reference: str | None = None) -> VerdictTable:
        """Each pair's impact ratio at every cut (``by="cut"``, the default with an order) or of every class's
        share (``by="class"``, the default without), with intervals adjusted across all cuts (classes) and pairs
        at once (:func:`fairness_core.statistics.ordinal.ratio_verdicts`). The groups compared are
        :attr:`compared_groups`; a ``VerdictTable`` whose ``levels.di`` is the level of the adjusted intervals.

        >>> m = MulticlassAudit.from_decisions(["L"] * 60 + ["M"] * 20 + ["H"] * 20 + ["L"] * 30 + ["M"] * 30 + ["H"] * 40,
        ...                                    ["a"] * 100 + ["b"] * 100, ["L", "M", "H"], favourable="L")
        >>> m.impact_ratios()[["cut", "group_i", "di", "verdict"]].round(2).values.tolist()
        [['L', 'b', 0.5, 'adverse impact'], ['M or better', 'b', 0.75, 'materiality unclear']]
        """
        by = by or ("cut" if self.ordered else "class")
        keep = [self._group(g) for g in self.compared_groups]
        placed = self.placed[keep]
        if by == "cut":
            self._require_order("impact ratios at cuts")
            selected, labels = ordinal.cut_counts(placed, self.sign).T, self.cuts
            directions = ["favourable"] * len(labels)
        elif by == "class":
            selected, labels = placed.T, list(self.classes)
            directions = [self.class_direction(c) for c in self.classes]
        else:
            raise ValueError(f"by must be 'cut' or 'class', got {by!r}")
        if reference is not None and reference not in self.compared_groups:
            raise ValueError(f"{reference!r} is not a compared group ({', '.join(self.compared_groups)})")
        return ordinal.ratio_verdicts(self.compared_groups, selected, self.n.to_numpy()[keep], labels, directions,
                                      alpha, adjust, di_method, reference, label_column=by)

    def ordinal_audit(self) -> Any:
        """The ordinal benefit as an amount: :class:`fairness_core.continuous.ContinuousAudit` of the tiers' ranks
        (observed and predicted), the favourable end declared as the benefit's direction. Its ``by_group()`` gives
        each group's B with its interval; its verdicts are :meth:`verdicts`."""
        self.require_outcomes("the ordinal OFI")
        self._require_order("the ordinal OFI")
        return self._ordinal

    def verdicts(self, tolerance: float, alpha: float = DEFAULT_ALPHA, adjust: str = "holm") -> Any:
        """The ordinal OFI verdicts: B_i − B_j in tiers against ``tolerance`` (in tiers), with the amounts' interval
        and the binary audit's words (``ContinuousAudit.verdicts``, on :meth:`ordinal_audit`). No ratio question is
        asked there (``band=None``): a ratio of mean ranks depends on where the ranks start, so OFI inside the
        tolerance reads "no bias detected" and a systemic disparity is read from :meth:`impact_ratios` at the cuts.
        Its sentences give every amount in tiers ("0.141 tiers more benefit per person")."""
        return self.ordinal_audit().verdicts(tolerance, alpha=alpha, adjust=adjust, band=None, unit="tiers")

    # --- several attributes ---------------------------------------------------------------------------------------

    def marginal(self, attribute: str) -> "MulticlassAudit":
        """The audit of one attribute alone, its values pooled over the other attributes (named as
        :meth:`fairness_core.audit.Audit.marginal` names them)."""
        if attribute not in self.attributes:
            raise ValueError(f"{attribute!r} is not one of this audit's attributes "
                             f"({', '.join(map(repr, self.attributes)) or 'it has a single one'})")
        assert self.group_values is not None
        col = self.group_columns.index(attribute)
        value_of = [self.group_values[g][col] for g in self.groups]
        values = list(dict.fromkeys(value_of))
        named = [f"{attribute} = {v}" if text.says_nothing_alone(v) else v for v in values]
        target = np.array([values.index(v) for v in value_of])
        pooled = np.zeros((len(values), *self.counts.shape[1:]), dtype=np.int64)
        np.add.at(pooled, target, self.counts)
        unknown = tuple(named[values.index(value_of[self._group(g)])] for g in self.unknown
                        if value_of[self._group(g)] == UNKNOWN_CATEGORY)
        return dataclasses.replace(self, counts=pooled, groups=tuple(named), group_columns=(attribute,),
                                   group_values={n: (v,) for n, v in zip(named, values)},
                                   unknown=tuple(dict.fromkeys(unknown)), source=f"{self.source}, by {attribute} alone",
                                   provenance={**self.provenance, "attribute audited": f"{attribute} alone"})


    @functools.cached_property
    def _ordinal(self) -> Any:
        return _ordinal_audit(self)


def _ordinal_audit(audit: MulticlassAudit) -> Any:
    from .continuous import ContinuousAudit   # the amounts' audit: the ordinal benefit is an amount in tiers

    known = [audit._group(g) for g in audit.known_groups]
    counts = audit.counts[known]
    k = audit.k
    cell = np.repeat(np.arange(counts.size), counts.ravel())   # one row per person, rebuilt from the counts
    group = np.asarray(audit.known_groups, dtype=object)[cell // (k * k)]
    column = " × ".join(audit.group_columns) or "group"
    return ContinuousAudit.from_predictions((cell // k) % k, cell % k, {column: group},
                                            positive_is="benefit" if audit.sign > 0 else "harm")
