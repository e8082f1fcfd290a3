"""The HTTP service (``jurybench serve``): the library's jobs, imports, calibration, statistics
and read-only SQL over HTTP, on one store the server owns while it runs."""

from jurybench.service._store import Store, holder_of, server_file

__all__ = ["Store", "holder_of", "server_file"]
