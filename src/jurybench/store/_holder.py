"""Who holds a store file and how: :class:`Holder`, a process's hold on it for as long as it
keeps it open (the Python API, the viewer, the service). Which server holds a file is
:func:`jurybench.store.holder_of` (``_server_file.py``)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from jurybench.errors import JurybenchError
from jurybench.store._db import connect
from jurybench.store._safe import read_only_transaction

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


class Holder:
    """One process's hold on one store file, for as long as it keeps it open: the one way the
    Python API (``jurybench.open``), the viewer and the service hold a store.

    The connection is opened once (hardened for user SQL; read-only or writable, DuckDB's
    memory capped if asked). ``reading()`` and ``writing()`` give a cursor of it per use, so
    threads do not share one; ``writing()`` takes the write lock (one writer at a time) and is
    refused on a read-only hold. ``isolated_reads``: every read runs inside a READ ONLY
    transaction that is rolled back, so no SQL reaching it can write (the service's).

    The CLI's one-shot commands do not hold a store: :func:`jurybench.store.reading` and
    ``writing`` open it by path for one command. A run holds it its own way for the run
    (``engine/_writer.py``: let go between flushes when another process asks), and a server
    announces its hold in ``<store>.server.json`` (:func:`holder_of`)."""

    def __init__(
        self,
        path: Path,
        *,
        read_only: bool = False,
        memory_limit: str | None = None,
        connection: Connection | None = None,
        isolated_reads: bool = False,
    ) -> None:
        self.path = path
        self.read_only = read_only
        self.memory_limit = memory_limit
        self.isolated_reads = isolated_reads
        self.write_lock = threading.RLock()
        self._cursor_lock = threading.Lock()  # cursors are made from the one connection, one at a time
        self.connection: Connection | None = (
            connection
            if connection is not None
            else connect(path, read_only=read_only, hardened=True, memory_limit=memory_limit)
        )

    def _con(self) -> Connection:
        """The open connection (a subclass refuses here when it has let the file go)."""
        if self.connection is None:
            raise JurybenchError(f"the store {self.path} is closed.", hint="Open it again with jurybench.open(path).")
        return self.connection

    @contextlib.contextmanager
    def cursor(self) -> Iterator[Connection]:
        """A cursor of the held connection, closed after the block."""
        con = self._con()
        with self._cursor_lock:
            cur = con.cursor()
        try:
            yield cur
        finally:
            cur.close()

    @contextlib.contextmanager
    def reading(self) -> Iterator[Connection]:
        with self.cursor() as cur:
            if not self.isolated_reads:
                yield cur
                return
            with read_only_transaction(cur):
                yield cur

    @contextlib.contextmanager
    def writing(self) -> Iterator[Connection]:
        if self.read_only:
            raise JurybenchError(
                f"{self.path} is open read-only.",
                hint="Open it with jurybench.open(path) to import, judge or record results.",
            )
        with self.write_lock, self.cursor() as cur:
            yield cur

    def close(self) -> None:
        if self.connection is not None:
            with contextlib.suppress(Exception):
                self.connection.close()
            self.connection = None
