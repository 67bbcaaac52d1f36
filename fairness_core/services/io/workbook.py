"""XLSX uploads: a bounded pass over the workbook's XML (sizes, formulas without values) before
calamine reads the chosen sheet's cells as text."""

from __future__ import annotations

import io as _io
import re
from contextlib import contextmanager
from itertools import islice
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np
import pandas as pd

from ...common.validation import DataValidationError, Problem, operator_limit
from .upload_limits import check_columns
from .parquet import text_frame


def sheet_names(data: bytes) -> list[str]:
    """The worksheet names of an XLSX file (for the Upload page's sheet picker), from its small workbook part."""
    return [name for name, _ in _workbook_parts(data, "the workbook")[0]]


#: Excel's own sheet size limit; a sheet claiming more is not a real workbook.
EXCEL_MAX_ROWS = 1_048_576
#: Largest uncompressed XML in a workbook, all parts together (a 1.75 MB zip can expand to gigabytes)
#: (FAIRNESS_MAX_WORKBOOK_XML_MB).
MAX_XLSX_XML_BYTES = operator_limit("FAIRNESS_MAX_WORKBOOK_XML_MB", 256 * 2**20, 2**20)
#: Most cells (rows × columns, header included) read from one worksheet; larger tables belong in CSV or Parquet
#: (FAIRNESS_MAX_WORKBOOK_CELLS).
MAX_XLSX_CELLS = operator_limit("FAIRNESS_MAX_WORKBOOK_CELLS", 5_000_000)
#: Most text the cells of one worksheet may hold once read (FAIRNESS_MAX_WORKBOOK_TEXT_MB): shared strings
#: count once per cell that names them (a 13 KB file whose 60,000 cells all name one 10 KB string holds
#: 600 MB of text), inline strings and other values by their length in the XML.
MAX_XLSX_TEXT_BYTES = operator_limit("FAIRNESS_MAX_WORKBOOK_TEXT_MB", 256 * 2**20, 2**20)
#: Largest part that describes the workbook (its sheet list and relations), read before any sheet.
_MAX_WORKBOOK_PART = 4 * 2**20
_SCAN_CHUNK = 8 * 2**20


@contextmanager
def _damage(filename: str) -> Iterator[None]:
    """Whatever the zip and XML readers raise on bad bytes (zlib.error, BadZipFile, EOFError, a Rust panic …)
    as a :class:`DataValidationError` in plain words; the package's own refusals pass through."""
    try:
        yield
    except DataValidationError:
        raise
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - pyo3's PanicException is a BaseException
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataValidationError(f"could not read {filename}: the workbook is damaged: {detail[:200]}; save it "
                                  "again from Excel") from None


def _zip_members(data: bytes, filename: str):  # type: ignore[no-untyped-def]
    import zipfile

    try:
        with _damage(filename):
            z = zipfile.ZipFile(_io.BytesIO(data))
    except DataValidationError:
        if data[:2] != b"PK":
            raise DataValidationError(f"could not read {filename} as an Excel workbook: not a zip archive") from None
        raise
    total = sum(i.file_size for i in z.infolist())
    if total > MAX_XLSX_XML_BYTES:
        z.close()
        raise DataValidationError(f"{filename} expands to {total / 2**20:,.0f} MB of XML; the limit is "
                                  f"{MAX_XLSX_XML_BYTES / 2**20:,.0f} MB. Save the data as CSV or Parquet instead")
    return z


_ATTRIBUTE = re.compile(rb'([\w:]+)\s*=\s*"([^"]*)"')


def _workbook_parts(data: bytes, filename: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(sheet name, worksheet part) in the workbook's order, from xl/workbook.xml and its relations, and the
    shared-strings parts the relations name (with Excel's usual one, which readers also look for)."""
    import html

    with _zip_members(data, filename) as z, _damage(filename):
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
        members = set(z.namelist())
    targets, shared = {}, ["xl/sharedStrings.xml"]
    for element in re.findall(rb"<(?:\w+:)?Relationship\b[^>]*>", parts["xl/_rels/workbook.xml.rels"]):
        attrs = dict(_ATTRIBUTE.findall(element))
        if b"Id" in attrs and b"Target" in attrs:
            target = attrs[b"Target"].decode("utf-8", "replace").lstrip("/")
            targets[attrs[b"Id"]] = target if target.startswith("xl/") else f"xl/{target}"
            if attrs.get(b"Type", b"").lower().endswith(b"/sharedstrings"):
                shared.append(targets[attrs[b"Id"]])
    sheets = []
    for element in re.findall(rb"<(?:\w+:)?sheet\b[^>]*>", parts["xl/workbook.xml"]):
        attrs = {k.split(b":")[-1]: v for k, v in _ATTRIBUTE.findall(element)}
        name = html.unescape(attrs.get(b"name", b"").decode("utf-8", "replace"))
        if b"id" in attrs and attrs[b"id"] in targets:
            sheets.append((name, targets[attrs[b"id"]]))
    if not sheets:
        raise DataValidationError(f"could not read {filename} as an Excel workbook: it lists no worksheets")
    return sheets, [p for p in dict.fromkeys(shared) if p in members]


#: Where a shared string starts (``<si>``, any namespace prefix). Shared strings do not nest, so each string's
#: text lies between its start and the next one's: the bytes between them are never fewer than the text
#: (tags, entities and phonetic runs only add).
_SHARED_START = re.compile(rb"<(?:\w{1,100}:)?si\b")


def _shared_lengths(z, parts: list[str], filename: str) -> np.ndarray:  # type: ignore[no-untyped-def]
    """An upper bound of each shared string's length in bytes, streamed (the larger where two parts could be
    read). Refuses more strings than :data:`MAX_XLSX_CELLS` (no cell could name the rest), and markup that
    could hide where a string starts (comments, CDATA, a DOCTYPE: Excel writes none)."""
    best = np.zeros(0, dtype=np.int64)
    for part in parts:
        starts: list[np.ndarray] = []
        count = offset = 0
        carry = b""
        with z.open(part) as stream:
            while True:
                chunk = stream.read(_SCAN_CHUNK)
                block = carry + chunk
                if b"<!" in block:
                    raise DataValidationError(f"could not read {filename}: its shared strings hold a comment, CDATA "
                                              "or a DOCTYPE, which Excel never writes; save it again from Excel")
                cut = len(block)
                if chunk:   # a start cut in two is read whole with the next chunk (a start is under 200 bytes)
                    last = block.rfind(b"<")
                    if last >= len(block) - 4096:
                        cut = last
                found = np.fromiter((offset + m.start() for m in _SHARED_START.finditer(block, 0, cut)),
                                    dtype=np.int64)
                count += len(found)
                if count > MAX_XLSX_CELLS:
                    raise DataValidationError(f"{filename} holds more than {MAX_XLSX_CELLS:,} shared strings; the "
                                              f"limit for a workbook is {MAX_XLSX_CELLS:,} (its cell limit). Save "
                                              "the data as CSV or Parquet instead")
                starts.append(found)
                carry, offset = block[cut:], offset + cut
                if not chunk:
                    break
        at = np.concatenate(starts) if starts else np.zeros(0, dtype=np.int64)
        these = np.diff(np.append(at, offset))
        if len(these) < len(best):
            these, best = best, these
        these[: len(best)] = np.maximum(these[: len(best)], best)
        best = these
    return best


@dataclass(frozen=True)
class _SheetScan:
    rows: int                # <row> elements
    cells: int               # <c> elements
    formulas: tuple[tuple[int, int, str], ...]  # (sheet row, 0-based column, formula) without a saved value
    text: int                # bytes of text the cells hold once read


_CELL = re.compile(rb"<c\b([^>]*?)(?:/>|>(.*?)</c>)", re.S)
_REF = re.compile(rb'\br="([A-Z]{1,3})(\d+)"')
#: Excel's way of naming a shared string (t="s" then the index), read at once; any other spelling of t="s"
#: (other quotes, spaces, a prefix) counts as the longest shared string.
_SHARED_CELL = re.compile(rb'\bt="s"><v>(\d{1,18})</v>')
#: A value or an inline string in Excel's spelling; any other spelling is read by :data:`_IN_PLACE`.
_VALUE = re.compile(rb"<v>([^<]*)<")
_INLINE = re.compile(rb"<is>(.*?)</is>", re.S)
_IN_PLACE = re.compile(rb"<(?:\w+:)?(?:is|v)\b[^>]*>(.*?)</(?:\w+:)?(?:is|v)\s*>", re.S)
_PREFIXED_CELL = re.compile(rb"<\w+:c[\s/>]")
_PREFIXED_ROW = re.compile(rb"<\w+:row[\s/>]")


def _cell_text_bytes(block: bytes, shared: np.ndarray) -> int:
    """An upper bound of the bytes of text the cells in ``block`` hold once read: each cell that names a shared
    string the length of that string (one whose index is spelled otherwise counts as the longest), every
    inline string and value its length in the XML (a block with comments or CDATA: all its bytes)."""
    if b"<!" in block:
        text = len(block)
    elif (b":v" in block or b":is" in block or block.count(b"<v") != block.count(b"<v>")
          or block.count(b"<is") != block.count(b"<is>")):
        text = sum(map(len, _IN_PLACE.findall(block)))
    else:
        text = sum(map(len, _VALUE.findall(block))) + (sum(map(len, _INLINE.findall(block))) if b"<is>" in block else 0)
    candidates = block.count(b'"s"') + block.count(b"'s'")
    if not candidates or not len(shared):
        return text
    indices = _SHARED_CELL.findall(block)
    numbers = np.fromstring(b" ".join(indices), dtype=np.int64, sep=" ") if indices else np.zeros(0, np.int64)
    valid = numbers[(numbers >= 0) & (numbers < len(shared))]
    return text + int(shared[valid].sum()) + max(0, candidates - len(valid)) * int(shared.max())


def _count(block: bytes) -> tuple[int, int]:
    """Rows and cells that start in ``block`` (any spelling: a prefix, a line break after the name; elements
    outside the sheet's data that start alike, such as ``<col>``, only add a few)."""
    rows, cells = block.count(b"<row"), block.count(b"<c")
    if b":row" in block:
        rows += len(_PREFIXED_ROW.findall(block))
    if b":c" in block:
        cells += len(_PREFIXED_CELL.findall(block))
    return rows, cells


def _scan_sheet(z, part: str, filename: str, sheet: str, max_rows: int,  # type: ignore[no-untyped-def]
                shared: np.ndarray) -> _SheetScan:
    """Stream one worksheet's XML once, without building it: count rows, cells and the text the cells will
    hold (refusing at the first row, cell or byte of text past the limits, whatever the sheet declares), and
    find formulas without a saved value. Blocks end after a row or before a tag; a value longer than a block
    is counted as text whole and not kept."""
    rows = cells = text = 0
    formulas: list[tuple[int, int, str]] = []
    tail, inside = b"", False
    try:
        stream = z.open(part)
    except KeyError:
        raise DataValidationError(f"{filename}: sheet {sheet!r} has no worksheet part {part}") from None
    with stream:
        while True:
            chunk = stream.read(_SCAN_CHUNK)
            block = tail + chunk
            if inside:   # the rest of a value that did not fit in a block
                end = block.find(b"<")
                text += len(block) if end < 0 else end
                block, inside = (b"", True) if end < 0 else (block[end:], False)
            if chunk:
                cut = block.rfind(b"</row>")
                cut = cut + 6 if cut >= 0 else max(block.rfind(b"<"), 0)
                block, tail = block[:cut], block[cut:]
                if len(tail) > _SCAN_CHUNK:   # one value longer than a block: count it, keep none of it
                    r, c = _count(tail)
                    rows, cells, text = rows + r, cells + c, text + len(tail)
                    tail, inside = b"", True
            else:
                tail = b""
            r, c = _count(block)
            if b"<f" in block:
                formulas.extend(_formulas_without_values(block, rows))
            rows += r
            cells += c
            text += _cell_text_bytes(block, shared)
            if rows - 1 > max_rows:
                raise DataValidationError(f"{filename}, sheet {sheet!r}, has more than {max_rows:,} data rows; the "
                                          f"limit is {max_rows:,}")
            if cells > MAX_XLSX_CELLS:
                raise DataValidationError(f"{filename}, sheet {sheet!r}, has more than {MAX_XLSX_CELLS:,} cells; the "
                                          f"limit for a workbook is {MAX_XLSX_CELLS:,} cells (rows × columns). Save "
                                          "the data as CSV or Parquet instead")
            if text > MAX_XLSX_TEXT_BYTES:
                raise DataValidationError(f"{filename}, sheet {sheet!r}, holds more than "
                                          f"{MAX_XLSX_TEXT_BYTES / 2**20:,.0f} MB of text in its cells; the limit for a "
                                          f"workbook is {MAX_XLSX_TEXT_BYTES / 2**20:,.0f} MB (a shared string counts "
                                          "once for every cell that names it). Save the data as CSV or Parquet "
                                          "instead")
            if not chunk:
                break
    return _SheetScan(rows, cells, tuple(formulas[:100]), text)


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


def read_xlsx(data: bytes, filename: str, max_rows: int, sheet: str | None) -> pd.DataFrame:
    """A worksheet as text. The XML is streamed once first (bounded in bytes, rows, cells and the text the cells
    will hold; formulas without a saved value found), then Rust's calamine reads the values, which become
    Arrow text a block of rows at a time (never a Python object per cell for the whole sheet)."""
    import python_calamine

    max_rows = min(max_rows, EXCEL_MAX_ROWS - 1)
    sheets, shared_parts = _workbook_parts(data, filename)
    names = [n for n, _ in sheets]
    if sheet is not None and sheet not in names:
        raise DataValidationError(f"{filename} has no sheet {sheet!r}; its sheets are {', '.join(map(repr, names))}")
    with _zip_members(data, filename) as z, _damage(filename):
        shared = _shared_lengths(z, shared_parts, filename)
        scans = {}
        for name, part in sheets:
            if sheet is None or name == sheet:
                scans[name] = _scan_sheet(z, part, filename, name, max_rows, shared)
                if sheet is None and scans[name].rows > 1:
                    sheet = name
    del shared
    sheet = sheet or names[0]
    scan = scans[sheet]
    try:
        book = python_calamine.CalamineWorkbook.from_filelike(_io.BytesIO(data))
        values = book.get_sheet_by_name(sheet)
        check_columns(values.width, filename)
        first_column = values.start[1] if values.start else 0
        header, blank, columns = _read_rows(values.iter_rows(), filename, sheet)
    except DataValidationError:
        raise
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - calamine raises its own types (and Rust panics) on bad bytes
        raise DataValidationError(f"could not read {filename} as an Excel workbook: "
                                  f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    finally:
        values = book = None
    problems = [Problem(f"a formula ({f[:40]}) without a saved value; open the file in Excel and save it, or "
                        "paste values", row - 1 - blank,
                        header[c - first_column] if 0 <= c - first_column < len(header) else None)
                for row, c, f in scan.formulas]
    if problems:
        raise DataValidationError(problems)
    if not columns or not len(columns[0]):
        others = [n for n in names if n != sheet]
        raise DataValidationError(f"{filename}: sheet {sheet!r} has no data rows below its header"
                                  + (f"; other sheets: {', '.join(map(repr, others))}" if others else ""))
    import pyarrow as pa

    keep = [k for k, name in enumerate(header) if name != "" or columns[k].null_count < len(columns[k])]
    table = pa.table([columns[k] for k in keep], names=[f"c{k}" for k in keep])   # formatting beyond the table
    df = text_frame(table)
    df.columns = [header[k] for k in keep]
    return df


#: Rows of a worksheet turned into Arrow text at a time.
_ROWS_PER_BLOCK = 4_096


def _read_rows(rows: Iterator[list[Any]], filename: str, sheet: str) -> tuple[list[str], int, list[Any]]:
    """The header (the first row that is not blank), the blank rows above it and each column below it as a
    ``large_string`` Arrow array (whole floats without ".0", blank cells missing), built a block of rows at
    a time."""
    import pyarrow as pa

    blank = 0
    header: list[str] | None = None
    for row in rows:
        if all(v == "" for v in row):
            blank += 1
            continue
        header = ["" if v == "" else str(_cell_text(v)) for v in row]
        break
    if header is None:
        raise DataValidationError(f"{filename}: sheet {sheet!r} is empty")
    width = len(header)
    chunks: list[list[Any]] = [[] for _ in range(width)]
    column: Any = None
    while True:
        block = list(islice(rows, _ROWS_PER_BLOCK))
        if not block:
            break
        for k, column in enumerate(zip(*block)):
            if k < width:
                chunks[k].append(_column_text(column))
        del block, column
    return header, blank, [pa.chunked_array(c, type=pa.large_string()) for c in chunks]


def _column_text(values: tuple[Any, ...]) -> Any:
    """A block of one column's cells as Arrow text, as :func:`_cell_text` writes each (numbers at once)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if {v.__class__ for v in values} == {float}:
        numbers = np.fromiter(values, dtype=np.float64, count=len(values))
        whole = (np.isfinite(numbers) & (numbers == np.trunc(numbers)) & (np.abs(numbers) < 1e15)
                 & ~((numbers == 0) & np.signbit(numbers)))   # -0.0 stays "-0.0", as written
        text = pa.array(np.where(whole, numbers, 0).astype(np.int64)).cast(pa.large_string())
        if whole.all():
            return text
        rest = pa.array([None if w else str(v) for v, w in zip(values, whole)], type=pa.large_string())
        return pc.if_else(pa.array(whole), text, rest)
    return pa.array([_cell_text(v) for v in values], type=pa.large_string())


def _cell_text(value: Any) -> Any:
    """An Excel cell as text: whole floats without ".0" (but "-0.0"), missing (calamine's "") as None. A float's
    text is its ``repr``, which reads back as the very float (:func:`~fairness_core.common.numbers.as_numbers`)."""
    if value.__class__ is str:
        return value or None
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15 and str(value) != "-0.0":
        return str(int(value))
    return str(value)


