"""A run's calls spread over a Ray cluster (``score --executor ray``).

The driver (the process that runs ``score``) does what it does in a local run: it plans the
run, checks every chunk against the store, admits each call under the budget, and writes every
answer through the one store writer (DuckDB allows one writing process), journaling it first.
The making of the calls moves: :func:`~jurybench.engine._calls._run_task` (the juror's caps,
the endpoint's limiter, retries, parsing and re-asks) runs in a Ray worker, an actor with its
own event loop and the jurors' transports, which also builds each answer's rows (the calls' and
judgments' columns and the journal's lines). The driver hands the calls to the workers a piece
at a time as their windows free up and appends the rows they send back (engine/_spread.py), so
a run on Ray is stored exactly as a local one (``runs.executor`` says where it ran).

Why actors and not Ray Data's actor pool: a run's calls are not a dataset mapped once. Each is
admitted under a budget that learns from the answers before it, paced by a rate limit shared by
the cluster, written as soon as it settles (a kill loses only what was in flight) and, when its
worker dies, given to another. Ray Data hands results back a block at a time and retries a
block as a whole; actors give each of those directly.

What is shared by the cluster:

- the budget (``--max-cost``) and ``--until``'s looks: the driver admits every call;
- a juror's own ``rpm``/``tpm``: one schedule in a small actor (:class:`PaceKeeper`) that every
  worker asks for its request's turn (a round trip per request, only for capped jurors);
- an endpoint's rate, once its answers state limits or it refuses a request: one schedule in
  the same actor, fed by every worker's answers and 429s (:class:`ClusterEndpoint`);
- the in-flight window of a juror (``concurrency``) applies per worker: N workers keep up to N
  times as many requests open, as N processes would, each starting at its share.

A worker that dies (killed, or its node lost) has the calls it held given to another worker
(a new one is started in its place); of those, the ones it had in flight, whose answers it may
have received but not handed back, are the only ones asked again (:attr:`RayPool.given_again`
counts them all). The driver killed: its workers go with it (Ray ends the actors of a dead
owner) and the same command resumes from the store and the journal, as locally.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import math
import os
import random
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypedDict

from jurybench.errors import JurybenchError
from jurybench.jurors import EndpointLimiter

if TYPE_CHECKING:
    from jurybench.engine._options import EngineOptions
    from jurybench.engine._plan import Task
    from jurybench.engine._writer import Rows
    from jurybench.jurors import Backend, JurorKind, JurorSpec, Signals
    from jurybench.rubric import Outcome

EXECUTORS = ("local", "ray")
READY_WAIT_S = 300.0
# A worker's answers go back in one message once half its window has settled, or this long after
# the first of them: Ray's cost per message (a few hundred microseconds of the driver's CPU) is
# shared by them, and a cluster of many workers against slow providers sends a few messages a
# second each, not one an answer. The worker's window does not wait for the driver meanwhile: it
# holds as many calls again, waiting for a place (engine/_spread.py).
GATHER_S = 0.25
# Environment a worker on another machine needs to reach a provider as the driver does (API keys
# and bases); handed to each worker when it starts, never written anywhere.
_SHARED_ENV_PREFIXES = ("LITELLM_", "JURYBENCH_")


def import_ray() -> Any:
    """Ray, or one line saying how to install it."""
    try:
        import ray
    except ImportError:
        raise JurybenchError(
            "--executor ray needs Ray, which is not installed here.",
            hint="pip install 'jurybench[ray]' (or run without --executor ray).",
        ) from None
    return ray


def check_executor(executor: str, address: str | None, workers: int | None) -> None:
    """The executor's options, before anything is read or written."""
    if executor not in EXECUTORS:
        raise JurybenchError(f"--executor {executor!r} is not an executor.", hint="Use local (the default) or ray.")
    if executor != "ray" and (address is not None or workers is not None):
        given = "--address" if address is not None else "--workers"
        raise JurybenchError(f"{given} spreads calls over Ray workers: give --executor ray with it.")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise JurybenchError(f"--workers must be a whole number >= 1 (got {workers!r}).")
    if address is not None and (not isinstance(address, str) or not address.strip()):
        raise JurybenchError("--address must be a Ray cluster's address, such as 10.0.0.5:6379 or auto.")


def _reachable(address: str) -> None:
    """A cluster address that is host:port (or ray://host:port) answers a connection, else one line."""
    target = address.removeprefix("ray://")
    if address == "auto" or ":" not in target:
        return
    host, _, port = target.rpartition(":")
    try:
        number = int(port)
    except ValueError:
        raise JurybenchError(
            f"--address {address!r}: the port is not a number.", hint="Give host:port, e.g. 10.0.0.5:6379."
        ) from None
    try:
        socket.create_connection((host.strip("[]"), number), timeout=5.0).close()
    except OSError as exc:
        raise JurybenchError(
            f"--address {address}: no Ray cluster answers there ({exc.strerror or exc}).",
            hint="Start one ('ray start --head') or check the address; leave --address out to start Ray here.",
        ) from None


def connect(address: str | None, workers: int | None) -> tuple[Any, bool]:
    """Ray, connected: to ``address``, to a Ray this process already started, or to a new one on
    this machine (shut down with the run). Returns (ray, whether this run started it)."""
    ray = import_ray()
    if ray.is_initialized():
        current = str(ray.get_runtime_context().gcs_address or "")
        if address not in (None, "auto") and address.removeprefix("ray://") != current:
            raise JurybenchError(
                f"--address {address}: this process is already connected to the Ray cluster at {current}.",
                hint="Leave out --address to use that cluster, or run from a process of its own.",
            )
        return ray, False
    quiet: dict[str, Any] = {"logging_level": logging.ERROR, "log_to_driver": False}
    _errors_to_log()
    if address is not None:
        _reachable(address)
        try:
            ray.init(address=address, **quiet)
        except Exception as exc:  # Ray's own errors, reworded
            raise JurybenchError(f"--address {address}: Ray could not connect ({_first_line(exc)}).") from None
        return ray, True
    cpus = max(workers or 0, os.cpu_count() or 1)
    try:
        ray.init(num_cpus=cpus, include_dashboard=False, **quiet)
    except Exception as exc:
        raise JurybenchError(f"--executor ray: Ray could not start here ({_first_line(exc)}).") from None
    return ray, True


def _errors_to_log() -> None:
    """Ray's driver prints the cluster's error messages to stdout, whatever ``log_to_driver``
    says: a node lost prints its raylet's last twenty lines of state, in the middle of a table or
    of ``--format json``. The run reports what it lost in its own words (engine/_spread.py), so
    those messages go to the ``jurybench.ray`` log instead (printed with --verbose). Ray's own
    function is wrapped once; messages that are not the cluster's errors pass through."""
    try:
        from ray._private import worker
    except ImportError:  # another layout of Ray: its messages stay as Ray prints them
        return
    printed = getattr(worker, "print_to_stdstream", None)
    if printed is None or getattr(printed, "jurybench", False):
        return
    log = logging.getLogger("jurybench.ray")

    def to_log(data: dict[str, Any], *args: Any, **kwargs: Any) -> None:
        if data.get("pid") == "raylet":  # the cluster's error messages (listen_error_messages)
            for line in data.get("lines", []):
                log.info("%s", line)
            return
        printed(data, *args, **kwargs)

    to_log.jurybench = True  # type: ignore[attr-defined]
    worker.print_to_stdstream = to_log


class RayOptions(TypedDict):
    """Where a run makes its calls, as ``api.engine_options`` takes it."""

    executor: str
    address: str | None
    workers: int | None


class JobsOnRay:
    """Ray for a server's jobs (``jurybench serve --executor ray``): connected once, as the server
    starts (to the cluster at ``address``, or a Ray started on this machine and shut down with the
    server), and each of the ``slots`` jobs that run at once spreading its calls over ``workers``
    actors of its own (default: the cluster's CPUs shared among the slots). The jobs' drivers stay
    in the server, which plans, admits and writes as for any run. JurybenchError, before anything
    starts, when Ray is missing, the address does not answer, or the cluster has fewer CPUs than
    ``slots * workers``."""

    def __init__(self, address: str | None, workers: int | None, slots: int) -> None:
        check_executor("ray", address, workers)
        self.ray, self.owned = connect(address, None if workers is None else workers * slots)
        cpus = int(self.ray.cluster_resources().get("CPU", 0))
        self.workers = workers or max(1, cpus // slots)
        self.address = address
        if self.workers * slots > cpus:
            self.close()
            raise JurybenchError(
                f"--ray-workers {self.workers} for each of {slots} jobs at once needs {self.workers * slots} CPUs; "
                f"the Ray cluster has {cpus}.",
                hint="Give fewer --ray-workers or fewer --workers (jobs at once), or add nodes to the cluster.",
            )

    def options(self) -> RayOptions:
        """What every job's engine options take (``api.engine_options``)."""
        return {"executor": "ray", "address": self.address, "workers": self.workers}

    def close(self) -> None:
        if self.owned:
            self.ray.shutdown()
            self.owned = False


def _awaited(ref: Any) -> Any:
    """A Ray object ref as a coroutine (asyncio.wait_for takes coroutines and futures)."""

    async def wait() -> Any:
        return await ref

    return wait()


async def _off_the_loop(function: Callable[[], Any]) -> Any:
    """``function()`` in a thread of its own, which the process does not wait for at its end
    (a call blocked on a lost cluster must not keep the driver from exiting)."""
    import threading

    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, failure: BaseException | None) -> None:
        if done.cancelled():
            return
        if failure is not None:
            done.set_exception(failure)
        else:
            done.set_result(value)

    def call() -> None:
        try:
            value, failure = function(), None
        except BaseException as exc:
            value, failure = None, exc
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(settle, value, failure)

    threading.Thread(target=call, name="jurybench-ray-start", daemon=True).start()
    return await done


def _answers(host: str, port: int) -> bool:
    """Whether something takes a connection at host:port within two seconds."""
    try:
        socket.create_connection((host, port), timeout=2.0).close()
    except OSError:
        return False
    return True


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class _KeptEndpoint(EndpointLimiter):
    """An endpoint's rate as the keeper holds it. A worker's report reaches the keeper later than
    a local answer reaches its loop, so every turn given after the reported request's own counts
    as spent against the report (a process reading its own answers counts those of the last
    moment only): a report never frees turns it may not have seen."""

    REPORT_LEAD_S = math.inf
    # A turn is sent a little after its time (the worker's way to the provider, its loop's other
    # work): turns given this long before the reported one's may not have reached the provider
    # when it made its report, and count as spent too.
    LATE_S = 0.1

    def _observe(self, signals: Signals | None, started: float, now: float) -> None:
        super()._observe(signals, started - self.LATE_S, now)


class PaceKeeper:
    """What must be one for the whole cluster (a Ray actor): the jurors' own rpm/tpm schedules,
    and each endpoint's rate as its answers state it (limit headers) or its refusals show it
    (429s), fed by every worker's answers."""

    def __init__(self, caps: Mapping[str, tuple[float | None, float | None]]) -> None:
        from jurybench.jurors import JurorPace

        self.paces = {key: JurorPace(rpm, tpm) for key, (rpm, tpm) in caps.items()}
        self.turns = dict.fromkeys(caps, 0)  # turns given, per juror
        self.first: dict[str, float] = {}
        self.endpoints: dict[str, EndpointLimiter] = {}

    def _endpoint(self, key: str) -> EndpointLimiter:
        found = self.endpoints.get(key)
        if found is None:
            found = self.endpoints[key] = _KeptEndpoint(key)
        return found

    def endpoint_turn(self, key: str, tokens: float, within_s: float) -> tuple[float, float, str | None]:
        """(seconds the request waits for its turn on the endpoint, the turn's time, None), or
        (0, 0, why) when it could not get one within ``within_s``."""
        from jurybench.jurors import LimiterTimeout

        try:
            delay, at = self._endpoint(key).reserve(tokens, within_s=within_s)
        except LimiterTimeout as exc:
            return 0.0, 0.0, str(exc)
        return delay, at, None

    def endpoint_done(self, key: str, signals: Signals | None, at: float | None, usage: tuple[Any, ...]) -> None:
        """A worker's answer from the endpoint (``at``: its turn, None when it had none); ``usage``:
        tokens used, prompt and completion tokens, the prompt's estimate."""
        used, prompt, completion, estimate = usage
        self._endpoint(key).done(
            signals,
            started=time.monotonic() if at is None else at,
            tokens_used=used,
            prompt_tokens=prompt,
            completion_tokens=completion,
            prompt_estimate=estimate,
        )

    def endpoint_limited(self, key: str, signals: Signals | None, at: float | None, attempt: int) -> None:
        """A 429 a worker got: the endpoint pauses for every worker."""
        self._endpoint(key).rate_limited(signals, started=time.monotonic() if at is None else at, attempt=attempt)

    def restart_account(self) -> None:
        """Count turns afresh (a kept pool's next run); the schedules themselves go on."""
        self.turns = dict.fromkeys(self.turns, 0)
        self.first = {}

    def account(self) -> dict[str, tuple[int, float]]:
        """Per juror: the turns given and the seconds from the first turn to the one after the last
        (what the cap allowed for them: at least (turns - 1) intervals)."""
        return {key: (n, self.paces[key].next_at - self.first.get(key, 0.0)) for key, n in self.turns.items() if n}

    def reserve(self, key: str, tokens: float, within_s: float) -> tuple[float, str | None]:
        """(seconds the request waits for its turn, None), or (0, why) when it could not get one
        within ``within_s``."""
        from jurybench.jurors import LimiterTimeout

        try:
            delay = self.paces[key].reserve(tokens, within_s=within_s)
        except LimiterTimeout as exc:
            return 0.0, str(exc)
        self.turns[key] += 1
        self.first.setdefault(key, time.monotonic() + delay)
        return delay, None


class SharedPace:
    """A worker's view of a juror's rpm/tpm: its turn asked of the cluster's :class:`PaceKeeper`."""

    capped = True

    def __init__(self, keeper: Any, key: str) -> None:
        self.keeper, self.key = keeper, key

    async def wait(self, tokens: float = 0.0, *, deadline: float = float("inf")) -> None:
        from jurybench.jurors import LimiterTimeout

        delay, refused = await self.keeper.reserve.remote(self.key, tokens, deadline - time.monotonic())
        if refused is not None:
            raise LimiterTimeout(refused)
        if delay > 0:
            await asyncio.sleep(delay)


class ClusterEndpoint(EndpointLimiter):
    """A worker's limiter for an endpoint every worker of the run calls. Its own window of
    requests in flight starts at the cluster's share of the first window (``START / workers``)
    and grows to its share of the juror's ``concurrency``, so the cluster starts as one process
    would. Once the endpoint's answers state its limits (headers) or it refuses a request (429),
    each request also takes its turn on the endpoint's rate from the run's keeper, which every
    worker's answers and refusals feed: one schedule for the cluster, not one a worker."""

    def __init__(self, key: str, max_concurrency: int, keeper: Any, workers: int) -> None:
        super().__init__(key, max(1, max_concurrency // max(1, workers)))
        self.window = max(1.0, min(self.START / max(1, workers), float(self.max_concurrency)))
        self.keeper = keeper
        # Turns are taken from the keeper once the endpoint states limits or refuses a request
        # (an endpoint that does neither, a vLLM server of one's own, costs no message a call).
        self.shared = False
        self._turns: dict[float, float] = {}  # this worker's start of a request -> its turn at the keeper

    async def acquire(
        self, tokens: float = 0.0, *, deadline: float = float("inf"), stop: Callable[[], bool] | None = None
    ) -> float:
        """A place in this worker's window first, then the request's turn on the endpoint's rate
        (a turn taken by a request still waiting for a place would be counted as sent when it
        was not, and sent later, in a bunch with others)."""
        from jurybench.jurors import LimiterStopped, LimiterTimeout

        started = await super().acquire(tokens, deadline=deadline, stop=stop)
        if not self.shared:
            return started
        try:
            asked = time.monotonic()
            delay, turn, refused = await self.keeper.endpoint_turn.remote(self.key, tokens, deadline - asked)
            if refused is not None:
                raise LimiterTimeout(refused)
            # The turn is ``delay`` after the keeper gave it, about half the round trip after it
            # was asked for (no clock is shared between machines): the turns keep their spacing
            # whatever the answer's way back took.
            until = asked + (time.monotonic() - asked) / 2 + delay
            while (left := until - time.monotonic()) > 0:  # asked to stop while waiting: made on resume
                if stop is not None and stop():
                    raise LimiterStopped()
                await asyncio.sleep(min(left, 0.25))
        except BaseException:
            with self._lock:  # its place goes back: it was never sent
                self.in_flight = max(0, self.in_flight - 1)
            self._wake()
            raise
        self._turns[started] = turn
        return started

    def done(
        self,
        signals: Signals | None,
        *,
        started: float,
        tokens_used: int | None = None,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        prompt_estimate: float = 0.0,
    ) -> None:
        super().done(
            signals,
            started=started,
            tokens_used=tokens_used,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            prompt_estimate=prompt_estimate,
        )
        turn = self._turns.pop(started, None)
        self.shared = self.shared or (signals is not None and signals.any)
        if self.shared:
            usage = (tokens_used, prompt_tokens, completion_tokens, prompt_estimate)
            self.keeper.endpoint_done.remote(self.key, signals, turn, usage)

    def _observe(self, signals: Signals | None, started: float, now: float) -> None:
        """The endpoint's reports go to the keeper, whose turns pace the requests: a worker's own
        reading of them (its requests only, against the whole cluster's budget) would hold its
        turns back and send them later in a bunch."""

    def rate_limited(self, signals: Signals | None, *, started: float, attempt: int) -> float:
        wait = super().rate_limited(signals, started=started, attempt=attempt)
        self.shared = True
        self.keeper.endpoint_limited.remote(self.key, signals, self._turns.pop(started, None), attempt)
        return wait


@dataclass
class WorkerSetup:
    """What every worker is started with (pickled once per worker)."""

    rubric: Any
    jurors: list[JurorSpec]
    shipped: dict[str, Backend]  # transports built by the driver (kinds that read the store)
    kinds: dict[str, JurorKind]  # the jurors' kinds, registered in the worker if it lacks them
    options: EngineOptions  # without hooks (they are the driver's)
    capped: list[str]  # jurors with an rpm/tpm cap: paced by the keeper
    environment: dict[str, str]
    endpoints: bool = False  # some juror calls an endpoint (its limits shared through the keeper)


class CallWorker:
    """One Ray worker: the engine's call path over the calls the driver hands it."""

    def __init__(self, setup: WorkerSetup, keeper: Any, workers: int = 1) -> None:
        from jurybench.jurors import JurorPace, kinds, make_backend, register_kind

        os.environ.update(setup.environment)
        known = {kind.prefix for kind in kinds()}
        for prefix, kind in setup.kinds.items():
            if prefix not in known:
                register_kind(kind)
        self.rubric = setup.rubric
        self.options = setup.options
        self.jurors = setup.jurors
        self.backends: dict[str, Any] = {
            spec.key: setup.shipped.get(spec.key) or make_backend(spec, setup.rubric, None, None)
            for spec in setup.jurors
        }
        self.paces: dict[str, Any] = {
            spec.key: SharedPace(keeper, spec.key) if spec.key in setup.capped else JurorPace(None, None)
            for spec in setup.jurors
        }
        self.rng = random.Random()
        self.gates: dict[str, asyncio.Semaphore] = {}  # per provider: the juror's window in this worker
        self.gather = 1  # answers a message waits for: half the largest window (GATHER_S at most)
        self.sessions: dict[str, _Session] = {}  # the runs this worker makes calls for, by token
        self.turns: Any = None
        self.keeper, self.workers = keeper, workers
        self.endpoints: dict[str, ClusterEndpoint] = {}
        for backend in self.backends.values():
            self._share(backend)

    def _share(self, backend: Any) -> None:
        """A transport's endpoint limiter, as the cluster's (one a worker for each endpoint)."""
        local = getattr(backend, "endpoint", None)
        if local is None or self.keeper is None or isinstance(local, ClusterEndpoint):
            return
        shared = self.endpoints.get(local.key)
        if shared is None:
            shared = self.endpoints[local.key] = ClusterEndpoint(
                local.key, local.max_concurrency, self.keeper, self.workers
            )
        backend.endpoint = shared

    def take(self, shipped: dict[str, Any], rubric: Any = None) -> None:
        """The next run of a kept pool: the transports the driver built for its subjects and, when
        it judges with another rubric (an alignment's variants), that rubric, for which this
        worker builds its other transports again (a transport may send the rubric's schema). An
        endpoint's limiter is kept: its rate and window go on from one run to the next."""
        from jurybench.jurors import make_backend

        if rubric is not None:
            self.rubric = rubric
            for spec in self.jurors:
                if spec.key not in shipped:
                    self.backends[spec.key] = backend = make_backend(spec, rubric, None, None)
                    self._share(backend)
        self.backends.update(shipped)
        for backend in shipped.values():
            self._share(backend)

    def ready(self) -> tuple[int, str]:
        """This worker's process id and Ray node (the driver waits for every worker to answer)."""
        import ray

        return os.getpid(), ray.get_runtime_context().get_node_id()

    def _session(self, ticket: Ticket) -> _Session:
        found = self.sessions.get(ticket[1])
        if found is None:
            found = self.sessions[ticket[1]] = _Session(ticket[0], ticket[2])
        return found

    async def add_calls(self, ticket: Ticket, tasks: list[tuple[int, Task]]) -> None:
        """More calls of the run ``ticket`` names, numbered by the driver: each is made when its
        provider's window in this worker has room, and its answer goes back on :meth:`answers`."""
        session = self._session(ticket)
        for number, task in tasks:
            session.running += 1
            job = asyncio.ensure_future(self._make(session, number, task))
            session.jobs.add(job)
            job.add_done_callback(session.jobs.discard)

    async def _make(self, session: _Session, number: int, task: Task) -> None:
        gate = self.gates.get(task.juror.provider)
        if gate is None:
            from jurybench.engine._calls import window

            most = window(task.juror, self.options)
            gate = self.gates[task.juror.provider] = asyncio.Semaphore(most)
            self.gather = max(self.gather, (most + 1) // 2)
        try:
            async with gate:
                result = None if session.halted else await self.answer(task)
            session.settled.append((number, task, result, None))
        except Exception as exc:  # the call path failed: the driver fails the run with it
            session.settled.append((number, task, None, exc))
        finally:
            session.running -= 1
            session.changed.set()

    async def answers(self, ticket: Ticket) -> AsyncIterator[Answered]:
        """The run's answers in this worker, as they settle: each message once half a window of
        them have (:attr:`gather`), or ``GATHER_S`` after the first, or when no call is left
        running; with their rows built here (journal lines included when the driver journals).
        Ends when the driver closes the run (:meth:`close`) and nothing is left."""
        session = self._session(ticket)
        try:
            while True:
                if not session.settled:
                    if session.closed and not session.running:
                        return
                    session.changed.clear()
                    await session.changed.wait()
                    continue
                until = time.monotonic() + GATHER_S
                while len(session.settled) < self.gather and session.running:
                    left = until - time.monotonic()
                    if left <= 0:
                        break
                    session.changed.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(session.changed.wait(), left)
                settled, session.settled = session.settled, []
                yield self._message(session, settled)
        finally:  # ended, or the stream let go by the driver (a run interrupted): calls not started are not made
            session.halted = True
            self.sessions.pop(ticket[1], None)

    def _message(self, session: _Session, settled: list[Settled]) -> Answered:
        from jurybench.engine._calls import stamp
        from jurybench.engine._writer import RowKeys, Rows

        answered = Answered([], Rows(RowKeys.of(self.rubric), session.journaled), {}, [], [])
        for number, task, result, failure in settled:
            if failure is not None:
                answered.failures.append((number, failure))
            elif result is None:
                answered.unmade.append(number)
            else:
                call, outcome, refused = result
                stamp(call, task, session.run_id)
                answered.rows.add(task, call, outcome)
                answered.numbers.append(number)
                if refused is not None:
                    answered.unusable.setdefault(task.juror.key, refused)
        return answered

    def halt(self, token: str) -> None:
        """The run ``token`` names asked to stop: its calls not started come back unmade."""
        if token in self.sessions:
            self.sessions[token].halted = True

    def close(self, token: str) -> None:
        """The run ``token`` names sends no more: :meth:`answers` ends once nothing is left."""
        if token in self.sessions:
            session = self.sessions[token]
            session.closed = True
            session.changed.set()

    async def answer(self, task: Task) -> tuple[dict[str, Any], Outcome | None, str | None]:
        """One call, made as a local run makes it: its row, its outcome, and the line saying the
        juror is unusable when the call showed it (a missing key, a model that does not exist)."""
        from jurybench.config import backpressure
        from jurybench.engine._calls import _run_task
        from jurybench.engine._load import STARTS_PER_PASS, Turns, Window

        if self.turns is None and backpressure():
            self.turns = Turns(Window(), per_pass=STARTS_PER_PASS)
        unusable: dict[str, str] = {}
        key = task.juror.key
        call, outcome = await _run_task(
            task, self.backends[key], self.rubric, self.paces[key], self.options, self.rng, unusable, self.turns
        )
        return call, outcome, unusable.get(key)


# What a run's calls are sent to a worker with: the run's id, a token naming this run's session
# in the workers, and whether the driver journals (the workers then write the journal's lines).
Ticket = tuple[str, str, bool]
# A call settled in a worker: its number, the task, its answer (None: not made) or its failure.
Settled = tuple[int, "Task", "tuple[dict[str, Any], Outcome | None, str | None] | None", "BaseException | None"]


@dataclass
class Answered:
    """A worker's message to the driver: calls of the run that settled together, by number."""

    numbers: list[int]  # the calls answered, in the order of the rows
    rows: Rows
    unusable: dict[str, str]  # jurors these calls found unusable, and why
    failures: list[tuple[int, BaseException]]  # calls whose path failed (the run fails with them)
    unmade: list[int]  # calls not started before the run asked to stop (CallWorker.halt)


class _Session:
    """One run's calls in a worker."""

    def __init__(self, run_id: str, journaled: bool) -> None:
        self.run_id, self.journaled = run_id, journaled
        self.running = 0  # calls taken and not settled
        self.settled: list[Settled] = []  # not yet sent back
        self.changed = asyncio.Event()
        self.closed = False  # the driver sends no more
        self.halted = False  # the run asked to stop: calls not started are not made
        self.jobs: set[asyncio.Future[None]] = set()


@dataclass
class _Seat:
    actor: Any
    index: int
    node: str = ""
    in_flight: int = 0
    alive: bool = True


class RayPool:
    """The run's workers, seen from the driver: :meth:`stream` sends one a piece of calls
    (engine/_spread.py decides which, and takes the answers)."""

    def __init__(self, ray: Any, setup: WorkerSetup, n: int, owned: bool, name: str) -> None:
        self.ray, self.setup, self.n, self.owned, self.name = ray, setup, n, owned, name
        self.keeper = (
            ray.remote(num_cpus=0)(PaceKeeper).remote({key: _caps(setup, key) for key in setup.capped})
            if setup.capped or setup.endpoints
            else None
        )
        self.actor_class = ray.remote(num_cpus=1, max_concurrency=10_000, max_restarts=0, max_task_retries=0)(
            CallWorker
        )
        self.seats: list[_Seat] = []
        self.started = 0
        self.given_again = 0  # calls a lost worker held (in flight or waiting there), given to another
        self.lost = 0
        self.paced: dict[str, tuple[int, float]] = {}  # the keeper's account (PaceKeeper.account)
        self.on_change: Callable[[], None] | None = None  # told when a worker starts in a lost one's place
        self.failure: BaseException | None = None  # why no worker could be started in a lost one's place
        self.starting: asyncio.Future[None] | None = None
        self.actors: list[Any] = []  # every worker started, so that stop() ends one still starting too
        self.address: str | None = None
        self.runs = 1  # the runs these workers have made calls for (more than one when kept)
        self.kept = False  # kept for the next run of a keep_workers() block (stopped at its end)
        # How long a worker started in a lost one's place may take to be ready, and how long the
        # cluster's head may not answer, before the run gives up on it: the jurors' call timeout.
        self.wait_s = max([float(j.option("timeout", 60)) for j in setup.jurors] or [60.0])
        self.head_lost: str | None = None  # why the cluster's head is taken for lost (head_watch)

    def _start(self) -> _Seat:
        actor = self.actor_class.options(
            name=f"{self.name}-{self.started}", namespace="jurybench", scheduling_strategy="SPREAD"
        ).remote(self.setup, self.keeper, self.n)
        seat = _Seat(actor, self.started)
        self.started += 1
        self.actors.append(actor)
        return seat

    def start(self) -> None:
        """Start the workers and wait until each has built its transports (a worker that cannot,
        e.g. a kind its machine lacks, fails the run here, before anything is written)."""
        self.seats = [self._start() for _ in range(self.n)]
        try:
            answers = self.ray.get([s.actor.ready.remote() for s in self.seats], timeout=READY_WAIT_S)
        except self.ray.exceptions.GetTimeoutError:
            raise JurybenchError(
                f"--workers {self.n}: the Ray cluster did not start them within {READY_WAIT_S:g} s "
                "(each worker takes one CPU).",
                hint="Ask for fewer workers or add nodes.",
            ) from None
        except Exception as exc:
            raise JurybenchError(f"a Ray worker could not start: {_cause(exc)}") from None
        for seat, (_, node) in zip(self.seats, answers, strict=True):
            seat.node = node

    @property
    def nodes(self) -> int:
        """The Ray nodes the run's workers ran on."""
        return len({s.node for s in self.seats})

    def answers(self, seat: _Seat, ticket: Ticket) -> Any:
        """The stream of a worker's :class:`Answered` messages for the run ``ticket`` names."""
        return seat.actor.answers.options(num_returns="streaming").remote(ticket)

    def send(self, seat: _Seat, ticket: Ticket, tasks: list[tuple[int, Task]]) -> None:
        """Calls for a worker to make (their answers come on its :meth:`answers` stream; a worker
        lost meanwhile ends that stream with an error)."""
        seat.actor.add_calls.remote(ticket, tasks)

    def each_live(self, method: str, token: str) -> None:
        """``halt`` or ``close`` the run ``token`` names in every live worker."""
        for seat in self.seats:
            if seat.alive:
                with contextlib.suppress(Exception):  # lost meanwhile
                    getattr(seat.actor, method).remote(token)

    def lose(self, seat: _Seat) -> None:
        if seat.alive:
            seat.alive = False
            self.lost += 1

    def replace(self) -> None:
        """Start a worker in place of a lost one (one at a time); :attr:`on_change` is told when
        it is ready, or when none can be started (:attr:`failure`)."""
        if self.starting is not None or self.failure is not None:
            return
        self.starting = asyncio.ensure_future(self._start_one())

        def started(done: asyncio.Future[None]) -> None:
            self.starting = None
            if done.cancelled():  # the run is ending
                return
            self.failure = done.exception()
            if self.on_change is not None:
                self.on_change()

        self.starting.add_done_callback(started)

    async def _start_one(self) -> None:
        """A worker in a lost one's place, ready within :attr:`wait_s` (a cluster with no CPU
        left, its node gone, would keep it waiting for a place forever)."""
        if self.started >= 4 * self.n + 4:  # workers keep dying as they start: no point going on
            raise JurybenchError(f"Ray workers kept failing: {self.lost} of {self.started} lost.")
        # Made off the loop: a named actor is registered with the head before .remote() returns,
        # and a head that is gone would hold the loop (and the head's watch) until Ray ends the driver.
        seat = await _off_the_loop(self._start)
        try:
            _, seat.node = await asyncio.wait_for(_awaited(seat.actor.ready.remote()), self.wait_s)
        except TimeoutError:
            with contextlib.suppress(Exception):  # its request for a CPU withdrawn
                self.ray.kill(seat.actor)
            raise JurybenchError(
                f"no worker could be started in a lost one's place within {self.wait_s:g} s (the cluster has no "
                "CPU left for it)"
            ) from None
        except Exception as exc:
            raise JurybenchError(f"a Ray worker could not start: {_cause(exc)}") from None
        self.seats.append(seat)

    async def head_watch(self, lost: Callable[[str], None]) -> None:
        """Until cancelled: every second, whether the cluster's head (its GCS) takes a connection;
        when it has refused them for :attr:`wait_s` or 10 s, whichever is shorter (Ray itself
        ends a driver whose head is gone for 60 s, without a word), ``lost`` is told why, once."""
        address = str(self.ray.get_runtime_context().gcs_address or "")
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            return
        since: float | None = None
        while True:
            await asyncio.sleep(1.0)
            answered = await _off_the_loop(lambda: _answers(host.strip("[]"), int(port)))
            now = time.monotonic()
            if answered:
                since = None
                continue
            since = now if since is None else since
            if now - since >= min(self.wait_s, 10.0):
                self.head_lost = f"lost its head ({address} stopped answering)"
                lost(self.head_lost)
                return

    def begin_run(self, setup: WorkerSetup) -> None:
        """A kept pool's next run (``setup`` differing from the pool's at most in its rubric, its
        shipped transports and the budget): the transports built for its subjects (kinds that
        read the store) and its rubric, when another, given to every worker, and its own count of
        workers lost, calls asked again and turns."""
        rubric = setup.rubric if setup.rubric != self.setup.rubric else None
        self.setup = setup  # also for a worker started in a lost one's place
        if setup.shipped or rubric is not None:
            alive = [s for s in self.seats if s.alive]
            self.ray.get([s.actor.take.remote(setup.shipped, rubric) for s in alive], timeout=READY_WAIT_S)
        self.runs += 1
        self.given_again = self.lost = 0
        self.failure = None
        self.paced = {}
        if self.keeper is not None:
            self.keeper.restart_account.remote()

    def end_run(self) -> None:
        """The run's account of the turns the keeper gave (:attr:`paced`); the workers stop
        unless the pool is kept (a cluster whose head is lost is let go without a word to it)."""
        if self.head_lost is not None:
            self.kept = False
            self.actors, self.keeper = [], None
            self.stop()
            return
        if self.keeper is not None:
            with contextlib.suppress(Exception):  # a keeper lost with its node: the run's account lacks it
                self.paced = self.ray.get(self.keeper.account.remote(), timeout=30)
        if not self.kept:
            self.stop()

    def stop(self) -> None:
        """End the workers, the pace keeper and the Ray this run started."""
        for actor in [*self.actors, *([self.keeper] if self.keeper is not None else [])]:
            with contextlib.suppress(Exception):  # already gone
                self.ray.kill(actor)
        self.actors = []
        if self.owned:
            self.ray.shutdown()
            self.owned = False


@dataclass
class _Kept:
    """The pools a keep_workers() block keeps, and how many it keeps at most (None: all)."""

    pools: list[RayPool]
    most: int | None


_KEPT: contextvars.ContextVar[_Kept | None] = contextvars.ContextVar("jurybench_kept_pools", default=None)


@contextlib.contextmanager
def keep_workers(most: int | None = None) -> Iterator[None]:
    """Runs started in this block on Ray with the same jurors and options share their workers
    (a sequential run's batches: one start, not one a look; an alignment's variants, each run
    with its own rubric, handed to the workers; a transport built from the store's rows is built
    again for each run's subjects and handed to them); they stop at its end.
    ``most``: the pools kept at once; a run that needs another stops the one used longest ago
    first (a server's job slot: consecutive jobs of one jury share workers, and a slot never holds
    more of the cluster than one job's)."""
    if _KEPT.get() is not None:  # already kept by an enclosing block
        yield
        return
    token = _KEPT.set(_Kept([], most))
    try:
        yield
    finally:
        kept = _KEPT.get()
        for pool in kept.pools if kept is not None else []:
            pool.stop()
        _KEPT.reset(token)


def _workers_alike(kept: WorkerSetup, wanted: WorkerSetup) -> bool:
    """Whether a kept pool's workers can make a new run's calls: the same jurors and call
    options; the rubric, the transports built for the run's subjects and the budget (the
    driver's: a worker never reads it) may differ, and are handed over (:meth:`RayPool.begin_run`)."""

    def alike(setup: WorkerSetup) -> WorkerSetup:
        return replace(setup, rubric=None, shipped={}, options=replace(setup.options, max_cost=None))

    return alike(kept) == alike(wanted)


def _caps(setup: WorkerSetup, key: str) -> tuple[float | None, float | None]:
    spec = next(j for j in setup.jurors if j.key == key)
    return spec.option("rpm", None), spec.option("tpm", None)


def _cause(exc: BaseException) -> str:
    """The first line of what went wrong in a worker (a JurybenchError's own message)."""
    cause = getattr(exc, "cause", None) or exc
    inner = getattr(cause, "cause", None)
    if isinstance(inner, BaseException):
        cause = inner
    return _first_line(cause)


def _environment(jurors: list[JurorSpec]) -> dict[str, str]:
    """The variables a worker elsewhere needs to reach the jurors' providers as the driver does:
    each provider's own (``OPENAI_*``, ``ANTHROPIC_*``, ...) and litellm's and jurybench's."""
    prefixes = {*_SHARED_ENV_PREFIXES, *(f"{j.provider.upper()}_" for j in jurors if j.provider)}
    return {k: v for k, v in os.environ.items() if k.startswith(tuple(prefixes))}


def start_pool(
    options: EngineOptions,
    rubric: Any,
    jurors: list[JurorSpec],
    backends: Mapping[str, Backend],
    run_name: str,
) -> RayPool:
    """Connect to Ray, start the run's workers and wait for them; JurybenchError (nothing
    started, nothing written) when Ray is missing, the address does not answer, or the cluster
    has too few CPUs for ``--workers``."""
    from jurybench.engine._options import EngineHooks
    from jurybench.jurors import kind_of

    ray, owned = connect(options.address, options.workers)
    try:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        n = options.workers or max(1, cpus)
        if n > cpus:
            raise JurybenchError(
                f"--workers {n}: the Ray cluster has {cpus} CPU{'s' if cpus != 1 else ''} and each worker takes one.",
                hint=f"Ask for at most {cpus} workers, or add nodes to the cluster.",
            )
        shipped = {j.key: backends[j.key] for j in jurors if kind_of(j.model).reads_store}
        setup = WorkerSetup(
            rubric=rubric,
            jurors=jurors,
            shipped=shipped,
            kinds={kind_of(j.model).prefix: kind_of(j.model) for j in jurors if kind_of(j.model).prefix != "*"},
            options=replace(options, hooks=EngineHooks()),
            capped=[j.key for j in jurors if j.option("rpm", None) or j.option("tpm", None)],
            environment=_environment(jurors),
            endpoints=any(getattr(backends.get(j.key), "endpoint", None) is not None for j in jurors),
        )
    except BaseException:
        if owned:
            ray.shutdown()
        raise
    kept = _KEPT.get()
    if kept is not None:
        for pool in kept.pools:
            if _workers_alike(pool.setup, setup) and pool.n == n and pool.address == options.address:
                kept.pools.remove(pool)  # the newest used last
                kept.pools.append(pool)
                pool.begin_run(setup)
                return pool
        while kept.most is not None and len(kept.pools) >= kept.most:  # its CPUs freed before new ones are asked
            kept.pools.pop(0).stop()
    pool = RayPool(ray, setup, n, owned, run_name)
    pool.address = options.address
    try:
        pool.start()
    except BaseException:
        pool.stop()
        raise
    if kept is not None:
        pool.kept = True
        kept.pools.append(pool)
    return pool
