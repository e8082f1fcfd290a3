from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest


def make_client(db: Path, **config: Any) -> Any:
    from fastapi.testclient import TestClient

    from jurybench.service._app import ServiceConfig, create_app

    return TestClient(create_app(ServiceConfig(db=db, **config)), raise_server_exceptions=False)


@pytest.fixture
def client(db_path: Path) -> Iterator[Any]:
    with make_client(db_path, sql_timeout_s=2.0, sql_max_rows=50) as c:
        yield c


def wait_for(
    client: Any,
    job_id: str,
    states: tuple[str, ...] = ("finished", "finished_with_errors", "failed", "cancelled"),
    timeout: float = 30,
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job: dict[str, Any] = client.get(f"/v1/jobs/{job_id}").json()
        if job["status"] in states:
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} still {job['status']} after {timeout}s")


ITEMS = [{"item_id": f"i{k}", "response": f"Story {k}", "prompt": f"p{k % 3}", "model": f"m{k % 3}"} for k in range(9)]
Json = Callable[..., Any]
