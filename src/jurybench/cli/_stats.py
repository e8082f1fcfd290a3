"""`jurybench stats ...` and `jurybench plot ...`: thin commands over jurybench.stats."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from jurybench.cli._common import _done, typer_parameter


class _StatisticsGroup(TyperGroup):
    """`jurybench stats`: its commands (one per registered statistic, a plug-in's included) are
    made when the group is first asked for them, so that `jurybench --help` and every other
    command do not load the statistics registry and its plug-ins."""

    _loaded = False

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        add_statistics()
        for info in stats_app.registered_commands:
            if info.name not in self.commands:
                command = typer.main.get_command_from_info(
                    info, pretty_exceptions_short=stats_app.pretty_exceptions_short, rich_markup_mode=None
                )
                self.add_command(command, info.name)

    def list_commands(self, ctx: Any) -> list[str]:
        self._load()
        return super().list_commands(ctx)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        self._load()
        return super().get_command(ctx, cmd_name)


stats_app = typer.Typer(
    cls=_StatisticsGroup,
    rich_markup_mode=None,
    help="Statistics over stored judgments (results are recorded in stats_results).",
    no_args_is_help=True,
)

Fmt = Annotated[str, typer.Option("--format", "-f", help="table, json or csv.")]
Db = Annotated[Path | None, typer.Option("--db", help="DuckDB file (default: $JURYBENCH_DB or ./jurybench.duckdb).")]


def command_of(stat: Any) -> Callable[..., None]:
    """The 'jurybench stats NAME' command of a registered statistic: its CLI parameters as options,
    then --format and --db."""

    def command(**values: Any) -> None:
        from jurybench import commands

        fmt, db = values.pop("fmt"), values.pop("db")
        arguments = from_cli(stat.parameters, values)  # by parameter: drift's --from is other_run
        _done(commands.statistic(db, stat.name, format=fmt, face="cli", **arguments))

    from jurybench.declare import cli_options, from_cli

    options = [typer_parameter(o) for o in cli_options(stat.parameters)]
    options += [
        inspect.Parameter("fmt", inspect.Parameter.KEYWORD_ONLY, default="table", annotation=Fmt),
        inspect.Parameter("db", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Db),
    ]
    command.__signature__ = inspect.Signature(options)  # type: ignore[attr-defined]
    command.__doc__ = stat.help.replace("``", "")
    command.__name__ = stat.name.replace("-", "_")
    return command


def add_statistics() -> None:
    """One command per registered statistic (built-in or a plug-in's), and `stats results`; once."""
    from jurybench.stats import statistics

    if stats_app.registered_commands:
        return
    for name, stat in statistics().items():
        stats_app.command(name)(command_of(stat))
    stats_app.command("results")(results)


def results(name: Annotated[str | None, typer.Option(help="Only this statistic.")] = None, db: Db = None) -> None:
    """Recorded statistics: id, name, run, seed, parameters, time."""
    from jurybench.stats import result_rows

    for r in result_rows(db, name=name):
        typer.echo("\t".join("" if v is None else str(v) for v in r))


def plot(
    name: Annotated[str, typer.Argument(help="directional, gap, posthoc, cohens-d, disparity, leaderboard or bias.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The .png or .svg to write.")],
    result_id: Annotated[
        str | None, typer.Option("--result", help="A stored stats_results id (default: the latest of that statistic).")
    ] = None,
    alpha: Annotated[float, typer.Option(help="Significance level for colouring.")] = 0.05,
    db: Db = None,
) -> None:
    """Plot a recorded statistic (.png/.svg): directional, gap, posthoc (friedman or gap p-values), cohens-d,
    disparity, leaderboard, bias (a panel per juror)."""
    from jurybench import commands

    _done(commands.plot(db, name=name, output=output, result=result_id, alpha=alpha))
