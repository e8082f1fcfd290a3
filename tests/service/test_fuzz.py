"""Property-based fuzzing of every operation in the OpenAPI document (schemathesis, in process,
bounded): whatever a client sends, the service answers without a server error."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import schemathesis
from hypothesis import HealthCheck, settings

from jurybench.service._app import ServiceConfig, create_app
from jurybench.service._store import Store

_FOLDER = Path(tempfile.mkdtemp(prefix="jurybench-fuzz-"))
_STORE = Store(_FOLDER / "fuzz.duckdb")
APP = create_app(
    ServiceConfig(db=_FOLDER / "fuzz.duckdb", sql_timeout_s=1.0, sql_max_rows=100, calibration_dir=_FOLDER / "cal"),
    store=_STORE,
)
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@schema.parametrize()
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_no_server_errors(case: Any) -> None:
    response = case.call()
    assert response.status_code < 500, f"{case.method} {case.path}: {response.status_code} {response.text[:300]}"
