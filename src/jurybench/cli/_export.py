"""jurybench export: a run where teams already look, MLflow or OpenTelemetry (their options:
``jurybench.export_mlflow``'s and ``jurybench.export_otel``'s declarations)."""

from __future__ import annotations

from jurybench import api, commands
from jurybench.cli._common import command_group, declared_command, format_option

export_app = command_group(
    "export", "Send a run where teams already look: an MLflow run (mlflow), OpenTelemetry traces (otel)."
)

export_app.command("mlflow")(
    declared_command(
        api.export_mlflow,
        commands.export_mlflow,
        doc="""Write a run to MLflow: parameters, metrics (the jury per criterion with its interval, each
    juror's outcome rates, cost and latency) and artifacts (the jury's scores, the run record,
    its recorded statistics). Again for the same run and store: the same MLflow run is updated.
    Needs pip install 'jurybench[mlflow]'.""",
        extra=(format_option(),),
    )
)
export_app.command("otel")(
    declared_command(
        api.export_otel,
        commands.export_otel,
        doc="""Send a run's calls as one OpenTelemetry trace (OTLP/HTTP): a span for the run and one per
    call, with the GenAI semantic conventions (model, provider, tokens) and the juror, subject,
    order, outcome and cost; or write it as JSON lines (--out). Prompts and answers only with
    --content. Needs pip install 'jurybench[otel]'.""",
        extra=(format_option(),),
    )
)
