"""The presentation floor: figures (``plots``, Plotly) and the report (HTML, JSON, CSV tables) of an audit.

It stands above the audit objects and the services (the report's tables are exported safely by ``io``);
nothing below imports it.
"""
