"""Audits of data bigger than memory, or than one machine: :mod:`fairness_core.io.warehouse`, where this
module now lives, importable here as before (``from fairness_core.warehouse import aggregate``)."""

from __future__ import annotations

from .io.warehouse import FORMATS, aggregate, is_glob, open_files

__all__ = ["FORMATS", "aggregate", "is_glob", "open_files"]
