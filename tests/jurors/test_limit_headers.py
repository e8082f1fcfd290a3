"""Rate-limit headers cannot hang a run or storm an endpoint (issue 27): 17 header cases, each
read as a provider would send it, then the waits it leads to, bounded by the clamps the README
states; a wait never outlives the call's deadline, and a stop request ends it."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from jurybench.jurors._endpoint_limits import (
    MAX_PACE_WAIT_S,
    MAX_RETRY_AFTER_S,
    UNKNOWN_REFILL_S,
    EndpointLimiter,
    LimiterStopped,
    LimiterTimeout,
    read_headers,
)

pytestmark = pytest.mark.usefixtures("both_transports")  # litellm's transport and the lean one

R = "x-ratelimit-"
# Headers on an answer (200): what the next request's wait is, at most.
ANSWERS: list[tuple[str, dict[str, str]]] = [
    ("remaining-0-no-limit", {f"{R}remaining-requests": "0"}),
    ("limit-0-remaining-0", {f"{R}limit-requests": "0", f"{R}remaining-requests": "0"}),
    ("limit-1e-9", {f"{R}limit-requests": "1e-9", f"{R}remaining-requests": "0"}),
    ("remaining--1e9", {f"{R}limit-requests": "60", f"{R}remaining-requests": "-1e9"}),
    ("token-limit-not-a-number", {f"{R}limit-tokens": "lots", f"{R}remaining-tokens": "0"}),
    ("remaining-nan", {f"{R}limit-requests": "nan", f"{R}remaining-requests": "nan"}),
    ("limit-inf", {f"{R}limit-tokens": "inf", f"{R}remaining-tokens": "0"}),
    ("reset-1e9", {f"{R}remaining-requests": "0", f"{R}reset-requests": "1e9"}),
    ("tokens-remaining--1e9-limit-1e-9", {f"{R}limit-tokens": "1e-9", f"{R}remaining-tokens": "-1e9"}),
]
# Headers on a 429: how long the endpoint pauses, within [floor, MAX_RETRY_AFTER_S].
REFUSALS: list[tuple[str, dict[str, str], float]] = [
    ("retry-after-1e9", {"retry-after": "1e9"}, MAX_RETRY_AFTER_S),
    ("retry-after-1e400", {"retry-after": "1e400"}, MAX_RETRY_AFTER_S),
    ("retry-after-ms-inf", {"retry-after-ms": "inf"}, MAX_RETRY_AFTER_S),
    ("retry-after-date-far-ahead", {"retry-after": "Fri, 01 Jan 2100 00:00:00 GMT"}, MAX_RETRY_AFTER_S),
    ("retry-after-0", {"retry-after": "0"}, 0.5),
    ("retry-after--5", {"retry-after": "-5"}, 0.5),
    ("retry-after-ms-nan", {"retry-after-ms": "nan"}, 0.5),
    ("retry-after-garbage", {"retry-after": "soon"}, 0.5),
]
assert len(ANSWERS) + len(REFUSALS) == 17


@pytest.mark.parametrize(("name", "headers"), ANSWERS, ids=[n for n, _ in ANSWERS])
def test_an_answers_headers_never_pause_the_endpoint_for_ever(name: str, headers: dict[str, str]) -> None:
    limiter = EndpointLimiter("case")
    started = 100.0
    limiter.in_flight = 1
    limiter.done(read_headers(headers), started=started, tokens_used=50, completion_tokens=10)
    now = limiter.requests.updated or limiter.tokens.updated
    wait = limiter._delay(50.0, now)
    assert math.isfinite(wait) and 0 <= wait <= MAX_PACE_WAIT_S, (name, wait)
    # And once the clamped wait has passed, a request is admitted.
    assert limiter._delay(50.0, now + max(wait, UNKNOWN_REFILL_S) + MAX_PACE_WAIT_S) == 0, name


def test_a_countdown_of_remaining_with_no_limit_ends_in_a_probe_not_a_hang() -> None:
    limiter = EndpointLimiter("countdown")
    for left in (3, 2, 1, 0):
        limiter.in_flight = 1
        limiter.done(read_headers({f"{R}remaining-requests": str(left)}), started=0.0)
    now = limiter.requests.updated
    assert 0 < limiter._delay(0.0, now) <= UNKNOWN_REFILL_S
    assert limiter._delay(0.0, now + UNKNOWN_REFILL_S) == 0


@pytest.mark.parametrize(("name", "headers", "bound"), REFUSALS, ids=[n for n, _, _ in REFUSALS])
def test_a_429s_pause_is_clamped_and_never_zero(name: str, headers: dict[str, str], bound: float) -> None:
    limiter = EndpointLimiter("refusal")
    limiter.in_flight = 1
    wait = limiter.rate_limited(read_headers(headers), started=0.0, attempt=1)
    if bound == MAX_RETRY_AFTER_S:
        assert wait == pytest.approx(MAX_RETRY_AFTER_S, abs=0.5), name
    else:  # no usable Retry-After: our own backoff, so no storm of 429s
        assert bound <= wait <= 30.0, (name, wait)


def test_a_wait_that_would_pass_the_deadline_fails_at_once_and_stop_ends_any_wait() -> None:
    limiter = EndpointLimiter("deadline")
    limiter.in_flight = 1
    limiter.rate_limited(read_headers({"retry-after": "1e9"}), started=0.0, attempt=1)

    async def go(**kwargs: Any) -> float:
        import time

        return await limiter.acquire(
            1.0, deadline=kwargs.get("deadline", math.inf) + time.monotonic(), stop=kwargs.get("stop")
        )

    with pytest.raises(LimiterTimeout):
        asyncio.run(asyncio.wait_for(go(deadline=5.0), 60))
    asked = [False]

    async def stopping() -> None:
        task = asyncio.ensure_future(go(stop=lambda: asked[0]))
        await asyncio.sleep(0)
        asked[0] = True
        await asyncio.wait_for(task, 60)

    with pytest.raises(LimiterStopped):
        asyncio.run(stopping())


def _finishes(work: Any) -> Any:
    """``work()``'s result; a hang (the defect) fails the test instead of the suite."""
    import threading

    box: list[Any] = []
    thread = threading.Thread(target=lambda: box.append(work()), daemon=True)
    thread.start()
    thread.join(300)
    assert box, "still waiting: a header hung the run"
    return box[0]


def test_a_run_after_remaining_zero_with_no_limit_goes_on(tmp_path: Any) -> None:
    import json

    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.jurors._endpoint_limits import reset_limiters
    from jurybench.rubric import load_rubric
    from jurybench.store import connect, import_items
    from jurybench.testing import StubServer
    from tests.conftest import FULL, write

    reset_limiters()
    con = connect(tmp_path / "h.duckdb")
    import_items(con, write(tmp_path / "items.csv", "item_id,response\n" + "".join(f"i{i},S {i}\n" for i in range(3))))
    with StubServer(json.dumps(FULL)) as stub:
        stub.script.append((200, json.dumps(FULL), {f"{R}remaining-requests": "0"}))
        juror = parse_juror(f"openai/stub,api_base={stub.api_base},api_key=sk-t,concurrency=1")
        result = _finishes(
            lambda: score(
                con, load_rubric("story-quality"), [juror], options=EngineOptions(progress=False, give_up_after_s=60)
            )
        )
    assert result.status_counts == {"ok": 3}
    con.close()


def test_a_served_job_stuck_behind_retry_after_1e9_cancels_and_the_next_job_runs(db_path: Any) -> None:
    import json
    import time

    from jurybench.jurors._endpoint_limits import reset_limiters
    from jurybench.testing import StubServer
    from tests.conftest import FULL
    from tests.service.conftest import ITEMS, make_client, wait_for

    reset_limiters()
    with StubServer(json.dumps(FULL)) as stub, make_client(db_path, workers=1) as c:
        stub.script.append((429, "slow down", {"retry-after": "1e9"}))
        juror = f"openai/stub,api_base={stub.api_base},api_key=sk-t,concurrency=1"
        job = {"rubric": "story-quality", "items": ITEMS[:2], "jury": {"jurors": [juror]}, "concurrency": 1}
        stuck = c.post("/v1/jobs", json=job).json()["job_id"]
        deadline = time.monotonic() + 60
        while not stub.requests and time.monotonic() < deadline:  # the 429 has been answered
            time.sleep(0.02)
        assert c.post(f"/v1/jobs/{stuck}/cancel").status_code == 200
        assert wait_for(c, stuck, timeout=60)["status"] == "cancelled"
        offline = c.post("/v1/jobs", json={**job, "jury": {"jurors": ["fake/a"]}}).json()["job_id"]
        assert wait_for(c, offline, timeout=60)["status"] == "finished"


@pytest.mark.parametrize("limit", ["0", "1e-9"])
def test_a_limit_that_cannot_be_right_does_not_pace_a_run_to_a_halt(tmp_path: Any, limit: str) -> None:
    """Issue 40, item 4: every answer said limit 0 (or 1e-9), remaining 0; the limit was clamped
    to one a minute and 20 items took 732 s. The limit is now not said, the report of nothing
    left expires (2 s), and after three answers that contradict it it is not believed: every
    call is answered well within a --give-up-after that one minute's wait would pass."""
    import json

    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.jurors._endpoint_limits import endpoint_key, endpoint_limiter, reset_limiters
    from jurybench.rubric import load_rubric
    from jurybench.store import connect, import_items
    from jurybench.testing import StubServer
    from tests.conftest import FULL, write

    reset_limiters()
    con = connect(tmp_path / "h.duckdb")
    import_items(con, write(tmp_path / "items.csv", "item_id,response\n" + "".join(f"i{i},S {i}\n" for i in range(20))))
    said = {f"{R}limit-requests": limit, f"{R}remaining-requests": "0"}
    with StubServer(json.dumps(FULL)) as stub:
        stub.script.extend((200, json.dumps(FULL), said) for _ in range(20))
        juror = parse_juror(f"openai/stub,api_base={stub.api_base},api_key=sk-t,concurrency=1")
        result = _finishes(
            lambda: score(
                con, load_rubric("story-quality"), [juror], options=EngineOptions(progress=False, give_up_after_s=30)
            )
        )
        limiter = endpoint_limiter(endpoint_key("openai", stub.api_base, "sk-t"), 1)
    assert result.status_counts == {"ok": 20}
    assert limiter.requests.distrusted and limiter.requests.rate == 0.0
    con.close()


def test_a_429_makes_the_reports_believed_again() -> None:
    limiter = EndpointLimiter("believe")
    empty = read_headers({f"{R}remaining-requests": "0"})
    for _ in range(3):
        limiter.in_flight = 1
        limiter.done(empty, started=0.0)
    assert limiter.requests.distrusted and limiter._delay(1.0, 10.0) == 0.0
    limiter.in_flight = 1
    limiter.rate_limited(read_headers({"retry-after": "1"}), started=0.0, attempt=1)
    assert not limiter.requests.distrusted


def test_a_jurors_own_cap_spaces_requests_60_over_rpm_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """600 a minute: 0.1 s apart (a planted bug made it rpm / 60 = 10 s and no test saw it)."""
    from jurybench.jurors import _own_pace

    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(_own_pace.time, "monotonic", lambda: 100.0)
    monkeypatch.setattr(_own_pace.asyncio, "sleep", sleep)
    pace = _own_pace.JurorPace(600.0, 6000.0)  # and 6,000 tokens a minute: 0.01 s a token

    async def three() -> None:
        for _ in range(3):
            await pace.wait(5.0)

    asyncio.run(three())
    # Requests at 0.1 s; 5 tokens each at 0.01 s a token: 0.05 s; the larger of the two counts.
    assert slept == [pytest.approx(0.1), pytest.approx(0.2)]
    with pytest.raises(LimiterTimeout):  # a wait past the call's deadline fails at once
        asyncio.run(pace.wait(5.0, deadline=100.1))


def test_headers_read_the_first_name_that_states_a_finite_count() -> None:
    # Names not sent are skipped without an exception each; a value that is not a number or
    # not finite passes to the next name; a negative count reads as 0.
    signals = read_headers(
        {
            "llm_provider-x-ratelimit-limit-requests": "oops",
            "anthropic-ratelimit-requests-limit": "50",
            "x-ratelimit-remaining-requests": "inf",
            "anthropic-ratelimit-requests-remaining": "-3",
        }
    )
    assert signals.limit_requests == 50.0 and signals.remaining_requests == 0.0
    assert signals.limit_tokens is None and signals.remaining_tokens is None
    assert read_headers({"Server": "stub"}) == read_headers(None)


def test_turns_on_an_endpoints_stated_rate_form_a_schedule_that_starts_after_a_pause(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The cluster's keeper gives turns with ``reserve``. Hand-worked, the clock held at 100 s:
    a report of 600 a minute (10 a second) with 2 left lets 2 go now, then one every 0.1 s. A 429
    asking for 1 s pauses the endpoint: the next turns are 1.0, 1.1, 1.2 s away, not all at the
    pause's end (a schedule that began at the pause's end would send them in one bunch)."""
    from jurybench.jurors import _endpoint_limits

    monkeypatch.setattr(_endpoint_limits.time, "monotonic", lambda: 100.0)
    limiter = EndpointLimiter("turns")
    limiter.done(read_headers({f"{R}limit-requests": "600", f"{R}remaining-requests": "2"}), started=100.0)
    waits = [limiter.reserve()[0] for _ in range(4)]
    assert waits == [0.0, 0.0, pytest.approx(0.1), pytest.approx(0.2)]
    assert limiter.in_flight == 0  # a turn holds no place in flight
    fresh = EndpointLimiter("paused")
    fresh.done(read_headers({f"{R}limit-requests": "600", f"{R}remaining-requests": "0"}), started=100.0)
    fresh.rate_limited(read_headers({"retry-after": "1"}), started=100.0, attempt=1)
    after = [fresh.reserve()[0] for _ in range(3)]
    assert after == [pytest.approx(1.0), pytest.approx(1.1), pytest.approx(1.2)]
    with pytest.raises(LimiterTimeout):  # a turn past the caller's deadline is refused, and not taken
        fresh.reserve(within_s=1.0)
    assert fresh.reserve()[0] == pytest.approx(1.3)
