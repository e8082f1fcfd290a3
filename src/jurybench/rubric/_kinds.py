"""Rubric kinds as a registry: the name in a rubric file's ``kind:`` is looked up here.

A kind is a pydantic model built on :class:`RubricKind` (``jurybench.rubric.RubricKind``) whose
``kind`` field is ``Literal["<name>"]``. What the kind decides it says by its class attributes
and methods, each with a default that serves a kind of numeric scores answered in JSON on one
item: ``dimensions`` and ``scale_for`` (what is scored, on what scale), ``pairwise`` (pairs
shown in both orders instead of items), ``criteria_text`` (the rubric's dimensions as prompt
text), ``answer_fields`` / ``answer_values`` / ``answer_lines`` (the JSON answer: its pydantic
fields, each key's values, the format shown to the juror) and ``scores_of`` (an answer's
scores). Built-in kinds register with :func:`register_kind` as a plug-in's do: from code, or
from a package's entry point in the group ``jurybench.rubric_kinds`` (a callable that registers
its kinds), loaded the first time the registry is read.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeVar

from jurybench.config import Registry
from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from jurybench.rubric._model import _RubricBase

ENTRY_POINT_GROUP = "jurybench.rubric_kinds"


def kind_name(model: type[_RubricBase]) -> str:
    """The name a rubric file gives the kind: the one value of the model's ``kind`` field."""
    field = getattr(model, "model_fields", {}).get("kind")
    names = typing.get_args(field.annotation) if field is not None else ()
    if len(names) != 1 or not isinstance(names[0], str):
        raise JurybenchError(
            f"rubric kind {getattr(model, '__name__', model)!r}: declare its name as kind: Literal['<name>'].",
        )
    return names[0]


T = TypeVar("T")


def by_kind(table: Mapping[str, T], rubric: object) -> T | None:
    """The entry of ``table`` for the rubric's kind or, failing that, for the nearest kind its
    model is built on (a ``conversation`` rubric is a pointwise one), so a kind that extends
    another has what the table holds for it; None when neither is there."""
    for model in type(rubric).__mro__:
        field = getattr(model, "model_fields", {}).get("kind")
        names = typing.get_args(field.annotation) if field is not None else ()
        if len(names) == 1 and names[0] in table:
            return table[names[0]]
    return None


def register_kind(model: type[_RubricBase], *, replace: bool = False) -> None:
    """Accept rubric files with ``kind: <name>`` (the model's ``kind`` literal), validated by
    ``model``. Registering a name twice is refused unless ``replace``."""
    from jurybench.rubric._model import _RubricBase

    if not (isinstance(model, type) and issubclass(model, _RubricBase)):
        raise JurybenchError(
            f"register_kind: {model!r} is not a rubric kind.", hint="Subclass jurybench.rubric.RubricKind."
        )
    REGISTRY.register(kind_name(model), model, replace=replace)


def unregister_kind(name: str) -> None:
    REGISTRY.unregister(name)


REGISTRY: Registry[type[_RubricBase]] = Registry(
    ENTRY_POINT_GROUP,
    "rubric kinds",
    "jurybench.rubric._builtin_kinds:register",
    label="rubric kind '{}'",
    function="register_kind",
)


def rubric_kinds() -> dict[str, type[_RubricBase]]:
    """Every registered rubric kind by name, built-ins first."""
    return REGISTRY.items()


def kind_model(name: object) -> type[_RubricBase] | None:
    """The model of the rubric kind called ``name``, or None."""
    return REGISTRY.get(name) if isinstance(name, str) else None
