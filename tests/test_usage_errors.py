"""Usage mistakes through the real entry point (a subprocess): one line, exit 2, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CASES = [
    (["scor"], "No such command 'scor'. Did you mean 'score'?"),
    (["score"], "Missing option '--rubric'"),
    (["sql", "--frmat", "csv", "SELECT 1"], "No such option: --frmat"),
    (["score", "--rubric", "story-quality", "--bogus"], "No such option: --bogus"),
    # issue 56: an unknown option lists every one the command takes
    (["sql", "--frmat", "csv", "SELECT 1"], "Valid options: --format, --output, --db."),
    (["score", "--rubric", "story-quality", "--bogus"], "Valid options: --rubric, --juror, --jury, --aggregate"),
    (["score", "--rubric", "story-quality", "--concurrency", "many"], "Invalid value for '--concurrency'"),
    (["items", "import"], "Missing argument 'file'"),
]


@pytest.mark.parametrize(("args", "expected"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_usage_mistake_is_one_line_and_exit_2(tmp_path: Path, args: list[str], expected: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "jurybench.cli", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "JURYBENCH_HOME": str(tmp_path)},
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and expected in lines[0]
    assert "--help" in lines[0] and "Traceback" not in result.stderr
    assert result.stdout == ""


def test_bare_command_shows_help_without_a_traceback(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "jurybench.cli"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "JURYBENCH_HOME": str(tmp_path)},
        timeout=60,
    )
    assert result.returncode == 2
    assert "Usage: " in result.stdout + result.stderr and "Traceback" not in result.stdout + result.stderr


def _crashing(tmp_path: Path, error: str, debug: bool) -> subprocess.CompletedProcess[str]:
    """The CLI with one command made to fail in a way nobody planned for."""
    code = (
        "import sys, jurybench.commands as c\n"
        f"def broken(*a, **k):\n    raise {error}\n"
        "c.sql = broken\n"
        "from jurybench.cli import main\n"
        "sys.argv = ['jurybench', 'sql', 'SELECT 1']\n"
        "main()\n"
    )
    env = {**os.environ, "JURYBENCH_HOME": str(tmp_path)}
    env.pop("JURYBENCH_DEBUG", None)
    if debug:
        env["JURYBENCH_DEBUG"] = "1"
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60
    )


def test_an_unexpected_error_is_one_line_without_a_traceback(tmp_path: Path) -> None:
    result = _crashing(tmp_path, "RuntimeError('boom sk-proj-abcdefghijklmnopqrstuvwxyz012345')", debug=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: unexpected RuntimeError: boom"), result.stderr
    assert "JURYBENCH_DEBUG=1" in lines[0] and "abcdefghijklmnopqrstuvwxyz" not in lines[0]  # redacted
    shown = _crashing(tmp_path, "RuntimeError('boom')", debug=True)
    assert "Traceback" in shown.stderr and "boom" in shown.stderr


def test_duckdb_running_out_of_memory_says_so_in_one_line(tmp_path: Path) -> None:
    result = _crashing(tmp_path, "__import__('duckdb').OutOfMemoryException('could not allocate block')", debug=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: DuckDB ran out of memory (could not allocate block)"), result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["sql", "SELECT 1"],
        ["schema"],
        ["calibrate", "--run", "r"],
        ["agreement", "--run", "r"],
        ["report", "preference", "--run", "r"],
        ["check", "--run", "r", "--min", "relevance=3"],
        ["batches", "list"],
        ["stats", "directional", "--run", "r"],
        ["stats", "leaderboard", "--run", "r"],
    ],
)
def test_format_help_names_exactly_the_formats_a_command_takes(args: list[str], tmp_path: Path) -> None:
    """calibrate's help offered csv and parquet and then refused them: each command's --format
    help now lists what it accepts, in the order its refusal does."""
    import re

    from tests.conftest import run_cli

    shown = run_cli(*args, "--help").stdout
    line = next(x for x in shown.splitlines() if "--format" in x)
    offered = re.findall(r"\b(table|csv|json|parquet|markdown|junit)\b", line.split("[default")[0])
    refused = run_cli(*args, "--format", "bogus", "--db", str(tmp_path / "s.duckdb"))
    if args[0] == "schema":
        refused = run_cli(*args, "--format", "bogus")
    assert refused.exit_code == 2, refused.stderr
    valid = re.search(r"Valid: ([a-z, ]+)\.", refused.stderr)
    assert valid, refused.stderr
    assert offered == valid.group(1).split(", "), (line, refused.stderr)


def test_help_at_80_columns_wraps_and_never_cuts_a_description() -> None:
    # Rich's option tables cut descriptions with '…' at 80 columns (issue 27); plain help wraps.
    import os
    import subprocess
    import sys

    env = {**os.environ, "COLUMNS": "80"}
    for command in (["score"], ["stats", "gap"], ["serve"], ["report"], ["plot"], ["calibrate"]):
        out = subprocess.run(
            [sys.executable, "-m", "jurybench.cli", *command, "--help"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "…" not in out, (command, out)
        assert max(len(line) for line in out.splitlines()) <= 80, command
    plot = subprocess.run(
        [sys.executable, "-m", "jurybench.cli", "plot", "--help"], env=env, capture_output=True, text=True, check=True
    ).stdout
    from jurybench.plots import PLOTS

    assert all(name in plot for name in PLOTS)  # the help lists every plot there is
