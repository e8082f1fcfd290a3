"""Conversations and agent trajectories read as released (issue 84): each reader on a real released
file (tau-bench's gpt-4o airline trials, an Inspect log with tool calls) or on its format's published
specification (OpenAI chat, OpenTelemetry GenAI, ATIF: fixtures/specified), with counts, roles, tool
calls and outcomes worked out by hand from the files; hostile files refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli, sql_rows, write

RELEASED = Path(__file__).resolve().parents[1] / "fixtures" / "released"
SPECIFIED = Path(__file__).resolve().parents[1] / "fixtures" / "specified"
TAU = RELEASED / "tau_bench" / "gpt-4o-airline.json"
BROWSER = RELEASED / "inspect" / "2025-05-12T20-27-36-04-00_browser-messages.json"


def _import(db: Path, file: Path, fmt: str, *maps: str) -> str:
    args = [arg for m in maps for arg in ("--map", m)]
    done = run_cli("items", "import", str(file), "--format", fmt, *args, "--db", str(db))
    assert done.exit_code == 0, done.stderr
    return done.stdout


def test_tau_bench_trials_are_read_as_released(tmp_path: Path) -> None:
    """The fixture holds tasks 0-2 x trials 0-3 of gpt-4o's airline results. Counted from the
    file: trials (task, trial) -> (messages in traj, tool calls): (0,0) 32, 8; (0,1) 26, 6;
    (0,2) 24, 6; (0,3) 46, 13; (1,0) 12, 0; (1,1) 22, 5; (1,2) 20, 1; (1,3) 16, 0; (2,0) 24, 7;
    (2,1) 62, 27; (2,2) 38, 13; (2,3) 36, 13 = 99 calls; reward 1 only in (1,1) and (2,2)."""
    db = tmp_path / "tau.duckdb"
    out = _import(db, TAU, "tau-bench")
    assert "conversations from" in out and "12 inserted" in out
    rows = sql_rows(
        db, "SELECT task_id, trial, n_messages, n_tool_calls, outcome_passed FROM conversations ORDER BY ALL"
    )
    expected = [(0, 0, 32, 8), (0, 1, 26, 6), (0, 2, 24, 6), (0, 3, 46, 13), (1, 0, 12, 0), (1, 1, 22, 5)]
    expected += [(1, 2, 20, 1), (1, 3, 16, 0), (2, 0, 24, 7), (2, 1, 62, 27), (2, 2, 38, 13), (2, 3, 36, 13)]
    assert [(int(t[-1]), trial, n, calls) for t, trial, n, calls, _ in rows] == expected
    assert {(t, trial) for t, trial, *_, passed in rows if passed} == {
        ("gpt-4o-airline/task1", 1),
        ("gpt-4o-airline/task2", 2),
    }
    assert sql_rows(db, "SELECT count(*) FROM tool_calls") == [(99,)]
    assert sql_rows(db, "SELECT count(*) FROM messages") == [
        (32 + 26 + 24 + 46 + 12 + 22 + 20 + 16 + 24 + 62 + 38 + 36,)
    ]
    # trial (0, 0): the 'calculate' call at message 16 reuses the id of the get_user_details call at
    # 6 (answered at 7); its result is message 17, '255.0' (5 characters), not message 7's 850
    calls = sql_rows(
        db,
        "SELECT position, tool, result_position, result_chars FROM tool_calls "
        "WHERE item_id = 'gpt-4o-airline/task0/trial0' ORDER BY position",
    )
    assert calls[0] == (6, "get_user_details", 7, 850) and calls[3] == (16, "calculate", 17, 5)
    assert [c[1] for c in calls] == [
        "get_user_details",
        "search_direct_flight",
        "search_onestop_flight",
        "calculate",
        "book_reservation",
        "think",
        "calculate",
        "book_reservation",
    ]
    head = sql_rows(
        db,
        "SELECT i.shape, i.model, i.prompt, i.response, c.reference_actions->>'$[0].tool', "
        "json_array_length(c.reference_actions) FROM items i JOIN conversations c USING (item_id) "
        "WHERE item_id = 'gpt-4o-airline/task0/trial0'",
    )[0]
    raw = json.loads(TAU.read_text(encoding="utf-8"))
    first = next(r for r in raw if r["task_id"] == 0 and r["trial"] == 0)
    assert head[:3] == ("conversation", "gpt-4o", first["info"]["task"]["instruction"])
    assert head[3] == first["traj"][30]["content"]  # the last assistant text (message 31 is the user's ###STOP)
    assert head[4:] == ("book_reservation", 1)
    # the tool result names the tool its call made (tau-bench's tool messages carry it too)
    assert sql_rows(
        db, "SELECT name FROM messages WHERE item_id = 'gpt-4o-airline/task0/trial0' AND position = 17"
    ) == [("calculate",)]
    again = _import(db, TAU, "tau-bench")
    assert "0 inserted, 12 already present" in again
    assert sql_rows(db, "SELECT count(*) FROM messages") == [(358,)]


def test_an_inspect_log_is_read_with_its_tool_calls_and_shares_its_scores_items(tmp_path: Path) -> None:
    """Inspect's own browser test log (one sample, gpt-4o-mini): user, then four assistant turns each
    calling one tool (web_browser_go, then web_browser_click x3) answered by a tool message, then
    the answer: 10 messages, 4 calls; the 'includes' scorer says C (1)."""
    db = tmp_path / "inspect.duckdb"
    _import(db, BROWSER, "inspect")
    item = "inspect-browser-1-e1-openai/gpt-4o-mini"
    roles = [r for (r,) in sql_rows(db, f"SELECT role FROM messages WHERE item_id = '{item}' ORDER BY position")]
    assert roles == ["user", *["assistant", "tool"] * 4, "assistant"]
    tools = sql_rows(db, f"SELECT tool, arguments->>'$.url', result_position FROM tool_calls WHERE item_id = '{item}'")
    assert [t for t, *_ in sorted(tools, key=lambda t: t[2])] == ["web_browser_go", *["web_browser_click"] * 3]
    assert ("web_browser_go", "https://www.aisi.gov.uk/", 2) in tools
    assert sql_rows(
        db, f"SELECT trial, agent_model, outcome, outcome_source FROM conversations WHERE item_id = '{item}'"
    ) == [(1, "openai/gpt-4o-mini", 1.0, "inspect scorer includes")]
    # the scores of the same log, imported as judgments, judge this very item
    done = run_cli("judgments", "import", str(BROWSER), "--run", "scored", "--format", "inspect", "--db", str(db))
    assert done.exit_code == 0, done.stderr
    assert sql_rows(db, "SELECT DISTINCT item_id FROM juror_pointwise WHERE run_id = 'scored'") == [(item,)]
    assert sql_rows(db, f"SELECT shape FROM items WHERE item_id = '{item}'") == [("conversation",)]


def test_openai_chat_records_with_a_map(tmp_path: Path) -> None:
    """agent-runs.jsonl (OpenAI's chat format: https://platform.openai.com/docs/api-reference/chat):
    weather-1 a tool call and its result; weather-2 the legacy function_call and function role,
    content as parts; weather-3 two calls in one message answered out of order."""
    db = tmp_path / "chat.duckdb"
    file = SPECIFIED / "openai_chat" / "agent-runs.jsonl"
    _import(db, file, "openai-chat", "id=run_id", "outcome=info.reward", "task=info.task", "model=agent")
    heads = sql_rows(
        db, "SELECT item_id, task, n_messages, n_tool_calls, outcome, outcome_passed FROM conversations ORDER BY 1"
    )
    assert heads == [
        ("weather-1", "Tell the user tomorrow's weather in Lyon.", 5, 1, 1.0, True),
        ("weather-2", "Convert 30 C to F\n[image_url]", 4, 1, 0.0, False),  # no task mapped: the first user text
        ("weather-3", "Hi", 5, 2, None, None),
    ]
    calls = sql_rows(
        db, "SELECT item_id, call_id, tool, arguments::VARCHAR, result_position FROM tool_calls ORDER BY ALL"
    )
    assert calls == [
        ("weather-1", "call_a1", "get_forecast", '{"city": "Lyon", "days": 1}', 3),
        ("weather-2", "legacy-1", "convert", '{"celsius": 30}', 2),
        ("weather-3", "c1", "lookup", "{}", 3),
        ("weather-3", "c2", "lookup", '{"q": "x"}', 2),
    ]
    assert sql_rows(db, "SELECT response FROM items WHERE item_id = 'weather-2'") == [("30 C is 68 F.",)]


def test_otel_genai_spans_one_conversation_a_trace(tmp_path: Path) -> None:
    """traces.json (OTLP JSON; GenAI semantic conventions https://opentelemetry.io/docs/specs/semconv/gen-ai/):
    trace 0af7... has two chat spans; the later one's system instructions, 3 input messages (user,
    the tool call, its response) and output make 5 messages, named by gen_ai.conversation.id;
    trace 5b8e... gives its messages as events; the health-check trace has no model call."""
    db = tmp_path / "otel.duckdb"
    _import(db, SPECIFIED / "otel_genai" / "traces.json", "otel-genai", "outcome=eval.reward")
    assert sql_rows(
        db, "SELECT item_id, agent_model, n_messages, n_tool_calls, outcome FROM conversations ORDER BY 1"
    ) == [
        ("5b8efff798038103d269b633813fc60c", "gpt-4o-mini", 5, 1, None),
        ("booking-42", "gpt-4o-2024-08-06", 5, 1, 1.0),
    ]
    roles = sql_rows(db, "SELECT role, left(content, 12) FROM messages WHERE item_id = 'booking-42' ORDER BY position")
    assert [r for r, _ in roles] == ["system", "user", "assistant", "tool", "assistant"]
    assert roles[0][1] == "You book res" and roles[4][1] == "Table 12 is "
    assert sql_rows(
        db, "SELECT tool, arguments->>'$.people', result_position FROM tool_calls WHERE item_id = 'booking-42'"
    ) == [("find_table", "2", 3)]
    assert sql_rows(db, "SELECT tool, result_position FROM tool_calls WHERE item_id LIKE '5b8e%'") == [("calc", 3)]


def test_an_atif_trajectory(tmp_path: Path) -> None:
    """trajectory.json (ATIF v1.4, https://github.com/laude-institute/harbor/blob/main/docs/rfcs/0001-trajectory-format.md):
    system, user, an agent step with two calls and their two results, an agent step whose shell
    command's output has no call id, the final step: 8 messages, 2 calls."""
    db = tmp_path / "atif.duckdb"
    _import(db, SPECIFIED / "atif" / "trajectory.json", "atif", "outcome=extra.reward", "task_id=extra.task")
    assert sql_rows(
        db, "SELECT item_id, task_id, agent_model, n_messages, n_tool_calls, outcome FROM conversations"
    ) == [("fix-readme-7", "fix-readme", "claude-sonnet-4", 8, 2, 1.0)]
    msgs = sql_rows(
        db, "SELECT role, name, tool_call_id FROM messages WHERE item_id = 'fix-readme-7' ORDER BY position"
    )
    assert msgs == [
        ("system", None, None),
        ("user", None, None),
        ("assistant", None, None),
        ("tool", "read_file", "call_1"),
        ("tool", "list_dir", "call_2"),
        ("assistant", None, None),
        ("tool", None, None),  # the environment's answer to a command that was not a tool call
        ("assistant", None, None),
    ]


def _chat(tmp_path: Path, name: str, messages: list[object]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"id": "x", "messages": messages}) + "\n", encoding="utf-8")
    return path


USER = {"role": "user", "content": "hi"}
CALL = {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{}"}}]}


@pytest.mark.parametrize(
    ("name", "messages", "message"),
    [
        (
            "orphan.jsonl",
            [USER, {"role": "tool", "tool_call_id": "zz", "content": "r"}],
            "message 1, field 'tool_call_id': 'zz' answers no tool call made before it",
        ),
        ("role.jsonl", [USER, {"role": "wizard", "content": "r"}], "message 1, field 'role': 'wizard' is not a role"),
        (
            "args.jsonl",
            [
                USER,
                {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{city:"}}]},
            ],
            "message 1, tool call 0, field 'arguments': '{city:' is not JSON",
        ),
        ("long.jsonl", [USER, {"role": "assistant", "content": "ok"}] * 5000, "10,000 messages, more than the 5,000"),
        (
            "big.jsonl",
            [USER, CALL, {"role": "tool", "tool_call_id": "a", "content": "x" * 50_000_000}],
            "message 2, field 'content': 50,000,000 characters, more than the 4,000,000",
        ),
        (
            "noid.jsonl",
            [USER, CALL, {"role": "tool", "content": "r"}],
            "message 2, field 'tool_call_id': a tool result",
        ),
    ],
)
def test_hostile_traces_are_refused_in_one_line_and_write_nothing(
    tmp_path: Path, name: str, messages: list[object], message: str
) -> None:
    db = tmp_path / "store.duckdb"
    _import(db, TAU, "tau-bench")  # a store with conversations in it already: nothing of the bad file joins them
    path = _chat(tmp_path, name, messages)
    done = run_cli("items", "import", str(path), "--format", "openai-chat", "--db", str(db))
    assert done.exit_code == 2, done.stdout
    assert f"{path} record 1" in done.stderr and message in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) <= 2 and "Traceback" not in done.stderr
    assert sql_rows(db, "SELECT count(*), count(*) FILTER (WHERE item_id = 'x') FROM items") == [(12, 0)]
    assert sql_rows(db, "SELECT count(*) FROM messages") == [(358,)]


def test_bad_maps_and_formats_are_one_line(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    file = SPECIFIED / "openai_chat" / "agent-runs.jsonl"
    for args, message in [
        (["--format", "openai-chat", "--map", "nonsense"], "--map 'nonsense': expected KEY=FIELD"),
        (["--format", "openai-chat", "--map", "colour=x"], "--map colour: not a key the openai-chat reader takes"),
        (["--format", "nope"], "--format 'nope' is neither a file format nor a conversation format"),
        (["--map", "id=x"], "--map goes with a conversation format"),
        (["--format", "atif"], "not an ATIF trajectory"),
        (["--format", "otel-genai"], "not OTLP JSON traces"),
    ]:
        done = run_cli("items", "import", str(file), *args, "--db", str(db))
        assert done.exit_code == 2 and message in done.stderr, (args, done.stderr)
    assert not db.exists()  # refused before a store was made: none left behind
    inspect_refused = run_cli(
        "items",
        "import",
        str(RELEASED / "inspect" / "log_tool_call_error.json"),
        "--format",
        "inspect",
        "--db",
        str(db),
    )
    # Inspect's own test log of a tool-call error holds tool messages with no call before them
    assert inspect_refused.exit_code == 2
    assert "sample 1, message 0, field 'tool_call_id': 'bash_1' answers no tool call" in inspect_refused.stderr


def test_single_response_items_are_unchanged_by_the_migration(tmp_path: Path) -> None:
    db = tmp_path / "plain.duckdb"
    rows = tmp_path / "items.csv"
    rows.write_text("item_id,response,prompt\na,first,p\nb,second,p\n", encoding="utf-8")
    assert run_cli("items", "import", str(rows), "--db", str(db)).exit_code == 0
    assert sql_rows(db, "SELECT item_id, shape FROM items ORDER BY 1") == [("a", "response"), ("b", "response")]
    assert sql_rows(db, "SELECT count(*) FROM conversation_summary") == [(0,)]
    listed = run_cli("schema")
    for name in ("conversations", "messages", "tool_calls", "conversation_summary", "conversation_tools"):
        assert f"### `{name}`" in listed.stdout, name


def test_python_and_a_study_step_read_the_same(tmp_path: Path) -> None:
    """The reader is declared once: Store.import_items(path, fmt=..., map=...) and a study's
    `items import` step import what the command line does."""
    import jurybench as jb

    file = SPECIFIED / "openai_chat" / "agent-runs.jsonl"
    with jb.open(tmp_path / "py.duckdb") as store:
        done = store.import_items(file, fmt="openai-chat", map={"id": "run_id", "outcome": "info.reward"})
    assert (done.inserted, done.unchanged, done.conversations) == (3, 0, True)
    study = write(
        tmp_path / "s.yaml",
        f"name: agents\nsteps:\n  - items import: {{_: '{file}', format: openai-chat, map: [id=run_id, outcome=info.reward]}}\n"
        "  - sql: {_: 'SELECT count(*) AS n FROM conversations WHERE outcome_passed'}\n",
    )
    ran = run_cli("study", "run", str(study), "--db", str(tmp_path / "study.duckdb"))
    assert ran.exit_code == 0, ran.stderr
    assert (
        sql_rows(tmp_path / "study.duckdb", "SELECT item_id, outcome FROM conversations ORDER BY 1")
        == sql_rows(tmp_path / "py.duckdb", "SELECT item_id, outcome FROM conversations ORDER BY 1")
        == [("weather-1", 1.0), ("weather-2", 0.0), ("weather-3", None)]
    )


def test_an_id_twice_in_one_file_is_refused_and_a_stream_rolls_back_whole(tmp_path: Path) -> None:
    """A JSON-lines file is written as it is read, a thousand at a time in one transaction: a bad
    record on line 1,500 leaves none of the first 1,499 behind."""
    good = [
        json.dumps({"id": f"c{k}", "messages": [USER, {"role": "assistant", "content": "ok"}]}) for k in range(1499)
    ]
    bad = json.dumps({"id": "bad", "messages": [USER, {"role": "tool", "tool_call_id": "q", "content": "r"}]})
    path = write(tmp_path / "many.jsonl", "\n".join([*good, bad]) + "\n")
    db = tmp_path / "s.duckdb"
    _import(db, TAU, "tau-bench")
    done = run_cli("items", "import", str(path), "--format", "openai-chat", "--db", str(db))
    assert done.exit_code == 2 and "many.jsonl record 1500, message 1" in done.stderr, done.stderr
    assert sql_rows(db, "SELECT count(*) FROM items") == [(12,)] and sql_rows(db, "SELECT count(*) FROM messages") == [
        (358,)
    ]
    twice = write(tmp_path / "twice.jsonl", good[0] + "\n" + good[1] + "\n" + good[0] + "\n")
    again = run_cli("items", "import", str(twice), "--format", "openai-chat", "--db", str(db))
    assert again.exit_code == 2 and "twice.jsonl record 3: conversation id 'c0' is given twice" in again.stderr
    assert sql_rows(db, "SELECT count(*) FROM items") == [(12,)]
