"""Commands that call models: score, generate, provider batches, and the CI gate (check)."""

from __future__ import annotations

import json
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
    TableCsvJsonOption,
    TableJsonOption,
    _connect,
    _done,
    app,
)
from jurybench.commands import check_format, echo_plain


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


batches_app = typer.Typer(
    rich_markup_mode=None, help="Provider batches sent by score/generate --batch.", no_args_is_help=True
)
app.add_typer(batches_app, name="batches")
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
        shown = [
            "batch_id",
            "provider_batch_id",
            "juror",
            "run_id",
            "round",
            "status",
            "n_requests",
            "n_completed",
            "n_failed",
            "submitted_at",
            "collected_at",
        ]
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
