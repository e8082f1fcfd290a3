"""Every endpoint through the ASGI app (TestClient), error paths included."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.service.conftest import ITEMS, make_client, wait_for


def test_health_and_openapi_are_open_everything_else_needs_the_token(db_path: Path) -> None:
    with make_client(db_path, token="s3cret-token-0123456") as c:
        assert c.get("/v1/health").json()["status"] == "ok"
        assert "/v1/jobs" in c.get("/openapi.json").json()["paths"]
        for method, path in (
            ("get", "/v1/jobs"),
            ("get", "/v1/items"),
            ("post", "/v1/sql"),
            ("get", "/v1/rubrics"),
            ("get", "/v1/status"),
            ("post", "/v1/stats/gap"),
            ("get", "/v1/calibrations"),
        ):
            r = getattr(c, method)(path)
            assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer", path
            wrong = getattr(c, method)(path, headers={"Authorization": "Bearer nope"})
            assert wrong.status_code == 401
        ok = c.get("/v1/items", headers={"Authorization": "Bearer s3cret-token-0123456"})
        assert ok.status_code == 200 and ok.json() == []


def test_items_upload_list_get_and_conflicts(client: Any) -> None:
    r = client.post("/v1/items", json={"items": ITEMS[:3], "dataset": "d"})
    assert r.status_code == 201 and r.json() == {"inserted": 3, "unchanged": 0, "updated": 0}
    assert client.post("/v1/items", json={"items": ITEMS[:3], "dataset": "d"}).json()["unchanged"] == 3
    listed = client.get("/v1/items", params={"dataset": "d", "limit": 2}).json()
    assert [i["item_id"] for i in listed] == ["i0", "i1"]
    assert client.get("/v1/items/i2").json()["response"] == "Story 2"
    missing = client.get("/v1/items/nope")
    assert missing.status_code == 404 and missing.json()["error"] == "no item 'nope'."
    changed = client.post("/v1/items", json={"items": [{"item_id": "i1", "response": "other"}]})
    assert changed.status_code == 400 and "items row 1, field 'item_id': 'i1' already exists" in changed.json()["error"]
    empty = client.post("/v1/items", json={"items": [{"item_id": "x", "response": ""}]})  # an empty generation is data
    assert empty.status_code == 201 and client.get("/v1/items/x").json()["empty"] is True
    invalid = client.post("/v1/items", json={"items": [{"item_id": "y", "response": None}]})
    assert invalid.status_code == 422 and invalid.json()["fields"][0]["field"] == "body.items.0.response"
    extra = client.post("/v1/items", json={"items": [{"item_id": "x", "response": "r", "colour": "red"}]})
    assert extra.status_code == 422 and "body.items.0.colour" in extra.json()["error"]


def test_pairs_and_annotations(client: Any) -> None:
    client.post("/v1/items", json={"items": ITEMS[:4]})
    r = client.post("/v1/pairs", json={"pairs": [{"pair_id": "p1", "item_a": "i0", "item_b": "i1"}]})
    assert r.status_code == 201 and r.json()["inserted"] == 1
    assert client.get("/v1/pairs").json()[0]["pair_id"] == "p1"
    unknown = client.post("/v1/pairs", json={"pairs": [{"pair_id": "p2", "item_a": "i0", "item_b": "zz"}]})
    assert unknown.status_code == 400 and "no item 'zz' in the store" in unknown.json()["error"]
    same = client.post("/v1/pairs", json={"pairs": [{"pair_id": "p3", "item_a": "i0", "item_b": "i0"}]})
    assert same.status_code == 400
    labels = [{"subject_id": "i0", "annotator": "h1", "criterion": "coherence", "value": 4}]
    ok = client.post("/v1/annotations", json={"rubric": "story-quality", "labels": labels})
    assert ok.status_code == 201 and ok.json()["inserted"] == 1
    assert client.get("/v1/annotations", params={"subject_id": "i0"}).json()[0]["value"] == 4
    bad = client.post(
        "/v1/annotations", json={"rubric": "story-quality", "labels": [{**labels[0], "criterion": "taste"}]}
    )
    assert bad.status_code == 400 and "labels row 1, field 'criterion'" in bad.json()["error"]
    off_scale = client.post("/v1/annotations", json={"rubric": "story-quality", "labels": [{**labels[0], "value": 9}]})
    assert off_scale.status_code == 400
    traversal = client.post("/v1/annotations", json={"rubric": "../../etc/passwd", "labels": labels})
    assert traversal.status_code == 422


def test_a_job_runs_and_reports_progress_and_its_judgments_are_in_sql(client: Any) -> None:
    body = {"rubric": "story-quality", "items": ITEMS, "jury": {"jurors": ["fake/a", "fake/b,invalid_rate=0.3"]}}
    r = client.post("/v1/jobs", json=body)
    assert r.status_code == 202, r.json()
    job = wait_for(client, r.json()["job_id"])
    assert job["status"] == "finished" and job["n_subjects"] == 9
    p = job["progress"]
    assert p["n_tasks"] == 18 and p["n_done"] == 18 and p["n_failed"] == 0 and p["n_invalid"] > 0
    rows = client.post(
        "/v1/sql", json={"query": f"SELECT count(DISTINCT call_key) FROM run_calls WHERE run_id = '{job['run_id']}'"}
    ).json()["rows"]
    assert rows == [[18]]
    listed = client.get("/v1/jobs").json()
    assert [j["job_id"] for j in listed] == [job["job_id"]]
    assert client.get("/v1/jobs", params={"status": "queued"}).json() == []
    # The same job again: every call comes from the store.
    again = wait_for(
        client,
        client.post("/v1/jobs", json={**body, "items": None, "item_ids": [i["item_id"] for i in ITEMS]}).json()[
            "job_id"
        ],
    )
    assert again["progress"]["n_done"] == 18


def test_pairwise_job_with_inline_pairs_and_an_inline_rubric(client: Any) -> None:
    rubric = {
        "name": "tiny",
        "kind": "pairwise",
        "k": 2,
        "categories": [{"name": "warmth", "description": "warm"}],
        "templates": {"en": {"user": "A: {response_a}\nB: {response_b}"}},
    }
    pairs = [{"pair_id": "p1", "item_a": "i0", "item_b": "i1"}, {"pair_id": "p2", "item_a": "i2", "item_b": "i3"}]
    r = client.post(
        "/v1/jobs", json={"rubric_inline": rubric, "items": ITEMS[:4], "pairs": pairs, "jury": {"jurors": ["sim/x"]}}
    )
    assert r.status_code == 202, r.json()
    job = wait_for(client, r.json()["job_id"])
    assert job["status"] == "finished" and job["progress"]["n_tasks"] == 4  # both orders
    bad = client.post(
        "/v1/jobs", json={"rubric_inline": {**rubric, "k": 0}, "pair_ids": ["p1"], "jury": {"jurors": ["sim/x"]}}
    )
    assert bad.status_code == 400 and bad.json()["error"].startswith("rubric_inline.k:")


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (
            {"rubric": "story-quality", "item_ids": ["i0"], "jury": {"jurors": ["fake/a,temprature=0"]}},
            400,
            "did you mean 'temperature'",
        ),
        ({"rubric": "story-quality", "item_ids": ["i0"]}, 400, "jury: missing"),
        ({"rubric": "nosuch", "item_ids": ["i0"], "jury": {"jurors": ["fake/a"]}}, 400, "no rubric named 'nosuch'"),
        ({"rubric": "../x", "item_ids": ["i0"], "jury": {"jurors": ["fake/a"]}}, 422, "body.rubric"),
        ({"rubric": "story-quality", "item_ids": ["zz"], "jury": {"jurors": ["fake/a"]}}, 400, "no items to judge"),
        (
            {"rubric": "story-quality", "where": "1; DROP TABLE items", "jury": {"jurors": ["fake/a"]}},
            400,
            "is not one SQL expression",
        ),
        (
            {"rubric": "story-quality", "item_ids": ["i0"], "orders": "one", "jury": {"jurors": ["fake/a"]}},
            400,
            "orders are for pairwise",
        ),
        ({"rubric": "story-quality", "item_ids": ["i0"], "jury": {"jurors": ["fake/a"], "quorum": 3}}, 400, "quorum 3"),
        ({"rubric": "story-quality", "rubric_inline": {}, "jury": {"jurors": ["fake/a"]}}, 400, "exactly one of"),
    ],
)
def test_job_submissions_that_are_refused(client: Any, body: dict[str, Any], status: int, message: str) -> None:
    client.post("/v1/items", json={"items": ITEMS[:2]})
    r = client.post("/v1/jobs", json=body)
    assert r.status_code == status and message in r.json()["error"], r.json()
    assert client.get("/v1/jobs").json() == []


def test_secrets_are_never_stored_or_echoed(db_path: Path) -> None:
    body = {
        "rubric": "story-quality",
        "items": ITEMS[:1],
        "jury": {"jurors": ["fake/a,api_key=sk-very-secret", {"model": "fake/b", "api_key": "sk-other-secret"}]},
    }
    with make_client(db_path) as c:
        r = c.post("/v1/jobs", json=body)
        assert r.status_code == 202 and "sk-" not in r.text
        job = wait_for(c, r.json()["job_id"])
        assert job["status"] == "finished" and "sk-" not in json.dumps(job)
        invalid = c.post("/v1/jobs", json={**body, "samples": 0})
        assert invalid.status_code == 422 and "sk-" not in invalid.text
        stored = c.post("/v1/sql", json={"query": "SELECT request::VARCHAR, error FROM jobs"}).json()["rows"]
        assert "sk-" not in json.dumps(stored) and "fake/a" in stored[0][0]
    con = duckdb.connect(str(db_path))
    dump = json.dumps(con.execute("SELECT * FROM jobs").fetchall(), default=str)
    dump += json.dumps(con.execute("SELECT * FROM jurors").fetchall(), default=str)
    dump += json.dumps(con.execute("SELECT messages FROM calls").fetchall(), default=str)
    # A queued job whose key was inline cannot run after a restart: it fails and says why.
    con.execute("UPDATE jobs SET status = 'queued'")
    con.close()
    assert "sk-" not in dump
    with make_client(db_path) as c:
        job_id = c.get("/v1/jobs").json()[0]["job_id"]
        failed = wait_for(c, job_id)
        assert failed["status"] == "failed" and "inline credentials (api_key" in failed["error"]


def test_cancel_a_queued_or_running_job_and_unknown_ones(db_path: Path) -> None:
    with make_client(db_path, workers=1) as c:
        slow = {
            "rubric": "story-quality",
            "items": ITEMS,
            "jury": {"jurors": ["fake/slow,latency_ms=300"]},
            "concurrency": 1,
        }
        first = c.post("/v1/jobs", json=slow).json()["job_id"]
        second = c.post("/v1/jobs", json={**slow, "items": None, "item_ids": ["i0"]}).json()["job_id"]
        assert c.post(f"/v1/jobs/{second}/cancel").json()["status"] == "cancelled"  # still queued
        wait_for(c, first, ("running",))
        deadline = time.monotonic() + 30  # cancel once a call is stored (planning may take a moment)
        while c.get(f"/v1/jobs/{first}").json()["progress"]["n_done"] < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert c.post(f"/v1/jobs/{first}/cancel").status_code == 200
        job = wait_for(c, first)
        assert job["status"] == "cancelled" and 0 < job["progress"]["n_done"] < 9
        again = c.post(f"/v1/jobs/{first}/cancel")
        assert again.status_code == 409 and "already ended" in again.json()["error"]
        assert c.get("/v1/jobs/nope").status_code == 404
        assert c.post("/v1/jobs/nope/cancel").status_code == 404


def test_status_says_what_is_queued_and_running_and_how_busy_the_stores_writer_was(db_path: Path) -> None:
    with make_client(db_path, workers=1) as c:
        first = c.get("/v1/status").json()
        assert first["jobs"] == {"queued": 0, "running": 0, "workers": 1}
        assert first["executor"] == {"kind": "local", "ray_workers": None}
        slow = {"rubric": "story-quality", "items": ITEMS, "jury": {"jurors": ["fake/slow,latency_ms=300"]}}
        running = c.post("/v1/jobs", json={**slow, "concurrency": 1}).json()["job_id"]
        waiting = c.post("/v1/jobs", json={**slow, "items": None, "item_ids": ["i0"]}).json()["job_id"]
        wait_for(c, running, ("running",))
        deadline = time.monotonic() + 30  # the first job runs for seconds; the second waits behind it
        while c.get("/v1/status").json()["jobs"] != {"queued": 1, "running": 1, "workers": 1}:
            assert time.monotonic() < deadline, c.get("/v1/status").json()
            time.sleep(0.02)
        for job in (waiting, running):
            assert c.post(f"/v1/jobs/{job}/cancel").status_code == 200
            assert wait_for(c, job)["status"] == "cancelled"
        done = c.get("/v1/status").json()
        assert done["jobs"] == {"queued": 0, "running": 0, "workers": 1}
        before, after = first["store_writer"], done["store_writer"]
        assert after["holds"] > before["holds"] and after["busy_s"] > before["busy_s"]
        assert 0 < after["busy_share"] <= 1 and after["busy_s"] <= done["uptime_s"]


def test_a_jobs_row_kept_for_polls_is_the_row_stored_after_every_change(db_path: Path) -> None:
    """Polls answer from the job rows the manager keeps; a change of status patches the kept row
    instead of reading it back under the write lock, so the two must stay equal."""
    with make_client(db_path, workers=1) as c:
        jobs = c.app.state.jurybench.jobs

        def stored(job_id: str) -> tuple[Any, ...]:
            with jobs.store.cursor() as cur:
                return tuple(cur.execute(f"SELECT {jobs.COLUMNS} FROM jobs WHERE job_id = ?", [job_id]).fetchall()[0])

        slow = {"rubric": "story-quality", "items": ITEMS, "jury": {"jurors": ["fake/slow,latency_ms=300"]}}
        job = c.post("/v1/jobs", json={**slow, "concurrency": 1}).json()["job_id"]
        wait_for(c, job, ("running",))  # it runs for seconds, one call at a time
        behind = c.post("/v1/jobs", json={**slow, "items": None, "item_ids": ["i0"]}).json()["job_id"]
        assert jobs.rows[behind] == stored(behind) and jobs.rows[behind][1] == "queued"
        running = jobs.rows[job]
        assert running == stored(job) and running[1] == "running" and running[5] is not None
        for ended in (behind, job):
            assert c.post(f"/v1/jobs/{ended}/cancel").status_code == 200
            assert wait_for(c, ended)["status"] == "cancelled"
            assert jobs.rows[ended] == stored(ended)
        quick = c.post("/v1/jobs", json={**slow, "jury": {"jurors": ["fake/quick"]}}).json()["job_id"]
        assert wait_for(c, quick)["status"] == "finished"
        assert jobs.rows[quick] == stored(quick)


def test_a_restart_resumes_unfinished_jobs_without_repeating_calls(db_path: Path) -> None:
    slow = {
        "rubric": "story-quality",
        "items": ITEMS,
        "jury": {"jurors": ["fake/slow,latency_ms=150"]},
        "concurrency": 1,
    }
    with make_client(db_path, workers=1) as c:
        job_id = c.post("/v1/jobs", json=slow).json()["job_id"]
        wait_for(c, job_id, ("running",))
        import time

        deadline = time.monotonic() + 60  # stopped once a call is stored, not after a fixed sleep
        while c.get(f"/v1/jobs/{job_id}").json()["progress"]["n_done"] < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
    # The server stopped mid-run: the job is queued again, with some calls stored.
    con = duckdb.connect(str(db_path))
    status, run_id = con.execute("SELECT status, run_id FROM jobs").fetchall()[0]
    stored = con.execute("SELECT count(*) FROM calls").fetchall()[0][0]
    con.close()
    assert status == "queued" and 0 < stored < 9
    with make_client(db_path, workers=1) as c:
        job = wait_for(c, job_id)
        assert job["status"] == "finished"
        assert job["progress"]["n_tasks"] == 9 and job["progress"]["n_done"] == 9
    con = duckdb.connect(str(db_path))
    made = con.execute("SELECT count(*), sum(attempts) FROM calls").fetchall()[0]
    members = con.execute("SELECT count(*) FROM run_calls WHERE run_id = ?", [run_id]).fetchall()[0][0]
    con.close()
    assert made == (9, 9) and members == 9  # each call made once, none repeated


def test_body_limit(db_path: Path) -> None:
    with make_client(db_path, max_body_bytes=2000) as c:
        big = {"items": [{"item_id": f"x{k}", "response": "y" * 100} for k in range(50)]}
        r = c.post("/v1/items", json=big)
        assert r.status_code == 413 and "limit of 2000 bytes" in r.json()["error"]


def test_rubrics_endpoint(client: Any) -> None:
    names = {r["name"]: r for r in client.get("/v1/rubrics").json()}
    assert names["persuasion"]["kind"] == "pairwise" and len(names["persuasion"]["dimensions"]) == 19


def test_credentials_through_new_doors_are_used_but_never_stored_or_served(db_path: Path) -> None:
    """A space before '=' in a juror string, and headers (extra_headers) that carry credentials,
    were stored verbatim in jobs.request and jurors.params and served; so was the server's
    calibration folder (issue 27)."""
    import json as _json

    from jurybench.testing import StubServer
    from tests.conftest import FULL

    key, auth, portkey = "sk-spacebefore1234567", "Bearer hel-abcdefgh12345678", "pk-portkey-87654321"
    with StubServer(_json.dumps(FULL)) as stub, make_client(db_path, workers=1) as c:
        jurors = [
            f"openai/stub,api_base={stub.api_base},api_key ={key}",
            {
                "model": "openai/stub2",
                "api_base": stub.api_base,
                "api_key": "sk-x1234567890",
                "extra_headers": {"Helicone-Auth": auth, "x-portkey-api-key": portkey},
            },
        ]
        job_id = c.post(
            "/v1/jobs", json={"rubric": "story-quality", "items": ITEMS[:2], "jury": {"jurors": jurors}}
        ).json()["job_id"]
        job = wait_for(c, job_id)
        assert job["status"] == "finished", job
        served = c.get("/v1/jobs").text + c.get(f"/v1/jobs/{job_id}").text
        served += c.post("/v1/sql", json={"query": "SELECT request FROM jobs"}).text
        served += c.post("/v1/sql", json={"query": "SELECT params FROM jurors"}).text
        listed = c.get(f"/v1/jobs/{job_id}").json()["request"]["jury"]["jurors"]
    sent = [r for r in stub.requests]
    assert len(sent) == 4  # both jurors were asked: the credentials were used
    con = duckdb.connect(str(db_path))
    stored = _json.dumps(con.execute("SELECT * FROM jobs").fetchall(), default=str)
    stored += _json.dumps(con.execute("SELECT * FROM jurors").fetchall(), default=str)
    con.close()
    for secret in (key, auth, "hel-abcdefgh12345678", portkey, "sk-x1234567890"):
        assert secret not in stored and secret not in served, secret
    assert "_calibration_dir" not in stored and str(db_path.parent) not in stored
    assert listed[0]["secrets"] == ["api_key"] and listed[1]["secrets"] == ["api_key", "extra_headers"]


def test_one_juror_parser_and_headers_are_never_identity() -> None:
    from jurybench.jurors import is_secret_param, juror_from_mapping, parse_juror, public_juror
    from jurybench.jurors._spec import stored_params

    spaced = parse_juror("openai/m, api_key = sk-abcdefgh123 ,temperature=0")
    plain = parse_juror("openai/m,temperature=0")
    assert spaced.options["api_key"] == "sk-abcdefgh123" and spaced.key == plain.key
    headed = juror_from_mapping(
        {"model": "openai/m", "temperature": 0, "extra_headers": {"Authorization": "Bearer abcdefgh12345"}}, where="t"
    )
    assert headed.key == plain.key and "extra_headers" not in stored_params(headed)
    assert public_juror(headed) == {"model": "openai/m", "temperature": 0, "secrets": ["extra_headers"]}
    for name in ("api_key", "extra_headers", "extra.headers", "extra.auth_token", "extra.x_api_key", "password"):
        assert is_secret_param(name), name
    for name in ("temperature", "max_tokens", "top_p", "extra.repetition_penalty", "seed"):
        assert not is_secret_param(name), name


def test_the_401_text_is_not_mangled_by_redaction(db_path: Path) -> None:
    # "missing or wrong bearer token." read as a bearer credential: "bearer [REDACTED]" (issue 27).
    with make_client(db_path, token="a-long-enough-token-0123") as c:
        r = c.get("/v1/jobs", headers={"authorization": "Bearer wrong-token-0123456789"})
    assert r.status_code == 401 and r.json()["error"] == "missing or wrong bearer token."
    from jurybench.redact import redact

    assert redact("Authorization: Bearer abcdef0123456789") == "Authorization: Bearer [REDACTED]"


def test_a_job_with_expected_scores_aggregates_them_and_a_job_without_logprobs_says_so(client: Any) -> None:
    """HTTP's jury takes scores: expected; a juror asked for expected scores that reads none
    (a fake juror without scores=expected never sends them: here the fake sends them, and a
    jury of discrete scores keeps them beside) leaves its job's notes empty."""
    body = {
        "rubric": "story-quality",
        "items": ITEMS,
        "jury": {"jurors": ["fake/a,scores=expected"], "scores": "expected"},
    }
    job = wait_for(client, client.post("/v1/jobs", json=body).json()["job_id"])
    assert job["status"] == "finished" and job["notes"] == []
    rows = client.post(
        "/v1/sql",
        json={
            "query": "SELECT count(*) FILTER (WHERE juror_score = juror_expected), "
            "count(*) FROM juror_pointwise WHERE run_id = "
            f"'{job['run_id']}'"
        },
    ).json()["rows"]
    assert rows[0][0] == rows[0][1] > 0
    refused = client.post("/v1/jobs", json={**body, "jury": {"jurors": ["fake/a"], "scores": "expected"}})
    assert refused.status_code == 400 and "no juror reads them" in refused.text
