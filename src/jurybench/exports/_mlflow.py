"""A run as an MLflow run: the run's record as parameters, the jury's figures and each juror's
rates, cost and latency as metrics, and the jury's scores, the record and its recorded
statistics as artifacts. One MLflow run per jurybench run and store: exporting again updates
the same MLflow run (found by its ``jurybench.run_id`` and ``jurybench.store`` tags)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError
from jurybench.exports._summary import RunSummary, scores_csv, summarize_run
from jurybench.redact import redact

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

# MLflow's keys take letters, digits, '_', '-', '.', ' ', ':' and '/'; anything else (a juror's
# 'fake/kind,samples=2') becomes '_'.
_KEY = re.compile(r"[^\w\-. :/]")


def metric_key(*parts: str) -> str:
    return "/".join(_KEY.sub("_", p) for p in parts)


@dataclass(frozen=True)
class MlflowExport:
    run_id: str
    mlflow_run_id: str
    experiment: str
    tracking_uri: str
    n_params: int
    n_metrics: int
    artifacts: list[str]
    updated: bool

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def line(self) -> str:
        shown = ", ".join(self.artifacts[:4]) + (", ..." if len(self.artifacts) > 4 else "")
        return (
            f"run {self.run_id} {'updated in' if self.updated else 'written to'} MLflow at {self.tracking_uri}, "
            f"experiment {self.experiment}: MLflow run {self.mlflow_run_id}, {self.n_params} parameters, "
            f"{self.n_metrics} metrics, {len(self.artifacts)} artifacts ({shown})"
        )


def params_of(summary: RunSummary) -> dict[str, str]:
    r = summary.record
    shown = {
        "rubric": r["rubric"],
        "rubric_version": r["rubric_version"],
        "rubric_hash": r["rubric_hash"],
        "mode": r["mode"],
        "aggregation": r["aggregation"],
        "quorum": r["quorum"],
        "orders": r["orders"],
        "jurors": ", ".join(r["jurors"]),
        "selection": r["selection"],
        "n_subjects": r["n_subjects"],
    }
    return {k: str(v)[:6000] for k, v in shown.items() if v is not None}  # MLflow caps a value at 6,000


def metrics_of(summary: RunSummary) -> dict[str, float]:
    out: dict[str, float] = {}
    for f in summary.figures:
        out[metric_key("jury", f.criterion, "mean")] = f.mean
        out[metric_key("jury", f.criterion, "n")] = float(f.n)
        if f.low is not None and f.high is not None:
            out[metric_key("jury", f.criterion, "ci_low")] = f.low
            out[metric_key("jury", f.criterion, "ci_high")] = f.high
    for j in summary.jurors:
        if j.calls:
            for outcome in ("ok", "invalid", "refusal", "error"):
                out[metric_key("juror", j.juror, f"{outcome}_rate")] = getattr(j, outcome) / j.calls
        out[metric_key("juror", j.juror, "calls")] = float(j.calls)
        for name in ("cost_usd", "mean_latency_ms", "flip_rate"):
            value = getattr(j, name)
            if value is not None:
                out[metric_key("juror", j.juror, name)] = float(value)
    out["run/calls"] = float(summary.n_calls)
    out["run/cached_calls"] = float(summary.n_cached)
    if summary.cost_usd is not None:
        out["run/cost_usd"] = summary.cost_usd
    return out


def _client(tracking_uri: str) -> Any:
    try:
        from mlflow import MlflowClient
    except ImportError:
        raise JurybenchError("export mlflow needs MLflow's client.", hint="pip install 'jurybench[mlflow]'") from None
    return MlflowClient(tracking_uri=tracking_uri)


def to_mlflow(
    con: Connection, run_id: str, *, tracking_uri: str, experiment: str = "jurybench", store: str = ""
) -> MlflowExport:
    """Write the run ``run_id`` to MLflow at ``tracking_uri`` under ``experiment``."""
    summary = summarize_run(con, run_id)
    mode = str(summary.record["mode"])
    csv_text = scores_csv(con, run_id, mode)
    with _patient_enough():
        return _write(tracking_uri, summary, csv_text, experiment=experiment, store=store)


# A tracking server that does not answer: MLflow's client retries 7 times with a doubling backoff
# (minutes); an export says so after a few seconds unless MLFLOW_HTTP_REQUEST_* ask otherwise.
_PATIENCE = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "30",
}


@contextmanager
def _patient_enough() -> Iterator[None]:
    added = [k for k in _PATIENCE if k not in os.environ]
    os.environ.update({k: _PATIENCE[k] for k in added})
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)


def _write(tracking_uri: str, summary: RunSummary, csv_text: str, *, experiment: str, store: str) -> MlflowExport:
    run_id = summary.run_id
    client = _client(tracking_uri)
    import logging

    logging.getLogger("alembic").setLevel(logging.WARNING)  # a new sqlite store prints its migrations
    logging.getLogger("mlflow").setLevel(logging.WARNING)
    try:
        from mlflow.entities import Metric, Param, RunTag

        found = client.get_experiment_by_name(experiment)
        experiment_id = (
            found.experiment_id
            if found is not None
            else client.create_experiment(experiment, artifact_location=_artifacts_beside(tracking_uri))
        )
        filter_string = f"tags.`jurybench.run_id` = '{_quoted(run_id)}' AND tags.`jurybench.store` = '{_quoted(store)}'"
        previous = client.search_runs([experiment_id], filter_string=filter_string, max_results=1)
        tags = {
            "jurybench.run_id": run_id,
            "jurybench.store": store,
            "jurybench.status": str(summary.record["status"]),
            "mlflow.runName": run_id,
        }
        if previous:
            mlflow_run_id = previous[0].info.run_id
            client.update_run(mlflow_run_id, status="RUNNING")
        else:
            mlflow_run_id = client.create_run(experiment_id, run_name=run_id, tags=tags).info.run_id
        params = params_of(summary)
        metrics = metrics_of(summary)
        stamp = _millis(summary.record.get("finished_at") or summary.record.get("created_at"))
        already = set(previous[0].data.params) if previous else set()
        client.log_batch(
            mlflow_run_id,
            metrics=[Metric(k, v, stamp, 0) for k, v in metrics.items()],
            params=[Param(k, v) for k, v in params.items() if k not in already],  # a parameter is logged once
            tags=[RunTag(k, v) for k, v in tags.items()],
        )
        artifacts = ["jury_scores.csv", "run.json"]
        client.log_text(mlflow_run_id, csv_text, "jury_scores.csv")
        client.log_dict(
            mlflow_run_id,
            {
                "record": summary.record,
                "figures": [f.__dict__ for f in summary.figures],
                "jurors": [j.__dict__ for j in summary.jurors],
            },
            "run.json",
        )
        for stat in summary.statistics:
            name = f"statistics/{_KEY.sub('_', stat['name'])}-{stat['result_id']}.json"
            client.log_dict(mlflow_run_id, stat, name)
            artifacts.append(name)
        client.set_terminated(mlflow_run_id, status="FINISHED" if summary.record["status"] != "failed" else "FAILED")
    except JurybenchError:
        raise
    except Exception as exc:  # the tracking server's own errors, in one line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise JurybenchError(
            f"MLflow at {redact(tracking_uri)}: {first[:300]}",
            hint="Check --tracking-uri (MLFLOW_TRACKING_URI), e.g. sqlite:///mlflow.db or http://host:5000.",
        ) from None
    return MlflowExport(
        run_id=run_id,
        mlflow_run_id=mlflow_run_id,
        experiment=experiment,
        tracking_uri=redact(tracking_uri),
        n_params=len(params),
        n_metrics=len(metrics),
        artifacts=artifacts,
        updated=bool(previous),
    )


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


def _millis(iso: object) -> int:
    from datetime import datetime

    if not iso:
        return 0
    moment = datetime.fromisoformat(str(iso))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def _artifacts_beside(tracking_uri: str) -> str | None:
    """A sqlite:/// store's artifacts go beside its file (mlruns/), not into the working folder;
    a tracking server keeps its own."""
    if not tracking_uri.startswith("sqlite:///"):
        return None
    from pathlib import Path

    return (Path(tracking_uri[len("sqlite:///") :]).resolve().parent / "mlruns").as_uri()


def default_tracking_uri() -> str:
    return os.environ.get("MLFLOW_TRACKING_URI") or "sqlite:///mlflow.db"
