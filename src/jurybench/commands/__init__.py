"""The commands a study can run, as functions of their options: the CLI's typer commands and
study steps both call them, and they call the library's API. ``COMMANDS`` maps each command
('score', 'items import', 'stats gap', ...) to its function and its options.

Internal: this stage's interface to the others, not a public API (docs/architecture.md, "What is public")."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jurybench.commands._output import (
    check_format,
    console,
    echo,
    echo_plain,
    preference_rows,
    set_wide,
)
from jurybench.commands._steps import (
    agreement,
    align,
    anchors_add,
    annotations_import,
    annotations_sample,
    annotations_simulate,
    baselines_import,
    calibrate,
    calibrate_apply,
    check,
    export_mlflow,
    export_otel,
    generate,
    items_import,
    judgments_formats,
    judgments_import,
    jury_select,
    pairs_import,
    plot,
    report_classification,
    report_preference,
    score,
    sql,
    statistic,
)
from jurybench.declare import Option


@dataclass(frozen=True)
class Command:
    """A command: the function that runs it, the option its positional argument fills (if any),
    and fixed arguments (the statistic or plot a 'stats NAME' / 'plot NAME' command names)."""

    function: Callable[..., int]
    positional: str | None = None
    fixed: dict[str, object] = field(default_factory=dict)
    signature_of: Callable[..., Any] | None = None  # where the options are read from, if not function
    declared: str | None = None  # the jurybench.api function whose declared CLI face they are

    def options(self) -> dict[str, Option]:
        if self.declared is not None:  # the declaration's options, then the printer's own (--format)
            from jurybench import api
            from jurybench.declare import cli_options, parameters_of

            declared = {o.name: o for o in cli_options(parameters_of(getattr(api, self.declared)))}
            return declared | self._own(self.function)
        return self._own(self.signature_of or self.function)

    def _own(self, source: Callable[..., Any]) -> dict[str, Option]:
        """The options of a function's own named parameters (not the store, nor ``**values``)."""
        hints = typing.get_type_hints(source) if inspect.isfunction(source) else {}
        out = {}
        for name, param in inspect.signature(source).parameters.items():
            if name in ("db", "store", *self.fixed) or param.kind is inspect.Parameter.VAR_KEYWORD:
                continue
            required = param.default is inspect.Parameter.empty
            annotation = Any if param.annotation is inspect.Parameter.empty else param.annotation
            out[name] = Option(name, hints.get(name, annotation), required, None if required else param.default)
        if self.signature_of is not None and "format" not in out:  # statistics print as table, json or csv
            out["format"] = Option("format", str, False, "table")
        return out

    def run(self, db: object, values: dict[str, object]) -> int:
        return self.function(db, **self.fixed, **values)


def _stat(name: str) -> Command | None:
    from jurybench.stats import statistics

    stat = statistics().get(name)
    return None if stat is None else Command(statistic, fixed={"name": name}, signature_of=stat)


def command(name: str) -> Command | None:
    """The command called ``name`` ('score', 'stats gap', 'plot directional'), or None."""
    if name.startswith("stats "):
        return _stat(name[6:])
    if name.startswith("plot "):
        return Command(plot, fixed={"name": name[5:]})
    return COMMANDS.get(name)


COMMANDS: dict[str, Command] = {
    "generate": Command(generate, "spec", declared="generate"),
    "score": Command(score, declared="score"),
    "sql": Command(sql, "query"),
    "items import": Command(items_import, "file"),
    "pairs import": Command(pairs_import, "file"),
    "annotations import": Command(annotations_import, "file", declared="import_annotations"),
    "judgments import": Command(judgments_import, "file", declared="import_judgments"),
    "annotations sample": Command(annotations_sample, declared="sample_labels"),
    "anchors add": Command(anchors_add, declared="add_anchors"),
    "annotations simulate": Command(annotations_simulate, declared="simulate_annotations"),
    "baselines import": Command(baselines_import, "file"),
    "calibrate": Command(calibrate, declared="calibrate"),
    "calibrate apply": Command(calibrate_apply, "calibration", declared="apply_calibration"),
    "jury select": Command(jury_select, declared="select_jury"),
    "check": Command(check, declared="check"),
    "export mlflow": Command(export_mlflow, declared="export_mlflow"),
    "export otel": Command(export_otel, declared="export_otel"),
    "agreement": Command(agreement, declared="agreement"),
    "align": Command(align, declared="align"),
    "report preference": Command(report_preference, declared="preference_report"),
    "report classification": Command(report_classification, declared="classification_answers"),
}


__all__ = [
    "COMMANDS",
    "Command",
    "Option",
    "agreement",
    "align",
    "anchors_add",
    "annotations_import",
    "annotations_sample",
    "annotations_simulate",
    "baselines_import",
    "calibrate",
    "calibrate_apply",
    "check",
    "check_format",
    "command",
    "console",
    "echo",
    "echo_plain",
    "export_mlflow",
    "export_otel",
    "generate",
    "items_import",
    "judgments_formats",
    "judgments_import",
    "jury_select",
    "pairs_import",
    "plot",
    "preference_rows",
    "report_classification",
    "report_preference",
    "score",
    "set_wide",
    "sql",
    "statistic",
]
