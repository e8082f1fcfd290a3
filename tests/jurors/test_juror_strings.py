"""Mapping-valued keys in a juror string (issue 40, item 9) and credentials in a juror's URL
(item 3): parsed and checked before any call, sent as the provider expects, never shown."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from jurybench.errors import JurybenchError
from jurybench.jurors import parse_juror
from jurybench.redact import MASK
from jurybench.testing import StubServer
from tests.conftest import FULL, ITEMS_CSV, run_cli, write


def test_a_json_object_value_keeps_its_commas() -> None:
    spec = parse_juror('openai/m,extra_headers={"X-Gateway-Key": "abc", "X-Team": "t, 2"},temperature=0')
    assert spec.options["extra_headers"] == {"X-Gateway-Key": "abc", "X-Team": "t, 2"}
    assert spec.params == {"temperature": 0}
    assert "extra_headers" not in spec.params  # a credential: never part of the identity


@pytest.mark.parametrize(
    ("juror", "says"),
    [
        ('openai/m,extra_headers={"X": abc}', "extra_headers is not a JSON object (Expecting value at character 7)"),
        ("openai/m,extra_headers=abc", "extra_headers must be a mapping of header names to values (got str)"),
        ('openai/m,extra.headers={"X": {"a": 1}}', "extra.headers: header 'X' must be text (got dict)"),
        ('openai/m,headers={"X": "secretvalue1"', "headers is not a JSON object"),
    ],
)
def test_a_malformed_mapping_is_one_line_and_shows_no_value(juror: str, says: str) -> None:
    with pytest.raises(JurybenchError) as caught:
        parse_juror(juror)
    assert says in str(caught.value)
    assert "abc" not in str(caught.value) and "secretvalue1" not in str(caught.value)
    assert f"={MASK}" in str(caught.value)


def test_headers_in_a_juror_string_reach_the_provider(db_path: Path, tmp_path: Path) -> None:
    """They went to litellm as a string: every call failed after 5 tries with 'dictionary
    update sequence element #0 has length 1; 2 is required'."""
    run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS_CSV)), "--db", str(db_path))
    with StubServer(json.dumps(FULL)) as stub:
        juror = f'openai/stub,api_base={stub.api_base},api_key=sk-t,extra_headers={{"X-Gateway-Key": "gw-123456789"}}'
        out = run_cli("score", "--rubric", "story-quality", "--juror", juror, "--no-progress", "--db", str(db_path))
        assert out.exit_code == 0, out.stdout + out.stderr
        assert len(stub.headers) == 3 and all(h.get("x-gateway-key") == "gw-123456789" for h in stub.headers)
    assert "gw-123456789" not in out.stdout + out.stderr


def test_a_malformed_header_on_the_cli_is_exit_2_and_no_call(db_path: Path, tmp_path: Path) -> None:
    run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS_CSV)), "--db", str(db_path))
    with StubServer(json.dumps(FULL)) as stub:
        juror = f"openai/stub,api_base={stub.api_base},api_key=sk-t,extra_headers=gw-123456789"
        out = run_cli("score", "--rubric", "story-quality", "--juror", juror, "--no-progress", "--db", str(db_path))
        assert not stub.requests
    assert out.exit_code == 2 and len(out.stderr.strip().splitlines()) <= 2, out.stderr
    assert "extra_headers must be a mapping" in out.stderr and "gw-123456789" not in out.stderr


def test_a_client_side_error_is_not_retried_as_a_provider_failure() -> None:
    from jurybench.jurors import PermanentError
    from jurybench.jurors._kind_litellm import LiteLLMBackend
    from jurybench.rubric import load_rubric

    backend = LiteLLMBackend(parse_juror("openai/stub,api_key=sk-t"), load_rubric("story-quality"))
    wrapped = backend.litellm.InternalServerError("boom", llm_provider="openai", model="stub")
    wrapped.__cause__ = ValueError("dictionary update sequence element #0 has length 1; 2 is required")
    assert isinstance(backend.classify(wrapped), PermanentError)
    assert "client-side" in str(backend.classify(wrapped))
    plain = backend.litellm.InternalServerError("upstream 500", llm_provider="openai", model="stub")
    assert not isinstance(backend.classify(plain), PermanentError)  # a provider's failure stays retryable


def test_url_user_info_is_sent_as_basic_auth_and_masked_when_shown(db_path: Path, tmp_path: Path) -> None:
    from jurybench.jurors import public_juror, secret_options

    spec = parse_juror("openai/m,api_base=http://alice:s3cretPassw0rd@h:8/v1,api_key=sk-t")
    assert public_juror(spec)["api_base"] == f"http://{MASK}@h:8/v1"
    assert "api_base" in public_juror(spec)["secrets"]
    assert secret_options(spec)["api_base"] == "http://alice:s3cretPassw0rd@h:8/v1"  # used, in memory
    run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS_CSV)), "--db", str(db_path))
    with StubServer(json.dumps(FULL)) as stub:
        base = stub.api_base.replace("http://", "http://alice:s3cretPassw0rd@")
        out = run_cli(
            "score",
            "--rubric",
            "story-quality",
            "--juror",
            f"openai/stub,api_base={base},api_key=sk-t",
            "--no-progress",
            "--db",
            str(db_path),
        )
        assert out.exit_code == 0, out.stderr
    basic = "Basic " + base64.b64encode(b"alice:s3cretPassw0rd").decode()
    assert stub.headers and all(h.get("authorization") == basic for h in stub.headers)


def test_key_like_query_parameters_of_api_base_reach_the_server(tmp_path: Path) -> None:
    """Issue 57, item 4 (red team): ``api_base=http://h/v1?api_key=K`` was sent as
    ``/v1?api_key=K/chat/completions`` and every call failed. The parameters now go on each
    request's URL after the path; the key never reaches the output; a provider litellm does
    not send through the OpenAI client is refused in one line."""
    db_path = tmp_path / "q.duckdb"
    run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS_CSV)), "--db", str(db_path))
    with StubServer(json.dumps(FULL)) as stub:
        out = run_cli(
            "score",
            "--rubric",
            "story-quality",
            "--juror",
            f"openai/stub,api_base={stub.api_base}?api_key=Kq9secretvalue&tenant=t1,api_key=sk-t",
            "--no-progress",
            "--db",
            str(db_path),
        )
        assert out.exit_code == 0, out.stderr
        refused = run_cli(
            "score",
            "--rubric",
            "story-quality",
            "--juror",
            f"hosted_vllm/stub,api_base={stub.api_base}?api_key=Kq9secretvalue",
            "--run",
            "v",
            "--no-progress",
            "--db",
            str(db_path),
        )
    assert stub.headers and all(h[":path"] == "/v1/chat/completions" for h in stub.headers)
    assert all("api_key=Kq9secretvalue" in h[":query"] and "tenant=t1" in h[":query"] for h in stub.headers)
    assert "Kq9secretvalue" not in out.stdout + out.stderr
    assert refused.exit_code == 2 and "openai/ provider only" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) <= 2 and "Kq9secretvalue" not in refused.stderr
    import jurybench as jb

    with jb.open(db_path, read_only=True) as store:  # nothing half-written
        assert store.sql("SELECT count(*) AS n FROM runs WHERE run_id = 'v'")["n"][0] == 0


def test_every_missing_api_key_is_named_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 56: a jury of two providers without keys was refused one key at a time (fix one,
    run again, meet the next). Now one line names both jurors and both variables; a single
    missing key keeps its own line; a plan needs none."""
    from jurybench.errors import JurybenchError
    from jurybench.jurors import check_jurors, parse_juror

    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    jury = [parse_juror("openai/gpt-4o-mini"), parse_juror("anthropic/claude-3-5-haiku-20241022"), parse_juror("sim/x")]
    with pytest.raises(JurybenchError) as both:
        check_jurors(jury)
    assert str(both.value).startswith("no API key for 2 jurors: 'openai/gpt-4o-mini' (openai), 'anthropic/")
    assert both.value.hint is not None and "ANTHROPIC_API_KEY, OPENAI_API_KEY" in both.value.hint
    with pytest.raises(JurybenchError, match="juror 'openai/gpt-4o-mini': no API key for openai"):
        check_jurors(jury[:1] + jury[2:])
    check_jurors(jury, need_keys=False)
    check_jurors([parse_juror("openai/gpt-4o-mini,api_key=sk-x"), jury[2]])
