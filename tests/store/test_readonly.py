"""The store cannot be changed or escaped through jurybench sql, --where, --by or --sql."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ITEMS_CSV, PAIRS_CSV, REPO, run_cli, write


@pytest.fixture
def scored(tmp_path: Path) -> Path:
    assert run_cli("items", "import", str(write(tmp_path / "items.csv", ITEMS_CSV))).exit_code == 0
    assert run_cli("pairs", "import", str(write(tmp_path / "pairs.csv", PAIRS_CSV))).exit_code == 0
    for args in (("-r", "story-quality", "--run", "q"), ("-r", "persuasion", "--run", "p")):
        result = run_cli("score", *args, "-j", "fake/a", "-j", "fake/b", "--no-progress")
        assert result.exit_code == 0, result.stderr
    (tmp_path / "secret.csv").write_text("a\n42\n")
    return tmp_path


def _counts() -> tuple[int, int, int]:
    result = run_cli(
        "sql",
        "SELECT (SELECT count(*) FROM calls), (SELECT count(*) FROM items), (SELECT count(*) FROM runs)",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.stderr
    return tuple(json.loads(result.stdout)[0].values())  # type: ignore[return-value]


ESCAPES = [
    ("ATTACH '{db}' AS w (READ_ONLY false)", "only a single SELECT"),
    ("DELETE FROM calls", "only a single SELECT"),
    ("SELECT 1; DELETE FROM calls", "one statement"),
    ("COPY calls TO '{tmp}/out.csv'", "only a single SELECT"),
    ("EXPORT DATABASE '{tmp}/export'", "only a single SELECT"),
    ("SELECT * FROM read_csv('{tmp}/secret.csv')", "which is not allowed"),
    ("SELECT * FROM read_text('/etc/hostname')", "which is not allowed"),
    ("SELECT * FROM glob('{tmp}/*')", "which is not allowed"),
    ("INSTALL httpfs", "only a single SELECT"),
    ("LOAD httpfs", "only a single SELECT"),
    ("SET enable_external_access = true", "only a single SELECT"),
    ("PRAGMA enable_profiling", "only a single SELECT"),
    ("CALL checkpoint()", "only a single SELECT"),
    ("CREATE TEMP TABLE t AS SELECT 1", "only a single SELECT"),
    ("SELECT * FROM query('DELETE FROM calls')", "contains query(), which is not allowed"),
    ("DROP TABLE items", "only a single SELECT"),
]


@pytest.mark.parametrize(("query", "message"), ESCAPES)
def test_sql_escapes_are_refused_with_exit_2(scored: Path, db_path: Path, query: str, message: str) -> None:
    before = _counts()
    result = run_cli("sql", query.format(db=db_path, tmp=scored))
    assert result.exit_code == 2, (query, result.stdout, result.stderr)
    assert message in result.stderr and result.stderr.count("\n") == 1
    assert _counts() == before
    assert not (scored / "out.csv").exists() and not (scored / "export").exists()


def test_plain_queries_still_work(scored: Path) -> None:
    for query in (
        "SELECT count(*) AS n FROM calls",
        "DESCRIBE calls",
        "WITH x AS (SELECT 1 AS a) SELECT * FROM x",
        "EXPLAIN SELECT * FROM items",
    ):
        result = run_cli("sql", query, "--format", "csv")
        assert result.exit_code == 0, (query, result.stderr)


@pytest.mark.parametrize(
    "where",
    [
        "1=1; DROP TABLE items",
        "TRUE) OR (TRUE",
        "item_id = 'i1'; DELETE FROM calls",
        "item_id IN (SELECT item_id FROM read_csv('{tmp}/secret.csv'))",
    ],
)
def test_score_where_is_one_expression_on_a_sandbox(scored: Path, where: str) -> None:
    before = _counts()
    result = run_cli(
        "score", "-r", "story-quality", "-j", "fake/c", "--where", where.format(tmp=scored), "--no-progress"
    )
    assert result.exit_code == 2, result.stderr
    assert "--where" in result.stderr
    assert _counts() == before


def test_score_where_still_selects(scored: Path) -> None:
    result = run_cli(
        "score",
        "-r",
        "story-quality",
        "-j",
        "fake/c",
        "--where",
        "model = 'm1' AND language = 'en'",
        "--run",
        "sel",
        "--no-progress",
    )
    assert result.exit_code == 0, result.stderr
    assert "2 judgments requested" in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("stats", "directional", "--run", "p", "--where", "TRUE; DROP TABLE calls"),
        ("stats", "directional", "--run", "p", "--by", "model_a; DROP TABLE calls"),
        ("stats", "gap", "--run", "p", "--by", "(SELECT count(*) FROM read_csv('{tmp}/secret.csv'))"),
        ("stats", "disparity", "--sql", "DELETE FROM calls"),
        ("stats", "disparity", "--sql", "SELECT 1; DROP TABLE calls"),
    ],
)
def test_stats_sql_fragments_cannot_write(scored: Path, args: tuple[str, ...]) -> None:
    before = _counts()
    result = run_cli(*[a.format(tmp=scored) for a in args])
    assert result.exit_code == 2, result.stderr
    assert _counts() == before


def test_the_store_can_be_read_while_score_runs(tmp_path: Path, db_path: Path) -> None:
    assert run_cli("items", "import", str(write(tmp_path / "items.csv", ITEMS_CSV))).exit_code == 0
    env = {**os.environ, "JURYBENCH_DB": str(db_path), "PYTHONPATH": str(REPO / "src")}
    cli = [sys.executable, "-m", "jurybench.cli"]
    writer = subprocess.Popen(
        [
            *cli,
            "score",
            "-r",
            "story-quality",
            "-j",
            "fake/slow,latency_ms=400,samples=12,concurrency=2",
            "--run",
            "long",
            "--no-progress",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen = []
    try:
        deadline = time.monotonic() + 60
        while writer.poll() is None and time.monotonic() < deadline:
            reader = subprocess.run(
                [*cli, "sql", "SELECT count(*) AS n FROM calls", "--format", "csv"],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert reader.returncode == 0, reader.stderr
            seen.append(int(reader.stdout.splitlines()[1]))
            time.sleep(0.3)
    finally:
        _out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err
    # Readers ran while the run was in progress and saw it grow; nothing was lost.
    assert len(seen) >= 2 and any(0 < n < 36 for n in seen), seen
    final = run_cli("sql", "SELECT count(*) AS n, count(DISTINCT call_key) AS k FROM calls", "--format", "csv")
    assert final.stdout.splitlines()[1] == "36,36"
    assert not list(tmp_path.glob("*.release-request"))
