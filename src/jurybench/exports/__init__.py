"""A run where teams already look: its record, figures and scores as an MLflow run
(``to_mlflow``), and its calls as OpenTelemetry traces over OTLP/HTTP (``to_otel``). Both read
the store only; the clients (extras ``jurybench[mlflow]``, ``jurybench[otel]``) are imported
when an export is made.

Internal: the names below are this stage's interface to the other stages (docs/architecture.md);
users call ``jurybench export`` or ``jb.export_mlflow`` / ``jb.export_otel``."""

from jurybench.exports._mlflow import MlflowExport, default_tracking_uri, to_mlflow
from jurybench.exports._otel import OtelExport, to_otel

__all__ = [
    "MlflowExport",
    "OtelExport",
    "default_tracking_uri",
    "to_mlflow",
    "to_otel",
]
