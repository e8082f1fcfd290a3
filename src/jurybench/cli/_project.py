"""The project file (``jurybench.yaml``): the store, and defaults for any command's options, read
from the working folder (or ``jurybench --config FILE ...``, or ``JURYBENCH_CONFIG``) when the
command line starts; ``jurybench init`` writes a commented one.

Precedence, highest first: an option on the command line; an environment variable the option
reads (``JURYBENCH_DB``); the project file; the built-in default."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from jurybench.cli._common import app
from jurybench.errors import JurybenchError

PROJECT_FILE = "jurybench.yaml"

TEMPLATE = """\
# jurybench project file: read from the folder you run jurybench in (or --config FILE).
# Anything on the command line wins over what is here; JURYBENCH_DB wins over db.

# The store every command uses unless --db names another.
db: evals.duckdb

# Defaults for any command's options, by command (as on the command line, with - or _):
defaults:
  score:
    rubric: correctness          # a shipped rubric, a name in ./rubrics, or a path
    juror:                       # the jury: repeatable --juror
      - openai/gpt-4o-mini,temperature=0
      - anthropic/claude-haiku-4-5,temperature=0
    where: "true"                # which items: a SQL predicate
    max_cost: 5                  # USD for a run
  check:
    min: ["correctness>=4"]      # the gate CI runs: jurybench check --run RUN
  # stats ppi:                   # a subcommand: the group and its command, as typed
  #   alpha: 0.05

# Provider keys go in .env beside this file (OPENAI_API_KEY=...), never here.
"""


def _command_tree() -> Any:
    import typer.main

    return typer.main.get_command(app)


def _find(group: Any, words: list[str], source: str, key: str) -> Any:
    """The click command ``words`` names (``stats ppi``), or one line naming the valid ones."""
    command = group

    def children(group: Any) -> dict[str, Any]:
        # list_commands/get_command, not .commands: the stats group makes its commands when first
        # asked (cli/_stats.py), so .commands is empty until then
        if not hasattr(group, "list_commands"):
            return {}
        return {name: group.get_command(None, name) for name in group.list_commands(None)}

    for word in words:
        named = children(command)
        if word not in named:
            valid = ", ".join(sorted(n for n, c in named.items() if not getattr(c, "hidden", False)))
            raise JurybenchError(
                f"{source}, defaults: {key!r} is not a jurybench command.", hint=f"Valid here: {valid}."
            )
        command = named[word]
    if hasattr(command, "list_commands") and getattr(command, "invoke_without_command", False) is False:
        raise JurybenchError(
            f"{source}, defaults: {key!r} is a group of commands; name one of them.",
            hint=f"e.g. {key} {next(iter(sorted(children(command))))}",
        )
    return command


def project_defaults(path: Path) -> tuple[dict[str, Any], str | None]:
    """The click ``default_map`` the project file gives (command path -> option -> value, every
    name checked against the command's options) and its ``db``."""
    from jurybench.rubric import read_yaml

    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise JurybenchError(f"{source}: cannot read it ({exc.__class__.__name__}).") from None
    data, _ = read_yaml(text, source)
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        raise JurybenchError(f"{source}: a project file is a mapping with db and defaults.", hint="See jurybench init.")
    unknown = sorted(set(data) - {"db", "defaults"})
    if unknown:
        raise JurybenchError(f"{source}: unknown key {unknown[0]!r}.", hint="Valid: db, defaults.")
    db = data.get("db")
    if db is not None and not isinstance(db, str):
        raise JurybenchError(f"{source}, db: a file name, e.g. db: evals.duckdb.")
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise JurybenchError(f"{source}, defaults: a mapping of commands to their options.", hint="See jurybench init.")
    tree = _command_tree()
    default_map: dict[str, Any] = {}
    for key, options in defaults.items():
        words = str(key).split()
        command = _find(tree, words, source, str(key))
        if not isinstance(options, dict):
            raise JurybenchError(f"{source}, defaults.{key}: a mapping of option names to values.")
        names = {p.name: p for p in command.params if p.name}
        flags = {o.lstrip("-").replace("-", "_"): p.name for p in command.params for o in getattr(p, "opts", [])}
        negated = {  # a switch's off form (no-progress: true is progress: false)
            o.lstrip("-").replace("-", "_"): p.name for p in command.params for o in getattr(p, "secondary_opts", [])
        }
        values: dict[str, Any] = {}
        for option, value in options.items():
            wanted = str(option).lstrip("-").replace("-", "_")
            if wanted in negated and isinstance(value, bool):
                wanted, value = str(negated[wanted]), not value
            name = wanted if wanted in names else flags.get(wanted)
            if name is None or name == "db":
                valid = ", ".join(sorted(n.replace("_", "-") for n in names if n not in ("db", "help")))
                raise JurybenchError(
                    f"{source}, defaults.{key}: {option!r} is not an option of 'jurybench {key}'"
                    + (" (the store is the file's db)" if name == "db" else "")
                    + ".",
                    hint=f"Valid: {valid}.",
                )
            if getattr(names[name], "multiple", False) and not isinstance(value, list):
                value = [value]
            values[name] = value
        target = default_map
        for word in words[:-1]:
            target = target.setdefault(word, {})
        target.setdefault(words[-1], {}).update(values)
    return default_map, db


def project_file(argv: list[str]) -> tuple[Path | None, list[str]]:
    """The project file this command line uses, and the arguments without ``--config FILE``
    (given before the command): that file, else ``JURYBENCH_CONFIG`` (empty: none), else
    ``./jurybench.yaml`` when it exists."""
    at = 0
    while at < len(argv) and argv[at].startswith("--") and argv[at] != "--config":
        at += 1  # the options before the command (--wide), in any order with --config
    if at < len(argv) and argv[at] == "--config":
        if at + 1 >= len(argv):
            raise JurybenchError("--config needs a file: jurybench --config FILE COMMAND ...")
        path = Path(argv[at + 1])
        if not path.is_file():
            raise JurybenchError(f"--config {argv[at + 1]}: no such file.", hint="jurybench init writes one.")
        return path, argv[:at] + argv[at + 2 :]
    named = os.environ.get("JURYBENCH_CONFIG")
    if named is not None:
        if named == "":
            return None, argv
        if not Path(named).is_file():
            raise JurybenchError(f"JURYBENCH_CONFIG={named}: no such file.")
        return Path(named), argv
    here = Path(PROJECT_FILE)
    return (here if here.is_file() else None), argv


@app.command()
def init(
    path: Annotated[Path, typer.Argument(help="Where to write it.")] = Path(PROJECT_FILE),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """Write a commented project file (jurybench.yaml): the store, and defaults for any command's
    options (a jury for score, the gate for check). The command line reads it from the working
    folder; every option given on the command line wins over it."""
    if path.exists() and not force:
        raise JurybenchError(f"{path} exists; nothing was written.", hint="Pass --force to overwrite it.")
    path.write_text(TEMPLATE, encoding="utf-8")
    typer.echo(f"wrote {path}: edit the jury and the defaults; keys go in .env")
