"""The command line's app, its command groups, the options commands share, and output helpers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from jurybench.errors import JurybenchError

app = typer.Typer(
    name="jurybench",
    help="Judge generations with a jury of LLMs, keep every judgment in DuckDB, query it with SQL.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
items_app = typer.Typer(help="Import generations to be judged.", no_args_is_help=True)
pairs_app = typer.Typer(help="Import pairs of items for pairwise rubrics.", no_args_is_help=True)
rubrics_app = typer.Typer(help="List, show and check rubric files.", no_args_is_help=True)
datasets_app = typer.Typer(help="Import reference datasets (LLMBar) and the offline example set.", no_args_is_help=True)
report_app = typer.Typer(help="Figures over stored judgments.", no_args_is_help=True)
recordings_app = typer.Typer(help="Recorded completions served by replay/<source> jurors.", no_args_is_help=True)
app.add_typer(items_app, name="items")
app.add_typer(pairs_app, name="pairs")
app.add_typer(rubrics_app, name="rubrics")
app.add_typer(datasets_app, name="datasets")
app.add_typer(report_app, name="report")
app.add_typer(recordings_app, name="recordings")
annotations_app = typer.Typer(help="Import human annotations.", no_args_is_help=True)
calibrate_app = typer.Typer(
    help="Fit juror weights against human labels (jurybench calibrate --run R), or apply a calibration.",
    invoke_without_command=True,
)
app.add_typer(annotations_app, name="annotations")

app.add_typer(calibrate_app, name="calibrate")

DbOption = Annotated[
    Path | None,
    typer.Option("--db", help="DuckDB file (default: $JURYBENCH_DB or ./jurybench.duckdb)."),
]
FormatOption = Annotated[str, typer.Option("--format", "-f", help="table, csv, json or parquet.")]
# The engine's options, shared by score and generate.
RunOption = Annotated[str | None, typer.Option("--run", help="Run name; repeating it resumes that run.")]
ConcurrencyOption = Annotated[int, typer.Option(help="Parallel requests per provider.")]
RetriesOption = Annotated[int, typer.Option(help="Retries on 5xx and timeouts (rate limits wait instead).")]
MaxCostOption = Annotated[
    float | None,
    typer.Option("--max-cost", min=0, help="Budget in USD for the run's spend; it stops (exit 4) before passing it."),
]
GiveUpOption = Annotated[
    float,
    typer.Option("--give-up-after", min=1, help="Seconds a call may wait out rate limits (429) before it errs."),
]
ProgressOption = Annotated[bool, typer.Option("--progress/--no-progress", help="Show the progress bar.")]
BatchOption = Annotated[
    bool,
    typer.Option("--batch", help="Send calls through the providers' batch APIs (about half the price, within 24 h)."),
]
PollOption = Annotated[
    float, typer.Option("--poll-every", help="--batch: seconds between looks at open batches.", min=0.01)
]


def _console() -> Any:
    from rich.console import Console

    return Console()


def _connect(db: Path | None, *, read_only: bool = False) -> Any:
    from jurybench.store import connect

    return connect(db, read_only=read_only)


def _check_format(fmt: str, allowed: tuple[str, ...]) -> None:
    if fmt not in allowed:
        raise JurybenchError(f"--format {fmt!r} is not valid.", hint=f"Valid: {', '.join(allowed)}.")


def _echo_plain(rows: list[list[str]], left: int) -> None:
    """A plain text table, whole values and no wrapping (the first ``left`` columns left-aligned)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        typer.echo(
            "  ".join(
                cell.ljust(w) if i < left else cell.rjust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
        )


def _engine_options(concurrency: int, retries: int, give_up_after: float, max_cost: float | None, plan: bool,
                    batch: bool, poll_every: float, progress: bool) -> Any:  # fmt: skip
    """The engine's options from the flags score and generate share (the bar only in a terminal)."""
    from jurybench.api import engine_options

    return engine_options(concurrency=concurrency, retries=retries, give_up_after=give_up_after, max_cost=max_cost,
                          plan=plan, batch=batch, poll_every=poll_every, progress=progress and sys.stderr.isatty())  # fmt: skip


def _print_plan(result: Any) -> None:
    """The cost plan as a plain table: per juror and in total; an unknown price says so."""

    def money(value: float | None) -> str:
        return "unknown" if value is None else f"${value:.4f}"

    rows = [["juror", "model", "calls", "cached", "input tokens", "output tokens (expected)", "cost", "batch cost"]]
    for p in result.plan:
        rows.append([p.juror, p.model, str(p.calls), str(p.cached), f"{p.input_tokens:,}",
                     f"{p.output_tokens:,.0f} ({p.output_basis})", money(p.cost_usd), money(p.cost_batch_usd)])  # fmt: skip

    def total(values: list[float | None]) -> float | None:
        return None if any(v is None for v in values) else sum(v for v in values if v is not None)

    plans = result.plan
    rows.append(["total", "", str(sum(p.calls for p in plans)), str(sum(p.cached for p in plans)),
                 f"{sum(p.input_tokens for p in plans):,}", f"{sum(p.output_tokens for p in plans):,.0f}",
                 money(total([p.cost_usd for p in plans])), money(total([p.cost_batch_usd for p in plans]))])  # fmt: skip
    _echo_plain(rows, left=2)
    unknown = [p.juror for p in plans if p.cost_usd is None]
    if unknown:
        typer.echo(f"price unknown for {', '.join(unknown)}: litellm's price map does not list the model "
                   "(the total is unknown, not 0).")  # fmt: skip
    typer.echo("plan only: nothing was called and no run was written.")


def _exit_on_call_errors(result: Any) -> None:
    """A run whose calls ended in error: the reasons on stderr, exit 3 (re-running retries them).
    A run stopped by its budget: one line, exit 4 (a higher --max-cost resumes it)."""
    if result.status == "stopped_budget":
        from jurybench.jury import EXIT_BUDGET

        left = result.n_tasks - result.n_cached - result.n_called
        typer.echo(
            f"budget reached: the run has spent ${result.budget.spent:.4f} of ${result.budget.max_cost:.4f}; "
            f"{left} calls were not made. Run the same command with a higher --max-cost to go on.",
            err=True,
        )
        raise typer.Exit(EXIT_BUDGET)
    report = result.error_report()
    if report:
        from jurybench.jury import EXIT_CALL_ERRORS

        for line in report:
            typer.echo(line, err=True)
        raise typer.Exit(EXIT_CALL_ERRORS)


def click_exceptions() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(usage errors, other click errors) from every click typer may use: the installed
    ``click`` and the copy newer typer releases vendor as ``typer._click``."""
    import importlib

    usage: list[type[BaseException]] = []
    other: list[type[BaseException]] = []
    for name in ("typer._click.exceptions", "click.exceptions"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        usage.append(module.UsageError)
        other.append(module.ClickException)
    return tuple(usage), tuple(other)


def usage_text(exc: BaseException) -> str:
    format_message = getattr(exc, "format_message", None)
    return str(format_message()) if callable(format_message) else str(exc)


def usage_line(exc: BaseException) -> str:
    """A click usage error as one line: what is wrong (with click's own 'did you mean')
    and where to read more."""
    message = " ".join(usage_text(exc).split())
    ctx = getattr(exc, "ctx", None)
    command = getattr(ctx, "command_path", None) or "jurybench"
    if message and not message.endswith((".", "?", "!")):
        message += "."
    return f"{message} See '{command} --help'."
