"""A model over time for amounts and ordered tiers (issue 53): each pair's OFI per period equals the period's verdicts,
its change is the difference, the change interval covers and the test holds its size by simulation, 0/1 data through
the amount audit give the binary trend's OFI, a saved series carries its unit, and a series mixing kinds, classes
without an order or decisions alone are refused in one sentence."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from fairness_core import ConfusionMatrix as CM
from fairness_core import plots
from fairness_core.audit import Audit, NeedsOutcomes
from fairness_core.continuous import ContinuousAudit
from fairness_core.multiclass import MulticlassAudit
from fairness_core.store import AuditStore
from fairness_core.trend import AMOUNT_VERDICT_COLUMNS, TIER_VERDICT_COLUMNS, series_changes


def pay(shift: float, seed: int, n: int = 300) -> ContinuousAudit:
    rng = np.random.default_rng(seed)
    sex = np.repeat(["F", "M"], n)
    salary = rng.lognormal(10.8, 0.3, 2 * n)
    recommended = salary * rng.lognormal(0, 0.05, 2 * n) - np.where(sex == "F", shift, 0)
    return ContinuousAudit.from_predictions(salary, recommended, sex, positive_is="benefit")


def tiers(seed: int, order: bool = True, outcomes: bool = True) -> MulticlassAudit:
    rng = np.random.default_rng(seed)
    names = np.array(["Low", "Medium", "High"])
    y, p = names[rng.integers(0, 3, 400)], names[rng.integers(0, 3, 400)]
    g = rng.choice(["a", "b", "c"], 400)
    kw = dict(order=["Low", "Medium", "High"], favourable="Low") if order else dict(favourable=["Low"])
    return MulticlassAudit.from_predictions(y if outcomes else None, p, g, **kw)


def test_an_amount_series_gives_each_pairs_ofi_and_its_change_in_the_outcomes_units():
    q1, q2 = pay(0, 1), pay(3000, 2)
    t = series_changes([("2026-Q1", q1), ("2026-Q2", q2)], 1000)
    assert t.kind == "continuous" and list(t.verdicts.columns) == ["period", *AMOUNT_VERDICT_COLUMNS]
    for period, audit in (("2026-Q1", q1), ("2026-Q2", q2)):
        want = audit.verdicts(1000)
        got = t.verdicts[t.verdicts["period"] == period]
        assert got["ofi"].tolist() == want["ofi"].tolist() and got["verdict"].tolist() == want["verdict"].tolist()
    c = t.changes.iloc[0]
    b1, b2 = q1.marginal_benefit(), q2.marginal_benefit()
    assert (c["group_i"], c["group_j"]) == ("F", "M")
    assert c["ofi_before"] == pytest.approx(b1["F"] - b1["M"], rel=1e-12)
    assert c["change"] == pytest.approx((b2["F"] - b2["M"]) - (b1["F"] - b1["M"]), rel=1e-12)
    assert c["ci_low"] < c["change"] < c["ci_high"] < 0 and c["significant"] and c["became_bias"]
    fig = plots.ofi_trend(t)
    assert len([d for d in fig.data if d.customdata is not None]) == 1 and "1000" in fig.layout.title.text


def test_the_change_interval_covers_and_the_test_holds_its_size_by_simulation():
    """No change between periods (the same model, fresh samples): 4,000 series of skewed amounts (log-normal
    σ = 0.5 outcomes, errors with unequal spreads), 40 vs 60 rows, all at once through the change machinery
    series_changes uses (checked equal to it on the first series). The 95 % interval of the change covers 0 and
    the test rejects at about 5 %."""
    from fairness_core.statistics.amounts import MeanPairs, Moments
    from fairness_core.trend import _Changes

    rng = np.random.default_rng(11)
    draws, sizes = 4000, np.array([40, 60])
    codes = np.repeat(np.arange(2 * draws), np.tile(sizes, draws))         # draw d: groups 2d (a) and 2d + 1 (b)
    periods = []
    for _ in range(2):
        y = rng.lognormal(0, 0.5, codes.size)
        error = rng.normal(0, np.where(codes % 2 == 0, 0.2, 0.4))
        periods.append((y, y + error, Moments.of(error, codes, 2 * draws)))
    a, b = np.arange(0, 2 * draws, 2), np.arange(1, 2 * draws, 2)
    change = _Changes(MeanPairs(periods[0][2].take(a), periods[0][2].take(b)),
                      MeanPairs(periods[1][2].take(a), periods[1][2].take(b)))
    low, high = change.bounds(0.025)
    p = change.p_value()
    first = [(f"P{k}", ContinuousAudit.from_predictions(y[codes < 2], pred[codes < 2],
                                                         np.where(codes[codes < 2] == 0, "a", "b"), positive_is="benefit"))
             for k, (y, pred, _) in enumerate(periods)]
    c = series_changes(first, 0.2, adjust="none").changes.iloc[0]
    assert (c["ci_low"], c["ci_high"], c["p"]) == pytest.approx((low[0], high[0], p[0]), rel=1e-9)
    covered = float(np.mean((low <= 0) & (0 <= high)))
    assert 0.935 <= covered <= 0.965, covered
    assert float(np.mean(p < 0.05)) == pytest.approx(1 - covered, abs=0.002)   # the test is the interval's dual


def test_binary_data_through_the_amount_audit_give_the_binary_trend():
    rng = np.random.default_rng(5)
    series_b, series_c = [], []
    for period, flip in (("P1", 0.1), ("P2", 0.3)):
        g = rng.choice(["a", "b"], 500)
        y = rng.integers(0, 2, 500)
        p = np.where(rng.random(500) < np.where(g == "a", flip, 0.1), 1 - y, y)
        series_b.append((period, Audit.from_predictions(y, p, g, positive_is="benefit")))
        series_c.append((period, ContinuousAudit.from_predictions(y, p, g, positive_is="benefit")))
    b, c = series_changes(series_b, 0.05), series_changes(series_c, 0.05)
    assert c.changes["ofi_before"].tolist() == pytest.approx(b.changes["ofi_before"].tolist(), abs=1e-15)
    assert c.changes["change"].tolist() == pytest.approx(b.changes["change"].tolist(), abs=1e-15)


def test_an_ordered_tier_series_follows_the_ordinal_ofi_in_tiers():
    t = series_changes([("P1", tiers(1)), ("P2", tiers(2))], 0.1)
    assert t.kind == "multiclass" and t.unit == "tiers"
    assert list(t.verdicts.columns) == ["period", *TIER_VERDICT_COLUMNS]
    want = tiers(2).verdicts(0.1)
    assert t.verdicts[t.verdicts["period"] == "P2"]["ofi"].tolist() == want["ofi"].tolist()
    assert len(t.changes) == 3 and t.changes["p"].between(0, 1).all()


def test_series_that_cannot_be_followed_are_refused_in_one_sentence():
    binary = Audit({"F": CM(30, 5, 8, 57), "M": CM(40, 6, 4, 50)}, positive_is="benefit")
    with pytest.raises(ValueError) as mixed:
        series_changes([("2026-Q1", binary), ("2026-Q2", pay(0, 1))])
    sentence = str(mixed.value)
    assert sentence == ("a trend compares periods of one kind of audit, and this series mixes yes/no decisions "
                        "(period 2026-Q1) with amounts (period 2026-Q2): save each kind under a model name of its own")
    with pytest.raises(ValueError, match="needs an order of the classes"):
        series_changes([("P1", tiers(1, order=False)), ("P2", tiers(2, order=False))])
    with pytest.raises(NeedsOutcomes):
        series_changes([("P1", tiers(1, outcomes=False)), ("P2", tiers(2, outcomes=False))])
    other = MulticlassAudit.from_predictions(["A", "B", "C"] * 20, ["A", "C", "B"] * 20, ["a", "b"] * 30,
                                             order=["A", "B", "C"], favourable="A")
    with pytest.raises(ValueError, match="tiers differ"):
        series_changes([("P1", tiers(1)), ("P2", other)])


def test_a_saved_amount_series_carries_its_unit_and_settings(tmp_path):
    s = AuditStore(f"sqlite:///{tmp_path / 'a.db'}")
    s.save(pay(0, 1), "Q1", model="pay", period="2026-Q1", tolerance=1500, unit="$")
    s.save(pay(3000, 2), "Q2", model="pay", period="2026-Q2", tolerance=1500, unit="$", alpha=0.1)
    t = series_changes(s.history("pay"))
    assert (t.kind, t.unit, t.tolerance, t.alpha) == ("continuous", "$", 1500, 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "(&#36;)" in plots.ofi_trend(t).layout.yaxis.title.text   # "$", escaped for Plotly
    s.close()
