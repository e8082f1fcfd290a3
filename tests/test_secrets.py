"""No secret reaches the store, stdout/stderr, the server log or an HTTP answer, even when a
provider repeats the key in its error (a loopback stub echoes it in 401 and 500 bodies)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jurybench.redact import MASK, redact, register_secret
from jurybench.testing import StubServer
from jurybench.testing.stub import free_port
from tests.conftest import ITEMS_CSV, write
from tests.service.test_serve import _get, _start, _stop, _wait_up

ENV_KEY = "sk-proj-EnvKey0123456789abcdefXYZ"  # shaped like an OpenAI key
INLINE_KEY = "plainInlineSecret7Q2w9E4r"  # shaped like nothing: only registration catches it
TOKEN = "serviceTokenValue99887766"


def _store_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*") if p.is_file())


def _cli(db: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurybench.cli", *args, "--db", str(db)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_redact_hand_worked() -> None:
    register_secret("registeredValue12345")
    text = (
        "Incorrect API key provided: sk-proj-abc123def456. Authorization: Bearer tok_987654321 "
        "api_key=hunter2hunter2 and 'registeredValue12345' and sk-ant-api03-XYZxyz123456 "
        "AIzaSyA1234567890abcdefghijklmnopq max_tokens=100"
    )
    assert redact(text) == (
        f"Incorrect API key provided: {MASK}. Authorization: Bearer {MASK} "
        f"api_key={MASK} and '{MASK}' and {MASK} "
        f"{MASK} max_tokens=100"
    )


def test_an_environment_secret_set_or_changed_after_a_redaction_is_still_masked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The secrets read from the environment are kept between calls (a server redacts every string
    of every job it shows); a variable set, changed or removed since is read on the next call."""
    assert redact("before: cafebabe-0001 cafebabe-0002") == "before: cafebabe-0001 cafebabe-0002"
    monkeypatch.setenv("SOME_PROVIDER_API_KEY", "cafebabe-0001")
    assert redact("set: cafebabe-0001") == f"set: {MASK}"
    monkeypatch.setenv("SOME_PROVIDER_API_KEY", "cafebabe-0002")
    assert redact("changed: cafebabe-0001 cafebabe-0002") == f"changed: cafebabe-0001 {MASK}"
    monkeypatch.delenv("SOME_PROVIDER_API_KEY")
    assert redact("removed: cafebabe-0002") == "removed: cafebabe-0002"
    register_secret("cafebabe-0003")
    assert redact("registered: cafebabe-0003") == f"registered: {MASK}"


@pytest.mark.parametrize("where", ["env", "inline"])
def test_cli_score_never_shows_or_stores_a_key_the_provider_echoes(tmp_path: Path, where: str) -> None:
    db = tmp_path / "s.duckdb"
    env = {**os.environ, "JURYBENCH_HOME": str(tmp_path), "OPENAI_API_KEY": ENV_KEY}
    key = ENV_KEY if where == "env" else INLINE_KEY
    _cli(db, "items", "import", str(write(tmp_path / "items.csv", ITEMS_CSV)), env=env)
    with StubServer('{"relevance": 5}') as stub:
        # Item 1: a 500 that repeats the key, twice (retries=1); then a 401 repeating it.
        stub.script.extend([(500, "upstream failed for key {api_key}")] * 2)
        stub.script.append((401, "Incorrect API key provided: {api_key}. You can find your API key at ..."))
        juror = f"openai/stub-judge,api_base={stub.api_base},retries=1,concurrency=1"
        if where == "inline":
            juror += f",api_key={INLINE_KEY}"
        result = _cli(
            db, "score", "--rubric", "story-quality", "--juror", juror, "--run", "r", "--no-progress", env=env
        )
        assert len(stub.requests) == 3  # the key really went out (and came back in the errors)
    assert result.returncode == 3, result.stderr
    assert "authentication failed" in result.stderr and MASK in result.stderr
    assert key not in result.stdout + result.stderr
    reasons = _cli(db, "sql", "SELECT reason FROM calls WHERE reason IS NOT NULL", "--format", "json", env=env)
    assert MASK in reasons.stdout and key not in reasons.stdout
    assert key.encode() not in _store_bytes(db)


def test_the_service_never_returns_or_logs_a_key_the_provider_echoes(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    db = tmp_path / "served.duckdb"
    env = {"JURYBENCH_TOKEN": TOKEN, "OPENAI_API_KEY": ENV_KEY, "JURYBENCH_HOME": str(tmp_path)}
    with StubServer('{"relevance": 5}') as stub:
        stub.script.extend([(500, "upstream failed for key {api_key}")] * 2)
        stub.script.append((401, "Incorrect API key provided: {api_key}."))
        process = _start(["--db", str(db), "--port", str(port)], env)
        try:
            _wait_up(url, process)
            items = [{"item_id": f"i{i}", "prompt": "p", "response": f"r{i}"} for i in range(2)]
            jobs = []
            for juror in (
                f"openai/stub-judge,api_base={stub.api_base},retries=1,concurrency=1,api_key={INLINE_KEY}",
                f"openai/stub-judge,api_base={stub.api_base},retries=1,concurrency=1,name=env",
            ):
                status, job = _get(
                    f"{url}/v1/jobs", TOKEN, {"rubric": "story-quality", "items": items, "jury": {"jurors": [juror]}}
                )
                assert status == 202, job
                jobs.append(job["job_id"])
                deadline = time.monotonic() + 60
                while job["status"] in ("queued", "running") and time.monotonic() < deadline:
                    time.sleep(0.1)
                    job = _get(f"{url}/v1/jobs/{job['job_id']}", TOKEN)[1]
                assert job["status"] == "failed" and MASK in job["error"], job
                stub.script.extend([(500, "upstream failed for key {api_key}")] * 2)
                stub.script.append((401, "Incorrect API key provided: {api_key}."))
            answers = [
                _get(f"{url}/v1/jobs", TOKEN),
                *(_get(f"{url}/v1/jobs/{j}", TOKEN) for j in jobs),
                _get(f"{url}/v1/sql", TOKEN, {"query": "SELECT reason FROM calls"}),
                _get(f"{url}/v1/sql", TOKEN, {"query": "SELECT error, request FROM jobs"}),
                _get(f"{url}/v1/sql", TOKEN, {"query": "SELECT 'x' || "}),
                _get(f"{url}/v1/jobs/nope", TOKEN),
            ]
        finally:
            out, err = _stop(process)
    text = json.dumps([body for _, body in answers]) + out + err
    assert "upstream failed for key" in json.dumps(answers)  # the errors themselves are there...
    for secret in (ENV_KEY, INLINE_KEY, TOKEN):  # ...without any key
        assert secret not in text
        assert secret.encode() not in _store_bytes(db)


URL_PASSWORD = "urlPassw0rdQ7"  # user-info in a juror's api_base (issue 40, item 3)
URL_TOKEN = "queryTok3nZ8x"


def test_credentials_in_a_jurors_url_are_used_never_stored_or_served(tmp_path: Path) -> None:
    """A service juror with api_base=http://user:PASSWORD@host/v1 came back in the POST
    answer, GET /v1/jobs and SELECT request FROM jobs, and was in the store's files."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    db = tmp_path / "served.duckdb"
    with StubServer(
        '{"relevance": 5, "coherence": 4, "empathy": 3, "surprise": 2, "engagement": 1, "complexity": 3}',
    ) as stub:
        base = stub.api_base.replace("http://", f"http://alice:{URL_PASSWORD}@")
        process = _start(["--db", str(db), "--port", str(port)], {"JURYBENCH_TOKEN": TOKEN})
        try:
            _wait_up(url, process)
            items = [{"item_id": "i1", "prompt": "p", "response": "r1"}]
            juror = {"model": "openai/stub-judge", "api_base": base, "api_key": "sk-none", "concurrency": 1}
            status, posted = _get(
                f"{url}/v1/jobs", TOKEN, {"rubric": "story-quality", "items": items, "jury": {"jurors": [juror]}}
            )
            assert status == 202, posted
            job = posted
            deadline = time.monotonic() + 60
            while job["status"] in ("queued", "running") and time.monotonic() < deadline:
                time.sleep(0.1)
                job = _get(f"{url}/v1/jobs/{posted['job_id']}", TOKEN)[1]
            assert job["status"] == "finished", job  # the credentials were used: the call went out
            assert stub.requests
            answers = [
                posted,
                job,
                _get(f"{url}/v1/jobs", TOKEN)[1],
                _get(f"{url}/v1/sql", TOKEN, {"query": "SELECT request FROM jobs"})[1],
            ]
        finally:
            out, err = _stop(process)
    text = json.dumps(answers) + out + err
    assert "api_base" in json.dumps(answers[0]) and f"{MASK}@127.0.0.1" in json.dumps(answers[0])
    for secret in (URL_PASSWORD,):
        assert secret not in text
        assert secret.encode() not in _store_bytes(db)


def test_credentials_in_a_cli_jurors_url_stay_out_of_the_store_and_the_output(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    env = {**os.environ, "JURYBENCH_HOME": str(tmp_path)}
    _cli(db, "items", "import", str(write(tmp_path / "items.csv", ITEMS_CSV)), env=env)
    with StubServer('{"relevance": 5}') as stub:
        stub.script.extend([(500, "upstream failed at {api_base}")] * 3)
        base = stub.api_base.replace("http://", f"http://alice:{URL_PASSWORD}@")
        result = _cli(
            db,
            "score",
            "--rubric",
            "story-quality",
            "--juror",
            f"openai/stub-judge,api_base={base},api_key=sk-none,retries=1,concurrency=1",
            "--run",
            "r",
            "--no-progress",
            env=env,
        )
        assert stub.requests
    for secret in (URL_PASSWORD,):
        assert secret not in result.stdout + result.stderr
        assert secret.encode() not in _store_bytes(db)


def test_url_credentials_are_masked_in_any_text() -> None:
    assert redact("no server at http://bob:pw@h:8/v1?api_key=abc&x=1&sig=zz") == (
        f"no server at http://{MASK}@h:8/v1?api_key={MASK}&x=1&sig={MASK}"
    )
    assert redact("token=[REDACTED] stays") == "token=[REDACTED] stays"
    from jurybench.jurors import parse_juror, public_juror

    shown = public_juror(parse_juror(f"openai/m,api_base=https://gw.example/v1?api-version=2&token={URL_TOKEN}"))
    assert shown["api_base"] == f"https://gw.example/v1?api-version=2&token={MASK}" and URL_TOKEN not in str(shown)
