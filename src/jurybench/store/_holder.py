"""Who holds a store file and how: :class:`Holder`, a process's hold on it for as long as it
keeps it open (the Python API, the viewer, the service). Which server holds a file is
:func:`jurybench.store.holder_of` (``_server_file.py``)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from jurybench.errors import JurybenchError
from jurybench.store._db import connect
from jurybench.store._safe import read_only_transaction

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


class BusyLock:
    """The store's write lock (re-entrant) that also counts how long it has been held: a holder's
    writer time, outermost holds only. A server reports it (``GET /v1/status``): the share of
    the time its one writer is busy says when jobs queue for the store rather than for workers."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._lock = threading.RLock()
        self._counts = threading.Lock()  # the figures below, read by other threads
        self._clock = clock
        self._depth = 0
        self._since: float | None = None  # when the hold going on began
        self._busy_s = 0.0
        self.holds = 0  # outermost holds that have ended
        self.created = clock()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        got = self._lock.acquire(blocking, timeout)
        if got:
            self._depth += 1  # only the holding thread changes the depth
            if self._depth == 1:
                with self._counts:
                    self._since = self._clock()
        return got

    def release(self) -> None:
        if self._depth == 1:
            with self._counts:
                self._busy_s += self._clock() - (self._since or 0.0)
                self._since = None
                self.holds += 1
        self._depth -= 1
        self._lock.release()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def busy(self) -> tuple[float, float]:
        """(seconds held so far, a hold going on included; seconds since the lock was made)."""
        with self._counts:
            now = self._clock()
            return self._busy_s + (now - self._since if self._since is not None else 0.0), now - self.created


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
        self.write_lock = BusyLock()
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
