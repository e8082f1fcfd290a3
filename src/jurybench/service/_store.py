"""The store as the service holds it: one hardened connection, cursors per request, one write lock.

DuckDB lets one process write a file. The service opens it once, for its whole life, with
external access disabled (no files, URLs, ATTACH targets or extensions) and the
configuration locked, and leaves ``<store>.server.json`` beside it (pid and address) so
that a CLI command pointed at the same file can say who holds it. Each request works on
its own cursor; writes (imports, job runs, recorded results) take one lock, reads don't.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError
from jurybench.store import HARDENED, Holder, check_query, holder_of, server_file

if TYPE_CHECKING:
    from collections.abc import Callable

    from duckdb import DuckDBPyConnection as Connection

    from jurybench.store import DuckConfig


class SqlTimeout(JurybenchError):
    pass


class SqlTooLarge(JurybenchError):
    """A query needed more memory than the server gives queries, or its answer was too big."""


class Store(Holder):
    """The server's hold on its store (:class:`jurybench.store.Holder`: a cursor per request,
    one writer at a time, every read in a READ ONLY transaction that is rolled back).
    ``sql_memory_mb`` bounds DuckDB's memory in the server (``memory_limit``, spilling to disk
    up to twice that): DuckDB's limit holds for the whole database, so it caps user queries
    and the server's own writes together (these need little)."""

    def __init__(
        self,
        path: Path,
        url: str = "",
        *,
        sql_memory_mb: int = 512,
        sql_timeout_s: float = 10.0,
        sql_concurrency: int = 2,
    ) -> None:
        import duckdb

        from jurybench.store import migrate

        self.sql_memory_mb = sql_memory_mb
        self.sql_timeout_s = sql_timeout_s
        self.sql_concurrency = sql_concurrency
        self._slots = threading.BoundedSemaphore(sql_concurrency)
        self._ceiling = DataCeiling(sql_memory_mb * 1024 * 1024)
        # The resident size when the first of the queries running now began: the cap is for all
        # of them together (per process), not for each one.
        self._group = threading.Lock()
        self._running = 0
        self._rss_base: int | None = None
        # One thread watches every query, started now: a thread started while queries hold the
        # process at its data ceiling may be refused (see _Watchdogs and _start_thread).
        self._watchdogs = _Watchdogs()
        config: DuckConfig = {
            **HARDENED,
            "memory_limit": f"{sql_memory_mb}MB",
            "max_temp_directory_size": f"{2 * sql_memory_mb}MB",
        }
        try:
            con = duckdb.connect(str(path), config=config)
        except duckdb.IOException as exc:
            holder = holder_of(path)
            if holder is not None:
                raise JurybenchError(
                    f"cannot serve {path}: it is held by a jurybench server (pid {holder['pid']}, "
                    f"{holder.get('url', '')}).",
                    hint="Use that server, stop it first, or serve another --db.",
                ) from None
            raise JurybenchError(
                f"cannot serve {path}: it is held by another process ({str(exc).splitlines()[0]}).",
                hint="Stop the other process, or serve another --db.",
            ) from None
        migrate(con)
        super().__init__(path, connection=con, isolated_reads=True)
        server_file(path).write_text(json.dumps({"pid": os.getpid(), "url": url, "started": time.time()}))

    @contextlib.contextmanager
    def limited(
        self, cur: Connection, *, timeout_s: float, what: str = "query", started: threading.Event | None = None
    ) -> Iterator[None]:
        """Run user SQL on ``cur`` under the server's limits: at most ``sql_concurrency`` such
        queries at once; interrupted at ``timeout_s`` (408) or as soon as the process has grown
        by more than ``sql_memory_mb`` since the first of the queries running now began (413:
        DuckDB's own limit does not cover every allocation, e.g. a list or string built by one
        function call). The cap is the process's, shared by the queries that run together: with
        8 at once the server still grows by at most ``sql_memory_mb`` and a quarter."""
        import duckdb

        if not self._slots.acquire(timeout=timeout_s):
            raise SqlTimeout(
                f"{what}: the server's {self.sql_concurrency} query slots stayed busy for {timeout_s:g} s.",
                hint="Try again when the other queries have finished.",
            )
        with self._group:
            if self._running == 0:
                self._rss_base = rss_bytes()
            self._running += 1
            base = self._rss_base
        watchdog = self._watchdogs.watch(
            cur, timeout_s=timeout_s, max_growth=self.sql_memory_mb * 1024 * 1024, start=base
        )
        self._ceiling.enter()
        if started is not None:  # the query's own time starts now, not when it asked for a slot
            started.set()
        trim = False
        try:
            yield
        except duckdb.InterruptException:
            if watchdog.over_memory:
                raise self._too_large(what) from None
            raise SqlTimeout(
                f"{what}: stopped after {timeout_s:g} s (the server's limit).",
                hint="Narrow the query (WHERE, LIMIT) or aggregate.",
            ) from None
        except (duckdb.OutOfMemoryException, MemoryError):
            raise self._too_large(what) from None
        except duckdb.Error as exc:  # an allocation refused inside a function DuckDB reports otherwise
            if "bad alloc" in str(exc) or "allocate" in str(exc).lower():
                raise self._too_large(what) from None
            raise
        finally:
            trim = self._ceiling.exit()
            self._watchdogs.stop(watchdog)
            with self._group:
                self._running -= 1
                if self._running == 0:
                    self._rss_base = None
            self._slots.release()
            if trim:  # after the slot is free: the next query does not wait for it
                _give_back()

    def _too_large(self, what: str) -> SqlTooLarge:
        return SqlTooLarge(
            f"{what}: needs more than the server's {self.sql_memory_mb} MB for queries (--sql-memory-mb).",
            hint="Aggregate or narrow the query.",
        )

    def query(
        self, sql: str, *, limit: int, timeout_s: float, max_bytes: int | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]], bool]:
        """One read-only SELECT with row, time, memory and answer-size limits: (columns, rows, truncated).

        The query runs on a thread of its own and the answer waits for it at most ``timeout_s``
        (plus a second for the interrupt to land): a query DuckDB cannot interrupt at once still
        gets its 408 in time, and keeps its query slot until it ends."""
        from concurrent.futures import Future

        done: Future[tuple[list[str], list[tuple[Any, ...]], bool]] = Future()
        started = threading.Event()  # set when the query has its slot: its time limit runs from then

        def work() -> None:
            try:
                done.set_result(
                    self._query(sql, limit=limit, timeout_s=timeout_s, max_bytes=max_bytes, started=started)
                )
            except BaseException as exc:  # handed to the waiting request
                done.set_exception(exc)

        done.add_done_callback(lambda _: started.set())  # refused before it had a slot: answered at once
        self._start_thread(work, timeout_s)
        try:
            # A slot within timeout_s (else the slots-busy 408), then the query within its own.
            started.wait(timeout_s + 1.0)
            return done.result(timeout=timeout_s + 1.0)
        except TimeoutError:
            raise SqlTimeout(
                f"query: stopped after {timeout_s:g} s (the server's limit).",
                hint="Narrow the query (WHERE, LIMIT) or aggregate.",
            ) from None

    def _query(
        self, sql: str, *, limit: int, timeout_s: float, max_bytes: int | None, started: threading.Event | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]], bool]:
        import duckdb

        max_bytes = max_bytes if max_bytes is not None else self.sql_memory_mb * 1024 * 1024 // 4
        with self.reading() as cur:
            check_query(cur, sql, what="query")
            rows: list[tuple[Any, ...]] = []
            size = 0
            with self.limited(cur, timeout_s=timeout_s, started=started):
                try:
                    result = cur.execute(sql)
                    names = [d[0] for d in result.description]
                    while len(rows) <= limit:
                        chunk = result.fetchmany(min(1000, limit + 1 - len(rows)))
                        if not chunk:
                            break
                        for row in chunk:
                            size += sum(len(v) if isinstance(v, str | bytes) else 16 for v in row)
                        if size > max_bytes:
                            raise SqlTooLarge(
                                f"query: the answer is over the server's limit of {max_bytes // (1024 * 1024)} MB.",
                                hint="Select fewer columns or rows, or aggregate.",
                            )
                        rows.extend(chunk)
                except (duckdb.InterruptException, duckdb.OutOfMemoryException):
                    raise
                except duckdb.Error as exc:
                    raise JurybenchError(f"query: {str(exc).splitlines()[0]}") from None
        return names, rows[:limit], len(rows) > limit

    def _start_thread(self, work: Callable[[], None], timeout_s: float) -> None:
        """A fresh thread for a query (DuckDB's state on a thread that ran out of memory under the
        ceiling is not reused: a pool's thread crashed the server on its next query). Its stack
        is memory: while other queries hold the process at its data ceiling it may be refused,
        and then it is tried again each time one of them ends, for ``timeout_s`` at most."""
        deadline = time.monotonic() + timeout_s
        while True:
            seen = self._ceiling.generation
            try:
                threading.Thread(target=work, name="user-sql", daemon=True).start()
                return
            except RuntimeError:  # "can't start new thread"
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SqlTimeout(
                        f"query: the server's memory for queries stayed in use for {timeout_s:g} s.",
                        hint="Try again when the other queries have finished.",
                    ) from None
                try:
                    self._ceiling.wait_for_change(seen, left)
                except MemoryError:  # even the wait's lock: look again shortly
                    time.sleep(0.01)

    def close(self) -> None:
        self._watchdogs.close()
        super().close()
        with contextlib.suppress(OSError):
            server_file(self.path).unlink()


def rss_bytes() -> int | None:
    """This process's resident memory now (Linux), or None where /proc cannot tell."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def data_bytes() -> int | None:
    """This process's data size now (Linux's VmData: heap and private writable mappings, what
    RLIMIT_DATA bounds), or None where /proc cannot tell."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


class DataCeiling:
    """While user queries run, the process may grow by at most ``per_query`` bytes for all of
    them together plus ``slack`` (a quarter of ``per_query``, for the server's other work
    meanwhile): the operating system's RLIMIT_DATA, set from the data size when the first of the
    queries running together began, and given back when the last one ends. (It was a share per
    running query, so queries in parallel could take the process to several times the cap.)

    DuckDB's ``memory_limit`` covers its buffer manager only: a string or list built by one
    function call (``repeat('x', 10^9)``, ``range(10^8)``) is allocated outside it, and an
    interrupt lands only between vectors. Under the ceiling such an allocation fails at once
    and DuckDB reports it as out of memory (413), whatever the SQL's form. Linux only (where
    the limit cannot be read or set, the RSS watchdog alone guards)."""

    def __init__(self, per_query: int, slack: int | None = None) -> None:
        self.per_query = per_query
        self.slack = per_query // 4 if slack is None else slack
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)  # a query ended: memory may have come back
        self.generation = 0
        self.running = 0
        self.limit: int | None = None  # the ceiling set now (None: the process's own)
        self.base: int | None = None  # the data size when the first of the running queries began
        self.original: tuple[int, int] | None = None

    def _set(self, soft: int) -> None:
        import resource

        assert self.original is not None
        hard = self.original[1]
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))
        self.limit = soft

    def enter(self) -> None:
        if not sys.platform.startswith("linux"):
            return
        import resource

        with self.lock:
            now = data_bytes()
            if now is None:  # cannot be read: no ceiling (counted only while one is set)
                self.running += 1 if self.running else 0
                return
            if self.running == 0:
                self.original = resource.getrlimit(resource.RLIMIT_DATA)
                self.base = now
            self.running += 1
            assert self.base is not None
            self._set(self.base + self.per_query + self.slack)

    def wait_for_change(self, seen: int, timeout_s: float) -> bool:
        """Wait until a query has ended since ``generation`` was ``seen`` (at most ``timeout_s``)."""
        with self.changed:
            return self.changed.wait_for(lambda: self.generation != seen, timeout_s)

    def exit(self) -> bool:
        """One query ended: the ceiling stays while others run (they may be using their share),
        and is given back with the last one. Whether the heap grew enough that what it freed
        should be handed back to the system (``_give_back``)."""
        import resource

        with self.lock:
            self.generation += 1
            self.changed.notify_all()
            if self.limit is None or self.base is None:
                return False
            self.running -= 1
            if self.running > 0:
                return False
            assert self.original is not None
            resource.setrlimit(resource.RLIMIT_DATA, self.original)
            grown = (data_bytes() or 0) - self.base
            self.limit = self.base = None
        return grown > 64 * 1024 * 1024


def _give_back() -> None:
    """Hand freed heap back to the system (glibc's malloc_trim; DuckDB's own allocator returns
    its pages by itself)."""
    import ctypes
    import ctypes.util

    with contextlib.suppress(OSError, AttributeError, TypeError):
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)


class _Watch:
    """A query under watch (:class:`_Watchdogs`)."""

    def __init__(self, cur: Connection, deadline: float, max_growth: int, start: int | None) -> None:
        self.cur = cur
        self.deadline = deadline
        self.max_growth = max_growth
        self.start = start
        self.over_memory = False
        self.interrupted_at: float | None = None


class _Watchdogs:
    """Interrupts each watched query at its deadline, or once the process has grown by more than
    its ``max_growth`` bytes since its ``start`` (the resident size when the first of the
    queries running together began; sampled every 10 ms while any is watched), and again every
    50 ms until it has stopped. One thread for them all, started with the store: a thread
    started while queries hold the process at its data ceiling (:class:`DataCeiling`) may fail
    like any other allocation, and a query's own watchdog started then answered its request
    with an internal error."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._watched: list[_Watch] = []
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name="sql-watchdog", daemon=True)
        self._thread.start()

    def watch(self, cur: Connection, *, timeout_s: float, max_growth: int, start: int | None = None) -> _Watch:
        watched = _Watch(cur, time.monotonic() + timeout_s, max_growth, rss_bytes() if start is None else start)
        with self._changed:
            self._watched.append(watched)
            self._changed.notify()
        return watched

    def stop(self, watched: _Watch) -> None:
        """No interrupt for it from now on (interrupts are sent holding the same lock)."""
        with self._changed:
            self._watched.remove(watched)

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify()
        self._thread.join(5)

    def _loop(self) -> None:
        with self._changed:
            while not self._closed:
                if not self._watched:
                    self._changed.wait()
                    continue
                self._changed.wait(0.01)
                try:
                    self._look(rss_bytes(), time.monotonic())
                except MemoryError:  # the process at its ceiling: look again at the next tick
                    continue

    def _look(self, size: int | None, now: float) -> None:
        for watched in self._watched:
            if watched.start is not None and size is not None and size - watched.start > watched.max_growth:
                watched.over_memory = True
            due = watched.over_memory or now >= watched.deadline
            if due and (watched.interrupted_at is None or now - watched.interrupted_at >= 0.05):
                watched.cur.interrupt()
                watched.interrupted_at = now


class GroupWriter:
    """Small concurrent writes (job submissions) committed together.

    Each write waits in a queue; one thread takes every write waiting, runs them in one
    transaction and answers each, so fifty clients submitting at once pay for one commit
    instead of queueing for fifty. If the shared transaction fails, each write of it is run
    again alone (DuckDB has no savepoints), so one bad request never fails another."""

    MAX = 256

    def __init__(self, store: Store, batched: dict[type, Any] | None = None) -> None:
        """``batched`` maps a kind of write to a function that performs a list of them at once
        (``fn(cursor, writes) -> results``): a group of job submissions becomes a few set-based
        statements instead of a few statements per job."""
        import queue
        import threading

        self.store = store
        self.batched = dict(batched or {})
        self.queue: queue.Queue[Any] = queue.Queue()
        self.thread = threading.Thread(target=self._loop, name="group-writer", daemon=True)
        self.thread.start()

    def run(
        self, write: object, items: list[dict[str, object]] | None = None, pairs: list[dict[str, object]] | None = None
    ) -> Any:
        """``write(cursor)``'s result, committed (or its exception). ``items`` and ``pairs`` (rows
        to import first) are imported together with those of the other writes in the group."""
        return self.submit(write, items, pairs).result()

    def submit(
        self, write: object, items: list[dict[str, object]] | None = None, pairs: list[dict[str, object]] | None = None
    ) -> Any:
        """As :meth:`run`, without waiting: a future of the result (await it with asyncio.wrap_future)."""
        from concurrent.futures import Future

        future: Future[Any] = Future()
        self.queue.put(((write, items or [], pairs or []), future))
        return future

    def close(self) -> None:
        self.queue.put(None)
        self.thread.join(10)

    def _loop(self) -> None:
        import queue

        while True:
            first = self.queue.get()
            if first is None:
                return
            batch = [first]
            while len(batch) < self.MAX:
                try:
                    more = self.queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    self.queue.put(None)
                    break
                batch.append(more)
            try:
                results = self._commit([write for write, _ in batch])
            except Exception:
                for write, future in batch:
                    try:
                        future.set_result(self._commit([write])[0])
                    except Exception as exc:
                        future.set_exception(exc)
                continue
            for (_, future), result in zip(batch, results, strict=True):
                future.set_result(result)

    def _perform(self, cur: Connection, writes: list[Any]) -> list[object]:
        """Each write's result, in order: batched kinds together, callables one by one."""
        results: list[object] = [None] * len(writes)
        for kind, perform in self.batched.items():
            at = [i for i, w in enumerate(writes) if isinstance(w, kind)]
            if at:
                for i, result in zip(at, perform(cur, [writes[i] for i in at]), strict=True):
                    results[i] = result
        for i, write in enumerate(writes):
            if not any(isinstance(write, kind) for kind in self.batched):
                results[i] = write(cur)
        return results

    def _commit(self, writes: list[Any]) -> list[object]:
        from jurybench.store import import_item_rows, import_pair_rows

        items = [row for _, rows, _ in writes for row in rows]
        pairs = [row for _, _, rows in writes for row in rows]
        with self.store.writing() as cur:
            cur.execute("BEGIN TRANSACTION")
            try:
                if items:  # one import for the group: one set of checks and inserts
                    import_item_rows(cur, list(enumerate(items, start=1)), source="items", in_transaction=True)
                if pairs:
                    import_pair_rows(cur, list(enumerate(pairs, start=1)), source="pairs", in_transaction=True)
                results = self._perform(cur, [write for write, _, _ in writes])
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                raise
        return results
