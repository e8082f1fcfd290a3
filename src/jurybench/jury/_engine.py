"""The scoring engine: a rubric, a jury and a set of subjects in; stored judgments out.

Work is planned as one task per (juror, subject, order, sample). Each task has a
content-addressed key; tasks whose key is already answered in the store are
reused without a call, so re-running a finished or interrupted run is free.
Answers are written in small batched transactions as they arrive, so stopping
the process loses at most the answers of the last second, never a
committed one, and Ctrl-C flushes before it exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import random
import signal
import threading
import time
import uuid
from collections import Counter, defaultdict, deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jurybench.errors import JurybenchError
from jurybench.jury._backends import (
    Backend,
    Completion,
    JurorUnusable,
    LiteLLMBackend,
    PermanentError,
    RateLimited,
    ReplayBackend,
    Slot,
    TransientError,
    check_juror,
    make_backend,
)
from jurybench.jury._call import CallState, backoff_s, default_reasks, generating
from jurybench.jury._cost import OFFLINE, Budget, CostTally, JurorPlan, make_budget, plan_costs
from jurybench.jury._juror import JurorSpec
from jurybench.jury._jury import Jury, as_jury, register_jury
from jurybench.jury._limits import EndpointLimiter, estimate_tokens
from jurybench.jury._parse import Outcome
from jurybench.jury._store_io import (
    CALL_COLUMNS,
    JUDGMENT_COLUMNS,
    clear_stale_calls,
    done_call_keys,
    record_gold_labels,
    register_jurors,
    register_rubric,
    subject_slices,
    subject_table,
    write_batch,
)
from jurybench.redact import redact
from jurybench.rubric import (
    AnyRubric,
    ClassificationRubric,
    InventoryRubric,
    PreferenceRubric,
    is_pairwise,
    presentation,
    render_classification,
    render_inventory,
    render_pairwise,
    render_pointwise,
)
from jurybench.store import StoreBusy, first_row


@dataclass
class Task:
    call_key: str
    juror: JurorSpec
    subject_id: str
    order: str
    sample_index: int
    messages: list[dict[str, str]]
    language: str | None = None
    presentation: str | None = None  # questionnaires: the order and rotation shown (JSON)


# Exit code of ``jurybench score`` when the run ended but some calls ended in error
# (or were not made because their juror was unusable): re-running retries them.
EXIT_CALL_ERRORS = 3
EXIT_BUDGET = 4  # --max-cost reached: the run stopped before every call was made
FINAL_FLUSH_WAIT_S = 600.0


# Subjects planned, checked against the cache and judged at a time: memory stays flat as runs grow.
CHUNK = 2000


@dataclass
class Planned:
    """What a run will do: subject and task counts up front, the tasks themselves a chunk at a time."""

    n_subjects: int
    n_tasks: int
    chunks: Callable[[], Iterator[list[Task]]]
    subject_ids: list[str] | None = None
    write: Callable[[Any], None] | None = None  # what planning records in the store (under the write lock)

    @classmethod
    def of(cls, tasks: list[Task], n_subjects: int) -> Planned:
        return cls(n_subjects, len(tasks), lambda: iter([tasks]), sorted({t.subject_id for t in tasks}))


@dataclass
class RunResult:
    run_id: str
    n_tasks: int
    n_cached: int
    n_called: int
    status_counts: Counter[str] = field(default_factory=Counter)
    cost: CostTally = field(default_factory=CostTally)
    elapsed_s: float = 0.0
    interrupted: bool = False
    n_skipped: int = 0
    # display name -> one line saying why the juror is unusable and what to set
    fatal: dict[str, str] = field(default_factory=dict)
    # (juror display name, reason) -> number of calls that ended in error for it
    error_reasons: Counter[tuple[str, str]] = field(default_factory=Counter)
    status: str = "running"
    noun: str = "judgments"  # what a call produces: judgments, or responses when generating
    plan: list[JurorPlan] = field(default_factory=list)  # --plan: what the run would do and cost
    stopped_budget: bool = False  # --max-cost reached before every call was made
    budget: Budget | None = None

    @property
    def cost_usd(self) -> float | None:
        return self.cost.usd

    @property
    def n_errors(self) -> int:
        return self.status_counts.get("error", 0)

    def summary(self) -> str:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(self.status_counts.items()))
        cost = self.cost.text()
        skipped = f", {self.n_skipped} not made (juror unusable)" if self.n_skipped else ""
        return (
            f"run {self.run_id}: {self.n_tasks} {self.noun} requested, {self.n_cached} from cache, "
            f"{self.n_called} called ({counts or 'none'}){skipped}; {cost}; {self.elapsed_s:.1f}s; {self.status}"
        )

    def error_report(self) -> list[str]:
        """Lines for stderr when calls failed: the count, each unusable juror, reasons with counts."""
        failed = self.n_errors + self.n_skipped
        if not failed:
            return []
        total = self.n_tasks - self.n_cached
        lines = [
            f"{failed} of {total} calls ended in error (run '{self.run_id}' marked {self.status}); "
            "fix the cause and run the same command again to retry only those."
        ]
        lines += [f"  {message}" for message in self.fatal.values()]
        for (juror, reason), n in self.error_reasons.most_common():
            lines.append(f"  {n} × {juror}: {reason}")
        return lines


def call_key(rubric_hash: str, juror_key: str, subject_id: str, order: str, sample: int) -> str:
    raw = f"{rubric_hash}\x1f{juror_key}\x1f{subject_id}\x1f{order}\x1f{sample}"
    return hashlib.sha256(raw.encode()).hexdigest()


def plan_tasks(rubric: AnyRubric, jurors: list[JurorSpec], subjects: list[dict[str, Any]]) -> list[Task]:
    """Every (juror, subject, order, sample); pairwise subjects in both orders. A questionnaire
    is shown in an order and rotation drawn from each call's key, so every call has its own."""
    tasks = []
    pairwise = is_pairwise(rubric)
    rubric_hash = rubric.content_hash
    for subject in subjects:
        if isinstance(rubric, InventoryRubric):
            sid = subject["item_id"]
            for juror in jurors:
                for sample in range(juror.samples):
                    key = call_key(rubric_hash, juror.key, sid, "", sample)
                    shown = presentation(rubric, key)
                    messages = render_inventory(rubric, subject, shown)
                    tasks.append(Task(key, juror, sid, "", sample, messages, subject.get("language"), shown.as_json()))
            continue
        if pairwise:
            sid = subject["pair_id"]
            rendered = [(o, render_pairwise(rubric, subject, o)) for o in ("AB", "BA")]  # type: ignore[arg-type]
        elif isinstance(rubric, ClassificationRubric):
            sid = subject["item_id"]
            rendered = [("", render_classification(rubric, subject))]
        else:
            sid = subject["item_id"]
            rendered = [("", render_pointwise(rubric, subject))]  # type: ignore[arg-type]
        language = subject.get("language")
        for juror in jurors:
            for order, messages in rendered:
                for sample in range(juror.samples):
                    key = call_key(rubric_hash, juror.key, sid, order, sample)
                    tasks.append(Task(key, juror, sid, order, sample, messages, language))
    return tasks


def validate_jurors(rubric: AnyRubric, jurors: list[JurorSpec], *, need_keys: bool = True) -> None:
    """Each juror's parameters against the rubric and its provider (an empty jury is Jury.resolved's
    to refuse); API keys only when calls will be made (a plan needs none)."""
    keys = Counter(j.key for j in jurors)
    for juror in jurors:
        check_juror(juror, need_key=need_keys)
        if keys[juror.key] > 1:
            raise JurybenchError(
                f"juror '{juror.display_name}' is listed twice with the same parameters.",
                hint="Use samples=N to ask one juror several times.",
            )
        rules = juror.params.get("verdicts")
        if rules is not None:
            if not isinstance(rubric, PreferenceRubric):
                raise JurybenchError(f"juror '{juror.display_name}': verdicts= applies to preference rubrics only.")
            if rules not in rubric.verdict_rules:
                raise JurybenchError(
                    f"juror '{juror.display_name}': rubric '{rubric.name}' has no verdict rule set '{rules}'.",
                    hint=f"Valid: {', '.join(sorted(rubric.verdict_rules)) or 'none defined'}.",
                )
        structured = juror.params.get("structured", "json")
        if structured not in ("json", "instructor"):
            raise JurybenchError(
                f"juror '{juror.display_name}': structured={structured!r} is not valid.",
                hint="Valid: json, instructor.",
            )
        if structured == "instructor" and rubric.kind in ("classification", "inventory"):
            raise JurybenchError(
                f"juror '{juror.display_name}': structured=instructor is for pointwise, pairwise and preference "
                f"rubrics; {rubric.kind} answers are read as text.",
            )


def check_batch_jurors(jurors: list[JurorSpec]) -> None:
    """``--batch``: every juror that calls a provider must have a batch API jurybench speaks."""
    from jurybench.jury._batch import check_batch_juror
    from jurybench.jury._batch_run import batch_protocol_problems

    for spec in jurors:
        check_batch_juror(spec)
    missing = batch_protocol_problems(jurors)
    if missing:
        raise JurybenchError(
            f"--batch: {', '.join(missing)} has no batch API that jurybench speaks (OpenAI files + batches, "
            "Anthropic message batches).",
            hint="If its endpoint implements OpenAI's batch API, add batch_api=openai to the juror; otherwise run "
            "without --batch.",
        )


class _Progress:
    """A rich progress bar: done / total, ETA, calls per second, cost, invalid count."""

    def __init__(self, total: int, cached: int, enabled: bool) -> None:
        self.enabled = enabled and total > 0
        self.counts: Counter[str] = Counter()
        self.errors: Counter[tuple[str, str]] = Counter()
        self.skipped = 0
        self.stopped = False  # asked to stop early (options.stop)
        self.cost = CostTally()
        self.started = time.perf_counter()
        if not self.enabled:
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("[bold]judging"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[rate]:.1f} calls/s"),
            TextColumn("{task.fields[cost]}"),
            TextColumn("invalid {task.fields[invalid]} · refusal {task.fields[refusal]} · error {task.fields[error]}"),
            TextColumn("{task.fields[note]}"),
            transient=False,
        )
        self.task_id = self.progress.add_task(
            "judging",
            total=total,
            completed=cached,
            rate=0.0,
            cost="",
            invalid=0,
            refusal=0,
            error=0,
            note="",
        )
        self.progress.start()

    def advance(self, status: str, cost: float | None, juror: str = "", shared: bool = False) -> None:
        self.counts[status] += 1
        if not shared:  # another run asked and paid for a shared answer
            self.cost.add(juror, cost, status)
        if not self.enabled:
            return
        done = sum(self.counts.values())
        rate = done / max(time.perf_counter() - self.started, 1e-9)
        self.progress.update(
            self.task_id,
            advance=1,
            rate=rate,
            cost=self.cost.text(),
            invalid=self.counts["invalid"],
            refusal=self.counts["refusal"],
            error=self.counts["error"],
        )

    def reuse(self, n: int) -> None:
        """Calls answered before (from the store): counted as done, not made."""
        if self.enabled and n:
            self.progress.update(self.task_id, advance=n)

    def note(self, text: str) -> None:
        """A line of state beside the bar (e.g. the batches submitted, in progress, collected)."""
        if self.enabled:
            self.progress.update(self.task_id, note=text)

    def skip(self) -> None:
        """A task not attempted because its juror is unusable."""
        self.skipped += 1
        if self.enabled:
            self.progress.update(self.task_id, advance=1)

    def stop(self) -> None:
        if self.enabled:
            self.progress.stop()


class _Held:
    """A connection the caller opened and keeps: used as it is for the whole run (under the
    caller's lock, if it gave one, while writing)."""

    def __init__(self, con: Any, lock: Any = None) -> None:
        self.con = con
        self.lock = lock

    @contextlib.contextmanager
    def open(self, wait_s: float) -> Iterator[Any]:
        if self.lock is None:
            yield self.con
            return
        with self.lock:
            yield self.con

    @contextlib.contextmanager
    def read(self, wait_s: float) -> Iterator[Any]:
        """The connection for reading: without the caller's write lock (DuckDB's snapshots keep
        readers and the one writer apart), so other threads' writes do not wait for a plan."""
        yield self.con

    def poll(self) -> None:
        pass

    def close(self) -> None:
        pass


class _Released:
    """The store by path, held for the run but let go when another process asks.

    DuckDB lets one process open a file for writing and then no other process can even
    read it. A process that finds the store busy leaves a release request beside it
    (``<store>.release-request``); between flushes the engine checks for one (a stat),
    closes the file, gives the others a moment, then takes it back, with answers buffered
    meanwhile. Nobody asking costs nothing: no reopen, no extra checkpoint.
    """

    GRACE_S = 1.0

    def __init__(self, path: Path) -> None:
        self.path = path
        self.con: Any = None
        self.released_at = 0.0
        from jurybench.store import release_request

        self.request = release_request(path)

    @contextlib.contextmanager
    def open(self, wait_s: float) -> Iterator[Any]:
        from jurybench.store import open_with_retry

        if self.con is None:
            if time.monotonic() - self.released_at < self.GRACE_S and wait_s < self.GRACE_S:
                raise StoreBusy(f"{self.path} is lent to a reader for a moment")
            self.con = open_with_retry(self.path, read_only=False, config=None, wait_s=wait_s, ask_release=False)
        yield self.con

    def read(self, wait_s: float) -> contextlib.AbstractContextManager[Any]:
        return self.open(wait_s)

    def poll(self) -> None:
        """Let the file go if someone asked (called between writes, never during one)."""
        if self.con is not None and self.request.exists():
            with contextlib.suppress(OSError):
                self.request.unlink()
            self.con.close()
            self.con = None
            self.released_at = time.monotonic()

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None
        with contextlib.suppress(OSError):
            self.request.unlink()


Batch = tuple[dict[str, list[Any]], dict[str, list[Any]], list[str]]


def _columns(spec: list[tuple[str, str]]) -> dict[str, list[Any]]:
    return {name: [] for name, _ in spec}


class _Writer:
    """Buffers results as columns and writes them in batched transactions.

    With a store opened by path, a flush that finds the file lent to a reader puts its
    rows back and tries again at the next flush; the last flush waits.
    """

    def __init__(
        self, access: _Held | _Released, run_id: str, rubric: AnyRubric, batch: int = 1000, every_s: float = 1.0
    ) -> None:
        self.access = access
        self.run_id = run_id
        self.rubric_hash = rubric.content_hash
        self.pairwise = is_pairwise(rubric)
        self.dimensions = rubric.dimensions
        self.batch = batch
        self.every_s = every_s
        self.calls = _columns(CALL_COLUMNS)
        self.judgments = _columns(JUDGMENT_COLUMNS)
        self.cached: list[str] = []

    @property
    def n_calls(self) -> int:
        return len(self.calls["call_key"])

    def add(self, task: Task, call: dict[str, Any], outcome: Outcome | None) -> None:
        for name, values in self.calls.items():
            values.append(call[name])
        if outcome is None:
            return
        j, n = self.judgments, len(self.dimensions)
        if not n:
            return
        scores = outcome.scores or {}
        j["dimension"].extend(self.dimensions)
        j["score"].extend(scores.get(dim) for dim in self.dimensions)
        details = outcome.details
        if details is None:
            j["status"].extend([outcome.status] * n)
            j["reason"].extend([outcome.reason] * n)
            for name in ("label", "raw_value", "shown_position"):
                j[name].extend([None] * n)
        else:
            for dim in self.dimensions:
                d = details[dim]
                j["status"].append(d.status)
                j["reason"].append(d.reason)
                j["label"].append(d.label)
                j["raw_value"].append(d.raw)
                j["shown_position"].append(d.position)
        for name, value in (
            ("call_key", task.call_key), ("rubric_hash", self.rubric_hash), ("juror_key", task.juror.key),
            ("subject_id", task.subject_id), ("presented_order", task.order or None),
            ("sample_index", task.sample_index), ("rationale", outcome.rationale),
        ):  # fmt: skip
            j[name].extend([value] * n)

    def add_cached(self, keys: list[str]) -> None:
        self.cached.extend(keys)

    def take(self) -> Batch:
        """The buffered rows, leaving the buffer empty."""
        batch = (self.calls, self.judgments, self.cached)
        self.calls, self.judgments, self.cached = _columns(CALL_COLUMNS), _columns(JUDGMENT_COLUMNS), []
        return batch

    def put_back(self, batch: Batch) -> None:
        calls, judgments, cached = batch
        for name, values in calls.items():
            self.calls[name][:0] = values
        for name, values in judgments.items():
            self.judgments[name][:0] = values
        self.cached[:0] = cached

    def write(self, batch: Batch, wait_s: float = 0.05) -> bool:
        """Write one batch; False when the store was busy and nothing was written."""
        calls, judgments, cached = batch
        if not (calls["call_key"] or cached):
            return True
        try:
            with self.access.open(wait_s=wait_s) as con:
                write_batch(con, self.run_id, calls, judgments, cached, self.pairwise)
        except StoreBusy:
            return False
        return True

    def flush(self, con: Any) -> None:
        """Write everything buffered into an open connection (setup and the last flush)."""
        calls, judgments, cached = self.take()
        if calls["call_key"] or cached:
            write_batch(con, self.run_id, calls, judgments, cached, self.pairwise)


class _RateLimiter:
    """A juror's own caps: requests spaced to at most ``rpm`` a minute and tokens to at most
    ``tpm`` (None: no cap). Provider limits are the endpoint limiter's (jury/_limits.py)."""

    def __init__(self, rpm: float | None, tpm: float | None = None) -> None:
        self.interval = 60.0 / rpm if rpm else 0.0
        self.seconds_per_token = 60.0 / tpm if tpm else 0.0
        self.next_at = 0.0
        self.next_token_at = 0.0
        self.lock = asyncio.Lock()

    async def wait(self, tokens: float = 0.0) -> None:
        if not self.interval and not self.seconds_per_token:
            return
        async with self.lock:
            now = time.monotonic()
            delay = max(self.next_at - now, self.next_token_at - now if tokens else 0.0)
            self.next_at = max(now, self.next_at) + self.interval
            if self.seconds_per_token and tokens:
                self.next_token_at = max(now, self.next_token_at) + tokens * self.seconds_per_token
        if delay > 0:
            await asyncio.sleep(delay)


@dataclass
class EngineOptions:
    concurrency: int = 16
    retries: int = 4
    retry_base_s: float = 1.0
    retry_max_s: float = 60.0
    progress: bool = False  # library calls are quiet; the CLI turns the bar on in a terminal
    on_result: Callable[[Task, str], None] | None = None
    # For embedding (the HTTP service): every finished call's row, a way to stop early
    # (the run ends 'interrupted' and resumes later), and a lock held around store writes
    # when several threads share one connection.
    on_call: Callable[[dict[str, Any]], None] | None = None
    stop: Callable[[], bool] | None = None
    store_lock: Any = None
    # How long a call may keep waiting out rate limits (429s) before it counts as an error.
    give_up_after_s: float = 3600.0
    # Plan only: count calls, tokens and cost; call nothing, write nothing (score --plan).
    plan_only: bool = False
    # A budget in USD for the run's whole spend (earlier invocations included): no call starts
    # that could pass it; the run ends 'stopped_budget' and a higher budget resumes it.
    max_cost: float | None = None
    on_plan: Callable[[int, int], None] | None = None  # (calls in the run, calls reused from the store)
    # Send calls through the providers' batch APIs (score --batch); poll open batches this often.
    batch: bool = False
    batch_poll_s: float = 30.0


class _InFlight:
    """Call keys being answered in this process right now, shared by every run in it.

    Two service jobs (or two library calls in threads) over the same subjects plan the same
    call keys. The first to start a call makes it; the others wait for its answer and take
    it as their own (no second request, nothing paid twice). A failed call is not shared:
    the waiter then makes its own attempt."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: dict[str, tuple[threading.Event, list[Any]]] = {}

    def claim(self, key: str) -> tuple[bool, threading.Event, list[Any]]:
        with self.lock:
            if key in self.calls:
                event, box = self.calls[key]
                return False, event, box
            event, box = threading.Event(), []
            self.calls[key] = (event, box)
            return True, event, box

    def release(self, key: str, result: Any) -> None:
        with self.lock:
            event, box = self.calls.pop(key)
        box.append(result)
        event.set()


_IN_FLIGHT = _InFlight()


async def _claimed(
    key: str, make: Callable[[], Awaitable[tuple[dict[str, Any], Outcome | None]]]
) -> tuple[dict[str, Any], Outcome | None]:
    """``make()``'s answer, or another run's answer to the same call key if it is being made."""
    while True:
        owner, event, box = _IN_FLIGHT.claim(key)
        if owner:
            result: tuple[dict[str, Any], Outcome | None] | None = None
            try:
                result = await make()
                return result
            finally:
                _IN_FLIGHT.release(key, result)
        while not event.is_set():
            await asyncio.sleep(0.02)
        shared = box[0] if box else None
        if shared is not None and shared[0]["status"] != "error":
            call, outcome = shared
            # The same answer, paid for by the run that asked: whichever run writes the row
            # stores its cost, but only the asking run counts it ("shared").
            return {**call, "shared": True}, outcome


def _release(endpoint: EndpointLimiter, started: float, completion: Completion | None, estimate: float) -> None:
    """A request's end, told to its endpoint: with the answer's limit headers and token use."""
    if completion is None:
        endpoint.done(None, started=started)
        return
    used = (completion.prompt_tokens or 0) + (completion.completion_tokens or 0)
    endpoint.done(completion.signals, started=started, tokens_used=used or None, prompt_tokens=completion.prompt_tokens,
                  completion_tokens=completion.completion_tokens, prompt_estimate=estimate)  # fmt: skip


async def _run_task(
    task: Task,
    backend: Backend,
    rubric: AnyRubric,
    limiter: _RateLimiter,
    options: EngineOptions,
    rng: random.Random,
    unusable: dict[str, str],
) -> tuple[dict[str, Any], Outcome | None]:
    """One call over the synchronous request path: the juror's caps and its endpoint's limiter
    before each request, the retry policy after a failed one, and every answer into the call's
    :class:`CallState` (parsing, re-asks). Backends only send a request and say what came back."""
    spec = task.juror
    slot = Slot(task.subject_id, task.order, task.sample_index, task.presentation, task.language)
    retries = int(spec.option("retries", options.retries))
    reasks = int(spec.option("parse_retries", default_reasks(rubric, isinstance(backend, ReplayBackend))))
    state = CallState(task, rubric, reasks)
    timeout = float(spec.option("timeout", 60))
    use_instructor = spec.params.get("structured") == "instructor" and isinstance(backend, LiteLLMBackend)
    failures = 0
    endpoint: EndpointLimiter | None = getattr(backend, "endpoint", None)
    deadline = time.monotonic() + options.give_up_after_s
    rate_limits = 0
    while not state.settled:
        estimate = estimate_tokens(state.messages)
        await limiter.wait(estimate)
        started = await endpoint.acquire(estimate) if endpoint is not None else 0.0
        limited = False
        completion: Completion | None = None
        backoff = 0.0  # seconds to wait before trying again after a transient error
        try:
            state.attempts += 1
            if use_instructor:
                assert isinstance(backend, LiteLLMBackend)
                completion, answer, failure, n = await backend.complete_with_instructor(state.messages, slot, reasks)
                state.attempts += n - 1  # instructor reports its own total
                state.structured(completion, answer, failure)
            elif isinstance(backend, LiteLLMBackend):  # its own timeout, from the juror's options
                completion = await backend.complete(state.messages, slot)
            else:
                completion = await asyncio.wait_for(backend.complete(state.messages, slot), timeout)
        except RateLimited as exc:
            # Never a failure: the endpoint pauses (as long as the provider asks) and the call
            # goes again, until its deadline.
            limited = True
            rate_limits += 1
            wait = (
                endpoint.rate_limited(exc.signals, started=started, attempt=rate_limits)
                if endpoint
                else 2.0 ** min(rate_limits, 5)
            )
            if time.monotonic() + wait > deadline:
                state.failed(f"rate limited for over {options.give_up_after_s:g} s (--give-up-after): {exc}")
                break
            await asyncio.sleep(wait + rng.uniform(0, min(wait, 1.0) * 0.1))
            continue
        except JurorUnusable as exc:
            state.failed(str(exc))
            unusable.setdefault(spec.key, redact(f"juror '{spec.display_name}' ({spec.model}): {exc}; {exc.advice}."))
            break
        except (TimeoutError, TransientError) as exc:
            failures += 1
            reason = str(exc) or "request timed out"
            if failures > retries:
                state.failed(f"gave up after {failures} tries: {reason}")
                break
            backoff = backoff_s(options, failures, rng)
        except PermanentError as exc:
            state.failed(str(exc))
            break
        finally:
            # Every request the endpoint admitted goes back to it once, before any backoff
            # (a 429 already went back).
            if endpoint is not None and not limited:
                _release(endpoint, started, completion, estimate)
        if backoff:
            await asyncio.sleep(backoff)
            continue
        if completion is not None and not use_instructor:
            state.answered(completion)
    return state.row()


async def _execute(
    run_id: str,
    rubric: AnyRubric,
    tasks: list[Task],
    backends: dict[str, Backend],
    writer: _Writer,
    progress: _Progress,
    options: EngineOptions,
    unusable: dict[str, str],
    budget: Budget | None = None,
    limiters: dict[str, _RateLimiter] | None = None,
) -> None:
    batched: list[Task] = []
    if options.batch:  # jurors with a batch API go that way; offline ones answer at once
        from jurybench.jury._batch import protocol_of

        batched = [t for t in tasks if protocol_of(t.juror) is not None]
        tasks = [t for t in tasks if protocol_of(t.juror) is None]
    by_provider: dict[str, deque[Task]] = defaultdict(deque)
    for task in tasks:
        by_provider[task.juror.provider].append(task)
    if limiters is None:
        limiters = {}
    for spec in {t.juror.key: t.juror for t in tasks}.values():
        if spec.key not in limiters:
            limiters[spec.key] = _RateLimiter(spec.option("rpm", None), spec.option("tpm", None))
    rng = random.Random()

    def record(task: Task, call: dict[str, Any], outcome: Outcome | None) -> None:
        """A settled call, whichever way it was made: into the writer, the progress, the hooks."""
        call["run_id"] = run_id
        if call["cost_usd"] is None and call["status"] != "error" and task.juror.model.startswith(OFFLINE):
            call["cost_usd"] = 0.0  # offline jurors cost nothing: a known price, not an unknown one
        writer.add(task, call, outcome)
        paid = None if call.get("shared") else call["cost_usd"]
        progress.advance(call["status"], call["cost_usd"], task.juror.display_name, shared=bool(call.get("shared")))
        if call["status"] == "error":
            progress.errors[(task.juror.display_name, call["reason"] or "unknown")] += 1
        if options.on_result:
            options.on_result(task, call["status"])
        if options.on_call:
            options.on_call({**call, "cost_usd": paid, "juror": task.juror.display_name})

    async def worker(queue: deque[Task]) -> None:
        while queue:
            if options.stop is not None and options.stop():
                progress.stopped = True
                return
            task = queue[0]
            reserved = budget.expected(task) if budget is not None else 0.0
            if budget is not None and not budget.reserve(reserved):
                return  # the budget would be passed: this call and the rest are not made
            queue.popleft()
            if task.juror.key in unusable:
                if budget is not None:
                    budget.settle(reserved, 0.0)
                progress.skip()
                continue
            answered = False
            try:
                call, outcome = await _claimed(
                task.call_key,
                    functools.partial(
                        _run_task, task, backends[task.juror.key], rubric, limiters[task.juror.key], options, rng,
                        unusable,
                    ),
                )  # fmt: skip
                answered = True
            finally:
                if budget is not None and not answered:  # interrupted: nothing to count
                    budget.settle(reserved, 0.0)
            if budget is not None:  # what it really cost (an unreported cost counts as expected)
                failed = call["status"] == "error" and call["cost_usd"] is None
                budget.settle(reserved, 0.0 if call.get("shared") or failed else call["cost_usd"])
            record(task, call, outcome)

    async def flusher() -> None:
        # A batch is written every second, or sooner once it holds writer.batch calls. Writes
        # run inline: measured against a worker thread, they cost the requests less (the
        # Arrow conversion holds the GIL either way).
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.05)
            writer.access.poll()
            if writer.n_calls < writer.batch and time.monotonic() - last < writer.every_s:
                continue
            last = time.monotonic()
            batch = writer.take()
            if not writer.write(batch):
                writer.put_back(batch)

    workers = []
    for queue in by_provider.values():
        juror = queue[0].juror
        n = int(juror.option("concurrency", options.concurrency))
        workers += [asyncio.create_task(worker(queue)) for _ in range(max(1, n))]
    if batched:
        from jurybench.jury._batch_run import BatchRunner

        runner = BatchRunner(run_id, rubric, batched, backends, writer.access, writer, progress, options, record,
                             unusable, budget)  # fmt: skip
        workers.append(asyncio.create_task(runner.run()))
    flush_task = asyncio.create_task(flusher())
    try:
        await asyncio.gather(*workers)
    finally:
        flush_task.cancel()
        for w in workers:
            w.cancel()


def score(
    store: Any,
    rubric: AnyRubric,
    jury: Jury | list[JurorSpec],
    *,
    where: str | None = None,
    run_id: str | None = None,
    options: EngineOptions | None = None,
    ids: list[str] | None = None,
    after: Callable[[Any, str], None] | None = None,
) -> RunResult:
    """Judge every selected subject with every juror; returns what was done.

    ``store`` is a DuckDB connection (held for the whole run) or the store's path
    (opened for each flush and released in between, so other processes can read
    while the run goes on). Pairwise and preference rubrics judge every pair in
    both orders. Answers already in the store (same rubric, juror, subject, order,
    sample) are reused without a call. ``jury`` is a :class:`Jury` (jurors, weights,
    aggregation, quorum) or a plain list of jurors (the default rule for the rubric). ``ids``
    limits the subjects to these item (pointwise) or pair (pairwise) ids, with ``where`` or not.
    ``after(con, run_id)`` runs in the run's last transaction when it was not interrupted (a
    calibrated jury's scores: :func:`jurybench.calibration.calibration_finisher`).
    """
    options = options or EngineOptions()
    # before anything is opened or written
    validate_jurors(rubric, list(as_jury(jury).jurors), need_keys=not options.plan_only)
    if options.batch:
        check_batch_jurors(list(as_jury(jury).jurors))
    definition = as_jury(jury).resolved(rubric)
    jurors = list(definition.jurors)

    def plan(con: Any) -> Planned:
        table = subject_table(con, rubric, where, ids)
        if not table.num_rows:
            kind = "pairs" if is_pairwise(rubric) else "items"
            raise JurybenchError(
                f"no {kind} to judge{f' where {where}' if where else ''}.",
                hint=f"Import {kind} first ('jurybench {kind} import FILE') or change --where.",
            )
        per_subject = sum(j.samples for j in jurors) * (2 if is_pairwise(rubric) else 1)
        # A batch run sends every call at once (batches take hours: one chunk after another would wait each out).
        size = 1 << 30 if options.batch else CHUNK
        return Planned(
            table.num_rows,
            table.num_rows * per_subject,
            lambda: (plan_tasks(rubric, jurors, rows) for rows in subject_slices(table, size)),
            [str(v) for v in table.column(0).to_pylist()],
            lambda con: record_gold_labels(con, rubric, (row for rows in subject_slices(table, CHUNK) for row in rows)),
        )

    def finish(con: Any, result: RunResult) -> None:
        if after is not None and not result.interrupted:
            after(con, result.run_id)

    return run_job(store, rubric, definition, plan, finish, where=where, run_id=run_id, options=options)


def run_job(
    store: Any,
    rubric: Any,
    definition: Jury,
    plan: Callable[[Any], Planned],
    finish: Callable[[Any, RunResult], None],
    *,
    where: str | None = None,
    run_id: str | None = None,
    options: EngineOptions | None = None,
) -> RunResult:
    """The engine's one loop, for judging and for generating: plan the tasks, reuse answered
    calls, make the others (concurrent, rate-limited, retried), write as answers arrive, and
    finish the run (``finish`` runs in the last transaction's connection, also after Ctrl-C).

    Tasks come a chunk at a time (:class:`Planned`): each chunk is checked against the store,
    its answered calls reused and the rest made before the next chunk is rendered, so memory
    does not grow with the run.

    ``rubric`` is a rubric, or anything with its interface (``content_hash``, ``name``,
    ``version``, ``kind``, ``dimensions``, ``model_dump_json``), such as a generation spec."""
    from jurybench.config import lock_wait_s

    options = options or EngineOptions()
    if isinstance(store, str | Path):
        from jurybench.store import connect

        connect(store).close()  # create or migrate the store first (generation may be its first use)
    access: _Held | _Released = (
        _Released(Path(store)) if isinstance(store, str | Path) else _Held(store, options.store_lock)
    )
    jurors = list(definition.jurors)
    if options.plan_only:
        with access.open(wait_s=lock_wait_s()) as con:
            planned = plan(con)
            chunks = []
            for tasks in planned.chunks():
                chunks.append((tasks, done_call_keys(con, [t.call_key for t in tasks])))
            result = RunResult(run_id or "(new run)", planned.n_tasks, sum(len(d) for _, d in chunks), 0,
                               status="planned")  # fmt: skip
            result.plan = plan_costs(con, rubric, chunks)
        access.close()
        return result
    try:
        with access.read(wait_s=lock_wait_s()) as con:  # planning only reads
            planned = plan(con)
            backends = {j.key: make_backend(j, rubric, con, planned.subject_ids) for j in jurors}
            budget = (
                make_budget(con, options.max_cost, run_id or "", rubric, jurors)
                if options.max_cost is not None
                else None
            )
        with access.open(wait_s=lock_wait_s()) as con:
            if planned.write is not None:
                planned.write(con)
            run_id = _open_run(con, run_id, rubric, definition, where, planned.n_subjects)
    except BaseException:
        access.close()  # a setup error (no subjects, a bad juror) leaves the store free
        raise
    writer = _Writer(access, run_id, rubric)
    started = time.perf_counter()
    progress = _Progress(planned.n_tasks, 0, options.progress)
    result = RunResult(run_id, planned.n_tasks, 0, 0, noun="responses" if generating(rubric) else "judgments")
    limiters = {j.key: _RateLimiter(j.option("rpm", None), j.option("tpm", None)) for j in jurors}
    interrupted = False
    unusable: dict[str, str] = {}

    async def each_chunk() -> None:
        for tasks in planned.chunks():
            with access.open(wait_s=lock_wait_s()) as con:
                done = done_call_keys(con, [t.call_key for t in tasks])
                todo = [t for t in tasks if t.call_key not in done]
                clear_stale_calls(con, [t.call_key for t in todo])
                writer.add_cached([t.call_key for t in tasks if t.call_key in done])
                writer.flush(con)
            result.n_cached += len(done)
            progress.reuse(len(done))
            if options.on_plan:
                options.on_plan(planned.n_tasks, result.n_cached)
            if progress.stopped or (budget is not None and budget.reached):
                continue  # no more calls, but answered ones are still the run's
            await _execute(run_id, rubric, todo, backends, writer, progress, options, unusable, budget, limiters)
            if progress.stopped:
                return

    try:
        _run_async(each_chunk())
    except BaseException:  # Ctrl-C, SIGTERM, or a failure: the run is left to resume, never "finished"
        interrupted = True
        raise
    finally:
        progress.stop()
        result.status_counts = progress.counts
        result.cost = progress.cost
        result.elapsed_s = time.perf_counter() - started
        result.interrupted = interrupted or progress.stopped
        result.stopped_budget = budget is not None and budget.reached and not result.interrupted
        result.budget = budget
        result.n_called = sum(progress.counts.values())
        result.n_skipped = progress.skipped
        result.error_reasons = progress.errors
        names = {j.key: j.display_name for j in jurors}
        result.fatal = {names[key]: message for key, message in unusable.items()}
        result.status = run_status(result)
        # The last flush waits for readers as long as it must: answers are never dropped.
        with contextlib.ExitStack() as stack:
            stack.callback(access.close)
            con = stack.enter_context(access.open(wait_s=FINAL_FLUSH_WAIT_S))
            writer.flush(con)
            con.execute(
                "UPDATE runs SET status = ?, finished_at = ? WHERE run_id = ?",
                [result.status, datetime.now(UTC).replace(tzinfo=None), run_id],
            )
            finish(con, result)
    return result


def run_status(result: RunResult) -> str:
    """interrupted; stopped_budget (--max-cost reached; calls left not made); failed (no call of
    this run was answered); finished_with_errors; finished."""
    if result.interrupted:
        return "interrupted"
    if result.stopped_budget:
        return "stopped_budget"
    failed = result.n_errors + result.n_skipped
    if not failed:
        return "finished"
    answered = result.n_cached + result.n_called - result.n_errors
    return "failed" if answered == 0 else "finished_with_errors"


def _run_async(coro: Any) -> None:
    """asyncio.run, with SIGTERM treated like Ctrl-C so stored work is flushed. Called where an
    event loop is already running (Jupyter, IPython, an async web handler), the engine runs on
    its own loop in a worker thread and this call waits for it."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # no loop here: run on this thread
    else:
        failure: list[BaseException] = []

        def in_thread() -> None:
            try:
                _run_async(coro)
            except BaseException as exc:  # handed to the caller's thread
                failure.append(exc)

        worker = threading.Thread(target=in_thread, name="jurybench-engine")
        worker.start()
        worker.join()
        if failure:
            raise failure[0]
        return

    async def main() -> None:
        loop = asyncio.get_running_loop()
        current = asyncio.current_task()
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not on Windows / off-main thread
            loop.add_signal_handler(signal.SIGTERM, lambda: current and current.cancel())
        try:
            await coro
        except asyncio.CancelledError:
            raise KeyboardInterrupt from None

    asyncio.run(main())


def _open_run(
    con: Any,
    run_id: str | None,
    rubric: AnyRubric,
    jury: Jury,
    where: str | None,
    n: int,
) -> str:
    """Create the run, or resume it with the same rubric and jurors. The jury's rule, quorum,
    weights and names may change on resume: they re-define the run's jury figures, no call."""
    jurors = list(jury.jurors)
    register_rubric(con, rubric)
    register_jurors(con, jurors)
    juror_keys = json.dumps(sorted(j.key for j in jurors))
    if run_id:
        row = first_row(con, "SELECT rubric_hash, jurors FROM runs WHERE run_id = ?", [run_id])
        if row:
            if row[0] != rubric.content_hash or json.dumps(sorted(json.loads(row[1]))) != juror_keys:
                raise JurybenchError(
                    f"run '{run_id}' exists with another rubric or jury.",
                    hint="Choose a new --run name, or repeat the original rubric and jurors to resume.",
                )
            con.execute("UPDATE runs SET status = 'running', finished_at = NULL WHERE run_id = ?", [run_id])
            register_jury(con, run_id, jury)
            return run_id
    else:
        run_id = datetime.now(UTC).strftime("run-%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
    con.execute(
        "INSERT INTO runs (run_id, rubric_hash, mode, jurors, selection, n_subjects, status) "
        "VALUES (?, ?, ?, ?, ?, ?, 'running')",
        [
            run_id,
            rubric.content_hash,
            "pairwise" if is_pairwise(rubric) else ("generation" if generating(rubric) else "pointwise"),
            juror_keys,
            where,
            n,
        ],
    )
    register_jury(con, run_id, jury)
    return run_id
