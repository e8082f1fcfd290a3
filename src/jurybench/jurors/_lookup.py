"""The juror kinds' registry, and looking a juror's kind up by its model string: the built-in
kinds and those of installed packages' entry points (group jurybench.jurors) are loaded the
first time one is looked up.
"""

from __future__ import annotations

from jurybench.config import Registry
from jurybench.errors import JurybenchError
from jurybench.jurors._kinds import ENTRY_POINT_GROUP, JurorKind

# The kinds by prefix; "*" is the default kind, of every model string no prefix claims (litellm's).
REGISTRY: Registry[JurorKind] = Registry(
    ENTRY_POINT_GROUP,
    "juror kinds",
    "jurybench.jurors._builtin_kinds:register",
    label="juror kind '{}/'",
    function="register_kind",
)
PLUGINS = REGISTRY.plugins


def register_kind(kind: JurorKind, *, replace: bool = False) -> None:
    """Make ``<prefix>/...`` model strings jurors of this kind; ``prefix="*"`` is the default
    kind (litellm's). Registering a prefix twice is refused unless ``replace``."""
    if kind.prefix != "*" and ("/" in kind.prefix or not kind.prefix):
        raise JurybenchError(f"juror kind prefix {kind.prefix!r}: give the part before the '/', e.g. 'echo'.")
    REGISTRY.register(kind.prefix, kind, replace=replace or kind.prefix == "*")


def unregister_kind(prefix: str) -> None:
    REGISTRY.unregister(prefix)


def kind_of(model: str) -> JurorKind:
    """The kind of a model string (``fake/kind`` → fake; ``openai/gpt-4o`` → litellm's)."""
    prefix = model.split("/", 1)[0] if "/" in model else ""
    found = REGISTRY.get(prefix) if prefix != "*" else None  # per call: a lookup, not a copy of the registry
    if found is None:
        found = REGISTRY.get("*")
    assert found is not None, "the default juror kind (litellm's) is built in"
    return found


def kinds() -> list[JurorKind]:
    """Every registered kind, the default last."""
    known = REGISTRY.items()
    return [*sorted((k for p, k in known.items() if p != "*"), key=lambda k: k.prefix), known["*"]]


def is_offline(model: str) -> bool:
    """Whether a juror costs nothing and needs no key or network (fake, sim, replay, ...)."""
    return kind_of(model).offline
