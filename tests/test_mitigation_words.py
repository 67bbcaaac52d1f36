"""fairness_core.wording.mitigation: the sentences of the Compare and Mitigate page and of the rule file, checked
against the statistics they name (the targets, their measures as target_measures writes them, the score transforms)
and against worked examples."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from fairness_core.statistics.mitigation import target_measures
from fairness_core.statistics.mitigation.inputs import TARGETS
from fairness_core.statistics.mitigation.rule import SCORE_TRANSFORMS
from fairness_core.wording import mitigation as words


def test_every_target_is_named_with_the_measures_target_measures_writes() -> None:
    assert set(words.TARGET_WORDS) == set(TARGETS) - {"none"}
    assert words.TARGET_MEASURES == {"ofi": ("largest |OFI|",), "demographic_parity": ("selection-rate gap",),
                                     "four_fifths": ("smallest impact ratio",), "equal_opportunity": ("TPR gap",),
                                     "equalized_odds": ("TPR gap", "FPR gap")}
    rng = np.random.default_rng(3)
    y, pred = rng.integers(0, 2, 400), rng.integers(0, 2, 400)
    written = set(target_measures(y, pred, np.where(np.arange(400) % 2, "a", "b"), "accuracy", replicates=100)["measure"])
    assert {m for measures in words.TARGET_MEASURES.values() for m in measures} <= written


@pytest.mark.parametrize("transform", sorted(SCORE_TRANSFORMS))
def test_the_score_direction_names_the_transform_the_score_and_the_outcome(transform: str) -> None:
    text = words.score_direction("decile", transform, "not a recidivist")
    assert "higher = more likely not a recidivist" in text
    shown = {"negate": "−(decile)", "complement": "1 − (decile)", "identity": "decile as it is"}[transform]
    assert shown in text
    assert len({words.score_direction("decile", t, "x") for t in SCORE_TRANSFORMS}) == len(SCORE_TRANSFORMS)


def test_an_interval_reads_as_its_numbers_or_undefined_with_the_reason() -> None:
    row = pd.Series({"before estimate": 0.1234, "before ci_low": 0.1, "before ci_high": 0.15, "before note": "",
                     "after estimate": math.nan, "after ci_low": math.nan, "after ci_high": math.nan,
                     "after note": "one group has no actual positives"})
    assert words.interval_text(row, "before") == "0.123 [0.100, 0.150]"
    assert words.interval_text(row, "after") == "undefined (one group has no actual positives)"


def test_a_mixture_and_the_cross_fitted_reading() -> None:
    assert words.mixture_text(((0.5, 0.25), (0.75, 0.75))) == "0.5 (25%) or 0.75 (75%)"
    assert words.mixture_text(((math.inf, 1.0),)) == "nobody (100%)"
    before = pd.Series({"max_abs_ofi": 0.2, "max_abs_ofi_ci_low": 0.1, "max_abs_ofi_ci_high": 0.3,
                        "accuracy": 0.8, "accuracy_ci_low": 0.75, "accuracy_ci_high": 0.85})
    after = before.copy()
    after["max_abs_ofi"] = math.nan
    text = words.cross_fitted_reading(before, after, "accuracy", "accuracy", "95 % simultaneous", 0.05)
    assert text.startswith("Cross-fitted over all rows, the largest |OFI| goes from 0.200 [0.100, 0.300] with one "
                           "shared threshold to undefined with per-group thresholds")
    assert text.endswith("accuracy from 0.800 [0.750, 0.850] to 0.800 [0.750, 0.850] (intervals: 95 % simultaneous "
                         "for |OFI|, 95% for accuracy).")
    assert set(words.estimates(5)) == {"split", "cross-fit"} and "5 folds" in words.estimates(5)["cross-fit"]
