"""Concurrent jobs against a real server process: the same job 50 times at once never fails."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from jurybench.testing.stub import free_port
from tests.service.test_serve import _get, _start, _stop, _wait_up


def test_fifty_identical_jobs_at_once_all_finish_and_store_each_judgment_once(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = _start(
        ["--demo", "--db", str(tmp_path / "demo.duckdb"), "--port", str(port), "--workers", "4"],
        {"JURYBENCH_TOKEN": ""},
    )
    try:
        _wait_up(url, process)
        body = {"rubric": "story-quality", "where": "dataset = 'example'"}
        with ThreadPoolExecutor(50) as pool:
            submitted = list(pool.map(lambda _: _get(f"{url}/v1/jobs", body=body), range(50)))
        assert all(status == 202 for status, _ in submitted), submitted
        ids = [job["job_id"] for _, job in submitted]
        deadline = time.monotonic() + 120
        while True:
            jobs = [_get(f"{url}/v1/jobs/{job_id}")[1] for job_id in ids]
            if all(j["status"] not in ("queued", "running") for j in jobs) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        statuses = [j["status"] for j in jobs]
        assert statuses == ["finished"] * 50, [(j["status"], j["error"]) for j in jobs if j["status"] != "finished"]
        query = """SELECT (SELECT count(*) FROM calls), (SELECT count(DISTINCT call_key) FROM calls),
                          (SELECT sum(attempts) FROM calls),
                          (SELECT count(*) FROM (SELECT DISTINCT call_key, criterion FROM pointwise_judgments)),
                          (SELECT count(*) FROM pointwise_judgments),
                          (SELECT count(DISTINCT run_id) FROM run_calls), (SELECT count(*) FROM run_calls),
                          (SELECT count(*) FROM items WHERE dataset = 'example')"""
        status, result = _get(f"{url}/v1/sql", body={"query": query})
        assert status == 200, result
        n_calls, n_keys, attempts, n_distinct_judgments, n_judgments, n_runs, n_members, n_items = result["rows"][0]
        # Each example item x 2 simulated jurors is one call, x 6 story-quality criteria one
        # judgment row; every job's run holds all of them, each stored (and asked) once.
        expected_calls = 2 * n_items
        assert n_items > 0
        assert (n_calls, n_keys, attempts) == (expected_calls,) * 3
        assert n_judgments == n_distinct_judgments == 6 * expected_calls
        assert n_runs == 50
        assert n_members == 50 * expected_calls  # jobs ending together: each run's membership, once
        for job in jobs:
            assert job["progress"]["n_done"] == job["progress"]["n_tasks"] == expected_calls
    finally:
        _stop(process)
