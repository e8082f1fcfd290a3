"""Study files and the shipped demo studies: run one end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jurybench.cli._common import (
    DbOption,
    app,
    command_group,
)
from jurybench.errors import JurybenchError

study_app = command_group("study", "Run study files (generate, judge, analyse in one YAML).")


@study_app.command("run")
def study_run(
    file: Annotated[Path, typer.Argument(help="A study YAML file.")],
    out: Annotated[
        Path | None, typer.Option(help="Output folder for plots and calibrations (default: beside the store).")
    ] = None,
    juror: Annotated[
        list[str] | None,
        typer.Option(
            "--juror", "-j", help="Judge with these jurors instead of the study's (repeatable): the models to audit."
        ),
    ] = None,
    add_juror: Annotated[
        list[str] | None,
        typer.Option(
            "--add-juror",
            help="Add these jurors to every score step's (repeatable): a real judge beside simulated ones.",
        ),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            min=1,
            help="A first try: every score step judges this many of its subjects, drawn at random.",
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Run a study's steps in order against one store, printing each as the command it is."""
    from jurybench.config import db_path
    from jurybench.studies import run_study

    store = db_path(db)
    code = run_study(
        file,
        out or store.parent / f"{file.stem}-out",
        store,
        echo=typer.echo,
        jurors=juror,
        add_jurors=add_juror,
        limit=limit,
    )
    if code:
        raise typer.Exit(code)


@app.command()
def demo(
    name: Annotated[str, typer.Argument(help="persuasion, inventory, culture or emotion.")],
    out: Annotated[Path, typer.Option(help="Output folder: the store <name>.duckdb, plots, calibrations.")] = Path(
        "demo-out"
    ),
    copy: Annotated[
        Path | None, typer.Option(help="Copy the study file and its data to this folder instead of running it.")
    ] = None,
) -> None:
    """Run a shipped study end to end offline on simulated models (a fresh store each time), or copy it."""
    import shutil

    from jurybench.studies import run_study, shipped_study

    path = shipped_study(name)
    if copy is not None:
        if copy.exists() and any(copy.iterdir()):
            raise JurybenchError(f"{copy} exists and is not empty.", hint="Choose a new folder for the copy.")
        shutil.copytree(path.parent, copy, dirs_exist_ok=True)
        typer.echo(
            f"copied study '{name}' to {copy}; edit its models and jurors, then: jurybench study run {copy / 'study.yaml'}"
        )
        return
    out.mkdir(parents=True, exist_ok=True)
    store = out / f"{name}.duckdb"
    for stale in (store, Path(f"{store}.wal")):
        stale.unlink(missing_ok=True)
    code = run_study(path, out / name, store, echo=typer.echo)
    if code:
        raise typer.Exit(code)
