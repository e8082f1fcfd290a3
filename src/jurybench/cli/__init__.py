"""The command line: each command opens the store and calls one library function.

Heavy modules (litellm, pandas, duckdb, scipy) are imported inside commands so
``jurybench --help`` starts fast. One module per command group; importing them registers
their commands on the app.


Internal: this stage's interface to the others, not a public API (docs/architecture.md, "What is public")."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from jurybench.cli._common import app, click_exceptions, usage_line, usage_text
from jurybench.commands import preference_rows
from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from signal import _HANDLER  # typeshed's name for what signal.signal returns
    from types import FrameType

# Importing a command module registers its commands; --help lists them in this order.
for _module in (
    "_score",
    "_generate",
    "_batches",
    "_check",
    "_store",
    "_rubrics",
    "_datasets",
    "_annotations",
    "_calibrate",
    "_report",
    "_export",
    "_serve",
    "_study",
    "_view",
    "_project",
):
    importlib.import_module(f"jurybench.cli.{_module}")


__all__ = ["app", "main", "preference_rows"]


def _register_stats() -> None:
    from jurybench.cli._stats import plot, stats_app

    app.add_typer(stats_app, name="stats")
    app.command("plot")(plot)


def _sigterm_as_interrupt() -> _HANDLER:
    """SIGTERM ends a command like Ctrl-C from the start (the engine keeps its own handler while
    it runs): stored work is kept and the exit is 130, whenever the signal comes. Returns the
    handler it replaced (None off the main thread, where signals are the host's)."""
    import signal

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    try:
        return signal.signal(signal.SIGTERM, interrupt)
    except ValueError:
        return None


def unexpected_line(exc: BaseException) -> str:
    """An error nobody planned for, as one line: what happened and how to see where (the
    traceback is for JURYBENCH_DEBUG=1, never shown by default)."""
    from jurybench.errors import resource_problem
    from jurybench.redact import redact

    first = (str(exc).strip().splitlines() or [""])[0]
    name = type(exc).__name__
    problem = resource_problem(exc)
    if problem is not None:
        return redact(problem)
    return (
        f"unexpected {name}: {redact(first)} (a jurybench bug; run again with JURYBENCH_DEBUG=1 to see where, "
        "and report it)."
    )


# Commands that serve until stopped: Ctrl-C (or SIGTERM) is how they end, not an interruption.
SERVING = frozenset({"view", "serve"})
# Commands whose work resumes when run again (answers stored as they come).
RESUMABLE = frozenset({"score", "generate", "study", "demo"})


def interrupted_line(argv: list[str]) -> str:
    """What Ctrl-C prints, by the command it stopped: a server says it stopped; a run says its
    answers are kept and how to resume; anything else that it was interrupted."""
    command = next((a for a in argv if not a.startswith("-")), "")
    if command in SERVING:
        return "stopped."
    if command in RESUMABLE:
        return "interrupted: judgments answered so far are stored; run again to resume."
    return "interrupted."


def _store_named(args: list[str]) -> Path | None:
    """The store a command names (``--db PATH``, ``--db=PATH``, else JURYBENCH_DB or the default),
    for commands that take --db; None for the others."""
    from jurybench.config import db_path

    for k, arg in enumerate(args):
        if arg == "--db" and k + 1 < len(args):
            return Path(args[k + 1])
        if arg.startswith("--db="):
            return Path(arg[5:])
    if not args or args[0] in ("init", "serve", "view", "--help", "--version") or "--help" in args:
        return None
    return db_path(None)


def _remove_if_empty(store: Path) -> None:
    """Remove a store file a refused command made, when it holds nothing but its schema."""
    import contextlib
    import shutil

    if not store.is_file():
        return
    try:
        import duckdb

        with duckdb.connect(str(store), read_only=True) as con:
            tables = [
                r[0]
                for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'").fetchall()
            ]
            held = any(
                con.execute(f'SELECT 1 FROM "{t}" LIMIT 1').fetchone() is not None for t in tables if t != "migrations"
            )
    except Exception:  # not a store this command can read: left as it is
        return
    if held:
        return
    with contextlib.suppress(OSError):
        store.unlink()
        Path(f"{store}.wal").unlink(missing_ok=True)
        journal = Path(f"{store}.journal")
        if journal.is_dir() and not any(journal.iterdir()):
            shutil.rmtree(journal)


def main() -> None:
    """Entry point: one line and exit 2 for user errors and usage mistakes, 130 on Ctrl-C."""
    from jurybench.redact import install_log_redaction, redact

    install_log_redaction()
    if not os.environ.get("JURYBENCH_DEBUG"):
        import warnings

        # The numeric libraries' warnings (a division by zero inside a statistic, an overflow in a
        # matrix product) are not a user's to read: each statistic says in its own words what it
        # could not estimate. JURYBENCH_DEBUG=1 shows them.
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"(numpy|scipy|pandas|statsmodels)(\.|$)")
        warnings.filterwarnings(
            "ignore",
            message=r"(invalid value|divide by zero|overflow|underflow) encountered|Mean of empty slice|Degrees of freedom",
            category=RuntimeWarning,
        )
    previous = _sigterm_as_interrupt()
    try:
        from jurybench.config import load_env_file

        load_env_file()  # ./.env: provider keys and settings, the environment's own first
        from jurybench.cli._project import project_defaults, project_file

        project, args = project_file(sys.argv[1:])  # ./jurybench.yaml, or --config FILE first
        default_map, db = project_defaults(project) if project is not None else ({}, None)
        if project is not None and db and "JURYBENCH_DB" not in os.environ:  # --db and JURYBENCH_DB win
            os.environ["JURYBENCH_DB"] = str(project.parent / db)
        # Without standalone mode typer returns exit codes instead of exiting; it turns
        # Ctrl-C (and SIGTERM, which the engine maps to it) into 130.
        store = _store_named(args)
        fresh = store is not None and not store.exists()  # a store this command would create
        try:
            code = app(args=args, standalone_mode=False, default_map=default_map)
        except JurybenchError as exc:
            if fresh and store is not None and exc.exit_code == 2:
                _remove_if_empty(store)  # refused input: nothing written means no new file either
            raise
        if code == 130:
            raise KeyboardInterrupt
        if isinstance(code, int) and code:
            sys.exit(code)
    except JurybenchError as exc:
        typer.echo(f"error: {redact(str(exc))}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        typer.echo(interrupted_line(sys.argv[1:]), err=True)
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("aborted", err=True)
        sys.exit(130)
    except Exception as exc:
        usage, other = click_exceptions()
        if type(exc).__name__ == "NoArgsIsHelpError" and isinstance(exc, usage):
            # A bare command group: its help is the answer (exit 2, as click does).
            typer.echo(usage_text(exc), err=True)
            sys.exit(2)
        if isinstance(exc, usage):
            typer.echo(f"error: {usage_line(exc)}", err=True)
            sys.exit(2)
        if isinstance(exc, other):
            typer.echo(f"error: {redact(' '.join(str(exc).split()))}", err=True)
            sys.exit(int(getattr(exc, "exit_code", 1) or 1))
        if os.environ.get("JURYBENCH_DEBUG"):
            raise
        typer.echo(f"error: {unexpected_line(exc)}", err=True)
        sys.exit(1)
    finally:
        if previous is not None:
            import signal

            signal.signal(signal.SIGTERM, previous)


_register_stats()
