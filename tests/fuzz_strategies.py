"""Generated upload files for fuzzing the parsers (tests/test_fuzz.py and scripts/fuzz.py).

Every generated file goes through the same path as an upload: :func:`read_table`, then
:func:`cms_from_table` or :func:`cms_from_predictions`. The contract checked: the result is
an :class:`Audit` or a :class:`DataValidationError` whose problems are non-empty text (with a
1-based row and a column name where one applies); nothing else escapes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from fairness_core.audit import Audit
from fairness_core.io import DataValidationError, cms_from_predictions, cms_from_table, read_table

SMALL = st.integers(min_value=0, max_value=50).map(str)
CELL_VALUES = st.one_of(
    SMALL, SMALL, SMALL, SMALL, SMALL, SMALL, SMALL, SMALL,  # mostly valid, so deeper checks run too
    st.integers(min_value=-10, max_value=10**6).map(str),
    st.integers(min_value=10**12, max_value=10**40).map(str),  # huge counts
    st.sampled_from(["", "NaN", "nan", "inf", "-inf", "1.5", "-0", "1e3", "2.0", "=1+1", "@SUM(A1)", " 7 ", "abc",
                     "1,5", "0x10", "None", "true", "\u00e9", "\u4e2d",
                     # issue 14's misreads: ambiguous separators, hex, underflow, other digit systems
                     "1.000", "1 000", "1,234", "1e-400", "0X1F", "\u0661\u0662", "\uff11", "+5", "5.00"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=6),
)
HEADERS = st.one_of(
    st.just(["group", "TP", "FN", "FP", "TN"]),
    st.just(["Group", "true positives", "False_Negatives", "fp", "TN"]),
    st.just(["group", "TP", "FN", "FP"]),  # a missing column
    st.just(["group", "TP", "TP", "FP", "TN"]),  # duplicated
    st.just(["", "TP", "FN", "FP", "TN"]),  # empty header
    st.just(["race", "sex", "TP", "FN", "FP", "TN"]),
    st.lists(st.text(max_size=5), min_size=1, max_size=7),
)
#: Group names that have broken readers: ids that look numeric, invisible and combining characters,
#: markup, very long names, formula starts.
GROUP_NAMES = st.sampled_from(["A", "B", "C", "A", "", "=HYPERLINK()", "x" * 50, "007", "1.10", "12345678901234567890",
                               "A\u200b", "Jose\u0301", "Jos\u00e9", "<a href='https://evil.example'>x</a>",
                               "![p](https://evil.example/p.png)", "$x$", "y" * 300, "\u202eRTL", " padded "])
ENCODINGS = st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "utf-16", "cp1252"])
SEPARATORS = st.sampled_from([",", ";", "\t", "|"])


@st.composite
def cm_files(draw: Any) -> tuple[bytes, str]:
    """A confusion-matrix table as bytes: half are valid apart from at most one cell, half are wild."""
    clean = draw(st.booleans())
    header = ["group", "TP", "FN", "FP", "TN"] if clean else draw(HEADERS)
    sep = draw(SEPARATORS)
    n_rows = draw(st.integers(min_value=0 if not clean else 2, max_value=12))
    rows = []
    for r in range(n_rows):
        width = len(header) + (0 if clean else draw(st.sampled_from([0, 0, 0, 0, 0, 0, 0, -1, 1])))
        if clean:
            cells = [f"G{r}"] + [draw(SMALL) for _ in range(width - 1)]
        else:
            cells = [draw(GROUP_NAMES) if k == 0
                     else draw(CELL_VALUES) for k in range(max(width, 0))]
        rows.append(sep.join(cells))
    if clean and rows and draw(st.booleans()):  # one bad cell somewhere
        r = draw(st.integers(0, len(rows) - 1))
        cells = rows[r].split(sep)
        cells[draw(st.integers(1, len(cells) - 1))] = draw(CELL_VALUES).replace(sep, "")
        rows[r] = sep.join(cells)
    lines = [sep.join(header), *rows]
    if not clean and draw(st.integers(0, 9)) == 0:  # a pandas index column in front
        lines = [sep + lines[0]] + [f"{k}{sep}{line}" for k, line in enumerate(lines[1:])]
    if not clean and draw(st.integers(0, 9)) == 0:  # trailing delimiters
        lines = [lines[0]] + [line + sep for line in lines[1:]]
    text = "\n".join(lines) + draw(st.sampled_from(["", "\n", "\r\n"]))
    encoding = draw(ENCODINGS)
    try:
        data = text.encode(encoding)
    except UnicodeEncodeError:
        data = text.encode("utf-8", errors="replace")
    return data, draw(st.sampled_from(["t.csv", "t.tsv", "t.txt", "t", "t.CSV"]))


@st.composite
def exact_cm_files(draw: Any) -> tuple[bytes, str, dict[str, list[int]]]:
    """A valid CM table written in the many ways people write one, with the counts it must be read as:
    thousands separators that cannot be confused with the delimiter, signs, padding, quoted names with
    quotes or delimiters (a line break in a name is refused: tests/test_io.py), names that look like numbers. Reading it any other way is a silent misread."""
    sep = draw(SEPARATORS)
    names = draw(st.lists(st.sampled_from(["007", "7", "1.10", "1.1", "12345678901234567890", "Zoë", "A;B", "A,B",
                                           "say \"hi\"", "x", "y", "z", "Jos\u00e9", "名前"]),
                          min_size=2, max_size=6, unique=True))
    expected: dict[str, list[int]] = {}
    rows = []
    for name in names:
        counts = [draw(st.integers(0, 5_000_000)) for _ in range(4)]
        if sum(counts) == 0:
            counts[0] = 1
        cells = []
        for c in counts:
            style = draw(st.sampled_from(["plain", "plain", "plus", "pad", "thousands", "float"]))
            if style == "plus":
                cells.append(f"+{c}")
            elif style == "pad":
                cells.append(f" {c} ")
            elif style == "float":
                cells.append(f"{c}.0")
            elif style == "thousands" and c >= 1000:
                mark = draw(st.sampled_from([m for m in (",", " ", "'", "_") if m != sep]))
                cells.append(f"{c:,}".replace(",", mark))
            else:
                cells.append(str(c))
        quoted = '"' + name.replace('"', '""') + '"' if (sep in name or "\n" in name or "," in name) else name
        rows.append(sep.join([quoted] + [f'"{v}"' if sep in v else v for v in cells]))
        expected[name] = counts
    text = sep.join(["group", "TP", "FN", "FP", "TN"]) + "\n" + "\n".join(rows) + "\n"
    return text.encode(draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]))), "exact.csv", expected


@st.composite
def row_files(draw: Any) -> tuple[bytes, str]:
    """Row-level predictions: label, prediction, group, sometimes broken."""
    n = draw(st.integers(min_value=0, max_value=40))
    clean = draw(st.booleans())  # half the files are valid apart from what the other columns do
    values = st.sampled_from(["0", "1"] if clean else ["0", "1", "1", "0", "yes", "no", "", "2", "nan", "0.7"])
    lines = ["label,prediction,group,score"]
    for _ in range(n):
        groups = ["a", "b"] if clean else ["a", "b", "c", "", " a ", "a\u200b", "007", "7", "<b>x</b>", "z" * 300]
        lines.append(",".join([draw(values), draw(values), draw(st.sampled_from(groups)),
                               draw(CELL_VALUES).replace(",", "")]))
    return "\n".join(lines).encode(), "rows.csv"


@dataclass
class Tally:
    """What a fuzz run tried and how each try ended."""

    tried: int = 0
    accepted: int = 0
    rejected: int = 0
    messages: dict[str, int] = field(default_factory=dict)

    def record(self, outcome: Audit | DataValidationError | Any) -> None:
        self.tried += 1
        if not isinstance(outcome, DataValidationError):   # an Audit, or a table read (parse_under_limits)
            self.accepted += 1
        else:
            self.rejected += 1
            key = str(outcome.problems[0].message)[:60]
            self.messages[key] = self.messages.get(key, 0) + 1


def check_problems(exc: DataValidationError) -> None:
    """Every problem is non-empty text; rows are 1-based ints; columns are strings."""
    assert exc.problems, "a rejection must say why"
    for p in exc.problems:
        assert isinstance(p.message, str) and p.message.strip()
        assert p.row is None or (isinstance(p.row, int) and p.row >= 1)
        assert p.column is None or isinstance(p.column, str)
        assert str(p)


def parse_cm_file(data: bytes, name: str) -> Audit | DataValidationError:
    """The Upload page's confusion-matrix path. Anything but an Audit or a DataValidationError propagates."""
    try:
        return cms_from_table(read_table(data, name), source=name)
    except DataValidationError as exc:
        check_problems(exc)
        return exc


def parse_row_file(data: bytes, name: str) -> Audit | DataValidationError:
    """The Upload page's row-level path (label 1 positive; score thresholded in every other try)."""
    try:
        df = read_table(data, name)
        return cms_from_predictions(df, "label", "prediction", ["group"], 1,
                                    threshold=None if len(df) % 2 else 0.5)
    except DataValidationError as exc:
        check_problems(exc)
        return exc


# --- issue 35's classes: workbooks by their XML, Parquet by its footer, names with hidden characters ---

#: Characters that make two names print alike or reorder a sentence; an accepted audit never holds one.
HIDDEN_CHARACTERS = ["\u200e", "\u200f", "\u202a", "\u202e", "\u2066", "\u2069", "\u034f", "\u115f", "\u3164",
                     "\uffa0", "\x07", "\x1b", "\x85", "\ufe0f", "\U000e0041", "\u2028", "\n", "\t", "\u2800"]


@st.composite
def hidden_name_files(draw: Any) -> tuple[bytes, str]:
    """A valid CM table whose group names sometimes carry a hidden character, anywhere in the name."""
    n = draw(st.integers(min_value=2, max_value=6))
    names = []
    for k in range(n):
        name = draw(st.sampled_from(["Black", "White", "Asian", "Latinx", "Other", "Zoë"])) + str(k)
        if draw(st.booleans()):
            at = draw(st.integers(0, len(name)))
            name = name[:at] + draw(st.sampled_from(HIDDEN_CHARACTERS)) + name[at:]
        names.append(name)
    lines = ["group,TP,FN,FP,TN"] + [f'"{name}",1,2,3,4' for name in names]
    return "\n".join(lines).encode(), "names.csv"


def _xml_text(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@st.composite
def workbook_files(draw: Any) -> tuple[bytes, str]:
    """Workbooks written from XML: with or without a declared size (and a false one), one sheet or many,
    inline or shared strings (long ones too), formulas with and without saved values, blank rows above."""
    from workbooks import cell, workbook

    clean = draw(st.booleans())   # half are valid tables, so that reading goes all the way
    header = (draw(st.sampled_from([["group", "TP", "FN", "FP", "TN"], ["race", "sex", "TP", "FN", "FP", "TN"]]))
              if clean else draw(st.sampled_from([["group", "TP", "FN", "FP", "TN"], ["group", "TP", "FN"], ["g"]])))
    n_rows = draw(st.integers(2 if clean else 0, 8))
    row_number = iter(range(1000))
    use_shared = draw(st.booleans())
    shared: list[str] = []

    def value(k: int) -> str:
        if k < len(header) - 4 or header == ["g"]:
            text = (f"G{next(row_number)}" if clean else
                    draw(st.one_of(GROUP_NAMES, st.text(max_size=8), st.just("x" * draw(st.integers(0, 5000))))))
            if use_shared:
                shared.append(text)
                return f'<c t="s"><v>{len(shared) - 1}</v></c>'
            return cell(text)
        kind = draw(st.integers(0, 9)) if not clean else 9
        if kind == 0:
            return cell(("=", "SUM(B2:C2)", draw(st.sampled_from([None, 3]))))
        if kind == 1:
            return cell(draw(CELL_VALUES))
        return cell(draw(st.integers(0, 50)))

    rows = [f"<row>{''.join(cell(h) for h in header)}</row>"]
    rows += [f"<row>{''.join(value(k) for k in range(len(header)))}</row>" for _ in range(n_rows)]
    blank = "<row></row>" * draw(st.integers(0, 2))
    dimension = draw(st.sampled_from(["", '<dimension ref="A1:E3"/>', '<dimension ref="A1:XFD1048576"/>']))
    xml = ('<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
           f"{dimension}<sheetData>{blank}{''.join(rows)}</sheetData></worksheet>").encode()
    sheets: dict[str, bytes] = {f"notes{k}": b'<?xml version="1.0"?><worksheet><sheetData/></worksheet>'
                                for k in range(draw(st.integers(0, 12)))}
    sheets["data"] = xml
    strings = None
    if use_shared:
        strings = ('<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
                   + "".join(f"<si><t>{_xml_text(s)}</t></si>" for s in shared) + "</sst>").encode()
    return workbook(sheets, shared_strings=strings), "book.xlsx"


@st.composite
def parquet_files(draw: Any) -> tuple[bytes, str]:
    """Parquet files of any column types (nested and binary ones are refused by name), wide or narrow,
    with nulls, in one row group or several."""
    import io as _io

    import pyarrow as pa
    import pyarrow.parquet as pq

    clean = draw(st.booleans())   # half are valid tables
    n = draw(st.integers(2 if clean else 0, 30))
    kinds = {"int": lambda: pa.array(draw(st.lists(st.one_of(st.none(), st.integers(-5, 60)), min_size=n, max_size=n)),
                                     pa.int64()),
             "float": lambda: pa.array(draw(st.lists(st.one_of(st.none(), st.floats()), min_size=n, max_size=n)),
                                       pa.float64()),
             "text": lambda: pa.array(draw(st.lists(st.one_of(st.none(), GROUP_NAMES, st.text(max_size=6)),
                                                    min_size=n, max_size=n)), pa.string()),
             "bool": lambda: pa.array(draw(st.lists(st.one_of(st.none(), st.booleans()), min_size=n, max_size=n)),
                                      pa.bool_()),
             "list": lambda: pa.array([[1, 2]] * n, pa.list_(pa.int64())),
             "binary": lambda: pa.array([b"\x00\x01"] * n, pa.binary())}
    names = draw(st.sampled_from([["group", "TP", "FN", "FP", "TN"], ["label", "prediction", "group", "score"]]))
    if clean:
        columns = {name: (pa.array([f"G{k}" for k in range(n)]) if name == "group"
                          else pa.array([draw(st.integers(0, 1 if name in ("label", "prediction") else 40))
                                         for _ in range(n)], pa.int64())) for name in names}
    else:
        columns = {name: kinds[draw(st.sampled_from(["int", "int", "int", "text", "float", "bool", "list", "binary"]))
                               if name not in ("group",) else "text"]() for name in names}
    if not clean and draw(st.integers(0, 9)) == 0:   # wide: past the column limit
        columns.update({f"extra{k}": pa.array([0] * n, pa.int8()) for k in range(1001)})
    buffer = _io.BytesIO()
    pq.write_table(pa.table(columns), buffer, row_group_size=draw(st.sampled_from([1, 5, 1000])))
    return buffer.getvalue(), "table.parquet"


def printed(name: str) -> str:
    """A name as a reader sees it printed: compatibility forms as their plain letters (NFKC: a no-break or
    ideographic space is a space, "ﬁ" is "fi"), every run of whitespace one space (as HTML and markdown print it),
    trimmed; case kept. Two names with the same printed form cannot be told apart on a page."""
    import unicodedata

    return " ".join(unicodedata.normalize("NFKC", name).split())


def check_names_printable(outcome: Audit | DataValidationError) -> None:
    """An accepted audit holds no hidden character and no two groups that print the same."""
    from fairness_core.common.text import hidden_characters

    if isinstance(outcome, Audit):
        assert all(hidden_characters(g) is None for g in outcome.groups), outcome.groups
        shown = [printed(g) for g in outcome.groups]
        assert len(set(shown)) == len(shown), [g for g, p in zip(outcome.groups, shown) if shown.count(p) > 1]


# --- a review's classes: text that expands (shared-string bombs, Parquet of repeated or wide values), wide
# workbooks, damaged zips. Read under lowered limits, so that refusals happen at fuzzing sizes; an accepted file
# must hold no more text than the limit says. ---

#: The limits these classes are read under (bytes of text).
FUZZ_TEXT_LIMIT = 4 * 2**20
_NS = '<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ' \
      'xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'


@st.composite
def shared_string_bomb_files(draw: Any) -> tuple[bytes, str]:
    """Workbooks whose cells name a few long shared strings many times, the index written in the ways a reader
    accepts (t='s', t = "s", a prefix, spaces around it, a formula before it), sometimes past the text limit."""
    from workbooks import workbook

    lengths = draw(st.lists(st.integers(0, 60_000), min_size=1, max_size=4))
    strings = [("x" * n if k % 2 else "é" * (n // 2)) for k, n in enumerate(lengths)]
    spellings = ['<c t="s"><v>{i}</v></c>', "<c t='s'><v>{i}</v></c>", '<c t = "s"><v> {i} </v></c>',
                 '<x:c t="s"><x:v>{i}</x:v></x:c>', '<c t="s"><f>A1</f><v>{i}</v></c>', '<c\nt="s"><v>{i}</v></c>',
                 '<c t="s"><v>{bad}</v></c>']
    rows = draw(st.integers(1, 3_000))
    spelling = draw(st.sampled_from(spellings))
    per_row = "".join(spelling.format(i=draw(st.integers(0, len(strings) - 1)), bad=draw(st.sampled_from(
        ["", "-1", str(len(strings)), "99999999999999999999", "1.0", "&#48;"]))) for _ in range(2)) + "<c><v>1</v></c>"
    body = (_NS + '<sheetData><row><c t="inlineStr"><is><t>g</t></is></c><c t="inlineStr"><is><t>h</t></is></c>'
            '<c t="inlineStr"><is><t>y</t></is></c></row>' + f"<row>{per_row}</row>" * rows + "</sheetData></worksheet>")
    sst = ('<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
           + "".join(f"<si><t>{s}</t></si>" for s in strings) + "</sst>")
    return workbook({"Sheet1": body.encode()}, shared_strings=sst.encode()), "bomb.xlsx"


@st.composite
def wide_workbook_files(draw: Any) -> tuple[bytes, str]:
    """Workbooks of many columns (up to past the column limit), their size declared, falsely declared or not."""
    from workbooks import sheet_xml, table_workbook, workbook

    columns = draw(st.sampled_from([5, 200, 999, 1000, 1001, 1500]))
    rows = draw(st.integers(1, 6))
    header = [f"c{k}" for k in range(columns)]
    body = [[draw(st.integers(0, 9)) if k else f"g{r}" for k in range(columns)] for r in range(rows)]
    declared = draw(st.sampled_from(["truly", "not", "falsely"]))
    if declared == "falsely":   # a sheet that says it is two cells wide
        return workbook({"Sheet1": sheet_xml([header, *body], "A1:B2", draw(st.booleans()))}), "wide.xlsx"
    return table_workbook(header, body, dimension=declared == "truly", refs=draw(st.booleans())), "wide.xlsx"


@st.composite
def damaged_zip_files(draw: Any) -> tuple[bytes, str]:
    """A valid workbook with one member damaged inside a zip that still opens: bytes of its compressed data
    overwritten, its data cut short, its size or checksum in the directory wrong, the member missing, or the
    archive cut off."""
    import struct
    import zipfile
    import io as _io

    data, _ = draw(workbook_files())
    book = bytearray(data)
    infos = zipfile.ZipFile(_io.BytesIO(data)).infolist()
    info = draw(st.sampled_from(infos))
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    how = draw(st.sampled_from(["flip", "zero", "size", "crc", "name", "cut"]))
    if how in ("flip", "zero") and info.compress_size:
        at = start + draw(st.integers(0, info.compress_size - 1))
        n = draw(st.integers(1, 64))
        book[at: at + n] = bytes((b ^ 0x5A) if how == "flip" else 0 for b in book[at: at + n])
    elif how in ("size", "crc", "name"):
        entry = book.find(info.filename.encode(), book.find(b"PK\x01\x02")) - 46
        if how == "size":
            struct.pack_into("<I", book, entry + 24, max(0, info.file_size + draw(st.sampled_from([-100, -1, 1, 10**6]))))
        elif how == "crc":
            struct.pack_into("<I", book, entry + 16, info.CRC ^ 0xFFFF)
        else:
            book[entry + 46: entry + 46 + len(info.filename)] = b"x" * len(info.filename)
    else:
        book = book[: draw(st.integers(0, len(book) - 1))]
    return bytes(book), "damaged.xlsx"


@st.composite
def expanding_parquet_files(draw: Any) -> tuple[bytes, str]:
    """Parquet files small on disk that decode to much text: one long value repeated (dictionary-encoded or
    plain and compressed), or many narrow small-integer columns."""
    import io as _io

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = draw(st.integers(1, 20_000))
    kind = draw(st.sampled_from(["dictionary", "plain", "wide"]))
    if kind == "wide":
        columns = draw(st.sampled_from([10, 300, 1000, 1001]))
        rows = min(rows, 3_000)
        zeros = pa.array(np.zeros(rows, dtype=np.int8))
        table = pa.table({**{"group": pa.array(["a", "b"] * (rows // 2) + ["a"] * (rows % 2))},
                          **{f"c{k}": zeros for k in range(columns - 1)}})
    else:
        width = draw(st.integers(1, 20_000))
        values = pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, dtype=np.int32)), pa.array(["v" * width]))
        table = pa.table({"group": values if kind == "dictionary" else values.cast(pa.string()),
                          "label": pa.array(np.arange(rows) % 2), "prediction": pa.array(np.arange(rows) // 2 % 2)})
    buffer = _io.BytesIO()
    pq.write_table(table, buffer, compression="zstd", use_dictionary=kind != "plain",
                   row_group_size=draw(st.sampled_from([rows, 1_000, 50_000])))
    data = bytearray(buffer.getvalue())
    if draw(st.integers(0, 3)) == 0:   # damaged: bytes of a page header or of its data overwritten
        at = draw(st.integers(4, max(4, len(data) - 9)))
        data[at: at + draw(st.integers(1, 16))] = bytes(draw(st.lists(st.integers(0, 255), min_size=16,
                                                                       max_size=16)))[: len(data[at: at + 16])]
    return bytes(data), "expands.parquet"


def parse_under_limits(data: bytes, name: str) -> Any:
    """:func:`read_table` with the text limits lowered to :data:`FUZZ_TEXT_LIMIT`: a DataFrame (an accepted file,
    which must hold no more text than that) or a checked DataValidationError. Anything else propagates."""
    from fairness_core.io import parquet, workbook

    saved = workbook.MAX_XLSX_TEXT_BYTES, parquet.MAX_EXPANDED_BYTES
    workbook.MAX_XLSX_TEXT_BYTES = parquet.MAX_EXPANDED_BYTES = FUZZ_TEXT_LIMIT
    try:
        df = read_table(data, name)
    except DataValidationError as exc:
        check_problems(exc)
        return exc
    finally:
        workbook.MAX_XLSX_TEXT_BYTES, parquet.MAX_EXPANDED_BYTES = saved
    text = sum(int(df.iloc[:, k].dropna().astype(str).str.len().sum()) for k in range(df.shape[1]))
    assert text <= FUZZ_TEXT_LIMIT, f"{name} accepted with {text:,} characters of text"
    return df
