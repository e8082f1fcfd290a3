"""The README's walk-through runs as written, in an empty folder, with the installed CLI."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def walkthrough() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Using it") :]
    return re.search(r"```sh\n(.*?)```", section, re.DOTALL).group(1)  # type: ignore[union-attr]


def test_using_it_runs_as_written(tmp_path: Path) -> None:
    script = walkthrough()
    assert "jurybench score --rubric persuasion" in script  # pairwise is part of it
    env = {k: v for k, v in os.environ.items() if not k.startswith("JURYBENCH_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    # Step 3 returns rows: jury scores, each juror's flip rate, symmetrized scores, D per category.
    table = out[out.index("run study1-persuasion") : out.index("juror,flip_rate")]
    assert sum("│" in line for line in table.splitlines()) >= 6  # six jury_pointwise rows (and the header)
    flip = out[out.index("juror,flip_rate") :].splitlines()
    assert {line.split(",")[0] for line in flip[1:3]} == {"fake/biased", "fake/fair"}
    import pyarrow.parquet as pq

    assert pq.read_table(tmp_path / "eps.parquet").num_rows > 0
    assert "logos" in out and "category" in out
