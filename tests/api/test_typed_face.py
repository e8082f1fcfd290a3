"""The Python face is typed (issue 28): mypy, as a user's editor runs it, accepts the documented
calls and rejects a misspelt or mistyped argument of score, generate and a statistic."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

USER_CODE = """
from pathlib import Path

import jurybench as jb

with jb.open("study.duckdb") as store:
    run = jb.score(store, rubric="story-quality", jury=["openai/gpt-4o-mini", "fake/a,samples=2"], run="r1")
    jb.score(Path("study.duckdb"), rubric=Path("rubrics/mine.yaml"), jury="jury.yaml", until="ci_width(coherence)<0.5")
    jb.stats.gap(store, "r1", boot=200)
    status: str = run.status
    jb.score(store, rubric=5, jury=["fake/a"])  # E1: a rubric is a name, a path or a rubric
    jb.score(store, rubric="story-quality", jury=["fake/a"], concurency=4)  # E2: misspelt
    jb.score(store, rubric="story-quality", jury=3.5)  # E3: a jury is jurors, a file or a Jury
    jb.generate(store, "gen.yaml", prompts=42)  # E4: prompts are a file, a DataFrame or rows
    jb.stats.gap(store, "r1", bootz=1)  # E5: misspelt
    counts = store.import_items([{"item_id": "a", "response": "x"}])
    print(counts.inserted + counts.unchanged, run.results().sort_values("score"))
    print(counts.insrted)  # E6: an import says inserted, unchanged, updated
    run.results().sort_valuez("score")  # E7: results are a DataFrame
    jb.agreement(store, "r1").to_csv("agreement.csv")
    jb.agreement(store, "r1").to_cvs("agreement.csv")  # E8: so is agreement
"""


def test_mypy_accepts_the_documented_calls_and_rejects_bad_ones(tmp_path: Path) -> None:
    script = tmp_path / "user.py"
    script.write_text(USER_CODE, encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / "cache"),
            str(script),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    lines = USER_CODE.splitlines()
    flagged = {int(m.group(1)) for m in re.finditer(r"user\.py:(\d+): error", done.stdout)}
    expected = {n for n, line in enumerate(lines, start=1) if "# E" in line}
    assert flagged == expected, done.stdout
