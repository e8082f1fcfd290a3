"""The real litellm path, against a loopback OpenAI-compatible stub (no network)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jurybench.engine import EngineOptions, score
from jurybench.jurors import parse_juror
from jurybench.rubric import load_rubric
from jurybench.testing import StubServer

pytestmark = pytest.mark.usefixtures("both_transports")  # litellm's transport and the lean one

QUIET = EngineOptions(progress=False, retry_base_s=0.001)
FULL = {
    "relevance": 5,
    "coherence": 4,
    "empathy": 3,
    "surprise": 2,
    "engagement": 1,
    "complexity": 3,
}


def _juror(stub: StubServer, extra: str = "") -> Any:
    # local=false: the loopback stub stands in for a remote provider whose price is unknown
    return parse_juror(f"openai/stub-judge,api_base={stub.api_base},api_key=sk-test,temperature=0,local=false{extra}")


def test_litellm_juror_scores_and_records_tokens(small_store: Any) -> None:
    with StubServer(json.dumps(FULL)) as stub:
        result = score(small_store, load_rubric("story-quality"), [_juror(stub)], options=QUIET)
        assert result.status_counts == {"ok": 3}
        assert len(stub.requests) == 3
        sent = stub.requests[0]
        assert sent["model"] == "stub-judge" and sent["temperature"] == 0
        assert "Reply with a single JSON object" in sent["messages"][-1]["content"]
    rows = small_store.execute("SELECT prompt_tokens, completion_tokens, cost_usd, status FROM calls").fetchall()
    assert set(rows) == {(11, 7, None, "ok")}  # the stub model has no price: cost is NULL, not 0
    # The API key is never stored.
    assert "sk-test" not in json.dumps(small_store.execute("SELECT * FROM jurors").fetchall())


def test_rate_limit_and_server_error_are_retried(small_store: Any) -> None:
    with StubServer(json.dumps(FULL)) as stub:
        stub.script.extend([(429, "slow down"), (503, "busy")])
        result = score(
            small_store,
            load_rubric("story-quality"),
            [_juror(stub, ",concurrency=1")],
            where="item_id = 'i1'",
            options=QUIET,
        )
        assert result.status_counts == {"ok": 1}
        assert len(stub.requests) == 3


def test_auth_error_is_not_retried_and_is_stored_as_error(small_store: Any) -> None:
    with StubServer(json.dumps(FULL)) as stub:
        stub.script.append((401, "bad key"))
        score(
            small_store,
            load_rubric("story-quality"),
            [_juror(stub)],
            where="item_id = 'i1'",
            options=QUIET,
        )
        assert len(stub.requests) == 1
    status, reason = small_store.execute("SELECT status, reason FROM calls").fetchall()[0]
    assert status == "error" and "AuthenticationError" in reason


def test_invalid_answer_is_reasked_with_the_reason(small_store: Any) -> None:
    with StubServer(json.dumps(FULL)) as stub:
        stub.script.append((200, '{"relevance": 11}'))
        score(
            small_store,
            load_rubric("story-quality"),
            [_juror(stub)],
            where="item_id = 'i1'",
            options=QUIET,
        )
        assert len(stub.requests) == 2
        reask = stub.requests[1]["messages"]
        assert reask[-2] == {"role": "assistant", "content": '{"relevance": 11}'}
        assert "could not be used (relevance: Input should be less than or equal to 5)" in reask[-1]["content"]


def test_instructor_driver_validates_through_instructor(small_store: Any) -> None:
    with StubServer(json.dumps(FULL)) as stub:
        result = score(
            small_store,
            load_rubric("story-quality"),
            [_juror(stub, ",structured=instructor")],
            where="item_id = 'i1'",
            options=QUIET,
        )
        assert result.status_counts == {"ok": 1}
    scores = dict(small_store.execute("SELECT criterion, score FROM pointwise_judgments").fetchall())
    assert scores == FULL


def test_instructor_driver_stores_invalid_after_retries(small_store: Any) -> None:
    with StubServer('{"relevance": 0}') as stub:
        score(
            small_store,
            load_rubric("story-quality"),
            [_juror(stub, ",structured=instructor,parse_retries=1")],
            where="item_id = 'i1'",
            options=QUIET,
        )
        assert len(stub.requests) == 2
    status, text = small_store.execute("SELECT status, response_text FROM calls").fetchall()[0]
    assert (status, text) == ("invalid", '{"relevance": 0}')
