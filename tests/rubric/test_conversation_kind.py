"""The ``conversation`` rubric kind and the built-in rubrics for conversations and agent
trajectories (issue 85, item 1): each renders the whole trajectory with its task and its
criteria, runs end to end on the loopback stub over the released tau-bench trials, and a
selection holding single-response items is refused before any call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurybench.rubric import ConversationRubric, load_rubric, load_subjects
from jurybench.store import connect
from tests.conftest import run_cli, write

TAU = Path(__file__).resolve().parents[1] / "fixtures" / "released" / "tau_bench" / "gpt-4o-airline.json"

# each built-in rubric that judges whole conversations, with an answer on its scale
CONVERSATION_RUBRICS = {
    "task-completion": {"completed": 1},
    "tool-use": {"tool_choice": 4, "tool_arguments": 5, "tool_economy": 3},
    "policy-adherence": {"policy": 5},
    "role-adherence": {"role": 4},
    "knowledge-retention": {"retention": 2},
}


def _store(tmp_path: Path) -> Path:
    db = tmp_path / "c.duckdb"
    done = run_cli("items", "import", str(TAU), "--format", "tau-bench", "--db", str(db))
    assert done.exit_code == 0, done.stderr
    return db


@pytest.mark.parametrize("name", [*CONVERSATION_RUBRICS, "trajectory-preference"])
def test_each_built_in_rubric_shows_the_task_the_trajectory_and_its_criteria(tmp_path: Path, name: str) -> None:
    db = _store(tmp_path)
    rubric = load_rubric(name)
    if name == "trajectory-preference":
        pairs = write(
            tmp_path / "p.csv", "pair_id,item_a,item_b\np0,gpt-4o-airline/task0/trial0,gpt-4o-airline/task0/trial1\n"
        )
        assert run_cli("pairs", "import", str(pairs), "--db", str(db)).exit_code == 0
    else:
        assert isinstance(rubric, ConversationRubric) and rubric.judges_conversations
    con = connect(db, read_only=True)
    try:
        subjects = load_subjects(con, rubric, None)
    finally:
        con.close()
    first = next(s for s in subjects if "task0/trial0" in str(s.get("item_id") or s.get("item_a")))
    messages, _ = rubric.render(first, "AB" if rubric.pairwise else "")
    user = messages[-1]["content"]
    # the released trial 0 of task 0: its policy (the system message), the user's first message,
    # the first tool call with its arguments and its result, numbered as the transcript shows them
    assert "[1] system:\n# Airline Agent Policy" in user
    assert "[2] user:\nHi! I'm looking to book a flight from New York to Seattle on May 20th." in user
    assert '[7] assistant:\n-> call get_user_details({"user_id": "mia_li_3668"})' in user
    assert "[8] tool get_user_details (answers call_oIHazX6yQrB8hUwl4cRilFKj):" in user
    for dimension in rubric.dimensions:
        assert f'"{dimension}"' in user  # the answer format names every key
    if rubric.pairwise:  # both runs, each under its own heading
        assert user.index("Run A:") < user.index("Run B:")
    else:
        assert "You are mia_li_3668." in user.split("[1] system:")[0] or name in (
            "role-adherence",
            "knowledge-retention",
        )


@pytest.mark.parametrize("name", list(CONVERSATION_RUBRICS))
def test_each_built_in_rubric_runs_end_to_end_on_the_loopback_stub(tmp_path: Path, name: str) -> None:
    from jurybench.testing import StubServer

    db = _store(tmp_path)
    answer = {**CONVERSATION_RUBRICS[name], "rationale": "read it"}
    with StubServer(json.dumps(answer)) as stub:
        juror = f"openai/gpt-4o-mini,api_base={stub.api_base},api_key=sk-t"
        done = run_cli("score", "--rubric", name, "--juror", juror, "--db", str(db))
        received = list(stub.requests)
    assert done.exit_code == 0, done.stderr
    assert len(received) == 12  # one call a conversation: 12 released trials
    con = connect(db, read_only=True)
    try:
        stored = con.execute(
            "SELECT criterion, count(*), min(score), max(score) FROM pointwise_judgments GROUP BY criterion"
        ).fetchall()
    finally:
        con.close()
    assert {c: (n, lo, hi) for c, n, lo, hi in stored} == {k: (12, v, v) for k, v in CONVERSATION_RUBRICS[name].items()}
    # the provider was asked for the rubric's schema (enforced where it can be)
    assert all("response_format" in body for body in received)


def test_a_selection_with_single_responses_is_refused_before_any_call(tmp_path: Path) -> None:
    db = _store(tmp_path)
    items = write(tmp_path / "items.csv", "item_id,prompt,response\nr1,Say hi,hi\nr2,Say bye,bye\n")
    assert run_cli("items", "import", str(items), "--db", str(db)).exit_code == 0
    refused = run_cli("score", "--rubric", "task-completion", "--juror", "sim/a", "--db", str(db))
    assert refused.exit_code == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "error: rubric 'task-completion' (kind conversation) judges conversations, and 2 of the 14 selected "
        "items are single responses (the first: 'r1'). Select conversations only (--where \"shape = 'conversation'\")"
    )
    con = connect(db, read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM runs").fetchone() == (0,)
        assert con.execute("SELECT count(*) FROM calls").fetchone() == (0,)
    finally:
        con.close()
    # selected as the hint says, the conversations alone are judged
    done = run_cli(
        "score", "--rubric", "task-completion", "--juror", "sim/a", "--where", "shape = 'conversation'", "--db", str(db)
    )
    assert done.exit_code == 0, done.stderr
    con = connect(db, read_only=True)
    try:
        assert con.execute("SELECT count(DISTINCT item_id) FROM pointwise_judgments").fetchone() == (12,)
    finally:
        con.close()


def test_a_conversation_rubric_must_show_the_conversation(tmp_path: Path) -> None:
    rubric = write(
        tmp_path / "blind.yaml",
        "name: blind\nkind: conversation\ncriteria:\n  - {name: goal, description: 'met', scale: {min: 0, max: 1}, "
        "anchors: {0: 'no', 1: 'yes'}}\ntemplates:\n  en: {system: s, user: 'Judge {response}. {answer_format}'}\n",
    )
    shown = run_cli("rubrics", "show", str(rubric))
    assert shown.exit_code == 2
    assert "a conversation rubric must show the conversation; put {conversation} in its user" in shown.stderr
    assert len(shown.stderr.strip().splitlines()) == 1
