"""XLSX uploads: a bounded pass over the workbook's XML (sizes, formulas without values) before
calamine reads the chosen sheet's cells as text."""

from __future__ import annotations

import io as _io
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..validation import DataValidationError, Problem, operator_limit
from .limits import check_columns


def sheet_names(data: bytes) -> list[str]:
    """The worksheet names of an XLSX file (for the Upload page's sheet picker), from its small workbook part."""
    return [name for name, _ in _workbook_sheets(data, "the workbook")]


#: Excel's own sheet size limit; a sheet claiming more is not a real workbook.
EXCEL_MAX_ROWS = 1_048_576
#: Largest uncompressed XML in a workbook, all parts together (a 1.75 MB zip can expand to gigabytes)
#: (FAIRNESS_MAX_WORKBOOK_XML_MB).
MAX_XLSX_XML_BYTES = operator_limit("FAIRNESS_MAX_WORKBOOK_XML_MB", 256 * 2**20, 2**20)
#: Most cells (rows × columns, header included) read from one worksheet; larger tables belong in CSV or Parquet
#: (FAIRNESS_MAX_WORKBOOK_CELLS).
MAX_XLSX_CELLS = operator_limit("FAIRNESS_MAX_WORKBOOK_CELLS", 5_000_000)
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


def read_xlsx(data: bytes, filename: str, max_rows: int, sheet: str | None) -> pd.DataFrame:
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
        check_columns(values.width, filename)
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


