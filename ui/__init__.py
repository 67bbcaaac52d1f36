"""Streamlit glue shared by the pages: session state and download widgets.

Logic lives in ``fairness_core``; this package only places things on screen.
"""
