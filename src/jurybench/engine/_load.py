"""Answers first: how a run keeps the answers it has been sent few while they wait in the process.

An answer the provider has sent is paid for; until the engine has read and journaled it, a
kill -9 loses it and the next run asks for it again. Two things kept answers waiting:

- **Bursts of request starts.** asyncio runs every callback that is ready in one pass of the
  loop. Starting a request costs milliseconds of CPU inside litellm and the provider's client,
  so a pass in which many calls started (a run's first calls, places freed together) kept
  every answer that arrived meanwhile unread until it ended. A request therefore starts only
  on its turn (:class:`Turns`): one start a pass, and between two starts the loop reads the
  answers that are ready. Calls waiting for their turn have sent nothing, so nothing paid waits
  with them; throughput is the same (a pass with nothing else to do takes microseconds).
- **Full garbage collections** that walked every object litellm and the plan had made, holding
  the loop up to 290 ms: :func:`frozen_heap`.

Offline jurors (fake, sim, replay) start no request and take no turn.
``JURYBENCH_BACKPRESSURE=off`` lets starts run in bursts again (``make bench`` measures both).

An earlier version lowered the calls in flight while the loop's lag was high (additive
increase, multiplicative decrease). With turns it bought nothing and its swings brought the
bursts back: over 20 killed runs of the kill bench, a worst of 38 answers asked again with it
and of 12 without.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections import deque
from collections.abc import Iterator


class Turns:
    """One request start a pass of the event loop, in the order asked.

    :meth:`take` waits for the caller's turn. A callback scheduled with ``call_soon`` runs in
    the next pass of the loop, after the input that pass finds ready has been read; so a
    ticker that lets one waiting start through each time it runs interleaves starts with
    answers instead of running a burst of starts ahead of them. The ticker runs only while
    starts wait."""

    def __init__(self) -> None:
        self.waiting: deque[asyncio.Future[None]] = deque()
        self.ticking = False

    async def take(self) -> None:
        loop = asyncio.get_running_loop()
        turn: asyncio.Future[None] = loop.create_future()
        self.waiting.append(turn)
        if not self.ticking:
            self.ticking = True
            loop.call_soon(self._tick, loop)
        await turn  # a cancelled waiter is skipped by the ticker: its turn goes to the next

    def _tick(self, loop: asyncio.AbstractEventLoop) -> None:
        while self.waiting:
            turn = self.waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                break
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
