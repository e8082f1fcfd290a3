"""The built-in conversation formats, one module a format; each module's ``FORMATS`` are
registered as a plug-in's would be (``register_conversation_format``)."""

from __future__ import annotations


def register() -> None:
    from jurybench.imports._conversations import register_conversation_format
    from jurybench.imports.conversation_readers import atif, inspect_messages, openai_chat, otel_genai, tau_bench

    for module in (openai_chat, tau_bench, inspect_messages, otel_genai, atif):
        for fmt in module.FORMATS:
            register_conversation_format(fmt)
