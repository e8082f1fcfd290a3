"""Open the judgment store and bring its schema up to date."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from jurybench.config import db_path, lock_wait_s
from jurybench.errors import JurybenchError
from jurybench.store._migrations import MIGRATIONS
from jurybench.store._safe import HARDENED, DuckConfig, open_with_retry

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


class OpenStore(Protocol):
    """A store held open by this process (``jurybench.open``, the viewer's, the server's)."""

    def reading(self) -> AbstractContextManager[Connection]: ...

    def writing(self) -> AbstractContextManager[Connection]: ...


# What the library's functions take as a store: a path (None: the default store), a store held
# open, or a DuckDB connection (or cursor) used as it is.
StoreRef: TypeAlias = "str | Path | OpenStore | Connection | None"
# Parameters of a query: DuckDB takes any Python values.
Params: TypeAlias = Sequence[object]


def connect(
    path: str | Path | None = None,
    *,
    read_only: bool = False,
    wait_s: float | None = None,
    hardened: bool | None = None,
    memory_limit: str | None = None,
    threads: int | None = None,
) -> Connection:
    """A DuckDB connection to the store, migrated to the latest schema unless read-only.

    ``memory_limit`` caps DuckDB's memory (e.g. ``config.duckdb_memory()``, what the importers
    and ``stats friedman`` use) and ``threads`` its threads; analysis otherwise keeps DuckDB's
    own limit, since a capped DuckDB 2.0 fails some large multi-join queries with an internal
    error (duckdb/duckdb#24807).

    Read-only connections are hardened for user SQL: no file or network access, no
    extensions, configuration locked (``hardened=True`` does the same for a writable one:
    what the library's and the server's stores use, since they run user SQL too). Either kind waits up to ``wait_s`` seconds
    (default: $JURYBENCH_WAIT or 10) while another process holds the file, which
    'jurybench score' does only for the moment of each flush.
    """
    target = db_path(path)
    if read_only and str(target) != ":memory:" and not target.exists():
        raise JurybenchError(
            f"no judgment store at {target}.",
            hint="Import items or run 'jurybench score' first, or pass --db.",
        )
    wait = wait_s if wait_s is not None else lock_wait_s()
    if hardened is None:
        hardened = read_only
    config = connection_config(hardened, memory_limit)
    if threads is not None:
        config = {**(config or {}), "threads": threads}
    con = open_with_retry(target, read_only=read_only, config=config, wait_s=wait)
    if not read_only:
        migrate(con)
    else:
        pending = pending_migrations(con)
        if pending:
            con.close()
            raise JurybenchError(
                f"{target} needs migrations {', '.join(pending)}.",
                hint="Open it once with a writing command (e.g. 'jurybench migrate').",
            )
    return con


def connection_config(hardened: bool, memory_limit: str | None = None) -> DuckConfig | None:
    """DuckDB settings of a connection jurybench opens: hardened or not, and with its memory
    capped if ``memory_limit`` is given."""
    config: DuckConfig = dict(HARDENED) if hardened else {}
    if memory_limit is not None:
        config["memory_limit"] = memory_limit
    return config or None


def pending_migrations(con: Connection) -> list[str]:
    exists = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'migrations'").fetchall()[
        0
    ][0]
    done: set[str] = set()
    if exists:
        done = {row[0] for row in con.execute("SELECT name FROM migrations").fetchall()}
    return [name for name, _ in MIGRATIONS if name not in done]


def migrate(con: Connection) -> list[str]:
    """Apply pending migrations in order, each in a transaction, then make the views again from
    their current definitions (store/_views.py); returns the migrations' names."""
    con.execute(
        "CREATE TABLE IF NOT EXISTS migrations "
        "(name VARCHAR PRIMARY KEY, applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
    )
    applied = []
    pending = set(pending_migrations(con))
    for name, fn in MIGRATIONS:
        if name not in pending:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            fn(con)
            con.execute("INSERT INTO migrations (name) VALUES (?)", [name])
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
        applied.append(name)
    if applied:  # every view from its current definition (store/_views.py), as the migrations name them
        from jurybench.store._views import create_views

        with transaction(con):
            create_views(con)
    return applied


@contextmanager
def transaction(con: Connection) -> Iterator[Connection]:
    """All-or-nothing: commit on success, roll back on any exception. Inside another transaction
    on the same connection it joins it (the outer one commits or rolls back everything: an
    import of items, pairs, judgments and labels from one file is one transaction)."""
    if id(con) in _OPEN:
        yield con
        return
    con.execute("BEGIN TRANSACTION")
    _OPEN.add(id(con))
    try:
        yield con
    except BaseException:
        _OPEN.discard(id(con))
        con.execute("ROLLBACK")
        raise
    else:
        _OPEN.discard(id(con))
        con.execute("COMMIT")
    finally:
        _OPEN.discard(id(con))


_OPEN: set[int] = set()  # connections inside a transaction()


def file_of(con: Connection) -> str:
    """The file the connection's database lives in, as DuckDB opened it ("" for an in-memory one)."""
    row = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()
    return str(row[0]) if row and row[0] else ""


def first_row(con: Connection, sql: str, params: Params | None = None) -> tuple[Any, ...] | None:
    """The first row of a query, reading the result to the end (DuckDB 2 needs that)."""
    rows = con.execute(sql, params or []).fetchall()
    return rows[0] if rows else None


def scalar(con: Connection, sql: str, params: Params | None = None) -> Any:
    row = first_row(con, sql, params)
    return row[0] if row else None


@contextmanager
def registered(con: Connection, name: str, table: object) -> Iterator[Connection]:
    """Expose an Arrow table or DataFrame to SQL as ``name`` for the duration of the block."""
    import duckdb

    con.register(name, table)
    try:
        yield con
    finally:
        with contextlib.suppress(duckdb.Error):  # an aborted transaction refuses it; its cause is what counts
            con.unregister(name)


@contextmanager
def reading(store: StoreRef, *, memory_limit: str | None = None, threads: int | None = None) -> Iterator[Connection]:
    """A connection to read ``store`` through: a path (or None: the default store) opens a
    hardened read-only connection for the block (with DuckDB's memory and threads capped, if
    given); an open store (``jurybench.open``, or the server's) gives its reading connection;
    a DuckDB connection is used as it is."""
    if store is None or isinstance(store, str | Path):
        con = connect(store, read_only=True, memory_limit=memory_limit, threads=threads)
        try:
            yield con
        finally:
            con.close()
    elif hasattr(store, "reading"):  # an open store (the library's, or the server's)
        with store.reading() as con:
            yield con
    else:  # a DuckDB connection or cursor
        yield store


@contextmanager
def writing(store: StoreRef) -> Iterator[Connection]:
    """A connection to write ``store`` through (a path is opened, migrated and closed after)."""
    if store is None or isinstance(store, str | Path):
        con = connect(store)
        try:
            yield con
        finally:
            con.close()
    elif hasattr(store, "writing"):
        with store.writing() as con:
            yield con
    else:
        yield store
