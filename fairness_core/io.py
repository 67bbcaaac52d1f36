"""Reading uploads into an :class:`~fairness_core.audit.Audit`, and writing safe CSV.

Every path validates before anything is used. Problems raise
:class:`DataValidationError`, whose message names the row and the column.
Rows are counted from 1 at the first data row below the header ("row 1 (file
line 2)"). Nothing is unpickled or evaluated: CSV is parsed as text and Excel
with calamine, after a bounded pass over the workbook's XML.
"""

from __future__ import annotations

import csv
import io as _io
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Hashable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from . import text as text_module
from .audit import Audit
from .compare import Candidates
from .confusion import CELLS, ConfusionMatrix
from .ensemble import make_design
from .stability import RowData


def _operator_limit(variable: str, default: int, scale: int = 1) -> int:
    """An upload limit the server's operator may set in the environment (docs/server.md), read at import;
    a value that is not a positive whole number stops the server with a message naming the variable."""
    raw = os.environ.get(variable, "").strip().replace("_", "").replace(",", "")
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{variable}={os.environ[variable]!r} is not a whole number >= 1 (the default is "
                         f"{default // scale:,})")
    return int(raw) * scale


#: Most rows accepted from a row-level predictions file (FAIRNESS_MAX_UPLOAD_ROWS).
MAX_ROWS = _operator_limit("FAIRNESS_MAX_UPLOAD_ROWS", 5_000_000)
#: Most groups (rows of a CM table, or distinct group combinations).
MAX_GROUPS = 500
#: The largest count per cell: sums of four stay exact in float64 (< 2^53) and in int64.
MAX_COUNT = 10**15
#: Separator between the parts of an intersectional group name.
INTERSECTION_SEP = " & "
#: Most columns in an uploaded table.
MAX_COLUMNS = 1000
#: Most cells (rows × columns) in an uploaded table: what is read is kept as text in memory
#: (FAIRNESS_MAX_UPLOAD_CELLS).
MAX_CELLS = _operator_limit("FAIRNESS_MAX_UPLOAD_CELLS", 30_000_000)
#: Largest size a compressed upload (Parquet) may expand to once decoded (FAIRNESS_MAX_EXPANDED_MB).
MAX_EXPANDED_BYTES = _operator_limit("FAIRNESS_MAX_EXPANDED_MB", 1024 * 2**20, 2**20)
#: Longest column or group name, in characters.
MAX_NAME_LENGTH = 200
#: Characters that render as nothing; stripped from group names (with NFC normalization).
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)

_ALIASES: dict[str, tuple[str, ...]] = {
    "TP": ("tp", "truepositive", "truepositives", "truepos", "hits"),
    "FN": ("fn", "falsenegative", "falsenegatives", "falseneg", "misses"),
    "FP": ("fp", "falsepositive", "falsepositives", "falsepos", "falsealarms"),
    "TN": ("tn", "truenegative", "truenegatives", "trueneg", "correctrejections"),
}


@dataclass(frozen=True)
class Problem:
    """One validation problem: where (1-based data row, column) and what."""

    message: str
    row: int | None = None
    column: str | None = None
    line: int | None = None  # the file line, when it is not row + 1 (quoted line breaks)

    def __str__(self) -> str:
        where = []
        if self.row is not None:
            where.append(f"row {self.row} (file line {self.line if self.line is not None else self.row + 1})")
        if self.column is not None:
            where.append(f"column {self.column!r}")
        return (", ".join(where) + ": " if where else "") + self.message


class DataValidationError(ValueError):
    """Bad input. ``problems`` lists each one with its row and column."""

    def __init__(self, problems: Sequence[Problem] | Problem | str):
        if isinstance(problems, (Problem, str)):
            problems = [problems if isinstance(problems, Problem) else Problem(problems)]
        self.problems: list[Problem] = list(problems)
        shown = "; ".join(str(p) for p in self.problems[:5])
        more = f" (and {len(self.problems) - 5} more)" if len(self.problems) > 5 else ""
        super().__init__(shown + more)


def _normalize_header(name: Hashable) -> str:
    return re.sub(r"[\s_\-./()]+", "", str(name)).lower()


# --- reading files ------------------------------------------------------------------------

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
    (:data:`MAX_XLSX_CELLS`, :data:`MAX_XLSX_XML_BYTES`), expansion from the declared sizes.

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
        df = _read_xlsx(data, filename, max_rows, sheet)
    elif suffix == ".xls":
        raise DataValidationError(f"{filename}: old .xls workbooks are not supported; save it as .xlsx or CSV")
    elif suffix in (".csv", ".tsv", ".txt", ""):
        df = _read_delimited(data, filename, max_rows, notices)
    elif suffix in (".parquet", ".pq"):
        df = _read_parquet(data, filename, max_rows, columns)
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
    long = [c for c in df.columns if len(c) > MAX_NAME_LENGTH]
    if long:
        raise DataValidationError(f"{filename}: a column name has {len(long[0]):,} characters; the limit is "
                                  f"{MAX_NAME_LENGTH}")
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


def _parquet_file(data: bytes, filename: str):  # type: ignore[no-untyped-def]
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(pa.BufferReader(data))
    except Exception as exc:  # noqa: BLE001 - any reader failure is an unreadable file
        raise DataValidationError(f"{filename} is not a readable Parquet file: {str(exc).splitlines()[0]}") from None


def parquet_shape(data: bytes, filename: str = "the file") -> tuple[int, list[str]]:
    """Rows and column names of a Parquet file, from its footer alone (nothing else is read)."""
    file = _parquet_file(data, filename)
    return file.metadata.num_rows, list(file.schema_arrow.names)


def _read_parquet(data: bytes, filename: str, max_rows: int, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A Parquet file as text, like every other upload. Its footer is checked first — rows, columns, cells and
    the decoded size of the columns to read — so a file of a few MB that would expand to gigabytes is refused
    before any data is read; then each column is cast to text by Arrow (ints "7", floats "0.5", booleans
    "true"; nulls stay missing) and kept in Arrow's buffers. Larger logs go through :func:`aggregate`."""
    import pyarrow as pa

    file = _parquet_file(data, filename)
    meta, schema = file.metadata, file.schema_arrow
    names = list(schema.names) if columns is None else list(columns)
    unknown = [c for c in names if c not in schema.names]
    if unknown:
        raise DataValidationError(Problem(f"no such column; columns are {', '.join(map(repr, schema.names[:50]))}",
                                          column=unknown[0]))
    _check_columns(len(names), filename)
    if meta.num_rows > max_rows:
        raise DataValidationError(f"{filename} has {meta.num_rows:,} data rows; the limit is {max_rows:,} "
                                  "(fairness_core.io.aggregate or the command line count any size in place)")
    _check_cells(meta.num_rows, len(names), filename)
    fields = [schema.field(c) for c in names]
    for field in fields:
        if pa.types.is_nested(field.type) or pa.types.is_binary(field.type) or pa.types.is_large_binary(field.type):
            raise DataValidationError(Problem(f"column of type {field.type} cannot be read as text", column=field.name))
    wanted = {schema.get_field_index(c) for c in names}
    stored = sum(meta.row_group(g).column(k).total_uncompressed_size
                 for g in range(meta.num_row_groups) for k in wanted)
    fixed = sum(f.type.bit_width // 8 for f in fields if pa.types.is_primitive(f.type)
                and not pa.types.is_boolean(f.type))   # decoded width: dictionary and run-length encoding hide it
    expanded = max(stored, meta.num_rows * fixed)
    if expanded > MAX_EXPANDED_BYTES:
        raise DataValidationError(f"{filename} expands to {expanded / 2**20:,.0f} MB once decompressed; the limit is "
                                  f"{MAX_EXPANDED_BYTES / 2**20:,.0f} MB (fairness_core.io.aggregate or the command "
                                  "line count any size in place)")
    table = file.read(columns=names)
    return _text_frame(pa.table([c.cast(pa.large_string()) for c in table.columns], names=table.column_names))


def _check_columns(count: int, filename: str) -> None:
    if count > MAX_COLUMNS:
        raise DataValidationError(f"{filename} has {count:,} columns; the limit is {MAX_COLUMNS:,}")


def _check_cells(rows: int, columns: int, filename: str) -> None:
    if rows * columns > MAX_CELLS:
        raise DataValidationError(f"{filename} has {rows:,} rows × {columns:,} columns = {rows * columns:,} cells; "
                                  f"the limit is {MAX_CELLS:,} cells. Keep only the columns the audit needs, or "
                                  "count in place with fairness_core.io.aggregate or the command line")


#: Uploaded text, one Arrow buffer per column (not one Python object per cell); missing values are NaN.
TEXT = pd.StringDtype("pyarrow", na_value=np.nan)


def _text_frame(table: Any) -> pd.DataFrame:
    """An Arrow table of strings as a DataFrame of :data:`TEXT` columns. Readers produce ``large_string``
    columns, the layout pandas keeps, so that the conversion shares Arrow's buffers instead of copying them."""
    import pyarrow as pa

    return table.to_pandas(types_mapper={pa.string(): TEXT, pa.large_string(): TEXT}.get)


def _is_text(s: pd.Series) -> bool:
    return s.dtype == object or isinstance(s.dtype, pd.StringDtype)


def _drop_index_column(df: pd.DataFrame, notices: list[str]) -> pd.DataFrame:
    """A leading unnamed column holding 0..n−1 (or 1..n) is a pandas ``to_csv`` index: drop it, say so."""
    first = df.columns[0]
    if first not in ("", "Unnamed: 0") or df.shape[1] < 2:
        return df
    values = pd.to_numeric(df[first], errors="coerce").to_numpy()
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
    _check_columns(len(header), filename)
    lines = raw.count(newline, start) + (not raw.endswith(newline))
    if lines - 1 > max_rows:   # quoted line breaks make lines outnumber rows: count the rows, stopping early
        _check_rows(raw, start, sep, header, filename, max_rows)
    _check_cells(min(lines - 1, max_rows), len(header), filename)
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
    return _text_frame(table)


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


def sheet_names(data: bytes) -> list[str]:
    """The worksheet names of an XLSX file (for the Upload page's sheet picker), from its small workbook part."""
    return [name for name, _ in _workbook_sheets(data, "the workbook")]


#: Excel's own sheet size limit; a sheet claiming more is not a real workbook.
EXCEL_MAX_ROWS = 1_048_576
#: Largest uncompressed XML in a workbook, all parts together (a 1.75 MB zip can expand to gigabytes)
#: (FAIRNESS_MAX_WORKBOOK_XML_MB).
MAX_XLSX_XML_BYTES = _operator_limit("FAIRNESS_MAX_WORKBOOK_XML_MB", 256 * 2**20, 2**20)
#: Most cells (rows × columns, header included) read from one worksheet; larger tables belong in CSV or Parquet
#: (FAIRNESS_MAX_WORKBOOK_CELLS).
MAX_XLSX_CELLS = _operator_limit("FAIRNESS_MAX_WORKBOOK_CELLS", 5_000_000)
#: Largest part that describes the workbook (its sheet list and relations), read before any sheet.
_MAX_WORKBOOK_PART = 4 * 2**20
_SCAN_CHUNK = 8 * 2**20


def _zip_members(data: bytes, filename: str):  # type: ignore[no-untyped-def]
    import zipfile

    try:
        z = zipfile.ZipFile(_io.BytesIO(data))
    except zipfile.BadZipFile:
        raise DataValidationError(f"could not read {filename} as an Excel workbook: not a zip archive") from None
    total = sum(i.file_size for i in z.infolist())
    if total > MAX_XLSX_XML_BYTES:
        z.close()
        raise DataValidationError(f"{filename} expands to {total / 2**20:,.0f} MB of XML; the limit is "
                                  f"{MAX_XLSX_XML_BYTES / 2**20:,.0f} MB. Save the data as CSV or Parquet instead")
    return z


_ATTRIBUTE = re.compile(rb'([\w:]+)\s*=\s*"([^"]*)"')


def _workbook_sheets(data: bytes, filename: str) -> list[tuple[str, str]]:
    """(sheet name, worksheet part) in the workbook's order, from xl/workbook.xml and its relations."""
    import html

    with _zip_members(data, filename) as z:
        parts = {}
        for name in ("xl/workbook.xml", "xl/_rels/workbook.xml.rels"):
            try:
                info = z.getinfo(name)
            except KeyError:
                raise DataValidationError(f"could not read {filename} as an Excel workbook: it has no {name}") from None
            if info.file_size > _MAX_WORKBOOK_PART:
                raise DataValidationError(f"{filename}: its {name} expands to {info.file_size / 2**20:,.0f} MB; "
                                          f"the limit is {_MAX_WORKBOOK_PART / 2**20:,.0f} MB")
            parts[name] = z.read(name)
    targets = {}
    for element in re.findall(rb"<(?:\w+:)?Relationship\b[^>]*>", parts["xl/_rels/workbook.xml.rels"]):
        attrs = dict(_ATTRIBUTE.findall(element))
        if b"Id" in attrs and b"Target" in attrs:
            target = attrs[b"Target"].decode("utf-8", "replace").lstrip("/")
            targets[attrs[b"Id"]] = target if target.startswith("xl/") else f"xl/{target}"
    sheets = []
    for element in re.findall(rb"<(?:\w+:)?sheet\b[^>]*>", parts["xl/workbook.xml"]):
        attrs = {k.split(b":")[-1]: v for k, v in _ATTRIBUTE.findall(element)}
        name = html.unescape(attrs.get(b"name", b"").decode("utf-8", "replace"))
        if b"id" in attrs and attrs[b"id"] in targets:
            sheets.append((name, targets[attrs[b"id"]]))
    if not sheets:
        raise DataValidationError(f"could not read {filename} as an Excel workbook: it lists no worksheets")
    return sheets


@dataclass(frozen=True)
class _SheetScan:
    rows: int                # <row> elements
    cells: int               # <c> elements
    formulas: tuple[tuple[int, int, str], ...]  # (sheet row, 0-based column, formula) without a saved value


_CELL = re.compile(rb"<c\b([^>]*?)(?:/>|>(.*?)</c>)", re.S)
_REF = re.compile(rb'\br="([A-Z]{1,3})(\d+)"')


def _scan_sheet(z, part: str, filename: str, sheet: str, max_rows: int) -> _SheetScan:  # type: ignore[no-untyped-def]
    """Stream one worksheet's XML once, without building it: count rows and cells (refusing at the first row
    or cell past the limits, whatever the sheet declares), and find formulas without a saved value."""
    rows = cells = 0
    formulas: list[tuple[int, int, str]] = []
    tail = b""
    try:
        stream = z.open(part)
    except KeyError:
        raise DataValidationError(f"{filename}: sheet {sheet!r} has no worksheet part {part}") from None
    with stream:
        while True:
            chunk = stream.read(_SCAN_CHUNK)
            block = tail + chunk
            if chunk:
                cut = block.rfind(b"</row>")
                if cut < 0:
                    tail = block
                    continue
                block, tail = block[: cut + 6], block[cut + 6:]
            rows_here = block.count(b"<row ") + block.count(b"<row>")
            cells_here = block.count(b"<c ") + block.count(b"<c>") + block.count(b"<c/>")
            if b"<f" in block:
                formulas.extend(_formulas_without_values(block, rows))
            rows += rows_here
            cells += cells_here
            if rows - 1 > max_rows:
                raise DataValidationError(f"{filename}, sheet {sheet!r}, has more than {max_rows:,} data rows; the "
                                          f"limit is {max_rows:,}")
            if cells > MAX_XLSX_CELLS:
                raise DataValidationError(f"{filename}, sheet {sheet!r}, has more than {MAX_XLSX_CELLS:,} cells; the "
                                          f"limit for a workbook is {MAX_XLSX_CELLS:,} cells (rows × columns). Save "
                                          "the data as CSV or Parquet instead")
            if not chunk:
                break
    return _SheetScan(rows, cells, tuple(formulas[:100]))


def _column_index(letters: bytes) -> int:
    k = 0
    for ch in letters:
        k = k * 26 + ch - 64
    return k - 1


def _formulas_without_values(block: bytes, rows_before: int) -> list[tuple[int, int, str]]:
    import html

    found = []
    for r, row in enumerate(block.split(b"</row>")):
        if b"<f" not in row:
            continue
        start = row.find(b"<row")
        ref = _REF.search(row[start: row.find(b">", start) + 1]) if start >= 0 else None
        row_number = int(ref.group(2)) if ref else rows_before + r + 1  # an r="…" on <row> is the sheet row
        for k, m in enumerate(_CELL.finditer(row)):
            body = m.group(2) or b""
            if b"<f" in body and not re.search(rb"<v>[^<]+</v>", body):
                cref = re.search(rb'\br="([A-Z]{1,3})\d+"', m.group(1))
                column = _column_index(cref.group(1)) if cref else k
                formula = re.search(rb"<f\b[^>]*>(.*?)</f>", body, re.S)
                text = "=" + html.unescape(formula.group(1).decode("utf-8", "replace")) if formula else "a shared formula"
                found.append((row_number, column, text))
    return found


def _read_xlsx(data: bytes, filename: str, max_rows: int, sheet: str | None) -> pd.DataFrame:
    """A worksheet as text. The XML is streamed once first (bounded in bytes, rows and cells, formulas
    without a saved value found), then Rust's calamine reads the values."""
    import python_calamine

    max_rows = min(max_rows, EXCEL_MAX_ROWS - 1)
    sheets = _workbook_sheets(data, filename)
    names = [n for n, _ in sheets]
    if sheet is not None and sheet not in names:
        raise DataValidationError(f"{filename} has no sheet {sheet!r}; its sheets are {', '.join(map(repr, names))}")
    with _zip_members(data, filename) as z:
        scans = {}
        for name, part in sheets:
            if sheet is None or name == sheet:
                scans[name] = _scan_sheet(z, part, filename, name, max_rows)
                if sheet is None and scans[name].rows > 1:
                    sheet = name
    sheet = sheet or names[0]
    scan = scans[sheet]
    try:
        book = python_calamine.CalamineWorkbook.from_filelike(_io.BytesIO(data))
        values = book.get_sheet_by_name(sheet)
        _check_columns(values.width, filename)
        table = values.to_python(skip_empty_area=False)
    except DataValidationError:
        raise
    except Exception as exc:  # noqa: BLE001 - calamine raises its own types for corrupt files
        raise DataValidationError(f"could not read {filename} as an Excel workbook: "
                                  f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    blank = 0
    while blank < len(table) and all(v == "" for v in table[blank]):   # blank rows above the header
        blank += 1
    if blank == len(table):
        raise DataValidationError(f"{filename}: sheet {sheet!r} is empty")
    table = table[blank:]
    header = ["" if v == "" else str(_cell_text(v)) for v in table[0]]
    problems = [Problem(f"a formula ({f[:40]}) without a saved value; open the file in Excel and save it, or "
                        "paste values", row - 1 - blank, header[c] if c < len(header) else None)
                for row, c, f in scan.formulas]
    if problems:
        raise DataValidationError(problems)
    body = table[1:]
    if not body:
        others = [n for n in names if n != sheet]
        raise DataValidationError(f"{filename}: sheet {sheet!r} has no data rows below its header"
                                  + (f"; other sheets: {', '.join(map(repr, others))}" if others else ""))
    df = pd.DataFrame({c: [_cell_text(row[c]) if c < len(row) else np.nan for row in body]
                       for c in range(len(header))})
    df.columns = header
    unused = [k for k, name in enumerate(header) if name == "" and df.iloc[:, k].isna().all()]
    return df.drop(columns=df.columns[unused]) if unused else df   # formatting beyond the table


def _cell_text(value: Any) -> Any:
    """An Excel cell as text: whole floats without ".0", missing (calamine's "") as NaN."""
    if value is None or value == "":
        return np.nan
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


def to_numbers(df: pd.DataFrame) -> pd.DataFrame:
    """Columns whose every value is a plain number become float; the rest stay text (for features).
    Decimal commas are read as :func:`_numbers` reads scores (a file not delimited by commas)."""
    out = df.copy()
    delimiter = df.attrs.get("delimiter", ",")
    for col in out.columns:
        s = out[col]
        if _is_text(s):
            converted = _numbers(s, delimiter)
            text = s.dropna().astype(str).str.strip()
            if delimiter != ",":
                text = text.str.replace(",", ".", regex=False)
            if converted.notna().sum() == s.notna().sum() and text.str.fullmatch(_PLAIN_NUMBER).all():
                out[col] = converted
    return out


def _lines_for(problems: list[Problem], df: pd.DataFrame) -> list[Problem]:
    """Attach file lines to row problems when quoted line breaks make them differ from row + 1."""
    lines = df.attrs.get("file_lines")
    if lines is None:
        return problems
    return [Problem(p.message, p.row, p.column, int(lines[p.row - 1]))
            if p.row is not None and p.line is None and 0 < p.row <= len(lines) else p for p in problems]


# --- group confusion-matrix tables ---------------------------------------------------------

def _is_fractional(s: pd.Series) -> bool:
    """Every value a plain number and some with decimals (a rate or score, never a group name)."""
    values = pd.to_numeric(s, errors="coerce")
    return bool(values.notna().all() and (values % 1 != 0).any())


def find_count_columns(columns: Iterable[Hashable]) -> dict[str, str]:
    """Map "TP", "FN", "FP", "TN" to the matching headers (case-insensitive, common spellings)."""
    found: dict[str, str] = {}
    for col in columns:
        key = _normalize_header(col)
        for cell, aliases in _ALIASES.items():
            if key in aliases:
                if cell in found:
                    raise DataValidationError(Problem(
                        f"both {found[cell]!r} and {col!r} look like the {cell} column", column=str(col)))
                found[cell] = str(col)
    return found


def cms_from_table(df: pd.DataFrame, group_columns: Sequence[str] | None = None,
                   source: str = "uploaded confusion matrices", *, positive: str | None = None,
                   flip: bool = False, positive_is: str | None = None) -> Audit:
    """Build an Audit from a table with a group column (or two) plus TP, FN, FP, TN.

    With two group columns the groups are their intersections ("A & B").
    Every other column is an error unless ``group_columns`` names the group
    columns explicitly, in which case extra columns are ignored.

    ``positive`` says what the table's positive class means ("approved", "reoffends"). With
    ``positive_is="harm"`` (formerly ``flip=True``) that class is harmful: the classes swap (TP ↔ TN,
    FN ↔ FP), so that positive means the beneficial outcome, as every measure here assumes, and a note
    says so; ``"benefit"`` declares it beneficial; None leaves it undeclared.

    >>> t = pd.DataFrame({"group": ["a", "b"], "TP": [5, 2], "FN": [1, 2], "FP": [3, 0], "TN": [9, 8]})
    >>> a = cms_from_table(t, positive="reoffends", flip=True)
    >>> a.cms["a"], a.positive_outcome
    (ConfusionMatrix(tp=9, fn=3, fp=1, tn=5), 'not reoffends')
    """
    positive_is, flip = direction(positive_is, flip)
    notices_before = list(df.attrs.get("notices", []))
    df = df.reset_index(drop=True)
    df.attrs["notices"] = list(notices_before)
    counts = find_count_columns(df.columns)
    missing = [c for c in CELLS if c not in counts]
    if missing:
        raise DataValidationError(Problem(
            f"missing column(s) {', '.join(missing)}; found {', '.join(map(repr, df.columns))}. "
            "Expected a group column plus TP, FN, FP, TN (any case; 'true positives' etc. also work)"))
    rest = [c for c in df.columns if c not in counts.values()]
    if group_columns is None:
        group_columns = rest
        measures = [c for c in rest if _is_fractional(df[c])]  # e.g. an approval_rate column
        if measures and len(measures) < len(rest):
            group_columns = [c for c in rest if c not in measures]
            df.attrs.setdefault("notices", []).append(
                f"Ignored {', '.join(map(repr, measures))}: numbers with decimals, not group names.")
    else:
        for c in group_columns:
            if c not in df.columns:
                raise DataValidationError(Problem("no such column", column=c))
    if not 1 <= len(group_columns) <= 2:
        raise DataValidationError(Problem(
            f"expected one group column (or two for intersections) besides TP, FN, FP, TN; "
            f"found {len(group_columns)}: {', '.join(map(repr, group_columns)) or 'none'}"))
    if len(df) > MAX_GROUPS:
        raise DataValidationError(f"{len(df)} groups; the limit is {MAX_GROUPS}")
    if len(df) < 2:
        raise DataValidationError(f"{len(df)} group row; an audit compares at least two groups")

    problems: list[Problem] = []
    cells = np.zeros((len(df), 4), dtype=np.int64)
    for k, cell in enumerate(CELLS):
        col = counts[cell]
        if _is_text(df[col]):
            cells[:, k] = _text_counts(df[col], col, df.attrs.get("delimiter", ","), problems,
                                       df.attrs.setdefault("notices", []))
        else:
            cells[:, k] = _numeric_counts(df[col], col, problems)

    names = _group_names(df, list(group_columns), problems)
    for r in np.flatnonzero(cells.sum(axis=1) == 0):
        if not any(p.row == r + 1 for p in problems):
            problems.append(Problem(f"group {names[r]!r} is empty (all four counts are 0)", int(r) + 1))
    _check_duplicates(names, problems, list(group_columns))
    if problems:
        raise DataValidationError(_lines_for(sorted(problems, key=lambda p: (p.row or 0, p.column or "")), df))
    notes = list(df.attrs.get("notices", [])[len(notices_before):])
    meaning = (positive or "").strip() or None
    if flip:
        cells = cells[:, [3, 2, 1, 0]]  # TP ↔ TN, FN ↔ FP: the other class is positive now
        notes.append(f"The table's positive class{f' ({meaning})' if meaning else ''} is harmful, so the classes "
                     "were swapped (TP ↔ TN, FN ↔ FP): positive here means its opposite, the beneficial outcome.")
    outcome = (f"not {meaning}" if meaning else "the table's negative class") if flip else (meaning or
                                                                                           "the beneficial outcome")
    cms = {name: ConfusionMatrix(*row) for name, row in zip(names, cells.tolist())}
    try:
        return Audit(cms, source=source, group_columns=tuple(group_columns), notes=tuple(notes),
                     positive_outcome=outcome, positive_is=positive_is,
                     group_values=group_values(names, df.attrs.get("group_parts", [])),
                     provenance={"attribute(s) audited": " × ".join(map(str, group_columns)),
                                 "input": "per-group confusion matrices"})
    except ValueError as exc:  # belt and braces: the checks above should have caught it
        raise DataValidationError(str(exc)) from None


_WHOLE = re.compile(r"\+?\d+(\.0{1,2})?", re.ASCII)
_NEGATIVE_ZERO = re.compile(r"-0+(\.0*)?", re.ASCII)
_THOUSANDS = {sep: re.compile(r"\d{1,3}(" + re.escape(sep) + r"\d{3})+", re.ASCII)
              for sep in (",", " ", "\u00a0", "\u202f", "'", "_")}


def _ascii_digits(value: str) -> str:
    """Decimal digits of any script (Arabic-Indic ٣, Devanagari ३, full-width ３) as 0–9; the rest unchanged."""
    return "".join(str(d) if (d := unicodedata.decimal(ch, None)) is not None else ch for ch in value)


def _text_counts(s: pd.Series, col: str, delimiter: str, problems: list[Problem],
                 notices: list[str] | None = None) -> np.ndarray:
    """Counts from text, strictly: plain whole numbers, or with a thousands separator that cannot be
    mistaken for the delimiter or a decimal point. "1.000", "0x10", "1e3" and "1e-400" are refused;
    "-0" is 0. Digits of other scripts (Arabic-Indic, full-width) are read as the digits they are, and
    a notice in ``notices`` says so with the first row."""
    out = np.zeros(len(s), dtype=np.int64)
    text = s.where(s.notna(), "").astype(str).str.strip()
    other_script = None
    for r, value in enumerate(text.tolist()):
        row = r + 1
        if value == "":
            problems.append(Problem("missing count", row, col))
            continue
        if not value.isascii() and (ascii_ := _ascii_digits(value)) != value:
            other_script = other_script or (row, value, ascii_)
            value = ascii_
        if _NEGATIVE_ZERO.fullmatch(value):
            continue   # minus zero is zero
        plain = value
        if not _WHOLE.fullmatch(value):
            for sep, pattern in _THOUSANDS.items():
                if sep != delimiter and pattern.fullmatch(value):
                    plain = value.replace(sep, "")
                    break
            else:
                problems.append(Problem(_count_problem(value), row, col))
                continue
        number = int(float(plain)) if "." in plain else int(plain)
        if number > MAX_COUNT:
            problems.append(Problem(f"count {value} is too large; the limit is {MAX_COUNT:.0e} per cell", row, col))
            continue
        out[r] = number
    if other_script is not None and notices is not None:
        row, value, ascii_ = other_script
        notices.append(f"Column {col!r} writes counts with digits of another script, read as 0–9 "
                       f"(e.g. row {row}: {value!r} read as {ascii_}).")
    return out


def _count_problem(value: str) -> str:
    if re.fullmatch(r"-\s*\d+(\.\d+)?", value):
        return f"negative count {value}"
    if re.fullmatch(r"\d{1,3}(\.\d{3})+", value):
        return (f"{value!r} is ambiguous (one thousand or a decimal?); write counts as whole numbers "
                "without a thousands separator")
    if re.fullmatch(r"\+?\d*\.\d+", value):
        return f"fractional count {value}; counts must be whole numbers"
    if re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+", value):
        return f"{value!r} is in scientific notation; write the count as a whole number"
    if re.fullmatch(r"0[xXbBoO][0-9a-fA-F]+", value):
        return f"{value!r} is not a decimal whole number"
    return f"{value!r} is not a number"


def _numeric_counts(s: pd.Series, col: str, problems: list[Problem]) -> np.ndarray:
    """Counts from an already numeric column (the typed table), every problem by row."""
    values = pd.to_numeric(s, errors="coerce")
    for r in np.flatnonzero(s.isna().to_numpy()):
        problems.append(Problem("missing count", int(r) + 1, col))
    v = values.to_numpy(dtype=float)
    for r in np.flatnonzero(np.isinf(v)):
        problems.append(Problem(f"{_show(s.iloc[r])} is not a finite count", int(r) + 1, col))
    ok = np.isfinite(v)
    frac = np.where(ok, np.mod(np.where(ok, v, 0.0), 1.0), 0.0)
    for r in np.flatnonzero(ok & (v < 0)):
        problems.append(Problem(f"negative count {v[r]:g}", int(r) + 1, col))
    for r in np.flatnonzero(ok & (v >= 0) & (frac != 0)):
        problems.append(Problem(f"fractional count {v[r]:g}; counts must be whole numbers", int(r) + 1, col))
    for r in np.flatnonzero(ok & (v > MAX_COUNT)):
        problems.append(Problem(f"count {v[r]:.3g} is too large; the limit is {MAX_COUNT:.0e} per cell", int(r) + 1, col))
    good = ok & (v >= 0) & (frac == 0) & (v <= MAX_COUNT)
    return np.where(good, v, 0).astype(np.int64)


def _show(value: Any) -> str:
    """A value for a message: plain Python, never a NumPy repr such as np.int64(3)."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)


def clean_name(value: Any) -> str:
    """A group name as shown and compared: text, NFC-normalized, zero-width characters removed, trimmed.
    Other hidden characters (direction marks, controls, fillers) stay, for :func:`hidden_name_problem`."""
    return unicodedata.normalize("NFC", str(value)).translate(_INVISIBLE).strip()


def hidden_name_problem(name: str, what: str = "group name") -> str | None:
    """Why a cleaned name is refused, or None: a hidden character (a direction mark, an override, a control,
    a filler) makes two different names print alike or reverses the text around it. The message shows it."""
    shown = text_module.hidden_characters(name)
    if shown is None:
        return None
    return (f"{what} {shown!r} holds a hidden character (shown as ⟨U+…⟩): it would print like another name or "
            "reorder the text around it; remove it")


def _group_names(df: pd.DataFrame, group_columns: list[str], problems: list[Problem]) -> list[str]:
    """Each row's group name ("A & B" for two columns); the per-column values are kept in
    ``df.attrs["group_parts"]``."""
    parts = []
    for col in group_columns:
        s = df[col]
        raw = s.where(s.notna(), "").astype(str)
        text = raw.map(clean_name)
        blank = s.isna().to_numpy() | (text == "").to_numpy()
        for r in np.flatnonzero(blank):
            problems.append(Problem("missing group name", int(r) + 1, col))
        for r in np.flatnonzero((text.str.len() > MAX_NAME_LENGTH).to_numpy()):
            problems.append(Problem(f"group name of {len(text.iloc[r]):,} characters; the limit is {MAX_NAME_LENGTH}",
                                    int(r) + 1, col))
            text.iloc[r] = text.iloc[r][:MAX_NAME_LENGTH]
        for r, name in enumerate(text.tolist()):
            if not blank[r] and (why := hidden_name_problem(name)) is not None:
                problems.append(Problem(why, r + 1, col))
        changed = (raw.str.strip() != text) & ~blank
        if changed.any():
            df.attrs.setdefault("notices", []).append(
                f"Group names in {col!r} were normalized (Unicode NFC, invisible characters removed), e.g. row "
                f"{int(np.flatnonzero(changed.to_numpy())[0]) + 1}.")
        parts.append(text.where(~blank, "").tolist())
    df.attrs["group_parts"] = parts
    return [INTERSECTION_SEP.join(p) for p in zip(*parts)]


def _check_duplicates(names: list[str], problems: list[Problem], group_columns: list[str]) -> None:
    seen: dict[str, int] = {}
    for r, name in enumerate(names, start=1):
        if not name.strip(INTERSECTION_SEP + " "):
            continue
        if name in seen:
            problems.append(Problem(f"group {name!r} already appears in row {seen[name]} (names are compared "
                                    "after Unicode normalization and removing invisible characters)", r,
                                    ", ".join(group_columns)))
        else:
            seen[name] = r


def cms_to_table(audit: Audit) -> pd.DataFrame:
    """The audit as an editable table: group, TP, FN, FP, TN."""
    df = audit.cells().drop(columns="n").reset_index()
    return df


# --- row-level predictions -----------------------------------------------------------------

_LABEL_NAMES = ("label", "target", "actual", "outcome", "truth", "groundtruth", "ytrue", "y", "class", "observed")
_PREDICTION_NAMES = ("prediction", "predicted", "pred", "yhat", "ypred", "score", "decision", "output", "prob",
                     "probability")
_GROUP_NAMES = ("race", "sex", "gender", "ethnicity", "group", "age", "agegroup", "religion", "nationality",
                "disability", "region", "country")


@dataclass(frozen=True)
class ColumnGuess:
    """Which columns of a row-level table look like the label, the prediction and the groups, and why."""

    label: str | None
    prediction: str | None
    groups: tuple[str, ...]
    reasons: tuple[str, ...]


def _name_score(column: str, names: tuple[str, ...]) -> int:
    key = _normalize_header(column)
    if key in names:
        return 3
    if any(key.startswith(n) or key.endswith(n) for n in names if len(n) > 2):
        return 2
    return 1 if any(n in key for n in names if len(n) > 3) else 0


def guess_columns(df: pd.DataFrame, max_group_levels: int = 50) -> ColumnGuess:
    """Guess the label, prediction and group columns of a row-level table by names and values.

    The label is a two-valued column named like a label (label, target, actual, outcome, y ...) and never
    one named like a prediction; the prediction a two-valued or numeric column named like one (pred, yhat,
    score, decision ...);
    groups are text columns with 2 to ``max_group_levels`` values, named like a protected attribute
    first. A column with a different value in every row (an id) is never guessed.

    >>> df = pd.DataFrame({"applicant_id": ["a1", "a2", "a3", "a4"], "sex": ["F", "M", "F", "M"],
    ...                    "approved": ["1", "0", "1", "1"], "model_decision": ["1", "0", "0", "1"]})
    >>> g = guess_columns(df)
    >>> g.label, g.prediction, g.groups
    ('approved', 'model_decision', ('sex',))
    """
    n = len(df)
    stats_: dict[str, tuple[int, bool]] = {}
    fractional: set[str] = set()
    for col in df.columns:
        s = df[col].dropna()
        distinct = int(s.nunique())
        values = pd.to_numeric(s, errors="coerce")
        numeric = bool(len(s)) and values.notna().all()
        if numeric and (values % 1 != 0).any():
            fractional.add(str(col))  # a score may differ in every row; an id does not have decimals
        stats_[str(col)] = (distinct, numeric)
    unique_per_row = {c for c, (d, _) in stats_.items() if n > 2 and d == n and c not in fractional}
    binary = [c for c, (d, _) in stats_.items() if d == 2 and c not in unique_per_row]
    reasons: list[str] = []

    def best(candidates: list[str], names: tuple[str, ...]) -> str | None:
        scored = sorted(candidates, key=lambda c: -_name_score(c, names))
        return scored[0] if scored and _name_score(scored[0], names) > 0 else None

    # A column named like a prediction ("approved_pred", "decile_score", "yhat") is never the label.
    outcomes = [c for c in binary if _name_score(c, _PREDICTION_NAMES) < 2]
    label = best(outcomes, _LABEL_NAMES) or best(outcomes, ("approved", "hired", "admitted", "recid", "default",
                                                            "income", "passed", "paid", "good", "credit", "repaid",
                                                            "churn", "fraud"))
    if label:
        reasons.append(f"label = {label!r} (two values, named like an outcome)")
    scores = [c for c, (d, num) in stats_.items() if c != label and c not in unique_per_row and (d == 2 or num)]
    prediction = best(scores, _PREDICTION_NAMES)
    if prediction:
        kind = "two values" if stats_[prediction][0] == 2 else "a numeric score"
        reasons.append(f"prediction = {prediction!r} ({kind}, named like a prediction)")
    if label is None and prediction is not None:  # a second two-valued column is the label
        rest = [c for c in outcomes if c != prediction and _name_score(c, _GROUP_NAMES) == 0]
        label = rest[0] if len(rest) == 1 else None
        if label:
            reasons.append(f"label = {label!r} (the other two-valued column)")
    taken = {label, prediction}
    groups = [c for c, (d, num) in stats_.items()
              if c not in taken and c not in unique_per_row and 2 <= d <= max_group_levels and not num]
    groups.sort(key=lambda c: -_name_score(c, _GROUP_NAMES))
    named = [c for c in groups if _name_score(c, _GROUP_NAMES) > 0]
    chosen = tuple(named[:2] or groups[:1])
    if chosen:
        reasons.append(f"group = {', '.join(map(repr, chosen))} (text with few values"
                       + (", named like a protected attribute)" if named else ")"))
    if unique_per_row:
        reasons.append(f"not used: {', '.join(map(repr, sorted(unique_per_row)))} (a different value in every row)")
    return ColumnGuess(label, prediction, chosen, tuple(reasons))


def distinct_values(series: pd.Series, limit: int = 20) -> list[Any]:
    """Up to ``limit`` distinct non-missing values of a column, sorted where possible."""
    values = pd.unique(series.dropna())[: limit + 1]
    try:
        return sorted(values.tolist())
    except TypeError:
        return values.tolist()


def _binary(df: pd.DataFrame, col: str, positive: Any, what: str, threshold: float | None) -> np.ndarray:
    s = df[col]
    missing = s.isna().to_numpy()
    if missing.any():
        rows = np.flatnonzero(missing)
        raise DataValidationError(Problem(
            f"missing {what} in {rows.size:,} row(s)" + (f" (also rows {', '.join(str(r + 1) for r in rows[1:4])})"
                                                         if rows.size > 1 else ""),
            int(rows[0]) + 1, col))
    if threshold is not None:
        values = _numbers(s, df.attrs.get("delimiter", ","))
        bad = values.isna().to_numpy()
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise DataValidationError(Problem(f"{_show(s.iloc[r])} is not a number, so it cannot be thresholded",
                                              r + 1, col))
        return (values.to_numpy() >= threshold)
    codes, uniques = pd.factorize(s, sort=False)
    if len(uniques) > 2:
        r = int(np.flatnonzero(codes == 2)[0])
        raise DataValidationError(Problem(
            f"{_show(s.iloc[r])} is a third distinct value (after {_show(uniques[0])} and {_show(uniques[1])}); "
            f"the {what} must be binary" + (" — or give a threshold for a score" if what == "prediction" else ""),
            r + 1, col))
    matches = [k for k, u in enumerate(uniques) if _same(u, positive)]
    if not matches and len(uniques) == 1:
        return np.zeros(len(s), dtype=bool)  # every row is the negative value
    if not matches:
        raise DataValidationError(Problem(
            f"the chosen positive value {_show(positive)} does not occur; values are "
            f"{', '.join(map(_show, uniques.tolist()))}", column=col))
    return codes == matches[0]


_DECIMAL_COMMA = re.compile(r"\s*[+-]?\d+,\d+\s*")


def _numbers(s: pd.Series, delimiter: str) -> pd.Series:
    """A column as floats (NaN where not a number). In a file whose delimiter is not a comma, values
    like "0,769" are decimal commas when the whole column is written that way (and never 1,234-style
    thousands: those have exactly three digits after the comma and are left alone unless every value
    has a decimal comma)."""
    if _is_text(s) and delimiter != ",":
        text = s.dropna().astype(str)
        if len(text) and text.str.contains(",").any() and text.str.fullmatch(r"\s*[+-]?\d+(,\d+)?\s*").all():
            return pd.to_numeric(s.astype(str).str.replace(",", ".", regex=False).where(s.notna()), errors="coerce")
    return pd.to_numeric(s, errors="coerce")


def _same(a: Any, b: Any) -> bool:
    if a == b:
        return True
    return str(a).strip() == str(b).strip()


def cms_from_predictions(df: pd.DataFrame, label_column: str, prediction_column: str,
                         group_columns: Sequence[str], positive_label: Any, positive_prediction: Any = None,
                         *, flip: bool = False, threshold: float | None = None,
                         source: str = "uploaded predictions", positive_outcome: str | None = None,
                         probability_columns: Sequence[str] = (), features: pd.DataFrame | None = None,
                         positive_is: str | None = None) -> Audit:
    """Aggregate row-level labels and predictions into one CM per group (or intersection).

    Parameters
    ----------
    df : DataFrame
        One row per individual.
    label_column, prediction_column : str
        The actual outcome and the model's prediction. Both must be binary,
        unless ``threshold`` is given, in which case the prediction column is
        a numeric score and "positive" means score >= threshold.
    group_columns : sequence of str
        One or more columns; with several, groups are their intersections ("A & B").
    positive_label, positive_prediction : value
        The value meaning "positive" in each column (``positive_prediction``
        defaults to ``positive_label``).
    positive_is : {"benefit", "harm"} or None
        What the positive prediction is for the person. "harm" (COMPAS's "will reoffend") negates
        label and prediction so positive = beneficial; None leaves the direction undeclared (the
        audit says a benefit is assumed).
    flip : bool
        The former spelling of ``positive_is="harm"`` (kept for callers that still pass it).
    probability_columns : sequence of str
        Optional: an ensemble's probabilities of the positive value, one column per model
        (at least two), for Virny's stability metrics. Each value must lie in [0, 1]; with
        ``flip`` they become 1 − p, the probability of the beneficial outcome.
    features : DataFrame, optional
        Feature columns to keep with the rows, from which an ensemble can be trained.

    The returned audit carries the rows (:class:`~fairness_core.stability.RowData`).
    """
    positive_is, flip = direction(positive_is, flip)
    for col in [label_column, prediction_column, *group_columns]:
        if col not in df.columns:
            raise DataValidationError(Problem(f"no such column; columns are {', '.join(map(repr, df.columns))}",
                                              column=col))
    if not group_columns:
        raise DataValidationError("choose at least one group column")
    if len({label_column, prediction_column, *group_columns}) != 2 + len(group_columns):
        raise DataValidationError("the label, prediction and group columns must all be different")
    probability_columns = list(probability_columns)
    for col in probability_columns:
        if col not in df.columns:
            raise DataValidationError(Problem(f"no such column; columns are {', '.join(map(repr, df.columns))}",
                                              column=col))
        if col in (label_column, *group_columns):
            raise DataValidationError(Problem("a probability column cannot also be the label or a group column",
                                              column=col))
    if len(probability_columns) == 1:
        raise DataValidationError("an ensemble needs at least two probability columns (one per model)")
    if features is not None:
        clash = set(map(str, features.columns)) & {str(label_column), str(prediction_column), *map(str, group_columns)}
        if clash:
            raise DataValidationError(f"feature column(s) {', '.join(map(repr, sorted(clash)))} cannot also be the "
                                      "label, prediction or a group column")
        try:
            make_design(features)
        except ValueError as exc:
            raise DataValidationError(str(exc)) from None
    if len(df) > MAX_ROWS:
        raise DataValidationError(f"{len(df):,} rows; the limit is {MAX_ROWS:,}")
    if positive_prediction is None:
        positive_prediction = positive_label
    y = _binary(df, label_column, positive_label, "label", None)
    yhat = _binary(df, prediction_column, positive_prediction, "prediction", threshold)
    if flip:
        y, yhat = ~y, ~yhat

    codes = np.zeros(len(df), dtype=np.int64)
    level_names: list[np.ndarray] = []
    for col in group_columns:
        c, u = _sorted_codes(df[col])
        if (c < 0).any():
            rows = np.flatnonzero(c < 0)
            raise DataValidationError(Problem(f"missing group value in {rows.size:,} row(s)", int(rows[0]) + 1, col))
        codes = codes * len(u) + c
        cleaned = [clean_name(v) for v in u]
        long = [k for k, v in enumerate(cleaned) if len(v) > MAX_NAME_LENGTH]
        if long:
            r = int(np.flatnonzero(c == long[0])[0])
            raise DataValidationError(Problem(f"group value of {len(cleaned[long[0]]):,} characters; the limit is "
                                              f"{MAX_NAME_LENGTH}", r + 1, col))
        hidden = [k for k, v in enumerate(cleaned) if hidden_name_problem(v)]
        if hidden:
            r = int(np.flatnonzero(c == hidden[0])[0])
            raise DataValidationError(Problem(hidden_name_problem(cleaned[hidden[0]]) or "", r + 1, col))
        level_names.append(np.asarray(cleaned, dtype=object))
    joint, inverse = _compact(codes, int(np.prod([len(v) for v in level_names])))
    if joint.size < 2:
        raise DataValidationError(f"all {len(df):,} rows fall in one group"
                                  + (f" ({', '.join(group_columns)})" if group_columns else "")
                                  + "; an audit compares at least two groups")
    if joint.size > MAX_GROUPS:
        raise DataValidationError(f"{joint.size} groups from {', '.join(group_columns)}; the limit is {MAX_GROUPS}")
    cell = np.where(y, np.where(yhat, 0, 1), np.where(yhat, 2, 3))  # index into CELLS
    counts = np.bincount(inverse.ravel() * 4 + cell, minlength=4 * joint.size).reshape(-1, 4)

    rem = joint.copy()
    parts: list[np.ndarray] = []
    for levels in reversed(level_names):
        parts.append(levels[rem % len(levels)])
        rem //= len(levels)
    parts.reverse()
    names = intersection_names(parts)
    cms = {name: ConfusionMatrix(*row) for name, row in zip(names, counts.tolist())}
    probs = _probabilities(df, probability_columns) if probability_columns else None
    if probs is not None and flip:
        probs = 1.0 - probs
    rows = RowData(y, yhat, np.asarray(names, dtype=object)[inverse.ravel()], probs,
                   tuple(map(str, probability_columns)),
                   None if features is None else features.reset_index(drop=True))
    notes = row_notes(label_column, positive_label, prediction_column, flip, threshold)
    return Audit(cms, source=source, notes=tuple(notes), group_columns=tuple(group_columns),
                 positive_outcome=positive_outcome or (f"not {positive_label}" if flip else str(positive_label)),
                 rows=rows, positive_is=positive_is, group_values=group_values(names, parts),
                 provenance={"label column": label_column, "positive label": str(positive_label),
                             "prediction column": prediction_column,
                             "positive prediction": (f"score >= {threshold:g}" if threshold is not None
                                                     else str(positive_prediction)),
                             "attribute(s) audited": " × ".join(group_columns) if len(group_columns) > 1
                             else group_columns[0]})


def _sorted_codes(s: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """``pd.factorize(s, sort=True)``, sorting the few distinct values rather than taking every row through
    pandas' sorter: codes (−1 where missing) and the sorted distinct values."""
    codes, uniques = pd.factorize(s, sort=False)
    uniques = np.asarray(uniques, dtype=object)
    try:
        order = np.argsort(uniques, kind="stable")
    except TypeError:   # mixed types: their text order
        order = np.argsort(uniques.astype(str), kind="stable")
    rank = np.empty(len(order) + 1, dtype=np.int64)
    rank[order] = np.arange(len(order))
    rank[-1] = -1   # code −1 (missing) stays −1
    return rank[codes], uniques[order]


def _compact(codes: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(codes, return_inverse=True)`` for codes in [0, size) by counting instead of sorting."""
    if size > 50_000_000:
        return np.unique(codes, return_inverse=True)
    present = np.bincount(codes, minlength=size) > 0
    joint = np.flatnonzero(present)
    position = np.cumsum(present) - 1
    return joint, position[codes]


def intersection_names(parts: Sequence[Sequence[str]]) -> list[str]:
    """Group names from cleaned values, one sequence per group column ("A & B" for intersections);
    two different raw values that clean to the same name are refused, naming it."""
    names = [INTERSECTION_SEP.join(p) for p in zip(*parts)]
    if len(set(names)) != len(names):
        same = pd.Series(names)[pd.Series(names).duplicated()].iloc[0]
        raise DataValidationError(f"two different group values both read as {same!r} once spaces, invisible "
                                  "characters and Unicode normalization are removed; make them distinct")
    return names


def direction(positive_is: str | None, flip: bool) -> tuple[str | None, bool]:
    """(positive_is, flip) from either spelling: ``positive_is`` "benefit" | "harm" wins; ``flip=True`` alone
    means "harm"; neither leaves the direction undeclared (None, no flip)."""
    if positive_is is not None:
        if positive_is not in ("benefit", "harm"):
            raise DataValidationError(f"positive_is must be 'benefit' or 'harm', got {positive_is!r}")
        if flip and positive_is == "benefit":
            raise DataValidationError("positive_is='benefit' contradicts flip=True")
        return positive_is, positive_is == "harm"
    return ("harm", True) if flip else (None, False)


def group_values(names: Sequence[str], parts: Sequence[Sequence[Any]]) -> dict[str, tuple[str, ...]] | None:
    """Each group's value in every group column, for intersections (None for a single column)."""
    if len(parts) < 2:
        return None
    return {name: tuple(str(p[k]) for p in parts) for k, name in enumerate(names)}


def row_notes(label: str, positive: Any, prediction: str, flip: bool, threshold: float | None) -> list[str]:
    """What an audit of row-level data says about how its rows were read (flip, threshold)."""
    notes = []
    if flip:
        notes.append(f"{label} = {positive!r} is harmful, so labels and predictions were flipped: positive here "
                     "means its opposite, the beneficial outcome.")
    if threshold is not None:
        notes.append(f"Prediction = {prediction} >= {threshold:g}.")
    return notes


def _probabilities(df: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """The probability columns as an (n, m) float array; every problem named by row and column."""
    problems: list[Problem] = []
    out = np.empty((len(df), len(columns)))
    for k, col in enumerate(columns):
        values = _numbers(df[col], df.attrs.get("delimiter", ",")).to_numpy(dtype=float)
        bad = ~np.isfinite(values) | (values < 0) | (values > 1)
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raw = df[col].iloc[r]
            what = "missing" if pd.isna(raw) else f"{raw!r} is not a probability in [0, 1]"
            extra = f" ({int(bad.sum()):,} such rows)" if bad.sum() > 1 else ""
            problems.append(Problem(what + extra, r + 1, col))
        out[:, k] = values
    if problems:
        raise DataValidationError(problems)
    return out

def candidates_from_predictions(df: pd.DataFrame, label_column: str, positive_label: Any,
                                group_columns: Sequence[str], prediction_columns: Sequence[str],
                                score_columns: Sequence[str] = (), positive_is: str | None = None, *,
                                positive_prediction: Any = None, positive_values: Mapping[str, Any] | None = None,
                                thresholds: Mapping[str, float] | None = None, title: str = "uploaded predictions",
                                positive_outcome: str | None = None) -> Candidates:
    """Several candidate models' decisions and scores on the same rows, for comparison and mitigation.

    ``prediction_columns``: each candidate's decisions, the main prediction first; binary, positive where the
    value is ``positive_values[column]`` (default ``positive_prediction``, itself defaulting to
    ``positive_label``), or a score thresholded at ``thresholds[column]`` (the candidate is then named
    "column ≥ threshold"). ``score_columns``: numbers a threshold can be fitted to, higher = more likely the
    positive prediction value. ``positive_is="harm"`` flips labels and decisions and negates scores, so that
    positive is the beneficial outcome everywhere (as :func:`cms_from_predictions` does). Every bad value is
    named by row and column; all columns are checked before anything is refused.

    >>> df = pd.DataFrame({"y": [1, 0, 1, 0], "g": list("aabb"), "m1": [1, 0, 0, 0], "m2": [1, 1, 1, 0],
    ...                    "s": [0.9, 0.2, 0.4, 0.1]})
    >>> c = candidates_from_predictions(df, "y", 1, ["g"], ["m1", "m2"], ["s"], "harm")
    >>> list(c.predictions), c.predictions["m1"].tolist(), c.scores["s"].tolist()
    (['m1', 'm2'], [False, True, True, True], [-0.9, -0.2, -0.4, -0.1])
    """
    from .compare import MAX_MODELS        # late: keeps this module's imports light

    positive_is, flip = direction(positive_is, False)
    prediction_columns, score_columns, group_columns = list(prediction_columns), list(score_columns), list(group_columns)
    positive_values, thresholds = dict(positive_values or {}), dict(thresholds or {})
    if positive_prediction is None:
        positive_prediction = positive_label
    problems: list[Problem] = []
    for col in dict.fromkeys([label_column, *group_columns, *prediction_columns, *score_columns]):
        if col not in df.columns:
            problems.append(Problem(f"no such column; columns are {', '.join(map(repr, df.columns))}", column=col))
    if problems:
        raise DataValidationError(problems)
    if not group_columns:
        raise DataValidationError("choose at least one group column")
    if not prediction_columns:
        raise DataValidationError("choose at least one prediction column")
    for what, cols in (("prediction", prediction_columns), ("score", score_columns)):
        twice = sorted({c for c in cols if cols.count(c) > 1})
        if twice:
            raise DataValidationError(f"{what} column(s) {', '.join(map(repr, twice))} chosen twice")
        clash = [c for c in cols if c == label_column or c in group_columns]
        if clash:
            problems += [Problem(f"a {what} column cannot also be the label or a group column", column=c) for c in clash]
    if problems:
        raise DataValidationError(problems)
    if len(prediction_columns) > MAX_MODELS:
        raise DataValidationError(f"{len(prediction_columns)} prediction columns; a comparison takes at most "
                                  f"{MAX_MODELS} models")
    if len(df) > MAX_ROWS:
        raise DataValidationError(f"{len(df):,} rows; the limit is {MAX_ROWS:,}")

    def checked(make: Any) -> Any:
        try:
            return make()
        except DataValidationError as exc:
            problems.extend(exc.problems)
            return None

    y = checked(lambda: _binary(df, label_column, positive_label, "label", None))
    groups: dict[str, pd.Categorical] = {}
    for col in group_columns:
        codes, uniques = pd.factorize(df[col], sort=False)
        if (codes < 0).any():
            rows = np.flatnonzero(codes < 0)
            problems.append(Problem(f"missing group value in {rows.size:,} row(s)", int(rows[0]) + 1, col))
            continue
        names, inverse = np.unique(np.asarray([clean_name(u) for u in uniques], dtype=object), return_inverse=True)
        groups[str(col)] = pd.Categorical.from_codes(inverse[codes], names)   # the audit's names, compactly
    predictions: dict[str, np.ndarray] = {}
    for col in prediction_columns:
        t = thresholds.get(col)
        decided = checked(lambda: _binary(df, col, positive_values.get(col, positive_prediction), "prediction", t))
        if decided is not None:
            predictions[str(col) if t is None else f"{col} ≥ {t:g}"] = ~decided if flip else decided
    scores: dict[str, np.ndarray] = {}
    delimiter = df.attrs.get("delimiter", ",")
    for col in score_columns:
        values = _numbers(df[col], delimiter).to_numpy(dtype=float)
        bad = ~np.isfinite(values)
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raw = df[col].iloc[r]
            what = "missing score" if pd.isna(raw) else f"{_show(raw)} is not a number, so it cannot be a score"
            problems.append(Problem(what + (f" ({int(bad.sum()):,} such rows)" if bad.sum() > 1 else ""), r + 1, col))
            continue
        scores[str(col)] = -values if flip else values
    if problems:
        raise DataValidationError(_lines_for(problems, df))
    note = ""
    if flip:
        note = (f"A positive prediction is a harm: labels and decisions are flipped so that positive means "
                f"'not {positive_label}'" + (", and scores are negated (−score: higher = more likely the beneficial "
                                             "outcome; a threshold of −0.7 means a score of 0.7 or less)"
                                             if scores else "") + ".")
    return Candidates(title, ~y if flip else y, pd.DataFrame(groups), predictions, scores,
                      positive_outcome or (f"not {positive_label}" if flip else str(positive_label)), note)


# --- safe CSV export -----------------------------------------------------------------------

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def neutralize_cell(value: Any) -> Any:
    """Prefix a text cell that a spreadsheet could run as a formula with a quote.

    Cells starting with = + - @ (or tab / carriage return) are neutralized
    unless the whole cell is a plain number such as "-0.25".
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START) and not _PLAIN_NUMBER.match(value):
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
                            pc.invert(pc.match_substring_regex(arr, "^" + _PLAIN_NUMBER.pattern.strip("^$") + "$")))
            arr = pc.if_else(pc.fill_null(risky, False), pc.binary_join_element_wise("'", arr, ""), arr)
            arr = pc.fill_null(arr, na_rep)
        arrays.append(arr)
    sink = pa.BufferOutputStream()
    pacsv.write_csv(pa.table(arrays, names=names), sink,
                    write_options=pacsv.WriteOptions(quoting_style="needed"))
    return sink.getvalue().to_pybytes()


def _vector(values: Any, name: str) -> np.ndarray:
    """One array-like column (list, NumPy, pandas or polars Series, one-column frame) as a 1-D array."""
    if type(values).__module__.split(".")[0] == "polars":
        values = values.to_pandas() if hasattr(values, "columns") else values.to_numpy()
    if isinstance(values, pd.DataFrame):
        if values.shape[1] != 1:
            raise DataValidationError(f"{name} has {values.shape[1]} columns; expected one")
        values = values.iloc[:, 0]
    arr = values.to_numpy() if isinstance(values, pd.Series) else np.asarray(values, dtype=object if isinstance(
        values, (list, tuple)) and any(isinstance(v, str) for v in values) else None)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise DataValidationError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def _sensitive_frame(features: Any) -> pd.DataFrame:
    """Sensitive features as a frame of named columns: a Series keeps its name, a DataFrame (pandas or
    polars) or a dict its columns, a 2-D array gets sensitive_feature_0, _1, …"""
    if type(features).__module__.split(".")[0] == "polars" and hasattr(features, "columns"):
        features = features.to_pandas()
    if isinstance(features, pd.DataFrame):
        frame = features.reset_index(drop=True)
    elif isinstance(features, dict):
        frame = pd.DataFrame({str(k): _vector(v, f"sensitive feature {k!r}") for k, v in features.items()})
    elif isinstance(features, pd.Series) or type(features).__module__.split(".")[0] == "polars":
        name = getattr(features, "name", None) or "sensitive_feature"
        frame = pd.DataFrame({str(name): _vector(features, "sensitive_features")})
    else:
        arr = np.asarray(features, dtype=object)
        if arr.ndim == 1:
            frame = pd.DataFrame({"sensitive_feature": arr})
        elif arr.ndim == 2:
            frame = pd.DataFrame({f"sensitive_feature_{k}": arr[:, k] for k in range(arr.shape[1])})
        else:
            raise DataValidationError(f"sensitive_features must be 1- or 2-dimensional, got shape {arr.shape}")
    if frame.shape[1] == 0:
        raise DataValidationError("sensitive_features has no columns")
    frame.columns = [str(c) for c in frame.columns]
    return frame


def audit_from_predictions(y_true: Any, y_pred: Any, sensitive_features: Any, pos_label: Any = 1, *,
                           positive_is: str | None = None, threshold: float | None = None,
                           source: str = "predictions") -> Audit:
    """The notebook path to an audit; :meth:`fairness_core.audit.Audit.from_predictions` documents it."""
    labels, predictions = _vector(y_true, "y_true"), _vector(y_pred, "y_pred")
    groups = _sensitive_frame(sensitive_features)
    sizes = {"y_true": len(labels), "y_pred": len(predictions), "sensitive_features": len(groups)}
    if len(set(sizes.values())) != 1:
        raise DataValidationError("lengths differ: " + ", ".join(f"{k} has {v:,}" for k, v in sizes.items()))
    groups.columns = [c if c not in ("y_true", "y_pred") else f"{c} (group)" for c in groups.columns]
    df = pd.concat([pd.DataFrame({"y_true": labels, "y_pred": predictions}), groups], axis=1)
    try:
        return cms_from_predictions(df, "y_true", "y_pred", list(groups.columns), pos_label, positive_is=positive_is,
                                    threshold=threshold, source=source)
    except DataValidationError as exc:  # arrays have positions, not file rows: y_true[3], not "row 4"
        raise DataValidationError([Problem(f"{p.column}[{p.row - 1}]: {p.message}" if p.row is not None and p.column
                                           else (f"{p.column}: {p.message}" if p.column else p.message))
                                   for p in exc.problems]) from None


#: Uploads above this size are counted in place (:func:`aggregate_upload`) instead of being built into a table;
#: their first :data:`SAMPLE_ROWS` rows (:func:`read_sample`) serve to choose the columns.
LARGE_UPLOAD_BYTES = 32 * 2**20
SAMPLE_ROWS = 20_000


def read_sample(data: bytes, filename: str, rows: int = SAMPLE_ROWS) -> pd.DataFrame:
    """The first ``rows`` data rows of a CSV/TSV/TXT or Parquet upload as :func:`read_table` reads them (for
    choosing columns and values), without reading the rest. ``df.attrs["sample_of"]`` says how many rows the
    file holds when that is known cheaply (Parquet's footer), else None."""
    suffix = PurePath(filename).suffix.lower()
    if suffix in (".parquet", ".pq"):
        import pyarrow as pa

        file = _parquet_file(data, filename)
        _check_columns(file.metadata.num_columns, filename)
        batch = next(file.iter_batches(batch_size=rows), None)
        head = pa.Table.from_batches([batch]) if batch is not None else file.schema_arrow.empty_table()
        buffer = _io.BytesIO()
        import pyarrow.parquet as pq

        pq.write_table(head, buffer)
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


def aggregate(source: Any, *, label: str, prediction: str, groups: Sequence[str], positive: Any = 1,
              positive_prediction: Any = None, threshold: float | None = None, flip: bool = False,
              name: str | None = None, positive_is: str | None = None) -> Audit:
    """Per-group confusion matrices counted where the data live: Parquet/CSV files out of core with
    an embedded DuckDB, or an Ibis table on its own backend (Spark, a warehouse). See
    :func:`fairness_core.warehouse.aggregate` for the parameters."""
    from .warehouse import aggregate as in_place  # late: warehouse builds on this module

    return in_place(source, label=label, prediction=prediction, groups=groups, positive=positive,
                    positive_prediction=positive_prediction, threshold=threshold, flip=flip, name=name,
                    positive_is=positive_is)
