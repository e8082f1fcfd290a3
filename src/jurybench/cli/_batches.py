"""jurybench batches: the provider batches score and generate --batch sent."""

from __future__ import annotations

from typing import Annotated

import typer

from jurybench.cli._common import (
    DbOption,
    TableCsvJsonOption,
    _connect,
    command_group,
)
from jurybench.commands import check_format, echo_plain

batches_app = command_group("batches", "Provider batches sent by score/generate --batch.")


KeyEnvOption = Annotated[
    str | None, typer.Option("--api-key-env", help="Variable holding the provider's key (default PROVIDER_API_KEY).")
]


@batches_app.command("list")
def batches_list(
    run: Annotated[str | None, typer.Option("--run", help="Only this run's batches.")] = None,
    open_only: Annotated[bool, typer.Option("--open", help="Only batches whose results are not stored yet.")] = False,
    fmt: TableCsvJsonOption = "table",
    db: DbOption = None,
) -> None:
    """Every batch in the store: provider id, juror, run, status, counts, times."""
    from jurybench.engine import list_batches
    from jurybench.store import to_csv, to_json

    check_format(fmt, ("table", "csv", "json"))
    names, rows = list_batches(_connect(db, read_only=True), run, open_only)
    if fmt == "table":
        # the table leaves out what is long or rarely read; --format json/csv has every column
        shown = [n for n in names if n not in ("protocol", "finished_at", "error")]
        at = [names.index(n) for n in shown]

        def cell(value: object) -> str:
            if value is None:
                return "-"
            return value.strftime("%Y-%m-%d %H:%M:%S") if hasattr(value, "strftime") else str(value)

        echo_plain([shown, *[[cell(row[i]) for i in at] for row in rows]], left=6)
        if not rows:
            typer.echo("no batches.")
    else:
        typer.echo(to_json(names, rows) if fmt == "json" else to_csv(names, rows), nl=False)


@batches_app.command("status")
def batches_status(
    batch_id: Annotated[str, typer.Argument(help="jurybench's batch id or the provider's.")],
    api_key_env: KeyEnvOption = None,
    db: DbOption = None,
) -> None:
    """Ask the provider where a batch stands (the store's row is updated)."""
    from jurybench.engine import refresh_batch

    info = refresh_batch(_connect(db), batch_id, api_key_env)
    typer.echo("  ".join(f"{k}={v}" for k, v in info.items() if v is not None))


@batches_app.command("cancel")
def batches_cancel(
    batch_id: Annotated[str, typer.Argument(help="jurybench's batch id or the provider's.")],
    api_key_env: KeyEnvOption = None,
    db: DbOption = None,
) -> None:
    """Cancel a batch at its provider; its unanswered calls are left for the next run.

    The run that sent it ends interrupted; running it again sends those calls in a new batch."""
    from jurybench.engine import cancel_batch

    info = cancel_batch(_connect(db), batch_id, api_key_env)
    typer.echo("  ".join(f"{k}={v}" for k, v in info.items() if v is not None))
