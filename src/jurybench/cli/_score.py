"""jurybench score: judge items or pairs with a jury."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jurybench.cli._common import (
    BatchOption,
    ConcurrencyOption,
    DbOption,
    GiveUpOption,
    MaxCostOption,
    PollOption,
    ProgressOption,
    RetriesOption,
    RunOption,
    _done,
    app,
)


@app.command()
def score(
    rubric: Annotated[str, typer.Option("--rubric", "-r", help="Rubric name (rubrics/<name>.yaml) or path.")],
    juror: Annotated[
        list[str] | None,
        typer.Option(
            "--juror",
            "-j",
            help="MODEL[,key=value...]; repeat for a jury. e.g. openai/gpt-4o-mini,temperature=0,samples=3",
        ),
    ] = None,
    jury: Annotated[
        Path | None,
        typer.Option(
            help="YAML jury: 'jurors' (added to --juror) and optionally aggregation, quorum, tie, calibration, scores."
        ),
    ] = None,
    aggregate: Annotated[
        str | None,
        typer.Option(
            "--aggregate",
            help="Jury rule: mean (of juror means), median, weighted, majority or calibrated "
            "(default: the jury file's, else majority for preference rubrics and mean otherwise).",
        ),
    ] = None,
    quorum: Annotated[
        int | None, typer.Option(help="Jurors with a valid score an item needs for a jury score (default 1).")
    ] = None,
    tie: Annotated[str | None, typer.Option(help="Majority with equal votes: tie (0) or abstain (no verdict).")] = None,
    calibration: Annotated[
        Path | None, typer.Option(help="Calibration file for --aggregate calibrated (applied when the run ends).")
    ] = None,
    scores: Annotated[
        str | None,
        typer.Option(
            help="What the jury aggregates: discrete (the jurors' scores) or expected (the expected scores of "
            "jurors with scores=expected). Re-running a run with another choice makes no call."
        ),
    ] = None,
    orders: Annotated[
        str,
        typer.Option(
            help="Pairs: both orders (symmetrized), one (item_a first) or random (one order per pair, drawn "
            "from --order-seed); with one order, position bias cannot be measured."
        ),
    ] = "both",
    order_seed: Annotated[int, typer.Option(help="--orders random: the seed that draws each pair's order.")] = 0,
    where: Annotated[
        str | None,
        typer.Option(help="SQL predicate choosing items or pairs, e.g. \"dataset = 'x'\"."),
    ] = None,
    run: RunOption = None,
    concurrency: ConcurrencyOption = 16,
    retries: RetriesOption = 4,
    give_up_after: GiveUpOption = 3600.0,
    max_cost: MaxCostOption = None,
    plan: Annotated[
        bool, typer.Option("--plan", help="Count calls, tokens and cost per juror; call and change nothing.")
    ] = False,
    batch: BatchOption = False,
    poll_every: PollOption = 30.0,
    progress: ProgressOption = True,
    until: Annotated[
        str | None,
        typer.Option(
            help="Judge in random batches and stop once this holds on the jury's anytime-valid confidence "
            "sequence: ci_width(CRITERION)<WIDTH, excludes(CRITERION,VALUE), separated(CRITERION) (the "
            "models' ranks settled) or gap_excludes(VALUE) (pairwise: the treatment gap decided)."
        ),
    ] = None,
    batch_items: Annotated[int, typer.Option(help="--until: subjects judged between two looks.")] = 50,
    until_seed: Annotated[int, typer.Option(help="--until: the seed of the subjects' random order.")] = 0,
    until_alpha: Annotated[float, typer.Option(help="--until: 1 - the confidence sequence's level.")] = 0.05,
    db: DbOption = None,
) -> None:
    """Judge items (pointwise) or pairs in both orders (pairwise) with a jury.

    Judgments already stored for the same rubric, juror, subject, order and
    sample are reused, so re-running a finished or interrupted run makes no
    call for them.
    """
    from jurybench import commands

    _done(
        commands.score(
            db,
            rubric=rubric,
            juror=juror,
            jury=jury,
            aggregate=aggregate,
            quorum=quorum,
            tie=tie,
            calibration=calibration,
            scores=scores,
            orders=orders,
            order_seed=order_seed,
            where=where,
            run=run,
            concurrency=concurrency,
            retries=retries,
            give_up_after=give_up_after,
            max_cost=max_cost,
            plan=plan,
            batch=batch,
            poll_every=poll_every,
            progress=progress,
            until=until,
            batch_items=batch_items,
            until_seed=until_seed,
            until_alpha=until_alpha,
        )
    )
