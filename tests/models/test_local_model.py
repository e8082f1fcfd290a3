"""jurybench against a real model server (llama.cpp, SmolLM2-135M-Instruct) through the CLI, as a user
runs it: a pointwise run and a preference run in both orders, schema-constrained with expected
scores, then reports and a statistic over what was stored.

The assertions are about the plumbing, not the model's taste: every call stored, answers valid
JSON under the schema (or stored invalid with the reason), log probabilities read into expected
scores, token counts and latencies recorded, and a resumed run makes no second call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from jurybench.testing.llama import CLARITY_RUBRIC
from tests.conftest import run_cli, write
from tests.models.conftest import LocalModel

pytestmark = pytest.mark.model

RUBRIC = CLARITY_RUBRIC  # the bench judges with the same rubric
ITEMS = """item_id,prompt,response,model
i1,Describe a cat,A cat is a small furry animal that purrs.,m1
i2,Describe a dog,dog dog dog the the,m2
i3,Describe rain,Water falls from clouds when they are heavy.,m1
"""
PAIRS = "pair_id,item_a,item_b\np1,i1,i2\np2,i3,i2\n"


def _ok(*args: str) -> str:
    result = run_cli(*args)
    assert result.exit_code == 0, f"jurybench {' '.join(args)}: {result.stderr}"
    return result.stdout


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


@pytest.fixture(scope="module")
def judged(local_model: LocalModel, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("local")
    db = folder / "local.duckdb"
    rubric = write(folder / "clarity-local.yaml", RUBRIC)
    _ok("items", "import", str(write(folder / "items.csv", ITEMS)), "--db", str(db))
    _ok("pairs", "import", str(write(folder / "pairs.csv", PAIRS)), "--db", str(db))
    structured = ",structured=schema,response_format=json_object,scores=expected,top_logprobs=5,max_tokens=24"
    point = run_cli(
        "score",
        "--rubric",
        str(rubric),
        "--juror",
        local_model.juror(structured),
        "--run",
        "point",
        "--no-progress",
        "--db",
        str(db),
    )
    pref = run_cli(
        "score",
        "--rubric",
        "preference",
        "--juror",
        local_model.juror(structured),
        "--run",
        "pref",
        "--no-progress",
        "--db",
        str(db),
    )
    return {"db": db, "rubric": rubric, "point": point, "pref": pref, "structured": structured}


def test_every_call_is_stored_with_its_tokens_latency_and_mode(judged: dict[str, Any]) -> None:
    assert judged["point"].exit_code == 0, judged["point"].stderr
    assert judged["pref"].exit_code == 0, judged["pref"].stderr
    rows = _rows(
        judged["db"],
        "SELECT subject_kind, presented_order, status, structured, prompt_tokens, completion_tokens, latency_ms "
        "FROM calls ORDER BY subject_kind, subject_id, presented_order",
    )
    # 3 items, and 2 pairs in both orders
    assert [(r[0], r[1]) for r in rows] == [("item", None)] * 3 + [
        ("pair", "AB"),
        ("pair", "BA"),
        ("pair", "AB"),
        ("pair", "BA"),
    ]
    for _, _, status, mode, prompt_tokens, completion_tokens, latency in rows:
        assert status in ("ok", "invalid")  # an answer, never an error
        assert mode == "schema"
        assert prompt_tokens > 0 and completion_tokens > 0 and latency > 0


def test_answers_are_json_under_the_schema_or_stored_invalid_with_the_reason(judged: dict[str, Any]) -> None:
    rows = _rows(judged["db"], "SELECT subject_kind, response_text, status, reason FROM calls")
    for kind, text, status, reason in rows:
        answer = json.loads(text)  # the server constrained decoding to JSON
        keys = {"clarity"} if kind == "item" else {"verdict"}
        assert set(answer) == keys
        if kind == "pair":
            assert answer["verdict"] in ("A", "B")  # an enum the grammar enforces
        in_range = kind == "pair" or 1 <= answer["clarity"] <= 5
        # llama.cpp does not enforce an integer's bounds: out of range is stored invalid, with why
        assert (status == "ok") == in_range, (text, status, reason)
        if status == "invalid":
            assert reason and reason.startswith("clarity:")


def test_log_probabilities_are_read_into_expected_scores(judged: dict[str, Any]) -> None:
    point = _rows(
        judged["db"],
        "SELECT score, expected, distribution FROM pointwise_judgments WHERE status = 'valid'",
    )
    pref = _rows(judged["db"], "SELECT score, expected, distribution FROM pairwise_judgments WHERE status = 'valid'")
    assert point or pref, "no valid answer to read probabilities from"
    for score, expected, distribution in point:
        dist = json.loads(distribution)
        assert 1 <= expected <= 5 and 0 < dist["coverage"] <= 1
        assert sum(dist["p"].values()) == pytest.approx(1.0)
        assert str(int(score)) in dist["p"]  # the value written is among those read
    for score, expected, distribution in pref:
        shown = json.loads(distribution)["p"]
        assert -1 <= expected <= 1 and set(shown) <= {"A", "B"}
        assert {1: "A", -1: "B"}[int(score)] in shown  # the verdict written (in the shown order) is among them
    assert "note:" not in judged["point"].stderr + judged["pref"].stderr  # logprobs came with every answer


def test_a_resumed_run_makes_no_second_call(judged: dict[str, Any], local_model: LocalModel) -> None:
    again = run_cli(
        "score",
        "--rubric",
        str(judged["rubric"]),
        "--juror",
        local_model.juror(judged["structured"]),
        "--run",
        "point",
        "--no-progress",
        "--db",
        str(judged["db"]),
    )
    assert again.exit_code == 0, again.stderr
    assert "3 from cache, 0 called" in again.stdout
    assert _rows(judged["db"], "SELECT count(*) FROM calls") == [(7,)]


def test_reports_and_a_statistic_over_the_stored_judgments(judged: dict[str, Any], tmp_path: Path) -> None:
    db = str(judged["db"])
    out = _ok("sql", "SELECT run_id, juror, n_calls, n_ok, n_invalid FROM run_summary ORDER BY run_id", "--db", db)
    assert "point" in out and "pref" in out
    _ok("report", "html", "--run", "point", "--output", str(tmp_path / "point.html"), "--db", db)
    assert "clarity" in (tmp_path / "point.html").read_text(encoding="utf-8")
    stat = json.loads(_ok("stats", "consistency", "--run", "pref", "--format", "json", "--db", db))
    assert stat["name"] == "consistency" and stat["result"]
