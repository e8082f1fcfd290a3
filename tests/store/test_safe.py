"""The read-only SQL checker's parses: one scratch database a process, never closed by a thread's end."""

from __future__ import annotations

import threading

import duckdb
import pytest

from jurybench.store import _safe


def test_parses_from_threads_that_end_share_one_connection_that_outlives_them(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each service query runs on a thread of its own. A connection per thread was closed inside
    # CPython's teardown of the thread when it ended, where DuckDB once aborted the whole process.
    monkeypatch.setattr(_safe._Scratch, "con", None)
    opened: list[object] = []
    real_connect = duckdb.connect

    def counting_connect(*args: object, **kwargs: object) -> duckdb.DuckDBPyConnection:
        con = real_connect(*args, **kwargs)  # type: ignore[arg-type]
        opened.append(con)
        return con

    monkeypatch.setattr(duckdb, "connect", counting_connect)
    trees: list[dict[str, object]] = []

    def parse(n: int) -> None:
        trees.append(_safe.parse_tree(f"SELECT {n} AS x"))

    for batch in range(3):  # threads that start, parse and end; then several at once
        threads = [threading.Thread(target=parse, args=(batch * 10 + i,)) for i in range(1 if batch < 2 else 8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(trees) == 10
    assert all(not tree.get("error") and len(tree["statements"]) == 1 for tree in trees)  # type: ignore[arg-type]
    assert len(opened) == 1 and _safe._Scratch.con is opened[0]
    assert _safe._Scratch.con.execute("SELECT 1").fetchall() == [(1,)]  # still open after its users ended
