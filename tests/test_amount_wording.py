"""The amount audit's sentences agree with their own numbers (issue 53, the newcomer's pass).

A sentence that names the favoured group gives its advantage as a positive amount and the interval of that
advantage, so the number lies inside the interval with the same sign, whichever of the pair is favoured; every
amount carries the whole unit ("$1.31 per hour", never a bare "$").
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from fairness_core.continuous import ContinuousAudit
from fairness_core.services import datasets
from fairness_core.wording.kinds import amount_text

NUMBER = r"(−?)\$(\d[\d,]*(?:\.\d+)?)"
#: an amount with its unit, or a range with the unit once at its end
WITH_UNIT = re.compile(r"−?\$[\d,.]*\d(?: to −?\$[\d,.]*\d)? per hour")


def _amounts(text: str) -> list[float]:
    return [(-1 if sign else 1) * float(num.replace(",", "")) for sign, num in re.findall(NUMBER, text)]


def _pay_verdicts() -> pd.DataFrame:
    audit = datasets.load_kind_demo("pay_model")
    return audit.verdicts(0.25, alpha=0.05, adjust="holm", unit="$ per hour")


def test_every_favoured_groups_amount_lies_inside_its_own_interval_with_the_same_sign():
    v = _pay_verdicts()
    directional = v[v["verdict"].isin(["algorithmic bias", "materiality unclear"])]
    assert len(directional) >= 1
    for _, row in directional.iterrows():
        text = row["explanation"]
        gap, low, high = _amounts(text)[:3]
        assert gap > 0 and low > 0 and high > 0, text
        assert low <= gap <= high, text
        assert row["favours"] in text


@pytest.mark.parametrize("favoured_first", [True, False])
def test_the_sentence_turns_the_interval_round_when_the_second_group_is_favoured(favoured_first):
    rng = np.random.default_rng(3)
    n = 400
    groups = np.repeat(["a", "b"], n)
    y = rng.normal(20, 2, 2 * n)
    shift = np.where(groups == ("a" if favoured_first else "b"), 3.0, 0.0)
    audit = ContinuousAudit.from_predictions(y, y + shift + rng.normal(0, 0.5, 2 * n), groups,
                                             positive_is="benefit")
    v = audit.verdicts(0.5, unit="$ per hour")
    row = v.iloc[0]
    assert row["verdict"] == "algorithmic bias"
    favoured = "a" if favoured_first else "b"
    assert row["favours"] == favoured
    gap, low, high = _amounts(row["explanation"])[:3]
    assert 0 < low <= gap <= high
    assert gap == pytest.approx(abs(row["ofi"]), rel=0.01)
    # the advantage's interval is OFI's, turned round when group_j is favoured
    lo, hi = sorted([abs(row["ofi_ci_low"]), abs(row["ofi_ci_high"])])
    assert (low, high) == (pytest.approx(lo, rel=0.01), pytest.approx(hi, rel=0.01))


def test_amounts_carry_the_whole_unit_to_three_significant_digits():
    assert amount_text(5.2064, "$ per hour") == "$5.21 per hour"
    assert amount_text(-1.3119, "$ per hour") == "−$1.31 per hour"
    assert amount_text(2747.3, "$ a year") == "$2,747 a year"
    v = _pay_verdicts()
    for text in v["explanation"]:
        assert "per hour" in text, text
        bare = WITH_UNIT.sub("", text)
        assert "$" not in bare, text


@pytest.mark.parametrize("positive_is, side, axis", [
    ("benefit", "predicted_premium above observed_premium", "predicted_premium − observed_premium"),
    ("harm", "predicted_premium below observed_premium", "observed_premium − predicted_premium")])
def test_the_benefit_chart_says_which_side_favours_the_person_in_the_users_words(positive_is, side, axis):
    """The caption said "right of 0: predicted more than the outcome" whatever the declared direction; for a harm
    (a premium) the benefit is y − ŷ, so right of 0 is a premium charged below the claims, named as the user's
    columns are."""
    from fairness_core.presentation import plots

    y = np.array([100.0, 120, 90, 110, 200, 220, 190, 210])
    audit = ContinuousAudit.from_predictions(y, y + [5, -3, 2, 1, -4, 2, -1, 3], ["a"] * 4 + ["b"] * 4,
                                             positive_is=positive_is)
    fig = plots.benefit_distributions(audit, unit="$ a year", outcome="observed_premium",
                                      prediction="predicted_premium")
    assert f"right of 0: {side}, in the person's favour" in fig.layout.title.text
    assert f"({axis}, &#36; a year)" in fig.layout.xaxis.title.text   # plotly_text escapes the dollar
    plain = plots.benefit_distributions(audit)
    assert ("the prediction below the outcome" if positive_is == "harm" else "the prediction above the outcome") \
        in plain.layout.title.text


def test_a_yes_no_page_puts_its_title_above_the_amounts_notice_and_the_table_headers_carry_the_unit():
    from tests.test_app_amounts import with_demo

    at = with_demo("pay_model")
    for script, title in (("pages/4_Smoothing.py", "Smoothing"),
                          ("pages/3_Sample_Size_Explorer.py", "Sample-size explorer")):
        at.switch_page(script).run()
        assert not at.exception
        kinds = [type(e).__name__ for e in at.main]
        first_title = next(i for i, e in enumerate(at.main) if getattr(e, "type", "") == "title" or
                           type(e).__name__ == "Title")
        first_block = next(i for i, k in enumerate(kinds) if k == "Block")   # the notice's bordered container
        assert at.title[0].value == title and first_title < first_block, kinds
    at.switch_page("pages/2_Bias_Audit.py").run()
    table = next(d.value for d in at.dataframe if "OFI low" in d.value.columns)
    assert "OFI ($ per hour)" in table.columns and "reading" not in table.columns
    words = " ".join(e.value for e in at.markdown)
    assert "**female vs male:**" in words or "**male vs female:**" in words


def test_one_pair_is_counted_as_one_pair():
    from tests.test_app_amounts import with_demo

    at = with_demo("pay_model")                        # two groups: one pair
    at.switch_page("pages/2_Bias_Audit.py").run()
    captions = " ".join(c.value for c in at.caption)
    assert "of 1 pair of groups in all" in captions and "1 pairs" not in captions
