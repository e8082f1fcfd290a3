"""The library's face, re-exported as ``jurybench``: open a store, import data, judge, calibrate,
check, and the statistics (``jurybench.stats``). The CLI, the service and the study runner call
these functions."""

from jurybench.api._calibrate import Calibration, agreement, calibrate
from jurybench.api._check import CheckResult, check, parse_rule
from jurybench.api._run import Run, ascore, engine_options, generate, jury_of, rubric_of, score
from jurybench.api._store import Store, open, rows_of

__all__ = [
    "Calibration",
    "CheckResult",
    "Run",
    "Store",
    "agreement",
    "ascore",
    "calibrate",
    "check",
    "engine_options",
    "generate",
    "jury_of",
    "open",
    "parse_rule",
    "rows_of",
    "rubric_of",
    "score",
]
