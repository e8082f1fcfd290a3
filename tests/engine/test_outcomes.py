"""Failures are never silent: exit codes, run status, permanent errors, attempts, parameters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jurybench.engine import EngineOptions, score
from jurybench.errors import JurybenchError
from jurybench.jurors import parse_juror
from jurybench.rubric import load_rubric
from jurybench.testing.stub import StubServer, free_port
from tests.conftest import FULL, ITEMS_CSV, run_cli, write

QUIET = EngineOptions(progress=False, retry_base_s=0.001, retry_max_s=0.001)


def _stub_juror(stub: StubServer, extra: str = "") -> str:
    return f"openai/stub-judge,api_base={stub.api_base},api_key=sk-test{extra}"


@pytest.fixture
def items(tmp_path: Path) -> None:
    result = run_cli("items", "import", str(write(tmp_path / "items.csv", ITEMS_CSV)))
    assert result.exit_code == 0, result.stderr


def _sql(db: Path, query: str) -> list[tuple[Any, ...]]:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def test_score_exits_3_and_marks_the_run_failed_when_every_call_failed(items: None, db_path: Path) -> None:
    with StubServer(json.dumps(FULL)) as stub:
        stub.script.extend([(500, "boom")] * 20)
        result = run_cli(
            "score",
            "--rubric",
            "story-quality",
            "--juror",
            _stub_juror(stub, ",retries=1,name=flaky"),
            "--run",
            "r1",
            "--no-progress",
        )
    assert result.exit_code == 3, result.stderr
    # Reasons are grouped with counts: three calls, one reason.
    assert "3 of 3 calls ended in error" in result.stderr
    assert "3 × flaky: gave up after 2 tries: InternalServerError" in result.stderr
    assert _sql(db_path, "SELECT status FROM runs WHERE run_id = 'r1'") == [("failed",)]


def test_some_errors_mark_the_run_finished_with_errors(items: None, db_path: Path) -> None:
    with StubServer(json.dumps(FULL)) as stub:
        stub.script.extend([(500, "boom")] * 2)  # the first call fails twice (retries=1), the others answer
        result = run_cli(
            "score",
            "--rubric",
            "story-quality",
            "--juror",
            _stub_juror(stub, ",retries=1,concurrency=1"),
            "--run",
            "r1",
            "--no-progress",
        )
    assert result.exit_code == 3
    assert "1 of 3 calls ended in error" in result.stderr
    assert _sql(db_path, "SELECT status FROM runs") == [("finished_with_errors",)]
    # Re-running retries only the failed call and then finishes cleanly.
    with StubServer(json.dumps(FULL)) as stub:
        again = run_cli(
            "score", "--rubric", "story-quality", "--juror", _stub_juror(stub), "--run", "r1", "--no-progress"
        )
        assert again.exit_code == 0, again.stderr
        assert len(stub.requests) == 1
    assert _sql(db_path, "SELECT status FROM runs") == [("finished",)]


def test_authentication_error_is_permanent_and_stops_that_juror(small_store: Any) -> None:
    with StubServer(json.dumps(FULL)) as stub:
        stub.script.extend([(401, "bad key")] * 10)
        juror = parse_juror(_stub_juror(stub, ",retries=4,concurrency=1,name=judge"))
        result = score(small_store, load_rubric("story-quality"), [juror], options=QUIET)
        assert len(stub.requests) == 1  # not retried, and no further calls for that juror
    assert result.status_counts == {"error": 1}
    assert result.n_skipped == 2
    assert "juror 'judge'" in result.fatal["judge"] and "api_key" in result.fatal["judge"]
    assert small_store.execute("SELECT attempts FROM calls").fetchall() == [(1,)]


def test_refused_connection_is_permanent(small_store: Any) -> None:
    port = free_port()  # nothing listens there
    juror = parse_juror(f"openai/x,api_base=http://127.0.0.1:{port}/v1,api_key=k,retries=4,concurrency=1,name=local")
    result = score(small_store, load_rubric("story-quality"), [juror], options=QUIET)
    attempts, reason = small_store.execute("SELECT attempts, reason FROM calls").fetchall()[0]
    assert attempts == 1 and "connection refused" in reason
    assert "api_base" in result.fatal["local"]
    assert result.n_skipped == 2


def test_missing_api_key_is_refused_before_any_call(
    items: None, monkeypatch: pytest.MonkeyPatch, db_path: Path
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = run_cli("score", "--rubric", "story-quality", "--juror", "openai/gpt-4o-mini", "--no-progress")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "juror 'openai/gpt-4o-mini'" in result.stderr and "OPENAI_API_KEY" in result.stderr
    assert _sql(db_path, "SELECT count(*) FROM calls") == [(0,)]


def test_attempts_count_every_request_including_retries(small_store: Any) -> None:
    with StubServer(json.dumps(FULL)) as stub:
        stub.script.extend([(429, "slow"), (503, "busy"), (200, '{"relevance": 9}')])
        juror = parse_juror(_stub_juror(stub, ",concurrency=1"))
        score(small_store, load_rubric("story-quality"), [juror], where="item_id = 'i1'", options=QUIET)
        # 429, 503, an invalid answer, then the re-ask: four requests.
        assert len(stub.requests) == 4
    assert small_store.execute("SELECT attempts, status FROM calls").fetchall() == [(4, "ok")]


def test_attempts_of_a_call_that_gave_up(small_store: Any) -> None:
    score(
        small_store,
        load_rubric("story-quality"),
        [parse_juror("fake/e,error_rate=1,retries=2")],
        where="item_id = 'i1'",
        options=QUIET,
    )
    assert small_store.execute("SELECT attempts FROM calls").fetchall() == [(3,)]


@pytest.mark.parametrize(
    ("juror", "message"),
    [
        ("fake/x,temprature=0", "unknown parameter 'temprature' (did you mean 'temperature'?)"),
        ("openai/gpt-4o-mini,api_key=k,temprature=0", "unknown parameter 'temprature' (did you mean 'temperature'?)"),
        ("openai/gpt-4o-mini,api_key=k,n=3", "parameter 'n' is not supported"),
        ("anthropic/claude-3-5-haiku-latest,api_key=k,seed=1", "unknown parameter 'seed'"),
        ("fake/x,extra.foo=1", "extra.<key> parameters are for litellm jurors"),
    ],
)
def test_unknown_juror_parameters_are_errors(small_store: Any, juror: str, message: str) -> None:
    with pytest.raises(JurybenchError) as err:
        score(small_store, load_rubric("story-quality"), [parse_juror(juror)], options=QUIET)
    assert message in str(err.value)
    assert small_store.execute("SELECT count(*) FROM calls").fetchall() == [(0,)]


def test_extra_parameters_reach_the_provider_and_the_juror_identity(small_store: Any) -> None:
    with StubServer(json.dumps(FULL)) as stub:
        plain = parse_juror(_stub_juror(stub))
        extra = parse_juror(_stub_juror(stub, ",extra.repetition_penalty=1.1"))
        assert plain.key != extra.key
        score(small_store, load_rubric("story-quality"), [extra], where="item_id = 'i1'", options=QUIET)
        assert stub.requests[0]["repetition_penalty"] == 1.1
