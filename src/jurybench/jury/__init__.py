"""The judge engine: jurors behind one interface, caching, retries, parsing, storage."""

from jurybench.jury._backends import (
    Completion,
    FakeBackend,
    JurorUnusable,
    LiteLLMBackend,
    PermanentError,
    ReplayBackend,
    Slot,
    TransientError,
)
from jurybench.jury._cost import CostTally
from jurybench.jury._engine import (
    EXIT_BUDGET,
    EXIT_CALL_ERRORS,
    EngineOptions,
    RunResult,
    Task,
    call_key,
    plan_tasks,
    score,
)
from jurybench.jury._juror import JurorSpec, parse_juror
from jurybench.jury._jury import AGGREGATIONS, TIE_RULES, Jury, as_jury, load_jury_file, register_jury
from jurybench.jury._parse import Outcome, extract_json, parse_answer

__all__ = [
    "AGGREGATIONS",
    "EXIT_BUDGET",
    "EXIT_CALL_ERRORS",
    "TIE_RULES",
    "Completion",
    "CostTally",
    "EngineOptions",
    "FakeBackend",
    "JurorSpec",
    "JurorUnusable",
    "Jury",
    "LiteLLMBackend",
    "Outcome",
    "PermanentError",
    "ReplayBackend",
    "RunResult",
    "Slot",
    "Task",
    "TransientError",
    "as_jury",
    "call_key",
    "extract_json",
    "load_jury_file",
    "parse_answer",
    "parse_juror",
    "plan_tasks",
    "register_jury",
    "score",
]
