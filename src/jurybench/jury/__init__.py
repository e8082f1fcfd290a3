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
    check_juror,
)
from jurybench.jury._batches import cancel_batch, list_batches, refresh_batch
from jurybench.jury._cost import CostTally, price_of, usd
from jurybench.jury._engine import EXIT_BUDGET, EXIT_CALL_ERRORS, RunResult, run_job, score
from jurybench.jury._execute import EngineOptions
from jurybench.jury._juror import (
    JurorSpec,
    is_secret_param,
    juror_from_mapping,
    parse_juror,
    public_juror,
    secret_options,
)
from jurybench.jury._jury import (
    AGGREGATIONS,
    TIE_RULES,
    Jury,
    as_jury,
    jury_from_mapping,
    jury_rule,
    load_jury_file,
    register_jury,
    run_panel,
)
from jurybench.jury._parse import Outcome, parse_answer
from jurybench.jury._plan import Planned, Task, call_key, check_batch_jurors, plan_tasks, validate_jurors
from jurybench.jury._sim import simulate_human_labels
from jurybench.jury._store_io import record_run, register_jurors, register_rubric, subject_ids, subject_table
from jurybench.jury._units import parse_unit, unit_id
from jurybench.jury._write import RunEnd, end_runs
from jurybench.rubric import extract_json

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
    "Planned",
    "ReplayBackend",
    "RunEnd",
    "RunResult",
    "Slot",
    "Task",
    "TransientError",
    "as_jury",
    "call_key",
    "cancel_batch",
    "check_batch_jurors",
    "check_juror",
    "end_runs",
    "extract_json",
    "is_secret_param",
    "juror_from_mapping",
    "jury_from_mapping",
    "jury_rule",
    "list_batches",
    "load_jury_file",
    "parse_answer",
    "parse_juror",
    "parse_unit",
    "plan_tasks",
    "price_of",
    "public_juror",
    "record_run",
    "refresh_batch",
    "register_jurors",
    "register_jury",
    "register_rubric",
    "run_job",
    "run_panel",
    "score",
    "secret_options",
    "simulate_human_labels",
    "subject_ids",
    "subject_table",
    "unit_id",
    "usd",
    "validate_jurors",
]
