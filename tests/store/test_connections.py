"""One process, one store file, two kinds of connection (writable, hardened read-only): DuckDB
holds one configuration per file and process, so jurybench reuses or says what to close."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from jurybench.errors import JurybenchError
from jurybench.store import connect


def test_read_only_beside_an_open_writable_connection_reuses_it(db_path: Path) -> None:
    writer = connect(db_path)
    writer.execute("INSERT INTO items (item_id, response) VALUES ('i1', 'r')")
    reader = connect(db_path, read_only=True)  # DuckDB alone: "different configuration than existing connections"
    assert reader.execute("SELECT count(*) FROM items").fetchone() == (1,)
    reader.close()
    writer.close()


def test_writable_beside_a_held_read_only_connection_is_one_line(db_path: Path) -> None:
    connect(db_path).close()
    reader = connect(db_path, read_only=True)
    with pytest.raises(JurybenchError, match=r"this process holds a read-only connection to it with other settings"):
        connect(db_path)
    reader.close()
    connect(db_path).close()  # closed: the other kind opens


def test_a_dropped_connection_of_the_other_kind_does_not_block(db_path: Path) -> None:
    connect(db_path).close()
    reader = connect(db_path, read_only=True)
    reader.execute("SELECT 1")
    del reader  # never closed, not yet collected
    writer = connect(db_path)
    writer.close()
    gc.collect()
    writer = connect(db_path)
    del writer
    reader = connect(db_path, read_only=True)
    assert reader.execute("SELECT count(*) FROM items").fetchone() == (0,)
    reader.close()


def test_stats_in_process_after_an_open_store_connection(small_store: object, db_path: Path) -> None:
    # The flaky "different configuration" of tests/stats/test_cli.py, made certain: a caller
    # keeps its writable connection open and runs a statistic (read-only, then recording).
    from tests.conftest import run_cli

    result = run_cli(
        "stats",
        "disparity",
        "--sql",
        "SELECT 'en' AS grp, 'c' AS category, 1 AS correct, 0 AS invalid",
        "--boot",
        "20",
        "--db",
        str(db_path),
    )
    assert "different configuration" not in result.stderr
    assert result.exit_code == 0, result.stderr


def test_the_engine_and_importers_cap_duckdb_memory_and_a_bad_cap_is_one_line(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB's block cache grew with the store (to 80 % of RAM): the engine's writes and the
    importers run capped at 64MB unless JURYBENCH_DUCKDB_MEMORY says otherwise; analysis (and
    a run's finishing steps) keep DuckDB's own limit, since a capped DuckDB 2.0 fails some
    large multi-join queries."""
    import jurybench.engine._records as store_io
    from jurybench.engine import EngineOptions, score
    from jurybench.engine._writer import _Released
    from jurybench.jurors import parse_juror
    from jurybench.rubric import load_rubric
    from tests.conftest import run_cli, write

    def limit_of(con: object) -> str:
        return str(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])  # type: ignore[attr-defined]

    con = connect(db_path)
    uncapped = limit_of(con)
    assert uncapped != "61.0 MiB"
    con.close()
    con = connect(db_path, hardened=True, memory_limit="1GB")
    assert limit_of(con) == "953.6 MiB"
    con.close()
    items = write(tmp_path / "i.csv", "item_id,response\na,x\nb,y\n")
    assert run_cli("items", "import", str(items), "--db", str(db_path)).exit_code == 0
    seen: list[tuple[str, str]] = []
    real = store_io.write_calls

    def spy(c: object, *args: object, **kwargs: object) -> None:
        seen.append(("write", limit_of(c)))
        real(c, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("jurybench.engine._writer.write_calls", spy)  # the run's answers, written as it ends
    closing = _Released.close

    def closed(self: _Released) -> None:  # closing the file checkpoints it: the run's writes
        if self.con is not None:
            seen.append(("close", limit_of(self.con)))
        closing(self)

    monkeypatch.setattr(_Released, "close", closed)
    score(
        db_path,
        load_rubric("story-quality"),
        [parse_juror("fake/a")],
        options=EngineOptions(progress=False),
        after=lambda c, run_id: seen.append(("finish", limit_of(c))),
    )
    assert ("write", "61.0 MiB") in seen and seen[-2:] == [("finish", uncapped), ("close", "61.0 MiB")]
    # Without finishing steps (the CLI's score) nothing is uncapped, up to the close.
    seen.clear()
    score(db_path, load_rubric("story-quality"), [parse_juror("fake/b")], options=EngineOptions(progress=False))
    assert seen and all(limit == "61.0 MiB" for _, limit in seen), seen
    monkeypatch.setenv("JURYBENCH_DUCKDB_MEMORY", "lots")
    result = run_cli("items", "import", str(items), "--db", str(tmp_path / "other.duckdb"))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: JURYBENCH_DUCKDB_MEMORY='lots' is not a size. Use a size such as 512MB")
    assert not (tmp_path / "other.duckdb").exists()
