"""jurybench check: a gate for CI over the scores of a run."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from jurybench.cli._common import (
    DbOption,
    TableJsonOption,
    app,
)
from jurybench.commands import check_format


@app.command()
def check(
    run: Annotated[str, typer.Option("--run", help="The run to check.")],
    min_rule: Annotated[
        list[str] | None,
        typer.Option("--min", help="CRITERION>=VALUE or CRITERION<=VALUE on the run's mean jury score (repeatable)."),
    ] = None,
    baseline_run: Annotated[
        str | None, typer.Option("--baseline-run", help="A run to compare with, paired by subject (or prompt).")
    ] = None,
    max_drop: Annotated[
        float | None,
        typer.Option(
            "--max-drop", min=0, help="Fail when the mean drop against --baseline-run exceeds this, significantly."
        ),
    ] = None,
    alpha: Annotated[float, typer.Option(help="Significance level of the one-sided paired t-test on the drop.")] = 0.05,
    pair_on: Annotated[
        str,
        typer.Option(help="Pair runs by subject (item or pair id), by prompt, or auto (subject when they share any)."),
    ] = "auto",
    fmt: TableJsonOption = "table",
    db: DbOption = None,
) -> None:
    """A gate for CI: exit 1 when a criterion misses its threshold or drops against a baseline run.

    Exit codes: 0 every criterion passed; 1 a criterion failed; 2 a usage or input error.
    The check is recorded in stats_results (name 'check')."""
    from jurybench.api import check as run_check

    check_format(fmt, ("table", "json"))
    result = run_check(
        db, run, min=min_rule, baseline_run=baseline_run, max_drop=max_drop, alpha=alpha, pair_on=pair_on
    )
    if fmt == "json":
        typer.echo(
            json.dumps(
                {
                    "run": run,
                    "passed": result.passed,
                    "failures": result.failures,
                    "result_id": result.result_id,
                    "criteria": result.table.to_dict(orient="records"),
                    "without_valid_answers": result.without_valid_answers,
                },
                indent=2,
                default=str,
            )
        )
    else:
        for line in result.lines():
            typer.echo(line)
    if not result.passed:
        raise typer.Exit(1)
