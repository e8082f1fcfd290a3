"""A task rubric with the real local model (issue 56, item 5): SmolLM2-135M-Instruct on
llama.cpp judges answers against their reference with the `correctness` rubric. Whatever the
small model makes of them, every answer is stored as a valid score on 1..5 or as invalid with
its reason, never coerced."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.conftest import run_cli, write
from tests.models.conftest import LocalModel

pytestmark = pytest.mark.model

QA = """item_id,prompt,response,reference
q1,What is the capital of Australia?,Canberra.,Canberra
q2,What is the capital of Australia?,Sydney.,Canberra
q3,How many legs does a spider have?,Eight.,8
q4,How many legs does a spider have?,Six legs.,8
"""


def test_correctness_with_the_real_model(local_model: LocalModel, tmp_path: Path) -> None:
    db = str(tmp_path / "qa.duckdb")
    assert run_cli("items", "import", str(write(tmp_path / "qa.csv", QA)), "--db", db).exit_code == 0
    juror = local_model.juror(",max_tokens=120,structured=schema,response_format=json_object")
    done = run_cli(
        "score", "-r", "correctness", "--where", "true", "--run", "qa", "-j", juror, "--no-progress", "--db", db
    )
    assert done.exit_code == 0, done.stderr
    with duckdb.connect(db, read_only=True) as con:
        rows = con.execute("SELECT item_id, status, score, reason FROM pointwise_judgments ORDER BY item_id").fetchall()
        prompts = con.execute("SELECT messages FROM calls WHERE subject_id = 'q2'").fetchall()
    assert [r[0] for r in rows] == ["q1", "q2", "q3", "q4"]
    for _, status, score, reason in rows:
        assert (status == "valid" and score in (1, 2, 3, 4, 5)) or (status != "valid" and score is None and reason)
    assert "Reference answer:\\nCanberra" in prompts[0][0]  # the reference reached the model
