"""ATIF trajectories (the Agent Trajectory Interchange Format of the Harbor project, v1.0 to v1.7:
https://github.com/laude-institute/harbor/blob/main/docs/rfcs/0001-trajectory-format.md): a JSON
document (or JSON lines of them, or a list) each {schema_version, session_id, agent: {name,
version, model_name}, steps, final_metrics, extra}.

A trajectory is a conversation named by its ``session_id``. Each step becomes messages in order:
a ``system`` step a system message, a ``user`` step a user message, an ``agent`` step an
assistant message (its ``message``, and its ``tool_calls`` [{tool_call_id, function_name,
arguments}]) followed by one tool message a result of its ``observation.results``
[{source_call_id, content}]: tied to the call it names, or, without one, the environment's answer
to an action that was not a tool call. A step's ``model_name`` overrides the agent's. The task is
the first user message. ATIF keeps no verified outcome of its own (Harbor's verifier writes a
reward beside the trajectory): ``--map outcome=FIELD`` reads one from the root object (dotted:
``extra.reward``); ``final_metrics`` is kept as metadata."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybench.errors import JurybenchError, brief
from jurybench.imports._conversations import ConversationFormat, first_user_text, lookup, number, text_of

SOURCES = {"system": "system", "user": "user", "agent": "assistant"}


def _messages(steps: Any, where: str) -> tuple[list[Any], set[str]]:
    from jurybench.store import Message, ToolCall, parse_arguments

    if not isinstance(steps, list):
        raise JurybenchError(f"{where}, field 'steps': expected a list of steps, found {type(steps).__name__}.")
    out: list[Message] = []
    models: set[str] = set()
    for k, step in enumerate(steps):
        at = f"{where}, step {k + 1}"
        if not isinstance(step, dict):
            raise JurybenchError(f"{at}: expected an object, found {type(step).__name__}.")
        source = step.get("source")
        if source not in SOURCES:
            raise JurybenchError(
                f"{at}, field 'source': {brief(source)} is not a step source.", hint="Valid: system, user, agent."
            )
        calls = []
        for j, call in enumerate(step.get("tool_calls") or []):
            if not isinstance(call, dict) or not isinstance(call.get("function_name"), str):
                raise JurybenchError(f"{at}, tool call {j}: expected {{tool_call_id, function_name, arguments}}.")
            calls.append(
                ToolCall(
                    None if call.get("tool_call_id") is None else str(call["tool_call_id"]),
                    call["function_name"],
                    parse_arguments(call.get("arguments"), f"{at}, tool call {j}"),
                )
            )
        if isinstance(step.get("model_name"), str):
            models.add(step["model_name"])
        out.append(Message(SOURCES[source], text_of(step.get("message"), at), tuple(calls)))
        observation = step.get("observation")
        results = observation.get("results") if isinstance(observation, dict) else None
        if observation is not None and not isinstance(results, list):
            raise JurybenchError(f"{at}, field 'observation': expected {{results: [...]}}.")
        names = {c.call_id: c.tool for c in calls}
        for j, result in enumerate(results or []):
            if not isinstance(result, dict):
                raise JurybenchError(f"{at}, observation result {j}: expected an object.")
            ref = result.get("source_call_id")
            content = text_of(result.get("content"), f"{at}, observation result {j}")
            if content is None and result.get("subagent_trajectory_ref"):
                content = f"[subagent trajectory: {brief(result['subagent_trajectory_ref'])}]"
            ref_id = None if ref is None else str(ref)
            out.append(Message("tool", content, (), ref_id, names.get(ref_id)))
    return out, models


def read(path: Path, options: Mapping[str, str]) -> list[Any]:
    from jurybench.imports._reading import obj, records
    from jurybench.store import Conversation

    found = records(path, expect="document") if path.suffix.lower() not in (".jsonl", ".ndjson") else records(path)
    documents: list[tuple[str, Any]] = []
    for n, record in found:
        if isinstance(record, list):  # a list of trajectories
            documents += [(f"{path} record {n}, trajectory {j + 1}", t) for j, t in enumerate(record)]
        else:
            documents.append((f"{path} record {n}" if len(found) > 1 else str(path), record))
    out: list[Any] = []
    for where, doc in documents:
        if not isinstance(doc, dict) or not str(doc.get("schema_version", "")).startswith("ATIF-"):
            raise JurybenchError(f"{where}: not an ATIF trajectory (no schema_version 'ATIF-v1.x').")
        messages, models = _messages(doc.get("steps"), where)
        agent: dict[str, Any] = obj(doc.get("agent"))
        model = agent.get("model_name") or (sorted(models)[0] if len(models) == 1 else None)
        key = options.get("outcome")
        outcome = number(lookup(doc, key), where, key) if key else None
        session = doc.get("session_id")
        out.append(
            Conversation(
                item_id=str(session) if session is not None else f"{path.stem}/{len(out) + 1}",
                messages=messages,
                task=first_user_text(messages),
                task_id=None if options.get("task_id") is None else str(lookup(doc, options["task_id"])),
                agent_model=None if model is None else str(model),
                outcome=outcome,
                outcome_passed=None if outcome is None else outcome >= 1,
                outcome_source=None if outcome is None else options.get("source", f"ATIF {key}"),
                metadata={
                    "agent": agent.get("name"),
                    "agent_version": agent.get("version"),
                    "schema_version": doc.get("schema_version"),
                    "final_metrics": doc.get("final_metrics"),
                    **({"step_models": sorted(models)} if len(models) > 1 else {}),
                },
                where=where,
            )
        )
    return out


def detect(path: Path, head: Any) -> bool:
    return isinstance(head, dict) and str(head.get("schema_version", "")).startswith("ATIF-")


FORMATS = [
    ConversationFormat(
        name="atif",
        description="ATIF trajectories (Harbor's Agent Trajectory Interchange Format): steps, tool calls, "
        "observations.",
        read=read,
        detect=detect,
        fields={
            "items.item_id": "session_id",
            "conversations.messages": "steps: system/user/agent messages; agent tool_calls; observation.results as "
            "tool messages (source_call_id ties each to its call)",
            "items.model": "agent.model_name (else the steps' one model_name)",
            "conversations.outcome": "none of its own: --map outcome=FIELD (dotted, from the root)",
        },
        options={
            "outcome": "a root field holding a verified outcome (e.g. extra.reward)",
            "task_id": "a root field naming the task (repeated trials share it)",
            "source": "what verified the outcome",
        },
    )
]
