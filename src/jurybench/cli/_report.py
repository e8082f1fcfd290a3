"""Reports over stored judgments: a preference run against human labels, a run as one HTML file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jurybench import api, commands
from jurybench.cli._common import DbOption, declared_command, format_option, report_app

report_app.command("preference")(
    declared_command(
        api.preference_report,
        commands.report_preference,
        doc="Per-juror and jury accuracy against human labels in both orders, and order consistency.",
        extra=(format_option(),),
    )
)
report_app.command("classification")(
    declared_command(
        api.classification_answers,
        commands.report_classification,
        doc="A classification run's answers per juror and language: labels named as written or only after\n"
        "    normalisation (docs/rubrics.md), and invalid answers by why (no label, empty, unreadable, refusal).",
        extra=(format_option(),),
    )
)


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


@report_app.command("bundle")
def report_bundle(
    run: Annotated[list[str], typer.Option("--run", help="A run to put in it (repeat for several).")],
    out: Annotated[Path, typer.Option("-o", "--out", help="The folder to write (replaced whole).")] = Path("bundle"),
    zipped: Annotated[bool, typer.Option("--zip", help="Write one zip file (OUT.zip) instead of a folder.")] = False,
    db: DbOption = None,
) -> None:
    """One folder (or zip) that opens offline: the HTML report, each run's subjects with the
    jury's and every juror's answers (a page and CSV), and every call's messages and answer."""
    from jurybench.config import db_path
    from jurybench.viewer import report_bundle as write

    typer.echo(f"wrote {write(db_path(db), run, out, zipped=zipped)} (open index.html)")
