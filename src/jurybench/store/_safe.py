"""User SQL without escape: read-only connections, one statement, expressions on a sandbox.

Three kinds of user SQL reach the store:

- whole queries (``jurybench sql``, ``stats disparity --sql``): run on a read-only
  connection with external access disabled (no files, URLs, ATTACH targets or
  extensions), the configuration locked, and exactly one SELECT (or EXPLAIN)
  statement accepted;
- expressions (``--where``, ``--by``, ``--arm``, ``--block``): parsed as one SQL
  expression, never spliced as a statement;
- selections made while writing (``score --where``): the candidate rows are copied
  into an in-memory sandbox that holds nothing else, and the predicate runs there.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from jurybench.errors import JurybenchError
from jurybench.store._server_file import holder_of

if TYPE_CHECKING:
    import pyarrow as pa
    from duckdb import DuckDBPyConnection as Connection

# A DuckDB connection's configuration, as duckdb.connect takes it.
DuckConfig: TypeAlias = dict[str, str | bool | int | float | list[str]]

# Settings of every connection that runs user SQL.
HARDENED: DuckConfig = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "lock_configuration": True,
}
LOCK_HINT = (
    "A running 'jurybench score' lets others in when asked; another writer must finish first (or be "
    "stopped). Wait longer with JURYBENCH_WAIT=SECONDS."
)


class StoreBusy(JurybenchError):
    """Another process held the store's file for longer than we were willing to wait."""


def is_lock_error(exc: BaseException) -> bool:
    text = str(exc)
    return "Could not set lock" in text or "Conflicting lock" in text


def release_request(target: Path) -> Path:
    """The file a process leaves beside a busy store to ask a running 'jurybench score' to let go."""
    return target.with_name(target.name + ".release-request")


def _withdraw(target: Path, asked: bool) -> None:
    """The release request this process left, taken back when it gives up (none is left behind)."""
    if asked:
        with contextlib.suppress(OSError):
            release_request(target).unlink()


def _held_by(exc: BaseException, wait_s: float) -> str:
    """Who holds the lock, in words: DuckDB's message names the process (its pid) and the file's
    absolute path; the command of that process is read from /proc where it can be."""
    import re

    found = re.search(r"PID (\d+)", str(exc))
    if found is None:
        return f"another process holds it ({str(exc).splitlines()[0]})"
    pid = found.group(1)
    command = ""
    with contextlib.suppress(OSError):
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        shown = [w.decode(errors="replace") for w in words if w][:6]
        text = " ".join(" ".join(Path(shown[0]).name if i == 0 else w for i, w in enumerate(shown)).split())
        command = f" ({text[:77]}...)" if len(text) > 80 else f" ({text})" if text else ""
    return f"process {pid}{command} holds it and did not let go within {wait_s:g} s"


def open_with_retry(
    target: Path, *, read_only: bool, config: DuckConfig | None, wait_s: float, ask_release: bool = True
) -> Connection:
    """duckdb.connect, retrying for up to ``wait_s`` while another process holds the file's lock.

    A busy store gets a release request beside it: a running 'jurybench score' sees it within
    a fraction of a second, lets the file go for a moment and takes it back afterwards.
    """
    import duckdb

    deadline = time.monotonic() + wait_s
    delay = 0.02
    asked = False  # whether this process left a release request beside the store
    while True:
        try:
            con = duckdb.connect(str(target), read_only=read_only, config=config or {})
            _remember(target, con, read_only)
            return con
        except duckdb.ConnectionException as exc:
            if "different configuration" not in str(exc):
                raise JurybenchError(f"cannot open {target}: {str(exc).splitlines()[0]}") from None
            return _same_process(target, read_only=read_only, config=config)
        except duckdb.IOException as exc:
            first = str(exc).splitlines()[0]
            if not is_lock_error(exc):
                raise JurybenchError(f"cannot open {target}: {first}") from None
            holder = holder_of(Path(target))
            if holder is not None:  # a server or a labelling viewer owns the store for its life: no use waiting
                _withdraw(target, asked)
                url = holder.get("url") or "its address"
                if holder.get("what") == "viewer":
                    raise StoreBusy(
                        f"{target} is held by a jurybench viewer taking labels (view --annotate, pid {holder['pid']}, "
                        f"{url}).",
                        hint="Label there, or stop that viewer (Ctrl-C) to use the CLI on this store; a viewer "
                        "without --annotate only reads.",
                    ) from None
                raise StoreBusy(
                    f"{target} is held by a running jurybench server (pid {holder['pid']}, {url}).",
                    hint=f"Use its HTTP API (e.g. curl -X POST {url}/v1/sql -H 'content-type: application/json' "
                    f'-d \'{{"query": "SELECT ..."}}\'), '
                    "or stop the server to use the CLI on this store.",
                ) from None
            if time.monotonic() >= deadline:
                _withdraw(target, asked)
                raise StoreBusy(f"cannot open {target}: {_held_by(exc, wait_s)}.", hint=LOCK_HINT) from None
            if ask_release and not asked:
                with contextlib.suppress(OSError):  # a read-only folder: plain waiting still works
                    release_request(target).touch()
                    asked = True
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


# Query nodes a read may contain; a CTE or subquery holding DELETE/UPDATE/INSERT (with
# RETURNING) parses as one of DuckDB's *_QUERY_NODE types and is refused.
_READ_NODES = frozenset({"SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE", "CTE_NODE"})
# Tables a read may not name: DuckDB's own catalogue views (the server's files, settings,
# secrets, logs), wherever they are looked up from.
_SYSTEM_CATALOGS = frozenset({"system", "temp"})
_SYSTEM_SCHEMAS = frozenset({"pg_catalog"})
_SYSTEM_PREFIXES = ("duckdb_", "pragma_", "sqlite_", "pg_")
_EXPLAIN = re.compile(r"^\s*EXPLAIN\s+(?:ANALY[SZ]E\s+|\([^)]*\)\s*)?", re.IGNORECASE)


class _Scratch:
    """One empty in-memory database for the process's parses, used under a lock. (It was one per
    thread in a ``threading.local``: a query's thread ending closed its connection inside
    CPython's thread teardown, and DuckDB aborted the process there once in a full test run.)"""

    lock = threading.Lock()
    con: Any = None


def parse_tree(sql: str) -> dict[str, Any]:
    """DuckDB's own parse of one SELECT (json_serialize_sql), on an empty in-memory database
    (one a process, kept: it only ever parses, so nothing of one query reaches the next)."""
    import duckdb

    with _Scratch.lock:
        if _Scratch.con is None:
            _Scratch.con = duckdb.connect(":memory:", config=dict(HARDENED))
        rows = _Scratch.con.execute("SELECT json_serialize_sql(?::VARCHAR)", [sql]).fetchall()
    text = rows[0][0] if rows else "{}"
    try:
        tree: dict[str, object] = json.loads(text)
    except RecursionError:  # an expression of ~1,000 nested terms: deeper than a parse can be read
        raise JurybenchError(
            "the SQL is nested too deeply to be checked (an expression of about a thousand terms chained "
            "one inside another).",
            hint="Write it with fewer terms (a sum of many columns as a list: list_sum([a, b, ...])), or in steps.",
        ) from None
    return tree


def _refusal_in(tree: object) -> str | None:
    """The first data-changing node, function outside the allow-list (store/_sql_functions.py)
    or system table anywhere in a parsed query."""
    from jurybench.store._sql_functions import SCALAR, TABLE

    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            kind = node.get("type")
            if isinstance(kind, str) and kind.endswith("_NODE") and kind not in _READ_NODES:
                return kind.removesuffix("_QUERY_NODE").removesuffix("_NODE")
            if kind == "TABLE_FUNCTION":
                function = node.get("function") or {}
                table_function = str(function.get("function_name") or "")
                if table_function.lower() not in TABLE:
                    return f"{table_function}()"
                stack.extend(function.get("arguments") or [])  # a table function's rows stream
                stack.extend(v for k, v in node.items() if k != "function")
                continue
            too_big = _too_big(node)
            if too_big is not None:
                return too_big
            called = node.get("function_name")
            if isinstance(called, str) and called.lower() not in SCALAR and called.lower() not in TABLE:
                return f"{called}()"
            if kind == "BASE_TABLE" and _system_table(node):
                return str(node.get("table_name"))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return None


# Scalar functions that build one value (a string, a list) whose size is an argument: the
# value is made in one go, outside DuckDB's memory cap and before a time limit can stop it,
# so a constant size above this is refused before the query runs.
_SIZED = frozenset({"repeat", "lpad", "rpad", "range", "generate_series", "list_resize", "array_resize"})
MAX_BUILT_VALUE = 10_000_000


def _too_big(node: dict[str, Any]) -> str | None:
    name = node.get("function_name")
    if node.get("class") != "FUNCTION" or not isinstance(name, str) or name.lower() not in _SIZED:
        return None
    for argument in node.get("arguments") or []:
        expr = argument.get("expression") if isinstance(argument, dict) else None
        literal = (expr or {}).get("literal") if isinstance(expr, dict) else None
        if isinstance(literal, dict) and literal.get("kind") in ("INTEGER", "NUMERIC", "BIGINT", "HUGEINT"):
            try:
                size = abs(float(literal.get("text") or 0))
            except ValueError:
                continue
            if size > MAX_BUILT_VALUE:
                return f"{name}() of {literal.get('text')} (one value of more than {MAX_BUILT_VALUE:,} elements)"
    return None


def _system_table(node: dict[str, object]) -> bool:
    name = str(node.get("table_name") or "").lower()
    return (
        str(node.get("catalog_name") or "").lower() in _SYSTEM_CATALOGS
        or str(node.get("schema_name") or "").lower() in _SYSTEM_SCHEMAS
        or name.startswith(_SYSTEM_PREFIXES)
    )


# Connections this process opened, per store file: DuckDB holds one configuration per file
# and process, so a second connection with other settings (a hardened read-only one beside a
# writable one) cannot be opened while the first is alive.
_OPEN: dict[str, list[tuple[weakref.ref[Connection], bool]]] = {}
_OPEN_LOCK = threading.Lock()


def _remember(target: Path, con: Connection, read_only: bool) -> None:
    key = str(Path(target).resolve()) if str(target) != ":memory:" else ""
    if not key:
        return
    with _OPEN_LOCK:
        alive = [(ref, ro) for ref, ro in _OPEN.get(key, []) if ref() is not None]
        alive.append((weakref.ref(con), read_only))
        _OPEN[key] = alive


def _same_process(target: Path, *, read_only: bool, config: DuckConfig | None) -> Connection:
    """The store is open in this process with other settings: connections nobody holds any
    more are collected and the open retried; a read-only request is served by a cursor of a
    writable connection that is still open (reads through it follow the same query checks);
    otherwise one line says which connection to close."""
    import gc

    import duckdb

    gc.collect()
    try:
        reopened = duckdb.connect(str(target), read_only=read_only, config=config or {})
    except duckdb.ConnectionException:
        pass
    else:
        _remember(target, reopened, read_only)
        return reopened
    key = str(Path(target).resolve())
    with _OPEN_LOCK:
        held = [(ref(), ro) for ref, ro in _OPEN.get(key, [])]
    for writable, ro in held:
        if writable is None or ro or not read_only:
            continue
        try:
            return writable.cursor()
        except duckdb.Error:
            continue
    kind = "writable" if read_only else "read-only"
    raise JurybenchError(
        f"cannot open {target}: this process holds a {kind} connection to it with other settings.",
        hint="Close that connection first (con.close()), or use it for both reading and writing.",
    )


def execute_user_sql(
    con: Connection, sql: str, params: object = None, *, what: str, hint: str | None = None
) -> Connection:
    """Run SQL that contains user input (a query, --where, --by); errors become one user-facing line."""
    import duckdb

    try:
        return con.execute(sql, params) if params is not None else con.execute(sql)
    except (duckdb.InterruptException, duckdb.OutOfMemoryException):
        raise  # the caller's time and memory limits say what happened
    except duckdb.Error as exc:
        raise JurybenchError(f"{what}: {str(exc).splitlines()[0]}", hint=hint) from None


def check_query(con: Connection, sql: str, *, what: str = "SQL") -> None:
    """Exactly one SELECT (or EXPLAIN of one) that reads and nothing else, or a user error.

    The decision is DuckDB's parse, not the text: the statement's type, then every node of
    its parsed tree (a DELETE/UPDATE/INSERT ... RETURNING hidden in a CTE or subquery is a
    query node of its own type), and the functions it calls. A refused query never runs,
    not even in a transaction that would be rolled back."""
    import duckdb

    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise JurybenchError(f"{what}: {str(exc).splitlines()[0]}") from None
    if len(statements) != 1:
        raise JurybenchError(
            f"{what}: give one statement, not {len(statements)}.", hint="Remove the ';' and what follows it."
        )
    kind = statements[0].type
    if kind not in (duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN):
        raise JurybenchError(
            f"{what}: the store is read here; only a single SELECT query is allowed (got {kind.name}).",
            hint="Write a SELECT over the tables and views in docs/schema.md.",
        )
    query = statements[0].query
    if kind == duckdb.StatementType.EXPLAIN:
        query = _EXPLAIN.sub("", query, count=1)
    tree = parse_tree(query)
    if tree.get("error") or len(tree.get("statements") or []) != 1:
        raise JurybenchError(
            f"{what}: only a single SELECT query (or EXPLAIN of one) is allowed.",
            hint="Write a SELECT over the tables and views in docs/schema.md.",
        )
    refused = _refusal_in(tree["statements"][0])
    if refused is not None:
        raise JurybenchError(
            f"{what}: the store is read here; the query contains {refused}, which is not allowed.",
            hint="Write a SELECT that only reads the tables and views in docs/schema.md.",
        )


_IN_READ_ONLY: set[int] = set()  # ids of connections inside read_only_transaction now


@contextlib.contextmanager
def read_only_transaction(con: Connection) -> Iterator[Connection]:
    """A transaction that cannot write (DuckDB's READ ONLY) and is always rolled back, for user
    SQL on a connection that could otherwise write (the server's, the Python API's). Nested in
    another on the same connection, the outer one stands."""
    import duckdb

    if id(con) in _IN_READ_ONLY:
        yield con
        return
    con.execute("BEGIN TRANSACTION READ ONLY")
    _IN_READ_ONLY.add(id(con))
    try:
        yield con
    finally:
        _IN_READ_ONLY.discard(id(con))
        with contextlib.suppress(duckdb.Error):
            con.execute("ROLLBACK")


def expression(text: str, *, option: str) -> str:
    """``text`` parsed as exactly one SQL expression, returned in canonical form."""
    import duckdb

    try:
        parsed = duckdb.SQLExpression(text)
    except duckdb.Error as exc:
        first = str(exc).splitlines()[0]
        raise JurybenchError(
            f"{option} {text!r} is not one SQL expression ({first}).",
            hint=f"{option} takes an expression such as \"dataset = 'x'\", never a statement.",
        ) from None
    canonical = str(parsed)
    tree = parse_tree(f"SELECT {canonical}")
    refused = _refusal_in(tree.get("statements") or []) if not tree.get("error") else "an unparsable part"
    if refused is not None:
        raise JurybenchError(
            f"{option} {text!r} contains {refused}, which is not allowed.",
            hint=f"{option} takes an expression over the columns, e.g. \"dataset = 'x'\".",
        )
    return canonical


def sandbox() -> Connection:
    """An empty in-memory connection with the hardened settings."""
    import duckdb

    return duckdb.connect(":memory:", config=dict(HARDENED))


def select_rows(table: pa.Table, predicate: str | None, *, option: str, order_by: str) -> list[dict[str, object]]:
    """Rows of an Arrow table matching a user predicate, evaluated in a sandbox that holds only them."""
    rows: list[dict[str, object]] = select_table(table, predicate, option=option, order_by=order_by).to_pylist()
    return rows


def select_table(table: pa.Table, predicate: str | None, *, option: str, order_by: str) -> pa.Table:
    """As :func:`select_rows`, as an Arrow table (so a caller can read it a slice at a time)."""
    if not predicate:  # nothing of the user's to evaluate: sorted in Arrow, no sandbox needed
        return table.sort_by(order_by)
    where = expression(predicate, option=option)
    con = sandbox()
    try:
        con.register("subjects", table)
        sql = f"SELECT * FROM subjects WHERE ({where}) ORDER BY {order_by}"
        check_query(con, sql, what=option)
        cursor = execute_user_sql(
            con,
            sql,
            what=f"{option} {predicate!r}",
            hint="Write an expression over the subject's columns, e.g. \"dataset = 'x'\".",
        )
        import warnings

        with warnings.catch_warnings():  # one copy of the selected subjects is the point
            warnings.simplefilter("ignore", UserWarning)
            return cursor.to_arrow_table()
    finally:
        con.close()
