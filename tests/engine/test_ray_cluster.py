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


def _score_command(db: Path, juror: str, address: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "jurybench.cli",
        "score",
        "-r",
        "story-quality",
        "-j",
        juror,
        "--run",
        "lost",
        "--no-progress",
        "--db",
        str(db),
        "--executor",
        "ray",
        "--address",
        address,
        "--workers",
        "2",
    ]


def _wait_for(limits: RateLimits, proc: subprocess.Popen[str], answers: int) -> None:
    """Until the stub has served ``answers`` (the run is under way), the process still running."""
    deadline = time.monotonic() + 300
    while limits.n_ok < answers and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)


def test_a_node_lost_with_every_worker_ends_the_run_in_one_line_and_the_same_command_resumes(tmp_path: Path) -> None:
    """Issue 82: a head without CPUs (as real clusters are set up) and one worker node of two
    CPUs; the node is killed mid-run. No worker can start in the lost ones' place: the run gave
    no sign and waited forever before; now it ends within the call timeout with one line (what was
    lost, the answers kept, how to resume) and exit code 5, nothing of Ray's on stdout, and the
    same command on a node added back asks only what was not answered."""
    from ray.cluster_utils import Cluster

    db = tmp_path / "n.duckdb"
    env = {**os.environ, "JURYBENCH_HOME": str(tmp_path)}
    cli = [sys.executable, "-m", "jurybench.cli"]
    subprocess.run([*cli, "items", "import", str(_items(tmp_path, 60)), "--db", str(db)], check=True, env=env)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    node = cluster.add_node(num_cpus=2)
    cluster.wait_for_nodes()
    limits = RateLimits(delay_s=0.1, headers=False)
    try:
        with StubServer(json.dumps(FULL), limits=limits) as stub:
            juror = f"openai/stub,api_base={stub.api_base},api_key=k,samples=2,concurrency=3,timeout=5"
            cmd = _score_command(db, juror, str(cluster.address))
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            _wait_for(limits, proc, 10)
            cluster.remove_node(node, allow_graceful=False)
            out, err = proc.communicate(timeout=240)  # it waited for ever before the fix
            assert proc.returncode == 5, (out, err)
            assert limits.n_ok < 120, "the run ended before the node was lost"
            lines = err.strip().splitlines()
            assert len(lines) == 1 and "Traceback" not in err, err
            assert "the Ray cluster lost its workers" in err and "were kept (run 'lost')" in err, err
            assert "Run the same command again" in err, err
            assert "raylet" not in out + err and "state-dump" not in out + err  # Ray's own dump is not printed
            kept = int(err.split(" answers received")[0].rsplit(" ", 1)[1])
            assert _count(db, "SELECT count(*) FROM calls WHERE run_id = 'lost'") == kept
            assert _count(db, "SELECT count(*) FROM runs WHERE run_id = 'lost' AND status = 'interrupted'") == 1
            cluster.add_node(num_cpus=2)
            cluster.wait_for_nodes()
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stderr
            asked = len(stub.requests)
    finally:
        cluster.shutdown()
    assert _count(db, "SELECT count(*) FROM calls WHERE status = 'ok'") == 120
    assert asked <= 120 + 2 * (2 * 3 + 1), asked  # at most what the workers held when the node went, again


def test_a_node_lost_with_a_worker_left_has_its_calls_finished_by_that_worker(tmp_path: Path) -> None:
    """A head and a node of one CPU each, a worker on each; the node is killed mid-run. No worker
    can start in the lost one's place (no CPU is left): the one on the head makes every call it
    held, the run finishes, and says one worker was lost."""
    from ray.cluster_utils import Cluster

    db = tmp_path / "h.duckdb"
    env = {**os.environ, "JURYBENCH_HOME": str(tmp_path)}
    cli = [sys.executable, "-m", "jurybench.cli"]
    subprocess.run([*cli, "items", "import", str(_items(tmp_path, 40)), "--db", str(db)], check=True, env=env)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    node = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    limits = RateLimits(delay_s=0.1, headers=False)
    try:
        with StubServer(json.dumps(FULL), limits=limits) as stub:
            juror = f"openai/stub,api_base={stub.api_base},api_key=k,samples=2,concurrency=3,timeout=5"
            proc = subprocess.Popen(
                _score_command(db, juror, str(cluster.address)),
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            _wait_for(limits, proc, 10)
            cluster.remove_node(node, allow_graceful=False)
            out, err = proc.communicate(timeout=600)
            asked = len(stub.requests)
    finally:
        cluster.shutdown()
    assert proc.returncode == 0, (out, err)
    assert "1 Ray worker was lost during the run" in out + err and "state-dump" not in out + err
    assert _count(db, "SELECT count(*) FROM calls WHERE status = 'ok'") == 80
    assert asked <= 80 + 2 * 3 + 1, asked


def test_the_clusters_head_lost_ends_the_run_in_one_line_before_ray_ends_the_driver(tmp_path: Path) -> None:
    """The head (its GCS) killed mid-run: Ray itself would end the driver 60 s later with a line
    of its own and exit code 1, no summary. The run sees the head refuse connections, ends with
    one line of its own and exit code 5, every answer received kept; the same run resumes
    locally and asks only what was not answered."""
    from ray.cluster_utils import Cluster

    db = tmp_path / "g.duckdb"
    env = {**os.environ, "JURYBENCH_HOME": str(tmp_path)}
    cli = [sys.executable, "-m", "jurybench.cli"]
    subprocess.run([*cli, "items", "import", str(_items(tmp_path, 60)), "--db", str(db)], check=True, env=env)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    limits = RateLimits(delay_s=0.1, headers=False)
    try:
        with StubServer(json.dumps(FULL), limits=limits) as stub:
            juror = f"openai/stub,api_base={stub.api_base},api_key=k,samples=2,concurrency=3,timeout=5"
            cmd = _score_command(db, juror, str(cluster.address))
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            _wait_for(limits, proc, 10)
            cluster.remove_node(cluster.head_node, allow_graceful=False)
            out, err = proc.communicate(timeout=240)
            assert proc.returncode == 5, (out, err)
            assert "the Ray cluster lost its head" in err and len(err.strip().splitlines()) == 1, err
            kept = int(err.split(" answers received")[0].rsplit(" ", 1)[1])
            assert _count(db, "SELECT count(*) FROM calls WHERE run_id = 'lost'") == kept
            local = cmd[: cmd.index("--executor")]
            done = subprocess.run(local, env=env, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stderr
            asked = len(stub.requests)
    finally:
        cluster.shutdown()
    assert _count(db, "SELECT count(*) FROM calls WHERE status = 'ok'") == 120
    assert asked <= 120 + 2 * (2 * 3 + 1), asked
