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


def test_the_write_lock_counts_how_long_it_is_held_outermost_holds_only() -> None:
    """Hand-worked on a clock the test moves: held 10 -> 13 (re-entered at 11 -> 12.5, not a
    second hold), then 20 -> 21; a hold going on counts up to now; another thread cannot take it
    while it is held, and a refused try counts nothing."""
    from jurybench.store._holder import BusyLock

    now = [10.0]
    lock = BusyLock(clock=lambda: now[0])
    with lock:
        now[0] = 11.0
        with lock:
            now[0] = 12.5
        assert lock.busy() == (2.5, 2.5) and lock.holds == 0
        tried: list[bool] = []
        other = threading.Thread(target=lambda: tried.append(lock.acquire(blocking=False)))
        other.start()
        other.join()
        assert tried == [False]
        now[0] = 13.0
    now[0] = 20.0
    assert lock.busy() == (3.0, 10.0) and lock.holds == 1
    assert lock.acquire(blocking=False)
    now[0] = 21.0
    lock.release()
    assert lock.busy() == (4.0, 11.0) and lock.holds == 2
