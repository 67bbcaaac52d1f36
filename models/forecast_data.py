"""Data for the Probabilistic Parallel Time Network (Briscoe 2024, ch. 5): Lorenz systems and TMY3 weather.

Every sample has three inputs and a target (Briscoe 2024, §5.3):

- **static**: per-system constants (Lorenz: σ, ρ, β; weather: latitude, longitude, elevation);
- **history**: the last 16 steps of the observed channels (Lorenz: x, y, z);
- **forecasts**: the last 10 deterministic forecasts, each of the next 16 steps of the target
  from its own issue time (a stack of shape 10 × 16 × 1, the "parallel time" input);
- **target**: the target channel (Lorenz: x) over the next 16 steps.

Inputs are scaled to [0, 1] with minima and maxima from the training partition. Samples
are partitioned by system (Lorenz) or by month (weather: two sites only) into the five
parts of Algorithm 2: DARTS train, DARTS validation, GA train, GA validation, test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
from scipy.integrate import solve_ivp

from .jobs_interface import Cancelled

HISTORY, HORIZON, N_FORECASTS = 16, 16, 10
PARTS = ("darts_train", "darts_val", "ga_train", "ga_val", "test")
ASSETS_DIR = Path(__file__).resolve().parents[1] / "assets"


# --- Lorenz ----------------------------------------------------------------------------------

def lorenz_rhs(t: float, s: np.ndarray, sigma: float, rho: float, beta: float) -> list[float]:
    """Briscoe 2024, eqs. 5.1–5.3."""
    x, y, z = s
    return [sigma * (y - x), x * (rho - z) - y, x * y - beta * z]


def lorenz_parameters(rng: np.random.Generator) -> tuple[float, float, float]:
    """σ ~ U(8, 12), ρ ~ U(27.9, 28.1), β ~ U(7.9/3, 8.1/3) (Briscoe 2024, §5.3.2)."""
    return float(rng.uniform(8, 12)), float(rng.uniform(27.9, 28.1)), float(rng.uniform(7.9 / 3, 8.1 / 3))


def lorenz_initial(rng: np.random.Generator) -> np.ndarray:
    """(x0, y0, z0) ~ (U(−20, 20), U(−20, 20), U(0, 40)) (Briscoe 2024, eq. 5.4)."""
    return np.array([rng.uniform(-20, 20), rng.uniform(-20, 20), rng.uniform(0, 40)])


def lorenz_trajectory(params: tuple[float, float, float], initial: np.ndarray, n_times: int = 1000,
                      t_end: float = 100.0) -> np.ndarray:
    """(n_times, 3) states at ``n_times`` evenly spaced times in [0, t_end] (DOP853, rtol 1e-9)."""
    return lorenz_trajectories(np.array([params]), np.array([initial]), n_times, t_end)[0]


def lorenz_trajectories(params: np.ndarray, initials: np.ndarray, n_times: int = 1000,
                        t_end: float = 100.0, should_stop: Callable[[], bool] | None = None) -> np.ndarray:
    """(k, n_times, 3): k systems integrated together as one 3k-dimensional ODE (one solve_ivp
    call with a vectorized right-hand side; the step control keeps every system within tolerance).
    ``should_stop`` is looked at every 1,000 evaluations of the right-hand side (True raises
    :class:`Cancelled`)."""
    params = np.asarray(params, dtype=float)
    sigma, rho, beta = params[:, 0], params[:, 1], params[:, 2]
    calls = [0]

    def rhs(t: float, s: np.ndarray) -> np.ndarray:
        calls[0] += 1
        if should_stop is not None and calls[0] % 1000 == 0 and should_stop():
            raise Cancelled(f"stopped while integrating the Lorenz systems (t = {t:.1f} of {t_end:g})")
        x, y, z = s.reshape(-1, 3).T
        return np.column_stack([sigma * (y - x), x * (rho - z) - y, x * y - beta * z]).ravel()

    t = np.linspace(0.0, t_end, n_times)
    sol = solve_ivp(rhs, (0.0, t_end), np.asarray(initials, dtype=float).ravel(), t_eval=t, method="DOP853",
                    rtol=1e-9, atol=1e-9)
    if not sol.success:
        raise RuntimeError(f"solve_ivp failed: {sol.message}")
    return sol.y.T.reshape(n_times, -1, 3).transpose(1, 0, 2)


# --- windows -----------------------------------------------------------------------------------

@dataclass
class Series:
    """One trajectory (or one site's year): its constants and its observed channels over time."""

    static: np.ndarray  # (c_s,)
    values: np.ndarray  # (T, c_h); column ``target`` is the forecast target
    part: np.ndarray  # (T,) partition index of each *issue time*
    target: int = 0
    extra: np.ndarray | None = None  # (T, c_x) known covariates (e.g. time of day), added to history


@dataclass
class Samples:
    """Model inputs of one partition, scaled."""

    static: np.ndarray  # (N, c_s)
    history: np.ndarray  # (N, HISTORY, c_h)
    forecasts: np.ndarray  # (N, N_FORECASTS, HORIZON, 1)
    target: np.ndarray  # (N, HORIZON)

    def __len__(self) -> int:
        return len(self.target)

    def take(self, index: np.ndarray) -> "Samples":
        return Samples(self.static[index], self.history[index], self.forecasts[index], self.target[index])


@dataclass
class Scaler:
    """Min–max scaling to [0, 1] fitted on training data; the target shares the history's scale."""

    lo: dict[str, np.ndarray] = field(default_factory=dict)
    hi: dict[str, np.ndarray] = field(default_factory=dict)

    def fit(self, name: str, values: np.ndarray, axis: tuple[int, ...]) -> None:
        self.lo[name] = values.min(axis=axis, keepdims=True)
        span = values.max(axis=axis, keepdims=True) - self.lo[name]
        self.hi[name] = self.lo[name] + np.where(span > 0, span, 1.0)

    def apply(self, name: str, values: np.ndarray) -> np.ndarray:
        return (values - self.lo[name]) / (self.hi[name] - self.lo[name])

    def target_unscale(self, values: np.ndarray) -> np.ndarray:
        lo, hi = float(self.lo["target"].ravel()[0]), float(self.hi["target"].ravel()[0])
        return values * (hi - lo) + lo


def issue_times(n_times: int, lags: int = 2) -> np.ndarray:
    """Times t with 16 steps of history, 10 earlier forecasts (each needing ``lags`` states) and 16 ahead."""
    first = max(HISTORY - 1, N_FORECASTS - 1 + lags - 1)
    return np.arange(first, n_times - HORIZON)


def windows(series: Series, forecaster: Callable[[np.ndarray], np.ndarray]) -> dict[int, Samples]:
    """Unscaled samples of one series, grouped by partition. ``forecaster`` maps the states
    (T, c_h) to the deterministic forecasts issued at every time: (T, HORIZON), NaN where it
    cannot forecast."""
    v = series.values
    hist_values = v if series.extra is None else np.hstack([v, series.extra])
    fc = forecaster(v)  # (T, HORIZON)
    times = issue_times(len(v))
    idx_h = times[:, None] + np.arange(-HISTORY + 1, 1)[None, :]
    idx_f = times[:, None] + np.arange(-N_FORECASTS + 1, 1)[None, :]
    idx_y = times[:, None] + np.arange(1, HORIZON + 1)[None, :]
    history = hist_values[idx_h]
    forecasts = fc[idx_f][..., None]
    target = v[idx_y, series.target]
    ok = np.isfinite(forecasts).all(axis=(1, 2, 3))
    out = {}
    for p in range(len(PARTS)):
        m = ok & (series.part[times] == p)
        if m.any():
            out[p] = Samples(np.repeat(series.static[None, :], m.sum(), axis=0), history[m], forecasts[m], target[m])
    return out


def concat(parts: list[Samples]) -> Samples:
    return Samples(*(np.concatenate([getattr(s, k) for s in parts]) for k in ("static", "history", "forecasts",
                                                                               "target")))


@dataclass
class Dataset:
    """The five partitions, scaled, with the scaler and a description."""

    name: str
    parts: dict[str, Samples]
    scaler: Scaler
    description: str
    channel_names: list[str]


def scale(raw: dict[str, Samples], name: str, description: str, channel_names: list[str]) -> Dataset:
    sc = Scaler()
    train = raw["darts_train"]
    sc.fit("static", train.static, (0,))
    sc.fit("history", train.history, (0, 1))
    sc.fit("target", train.target.reshape(-1, 1), (0, 1))
    parts = {}
    for k, s in raw.items():
        parts[k] = Samples(sc.apply("static", s.static), sc.apply("history", s.history),
                           sc.apply("target", s.forecasts.reshape(len(s), -1, 1)).reshape(s.forecasts.shape),
                           sc.apply("target", s.target.reshape(-1, 1)).reshape(s.target.shape))
    return Dataset(name, parts, sc, description, channel_names)


# --- the deterministic forecaster's training pairs ----------------------------------------------

def states_for_nvar(series: list[Series]) -> list[np.ndarray]:
    """The raw state sequences of the DARTS-training series (the deterministic forecaster's data)."""
    return [s.values for s in series]


# --- weather -----------------------------------------------------------------------------------

WEATHER_FILES = ("tmy3_703165_sand_point_ak.csv.gz", "tmy3_723170_greensboro_nc.csv.gz")
WEATHER_CHANNELS = ["Dry-bulb (C)", "Dew-point (C)", "Pressure (mbar)", "Wspd (m/s)", "GHI (W/m^2)"]


def read_tmy3(path: Path) -> tuple[np.ndarray, pd.DataFrame]:
    """(latitude, longitude, elevation), and the hourly channels with day of year and hour."""
    head = pd.read_csv(path, nrows=1, header=None, float_precision="round_trip")   # floats as written
    static = head.iloc[0, [4, 5, 6]].to_numpy(dtype=float)
    df = pd.read_csv(path, skiprows=1, float_precision="round_trip")
    date = pd.to_datetime(df["Date (MM/DD/YYYY)"], format="%m/%d/%Y")
    hour = df["Time (HH:MM)"].str.slice(0, 2).astype(int)
    out = df[WEATHER_CHANNELS].astype(float).copy()
    out["doy"] = date.dt.dayofyear.to_numpy()
    out["hour"] = hour.to_numpy() % 24
    out["month"] = date.dt.month.to_numpy()
    return static, out


def cyclic(doy: np.ndarray, hour: np.ndarray) -> np.ndarray:
    """Day of year and seconds from midnight as sine/cosine pairs, scaled to [0, 1] (Briscoe 2024, §5.3.1)."""
    a = 2 * np.pi * (doy - 1) / 365.0
    b = 2 * np.pi * hour * 3600 / 86400.0
    return (np.column_stack([np.sin(a), np.cos(a), np.sin(b), np.cos(b)]) + 1) / 2


# --- builders ------------------------------------------------------------------------------------

def lorenz_dataset(systems_per_part: int = 4, inits_per_system: int = 2, seed: int = 0, nvar_steps: int = 1500,
                   progress: Callable[[str], None] | None = None,
                   should_stop: Callable[[], bool] | None = None) -> tuple[Dataset, "NVARForecaster"]:
    """Lorenz systems split by system into the five parts; NVAR-MLP trained on the DARTS-train part.
    ``should_stop`` is looked at while integrating, training and cutting windows (True raises :class:`Cancelled`)."""
    from .nvar import NVARForecaster

    rng = np.random.default_rng(seed)
    params, initials, parts = [], [], []
    for p in range(len(PARTS)):
        for _ in range(systems_per_part):
            theta = lorenz_parameters(rng)
            for _ in range(inits_per_system):
                params.append(theta)
                initials.append(lorenz_initial(rng))
                parts.append(p)
    trajectories = lorenz_trajectories(np.array(params), np.array(initials), should_stop=should_stop)
    series = [Series(np.array(theta), traj, np.full(len(traj), p))
              for theta, traj, p in zip(params, trajectories, parts)]
    if progress:
        progress(f"integrated {len(series)} Lorenz trajectories")
    forecaster = NVARForecaster(target=0, horizon=HORIZON, seed=seed).fit(
        [s.values for s in series if s.part[0] == 0], steps=nvar_steps, should_stop=should_stop)
    if progress:
        progress("trained the deterministic NVAR-MLP forecaster")
    raw = _collect(series, forecaster.predict, should_stop)
    n = systems_per_part * inits_per_system
    return scale(raw, "lorenz", f"Lorenz: {systems_per_part} systems × {inits_per_system} initial conditions per "
                                f"part ({n * len(PARTS)} trajectories of 1,000 times on [0, 100])",
                 ["x", "y", "z"]), forecaster


#: Months of each part for the weather data (two sites, so the split is by time).
WEATHER_MONTHS = {0: (1, 6, 11), 1: (2, 7, 12), 2: (3, 8), 3: (4, 9), 4: (5, 10)}


def weather_dataset(assets: Path = ASSETS_DIR, seed: int = 0, nvar_steps: int = 1500,
                    progress: Callable[[str], None] | None = None,
                    should_stop: Callable[[], bool] | None = None) -> tuple[Dataset, "NVARForecaster"]:
    """Both TMY3 sites: history = temperature, dew point, pressure, wind, GHI and cyclic time;
    target = dry-bulb temperature; parts by month of the issue time."""
    from .nvar import NVARForecaster

    month_part = {m: p for p, months in WEATHER_MONTHS.items() for m in months}
    series = []
    for name in WEATHER_FILES:
        static, df = read_tmy3(assets / name)
        values = df[WEATHER_CHANNELS].to_numpy(dtype=float)
        part = df["month"].map(month_part).to_numpy()
        series.append(Series(static, values, part, 0, cyclic(df["doy"].to_numpy(), df["hour"].to_numpy())))
    forecaster = NVARForecaster(target=0, horizon=HORIZON, seed=seed).fit(
        [s.values for s in series], allowed=[s.part == 0 for s in series], steps=nvar_steps, should_stop=should_stop)
    if progress:
        progress("trained the deterministic NVAR-MLP forecaster")
    raw = _collect(series, forecaster.predict, should_stop)
    return scale(raw, "weather", "TMY3 hourly weather, Sand Point AK and Greensboro NC (8,760 hours each); "
                                 "parts by month", [*WEATHER_CHANNELS, "sin doy", "cos doy", "sin hour", "cos hour"]
                 ), forecaster


def _collect(series: list[Series], forecaster: Callable[[np.ndarray], np.ndarray],
             should_stop: Callable[[], bool] | None = None) -> dict[str, Samples]:
    grouped: dict[int, list[Samples]] = {p: [] for p in range(len(PARTS))}
    for s in series:
        if should_stop is not None and should_stop():
            raise Cancelled("stopped while cutting the forecast windows")
        for p, samples in windows(s, forecaster).items():
            grouped[p].append(samples)
    missing = [PARTS[p] for p, g in grouped.items() if not g]
    if missing:
        raise ValueError(f"no samples in {', '.join(missing)}")
    return {PARTS[p]: concat(g) for p, g in grouped.items()}
