"""Reading uploads into an :class:`~fairness_core.audit.Audit`, and writing safe CSV.

Every path validates before anything is used. Problems raise :class:`DataValidationError`, whose
message names the row and the column. Rows are counted from 1 at the first data row below the header
("row 1 (file line 2)"). Nothing is unpickled or evaluated: CSV is parsed as text and Excel with
calamine, after a bounded pass over the workbook's XML.

One module per job; every name is importable from here, as it always was:

- :mod:`.read` files to frames of text (CSV/TSV/TXT; :mod:`.workbook` XLSX, :mod:`.parquet` Parquet;
  :mod:`.upload_limits` their sizes), a sample of a large upload, and counting one in place;
- :mod:`.cm_table` tables of per-group confusion matrices;
- :mod:`.rows` row-level predictions (one row per individual) and candidate models;
- :mod:`.arrays` a notebook's arrays;
- :mod:`.warehouse` data counted where they live (DuckDB, Ibis); :mod:`.amounts` amount audits the same way;
- :mod:`.export` safe CSV.

:class:`Problem`, :class:`DataValidationError`, the row, group and name limits and the name checks are
:mod:`fairness_core.validation`'s, and the counting of rows :mod:`fairness_core.statistics.row_counts`': the audit
module uses both, and this package builds Audits, so it sits above the audit module and they below it.
"""

from __future__ import annotations

from ...common.validation import (INTERSECTION_SEP, MAX_COUNT, MAX_GROUPS, MAX_NAME_LENGTH, MAX_ROWS, DataValidationError,
                                  Problem, clean_name, direction, group_values, hidden_name_problem, intersection_names,
                                  row_notes)
from ...statistics.row_counts import TEXT
from . import amounts, arrays, cm_table, export, parquet, read, rows, upload_limits, warehouse, workbook
from .amounts import aggregate, aggregate_amounts   # aggregate: the binary one, or amounts with continuous=True
from .arrays import audit_from_predictions
from .cm_table import cms_from_table, cms_to_table, find_count_columns
from .export import neutralize_cell, to_safe_csv
from .upload_limits import MAX_CELLS, MAX_COLUMNS
from .parquet import MAX_EXPANDED_BYTES, parquet_shape
from .read import LARGE_UPLOAD_BYTES, SAMPLE_ROWS, aggregate_upload, read_sample, read_table, to_numbers
from .rows import (ColumnGuess, audit_from_decisions, candidates_from_predictions, cms_from_predictions,
                   distinct_values, guess_columns)
from .workbook import EXCEL_MAX_ROWS, MAX_XLSX_CELLS, MAX_XLSX_XML_BYTES, sheet_names

__all__ = [
    "EXCEL_MAX_ROWS", "INTERSECTION_SEP", "LARGE_UPLOAD_BYTES", "MAX_CELLS", "MAX_COLUMNS", "MAX_COUNT",
    "MAX_EXPANDED_BYTES", "MAX_GROUPS", "MAX_NAME_LENGTH", "MAX_ROWS", "MAX_XLSX_CELLS", "MAX_XLSX_XML_BYTES",
    "SAMPLE_ROWS", "TEXT", "ColumnGuess", "DataValidationError", "Problem", "aggregate", "aggregate_amounts", "aggregate_upload",
    "audit_from_decisions", "audit_from_predictions", "candidates_from_predictions", "clean_name", "cms_from_predictions", "cms_from_table",
    "cms_to_table", "direction", "distinct_values", "find_count_columns", "group_values", "guess_columns",
    "hidden_name_problem", "intersection_names", "neutralize_cell", "parquet_shape", "read_sample", "read_table",
    "row_notes", "sheet_names", "to_numbers", "to_safe_csv",
    "amounts", "arrays", "cm_table", "export", "parquet", "read", "rows", "upload_limits", "warehouse", "workbook",
]
