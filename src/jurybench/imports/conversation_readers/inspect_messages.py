"""Inspect AI eval logs as conversations: a ``.json`` log or a ``.eval`` log (the reader of
their scores is ``judgments import --format inspect``). Each sample (one epoch of one task
sample) is a conversation named as that reader names its item, so the scores imported from the
same log judge the conversation: ``inspect-<task>-<sample id>-e<epoch>-<model>``.

Read from each sample: ``messages`` (Inspect's chat messages: ``role``; ``content``, text or a
list of content parts; an assistant's ``tool_calls`` [{id, function (the tool's name),
arguments (an object)}]; a tool message's ``tool_call_id``, ``function`` and ``error``), the
task (``input``: text, or its last user message), the model (the log's ``eval.model``, as the scores' reader names it), ``epoch`` as the trial of the task ``inspect-<task>-<sample id>``, ``target``
as the item's reference and ``output.completion`` as its response (as the scores' reader has them), and a verified outcome from one scorer's value (``--map scorer=NAME``; the first
scorer by default): C = 1, P = 0.5, I and N = 0, a number as it is; passed when it is 1. The
sample's ``events`` repeat what its messages hold (a tool event per call) and are not read."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybench.errors import JurybenchError, brief
from jurybench.imports._conversations import ConversationFormat, number, openai_messages

LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}


def _attached(value: Any, attachments: Mapping[str, Any]) -> Any:
    """Content Inspect moved to the sample's ``attachments`` (``attachment://<hash>``), put back."""
    if isinstance(value, str) and value.startswith("attachment://"):
        return attachments.get(value[len("attachment://") :], value)
    if isinstance(value, list):
        return [
            {**p, "text": _attached(p.get("text"), attachments)} if isinstance(p, dict) and "text" in p else p
            for p in value
        ]
    return value


def _as_openai(raw: Any, where: str, attachments: Mapping[str, Any]) -> list[Any]:
    """Inspect's messages in the OpenAI chat shape (its tool call's ``function`` is the name and
    its ``arguments`` an object; a tool message's error is its content when it has none)."""
    if not isinstance(raw, list):
        raise JurybenchError(f"{where}, field 'messages': expected a list of messages, found {type(raw).__name__}.")
    out = []
    for k, m in enumerate(raw):
        if not isinstance(m, dict):
            raise JurybenchError(f"{where}, message {k}: expected an object, found {type(m).__name__}.")
        content = _content(_attached(m.get("content"), attachments), f"{where}, message {k}")
        shaped: dict[str, Any] = {"role": m.get("role"), "content": content}
        calls = []
        for j, call in enumerate(m.get("tool_calls") or []):
            if not isinstance(call, dict) or not isinstance(call.get("function"), str):
                raise JurybenchError(f"{where}, message {k}, tool call {j}: expected {{id, function, arguments}}.")
            calls.append(
                {"id": call.get("id"), "function": {"name": call["function"], "arguments": call.get("arguments")}}
            )
        if calls:
            shaped["tool_calls"] = calls
        if m.get("role") == "tool":
            shaped["tool_call_id"] = m.get("tool_call_id")
            shaped["name"] = m.get("function")
            error = m.get("error")
            if isinstance(error, dict) and not shaped["content"]:
                shaped["content"] = f"error ({error.get('type', 'unknown')}): {error.get('message', '')}"
        out.append(shaped)
    return out


def _content(value: Any, where: str) -> Any:
    """Inspect's content parts: text kept; reasoning, images, audio and video named in brackets."""
    if not isinstance(value, list):
        return value
    parts = []
    for part in value:
        if isinstance(part, dict) and part.get("type") == "text":
            parts.append({"type": "text", "text": part.get("text", "")})
        elif isinstance(part, dict) and isinstance(part.get("type"), str):
            parts.append({"type": "text", "text": f"[{part['type']}]"})
        else:
            raise JurybenchError(f"{where}, field 'content': {brief(part)} is not a content part.")
    return parts


def _outcome(scores: Any, where: str, scorer: str | None) -> tuple[float | None, str | None]:
    if not isinstance(scores, dict) or not scores:
        if scorer:
            raise JurybenchError(f"{where}, field 'scores': no scorer {scorer!r} (the sample has no scores).")
        return None, None
    name = scorer or next(iter(scores))
    if name not in scores:
        raise JurybenchError(f"{where}, field 'scores': no scorer {name!r}.", hint=f"Valid: {', '.join(scores)}.")
    value = scores[name].get("value") if isinstance(scores[name], dict) else None
    if isinstance(value, str) and value in LETTERS:
        return LETTERS[value], f"inspect scorer {name}"
    if isinstance(value, dict | list):
        raise JurybenchError(
            f"{where}, scores.{name}.value: {brief(value)} is not one outcome.",
            hint="Name a scorer whose value is a letter (C, P, I, N) or a number with --map scorer=NAME.",
        )
    return number(value, where, f"scores.{name}.value"), f"inspect scorer {name}"


def read(path: Path, options: Mapping[str, str]) -> list[Any]:
    from jurybench.imports._reading import content_text, obj
    from jurybench.imports.formats.inspect_log import _log
    from jurybench.store import Conversation

    header, samples = _log(path)
    spec = obj(header.get("eval"))
    task, log_model = str(spec.get("task") or path.stem), str(spec.get("model") or "model")
    if not samples:
        raise JurybenchError(f"{path}: the log has no samples (was it written with samples?).")
    out = []
    for where_in, sample in samples:
        where = f"{path} {where_in}"
        if not isinstance(sample, dict) or "id" not in sample:
            raise JurybenchError(f"{where}: not a sample (no 'id').")
        epoch = sample.get("epoch", 1)
        if isinstance(epoch, bool) or not isinstance(epoch, int):
            raise JurybenchError(f"{where}, field 'epoch': expected a whole number.")
        prompt = sample.get("input")
        if isinstance(prompt, list):
            users = [m for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
            prompt = content_text(users[-1].get("content")) if users else None
        outcome, source = _outcome(sample.get("scores"), where, options.get("scorer"))
        target = sample.get("target")
        completion = obj(sample.get("output")).get("completion")
        out.append(
            Conversation(
                item_id=f"inspect-{task}-{sample['id']}-e{epoch}-{log_model}",
                messages=openai_messages(
                    _as_openai(sample.get("messages"), where, obj(sample.get("attachments"))), where
                ),
                task=None if prompt is None else str(prompt),
                task_id=f"inspect-{task}-{sample['id']}",
                trial=epoch,
                agent_model=log_model,
                outcome=outcome,
                outcome_passed=None if outcome is None else outcome >= 1,
                outcome_source=source,
                # the item as the scores' reader names and fills it, so both imports meet on one item
                answer=None if completion is None else str(completion),
                reference=("\n".join(map(str, target)) if isinstance(target, list) else target) or None,
                where=where,
            )
        )
    return out


FORMATS = [
    ConversationFormat(
        name="inspect",
        description="Inspect AI eval logs (.json or .eval): each sample's messages, tool calls and results; a "
        "scorer's value as the outcome.",
        read=read,
        fields={
            "conversations.messages": "samples[].messages (role, content, tool_calls: function + arguments, "
            "tool_call_id)",
            "items.item_id": "inspect-<task>-<sample id>-e<epoch>-<model>, as judgments import --format inspect",
            "conversations.task_id, trial": "inspect-<task>-<sample id>; the epoch",
            "conversations.outcome": "scores[<scorer>].value: C 1, P 0.5, I/N 0, or a number",
            "items.model": "eval.model",
        },
        options={"scorer": "the scorer whose value is the outcome (default: the first)"},
    )
]
