"""Juror kinds: what the part of a model string before the first '/' means.

A kind says how to build a juror's transport, which parameters it takes, whether it is
offline (costs nothing, needs no key or network), whether an answer that fails validation
may be asked for again, and (optionally) its price. ``fake/``, ``sim/`` and ``replay/`` are
built in; every other model string is litellm's (``openai/...``, ``ollama/...``). Built-in
kinds register with ``register_kind`` (``jurors/_lookup.py``), as a third party's do: from
code, or from a package's entry point in the group ``jurybench.jurors`` (a callable that
registers its kinds), loaded the first time a kind is looked up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jurybench.jurors._completion import Backend

ENTRY_POINT_GROUP = "jurybench.jurors"


@dataclass(frozen=True)
class JurorKind:
    """One kind of juror. ``make(spec, rubric, con, subject_ids)`` returns its transport (a
    :class:`~jurybench.jurors.Backend`, or any object with ``async complete(messages, slot) ->
    Completion``); ``check(spec, label)``
    refuses a bad parameter with one line (None: ``parameters`` alone decide); ``parameters``
    are the answer-changing parameters it takes (None: whatever its provider takes, checked
    by litellm); ``price(spec)`` its price per token, if it has one. ``reads_store``: its
    transport is built from rows of the store (``sim/``, ``replay/``): a run spread over Ray
    workers builds it once where the store is and ships it to them (so it must pickle); other
    kinds' transports are built on each worker from the juror alone (``con`` is then None)."""

    prefix: str
    make: Callable[[Any, Any, Any, list[str] | None], Backend]
    description: str = ""
    parameters: frozenset[str] | None = None
    offline: bool = False
    reaskable: bool = True
    check: Callable[[Any, str], None] | None = None
    price: Callable[[Any], Any] | None = None
    reads_store: bool = False
