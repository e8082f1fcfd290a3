"""The SQL endpoint cannot change or escape the store: each attempt is a 4xx with a clear message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.service.conftest import ITEMS

ESCAPES = [
    ("DELETE FROM items", "only a single SELECT"),
    ("DROP TABLE items", "only a single SELECT"),
    ("UPDATE items SET response = 'x'", "only a single SELECT"),
    ("INSERT INTO items (item_id, response) VALUES ('z', 'z')", "only a single SELECT"),
    ("CREATE TABLE t AS SELECT 1", "only a single SELECT"),
    ("SELECT 1; DELETE FROM items", "give one statement"),
    ("ATTACH '/tmp/other.duckdb' AS o", "only a single SELECT"),
    ("COPY items TO '/tmp/leak.csv'", "only a single SELECT"),
    ("EXPORT DATABASE '/tmp/leak'", "only a single SELECT"),
    ("INSTALL httpfs", "only a single SELECT"),
    ("LOAD httpfs", "only a single SELECT"),
    ("SET enable_external_access = true", "only a single SELECT"),
    ("PRAGMA enable_profiling", "only a single SELECT"),
    ("CALL checkpoint()", "only a single SELECT"),
    ("SELECT * FROM read_csv('/etc/passwd')", "Permission Error"),
    ("SELECT * FROM read_text('/etc/hostname')", "Permission Error"),
    ("SELECT * FROM glob('/*')", "Permission Error"),
    ("SELECT * FROM read_parquet('https://example.com/x.parquet')", "Permission Error"),
    ("SELECT * FROM query('DELETE FROM items')", "contains query(), which is not allowed"),
    ("SELECT * FROM query('ATTACH ''/tmp/o.duckdb'' AS o')", "contains query(), which is not allowed"),
    ("SELECT current_setting('enable_external_access') AS v FROM (SELECT set_config('x', 1))", "query:"),
]


@pytest.mark.parametrize(("query", "message"), ESCAPES)
def test_escape_attempts_are_refused_and_change_nothing(client: Any, query: str, message: str) -> None:
    client.post("/v1/items", json={"items": ITEMS[:3]})
    r = client.post("/v1/sql", json={"query": query})
    assert 400 <= r.status_code < 500 and message in r.json()["error"], r.json()
    after = client.post("/v1/sql", json={"query": "SELECT count(*) FROM items"}).json()
    assert after["rows"] == [[3]]
    assert not Path("/tmp/leak.csv").exists()


def test_rows_are_limited_and_truncation_is_said(client: Any) -> None:
    r = client.post("/v1/sql", json={"query": "SELECT range AS n FROM range(500)"}).json()
    assert len(r["rows"]) == 50 and r["truncated"] is True  # the server's limit (50 in these tests)
    small = client.post("/v1/sql", json={"query": "SELECT range AS n FROM range(500)", "limit": 5}).json()
    assert small["rows"] == [[0], [1], [2], [3], [4]] and small["truncated"] is True
    whole = client.post("/v1/sql", json={"query": "SELECT 1 AS one, NULL AS nothing, now() IS NOT NULL AS t"}).json()
    assert whole == {"columns": ["one", "nothing", "t"], "rows": [[1, None, True]], "truncated": False}


def test_a_slow_query_is_stopped_at_the_time_limit(client: Any) -> None:
    r = client.post("/v1/sql", json={"query": "SELECT count(*) FROM range(10000000000) a WHERE a.range % 7 = 3"})
    assert r.status_code == 408 and "stopped after 2 s" in r.json()["error"]
    assert client.post("/v1/sql", json={"query": "SELECT 42"}).json()["rows"] == [[42]]  # still serving


def test_bad_sql_is_a_400_with_the_engines_first_line(client: Any) -> None:
    r = client.post("/v1/sql", json={"query": "SELECT nope FROM items"})
    assert r.status_code == 400 and r.json()["error"].startswith("query: Binder Error")
    assert client.post("/v1/sql", json={"query": ""}).status_code == 422
