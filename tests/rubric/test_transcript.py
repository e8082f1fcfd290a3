"""A conversation fitted to a judge's context (issue 84, item 3): the text worked out by hand for
small conversations, each step of the documented cut, the record of what was cut, --no-elide,
the cache key, and no prompt the loopback stub receives past the juror's budget."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from jurybench.rubric import render_transcript
from jurybench.rubric._transcript import RESULT_CHARS
from jurybench.store import Message, ToolCall
from tests.conftest import run_cli, write

TAU = Path(__file__).resolve().parents[1] / "fixtures" / "released" / "tau_bench" / "gpt-4o-airline.json"

RUBRIC = (Path(__file__).resolve().parents[1] / "fixtures" / "rubrics" / "goal-met.yaml").read_text(encoding="utf-8")


def _chat() -> list[Message]:
    return [
        Message("system", "Be brief."),
        Message("user", "Rain in Lyon?"),
        Message("assistant", None, (ToolCall("c1", "forecast", {"city": "Lyon"}),)),
        Message("tool", "70%", (), "c1", "forecast"),
        Message("assistant", "Likely: 70%."),
    ]


def test_a_conversation_reads_as_worked_out_by_hand() -> None:
    text, cut = render_transcript(_chat())
    assert cut is None
    assert text == (
        "[1] system:\nBe brief.\n\n"
        "[2] user:\nRain in Lyon?\n\n"
        '[3] assistant:\n-> call forecast({"city": "Lyon"}) [c1]\n\n'
        "[4] tool forecast (answers c1):\n70%\n\n"
        "[5] assistant:\nLikely: 70%."
    )
    assert render_transcript(_chat(), len(text))[1] is None  # exactly at the budget: whole


def test_long_tool_results_are_cut_first_head_and_tail() -> None:
    result = "".join(chr(97 + k % 26) for k in range(5000))
    messages = [*_chat()[:3], Message("tool", result, (), "c1", "forecast"), _chat()[4]]
    whole, _ = render_transcript(messages)
    text, cut = render_transcript(messages, len(whole) - 1)
    assert cut is not None and cut.results_cut == [3] and cut.elided == [] and cut.end_cut == 0
    head, tail = RESULT_CHARS * 2 // 3, RESULT_CHARS - RESULT_CHARS * 2 // 3  # 1,333 and 667
    kept = f"{result[:head]}\n[... {5000 - head - tail:,} characters of this result cut ...]\n{result[5000 - tail :]}"
    assert f"[4] tool forecast (answers c1):\n{kept}\n\n" in text
    assert "3,000 characters of this result cut" in text  # 5,000 - 1,333 - 667


def test_middle_messages_go_first_and_the_task_and_answer_stay() -> None:
    """Nine messages: system 0, task 1, turns 2-7, answer 8. The middle is 4; outwards, the later
    of two equally near first: 4, 5, 3, 6, 2, 7. A budget that needs three elided takes 4, 5, 3."""
    messages = [Message("system", "S"), Message("user", "the task")]
    for k in range(2, 8):
        role = "assistant" if k % 2 == 0 else "user"
        calls = (ToolCall(f"c{k}", f"tool{k}", {"n": k}),) if role == "assistant" else ()
        messages.append(Message(role, f"turn {k} " + "x" * 200, calls))
    messages.append(Message("assistant", "the answer"))
    whole, _ = render_transcript(messages)
    text, cut = render_transcript(messages, len(whole) - 500)
    assert cut is not None and cut.elided == [3, 4, 5]
    # the marker lists the calls the elided messages made (message 5 is turn 4, an assistant's)
    assert '[... messages 4-6 elided (3 messages); their tool calls: tool4({"n": 4}) ...]' in text
    for kept in (
        "[1] system:\nS",
        "[2] user:\nthe task",
        "[9] assistant:\nthe answer",
        "[3] assistant:",
        "[7] assistant:",
    ):
        assert kept in text
    tight, cut2 = render_transcript(messages, 140)
    assert cut2 is not None and set(cut2.elided) == {2, 3, 4, 5, 6, 7} and len(tight) <= 140
    assert "the task" in tight and "the answer" in tight


@pytest.mark.parametrize("seed", range(40))
def test_no_budget_is_ever_passed(seed: int) -> None:
    """Random conversations (up to 60 messages, results up to 20,000 characters) against random
    budgets, down to none: the text never passes the budget, and the record adds up."""
    rng = random.Random(seed)
    messages: list[Message] = [Message("user", "t" * rng.randint(1, 3000))]
    for k in range(rng.randint(0, 60)):
        if rng.random() < 0.4:
            messages.append(Message("assistant", None, (ToolCall(f"c{k}", "f", {"a": "y" * rng.randint(0, 900)}),)))
            messages.append(Message("tool", "r" * rng.randint(0, 20_000), (), f"c{k}"))
        else:
            messages.append(Message(rng.choice(["user", "assistant"]), "m" * rng.randint(0, 4000)))
    whole, _ = render_transcript(messages)
    budget = rng.randint(0, len(whole))
    text, cut = render_transcript(messages, budget)
    assert len(text) <= budget
    if len(whole) > budget:
        assert cut is not None and cut.full_chars == len(whole) and cut.shown_chars == len(text)


def _store(tmp_path: Path) -> Path:
    db = tmp_path / "c.duckdb"
    done = run_cli("items", "import", str(TAU), "--format", "tau-bench", "--db", str(db))
    assert done.exit_code == 0, done.stderr
    return db


def test_score_fits_each_juror_and_records_what_it_cut(tmp_path: Path) -> None:
    db = _store(tmp_path)
    rubric = write(tmp_path / "goal.yaml", RUBRIC)
    plan = run_cli(
        "score", "--rubric", str(rubric), "--juror", "sim/a", "--juror", "sim/b,context=3000", "--plan", "--db", str(db)
    )
    assert plan.exit_code == 0, plan.stderr
    assert "sim/b: prompt tokens a call" in plan.stdout
    assert "12 subjects cut to fit its context of 3,000 tokens" in plan.stdout
    assert "sim/a: prompt tokens a call" in plan.stdout and "sim/a: prompt tokens a call 2,1" in plan.stdout
    refused = run_cli(
        "score",
        "--rubric",
        str(rubric),
        "--juror",
        "sim/a",
        "--juror",
        "sim/b,context=3000",
        "--no-elide",
        "--db",
        str(db),
    )
    assert refused.exit_code == 2
    assert (
        "--no-elide: 12 of 12 items do not fit a juror's context whole: 12 for sim/b (3,000 tokens)" in refused.stderr
    )
    assert run_cli("sql", "SELECT count(*) AS n FROM runs", "--format", "csv", "--db", str(db)).stdout == "n\n0\n"
    done = run_cli(
        "score", "--rubric", str(rubric), "--juror", "sim/a", "--juror", "sim/b,context=3000", "--db", str(db)
    )
    assert done.exit_code == 0, done.stderr
    from jurybench.store import connect

    con = connect(db, read_only=True)
    rows = con.execute(
        "SELECT c.subject_id, j.name, c.presentation, c.messages FROM calls c JOIN jurors j USING (juror_key)"
    ).fetchall()
    con.close()
    cut = {(s, j): json.loads(p) for s, j, p, _ in rows if p is not None}
    assert {j for _, j in cut} == {"sim/b"} and len(cut) == 12
    record = cut[("gpt-4o-airline/task0/trial0", "sim/b")]
    assert record["context_tokens"] == 3000 and record["context_from"] == "context="
    elided = record["cut"]["conversation"]["messages_elided"]
    assert 0 not in elided and 1 not in elided and 30 not in elided  # the system prompt, the task, the answer
    for s, j, p, messages in rows:
        shown = "".join(m["content"] for m in json.loads(messages))
        if j == "sim/b":  # every prompt within the context less the answer's reserve, at 3 characters a token
            assert len(shown) <= (3000 - 1024) * 3, (s, len(shown))
            assert p is not None and "elided (" in shown  # all 12 are cut, each with a marker where
        else:  # an offline juror given no context= is shown every conversation whole
            assert p is None and "elided (" not in shown
            assert s != "gpt-4o-airline/task0/trial0" or "[32] user:\nThank you so much" in shown


def test_a_cut_is_its_own_call_and_a_whole_one_keeps_its_key(tmp_path: Path) -> None:
    """The key of a call shown whole is the one it always was (sha256 of rubric, juror, subject,
    order, sample); a cut call's key adds the digest of what it was shown, so another budget is
    another call, not a stale answer from the cache."""
    import hashlib

    from jurybench.rubric import load_rubric
    from jurybench.store import connect

    db = _store(tmp_path)
    rubric = write(tmp_path / "goal.yaml", RUBRIC)
    for context in ("3000", "3000", "2500"):
        done = run_cli("score", "--rubric", str(rubric), "--juror", f"sim/b,context={context}", "--db", str(db))
        assert done.exit_code == 0, done.stderr
    whole = run_cli("score", "--rubric", str(rubric), "--juror", "sim/b", "--db", str(db))
    assert whole.exit_code == 0
    con = connect(db, read_only=True)
    keys = con.execute(
        "SELECT call_key, subject_id, juror_key, presentation IS NOT NULL FROM calls WHERE subject_id = "
        "'gpt-4o-airline/task0/trial0'"
    ).fetchall()
    runs = con.execute("SELECT count(*) FROM runs").fetchone()
    con.close()
    assert len(keys) == 3 and runs == (4,)  # 3000 twice (the second from the cache), 2500, whole
    h = load_rubric(str(rubric)).content_hash
    plain = [k for k, _, _, cut in keys if not cut]
    juror_key = keys[0][2]
    raw = f"{h}\x1f{juror_key}\x1fgpt-4o-airline/task0/trial0\x1f\x1f0"
    assert plain == [hashlib.sha256(raw.encode()).hexdigest()]


def test_no_prompt_the_stub_receives_passes_the_jurors_context(tmp_path: Path) -> None:
    from jurybench.testing import StubServer

    db = _store(tmp_path)
    rubric = write(tmp_path / "goal.yaml", RUBRIC)
    answer = json.dumps({"goal": 3, "rationale": "ok"})
    with StubServer(answer) as stub:
        juror = f"openai/gpt-4o-mini,api_base={stub.api_base},api_key=sk-t,context=2048,max_tokens=256"
        done = run_cli("score", "--rubric", str(rubric), "--juror", juror, "--db", str(db))
        received = list(stub.requests)
    assert done.exit_code == 0, done.stderr
    assert len(received) == 12
    for body in received:
        text = "".join(str(m.get("content") or "") for m in body["messages"])  # type: ignore[union-attr]
        # the stub's count (four characters a token), and a tokenizer's at three, with the answer's room
        assert len(text) / 4 + 256 <= 2048 and len(text) / 3 + 256 <= 2048
        assert body["max_tokens"] == 256


PREFERENCE = """name: better-trial
kind: preference
allow_tie: false
templates:
  en:
    system: You compare two attempts at one task.
    user: "Which attempt served the user better?\\n\\n{answer_format}\\n\\nAttempt A:\\n{conversation_a}\\n\\nAttempt B:\\n{conversation_b}"
"""


def test_a_pair_of_trials_shares_the_context_and_each_side_is_fitted(tmp_path: Path) -> None:
    """Two trials of task 0 as a pair, in both orders: each side gets half of what the context
    leaves; the cut is recorded per side; in order BA the sides swap in the prompt."""
    db = _store(tmp_path)
    pairs = write(
        tmp_path / "pairs.csv", "pair_id,item_a,item_b\np0,gpt-4o-airline/task0/trial0,gpt-4o-airline/task0/trial1\n"
    )
    assert run_cli("pairs", "import", str(pairs), "--db", str(db)).exit_code == 0
    rubric = write(tmp_path / "better.yaml", PREFERENCE)
    done = run_cli("score", "--rubric", str(rubric), "--juror", "sim/a,context=4000", "--db", str(db))
    assert done.exit_code == 0, done.stderr
    from jurybench.store import connect

    con = connect(db, read_only=True)
    rows = con.execute("SELECT presented_order, presentation, messages FROM calls ORDER BY presented_order").fetchall()
    con.close()
    assert [r[0] for r in rows] == ["AB", "BA"]
    shown = {}
    for order, presentation, messages in rows:
        cut = json.loads(presentation)["cut"]
        assert set(cut) == {"a", "b"} and cut["a"]["budget_chars"] == cut["b"]["budget_chars"]
        assert (
            cut["a"]["shown_chars"] <= cut["a"]["budget_chars"] and cut["b"]["shown_chars"] <= cut["b"]["budget_chars"]
        )
        user = json.loads(messages)[-1]["content"]
        first, second = user.index("Attempt A:\n"), user.index("Attempt B:\n")
        shown[order] = (
            user[first + len("Attempt A:\n") : second].strip(),
            user[second + len("Attempt B:\n") :].strip(),
        )
    # the same two fitted trials, swapped with the order: item_a's is shown first in AB, second in BA
    assert shown["AB"][0] == shown["BA"][1] and shown["AB"][1] == shown["BA"][0]
    assert shown["AB"][0] != shown["AB"][1] and "[2] user:" in shown["AB"][0]
