"""The HTTP service (``jurybench serve``): the library's jobs, imports, calibration, statistics
and read-only SQL over HTTP, on one store the server owns while it runs.

Internal: the names below are this stage's interface to the other stages (the order in
docs/architecture.md), not a public API; see "What is public" there."""

from jurybench.service._access import HostCheck, check_token, listening_hosts
from jurybench.service._app import ServiceConfig, create_app
from jurybench.service._store import Store

__all__ = ["HostCheck", "ServiceConfig", "Store", "check_token", "create_app", "listening_hosts"]
