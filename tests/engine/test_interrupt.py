"""Killing a run mid-way keeps every committed judgment; re-running finishes the rest."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import write


def _cli(db: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "jurybench.cli", *args, "--db", str(db)]


def _store_with_items(tmp_path: Path, name: str, n: int) -> tuple[Path, dict[str, str]]:
    """A store of ``n`` items made with the CLI, and the environment the test's commands run in."""
    db = tmp_path / name
    rows = "\n".join(f"i{i:02d},Prompt {i},Response {i}" for i in range(n))
    items = write(tmp_path / "items.csv", "item_id,prompt,response\n" + rows + "\n")
    env = {**os.environ, "JURYBENCH_HOME": str(tmp_path)}
    subprocess.run(_cli(db, "items", "import", str(items)), check=True, env=env, capture_output=True)
    return db, env


def test_sigint_keeps_stored_judgments_and_rerun_resumes(tmp_path: Path) -> None:
    db, env = _store_with_items(tmp_path, "run.duckdb", 40)
    juror = "fake/slow,latency_ms=400,concurrency=2"  # about 8 s; a signal after the last answer is allowed for below
    cmd = _cli(db, "score", "--rubric", "story-quality", "--juror", juror, "--run", "r", "--no-progress")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Signalled once a call is stored (a fixed 2.5 s sleep failed on a loaded machine: the
    # signal landed before the first call was stored).
    _wait_for_calls(db, env, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted: judgments answered so far are stored" in err
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    match = re.search(r"40 judgments requested, (\d+) from cache, (\d+) called", out)
    assert match, out
    cached, called = int(match.group(1)), int(match.group(2))
    # Usually part was answered before the signal; on a slow machine the signal can land after
    # the last answer was stored, and then nothing is left to call.
    assert cached > 0 and cached + called == 40
    status = subprocess.run(
        _cli(db, "sql", "SELECT status, count(*) AS n FROM runs GROUP BY ALL", "--format", "csv"),
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "finished,1" in status


def _wait_for_calls(db: Path, env: dict[str, str], proc: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the run ended before it was signalled"
        done = subprocess.run(
            _cli(db, "sql", "SELECT count(*) FROM calls", "--format", "csv"), env=env, capture_output=True, text=True
        )
        if done.returncode == 0 and int(done.stdout.split()[-1]) > 0:
            return
        time.sleep(0.2)
    raise AssertionError("no call was stored in time")


def test_sigterm_is_handled_like_ctrl_c(tmp_path: Path) -> None:
    # 200 items at 200 ms, one at a time: about 40 s at most. With 40 items (8 s) a loaded CI
    # machine once stored all 40 calls before the first one was seen and the signal sent.
    db, env = _store_with_items(tmp_path, "run.duckdb", 200)
    cmd = _cli(
        db,
        "score",
        "--rubric",
        "story-quality",
        "--juror",
        "fake/slow,latency_ms=200,concurrency=1",
        "--no-progress",
    )
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Ready when the run has stored a call (read through the store, as a user would while it
    # runs), not after a fixed sleep that a loaded machine can outlast.
    _wait_for_calls(db, env, proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    out = subprocess.run(
        _cli(db, "sql", "SELECT count(*) AS n FROM calls", "--format", "csv"),
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert 0 < int(out.split()[-1]) < 200


def test_kill_9_never_asks_again_for_an_answer_it_received(tmp_path: Path) -> None:
    """Answers received but not yet flushed were lost to a kill -9 and paid for again (up to a
    second of them: 164 of 2,000 calls at concurrency 64, issue 27). They are journaled as they
    arrive and stored by the next run of the same name, so only requests still in flight at the
    kill (at most the concurrency) are asked again."""
    import json

    from jurybench.testing import RateLimits, StubServer
    from tests.conftest import FULL

    db, env = _store_with_items(tmp_path, "k.duckdb", 60)
    with StubServer(json.dumps(FULL), limits=RateLimits(delay_s=0.1, headers=False)) as stub:
        juror = f"openai/stub,api_base={stub.api_base},api_key=sk-test-0123456789,concurrency=4"
        cmd = _cli(db, "score", "--rubric", "story-quality", "--juror", juror, "--run", "k", "--no-progress")
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while stub.limits.n_ok < 12 and time.monotonic() < deadline:  # a dozen answers sent back
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.01)
        proc.kill()
        proc.communicate()
        answered_before = stub.limits.n_ok
        assert answered_before < 60, "the run ended before it was killed"
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        asked = len(stub.requests)
    assert asked <= 60 + 4 + 1, (asked, answered_before)  # only what was in flight at the kill again
    out = subprocess.run(
        _cli(db, "sql", "SELECT count(*) AS n FROM calls WHERE status = 'ok'", "--format", "csv"),
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.split()[-1] == "60"
    assert not (tmp_path / "k.duckdb.journal").exists()  # the run's end removed its journal
