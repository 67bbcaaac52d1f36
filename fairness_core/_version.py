"""The library's version, in a module of its own: the modules that stamp it on what they build (the report,
the store) import it from here, not from the package ``__init__`` that imports them."""

__version__ = "0.1.0"
