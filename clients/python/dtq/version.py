"""The library's version, and the name it gives the server (GET /api/v1/workers)."""

__version__ = "0.1.0"
LIBRARY = "dtq-python/" + __version__
