"""The built wheel ships the rubrics: install it into a fresh venv and score with a shipped rubric."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from tests.conftest import ITEMS_CSV, REPO, write


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_wheel_ships_rubrics_and_scores_with_one(tmp_path: Path) -> None:
    # Build from a copy of the sources (nothing written into the work tree), offline: the
    # dev environment already has the build backend.
    source = tmp_path / "src-copy"
    shutil.copytree(REPO / "src", source / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    built = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(source),
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(tmp_path / "dist"),
        ],
        tmp_path,
    )
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "dist").glob("jurybench-*.whl"))
    # A fresh venv with only the wheel installed; its dependencies come from this environment's
    # site-packages through a .pth path entry (which does not load the editable install's hooks).
    venv = tmp_path / "venv"
    assert _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path).returncode == 0
    site = next(venv.glob("lib/python*/site-packages"))
    installed = _run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--target", str(site), str(wheel)], tmp_path
    )
    assert installed.returncode == 0, installed.stderr
    (site / "zz_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    python = str(venv / "bin" / "python")
    work = tmp_path / "elsewhere"  # no rubrics/ folder here
    work.mkdir()
    where = _run([python, "-c", "import jurybench, sys; print(jurybench.__file__)"], work)
    assert where.stdout.startswith(str(site)), where.stdout + where.stderr
    cli = [python, "-m", "jurybench.cli"]
    listed = _run([*cli, "rubrics", "list"], work)
    assert listed.returncode == 0, listed.stderr
    assert {line.split()[0] for line in listed.stdout.splitlines()} >= {"story-quality", "persuasion", "preference"}
    assert str(site) in listed.stdout
    items = write(work / "items.csv", ITEMS_CSV)
    assert _run([*cli, "items", "import", str(items)], work).returncode == 0
    scored = _run([*cli, "score", "--rubric", "story-quality", "--juror", "fake/a", "--no-progress"], work)
    assert scored.returncode == 0, scored.stderr
    assert "3 judgments requested" in scored.stdout
    # The shipped juries travel in the wheel, by their repository path or by name.
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    assert "jurybench/juries/llmbar-natural-cot.yaml" in names
    for jury in ("juries/llmbar-natural-cot.yaml", "llmbar-natural-cot"):
        shown = _run([*cli, "score", "--rubric", "preference", "--jury", jury, "--no-progress"], work)
        assert "no such jury file" not in shown.stderr, shown.stderr
        assert "no pairs to judge" in shown.stderr or shown.returncode == 0, shown.stderr
    missing = _run([*cli, "score", "--rubric", "preference", "--jury", "juries/nope.yaml"], work)
    assert missing.returncode == 2 and "Shipped juries: llmbar-mtbench-vanilla-norules" in missing.stderr
