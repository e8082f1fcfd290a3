"""The library's face, re-exported as ``jurybench``: open a store, import data, judge, calibrate,
check, and the statistics (``jurybench.stats``). The CLI, the service and the study runner call
these functions.

Each name loads its module when first asked for, so reading a declaration (the command line
builds ``score``'s options from ``jurybench.score``'s parameters) imports no more than it needs."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jurybench.api._align import align
    from jurybench.api._calibrate import Calibration, agreement, apply_calibration, calibrate, select_jury
    from jurybench.api._check import CheckResult, check, parse_rule
    from jurybench.api._imports import import_judgments as import_judgments
    from jurybench.api._labelling import add_anchors as add_anchors
    from jurybench.api._labelling import import_annotations as import_annotations
    from jurybench.api._labelling import sample_labels as sample_labels
    from jurybench.api._labelling import simulate_annotations as simulate_annotations
    from jurybench.api._report import classification_answers, preference_report
    from jurybench.api._rows import NamedRows as NamedRows
    from jurybench.api._run import Run, ascore, engine_options, generate, score
    from jurybench.api._specs import jury_of
    from jurybench.api._store import Store, open
    from jurybench.jurors import JurorSpec, parse_juror
    from jurybench.jury import Jury
    from jurybench.rubric import AnyRubric as Rubric
    from jurybench.rubric import load_rubric

__all__ = [
    "Calibration",
    "CheckResult",
    "JurorSpec",
    "Jury",
    "Rubric",
    "Run",
    "Store",
    "agreement",
    "align",
    "apply_calibration",
    "ascore",
    "calibrate",
    "check",
    "classification_answers",
    "engine_options",
    "export_mlflow",
    "export_otel",
    "generate",
    "jury_of",
    "load_rubric",
    "open",
    "parse_juror",
    "parse_rule",
    "preference_report",
    "score",
    "select_jury",
]

# Where each name lives (module, its name there).
_HOMES = {
    "align": ("jurybench.api._align", "align"),
    "Calibration": ("jurybench.api._calibrate", "Calibration"),
    "agreement": ("jurybench.api._calibrate", "agreement"),
    "apply_calibration": ("jurybench.api._calibrate", "apply_calibration"),
    "calibrate": ("jurybench.api._calibrate", "calibrate"),
    "select_jury": ("jurybench.api._calibrate", "select_jury"),
    "export_mlflow": ("jurybench.api._export", "export_mlflow"),
    "export_otel": ("jurybench.api._export", "export_otel"),
    "CheckResult": ("jurybench.api._check", "CheckResult"),
    "check": ("jurybench.api._check", "check"),
    "parse_rule": ("jurybench.api._check", "parse_rule"),
    "import_judgments": ("jurybench.api._imports", "import_judgments"),
    "add_anchors": ("jurybench.api._labelling", "add_anchors"),
    "import_annotations": ("jurybench.api._labelling", "import_annotations"),
    "sample_labels": ("jurybench.api._labelling", "sample_labels"),
    "simulate_annotations": ("jurybench.api._labelling", "simulate_annotations"),
    "classification_answers": ("jurybench.api._report", "classification_answers"),
    "preference_report": ("jurybench.api._report", "preference_report"),
    "Run": ("jurybench.api._run", "Run"),
    "ascore": ("jurybench.api._run", "ascore"),
    "engine_options": ("jurybench.api._run", "engine_options"),
    "generate": ("jurybench.api._run", "generate"),
    "score": ("jurybench.api._run", "score"),
    "jury_of": ("jurybench.api._specs", "jury_of"),
    "NamedRows": ("jurybench.api._rows", "NamedRows"),
    "Store": ("jurybench.api._store", "Store"),
    "open": ("jurybench.api._store", "open"),
    "JurorSpec": ("jurybench.jurors", "JurorSpec"),
    "parse_juror": ("jurybench.jurors", "parse_juror"),
    "Jury": ("jurybench.jury", "Jury"),
    "Rubric": ("jurybench.rubric", "AnyRubric"),
    "load_rubric": ("jurybench.rubric", "load_rubric"),
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'jurybench.api' has no attribute {name!r}")
    module, attribute = _HOMES[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
