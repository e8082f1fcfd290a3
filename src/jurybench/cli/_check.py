"""jurybench check: a gate for CI over the scores of a run (its options: ``jurybench.check``'s declaration)."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated

import typer

from jurybench import api, commands
from jurybench.cli._common import app, declared_command, format_option

JunitOption = Annotated[
    Path | None,
    typer.Option("--junit", help="Also write the check as JUnit XML to this file (one test per criterion), for CI."),
]

app.command("check")(
    declared_command(
        api.check,
        commands.check,
        doc="""A gate for CI: exit 1 when a criterion misses its threshold or drops against a baseline run.

    Exit codes: 0 every criterion passed; 1 a criterion failed; 2 a usage or input error.
    The check is recorded in stats_results (name 'check'); JUnit XML for CI systems' test
    reports (one test per criterion) with --junit FILE, or as the junit format.""",
        extra=(
            format_option(junit=True),
            inspect.Parameter("junit", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=JunitOption),
        ),
    )
)
