"""OpenAI chat messages, as most agent frameworks log them: a JSON document (a list of records)
or a JSON-lines file, each record a conversation: an object holding ``messages`` (or the list of
messages itself). Messages carry ``role`` and ``content`` (text, or a list of text parts),
assistant ``tool_calls`` (``id``, ``function.name``, ``function.arguments`` as a JSON string) or
the legacy ``function_call``, and tool results with the ``tool_call_id`` they answer (the
legacy ``function`` role answers the latest call of its name). ``--map KEY=FIELD`` says where a
record keeps the rest (dotted paths reach into objects: ``outcome=info.reward``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from jurybench.errors import JurybenchError
from jurybench.imports._conversations import ConversationFormat, first_user_text, lookup, number, openai_messages
from jurybench.imports._reading import iter_records, obj

DEFAULTS = {
    "id": "id",
    "messages": "messages",
    "task": "task",
    "task_id": "task_id",
    "trial": "trial",
    "model": "model",
    "outcome": "outcome",
    "passed": "passed",
    "reference_actions": "reference_actions",
}
OPTIONS = {
    "id": "the conversation's id (default id; else the file's name and the record's number)",
    "messages": "the list of messages (default messages; a record that is a list is the messages)",
    "task": "the task or the user's goal (default task; else the first user message)",
    "task_id": "the task a trial attempts (default task_id)",
    "trial": "the trial number of a repeated task (default trial)",
    "model": "the agent's model (default model)",
    "outcome": "a verified outcome, a number (default outcome)",
    "passed": "whether it succeeded, true/false (default passed; else outcome >= 1)",
    "reference_actions": "the tool calls a correct run makes: [{tool (or name), arguments (or kwargs)}]",
    "source": "what verified the outcome, said in the store (default: the format's name)",
}


def reference_actions(value: Any, where: str) -> list[dict[str, Any]] | None:
    """Reference tool calls as [{tool, arguments}] (also read: name/kwargs, function.name)."""
    from jurybench.store import parse_arguments

    if value is None:
        return None
    if not isinstance(value, list):
        raise JurybenchError(f"{where}, field 'reference_actions': expected a list of tool calls.")
    out = []
    for j, action in enumerate(value):
        if not isinstance(action, dict):
            raise JurybenchError(f"{where}, reference action {j}: expected an object.")
        function: dict[str, Any] = obj(action.get("function"))
        tool = action.get("tool") or action.get("name") or function.get("name")
        if not isinstance(tool, str) or not tool:
            raise JurybenchError(f"{where}, reference action {j}: no tool name.")
        raw = action.get("arguments", action.get("kwargs", function.get("arguments")))
        out.append({"tool": tool, "arguments": parse_arguments(raw, f"{where}, reference action {j}")})
    return out


def conversation_of(record: Any, path: Path, number_: int, where: str, options: Mapping[str, str], fmt: str) -> Any:
    """One record as a conversation, its fields found where ``options`` (else DEFAULTS) say."""
    from jurybench.store import Conversation

    keys = {**DEFAULTS, **options}
    if isinstance(record, list):
        record = {keys["messages"]: record}
    if not isinstance(record, dict):
        raise JurybenchError(f"{where}: expected an object or a list of messages, found {type(record).__name__}.")
    messages = openai_messages(lookup(record, keys["messages"]), where)
    given = lookup(record, keys["id"])
    outcome = number(lookup(record, keys["outcome"]), where, keys["outcome"])
    passed = lookup(record, keys["passed"])
    if passed is not None and not isinstance(passed, bool):
        raise JurybenchError(f"{where}, field '{keys['passed']}': expected true or false.")
    trial = lookup(record, keys["trial"])
    if trial is not None and (isinstance(trial, bool) or not isinstance(trial, int)):
        raise JurybenchError(f"{where}, field '{keys['trial']}': expected a whole number.")
    task = lookup(record, keys["task"])
    model = lookup(record, keys["model"])
    task_id = lookup(record, keys["task_id"])
    return Conversation(
        item_id=str(given) if given is not None else f"{path.stem}/{number_}",
        messages=messages,
        task=str(task) if task is not None else first_user_text(messages),
        task_id=str(task_id) if task_id is not None else None,
        trial=trial,
        agent_model=str(model) if model is not None else None,
        outcome=outcome,
        outcome_passed=passed if passed is not None else (None if outcome is None else outcome >= 1),
        outcome_source=options.get("source", fmt) if outcome is not None or passed is not None else None,
        reference_actions=reference_actions(lookup(record, keys["reference_actions"]), where),
        where=where,
    )


def read(path: Path, options: Mapping[str, str]) -> Iterator[Any]:
    """The file's conversations, a JSON-lines file's read a line at a time."""
    for n, record in iter_records(path):
        yield conversation_of(record, path, n, f"{path} record {n}", options, "openai-chat")


def detect(path: Path, head: Any) -> bool:
    sample = head[0] if isinstance(head, list) and head else head
    messages = sample.get("messages") if isinstance(sample, dict) else sample
    return (
        isinstance(messages, list) and bool(messages) and all(isinstance(m, dict) and "role" in m for m in messages[:5])
    )


FORMATS = [
    ConversationFormat(
        name="openai-chat",
        description="OpenAI chat messages (JSON or JSONL), one conversation a record, with tool calls and their results.",
        read=read,
        detect=detect,
        fields={
            "conversations.messages": "messages: role, content (text or text parts), tool_calls (function.name, "
            "function.arguments as JSON), tool_call_id; legacy function_call and role function",
            "items.prompt, conversations.task": "task (--map task=FIELD), else the first user message",
            "items.response": "the last assistant text",
            "conversations.outcome": "outcome (--map outcome=FIELD); passed, else outcome >= 1",
        },
        options=OPTIONS,
    )
]
