"""A store for the viewer's tests: the example set judged pointwise and pairwise by fake jurors,
simulated human labels, recorded statistics, and one item whose texts hold HTML and a script."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli, write

HOSTILE = '<script>document.title="pwned"</script><b>bold?</b> & <img src=x onerror=alert(1)>'
HOSTILE_CSV = (
    "item_id,prompt,response,model\n"
    f'xss-1,"Summarise {HOSTILE.replace(chr(34), chr(34) * 2)}","{HOSTILE.replace(chr(34), chr(34) * 2)}",m<x>\n'
)


def cli_ok(*args: str) -> None:
    """Run a CLI command in-process; it must succeed."""
    result = run_cli(*args)
    assert result.exit_code == 0, (args, result.stdout, result.stderr)


@pytest.fixture(scope="module")
def viewer_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("viewer")
    return viewer_store_at(folder, folder / "viewer.duckdb")


def viewer_store_at(folder: Path, db: Path) -> Path:
    """The viewer's example store, built in ``folder`` as ``db``: two runs, simulated labels, two statistics."""
    import os

    old = os.environ.get("JURYBENCH_DB")
    os.environ["JURYBENCH_DB"] = str(db)
    try:
        cli_ok("datasets", "example", "--out", str(folder / "example"))
        cli_ok("items", "import", str(folder / "example" / "items.csv"), "--dataset", "example")
        cli_ok("pairs", "import", str(folder / "example" / "pairs.csv"), "--dataset", "example")
        cli_ok("items", "import", str(write(folder / "hostile.csv", HOSTILE_CSV)), "--dataset", "hostile")
        cli_ok(
            "score",
            "--rubric",
            "story-quality",
            "--where",
            "dataset IN ('example', 'hostile')",
            "--run",
            "quality",
            "--no-progress",
            "--juror",
            "fake/kind,samples=2",
            "--juror",
            "fake/strict,invalid_rate=0.2",
            "--juror",
            "fake/shy,refusal_rate=0.15",
        )
        cli_ok(
            "score",
            "--rubric",
            "persuasion",
            "--where",
            "dataset = 'example'",
            "--run",
            "persuasion",
            "--no-progress",
            "--juror",
            "fake/biased,position_bias=1",
            "--juror",
            "fake/fair",
        )
        cli_ok("annotations", "simulate", "--rubric", "story-quality", "--where", "dataset = 'example'")
        cli_ok("stats", "directional", "--run", "persuasion")
        cli_ok("stats", "gap", "--run", "persuasion", "--boot", "200")
    finally:
        if old is None:
            os.environ.pop("JURYBENCH_DB", None)
        else:
            os.environ["JURYBENCH_DB"] = old
    return db
