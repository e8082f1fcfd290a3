"""scripts/demo.py (``make demo``): its steps run in one process, a failing step stops the demo
with the command and the end of the log, and only ``--verbose`` is accepted. The whole demo runs
in tests/test_readme_blocks.py."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "demo.py"


def _demo_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("jurybench_demo_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_steps_share_the_process_and_their_output_goes_to_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("JURYBENCH_DB", str(tmp_path / "demo.duckdb"))
    demo = _demo_module().Demo(tmp_path, tmp_path / "no-data", verbose=False)
    demo.step("datasets", "example", "--out", str(tmp_path / "example"))
    demo.step("items", "import", str(tmp_path / "example" / "items.csv"), "--dataset", "example")
    assert capsys.readouterr().out == ""  # not verbose: nothing on screen
    log = (tmp_path / "demo.log").read_text(encoding="utf-8")
    assert "$ jurybench items import" in log and "items.csv: 12 inserted, 0 already present" in log
    with pytest.raises(SystemExit) as stopped:
        demo.step("score", "--rubric", "no-such-rubric", "--juror", "fake/a")
    assert stopped.value.code == 1
    err = capsys.readouterr().err
    assert "demo: this step failed: jurybench score --rubric no-such-rubric" in err
    assert "error:" in err and "no-such-rubric" in err.split("error:", 1)[1]  # the step's own one-line error


def test_an_unknown_argument_is_refused_in_one_line() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--fast"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "scripts/demo.py: unknown argument '--fast' (the one it takes: --verbose, every step's output)"
    )
