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
from jurybench.jury._engine import EXIT_CALL_ERRORS, EngineOptions, RunResult, Task, call_key, plan_tasks, score
from jurybench.jury._juror import JurorSpec, load_jury_file, parse_juror
from jurybench.jury._parse import Outcome, extract_json, parse_answer

__all__ = [
    "EXIT_CALL_ERRORS",
    "Completion",
    "EngineOptions",
    "FakeBackend",
    "JurorSpec",
    "JurorUnusable",
    "LiteLLMBackend",
    "Outcome",
    "PermanentError",
    "ReplayBackend",
    "RunResult",
    "Slot",
    "Task",
    "TransientError",
    "call_key",
    "extract_json",
    "load_jury_file",
    "parse_answer",
    "parse_juror",
    "plan_tasks",
    "score",
]
