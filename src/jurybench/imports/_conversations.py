"""Conversations and agent trajectories in the formats traces are released in, read as
conversations to judge (``jurybench items import FILE --format NAME``).

A reader is a :class:`ConversationFormat`: its name, ``read`` (a file and its ``--map KEY=FIELD``
options to :class:`~jurybench.store.Conversation` objects) and ``detect``. Built-ins register as
a plug-in's do (``register_conversation_format``; entry point group
``jurybench.conversation_formats``). Every reader turns its messages into the OpenAI chat shape
first (the shape most agent frameworks log) and :func:`openai_messages` reads that one shape: a
new reader only maps its records to it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurybench.config import Registry
from jurybench.errors import JurybenchError, brief

if TYPE_CHECKING:
    from jurybench.store import Conversation, Message

ENTRY_POINT_GROUP = "jurybench.conversation_formats"


@dataclass(frozen=True)
class ConversationFormat:
    """A reader of one released trace format. ``fields`` documents where each part of a
    conversation is read from; ``options`` the ``--map KEY=FIELD`` keys it takes."""

    name: str
    description: str
    read: Callable[[Path, Mapping[str, str]], Iterable[Conversation]]
    detect: Callable[[Path, Any], bool] | None = None
    fields: Mapping[str, str] = field(default_factory=dict)
    options: Mapping[str, str] = field(default_factory=dict)


REGISTRY: Registry[ConversationFormat] = Registry(
    ENTRY_POINT_GROUP,
    "conversation formats",
    "jurybench.imports.conversation_readers:register",
    label="conversation format '{}'",
    function="register_conversation_format",
)


def register_conversation_format(fmt: ConversationFormat, *, replace: bool = False) -> None:
    """Make ``items import --format <fmt.name>`` read traces with ``fmt``."""
    if not isinstance(fmt, ConversationFormat):
        raise JurybenchError(f"register_conversation_format: {fmt!r} is not a ConversationFormat.")
    REGISTRY.register(fmt.name, fmt, replace=replace)


def conversation_formats() -> dict[str, ConversationFormat]:
    return REGISTRY.items()


def conversation_format(name: str) -> ConversationFormat | None:
    return REGISTRY.get(name)


def parse_map(entries: Iterable[str] | Mapping[str, str] | None, fmt: ConversationFormat) -> dict[str, str]:
    """``--map KEY=FIELD`` entries as a mapping, each key one the reader takes."""
    if entries is None:
        return {}
    pairs = list(entries.items()) if isinstance(entries, Mapping) else []
    if not isinstance(entries, Mapping):
        for entry in entries:
            key, sep, value = str(entry).partition("=")
            if not sep or not key.strip() or not value.strip():
                raise JurybenchError(f"--map {entry!r}: expected KEY=FIELD, e.g. id=conversation_id.")
            pairs.append((key.strip(), value.strip()))
    unknown = [k for k, _ in pairs if k not in fmt.options]
    if unknown:
        valid = ", ".join(fmt.options) or "none"
        raise JurybenchError(f"--map {unknown[0]}: not a key the {fmt.name} reader takes.", hint=f"Valid: {valid}.")
    return dict(pairs)


def read_conversations(
    path: Path, fmt: str, entries: Iterable[str] | Mapping[str, str] | None = None
) -> Iterable[Conversation]:
    """The conversations of ``path`` as the reader ``fmt`` reads them (a JSON-lines file a line at
    a time, as :func:`~jurybench.store.write_conversations` writes them; nothing is written here)."""
    reader = conversation_format(fmt)
    if reader is None:
        raise JurybenchError(
            f"--format {fmt!r} is neither a file format nor a conversation format.",
            hint=f"Valid: csv, jsonl, parquet, or {', '.join(conversation_formats())}.",
        )
    options = parse_map(entries, reader)
    if not path.exists():
        raise JurybenchError(f"{path}: no such file.")
    return reader.read(path, options)


def text_of(content: Any, where: str) -> str | None:
    """A message's content as text: a string, or the text parts of a list of parts
    ([{type: text, text: ...}, ...], as OpenAI's and Anthropic's APIs send them); None for none."""
    if content is None:
        return None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, dict) and part.get("type") in ("image_url", "image", "input_audio", "file"):
                parts.append(f"[{part.get('type')}]")
            else:
                raise JurybenchError(f"{where}, field 'content': {brief(part)} is not a text part.")
        return "\n".join(parts)
    raise JurybenchError(f"{where}, field 'content': {brief(content)} is neither text nor a list of parts.")


def openai_messages(raw: Any, where: str) -> list[Message]:
    """OpenAI chat messages (``role``, ``content``; ``tool_calls`` with ``function.name`` and
    ``function.arguments`` as a JSON string; the legacy ``function_call`` and ``function`` role)
    as messages, each tool result tied to the call it answers."""
    from jurybench.store import Message, ToolCall, parse_arguments

    if not isinstance(raw, list):
        raise JurybenchError(f"{where}, field 'messages': expected a list of messages, found {type(raw).__name__}.")
    out: list[Message] = []
    legacy: dict[str, str] = {}  # a legacy function call's name -> the id given to it
    for k, m in enumerate(raw):
        at = f"{where}, message {k}"
        if not isinstance(m, dict):
            raise JurybenchError(f"{at}: expected an object, found {type(m).__name__}.")
        role = m.get("role")
        calls: list[ToolCall] = []
        for j, call in enumerate(m.get("tool_calls") or []):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                raise JurybenchError(f"{at}, field 'tool_calls' {j}: expected {{function: {{name, arguments}}}}.")
            calls.append(
                ToolCall(
                    str(call["id"]) if call.get("id") is not None else None,
                    function["name"],
                    parse_arguments(function.get("arguments"), f"{at}, tool call {j}"),
                )
            )
        old = m.get("function_call")
        if isinstance(old, dict) and isinstance(old.get("name"), str):
            given = f"legacy-{k}"
            legacy[old["name"]] = given
            calls.append(ToolCall(given, old["name"], parse_arguments(old.get("arguments"), f"{at}, function_call")))
        call_id = m.get("tool_call_id")
        if role == "function":  # the legacy result of a function_call: answers the latest call of its name
            role, call_id = "tool", legacy.get(str(m.get("name")), call_id)
        if role == "tool" and call_id is None:
            raise JurybenchError(f"{at}, field 'tool_call_id': a tool result names no call.")
        out.append(
            Message(
                str(role) if role is not None else "",
                text_of(m.get("content"), at),
                tuple(calls),
                str(call_id) if call_id is not None else None,
                str(m["name"]) if m.get("name") is not None else None,
            )
        )
    return out


def number(value: Any, where: str, name: str) -> float | None:
    """An outcome: a number, true/false as 1/0, or none; anything else refused."""
    from jurybench.store import as_float

    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    try:
        found = as_float(value)
    except (TypeError, ValueError):
        raise JurybenchError(f"{where}, field '{name}': {brief(value)} is not a number.") from None
    import math

    if not math.isfinite(found):
        raise JurybenchError(f"{where}, field '{name}': {brief(value)} is not a finite number.")
    return found


def lookup(record: Mapping[str, Any], path: str) -> Any:
    """A field by dotted path (``info.task.instruction``); None when any part is missing."""
    value: Any = record
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def first_user_text(messages: list[Message]) -> str | None:
    return next((m.content for m in messages if m.role == "user" and m.content), None)


__all__ = [
    "ConversationFormat",
    "conversation_format",
    "conversation_formats",
    "first_user_text",
    "lookup",
    "number",
    "openai_messages",
    "parse_map",
    "read_conversations",
    "register_conversation_format",
    "text_of",
]
