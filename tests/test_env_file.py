"""A .env file (issue 56): the command line reads ./.env when it starts, so provider keys and
settings live beside the project, not in every shell; the environment's own values win; a bad
line is one line naming the file and the line, exit 2; JURYBENCH_ENV_FILE names another file,
or none when empty."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jurybench.config import load_env_file
from tests.conftest import run_cli


def test_keys_and_settings_are_read_and_the_environment_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("JB_T_KEY", "JB_T_QUOTED", "JB_T_SET", "JB_T_COMMENT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JB_T_SET", "from the shell")
    env = tmp_path / ".env"
    env.write_text(
        "# keys\nexport JB_T_KEY=sk-abc\nJB_T_QUOTED = 'a # b'\nJB_T_SET=from the file\nJB_T_COMMENT=x # note\n\n",
        encoding="utf-8",
    )
    assert load_env_file(env) == ["JB_T_KEY", "JB_T_QUOTED", "JB_T_COMMENT"]
    assert os.environ["JB_T_KEY"] == "sk-abc" and os.environ["JB_T_QUOTED"] == "a # b"
    assert os.environ["JB_T_SET"] == "from the shell" and os.environ["JB_T_COMMENT"] == "x"
    for name in ("JB_T_KEY", "JB_T_QUOTED", "JB_T_COMMENT"):
        monkeypatch.delenv(name)


def test_the_command_line_reads_dot_env_and_refuses_a_bad_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JURYBENCH_ENV_FILE", raising=False)
    monkeypatch.delenv("JURYBENCH_DB", raising=False)
    (tmp_path / ".env").write_text("JURYBENCH_DB=from-dotenv.duckdb\n", encoding="utf-8")
    try:
        assert run_cli("migrate").exit_code == 0
        assert (tmp_path / "from-dotenv.duckdb").exists() and not (tmp_path / "jurybench.duckdb").exists()
    finally:
        monkeypatch.delenv("JURYBENCH_DB", raising=False)
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-secret-value\nthis is not a setting\n", encoding="utf-8")
    bad = run_cli("migrate")
    assert bad.exit_code == 2 and bad.stderr.startswith("error: .env line 2: not KEY=VALUE.")
    assert "sk-secret-value" not in bad.stderr + bad.stdout
    assert os.environ.get("OPENAI_API_KEY") != "sk-secret-value"  # a bad file sets nothing
    monkeypatch.setenv("JURYBENCH_ENV_FILE", "")
    assert run_cli("migrate").exit_code == 0  # no file read
