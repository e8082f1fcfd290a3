"""Answers first (issue 27, item 8; issue 58, item 4): request starts take turns with answers,
the requests in flight are capped by a window when the process is the bottleneck, and the heap
a run starts with is frozen, so few paid answers wait in the process where a kill -9 would lose
them."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

import jurybench as jb
from jurybench.engine._load import Turns, Window
from jurybench.jurors import Completion, JurorKind
from tests.conftest import registered_kind


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


class _Busy:
    """A transport that costs the loop CPU before each request (as building a request with a
    provider's SDK does) and after each answer (``reading_s``, in eight steps with the loop's
    other work between them, as an SDK's parsing, logging and cost steps are), and answers
    after a delay; it records how late each answer was read after it arrived (until its
    reading ended, less the reading's own CPU)."""

    late: ClassVar[list[float]] = []
    reading_s: ClassVar[float] = 0.0

    def __init__(self, rubric: Any) -> None:
        self.criteria = rubric.dimensions

    async def complete(self, messages: list[dict[str, str]], slot: Any) -> Completion:
        _spin(0.004)
        loop = asyncio.get_running_loop()
        due = loop.time() + 0.05
        await asyncio.sleep(0.05)
        for _ in range(8 if _Busy.reading_s else 0):
            _spin(_Busy.reading_s / 8)
            await asyncio.sleep(0)
        _Busy.late.append(loop.time() - due - _Busy.reading_s)
        return Completion(json.dumps({name: 3 for name in self.criteria}), prompt_tokens=10, completion_tokens=4)


@pytest.fixture
def busy() -> Any:
    yield from registered_kind("busy", _Busy, "CPU-bound")


def _mean_lateness(tmp_path: Path, name: str, n: int = 300) -> float:
    _Busy.late = []
    with jb.open(tmp_path / f"{name}.duckdb") as store:
        store.import_items([{"item_id": f"i{k:03d}", "response": "x"} for k in range(n)])
        run = jb.score(store, rubric="story-quality", jury=["busy/one,concurrency=64"], run=name)
        assert run.status == "finished" and run.counts["ok"] == n
    return sum(_Busy.late) / len(_Busy.late)


def test_answers_wait_less_when_request_starts_take_turns(
    busy: JurorKind, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In bursts, the starts made ready together run in one pass of the loop (4 ms of CPU
    each) and an answer that arrives meanwhile waits for all of them; taking turns, it waits
    for one start at most."""
    monkeypatch.setenv("JURYBENCH_BACKPRESSURE", "off")
    without = _mean_lateness(tmp_path, "off")
    monkeypatch.setenv("JURYBENCH_BACKPRESSURE", "on")
    with_it = _mean_lateness(tmp_path, "on")
    assert with_it < without / 2, (with_it, without)


def test_a_run_keeps_its_starting_heap_out_of_the_collectors_sight_and_gives_it_back(
    db_path: Path, tmp_path: Path
) -> None:
    """A full collection that walks every object litellm and the plan made held the loop up to
    290 ms (answers waited unread meanwhile, and a kill -9 lost them): the run freezes the heap
    it starts with while it calls, and unfreezes it at the end."""
    import gc

    from jurybench.engine import EngineHooks, EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.rubric import load_rubric
    from tests.conftest import run_cli, write

    items = "item_id,response\n" + "".join(f"i{i},Story {i}\n" for i in range(3))
    assert run_cli("items", "import", str(write(tmp_path / "i.csv", items)), "--db", str(db_path)).exit_code == 0
    before, during = gc.get_freeze_count(), []
    options = EngineOptions(hooks=EngineHooks(on_call=lambda call: during.append(gc.get_freeze_count())))
    result = score(db_path, load_rubric("story-quality"), [parse_juror("fake/a")], run_id="r", options=options)
    assert result.n_called == 3 and len(during) == 3
    assert min(during) > before + 1000  # litellm's, the rubric's, the plan's objects at least
    assert gc.get_freeze_count() == before


def test_request_starts_take_turns_a_pass_of_the_loop_each_with_answers_read_between() -> None:
    """Ten calls ready to start at once start in ten passes of the loop, not in one burst; an
    answer that becomes readable meanwhile is taken up after at most one start."""

    async def scenario() -> tuple[list[int], list[str]]:
        turns, passes, log = Turns(), [0], []
        ticking = [True]

        def count() -> None:  # a callback in every pass: the pass number
            passes[0] += 1
            if ticking[0]:
                asyncio.get_running_loop().call_soon(count)

        async def start(k: int) -> int:
            await turns.take()
            log.append(f"start {k}")
            return passes[0]

        asyncio.get_running_loop().call_soon(count)
        starts = [asyncio.create_task(start(k)) for k in range(10)]
        await asyncio.sleep(0)  # all ten wait for their turn now
        reader, writer = socket.socketpair()
        arrived = asyncio.Event()
        asyncio.get_running_loop().add_reader(reader, lambda: (log.append("answer read"), arrived.set()))
        writer.send(b"x")  # an answer arrives while the starts wait
        await arrived.wait()
        asyncio.get_running_loop().remove_reader(reader)
        reader.close()
        writer.close()
        seen = await asyncio.gather(*starts)
        ticking[0] = False
        return seen, log

    seen, log = asyncio.run(scenario())
    assert len(set(seen)) == 10  # each start in a pass of its own
    assert seen == sorted(seen)  # in the order asked
    assert log.index("answer read") <= 2  # read at once, not after the other starts


def test_a_few_starts_a_pass_and_never_past_the_window() -> None:
    """per_pass = 4 (the engine's STARTS_PER_PASS): ten starts ready at once go in three passes
    (4, 4 and 2), in the order asked; with a window of three, the fourth waits for an answer."""
    from jurybench.engine._load import STARTS_PER_PASS

    assert STARTS_PER_PASS == 4

    async def passes_of(turns: Turns, n: int, answer_after: int | None = None) -> list[int]:
        passes = [0]
        ticking = [True]
        seen: list[int] = []

        def count() -> None:
            passes[0] += 1
            if ticking[0]:
                asyncio.get_running_loop().call_soon(count)

        async def start(k: int) -> None:
            await turns.take()
            seen.append(passes[0])
            if answer_after is not None and len(seen) == answer_after:
                for _ in range(5):  # a few passes later, the first request is answered
                    await asyncio.sleep(0)
                turns.done("j", time.monotonic(), answered=False)

        asyncio.get_running_loop().call_soon(count)
        await asyncio.gather(*(start(k) for k in range(n)))
        ticking[0] = False
        return seen

    seen = asyncio.run(passes_of(Turns(per_pass=4), 10))
    assert [seen.count(p) for p in sorted(set(seen))] == [4, 4, 2] and seen == sorted(seen)
    windowed = asyncio.run(passes_of(Turns(Window(size=3.0), per_pass=4), 4, answer_after=3))
    assert windowed[:3] == [windowed[0]] * 3  # three in one pass: the window is full
    assert windowed[3] > windowed[0] + 5  # the fourth only once the first was answered


def test_a_cancelled_waiter_gives_its_turn_to_the_next() -> None:
    async def scenario() -> list[int]:
        turns, started = Turns(), []

        async def start(k: int) -> None:
            await turns.take()
            started.append(k)

        tasks = [asyncio.create_task(start(k)) for k in range(4)]
        await asyncio.sleep(0)
        tasks[1].cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        assert not turns.ticking and not turns.waiting  # the ticker stops once nobody waits
        return started

    assert asyncio.run(scenario()) == [0, 2, 3]


def test_network_jurors_take_turns_and_offline_ones_do_not(
    busy: JurorKind, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken: list[int] = []
    take = Turns.take

    async def counted(self: Turns) -> float:
        taken.append(1)
        return await take(self)

    monkeypatch.setattr(Turns, "take", counted)
    with jb.open(tmp_path / "t.duckdb") as store:
        store.import_items([{"item_id": f"i{k}", "response": "x"} for k in range(5)])
        jb.score(store, rubric="story-quality", jury=["fake/a"], run="offline")
        assert taken == []
        jb.score(store, rubric="story-quality", jury=["busy/one"], run="network")
        assert len(taken) == 5  # one turn a request


def test_when_the_process_is_the_bottleneck_the_window_keeps_answers_from_waiting_unread(
    busy: JurorKind, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """64 connections to a provider answering in 50 ms, and 4 ms of the loop's CPU before each
    request and 4 ms after each answer: the process reads at most ~125 answers a second while
    64 / 0.05 = 1,280 could arrive, so without a window about 64 - 125 x 0.05 = 58 answers wait
    unread; the window keeps requests it could not read unsent (measured: answers read ~30 ms
    after they arrived with it, ~90 ms without)."""
    monkeypatch.setattr(_Busy, "reading_s", 0.004)
    monkeypatch.setattr("jurybench.engine._calls.Window", lambda: None)  # turns, no window
    without = _mean_lateness(tmp_path, "turns", n=400)
    monkeypatch.undo()
    monkeypatch.setattr(_Busy, "reading_s", 0.004)
    with_it = _mean_lateness(tmp_path, "window", n=400)
    assert with_it < without / 2, (with_it, without)


def _trips(window: Window, juror: str, shortest: float, others: list[float]) -> None:
    window.answered(juror, shortest)
    for trip in others:
        window.answered(juror, trip)


def test_the_window_shrinks_when_answers_wait_in_a_busy_loop() -> None:
    """Round trips of 0.2, 0.4, 0.4, 0.4 s against the shortest 0.2 s: the waiting share is
    mean(0, 1/2, 1/2, 1/2) = 3/8, so 32 in flight hold 12 answers waiting (> 6); the loop busy
    (median lag 20 ms > 5 ms): from min(64, 32) = 32 the window loses 32 // 16 = 2."""
    window = Window(size=64)
    _trips(window, "j", 0.2, [0.4, 0.4, 0.4])
    assert window.waiting(32) == pytest.approx(12.0)
    assert window.adjust(lag_s=0.02, in_flight=32, now=window.renewed) == 30
    assert window.trips == []  # each verdict reads its own tenth of a second


def test_a_slow_provider_never_shrinks_the_window_while_the_loop_is_idle() -> None:
    """The same round trips, but the loop idle (lag 1 ms): the provider is slow for its own
    reasons, so the window grows by an eighth when it binds (64 -> 72) and stays when it does
    not (20 in flight of 64)."""
    window = Window(size=64)
    _trips(window, "j", 0.2, [0.4, 0.4, 0.4])
    assert window.adjust(lag_s=0.001, in_flight=63, now=window.renewed) == 72
    _trips(window, "j", 0.2, [0.4, 0.4, 0.4])
    assert window.adjust(lag_s=0.001, in_flight=20, now=window.renewed) == 72


def test_few_waiting_lets_the_window_grow_and_it_never_falls_below_its_floor() -> None:
    window = Window(size=8)
    _trips(window, "j", 0.2, [0.21, 0.2])  # waiting 8 x mean(0, 0.048, 0) = 0.13 < 3
    assert window.adjust(lag_s=0.02, in_flight=8, now=window.renewed) == 9
    tight = Window(size=3, floor=2)
    _trips(tight, "j", 0.1, [1.0] * 9)  # 3 x mean(0, 0.9 x 9) = 2.43 waiting: few, it grows
    assert tight.adjust(lag_s=0.02, in_flight=3, now=tight.renewed) == 4
    _trips(tight, "j", 0.1, [1.0] * 9)
    tight.many = 1.0  # now 2.43 are many: min(4, 3) - max(1, 3 // 16) = 2
    assert tight.adjust(lag_s=0.02, in_flight=3, now=tight.renewed) == 2
    _trips(tight, "j", 0.1, [10.0] * 9)
    assert tight.adjust(lag_s=0.02, in_flight=2, now=tight.renewed) == 2  # the floor


def test_each_juror_is_measured_against_its_own_shortest_round_trip_which_is_renewed() -> None:
    """A fast and a slow juror in one run: each answer against its own juror's shortest, so
    the slow one's 2 s answers (shortest 2 s) wait nothing; after ``renew_s`` the shortest is
    measured again from the latest tenth of a second (a provider that became slower)."""
    window = Window()
    window.answered("fast", 0.1)
    window.answered("slow", 2.0)
    window.answered("slow", 2.0)
    assert window.waiting(10) == 0.0
    window.adjust(lag_s=0.0, in_flight=0, now=window.renewed)
    window.answered("fast", 0.5)  # slower now
    assert window.waiting(10) == pytest.approx(8.0)  # 10 x (1 - 0.1 / 0.5)
    window.adjust(lag_s=0.0, in_flight=0, now=window.renewed + window.renew_s + 1)
    assert window.shortest["fast"] == 0.5


def test_a_provider_faster_than_the_loops_passes_is_not_read_as_queueing() -> None:
    """Answers in 2 ms against a loop lag of 20 ms: a round trip's excess over the shortest is
    the loop's own passes, not answers waiting, so the window does not shrink (it grows when it
    binds, keeping the loop busy), whatever the estimate says."""
    window = Window(size=16)
    _trips(window, "j", 0.002, [0.03] * 9)
    assert window.waiting(16) > window.many
    assert window.adjust(lag_s=0.02, in_flight=16, now=window.renewed) == 18
