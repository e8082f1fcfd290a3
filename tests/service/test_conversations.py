"""POST /v1/conversations and GET /v1/items/{id}/conversation (issue 84): the service reads a
trace as ``items import --format`` does, all or nothing, and gives a conversation back in order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_a_tau_bench_file_posted_is_the_same_conversations(client: Any) -> None:
    content = json.loads((FIXTURES / "released" / "tau_bench" / "gpt-4o-airline.json").read_text(encoding="utf-8"))
    body = {"format": "tau-bench", "content": content, "filename": "gpt-4o-airline.json"}
    done = client.post("/v1/conversations", json=body)
    assert done.status_code == 201, done.text
    assert done.json() == {"inserted": 12, "unchanged": 0, "updated": 0}
    assert client.post("/v1/conversations", json=body).json()["unchanged"] == 12
    # named as the CLI names them: the model from the file's name; an id's slashes are part of the path
    assert client.get("/v1/items", params={"dataset": "tau-bench", "limit": 1}).json()[0]["model"] == "gpt-4o"
    conversation = client.get("/v1/items/gpt-4o-airline/task0/trial0/conversation").json()
    assert len(conversation["messages"]) == 32 and conversation["trial"] == 0 and conversation["outcome"] == 0.0
    assert conversation["messages"][6]["tool_calls"][0]["tool"] == "get_user_details"
    assert conversation["messages"][7]["tool_call_id"] == conversation["messages"][6]["tool_calls"][0]["call_id"]


def test_json_lines_text_with_a_map_and_bad_content_in_one_line(client: Any) -> None:
    text = (FIXTURES / "specified" / "openai_chat" / "agent-runs.jsonl").read_text(encoding="utf-8")
    done = client.post(
        "/v1/conversations",
        json={"format": "openai-chat", "content": text, "map": {"id": "run_id", "outcome": "info.reward"}},
    )
    assert done.status_code == 201 and done.json()["inserted"] == 3
    weather = client.get("/v1/items/weather-1/conversation").json()
    assert [m["role"] for m in weather["messages"]] == ["system", "user", "assistant", "tool", "assistant"]
    assert weather["outcome"] == 1.0 and weather["outcome_passed"] is True
    bad = '{"id": "z", "messages": [{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "q"}]}\n'
    refused = client.post("/v1/conversations", json={"format": "openai-chat", "content": bad})
    assert refused.status_code in (400, 422)
    error = refused.json()["error"]
    assert error.startswith("content record 1, message 1, field 'tool_call_id': 'q' answers no tool call")
    assert "jurybench-upload" not in refused.text  # the server's scratch file is never named
    assert client.get("/v1/items/z").status_code == 404
    unknown = client.post("/v1/conversations", json={"format": "nope", "content": []})
    assert unknown.status_code in (400, 422) and "neither a file format nor a conversation format" in unknown.text
    plain = client.get("/v1/items/weather-9/conversation")
    assert plain.status_code == 404
