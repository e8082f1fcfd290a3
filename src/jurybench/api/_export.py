"""A run where teams already look, from Python: ``export_mlflow`` (an MLflow run) and
``export_otel`` (OpenTelemetry traces). Declared once: ``jurybench export mlflow`` and
``jurybench export otel`` and a study step derive from these. No HTTP face: an export pushes to
a tracking server or collector from where the store is, which a service's caller can do with
the service's own answers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from jurybench.declare import param, python_signature
from jurybench.errors import user_facing

if TYPE_CHECKING:
    from jurybench.api._store import StoreLike
    from jurybench.exports import MlflowExport, OtelExport

ExportedRun = Annotated[str, param("The run to export.", faces="cli python")]
TrackingUri = Annotated[
    str | None,
    param(
        "MLflow's tracking URI: a server (http://host:5000) or a database (sqlite:///mlflow.db); default "
        "MLFLOW_TRACKING_URI, else sqlite:///mlflow.db in this folder.",
        faces="cli python",
    ),
]
Experiment = Annotated[str, param("The MLflow experiment (made when missing).", faces="cli python")]
Endpoint = Annotated[
    str | None,
    param(
        "An OTLP/HTTP collector (http://host:4318; /v1/traces is added); default "
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT.",
        faces="cli python",
    ),
]
TraceFile = Annotated[
    str | Path | None,
    param(
        "Write the spans to this file as JSON lines instead of sending them.", faces="cli python", cli_type=Path | None
    ),
]
Content = Annotated[
    bool,
    param(
        "Include each call's prompt and answer (gen_ai.input.messages, gen_ai.output.messages); off by default.",
        faces="cli python",
    ),
]
ServiceName = Annotated[str, param("The spans' service.name.", faces="cli python")]


@user_facing
def export_mlflow(
    store: StoreLike | None, run: ExportedRun, *, tracking_uri: TrackingUri = None, experiment: Experiment = "jurybench"
) -> MlflowExport:
    """Write a run to MLflow: its record as parameters; the jury's mean per criterion with its 95 %
    interval, each juror's outcome rates, cost and latency as metrics; the jury's scores, the record
    and the statistics recorded on it as artifacts. Exporting again updates the same MLflow run."""
    from jurybench.exports import default_tracking_uri, to_mlflow
    from jurybench.store import file_of, reading

    with reading(store) as con:
        found = file_of(con)
        return to_mlflow(
            con,
            run,
            tracking_uri=tracking_uri or default_tracking_uri(),
            experiment=experiment,
            store=str(Path(found).resolve()) if found else "",
        )


@user_facing
def export_otel(
    store: StoreLike | None,
    run: ExportedRun,
    *,
    endpoint: Endpoint = None,
    out: TraceFile = None,
    content: Content = False,
    service_name: ServiceName = "jurybench",
) -> OtelExport:
    """Send a run's calls as one OpenTelemetry trace (a span for the run, one per call, GenAI
    semantic conventions) to an OTLP/HTTP collector, or write it as JSON lines."""
    from jurybench.exports import to_otel
    from jurybench.store import reading

    with reading(store) as con:
        return to_otel(
            con, run, endpoint=endpoint, out=None if out is None else Path(out), content=content, service=service_name
        )


export_mlflow.__signature__ = python_signature(export_mlflow)  # type: ignore[attr-defined]
export_otel.__signature__ = python_signature(export_otel)  # type: ignore[attr-defined]
