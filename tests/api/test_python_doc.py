"""docs/python.md runs: every ```python block, in order, in one namespace, in a fresh folder."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_walkthrough_has_code() -> None:
    assert len(blocks()) >= 8


def test_every_block_runs_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JURYBENCH_DB", raising=False)
    namespace: dict[str, object] = {"__name__": "walkthrough"}
    for number, code in enumerate(blocks(), start=1):
        try:
            exec(compile(code, f"{DOC.name} block {number}", "exec"), namespace)
        except Exception as exc:  # pragma: no cover - the message names the block
            raise AssertionError(f"docs/python.md block {number} failed: {exc!r}\n{code}") from exc
    out = capsys.readouterr().out
    assert "rows row 2, field 'response'" in out
    assert "PASSED" in out
    assert (tmp_path / "calibration" / "stories.json").is_file()
    assert os.path.exists(tmp_path / "walkthrough.duckdb")
