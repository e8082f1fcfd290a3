"""Run SQL against the store and render results: rich table, CSV, JSON or Parquet."""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import io
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError
from jurybench.store._safe import check_query, execute_user_sql

if TYPE_CHECKING:
    from collections.abc import Sequence

    from duckdb import DuckDBPyConnection as Connection
    from rich.table import Table

OUTPUT_FORMATS = ("table", "csv", "json", "parquet")


def run_query(con: Connection, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """One read-only SELECT; anything else is refused before it runs."""
    check_query(con, sql)
    cursor = execute_user_sql(con, sql, what="SQL error", hint="See docs/schema.md for tables and views.")
    if cursor.description is None:
        return [], []
    names = [d[0] for d in cursor.description]
    return names, cursor.fetchall()


def _jsonable(value: object) -> object:
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, bytes):
        return value.hex()
    return value


def to_json(names: list[str], rows: list[tuple[object, ...]]) -> str:
    """An array of row objects."""
    return json.dumps(
        [{n: _jsonable(v) for n, v in zip(names, row, strict=True)} for row in rows],
        ensure_ascii=False,
        indent=2,
        default=str,
    )


def to_csv(names: list[str], rows: list[tuple[object, ...]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(names)
    for row in rows:
        writer.writerow(["" if v is None else _jsonable(v) for v in row])
    return out.getvalue()


def to_parquet(con: Connection, sql: str, output: Path) -> int:
    import duckdb

    check_query(con, sql)
    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        table = con.sql(sql).to_arrow_table()  # con.sql: Arrow without the DB-API copy
    except duckdb.Error as exc:
        raise JurybenchError(f"SQL error: {str(exc).splitlines()[0]}") from None
    import pyarrow.parquet as pq

    pq.write_table(table, output)
    return int(table.num_rows)


def rich_table(names: list[str], rows: Sequence[Sequence[object]], title: str | None = None) -> Table:
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    for name in names:
        table.add_column(name, overflow="fold")
    for row in rows:
        table.add_row(*["NULL" if v is None else _fmt(v) for v in row])
    return table


def _fmt(value: object) -> str:
    """A cell as a table shows it: 4 significant digits, and no exponent for large numbers
    (123456.7, not 1.235e+05) up to 1e15 (1e+300, not its 301 digits); CSV, JSON and Parquet keep
    every digit."""
    if isinstance(value, decimal.Decimal):
        if value == value.to_integral_value():
            return str(value.quantize(decimal.Decimal(1)))
        value = float(value)
    if isinstance(value, float):
        if abs(value) >= 1e15 or not math.isfinite(value):  # past 15 digits a float's digits are noise
            return f"{value:.4g}"
        if value.is_integer():
            return str(int(value)) if abs(value) >= 1e4 else f"{value:.4g}"
        return f"{value:.1f}" if abs(value) >= 1e4 else f"{value:.4g}"
    return str(value)
