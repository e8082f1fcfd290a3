"""Study files: a whole audit (generate or import, judge, analyse, plot) as one YAML file.

A study file has a ``name``, an optional ``generation`` section (a generation spec, read by
``jurybench generate <study file>``) and ``steps``: each step is one jurybench command with
its options, run in order against one store, and printed as the command line it is, so a
study is exactly what a user could type. Values may use ``{study}`` (the study file's
folder), ``{study_file}`` and ``{out}`` (the output folder). Copy a shipped study
(``jurybench demo --copy NAME DIR``), point its models and jurors at real providers, and
run it with ``jurybench study run FILE``.

.. code-block:: yaml

    steps:
      - generate: {spec: "{study_file}", run: letters}
      - score: {rubric: persuasion, run: judged, juror: [sim/a, sim/b]}
      - stats directional: {run: judged, by: model_a}
      - plot directional: {output: "{out}/directional.png"}

An option set to ``true`` is a flag (``--progress``), ``false`` its negation
(``--no-progress``), a list a repeated option.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from jurybench.errors import JurybenchError

SHIPPED = ("persuasion", "inventory", "culture", "emotion")
# Commands a study step may run (the ones that work on a store; not 'study' or 'demo' themselves).
COMMANDS = frozenset(
    {
        "generate", "score", "sql", "items import", "pairs import", "annotations import", "annotations simulate",
        "baselines import", "calibrate", "calibrate apply", "agreement", "report preference",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Step:
    command: str
    args: list[str]
    where: str = ""

    def line(self) -> str:
        return "jurybench " + " ".join(shlex.quote(a) for a in [*self.command.split(), *self.args])


def shipped_dir() -> Path:
    return Path(str(resources.files("jurybench") / "studies" / "files"))


def shipped_study(name: str) -> Path:
    if name not in SHIPPED:
        raise JurybenchError(f"no shipped study '{name}'.", hint=f"Valid: {', '.join(SHIPPED)}.")
    return shipped_dir() / name / "study.yaml"


def _option(key: str, value: Any, where: str) -> list[str]:
    flag = "--" + key.replace("_", "-")
    if value is True:
        return [flag]
    if value is False:
        return ["--no-" + key.replace("_", "-")]
    if isinstance(value, list):
        return [part for v in value for part in (flag, str(v))]
    if isinstance(value, dict):
        raise JurybenchError(f"{where}: option '{key}' must be a value or a list, not a mapping.")
    return [flag, str(value)]


def load_steps(path: Path, out: Path, db: Path) -> tuple[str, list[Step]]:
    """The study's name and its steps as command lines, with placeholders filled in and --db added."""
    from jurybench.rubric import read_yaml

    if not path.is_file():
        raise JurybenchError(f"{path}: no such file.")
    data, _ = read_yaml(path.read_text(encoding="utf-8"), str(path))
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list) or not data["steps"]:
        raise JurybenchError(f"{path}: a study file needs 'steps', a list of commands (see docs/studies.md).")
    unknown = sorted(set(data) - {"name", "description", "generation", "steps"})
    if unknown:
        raise JurybenchError(
            f"{path}: unknown key '{unknown[0]}'.", hint="Valid: name, description, generation, steps."
        )
    values = {"study": str(path.parent), "study_file": str(path), "out": str(out)}

    def fill(text: str) -> str:
        for key, value in values.items():
            text = text.replace("{" + key + "}", value)
        return text

    steps = []
    for number, entry in enumerate(data["steps"], start=1):
        where = f"{path} step {number}"
        if not isinstance(entry, dict) or len(entry) != 1:
            raise JurybenchError(f"{where}: a step is one command mapped to its options, e.g. 'score: {{...}}'.")
        command, options = next(iter(entry.items()))
        command = str(command)
        if command not in COMMANDS and not command.startswith(("stats ", "plot ")):
            raise JurybenchError(
                f"{where}: '{command}' is not a command a study can run.",
                hint=f"Valid: {', '.join(sorted(COMMANDS))}, stats <name>, plot <name>.",
            )
        options = dict(options or {})
        positional = options.pop("_", [])
        args = [fill(str(p)) for p in (positional if isinstance(positional, list) else [positional])]
        for key, value in options.items():
            filled = [fill(str(v)) for v in value] if isinstance(value, list) else value
            args += _option(str(key), fill(filled) if isinstance(filled, str) else filled, where)
        if command != "sql" or "--db" not in args:
            args += ["--db", str(db)]
        steps.append(Step(command, args, where))
    return str(data.get("name") or path.parent.name), steps


def check_steps(steps: list[Step], app: Any) -> None:
    """Parse every step's command line as the CLI would, without running it: a misspelt
    option, a missing one or a bad value in any step stops the study before its first step
    writes anything (one line naming the step and the option)."""
    import typer.main

    from jurybench.cli import click_exceptions, usage_line

    usage, _ = click_exceptions()
    root = typer.main.get_command(app)
    for step in steps:
        words = step.command.split()
        command: Any = root
        with root.make_context("jurybench", list(words), resilient_parsing=True) as ctx:
            while words and hasattr(command, "get_command"):  # groups: 'stats directional'
                command = command.get_command(ctx, words.pop(0))
                if command is None:  # a 'stats' name that does not exist
                    raise JurybenchError(f"{step.where}: '{step.command}' is not a jurybench command.",
                                         hint="See 'jurybench stats --help'.")  # fmt: skip
        try:  # what is left of the words are arguments ('plot directional')
            command.make_context(f"jurybench {step.command}", [*words, *step.args]).close()
        except usage as exc:
            raise JurybenchError(f"{step.where} ('{step.command}'): {usage_line(exc)}") from None


def run_study(path: Path, out: Path, db: Path, *, echo: Any = print) -> int:
    """Check every step, then run them in order; stops at the first failing step and returns
    its exit code."""
    from jurybench.cli import app

    name, steps = load_steps(path, out, db)
    check_steps(steps, app)
    out.mkdir(parents=True, exist_ok=True)
    echo(f"== study {name}: {len(steps)} steps, store {db}, output {out}")
    for step in steps:
        echo(f"$ {step.line()}")
        try:
            code = app([*step.command.split(), *step.args], standalone_mode=False)
        except SystemExit as exc:  # typer.Exit inside a command
            code = exc.code if isinstance(exc.code, int) else 1
        except JurybenchError as exc:
            raise JurybenchError(f"study {name}, '{step.command}': {exc.message}", hint=exc.hint) from None
        if isinstance(code, int) and code:
            echo(f"study {name}: step '{step.command}' exited with {code}; later steps were not run.")
            return code
    return 0
