"""A real judge's answers through jurybench (issue 45): the model's own chat format, the score
written against the probabilities the server reports, and a schema the server's grammar
enforces. Measured on the tier's model (SmolLM2-135M-Instruct) at temperature 0.

Before: llama-cpp-python sampled with its default repetition penalty (1.1) while reporting the
model's probabilities before it, so in a JSON answer of six scores the digits already written
were penalised: the score written was the most probable one in 22 of 36 criteria here (36 of 36
without the penalty, which jurybench now asks a self-hosted server for). And a scale sent as
minimum/maximum is not enforced by llama.cpp's grammar (SmolLM2 counted 1, 2, ..., 6); sent as
the enum of its points it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from jurybench.config import shipped_rubrics
from jurybench.testing.llama import chat_format_used
from tests.conftest import run_cli, write
from tests.models.conftest import LocalModel

pytestmark = pytest.mark.model

STORIES = """item_id,prompt,response
s1,Write a story about a lost key,"Mara found the key under the porch, rusted and warm from the sun. It opened nothing in the house, so she carried it for years, until the day the old shed finally gave up its lock."
s2,Write a story about rain,"The rain came down on the village for nine days. On the tenth, the children built boats from newspaper and sailed them down the street toward the river."
s3,Write a story about a robot,"Unit 7 swept the same corridor every night. One night it found a drawing taped to the wall: a robot holding a broom, smiling. It swept around the drawing from then on."
s4,Write a story about winter,"snow. cold. the end."
s5,Write a story about a bakery,"Every morning at four, Mr. Alvarez lit the ovens and sang to the dough. His neighbours said the bread tasted of songs."
s6,Write a story about the sea,"The sea the sea the sea the sea the sea the sea."
"""


@pytest.fixture(scope="module")
def stories(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("judge")
    text = (shipped_rubrics() / "story-quality.yaml").read_text(encoding="utf-8")
    rubric = write(
        folder / "story-short.yaml",
        text.replace("name: story-quality", "name: story-short").replace("rationale: true", "rationale: false"),
    )
    db = folder / "judge.duckdb"
    done = run_cli("items", "import", str(write(folder / "items.csv", STORIES)), "--db", str(db))
    assert done.exit_code == 0, done.stderr
    return {"db": db, "rubric": rubric}


def _score(local_model: LocalModel, stories: dict[str, Path], run: str, extra: str) -> None:
    done = run_cli(
        "score", "-r", str(stories["rubric"]), "--run", run, "--no-progress", "--db", str(stories["db"]),
        "-j", local_model.juror(f",max_tokens=120{extra}"),
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_the_server_formats_chats_with_the_models_own_template(local_model: LocalModel) -> None:
    assert chat_format_used(local_model.log.read_text(errors="replace")) == "gguf"


def test_the_written_score_is_the_most_probable_scale_value(local_model: LocalModel, stories: dict[str, Path]) -> None:
    _score(
        local_model,
        stories,
        "expected",
        ",structured=schema,response_format=json_object,scores=expected,top_logprobs=5",
    )
    rows = _rows(
        stories["db"],
        """SELECT j.score, j.distribution FROM pointwise_judgments j JOIN run_calls rc USING (call_key)
           WHERE rc.run_id = 'expected' AND j.status = 'valid'""",
    )
    assert len(rows) == 36, "six stories, six criteria, every answer valid under the enforced schema"
    agree = 0
    for written, distribution in rows:
        p = json.loads(distribution)["p"]
        agree += max(p, key=p.get) == str(int(written))
    assert agree / len(rows) >= 0.95, f"the written score was the most probable value in {agree} of {len(rows)}"
    sent = _rows(stories["db"], "SELECT count(*) FROM calls WHERE prompt_tokens > 0 AND completion_tokens > 0")
    assert sent[0][0] >= 6  # the real server answered, with its token counts


def test_a_schema_the_grammar_enforces_leaves_no_invalid_answers(
    local_model: LocalModel, stories: dict[str, Path]
) -> None:
    """JSON mode without the schema: the model writes its own keys (here it counted 1..5 and left
    complexity out) and the answers are stored invalid, as they should be; with the scale's points
    as enums the grammar admits only valid answers."""
    _score(local_model, stories, "enum", ",structured=schema,response_format=json_object")
    _score(local_model, stories, "plain-json", ",structured=json,response_format=json_object")
    rates = dict(
        _rows(
            stories["db"],
            """SELECT rc.run_id, avg((c.status <> 'ok')::INT) FROM calls c JOIN run_calls rc USING (call_key)
               WHERE rc.run_id IN ('enum', 'plain-json') GROUP BY ALL""",
        )
    )
    print(f"invalid answers: schema with enums {rates['enum']:.2f}, JSON mode alone {rates['plain-json']:.2f}")
    assert rates["enum"] == 0.0
    assert rates["enum"] <= rates["plain-json"]
