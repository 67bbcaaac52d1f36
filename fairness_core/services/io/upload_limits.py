"""How much an uploaded file may hold before anything is built from it: columns and cells (a Parquet
file's expansion is :data:`.parquet.MAX_EXPANDED_BYTES`, a workbook's :mod:`.workbook`'s). The operator
may set each limit in the environment, read at import (docs/server.md)."""

from __future__ import annotations

from ...common.validation import DataValidationError, operator_limit

#: Most columns in an uploaded table.
MAX_COLUMNS = 1000
#: Most cells (rows × columns) in an uploaded table: what is read is kept as text in memory
#: (FAIRNESS_MAX_UPLOAD_CELLS).
MAX_CELLS = operator_limit("FAIRNESS_MAX_UPLOAD_CELLS", 30_000_000)


def check_columns(count: int, filename: str) -> None:
    if count > MAX_COLUMNS:
        raise DataValidationError(f"{filename} has {count:,} columns; the limit is {MAX_COLUMNS:,}")


def check_cells(rows: int, columns: int, filename: str) -> None:
    if rows * columns > MAX_CELLS:
        raise DataValidationError(f"{filename} has {rows:,} rows × {columns:,} columns = {rows * columns:,} cells; "
                                  f"the limit is {MAX_CELLS:,} cells. Keep only the columns the audit needs, or "
                                  "count in place with fairness_core.io.aggregate or the command line")
