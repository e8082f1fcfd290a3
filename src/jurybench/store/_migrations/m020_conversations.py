"""Migration 20: conversations and agent trajectories as subjects (issue 84).

A conversation is an item whose content is an ordered list of messages (system, user,
assistant with text and tool calls, tool results) instead of one response. The item's row keeps
what every stage already reads (``prompt``: the task; ``response``: the final assistant text;
``model``: the agent's model), so every rubric, statistic and page that takes items takes a
conversation as one; the messages and tool calls are rows of their own, for SQL to read as data
(one row a message, one a tool call). Single-response items are unchanged: ``items.shape`` is
'response' for them."""

from __future__ import annotations

from jurybench.store._migrations._base import Connection, comment

VIEWS = ("conversation_summary", "conversation_tools")


def m020_conversations(con: Connection) -> None:
    con.execute("ALTER TABLE items ADD COLUMN shape VARCHAR DEFAULT 'response'")
    con.execute("UPDATE items SET shape = 'response' WHERE shape IS NULL")
    comment(
        con,
        "items",
        {
            "shape": "response (one response to one prompt) or conversation (ordered messages, in the messages "
            "table; response is then the final assistant text and prompt the task)"
        },
    )
    comment(
        con,
        "calls",
        {
            "presentation": "questionnaires: the item order shown and the scale rotation drawn for the call "
            '({"order": [...], "rotation": [...]}); a conversation cut to the juror\'s context: what was cut '
            '({"context_tokens", "context_from", "cut": {side: {"messages_elided", "results_cut", ...}}}: '
            "docs/conversations.md); NULL when shown whole"
        },
    )
    con.execute(
        """
        CREATE TABLE conversations (
            item_id VARCHAR PRIMARY KEY,
            task_id VARCHAR,
            trial INTEGER,
            task VARCHAR,
            agent_model VARCHAR,
            outcome DOUBLE,
            outcome_passed BOOLEAN,
            outcome_source VARCHAR,
            reference_actions JSON,
            n_messages INTEGER NOT NULL,
            n_tool_calls INTEGER NOT NULL,
            source_format VARCHAR NOT NULL,
            transcript_sha256 VARCHAR NOT NULL
        )"""
    )
    comment(
        con,
        "conversations",
        {
            "": "Conversations and agent trajectories: one row each, the item of the same id holding what every "
            "stage reads (task as prompt, final answer as response).",
            "item_id": "the conversation's item",
            "task_id": "the task it attempts (repeated trials of one task share it)",
            "trial": "the trial number of a repeated task (0, 1, ...), NULL when not repeated",
            "task": "the instructions or the user's goal",
            "agent_model": "the model of the agent whose conversation it is",
            "outcome": "a verified outcome from the environment (a reward, the share of tests passed), NULL if none",
            "outcome_passed": "whether the verified outcome counts as success (outcome >= 1 when not said)",
            "outcome_source": "where the outcome comes from (tau-bench reward, tests, a database check, ...)",
            "reference_actions": "the tool calls a correct run makes: a JSON list of {tool, arguments}",
            "n_messages": "messages in the conversation",
            "n_tool_calls": "tool calls in its assistant messages",
            "source_format": "the reader it was imported with (items import --format)",
            "transcript_sha256": "a hash of its messages, task, outcome and reference actions: a re-import of the "
            "same id with other content is refused",
        },
    )
    con.execute(
        """
        CREATE TABLE messages (
            item_id VARCHAR NOT NULL,
            position INTEGER NOT NULL,
            role VARCHAR NOT NULL,
            content VARCHAR,
            name VARCHAR,
            tool_call_id VARCHAR,
            n_chars INTEGER NOT NULL,
            PRIMARY KEY (item_id, position)
        )"""
    )
    comment(
        con,
        "messages",
        {
            "": "Each message of a conversation, in order.",
            "item_id": "the conversation",
            "position": "its place in the conversation, from 0",
            "role": "system, user, assistant or tool",
            "content": "its text (an assistant message that only calls tools may have none)",
            "name": "a tool result's tool name, or a participant's name",
            "tool_call_id": "a tool result: the id of the call it answers",
            "n_chars": "characters of its content",
        },
    )
    con.execute(
        """
        CREATE TABLE tool_calls (
            item_id VARCHAR NOT NULL,
            position INTEGER NOT NULL,
            call_index INTEGER NOT NULL,
            call_id VARCHAR,
            tool VARCHAR NOT NULL,
            arguments JSON,
            result_position INTEGER,
            result_chars INTEGER,
            PRIMARY KEY (item_id, position, call_index)
        )"""
    )
    comment(
        con,
        "tool_calls",
        {
            "": "Each tool call an assistant message makes, with where its result is.",
            "item_id": "the conversation",
            "position": "the assistant message that makes the call",
            "call_index": "the call's place among that message's calls, from 0",
            "call_id": "the call's id (tool results name it)",
            "tool": "the tool called",
            "arguments": "its arguments, as JSON",
            "result_position": "the tool message that holds its result, NULL when none answers it",
            "result_chars": "characters of that result",
        },
    )
