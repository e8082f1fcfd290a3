"""The built-in judgment formats, one module a format family; each module's ``FORMATS`` are
registered as a plug-in's would be (``jurybench.imports.register_format``)."""

from __future__ import annotations


def register() -> None:
    from jurybench.imports import register_format
    from jurybench.imports.formats import alpaca_eval, arena_hard, inspect_log, lm_eval, mt_bench, pandalm, promptfoo

    for module in (alpaca_eval, mt_bench, arena_hard, pandalm, inspect_log, promptfoo, lm_eval):
        for fmt in module.FORMATS:
            register_format(fmt)
