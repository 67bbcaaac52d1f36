"""Download buttons and table display with "undefined" for NaN."""

from __future__ import annotations

from typing import Mapping

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from fairness_core.io import to_safe_csv


def styled(df: pd.DataFrame, precision: int = 4) -> "pd.io.formats.style.Styler":
    """NaN shown as "undefined", numbers to ``precision`` places; sorting stays numeric."""
    return df.style.format(precision=precision, na_rep="undefined", thousands=",")


def csv_download(df: pd.DataFrame, file_name: str, label: str = "Download CSV", key: str | None = None,
                 index: bool = True) -> None:
    """A CSV download of ``df`` with spreadsheet-formula cells neutralized; built on click."""
    st.download_button(label, data=lambda: to_safe_csv(df, index=index), file_name=file_name,
                       mime="text/csv", key=key or f"csv-{file_name}", on_click="ignore", icon=":material/download:")


def html_download(fig: go.Figure, file_name: str, label: str = "Download figure (HTML)", key: str | None = None) -> None:
    """A self-contained interactive HTML of ``fig`` (plotly.js inlined, works offline); built on click."""
    st.download_button(label, data=lambda: fig.to_html(include_plotlyjs=True, full_html=True),
                       file_name=file_name, mime="text/html", key=key or f"html-{file_name}",
                       on_click="ignore", icon=":material/download:")


def reasons_frame(reasons: Mapping[str, Mapping[str, str]]) -> pd.DataFrame:
    """``{group: {metric: reason}}`` as a long table: group, metric, why undefined."""
    rows = [{"group": g, "metric": k, "undefined because": r} for g, rs in reasons.items() for k, r in rs.items()]
    return pd.DataFrame(rows, columns=["group", "metric", "undefined because"])


VERDICT_READINGS = ("algorithmic bias", "systemic disparity", "no bias detected")


def verdict_summary(verdicts: pd.DataFrame) -> None:
    """Three tiles: how many group pairs get each reading of OFI beside DI."""
    counts = verdicts["reading"].value_counts()
    for col, reading in zip(st.columns(len(VERDICT_READINGS)), VERDICT_READINGS):
        col.metric(reading.capitalize(), f"{counts.get(reading, 0)} of {len(verdicts)} pairs")
