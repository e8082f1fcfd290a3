"""Helpers shared by the annotation tests."""

from __future__ import annotations

from jurybench.jurors import FakeBackend
from tests.conftest import run_cli


def classify_queued(db: str, juror: str, *answers: str) -> None:
    """Run 'c': the store's items judged on emotion-label by ``fake/<juror>``, which answers
    ``answers`` in order (one call at a time, so each item gets the next one)."""
    FakeBackend.enqueue(juror, *answers)
    done = run_cli(
        "score",
        "-r",
        "emotion-label",
        "-j",
        f"fake/{juror}",
        "--concurrency",
        "1",
        "--run",
        "c",
        "--no-progress",
        "--db",
        db,
    )
    assert done.exit_code == 0, done.stderr
