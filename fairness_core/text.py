"""Numbers as text for many values at once (NumPy string ufuncs, no Python loop per value).

Used where tables or figures need hundreds of thousands of formatted numbers: the verdict
explanations of every pair and the heatmap hover texts.
"""

from __future__ import annotations

import numpy as np

STR = np.dtypes.StringDType()


def fixed(x: np.ndarray, decimals: int = 3, signed: bool = False) -> np.ndarray:
    """``x`` with ``decimals`` places as a StringDType array ("-" for negatives, "+" when ``signed``).

    Non-finite values format as 0; callers replace them.

    >>> fixed(np.array([1.23456, -0.5, 0.0004]), 3, signed=True).tolist()
    ['+1.235', '-0.500', '+0.000']
    """
    x = np.asarray(x, dtype=float)
    scale = 10 ** decimals
    r = np.round(np.abs(np.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0)) * scale).astype(np.int64)
    whole = (r // scale).astype(STR)
    out = whole if decimals == 0 else whole + "." + np.strings.zfill((r % scale).astype(STR), decimals)
    negative = (x < 0) & (r > 0)
    sign = np.where(negative, "-", "+" if signed else "").astype(STR)
    return sign + out


def p_values(p: np.ndarray) -> np.ndarray:
    """"p = 0.012", "p < 0.001" or "p undefined" (NaN), vectorized.

    >>> p_values(np.array([0.0123, 1e-9, np.nan])).tolist()
    ['p = 0.012', 'p < 0.001', 'p undefined']
    """
    p = np.asarray(p, dtype=float)
    out = "p = " + fixed(np.minimum(p, 1.0))
    out[p < 0.001] = "p < 0.001"
    out[np.isnan(p)] = "p undefined"
    return out


def bound(x: float, null: float, decimals: int = 3, signed: bool = False) -> str:
    """An interval end with ``decimals`` places, or more where fewer would print the ``null`` value it differs
    from (a bound of 0.9996 beside a test of DI = 1 prints "0.9996", not "1.00").

    >>> bound(0.99962, 1.0, 2), bound(1.0, 1.0, 2), bound(0.0004, 0.0, 3, signed=True), bound(0.5, 0.0, 3)
    ('0.9996', '1.00', '+0.0004', '0.500')
    """
    if not np.isfinite(x):
        return "∞" if x > 0 else ("−∞" if x < 0 else "undefined")
    places = decimals
    while places < 10 and x != null and round(x, places) == round(null, places):
        places += 1
    return f"{x:+.{places}f}" if signed else f"{x:.{places}f}"


def counts(x: np.ndarray) -> np.ndarray:
    """Whole numbers below 10^12 with thousands separators, vectorized ("1,234,567"); NaN and inf as 0.

    >>> counts(np.array([0, 7, 1234, 1007005, 999999999999])).tolist()
    ['0', '7', '1,234', '1,007,005', '999,999,999,999']
    """
    v = np.nan_to_num(np.asarray(x, dtype=float), nan=0.0, posinf=0.0, neginf=0.0).astype(np.int64)
    return _thousands(v)


def _thousands(v: np.ndarray) -> np.ndarray:
    parts = [(v // 10 ** (3 * k)) % 1000 for k in range(4)]          # units, thousands, millions, billions
    out = parts[0].astype(STR)
    for k in range(1, 4):
        above = v >= 10 ** (3 * k)
        if not above.any():
            break
        padded = np.strings.zfill(out, 3 * k + (k - 1))                # "7" → "007" (and "1,234" keeps its comma)
        out = np.where(above, parts[k].astype(STR) + "," + padded, out)
    return out.astype(STR)
