"""Parquet uploads: sizes from the footer before any data page is read, then only the columns chosen,
as a frame of text like every other reader's."""

from __future__ import annotations

from typing import Any, Sequence

import pandas as pd

from ...statistics.row_counts import TEXT
from ...common.validation import DataValidationError, Problem, operator_limit
from .upload_limits import check_cells, check_columns

#: Most text a Parquet file's chosen columns may decode to (values and 8-byte offsets; FAIRNESS_MAX_EXPANDED_MB).
#: 640 MB keeps a whole read under 1 GiB resident with the server's own ~0.2 GB (docs/benchmarks.md, uploads).
MAX_EXPANDED_BYTES = operator_limit("FAIRNESS_MAX_EXPANDED_MB", 640 * 2**20, 2**20)


def parquet_file(data: bytes, filename: str):  # type: ignore[no-untyped-def]
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(pa.BufferReader(data))
    except Exception as exc:  # noqa: BLE001 - any reader failure is an unreadable file
        raise DataValidationError(f"{filename} is not a readable Parquet file: {str(exc).splitlines()[0]}") from None


def parquet_shape(data: bytes, filename: str = "the file") -> tuple[int, list[str]]:
    """Rows and column names of a Parquet file, from its footer alone (nothing else is read)."""
    file = parquet_file(data, filename)
    return file.metadata.num_rows, list(file.schema_arrow.names)


def read_parquet(data: bytes, filename: str, max_rows: int, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A Parquet file as text, like every other upload. Its footer is checked first — rows, columns, cells and
    the size of the columns to read as stored — so a file of a few MB that plainly expands to gigabytes is
    refused before any data is read; then the chosen columns are read in small batches, each cast to text by
    Arrow (ints "7", floats "0.5", booleans "true"; nulls stay missing), and the text they decode to is counted
    before it is built: text stored once in a dictionary and named by every row (which the footer counts once)
    is refused part-way, at the limit, with only the batches read so far in memory. Larger logs go through
    :func:`aggregate`."""
    file = parquet_file(data, filename)
    meta = file.metadata
    names = _columns(file, columns)
    check_columns(len(names), filename)
    if meta.num_rows > max_rows:
        raise DataValidationError(f"{filename} has {meta.num_rows:,} data rows; the limit is {max_rows:,} "
                                  "(fairness_core.io.aggregate or the command line count any size in place)")
    check_cells(meta.num_rows, len(names), filename)
    return text_frame(read_text(data, filename, names, meta.num_rows, file))


def read_head(data: bytes, filename: str, rows: int, file: Any) -> Any:
    """The first ``rows`` rows of every column as an Arrow table of text, bounded as :func:`read_parquet` is (for
    the sample of a large upload). ``file``: the upload as :func:`parquet_file` opened it."""
    names = _columns(file, None)
    check_columns(len(names), filename)
    return read_text(data, filename, names, min(rows, file.metadata.num_rows), file)


def _columns(file: Any, columns: Sequence[str] | None) -> list[str]:
    import pyarrow as pa

    schema = file.schema_arrow
    names = list(schema.names) if columns is None else list(columns)
    unknown = [c for c in names if c not in schema.names]
    if unknown:
        raise DataValidationError(Problem(f"no such column; columns are {', '.join(map(repr, schema.names[:50]))}",
                                          column=unknown[0]))
    for field in (schema.field(c) for c in names):
        value = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
        if pa.types.is_nested(value) or pa.types.is_binary(value) or pa.types.is_large_binary(value) \
                or pa.types.is_binary_view(value) or pa.types.is_fixed_size_binary(value):
            raise DataValidationError(Problem(f"column of type {field.type} cannot be read as text", column=field.name))
    return names


#: Bytes of stored (decompressed, still encoded) data one batch of rows may hold, and most rows in a batch.
_BATCH_BYTES = 16 * 2**20
_BATCH_ROWS = 65_536


def _refuse(filename: str, size: str, where: str = "") -> DataValidationError:
    return DataValidationError(f"{filename} expands to {size} MB once {where or 'decompressed'}; the limit is "
                               f"{MAX_EXPANDED_BYTES / 2**20:,.0f} MB (fairness_core.io.aggregate or the command "
                               "line count any size in place)")


def read_text(data: bytes, filename: str, names: list[str], rows: int, file: Any) -> Any:
    """The first ``rows`` rows of the columns ``names`` as an Arrow table of ``large_string`` columns, never
    more than :data:`MAX_EXPANDED_BYTES` of text (values and 8-byte offsets).

    Before reading: the columns' size as stored (decompressed) and their fixed-width values, from the footer.
    While reading: text columns come out of the reader as a dictionary and indices (the way most writers
    store them), so that the text a batch decodes to is counted from the value lengths before any of it is
    built; other columns are cast batch by batch and measured. Batches hold at most :data:`_BATCH_BYTES` of
    stored data (fewer rows for wide rows), so memory stays near the limit and one batch. ``file``: the upload as
    :func:`parquet_file` opened it (its footer is parsed once for the whole read).

    Floats become the shortest text that reads back as the same float64 (Arrow's cast); a float32 is widened to
    float64 first, so that its text is the value stored ("0.10000000149011612", not float32's "0.1", which would
    read back as another number)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    meta, schema = file.metadata, file.schema_arrow
    fields = [schema.field(c) for c in names]
    wanted = [schema.get_field_index(c) for c in names]
    groups, stored, widest, pages = 0, 0, 0.0, [0]
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        size = sum(max(group.column(k).total_uncompressed_size, _pages_size(data, group.column(k), filename, pages))
                   for k in wanted)
        if groups < rows:
            stored += size
            widest = max(widest, size / max(group.num_rows, 1))
        groups += group.num_rows
    fixed = sum(f.type.bit_width // 8 for f in fields if pa.types.is_primitive(f.type)
                and not pa.types.is_boolean(f.type))
    early = max(stored, rows * fixed)   # dictionary and run-length encoding hide a column's decoded width
    if early > MAX_EXPANDED_BYTES:
        raise _refuse(filename, f"{early / 2**20:,.0f}")
    text = [f.name for f in fields if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
            or pa.types.is_string_view(f.type)]
    reader = pq_file(data, text, meta)
    batch_rows = int(max(1, min(_BATCH_ROWS, _BATCH_BYTES // max(widest, 1.0))))
    out: list[list[Any]] = [[] for _ in names]
    total = done = 0
    pool = _text_pool()
    try:
        if rows and names:
            for batch in reader.iter_batches(batch_size=batch_rows, columns=names, use_threads=False):
                if done + batch.num_rows > rows:
                    batch = batch.slice(0, rows - done)
                for k, column in enumerate(batch.columns):
                    if pa.types.is_dictionary(column.type):
                        values = column.dictionary.cast(pa.large_string())
                        lengths = pc.binary_length(values).cast(pa.int64())
                        total += (pc.sum(pc.take(lengths, column.indices)).as_py() or 0) + 8 * len(column)
                        if total > MAX_EXPANDED_BYTES:
                            break
                        column = pc.take(values, column.indices, memory_pool=pool)
                    else:
                        if pa.types.is_floating(column.type) and column.type.bit_width < 64:
                            column = pc.cast(column, pa.float64())   # the float32's exact value, not its shortest text
                        column = pc.cast(column, pa.large_string(), memory_pool=pool)
                        total += column.nbytes
                    out[k].append(column)
                done += batch.num_rows
                if total > MAX_EXPANDED_BYTES:
                    del out
                    raise _refuse(filename, f"more than {MAX_EXPANDED_BYTES / 2**20:,.0f}",
                                  f"decoded (refused at row {done:,} of {rows:,})")
                if done >= rows:
                    break
    except DataValidationError:
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged page or a value Arrow cannot write as text
        raise DataValidationError(f"{filename} is not a readable Parquet file: "
                                  f"{str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}"
                                  ) from None
    arrays = []
    for k in range(len(names)):
        chunks, out[k] = out[k], []
        arrays.append(pa.chunked_array(chunks, type=pa.large_string()))   # Arrow's chunks, as a whole read's
    return pa.table(arrays, names=names)


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80 or shift > 63:
            return value, at
        shift += 7


def _skip(data: bytes, at: int, kind: int) -> int:
    """The position after one Thrift compact-protocol value of type ``kind`` at ``at``."""
    if kind in (1, 2):            # booleans in a field header carry their value
        return at
    if kind == 3:
        return at + 1
    if kind in (4, 5, 6):
        return _varint(data, at)[1]
    if kind == 7:
        return at + 8
    if kind == 8:
        size, at = _varint(data, at)
        return at + size
    if kind in (9, 10):
        head = data[at]
        at += 1
        size, element = head >> 4, head & 0x0F
        if size == 15:
            size, at = _varint(data, at)
        for _ in range(size):
            at = at + 1 if element in (1, 2) else _skip(data, at, element)
        return at
    if kind == 11:
        size, at = _varint(data, at)
        if size:
            types = data[at]
            at += 1
            for _ in range(size):
                at = _skip(data, _skip(data, at, types >> 4), types & 0x0F)
        return at
    if kind == 12:
        return _struct(data, at)[1]
    raise ValueError(f"unknown Thrift type {kind}")


def _struct(data: bytes, at: int) -> tuple[dict[int, int], int]:
    """The integer fields of the Thrift struct at ``at`` (compact protocol) and the position after it."""
    fields: dict[int, int] = {}
    field = 0
    while True:
        head = data[at]
        at += 1
        if head == 0:
            return fields, at
        kind = head & 0x0F
        if head >> 4:
            field += head >> 4
        else:
            raw, at = _varint(data, at)
            field = (raw >> 1) ^ -(raw & 1)
        if kind == 5 and field in (1, 2, 3):
            raw, at = _varint(data, at)
            fields[field] = (raw >> 1) ^ -(raw & 1)
        else:
            at = _skip(data, at, kind)


#: Largest page header read (writers keep them to a few KB: sizes, encodings, truncated statistics), and most
#: pages walked in one file (a 1 MB page each would be a terabyte).
_MAX_PAGE_HEADER = 2**20
_MAX_PAGES = 1_000_000


def _pages_size(data: bytes, column: Any, filename: str, pages: list[int]) -> int:
    """The bytes a column chunk's pages decompress to, from each page's own header (what the reader allocates,
    whatever the footer's totals say). ``pages`` counts the pages walked in the file."""
    view = memoryview(data)
    start = column.data_page_offset
    if column.has_dictionary_page and column.dictionary_page_offset and column.dictionary_page_offset < start:
        start = column.dictionary_page_offset
    end, at, total = start + column.total_compressed_size, start, 0
    try:
        while at < min(end, len(data)):
            pages[0] += 1
            if pages[0] > _MAX_PAGES:
                raise ValueError(f"more than {_MAX_PAGES:,} pages")
            header, length = _struct(view[at: at + _MAX_PAGE_HEADER], 0)
            uncompressed, compressed = header.get(2, -1), header.get(3, -1)
            if uncompressed < 0 or compressed < 0:
                raise ValueError("a page without its sizes")
            total += uncompressed
            at += length + compressed
    except IndexError:
        raise DataValidationError(f"{filename} is not a readable Parquet file: a page header is cut short or "
                                  f"longer than {_MAX_PAGE_HEADER // 2**20} MB") from None
    except (ValueError, RecursionError) as exc:
        raise DataValidationError(f"{filename} is not a readable Parquet file: {exc}") from None
    return total


def _text_pool():  # type: ignore[no-untyped-def]
    """Where the text is built: jemalloc where Arrow has it. Built a batch at a time in the default allocator
    (mimalloc), the text kept 1.8× its size resident (1.36 GB for 0.75 GB of text); in jemalloc, its size."""
    import pyarrow as pa

    try:
        return pa.jemalloc_memory_pool()
    except (NotImplementedError, pa.ArrowException):
        return pa.default_memory_pool()


def pq_file(data: bytes, dictionary: list[str], metadata: Any = None):  # type: ignore[no-untyped-def]
    """The file opened to read the columns ``dictionary`` as dictionary and indices (decoded only once counted),
    with its footer's ``metadata`` when already parsed."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    return pq.ParquetFile(pa.BufferReader(data), metadata=metadata, read_dictionary=dictionary or None)


def text_frame(table: Any) -> pd.DataFrame:
    """An Arrow table of strings as a DataFrame of :data:`TEXT` columns. Readers produce ``large_string``
    columns, the layout pandas keeps, so that the conversion shares Arrow's buffers instead of copying them."""
    import pyarrow as pa

    return table.to_pandas(types_mapper={pa.string(): TEXT, pa.large_string(): TEXT}.get)


