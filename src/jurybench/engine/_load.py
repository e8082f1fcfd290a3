"""Back-pressure from this process's own event loop.

A run asks for answers faster than it can read them when its CPU is the bottleneck (a fast
endpoint, a high ``concurrency``, a busy machine): the answers then wait, already paid for,
in the process's queues until the loop reaches them, and a kill -9 in that moment loses them.
Those waiting answers buy no throughput (the CPU is already saturated), so the engine keeps
them few: a monitor measures how late the loop runs a timer (its lag), and while the lag is
high the number of calls allowed in flight shrinks (multiplicative decrease, by more the
further the lag is above its mark); while it is low
it grows back, one call a tick, to the jurors' own ``concurrency`` (additive increase).

Provider latency does not enter: a slow endpoint leaves the loop idle, so the cap stays at
the configured concurrency, and only a loop that cannot keep up lowers it. Throughput is
unchanged (the CPU was the limit); ``make bench`` measures both, with and without.
``JURYBENCH_BACKPRESSURE=off`` turns it off.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

TICK_S = 0.02  # how often the monitor looks at the loop
HIGH_LAG_S = 0.02  # a smoothed lag above this shrinks the share allowed in flight ...
LOW_LAG_S = 0.008  # ... and below this lets it grow back
DECREASE = 0.85  # the share kept at each high-lag step (at most one step per STEP_S) ...
FASTEST = 0.5  # ... or HIGH_LAG_S / lag when the lag is further above, but never below this
STEP_S = 0.1
SMOOTHING = 0.3  # weight of the newest lag sample in the moving average
MIN_SHARE = 0.05


@dataclass
class LoadControl:
    """The share (0, 1] of each group's concurrency allowed in flight, from loop-lag samples.

    Pure arithmetic, so the rule is tested without a loop: :meth:`observe` takes one lag
    sample (seconds) at a time ``now`` (seconds, any monotonic origin)."""

    share: float = 1.0
    lag: float = 0.0
    last_step: float = -math.inf
    largest: int = 1  # the largest group's concurrency: one call of it is the additive step
    excused: float = 0.0  # seconds the loop was knowingly held (the flush's write) since the last sample

    def excuse(self, seconds: float) -> None:
        """The engine held the loop itself for ``seconds`` (a store write): not lag from load."""
        self.excused += max(seconds, 0.0)

    def observe(self, lag_s: float, now: float) -> None:
        lag_s, self.excused = max(lag_s - self.excused, 0.0), 0.0
        self.lag = SMOOTHING * lag_s + (1 - SMOOTHING) * self.lag
        if self.lag > HIGH_LAG_S:
            if now - self.last_step >= STEP_S:
                self.share = max(MIN_SHARE, self.share * max(FASTEST, min(DECREASE, HIGH_LAG_S / self.lag)))
                self.last_step = now
        elif self.lag < LOW_LAG_S:
            self.share = min(1.0, self.share + 1.0 / max(self.largest, 1))


@dataclass
class LoadGate:
    """At most ``ceil(share * ceiling)`` of a group's calls in flight (never fewer than one).
    Waiting calls are let in one by one, in order, as places free up (no herd woken at once)."""

    ceiling: int
    control: LoadControl
    active: int = 0
    waiting: deque[asyncio.Future[None]] = field(default_factory=deque)

    @property
    def limit(self) -> int:
        return max(1, math.ceil(self.control.share * self.ceiling))

    async def enter(self) -> None:
        if self.active < self.limit and not self.waiting:
            self.active += 1
            return
        place: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.append(place)
        try:
            await place  # the place is counted in ``active`` by whoever let it in
        except asyncio.CancelledError:
            if place.done() and not place.cancelled():
                self.leave()  # let in, then cancelled before it could run: give the place back
            raise

    def leave(self) -> None:
        self.active -= 1
        self.wake()

    def wake(self) -> None:
        """Let waiting calls in while there is room (after a call left, or the share grew)."""
        while self.waiting and self.active < self.limit:
            place = self.waiting.popleft()
            if not place.done():
                self.active += 1
                place.set_result(None)


async def monitor(control: LoadControl, gates: list[LoadGate]) -> None:
    """Sample the loop's lag every tick until cancelled, adjusting the gates' share."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + TICK_S
        await asyncio.sleep(TICK_S)
        now = loop.time()
        before = control.share
        control.observe(now - due, now)
        if control.share > before:
            for gate in gates:
                gate.wake()


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
