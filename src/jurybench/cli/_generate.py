"""jurybench generate: responses under paired treatments, to judge."""

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
def generate(
    spec: Annotated[Path, typer.Argument(help="Generation spec YAML (or a study file with a 'generation' section).")],
    prompts: Annotated[
        Path | None, typer.Option(help="Prompt set (CSV/JSONL: prompt_id, prompt[, language]); overrides the spec's.")
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option("--model", "-m", help="MODEL[,key=value...]; repeatable; replaces the spec's models."),
    ] = None,
    samples: Annotated[int | None, typer.Option(help="Responses per prompt, arm and model.")] = None,
    exclusion: Annotated[
        str | None,
        typer.Option(help="response: drop refused responses; prompt: drop a prompt for every model if any refused."),
    ] = None,
    run: RunOption = None,
    concurrency: ConcurrencyOption = 16,
    retries: RetriesOption = 4,
    give_up_after: GiveUpOption = 3600.0,
    max_cost: MaxCostOption = None,
    plan: Annotated[
        bool, typer.Option("--plan", help="Count calls, tokens and cost per model; call and change nothing.")
    ] = False,
    batch: BatchOption = False,
    poll_every: PollOption = 30.0,
    progress: ProgressOption = True,
    db: DbOption = None,
) -> None:
    """Generate responses: prompts x treatment arms x models x samples, stored as items with their
    treatment, linked as pairs across arms; refusals detected and reported per model and arm.

    Uses the judge engine (cache, resume, retries, rate limits, cost); re-running makes no call
    for responses already stored.
    """
    from jurybench import commands

    _done(
        commands.generate(
            db,
            spec=spec,
            prompts=prompts,
            model=model,
            samples=samples,
            exclusion=exclusion,
            run=run,
            concurrency=concurrency,
            retries=retries,
            give_up_after=give_up_after,
            max_cost=max_cost,
            plan=plan,
            batch=batch,
            poll_every=poll_every,
            progress=progress,
        )
    )
