"""One run: plan, call (synchronously or in provider batches), parse, write; cache and resume,
cost and budget, progress. Judging and generation both run here.

Internal: this stage's interface to the others, not a public API (docs/architecture.md, "What is public")."""

from jurybench.engine._budget import Budget, CostTally, affordable_output_tokens, checked_max_cost
from jurybench.engine._options import EngineHooks, EngineOptions
from jurybench.engine._plan import (
    ORDERS,
    Planned,
    Task,
    call_key,
    check_batch_jurors,
    check_orders,
    orders_of,
    validate_jurors,
)
from jurybench.engine._ray import JobsOnRay, check_executor, keep_workers
from jurybench.engine._records import (
    CALL_COLUMNS,
    JUDGMENT_COLUMNS,
    record_run,
    register_jurors,
    register_rubric,
    write_calls,
    write_members,
)
from jurybench.engine._run import EXIT_BUDGET, EXIT_CALL_ERRORS, RunResult, run_tasks, score
from jurybench.engine._stored_batches import cancel_batch, list_batches, refresh_batch
from jurybench.engine._writer import RunEnd, end_runs

__all__ = [
    "CALL_COLUMNS",
    "EXIT_BUDGET",
    "EXIT_CALL_ERRORS",
    "JUDGMENT_COLUMNS",
    "ORDERS",
    "Budget",
    "CostTally",
    "EngineHooks",
    "EngineOptions",
    "JobsOnRay",
    "Planned",
    "RunEnd",
    "RunResult",
    "Task",
    "affordable_output_tokens",
    "call_key",
    "cancel_batch",
    "check_batch_jurors",
    "check_executor",
    "check_orders",
    "checked_max_cost",
    "end_runs",
    "keep_workers",
    "list_batches",
    "orders_of",
    "record_run",
    "refresh_batch",
    "register_jurors",
    "register_rubric",
    "run_tasks",
    "score",
    "validate_jurors",
    "write_calls",
    "write_members",
]
