"""score --batch: calls through a provider's batch API (OpenAI files + batches, Anthropic message
batches) on the loopback stub; durable across kill -9; the same parse path as synchronous calls."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from jurybench.testing import Batches, StubServer
from tests.conftest import FULL, run_cli, write

ITEMS = "item_id,prompt,response,model,language\n" + "".join(
    f"i{i},Write story {i},Story {i},m{i % 2},en\n" for i in range(7)
)
KEY = "sk-batch-test-0123456789"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def _items(db: Path, tmp_path: Path) -> None:
    assert run_cli("items", "import", str(write(tmp_path / "items.csv", ITEMS)), "--db", str(db)).exit_code == 0


def _score(db: Path, juror: str, *extra: str) -> Any:
    return run_cli(
        "score",
        "-r",
        "story-quality",
        "-j",
        juror,
        "--batch",
        "--poll-every",
        "0.05",
        "--run",
        "b",
        "--no-progress",
        "--db",
        str(db),
        *extra,
    )


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    from jurybench.store import connect

    con = connect(db, read_only=True)
    try:
        return [tuple(r) for r in con.execute(sql).fetchall()]
    finally:
        con.close()


def test_openai_batches_split_reask_cost_at_the_batch_price_and_a_rerun_sends_nothing(
    db_path: Path, tmp_path: Path
) -> None:
    _items(db_path, tmp_path)
    with StubServer(json.dumps(FULL), batches=Batches(delay_s=0.1)) as stub:
        stub.script.append((200, "I think it is good"))  # the first answer is unusable: a re-ask
        juror = f"openai/gpt-4o-mini,api_base={stub.api_base},batch_size=3"
        result = _score(db_path, juror)
        assert result.exit_code == 0, result.stderr
        # 7 calls in batches of 3, 3 and 1, then the re-ask alone in a follow-up batch.
        assert stub.batches.n_created == 4 and stub.batches.requests_seen == 8
        assert len(stub.requests) == 8  # nothing went over the synchronous endpoint
        again = _score(db_path, juror)
        assert again.exit_code == 0 and stub.batches.n_created == 4  # all cached: no second submission
        assert "7 from cache, 0 called" in again.stdout
    rounds = _rows(
        db_path, "SELECT round, n_requests, status, collected_at IS NOT NULL FROM batches ORDER BY round, n_requests"
    )
    assert rounds == [
        (0, 1, "completed", True),
        (0, 3, "completed", True),
        (0, 3, "completed", True),
        (1, 1, "completed", True),
    ]
    calls = _rows(
        db_path, "SELECT status, attempts, prompt_tokens, completion_tokens, cost_usd FROM calls ORDER BY attempts"
    )
    assert [c[0] for c in calls] == ["ok"] * 7 and [c[1] for c in calls] == [1] * 6 + [2]
    # gpt-4o-mini's batch prices in litellm's map: $0.075 / $0.30 per million tokens.
    for _, _, tokens_in, tokens_out, cost in calls:
        assert cost == pytest.approx(tokens_in * 0.075e-6 + tokens_out * 0.30e-6)
    # the re-ask sent the unusable answer back with the request to answer again
    reask = stub.requests[-1]["messages"]
    assert (
        reask[-2] == {"role": "assistant", "content": "I think it is good"}
        and "could not be used" in reask[-1]["content"]
    )
    # gpt-4o-mini enforces a response schema (litellm says so): the rubric's, strict.
    sent = stub.requests[0]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["strict"] is True
    # the stub answers on loopback, so the juror is self-hosted: its scale goes as an enum of points
    assert sent["json_schema"]["schema"]["properties"]["coherence"] == {"type": "integer", "enum": [1, 2, 3, 4, 5]}
    listed = run_cli("batches", "list", "--run", "b", "--db", str(db_path))
    assert listed.exit_code == 0 and listed.stdout.count(" completed ") == 4


def test_anthropic_message_batches_system_prompt_max_tokens_and_half_price(db_path: Path, tmp_path: Path) -> None:
    _items(db_path, tmp_path)
    with StubServer(json.dumps(FULL), batches=Batches(delay_s=0.1)) as stub:
        juror = f"anthropic/claude-haiku-4-5,api_base={stub.api_base},max_tokens=300"
        result = _score(db_path, juror)
        assert result.exit_code == 0, result.stderr
        assert stub.batches.n_created == 1
        body = stub.requests[0]
        assert body["model"] == "claude-haiku-4-5" and body["max_tokens"] == 300
        assert "system" in body and all(m["role"] != "system" for m in body["messages"])
        assert "response_format" not in body
    from jurybench.jurors._prices import batch_price, price_of
    from jurybench.jurors._spec import parse_juror

    price = batch_price(price_of(parse_juror("anthropic/claude-haiku-4-5")))
    assert price is not None
    calls = _rows(db_path, "SELECT status, prompt_tokens, completion_tokens, cost_usd FROM calls")
    assert len(calls) == 7 and {c[0] for c in calls} == {"ok"}
    for _, tokens_in, tokens_out, cost in calls:
        assert cost == pytest.approx(tokens_in * price.input + tokens_out * price.output)


def test_batch_price_is_the_maps_or_half_the_synchronous_price() -> None:
    from jurybench.jurors._prices import Price, batch_price

    assert batch_price(Price(2e-6, 8e-6, 1e-6, 3e-6)) == Price(1e-6, 3e-6)
    assert batch_price(Price(2e-6, 8e-6)) == Price(1e-6, 4e-6)
    assert batch_price(None) is None


def test_an_expired_batch_keeps_its_partial_results_and_replans_the_rest(db_path: Path, tmp_path: Path) -> None:
    _items(db_path, tmp_path)
    with StubServer(json.dumps(FULL), batches=Batches(delay_s=0.1, expire_after=3)) as stub:
        result = _score(db_path, f"openai/gpt-4o-mini,api_base={stub.api_base}")
        assert result.exit_code == 0, result.stderr
        assert stub.batches.n_created == 2 and stub.batches.requests_seen == 7 + 4
    assert _rows(db_path, "SELECT round, status, n_requests, n_completed FROM batches ORDER BY round") == [
        (0, "expired", 7, 3),
        (1, "completed", 4, 4),
    ]
    assert _rows(db_path, "SELECT count(*), count(DISTINCT call_key) FROM calls WHERE status = 'ok'") == [(7, 7)]


def test_a_failed_batch_ends_its_calls_in_error_and_a_rerun_sends_them_again(db_path: Path, tmp_path: Path) -> None:
    _items(db_path, tmp_path)
    with StubServer(json.dumps(FULL), batches=Batches(delay_s=0.1)) as stub:
        stub.batches.fail = True
        juror = f"openai/gpt-4o-mini,api_base={stub.api_base}"
        failed = _score(db_path, juror)
        assert failed.exit_code == 3
        assert (
            "7 × openai/gpt-4o-mini: batch batch_" in failed.stderr
            and "the input file could not be read" in failed.stderr
        )
        fixed = _score(db_path, juror)
        assert fixed.exit_code == 0, fixed.stderr
        assert stub.batches.n_created == 2
    assert _rows(db_path, "SELECT count(*) FROM calls WHERE status = 'ok'") == [(7,)]


def test_batch_refuses_jurors_without_a_batch_api_in_one_line(db_path: Path, tmp_path: Path) -> None:
    _items(db_path, tmp_path)
    for juror, says in (
        ("gemini/gemini-1.5-flash,api_key=x", "has no batch API that jurybench speaks"),
        ("openai/gpt-4o-mini,structured=instructor", "structured=instructor makes its own re-asks"),
        ("hosted_vllm/m,api_base=http://127.0.0.1:9/v1,batch_api=grpc", "batch_api='grpc' is not a batch protocol"),
    ):
        result = _score(db_path, juror)
        assert result.exit_code == 2 and says in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) <= 2
    # offline jurors need no batch API: they answer at once
    assert _score(db_path, "fake/a").exit_code == 0


def test_budget_holds_back_batched_calls(db_path: Path, tmp_path: Path) -> None:
    _items(db_path, tmp_path)
    with StubServer(json.dumps(FULL), batches=Batches(delay_s=0.1)) as stub:
        juror = f"openai/gpt-4o-mini,api_base={stub.api_base},max_tokens=200"
        # A call is reserved at its worst case: ~700 prompt tokens x 1.2 x $0.075/M + max_tokens 200 x
        # $0.30/M is about $0.000123: 3 fit in $0.0004.
        stopped = _score(db_path, juror, "--max-cost", "0.0004")
        assert stopped.exit_code == 4, stopped.stderr
        assert stub.batches.requests_seen == 3
        resumed = _score(db_path, juror, "--max-cost", "1")
        assert resumed.exit_code == 0 and stub.batches.requests_seen == 7


# -- kill -9: a batch is never submitted twice ----------------------------------------------------


def _cli_process(db: Path, juror: str, tmp_path: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "JURYBENCH_HOME": str(tmp_path), "OPENAI_API_KEY": KEY}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jurybench.cli",
            "score",
            "-r",
            "story-quality",
            "-j",
            juror,
            "--batch",
            "--poll-every",
            "0.05",
            "--run",
            "b",
            "--no-progress",
            "--db",
            str(db),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait(predicate: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.02)


@pytest.mark.parametrize("when", ["after the provider acknowledged it", "before the store heard back"])
def test_kill_9_then_rerun_polls_the_same_batch_and_never_submits_twice(
    db_path: Path, tmp_path: Path, when: str
) -> None:
    _items(db_path, tmp_path)
    slow_ack = when == "before the store heard back"
    with StubServer(json.dumps(FULL), batches=Batches(delay_s=1.5, create_delay_s=30.0 if slow_ack else 0.0)) as stub:
        juror = f"openai/gpt-4o-mini,api_base={stub.api_base}"
        proc = _cli_process(db_path, juror, tmp_path)
        try:
            _wait(lambda: stub.batches.n_created == 1)
            if not slow_ack:  # polled: so the acknowledgement is recorded; the batch is still in progress
                _wait(lambda: stub.batches.n_polled >= 1)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
        status = _rows(db_path, "SELECT status, provider_batch_id IS NOT NULL, collected_at FROM batches")
        if slow_ack:  # written before it was sent, never acknowledged
            assert status == [("submitting", False, None)]
        else:  # acknowledged and being polled, results not collected
            assert len(status) == 1 and status[0][0] in ("validating", "in_progress") and status[0][1:] == (True, None)
        stub.batches.create_delay_s = 0.0
        result = _score(db_path, juror)
        assert result.exit_code == 0, result.stderr
        assert stub.batches.n_created == 1 and stub.batches.requests_seen == 7
    assert _rows(db_path, "SELECT count(*) FROM calls WHERE status = 'ok'") == [(7,)]
    assert _rows(db_path, "SELECT count(*), count(collected_at) FROM batches") == [(1, 1)]


@pytest.mark.parametrize("ended", [False, True], ids=["still-in-progress", "ended"])
def test_kill_9_while_an_anthropic_batch_is_created_finds_it_and_never_pays_twice(
    db_path: Path, tmp_path: Path, ended: bool
) -> None:
    """Anthropic's batches carry no metadata: a kill -9 between the provider's accepting a batch
    and the store's recording it submitted every call again on the re-run (issue 27). The
    batch is now looked up by creation time, size and (once ended) its custom ids."""
    _items(db_path, tmp_path)
    batches = Batches(delay_s=0.5 if ended else 60.0, create_delay_s=30.0)
    with StubServer(json.dumps(FULL), batches=batches) as stub:
        juror = f"anthropic/claude-haiku-4-5,api_base={stub.api_base},api_key=sk-ant-test-0123456789,max_tokens=300"
        proc = _cli_process(db_path, juror, tmp_path)
        try:
            _wait(lambda: stub.batches.n_created == 1)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
        assert _rows(db_path, "SELECT status, provider_batch_id FROM batches") == [("submitting", None)]
        stub.batches.create_delay_s = 0.0
        if ended:
            _wait(lambda: all(stub.batches.state(b) == "completed" for b in stub.batches.batches.values()))
        else:
            stub.batches.delay_s = 0.3  # the found batch ends soon after the re-run starts polling it
        result = _score(db_path, juror)
        assert result.exit_code == 0, result.stderr
        assert stub.batches.n_created == 1 and stub.batches.requests_seen == 7
    assert _rows(db_path, "SELECT count(*) FROM calls WHERE status = 'ok'") == [(7,)]


def test_a_cancelled_batch_leaves_its_calls_for_the_next_run(db_path: Path, tmp_path: Path) -> None:
    _items(db_path, tmp_path)
    with StubServer(json.dumps(FULL), batches=Batches(delay_s=60.0)) as stub:
        juror = f"openai/gpt-4o-mini,api_base={stub.api_base}"
        proc = _cli_process(db_path, juror, tmp_path)
        try:
            _wait(lambda: stub.batches.n_polled >= 1)  # the batch's id is recorded before it is polled
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
        (batch_id,) = _rows(db_path, "SELECT batch_id FROM batches")[0]
        status = run_cli("batches", "status", batch_id, "--db", str(db_path))
        assert status.exit_code == 0 and "status=in_progress" in status.stdout, status.stderr
        cancelled = run_cli("batches", "cancel", batch_id, "--db", str(db_path))
        assert cancelled.exit_code == 0 and "status=cancelled" in cancelled.stdout
        assert KEY not in status.stdout + cancelled.stdout
        stopped = _score(db_path, juror)
        assert stopped.exit_code == 0 and "interrupted" in stopped.stdout
        stub.batches.delay_s = 0.1
        result = _score(db_path, juror)
        assert result.exit_code == 0 and "finished" in result.stdout
        assert stub.batches.n_created == 2
    assert _rows(db_path, "SELECT count(*) FROM calls WHERE status = 'ok'") == [(7,)]


@pytest.mark.parametrize(("status", "retried"), [(500, True), (503, True), (429, True), (400, False)])
def test_a_batch_line_with_a_5xx_goes_into_the_next_batch(
    db_path: Path, tmp_path: Path, status: int, retried: bool
) -> None:
    """A 5xx (or 429) on one line of a batch's output is the provider's failure: that call goes
    into the next batch and is answered there; a 400 is the call's own error (a planted bug that
    made 5xx lines final went unseen, issue 40)."""
    _items(db_path, tmp_path)
    with StubServer(json.dumps(FULL), batches=Batches(delay_s=0.1)) as stub:
        stub.script.append((status, "upstream trouble"))
        result = _score(db_path, f"openai/gpt-4o-mini,api_base={stub.api_base},batch_size=10")
    calls = _rows(db_path, "SELECT status, attempts FROM calls ORDER BY attempts DESC, status")
    if retried:
        assert result.exit_code == 0, result.stderr
        assert stub.batches.n_created == 2 and calls[0] == ("ok", 2) and {c[0] for c in calls} == {"ok"}
    else:
        assert stub.batches.n_created == 1 and ("error", 1) in calls and len(calls) == 7
