"""A run's calls as OpenTelemetry traces: one trace per run, a root span for the run and a
child span per call (made by the run, or reused from the cache and marked so), with the GenAI
semantic conventions' attributes (model, provider, token usage, finish reason) and jurybench's
own (juror, subject, order, sample, outcome, cost, attempts). Sent over OTLP/HTTP to a
collector (``--endpoint``, or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` /
``OTEL_EXPORTER_OTLP_ENDPOINT``), or written as JSON lines (``--out``).

Ids are derived from the run and the call (sha256), so exporting a run twice sends the same
trace and span ids. Prompts and answers are not sent unless asked (``--content``): they can
hold what a collector should not keep."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError
from jurybench.exports._summary import summarize_run
from jurybench.redact import redact

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

BATCH = 512  # spans per OTLP request


@dataclass(frozen=True)
class OtelExport:
    run_id: str
    trace_id: str
    spans: int
    cached: int
    destination: str
    sent: bool

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def line(self) -> str:
        return (
            f"run {self.run_id}: trace {self.trace_id}, {self.spans} spans (the run and {self.spans - 1} calls, "
            f"{self.cached} of them reused from the cache) {'sent to' if self.sent else 'written to'} "
            f"{self.destination}"
        )


def _id(text: str, bits: int) -> int:
    value = int.from_bytes(hashlib.sha256(text.encode()).digest()[: bits // 8], "big")
    return value or 1  # an all-zero id is invalid


def _nanos(moment: datetime) -> int:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1e9)


def _provider(model: str) -> str:
    head = model.split("/", 1)[0] if "/" in model else "openai"
    return {"fake": "jurybench.fake", "sim": "jurybench.sim", "replay": "jurybench.replay"}.get(head, head)


def _calls(con: Connection, run_id: str) -> list[tuple[Any, ...]]:
    return con.execute(
        """SELECT c.call_key, coalesce(rj.name, j.name, c.juror_key), j.model, c.subject_kind, c.subject_id,
                  c.presented_order, c.sample_index, c.status, c.reason, c.attempts, c.prompt_tokens,
                  c.completion_tokens, c.cost_usd, c.latency_ms, c.created_at, c.finish_reason, c.run_id,
                  c.messages, c.response_text
           FROM run_calls rc JOIN calls c USING (call_key)
           LEFT JOIN jurors j ON j.juror_key = c.juror_key
           LEFT JOIN run_jurors rj ON rj.run_id = rc.run_id AND rj.juror_key = c.juror_key
           WHERE rc.run_id = ? ORDER BY c.created_at, c.call_key""",
        [run_id],
    ).fetchall()


def _sdk() -> tuple[Any, Any]:
    try:
        from opentelemetry.sdk import resources, trace
    except ImportError:
        raise JurybenchError("export otel needs OpenTelemetry's SDK.", hint="pip install 'jurybench[otel]'") from None
    return resources, trace


def build_spans(con: Connection, run_id: str, *, content: bool = False, service: str = "jurybench") -> list[Any]:
    """The run's spans, root first (``opentelemetry.sdk.trace.ReadableSpan``)."""
    resources, sdk_trace = _sdk()
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    summary = summarize_run(con, run_id)
    record = summary.record
    resource = resources.Resource.create({"service.name": service})
    trace_id = _id(f"jurybench run {run_id}", 128)
    root_ctx = SpanContext(trace_id, _id(f"jurybench run span {run_id}", 64), False, TraceFlags(TraceFlags.SAMPLED))
    calls = _calls(con, run_id)
    spans = []
    starts: list[datetime] = []
    ends: list[datetime] = []
    for (
        key,
        juror,
        model,
        kind,
        subject,
        order,
        sample,
        status,
        reason,
        attempts,
        p_tok,
        c_tok,
        cost,
        latency,
        created,
        finish,
        made_by,
        messages,
        response,
    ) in calls:
        end = created if isinstance(created, datetime) else datetime.now(UTC)
        start = end - timedelta(milliseconds=float(latency or 0))
        starts.append(start)
        ends.append(end)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": _provider(str(model or "")),
            "gen_ai.request.model": str(model or ""),
            "jurybench.run_id": run_id,
            "jurybench.call_key": key,
            "jurybench.juror": str(juror),
            "jurybench.subject_kind": str(kind),
            "jurybench.subject_id": str(subject),
            "jurybench.sample_index": int(sample or 0),
            "jurybench.status": str(status),
            "jurybench.cached": made_by != run_id,
        }
        optional = {
            "gen_ai.usage.input_tokens": p_tok,
            "gen_ai.usage.output_tokens": c_tok,
            "jurybench.presented_order": order,
            "jurybench.reason": reason,
            "jurybench.attempts": attempts,
            "jurybench.cost_usd": cost,
            "jurybench.latency_ms": latency,
        }
        attributes.update({k: v for k, v in optional.items() if v is not None})
        if finish:
            attributes["gen_ai.response.finish_reasons"] = [str(finish)]
        if content:
            attributes["gen_ai.input.messages"] = messages if isinstance(messages, str) else json.dumps(messages)
            if response is not None:
                attributes["gen_ai.output.messages"] = json.dumps([{"role": "assistant", "content": response}])
        failed = status == "error"
        spans.append(
            sdk_trace.ReadableSpan(
                name=f"chat {model}",
                context=SpanContext(
                    trace_id, _id(f"jurybench call {run_id} {key}", 64), False, TraceFlags(TraceFlags.SAMPLED)
                ),
                parent=root_ctx,
                resource=resource,
                attributes=attributes,
                kind=SpanKind.CLIENT,
                status=Status(StatusCode.ERROR, str(reason or "error")) if failed else Status(StatusCode.OK),
                start_time=_nanos(start),
                end_time=_nanos(end),
            )
        )
    # the run's span covers the run's record and every call in it
    if record.get("created_at"):
        starts.append(datetime.fromisoformat(record["created_at"]))
    if record.get("finished_at"):
        ends.append(datetime.fromisoformat(record["finished_at"]))
    begin = min(starts, default=None) or datetime.now(UTC)
    finish_at = max([begin, *ends])
    root_attributes = {
        "jurybench.run_id": run_id,
        "jurybench.rubric": str(record["rubric"]),
        "jurybench.rubric_version": str(record["rubric_version"]),
        "jurybench.mode": str(record["mode"]),
        "jurybench.status": str(record["status"]),
        "jurybench.jurors": [str(j) for j in record["jurors"]],
        "jurybench.n_subjects": int(record["n_subjects"] or 0),
        "jurybench.calls": len(calls),
    }
    if summary.cost_usd is not None:
        root_attributes["jurybench.cost_usd"] = summary.cost_usd
    for f in summary.figures:
        root_attributes[f"jurybench.jury.{f.criterion}.mean"] = f.mean
    root = sdk_trace.ReadableSpan(
        name=f"jurybench run {run_id}",
        context=root_ctx,
        parent=None,
        resource=resource,
        attributes=root_attributes,
        kind=SpanKind.INTERNAL,
        status=Status(StatusCode.ERROR, str(record["status"]))
        if record["status"] == "failed"
        else Status(StatusCode.OK),
        start_time=_nanos(begin),
        end_time=_nanos(finish_at),
    )
    return [root, *spans]


def _endpoint(endpoint: str | None) -> str | None:
    if endpoint:
        return endpoint if endpoint.rstrip("/").endswith("/v1/traces") else endpoint.rstrip("/") + "/v1/traces"
    if os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        return os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"].rstrip("/") + "/v1/traces"
    return None


def to_otel(
    con: Connection,
    run_id: str,
    *,
    endpoint: str | None = None,
    out: Path | None = None,
    content: bool = False,
    service: str = "jurybench",
    timeout: float = 10.0,
) -> OtelExport:
    """Send (or write) the run's trace; one line when the collector refuses it or cannot be
    reached. Headers for the collector come from ``OTEL_EXPORTER_OTLP_HEADERS`` (never shown)."""
    target = None if out is not None else _endpoint(endpoint)
    if out is None and target is None:
        raise JurybenchError(
            "export otel: no destination.",
            hint="Give --endpoint URL (an OTLP/HTTP collector, e.g. http://localhost:4318) or --out FILE "
            "(JSON lines); OTEL_EXPORTER_OTLP_ENDPOINT is read too.",
        )
    spans = build_spans(con, run_id, content=content, service=service)
    cached = sum(1 for s in spans[1:] if s.attributes.get("jurybench.cached"))
    trace_id = format(spans[0].context.trace_id, "032x")
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_name(out.name + ".partial")
        with partial.open("w", encoding="utf-8") as fh:
            for span in spans:
                fh.write(json.dumps(json.loads(span.to_json()), separators=(",", ":")) + "\n")
        partial.replace(out)
        return OtelExport(run_id, trace_id, len(spans), cached, str(out), sent=False)
    assert target is not None
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace.export import SpanExportResult
    except ImportError:
        raise JurybenchError(
            "export otel --endpoint needs the OTLP/HTTP exporter.", hint="pip install 'jurybench[otel]'"
        ) from None
    import logging

    logging.getLogger("opentelemetry").setLevel(logging.CRITICAL)  # its retries log tracebacks
    exporter = OTLPSpanExporter(endpoint=target, timeout=timeout)
    shown = redact(target)
    try:
        for start in range(0, len(spans), BATCH):
            if exporter.export(spans[start : start + BATCH]) is not SpanExportResult.SUCCESS:
                raise JurybenchError(
                    f"export otel: the collector at {shown} did not take the spans "
                    f"({start} of {len(spans)} sent before).",
                    hint="Is it an OTLP/HTTP collector (port 4318, path /v1/traces)? Run again to resend.",
                )
    finally:
        exporter.shutdown()  # type: ignore[no-untyped-call]
    return OtelExport(run_id, trace_id, len(spans), cached, shown, sent=True)
