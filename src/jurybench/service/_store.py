"""The store as the service owns it: one hardened connection, cursors per request, one write lock.

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
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jurybench.errors import JurybenchError
from jurybench.store._safe import HARDENED, check_query


def server_file(db: Path) -> Path:
    return db.with_name(db.name + ".server.json")


def holder_of(db: Path) -> dict[str, Any] | None:
    """The running server that holds ``db`` (from its server file), if its process is alive."""
    path = server_file(db)
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        pid = int(info["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return dict(info)


class SqlTimeout(JurybenchError):
    pass


class Store:
    def __init__(self, path: Path, url: str = "") -> None:
        import duckdb

        from jurybench.store._db import migrate

        self.path = path
        try:
            self.con = duckdb.connect(str(path), config=dict(HARDENED))
        except duckdb.IOException as exc:
            holder = holder_of(path)
            where = f" by a jurybench server (pid {holder['pid']}, {holder.get('url', '')})" if holder else ""
            raise JurybenchError(
                f"cannot serve {path}: it is held{where or ' by another process'} ({str(exc).splitlines()[0]}).",
                hint="Stop the other process, or serve another --db.",
            ) from None
        migrate(self.con)
        self.write_lock = threading.RLock()
        self._cursor_lock = threading.Lock()  # cursors are made from the one connection, one at a time
        server_file(path).write_text(json.dumps({"pid": os.getpid(), "url": url, "started": time.time()}))

    @contextlib.contextmanager
    def cursor(self) -> Iterator[Any]:
        with self._cursor_lock:
            cur = self.con.cursor()
        try:
            yield cur
        finally:
            cur.close()

    @contextlib.contextmanager
    def writing(self) -> Iterator[Any]:
        with self.write_lock, self.cursor() as cur:
            yield cur

    @contextlib.contextmanager
    def reading(self) -> Iterator[Any]:
        """A cursor inside a transaction that is always rolled back: whatever user SQL runs in it
        (one SELECT, checked), nothing it does can persist."""
        with self.cursor() as cur:
            cur.execute("BEGIN TRANSACTION")
            try:
                yield cur
            finally:
                with contextlib.suppress(Exception):
                    cur.execute("ROLLBACK")

    def query(self, sql: str, *, limit: int, timeout_s: float) -> tuple[list[str], list[tuple[Any, ...]], bool]:
        """One read-only SELECT with a row limit and a time limit: (columns, rows, truncated)."""
        import duckdb

        with self.reading() as cur:
            check_query(cur, sql, what="query")
            timer = threading.Timer(timeout_s, cur.interrupt)
            timer.start()
            try:
                result = cur.execute(sql)
                names = [d[0] for d in result.description]
                rows = result.fetchmany(limit + 1)
            except duckdb.InterruptException:
                raise SqlTimeout(
                    f"query: stopped after {timeout_s:g} s (the server's limit).",
                    hint="Narrow the query (WHERE, LIMIT) or aggregate.",
                ) from None
            except duckdb.Error as exc:
                raise JurybenchError(f"query: {str(exc).splitlines()[0]}") from None
            finally:
                timer.cancel()
        return names, rows[:limit], len(rows) > limit

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.con.close()
        with contextlib.suppress(OSError):
            server_file(self.path).unlink()
