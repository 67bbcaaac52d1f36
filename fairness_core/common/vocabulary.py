"""The library's shared words: the error rate ``alpha``, the multiplicity adjustments and the reference modes.

One word, one meaning, everywhere a test, an interval or a verdict takes it:

``alpha``
    The error rate. A test rejects when p < alpha; an interval is at confidence 1 − alpha.
    ``level`` appears only in *results*, as the confidence level 1 − alpha of the interval they hold
    (``OFIResult.level``, ``verdicts.attrs["ofi_level"]``). Every entry point refuses an ``alpha`` outside
    (0, 0.5) with one sentence, :data:`ALPHA_RULE` (:func:`check_alpha`): 0.95 is a confidence level given
    where the error rate belongs, never read as one.
``adjust``
    A key of :data:`ADJUSTMENTS`: ``"holm"``, ``"bh"`` or ``"none"``. Each entry carries every label the
    pages, the report and the readings print for it.
``reference``
    A group name, or one of the :class:`Reference` modes (:func:`check_reference`); never ``None``.

This module imports nothing else of the package.

>>> ADJUSTMENTS["bh"].name, ADJUSTMENTS["holm"].prefix + "p"
('Benjamini–Hochberg', 'Holm-adjusted p')
>>> adjustment("Holm")
Traceback (most recent call last):
ValueError: unknown p-value adjustment method 'Holm'; expected one of holm, bh, none
"""

from __future__ import annotations

import enum
import numbers
import warnings
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

#: The error rate when none is given.
DEFAULT_ALPHA = 0.05


@dataclass(frozen=True)
class Adjustment:
    """A multiplicity adjustment and every way the app and the report name it."""

    key: str          #: the argument value: "holm" | "bh" | "none"
    name: str         #: the procedure's name ("Holm", "Benjamini–Hochberg", "none")
    choice: str       #: the option as a selectbox shows it ("Holm (family-wise error)")
    controls: str     #: what it keeps at alpha, in a clause ("family-wise", "false discovery rate")
    prefix: str       #: before "p" or "99.7 % CI" ("Holm-adjusted "; "" for none)
    after: str        #: a clause ending a sentence ("after Holm adjustment", "without adjustment")


#: The multiplicity adjustments, by argument value, in the order the pages offer them.
ADJUSTMENTS: dict[str, Adjustment] = {
    "holm": Adjustment("holm", "Holm", "Holm (family-wise error)", "family-wise", "Holm-adjusted ",
                       "after Holm adjustment"),
    "bh": Adjustment("bh", "Benjamini–Hochberg", "Benjamini–Hochberg (false discovery rate)",
                     "false discovery rate", "BH-adjusted ", "after BH adjustment"),
    "none": Adjustment("none", "none", "none (each pair alone)", "per pair, unadjusted", "",
                       "without adjustment"),
}

#: The argument values alone.
ADJUSTMENT_KEYS: tuple[str, ...] = tuple(ADJUSTMENTS)


def adjustment(key: str) -> Adjustment:
    """The registry entry of ``key``; ValueError naming the choices for anything else."""
    try:
        return ADJUSTMENTS[key]
    except (KeyError, TypeError):
        raise ValueError(f"unknown p-value adjustment method {key!r}; expected one of "
                         f"{', '.join(ADJUSTMENT_KEYS)}") from None


class Reference(enum.Enum):
    """What a group is compared with, when it is not one named group.

    A plain string is always a group's name (a group may well be called "rest"); a mode is one of these.
    """

    #: Each group against all the other groups pooled (the MATCH table's default).
    REST = "the rest of the data"
    #: The group with the largest value against the one with the smallest (``difference``, ``ratio``).
    RANGE = "largest against smallest"
    #: Every unordered pair, group j the one selected more often (the verdicts' default).
    PAIRS = "every pair"

    def __repr__(self) -> str:
        return f"Reference.{self.name}"


ReferenceLike = Union[str, Reference]


def check_reference(reference: ReferenceLike, default: Reference, where: str) -> ReferenceLike:
    """``reference`` as given when it is a group's name or a :class:`Reference` mode; anything else (``None``
    included) is refused, naming ``where``'s default mode."""
    if not isinstance(reference, (str, Reference)):
        raise ValueError(f"{where}: reference must be a group's name or a fairness_core.vocabulary.Reference mode "
                         f"(the default here is Reference.{default.name}), got {reference!r}")
    return reference


#: The one sentence every entry point that takes ``alpha`` refuses a bad one with (:func:`check_alpha`), before
#: "(got …)". A confidence level passed as ``alpha`` (0.95, the habit of statsmodels' and SciPy's ``level``) is the
#: mistake it is written for.
ALPHA_RULE = ("alpha is the error rate, not the confidence level: a number in (0, 0.5); alpha=0.05 gives a 95 % "
              "interval")


def alpha_refusal(alpha: object) -> str:
    """The refusal of a bad ``alpha``: :data:`ALPHA_RULE` and what was given (a page or the CLI prints it)."""
    shown = repr(float(alpha)) if isinstance(alpha, numbers.Real) and not isinstance(alpha, bool) else repr(alpha)
    return f"{ALPHA_RULE} (got {shown})"


def check_alpha(alpha: object) -> float:
    """The one check of an error rate α (an interval is at confidence 1 − α): a number in (0, 0.5).

    α ≥ 0.5 would be an interval at a confidence of 50 % or less; it is almost always a confidence level given
    where the error rate belongs (statsmodels' and SciPy's ``level=0.95``), and it is refused rather than read as
    a level. So are α ≤ 0, NaN, bools and anything that is not a number. Returns α as a float.

    >>> check_alpha(0.05)
    0.05
    >>> check_alpha(0.95)
    Traceback (most recent call last):
    ValueError: alpha is the error rate, not the confidence level: a number in (0, 0.5); alpha=0.05 gives a 95 % interval (got 0.95)
    """
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 < alpha < 0.5:
        raise ValueError(alpha_refusal(alpha))
    return float(alpha)


def check_alphas(alpha: Any) -> Any:
    """:func:`check_alpha` for one error rate or an array of them (one per pair): a float array, or the first bad
    value refused with :data:`ALPHA_RULE`.

    >>> check_alphas([0.05, 0.01]).tolist()
    [0.05, 0.01]
    >>> check_alphas([0.05, 0.95])
    Traceback (most recent call last):
    ValueError: alpha is the error rate, not the confidence level: a number in (0, 0.5); alpha=0.05 gives a 95 % interval (got 0.95)
    """
    given = np.asarray(alpha)
    if given.dtype.kind not in "iuf":      # text, None, objects, bools: not an error rate
        raise ValueError(alpha_refusal(alpha))
    values = given.astype(float)
    bad = ~((values > 0) & (values < 0.5))
    if bad.any():
        raise ValueError(alpha_refusal(values[bad].flat[0]))
    return values


__all__ = ["DEFAULT_ALPHA", "Adjustment", "ADJUSTMENTS", "ADJUSTMENT_KEYS", "adjustment",
           "Reference", "ReferenceLike", "check_reference", "check_alpha", "check_alphas", "ALPHA_RULE", "alpha_refusal",
           "POSITIVE_IS", "resolve_positive_is", "opposite_outcome"]


#: What a model's positive prediction can be declared to be, for the person it is about.
POSITIVE_IS = ("benefit", "harm")


def resolve_positive_is(positive_is: str | None, what: str) -> str | None:
    """``positive_is`` checked, with a warning when it is not given.

    Returns "benefit", "harm", or None (undeclared: a benefit is assumed and a :class:`UserWarning` says so).
    """
    if positive_is is None:
        warnings.warn(f"positive_is not given: assuming a positive prediction ({what}) is a benefit for the person. "
                      "If it is a harm (e.g. 'likely to reoffend'), every verdict's direction is reversed: pass "
                      "positive_is='harm'.", UserWarning, stacklevel=3)
        return None
    if positive_is not in POSITIVE_IS:
        raise ValueError(f"positive_is must be 'benefit' or 'harm', got {positive_is!r}")
    return positive_is


def opposite_outcome(outcome: str) -> str:
    """The words for the opposite of an outcome, composed here only: "not X" for X, and X for "not X" (a leading
    "not " removed, so that flipping a flipped outcome never reads "not not X").

    Words whose opposite is not their negation ("low risk" against "high risk") cannot be derived: a demo or a
    caller states its negative outcome itself where it knows one.

    >>> opposite_outcome("hired"), opposite_outcome("not a recidivist"), opposite_outcome("Not approved")
    ('not hired', 'a recidivist', 'approved')
    >>> opposite_outcome(opposite_outcome("score >= 0.5"))
    'score >= 0.5'
    """
    text = str(outcome)
    stripped = text.lstrip()
    if stripped[:4].lower() == "not " and stripped[4:].strip():
        return stripped[4:].lstrip()
    return f"not {text}"
