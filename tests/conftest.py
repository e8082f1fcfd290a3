from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("JURYBENCH_DATA") or REPO.parent / "shared" / "datasets")


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test gets its own store and home; the fake juror queues start empty."""
    monkeypatch.setenv("JURYBENCH_HOME", str(tmp_path))
    monkeypatch.setenv("JURYBENCH_DB", str(tmp_path / "test.duckdb"))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from jurybench.jurors import FakeBackend

    FakeBackend.clear()
    yield
    FakeBackend.clear()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "test.duckdb"


@pytest.fixture
def con(db_path: Path) -> Iterator[Any]:
    from jurybench.store import connect

    connection = connect(db_path)
    yield connection
    connection.close()


@pytest.fixture
def data_dir() -> Path:
    if not (DATA / "llmbar" / "Natural" / "dataset.json").exists():
        pytest.skip(f"reference datasets not found at {DATA} (set JURYBENCH_DATA)")
    return DATA


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


def run_cli(*args: str) -> CliResult:
    """Run the CLI in-process through its real entry point (exit codes included)."""
    from jurybench.cli import main

    out, err = io.StringIO(), io.StringIO()
    old_argv = sys.argv
    sys.argv = ["jurybench", *args]
    code = 0
    try:
        with redirect_stdout(out), redirect_stderr(err):
            main()
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.argv = old_argv
    return CliResult(code, out.getvalue(), err.getvalue())


def registered_kind(prefix: str, transport: Any, description: str = "") -> Iterator[Any]:
    """A juror kind ``prefix/...`` whose transport is ``transport(rubric)`` (no parameters, no
    known price), registered as a third party would for the test's length."""
    from jurybench.jurors import JurorKind, register_kind, unregister_kind

    kind = JurorKind(
        prefix,
        lambda spec, rubric, con, ids: transport(rubric),
        description,
        parameters=frozenset(),
        price=lambda spec: None,
    )
    register_kind(kind)
    try:
        yield kind
    finally:
        unregister_kind(prefix)


def sql_rows(db: Path | str, query: str) -> list[tuple[object, ...]]:
    """The rows of ``query`` on the store at ``db``, opened read-only and closed again."""
    from jurybench.store import connect

    con = connect(Path(db), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# A valid story-quality answer, used by several engine tests.
FULL = {"relevance": 5, "coherence": 4, "empathy": 3, "surprise": 2, "engagement": 1, "complexity": 3}

ITEMS_CSV = """item_id,prompt,response,model,language,gender
i1,Write about a cat,A cat sat.,m1,en,f
i2,Write about a dog,A dog ran.,m2,en,m
i3,Write about a fox,A fox hid.,m1,en,f
"""
PAIRS_CSV = "pair_id,item_a,item_b\np1,i1,i2\np2,i1,i3\n"


@pytest.fixture
def small_store(con: Any, tmp_path: Path) -> Any:
    from jurybench.store import import_items, import_pairs

    import_items(con, write(tmp_path / "items.csv", ITEMS_CSV), treatment_columns=["gender"])
    import_pairs(con, write(tmp_path / "pairs.csv", PAIRS_CSV))
    return con


def start_local_ray(num_cpus: int = 4) -> None:
    """``ray.init`` of a local Ray for a test module. Ray waits 30 s for its GCS to publish its
    port; twice in a full CI run (never alone or in a partial run here) it did not in that time and
    left no log. The wait is raised to 120 s (Ray's own setting, unless the caller set it), a
    failed start is tried once more from scratch, and a second failure reports what the machine
    held (processes and their threads), so a CI log says why."""
    import logging
    import subprocess

    import ray

    os.environ.setdefault("RAY_gcs_server_port_wait_time_s", "120")
    for attempt in (1, 2):
        try:
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
            return
        except RuntimeError as exc:
            ray.shutdown()
            if attempt == 2:
                held = subprocess.run(
                    ["ps", "-eo", "pid,ppid,nlwp,rss,etimes,comm", "--sort=-nlwp"], capture_output=True, text=True
                ).stdout
                pytest.fail(f"a local Ray did not start twice: {exc}\n{held[:4000]}", pytrace=False)


# The modules that start a local Ray of their own: run one after another on one worker when the
# suite runs on several (make test), so two Ray clusters never start side by side on 2 cores.
_RAY_MODULES = ("tests/engine/test_ray.py", "tests/engine/test_ray_cluster.py", "tests/service/test_ray_jobs.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist's ``--dist loadgroup``, a module's tests stay on one worker (its module
    fixtures are built once, as in a serial run) and the Ray modules share one worker."""
    for item in items:
        path = Path(str(item.fspath)).resolve().relative_to(REPO).as_posix()
        group = "ray" if path in _RAY_MODULES else path
        item.add_marker(pytest.mark.xdist_group(group))
