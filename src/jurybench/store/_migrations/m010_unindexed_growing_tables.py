"""Migration 10: the tables that grow with every call or imported item carry no primary-key index."""

from __future__ import annotations

import re

from jurybench.store._migrations._base import Connection, comment

# (table, its former key columns): one row per item, pair, call, call and run, call and criterion.
GROWING = (
    ("items", ("item_id",)),
    ("pairs", ("pair_id",)),
    ("calls", ("call_key",)),
    ("run_calls", ("run_id", "call_key")),
    ("pointwise_judgments", ("call_key", "criterion")),
    ("pairwise_judgments", ("call_key", "category")),
)


def m010_unindexed_growing_tables(con: Connection) -> None:
    """DuckDB keeps a primary key's ART index wholly in memory while a connection writes the
    table, so a writer's memory grew with every call ever stored (about 80 bytes per judgment
    row: 1 M rows took the engine past 1 GB) and an import with every item (2 M items with
    UUID ids did not fit in 128 MB). These six tables are rebuilt without the key; the key
    columns stay NOT NULL, and the writers keep them unique (one writer at a time; every
    insert is an anti-join against what is stored: ``engine._records.write_batch``,
    ``store._imports``)."""
    for table, key in GROWING:
        sql = con.execute("SELECT sql FROM duckdb_tables() WHERE table_name = ?", [table]).fetchall()[0][0]
        body = re.sub(r",\s*PRIMARY KEY\s*\([^)]*\)", "", sql)
        body = body.replace(" PRIMARY KEY", " NOT NULL")
        for column in key:  # a composite key's columns were NOT NULL only through the key
            body = re.sub(rf"([(,]\s*){column} VARCHAR(?! NOT NULL)", rf"\1{column} VARCHAR NOT NULL", body)
        body = re.sub(rf"^CREATE TABLE {table}\(", f"CREATE TABLE {table}__unindexed(", body)
        notes = {"": con.execute("SELECT comment FROM duckdb_tables() WHERE table_name = ?", [table]).fetchall()[0][0]}
        notes |= dict(
            con.execute(
                "SELECT column_name, comment FROM duckdb_columns() WHERE table_name = ? AND comment IS NOT NULL",
                [table],
            ).fetchall()
        )
        con.execute(body.rstrip(";"))
        con.execute(f"INSERT INTO {table}__unindexed SELECT * FROM {table}")
        con.execute(f"DROP TABLE {table}")
        con.execute(f"ALTER TABLE {table}__unindexed RENAME TO {table}")
        comment(con, table, {k: v for k, v in notes.items() if v})
