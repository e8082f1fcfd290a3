"""A run where teams already look (issue 56, item 4): ``jurybench export mlflow`` writes it to a
real MLflow store (sqlite) and ``jurybench export otel`` sends its calls as OpenTelemetry spans
to an OTLP/HTTP collector on loopback (or a file); the figures are the store's, checked against
SQL over the same store."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import duckdb
import pytest

from tests.conftest import run_cli, write

ITEMS = "item_id,prompt,response,model\n" + "".join(
    f"i{k},Write about topic {k // 2}.,Answer {k} about it.,m{k % 2}\n" for k in range(8)
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("export")
    db = folder / "e.duckdb"
    assert run_cli("items", "import", str(write(folder / "items.csv", ITEMS)), "--db", str(db)).exit_code == 0
    done = run_cli(
        "score",
        "--db",
        str(db),
        "-r",
        "story-quality",
        "--where",
        "true",
        "--run",
        "r1",
        "--no-progress",
        "-j",
        "sim/a,noise=0.5,cost=0.002",
        "-j",
        "sim/b,noise=0.5,leniency=1",
        "-j",
        "fake/shy,refusal_rate=0.3",
    )
    assert done.exit_code == 0, done.stderr
    assert run_cli("stats", "ttest", "--run", "r1", "--by", "model", "--baseline", "3", "--db", str(db)).exit_code == 0
    return db


def _sql(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_a_run_goes_to_mlflow_and_again_updates_the_same_mlflow_run(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow import MlflowClient

    monkeypatch.chdir(tmp_path)  # the experiment's artifacts: ./mlruns
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    done = run_cli("export", "mlflow", "--run", "r1", "--tracking-uri", uri, "--db", str(store))
    assert done.exit_code == 0, done.stderr
    assert done.stdout.startswith(f"run r1 written to MLflow at {uri}, experiment jurybench: MLflow run ")
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("jurybench")
    (found,) = client.search_runs([experiment.experiment_id])
    assert found.data.params["rubric"] == "story-quality" and found.data.params["mode"] == "pointwise"
    assert found.data.params["jurors"] == "sim/a, sim/b, fake/shy"
    assert found.data.tags["jurybench.run_id"] == "r1" and found.info.status == "FINISHED"
    metrics = found.data.metrics
    expected = dict(_sql(store, "SELECT criterion, avg(jury_score) FROM jury_pointwise WHERE run_id = 'r1' GROUP BY 1"))
    assert len(expected) == 6
    for criterion, mean in expected.items():
        assert metrics[f"jury/{criterion}/mean"] == pytest.approx(mean)
        assert metrics[f"jury/{criterion}/ci_low"] < mean < metrics[f"jury/{criterion}/ci_high"]
    calls, refusals = _sql(
        store, "SELECT n_calls, n_refusal FROM run_summary WHERE run_id = 'r1' AND juror = 'fake/shy'"
    )[0]
    assert metrics["juror/fake/shy/refusal_rate"] == pytest.approx(refusals / calls) and refusals > 0
    assert metrics["juror/sim/a/cost_usd"] == pytest.approx(0.002 * 8)  # its declared price, 8 calls
    assert metrics["run/calls"] == 24
    artifacts = {a.path for a in client.list_artifacts(found.info.run_id)}
    assert {"jury_scores.csv", "run.json", "statistics"} <= artifacts
    scores = Path(client.download_artifacts(found.info.run_id, "jury_scores.csv", str(tmp_path))).read_text()
    assert (
        scores.splitlines()[0] == "subject_id,criterion,jury_score,n_jurors_present" and len(scores.splitlines()) == 49
    )

    again = run_cli("export", "mlflow", "--run", "r1", "--tracking-uri", uri, "--db", str(store), "--format", "json")
    assert again.exit_code == 0, again.stderr
    shown = json.loads(again.stdout)
    assert shown["updated"] is True and shown["mlflow_run_id"] == found.info.run_id
    assert len(client.search_runs([experiment.experiment_id])) == 1  # the same MLflow run, not a second


def test_an_unknown_run_or_an_unreachable_server_is_one_line(store: Path, tmp_path: Path) -> None:
    missing = run_cli(
        "export", "mlflow", "--run", "nope", "--tracking-uri", f"sqlite:///{tmp_path}/m.db", "--db", str(store)
    )
    assert missing.exit_code == 2 and missing.stderr.count("\n") <= 2 and "no run 'nope'" in missing.stderr
    assert "r1" in missing.stderr  # it names the runs there are
    refused = run_cli(
        "export", "mlflow", "--run", "r1", "--tracking-uri", "http://user:hunter2@127.0.0.1:9/", "--db", str(store)
    )
    assert refused.exit_code == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert "hunter2" not in refused.stderr + refused.stdout and "MLflow at http://" in refused.stderr


class _Collector(BaseHTTPRequestHandler):
    received: ClassVar[list[Any]] = []
    answer: ClassVar[int] = 200

    def do_POST(self) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        type(self).received.append((self.path, request))
        self.send_response(type(self).answer)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[tuple[str, type[_Collector]]]:
    handler = type("Collector", (_Collector,), {"received": [], "answer": 200})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def _spans(requests: list[Any]) -> list[Any]:
    return [s for _, r in requests for rs in r.resource_spans for ss in rs.scope_spans for s in ss.spans]


def test_a_run_goes_to_an_otlp_collector_as_one_trace(store: Path, collector: tuple[str, Any]) -> None:
    url, handler = collector
    done = run_cli("export", "otel", "--run", "r1", "--endpoint", url, "--db", str(store))
    assert done.exit_code == 0, done.stderr
    assert "25 spans (the run and 24 calls, 0 of them reused from the cache) sent to" in done.stdout
    assert {path for path, _ in handler.received} == {"/v1/traces"}
    spans = _spans(handler.received)
    (root,) = [s for s in spans if not s.parent_span_id]
    calls = [s for s in spans if s.parent_span_id]
    assert len(calls) == _sql(store, "SELECT count(*) FROM run_calls WHERE run_id = 'r1'")[0][0] == 24
    assert {s.trace_id for s in spans} == {root.trace_id} and {s.parent_span_id for s in calls} == {root.span_id}
    attributes = {kv.key: kv.value for kv in calls[0].attributes}
    assert attributes["gen_ai.operation.name"].string_value == "chat"
    assert attributes["jurybench.run_id"].string_value == "r1"
    assert "gen_ai.input.messages" not in attributes  # prompts only with --content
    statuses = sorted({kv.key: kv.value for kv in s.attributes}["jurybench.status"].string_value for s in calls)
    stored = sorted(
        r[0]
        for r in _sql(
            store, "SELECT c.status FROM run_calls JOIN calls c USING (call_key) WHERE run_calls.run_id = 'r1'"
        )
    )
    assert statuses == stored and "refusal" in statuses
    resource = {kv.key: kv.value.string_value for kv in handler.received[0][1].resource_spans[0].resource.attributes}
    assert resource["service.name"] == "jurybench"

    handler.received.clear()
    assert run_cli("export", "otel", "--run", "r1", "--endpoint", url, "--db", str(store)).exit_code == 0
    assert sorted(s.span_id for s in _spans(handler.received)) == sorted(s.span_id for s in spans)  # the same ids


def test_a_collector_that_refuses_is_one_line(store: Path, collector: tuple[str, Any]) -> None:
    url, handler = collector
    handler.answer = 400
    done = run_cli("export", "otel", "--run", "r1", "--endpoint", url, "--db", str(store))
    assert done.exit_code == 2 and "did not take the spans" in done.stderr and "Traceback" not in done.stderr
    nowhere = run_cli("export", "otel", "--run", "r1", "--db", str(store))
    assert nowhere.exit_code == 2 and "no destination" in nowhere.stderr


def test_spans_as_json_lines_with_the_calls_content(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "trace.jsonl"
    done = run_cli("export", "otel", "--run", "r1", "--out", str(out), "--content", "--db", str(store))
    assert done.exit_code == 0, done.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 25 and lines[0]["parent_id"] is None
    messages = json.loads(lines[1]["attributes"]["gen_ai.input.messages"])
    assert messages and messages[0]["role"] in ("system", "user")
