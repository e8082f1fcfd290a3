"""Answers first: how a run keeps the answers it has been sent few while they wait in the process.

An answer the provider has sent is paid for; until the engine has read and journaled it, a
kill -9 loses it and the next run asks for it again. Three things kept answers waiting:

- **Bursts of request starts.** asyncio runs every callback that is ready in one pass of the
  loop. Starting a request costs milliseconds of CPU inside litellm and the provider's client,
  so a pass in which many calls started (a run's first calls, places freed together) kept
  every answer that arrived meanwhile unread until it ended. A request therefore starts only
  on its turn (:class:`Turns`): at most STARTS_PER_PASS (four) starts a pass, and between two
  passes the loop reads the answers that are ready. Calls waiting for their turn have sent
  nothing, so nothing paid waits with them. Four, not one: a start sends its request, and a
  send to a provider that is idle wakes it, which costs the sender when the provider is a
  process on the same machine (a loopback server, llama.cpp or vLLM beside the run). One start
  a pass made every send such a wake-up: about 0.6 ms of CPU a call, an eighth of what a call
  cost against ``make bench``'s stub (cProfile, 2,000 calls: 1.2-1.5 s in ``socket.send`` against
  0.05-0.08 s with starts in bursts); four halve it (0.75 s), while an answer waits behind four
  starts at most (killed after 400, 800 and 1,200 of 2,000 answers, runs asked 5, 7 and 5
  answers again, against 3, 13 and 4 with one start a pass).
- **Full garbage collections** that walked every object litellm and the plan had made, holding
  the loop up to 290 ms: :func:`frozen_heap`.

- **More requests in flight than the process can read.** When the process itself is the
  bottleneck (a fast provider, many connections: the loop is busy all the time), every request
  beyond what it can read as the answers come is an answer waiting unread: with 64
  connections to a provider answering in 200 ms, a process reading 100 answers a second holds
  about 64 - 100 x 0.2 = 44 of them. :class:`Window` caps the requests in flight the way TCP
  Vegas caps packets: it compares each answer's round trip with the shortest seen from its
  juror, and the excess, ``in_flight x (1 - shortest / round trip)``, estimates how many answers
  wait in the process. While the loop is busy (its median lag over a tenth of a second above
  5 ms) and more than six wait, the window shrinks by a sixteenth; while fewer than three wait
  or the loop is idle, it grows by an eighth. It starts at eight (so a run's first answers do
  not all arrive at once while the first call is still importing) and never exceeds the
  juror's concurrency, which the workers keep. A provider whose answers take longer for its
  own reasons never shrinks it: the loop is not busy then. Nor does a provider that answers
  faster than four of the loop's passes (a loopback server answering at once): its round
  trips are the loop's own passes, not answers waiting, and the window grows as before.

Offline jurors (fake, sim, replay) start no request and take no turn.
``JURYBENCH_BACKPRESSURE=off`` lets starts run in bursts again, without the window (``make
bench`` measures both).

Measured with the kill bench's stub (2,000 calls, 64 connections, 200 ms), as the answers sent
but not yet journaled at every moment of a run (the loss a kill at that moment causes), side
by side in one session: with the window, 99th percentile 6-8 and worst 10-16; without it (the
commit before it, and the commit that brought turns), 20-25 and 35-46, at the same 95-109
answers a second. Those tails, a kill that lands while a burst of answers waits, were the
38 and 52 answers asked again a reviewer saw on a faster machine.

An earlier version lowered the calls in flight on the loop's lag alone (additive increase,
multiplicative decrease): lag grows with load well before the process is the bottleneck, so it
cut throughput, and its swings brought the bursts back (over 20 killed runs, a worst of 38
answers asked again with it and of 12 without).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import statistics
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class Window:
    """How many requests may be in flight (see the module's docstring): fed each answer's round
    trip and the loop's lag, it adjusts :attr:`size` once a tenth of a second."""

    size: float = 8.0
    floor: float = 2.0
    busy_lag_s: float = 0.005  # the loop's median lag above which it is busy
    few: float = 3.0  # fewer answers than this waiting: grow
    many: float = 6.0  # more than this waiting while the loop is busy: shrink
    renew_s: float = 10.0  # how long a shortest round trip stands before it is measured again
    # the round trips tell queueing apart from the loop's own passes only when the provider's
    # shortest answer takes this many times the loop's lag
    apart: float = 4.0
    trips: list[tuple[str, float]] = field(default_factory=list)
    shortest: dict[str, float] = field(default_factory=dict)
    renewed: float = field(default_factory=time.monotonic)

    def answered(self, juror: str, round_trip_s: float) -> None:
        self.trips.append((juror, round_trip_s))
        if round_trip_s < self.shortest.get(juror, float("inf")):
            self.shortest[juror] = round_trip_s

    def waiting(self, in_flight: int) -> float:
        """The answers estimated to wait in the process: the in-flight share of the round
        trips above each juror's shortest."""
        if not self.trips:
            return 0.0
        excess = statistics.fmean(1.0 - self.shortest[j] / t if t > 0 else 0.0 for j, t in self.trips)
        return in_flight * excess

    def adjust(self, lag_s: float, in_flight: int, now: float | None = None) -> float:
        """One tenth of a second's verdict: the loop's median lag and the requests in flight now."""
        now = time.monotonic() if now is None else now
        waiting = self.waiting(in_flight)
        legible = bool(self.trips) and min(self.shortest[j] for j, _ in self.trips) > self.apart * lag_s
        if now - self.renewed > self.renew_s and self.trips:  # providers change: measure again
            latest: dict[str, float] = {}
            for juror, trip in self.trips:
                latest[juror] = min(trip, latest.get(juror, float("inf")))
            self.shortest.update(latest)
            self.renewed = now
        self.trips.clear()
        if lag_s > self.busy_lag_s and waiting > self.many and legible:
            self.size = max(self.floor, min(self.size, in_flight) - max(1, in_flight // 16))
        elif (waiting < self.few or lag_s < self.busy_lag_s / 2 or not legible) and in_flight >= self.size - 1:
            self.size += max(1, int(self.size) // 8)
        return self.size


STARTS_PER_PASS = 4  # a run's request starts in one pass of its loop, at most (see the module's docstring)


class Turns:
    """Request starts a few at a time (``per_pass`` a pass of the event loop; one by default),
    in the order asked, and never more in flight than the window allows.

    :meth:`take` waits for the caller's turn. A callback scheduled with ``call_soon`` runs in
    the next pass of the loop, after the input that pass finds ready has been read; so a
    ticker that lets ``per_pass`` waiting starts through each time it runs interleaves starts
    with answers instead of running a burst of starts ahead of them. The ticker runs only while
    starts wait."""

    def __init__(self, window: Window | None = None, per_pass: int = 1) -> None:
        self.per_pass = max(1, per_pass)
        self.waiting: deque[asyncio.Future[None]] = deque()
        self.ticking = False
        self.window = window
        self.in_flight = 0
        self.watching: asyncio.Task[None] | None = None

    async def take(self) -> float:
        """Wait for a turn (and a place in the window); the moment it came, for :meth:`done`."""
        loop = asyncio.get_running_loop()
        turn: asyncio.Future[None] = loop.create_future()
        self.waiting.append(turn)
        if self.window is not None and self.watching is None:
            self.watching = loop.create_task(self._watch())
        self._wake(loop)
        await turn  # a cancelled waiter is skipped by the ticker: its turn goes to the next
        self.in_flight += 1
        return time.monotonic()

    def done(self, juror: str, started: float, answered: bool) -> None:
        """The request that took its turn at ``started`` has ended (``answered``: with an answer,
        whose round trip the window reads)."""
        self.in_flight -= 1
        if self.window is not None and answered:
            self.window.answered(juror, time.monotonic() - started)
        self._wake(asyncio.get_running_loop())

    def _wake(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start the ticker when starts wait and it is not running."""
        if self.waiting and not self.ticking:
            self.ticking = True
            loop.call_soon(self._tick, loop)

    async def _watch(self) -> None:
        """The loop's lag every 10 ms, and the window's verdict every tenth of a second, while
        requests wait or are in flight (then it ends; the next take starts it again)."""
        assert self.window is not None
        lags: list[float] = []
        try:
            while self.waiting or self.in_flight:
                asked = time.monotonic()
                await asyncio.sleep(0.01)
                lags.append(time.monotonic() - asked - 0.01)
                if len(lags) == 10:
                    self.window.adjust(statistics.median(lags), self.in_flight)
                    lags.clear()
                    self._wake(asyncio.get_running_loop())  # the window grew: starts may go on
        finally:
            self.watching = None

    def _tick(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.window is not None and self.in_flight >= self.window.size:
            self.ticking = False  # the window is full: the next answer (or a grown window) ticks
            return
        started = 0
        while self.waiting and started < self.per_pass:
            if started and self.window is not None and self.in_flight + started >= self.window.size:
                break  # the window is full with the starts of this pass
            turn = self.waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                started += 1
        if self.waiting:
            loop.call_soon(self._tick, loop)
        else:
            self.ticking = False


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """The objects alive when a run starts its calls (litellm's tables and models, the plan, the
    tasks) kept out of the garbage collector's sight for the run (``gc.freeze``), so that a full
    collection walks only what the run has made since. Without it, full collections walked the
    whole heap and held the loop for up to 290 ms each (2,000 calls at concurrency 64): answers
    that arrived meanwhile waited unread, and a kill -9 then lost them. The objects are given
    back at the end (``gc.unfreeze``), so what is garbage among them is still collected."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
