"""One vocabulary (issue 25): alpha is the error rate, adjust a registry key, reference a group or a named
mode, many pairs typed results. The former spellings (issue 51, part 4) are refused, naming what replaced them."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from fairness_core import ConfusionMatrix as CM
from fairness_core import inference
from fairness_core.audit import Audit
from fairness_core.vocabulary import ADJUSTMENTS, ALPHA_RULE, Reference, adjustment

A, B = CM(5, 1, 9, 20), CM(30, 12, 4, 60)
AUDIT = Audit({"a": CM(300, 20, 90, 590), "b": CM(250, 120, 40, 590), "c": CM(20, 5, 3, 30)}, positive_is="benefit")


def test_alpha_is_the_error_rate_and_the_former_level_is_refused():
    r = inference.ofi_test(A, B, alpha=0.1)
    assert r.level == pytest.approx(0.9) and r.alpha == pytest.approx(0.1)
    with pytest.raises(TypeError, match="level"):
        inference.ofi_test(A, B, level=0.9)
    with pytest.raises(TypeError, match="level"):
        inference.di_interval(A, B, level=0.9)
    with pytest.raises(ValueError, match=re.escape(ALPHA_RULE + " (got 0.9)")):   # never read as a level
        inference.ofi_test(A, B, 0.9)
    # alpha = 0.1 is the 90 % interval: the same as the two one-sided 5 % bounds of the pairs' limits
    low, high = inference.ofi_pairs(A.fp, A.fn, A.n, B.fp, B.fn, B.n).bounds(0.05)
    assert (r.ci_low, r.ci_high) == pytest.approx((float(low), float(high)), abs=1e-12)


def test_ofi_arrays_is_typed_and_the_former_keys_and_levels_are_refused():
    args = ([3, 0, 7], [1, 0, 2], [40, 40, 90], [9, 0, 1], [2, 0, 4], [60, 5000, 70])
    r = inference.ofi_arrays(*args, alpha=0.05)
    assert isinstance(r, inference.OFIArrays) and r.level == 0.95
    for k in range(3):   # each pair as the one-pair test gives it
        one = inference.ofi_test(CM(0, args[1][k], args[0][k], args[2][k] - args[0][k] - args[1][k]),
                                 CM(0, args[4][k], args[3][k], args[5][k] - args[3][k] - args[4][k]))
        assert (r.ci_low[k], r.ci_high[k], r.p_value[k]) == pytest.approx((one.ci_low, one.ci_high, one.p_value))
    with pytest.raises(TypeError):
        r["ci_low_0.95"]                                   # noqa: B018  (fields, not keys: r.ci_low)
    with pytest.raises(TypeError, match="levels"):
        inference.ofi_arrays(*args, levels=(0.95,))
    with pytest.raises(ValueError, match=re.escape(ALPHA_RULE)):   # the former positional tuple of levels
        inference.ofi_arrays(*args, (0.95, 0.9), "auto")
    d = inference.di_arrays([3, 9], [10, 12], [9, 1], [12, 30], alpha=0.05, method="exact")
    assert d.level == 0.95 and not hasattr(d, "keys")
    with pytest.raises(ValueError, match=re.escape(ALPHA_RULE)):
        inference.di_arrays([3, 9], [10, 12], [9, 1], [12, 30], (0.95,), "exact")


def test_one_registry_of_adjustments():
    assert tuple(ADJUSTMENTS) == inference.ADJUSTMENTS == ("holm", "bh", "none")
    assert inference.ADJUSTED_LABEL == {k: a.prefix for k, a in ADJUSTMENTS.items()}
    with pytest.raises(ValueError, match="adjustment"):
        adjustment("Holm")


def test_match_table_adjust_is_a_key_and_the_former_bool_is_refused():
    for flag in (True, False):
        with pytest.raises(ValueError, match="expected one of holm, bh, none"):
            AUDIT.match_table(["PPR", "B"], adjust=flag)
    bh = AUDIT.match_table(["PPR", "B"], adjust="bh")
    np.testing.assert_allclose(bh["adjusted p-value"], inference.adjust_p_values(bh["p-value"], "bh"))
    from statsmodels.stats.multitest import multipletests
    np.testing.assert_allclose(bh["adjusted p-value"], multipletests(bh["p-value"], method="fdr_bh")[1])


def test_reference_none_is_refused_naming_the_mode_each_function_takes():
    for call, mode in ((lambda: AUDIT.match_table(["PPR"], reference=None), "REST"),
                       (lambda: AUDIT.reference_for("a", None), "REST"),
                       (lambda: AUDIT.difference(["B", "PPR"], reference=None), "RANGE"),
                       (lambda: AUDIT.ratio("PPR", reference=None), "RANGE"),
                       (lambda: AUDIT.verdicts(reference=None), "PAIRS")):
        with pytest.raises(ValueError, match=rf"reference must be a group's name or .*Reference\.{mode}.*got None"):
            call()
    assert AUDIT.reference_for("a") == AUDIT.rest_of("a") == AUDIT.reference_for("a", Reference.REST)


def test_a_group_named_like_a_mode_is_a_group():
    audit = Audit({"rest": CM(30, 2, 9, 50), "range": CM(20, 8, 3, 60)}, positive_is="benefit")
    assert audit.reference_for("range", "rest") == audit.cms["rest"]
    assert audit.difference("PPR", reference="rest").loc["PPR", "group_low"] in ("rest", "range")
    with pytest.raises(ValueError):
        audit.difference("PPR", reference=Reference.REST)


def test_match_test_reference_is_names_what_the_reference_is_and_the_former_keyword_is_refused():
    from fairness_core import match

    a, b = CM(10, 2, 1, 0), CM(300, 100, 450, 150)
    with pytest.raises(TypeError, match="reference"):
        match.test("PPR", a, b, reference="population")
    assert match.test("PPR", a, b, reference_is="sample").p_value > match.test("PPR", a, b,
                                                                              reference_is="population").p_value


def test_the_match_overview_names_the_tables_adjustment():
    from fairness_core import plots

    for key, title in (("holm", "Holm-adjusted p"), ("bh", "BH-adjusted p"), ("none", "−log10 p")):
        table = AUDIT.match_table(["PPR", "B"], adjust=key)
        assert table.attrs["adjust"] == key
        assert title in plots.match_overview(table, 0.05).layout.xaxis.title.text


def test_paired_interval_takes_alpha_and_the_former_level_is_refused():
    from fairness_core.compare import paired_interval

    low, high = paired_interval([10, 3], [2, 0], [100, 40], alpha=0.1)
    assert (low < high).all() and low[0] > 0
    with pytest.raises(TypeError, match="level"):
        paired_interval([10, 3], [2, 0], [100, 40], level=0.9)
    with pytest.raises(ValueError, match=re.escape(ALPHA_RULE + " (got 0.9)")):
        paired_interval([10, 3], [2, 0], [100, 40], 0.9)


def test_ofi_changes_takes_alpha_and_the_former_level_is_refused():
    from fairness_core.trend import ofi_changes

    cells = [[30, 5, 9, 60]], [[40, 9, 2, 60]], [[30, 3, 12, 60]], [[40, 9, 2, 60]]
    wide, narrow = ofi_changes(*cells, alpha=0.01), ofi_changes(*cells, alpha=0.1)
    assert wide["ci_low"][0] < narrow["ci_low"][0] < narrow["estimate"][0] < narrow["ci_high"][0] < wide["ci_high"][0]
    with pytest.raises(TypeError, match="level"):
        ofi_changes(*cells, level=0.9)
    with pytest.raises(ValueError, match=re.escape(ALPHA_RULE + " (got 0.9)")):
        ofi_changes(*cells, alpha=0.9)
