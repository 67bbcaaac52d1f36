"""Parquet uploads: sizes from the footer before any data page is read, then only the columns chosen,
as a frame of text like every other reader's."""

from __future__ import annotations

from typing import Any, Sequence

import pandas as pd

from ..row_counts import TEXT
from ..validation import DataValidationError, Problem, operator_limit
from .limits import check_cells, check_columns

#: Largest size a compressed upload (Parquet) may expand to once decoded (FAIRNESS_MAX_EXPANDED_MB).
MAX_EXPANDED_BYTES = operator_limit("FAIRNESS_MAX_EXPANDED_MB", 1024 * 2**20, 2**20)


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
    the decoded size of the columns to read — so a file of a few MB that would expand to gigabytes is refused
    before any data is read; then each column is cast to text by Arrow (ints "7", floats "0.5", booleans
    "true"; nulls stay missing) and kept in Arrow's buffers. Larger logs go through :func:`aggregate`."""
    import pyarrow as pa

    file = parquet_file(data, filename)
    meta, schema = file.metadata, file.schema_arrow
    names = list(schema.names) if columns is None else list(columns)
    unknown = [c for c in names if c not in schema.names]
    if unknown:
        raise DataValidationError(Problem(f"no such column; columns are {', '.join(map(repr, schema.names[:50]))}",
                                          column=unknown[0]))
    check_columns(len(names), filename)
    if meta.num_rows > max_rows:
        raise DataValidationError(f"{filename} has {meta.num_rows:,} data rows; the limit is {max_rows:,} "
                                  "(fairness_core.io.aggregate or the command line count any size in place)")
    check_cells(meta.num_rows, len(names), filename)
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
    return text_frame(pa.table([c.cast(pa.large_string()) for c in table.columns], names=table.column_names))


def text_frame(table: Any) -> pd.DataFrame:
    """An Arrow table of strings as a DataFrame of :data:`TEXT` columns. Readers produce ``large_string``
    columns, the layout pandas keeps, so that the conversion shares Arrow's buffers instead of copying them."""
    import pyarrow as pa

    return table.to_pandas(types_mapper={pa.string(): TEXT, pa.large_string(): TEXT}.get)


