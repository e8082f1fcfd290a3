"""The HTTP service (``jurybench serve``): the library's jobs, imports, calibration, statistics
and read-only SQL over HTTP, on one store the server owns while it runs.

Internal: this stage's interface to the others, not a public API (docs/architecture.md, "What is public")."""

from jurybench.service._access import HostCheck, check_token, listening_hosts
from jurybench.service._app import ServiceConfig, create_app
from jurybench.service._store import Store

__all__ = ["HostCheck", "ServiceConfig", "Store", "check_token", "create_app", "listening_hosts"]
