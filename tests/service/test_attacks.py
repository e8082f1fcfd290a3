"""The attacker's probes of issue 27, rerun against a real `jurybench serve` process on
loopback: SQL that writes through json_execute_serialized_sql, a cookie from another local
port cancelling a job, a foreign Host header (DNS rebinding), a one-character token, and a
credential hidden in a juror string. Each failed on dd34f82."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jurybench.testing.stub import free_port
from tests.service.conftest import ITEMS
from tests.service.test_serve import _get, _start, _stop, _wait_up

TOKEN = "attack-test-token-0123456789"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int, Path]]:
    db = tmp_path_factory.mktemp("attack") / "a.duckdb"
    port = free_port()
    process = _start(["--db", str(db), "--port", str(port)], {"JURYBENCH_TOKEN": TOKEN})
    url = f"http://127.0.0.1:{port}"
    try:  # the server is stopped whatever happens, set-up failures included
        _wait_up(url, process)
        status, _ = _get(f"{url}/v1/items", TOKEN, {"items": ITEMS})
        assert status in (200, 201)
        yield url, port, db
    finally:
        _stop(process)


def _raw(port: int, method: str, path: str, headers: dict[str, str], body: str = "") -> tuple[int, str]:
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        con.request(method, path, body=body.encode() or None, headers=headers)
        answer = con.getresponse()
        return answer.status, answer.read().decode()
    finally:
        con.close()


def _count(url: str) -> Any:
    return _get(f"{url}/v1/sql", TOKEN, {"query": "SELECT count(*), min(response) FROM items"})[1]["rows"][0]


@pytest.mark.parametrize(
    "inner",
    [
        "WITH u AS (UPDATE items SET response = ''x'' RETURNING 1) SELECT count(*) FROM u",
        "WITH d AS (DELETE FROM items WHERE item_id < ''i5'' RETURNING 1) SELECT count(*) FROM d",
    ],
)
def test_sql_wrapped_in_json_execute_serialized_sql_cannot_write(server: tuple[str, int, Path], inner: str) -> None:
    url, _, _ = server
    before = _count(url)
    query = f"SELECT * FROM json_execute_serialized_sql(json_serialize_sql('{inner}'))"
    status, body = _get(f"{url}/v1/sql", TOKEN, {"query": query})
    assert status == 400 and "json_execute_serialized_sql" in body["error"], body
    for probe in (
        "SELECT path FROM duckdb_databases()",
        "SELECT current_setting('memory_limit')",
        "SELECT * FROM query('SELECT 1')",
    ):
        assert _get(f"{url}/v1/sql", TOKEN, {"query": probe})[0] == 400, probe
    assert _count(url) == before


def test_the_viewer_cookie_cannot_change_state(server: tuple[str, int, Path]) -> None:
    url, port, _ = server
    status, _ = _get(
        f"{url}/v1/jobs",
        TOKEN,
        {"rubric": "story-quality", "item_ids": ["i0"], "jury": {"jurors": ["fake/slow,latency_ms=2000"]}},
    )
    assert status in (200, 202)
    job = _get(f"{url}/v1/jobs", TOKEN)[1][0]["job_id"]
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    con.request(
        "POST",
        "/login",
        body=f"token={TOKEN}&next=/".encode(),
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    answer = con.getresponse()
    cookie = answer.getheader("set-cookie") or ""
    answer.read()
    con.close()
    assert "Max-Age=" in cookie and "HttpOnly" in cookie and TOKEN not in cookie
    session = cookie.split(";", 1)[0]
    # What a form on another loopback port sends: the cookie (same site), not the token.
    status, text = _raw(port, "POST", f"/v1/jobs/{job}/cancel", {"cookie": session, "host": f"127.0.0.1:{port}"})
    assert status == 401, text
    assert _get(f"{url}/v1/jobs/{job}", TOKEN)[1]["status"] != "cancelled"
    status, _ = _raw(port, "GET", "/", {"cookie": session, "host": f"127.0.0.1:{port}"})
    assert status == 200  # the cookie still opens the read-only pages
    assert _get(f"{url}/v1/jobs/{job}/cancel", TOKEN, {})[0] in (200, 409)  # the token may cancel (or it ended)


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "127.0.0.1.nip.io", ""])
def test_a_foreign_host_header_is_refused(server: tuple[str, int, Path], host: str) -> None:
    _, port, _ = server
    status, _ = _raw(port, "GET", "/v1/health", {"host": host})
    assert status == 421
    assert _raw(port, "GET", "/v1/health", {"host": f"localhost:{port}"})[0] == 200


def test_a_short_token_is_refused_at_start(tmp_path: Path) -> None:
    process = _start(["--db", str(tmp_path / "x.duckdb"), "--port", str(free_port())], {"JURYBENCH_TOKEN": "x"})
    _, err = process.communicate(timeout=120)
    assert process.returncode == 2 and "at least 16 are needed" in err and err.count("\n") == 1


def test_a_credential_after_a_space_is_never_served(server: tuple[str, int, Path]) -> None:
    url, _, _ = server
    key = "sk-attackspacekey98765"
    status, _ = _get(
        f"{url}/v1/jobs",
        TOKEN,
        {"rubric": "story-quality", "item_ids": ["i1"], "jury": {"jurors": [f"fake/a,api_key ={key}"]}},
    )
    assert status in (200, 202)
    served = json.dumps(_get(f"{url}/v1/jobs", TOKEN)[1])
    served += json.dumps(_get(f"{url}/v1/sql", TOKEN, {"query": "SELECT request FROM jobs"})[1])
    assert key not in served and "_calibration_dir" not in served


def test_session_cookies_expire() -> None:
    from jurybench.service._viewer import SESSION_TTL_S, session_of, session_valid

    value = session_of(TOKEN, issued=1_000_000)
    assert session_valid(TOKEN, value, now=1_000_000 + 60)
    assert not session_valid(TOKEN, value, now=1_000_000 + SESSION_TTL_S + 1)
    assert not session_valid("another-token-0123456789", value, now=1_000_000 + 60)
    assert not session_valid(TOKEN, "garbage", now=0)
