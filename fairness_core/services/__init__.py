"""The services floor: the library's contact with the world outside a computation.

``io`` (files, tables, warehouses: read, validate, count), ``store`` and ``store_schema`` (saved audits in
SQLite or PostgreSQL, with owners and shares), ``jobs`` (the one runner of long work, in threads, with
progress, cancel and memory budgets) and ``datasets`` (the demo audits). It stands on the audit objects;
only the presentation floor and the command line stand above it.
"""
