"""Parameters declared once, every face derived from them.

A function's parameters, annotated as ``Annotated[type, param(help, ...)]``, are its
declaration: the Python face is the function itself, and the command line's options, the HTTP
body's fields and a study step's options are derived from the same annotations. Statistics
(``jurybench.stats``) and ``score`` / ``generate`` (``jurybench.api``) are declared this way.

What a face needs beyond the Python type is said in :class:`Param`: where the parameter is
offered (``faces``), its help, its type, name or default where a face differs (``cli_type``,
``cli_name``, ``cli_default``, ``http_type``), bounds (``at_least``; ``http`` for pydantic
``Field`` bounds), choices, and how the command line spells it when it takes more than one
option (``cli_with``, joined by ``from_cli``).

This module imports nothing heavy: the CLI builds its commands from it before anything runs.
"""

from __future__ import annotations

import inspect
import math
import operator
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from jurybench.errors import JurybenchError

FACES = frozenset({"cli", "http", "python"})
SAME: object = inspect.Parameter.empty  # 'as in Python' (a face's default or type left unsaid)


class CliOption(NamedTuple):
    """A command-line option that spells part of a parameter (the CLI's ``--juror`` beside
    ``--jury``): its name as a Python identifier, type, help, short flag and default."""

    name: str
    annotation: object
    help: str
    short: str | None = None
    default: object = None


@dataclass(frozen=True)
class Param:
    """What a parameter means to its users.

    ``faces``: where it is offered (a file is the CLI's and Python's; the same data inline is
    HTTP's and Python's). ``required_in``: faces where it must be given although Python has a
    default (kendall's ``--baseline-file`` on the CLI). ``choices``: its valid values (checked
    on every face before anything is read). ``pair``: two values, 'a,b' (or a pair in Python).
    ``http``: pydantic ``Field`` bounds for the HTTP body (``max_length``, ``ge``, ...);
    ``http_type``: its type there when it differs. ``flag``: a CLI switch (``--weighted``) with
    no ``--no-`` form; ``switch``: a CLI ``--NAME/--no-NAME`` pair. ``cli_type``, ``cli_name``,
    ``cli_default``: its type, option name and default on the CLI when they differ; ``short``:
    its short flag; ``argument``: the CLI takes it as a positional argument. ``at_least``: the
    smallest valid number (the CLI's ``min=``; a study step is held to it). ``cli_with``: more
    CLI options that spell it (before its own), joined into the Python value by ``from_cli``.
    ``record``: how its value is written to ``stats_results.params`` (default: a pair as 'a,b',
    others as given). ``http_only``: bounds the HTTP body alone holds a request to, beside
    ``http``'s, which every face keeps: a server's caps on the work one request asks for (at most
    50 folds), or bounds the library checks itself, in words of its own, on the other faces.
    ``http_each``: pydantic bounds on each element of a list in the HTTP body (each name at most
    128 characters). ``number``: the kind of number a numeric parameter is (:data:`NUMBERS`: a
    seed, an alpha, a count, ...), whose bounds every face keeps beside ``http``'s; every int or
    float parameter names one. ``special``: values its help documents beyond those bounds (a
    negative rate meaning "keep all"), accepted on every face. ``http_name``: its field's name in the HTTP body when it differs (a file on
    the command line, ``labels`` inline), and ``http_help`` its description there. An ``http_type`` given as ``"module:name"`` is imported
    when the body is made, not when the declaration is read (the command line's start stays cheap).
    """

    help: str
    faces: frozenset[str] = FACES
    required_in: frozenset[str] = frozenset()
    choices: tuple[str, ...] | None = None
    pair: bool = False
    http: dict[str, Any] = field(default_factory=dict)
    http_type: object = None
    flag: bool = False
    switch: bool = False
    cli_type: object = None
    cli_name: str | None = None
    cli_default: object = SAME
    short: str | None = None
    argument: bool = False
    at_least: float | None = None
    cli_with: tuple[CliOption, ...] = ()
    from_cli: Callable[..., object] | None = None
    record: Callable[[object], object] | None = None
    http_only: dict[str, Any] = field(default_factory=dict)
    http_each: dict[str, Any] = field(default_factory=dict)
    http_name: str | None = None
    http_help: str | None = None
    number: str | None = None
    special: tuple[float, ...] = ()


def param(help: str, *, faces: str = "cli http python", required_in: str = "", **options: Any) -> Param:
    """A :class:`Param`; ``faces`` and ``required_in`` as space-separated words."""
    return Param(help, faces=frozenset(faces.split()), required_in=frozenset(required_in.split()), **options)


class Parameter(NamedTuple):
    """One declared parameter: its name, Python type, default (``inspect.Parameter.empty``
    when required) and meaning."""

    name: str
    annotation: object
    default: object
    meaning: Param

    @property
    def required(self) -> bool:
        return self.default is inspect.Parameter.empty

    @property
    def flag_name(self) -> str:
        """``--give-up-after`` for ``give_up_after``; a name that would be a Python keyword keeps
        a trailing underscore that the flag drops (``from_`` is ``--from``). Named as the command
        line names it (``cli_name``)."""
        return "--" + (self.meaning.cli_name or self.name).rstrip("_").replace("_", "-")

    def label(self, face: str) -> str:
        """How the parameter is named to the user of ``face``."""
        return self.flag_name if face == "cli" else self.name

    def required_on(self, face: str) -> bool:
        """Whether ``face`` needs it: required in Python (unless the CLI gives a default of its
        own), or required on that face alone."""
        if face == "cli" and self.meaning.cli_default is not SAME:
            return False
        return self.required or face in self.meaning.required_in


NAME_HTTP = {"min_length": 1, "max_length": 256}  # a run's (or a sample's, a model's) name in an HTTP body
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"  # a name the server resolves itself (a shipped rubric)
SHIPPED_NAME = {"pattern": NAME_PATTERN}  # an HTTP body names a rubric the server ships, never a path


def file_or_rows(help: str, *, rows: str, rows_help: str, row_type: str, max_rows: int) -> Param:
    """A parameter that is a file on the command line (its argument ``FILE``) and the same data
    as rows inline in the HTTP body (the field ``rows``, of ``row_type``, "module:name", 1 to
    ``max_rows`` of them); in Python, either (``annotations import``, ``judgments import``)."""
    from pathlib import Path

    return param(
        help,
        argument=True,
        cli_name="file",
        cli_type=Path,
        http_name=rows,
        http_help=rows_help,
        http_type=row_type,
        http_only={"min_length": 1, "max_length": max_rows},
    )


SEED: dict[str, float] = {
    "ge": 0,
    "lt": 2**63,
}  # the bounds of a seed: numpy takes no negative one, the store keeps 64 bits


class Number(NamedTuple):
    """A kind of number a parameter can be: whole or not, the bounds every face keeps, what it
    means, and how a refusal says its bounds when the parameter narrows none (``words``)."""

    whole: bool
    bounds: dict[str, float]
    means: str
    words: str = ""


# Every int or float parameter of a declared function is one of these (``param(number=...)``);
# its own ``http`` bounds may narrow them. A server's own caps (a request's size) go in
# ``http_only``. Alpha stops at 1e-10: below it quantiles and bootstrap percentiles lose meaning
# in double precision (1e-300 gave empty intervals).
NUMBERS: dict[str, Number] = {
    "seed": Number(True, SEED, "a random seed", "a whole number from 0 to 2^63 - 1"),
    "count": Number(True, {"ge": 0}, "a number of things"),
    "alpha": Number(False, {"ge": 1e-10, "lt": 1}, "a test's level or an interval's 1 - level"),
    "share": Number(False, {"ge": 0, "le": 1}, "a proportion or a probability"),
    "dollars": Number(False, {"ge": 0}, "an amount in USD"),
    "seconds": Number(False, {"gt": 0}, "a time"),
    "amount": Number(False, {"ge": 0}, "a size on the score's scale (a gap, a margin, a width)"),
    "value": Number(False, {}, "a value on the score's scale"),
}
_BOUNDS: dict[str, tuple[str, Callable[[Any, Any], bool]]] = {
    "gt": ("greater than", operator.gt),
    "ge": ("at least", operator.ge),
    "lt": ("less than", operator.lt),
    "le": ("at most", operator.le),
}


def number_bounds(meaning: Param) -> dict[str, float]:
    """The bounds every face keeps for a numeric parameter: its kind's, narrowed by its own
    ``http`` bounds and ``at_least``."""
    bounds: dict[str, float] = dict(NUMBERS[meaning.number].bounds) if meaning.number else {}
    for key in _BOUNDS:
        if key in meaning.http:
            given = meaning.http[key]
            kept = bounds.get(key)
            narrower = max if key in ("gt", "ge") else min
            bounds[key] = given if kept is None else narrower(kept, given)
    if meaning.at_least is not None:
        bounds["ge"] = max(bounds.get("ge", meaning.at_least), meaning.at_least)
    return bounds


def check_bounds(p: Parameter, value: object, face: str) -> None:
    """Refuse a number that is not of ``p``'s kind (a whole number for a seed or a count) or lies
    outside the bounds every face keeps (:func:`number_bounds`), or is not finite, in one line
    naming it as ``face`` does (the HTTP body's pydantic model checks the same bounds first,
    answering 422). A value the declaration documents (``special``) passes."""
    from jurybench.errors import JurybenchError

    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if value in p.meaning.special:
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise JurybenchError(f"{p.label(face)} must be a finite number (got {value}).")
    kind = NUMBERS.get(p.meaning.number or "")
    if kind is not None and kind.whole and isinstance(value, float) and not value.is_integer():
        raise JurybenchError(f"{p.label(face)} must be {kind.words or 'a whole number'} (got {value:g}).")
    bounds = number_bounds(p.meaning)
    broken = [k for k, bound in bounds.items() if not _BOUNDS[k][1](value, bound)]
    if broken and kind is not None and kind.words and bounds == kind.bounds:
        raise JurybenchError(f"{p.label(face)} must be {kind.words} (got {_number_text(value)}).")
    if broken:
        wanted = " and ".join(f"{_BOUNDS[k][0]} {_number_text(bound, True)}" for k, bound in bounds.items())
        raise JurybenchError(f"{p.label(face)} must be {wanted} (got {_number_text(value)}).")


def _number_text(value: float, bound: bool = False) -> str:
    """A value (or a ``bound``) as a message shows it: whole numbers in full (a bound of 2^63 as
    such; one of more than 24 digits as %.3g), others as %g."""
    if isinstance(value, int) or (float(value).is_integer() and abs(value) < 1e18):
        whole = int(value)
        if bound and whole == 2**63:
            return "2^63"
        return str(whole) if len(str(abs(whole))) <= 24 else f"{float(whole):.3g}"
    return f"{value:g}"


def plain(annotation: object) -> object:
    """The type inside ``Annotated[...]``."""
    return typing.get_args(annotation)[0] if typing.get_origin(annotation) is typing.Annotated else annotation


def _evaluated(function: Callable[..., object], name: str, annotation: object) -> object:
    """One parameter's annotation as an object. Each is evaluated alone, in the function's
    module: a type imported for type checking only (``if TYPE_CHECKING``) may sit inside
    ``Annotated`` as a string (``Annotated["RubricLike", param(...)]``) and stays a string."""
    if not isinstance(annotation, str):
        return annotation
    try:
        return eval(
            annotation, dict(getattr(inspect.unwrap(function), "__globals__", {}))
        )  # the module's own annotation
    except NameError as exc:
        raise JurybenchError(
            f"parameter {name!r}: its annotation {annotation!r} names {exc.name!r}, which its module does not import "
            "at run time.",
            hint='Import it, or write it as a string inside Annotated: Annotated["Type", param(...)].',
        ) from None


_DECLARED: dict[tuple[object, int], tuple[Parameter, ...]] = {}


def parameters_of(function: Callable[..., object], *, skip: int = 1, owner: str | None = None) -> tuple[Parameter, ...]:
    """The declared parameters of ``function`` after its first ``skip`` (a store, a connection),
    in order; each must be ``Annotated[type, param(...)]`` and named (no ``*args``). Read once
    per function (the CLI, the HTTP body and each call read them)."""
    key = (function, skip)
    found = _DECLARED.get(key)
    if found is None:
        found = _DECLARED[key] = _read_parameters(function, skip, owner)
    return found


def _read_parameters(function: Callable[..., object], skip: int, owner: str | None) -> tuple[Parameter, ...]:
    owner = owner or getattr(function, "__name__", "function")
    found = list(inspect.signature(inspect.unwrap(function)).parameters.values())[skip:]
    out = []
    for p in found:
        if p.kind in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL):
            raise JurybenchError(f"{owner}: name every parameter (no *args or **kwargs).")
        annotation = _evaluated(function, p.name, p.annotation)
        meanings = [m for m in getattr(annotation, "__metadata__", ()) if isinstance(m, Param)]
        if not meanings:
            raise JurybenchError(f"{owner}: parameter {p.name!r} needs Annotated[type, param(help)].")
        kind = plain(annotation)
        if _numeric(kind) and meanings[-1].number not in NUMBERS:
            raise JurybenchError(
                f"{owner}: parameter {p.name!r} is a number; say which kind with param(number=...), one of "
                f"{', '.join(NUMBERS)}.",
            )
        out.append(Parameter(p.name, kind, p.default, meanings[-1]))
    return tuple(out)


def _numeric(annotation: object) -> bool:
    """An int or float parameter (optional or not; a flag is a bool, not a number)."""
    args = typing.get_args(annotation) or (annotation,)
    return any(a in (int, float) for a in args)


def _shown(annotation: object) -> str:
    if isinstance(annotation, typing.ForwardRef):
        return annotation.__forward_arg__
    return annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)


def python_signature(function: Callable[..., object], *, skip: int = 1) -> inspect.Signature:
    """The Python face of a declared function: its signature with each parameter's plain type
    (what ``help()`` and an editor show) in place of its declaration."""
    signature = inspect.signature(inspect.unwrap(function))
    shown = {p.name: _shown(p.annotation) for p in parameters_of(function, skip=skip)}
    return signature.replace(
        parameters=[q.replace(annotation=shown.get(q.name, q.annotation)) for q in signature.parameters.values()]
    )


def on(parameters: tuple[Parameter, ...], face: str) -> list[Parameter]:
    """The parameters ``face`` ('cli', 'http' or 'python') offers, in order."""
    return [p for p in parameters if face in p.meaning.faces]


class Option(NamedTuple):
    """One command-line option of a declared function, as a study step and the CLI see it: the
    option's name (``--give-up-after`` is ``give_up_after``), type, whether it is required, its
    default, its help, and what it spells (the declared parameter it belongs to)."""

    name: str
    annotation: Any  # a type form, as pydantic and typer take it
    required: bool
    default: object = None
    help: str = ""
    short: str | None = None
    argument: bool = False
    at_least: float | None = None
    flag: bool = False
    switch: bool = False
    spells: str = ""

    @property
    def flag_name(self) -> str:
        """``--give-up-after`` for ``give_up_after``; a name that would be a Python keyword keeps
        a trailing underscore that the flag drops (``from_`` is ``--from``)."""
        return "--" + self.name.rstrip("_").replace("_", "-")


def without_none(annotation: object) -> object:
    """``X | None`` as ``X`` (an option the CLI requires)."""
    import types

    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    union = typing.get_origin(annotation) in (types.UnionType, typing.Union)
    return args[0] if union and len(args) == 1 else annotation


def cli_options(parameters: tuple[Parameter, ...]) -> list[Option]:
    """The command-line options of declared parameters, in order."""
    out = []
    for p in on(parameters, "cli"):
        m = p.meaning
        for extra in m.cli_with:
            out.append(
                Option(extra.name, extra.annotation, False, extra.default, extra.help, extra.short, spells=p.name)
            )
        required = p.required_on("cli")
        kind = m.cli_type or p.annotation
        if required:
            kind = without_none(kind)
        default = None if required else (p.default if m.cli_default is SAME else m.cli_default)
        help_text = m.help + (f" One of: {', '.join(m.choices)}." if m.choices else "")
        out.append(
            Option(
                m.cli_name or p.name,
                kind,
                required,
                default,
                help_text,
                m.short,
                m.argument,
                m.at_least,
                m.flag,
                m.switch,
                spells=p.name,
            )
        )
    return out


def from_cli(parameters: tuple[Parameter, ...], values: dict[str, Any]) -> dict[str, Any]:
    """The Python call's keyword arguments from command-line option values (by option name; an
    option left out takes the command line's default): each parameter's value, options that
    spell one parameter joined by its ``from_cli``."""
    out: dict[str, Any] = {}
    by_parameter: dict[str, dict[str, Any]] = {}
    for option in cli_options(parameters):
        if option.name in values or not option.required:
            value = values.get(option.name, option.default)
            by_parameter.setdefault(option.spells, {})[option.name] = value
    for p in on(parameters, "cli"):
        given = by_parameter.get(p.name, {})
        if p.meaning.from_cli is not None:
            out[p.name] = p.meaning.from_cli(**given)
        elif (p.meaning.cli_name or p.name) in given:
            out[p.name] = given[p.meaning.cli_name or p.name]
        check_bounds(p, out.get(p.name), "cli")
    return out


def http_field(p: Parameter) -> tuple[Any, Any]:
    """A parameter as a field of an HTTP body (pydantic): its type (bounded as it says),
    required or with its default, described by its help."""
    import types
    from typing import Annotated, Literal

    from pydantic import Field

    meaning = p.meaning
    kind = meaning.http_type or p.annotation
    if isinstance(meaning.http_type, str):  # "module:name", imported now
        import importlib

        module, _, name = meaning.http_type.partition(":")
        kind = getattr(importlib.import_module(module), name)
    required = p.required_on("http")
    args = typing.get_args(kind)
    optional = typing.get_origin(kind) in (types.UnionType, typing.Union) and type(None) in args
    inner: Any = next(a for a in args if a is not type(None)) if optional and len(args) == 2 else kind
    if meaning.choices is not None:
        inner = Literal[meaning.choices]
    if meaning.http_each:  # bounds on each element of a list
        (element,) = typing.get_args(inner)
        inner = list[Annotated[element, Field(**meaning.http_each)]]  # type: ignore[valid-type]
    if inner is float:  # NaN and infinity are no number a parameter means
        inner = Annotated[inner, Field(allow_inf_nan=False)]
    bounds = {**meaning.http, **(number_bounds(meaning) if not meaning.special else {})}
    if bounds or meaning.http_only:
        inner = Annotated[inner, Field(**{**bounds, **meaning.http_only})]
    kind = inner | None if optional and not required else inner
    default = ... if required else p.default
    return kind, Field(default, description=meaning.http_help or meaning.help)


def http_fields(parameters: tuple[Parameter, ...]) -> dict[str, tuple[Any, Any]]:
    """The HTTP body's fields of declared parameters, in order (for ``pydantic.create_model``)."""
    return {p.meaning.http_name or p.name: http_field(p) for p in on(parameters, "http")}


def from_face(parameters: tuple[Parameter, ...], face: str, values: dict[str, object]) -> dict[str, Any]:
    """The Python call's keyword arguments from a face's values (by parameter name): the
    parameters ``face`` offers, each given value or else its declared default."""
    out = {}
    for p in on(parameters, face):
        if p.name in values and values[p.name] is not None:
            out[p.name] = values[p.name]
            check_bounds(p, out[p.name], face)
        elif not p.required:
            out[p.name] = p.default
    return out


__all__ = [
    "FACES",
    "NAME_HTTP",
    "NAME_PATTERN",
    "NUMBERS",
    "SAME",
    "SEED",
    "SHIPPED_NAME",
    "CliOption",
    "Number",
    "Option",
    "Param",
    "Parameter",
    "check_bounds",
    "cli_options",
    "file_or_rows",
    "from_cli",
    "from_face",
    "http_field",
    "http_fields",
    "on",
    "param",
    "parameters_of",
    "plain",
    "python_signature",
    "without_none",
]
