"""tau-bench's released results (sierra-research/tau-bench, ``historical_trajectories/*.json``
and what its ``run.py`` writes): a JSON list of trials, each {task_id, trial, reward, info:
{task: {instruction, actions: [{name, kwargs}], user_id}, ...}, traj: OpenAI chat messages}.
A trial is a conversation ``<file stem>/task<task_id>/trial<trial>``; the user's instruction is its
task; the reward (1 when the environment's final state and outputs match the task's) its
verified outcome, passed when it is 1, as the benchmark counts success; the task's actions its
reference actions. The agent's model is the file's stem before the domain
(``gpt-4o-airline`` -> ``gpt-4o``) unless ``--map model=NAME`` names it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybench.errors import JurybenchError
from jurybench.imports._conversations import ConversationFormat, lookup, number, openai_messages
from jurybench.imports._reading import records
from jurybench.imports.conversation_readers.openai_chat import reference_actions

DOMAINS = ("airline", "retail")


def _model(path: Path) -> str:
    stem = path.stem
    for domain in DOMAINS:
        if stem.endswith(f"-{domain}"):
            return stem[: -len(domain) - 1]
    return stem


def read(path: Path, options: Mapping[str, str]) -> list[Any]:
    from jurybench.store import Conversation

    out = []
    for n, record in records(path):
        where = f"{path} record {n}"
        if not isinstance(record, dict) or "traj" not in record or "task_id" not in record:
            raise JurybenchError(f"{where}: not a tau-bench trial (it needs task_id and traj).")
        messages = openai_messages(record["traj"], where)
        trial = record.get("trial", 0)
        if isinstance(trial, bool) or not isinstance(trial, int):
            raise JurybenchError(f"{where}, field 'trial': expected a whole number.")
        reward = number(record.get("reward"), where, "reward")
        instruction = lookup(record, "info.task.instruction")
        out.append(
            Conversation(
                item_id=f"{path.stem}/task{record['task_id']}/trial{trial}",
                messages=messages,
                task=str(instruction) if instruction is not None else None,
                task_id=f"{path.stem}/task{record['task_id']}",
                trial=trial,
                agent_model=options.get("model", _model(path)),
                outcome=reward,
                outcome_passed=None if reward is None else 1 - 1e-6 <= reward <= 1 + 1e-6,  # as run.py counts
                outcome_source="tau-bench reward (the final database state and outputs match the task's)",
                reference_actions=reference_actions(lookup(record, "info.task.actions"), where),
                metadata={"user_id": lookup(record, "info.task.user_id")},
                where=where,
            )
        )
    return out


def detect(path: Path, head: Any) -> bool:
    sample = head[0] if isinstance(head, list) and head else head
    return isinstance(sample, dict) and {"task_id", "traj", "reward"} <= set(sample)


FORMATS = [
    ConversationFormat(
        name="tau-bench",
        description="tau-bench's released trials (historical_trajectories/*.json): conversations with tool calls, "
        "a reward each.",
        read=read,
        detect=detect,
        fields={
            "conversations.messages": "traj (OpenAI chat messages with tool calls)",
            "conversations.task_id, trial": "task_id (prefixed with the file's stem), trial",
            "items.prompt, conversations.task": "info.task.instruction (the simulated user's goal)",
            "conversations.outcome": "reward; passed when it is 1",
            "conversations.reference_actions": "info.task.actions (name, kwargs)",
            "items.model": "the file's stem before the domain (gpt-4o-airline: gpt-4o)",
        },
        options={"model": "the agent's model, when the file's name does not say it"},
    )
]
