"""Write the weather sites of the Forecasting page into ``assets/`` from the typical-year files in pvlib's wheel.

A one-off developer tool: the app never runs it and never imports pvlib; it reads the files this writes with
``models.forecast_data.read_tmy3``. Every output has the layout of the two TMY3 assets already there: a station
line (id, name, state or country, UTC offset in hours, latitude, longitude, elevation in m), then the hourly
columns ``Date (MM/DD/YYYY), Time (HH:MM), Dry-bulb (C), Dew-point (C), Pressure (mbar), Wspd (m/s),
GHI (W/m^2)`` in local standard time, each row labelled by the hour it ends (01:00 … 24:00, as TMY3 does).

Reproduce (pvlib 0.10.5 is BSD-3; h5py only because ``import pvlib`` loads it)::

    pip download pvlib==0.10.5 --no-deps -d /tmp/pvl0105
    pip install --no-deps --target /tmp/pvlib_site /tmp/pvl0105/pvlib-0.10.5-py3-none-any.whl h5py
    PYTHONPATH=/tmp/pvlib_site python scripts/make_weather_sites.py /tmp/pvlib_site/pvlib/data

The gzip streams carry no time stamp, so a rerun writes the same bytes. What each source needed (units, time
zone, a dew point from relative humidity) is in :data:`SITES` and ``assets/PROVENANCE.md``; the files in the
wheel that were left out, and why, are in :data:`LEFT_OUT`. A source that lacks a channel, or holds a value
outside the plausible range, stops the script with the column and the row named.
"""

from __future__ import annotations

import gzip
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

ASSETS = Path(__file__).resolve().parents[1] / "assets"
CHANNELS = ["Dry-bulb (C)", "Dew-point (C)", "Pressure (mbar)", "Wspd (m/s)", "GHI (W/m^2)"]
COLUMNS = ["Date (MM/DD/YYYY)", "Time (HH:MM)", *CHANNELS]
#: Plausible values of each channel at the Earth's surface (the test of every site file uses the same ranges).
RANGES = {"Dry-bulb (C)": (-60.0, 60.0), "Dew-point (C)": (-70.0, 40.0), "Pressure (mbar)": (500.0, 1100.0),
          "Wspd (m/s)": (0.0, 60.0), "GHI (W/m^2)": (0.0, 1400.0)}
#: Decimals written per channel (the sources' own precision or one more).
DECIMALS = {"Dry-bulb (C)": 1, "Dew-point (C)": 1, "Pressure (mbar)": 1, "Wspd (m/s)": 1, "GHI (W/m^2)": 0}
#: Magnus-formula coefficients over water (Alduchov and Eskridge, "Improved Magnus form approximation of
#: saturation vapor pressure", 1996): e_s(T) = 6.1094 exp(a T / (b + T)) hPa, T in °C.
MAGNUS_A, MAGNUS_B = 17.625, 243.04


def dew_point_magnus(temperature_c: np.ndarray, relative_humidity_pct: np.ndarray) -> np.ndarray:
    """Dew point (°C) from temperature (°C) and relative humidity (%), inverting the Magnus formula:

        γ = ln(RH / 100) + a T / (b + T),   T_d = b γ / (a − γ),   a = 17.625, b = 243.04 °C

    (Alduchov and Eskridge 1996). T_d = T at 100 % and falls as RH falls; undefined (NaN) at RH ≤ 0 or RH not
    finite. Worked example: T = 25 °C, RH = 60 % gives γ = 1.1330 and T_d = 16.70 °C."""
    t = np.asarray(temperature_c, dtype=float)
    rh = np.asarray(relative_humidity_pct, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        gamma = np.log(np.where(rh > 0, rh, np.nan) / 100.0) + MAGNUS_A * t / (MAGNUS_B + t)
        return MAGNUS_B * gamma / (MAGNUS_A - gamma)


def standard_pressure_hpa(elevation_m: float) -> float:
    """Pressure of the International Standard Atmosphere at ``elevation_m`` (hPa):
    1013.25 (1 − 2.25577e-5 h)^5.25588. Used only to check a site's elevation against its recorded pressure."""
    return 1013.25 * (1 - 2.25577e-5 * elevation_m) ** 5.25588


def hour_ending_labels(ends: pd.DatetimeIndex) -> tuple[pd.Series, pd.Series]:
    """TMY3's date and time columns for hours that end at ``ends`` (local standard time, naive): an hour that
    ends at midnight is written as 24:00 of the day it belongs to."""
    ends = pd.DatetimeIndex(ends)
    midnight = ends.hour == 0
    day = ends - pd.to_timedelta(midnight.astype(int), unit="D")
    hour = np.where(midnight, 24, ends.hour)
    return (pd.Series(day.strftime("%m/%d/%Y")), pd.Series([f"{h:02d}:00" for h in hour]))


def check_channels(frame: pd.DataFrame, site: str) -> None:
    """Every channel present, finite and in :data:`RANGES`; otherwise a ValueError naming the site, the column
    and the first bad row (1-based among the data rows, with its date and time)."""
    for column in CHANNELS:
        if column not in frame:
            raise ValueError(f"{site}: the source has no {column!r} channel")
        values = frame[column].to_numpy(dtype=float)
        lo, hi = RANGES[column]
        bad = ~np.isfinite(values) | (values < lo) | (values > hi)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            what = "missing" if not np.isfinite(values[i]) else f"{values[i]:g}, outside {lo:g}..{hi:g}"
            raise ValueError(f"{site}: column {column!r}, row {i + 1} ({frame['Date (MM/DD/YYYY)'].iloc[i]} "
                             f"{frame['Time (HH:MM)'].iloc[i]}): {what}; {int(bad.sum())} such rows in all")
    if len(frame) != 8760:
        raise ValueError(f"{site}: {len(frame)} hourly rows, not a typical year's 8,760")
    hours = frame["Date (MM/DD/YYYY)"].value_counts()
    if len(hours) != 365 or (hours != 24).any():
        raise ValueError(f"{site}: the rows are not 365 days of 24 hours")


def missing_channels(frame: pd.DataFrame, columns: dict[str, str]) -> list[str]:
    """For a source left out: each wanted channel that is absent or empty, with its rows named
    (``columns`` maps our channel to the source's column)."""
    out = []
    for ours, theirs in columns.items():
        if theirs not in frame:
            out.append(f"{ours}: no column {theirs!r}")
            continue
        empty = ~np.isfinite(pd.to_numeric(frame[theirs], errors="coerce").to_numpy(dtype=float))
        if empty.any():
            rows = np.flatnonzero(empty) + 1
            out.append(f"{ours}: column {theirs!r} empty in {empty.sum():,} of {len(frame):,} rows "
                       f"(rows {rows[0]}..{rows[-1]})" if empty.all() else
                       f"{ours}: column {theirs!r} empty in rows {', '.join(map(str, rows[:5]))}"
                       f"{' …' if len(rows) > 5 else ''}")
    return out


@dataclass(frozen=True)
class Site:
    """One site written to ``assets/``: its file, the station line's fields and the reader of its source."""

    file: str
    station_id: str
    name: str
    region: str
    utc_offset: float
    read: Callable[[Path], tuple[tuple[float, float, float], pd.DataFrame]]  # (lat, lon, elev), channels


def _frame(ends: pd.DatetimeIndex, channels: dict[str, np.ndarray]) -> pd.DataFrame:
    date, time = hour_ending_labels(ends)
    out = pd.DataFrame({"Date (MM/DD/YYYY)": date, "Time (HH:MM)": time})
    for column in CHANNELS:
        out[column] = np.asarray(channels[column], dtype=float)
    return out


def read_miami_tmy2(data: Path) -> tuple[tuple[float, float, float], pd.DataFrame]:
    """NREL TMY2, WBAN 12839 (Miami, FL). TMY2 stores temperatures and wind speed in tenths (°C, m/s), pressure in
    mbar, GHI in Wh/m² over the hour; pvlib indexes each row by the hour's start, so the hour ends one hour later.
    RH is recorded too: the Magnus dew point from it is printed against the recorded one as a check."""
    from pvlib.iotools import read_tmy2

    df, meta = read_tmy2(str(data / "12839.tm2"))
    ends = df.index.tz_localize(None) + pd.Timedelta(hours=1)
    channels = {"Dry-bulb (C)": df["DryBulb"] / 10.0, "Dew-point (C)": df["DewPoint"] / 10.0,
                "Pressure (mbar)": df["Pressure"], "Wspd (m/s)": df["Wspd"] / 10.0, "GHI (W/m^2)": df["GHI"]}
    magnus = dew_point_magnus(df["DryBulb"] / 10.0, df["RHum"])
    print(f"  Miami: Magnus dew point from TMY2's RH against its recorded dew point: mean absolute difference "
          f"{np.nanmean(np.abs(magnus - df['DewPoint'] / 10.0)):.2f} °C")
    return (meta["latitude"], meta["longitude"], meta["altitude"]), _frame(ends, channels)


def read_piedmont_pvgis(data: Path) -> tuple[tuple[float, float, float], pd.DataFrame]:
    """PVGIS TMY (EU JRC, 2005-2016) at 45.000 N, 8.000 E. Time stamps are UTC: shifted by +1 h to local standard
    time (CET), so 00:00 UTC on 1 January is the hour that ends at 01:00 local and the last row ends at 24:00 on
    31 December. Pressure is in Pa (÷ 100 → hPa = mbar); there is no dew point, so it comes from 2-m temperature
    and relative humidity by :func:`dew_point_magnus`; 10-m wind speed and GHI as they are. The source (per the
    file's own metadata) is PVGIS-SARAH for irradiance and ERA-Interim for the other variables. Its values are
    near-instantaneous at the stamp, so temperature (the target) lines up with TMY3's instant at the hour's end,
    while GHI stands about half an hour early against TMY3's hour-ending means (its daily centroid falls at 11.8 h
    local against solar noon at 12.5 h); left so rather than interpolated."""
    from pvlib.iotools import read_pvgis_tmy

    df, _, inputs, _ = read_pvgis_tmy(str(data / "tmy_45.000_8.000_2005_2016.csv"), pvgis_format="csv",
                                      map_variables=False)
    ends = df.index.tz_convert("UTC").tz_localize(None) + pd.Timedelta(hours=1)
    loc = inputs["location"] if "location" in inputs else inputs
    channels = {"Dry-bulb (C)": df["T2m"], "Dew-point (C)": dew_point_magnus(df["T2m"], df["RH"]),
                "Pressure (mbar)": df["SP"] / 100.0, "Wspd (m/s)": df["WS10m"], "GHI (W/m^2)": df["G(h)"]}
    return (float(loc["latitude"]), float(loc["longitude"]), float(loc["elevation"])), _frame(ends, channels)


def read_colorado_psm3(data: Path) -> tuple[tuple[float, float, float], pd.DataFrame]:
    """NREL NSRDB PSM3 TMY ("tmy-2017"), the point 40.5137 N, 108.5449 W that pvlib's tests request. pvlib keeps
    the TMY as a plain table without the API's header, so the station comes from the same request's single-year
    file in the wheel (``test_read_psm3.csv``: NSRDB cell 401182, 40.53 N, 108.54 W, 2,168 m, UTC−7), checked
    against the TMY's pressure. Rows are in local standard time at the half hour (00:30 is the hour that ends at
    01:00); temperature, dew point (°C), pressure (mbar), wind speed (m/s) and GHI as they are."""
    from pvlib.iotools import read_psm3

    _, meta = read_psm3(str(data / "test_read_psm3.csv"), map_variables=False)
    df = pd.read_csv(data / "test_psm3_tmy-2017.csv")
    starts = pd.to_datetime(df[["Year", "Month", "Day", "Hour"]].rename(columns=str.lower))
    channels = {"Dry-bulb (C)": df["Temperature"], "Dew-point (C)": df["Dew Point"], "Pressure (mbar)": df["Pressure"],
                "Wspd (m/s)": df["Wind Speed"], "GHI (W/m^2)": df["GHI"]}
    elevation = float(meta["Elevation"])
    median = float(np.median(df["Pressure"]))
    if abs(median / standard_pressure_hpa(elevation) - 1) > 0.03:
        raise ValueError(f"Colorado: median pressure {median:g} mbar does not fit an elevation of {elevation:g} m")
    return ((float(meta["Latitude"]), float(meta["Longitude"]), elevation),
            _frame(pd.DatetimeIndex(starts + pd.Timedelta(hours=1)), channels))


SITES = (
    Site("tmy2_12839_miami_fl.csv.gz", "12839", "MIAMI", "FL", -5.0, read_miami_tmy2),
    Site("pvgis_tmy_45n_8e_piedmont_it.csv.gz", "PVGIS-45.000N-8.000E", "PIEDMONT (PVGIS TMY 2005-2016)", "IT", 1.0,
         read_piedmont_pvgis),
    Site("psm3_tmy_401182_moffat_co.csv.gz", "401182", "NSRDB PSM3 CELL 401182, MOFFAT COUNTY", "CO", -7.0,
         read_colorado_psm3),
)

#: Typical-year files in the wheel that are not written, and why.
LEFT_OUT = {
    "NLD_Amsterdam062400_IWEC.epw": "ASHRAE IWEC: the file states 'Original Source Data (c) 2001 ASHRAE ... All "
                                    "rights reserved as noted in the License Agreement and Additional Conditions'; "
                                    "no term we can read grants redistribution, so it is not copied.",
    "Burlington, United States SolarAnywhere Time Series 2021 Lat_44_465 Lon_-73_205 TMY3 format.csv":
        "SolarAnywhere (Clean Power Research): a commercial data set's free sample; the file says 'Copyright "
        "2010-2022 Clean Power Research, L.L.C.' and pvlib's repository (pull request 1497) calls it a commercial "
        "data set offering free data for a few locations, with no licence to redistribute. It is also not a typical "
        "year (calendar 2021) and lacks channels: see the report printed by this script.",
    "pvwatts_8760_rackmount.csv": "PVWatts output (Denver): no dew point or pressure.",
    "723170TYA.CSV": "Greensboro, NC: already in assets/ (tmy3_723170_greensboro_nc.csv.gz); checked equal below.",
    "703165TY.csv": "Sand Point, AK: already in assets/ (tmy3_703165_sand_point_ak.csv.gz); checked equal below.",
}


def write_site(path: Path, station: str, frame: pd.DataFrame) -> None:
    """The station line, then the columns, gzip-compressed without a time stamp (the same bytes on every run)."""
    body = frame.copy()
    for column, decimals in DECIMALS.items():
        body[column] = body[column].round(decimals) + 0.0  # no "-0.0"
        if decimals == 0:
            body[column] = body[column].astype(int)
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        f.write((station + "\n" + body.to_csv(index=False, lineterminator="\n")).encode())


def report_burlington(data: Path) -> None:
    from pvlib.iotools import read_tmy3

    name = next(k for k in LEFT_OUT if k.startswith("Burlington"))
    df, _ = read_tmy3(str(data / name), map_variables=False, encoding="iso-8859-1")
    gaps = missing_channels(df, {"Dry-bulb (C)": "Dry-bulb (C)", "Dew-point (C)": "Dew-point (C)",
                                 "Pressure (mbar)": "Pressure (mbar)", "Wspd (m/s)": "Wspd (m/s)",
                                 "GHI (W/m^2)": "GHI (W/m^2)"})
    print("  Burlington (left out): " + ("; ".join(gaps) if gaps else "every channel present"))


def check_existing(data: Path) -> None:
    """The two TMY3 assets equal the wheel's own files in every channel kept."""
    for source, asset in (("703165TY.csv", "tmy3_703165_sand_point_ak.csv.gz"),
                          ("723170TYA.CSV", "tmy3_723170_greensboro_nc.csv.gz")):
        theirs = pd.read_csv(data / source, skiprows=1)[COLUMNS]
        ours = pd.read_csv(ASSETS / asset, skiprows=1)
        same = theirs.astype(str).equals(ours.astype(str)) or np.allclose(
            theirs[CHANNELS].to_numpy(float), ours[CHANNELS].to_numpy(float))
        print(f"  {asset}: {'equal to' if same else 'DIFFERS from'} the wheel's {source}")


def main(data_dir: str) -> None:
    data = Path(data_dir)
    for site in SITES:
        (lat, lon, elev), frame = site.read(data)
        check_channels(frame, site.name)
        station = f'{site.station_id},"{site.name}",{site.region},{site.utc_offset:.1f},{lat:.3f},{lon:.3f},{elev:g}'
        write_site(ASSETS / site.file, station, frame)
        size = (ASSETS / site.file).stat().st_size
        print(f"{site.file}: {len(frame):,} hours, {size / 1024:.0f} KiB; {station}")
    report_burlington(data)
    check_existing(data)
    for name, why in LEFT_OUT.items():
        print(f"left out {name}: {why}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/pvlib_site/pvlib/data")
