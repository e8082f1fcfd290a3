"""Reports over stored judgments: a preference run against human labels, a run as one HTML file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jurybench.cli._common import (
    DbOption,
    TableJsonOption,
    _done,
    report_app,
)


@report_app.command("preference")
def report_preference(
    run: Annotated[str, typer.Option("--run", help="Run id of a preference (A/B) run.")],
    annotator: Annotated[
        str | None, typer.Option(help="Compare with this annotator only (default: human majority).")
    ] = None,
    fmt: TableJsonOption = "table",
    db: DbOption = None,
) -> None:
    """Per-juror and jury accuracy against human labels in both orders, and order consistency."""
    from jurybench import commands

    _done(commands.report_preference(db, run=run, annotator=annotator, format=fmt))


@report_app.command("classification")
def report_classification(
    run: Annotated[str, typer.Option("--run", help="Run id of a classification run.")],
    fmt: TableJsonOption = "table",
    db: DbOption = None,
) -> None:
    """A classification run's answers per juror and language: labels named as written or only after
    normalisation (docs/rubrics.md), and invalid answers by why (no label, empty, unreadable, refusal)."""
    from jurybench import commands

    _done(commands.report_classification(db, run=run, format=fmt))


@report_app.command("html")
def report_html(
    run: Annotated[list[str], typer.Option("--run", help="A run to report (repeat for several).")],
    output: Annotated[Path, typer.Option("-o", "--output", help="The HTML file to write.")] = Path("report.html"),
    db: DbOption = None,
) -> None:
    """One self-contained HTML file (inline CSS, plots as SVG) with each run's jury, jurors,
    figures with CIs, recorded statistics and calibration."""
    from jurybench.config import db_path
    from jurybench.viewer import report_html as write

    typer.echo(f"wrote {write(db_path(db), run, output)}")
