"""The service and the CLI agree on cost; jobs take batch and max_cost; POST /v1/plan prices a job."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jurybench.engine import CostTally
from jurybench.testing import Batches, RateLimits, StubServer
from tests.conftest import FULL, run_cli, write
from tests.service.conftest import ITEMS, make_client, wait_for

FINAL = ("finished", "finished_with_errors", "failed", "cancelled", "stopped_budget")


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cost-test-0123456789")


def test_cost_tally_hand_worked() -> None:
    tally = CostTally()
    assert (tally.usd, tally.text()) == (0.0, "$0")  # nothing answered yet: nothing paid
    tally.add("a", 0.25, "ok")
    tally.add("a", 0.5, "invalid")
    tally.add("b", None, "error")  # a failed request without an answer costs nothing
    assert (tally.usd, tally.text(), tally.by_juror) == (0.75, "$0.7500", {"a": 0.75})
    tally.add("b", None, "ok")  # an answer whose price is unknown
    assert tally.text() == "$0.7500 (+ 1 calls of unknown price)" and tally.n_unpriced == 1
    unknown = CostTally()
    unknown.add("b", None, "ok")
    assert (unknown.usd, unknown.text()) == (None, "cost unknown")


def _cli_cost(db: Path, tmp_path: Path, juror: str) -> str:
    items = "item_id,response,prompt,model\n" + "".join(
        f"{i['item_id']},{i['response']},{i['prompt']},{i['model']}\n" for i in ITEMS
    )
    assert run_cli("items", "import", str(write(tmp_path / "items.csv", items)), "--db", str(db)).exit_code == 0
    result = run_cli("score", "-r", "story-quality", "-j", juror, "--no-progress", "--db", str(db))
    assert result.exit_code == 0, result.stderr
    return result.stdout


def _job_cost(db: Path, juror: str) -> dict[str, Any]:
    with make_client(db) as client:
        job = client.post("/v1/jobs", json={"rubric": "story-quality", "jury": {"jurors": [juror]}, "items": ITEMS})
        assert job.status_code == 202, job.text
        done = wait_for(client, job.json()["job_id"], FINAL)
    assert done["status"] == "finished", done
    return dict(done["progress"])


@pytest.mark.parametrize("kind", ["offline", "unknown price", "known price"])
def test_cli_and_service_say_the_same_cost(tmp_path: Path, kind: str) -> None:
    with StubServer(json.dumps(FULL)) as stub:
        juror = {
            "offline": "fake/a",
            "unknown price": f"openai/no-such-priced-model,api_base={stub.api_base},local=false",
            "known price": f"openai/gpt-4o-mini,api_base={stub.api_base}",
        }[kind]
        said = _cli_cost(tmp_path / "cli.duckdb", tmp_path, juror)
        progress = _job_cost(tmp_path / "svc.duckdb", juror)
    if kind == "offline":  # free, and said so: not "unknown"
        assert "; $0;" in said and progress["cost_usd"] == 0.0 and progress["n_cost_unknown"] == 0
    elif kind == "unknown price":
        assert "; cost unknown;" in said and progress["cost_usd"] is None and progress["n_cost_unknown"] == 9
    else:
        # the stub answers 7 completion tokens and prompt tokens from the text; 9 calls at $0.15/$0.60 per M
        cli_usd = float(said.split("; $")[1].split(";")[0])
        assert progress["cost_usd"] == pytest.approx(cli_usd, abs=5e-5) and progress["cost_usd"] > 0
        assert progress["cost_by_juror"] == {"openai/gpt-4o-mini": pytest.approx(progress["cost_usd"])}
    from jurybench.store import connect

    for db in (tmp_path / "cli.duckdb", tmp_path / "svc.duckdb"):
        con = connect(db, read_only=True)
        ((cost, known, unknown),) = con.execute(
            "SELECT cost_usd, n_cost_known, n_cost_unknown FROM run_cost"
        ).fetchall()
        con.close()
        assert (known, unknown) == ((9, 0) if kind != "unknown price" else (0, 9))
        assert (cost is None) == (kind == "unknown price")


def test_plan_endpoint_prices_stored_subjects_and_writes_nothing(db_path: Path) -> None:
    with make_client(db_path) as client:
        assert client.post("/v1/items", json={"items": ITEMS}).status_code == 201
        body = {
            "rubric": "story-quality",
            "jury": {"jurors": ["openai/gpt-4o-mini", "openai/no-such-priced-model"]},
            "item_ids": ["i0", "i1", "i2"],
        }
        plan = client.post("/v1/plan", json=body)
        assert plan.status_code == 200, plan.text
        data = plan.json()
        assert data["n_calls"] == 6 and data["cost_usd"] is None  # one juror's price is unknown: the total too
        mini = next(p for p in data["jurors"] if p["juror"] == "openai/gpt-4o-mini")
        assert mini["calls"] == 3 and mini["cost_batch_usd"] == pytest.approx(mini["cost_usd"] / 2)
        inline = client.post("/v1/plan", json={**body, "items": ITEMS[:1]})
        assert inline.status_code == 400 and "upload items or pairs first" in inline.json()["error"]
        counts = client.post(
            "/v1/sql", json={"query": "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM calls)"}
        )
        assert counts.json()["rows"] == [[0, 0]]


def test_a_job_with_batch_and_a_budget(db_path: Path) -> None:
    # RateLimits() with no limits: the stub reports prompt tokens from the text, as a provider would
    with (
        StubServer(json.dumps(FULL), batches=Batches(delay_s=0.1), limits=RateLimits()) as stub,
        make_client(db_path) as client,
    ):
        juror = f"openai/gpt-4o-mini,api_base={stub.api_base}"
        job = client.post(
            "/v1/jobs",
            json={
                "rubric": "story-quality",
                "jury": {"jurors": [juror]},
                "items": ITEMS,
                "batch": True,
                "poll_every": 0.05,
            },
        )
        assert job.status_code == 202, job.text
        done = wait_for(client, job.json()["job_id"], FINAL)
        assert done["status"] == "finished" and stub.batches.n_created == 1 and stub.batches.requests_seen == 9
        assert len(stub.requests) == 9
        # a budget that holds about 3 calls of ~$0.0001 (sync): the job ends stopped_budget, saying why
        more = [{**item, "item_id": f"x{item['item_id']}"} for item in ITEMS]
        capped = client.post(
            "/v1/jobs",
            json={
                "rubric": "story-quality",
                "jury": {"jurors": [f"{juror},max_tokens=200"]},
                "items": more,
                "max_cost": 0.0004,
                "concurrency": 1,
            },
        )
        stopped = wait_for(client, capped.json()["job_id"], FINAL)
        assert stopped["status"] == "stopped_budget" and "budget reached" in stopped["error"]
        assert 0 < stopped["progress"]["n_done"] < 9
        refused = client.post(
            "/v1/jobs",
            json={
                "rubric": "story-quality",
                "items": ITEMS,
                "batch": True,
                "jury": {"jurors": ["gemini/gemini-1.5-flash,api_key=x"]},
            },
        )
        assert refused.status_code == 400 and "no batch API" in refused.json()["error"]
        unpriced = client.post(
            "/v1/jobs",
            json={
                "rubric": "story-quality",
                "items": ITEMS,
                "max_cost": 1,
                "jury": {"jurors": [f"openai/no-such-priced-model,api_base={stub.api_base},local=false"]},
            },
        )
        assert unpriced.status_code == 400 and "no price is known" in unpriced.json()["error"]


def test_concurrent_submissions_commit_together_and_a_bad_one_fails_alone(db_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with make_client(db_path, workers=1) as client:
        assert (
            client.post("/v1/items", json={"items": [{"item_id": "taken", "response": "first text"}]}).status_code
            == 201
        )

        def submit(k: int) -> Any:
            items = [{"item_id": f"s{k}-{j}", "response": f"Story {k}.{j}"} for j in range(3)]
            if k == 7:  # the same id with another text: a conflict for this client only
                items.append({"item_id": "taken", "response": "another text"})
            return client.post(
                "/v1/jobs", json={"rubric": "story-quality", "items": items, "jury": {"jurors": ["fake/a"]}}
            )

        with ThreadPoolExecutor(20) as pool:
            answers = list(pool.map(submit, range(20)))
        codes = [a.status_code for a in answers]
        assert codes[7] == 400 and "already exists" in answers[7].json()["error"]
        assert codes[:7] + codes[8:] == [202] * 19
        for answer in answers[:7] + answers[8:]:
            job = wait_for(client, answer.json()["job_id"], FINAL)
            assert job["status"] == "finished" and job["n_subjects"] == 3
        count = client.post("/v1/sql", json={"query": "SELECT count(*) FROM items WHERE item_id LIKE 's7-%'"})
        assert count.json()["rows"] == [[0]]  # nothing of the failed submission was written


def test_workers_let_a_submission_in_progress_go_first(db_path: Path) -> None:
    import time

    from jurybench.rubric import load_rubric
    from jurybench.service._jobs import JobManager, JobWrite
    from jurybench.service._store import Store
    from jurybench.store._imports import import_item_rows

    store = Store(db_path)
    jobs = JobManager(store, workers=1)
    try:
        with store.writing() as cur:
            import_item_rows(cur, [(1, {"item_id": "i0", "response": "A story."})], source="items")
        jobs.start()
        request = {"rubric": "story-quality", "jury": {"jurors": ["fake/a"]}, "_ids": ["i0"]}
        with jobs.admitting_one():  # a submission is being handled
            with store.writing() as cur:
                (row,) = jobs.insert_many(cur, [JobWrite(request, load_rubric("story-quality"), ["i0"], None)])
            job_id = jobs.enqueue(row, [])["job_id"]
            time.sleep(0.5)
            assert jobs.get(job_id)["status"] == "queued"  # the worker waits for it
        deadline = time.monotonic() + 30
        while jobs.get(job_id)["status"] != "finished" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert jobs.get(job_id)["status"] == "finished"
    finally:
        jobs.shutdown()
        store.close()


def test_a_jobs_worker_goes_on_while_its_start_and_end_wait_for_the_group_writer(db_path: Path) -> None:
    """A job's start and end are handed to the group writer and not waited for (the writer
    commits them in order with what follows): with those commits held back, one worker still
    runs two jobs through; committed in the order given, the rows end as the runs did."""
    import threading
    from concurrent.futures import Future

    from jurybench.rubric import load_rubric
    from jurybench.service._jobs import JobManager, JobWrite
    from jurybench.service._store import Store
    from jurybench.store._imports import import_item_rows

    held: list[tuple[object, Future[object]]] = []
    changed = threading.Condition()

    def commit_later(write: object) -> Future[object]:  # a group writer that has not committed yet
        future: Future[object] = Future()
        with changed:
            held.append((write, future))
            changed.notify_all()
        return future

    store = Store(db_path)
    jobs = JobManager(store, workers=1, commit_later=commit_later)  # type: ignore[arg-type]
    try:
        jobs.start()
        with store.writing() as cur:
            import_item_rows(cur, [(1, {"item_id": "i0", "response": "A story."})], source="items")
            request = {"rubric": "story-quality", "jury": {"jurors": ["fake/a"]}, "_ids": ["i0"]}
            rows = jobs.insert_many(cur, [JobWrite(dict(request), load_rubric("story-quality"), ["i0"], None)] * 2)
        ids = [jobs.enqueue(row, [])["job_id"] for row in rows]
        with changed:  # both jobs started and ended, none of it committed: the worker did not wait
            assert changed.wait_for(lambda: len(held) == 4, timeout=60), len(held)
        assert [jobs.get(job_id)["status"] for job_id in ids] == ["queued", "queued"]
        with store.cursor() as cur:
            runs = cur.execute("SELECT status FROM runs ORDER BY ALL").fetchall()
        assert runs == [("finished",), ("finished",)]
        for write, future in held:  # the group writer's order: start, end, start, end
            with store.writing() as cur:
                future.set_result(write(cur))  # type: ignore[operator]
        assert [jobs.get(job_id)["status"] for job_id in ids] == ["finished", "finished"]
        with store.cursor() as cur:
            stored = cur.execute("SELECT status, started_at IS NOT NULL FROM jobs ORDER BY created_at").fetchall()
        assert stored == [("finished", True), ("finished", True)]
    finally:
        jobs.shutdown()
        store.close()
