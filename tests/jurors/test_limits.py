"""Rate limits that adapt: provider headers read, a 429 never a failed call, one limit per
endpoint and key. Counts and outcomes here; throughput against the limit is in make bench."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jurybench.engine import EngineOptions, score
from jurybench.jurors import parse_juror
from jurybench.jurors._endpoint_limits import (
    EndpointLimiter,
    endpoint_key,
    parse_duration,
    read_headers,
    reset_limiters,
)
from jurybench.rubric import load_rubric
from jurybench.testing import StubServer
from jurybench.testing.stub import RateLimits
from tests.conftest import FULL, write

pytestmark = pytest.mark.usefixtures("both_transports")  # litellm's transport and the lean one


@pytest.fixture(autouse=True)
def _fresh_limiters() -> Any:
    reset_limiters()
    yield
    reset_limiters()


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1.5", 1.5), ("20ms", 0.02), ("6m0s", 360.0), ("1h2m3.5s", 3723.5), ("59s", 59.0), ("0s", 0.0), ("", None)],
)
def test_durations_as_providers_write_them(text: str, seconds: float | None) -> None:
    assert parse_duration(text) == (pytest.approx(seconds) if seconds is not None else None)


def test_rfc3339_and_http_dates_are_seconds_from_now() -> None:
    # Anthropic's reset is a time: 2026-01-01T00:00:10Z seen at 2026-01-01T00:00:00Z is 10 s away.
    now = 1767225600.0  # 2026-01-01T00:00:00Z
    assert parse_duration("2026-01-01T00:00:10Z", now=now) == pytest.approx(10.0)
    assert parse_duration("Thu, 01 Jan 2026 00:00:30 GMT", now=now) == pytest.approx(30.0)


def test_headers_openai_anthropic_and_litellm_prefixed() -> None:
    openai = read_headers(
        {
            "llm_provider-x-ratelimit-limit-requests": "600",
            "x-ratelimit-remaining-requests": "17",
            "x-ratelimit-reset-requests": "1.5s",
            "x-ratelimit-limit-tokens": "100000",
            "x-ratelimit-remaining-tokens": "99000",
            "x-ratelimit-reset-tokens": "600ms",
            "retry-after": "2",
            "retry-after-ms": "1500",
        }
    )
    assert (openai.limit_requests, openai.remaining_requests, openai.reset_requests) == (600, 17, 1.5)
    assert (openai.limit_tokens, openai.remaining_tokens, openai.reset_tokens) == (100000, 99000, 0.6)
    assert openai.retry_after == 1.5  # retry-after-ms is the finer of the two
    anthropic = read_headers(
        {
            "anthropic-ratelimit-requests-limit": "50",
            "anthropic-ratelimit-requests-remaining": "49",
            "anthropic-ratelimit-tokens-limit": "40000",
            "retry-after": "3",
        }
    )
    assert (anthropic.limit_requests, anthropic.remaining_requests, anthropic.limit_tokens) == (50, 49, 40000)
    assert anthropic.retry_after == 3.0
    assert not read_headers({"content-type": "application/json"}).any


def test_one_limiter_per_endpoint_and_key() -> None:
    from jurybench.jurors._endpoint_limits import endpoint_limiter

    a = endpoint_limiter(endpoint_key("openai", "http://x/v1", "sk-1"), 16)
    assert endpoint_limiter(endpoint_key("openai", "http://x/v1", "sk-1"), 8) is a
    assert endpoint_limiter(endpoint_key("openai", "http://x/v1", "sk-2"), 8) is not a
    assert endpoint_limiter(endpoint_key("openai", "http://y/v1", "sk-1"), 8) is not a
    assert "sk-1" not in a.key  # the key itself is hashed


def test_a_429_halves_what_is_in_flight_once_per_pause() -> None:
    limiter = EndpointLimiter("k", max_concurrency=64)
    limiter.window = 16.0
    limiter.in_flight = 3
    wait = limiter.rate_limited(read_headers({"retry-after-ms": "800"}), started=0.0, attempt=1)
    assert wait == pytest.approx(0.8, abs=0.05) and limiter.window == 8.0
    limiter.rate_limited(read_headers({"retry-after-ms": "800"}), started=0.0, attempt=1)
    assert limiter.window == 8.0  # the same burst of 429s halves once
    assert limiter.in_flight == 1


def _items(tmp_path: Any, con: Any, n: int) -> None:
    from jurybench.store import import_items

    rows = "".join(f"i{i},Story number {i}.\n" for i in range(n))
    import_items(con, write(tmp_path / "items.csv", "item_id,response\n" + rows))


@pytest.mark.parametrize("headers", [True, False], ids=["provider-headers", "provider-says-nothing"])
def test_rate_limits_never_fail_a_call(con: Any, tmp_path: Any, headers: bool) -> None:
    # 30 calls against 300 requests a minute with 1 s of burst (5 at once) and retries=0:
    # before, every 429 past the retries was an error; now each call waits and goes again.
    _items(tmp_path, con, 30)
    limits = RateLimits(rpm=300, burst_s=1.0, delay_s=0.05, headers=headers)
    with StubServer(json.dumps(FULL), limits=limits) as stub:
        juror = parse_juror(f"openai/stub,api_base={stub.api_base},api_key=sk-t,retries=0,concurrency=32")
        result = score(con, load_rubric("story-quality"), [juror], options=EngineOptions(progress=False))
    assert result.status_counts == {"ok": 30} and result.status == "finished"
    assert limits.n_ok == 30
    if not headers:  # blind, the engine must have run into the limit (and none of those failed a call)
        assert limits.n_limited > 0
    attempts = con.execute("SELECT sum(attempts) FROM calls").fetchone()[0]
    assert attempts == limits.n_ok + limits.n_limited  # every request made is counted, refused ones too


def test_give_up_after_turns_waiting_into_an_error(con: Any, tmp_path: Any) -> None:
    _items(tmp_path, con, 3)
    limits = RateLimits(rpm=1, burst_s=60.0)  # one request a minute
    with StubServer(json.dumps(FULL), limits=limits) as stub:
        juror = parse_juror(f"openai/stub,api_base={stub.api_base},api_key=sk-t,concurrency=3")
        result = score(
            con, load_rubric("story-quality"), [juror], options=EngineOptions(progress=False, give_up_after_s=1.0)
        )
    assert result.status_counts == {"ok": 1, "error": 2}
    reasons = {r[0] for r in con.execute("SELECT reason FROM calls WHERE status = 'error'").fetchall()}
    assert len(reasons) == 1 and next(iter(reasons)).startswith("rate limited for over 1 s (--give-up-after)")


def test_two_jurors_on_one_key_share_its_limit(con: Any, tmp_path: Any) -> None:
    _items(tmp_path, con, 10)
    limits = RateLimits(rpm=600, burst_s=0.5, delay_s=0.05)
    with StubServer(json.dumps(FULL), limits=limits) as stub:
        base = f"openai/stub,api_base={stub.api_base},api_key=sk-shared,concurrency=16"
        jurors = [parse_juror(base + ",temperature=0"), parse_juror(base + ",temperature=1")]
        result = score(con, load_rubric("story-quality"), jurors, options=EngineOptions(progress=False))
        assert result.status_counts == {"ok": 20}
    from jurybench.jurors._endpoint_limits import endpoint_limiter

    shared = endpoint_limiter(endpoint_key("openai", stub.api_base, "sk-shared"), 16)
    assert shared.n_requests == limits.n_ok + limits.n_limited == 20 + limits.n_limited


def test_the_pacing_formula_by_hand() -> None:
    """Issue 57, item 4: a planted change of the pacing formula survived three rounds. A budget
    of 600 requests a minute refills 10 a second. Reported at t = 10 with 3 left (so at most 3
    at once) and 1 sent since: at t = 10 there are 3 - 1 = 2 to spend; 5 are 3 short, which
    take 3 / 10 = 0.3 s to come back. At t = 10.05 it holds min(3, 3 + 0.5) - 1 = 2 still (the
    capacity caps it). With 120 a minute (2 a second), one request short waits 1 / 2 = 0.5 s."""
    from jurybench.jurors._endpoint_limits import EndpointLimiter, _Bucket

    bucket = _Bucket()
    bucket.observe(limit=600, remaining=3, at=10.0, spent_since=1)
    assert bucket.rate == pytest.approx(10.0)
    assert bucket.available(10.0) == pytest.approx(2.0)
    assert bucket.available(10.05) == pytest.approx(2.0)
    assert bucket.wait_for(5, 10.0) == pytest.approx(0.3)
    assert bucket.wait_for(2, 10.0) == 0.0
    slow = _Bucket()
    slow.observe(limit=120, remaining=0, at=0.0, spent_since=0)
    assert slow.available(0.0) == pytest.approx(0.0)
    assert slow.wait_for(1, 0.0) == pytest.approx(0.5)
    assert slow.available(0.25) == pytest.approx(0.5)  # half a request refilled in a quarter second
    assert slow.wait_for(1, 0.25) == pytest.approx(0.25)
    # The limiter waits for the slower of its two budgets: 0.5 s for a request, while 1,000 tokens
    # at 60,000 a minute (1,000 a second) from 400 left are 600 short: 0.6 s.
    limiter = EndpointLimiter("hand")
    limiter.requests.observe(limit=120, remaining=0, at=0.0, spent_since=0)
    limiter.tokens.observe(limit=60_000, remaining=400, at=0.0, spent_since=0)
    limiter.tokens.capacity = 5_000
    assert limiter._delay(1_000, 0.0) == pytest.approx(0.6)
    assert limiter._delay(0, 0.0) == pytest.approx(0.5)
