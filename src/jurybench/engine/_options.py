"""What a run is set to do (:class:`EngineOptions`: plain values, the same whoever starts it)
and how an embedding program takes part in it (:class:`EngineHooks`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from jurybench.engine._plan import Task
    from jurybench.engine._writer import RunEnd


@dataclass
class EngineHooks:
    """How an embedding program (the HTTP service, a notebook) takes part in a run: callables
    the engine calls and a lock it holds. None of it changes what the run asks or stores."""

    # Every finished call's row (the service's live progress), and each task's status.
    on_call: Callable[[dict[str, object]], None] | None = None
    on_result: Callable[[Task, str], None] | None = None
    # (calls in the run, calls reused from the store), once planned.
    on_plan: Callable[[int, int], None] | None = None
    # Asked between calls: True stops the run early ('interrupted'; the same run resumes later).
    stop: Callable[[], bool] | None = None
    # Held around store writes when several threads share one connection.
    store_lock: AbstractContextManager[object] | None = None
    # A writer for the run's last answers and status (a RunEnd), committed with other runs'
    # (the service's group writer); on a held connection only.
    end_run: Callable[[RunEnd], None] | None = None


@dataclass
class EngineOptions:
    """What a run is set to do (plain values, the same whoever starts it), and its ``hooks``."""

    concurrency: int = 16
    retries: int = 4
    retry_base_s: float = 1.0
    retry_max_s: float = 60.0
    progress: bool = False  # library calls are quiet; the CLI turns the bar on in a terminal
    # How long a call may keep waiting out rate limits (429s) before it counts as an error.
    give_up_after_s: float = 3600.0
    # Plan only: count calls, tokens and cost; call nothing, write nothing (score --plan).
    plan_only: bool = False
    # A budget in USD for the run's whole spend (earlier invocations included): no call starts
    # that could pass it; the run ends 'stopped_budget' and a higher budget resumes it.
    max_cost: float | None = None
    # Send calls through the providers' batch APIs (score --batch); poll open batches this often.
    batch: bool = False
    batch_poll_s: float = 30.0
    # Pairwise designs: both orders (symmetrized), one (item_a shown first), or random (one order
    # per pair drawn from order_seed and the pair's id: reproducible, stored with the run).
    orders: str = "both"
    order_seed: int = 0
    # Where the calls are made: in this process (local) or spread over a Ray cluster's workers
    # (ray: at ``address``, or a Ray started here; ``workers`` of them, by default one a CPU).
    executor: str = "local"
    address: str | None = None
    workers: int | None = None
    # Conversations longer than a juror's context are cut to it (rubric/_transcript.py); False:
    # a run with any such subject is refused instead (score --no-elide).
    elide: bool = True
    hooks: EngineHooks = field(default_factory=EngineHooks)
