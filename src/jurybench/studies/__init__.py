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


Internal: this stage's interface to the others, not a public API (docs/architecture.md, "What is public")."""

from __future__ import annotations

import shlex
import typing
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurybench.commands import COMMANDS
from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from collections.abc import Callable

    from jurybench.commands import Command, Option

SHIPPED = ("persuasion", "inventory", "culture", "emotion")


@dataclass(frozen=True)
class Step:
    """One step: the command, its options as the file gives them (placeholders filled), the
    command line it prints as, and where it is in the file (for messages)."""

    command: str
    args: list[str]
    where: str = ""
    options: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        return "jurybench " + " ".join(shlex.quote(a) for a in [*self.command.split(), *self.args])


def shipped_dir() -> Path:
    return Path(str(resources.files("jurybench") / "studies" / "files"))


def shipped_study(name: str) -> Path:
    if name not in SHIPPED:
        raise JurybenchError(f"no shipped study '{name}'.", hint=f"Valid: {', '.join(SHIPPED)}.")
    return shipped_dir() / name / "study.yaml"


def _option(key: str, value: object, where: str) -> list[str]:
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


def load_steps(
    path: Path,
    out: Path,
    db: Path,
    *,
    jurors: list[str] | None = None,
    add_jurors: list[str] | None = None,
    limit: int | None = None,
) -> tuple[str, list[Step]]:
    """The study's name and its steps as command lines, with placeholders filled in and --db added.
    ``jurors`` replace every score step's jurors (the models to audit instead of the simulated
    ones); ``add_jurors`` join them (a real judge beside simulated jurors); ``limit``: every
    score step judges that many of its subjects, drawn at random (a first try)."""
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
        if options is not None and not isinstance(options, dict):
            raise JurybenchError(
                f"{where}: the options of '{command}' must be a mapping, e.g. '{command}: {{run: r}}'."
            )
        given: dict[str, object] = {}
        for key, value in dict(options or {}).items():
            filled = [fill(str(v)) for v in value] if isinstance(value, list) else value
            given[str(key)] = fill(filled) if isinstance(filled, str) else filled
        if command == "score" and (jurors or add_jurors):
            present = given.get("juror") or []
            present = [str(j) for j in (present if isinstance(present, list) else [present])]
            given["juror"] = list(jurors) if jurors else [*present, *(add_jurors or [])]
        if command == "score" and limit is not None and "until" not in given:
            given["limit"] = limit
        positional = given.pop("_", [])
        positional = [str(p) for p in (positional if isinstance(positional, list) else [positional])]
        args = list(positional)
        for key, value in given.items():
            args += _option(key, value, where)
        step_db = given.pop("db", None) if command == "sql" else None
        given["db"] = step_db if step_db is not None else str(db)
        args += [] if step_db is not None else ["--db", str(db)]
        if positional:
            given["_"] = positional
        steps.append(Step(command, args, where, given))
    return str(data.get("name") or path.parent.name), steps


def _close_matches(flag: str, flags: list[str]) -> str:
    import difflib

    close = sorted(difflib.get_close_matches(flag, flags))
    if len(close) == 1:
        return f" Did you mean {close[0]}?"
    return f" (Possible options: {', '.join(close)})" if close else ""


def _value(option: Option, value: object) -> object:
    """A step's value checked against the option's type, converted as the command line would."""
    from pydantic import TypeAdapter, ValidationError

    annotation = option.annotation
    kinds = {typing.get_origin(a) or a for a in (typing.get_args(annotation) or (annotation,))}
    many = bool(kinds & {list, tuple}) or typing.get_origin(annotation) in (list, tuple)
    if many and not isinstance(value, list) and not (tuple in kinds and str in kinds):
        value = [value]
    if isinstance(value, list) and not many:
        raise JurybenchError(f"Option '{option.flag_name}' takes one value, not a list.")
    try:
        return TypeAdapter(annotation).validate_python(value)
    except ValidationError as exc:
        reason = exc.errors()[0]["msg"]
        raise JurybenchError(
            f"Invalid value for '{option.flag_name}': {value!r} ({reason[0].lower() + reason[1:]})."
        ) from None


def check_step(step: Step) -> tuple[Command, dict[str, object]]:
    """The step's command and its arguments, every option checked as the command line checks
    them: a misspelt option, a missing one or a bad value is one line naming the step."""
    from jurybench.commands import command

    found = command(step.command)
    if found is None:
        raise JurybenchError(
            f"{step.where}: '{step.command}' is not a jurybench command.", hint="See 'jurybench stats --help'."
        )
    options = found.options()
    given = dict(step.options)
    db = given.pop("db", None)
    try:
        positional = given.pop("_", [])
        if positional:
            if found.positional is None or len(positional) > 1:
                raise JurybenchError(f"Got unexpected extra argument ({' '.join(positional)}).")
            given[found.positional] = positional[0]
        values: dict[str, object] = {}
        for key, value in given.items():
            name = key.replace("-", "_")
            if name not in options:
                flag = "--" + key.replace("_", "-")
                raise JurybenchError(
                    f"No such option: {flag}" + _close_matches(flag, sorted(o.flag_name for o in options.values()))
                )
            values[name] = _value(options[name], value)
        for name, option in options.items():
            if option.required and name not in values:
                what = f"argument '{name.upper()}'" if name == found.positional else f"option '{option.flag_name}'"
                raise JurybenchError(f"Missing {what}.")
        _check_domains(values, options)
        _check_jurors(values)
    except JurybenchError as exc:
        raise JurybenchError(f"{step.where} ('{step.command}'): {exc.message}", hint=exc.hint) from None
    return found, {"db": Path(db) if db is not None else None, **values}


# Numeric options whose range the command line states (typer's min=): a study's values are
# held to the same before step 1 runs. A declared command (score, generate) states its own
# (``at_least`` in jurybench.declare).
_AT_LEAST = {
    "boot": 0,
    "concurrency": 1,
    "samples": 1,
    "folds": 2,
    "retries": 0,
    "test_size": 0.0,
    "quorum": 1,
    "alpha": 0.0,
    "power": 0.0,
}


def _check_domains(values: dict[str, object], options: dict[str, Option]) -> None:
    bounds = {**_AT_LEAST, **{name: o.at_least for name, o in options.items() if o.at_least is not None}}
    for name, low in bounds.items():
        value = values.get(name)
        if value is None or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if value < low:
            flag = "--" + name.replace("_", "-")
            raise JurybenchError(f"Invalid value for '{flag}': {value!r} is below {low:g}.")


def _check_jurors(values: dict[str, Any]) -> None:
    """Juror strings parsed and their parameters checked as score checks them (seed=abc or a
    misspelt temperature fail here, not after the steps before them have written)."""
    jurors = values.get("juror") or []
    if not jurors:
        return
    from jurybench.engine import validate_jurors
    from jurybench.jurors import parse_juror
    from jurybench.rubric import load_rubric

    specs = [parse_juror(str(text)) for text in jurors]
    try:
        rubric = load_rubric(str(values["rubric"])) if values.get("rubric") else None
    except JurybenchError:  # a rubric an earlier step makes: the step itself checks it
        rubric = None
    if rubric is not None:
        validate_jurors(rubric, specs, need_keys=False)


def check_steps(steps: list[Step]) -> list[tuple[Command, dict[str, object]]]:
    """Every step checked before the first one runs (nothing is written when one is wrong)."""
    return [check_step(step) for step in steps]


def run_study(
    path: Path,
    out: Path,
    db: Path,
    *,
    echo: Callable[[str], object] = print,
    jurors: list[str] | None = None,
    add_jurors: list[str] | None = None,
    limit: int | None = None,
) -> int:
    """Check every step, then run them in order, each as the library call its command makes;
    stops at the first failing step and returns its exit code. ``jurors`` / ``add_jurors`` /
    ``limit``: as in :func:`load_steps`."""
    name, steps = load_steps(path, out, db, jurors=jurors, add_jurors=add_jurors, limit=limit)
    checked = check_steps(steps)
    out.mkdir(parents=True, exist_ok=True)
    echo(f"== study {name}: {len(steps)} steps, store {db}, output {out}")
    for step, (found, values) in zip(steps, checked, strict=True):
        echo(f"$ {step.line()}")
        arguments = dict(values)
        try:
            code = int(found.run(arguments.pop("db"), arguments))
        except JurybenchError as exc:
            raise JurybenchError(f"study {name}, '{step.command}': {exc.message}", hint=exc.hint) from None
        if code:
            echo(f"study {name}: step '{step.command}' exited with {code}; later steps were not run.")
            return code
    return 0
