"""Numbers from text, correctly rounded: the one parser every number read from a file goes through.

A score written as ``0.26310143550766046`` (17 significant digits, as Python, NumPy and pandas write a float)
must read back as that very float: a threshold rule decides the row holding its own threshold by ``>=``.
pandas' default converter (``pd.to_numeric`` on text) is not correctly rounded: about a third of the floats
``DataFrame.to_csv`` writes come back one unit in the last place off. Here the text is checked against the
syntax below and converted by Arrow's string → float64 cast, on the whole column at once (no Python step per
value); the cast is correctly rounded (the nearest float64, ties to even), so
every float64 written with enough digits (Python's ``repr``, ``DataFrame.to_csv``, ``np.savetxt`` with
``%.17g``) reads back bit for bit, subnormals and ``-0.0`` included.

Measured on 10^6 floats written by ``repr`` (2 shared cores, Arrow 26, NumPy 2.3): Arrow's cast 18-35 ms,
trimming the spaces 26 ms, the syntax check (only for a column where some value is no number) 130 ms; NumPy's
casts (object or ``StringDType`` → float64, also correctly rounded) take 300 ms, ``pd.to_numeric`` 260-300 ms.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

#: The spaces a number may carry on either side (ASCII white space, as ``pd.to_numeric`` allowed).
SPACES = " \t\n\r\v\f"
#: A number as text, once its spaces are trimmed: a sign, digits with an optional decimal point (".5" and "5."
#: too), an optional exponent; or inf, infinity, nan in any case. Digits are ASCII: "١٢" and "１" are no number
#: here (the count reader of :mod:`fairness_core.services.io.cm_table` reads other scripts' digits, with a notice).
NUMBER = r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity|nan))"
#: A column of decimal commas (read only where the file's delimiter is not a comma): whole numbers or a comma
#: and digits, nothing else.
_DECIMAL_COMMA = rf"^[{SPACES}]*[+-]?[0-9]+(?:,[0-9]+)?[{SPACES}]*$"


def as_numbers(values: Any, delimiter: str = ",") -> pd.Series:
    """A column as float64, NaN where a value is not a number (so that the caller names its row and column).

    Text is read as :data:`NUMBER` spells a number, with spaces around it; overflow is ±inf and underflow ±0 or
    a subnormal, as IEEE rounding gives. In a file whose delimiter is not a comma, values like "0,769" are
    decimal commas when the whole column is written that way (and never 1,234-style thousands: those have
    exactly three digits after the comma and are left alone unless every value has a decimal comma). Numbers
    (a typed column) are kept as they are, as float64; a categorical column is read through its categories.

    >>> as_numbers(pd.Series(["0.26310143550766046", " -1e-3 ", "+.5", "Infinity", "1,5", "abc", None])).tolist()
    [0.26310143550766046, -0.001, 0.5, inf, nan, nan, nan]
    >>> as_numbers(pd.Series(["0,25", "1", "-2,5"]), delimiter=";").tolist()
    [0.25, 1.0, -2.5]
    >>> as_numbers(pd.Series(["-0.0", "5e-324", "1e400"])).map(repr).tolist()
    ['-0.0', '5e-324', 'inf']
    """
    s = values if isinstance(values, pd.Series) else pd.Series(values)
    if isinstance(s.dtype, pd.CategoricalDtype):
        categories = as_numbers(pd.Series(s.cat.categories), delimiter).to_numpy()
        codes = s.cat.codes.to_numpy()
        out = np.where(codes >= 0, categories[np.maximum(codes, 0)] if len(categories) else np.nan, np.nan)
        return pd.Series(out, index=s.index, name=s.name, dtype=np.float64)
    if isinstance(s.dtype, pd.StringDtype):
        return pd.Series(_parse_text(s, delimiter), index=s.index, name=s.name, dtype=np.float64)
    if s.dtype != object:
        return pd.Series(_plain(s), index=s.index, name=s.name, dtype=np.float64)
    kind = pd.api.types.infer_dtype(s, skipna=True)
    if kind in ("string", "empty"):
        return pd.Series(_parse_text(s, delimiter), index=s.index, name=s.name, dtype=np.float64)
    if kind not in ("mixed", "mixed-integer"):   # numbers, booleans, decimals: exact as they are
        return pd.Series(_plain(s), index=s.index, name=s.name, dtype=np.float64)
    is_str = np.fromiter(map(isinstance, s.to_numpy(), [str] * len(s)), dtype=bool, count=len(s))
    out = _plain(s.where(~is_str))
    out[is_str] = _parse_text(s[is_str], delimiter)
    return pd.Series(out, index=s.index, name=s.name, dtype=np.float64)


def _plain(s: pd.Series) -> np.ndarray:
    """Values that are not text as float64 (NaN for what is no number); a new array."""
    if s.dtype.kind in "biuf":
        return np.array(s.to_numpy(dtype=np.float64, na_value=np.nan), dtype=np.float64)
    numbers = pd.to_numeric(s, errors="coerce")
    return np.array(numbers.to_numpy(dtype=np.float64, na_value=np.nan), dtype=np.float64)


def _parse_text(s: pd.Series, delimiter: str) -> np.ndarray:
    """Text as float64, correctly rounded; NaN where it is missing or not a :data:`NUMBER`.

    Arrow's cast refuses a whole column for one value it cannot read, so a column whose every value reads is
    converted at once; otherwise the values that match :data:`NUMBER` are picked out first. The cast reads
    exactly :data:`NUMBER` (besides "nan(…)", which is NaN either way); ``tests/test_exact_numbers.py`` pins
    that the two paths agree."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not len(s):
        return np.empty(0, dtype=np.float64)
    text = pc.ascii_trim(pa.array(s, type=pa.large_string(), from_pandas=True), SPACES)
    if delimiter != "," and pc.any(pc.match_substring(text, ",")).as_py() and \
            pc.all(pc.match_substring_regex(text, _DECIMAL_COMMA)).as_py():
        text = pc.replace_substring(text, ",", ".")
    try:
        numbers = pc.cast(text, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):   # some value is no number: read the others
        valid = pc.match_substring_regex(text, f"^{NUMBER}$")
        numbers = pc.cast(pc.if_else(valid, text, pa.scalar(None, pa.large_string())), pa.float64())
    return np.array(numbers.to_numpy(zero_copy_only=False), dtype=np.float64)


__all__ = ["NUMBER", "SPACES", "as_numbers"]
