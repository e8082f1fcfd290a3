"""Making the calls of a run: the progress bar, rate limits, the engine's options, calls shared
within the process, and the concurrent loop that asks, retries, parses and records."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import threading
import time
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from jurybench.engine._budget import Budget
from jurybench.engine._call_state import CallState, backoff_s, default_reasks
from jurybench.engine._load import STARTS_PER_PASS, Turns, Window
from jurybench.engine._options import EngineOptions
from jurybench.engine._plan import Task
from jurybench.engine._progress import RunProgress
from jurybench.engine._writer import Batch, _Writer
from jurybench.jurors import (
    Backend,
    Completion,
    EndpointLimiter,
    JurorPace,
    JurorSpec,
    JurorUnusable,
    LimiterStopped,
    LimiterTimeout,
    PermanentError,
    RateLimited,
    Slot,
    TransientError,
    estimate_tokens,
    is_offline,
    kind_of,
)
from jurybench.redact import redact
from jurybench.rubric import (
    AnyRubric,
    Outcome,
)


class Elsewhere(Protocol):
    """What makes a run's calls outside this process (engine/_spread.py's ``Spread`` over Ray
    workers): ``run(queues, record)`` makes the calls of the queues (by provider) and gives each
    answer another run of this process made for it to ``record`` (task, row, outcome)."""

    async def run(
        self, queues: dict[str, deque[Task]], record: Callable[[Task, dict[str, Any], Any], None]
    ) -> None: ...


class _InFlight:
    """Call keys being answered in this process right now, shared by every run in it.

    Two service jobs (or two library calls in threads) over the same subjects plan the same
    call keys. The first to start a call makes it; the others wait for its answer and take
    it as their own (no second request, nothing paid twice). A failed call is not shared:
    the waiter then makes its own attempt. Each key held has a box that its answer (or None)
    is put in when it settles."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: dict[str, list[object]] = {}
        self.waited: set[str] = set()  # keys some other run waits for (their answers are kept)

    def claim(self, key: str) -> tuple[bool, list[Any]]:
        return self.claim_many([key])[0]

    def claim_many(self, keys: list[str]) -> list[tuple[bool, list[Any]]]:
        """Each key: (True, its new box) when the caller now makes the call, (False, the box
        its maker's answer goes in) when another run is making it."""
        out: list[tuple[bool, list[Any]]] = []
        with self.lock:
            for key in keys:
                box = self.calls.get(key)
                if box is None:
                    box = self.calls[key] = []
                    out.append((True, box))
                else:
                    self.waited.add(key)
                    out.append((False, box))
        return out

    def release(self, key: str, result: object) -> None:
        self.release_many([key], lambda _: result)

    def release_many(self, keys: list[str], result: Callable[[int], object]) -> None:
        """The calls of ``keys`` settled: ``result(i)``, the answer of ``keys[i]``, is asked for
        only when another run waits for it (None: not shared, the waiter makes its own)."""
        with self.lock:
            boxes = [self.calls.pop(key) for key in keys]
            waited = [i for i, key in enumerate(keys) if key in self.waited] if self.waited else []
            self.waited.difference_update(keys[i] for i in waited)
        answers = dict.fromkeys(waited)
        for i in waited:
            answers[i] = result(i)
        for i, box in enumerate(boxes):
            box.append(answers.get(i))


_IN_FLIGHT = _InFlight()


async def _claimed(
    key: str, make: Callable[[], Awaitable[tuple[dict[str, object], Outcome | None]]]
) -> tuple[dict[str, Any], Any]:
    """``make()``'s answer, or another run's answer to the same call key if it is being made."""
    while True:
        owner, box = _IN_FLIGHT.claim(key)
        if owner:
            result: tuple[dict[str, object], Outcome | None] | None = None
            try:
                result = await make()
                return result
            finally:
                _IN_FLIGHT.release(key, result)
        shared = await shared_answer(box)
        if shared is not None:
            return shared


async def shared_answer(box: list[Any]) -> tuple[dict[str, Any], Any] | None:
    """The answer another run put in ``box`` once it settles, marked as shared, or None when it
    cannot be shared (it failed): then the waiter makes the call itself."""
    while not box:
        await asyncio.sleep(0.02)
    shared = box[0]
    if shared is None or shared[0]["status"] == "error":
        return None
    call, outcome = shared
    # The same answer, paid for by the run that asked: whichever run writes the row stores its
    # cost, but only the asking run counts it ("shared"). ``outcome`` is an Outcome, or the
    # judgment rows when the maker's answer came back from a Ray worker as rows.
    return {**call, "shared": True}, outcome


def _release(endpoint: EndpointLimiter, started: float, completion: Completion | None, estimate: float) -> None:
    """A request's end, told to its endpoint: with the answer's limit headers and token use."""
    if completion is None:
        endpoint.done(None, started=started)
        return
    used = (completion.prompt_tokens or 0) + (completion.completion_tokens or 0)
    endpoint.done(
        completion.signals,
        started=started,
        tokens_used=used or None,
        prompt_tokens=completion.prompt_tokens,
        completion_tokens=completion.completion_tokens,
        prompt_estimate=estimate,
    )


async def _run_task(
    task: Task,
    backend: Backend,
    rubric: AnyRubric,
    limiter: JurorPace,
    options: EngineOptions,
    rng: random.Random,
    unusable: dict[str, str],
    turns: Turns | None = None,
) -> tuple[dict[str, object], Outcome | None]:
    """One call over the synchronous request path: the juror's caps and its endpoint's limiter
    before each request, the retry policy after a failed one, and every answer into the call's
    :class:`CallState` (parsing, re-asks). Backends only send a request and say what came back."""
    spec = task.juror
    slot = Slot(task.subject_id, task.order, task.sample_index, task.presentation, task.language)
    retries = int(spec.option("retries", options.retries))
    kind = kind_of(spec.model)
    reasks = int(spec.option("parse_retries", default_reasks(rubric, not kind.reaskable)))
    state = CallState(task, rubric, reasks, mode=backend.mode)
    timeout = float(spec.option("timeout", 60))
    # What the transport says of itself (jurors.Backend): whether it drives instructor's re-asks,
    # and whether it keeps the juror's timeout itself (litellm's does; others are given it here).
    instructor = backend.drives_instructor and spec.params.get("structured") == "instructor"
    own_timeout = backend.own_timeout
    offline = kind.offline  # answered in the process: no request to start
    failures = 0
    endpoint = backend.endpoint
    deadline = time.monotonic() + options.give_up_after_s
    rate_limits = 0
    while not state.settled:
        estimate = estimate_tokens(state.messages)
        try:
            await limiter.wait(estimate, deadline=deadline)
        except LimiterTimeout as exc:
            state.failed(f"rate limited for over {options.give_up_after_s:g} s (--give-up-after): {exc}")
            break
        if endpoint is not None:
            try:
                started = await endpoint.acquire(estimate, deadline=deadline, stop=options.hooks.stop)
            except LimiterTimeout as exc:
                state.failed(f"rate limited for over {options.give_up_after_s:g} s (--give-up-after): {exc}")
                break
        else:
            started = 0.0
        limited = False
        completion: Completion | None = None
        backoff = 0.0  # seconds to wait before trying again after a transient error
        took: float | None = None  # when the request took its turn
        try:
            if turns is not None and not offline:
                took = await turns.take()  # a request starts on its turn: answers that arrived are read first
            state.attempts += 1
            if instructor:
                completion, answer, failure, n = await backend.complete_with_instructor(state.messages, slot, reasks)
                state.attempts += n - 1  # instructor reports its own total
                state.structured(completion, answer, failure)
            elif own_timeout:  # from the juror's options
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
            await _pause(wait + rng.uniform(0, min(wait, 1.0) * 0.1), options.hooks.stop)
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
            if turns is not None and took is not None:  # its place in the window goes back
                turns.done(spec.key, took, completion is not None)
        if backoff:
            await asyncio.sleep(backoff)
            continue
        if completion is not None and not instructor:
            state.answered(completion)
    return state.row()


def stamp(call: dict[str, Any], task: Task, run_id: str) -> None:
    """What a settled call's row takes from its run: the run, and offline jurors' cost (nothing:
    a known price, not an unknown one)."""
    call["run_id"] = run_id
    if call["cost_usd"] is None and call["status"] != "error" and is_offline(task.juror.model):
        call["cost_usd"] = 0.0


def window(juror: JurorSpec, options: EngineOptions) -> int:
    """A juror's calls in flight at once (its concurrency): in this process, or in each Ray worker."""
    return max(1, int(juror.option("concurrency", options.concurrency)))


def settle_paid(budget: Budget, task: Task, reserved: float, call: dict[str, Any]) -> None:
    """A settled call (its row) into the budget: what it really cost (an unreported cost counts
    as expected; a shared answer or an error with no cost, nothing), its size learned first so
    that waiters re-price."""
    budget.learn(
        task.juror.key, call.get("completion_tokens"), call.get("prompt_tokens"), estimate_tokens(task.messages)
    )
    failed = call["status"] == "error" and call["cost_usd"] is None
    budget.settle(reserved, 0.0 if call.get("shared") or failed else call["cost_usd"])


def counted(task: Task, call: dict[str, Any], progress: RunProgress, options: EngineOptions) -> None:
    """A settled call (its row) counted by the run's progress and told to the hooks."""
    shared = bool(call.get("shared"))
    progress.advance(call["status"], call["cost_usd"], task.juror.display_name, shared=shared)
    if call["status"] == "error":
        progress.errors[(task.juror.display_name, call["reason"] or "unknown")] += 1
    if options.hooks.on_result:
        options.hooks.on_result(task, call["status"])
    if options.hooks.on_call:
        paid = None if shared else call["cost_usd"]
        options.hooks.on_call({**call, "cost_usd": paid, "juror": task.juror.display_name})


async def _off_the_loop(write: Callable[[Batch], bool], batch: Batch, outcome: list[bool]) -> bool:
    """``write(batch)`` on a worker thread. Cancelled meanwhile (the run ends), it still waits
    for the write to finish before giving the cancellation on, so the connection is never used
    by two threads at once; ``outcome`` then holds what the write returned."""
    job = asyncio.ensure_future(asyncio.to_thread(write, batch))
    try:
        result = await asyncio.shield(job)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            outcome.append(await job)
        raise
    outcome.append(result)
    return result


async def _pause(seconds: float, stop: Callable[[], bool] | None) -> None:
    """Sleep, but raise LimiterStopped within a quarter second of ``stop()`` saying so."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        if stop is not None and stop():
            raise LimiterStopped()
        await asyncio.sleep(min(left, 0.25))


async def _execute(
    run_id: str,
    rubric: AnyRubric,
    tasks: list[Task],
    backends: dict[str, Backend],
    writer: _Writer,
    progress: RunProgress,
    options: EngineOptions,
    unusable: dict[str, str],
    budget: Budget | None = None,
    limiters: dict[str, JurorPace] | None = None,
    elsewhere: Elsewhere | None = None,
) -> None:
    """Make the calls of ``tasks`` (concurrently, under the budget) and record each answer as it
    settles. On Ray (``elsewhere``) each call is made by one of the run's workers; everything
    else (admission under the budget, recording, writing) stays in this process."""
    batched: list[Task] = []
    if options.batch:  # jurors with a batch API go that way; offline ones answer at once
        from jurybench.jurors import protocol_of

        batched = [t for t in tasks if protocol_of(t.juror) is not None]
        tasks = [t for t in tasks if protocol_of(t.juror) is None]
    by_provider: dict[str, deque[Task]] = defaultdict(deque)
    for task in tasks:
        by_provider[task.juror.provider].append(task)
    if limiters is None:
        limiters = {}
    for spec in {t.juror.key: t.juror for t in tasks}.values():
        if spec.key not in limiters:
            limiters[spec.key] = JurorPace(spec.option("rpm", None), spec.option("tpm", None))
    rng = random.Random()
    from jurybench.config import backpressure

    # Requests start on their turn, a few a pass of the loop, so answers are read between passes.
    turns = Turns(Window(), per_pass=STARTS_PER_PASS) if backpressure() else None

    def record(task: Task, call: dict[str, Any], outcome: Any) -> None:
        """A settled call, whichever way it was made: into the writer, the progress, the hooks."""
        stamp(call, task, run_id)
        writer.add(task, call, outcome)
        counted(task, call, progress, options)

    async def worker(queue: deque[Task]) -> None:
        while queue:
            if options.hooks.stop is not None and options.hooks.stop():
                progress.stopped = True
                return
            if not await attempt(queue):
                return

    def local(task: Task) -> Callable[[], Awaitable[tuple[dict[str, Any], Outcome | None]]]:
        juror = task.juror.key
        return functools.partial(
            _run_task, task, backends[juror], rubric, limiters[juror], options, rng, unusable, turns
        )

    async def attempt(queue: deque[Task]) -> bool:
        """The next task of the queue, if the budget allows; False when the worker should end."""
        if not queue:
            return True
        task = queue.popleft()
        reserved = 0.0
        if budget is not None:
            admitted = await budget.admit(task)  # waits while calls in flight may free room
            if admitted is None:
                queue.appendleft(task)  # the budget is reached: this call and the rest are not made
                return False
            reserved = admitted
        if task.juror.key in unusable:
            if budget is not None:
                budget.settle(reserved, 0.0)
            progress.skip()
            return True
        answered = False
        try:
            call, outcome = await _claimed(task.call_key, local(task))
            answered = True
        except LimiterStopped:  # asked to stop while waiting for the endpoint: made on resume
            progress.stopped = True
            return False
        finally:
            if budget is not None and not answered:  # interrupted: nothing to count
                budget.settle(reserved, 0.0)
        if budget is not None:
            settle_paid(budget, task, reserved, call)
        record(task, call, outcome)
        return True

    async def flusher() -> None:
        # A batch is written every second, or sooner once it holds writer.batch calls. The write
        # runs on a worker thread (DuckDB lets go of the GIL while it writes), so the loop goes
        # on reading answers and journaling them: a kill -9 during a write loses none of those.
        # With a provider batch in progress (it uses the connection from the loop) it runs inline.
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.05)
            writer.access.poll()
            if writer.n_calls < writer.batch and time.monotonic() - last < writer.every_s:
                continue
            last = time.monotonic()
            batch = writer.take()
            if batched:
                ok = writer.commit(batch)
            else:
                outcome: list[bool] = []
                try:
                    ok = await _off_the_loop(writer.commit, batch, outcome)
                except asyncio.CancelledError:  # the run is ending: the last flush writes what is left
                    if outcome != [True]:
                        writer.put_back(batch)
                    raise
            if ok:
                writer.committed()
            else:
                writer.put_back(batch)

    workers = []
    if elsewhere is not None:  # the calls are made by Ray workers; answers come back as rows
        workers.append(asyncio.create_task(elsewhere.run(by_provider, record)))
    else:
        for queue in by_provider.values():
            n = window(queue[0].juror, options)
            workers += [asyncio.create_task(worker(queue)) for _ in range(n)]
    if batched:
        from jurybench.engine._batch_path import BatchRunner

        runner = BatchRunner(
            run_id, rubric, batched, backends, writer.access, writer, progress, options, record, unusable, budget
        )
        workers.append(asyncio.create_task(runner.run()))
    flush_task = asyncio.create_task(flusher())
    try:
        await asyncio.gather(*workers)
    finally:
        flush_task.cancel()
        for w in workers:
            w.cancel()
        # A store write the flusher has in progress on a worker thread ends before the loop
        # uses the connection again (the next chunk's subjects, the run's last flush): DuckDB
        # refuses one connection used by two threads at once.
        await asyncio.gather(flush_task, return_exceptions=True)
