"""The service's jobs on Ray (``jurybench serve --executor ray``, issue 55): every scoring job's
calls are made by Ray workers while the server plans, admits and writes; a job slot's workers
are kept for the next job of the same rubric and jury; bad executor options stop the server
before it serves, in one line. On a local Ray of four logical CPUs started once for this module."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray  # the ray extra is part of the dev install (constraints.txt)

from jurybench.testing import StubServer
from tests.conftest import FULL, run_cli, start_local_ray
from tests.service.conftest import ITEMS, make_client, wait_for


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    start_local_ray()
    yield
    ray.shutdown()


def _job(client: Any, jury: list[str], rubric: str = "story-quality") -> dict[str, Any]:
    done: dict[str, Any] = client.post("/v1/jobs", json={"rubric": rubric, "jury": {"jurors": jury}}).json()
    assert "job_id" in done, done
    return wait_for(client, done["job_id"], timeout=120)


def _rows(client: Any, sql: str) -> list[list[Any]]:
    found: dict[str, Any] = client.post("/v1/sql", json={"query": sql}).json()
    assert "rows" in found, found
    return list(found["rows"])


def test_a_jobs_calls_are_made_on_ray_once_each_and_stored_as_a_local_servers(tmp_path: Path) -> None:
    same = (
        "SELECT c.subject_id, c.sample_index, c.status, c.response_text, j.criterion, j.score FROM calls c "
        "JOIN pointwise_judgments j USING (call_key) WHERE c.juror_key IN "
        "(SELECT juror_key FROM jurors WHERE model LIKE 'openai/%') ORDER BY ALL"
    )
    found = {}
    with StubServer(json.dumps(FULL)) as stub:
        jury = [f"openai/stub,api_base={stub.api_base},api_key=k,samples=4", "sim/a,seed=1"]
        for executor in ("ray", "local"):
            asked = len(stub.requests)
            with make_client(tmp_path / f"{executor}.duckdb", executor=executor, workers=2) as client:
                assert client.post("/v1/items", json={"items": ITEMS}).status_code == 201
                job = _job(client, jury)
                assert job["status"] == "finished", job
                runs = _rows(client, "SELECT executor, workers FROM runs")
                found[executor] = (len(stub.requests) - asked, _rows(client, same), runs, job["notes"])
    on_ray, local = found["ray"], found["local"]
    assert on_ray[0] == local[0] == len(ITEMS) * 4  # the stub's count is the calls planned: none twice, none lost
    assert on_ray[1] == local[1] and len(on_ray[1]) == len(ITEMS) * 4 * 6
    assert on_ray[2] == [["ray", 2]] and local[2] == [["local", None]]  # 4 CPUs shared by 2 job slots
    assert any("calls made by 2 Ray worker(s) on 1 node(s)" in n for n in on_ray[3])
    assert not any("Ray worker" in n for n in local[3])


def test_the_next_job_of_the_same_jury_takes_the_slots_workers(tmp_path: Path) -> None:
    with make_client(tmp_path / "kept.duckdb", executor="ray", workers=1, ray_workers=2) as client:
        assert client.get("/v1/status").json()["executor"] == {"kind": "ray", "ray_workers": 2}
        assert client.post("/v1/items", json={"items": ITEMS}).status_code == 201
        first = _job(client, ["sim/a,seed=1"])
        second = _job(client, ["sim/a,seed=1", "sim/b,seed=2"])  # another jury: the first's workers stop
        third = _job(client, ["sim/a,seed=1", "sim/b,seed=2"])  # the same jury again: kept
        fourth = _job(client, ["sim/a,seed=1", "sim/b,seed=2"], "relevancy")  # another rubric: handed over
        assert [j["status"] for j in (first, second, third, fourth)] == ["finished"] * 4
        assert not any("kept from earlier jobs" in n for n in first["notes"] + second["notes"])
        assert any("kept from earlier jobs (run 2 on them)" in n for n in third["notes"]), third["notes"]
        assert any("kept from earlier jobs (run 3 on them)" in n for n in fourth["notes"]), fourth["notes"]
        judged = _rows(
            client,
            "SELECT DISTINCT j.criterion FROM pointwise_judgments j JOIN run_calls r USING (call_key) "
            f"WHERE r.run_id = 'job-{fourth['job_id']}'",
        )
        assert judged == [["relevancy"]]  # parsed by the rubric handed over
        live = [a for a in ray.util.list_named_actors(all_namespaces=True) if a["namespace"] == "jurybench"]
        assert 0 < len(live) <= 3  # one job's workers (and its pace keeper), never two juries' at once
    gone = [a for a in ray.util.list_named_actors(all_namespaces=True) if a["namespace"] == "jurybench"]
    assert gone == []  # the server's end stops the slot's workers


def test_a_batch_job_on_a_ray_server_is_sent_by_the_server(tmp_path: Path) -> None:
    """A provider batch makes no calls for workers to make: the job sends its file from the server
    (a local run) rather than failing on batch with --executor ray."""
    from jurybench.testing import Batches

    with (
        StubServer(json.dumps(FULL), batches=Batches(delay_s=0.1)) as stub,
        make_client(tmp_path / "b.duckdb", executor="ray", workers=1) as client,
    ):
        assert client.post("/v1/items", json={"items": ITEMS}).status_code == 201
        body = {
            "rubric": "story-quality",
            "jury": {"jurors": [f"openai/gpt-4o-mini,api_base={stub.api_base},api_key=k"]},
            "batch": True,
            "poll_every": 0.05,
        }
        submitted = client.post("/v1/jobs", json=body).json()
        job = wait_for(client, submitted["job_id"], timeout=120)
        assert job["status"] == "finished", job
        assert stub.batches.n_created == 1 and stub.batches.requests_seen == len(ITEMS)
        assert _rows(client, "SELECT executor FROM runs") == [["local"]]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--ray-workers", "2"), "give --executor ray with it"),
        (("--address", "auto"), "give --executor ray with it"),
        (("--executor", "dask"), "'dask' is not an executor"),
        (("--executor", "ray", "--ray-workers", "0"), "--workers must be a whole number >= 1"),
        (("--executor", "ray", "--ray-workers", "3", "--workers", "2"), "needs 6 CPUs; the Ray cluster has 4"),
        (("--executor", "ray", "--address", "10.0.0.5:6379"), "already connected to the Ray cluster at"),
    ],
)
def test_bad_executor_options_stop_the_server_before_it_serves(
    tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    done = run_cli("serve", "--db", str(tmp_path / "s.duckdb"), "--port", "1", *args)
    assert done.exit_code == 2, (done.stdout, done.stderr)
    assert said in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert len([line for line in done.stderr.splitlines() if line.strip()]) <= 2  # the line and its hint
    assert "serving" not in done.stdout


def test_serve_on_ray_where_nothing_answers_or_ray_is_missing_is_one_line(tmp_path: Path) -> None:
    """In processes of their own (this one is on a Ray already): an address where nothing
    listens, and Ray not installed, each stop the server in one line, exit 2."""
    blocked = "import sys; sys.modules['ray'] = None; "
    launch = "import sys; sys.argv = ['jurybench', *sys.argv[1:]]; from jurybench.cli import main; main()"
    for prefix, args, said in (
        ("", ("--address", "127.0.0.1:9"), "no Ray cluster answers there"),
        (blocked, (), "needs Ray, which is not installed"),
    ):
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                prefix + launch,
                "serve",
                "--db",
                str(tmp_path / "s.duckdb"),
                "--executor",
                "ray",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2, (done.stdout, done.stderr)
        assert said in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert "serving" not in done.stdout


def test_a_server_whose_executor_cannot_start_leaves_nothing_open(tmp_path: Path) -> None:
    """The executor is started before the store is opened: a server that cannot start its
    Ray has opened no store (it held one, and the file saying so, until the process ended)."""
    from fastapi.testclient import TestClient

    from jurybench.errors import JurybenchError
    from jurybench.service._app import ServiceConfig, create_app

    db = tmp_path / "s.duckdb"
    app = create_app(ServiceConfig(db=db, executor="ray", workers=2, ray_workers=3))
    with pytest.raises(JurybenchError, match="needs 6 CPUs"), TestClient(app):
        pass
    assert not db.exists() and not db.with_name(db.name + ".server.json").exists()


def test_an_alignment_job_on_a_ray_server_is_judged_by_the_slots_workers(tmp_path: Path) -> None:
    """POST /v1/align on serve --executor ray: the variants' calls made by the job slot's workers
    (each variant's rubric handed to them), the same verdict as the alignment made in a server's
    process; before, alignment jobs ran in the server's process whatever its executor."""
    import shutil

    from tests.alignment.test_align import _store as labelled

    (tmp_path / "a").mkdir()
    db, run = labelled(tmp_path / "a", "sim/lenient,leniency=1.5,teachable=1,noise=0.4")
    here = tmp_path / "here.duckdb"
    shutil.copy(db, here)
    body = {"run": run, "juror": "sim/lenient", "criterion": "coherence", "demos": "4"}
    found = {}
    for store, options in ((db, {"executor": "ray", "ray_workers": 2}), (here, {})):
        executor = str(options.get("executor", "local"))
        with make_client(store, workers=1, **options) as client:
            submitted = client.post("/v1/align", json=body)
            assert submitted.status_code == 202, submitted.text
            job = wait_for(client, submitted.json()["job_id"], timeout=180)
            assert job["status"] == "finished", job
            runs = _rows(
                client, "SELECT executor, workers, count(*) FROM runs WHERE run_id LIKE 'align-%' GROUP BY ALL"
            )
            found[executor] = (job["notes"][0].split(": ", 1)[1], runs)
    assert found["ray"][0] == found["local"][0] and "kept demos-4" in found["ray"][0]
    assert found["ray"][1] == [["ray", 2, 5]] and found["local"][1] == [["local", None, 5]]
