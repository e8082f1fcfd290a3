"""One holder of a store file for everyone who keeps it open (issue 28): the Python API, the
viewer and the service hold it through :class:`jurybench.store.Holder` (a cursor per use, one
writer at a time), each with the same refusals."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import jurybench as jb
from jurybench.store import Holder


def _store(path: Path) -> Path:
    with jb.open(path) as store:
        store.import_items([{"item_id": f"i{k}", "response": f"Story {k}."} for k in range(4)])
    return path


def test_the_python_store_the_viewer_and_the_service_hold_the_file_one_way(tmp_path: Path) -> None:
    from jurybench.service._store import Store as ServedStore
    from jurybench.viewer import create_viewer_app

    db = _store(tmp_path / "s.duckdb")
    with jb.open(db, read_only=True) as store:
        assert isinstance(store, Holder)
    viewer = create_viewer_app(db, warm_up=False)
    assert type(viewer.state.store) is Holder and viewer.state.store.read_only
    viewer.state.store.close()
    served = ServedStore(db)
    try:
        assert isinstance(served, Holder) and served.isolated_reads and not served.read_only
    finally:
        served.close()


def test_a_read_only_hold_refuses_to_write_and_a_closed_one_to_read(tmp_path: Path) -> None:
    db = _store(tmp_path / "s.duckdb")
    hold = Holder(db, read_only=True)
    with hold.reading() as cur:
        assert cur.execute("SELECT count(*) FROM items").fetchall() == [(4,)]
    with pytest.raises(jb.JurybenchError, match="open read-only"), hold.writing():
        pass
    hold.close()
    with pytest.raises(jb.JurybenchError, match="is closed"), hold.reading():
        pass


def test_isolated_reads_cannot_write(tmp_path: Path) -> None:
    import duckdb

    db = _store(tmp_path / "s.duckdb")
    hold = Holder(db, isolated_reads=True)
    with hold.reading() as cur, pytest.raises(duckdb.Error):
        cur.execute("DELETE FROM items")
    with hold.writing() as cur:
        assert cur.execute("SELECT count(*) FROM items").fetchall() == [(4,)]
    hold.close()


def test_threads_read_on_cursors_of_their_own_while_one_writes(tmp_path: Path) -> None:
    db = _store(tmp_path / "s.duckdb")
    hold = Holder(db)
    seen: list[Any] = []
    wrote = threading.Event()

    def read() -> None:
        wrote.wait()
        with hold.reading() as cur:
            seen.append(cur.execute("SELECT count(*) FROM items").fetchall()[0][0])

    readers = [threading.Thread(target=read) for _ in range(4)]
    for t in readers:
        t.start()
    with hold.writing() as cur:
        cur.execute("INSERT INTO items (item_id, response) VALUES ('i9', 'Story 9.')")
    wrote.set()
    for t in readers:
        t.join()
    assert seen == [5, 5, 5, 5]
    hold.close()
