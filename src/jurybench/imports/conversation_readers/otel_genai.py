"""OpenTelemetry GenAI spans as conversations: OTLP JSON as collectors' file exporters and tracing
tools write it (a document {resourceSpans: [{resource, scopeSpans: [{scope, spans}]}]}, or JSON
lines of such documents), read to the GenAI semantic conventions
(https://opentelemetry.io/docs/specs/semconv/gen-ai/).

Spans are grouped by ``traceId``: one conversation a trace, named by its
``gen_ai.conversation.id`` when a span gives one, else by the trace id. Of a trace's model calls
(spans with ``gen_ai.input.messages``, or with message events), the one that started last holds
the conversation so far: its input messages, then its output (the first choice), are the
conversation; an agent that sends its history with every call leaves nothing out this way. The
messages are read from

- ``gen_ai.system_instructions``, ``gen_ai.input.messages`` and ``gen_ai.output.messages``
  (semantic conventions 1.37 and later; a JSON string or structured): each {role, parts: [{type:
  text, content}, {type: tool_call, id, name, arguments}, {type: tool_call_response, id,
  response}, ...]};
- else the span's events ``gen_ai.system.message``, ``gen_ai.user.message``,
  ``gen_ai.assistant.message``, ``gen_ai.tool.message`` and ``gen_ai.choice`` (earlier
  conventions): their attributes ``content``, ``tool_calls`` (OpenAI's shape), ``id`` (the call a
  tool message answers), or the same as a JSON body in ``gen_ai.event.content``.

The model is ``gen_ai.response.model``, else ``gen_ai.request.model``; ``--map outcome=ATTRIBUTE``
reads a verified outcome from an attribute on any span of the trace (the root's first)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybench.errors import JurybenchError, brief
from jurybench.imports._conversations import ConversationFormat, first_user_text, number, openai_messages

EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
    "gen_ai.choice": "assistant",
}


def value_of(raw: Any, where: str) -> Any:
    """An OTLP JSON AnyValue as Python: stringValue, intValue (a string in JSON), doubleValue,
    boolValue, arrayValue, kvlistValue, bytesValue."""
    if not isinstance(raw, dict) or len(raw) > 1:
        raise JurybenchError(f"{where}: {brief(raw)} is not an OTLP attribute value.")
    if not raw:
        return None
    ((kind, v),) = raw.items()
    if kind == "stringValue" or kind == "bytesValue":
        return v
    if kind == "intValue":
        try:
            return int(v)
        except (TypeError, ValueError):
            raise JurybenchError(f"{where}: intValue {brief(v)} is not a whole number.") from None
    if kind in ("doubleValue", "boolValue"):
        return v
    if kind == "arrayValue":
        return [value_of(x, where) for x in (v or {}).get("values", [])]
    if kind == "kvlistValue":
        return attributes_of((v or {}).get("values", []), where)
    raise JurybenchError(f"{where}: {kind!r} is not an OTLP value type.")


def attributes_of(raw: Any, where: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise JurybenchError(f"{where}, field 'attributes': expected a list of {{key, value}}.")
    out = {}
    for a in raw:
        if not isinstance(a, dict) or not isinstance(a.get("key"), str):
            raise JurybenchError(f"{where}, field 'attributes': {brief(a)} is not a {{key, value}}.")
        out[a["key"]] = value_of(a.get("value") or {}, f"{where}, attribute {a['key']}")
    return out


def _structured(value: Any, where: str) -> list[Any]:
    """A messages attribute: a JSON string, or already structured."""
    if isinstance(value, str):
        from jurybench.imports._reading import load_json

        value = load_json(value, where)
    if not isinstance(value, list):
        raise JurybenchError(f"{where}: expected a list of messages, found {type(value).__name__}.")
    return value


def _from_parts(messages: list[Any], where: str) -> list[dict[str, Any]]:
    """Messages of parts (the 1.37 conventions) in the OpenAI chat shape: text parts joined, tool
    calls as tool_calls, each tool_call_response a tool message of its own."""
    out: list[dict[str, Any]] = []
    for k, m in enumerate(messages):
        at = f"{where}, message {k}"
        if not isinstance(m, dict):
            raise JurybenchError(f"{at}: expected an object.")
        parts = m.get("parts")
        if parts is None and "content" in m:  # some tools record OpenAI's shape under these attributes
            out.append(m)
            continue
        if not isinstance(parts, list):
            raise JurybenchError(f"{at}, field 'parts': expected a list of parts.")
        texts, calls, answers = [], [], []
        for j, p in enumerate(parts):
            kind = p.get("type") if isinstance(p, dict) else None
            if kind == "text":
                texts.append(str(p.get("content", "")))
            elif kind == "tool_call":
                calls.append({"id": p.get("id"), "function": {"name": p.get("name"), "arguments": p.get("arguments")}})
            elif kind == "tool_call_response":
                response = p.get("response")
                text = response if isinstance(response, str) else json.dumps(response, sort_keys=True, default=str)
                answers.append({"role": "tool", "tool_call_id": p.get("id"), "content": text})
            elif isinstance(kind, str):
                texts.append(f"[{kind}]")  # reasoning, blob, file, uri: named, not shown
            else:
                raise JurybenchError(f"{at}, part {j}: {brief(p)} has no type.")
        if texts or calls or not answers:
            shaped: dict[str, Any] = {"role": m.get("role"), "content": "\n".join(texts) if texts else None}
            if calls:
                shaped["tool_calls"] = calls
            if m.get("role") != "tool":
                out.append(shaped)
            elif texts:
                raise JurybenchError(f"{at}: a tool message whose parts are not tool_call_response.")
        out += answers
    return out


def _from_events(events: Any, where: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for k, e in enumerate(events or []):
        if not isinstance(e, dict) or e.get("name") not in EVENT_ROLES:
            continue
        at = f"{where}, event {k} ({e.get('name')})"
        attrs = attributes_of(e.get("attributes"), at)
        given = attrs.get("gen_ai.event.content")
        if isinstance(given, str):
            from jurybench.imports._reading import load_json

            given = load_json(given, at)
        body: dict[str, Any] = given if isinstance(given, dict) else attrs
        if e["name"] == "gen_ai.choice" and isinstance(body.get("message"), dict):
            body = body["message"]
        calls = body.get("tool_calls")
        if isinstance(calls, str):
            from jurybench.imports._reading import load_json

            calls = load_json(calls, at)
        shaped = {"role": EVENT_ROLES[e["name"]], "content": body.get("content")}
        if calls:
            shaped["tool_calls"] = calls
        if shaped["role"] == "tool":
            shaped["tool_call_id"] = body.get("id")
        out.append(shaped)
    return out


def _started(span: dict[str, Any]) -> int:
    """A span's start in nanoseconds (a string in OTLP JSON); one that gives none, or no number,
    counts as earliest, so the file's order decides among such spans."""
    try:
        return int(span.get("startTimeUnixNano") or 0)
    except (TypeError, ValueError):
        return 0


def spans_of(path: Path) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """Every span of the file with where it is and its resource's attributes."""
    from jurybench.imports._reading import records

    found = records(path) if path.suffix.lower() in (".jsonl", ".ndjson") else records(path, expect="document")
    out = []
    for n, doc in found:
        where = f"{path} record {n}" if len(found) > 1 else str(path)
        if not isinstance(doc, dict) or not isinstance(doc.get("resourceSpans"), list):
            raise JurybenchError(f"{where}: not OTLP JSON traces (no 'resourceSpans').")
        for r, rs in enumerate(doc["resourceSpans"]):
            resource = attributes_of((rs.get("resource") or {}).get("attributes"), f"{where}, resourceSpans {r}")
            for s, ss in enumerate(rs.get("scopeSpans") or []):
                for k, span in enumerate(ss.get("spans") or []):
                    at = f"{where}, resourceSpans {r}, scopeSpans {s}, span {k}"
                    if not isinstance(span, dict) or not span.get("traceId"):
                        raise JurybenchError(f"{at}: a span with no traceId.")
                    out.append((at, span, resource))
    return out


def read(path: Path, options: Mapping[str, str]) -> list[Any]:
    from jurybench.store import Conversation

    traces: dict[str, list[tuple[str, dict[str, Any], dict[str, Any]]]] = {}
    for at, span, _resource in spans_of(path):
        attrs = attributes_of(span.get("attributes"), at)
        traces.setdefault(str(span["traceId"]), []).append((at, span, attrs))
    out = []
    for trace, spans in traces.items():
        calls = [
            s
            for s in spans
            if "gen_ai.input.messages" in s[2]
            or any(isinstance(e, dict) and e.get("name") in EVENT_ROLES for e in s[1].get("events") or [])
        ]
        if not calls:
            continue  # a trace with no model call: nothing to judge
        at, span, attrs = max(enumerate(calls), key=lambda c: (_started(c[1][1]), c[0]))[1]
        if "gen_ai.input.messages" in attrs:
            raw = []
            for key in ("gen_ai.system_instructions", "gen_ai.system.instructions"):  # the latter: an early spelling
                if key in attrs:
                    raw.append({"role": "system", "parts": _structured(attrs[key], f"{at}, {key}")})
            raw += _structured(attrs["gen_ai.input.messages"], f"{at}, gen_ai.input.messages")
            if "gen_ai.output.messages" in attrs:
                raw += _structured(attrs["gen_ai.output.messages"], f"{at}, gen_ai.output.messages")[:1]
            shaped = _from_parts(raw, at)
        else:
            shaped = _from_events(span.get("events"), at)
        messages = openai_messages(shaped, at)
        every = {k: v for _, _, a in reversed(spans) for k, v in a.items()}
        wanted = options.get("outcome")
        outcome = number(every.get(wanted), at, wanted) if wanted else None
        model = attrs.get("gen_ai.response.model") or attrs.get("gen_ai.request.model")
        conversation = next((a["gen_ai.conversation.id"] for _, _, a in spans if "gen_ai.conversation.id" in a), None)
        out.append(
            Conversation(
                item_id=str(conversation or trace),
                messages=messages,
                task=first_user_text(messages),
                agent_model=None if model is None else str(model),
                outcome=outcome,
                outcome_passed=None if outcome is None else outcome >= 1,
                outcome_source=None if outcome is None else options.get("source", f"span attribute {wanted}"),
                metadata={
                    "trace_id": trace,
                    "n_spans": len(spans),
                    "provider": attrs.get("gen_ai.provider.name") or attrs.get("gen_ai.system"),
                },
                where=at,
            )
        )
    if not out:
        raise JurybenchError(f"{path}: no span with GenAI messages (gen_ai.input.messages or gen_ai.* message events).")
    return out


def detect(path: Path, head: Any) -> bool:
    return isinstance(head, dict) and "resourceSpans" in head


FORMATS = [
    ConversationFormat(
        name="otel-genai",
        description="OpenTelemetry GenAI spans (OTLP JSON): one conversation a trace, from gen_ai.* messages.",
        read=read,
        detect=detect,
        fields={
            "items.item_id": "gen_ai.conversation.id, else the traceId",
            "conversations.messages": "the last model call's gen_ai.system_instructions, gen_ai.input.messages and "
            "gen_ai.output.messages (or its gen_ai.*.message events)",
            "items.model": "gen_ai.response.model, else gen_ai.request.model",
            "conversations.outcome": "--map outcome=ATTRIBUTE, from any span of the trace",
        },
        options={"outcome": "a span attribute holding a verified outcome", "source": "what verified it"},
    )
]
