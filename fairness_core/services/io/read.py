"""Uploaded files to frames of text: CSV/TSV/TXT, XLSX and Parquet, every cell as text, sizes checked
before anything is built; a sample of a large upload, and counting one in place.

Rows are counted from 1 at the first data row below the header ("row 1 (file line 2)"). Nothing is
unpickled or evaluated: CSV is parsed as text and Excel with calamine (:mod:`.workbook`).
"""

from __future__ import annotations

import csv
import io as _io
import os
import re
import unicodedata
from pathlib import PurePath
from typing import Any, Hashable, Sequence

import numpy as np
import pandas as pd

from ...audit import Audit
from ...common.numbers import as_numbers
from ...statistics.row_counts import TEXT, is_text
from ...common.validation import MAX_NAME_LENGTH, MAX_ROWS, DataValidationError, Problem, hidden_name_problem
from .upload_limits import check_cells, check_columns
from .parquet import parquet_file, read_head, read_parquet, text_frame
from .warehouse import aggregate
from .workbook import read_xlsx


#: How many characters of a too-long column name a message shows.
NAME_SHOWN = 40


def normalize_header(name: Hashable) -> str:
    return re.sub(r"[\s_\-./()]+", "", str(name)).lower()


def read_table(data: bytes, filename: str, max_rows: int = MAX_ROWS, sheet: str | None = None,
               columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Parse an uploaded CSV/TSV/TXT, XLSX or Parquet file into a DataFrame of text.

    Every cell is read as text (:data:`TEXT`, Arrow-backed; missing cells as NaN), so group
    names keep their spelling ("007", "1.10", 20-digit ids) and each consumer converts what
    it needs strictly (:func:`cms_from_table` counts, :func:`to_numbers` features). The
    delimiter (comma, semicolon, tab, pipe) is sniffed from the header line; line endings
    may be \\n, \\r\\n or \\r; text is UTF-8 (with or without BOM), UTF-16 (with a BOM, or
    without one when every other byte is NUL, with a notice), else Windows-1252 (with a
    notice). Notices (encoding, a dropped index column) are in ``df.attrs["notices"]``.

    ``columns`` reads only those columns of a Parquet file (its limits then apply to them alone; see
    :func:`parquet_shape` for what a file holds).

    Sizes are decided before anything is built: rows and cells (:data:`MAX_CELLS`) from a
    count of the lines, a Parquet footer or a streamed pass over a worksheet's XML
    (:data:`MAX_XLSX_CELLS`, :data:`MAX_XLSX_XML_BYTES`, and the text its cells will hold,
    ``workbook.MAX_XLSX_TEXT_BYTES``), expansion from the declared sizes; a Parquet file's text
    is counted batch by batch as it is decoded (:data:`MAX_EXPANDED_BYTES`). A damaged file is
    refused in words.

    Raises
    ------
    DataValidationError
        If the file is empty, unreadable, of an unsupported type, has a row with
        more or fewer fields than the header, more than ``max_rows`` data rows,
        more than :data:`MAX_COLUMNS` columns or a column name longer than
        :data:`MAX_NAME_LENGTH` characters.
    """
    suffix = PurePath(filename).suffix.lower()
    if not data:
        raise DataValidationError(f"{filename} is empty")
    notices: list[str] = []
    if suffix in (".xlsx", ".xlsm"):
        df = read_xlsx(data, filename, max_rows, sheet)
    elif suffix == ".xls":
        raise DataValidationError(f"{filename}: old .xls workbooks are not supported; save it as .xlsx or CSV")
    elif suffix in (".csv", ".tsv", ".txt", ""):
        df = _read_delimited(data, filename, max_rows, notices)
    elif suffix in (".parquet", ".pq"):
        df = read_parquet(data, filename, max_rows, columns)
    else:
        raise DataValidationError(f"{filename}: unsupported file type {suffix!r}; use CSV, TSV, XLSX or Parquet")
    if df.shape[1] == 0 or df.shape[0] == 0:
        raise DataValidationError(f"{filename} has no data rows below its header")
    if len(df) > max_rows:
        raise DataValidationError(f"{filename} has {len(df):,} data rows; the limit is {max_rows:,}")
    df.columns = [unicodedata.normalize("NFC", str(c)).strip() for c in df.columns]
    for k, c in enumerate(df.columns):
        if (why := hidden_name_problem(c, f"column {k + 1}'s name")) is not None:
            raise DataValidationError(f"{filename}: {why}")
    long = [k for k, c in enumerate(df.columns) if len(c) > MAX_NAME_LENGTH]
    if long:   # which column: its position and how its name begins (the whole name would fill the message)
        name = df.columns[long[0]]
        more = f" ({len(long) - 1:,} more column names are too long)" if len(long) > 1 else ""
        raise DataValidationError(f"{filename}: column {long[0] + 1}'s name has {len(name):,} characters; the limit "
                                  f"is {MAX_NAME_LENGTH}. It begins {name[:NAME_SHOWN]!r}…{more}")
    df = _resolve_duplicate_columns(df, notices)
    df = _drop_index_column(df, notices)
    plain = [c for c, t in zip(df.columns, df.dtypes) if t != TEXT]
    if plain:   # workbooks arrive as Python strings: the same compact text as every other upload
        attrs = dict(df.attrs)
        df = df.astype({c: TEXT for c in plain})
        df.attrs = attrs
    df.attrs["notices"] = notices
    return df


def _resolve_duplicate_columns(df: pd.DataFrame, notices: list[str]) -> pd.DataFrame:
    """Columns whose name appears more than once (real exports carry them: ProPublica's COMPAS file has two
    ``decile_score`` and two ``priors_count`` columns). A copy identical to the first is dropped; a copy that
    differs is kept as "name (2)", "name (3)", …; each with a notice saying so."""
    names = [str(c) for c in df.columns]
    if len(set(names)) == len(names):
        return df
    keep, renamed = [], []
    seen: dict[str, int] = {}
    taken = set(names)
    for k, name in enumerate(names):
        if name not in seen:
            seen[name] = k
            keep.append(k)
            renamed.append(name)
            continue
        first = df.iloc[:, seen[name]]
        copy = df.iloc[:, k]
        if first.fillna("\0missing").astype(str).equals(copy.fillna("\0missing").astype(str)):
            notices.append(f"Column {name!r} appears more than once with identical values; one copy is kept.")
            continue
        suffix = 2
        while f"{name} ({suffix})" in taken:
            suffix += 1
        new = f"{name} ({suffix})"
        taken.add(new)
        keep.append(k)
        renamed.append(new)
        notices.append(f"Column {name!r} appears more than once with different values; the copy in column "
                       f"{k + 1} is kept as {new!r} ({name!r} is the first).")
    out = df.iloc[:, keep].copy()
    out.columns = renamed
    out.attrs = dict(df.attrs)
    return out


def _drop_index_column(df: pd.DataFrame, notices: list[str]) -> pd.DataFrame:
    """A leading unnamed column holding 0..n−1 (or 1..n) is a pandas ``to_csv`` index: drop it, say so."""
    first = df.columns[0]
    if first not in ("", "Unnamed: 0") or df.shape[1] < 2:
        return df
    values = as_numbers(df[first]).to_numpy()
    for start in (0, 1):
        if np.array_equal(values, np.arange(start, start + len(df))):
            notices.append("The first column had no name and held the row numbers "
                           f"{start}..{start + len(df) - 1} (an index written by pandas); it was dropped.")
            return df.drop(columns=first)
    return df


def _utf16_without_bom(head: bytes) -> str | None:
    """"utf-16-le" or "utf-16-be" when NUL bytes sit at every other position of ``head`` (ASCII-range text
    saved as UTF-16 with no byte-order mark), else None."""
    if len(head) < 4:
        return None
    even, odd = head[0::2], head[1::2]
    if odd.count(0) >= 0.9 * len(odd) and even.count(0) <= 0.1 * len(even):
        return "utf-16-le"
    if even.count(0) >= 0.9 * len(even) and odd.count(0) <= 0.1 * len(odd):
        return "utf-16-be"
    return None


def _utf8(data: bytes, filename: str, notices: list[str]) -> tuple[bytes, int]:
    """The file as UTF-8 bytes and the offset where its text starts: UTF-8 as it is (after its BOM, uncopied),
    UTF-16 (with a BOM or without one) transcoded, anything else that is not UTF-8 read as Windows-1252 with a
    notice. Refuses binary files."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # UTF-16 with a byte-order mark (Excel's "Unicode text")
        try:
            return data.decode("utf-16").encode("utf-8"), 0
        except UnicodeDecodeError:
            raise DataValidationError(f"{filename} starts like UTF-16 text but does not decode as UTF-16") from None
    head = data[:4096]
    if b"\x00" in head:
        encoding = _utf16_without_bom(head[: len(head) // 2 * 2])
        if encoding is None:
            raise DataValidationError(f"{filename} looks binary, not like a text table (it holds NUL bytes and is "
                                      "not UTF-16 text)")
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            raise DataValidationError(f"{filename} looks like UTF-16 text without a byte-order mark but does not "
                                      f"decode as {encoding.upper()}; save it as UTF-8") from None
        notices.append(f"{filename} is UTF-16 ({'little' if encoding.endswith('le') else 'big'}-endian) without a "
                       "byte-order mark; it was read as such.")
        return text.encode("utf-8"), 0
    start = 3 if data[:3] == b"\xef\xbb\xbf" else 0
    if _is_utf8(data, start):
        return data, start
    try:
        text = data.decode("cp1252")
        notices.append(f"{filename} is not UTF-8; it was read as Windows-1252 (Western European). "
                       "Check that accented names look right.")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
        notices.append(f"{filename} is not UTF-8; it was read as Latin-1. Check that accented names look right.")
    return text.encode("utf-8"), 0


def _is_utf8(data: bytes, start: int) -> bool:
    """Whether ``data[start:]`` is UTF-8, checked in 16 MB pieces (never one string of the whole file)."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    view, step = memoryview(data), 16 * 2**20
    try:
        for at in range(start, len(data), step):
            decoder.decode(view[at: at + step], final=at + step >= len(data))
    except UnicodeDecodeError:
        return False
    return True


_LINE_END = re.compile(rb"\r\n|\r|\n")
_QUOTED_LINE_BREAK = re.compile(rb'"[^"]*[\r\n][^"]*"')


def _read_delimited(data: bytes, filename: str, max_rows: int, notices: list[str]) -> pd.DataFrame:
    """CSV/TSV text read by Arrow's parser straight from the bytes, every column as text (line endings \\n,
    \\r\\n or an old Mac's \\r). Rows and cells are counted before anything is built; a file Arrow refuses is read
    again by the csv module only to name the problem."""
    raw, start = _utf8(data, filename, notices)
    head = raw[start: start + (1 << 20)]
    match = _LINE_END.search(head)
    first = (head[: match.start()] if match else head).decode("utf-8", "replace")
    newline = (match.group(0) if match else b"\n")[-1:]
    sep = max((",", ";", "\t", "|"), key=first.count)
    if first.count(sep) == 0:
        sep = ","
    header = next(csv.reader([first], delimiter=sep), [])
    if not first.strip():
        raise DataValidationError(f"{filename}: the first line is empty; it must be the header (the column names)")
    check_columns(len(header), filename)
    lines = raw.count(newline, start) + (not raw.endswith(newline))
    if lines - 1 > max_rows:   # quoted line breaks make lines outnumber rows: count the rows, stopping early
        _check_rows(raw, start, sep, header, filename, max_rows)
    check_cells(min(lines - 1, max_rows), len(header), filename)
    try:
        df = _pyarrow_text(raw, start, sep, header)
    except Exception as exc:  # noqa: BLE001 - Arrow names no row; the csv module finds and names it
        text = raw[start:].decode("utf-8")
        try:
            problem = _ragged_row(text, sep)
        except csv.Error as err:
            raise DataValidationError(_csv_problem(err, filename)) from None
        if problem is not None:
            raise DataValidationError(problem) from None
        raise DataValidationError(f"could not parse {filename}: {str(exc).splitlines()[0]}") from None
    if b'"' in raw and _QUOTED_LINE_BREAK.search(raw, start):   # rows and lines part ways
        try:
            df.attrs["file_lines"] = _record_lines(raw[start:].decode("utf-8"), sep)
        except csv.Error:
            pass  # messages then count lines as rows + 1
    df.attrs["delimiter"] = sep
    return df


def _arrow_options(sep: str, header: list[str]):  # type: ignore[no-untyped-def]
    import pyarrow as pa
    from pyarrow import csv as pacsv

    return (pacsv.ParseOptions(delimiter=sep, newlines_in_values=True),
            pacsv.ConvertOptions(column_types={h: pa.large_string() for h in header}, strings_can_be_null=True,
                                 null_values=[""]))


def _pyarrow_text(raw: bytes, start: int, sep: str, header: list[str]) -> pd.DataFrame:
    """Arrow's fast CSV reader with every column typed as text (pandas' ``dtype=str`` with the pyarrow
    engine would infer floats first and stringify them: "0" becomes "0.0")."""
    import pyarrow as pa
    from pyarrow import csv as pacsv

    parse, convert = _arrow_options(sep, header)
    table = pacsv.read_csv(pa.BufferReader(pa.py_buffer(raw).slice(start)), parse_options=parse,
                           convert_options=convert)
    return text_frame(table)


def _check_rows(raw: bytes, start: int, sep: str, header: list[str], filename: str, max_rows: int) -> None:
    """Count the data rows batch by batch (bounded memory) and refuse at the first batch past ``max_rows``."""
    import pyarrow as pa
    from pyarrow import csv as pacsv

    parse, convert = _arrow_options(sep, header)
    rows = 0
    try:
        reader = pacsv.open_csv(pa.BufferReader(pa.py_buffer(raw).slice(start)), parse_options=parse,
                                convert_options=convert)
        for batch in reader:
            rows += batch.num_rows
            if rows > max_rows:
                raise DataValidationError(f"{filename} has more than {max_rows:,} data rows; the limit is "
                                          f"{max_rows:,} (fairness_core.io.aggregate or the command line count any "
                                          "size in place)")
    except DataValidationError:
        raise
    except Exception:  # noqa: BLE001 - a malformed file is named by the full read that follows
        return


def _csv_problem(err: csv.Error, filename: str) -> str:
    """The csv module's error in words a person can act on."""
    text = str(err)
    if "field larger than field limit" in text:
        return (f"could not parse {filename}: a field holds more than {csv.field_size_limit():,} characters, "
                "usually because a quote (\") opens a field and is never closed; check the quotes, or save the "
                "file again from the program that wrote it")
    return f"could not parse {filename}: {text}"


def _ragged_row(text: str, sep: str) -> Problem | None:
    """The first data row whose field count differs from the header's, as a Problem."""
    reader = csv.reader(_io.StringIO(text, newline=""), delimiter=sep)
    header = next(reader, [])
    line, row_number = reader.line_num, 0
    for fields in reader:
        if not fields:  # blank lines are skipped by the parser too
            line = reader.line_num
            continue
        row_number += 1
        start, line = line + 1, reader.line_num
        if len(fields) != len(header):
            extra = fields[len(header):]
            if len(fields) == len(header) + 1 and extra == [""]:
                what = f"an empty column after {header[-1]!r} (a trailing {sep!r}?)"
            elif len(fields) > len(header):
                what = (f"{len(fields)} fields but the header has {len(header)}: the extra value(s) "
                        f"{', '.join(map(repr, extra[:3]))} would shift the row")
            else:
                what = f"{len(fields)} fields but the header has {len(header)}"
            return Problem(what, row_number, line=start)
    return None


def _record_lines(text: str, sep: str) -> np.ndarray:
    """The file line on which each data row starts (row k at index k − 1)."""
    reader = csv.reader(_io.StringIO(text, newline=""), delimiter=sep)
    next(reader, None)
    lines, previous = [], reader.line_num
    for fields in reader:
        if fields:
            lines.append(previous + 1)
        previous = reader.line_num
    return np.asarray(lines, dtype=np.int64)


def to_numbers(df: pd.DataFrame) -> pd.DataFrame:
    """Columns whose every value is a finite number become float64, read as
    :func:`~fairness_core.common.numbers.as_numbers` reads scores (correctly rounded; decimal commas in a file not
    delimited by commas); the rest stay text (for features). A column holding "inf", "nan" or a number too large
    for a float stays text.

    >>> to_numbers(pd.DataFrame({"x": [" 0.1", "2e3"], "g": ["a", "1"], "y": ["1", "inf"]})).dtypes.astype(str).tolist()
    ['float64', 'object', 'object']
    """
    out = df.copy()
    delimiter = df.attrs.get("delimiter", ",")
    for col in out.columns:
        s = out[col]
        if is_text(s):
            converted = as_numbers(s, delimiter)
            if np.isfinite(converted.to_numpy()[s.notna().to_numpy()]).all():
                out[col] = converted
    return out


LARGE_UPLOAD_BYTES = 32 * 2**20
SAMPLE_ROWS = 20_000


def read_sample(data: bytes, filename: str, rows: int = SAMPLE_ROWS) -> pd.DataFrame:
    """The first ``rows`` data rows of a CSV/TSV/TXT or Parquet upload as :func:`read_table` reads them (for
    choosing columns and values), without reading the rest. ``df.attrs["sample_of"]`` says how many rows the
    file holds when that is known cheaply (Parquet's footer), else None."""
    suffix = PurePath(filename).suffix.lower()
    if suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        file = parquet_file(data, filename)
        head = read_head(data, filename, rows, file)   # bounded in text as a whole read is
        buffer = _io.BytesIO()
        pq.write_table(head, buffer)
        del head
        df = read_table(buffer.getvalue(), filename, max_rows=rows)
        df.attrs["sample_of"] = file.metadata.num_rows
        return df
    ends = [m.end() for _, m in zip(range(rows + 1), _LINE_END.finditer(data))]
    head = data[: ends[-1]] if len(ends) == rows + 1 else data
    df = read_table(head, filename, max_rows=rows)
    df.attrs["sample_of"] = None
    return df


def aggregate_upload(data: bytes, filename: str, **options: Any) -> Audit:
    """:func:`aggregate` over an uploaded file's bytes: written to a private temporary file that DuckDB reads out
    of core, removed afterwards. ``options`` are :func:`aggregate`'s (label, prediction, groups, positive …).
    Memory stays near the bytes themselves: no table of the rows is built."""
    import tempfile

    suffix = PurePath(filename).suffix.lower()
    if suffix not in (".csv", ".tsv", ".txt", ".parquet", ".pq"):
        raise DataValidationError(f"{filename}: only CSV, TSV, TXT and Parquet files are counted in place")
    handle, path = tempfile.mkstemp(suffix=".parquet" if suffix in (".parquet", ".pq") else ".csv")
    try:
        with os.fdopen(handle, "wb") as f:
            f.write(data)
        try:
            return aggregate(path, name=options.pop("name", filename), **options)
        except DataValidationError as exc:   # messages name the upload, never the temporary file
            raise DataValidationError([Problem(p.message.replace(path, filename), p.row, p.column, p.line)
                                       for p in exc.problems]) from None
        except Exception as exc:  # noqa: BLE001 - the engine's own errors (an unreadable file) become messages
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise DataValidationError(f"could not count {filename} in place: {first.replace(path, filename)}") from None
    finally:
        os.unlink(path)
