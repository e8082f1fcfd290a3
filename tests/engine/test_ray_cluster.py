"""``--executor ray`` past one process: a two-node cluster simulated on this machine
(``ray.cluster_utils.Cluster``) reached by its address, an address where nothing answers, and
the driver killed with kill -9 mid-run (its workers go with it; the same command resumes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray  # the ray extra is part of the dev install (constraints.txt)

from jurybench.testing import RateLimits, StubServer
from jurybench.testing.stub import free_port
from tests.conftest import FULL, run_cli, write


def _items(tmp_path: Path, n: int) -> Path:
    rows = "\n".join(f"i{i:02d},Prompt {i},Response {i}" for i in range(n))
    return write(tmp_path / "items.csv", "item_id,prompt,response\n" + rows + "\n")


def _count(db: Path, sql: str) -> int:
    from jurybench.store import connect

    con = connect(db)
    try:
        return int(con.execute(sql).fetchall()[0][0])
    finally:
        con.close()


@pytest.fixture
def two_nodes() -> Iterator[str]:
    """A head and a second node of one CPU each, on this machine; its address."""
    from ray.cluster_utils import Cluster

    assert not ray.is_initialized()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    try:
        yield str(cluster.address)
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()


def test_a_two_node_cluster_spreads_the_calls_and_stores_each_once(tmp_path: Path, two_nodes: str) -> None:
    import jurybench

    db = tmp_path / "c.duckdb"
    store = jurybench.open(db)
    store.import_items(_items(tmp_path, 4))
    with StubServer(json.dumps(FULL)) as stub:
        juror = f"openai/stub,api_base={stub.api_base},api_key=k,samples=10"
        run = jurybench.score(store, rubric="story-quality", jury=[juror], executor="ray", address=two_nodes, workers=2)
        asked = len(stub.requests)
    assert run.status == "finished" and asked == 40
    assert run.result.cluster is not None and run.result.cluster["nodes"] == 2  # one worker on each node
    assert not ray.is_initialized()  # the run connected, and let go at its end
    store.close()
    assert _count(db, "SELECT count(DISTINCT call_key) FROM calls WHERE status = 'ok'") == 40
    assert _count(db, "SELECT count(*) FROM runs WHERE executor = 'ray' AND workers = 2") == 1


def _score(db: Path, *options: str) -> Any:
    """score with a fake juror on Ray, in-process as the command line runs it."""
    return run_cli("score", "-r", "story-quality", "-j", "fake/f", "--no-progress", "--db", str(db), *options)


def test_more_workers_than_the_cluster_has_cpus_is_refused(tmp_path: Path, two_nodes: str) -> None:
    db = tmp_path / "c.duckdb"
    assert run_cli("items", "import", str(_items(tmp_path, 2)), "--db", str(db)).exit_code == 0
    done = _score(db, "--executor", "ray", "--address", two_nodes, "--workers", "3")
    assert done.exit_code == 2 and "the Ray cluster has 2 CPUs" in done.stderr, done.stderr
    assert _count(db, "SELECT count(*) FROM runs") == 0


def test_an_address_where_no_cluster_answers_is_one_line_at_once(tmp_path: Path) -> None:
    db = tmp_path / "c.duckdb"
    assert run_cli("items", "import", str(_items(tmp_path, 2)), "--db", str(db)).exit_code == 0
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    done = _score(db, "--executor", "ray", "--address", address)
    assert done.exit_code == 2, done.stderr
    assert f"--address {address}: no Ray cluster answers there" in done.stderr and "Traceback" not in done.stderr
    assert _count(db, "SELECT count(*) FROM runs") == 0
    assert not ray.is_initialized()


def test_the_driver_killed_resumes_asking_again_only_what_was_in_flight(tmp_path: Path) -> None:
    """kill -9 of the process that runs score --executor ray: the Ray it started and its workers
    end with it; the same command stores every answer the driver had received (journal) and
    asks again only the calls in flight at the kill (at most concurrency x workers)."""
    db = tmp_path / "k.duckdb"
    env = {**os.environ, "JURYBENCH_HOME": str(tmp_path)}
    cli = [sys.executable, "-m", "jurybench.cli"]
    subprocess.run([*cli, "items", "import", str(_items(tmp_path, 30)), "--db", str(db)], check=True, env=env)
    limits = RateLimits(delay_s=0.05, headers=False)
    with StubServer(json.dumps(FULL), limits=limits) as stub:
        juror = f"openai/stub,api_base={stub.api_base},api_key=k,samples=2,concurrency=3"
        cmd = [
            *cli,
            "score",
            "-r",
            "story-quality",
            "-j",
            juror,
            "--run",
            "k",
            "--no-progress",
            "--db",
            str(db),
            "--executor",
            "ray",
            "--workers",
            "2",
        ]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        while limits.n_ok < 12 and time.monotonic() < deadline:  # a dozen answers sent back
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.01)
        proc.kill()
        proc.communicate()
        assert limits.n_ok < 60, "the run ended before it was killed"
        # What the driver had received: stored, or journaled (a flush empties the journal).
        journaled = sum(len(f.read_text().splitlines()) for f in tmp_path.glob("k.duckdb.journal/*.jsonl"))
        assert journaled + _count(db, "SELECT count(*) FROM calls") >= 1
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        asked = len(stub.requests)
    assert 60 <= asked <= 60 + 2 * (2 * 3 + 1), asked  # only what the workers held at the kill, again
    assert _count(db, "SELECT count(*) FROM calls WHERE status = 'ok'") == 60
