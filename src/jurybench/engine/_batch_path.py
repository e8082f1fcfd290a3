"""The batch request path (``score --batch``): the run's calls go to providers in batches,
are polled until they end and their answers take the same way into the store as
synchronous ones (:class:`~jurybench.engine._call_state.CallState`).

Durability: a batch is written to the store (``batches``, ``batch_requests``) *before* it is
sent and updated with the provider's id once accepted. A process killed at any point is
picked up by running the same command again: open batches holding the run's calls are polled,
not sent again; a batch written but never acknowledged is looked up at the provider by the id
in its metadata (OpenAI) and sent only if the provider does not have it. Results are stored
and their requests marked collected in one transaction, together with the follow-up batch
(re-asks, calls re-planned from an expired batch) that comes of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from jurybench.engine._call_state import CallState, backoff_s, default_reasks
from jurybench.jurors import (
    TERMINAL,
    BatchClient,
    BatchStatus,
    Completion,
    JurorUnusable,
    PermanentError,
    Result,
    TransientError,
    batch_price,
    price_of,
    priced,
    request_body,
    split,
)
from jurybench.redact import redact

if TYPE_CHECKING:
    from collections.abc import Awaitable, Iterator

    from duckdb import DuckDBPyConnection as Connection

    from jurybench.engine._budget import Budget
    from jurybench.engine._options import EngineOptions
    from jurybench.engine._plan import Task
    from jurybench.engine._progress import RunProgress
    from jurybench.engine._writer import _Held, _Released, _Writer
    from jurybench.jurors import Backend
    from jurybench.rubric import AnyRubric, Outcome

Record = Callable[["Task", dict[str, object], "Outcome | None"], None]  # (task, call row, outcome)


T = TypeVar("T")


@dataclass
class _Batch:
    batch_id: str
    juror_key: str
    round: int
    provider_batch_id: str | None
    status: str
    created: float
    keys: list[str] = field(default_factory=list)
    adopted: bool = False  # found in the store: it may have reached the provider unrecorded


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class BatchRunner:
    def __init__(
        self,
        run_id: str,
        rubric: AnyRubric,
        tasks: Sequence[Task],
        backends: dict[str, Backend],
        access: _Held | _Released,
        writer: _Writer,
        progress: RunProgress,
        options: EngineOptions,
        record: Record,
        unusable: dict[str, str],
        budget: Budget | None = None,
    ) -> None:
        self.run_id, self.rubric, self.access, self.writer = run_id, rubric, access, writer
        self.progress, self.options, self.record, self.unusable, self.budget = (
            progress,
            options,
            record,
            unusable,
            budget,
        )
        self.specs = {t.juror.key: t.juror for t in tasks}
        self.states: dict[str, CallState] = {}
        self.tries: Counter[str] = Counter()  # batches a call has been in without an answer
        self.reserved: dict[str, float] = {}
        for task in tasks:
            reasks = int(task.juror.option("parse_retries", default_reasks(rubric, False)))
            mode = getattr(backends.get(task.juror.key), "mode", None)
            self.states[task.call_key] = CallState(task, rubric, reasks, mode=mode)
        self.clients = {key: BatchClient.for_juror(spec) for key, spec in self.specs.items()}
        self.kwargs = {key: dict(getattr(backends.get(key), "kwargs", {}) or {}) for key in self.specs}
        self.open: dict[str, _Batch] = {}
        self.counts: Counter[str] = Counter()  # batches by status, for the progress line
        self.rng = random.Random()
        self.prices = {key: batch_price(price_of(spec)) for key, spec in self.specs.items()}

    # -- store ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def _con(self) -> Iterator[Connection]:
        from jurybench.config import lock_wait_s

        with self.access.open(wait_s=lock_wait_s()) as con:
            yield con

    def _adopt(self) -> list[_Batch]:
        """Open batches (in the store) holding calls of this run, with their requests' state."""
        import pyarrow as pa

        keys = pa.table({"call_key": pa.array(list(self.states), pa.string())})
        with self._con() as con:
            con.register("_jb_todo", keys)
            try:
                rows = con.execute(
                    """SELECT b.batch_id, b.juror_key, b.round, b.provider_batch_id, b.status, epoch(b.created_at),
                              r.call_key, r.messages, r.prior
                       FROM batches b JOIN batch_requests r USING (batch_id)
                       WHERE b.collected_at IS NULL AND NOT r.collected
                         AND r.call_key IN (SELECT call_key FROM _jb_todo)
                       ORDER BY b.created_at"""
                ).fetchall()
            finally:
                con.unregister("_jb_todo")
        batches: dict[str, _Batch] = {}
        for bid, juror, rnd, pid, status, created, key, messages, prior in rows:
            batch = batches.setdefault(bid, _Batch(bid, juror, rnd, pid, status, float(created), adopted=True))
            state = self.states[key]
            if state.settled or any(key in b.keys for b in batches.values() if b is not batch):
                continue
            batch.keys.append(key)
            if messages:
                state.messages = json.loads(messages)
            if prior:
                self._restore(state, json.loads(prior))
        return [b for b in batches.values() if b.keys]

    @staticmethod
    def _prior(state: CallState, tries: int) -> str:
        return json.dumps(
            {
                "attempts": state.attempts,
                "reasks": state.reasks,
                "tokens_in": state.tokens_in,
                "tokens_out": state.tokens_out,
                "cost": state.cost,
                "latency_ms": state.latency_ms,
                "tries": tries,
            }
        )

    def _restore(self, state: CallState, prior: dict[str, Any]) -> None:
        state.attempts, state.reasks = int(prior["attempts"]), int(prior["reasks"])
        state.tokens_in, state.tokens_out = int(prior["tokens_in"]), int(prior["tokens_out"])
        state.cost, state.latency_ms = prior.get("cost"), float(prior.get("latency_ms") or 0.0)
        self.tries[state.task.call_key] = int(prior.get("tries") or 0)

    def _write_batches(self, con: Connection, juror_key: str, rnd: int, states: list[CallState]) -> list[_Batch]:
        """Rows for new batches of these calls (status submitting), split to the provider's limits."""
        import pyarrow as pa

        spec = self.specs[juror_key]
        client = self.clients[juror_key]
        max_requests, max_bytes = client.limits
        max_requests = min(max_requests, int(spec.option("batch_size", max_requests)))
        bodies = [(s.task.call_key, self._body(s)) for s in states]
        by_key = {s.task.call_key: s for s in states}
        made = []
        for part in split(bodies, max_requests, max_bytes):
            batch = _Batch(f"jb-{uuid.uuid4().hex[:16]}", juror_key, rnd, None, "submitting", _now().timestamp())
            batch.keys = [key for key, _ in part]
            con.execute(
                "INSERT INTO batches (batch_id, protocol, api_base, juror_key, run_id, round, status, n_requests, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, 'submitting', ?, ?)",
                [
                    batch.batch_id,
                    client.protocol,
                    spec.options.get("api_base"),
                    juror_key,
                    self.run_id,
                    rnd,
                    len(part),
                    datetime.fromtimestamp(batch.created, UTC).replace(tzinfo=None),
                ],
            )
            later = rnd > 0
            rows = pa.table(
                {
                    "batch_id": [batch.batch_id] * len(part),
                    "call_key": batch.keys,
                    "messages": [
                        json.dumps(by_key[k].messages, ensure_ascii=False) if later else None for k in batch.keys
                    ],
                    "prior": [self._prior(by_key[k], self.tries[k]) if later else None for k in batch.keys],
                }
            )
            con.register("_jb_requests", rows)
            try:
                con.execute(
                    "INSERT INTO batch_requests (batch_id, call_key, messages, prior) "
                    "SELECT batch_id, call_key, messages, prior FROM _jb_requests"
                )
            finally:
                con.unregister("_jb_requests")
            made.append(batch)
        return made

    def _body(self, state: CallState) -> dict[str, object]:
        spec = state.task.juror
        client = self.clients[spec.key]
        return client.request_line(
            state.task.call_key, request_body(client.protocol, spec, state.messages, self.kwargs[spec.key])
        )

    # -- provider --------------------------------------------------------------------------
    async def _retrying(self, what: Callable[[], Awaitable[T]]) -> T:
        """A batch API request, retried with backoff on transient errors (the run's retry policy)."""
        failures = 0
        while True:
            try:
                return await what()
            except TransientError:
                failures += 1
                if failures > self.options.retries:
                    raise
                await asyncio.sleep(backoff_s(self.options, failures, self.rng))

    async def _send(self, batch: _Batch) -> None:
        """Send a batch written as submitting (looking for it at the provider first if it may
        have been sent before the process died)."""
        client = self.clients[batch.juror_key]
        pid = None
        if batch.adopted:
            with self._con() as con:
                claimed = {
                    str(r[0])
                    for r in con.execute(
                        "SELECT provider_batch_id FROM batches WHERE provider_batch_id IS NOT NULL"
                    ).fetchall()
                }
            pid = await self._retrying(
                lambda: client.find(batch.batch_id, batch.created, keys=batch.keys, claimed=claimed)
            )
        file_id = None
        if pid is None:
            lines = [self._body(self.states[key]) for key in batch.keys]
            pid, file_id = await self._retrying(lambda: client.submit(lines, batch.batch_id))
        batch.provider_batch_id, batch.status = pid, "validating"
        with self._con() as con:
            con.execute(
                "UPDATE batches SET provider_batch_id = ?, status = 'validating', submitted_at = ?, "
                "input_file_id = coalesce(?, input_file_id) WHERE batch_id = ?",
                [pid, _now(), file_id, batch.batch_id],
            )
        self.open[batch.batch_id] = batch

    async def _send_all(self, batches: list[_Batch]) -> None:
        for batch in batches:
            try:
                await self._send(batch)
            except (JurorUnusable, PermanentError, TransientError) as exc:
                self._fail_batch(batch, exc)

    def _fail_batch(self, batch: _Batch, exc: Exception) -> None:
        """A batch that could not be sent: its calls end in error (re-running tries them again)."""
        spec = self.specs[batch.juror_key]
        if isinstance(exc, JurorUnusable):
            self.unusable.setdefault(
                spec.key, redact(f"juror '{spec.display_name}' ({spec.model}): {exc}; {exc.advice}.")
            )
        for key in batch.keys:
            state = self.states[key]
            if not state.settled:
                state.failed(f"batch not sent: {exc}")
                self._emit(state)
        with self._con() as con:
            self.writer.flush(con)
            con.execute(
                "UPDATE batches SET status = 'failed', error = ?, collected_at = ? WHERE batch_id = ?",
                [redact(str(exc)), _now(), batch.batch_id],
            )
            con.execute("UPDATE batch_requests SET collected = true WHERE batch_id = ?", [batch.batch_id])

    # -- results ---------------------------------------------------------------------------
    def _cost(self, juror_key: str) -> Callable[[Completion], float | None]:
        price = self.prices[juror_key]

        def cost(c: Completion) -> float | None:
            if price is None or c.prompt_tokens is None or c.completion_tokens is None:
                return None
            return priced(c, price)

        return cost

    def _emit(self, state: CallState) -> None:
        call, outcome = state.row()
        reserved = self.reserved.pop(state.task.call_key, 0.0)
        if self.budget is not None:
            self.budget.settle(reserved, call["cost_usd"] if call["cost_usd"] is not None else 0.0)
        self.record(state.task, call, outcome)

    async def _collect(self, batch: _Batch, status: BatchStatus) -> list[_Batch]:
        """Store a finished batch's answers; the follow-up batches it needs (written, not sent)."""
        client = self.clients[batch.juror_key]
        retries = int(self.specs[batch.juror_key].option("retries", self.options.retries))
        results: list[Result] = []
        if status.output or status.errors:
            results = await self._retrying(lambda: client.results(status, self._cost(batch.juror_key)))
        mine = set(batch.keys)
        again: list[CallState] = []
        seen: set[str] = set()
        for result in results:
            state = self.states.get(result.call_key)
            if result.call_key not in mine or state is None or state.settled or result.call_key in seen:
                continue
            seen.add(result.call_key)
            state.attempts += 1
            if result.completion is not None:
                if state.answered(result.completion):
                    self._emit(state)
                else:
                    again.append(state)  # a re-ask goes into the next batch
            elif result.retryable and self.tries[result.call_key] < retries:
                self.tries[result.call_key] += 1
                again.append(state)
            else:
                state.failed(result.error or "batch request failed")
                self._emit(state)
        for key in batch.keys:
            state = self.states[key]
            if key in seen or state.settled:
                continue
            if status.status == "failed":
                state.failed(f"batch {batch.provider_batch_id} failed: {status.message or 'no reason given'}")
                self._emit(state)
            elif status.status == "cancelled":
                self.progress.stopped = True  # not made: the run ends interrupted and a re-run plans it
            elif self.tries[key] < retries:  # expired before it was answered: into the next batch
                self.tries[key] += 1
                again.append(state)
            else:
                state.failed(f"no answer after {self.tries[key] + 1} batches (the last {status.status})")
                self._emit(state)
        made: list[_Batch] = []
        with self._con() as con:
            self.writer.flush(con)
            by_juror: dict[str, list[CallState]] = {}
            for state in again:
                by_juror.setdefault(state.task.juror.key, []).append(state)
            for juror_key, states in by_juror.items():
                made += self._write_batches(con, juror_key, batch.round + 1, states)
            con.execute(
                "UPDATE batches SET status = ?, n_completed = ?, n_failed = ?, finished_at = coalesce(finished_at, ?), "
                "error = ? WHERE batch_id = ?",
                [
                    status.status,
                    status.counts.get("completed", 0),
                    status.counts.get("failed", 0),
                    _now(),
                    status.message,
                    batch.batch_id,
                ],
            )
            import pyarrow as pa

            con.register("_jb_done", pa.table({"call_key": pa.array(batch.keys, pa.string())}))
            try:
                con.execute(
                    "UPDATE batch_requests SET collected = true WHERE batch_id = ? AND call_key IN "
                    "(SELECT call_key FROM _jb_done)",
                    [batch.batch_id],
                )
            finally:
                con.unregister("_jb_done")
            con.execute(
                "UPDATE batches SET collected_at = ? WHERE batch_id = ? AND NOT EXISTS "
                "(SELECT 1 FROM batch_requests r WHERE r.batch_id = ? AND NOT r.collected)",
                [_now(), batch.batch_id, batch.batch_id],
            )
        return made

    # -- the loop ----------------------------------------------------------------------------
    def _reserve(self, states: list[CallState]) -> list[CallState]:
        """The calls the budget lets go (each reserved at its expected batch cost)."""
        if self.budget is None:
            return states
        allowed = []
        for state in states:
            expected = self.budget.expected(state.task, batch=True)
            if not self.budget.reserve(expected):
                break
            self.reserved[state.task.call_key] = expected
            allowed.append(state)
        return allowed

    def _note(self) -> None:
        counts = Counter(b.status for b in self.open.values())
        counts["collected"] = self.counts["collected"]
        text = " · ".join(f"{n} {s.replace('_', ' ')}" for s, n in counts.items() if n)
        self.progress.note(f"batches: {text}" if text else "")

    async def run(self) -> None:
        try:
            await self._run()
        finally:
            for client in self.clients.values():
                with contextlib.suppress(Exception):
                    await client.close()

    async def _run(self) -> None:
        adopted = self._adopt()
        taken = {key for b in adopted for key in b.keys}
        for batch in adopted:
            for key in batch.keys:  # already paid for (or on its way): counted against the budget
                if self.budget is not None:
                    expected = self.budget.expected(self.states[key].task, batch=True)
                    self.budget.reserve_anyway(expected)
                    self.reserved[key] = expected
            if batch.provider_batch_id is None:
                await self._send_all([batch])
            else:
                self.open[batch.batch_id] = batch
        fresh: dict[str, list[CallState]] = {}
        for key, state in self.states.items():
            if key not in taken:
                fresh.setdefault(state.task.juror.key, []).append(state)
        to_send: list[_Batch] = []
        with self._con() as con:
            for juror_key, states in fresh.items():
                if juror_key in self.unusable:
                    continue
                allowed = self._reserve(states)
                if allowed:
                    to_send += self._write_batches(con, juror_key, 0, allowed)
        await self._send_all(to_send)
        poll_s = float(self.options.batch_poll_s)
        while self.open:
            self._note()
            if self.options.hooks.stop is not None and self.options.hooks.stop():
                self.progress.stopped = True
                return
            await asyncio.sleep(poll_s)
            for batch in list(self.open.values()):
                client = self.clients[batch.juror_key]
                try:
                    assert batch.provider_batch_id is not None
                    pid = batch.provider_batch_id
                    status = await self._retrying(lambda pid=pid, client=client: client.status(pid))  # type: ignore[misc]
                except (TransientError, PermanentError) as exc:
                    self.progress.note(f"batch {batch.provider_batch_id}: {redact(str(exc))} (polling again)")
                    continue
                if status.status != batch.status:
                    batch.status = status.status
                    with self._con() as con:
                        con.execute(
                            "UPDATE batches SET status = ?, n_completed = ?, n_failed = ? WHERE batch_id = ?",
                            [
                                status.status,
                                status.counts.get("completed", 0),
                                status.counts.get("failed", 0),
                                batch.batch_id,
                            ],
                        )
                if status.status in TERMINAL:
                    follow = await self._collect(batch, status)
                    del self.open[batch.batch_id]
                    self.counts["collected"] += 1
                    await self._send_all(follow)
        self._note()  # calls a budget held back are left for a higher one
