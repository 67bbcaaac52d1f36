"""The library's shared words: the error rate ``alpha``, the multiplicity adjustments and the reference modes.

One word, one meaning, everywhere a test, an interval or a verdict takes it:

``alpha``
    The error rate. A test rejects when p < alpha; an interval is at confidence 1 − alpha.
    ``level`` appears only in *results*, as the confidence level 1 − alpha of the interval they hold
    (``OFIResult.level``, ``verdicts.attrs["ofi_level"]``). The former ``level=`` arguments of
    :func:`fairness_core.inference.ofi_test` and :func:`~fairness_core.inference.di_interval` still work,
    with a :class:`DeprecationWarning`, until the next release.
``adjust``
    A key of :data:`ADJUSTMENTS`: ``"holm"``, ``"bh"`` or ``"none"``. Each entry carries every label the
    pages, the report and the readings print for it.
``reference``
    A group name, or one of the :class:`Reference` modes. ``None`` used to mean "the rest of the data" in
    ``Audit.match_table`` but "largest against smallest" in ``Audit.difference``; it still works (with a
    :class:`DeprecationWarning`) and means what it meant there.

This module imports nothing else of the package but ``_compat`` (the deprecations it still accepts).

>>> ADJUSTMENTS["bh"].name, ADJUSTMENTS["holm"].prefix + "p"
('Benjamini–Hochberg', 'Holm-adjusted p')
>>> adjustment("Holm")
Traceback (most recent call last):
ValueError: unknown p-value adjustment method 'Holm'; expected one of holm, bh, none
"""

from __future__ import annotations

from .._compat import FairnessDeprecationWarning

import enum
import numbers
import warnings
from dataclasses import dataclass
from typing import Union

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


def adjust_from_bool(adjust: bool | str, where: str) -> str:
    """``adjust`` as a key, accepting the former bool of ``where`` (True: "holm", False: "none") with a warning."""
    if isinstance(adjust, bool):
        warnings.warn(f"{where}: adjust={adjust} is deprecated; pass adjust="
                      f"{'holm' if adjust else 'none'!r} (a key of fairness_core.vocabulary.ADJUSTMENTS)",
                      FairnessDeprecationWarning, stacklevel=3)
        return "holm" if adjust else "none"
    return adjustment(adjust).key


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


def reference_or_mode(reference: ReferenceLike | None, none_meant: Reference, where: str) -> ReferenceLike:
    """``reference`` with the former ``None`` replaced, with a warning, by the mode it meant in ``where``."""
    if reference is None:
        warnings.warn(f"{where}: reference=None is deprecated; pass reference=Reference.{none_meant.name} "
                      "(fairness_core.vocabulary.Reference), or a group's name", FairnessDeprecationWarning, stacklevel=3)
        return none_meant
    if not isinstance(reference, (str, Reference)):
        raise ValueError(f"reference must be a group's name or a Reference mode, got {reference!r}")
    return reference


def alpha_from_level(alpha: float | None, level: float | None, where: str, default: float = DEFAULT_ALPHA) -> float:
    """The error rate from ``alpha``, or from the former confidence ``level`` (1 − alpha) with a warning.

    ``alpha`` is always an error rate, whatever its value (:func:`check_alpha`): it is never guessed to be a level.
    """
    if level is not None:
        if alpha is not None and alpha != default:
            raise ValueError(f"{where}: give alpha (the error rate) or the deprecated level, not both")
        warnings.warn(f"{where}: level= is deprecated; pass alpha = 1 − level (here alpha={1 - level:g})",
                      FairnessDeprecationWarning, stacklevel=3)
        _check_confidence(level)
        return 1 - level
    if alpha is None:
        return default
    check_alpha(alpha)
    return float(alpha)


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


def _check_confidence(level: float) -> None:
    if not (isinstance(level, (int, float)) and 0.5 <= level < 1):
        raise ValueError(f"level must be in [0.5, 1), got {level!r}")


__all__ = ["DEFAULT_ALPHA", "Adjustment", "ADJUSTMENTS", "ADJUSTMENT_KEYS", "adjustment", "adjust_from_bool",
           "Reference", "ReferenceLike", "reference_or_mode", "alpha_from_level", "check_alpha",
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
