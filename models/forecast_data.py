"""Data for the Probabilistic Parallel Time Network (Briscoe 2024, ch. 5): Lorenz systems and typical-year weather.

Every sample has three inputs and a target (Briscoe 2024, §5.3):

- **static**: per-system constants (Lorenz: σ, ρ, β; weather: latitude, longitude, elevation);
- **history**: the last 16 steps of the observed channels (Lorenz: x, y, z);
- **forecasts**: the last 10 deterministic forecasts, each of the next 16 steps of the target
  from its own issue time (a stack of shape 10 × 16 × 1, the "parallel time" input);
- **target**: the target channel (Lorenz: x) over the next 16 steps.

Inputs are scaled to [0, 1] with minima and maxima from the training partition. Samples
are partitioned by system (Lorenz) or by month (weather: every site in every part) into the
five parts of Algorithm 2: DARTS train, DARTS validation, GA train, GA validation, test.

Every sample also carries its **group** for a forecast audit by group (issue 55): the weather
site it was observed at (five sites, :data:`WEATHER_SITES`), or the Lorenz system's regime,
set by its parameters (ρ below, near or above the chaotic threshold, :func:`lorenz_regime`),
with the near-threshold regime deliberately rare in the training parts
(:data:`LORENZ_RARE_SHARE` of the training systems) and as common as the others in the test
part: the thesis's "underrepresented subset". ``Samples.groups`` holds one label per sample,
``Samples.time`` its issue time (the step within its series) and ``Samples.series`` which
series it was cut from; all three survive :meth:`Samples.take`, the five-part split and the
scaling. Within each part the samples are ordered by issue time (then series), so "the first
share of the test part" (the warm start) is the earliest share of every group's test period.
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


#: The Lorenz system's regimes by ρ against its Hopf threshold ρ_H(σ, β), in the order of the thesis's share.
LORENZ_REGIMES = ("below threshold", "near threshold", "above threshold")
#: ρ / ρ_H where "below" ends and where "near" ends.
LORENZ_REGIME_BOUNDS = (0.9, 1.06)
#: The regime made rare in the training parts (the "underrepresented subset") and its share of the training
#: systems (and so of the training samples: every trajectory gives the same windows). The test part holds the
#: regimes in equal numbers of systems, the rare one first where they do not divide evenly.
LORENZ_RARE, LORENZ_RARE_SHARE = "near threshold", 0.125
#: ρ / ρ_H drawn for the regimes other than the thesis's (which keeps :func:`lorenz_parameters`).
_LORENZ_RHO_RATIO = {"below threshold": (0.6, 0.8), "near threshold": (0.97, 1.03)}


def lorenz_threshold(sigma: np.ndarray | float, beta: np.ndarray | float) -> np.ndarray:
    """ρ_H = σ(σ + β + 3) / (σ − β − 1): the Hopf bifurcation of the Lorenz system's nontrivial fixed points
    C± (Sparrow, *The Lorenz Equations*, 1982; 24.74 at σ = 10, β = 8/3). Above it no fixed point but the
    origin's unstable pair remains and trajectories are chaotic; somewhat below it (from about 24.06 at the
    classic σ, β) chaos coexists with stable C±; well below it trajectories spiral into C± after a transient.
    For σ in [8, 12] and β near 8/3 it lies between 24.5 and 25.6, so the thesis's ρ ≈ 28 is 1.09 to 1.15 ρ_H."""
    sigma, beta = np.asarray(sigma, dtype=float), np.asarray(beta, dtype=float)
    return sigma * (sigma + beta + 3) / (sigma - beta - 1)


def lorenz_regime(params: np.ndarray) -> np.ndarray:
    """The regime of each system (rows σ, ρ, β) by r = ρ / ρ_H(σ, β): "below threshold" for r < 0.9, "near
    threshold" for 0.9 ≤ r < 1.06, "above threshold" (chaotic; the thesis's systems) for r ≥ 1.06."""
    params = np.atleast_2d(np.asarray(params, dtype=float))
    r = params[:, 1] / lorenz_threshold(params[:, 0], params[:, 2])
    return np.asarray(LORENZ_REGIMES, dtype=object)[np.searchsorted(LORENZ_REGIME_BOUNDS, r, side="right")]


def lorenz_regime_parameters(rng: np.random.Generator, regime: str) -> tuple[float, float, float]:
    """σ, ρ, β of a system in ``regime``: "above threshold" is the thesis's draw (:func:`lorenz_parameters`);
    the others draw σ and β as the thesis does and ρ = r ρ_H(σ, β) with r ~ U(0.6, 0.8) (below) or
    U(0.97, 1.03) (near), inside their regime's bounds in :func:`lorenz_regime`."""
    if regime == "above threshold":
        return lorenz_parameters(rng)
    if regime not in _LORENZ_RHO_RATIO:
        raise ValueError(f"unknown Lorenz regime {regime!r}; use one of {', '.join(LORENZ_REGIMES)}")
    sigma, beta = float(rng.uniform(8, 12)), float(rng.uniform(7.9 / 3, 8.1 / 3))
    return sigma, float(rng.uniform(*_LORENZ_RHO_RATIO[regime]) * lorenz_threshold(sigma, beta)), beta


def lorenz_regime_plan(systems_per_part: int) -> list[list[str]]:
    """The regime of each system of each part. Training parts together: ``max(1, round(LORENZ_RARE_SHARE × n))``
    of their n systems in the rare regime, the rest two "above" (the thesis's) to one "below", dealt in turn
    to the four parts (the rare systems first, so the DARTS-training part always holds one). Test part: the three
    regimes in equal numbers, the remainder to the rare regime first, then "above"."""
    if systems_per_part < 1:
        raise ValueError(f"systems_per_part must be at least 1, got {systems_per_part}")
    n_train = len(TRAINING_PARTS) * systems_per_part
    n_rare = max(1, int(round(LORENZ_RARE_SHARE * n_train)))
    n_above = int(round(2 * (n_train - n_rare) / 3))
    dealt = [LORENZ_RARE] * n_rare + ["below threshold"] * (n_train - n_rare - n_above) + ["above threshold"] * n_above
    plan = [dealt[p::len(TRAINING_PARTS)] for p in range(len(TRAINING_PARTS))]
    order = [LORENZ_RARE, "above threshold", "below threshold"]
    counts = [systems_per_part // 3 + (1 if i < systems_per_part % 3 else 0) for i in range(3)]
    plan.append([r for r, c in zip(order, counts) for _ in range(c)])
    return plan


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
    group: str = ""  # the audit's group of every sample cut from this series (site, regime)


@dataclass
class Samples:
    """Model inputs of one partition, scaled, with each sample's group, issue time and series (None where a
    caller built samples without them)."""

    static: np.ndarray  # (N, c_s)
    history: np.ndarray  # (N, HISTORY, c_h)
    forecasts: np.ndarray  # (N, N_FORECASTS, HORIZON, 1)
    target: np.ndarray  # (N, HORIZON)
    groups: np.ndarray | None = None  # (N,) str: site or regime
    time: np.ndarray | None = None  # (N,) int: issue time, the step within its series
    series: np.ndarray | None = None  # (N,) int: the series (trajectory, site) it was cut from

    def __len__(self) -> int:
        return len(self.target)

    def take(self, index: np.ndarray) -> "Samples":
        def pick(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[index]

        return Samples(self.static[index], self.history[index], self.forecasts[index], self.target[index],
                       pick(self.groups), pick(self.time), pick(self.series))


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

    def target_range(self) -> tuple[float, float]:
        """The target's (lo, hi): the training part's scale s maps to the outcome's units as lo + (hi − lo)·s."""
        return float(self.lo["target"].ravel()[0]), float(self.hi["target"].ravel()[0])

    def target_unscale(self, values: np.ndarray) -> np.ndarray:
        lo, hi = self.target_range()
        return values * (hi - lo) + lo


def issue_times(n_times: int, lags: int = 2) -> np.ndarray:
    """Times t with 16 steps of history, 10 earlier forecasts (each needing ``lags`` states) and 16 ahead."""
    first = max(HISTORY - 1, N_FORECASTS - 1 + lags - 1)
    return np.arange(first, n_times - HORIZON)


def windows(series: Series, forecaster: Callable[[np.ndarray], np.ndarray], index: int = 0) -> dict[int, Samples]:
    """Unscaled samples of one series, grouped by partition, each labelled with the series' group, its issue
    time and ``index`` (the series' number). ``forecaster`` maps the states (T, c_h) to the deterministic
    forecasts issued at every time: (T, HORIZON), NaN where it cannot forecast."""
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
            n = int(m.sum())
            out[p] = Samples(np.repeat(series.static[None, :], n, axis=0), history[m], forecasts[m], target[m],
                             np.full(n, series.group, dtype=object), times[m], np.full(n, index))
    return out


def concat(parts: list[Samples]) -> Samples:
    """One Samples of several; the labels are kept only when every part has them."""
    def join(k: str) -> np.ndarray | None:
        arrays = [getattr(s, k) for s in parts]
        return None if any(a is None for a in arrays) else np.concatenate(arrays)

    return Samples(*(join(k) for k in ("static", "history", "forecasts", "target", "groups", "time", "series")))


#: The parts the models train or select on (everything but the test part).
TRAINING_PARTS = PARTS[:-1]


@dataclass
class Dataset:
    """The five partitions, scaled, with the scaler, a description and what the samples' groups are."""

    name: str
    parts: dict[str, Samples]
    scaler: Scaler
    description: str
    channel_names: list[str]
    group_kind: str = "group"  # what a group is: "site" (weather), "regime" (Lorenz)

    @property
    def groups(self) -> dict[str, np.ndarray | None]:
        """Each part's group labels, aligned with its samples."""
        return {k: s.groups for k, s in self.parts.items()}

    def group_shares(self, parts: tuple[str, ...] = TRAINING_PARTS) -> pd.Series:
        """Share of the samples of ``parts`` in each group (sorted by group; empty when unlabelled)."""
        labels = [self.parts[p].groups for p in parts]
        if any(g is None for g in labels):
            return pd.Series(dtype=float)
        return pd.Series(np.concatenate(labels)).value_counts(normalize=True).sort_index()


def scale(raw: dict[str, Samples], name: str, description: str, channel_names: list[str],
          group_kind: str = "group") -> Dataset:
    sc = Scaler()
    train = raw["darts_train"]
    sc.fit("static", train.static, (0,))
    sc.fit("history", train.history, (0, 1))
    sc.fit("target", train.target.reshape(-1, 1), (0, 1))
    parts = {}
    for k, s in raw.items():
        parts[k] = Samples(sc.apply("static", s.static), sc.apply("history", s.history),
                           sc.apply("target", s.forecasts.reshape(len(s), -1, 1)).reshape(s.forecasts.shape),
                           sc.apply("target", s.target.reshape(-1, 1)).reshape(s.target.shape),
                           s.groups, s.time, s.series)
    return Dataset(name, parts, sc, description, channel_names, group_kind)


# --- the deterministic forecaster's training pairs ----------------------------------------------

def states_for_nvar(series: list[Series]) -> list[np.ndarray]:
    """The raw state sequences of the DARTS-training series (the deterministic forecaster's data)."""
    return [s.values for s in series]


# --- weather -----------------------------------------------------------------------------------

#: The weather sites (file in ``assets/`` → the site's group label). The first two are NREL TMY3 files; the
#: others were converted to the same layout by ``scripts/make_weather_sites.py`` (provenance in
#: assets/PROVENANCE.md and docs/data.md).
WEATHER_SITES = {
    "tmy3_703165_sand_point_ak.csv.gz": "Sand Point, AK",
    "tmy3_723170_greensboro_nc.csv.gz": "Greensboro, NC",
    "tmy2_12839_miami_fl.csv.gz": "Miami, FL",
    "pvgis_tmy_45n_8e_piedmont_it.csv.gz": "Piedmont, Italy",
    "psm3_tmy_401182_moffat_co.csv.gz": "Moffat County, CO",
}
WEATHER_FILES = tuple(WEATHER_SITES)
WEATHER_CHANNELS = ["Dry-bulb (C)", "Dew-point (C)", "Pressure (mbar)", "Wspd (m/s)", "GHI (W/m^2)"]


def read_tmy3(path: Path) -> tuple[np.ndarray, pd.DataFrame]:
    """(latitude, longitude, elevation), and the hourly channels with day of year and hour, from a TMY3 file
    or one of the site files written in its layout (station line, then the columns)."""
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
                   should_stop: Callable[[], bool] | None = None,
                   regimes: bool = True) -> tuple[Dataset, "NVARForecaster"]:
    """Lorenz systems split by system into the five parts; NVAR-MLP trained on the DARTS-train part.
    Each sample's group is its system's regime (:func:`lorenz_regime`). With ``regimes`` the systems follow
    :func:`lorenz_regime_plan` (the near-threshold regime rare in training: 2 of the 16 training systems, 12.5 %,
    at the defaults); without, every system is the thesis's draw (ρ ≈ 28, all "above threshold").
    ``should_stop`` is looked at while integrating, training and cutting windows (True raises :class:`Cancelled`)."""
    from .nvar import NVARForecaster

    rng = np.random.default_rng(seed)
    plan = (lorenz_regime_plan(systems_per_part) if regimes
            else [["above threshold"] * systems_per_part for _ in PARTS])
    params, initials, parts = [], [], []
    for p, systems in enumerate(plan):
        for regime in systems:
            theta = lorenz_regime_parameters(rng, regime)
            for _ in range(inits_per_system):
                params.append(theta)
                initials.append(lorenz_initial(rng))
                parts.append(p)
    trajectories = lorenz_trajectories(np.array(params), np.array(initials), should_stop=should_stop)
    labels = lorenz_regime(np.array(params))
    series = [Series(np.array(theta), traj, np.full(len(traj), p), group=label)
              for theta, traj, p, label in zip(params, trajectories, parts, labels)]
    if progress:
        progress(f"integrated {len(series)} Lorenz trajectories")
    forecaster = NVARForecaster(target=0, horizon=HORIZON, seed=seed).fit(
        [s.values for s in series if s.part[0] == 0], steps=nvar_steps, should_stop=should_stop)
    if progress:
        progress("trained the deterministic NVAR-MLP forecaster")
    raw = _collect(series, forecaster.predict, should_stop)
    n = systems_per_part * inits_per_system
    description = (f"Lorenz: {systems_per_part} systems × {inits_per_system} initial conditions per part "
                   f"({n * len(PARTS)} trajectories of 1,000 times on [0, 100])")
    if regimes:
        rare = sum(r == LORENZ_RARE for p in plan[:-1] for r in p)
        n_train = len(TRAINING_PARTS) * systems_per_part
        description += (f"; groups: regime by ρ against the chaotic threshold ρ_H, the {LORENZ_RARE} regime rare "
                        f"in training ({rare} of {n_train} training systems, {rare / n_train:.1%}), the test part's "
                        f"systems {', '.join(f'{plan[-1].count(r)} {r}' for r in LORENZ_REGIMES)}")
    return scale(raw, "lorenz", description, ["x", "y", "z"], "regime"), forecaster


#: Months of each part for the weather data: the split is by time, so every site (group) is in every part.
WEATHER_MONTHS = {0: (1, 6, 11), 1: (2, 7, 12), 2: (3, 8), 3: (4, 9), 4: (5, 10)}


def weather_dataset(assets: Path = ASSETS_DIR, seed: int = 0, nvar_steps: int = 1500,
                    progress: Callable[[str], None] | None = None,
                    should_stop: Callable[[], bool] | None = None) -> tuple[Dataset, "NVARForecaster"]:
    """Every site of :data:`WEATHER_SITES`: history = temperature, dew point, pressure, wind, GHI and cyclic
    time; target = dry-bulb temperature; parts by month of the issue time (every site in every part); each
    sample's group is its site."""
    from .nvar import NVARForecaster

    month_part = {m: p for p, months in WEATHER_MONTHS.items() for m in months}
    series = []
    for name, site in WEATHER_SITES.items():
        static, df = read_tmy3(assets / name)
        values = df[WEATHER_CHANNELS].to_numpy(dtype=float)
        part = df["month"].map(month_part).to_numpy()
        series.append(Series(static, values, part, 0, cyclic(df["doy"].to_numpy(), df["hour"].to_numpy()), site))
    forecaster = NVARForecaster(target=0, horizon=HORIZON, seed=seed).fit(
        [s.values for s in series], allowed=[s.part == 0 for s in series], steps=nvar_steps, should_stop=should_stop)
    if progress:
        progress("trained the deterministic NVAR-MLP forecaster")
    raw = _collect(series, forecaster.predict, should_stop)
    sites = list(WEATHER_SITES.values())
    return scale(raw, "weather", f"Typical-year hourly weather at {len(sites)} sites, {', '.join(sites[:-1])} and "
                                 f"{sites[-1]} (8,760 hours each); parts by month; groups: site",
                 [*WEATHER_CHANNELS, "sin doy", "cos doy", "sin hour", "cos hour"], "site"), forecaster


def _collect(series: list[Series], forecaster: Callable[[np.ndarray], np.ndarray],
             should_stop: Callable[[], bool] | None = None) -> dict[str, Samples]:
    """The windows of every series by part, each part ordered by issue time and then series (so any leading
    share of a part covers every series and group over the earliest times)."""
    grouped: dict[int, list[Samples]] = {p: [] for p in range(len(PARTS))}
    for i, s in enumerate(series):
        if should_stop is not None and should_stop():
            raise Cancelled("stopped while cutting the forecast windows")
        for p, samples in windows(s, forecaster, i).items():
            grouped[p].append(samples)
    missing = [PARTS[p] for p, g in grouped.items() if not g]
    if missing:
        raise ValueError(f"no samples in {', '.join(missing)}")
    out = {}
    for p, g in grouped.items():
        joined = concat(g)
        out[PARTS[p]] = joined.take(np.lexsort((joined.series, joined.time)))
    return out
