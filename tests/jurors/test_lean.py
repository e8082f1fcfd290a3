"""The lean transport for OpenAI-compatible endpoints (issue 55, item 3): where it applies, what it
sends, and that it stores what litellm's transport stores (the stub tests of this folder run over
both transports; these are the lean one's own)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jurybench.engine import EngineOptions, score
from jurybench.errors import JurybenchError
from jurybench.jurors import check_juror, parse_juror
from jurybench.rubric import load_rubric
from jurybench.testing import StubServer
from tests.conftest import run_cli

QUIET = EngineOptions(progress=False, retry_base_s=0.001)
FULL = {"relevance": 5, "coherence": 4, "empathy": 3, "surprise": 2, "engagement": 1, "complexity": 3}


def _kind(text: str) -> str:
    from jurybench.jurors._lean import make_litellm

    return type(make_litellm(parse_juror(text), load_rubric("story-quality"), None, None)).__name__  # type: ignore[arg-type]


def test_auto_takes_the_lean_transport_only_where_it_applies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JURYBENCH_TRANSPORT", raising=False)
    base = "api_base=http://127.0.0.1:9/v1,api_key=k"
    assert _kind(f"openai/m,{base},transport=auto") == "LeanOpenAIBackend"
    assert _kind(f"hosted_vllm/m,{base},transport=auto") == "LeanOpenAIBackend"
    assert _kind(f"openai/m,{base}") == "LeanOpenAIBackend"  # the default is auto
    assert _kind(f"openai/m,{base},transport=litellm") == "LiteLLMBackend"
    assert _kind(f"openai/m,{base},transport=auto,structured=instructor") == "LiteLLMBackend"
    assert _kind("hosted_vllm/m,transport=auto") == "LiteLLMBackend"  # no endpoint of its own
    assert _kind("anthropic/claude-3-5-haiku-20241022,api_key=k,transport=auto") == "LiteLLMBackend"


@pytest.mark.parametrize(
    ("juror", "said"),
    [
        ("openai/m,api_key=k,transport=fast", "transport='fast' is not a transport"),
        ("anthropic/claude-3-5-haiku-20241022,api_key=k,transport=openai", "which anthropic/ does not"),
        ("openai/m,api_key=k,transport=openai,structured=instructor", "structured=instructor goes through litellm"),
        ("hosted_vllm/m,transport=openai", "transport=openai needs the server's api_base"),
    ],
)
def test_a_transport_that_cannot_be_is_refused_before_any_call(juror: str, said: str) -> None:
    with pytest.raises(JurybenchError, match=said):
        check_juror(parse_juror(juror), need_key=False)


def test_the_command_line_refuses_it_in_one_line(small_store: Any, db_path: Path) -> None:
    done = run_cli(
        "score", "-r", "story-quality", "-j", "openai/m,api_key=k,transport=fast", "--no-progress", "--db", str(db_path)
    )
    assert done.exit_code == 2 and "transport='fast' is not a transport" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_key_and_the_query_go_where_the_server_reads_them(small_store: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    with StubServer(json.dumps(FULL)) as stub:
        juror = parse_juror(f"openai/stub-judge,api_base={stub.api_base}?api-version=2024-10,transport=openai")
        result = score(small_store, load_rubric("story-quality"), [juror], where="item_id = 'i1'", options=QUIET)
        assert result.status_counts == {"ok": 1}
        sent = stub.headers[0]
    assert sent["authorization"] == "Bearer sk-from-env"
    assert sent[":path"] == "/v1/chat/completions" and sent[":query"] == "api-version=2024-10"
    assert "sk-from-env" not in json.dumps(small_store.execute("SELECT * FROM calls").fetchall(), default=str)


def test_both_transports_store_the_same_call(tmp_path: Path) -> None:
    """A model litellm's price map prices, behind the stub: the same tokens, cost, status and
    answer from either transport (each in a store of its own: the transport is not part of
    the call's key, so one store would answer the second from the first)."""
    from jurybench.store import connect, import_items
    from tests.conftest import ITEMS_CSV, write

    rows = {}
    for transport in ("litellm", "openai"):
        con = connect(tmp_path / f"{transport}.duckdb")
        import_items(con, write(tmp_path / "items.csv", ITEMS_CSV), treatment_columns=["gender"])
        with StubServer(json.dumps(FULL)) as stub:
            juror = parse_juror(
                f"openai/gpt-4o-mini,api_base={stub.api_base},api_key=k,local=false,transport={transport}"
            )
            score(con, load_rubric("story-quality"), [juror], where="item_id = 'i1'", options=QUIET)
        rows[transport] = con.execute(
            "SELECT status, prompt_tokens, completion_tokens, round(cost_usd, 12), response_text, structured FROM calls"
        ).fetchall()
        con.close()
    assert rows["litellm"] == rows["openai"] and rows["openai"][0][3] > 0
