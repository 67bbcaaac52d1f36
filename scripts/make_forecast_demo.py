"""Write ``assets/demo_forecasts_districts_synthetic.csv``: a synthetic audit of a day-ahead demand forecaster.

No real utility and no real model: every number is drawn from a seeded generator, so the file is the same on every
run. The case it stands for: a utility forecasts each district's **daily peak electricity demand** (MW) a day ahead,
as 7 quantiles (levels 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95), for 4 districts over two years (2023-01-01 to
2024-12-30, 730 days). Under-forecasting demand is the harm (too little capacity scheduled), so a larger forecast
serves the district: ``positive_is="benefit"``.

Known by construction. Each district's demand is D_t = base + 12·cos(4π·day/365.25) (a summer and a winter peak)
− 8 on weekends + e_t, with e_t an AR(1) series (ρ = 0.6: a hot or cold spell lasts days) of marginal standard
deviation s. The forecaster knows everything but e_t, and forecasts the normal quantiles of centre + shift and
spread s_f:

===========  ======  =====  ======  =====  ===========================================================
district     base    s      shift   s_f    so
===========  ======  =====  ======  =====  ===========================================================
North        120     6      0       6      calibrated
Harbour      90      5      0       5      calibrated
Riverside    70      5      −6      5      under-forecast by 6 MW: algorithmic bias against it
Hillside     60      10     0       5      unbiased, bands half as wide as they should be: less accurate
===========  ======  =====  ======  =====  ===========================================================

Values are rounded to 0.1 MW. Columns: ``date, district, peak_mw`` and one column per level, ``q0.05`` … ``q0.95``.
Run from the repository root:

    python scripts/make_forecast_demo.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy import signal, stats

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "assets" / "demo_forecasts_districts_synthetic.csv"
SEED = 20250155
DAYS = 730
RHO = 0.6
LEVELS = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
#: district: (base MW, error's marginal sd, the forecaster's shift, the forecaster's spread).
DISTRICTS = {"North": (120.0, 6.0, 0.0, 6.0), "Harbour": (90.0, 5.0, 0.0, 5.0),
             "Riverside": (70.0, 5.0, -6.0, 5.0), "Hillside": (60.0, 10.0, 0.0, 5.0)}


def make(seed: int = SEED) -> pd.DataFrame:
    """One row per district and day: date, district, peak_mw, q0.05 … q0.95."""
    rng = np.random.default_rng(seed)
    dates = pd.date_range("2023-01-01", periods=DAYS, freq="D")
    day = np.arange(DAYS)
    calendar = 12 * np.cos(4 * np.pi * day / 365.25) - 8 * (dates.dayofweek >= 5)
    z = stats.norm.ppf(LEVELS)
    frames = []
    for name, (base, s, shift, s_f) in DISTRICTS.items():
        innovation = rng.normal(0.0, s * np.sqrt(1 - RHO**2), DAYS)
        error = signal.lfilter([1.0], [1.0, -RHO], innovation)
        centre = base + calendar
        frame = pd.DataFrame({"date": dates.strftime("%Y-%m-%d"), "district": name,
                              "peak_mw": np.round(centre + error, 1)})
        q = np.round(centre[:, None] + shift + s_f * z[None, :], 1)
        for k, level in enumerate(LEVELS):
            frame[f"q{level:g}"] = q[:, k]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def main() -> None:
    make().to_csv(OUT, index=False, float_format="%.1f", lineterminator="\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
