"""A judgment format of a plug-in's own (issue 52): the worked reader in docs/extending.md runs
as written, with the public toolkit the built-in readers use, on every face that imports."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import jurybench as jb
from jurybench.imports import unregister_format
from tests.conftest import REPO, run_cli


def _example() -> str:
    text = (REPO / "docs" / "extending.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "register_format" in b]
    assert len(blocks) == 1
    return blocks[0]


@pytest.fixture
def grading_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.chdir(tmp_path)
    try:
        exec(compile(_example(), "docs/extending.md", "exec", dont_inherit=True), {})
        yield tmp_path
    finally:
        unregister_format("grading-log")


def test_the_worked_reader_in_the_docs_runs_with_the_figures_it_states(grading_log: Path) -> None:
    with jb.open(grading_log / "extending-formats.duckdb", read_only=True) as store:
        means = store.sql("SELECT juror, avg(juror_score) AS m, count(*) AS n FROM juror_pointwise GROUP BY 1")
        rubric = store.sql(
            "SELECT name AS rubric_name FROM runs JOIN rubrics USING (rubric_hash) WHERE run_id = 'graded'"
        )
    # g1 graded 1, 0, 1: a mean of 2/3; g2 graded 1, 1, 1
    found = {j: (m, n) for j, m, n in zip(means["juror"], means["m"], means["n"], strict=True)}
    assert found == {"g1": (pytest.approx(2 / 3), 3), "g2": (1.0, 3)}
    assert list(rubric["rubric_name"]) == ["graded"]


def test_the_command_line_lists_detects_and_refuses_as_the_docs_say(grading_log: Path) -> None:
    listed = run_cli("judgments", "formats")
    assert listed.exit_code == 0 and "grading-log" in listed.stdout
    db = str(grading_log / "cli.duckdb")
    done = run_cli("judgments", "import", "grades.jsonl", "--run", "r", "--db", db)
    assert done.exit_code == 0 and "grading-log: 3 items" in done.stdout
    bad = grading_log / "bad.jsonl"
    bad.write_text('{"task": "t", "model": "m", "question": "q", "answer": "a", "grades": []}\n', encoding="utf-8")
    refused = run_cli("judgments", "import", str(bad), "--format", "grading-log", "--run", "b", "--db", db)
    assert refused.exit_code == 2 and "bad.jsonl" in refused.stderr and "'grades'" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    with jb.open(db, read_only=True) as store:
        assert store.sql("SELECT count(*) AS n FROM runs WHERE run_id = 'b'")["n"][0] == 0
