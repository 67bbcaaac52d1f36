"""Safe CSV: text cells a spreadsheet could run as a formula are neutralized, undefined values
written as "undefined", never as 0."""

from __future__ import annotations

import csv
import re
from typing import Any

import numpy as np
import pandas as pd


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: A plain number as text ("-0.25", "1e3"): never neutralized (a spreadsheet reads it as the number it is).
PLAIN_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def neutralize_cell(value: Any) -> Any:
    """Prefix a text cell that a spreadsheet could run as a formula with a quote.

    Cells starting with = + - @ (or tab / carriage return) are neutralized
    unless the whole cell is a plain number such as "-0.25".
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START) and not PLAIN_NUMBER.match(value):
        return "'" + value
    return value


def to_safe_csv(df: pd.DataFrame, index: bool = True, na_rep: str = "undefined") -> bytes:
    """CSV bytes of ``df`` with formula-like text cells neutralized (also in headers and index).

    NaN is written as ``na_rep`` ("undefined" by default), never as 0. Written by Arrow's CSV
    writer (a 124,750-pair verdict table in about a second; pandas' float formatting takes five).
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyarrow import csv as pacsv

    out = df.reset_index() if index else df
    names = [neutralize_cell(str(c)) for c in out.columns]
    if len(set(names)) != len(names):  # duplicate labels: pandas' writer copes
        legacy = out.copy()
        legacy.columns = names
        return legacy.to_csv(index=False, na_rep=na_rep, quoting=csv.QUOTE_MINIMAL).encode("utf-8")
    arrays = []
    for col in out.columns:
        s = out[col]
        if pd.api.types.is_float_dtype(s):
            arr = pc.fill_null(pc.cast(pa.array(s.to_numpy(), from_pandas=True), pa.string()), na_rep)
        elif pd.api.types.is_bool_dtype(s) or pd.api.types.is_integer_dtype(s):
            arr = pa.array(s.to_numpy())
        else:
            try:
                arr = pa.array(s.to_numpy(dtype=object), type=pa.string(), from_pandas=True)
            except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed types: their text
                arr = pa.array([None if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)
                                for v in s.to_numpy(dtype=object)], type=pa.string())
            risky = pc.and_(pc.match_substring_regex(arr, "^[=+\\-@\\t\\r]"),
                            pc.invert(pc.match_substring_regex(arr, "^" + PLAIN_NUMBER.pattern.strip("^$") + "$")))
            arr = pc.if_else(pc.fill_null(risky, False), pc.binary_join_element_wise("'", arr, ""), arr)
            arr = pc.fill_null(arr, na_rep)
        arrays.append(arr)
    sink = pa.BufferOutputStream()
    pacsv.write_csv(pa.table(arrays, names=names), sink,
                    write_options=pacsv.WriteOptions(quoting_style="needed"))
    return sink.getvalue().to_pybytes()


