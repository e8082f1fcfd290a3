"""Commands against human labels: agreement, calibration (fit and apply) and jury selection."""

from __future__ import annotations

from typing import Annotated

import typer

from jurybench import api, commands
from jurybench.cli._common import (
    DbOption,
    TableJsonOption,
    _done,
    app,
    calibrate_app,
    declared_command,
    format_option,
    jury_app,
)


@app.command()
def agreement(
    run: Annotated[
        str,
        typer.Option(
            "--run",
            help="A run whose subjects have human labels: pointwise (scores), or preference and classification "
            "(categorical: accuracy, kappas).",
        ),
    ],
    criterion: Annotated[list[str] | None, typer.Option(help="Only these criteria (repeatable).")] = None,
    boot: Annotated[int, typer.Option(help="Bootstrap resamples for the CIs.")] = 1000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    invalid: Annotated[
        str,
        typer.Option(
            help="A juror's unusable answers (preference, classification): drop (left out, counted), tie "
            "(a tie, PandaLM's rule), wrong (a verdict never right)."
        ),
    ] = "drop",
    annotators: Annotated[
        str | None, typer.Option(help="Only these annotators' labels (comma-separated names).")
    ] = None,
    fmt: TableJsonOption = "table",
    db: DbOption = None,
) -> None:
    """Human agreement (alpha, Fleiss' kappa, Spearman, quadratic-weighted kappa), the human
    ceiling, and each juror and the jury vs humans; for a preference or classification run, the
    categorical figures (accuracy, Cohen's kappa, Gwet's AC1, macro precision/recall/F1 against
    the humans' plurality; Fleiss' kappa, AC1 and each pair's kappa among the humans)."""
    from jurybench import commands

    names = [a.strip() for a in annotators.split(",") if a.strip()] if annotators is not None else None
    _done(
        commands.agreement(
            db, run=run, criterion=criterion, boot=boot, seed=seed, invalid=invalid, annotators=names, format=fmt
        )
    )


calibrate_app.callback()(
    declared_command(
        api.calibrate,
        commands.calibrate,
        doc="Fit per-criterion juror weights by least squares against the human mean, validated on held-out prompts.",
        extra=(format_option(),),
        group=True,
    )
)


calibrate_app.command("apply")(
    declared_command(
        api.apply_calibration,
        commands.calibrate_apply,
        doc="Write calibrated scores for a run (table calibrated_scores, view calibrated_items).",
    )
)


jury_app.command("select")(
    declared_command(
        api.select_jury,
        commands.jury_select,
        doc="""The cheapest sub-jury that is good enough: every sub-jury's held-out error (against the
    human labels, or the full jury), its cost and latency per subject from the stored calls, the
    Pareto front, and the cheapest shown non-inferior to the full jury within --margin (a
    one-sided test of paired per-row errors along the price path and with Holm over the
    sub-juries; or --max-error, or --budget).""",
        extra=(format_option(),),
    )
)
