"""What every migration uses."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection

#: The connection a migration is given (named as a string: importing the store does not import duckdb).
Connection: TypeAlias = "DuckDBPyConnection"

Migration = Callable[[Connection], None]


def comment(con: Connection, table: str, comments: dict[str, str]) -> None:
    """Document a table ('' key) and its columns in the catalog (docs/schema.md is built from it)."""
    for column, text in comments.items():
        quoted = text.replace("'", "''")
        if column == "":
            con.execute(f"COMMENT ON TABLE {table} IS '{quoted}'")
        else:
            con.execute(f"COMMENT ON COLUMN {table}.{column} IS '{quoted}'")
