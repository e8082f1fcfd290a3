"""Reference datasets (LLMBar, HANNA, the offline example) and recorded completions for replay jurors."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jurybench.cli._common import (
    DbOption,
    _connect,
    datasets_app,
    recordings_app,
)
from jurybench.errors import JurybenchError


@datasets_app.command("import")
def datasets_import(
    name: Annotated[str, typer.Argument(help="Dataset: llmbar or hanna.")],
    data: Annotated[
        Path | None,
        typer.Option(help="Folder holding llmbar/ (default: $JURYBENCH_DATA or ../shared/datasets)."),
    ] = None,
    subset: Annotated[
        list[str] | None,
        typer.Option(help="LLMBar subsets: folders below llmbar/ with a dataset.json, e.g. Natural (default: all)."),
    ] = None,
    db: DbOption = None,
) -> None:
    """Import a reference dataset's pairs, gold labels and recorded judge completions."""
    from jurybench.config import data_path
    from jurybench.datasets import import_llmbar

    if name == "hanna":
        from jurybench.datasets import import_hanna

        typer.echo(f"hanna: {import_hanna(_connect(db), data_path(data))}")
        return
    if name != "llmbar":
        raise JurybenchError(f"unknown dataset '{name}'.", hint="Available: llmbar, hanna.")
    con = _connect(db)
    typer.echo(f"llmbar: {import_llmbar(con, data_path(data), tuple(subset) if subset else None)}")


@datasets_app.command("example")
def datasets_example(
    out: Annotated[Path, typer.Option(help="Folder to write items.csv and pairs.csv into.")] = Path("example-data"),
) -> None:
    """Write the small offline example set (our own texts) used when no real data is present."""
    from jurybench.datasets.example import write_example

    for path in write_example(out):
        typer.echo(f"wrote {path}")


@datasets_app.command("llmbar-check")
def datasets_llmbar_check(
    run: Annotated[str, typer.Option("--run", help="A run of an LLMBar replay jury.")],
    subset: Annotated[str, typer.Option(help="Natural or MT-Bench.")],
    strategy: Annotated[str, typer.Option(help="Vanilla, Vanilla_NoRules or CoT.")],
    data: Annotated[Path | None, typer.Option(help="Folder holding llmbar/.")] = None,
    db: DbOption = None,
) -> None:
    """Compare a replay run's per-juror figures with LLMBar's statistics.json; exit 1 on a mismatch."""
    from jurybench.config import data_path
    from jurybench.datasets.llmbar import compare_with_upstream

    con = _connect(db, read_only=True)
    lines, ok = compare_with_upstream(con, run, data_path(data), subset, strategy)
    for line in lines:
        typer.echo(line)
    if not ok:
        raise typer.Exit(1)


@recordings_app.command("from-run")
def recordings_from_run(
    run: Annotated[str, typer.Option("--run", help="The run whose raw answers to record.")],
    juror: Annotated[str, typer.Option(help="Juror name in that run.")],
    source: Annotated[str, typer.Option(help="Name for the recording set (serve it as replay/<source>).")],
    db: DbOption = None,
) -> None:
    """Save a juror's raw answers from a run so the run can be re-executed offline."""
    from jurybench.engine import record_run

    con = _connect(db)
    typer.echo(f"{record_run(con, run, juror, source)} completions recorded as replay/{source}")


@recordings_app.command("list")
def recordings_list(db: DbOption = None) -> None:
    """Recording sources and how many completions each holds."""
    con = _connect(db, read_only=True)
    for source, n in con.execute("SELECT source, count(*) FROM recordings GROUP BY 1 ORDER BY 1").fetchall():
        typer.echo(f"replay/{source}\t{n}")
