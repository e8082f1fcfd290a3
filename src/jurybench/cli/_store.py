"""Commands over the store itself: create or migrate it, import items and pairs, query it (sql), describe it (schema)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jurybench.cli._common import (
    DbOption,
    FormatOption,
    _done,
    app,
    items_app,
    pairs_app,
)
from jurybench.commands import check_format


@app.command()
def migrate(db: DbOption = None) -> None:
    """Create the store or bring its schema up to date."""
    from jurybench.store import connect
    from jurybench.store import migrate as apply

    con = connect(db)
    applied = apply(con)
    names = [r[0] for r in con.execute("SELECT name FROM migrations ORDER BY name").fetchall()]
    typer.echo(f"schema current: {', '.join(names)}" + (f" (applied {', '.join(applied)})" if applied else ""))


@items_app.command("import")
def items_import(
    file: Annotated[Path, typer.Argument(help="CSV, JSONL or Parquet with item_id and response.")],
    treatment: Annotated[str, typer.Option(help="Comma-separated columns holding treatment attributes.")] = "",
    dataset: Annotated[str | None, typer.Option(help="Dataset name stored with every item.")] = None,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="csv, jsonl or parquet (default: by suffix); or a conversation format: openai-chat, tau-bench "
            "(jurybench items formats).",
        ),
    ] = None,
    map: Annotated[
        list[str] | None,
        typer.Option("--map", help="KEY=FIELD: where a conversation format finds a part of each record (repeatable)."),
    ] = None,
    db: DbOption = None,
) -> None:
    """Import generations: item_id, response, and optionally prompt, reference, model, language;
    or conversations and agent trajectories in a trace format (--format NAME).

    Other columns are kept as metadata. The import is all-or-nothing, and
    importing the same file again changes nothing.
    """
    from jurybench import commands

    _done(commands.items_import(db, file=file, treatment=treatment, dataset=dataset, format=fmt, map=map))


@pairs_app.command("import")
def pairs_import(
    file: Annotated[Path, typer.Argument(help="CSV, JSONL or Parquet with pair_id, item_a, item_b.")],
    dataset: Annotated[str | None, typer.Option(help="Dataset name stored with every pair.")] = None,
    fmt: Annotated[str | None, typer.Option("--format", help="csv, jsonl or parquet.")] = None,
    db: DbOption = None,
) -> None:
    """Import pairs of already imported items (A = item_a, B = item_b)."""
    from jurybench import commands

    _done(commands.pairs_import(db, file=file, dataset=dataset, format=fmt))


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="A SQL query over the store's tables and views.")],
    fmt: FormatOption = "table",
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write to this file (required for parquet)."),
    ] = None,
    db: DbOption = None,
) -> None:
    """Query the store (read-only). JSON output is an array of row objects."""
    from jurybench import commands

    _done(commands.sql(db, query=query, format=fmt, output=output))


@app.command()
def schema(
    fmt: Annotated[str, typer.Option("--format", "-f", help="markdown or json.")] = "markdown",
) -> None:
    """Print the store's tables and views (markdown or json), from a freshly migrated database."""
    from jurybench.store import schema_json, schema_markdown

    check_format(fmt, ("markdown", "json"))
    typer.echo(schema_markdown() if fmt == "markdown" else schema_json())
