"""docs/judging.md's local-model block runs as written against the tier's llama.cpp server set-up:
``GGUF`` is the tier's model, ``PORT`` a free port, ``python`` the model environment's (with
llama-cpp-python) and ``jurybench`` the project's, over a store holding two items."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from jurybench.testing import free_port
from tests.conftest import ITEMS_CSV, REPO, write
from tests.models.conftest import _needed
from tests.test_readme_blocks import blocks

pytestmark = pytest.mark.model


def test_the_readme_local_model_block_runs_as_written(tmp_path: Path) -> None:
    python, gguf = _needed("JURYBENCH_MODEL_PYTHON"), _needed("JURYBENCH_MODEL_GGUF")
    found = [body for _, body, skip in blocks(REPO / "docs" / "judging.md") if skip and "local model server" in skip]
    assert len(found) == 1, "docs/judging.md has one local-model block"
    (tmp_path / "try").mkdir()
    items = write(tmp_path / "items.csv", "\n".join(ITEMS_CSV.splitlines()[:3]) + "\n")  # two items
    env = {k: v for k, v in os.environ.items() if not k.startswith("JURYBENCH_")}
    env.update(
        GGUF=str(gguf),
        PORT=str(free_port()),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        PATH=os.pathsep.join([str(python.parent), str(Path(sys.executable).parent), env.get("PATH", "")]),
    )
    imported = subprocess.run(
        ["jurybench", "items", "import", str(items), "--dataset", "study1"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert imported.returncode == 0, imported.stderr
    # Its own session: a server the block started is stopped with it even when a line fails.
    block = subprocess.Popen(
        ["bash", "-euo", "pipefail", "-c", found[0]],
        cwd=tmp_path,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        stdout, stderr = block.communicate(timeout=900)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(block.pid, signal.SIGTERM)
    done = subprocess.CompletedProcess(block.args, block.returncode, stdout, stderr)
    assert done.returncode == 0, f"{done.stderr[-3000:]}\n---\n{(tmp_path / 'try' / 'llama.log').read_text()[-2000:]}"
    assert "Traceback" not in done.stderr
    assert "schema" in done.stdout  # the sql line shows how the answers were constrained
    with duckdb.connect(str(tmp_path / "jurybench.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT structured, status, prompt_tokens FROM calls").fetchall()
    assert len(rows) == 2 and all(
        mode == "schema" and status in ("ok", "invalid") and tokens > 0 for mode, status, tokens in rows
    )
    assert (REPO / "README.md").exists()
