"""The library's face, re-exported as ``jurybench``: open a store, import data, judge, calibrate,
check, and the statistics (``jurybench.stats``). The CLI, the service and the study runner call
these functions."""

from jurybench.api._calibrate import Calibration, agreement, calibrate, select_jury
from jurybench.api._check import CheckResult, check, parse_rule
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
    "ascore",
    "calibrate",
    "check",
    "engine_options",
    "generate",
    "jury_of",
    "load_rubric",
    "open",
    "parse_juror",
    "parse_rule",
    "score",
    "select_jury",
]
