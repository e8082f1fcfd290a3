"""A run's calls spread over a Ray cluster (``score --executor ray``).

The driver (the process that runs ``score``) does what it does in a local run: it plans the
run, checks every chunk against the store, admits each call under the budget, and writes every
answer through the one store writer (DuckDB allows one writing process), journaling it first.
Only the making of a call moves: :func:`~jurybench.engine._calls._run_task` (the juror's caps,
the endpoint's limiter, retries, parsing and re-asks) runs in a Ray worker, an actor with its
own event loop and the jurors' transports. The driver hands each call to the worker with the
fewest in flight and awaits its answer, so answers come back one at a time as they settle and a
run on Ray is stored exactly as a local one (``runs.executor`` says where it ran).

Why actors and not Ray Data's actor pool: a run's calls are not a dataset mapped once. Each is
admitted under a budget that learns from the answers before it, paced by a rate limit shared by
the cluster, written as soon as it settles (a kill loses only what was in flight) and, when its
worker dies, given to another. Ray Data hands results back a block at a time and retries a
block as a whole; actors give each of those directly.

What is shared by the cluster:

- the budget (``--max-cost``) and ``--until``'s looks: the driver admits every call;
- a juror's own ``rpm``/``tpm``: one schedule in a small actor (:class:`PaceKeeper`) that every
  worker asks for its request's turn (a round trip per request, only for capped jurors);
- the in-flight window of a juror (``concurrency``) applies per worker: N workers keep up to N
  times as many requests open. The adaptive endpoint limiter (fed by rate-limit headers and
  429s) is each worker's own; the headers every worker reads come from the same provider, so
  each slows down when the provider says so.

A worker that dies (killed, or its node lost) has the calls it had in flight given to another
worker (a new one is started in its place); those calls, whose answers it may have received
but not handed back, are the only ones asked again, and the run counts them
(:attr:`RayPool.asked_again`). The driver killed: its workers go with it (Ray ends the actors
of a dead owner) and the same command resumes from the store and the journal, as locally.
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
    from jurybench.jurors import Backend, JurorKind, JurorSpec, Signals
    from jurybench.rubric import Outcome

EXECUTORS = ("local", "ray")
READY_WAIT_S = 300.0
# A worker's answers that settle within this long of each other go back in one message: Ray's
# cost per message (a few hundred microseconds of the driver's CPU) is shared by them.
GATHER_S = 0.005  # workers asked for and not started by then: the cluster cannot place them
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

    async def answer_many(self, tasks: list[Task]) -> AsyncIterator[list[tuple[int, Any, BaseException | None]]]:
        """The calls of one batch, made at once; each time some settle, their answers in one
        message: (index in the batch, answer, None), or (index, None, the error) for a call whose
        path failed."""
        pending = {asyncio.ensure_future(self.answer(task)): k for k, task in enumerate(tasks)}
        while pending:
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            if len(done) < len(pending):  # a moment for more to settle: they go in the same message
                await asyncio.sleep(GATHER_S)
                done = {job for job in pending if job.done()}
            settled: list[tuple[int, Any, BaseException | None]] = []
            for job in done:
                index = pending.pop(job)
                failure = job.exception()
                settled.append((index, None, failure) if failure is not None else (index, job.result(), None))
            yield settled

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


# One call's answer from a worker: its row, its outcome, why its juror is unusable (or None)
Answer = tuple[dict[str, Any], "Outcome | None", str | None]
Asked = tuple["Task", "asyncio.Future[Answer]"]


@dataclass
class _Seat:
    actor: Any
    index: int
    node: str = ""
    in_flight: int = 0
    alive: bool = True


class RayPool:
    """The run's workers, seen from the driver: :meth:`ask` makes one call on the least busy."""

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
        self.asked_again = 0  # calls a lost worker had in flight, given to another
        self.lost = 0
        self.paced: dict[str, tuple[int, float]] = {}  # the keeper's account (PaceKeeper.account)
        self.queue: list[Asked] = []  # calls asked and not yet handed to a worker
        self.flushing = False
        self.streams: set[asyncio.Future[None]] = set()
        self.starting: asyncio.Future[None] | None = None
        self.actors: list[Any] = []  # every worker started, so that stop() ends one still starting too
        self.address: str | None = None
        self.runs = 1  # the runs these workers have made calls for (more than one when kept)
        self.kept = False  # kept for the next run of a keep_workers() block (stopped at its end)

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

    async def ask(self, task: Task) -> tuple[dict[str, Any], Outcome | None, str | None]:
        """The call's answer, from whichever worker makes it; a worker lost meanwhile has the
        call given to another (counted in :attr:`asked_again`).

        Calls asked in one pass of the loop go to the workers together, one request per worker,
        and each worker hands back, in one message, every answer that settled since its last
        (a streaming generator): Ray's cost per message is shared by the calls in it."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[Answer] = loop.create_future()
        self.queue.append((task, answer))
        if not self.flushing:
            self.flushing = True
            loop.call_soon(self._flush)
        return await answer

    def _flush(self) -> None:
        """Hand the queued calls to the live workers, the least busy first."""
        self.flushing = False
        alive = [s for s in self.seats if s.alive]
        if len(alive) < self.n:
            self._replace()
        if not alive or not self.queue:
            return  # a worker being started takes them when it is ready
        groups: dict[int, list[Asked]] = {}
        for asked in self.queue:
            if asked[1].done():  # cancelled (the run was interrupted)
                continue
            seat = min(alive, key=lambda s: s.in_flight)
            seat.in_flight += 1
            groups.setdefault(seat.index, []).append(asked)
        self.queue = []
        for seat in alive:
            if seat.index in groups:
                batch = groups[seat.index]
                stream = seat.actor.answer_many.options(num_returns="streaming").remote([t for t, _ in batch])
                self.streams.add(asyncio.ensure_future(self._receive(seat, stream, batch)))

    async def _receive(self, seat: _Seat, stream: Any, batch: list[Asked]) -> None:
        """A worker's answers to one batch, as they come; what it had not answered when it was
        lost goes to another worker."""
        left: dict[int, Asked] = dict(enumerate(batch))
        lost_errors = (self.ray.exceptions.RayActorError, self.ray.exceptions.ActorUnavailableError)
        try:
            async for ref in stream:
                for index, answer, failure in await ref:
                    _, future = left.pop(index)
                    seat.in_flight -= 1
                    if future.done():
                        continue
                    if failure is not None:
                        future.set_exception(failure)
                    else:
                        future.set_result(answer)
        except lost_errors:
            self._lose(seat)
            seat.in_flight -= len(left)
            again = [asked for asked in left.values() if not asked[1].done()]
            self.asked_again += len(again)
            self.queue.extend(again)
            self._flush()
        except BaseException as exc:  # the call path failed in the worker: each caller sees it
            seat.in_flight -= len(left)
            cause = exc.as_instanceof_cause() if isinstance(exc, self.ray.exceptions.RayTaskError) else exc
            for _, future in left.values():
                if not future.done():
                    future.set_exception(cause)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            current = asyncio.current_task()
            if current is not None:
                self.streams.discard(current)

    def _lose(self, seat: _Seat) -> None:
        if seat.alive:
            seat.alive = False
            self.lost += 1

    def _replace(self) -> None:
        """Start a worker in place of a lost one (one at a time); the queue goes to it when ready."""
        if self.starting is not None:
            return
        self.starting = asyncio.ensure_future(self._start_one())

        def started(done: asyncio.Future[None]) -> None:
            self.starting = None
            if done.cancelled():  # the run is ending: nothing more to hand out
                return
            failure = done.exception()
            if failure is not None:  # no worker can be started: the calls waiting fail with it
                for _, future in self.queue:
                    if not future.done():
                        future.set_exception(failure)
                self.queue = []
                return
            self._flush()

        self.starting.add_done_callback(started)

    async def _start_one(self) -> None:
        if self.started >= 4 * self.n + 4:  # workers keep dying as they start: no point going on
            raise JurybenchError(f"Ray workers kept failing: {self.lost} of {self.started} lost.")
        seat = self._start()
        try:
            _, seat.node = await seat.actor.ready.remote()
        except Exception as exc:
            raise JurybenchError(f"a Ray worker could not start: {_cause(exc)}") from None
        self.seats.append(seat)

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
        self.asked_again = self.lost = 0
        self.paced = {}
        if self.keeper is not None:
            self.keeper.restart_account.remote()

    def end_run(self) -> None:
        """The run's account of the turns the keeper gave (:attr:`paced`); the workers stop
        unless the pool is kept."""
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
