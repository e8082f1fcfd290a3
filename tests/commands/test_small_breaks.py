"""Issue 82, item 7: the smaller breaks of the rules. check --junit into a folder that does not
exist or onto a folder; a refused command on a store it would create; a store held by a
labelling viewer; each one line, exit 2, and nothing written."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from tests.conftest import run_cli, write

ITEMS = "item_id,prompt,response\n" + "".join(f"i{k},Prompt {k % 4},Answer {k}\n" for k in range(8))


@pytest.fixture
def judged(tmp_path: Path) -> Path:
    db = tmp_path / "s.duckdb"
    assert run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS)), "--db", str(db)).exit_code == 0
    done = run_cli("score", "-r", "story-quality", "-j", "sim/a", "--run", "r", "--no-progress", "--db", str(db))
    assert done.exit_code == 0, done.stderr
    return db


def _checks(db: Path) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return int(con.execute("SELECT count(*) FROM stats_results WHERE name = 'check'").fetchall()[0][0])


def test_check_junit_makes_its_folder_and_refuses_a_folder_before_recording(judged: Path, tmp_path: Path) -> None:
    """It printed "a jurybench bug" and exited 1 (the code CI reads as a failed gate), with the
    check recorded all the same."""
    report = tmp_path / "reports" / "ci" / "check.xml"
    done = run_cli("check", "--run", "r", "--min", "coherence>=1", "--junit", str(report), "--db", str(judged))
    assert done.exit_code == 0, done.stderr
    assert report.read_text().startswith("<?xml") and _checks(judged) == 1
    (tmp_path / "folder").mkdir()
    refused = run_cli(
        "check", "--run", "r", "--min", "coherence>=1", "--junit", str(tmp_path / "folder"), "--db", str(judged)
    )
    assert refused.exit_code == 2 and "is a folder, not a file" in refused.stderr, refused.stderr
    assert "jurybench bug" not in refused.stderr and _checks(judged) == 1  # nothing recorded


@pytest.mark.parametrize(
    "command",
    [
        ["score", "--plan", "-r", "story-quality", "-j", "sim/a", "--where", "nosuchcol = 1"],
        ["score", "-r", "story-quality", "-j", "sim/a"],
        ["stats", "ppi", "--run", "nosuch"],
    ],
)
def test_a_refused_command_leaves_no_store_behind(tmp_path: Path, command: list[str]) -> None:
    """A failing score --plan left an empty 800 kB store: nothing written means no new file."""
    db = tmp_path / "new.duckdb"
    done = run_cli(*command, "--db", str(db))
    assert done.exit_code == 2, done.stdout + done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_refused_command_keeps_a_store_that_was_there(judged: Path) -> None:
    done = run_cli(
        "score", "--plan", "-r", "story-quality", "-j", "sim/a", "--where", "nosuchcol = 1", "--db", str(judged)
    )
    assert done.exit_code == 2 and judged.exists()


def test_a_store_held_by_a_labelling_viewer_names_the_viewer_and_asks_nothing(judged: Path, tmp_path: Path) -> None:
    """It gave DuckDB's raw lock error (absolute paths) blaming 'jurybench score', and left a
    .release-request file behind. The viewer announces itself as a server does."""
    env = {**os.environ, "JURYBENCH_HOME": str(tmp_path), "JURYBENCH_WAIT": "1"}
    viewer = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jurybench.cli",
            "view",
            "--annotate",
            "--port",
            "0",
            "--no-browser",
            "--db",
            str(judged),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert viewer.stdout is not None
        line = viewer.stdout.readline()  # printed once it listens and holds the store
        assert "taking blind labels" in line, line + viewer.stderr.read() if viewer.stderr else line
        url = line.split(" at ")[1].split()[0].rstrip("/")
        done = subprocess.run(
            [sys.executable, "-m", "jurybench.cli", "score", "-r", "story-quality", "-j", "sim/b", "--db", str(judged)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2, done.stderr
        assert "held by a jurybench viewer taking labels (view --annotate" in done.stderr and url in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Conflicting lock" not in done.stderr
        assert not (judged.parent / f"{judged.name}.release-request").exists()
    finally:
        viewer.terminate()
        viewer.wait(timeout=60)
    deadline = time.monotonic() + 30  # the viewer's announcement goes with it
    while (judged.parent / f"{judged.name}.server.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not (judged.parent / f"{judged.name}.server.json").exists()
