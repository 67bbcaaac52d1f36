"""Minimal XLSX files written straight from XML, for tests, the fuzzer and the benches: large or hostile
workbooks (no ``<dimension>``, many sheets, shared-string bombs, huge inline strings) in seconds, without
a spreadsheet library."""

from __future__ import annotations

import io
import zipfile
from typing import Iterable, Iterator, Sequence

_CONTENT_TYPES = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
                  '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                  '<Default Extension="xml" ContentType="application/xml"/>'
                  '<Override PartName="/xl/workbook.xml" '
                  'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
                  '{sheets}{shared}</Types>')
_SHEET_TYPE = ('<Override PartName="/xl/worksheets/sheet{k}.xml" '
               'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>')
_SHARED_TYPE = ('<Override PartName="/xl/sharedStrings.xml" '
                'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>')
_ROOT_RELS = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
              '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
              '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
              'officeDocument" Target="xl/workbook.xml"/></Relationships>')
_NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
_RNS = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'


def _column(k: int) -> str:
    name = ""
    k += 1
    while k:
        k, r = divmod(k - 1, 26)
        name = chr(65 + r) + name
    return name


def cell(value: object, ref: str = "") -> str:
    """One ``<c>`` element: numbers as numbers, text inline, a ``("=", formula, value)`` tuple as a formula
    with (or without, value None) its cached value."""
    r = f' r="{ref}"' if ref else ""
    if isinstance(value, tuple):
        _, formula, cached = value
        return f'<c{r}><f>{formula}</f>' + (f"<v>{cached}</v>" if cached is not None else "") + "</c>"
    if isinstance(value, (int, float)):
        return f"<c{r}><v>{value}</v></c>"
    text = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return f'<c{r} t="inlineStr"><is><t>{text}</t></is></c>'


def sheet_xml(rows: Iterable[Sequence[object]], dimension: str | None = None, refs: bool = True) -> Iterator[bytes]:
    """A worksheet's XML in chunks (rows are written as they come: a million rows never sit in memory)."""
    yield (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet {_NS}>'
           + (f'<dimension ref="{dimension}"/>' if dimension else "") + "<sheetData>").encode()
    chunk: list[str] = []
    for k, row in enumerate(rows, start=1):
        cells = "".join(cell(v, f"{_column(c)}{k}" if refs else "") for c, v in enumerate(row))
        chunk.append(f'<row r="{k}">{cells}</row>' if refs else f"<row>{cells}</row>")
        if len(chunk) >= 10_000:
            yield "".join(chunk).encode()
            chunk = []
    yield ("".join(chunk) + "</sheetData></worksheet>").encode()


def workbook(sheets: dict[str, Iterable[bytes] | bytes], shared_strings: bytes | None = None) -> bytes:
    """An XLSX file from each sheet's XML (bytes or chunks), in order, optionally with a sharedStrings part."""
    buffer = io.BytesIO()
    names = list(sheets)
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", _CONTENT_TYPES.format(
            sheets="".join(_SHEET_TYPE.format(k=k) for k in range(1, len(names) + 1)),
            shared=_SHARED_TYPE if shared_strings is not None else ""))
        z.writestr("_rels/.rels", _ROOT_RELS)
        z.writestr("xl/workbook.xml", f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><workbook {_NS} {_RNS}>'
                   "<sheets>" + "".join(f'<sheet name="{n}" sheetId="{k}" r:id="rId{k}"/>'
                                        for k, n in enumerate(names, start=1)) + "</sheets></workbook>")
        rels = "".join(f'<Relationship Id="rId{k}" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
                       f'relationships/worksheet" Target="worksheets/sheet{k}.xml"/>' for k in range(1, len(names) + 1))
        if shared_strings is not None:
            rels += (f'<Relationship Id="rId{len(names) + 1}" Type="http://schemas.openxmlformats.org/officeDocument/'
                     '2006/relationships/sharedStrings" Target="sharedStrings.xml"/>')
        z.writestr("xl/_rels/workbook.xml.rels", '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
                   f'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{rels}'
                   "</Relationships>")
        for k, name in enumerate(names, start=1):
            content = sheets[name]
            with z.open(f"xl/worksheets/sheet{k}.xml", "w", force_zip64=True) as out:
                for part in ([content] if isinstance(content, bytes) else content):
                    out.write(part)
        if shared_strings is not None:
            with z.open("xl/sharedStrings.xml", "w", force_zip64=True) as out:
                out.write(shared_strings)
    return buffer.getvalue()


def table_workbook(header: Sequence[str], rows: Iterable[Sequence[object]], *, dimension: bool = True,
                   refs: bool = True) -> bytes:
    """One sheet "Sheet1": ``header`` then ``rows``; ``dimension=False`` leaves out the declared size."""
    rows = list(rows) if dimension else rows
    dim = f"A1:{_column(len(header) - 1)}{len(rows) + 1}" if dimension else None  # type: ignore[arg-type]
    return workbook({"Sheet1": sheet_xml([header, *rows] if dimension else _chain(header, rows), dim, refs)})


def _chain(first: Sequence[object], rest: Iterable[Sequence[object]]) -> Iterator[Sequence[object]]:
    yield first
    yield from rest
