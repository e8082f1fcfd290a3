"""The HTTP service (``jurybench serve``): the library's jobs, imports, calibration, statistics
and read-only SQL over HTTP, on one store the server owns while it runs."""

from jurybench.service._store import holder_of, server_file

__all__ = ["holder_of", "server_file"]
