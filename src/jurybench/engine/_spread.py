"""The driver's side of a run on Ray (``score --executor ray``): the calls handed to the
workers a piece at a time, and their answers taken back as rows.

Each worker has one session for the run: pieces of calls go to it (``take``) and its answers come
back on one stream (``answers``), several at a time. Each juror's provider has a window of calls
in flight in each worker (the juror's ``concurrency``, as in a local run), and a worker holds as
many again waiting for a place, so that its window refills as calls settle, not a round trip to
the driver later. Whenever a worker has room for half a window, the driver admits the next calls
(the budget, a juror found unusable, the run asked to stop), claims their keys against the other
runs of this process and sends them as one piece. The worker makes them with the engine's call
path and, once half a window has settled (or a quarter second after the first), sends their rows
already built (the calls' and judgments' columns and their journal lines): the driver appends
them to its writer and journal, counts them and frees their room. What the driver still does per
call is what a local run decides per call (admission under the budget, progress, hooks);
rendering prompts happens in planning, as locally.

A worker lost mid-run has every call it held put back at the front of the queue and given to a
live worker (:attr:`RayPool.given_again` counts them). Only those it had started were asked: at
most its window in flight and the answers it had not yet sent back (less than half a window). A
call another run of this process is making is not sent: its answer is taken when it settles, or
the call is made here if it failed. A run asked to stop sends no more and has its workers hand
back the calls they had not started.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter, deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jurybench.engine._calls import _IN_FLIGHT, counted, settle_paid, shared_answer, window

if TYPE_CHECKING:
    from jurybench.engine._budget import Budget
    from jurybench.engine._options import EngineOptions
    from jurybench.engine._plan import Task
    from jurybench.engine._progress import RunProgress
    from jurybench.engine._ray import Answered, RayPool, _Seat
    from jurybench.engine._writer import _Writer
    from jurybench.errors import CutShort

Admitted = tuple["Task", float]  # a call admitted, and what the budget reserved for it
Held = tuple["Task", float, str]  # a call a worker holds: what it reserved, its provider


class Spread:
    """One run's calls over a pool's workers (see the module's doc)."""

    def __init__(
        self,
        pool: RayPool,
        run_id: str,
        writer: _Writer,
        progress: RunProgress,
        options: EngineOptions,
        unusable: dict[str, str],
        budget: Budget | None,
    ) -> None:
        self.pool, self.writer, self.progress = pool, writer, progress
        self.options, self.unusable, self.budget = options, unusable, budget
        self.record: Callable[[Task, dict[str, Any], Any], None] = lambda task, call, outcome: None
        self.run_id = run_id
        self.ticket = (run_id, "", False)  # what the calls of one run() go to the workers with
        self.queues: dict[str, deque[Task]] = {}
        self.held: dict[int, dict[int, Held]] = {}  # worker -> the calls it holds, by number
        self.holding: Counter[tuple[int, str]] = Counter()  # (worker, provider) -> calls it holds
        self.numbered = 0
        self.waiting: Counter[str] = Counter()  # provider -> calls waiting for another run's answer
        self.jobs: set[asyncio.Future[None]] = set()  # the workers' streams, and the waiters
        self.failure: BaseException | None = None
        self.changed: asyncio.Event | None = None

    async def run(
        self, by_provider: dict[str, deque[Task]], record: Callable[[Task, dict[str, Any], Any], None]
    ) -> None:
        """Make every call of the queues (or as many as the budget and a stop allow); ``record``
        takes the answers another run of this process made for calls of this one."""
        self.record = record
        # Each run() (a chunk of the run) has sessions of its own in the workers, ended with it.
        self.ticket = (self.run_id, uuid.uuid4().hex, self.writer.journal is not None)
        self.held, self.holding, self.waiting, self.failure = {}, Counter(), Counter(), None
        self.changed = changed = asyncio.Event()
        self.queues = by_provider
        self.pool.on_change = self._wake
        feeders = [asyncio.ensure_future(self._feed(provider, queue)) for provider, queue in by_provider.items()]
        self._start(self.pool.head_watch(self._head_lost))
        try:
            await asyncio.gather(*feeders)
            while self.failure is None and any(self.held.values()):  # answers still to come
                changed.clear()
                await changed.wait()
        finally:
            self.pool.on_change = None
            self.pool.each_live("close", self.ticket[1])
            pending = [*feeders, *self.jobs]
            for job in pending:
                job.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            for seat in self.pool.seats:
                self._give_back(seat.index, list(self.held.get(seat.index, {})))
        if self.failure is not None:
            raise self.failure

    def _head_lost(self, why: str) -> None:
        if self.failure is None:
            self.failure = self._cut_short(why)
        self._wake()

    def _cut_short(self, what: str) -> CutShort:
        """The one line a run on a lost cluster ends with: what was lost, what was kept, how to go on."""
        from jurybench.errors import CutShort

        kept = sum(self.progress.counts.values())
        pool = self.pool
        return CutShort(
            f"the Ray cluster {what}: {pool.lost} of the {pool.started} workers started were lost; the {kept} "
            f"answer{'s' if kept != 1 else ''} received {'were' if kept != 1 else 'was'} kept (run '{self.run_id}')",
            hint="Run the same command again once the cluster is back (or without --executor ray): it asks only "
            "what was not answered.",
        )

    def _wake(self) -> None:
        if self.changed is not None:
            self.changed.set()

    async def _feed(self, provider: str, queue: deque[Task]) -> None:
        """Send the provider's calls to the workers as their windows free up."""
        assert self.changed is not None
        most = window(queue[0].juror, self.options)
        hold, least = 2 * most, max(1, most // 2)
        while self.failure is None:
            self.changed.clear()  # nothing awaited from here to the wait: no wake-up is missed
            if not queue:
                if not self.waiting[provider] and not self._holds(provider):
                    return  # every call answered (a lost worker's would be back in the queue)
                await self.changed.wait()
                continue
            seat = self._seat(provider, hold - min(least, len(queue)))
            if seat is None:  # none live, or none with room
                if self.pool.failure is not None and not any(s.alive for s in self.pool.seats):
                    self.failure = self.failure or self._cut_short(f"lost its workers and {self.pool.failure}")
                    return
                await self.changed.wait()
                continue
            piece, more = await self._admit(queue, hold - self.holding[(seat.index, provider)])
            if piece:
                self._send(seat, provider, piece)
            if not more:  # the calls sent are still answered (those not started, when stopped, come back)
                if self.progress.stopped:
                    self.pool.each_live("halt", self.ticket[1])
                return

    def _holds(self, provider: str) -> int:
        return sum(n for (_, p), n in self.holding.items() if p == provider)

    def _seat(self, provider: str, most: int) -> _Seat | None:
        """The live worker holding the fewest of the provider's calls, if it holds at most ``most``."""
        alive = [s for s in self.pool.seats if s.alive]
        if len(alive) < self.pool.n:
            self.pool.replace()
        if not alive:
            return None
        seat = min(alive, key=lambda s: self.holding[(s.index, provider)])
        return seat if self.holding[(seat.index, provider)] <= most else None

    async def _admit(self, queue: deque[Task], room: int) -> tuple[list[Admitted], bool]:
        """Up to ``room`` calls from the front of the queue, each admitted as a local run admits
        it; False with them when no more may be sent (the run asked to stop, the budget reached)."""
        stop, budget = self.options.hooks.stop, self.budget
        piece: list[Admitted] = []
        while queue and len(piece) < room:
            if stop is not None and stop():
                self.progress.stopped = True
                return piece, False
            task = queue.popleft()
            reserved = 0.0
            if budget is not None:
                if piece and budget.would_wait(task):  # the calls admitted go first: they may free room
                    queue.appendleft(task)
                    break
                admitted = await budget.admit(task)
                if admitted is None:  # the budget is reached: this call and the rest are not made
                    queue.appendleft(task)
                    return piece, False
                reserved = admitted
            if task.juror.key in self.unusable:
                if budget is not None:
                    budget.settle(reserved, 0.0)
                self.progress.skip()
                continue
            piece.append((task, reserved))
        return piece, True

    def _send(self, seat: _Seat, provider: str, piece: list[Admitted]) -> None:
        """The piece's calls to the worker, but those another run is making (their answers are
        waited for). The worker's stream of answers starts with its first piece."""
        numbered: list[tuple[int, Task]] = []
        held = self.held.get(seat.index)
        if held is None:
            held = self.held[seat.index] = {}
            self._start(self._receive(seat))
        for (task, reserved), (owner, box) in zip(
            piece, _IN_FLIGHT.claim_many([t.call_key for t, _ in piece]), strict=True
        ):
            if not owner:
                self.waiting[provider] += 1
                self._start(self._take_shared(provider, (task, reserved), box))
                continue
            self.numbered += 1
            held[self.numbered] = (task, reserved, provider)
            numbered.append((self.numbered, task))
        if numbered:
            self.holding[(seat.index, provider)] += len(numbered)
            self.pool.send(seat, self.ticket, numbered)

    def _start(self, job: Any) -> None:
        future = asyncio.ensure_future(job)
        self.jobs.add(future)
        future.add_done_callback(self.jobs.discard)

    async def _take_shared(self, provider: str, admitted: Admitted, box: list[Any]) -> None:
        """Another run's answer to a call of this one; made here after all when it failed."""
        task, reserved = admitted
        try:
            shared = await shared_answer(box)
            if self.budget is not None:
                self.budget.settle(reserved, 0.0)  # paid by the run that asked
            if shared is None:
                self.queues[provider].appendleft(task)
            else:
                self.record(task, *shared)
        finally:
            self.waiting[provider] -= 1
            self._wake()

    async def _receive(self, seat: _Seat) -> None:
        """A worker's answers, as they come. When the worker is lost, every call it held goes
        back to the front of its provider's queue, for a live worker."""
        ray = self.pool.ray
        try:
            async for ref in self.pool.answers(seat, self.ticket):
                self._answered(await ref, seat)
        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError):
            self.pool.lose(seat)
            held = self.held.get(seat.index, {})
            again = sorted(held)
            self.pool.given_again += len(again)
            tasks = [(held[n][2], held[n][0]) for n in again]
            self._give_back(seat.index, again)
            for provider, task in reversed(tasks):
                self.queues[provider].appendleft(task)
        except BaseException as exc:  # the call path failed in the worker: the run fails with it
            if not isinstance(exc, asyncio.CancelledError) and self.failure is None:
                self.failure = exc.as_instanceof_cause() if isinstance(exc, ray.exceptions.RayTaskError) else exc
                self._wake()
            raise

    def _give_back(self, worker: int, numbers: list[int]) -> None:
        """Calls a worker will not answer: their keys, their room and their budget."""
        held = self.held.get(worker, {})
        gone = [held.pop(n) for n in numbers if n in held]
        if not gone:
            return
        _IN_FLIGHT.release_many([task.call_key for task, _, _ in gone], lambda _: None)
        for _, reserved, provider in gone:
            if self.budget is not None:
                self.budget.settle(reserved, 0.0)
            self.holding[(worker, provider)] -= 1
        self._wake()

    def _answered(self, answered: Answered, seat: _Seat) -> None:
        """A worker's message: its rows into the writer (and journal), each call counted as a
        local run counts it, the keys released, the room freed."""
        rows, held = answered.rows, self.held[seat.index]
        self.writer.extend(rows)
        calls: dict[str, list[Any]] = rows.calls
        budget, hooks = self.budget, self.options.hooks
        keys: list[str] = []
        for position, number in enumerate(answered.numbers):
            task, reserved, provider = held.pop(number)
            self.holding[(seat.index, provider)] -= 1
            keys.append(task.call_key)
            row = (
                rows.row(position)[0]
                if hooks.on_call is not None or budget is not None
                else {name: calls[name][position] for name in ("status", "cost_usd", "reason")}
            )
            if budget is not None:
                settle_paid(budget, task, reserved, row)
            counted(task, row, self.progress, self.options)
        _IN_FLIGHT.release_many(keys, rows.row)
        for key, why in answered.unusable.items():
            self.unusable.setdefault(key, why)
        self._give_back(seat.index, answered.unmade)  # not started before the run asked to stop
        if answered.failures:
            self._give_back(seat.index, [number for number, _ in answered.failures])
            if self.failure is None:
                self.failure = answered.failures[0][1]
        self._wake()
