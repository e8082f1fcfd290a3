"""Trust at the service's edges: bearer tokens compared whole, user SQL that cannot write
(decided from DuckDB's parse, before anything runs), and queries held to time, memory and
answer-size limits while the server stays up."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jurybench.service._store import Store
from jurybench.testing.stub import free_port
from tests.service.conftest import ITEMS, make_client
from tests.service.test_serve import _get, _start, _stop, _wait_up


@pytest.mark.parametrize(
    "header",
    [
        "Bearer s3c",
        "Bearer s3cret-token-0123456X",
        "Bearer ",
        "Bearer",
        "bearer  s3cret-token-0123456",
        "Basic s3cret-token-0123456",
        "s3cret-token-0123456",
        "Bearer S3CRET",
    ],
)
def test_only_the_whole_token_opens_the_api(db_path: Path, header: str) -> None:
    with make_client(db_path, token="s3cret-token-0123456") as c:
        assert c.get("/v1/items", headers={"Authorization": header}).status_code == 401
        assert c.get("/v1/items", headers={"Authorization": "Bearer s3cret-token-0123456"}).status_code == 200
        assert c.get("/v1/items", headers={"Authorization": "bearer s3cret-token-0123456"}).status_code == 200


WRITES = [
    "WITH d AS (DELETE FROM items RETURNING *) SELECT * FROM d",
    "WITH d AS (UPDATE items SET response = 'x' RETURNING *) SELECT count(*) FROM d",
    "WITH d AS (INSERT INTO items (item_id, response) VALUES ('z', 'z') RETURNING *) SELECT * FROM d",
    "SELECT * FROM items WHERE item_id IN (WITH d AS (DELETE FROM items RETURNING item_id) SELECT item_id FROM d)",
    "SELECT * FROM (SELECT 1) t, (WITH d AS (DELETE FROM items RETURNING 1) SELECT * FROM d) u",
    "EXPLAIN ANALYZE WITH d AS (DELETE FROM items RETURNING *) SELECT * FROM d",
    "SELECT * FROM query('DELETE FROM items')",
    "SELECT * FROM duckdb_databases()",
    "SELECT * FROM pragma_database_list",
    "SELECT current_setting('temp_directory')",
]


@contextlib.contextmanager
def _spied(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every statement any request runs on a reading cursor."""
    ran: list[str] = []
    original = Store.reading

    @contextlib.contextmanager
    def reading(self: Store) -> Iterator[Any]:
        with original(self) as cur:

            class Spy:
                def __getattr__(self, name: str) -> Any:
                    return getattr(cur, name)

                def execute(self, sql: str, *args: Any) -> Any:
                    ran.append(sql)
                    return cur.execute(sql, *args)

            yield Spy()

    monkeypatch.setattr(Store, "reading", reading)
    yield ran


@pytest.mark.parametrize("query", WRITES)
def test_writes_hidden_in_a_select_are_refused_before_they_run(
    client: Any, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert client.post("/v1/items", json={"items": ITEMS[:3]}).status_code == 201
    with _spied(monkeypatch) as ran:
        r = client.post("/v1/sql", json={"query": query})
        assert r.status_code == 400, r.json()
        # Refused from the parse: by the read check, or by DuckDB's parser where the installed
        # version does not accept DML in a CTE at all (1.x: "A CTE needs a SELECT").
        assert any(m in r.json()["error"] for m in ("not allowed", "only a single SELECT", "A CTE needs a SELECT"))
        body = {"sql": query.replace("SELECT *", "SELECT 'g' AS grp, 'c' AS category, 1 AS correct, 0 AS invalid")}
        d = client.post("/v1/stats/disparity", json=body)
        assert d.status_code == 400, d.json()
        assert ran == []  # the write never reached a transaction, not even one rolled back
    assert client.post("/v1/sql", json={"query": "SELECT count(*) FROM items"}).json()["rows"] == [[3]]
    assert ".duckdb" not in json.dumps(r.json())  # no server path in the answer


def test_reads_still_work(client: Any) -> None:
    client.post("/v1/items", json={"items": ITEMS[:3]})
    for query in (
        "SELECT count(*) FROM items",
        "WITH c AS (SELECT item_id FROM items) SELECT count(*) FROM c",
        "SELECT count(*) FROM items UNION ALL SELECT 1",
        "FROM items SELECT count(*)",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT max(n) FROM r",
    ):
        r = client.post("/v1/sql", json={"query": query})
        assert r.status_code == 200, (query, r.json())
    assert client.post("/v1/sql", json={"query": "EXPLAIN SELECT 1"}).status_code == 200


def test_the_reading_transaction_is_rolled_back(db_path: Path) -> None:
    # The second net under the parse check: a reading cursor cannot write, and nothing persists.
    import duckdb

    store = Store(db_path)
    try:
        with store.reading() as cur, pytest.raises(duckdb.TransactionException, match="read-only"):
            cur.execute("CREATE TABLE scratch (x INTEGER)")
        with store.cursor() as cur:
            tables = {r[0] for r in cur.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        assert "scratch" not in tables
    finally:
        store.close()


def _rss_peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


HEAVY = "SELECT length(string_agg(repeat('x', 1000000), ',')) FROM range(5000)"
SLOW = "SELECT count(*) FROM range(1000000000000) a"


def test_heavy_queries_are_bounded_and_the_server_keeps_serving(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = _start(
        ["--db", str(tmp_path / "s.duckdb"), "--port", str(port), "--sql-memory-mb", "256", "--sql-timeout", "2"],
        {"JURYBENCH_TOKEN": ""},
    )
    try:
        _wait_up(url, process)
        answers: dict[str, tuple[int, Any, float]] = {}

        def ask(name: str, query: str) -> None:
            started = time.monotonic()
            status, body = _get(f"{url}/v1/sql", body={"query": query})
            answers[name] = (status, body, time.monotonic() - started)

        threads = [threading.Thread(target=ask, args=(f"heavy{i}", HEAVY)) for i in range(3)]
        for t in threads:
            t.start()
        served = [_get(f"{url}/v1/health")[0] for _ in range(5)]  # meanwhile, others are served
        for t in threads:
            t.join(60)
        # the slow query after the heavy ones: beside them it shares their memory pool and, on a
        # loaded machine, met the memory bound (413) before its time limit (408)
        slow = threading.Thread(target=ask, args=("slow", SLOW))
        slow.start()
        served += [_get(f"{url}/v1/health")[0] for _ in range(5)]
        slow.join(60)
        assert served == [200] * 10
        for i in range(3):
            status, body, _ = answers[f"heavy{i}"]
            assert status == 413 and "256 MB" in body["error"], body
            assert len(body["error"].splitlines()) == 1
        status, body, took = answers["slow"]
        assert status == 408 and "stopped after 2 s" in body["error"], body
        assert took < 2 + 8  # interrupted at its limit (generous slack for a loaded machine)
        assert _get(f"{url}/v1/sql", body={"query": "SELECT 42"})[1]["rows"] == [[42]]
        assert process.poll() is None
        # Three 5 GB aggregations at once, and the server stayed well under a gigabyte.
        assert _rss_peak_mb(process.pid) < 900
    finally:
        _stop(process)


def test_a_second_server_on_a_served_store_is_one_line(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    port = free_port()
    first = _start(["--db", str(db), "--port", str(port)], {"JURYBENCH_TOKEN": ""})
    try:
        _wait_up(f"http://127.0.0.1:{port}", first)
        second = _start(["--db", str(db), "--port", str(free_port())], {"JURYBENCH_TOKEN": ""})
        _, err = second.communicate(timeout=60)
        assert second.returncode == 2, err
        assert err.strip().count("\n") == 0 and "Traceback" not in err
        assert f"held by a jurybench server (pid {first.pid}" in err
    finally:
        _stop(first)
