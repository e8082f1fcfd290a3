"""Tests that catch the four one-line bugs planted in issue 27's review, each unnoticed then:
the token bucket's wait, batch errors' retryability on 5xx, the budget settling at the real
cost, and credential variables redacted wherever their name has the credential word."""

from __future__ import annotations

import pytest

from jurybench.jurors._endpoint_limits import _Bucket


def test_a_bucket_waits_short_over_rate_seconds() -> None:
    # 60 a minute is 1 a second; 0 left and 3 wanted: 3 s (short * rate would also be 3: use 120/min).
    bucket = _Bucket()
    bucket.observe(limit=120.0, remaining=0.0, at=10.0, spent_since=0.0)
    assert bucket.wait_for(3.0, now=10.0) == pytest.approx(1.5)  # 3 short at 2 a second
    assert bucket.wait_for(1.0, now=10.5) == pytest.approx(0.0)  # half a second refilled one


@pytest.mark.parametrize(
    ("code", "retryable"), [(500, True), (502, True), (503, True), (429, True), (400, False), (404, False)]
)
def test_batch_request_errors_are_retryable_on_5xx_and_429_only(code: int, retryable: bool) -> None:
    from jurybench.jurors._batch_clients import BatchClient

    line = {"custom_id": "k", "response": {"status_code": code, "body": {"error": {"message": "boom"}}}}
    result = BatchClient("openai", None, None).read_line(line, lambda completion: None)
    assert result.error and result.retryable is retryable


def test_the_budget_settles_at_the_real_cost_not_the_reserve() -> None:
    from jurybench.engine._budget import Budget

    budget = Budget(1.0, 0.0, {}, {})
    assert budget.reserve(0.3)
    budget.settle(0.3, 0.05)
    assert budget.spent == pytest.approx(0.05) and budget.reserved == pytest.approx(0.0)
    assert budget.reserve(0.3)
    budget.settle(0.3, None)  # no reported cost: the reserve counts
    assert budget.spent == pytest.approx(0.35)


@pytest.mark.parametrize(
    "name",
    ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MY_PROVIDER_TOKEN", "AWS_SECRET_ACCESS_KEY", "API_KEY", "DB_PASSWORD"],
)
def test_credential_variables_are_redacted_wherever_the_word_is(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from jurybench.redact import redact

    value = "plainvalue-0123456789"
    monkeypatch.setenv(name, value)
    assert value not in redact(f"the provider said: {value} is wrong")


@pytest.mark.parametrize(
    "line",
    [
        {"custom_id": "k", "response": "oops"},
        {"custom_id": "k", "response": {"status_code": 200, "body": {"choices": [None]}}},
        {
            "custom_id": "k",
            "response": {
                "status_code": 200,
                "body": {"choices": [{"message": {"content": "{}"}}], "usage": {"prompt_tokens": "12"}},
            },
        },
        {"custom_id": "k", "response": {"status_code": "two hundred", "body": {}}},
        {"custom_id": "k", "response": {"status_code": 200, "body": {"choices": [{"message": {"content": 42}}]}}},
    ],
)
def test_a_batch_line_that_cannot_be_read_is_its_calls_error(line: dict[str, object]) -> None:
    # These crashed the run ("a jurybench bug") and every re-run on the same line (issue 27).
    from jurybench.jurors._batch_clients import BatchClient

    result = BatchClient("openai", None, None).read_line(line, lambda completion: None)  # type: ignore[arg-type]
    assert result.call_key == "k" and result.completion is None and "unreadable" in (result.error or "")


def test_lines_that_name_no_call_are_skipped() -> None:
    from jurybench.jurors._batch_clients import _lines

    text = '42\nnull\n"x"\n[1]\n{"no": "id"}\n{"custom_id": "k", "response": {}}\n'
    assert [line["custom_id"] for line in _lines(text)] == ["k"]
