"""One vocabulary (issue 25): alpha is the error rate, adjust a registry key, reference a group or a named
mode, many pairs typed results. The former spellings still work for one release, warn, and give the same numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairness_core import ConfusionMatrix as CM
from fairness_core import inference
from fairness_core.audit import Audit
from fairness_core.vocabulary import ADJUSTMENTS, Reference, adjustment

A, B = CM(5, 1, 9, 20), CM(30, 12, 4, 60)
AUDIT = Audit({"a": CM(300, 20, 90, 590), "b": CM(250, 120, 40, 590), "c": CM(20, 5, 3, 30)}, positive_is="benefit")


def test_level_is_deprecated_for_alpha_and_gives_the_same_interval():
    new = inference.ofi_test(A, B, alpha=0.1)
    with pytest.warns(DeprecationWarning, match="level"):
        old = inference.ofi_test(A, B, level=0.9)
    assert old.level == new.level == 0.9
    assert inference.ofi_test(A, B, 0.9).level == pytest.approx(0.1)   # alpha is an error rate, never a guessed level
    assert (old.ci_low, old.ci_high, old.p_value) == pytest.approx((new.ci_low, new.ci_high, new.p_value), abs=1e-12)
    d_new = inference.di_interval(A, B, alpha=0.1)
    with pytest.warns(DeprecationWarning, match="level"):
        d_old = inference.di_interval(A, B, level=0.9)
    assert (d_old.ci_low, d_old.ci_high) == pytest.approx((d_new.ci_low, d_new.ci_high), abs=1e-12)


def test_ofi_arrays_is_typed_and_the_former_keys_warn_with_the_same_numbers():
    args = ([3, 0, 7], [1, 0, 2], [40, 40, 90], [9, 0, 1], [2, 0, 4], [60, 5000, 70])
    r = inference.ofi_arrays(*args, alpha=0.05)
    assert isinstance(r, inference.OFIArrays) and r.level == 0.95
    with pytest.warns(DeprecationWarning, match="levels"):
        old = inference.ofi_arrays(*args, (0.95, 0.9), "auto")
    with pytest.warns(DeprecationWarning, match="indexing"):
        np.testing.assert_allclose(old["ci_low_0.95"], r.ci_low, atol=1e-12)
    with pytest.warns(DeprecationWarning):
        np.testing.assert_allclose(old["ci_high_0.9"], inference.ofi_arrays(*args, alpha=0.1).ci_high, atol=1e-12)
    with pytest.warns(DeprecationWarning):
        np.testing.assert_array_equal(old["p_value"], r.p_value)
    # The usual former call, with the default level: its keys as the dict had them.
    with pytest.warns(DeprecationWarning):
        np.testing.assert_allclose(r["ci_low_0.95"], r.ci_low, atol=0)
    with pytest.warns(DeprecationWarning):
        np.testing.assert_allclose(r["ci_high_0.95"], r.ci_high, atol=0)
    assert "ci_low_0.95" in r and "ci_low_0.9" not in r and "p_value" in r.keys()
    d = inference.di_arrays([3, 9], [10, 12], [9, 1], [12, 30], alpha=0.05, method="exact")
    with pytest.warns(DeprecationWarning):
        d_old = inference.di_arrays([3, 9], [10, 12], [9, 1], [12, 30], (0.95,), "exact")
    with pytest.warns(DeprecationWarning):
        np.testing.assert_array_equal(d_old["ci_high_0.95"], d.ci_high)


def test_one_registry_of_adjustments():
    assert tuple(ADJUSTMENTS) == inference.ADJUSTMENTS == ("holm", "bh", "none")
    assert inference.ADJUSTED_LABEL == {k: a.prefix for k, a in ADJUSTMENTS.items()}
    with pytest.raises(ValueError, match="adjustment"):
        adjustment("Holm")


def test_match_table_adjust_bool_is_deprecated_with_the_same_table():
    for flag, key in ((True, "holm"), (False, "none")):
        with pytest.warns(DeprecationWarning, match="adjust"):
            old = AUDIT.match_table(["PPR", "B"], adjust=flag)
        pd.testing.assert_frame_equal(old, AUDIT.match_table(["PPR", "B"], adjust=key))
    bh = AUDIT.match_table(["PPR", "B"], adjust="bh")
    np.testing.assert_allclose(bh["adjusted p-value"], inference.adjust_p_values(bh["p-value"], "bh"))


def test_reference_none_is_deprecated_and_keeps_what_it_meant_in_each_function():
    with pytest.warns(DeprecationWarning, match="Reference.REST"):
        old = AUDIT.match_table(["PPR"], reference=None)
    pd.testing.assert_frame_equal(old, AUDIT.match_table(["PPR"], reference=Reference.REST))
    with pytest.warns(DeprecationWarning, match="Reference.REST"):
        assert AUDIT.reference_for("a", None) == AUDIT.rest_of("a") == AUDIT.reference_for("a")
    with pytest.warns(DeprecationWarning, match="Reference.RANGE"):
        old = AUDIT.difference(["B", "PPR"], reference=None)
    pd.testing.assert_frame_equal(old, AUDIT.difference(["B", "PPR"], reference=Reference.RANGE))
    with pytest.warns(DeprecationWarning, match="Reference.RANGE"):
        old = AUDIT.ratio("PPR", reference=None)
    pd.testing.assert_frame_equal(old, AUDIT.ratio("PPR"))
    with pytest.warns(DeprecationWarning, match="Reference.PAIRS"):
        old = AUDIT.verdicts(reference=None)
    pd.testing.assert_frame_equal(old, AUDIT.verdicts(reference=Reference.PAIRS))


def test_a_group_named_like_a_mode_is_a_group():
    audit = Audit({"rest": CM(30, 2, 9, 50), "range": CM(20, 8, 3, 60)}, positive_is="benefit")
    assert audit.reference_for("range", "rest") == audit.cms["rest"]
    assert audit.difference("PPR", reference="rest").loc["PPR", "group_low"] in ("rest", "range")
    with pytest.raises(ValueError):
        audit.difference("PPR", reference=Reference.REST)


def test_match_test_reference_is_names_what_the_reference_is_and_the_former_keyword_warns():
    from fairness_core import match

    a, b = CM(10, 2, 1, 0), CM(300, 100, 450, 150)
    for kind in ("sample", "population"):
        with pytest.warns(DeprecationWarning, match="reference_is"):
            old = match.test("PPR", a, b, reference=kind)
        assert old == match.test("PPR", a, b, reference_is=kind)


def test_the_match_overview_names_the_tables_adjustment():
    from fairness_core import plots

    for key, title in (("holm", "Holm-adjusted p"), ("bh", "BH-adjusted p"), ("none", "−log10 p")):
        table = AUDIT.match_table(["PPR", "B"], adjust=key)
        assert table.attrs["adjust"] == key
        assert title in plots.match_overview(table, 0.05).layout.xaxis.title.text


def test_paired_interval_takes_alpha_and_the_former_level_warns():
    from fairness_core.compare import paired_interval

    new = paired_interval([10, 3], [2, 0], [100, 40], alpha=0.1)
    with pytest.warns(DeprecationWarning):
        old = paired_interval([10, 3], [2, 0], [100, 40], level=0.9)
    np.testing.assert_allclose(old, new, atol=1e-12)


def test_ofi_changes_takes_alpha_and_the_former_level_warns():
    from fairness_core.trend import ofi_changes

    cells = [[30, 5, 9, 60]], [[40, 9, 2, 60]], [[30, 3, 12, 60]], [[40, 9, 2, 60]]
    new = ofi_changes(*cells, alpha=0.1)
    with pytest.warns(DeprecationWarning):
        old = ofi_changes(*cells, level=0.9)
    for key in ("ci_low", "ci_high", "p_value"):
        np.testing.assert_allclose(old[key], new[key], atol=1e-12)
