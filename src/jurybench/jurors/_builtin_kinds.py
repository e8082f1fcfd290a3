"""The built-in juror kinds, one module each (``_kind_fake``, ``_simulated``, ``_kind_replay``,
``_kind_import``, ``_kind_litellm``), registered the way a third party registers its own
(jurors/_kinds.py)."""

from __future__ import annotations

from jurybench.jurors._kinds import register_kind


def register() -> None:
    from jurybench.jurors import _kind_fake, _kind_import, _kind_litellm, _kind_replay, _simulated

    for module in (_kind_fake, _simulated, _kind_replay, _kind_import):
        register_kind(module.KIND, replace=True)
    register_kind(_kind_litellm.KIND)
