"""Conversations and agent trajectories as the store holds them (migration m020).

A :class:`Conversation` is what every reader of a trace format produces (``items import
--format NAME``): ordered messages (system, user, assistant with text and tool calls, tool results
tied to their call), the task, the reference actions, a verified outcome, the trial of a
repeated task, the agent's model. :meth:`Conversation.check` refuses what no trace can mean (an
unknown role, a tool result answering no call, arguments that are not JSON, a conversation or a
message past the sizes a judge can be shown) in one line naming the file, the record and the
field; :func:`write_conversations` writes a file's conversations in one transaction: an item each
(its task as the prompt, its final assistant text as the response, its agent's model), and its
messages and tool calls as rows of their own.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError, brief

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.store._imports import ImportResult

ROLES = ("system", "user", "assistant", "tool")
# A conversation longer than this, or a message larger, is refused at import: no judge's context
# holds it, and a file that has one is more likely broken than meant (docs/formats.md).
MAX_MESSAGES = 5_000
MAX_MESSAGE_CHARS = 4_000_000


@dataclass(frozen=True)
class ToolCall:
    """One call an assistant message makes: its id (what its result names), the tool, and the
    arguments as parsed JSON."""

    call_id: str | None
    tool: str
    arguments: Any

    @cached_property
    def arguments_text(self) -> str:
        """The arguments as one line of JSON, keys sorted (made once: a judge's prompt and the
        store both show it)."""
        return json.dumps(self.arguments, ensure_ascii=False, sort_keys=True, default=str)


@dataclass(frozen=True)
class Message:
    role: str
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None  # a tool result: the call it answers
    name: str | None = None  # a tool result's tool, or a participant's name


@dataclass
class Conversation:
    """A conversation or an agent's trajectory, as a subject to judge."""

    item_id: str
    messages: list[Message]
    task: str | None = None
    task_id: str | None = None
    trial: int | None = None
    agent_model: str | None = None
    outcome: float | None = None
    outcome_passed: bool | None = None
    outcome_source: str | None = None
    reference_actions: list[dict[str, Any]] | None = None
    dataset: str | None = None
    language: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    answer: str | None = None  # the response its item holds, when the format names one (else the last assistant text)
    reference: str | None = None  # a reference answer for the item (Inspect's target)
    where: str = ""  # the file and record it came from, for messages: "trace.jsonl record 3"

    def check(self) -> None:
        """Refuse what a trace cannot mean, in one line naming the record and the field."""
        if not self.item_id:
            raise JurybenchError(f"{self.where}: no id for the conversation.", hint="Map one with --map id=FIELD.")
        if not self.messages:
            raise JurybenchError(f"{self.where}, field 'messages': the conversation has no messages.")
        if len(self.messages) > MAX_MESSAGES:
            raise JurybenchError(
                f"{self.where}, field 'messages': {len(self.messages):,} messages, more than the {MAX_MESSAGES:,} a "
                "conversation may have.",
                hint="Split the trace, or import the part a judge should read.",
            )
        called: set[str] = set()
        for k, m in enumerate(self.messages):
            at = f"{self.where}, message {k}"
            if m.role not in ROLES:
                raise JurybenchError(
                    f"{at}, field 'role': {brief(m.role)} is not a role.", hint=f"Valid: {', '.join(ROLES)}."
                )
            if m.content is not None and len(m.content) > MAX_MESSAGE_CHARS:
                raise JurybenchError(
                    f"{at}, field 'content': {len(m.content):,} characters, more than the {MAX_MESSAGE_CHARS:,} a "
                    "message may hold.",
                    hint="Cut the tool's output before importing (a judge is shown a few thousand characters of it).",
                )
            if m.tool_calls and m.role != "assistant":
                raise JurybenchError(f"{at}, field 'tool_calls': a {m.role} message makes no tool calls.")
            for call in m.tool_calls:
                if not call.tool:
                    raise JurybenchError(f"{at}, field 'tool_calls': a call without a tool name.")
                if call.call_id:
                    called.add(call.call_id)
            # a tool message without an id is the environment's answer to an action that was not
            # a tool call (ATIF's observations of a shell command); with one it answers that call
            if m.role == "tool" and m.tool_call_id is not None and m.tool_call_id not in called:
                raise JurybenchError(
                    f"{at}, field 'tool_call_id': {brief(m.tool_call_id)} answers no tool call made before it.",
                    hint="Each tool result follows the assistant message that made its call.",
                )

    @property
    def final_answer(self) -> str:
        """The last assistant text (what single-response rubrics judge of a conversation)."""
        for m in reversed(self.messages):
            if m.role == "assistant" and m.content and m.content.strip():
                return m.content
        return ""

    @property
    def n_tool_calls(self) -> int:
        return sum(len(m.tool_calls) for m in self.messages)

    def digest(self) -> str:
        """What the conversation holds, hashed: a re-import of the same id with other messages is
        a conflict, as an item's other response is."""
        payload = [
            [m.role, m.content, [[c.call_id, c.tool, c.arguments] for c in m.tool_calls], m.tool_call_id, m.name]
            for m in self.messages
        ]
        text = json.dumps([payload, self.task, self.outcome, self.reference_actions], sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()


def parse_arguments(raw: Any, where: str) -> Any:
    """Tool-call arguments as parsed JSON: a JSON string (OpenAI's ``function.arguments``) is
    parsed; an object is kept; text that is not JSON is refused in one line."""
    if raw is None or isinstance(raw, dict | list | int | float | bool):
        return raw
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise JurybenchError(
                f"{where}, field 'arguments': {brief(raw)} is not JSON ({exc.msg} at character {exc.pos}).",
                hint="Tool-call arguments are a JSON object, or a string holding one.",
            ) from None
    raise JurybenchError(f"{where}, field 'arguments': {brief(raw)} is not JSON.")


# Conversations checked and written at a time: an import's memory stays flat as its file grows.
WRITE_CHUNK = 1_000


def write_conversations(
    con: Connection, conversations: Iterable[Conversation], *, source: str, fmt: str, dataset: str | None = None
) -> ImportResult:
    """Each conversation as an item (shape 'conversation') with its messages and tool calls, all in
    one transaction, ``WRITE_CHUNK`` at a time (a stream is read as it is written: the first bad
    record rolls back everything before it); a conversation stored already with the same content
    is left as it is. No conversation at all is refused."""
    import pyarrow as pa

    from jurybench.store._db import registered, transaction
    from jurybench.store._imports import ImportResult

    total = ImportResult(0, 0)
    seen: dict[str, str] = {}  # id -> where: an id twice in one import is refused
    with transaction(con):
        for chunk in _chunks(conversations, WRITE_CHUNK):
            for c in chunk:
                c.check()
                if c.item_id in seen:
                    raise JurybenchError(
                        f"{c.where}: conversation id {c.item_id!r} is given twice (first at {seen[c.item_id]}).",
                        hint="Each conversation needs an id of its own (--map id=FIELD).",
                    )
                seen[c.item_id] = c.where
            done = _write_chunk(con, chunk, source=source, fmt=fmt, dataset=dataset, pa=pa, registered=registered)
            total = ImportResult(
                total.inserted + done.inserted, total.unchanged + done.unchanged, total.updated + done.updated
            )
        if not seen:
            raise JurybenchError(f"{source}: no conversations in it.")
    return dataclasses.replace(total, conversations=True)


def _chunks(items: Iterable[Conversation], size: int) -> Iterator[list[Conversation]]:
    chunk: list[Conversation] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _write_chunk(
    con: Connection, chunk: list[Conversation], *, source: str, fmt: str, dataset: str | None, pa: Any, registered: Any
) -> ImportResult:
    from jurybench.store._imports import write_items

    records = [
        (
            k,
            {
                "item_id": c.item_id,
                "response": c.final_answer if c.answer is None else c.answer,
                "prompt": c.task,
                "reference": c.reference,
                "model": c.agent_model,
                "language": c.language,
                "treatment": None,
                "metadata": json.dumps(c.metadata, sort_keys=True, default=str) if c.metadata else None,
                "dataset": dataset or c.dataset,
                "source_file": source,
            },
        )
        for k, c in enumerate(chunk, start=1)
    ]
    stored = dict(
        con.execute(
            "SELECT item_id, transcript_sha256 FROM conversations WHERE item_id IN (SELECT unnest(?::VARCHAR[]))",
            [[c.item_id for c in chunk]],
        ).fetchall()
    )
    for c in chunk:
        if c.item_id in stored and stored[c.item_id] != c.digest():
            raise JurybenchError(
                f"{c.where}: conversation {c.item_id!r} is stored already with other messages, task, outcome or "
                "reference actions.",
                hint="Give it another id (--map id=FIELD), or import into a fresh --db.",
            )
    result = write_items(con, records, source=source, in_transaction=True)
    fresh = [c for c in chunk if c.item_id not in stored]
    if fresh:
        _insert(con, fresh, fmt, pa, registered)
    return result


_CONVERSATION_COLUMNS = {
    "item_id": "string",
    "task_id": "string",
    "trial": "int32",
    "task": "string",
    "agent_model": "string",
    "outcome": "float64",
    "outcome_passed": "bool_",
    "outcome_source": "string",
    "reference_actions": "string",
    "n_messages": "int32",
    "n_tool_calls": "int32",
    "source_format": "string",
    "transcript_sha256": "string",
}
_MESSAGE_COLUMNS = {
    "item_id": "string",
    "position": "int32",
    "role": "string",
    "content": "string",
    "name": "string",
    "tool_call_id": "string",
    "n_chars": "int32",
}
_CALL_COLUMNS = {
    "item_id": "string",
    "position": "int32",
    "call_index": "int32",
    "call_id": "string",
    "tool": "string",
    "arguments": "string",
    "result_position": "int32",
    "result_chars": "int32",
}


def answers(messages: Sequence[Message]) -> dict[tuple[int, int], int]:
    """Where each tool call's result is: (the calling message's position, the call's index) ->
    the position of the tool message answering it. A result answers the earliest call of its id
    still unanswered: released traces reuse ids (tau-bench's gpt-4o trials give a later call the
    id of one answered already), so an id alone does not say which call a result is for."""
    pending: dict[str, list[tuple[int, int]]] = {}
    found: dict[tuple[int, int], int] = {}
    for k, m in enumerate(messages):
        for j, call in enumerate(m.tool_calls):
            if call.call_id:
                pending.setdefault(call.call_id, []).append((k, j))
        if m.role == "tool" and m.tool_call_id and pending.get(m.tool_call_id):
            found[pending[m.tool_call_id].pop(0)] = k
    return found


def _table(pa: Any, rows: list[dict[str, Any]], columns: dict[str, str]) -> Any:
    """Rows as an Arrow table of the given column types (an empty list keeps its columns)."""
    return pa.Table.from_pylist(rows, schema=pa.schema([(name, getattr(pa, kind)()) for name, kind in columns.items()]))


def _insert(con: Connection, fresh: list[Conversation], fmt: str, pa: Any, registered: Any) -> None:
    heads = [
        {
            "item_id": c.item_id,
            "task_id": c.task_id,
            "trial": c.trial,
            "task": c.task,
            "agent_model": c.agent_model,
            "outcome": c.outcome,
            "outcome_passed": c.outcome_passed,
            "outcome_source": c.outcome_source,
            "reference_actions": None if c.reference_actions is None else json.dumps(c.reference_actions),
            "n_messages": len(c.messages),
            "n_tool_calls": c.n_tool_calls,
            "source_format": fmt,
            "transcript_sha256": c.digest(),
        }
        for c in fresh
    ]
    messages, calls = [], []
    for c in fresh:
        results = answers(c.messages)
        # a tool result names the tool it answers when its format leaves that to the call
        tool_of = {at: c.messages[k].tool_calls[j].tool for (k, j), at in results.items()}
        for k, m in enumerate(c.messages):
            messages.append(
                {
                    "item_id": c.item_id,
                    "position": k,
                    "role": m.role,
                    "content": m.content,
                    "name": m.name if m.name is not None else tool_of.get(k),
                    "tool_call_id": m.tool_call_id,
                    "n_chars": len(m.content or ""),
                }
            )
            for j, call in enumerate(m.tool_calls):
                answered = results.get((k, j))
                calls.append(
                    {
                        "item_id": c.item_id,
                        "position": k,
                        "call_index": j,
                        "call_id": call.call_id,
                        "tool": call.tool,
                        "arguments": call.arguments_text,
                        "result_position": answered,
                        "result_chars": len(c.messages[answered].content or "") if answered is not None else None,
                    }
                )
    with registered(con, "_jb_conversations", _table(pa, heads, _CONVERSATION_COLUMNS)):
        con.execute(
            "INSERT INTO conversations SELECT * REPLACE (reference_actions::JSON AS reference_actions) "
            "FROM _jb_conversations"
        )
    with registered(con, "_jb_messages", _table(pa, messages, _MESSAGE_COLUMNS)):
        con.execute("INSERT INTO messages SELECT * FROM _jb_messages")
    with registered(con, "_jb_tool_calls", _table(pa, calls, _CALL_COLUMNS)):
        con.execute("INSERT INTO tool_calls SELECT * REPLACE (arguments::JSON AS arguments) FROM _jb_tool_calls")
    con.execute(
        "UPDATE items SET shape = 'conversation' WHERE item_id IN (SELECT unnest(?::VARCHAR[]))",
        [[c.item_id for c in fresh]],
    )


def load_messages(con: Connection, item_ids: Sequence[str]) -> dict[str, list[Message]]:
    """The messages of those of ``item_ids`` that are conversations, in order, each with its tool
    calls (two queries for any number of ids)."""
    import pyarrow as pa

    from jurybench.store._db import registered

    wanted = pa.table({"id": pa.array(list(dict.fromkeys(item_ids)), pa.string())})
    with registered(con, "_jb_conversation_ids", wanted):
        rows = con.execute(
            "SELECT item_id, position, role, content, name, tool_call_id FROM messages "
            "WHERE item_id IN (SELECT id FROM _jb_conversation_ids) ORDER BY item_id, position"
        ).fetchall()
        call_rows = con.execute(
            "SELECT item_id, position, call_id, tool, arguments FROM tool_calls "
            "WHERE item_id IN (SELECT id FROM _jb_conversation_ids) ORDER BY item_id, position, call_index"
        ).fetchall()
    calls: dict[tuple[str, int], list[ToolCall]] = {}
    for item_id, position, call_id, tool, arguments in call_rows:
        calls.setdefault((item_id, int(position)), []).append(
            ToolCall(call_id, str(tool), json.loads(arguments) if arguments else None)
        )
    out: dict[str, list[Message]] = {}
    for item_id, position, role, content, name, tool_call_id in rows:
        out.setdefault(item_id, []).append(
            Message(str(role), content, tuple(calls.get((item_id, int(position)), ())), tool_call_id, name)
        )
    return out


def load_conversation(con: Connection, item_id: str) -> Conversation | None:
    """A stored conversation with its messages, or None for an item that is not one."""
    head = con.execute(
        "SELECT c.task_id, c.trial, c.task, c.agent_model, c.outcome, c.outcome_passed, c.outcome_source, "
        "c.reference_actions, i.dataset, i.language FROM conversations c JOIN items i USING (item_id) WHERE item_id = ?",
        [item_id],
    ).fetchone()
    if head is None:
        return None
    calls: dict[int, list[ToolCall]] = {}
    for position, call_id, tool, arguments in con.execute(
        "SELECT position, call_id, tool, arguments FROM tool_calls WHERE item_id = ? ORDER BY position, call_index",
        [item_id],
    ).fetchall():
        calls.setdefault(int(position), []).append(
            ToolCall(call_id, str(tool), json.loads(arguments) if arguments else None)
        )
    messages = [
        Message(str(role), content, tuple(calls.get(int(position), ())), tool_call_id, name)
        for position, role, content, name, tool_call_id in con.execute(
            "SELECT position, role, content, name, tool_call_id FROM messages WHERE item_id = ? ORDER BY position",
            [item_id],
        ).fetchall()
    ]
    task_id, trial, task, agent_model, outcome, passed, source, reference, dataset, language = head
    return Conversation(
        item_id,
        messages,
        task=task,
        task_id=task_id,
        trial=trial,
        agent_model=agent_model,
        outcome=outcome,
        outcome_passed=passed,
        outcome_source=source,
        reference_actions=json.loads(reference) if reference else None,
        dataset=dataset,
        language=language,
    )
