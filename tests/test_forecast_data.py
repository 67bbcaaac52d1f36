"""The forecast data sets' groups (issue 55): the weather site files (parsing, a typical year, units, time zones,
provenance of the conversion), the sites and Lorenz regimes as group labels kept through the five-part split and
the scaling, and the rare regime's share in training.

The builders run with a persistence forecaster in place of the NVAR-MLP (tests/test_ptn.py trains the real one):
the data's cutting, labelling and ordering are what is tested here, and the windows are checked against the raw
series directly."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq

from models import forecast_data as FD

ROOT = Path(__file__).resolve().parents[1]


def load_script():
    """scripts/make_weather_sites.py as a module (it imports pvlib only inside its readers)."""
    spec = importlib.util.spec_from_file_location("make_weather_sites", ROOT / "scripts" / "make_weather_sites.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


SCRIPT = load_script()


def station(name: str) -> pd.Series:
    return pd.read_csv(FD.ASSETS_DIR / name, nrows=1, header=None).iloc[0]


# --- the site files ---------------------------------------------------------------------------------------------

#: (latitude, longitude, elevation) of each site as its source states it (TMY3/TMY2 headers, PVGIS inputs, the
#: NSRDB cell of the PSM3 request).
STATIONS = {
    "tmy3_703165_sand_point_ak.csv.gz": (55.317, -160.517, 7.0),
    "tmy3_723170_greensboro_nc.csv.gz": (36.1, -79.95, 273.0),
    "tmy2_12839_miami_fl.csv.gz": (25.8, -80.267, 2.0),
    "pvgis_tmy_45n_8e_piedmont_it.csv.gz": (45.0, 8.0, 250.0),
    "psm3_tmy_401182_moffat_co.csv.gz": (40.53, -108.54, 2168.0),
}


def test_the_sites_are_the_files_and_labels_stated():
    assert FD.WEATHER_FILES == tuple(STATIONS) and len(set(FD.WEATHER_SITES.values())) == 5
    assert FD.WEATHER_FILES[:2] == ("tmy3_703165_sand_point_ak.csv.gz", "tmy3_723170_greensboro_nc.csv.gz")


@pytest.mark.parametrize("name", list(STATIONS))
def test_every_site_file_parses_as_a_typical_year_of_8760_hours(name):
    static, frame = FD.read_tmy3(FD.ASSETS_DIR / name)
    assert static.tolist() == pytest.approx(STATIONS[name])
    assert len(frame) == 8760 and not frame[FD.WEATHER_CHANNELS].isna().any().any()
    # 365 days of 24 hours each (an hour ending at midnight is the day's 24:00), every hour of the day 365 times.
    # (By calendar day: a typical year's months come from different years, leap years among them.)
    days = pd.read_csv(FD.ASSETS_DIR / name, skiprows=1)["Date (MM/DD/YYYY)"].str.slice(0, 5)
    assert (days.value_counts() == 24).all() and days.nunique() == 365 and "02/29" not in set(days)
    assert (frame["hour"].value_counts() == 365).all() and frame["hour"].nunique() == 24
    assert (frame.groupby("month").size() == 24 * np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])).all()


@pytest.mark.parametrize("name", list(STATIONS))
def test_every_site_has_its_units_in_plausible_ranges(name):
    (_, _, elevation), frame = FD.read_tmy3(FD.ASSETS_DIR / name)
    t, td, p, wind, ghi = (frame[c].to_numpy() for c in FD.WEATHER_CHANNELS)
    assert t.min() >= -60 and t.max() <= 60
    assert p.min() >= 500 and p.max() <= 1100
    assert ghi.min() >= 0 and ghi.max() <= 1400
    assert wind.min() >= 0 and wind.max() <= 60
    # The dew point never exceeds the temperature by more than the sources' rounding (PSM3 keeps whole degrees).
    assert (td - t).max() <= 1.0
    # Pressure fits the station's elevation (a unit slip such as Pa for hPa, or a wrong elevation, would not):
    # the median within 3 % of the International Standard Atmosphere at that height.
    assert np.median(p) == pytest.approx(SCRIPT.standard_pressure_hpa(elevation), rel=0.03)
    # Sunlight is centred on local solar noon (the hours are local standard time): GHI's centroid over the
    # day, at mid-hour, within an hour of 12 h − (longitude − 15° × UTC offset) / 15° h.
    row = station(name)
    mid_hour = (frame["hour"].replace(0, 24) - 0.5).to_numpy()
    noon = 12 - (row[5] - 15 * row[3]) / 15
    assert (ghi * mid_hour).sum() / ghi.sum() == pytest.approx(noon, abs=1.0)
    assert ghi[(frame["hour"] >= 1) & (frame["hour"] <= 3)].max() == 0  # no sun from midnight to 3 am


def test_the_site_files_stay_small():
    sizes = {n: (FD.ASSETS_DIR / n).stat().st_size for n in STATIONS}
    assert max(sizes.values()) <= 1_000_000
    assert sum(s for n, s in sizes.items() if not n.startswith("tmy3_")) <= 6_000_000


# --- the conversion's pieces --------------------------------------------------------------------------------------

def test_dew_point_magnus_worked_example_and_limits():
    # T = 25 °C, RH = 60 %: γ = ln 0.6 + 17.625 × 25 / 268.04 = 1.1330, T_d = 243.04 γ / (17.625 − γ) = 16.70 °C.
    assert SCRIPT.dew_point_magnus(25.0, 60.0) == pytest.approx(16.697, abs=1e-3)
    t = np.array([-20.0, 0.0, 15.0, 35.0])
    assert SCRIPT.dew_point_magnus(t, np.full(4, 100.0)) == pytest.approx(t)
    assert np.isnan(SCRIPT.dew_point_magnus(np.array([10.0, 10.0]), np.array([0.0, np.nan]))).all()


def test_dew_point_magnus_agrees_with_bucks_saturation_pressure():
    """An independent formula: Buck (1981)'s e_s(T) = 6.1121 exp((18.678 − T/234.5) T / (257.14 + T)), the dew
    point solved from e_s(T_d) = RH/100 × e_s(T) by root finding; within 0.15 °C over −10..40 °C, 15..100 %."""
    def buck(x: float) -> float:
        return 6.1121 * np.exp((18.678 - x / 234.5) * x / (257.14 + x))

    grid = [(t, rh) for t in (-10.0, 0.0, 12.5, 25.0, 40.0) for rh in (15.0, 40.0, 70.0, 100.0)]
    direct = [brentq(lambda x: buck(x) - rh / 100 * buck(t), -80, 60) for t, rh in grid]
    ours = SCRIPT.dew_point_magnus(np.array([g[0] for g in grid]), np.array([g[1] for g in grid]))
    assert np.abs(ours - np.array(direct)).max() < 0.15


def test_hour_ending_labels_write_midnight_as_24_00_of_the_day_before():
    ends = pd.DatetimeIndex(["2009-01-01 01:00", "2009-01-01 23:00", "2009-01-02 00:00", "2012-01-01 00:00"])
    date, time = SCRIPT.hour_ending_labels(ends)
    assert date.tolist() == ["01/01/2009", "01/01/2009", "01/01/2009", "12/31/2011"]
    assert time.tolist() == ["01:00", "23:00", "24:00", "24:00"]


def test_a_source_value_out_of_range_or_missing_is_named_by_column_and_row():
    _, frame = FD.read_tmy3(FD.ASSETS_DIR / FD.WEATHER_FILES[2])
    raw = pd.read_csv(FD.ASSETS_DIR / FD.WEATHER_FILES[2], skiprows=1)
    SCRIPT.check_channels(raw, "Miami")  # the shipped file passes
    bad = raw.copy()
    bad.loc[4, "Pressure (mbar)"] = 99_573.0  # Pa left unconverted
    with pytest.raises(ValueError, match=r"Miami: column 'Pressure \(mbar\)', row 5 \(01/01/1962 05:00\): 99573, "
                                         r"outside 500\.\.1100; 1 such rows"):
        SCRIPT.check_channels(bad, "Miami")
    gap = raw.copy()
    gap.loc[[9, 10], "Dew-point (C)"] = np.nan
    with pytest.raises(ValueError, match=r"column 'Dew-point \(C\)', row 10 .*missing; 2 such rows"):
        SCRIPT.check_channels(gap, "Miami")
    with pytest.raises(ValueError, match="no 'GHI"):
        SCRIPT.check_channels(raw.drop(columns="GHI (W/m^2)"), "Miami")
    empty = pd.DataFrame({"Pressure (mbar)": [np.nan] * 3, "Dry-bulb (C)": [1.0, 2.0, 3.0]})
    assert SCRIPT.missing_channels(empty, {"Pressure (mbar)": "Pressure (mbar)", "Dew-point (C)": "Dew-point (C)",
                                           "Dry-bulb (C)": "Dry-bulb (C)"}) == [
        "Pressure (mbar): column 'Pressure (mbar)' empty in 3 of 3 rows (rows 1..3)",
        "Dew-point (C): no column 'Dew-point (C)'"]


# --- Lorenz regimes -------------------------------------------------------------------------------------------------

def test_the_threshold_is_where_the_fixed_points_lose_stability():
    """ρ_H = σ(σ + β + 3)/(σ − β − 1) (24.737 at σ = 10, β = 8/3) against the Jacobian at C± computed directly:
    its largest real eigenvalue part crosses zero there."""
    assert FD.lorenz_threshold(10.0, 8 / 3) == pytest.approx(24.7368, abs=1e-4)

    def growth(sigma: float, rho: float, beta: float) -> float:
        c = np.sqrt(beta * (rho - 1))
        jac = np.array([[-sigma, sigma, 0], [1, -1, -c], [c, c, -beta]])  # at (c, c, ρ − 1)
        return np.linalg.eigvals(jac).real.max()

    for sigma, beta in ((8.0, 7.9 / 3), (10.0, 8 / 3), (12.0, 8.1 / 3)):
        rho_h = float(FD.lorenz_threshold(sigma, beta))
        assert abs(growth(sigma, rho_h, beta)) < 1e-9
        assert growth(sigma, 0.99 * rho_h, beta) < 0 < growth(sigma, 1.01 * rho_h, beta)


def test_regimes_are_set_by_rho_over_the_threshold_and_draws_land_in_theirs():
    rho_h = float(FD.lorenz_threshold(10.0, 8 / 3))
    params = np.array([[10.0, r * rho_h, 8 / 3] for r in (0.5, 0.8999, 0.9, 1.0, 1.0599, 1.06, 1.2)])
    assert FD.lorenz_regime(params).tolist() == ["below threshold"] * 2 + ["near threshold"] * 3 + \
        ["above threshold"] * 2
    rng = np.random.default_rng(3)
    for regime in FD.LORENZ_REGIMES:
        draws = np.array([FD.lorenz_regime_parameters(rng, regime) for _ in range(200)])
        assert (FD.lorenz_regime(draws) == regime).all()
        assert draws[:, 0].min() >= 8 and draws[:, 0].max() <= 12
    thesis = np.array([FD.lorenz_parameters(rng) for _ in range(200)])
    assert (FD.lorenz_regime(thesis) == "above threshold").all()  # the thesis's systems are all chaotic
    with pytest.raises(ValueError, match="unknown Lorenz regime 'stable'"):
        FD.lorenz_regime_parameters(rng, "stable")


@pytest.mark.parametrize("per_part", [1, 2, 4, 7, 50])
def test_the_plan_makes_the_near_threshold_regime_rare_in_training_and_even_in_test(per_part):
    plan = FD.lorenz_regime_plan(per_part)
    assert [len(p) for p in plan] == [per_part] * 5
    training = [r for p in plan[:-1] for r in p]
    assert training.count(FD.LORENZ_RARE) == max(1, round(FD.LORENZ_RARE_SHARE * 4 * per_part))
    assert FD.LORENZ_RARE in plan[0]  # the DARTS-training part (and the forecaster's data) holds one
    counts = [plan[-1].count(r) for r in FD.LORENZ_REGIMES]
    assert max(counts) - min(counts) <= 1 and plan[-1].count(FD.LORENZ_RARE) == max(counts)
    with pytest.raises(ValueError, match="at least 1"):
        FD.lorenz_regime_plan(0)


def test_the_default_plan_states_its_rare_share():
    plan = FD.lorenz_regime_plan(4)  # the demo's 4 systems per part
    training = [r for p in plan[:-1] for r in p]
    assert training.count(FD.LORENZ_RARE) / len(training) == FD.LORENZ_RARE_SHARE == 0.125
    assert training.count("above threshold") == 9 and training.count("below threshold") == 5
    assert sorted(plan[-1]) == sorted([FD.LORENZ_RARE, FD.LORENZ_RARE, "above threshold", "below threshold"])


# --- the data sets' groups ----------------------------------------------------------------------------------------

class Persistence:
    """Stands in for the NVAR-MLP: every forecast is the target's value at its issue time."""

    def __init__(self, target: int = 0, horizon: int = FD.HORIZON, seed: int = 0):
        self.target, self.horizon = target, horizon

    def fit(self, *args, **kwargs) -> "Persistence":
        return self

    def predict(self, states: np.ndarray) -> np.ndarray:
        return np.repeat(states[:, self.target:self.target + 1], self.horizon, axis=1)


@pytest.fixture
def persistence(monkeypatch):
    """The builders import ``NVARForecaster`` from ``models.nvar`` when called: this module stands in for it
    (and spares these tests PyTorch's import)."""
    fake = types.ModuleType("models.nvar")
    fake.NVARForecaster = Persistence
    monkeypatch.setitem(sys.modules, "models.nvar", fake)


def unscaled_static(ds: FD.Dataset, s: FD.Samples) -> np.ndarray:
    lo, hi = ds.scaler.lo["static"][0], ds.scaler.hi["static"][0]
    return s.static * (hi - lo) + lo


def test_lorenz_groups_follow_each_system_through_the_split_and_the_scaling(persistence):
    ds, _ = FD.lorenz_dataset(4, 1, seed=5)
    assert ds.group_kind == "regime" and set(ds.groups) == set(FD.PARTS)
    for part, s in ds.parts.items():
        # Each sample's label is the regime of its own (unscaled) parameters, so labels moved with the samples.
        assert s.groups.tolist() == FD.lorenz_regime(unscaled_static(ds, s)).tolist()
        assert len(s.groups) == len(s.time) == len(s.series) == len(s)
        assert (np.diff(s.time) >= 0).all()  # ordered by issue time
    # The stated share: 2 of the 16 training systems, each giving the same windows, so 12.5 % of the samples.
    assert ds.group_shares()[FD.LORENZ_RARE] == pytest.approx(FD.LORENZ_RARE_SHARE)
    assert "rare in training (2 of 16 training systems, 12.5%)" in ds.description
    assert ds.group_shares(("test",)).to_dict() == pytest.approx(
        {"above threshold": 0.25, "below threshold": 0.25, "near threshold": 0.5})
    # The warm start's leading quarter of the test part reaches every group and every series.
    test = ds.parts["test"]
    warm = test.take(np.arange(len(test) // 4))
    assert set(warm.groups) == set(FD.LORENZ_REGIMES) and set(warm.series) == set(test.series)


def test_lorenz_without_regimes_is_the_thesis_data_set(persistence):
    ds, _ = FD.lorenz_dataset(1, 1, seed=0, regimes=False)
    assert {g for s in ds.parts.values() for g in s.groups} == {"above threshold"}
    rng = np.random.default_rng(0)
    first = FD.lorenz_parameters(rng)  # the thesis's draws, in the old order: system, then its initial state
    assert unscaled_static(ds, ds.parts["darts_train"])[0] == pytest.approx(first)


def test_weather_groups_are_the_sites_in_every_part_and_windows_match_the_raw_series(persistence):
    ds, _ = FD.weather_dataset()
    assert ds.group_kind == "site"
    coordinates = {FD.WEATHER_SITES[n]: STATIONS[n] for n in STATIONS}
    raw = {FD.WEATHER_SITES[n]: FD.read_tmy3(FD.ASSETS_DIR / n)[1] for n in STATIONS}
    span = float(ds.scaler.hi["target"].ravel()[0] - ds.scaler.lo["target"].ravel()[0])
    lo = float(ds.scaler.lo["target"].ravel()[0])
    for part, s in ds.parts.items():
        assert set(s.groups) == set(FD.WEATHER_SITES.values())
        static = unscaled_static(ds, s)
        for site in coordinates:  # each label sits on its own site's samples
            assert np.allclose(static[s.groups == site], coordinates[site])
        # Targets are the site's next 16 temperatures after the issue time, months as the part's.
        frame = raw[s.groups[0]]
        t0 = int(s.time[0])
        assert s.target[0] * span + lo == pytest.approx(frame["Dry-bulb (C)"].to_numpy()[t0 + 1:t0 + 17])
        assert frame["month"].iloc[s.time].isin(FD.WEATHER_MONTHS[FD.PARTS.index(part)]).all()
    shares = ds.group_shares(("test",))
    assert shares.to_dict() == pytest.approx({site: 0.2 for site in FD.WEATHER_SITES.values()})


def test_take_and_concat_keep_the_labels_and_unlabelled_samples_still_work():
    rng = np.random.default_rng(0)
    s = FD.Samples(rng.uniform(size=(4, 3)), rng.uniform(size=(4, FD.HISTORY, 3)),
                   rng.uniform(size=(4, FD.N_FORECASTS, FD.HORIZON, 1)), rng.uniform(size=(4, FD.HORIZON)),
                   np.array(["a", "b", "a", "c"], dtype=object), np.arange(4), np.array([0, 0, 1, 1]))
    picked = s.take(np.array([3, 0]))
    assert picked.groups.tolist() == ["c", "a"] and picked.time.tolist() == [3, 0] and picked.series.tolist() == [1, 0]
    assert FD.concat([s, picked]).groups.tolist() == ["a", "b", "a", "c", "c", "a"]
    bare = FD.Samples(s.static, s.history, s.forecasts, s.target)  # the form PTN's own tests build
    assert bare.take(np.array([1])).groups is None and FD.concat([s, bare]).groups is None
    ds = FD.Dataset("tiny", {p: bare for p in FD.PARTS}, FD.Scaler(), "tiny", ["x", "y", "z"])
    assert ds.group_shares().empty and ds.groups["test"] is None
