"""Looking a juror's kind up by its model string: the built-in kinds and those of installed
packages' entry points (group jurybench.jurors) are loaded the first time.
"""

from __future__ import annotations

from jurybench.config import Plugins
from jurybench.jurors._kinds import _DEFAULT, _KINDS, ENTRY_POINT_GROUP, JurorKind


def _builtins() -> None:
    from jurybench.jurors._builtin_kinds import register

    register()


PLUGINS = Plugins(ENTRY_POINT_GROUP, "juror kinds", _builtins)


def _load() -> None:
    """Built-in kinds, then those of installed packages' entry points (once)."""
    PLUGINS.load()


def kind_of(model: str) -> JurorKind:
    """The kind of a model string (``fake/kind`` → fake; ``openai/gpt-4o`` → litellm's)."""
    _load()
    prefix = model.split("/", 1)[0] if "/" in model else ""
    found = _KINDS.get(prefix)
    if found is not None:
        return found
    return _DEFAULT[0]


def kinds() -> list[JurorKind]:
    """Every registered kind, the default last."""
    _load()
    return [*sorted(_KINDS.values(), key=lambda k: k.prefix), *_DEFAULT]


def is_offline(model: str) -> bool:
    """Whether a juror costs nothing and needs no key or network (fake, sim, replay, ...)."""
    return kind_of(model).offline
