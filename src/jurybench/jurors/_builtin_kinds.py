"""The built-in juror kinds, one module each (``_kind_fake``, ``_simulated``, ``_kind_replay``,
``_kind_import``, ``_kind_check``, and litellm's default kind in ``_lean``, beside the lean transport it may choose; each ends with its ``KIND``), registered the way a third
party registers its own (``jurors/_lookup.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jurybench.jurors._kinds import JurorKind


def builtin_kinds() -> list[JurorKind]:
    """The built-in kinds, litellm's (the default, ``*``) last."""
    from jurybench.jurors import _kind_check, _kind_fake, _kind_import, _kind_replay, _lean, _simulated

    return [module.KIND for module in (_kind_fake, _simulated, _kind_replay, _kind_import, _kind_check, _lean)]


def register() -> None:
    """Register the built-in kinds (the entry point ``jurybench.jurors: builtin``)."""
    from jurybench.jurors._lookup import register_kind

    for kind in builtin_kinds():
        register_kind(kind, replace=True)
