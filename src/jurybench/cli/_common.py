"""The command line's app, its command groups, the options commands share, and output helpers."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from collections.abc import Callable

    from duckdb import DuckDBPyConnection as Connection
    from rich.console import Console

    from jurybench.declare import Option

app = typer.Typer(
    rich_markup_mode=None,
    name="jurybench",
    help="Judge generations with a jury of LLMs, keep every judgment in DuckDB, query it with SQL.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _everywhere(
    wide: Annotated[
        bool,
        typer.Option(
            "--wide",
            help="Tables as wide as their values (by default a table fits the terminal with nothing cut: text "
            "wraps between words, and a table still too wide is folded into blocks of columns; also "
            "JURYBENCH_WIDE=1).",
        ),
    ] = False,
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="The project file to read defaults from (default: ./jurybench.yaml, or JURYBENCH_CONFIG; "
            "jurybench init writes one). Given before the command.",
        ),
    ] = None,
) -> None:
    # --config is read before the command line is parsed (cli/_project.py: its defaults feed
    # every command's options); it is declared here so that --help lists it.
    from jurybench.commands import set_wide

    set_wide(wide)


def command_group(name: str, help: str, **options: Any) -> typer.Typer:
    """The command group ``jurybench NAME``, made and added to the command line (in the order of
    the calls: ``jurybench --help`` lists them so)."""
    group = typer.Typer(rich_markup_mode=None, help=help, **{"no_args_is_help": True, **options})
    app.add_typer(group, name=name)
    return group


items_app = command_group("items", "Import generations to be judged.")
pairs_app = command_group("pairs", "Import pairs of items for pairwise rubrics.")
rubrics_app = command_group("rubrics", "List, show, check and compare rubrics (files, and versions in the store).")
app.add_typer(rubrics_app, name="rubric", hidden=True)  # 'jurybench rubric diff' reads as well
datasets_app = command_group("datasets", "Import reference datasets (LLMBar) and the offline example set.")
report_app = command_group(
    "report",
    "Reports over stored judgments: a preference run's accuracy against human labels (preference), "
    "a run as one self-contained HTML file (html).",
)
recordings_app = command_group("recordings", "Recorded completions served by replay/<source> jurors.")
annotations_app = command_group("annotations", "Import human annotations.")
judgments_app = command_group("judgments", "Judgments made elsewhere (a model's or a person's), imported as a run.")
calibrate_app = command_group(
    "calibrate",
    "Fit juror weights against human labels (jurybench calibrate --run R), or apply a calibration.",
    no_args_is_help=False,
    invoke_without_command=True,
)
jury_app = command_group("jury", "Juries: choose the cheapest sub-jury of a pilot run that is good enough.")
anchors_app = command_group(
    "anchors", "Anchors: subjects of a run that later runs judge again, so stats drift can tell the judge's shift."
)

DbOption = Annotated[
    Path | None,
    typer.Option("--db", help="DuckDB file (default: $JURYBENCH_DB or ./jurybench.duckdb)."),
]
FormatOption = Annotated[str, typer.Option("--format", "-f", help="table, csv, json or parquet.")]
TableJsonOption = Annotated[str, typer.Option("--format", "-f", help="table or json.")]
TableCsvJsonOption = Annotated[str, typer.Option("--format", "-f", help="table, csv or json.")]
TableJsonJunitOption = Annotated[
    str, typer.Option("--format", "-f", help="table, json or junit (JUnit XML for CI reports: one test per criterion).")
]
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


def _console() -> Console:
    from jurybench.commands import console

    return console()


def _connect(db: Path | None, *, read_only: bool = False) -> Connection:
    from jurybench.store import connect

    return connect(db, read_only=read_only)


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
    if type(exc).__name__ == "NoSuchOption" and ctx is not None:  # every option the command takes
        flags = [
            o for p in ctx.command.params for o in (*p.opts, *getattr(p, "secondary_opts", [])) if o.startswith("--")
        ]
        valid = [f for f in flags if f != "--help"]
        if valid:
            message += f" Valid options: {', '.join(valid)}."
    return f"{message} See '{command} --help'."


def _done(code: int) -> None:
    """End a command with the exit code its function returned (0 ends normally)."""
    if code:
        raise typer.Exit(code)


def is_loopback(host: str, ipaddress: Any) -> bool:
    """Whether ``host`` is a loopback address (``ipaddress``: the module, imported by the caller)."""
    try:
        return bool(ipaddress.ip_address(host).is_loopback)
    except ValueError:
        return False


def typer_parameter(option: Option) -> inspect.Parameter:
    """A declared command-line option (``jurybench.declare``) as a typer parameter."""
    if option.argument:
        marker: Any = typer.Argument(help=option.help)
    else:
        names = [option.flag_name] if option.flag or option.short or option.name.endswith("_") else []
        if option.switch:
            names = [f"{option.flag_name}/--no-{option.name.replace('_', '-')}"]
        names += [option.short] if option.short else []
        # Bounds are checked from the declaration (declare.check_bounds): one message on every face.
        marker = typer.Option(*names, help=option.help)
    return inspect.Parameter(
        option.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=inspect.Parameter.empty if option.required else option.default,
        annotation=Annotated[option.annotation, marker],
    )


def format_option(default: str = "table", *, junit: bool = False) -> inspect.Parameter:
    """The printer's ``--format/-f`` (table or json; ``junit`` too for a CI gate) as a declared
    command's extra option: how the command line shows a result, not what the command computes."""
    annotation = TableJsonJunitOption if junit else TableJsonOption
    return inspect.Parameter("format", inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def declared_command(
    function: Callable[..., object],
    run: Callable[..., int],
    *,
    doc: str,
    extra: tuple[inspect.Parameter, ...] = (),
    group: bool = False,
) -> Callable[..., None]:
    """A typer command whose options are the command-line face of a declared function
    (``jurybench.declare``): ``run(db, **option values)`` does the work; ``extra`` options (the
    printer's ``--format``) come last, before ``--db``. ``group``: the callback of a command
    group (``calibrate`` beside ``calibrate apply``), which runs when no subcommand is named and
    shows the group's help when a parameter Python requires is not given."""
    from jurybench.declare import cli_options, parameters_of

    declared = parameters_of(function)
    options = cli_options(declared)
    needed = [p.meaning.cli_name or p.name for p in declared if p.required and "cli" in p.meaning.faces]

    def command(**values: object) -> None:
        db = values.pop("db", None)
        _done(run(db, **values))

    def callback(ctx: typer.Context, **values: object) -> None:
        if ctx.invoked_subcommand is not None:
            return
        if any(values.get(name) is None for name in needed):
            typer.echo(ctx.get_help())
            raise typer.Exit(0)
        command(**values)

    db = inspect.Parameter("db", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=DbOption)
    parameters = [*map(typer_parameter, options), *extra, db]
    if group:
        context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)
        callback.__signature__ = inspect.Signature([context, *parameters])  # type: ignore[attr-defined]
        callback.__doc__, callback.__name__ = doc, getattr(function, "__name__", "command")
        return callback
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__doc__ = doc
    command.__name__ = getattr(function, "__name__", "command")
    return command
