"""Answers first (issue 27, item 8): request starts take turns with answers, and the heap a
run starts with is frozen, so few paid answers wait in the process where a kill -9 would lose
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
from jurybench.engine._load import Turns
from jurybench.jurors import Completion, JurorKind
from tests.conftest import registered_kind


class _Busy:
    """A transport that costs the loop CPU before each request (as building a request with a
    provider's SDK does) and answers after a delay; it records how late each answer was
    taken up after it arrived."""

    late: ClassVar[list[float]] = []

    def __init__(self, rubric: Any) -> None:
        self.criteria = rubric.dimensions

    async def complete(self, messages: list[dict[str, str]], slot: Any) -> Completion:
        end = time.perf_counter() + 0.004
        while time.perf_counter() < end:
            pass
        loop = asyncio.get_running_loop()
        due = loop.time() + 0.05
        await asyncio.sleep(0.05)
        _Busy.late.append(loop.time() - due)
        return Completion(json.dumps({name: 3 for name in self.criteria}), prompt_tokens=10, completion_tokens=4)


@pytest.fixture
def busy() -> Any:
    yield from registered_kind("busy", _Busy, "CPU-bound")


def _mean_lateness(tmp_path: Path, name: str) -> float:
    _Busy.late = []
    with jb.open(tmp_path / f"{name}.duckdb") as store:
        store.import_items([{"item_id": f"i{k:03d}", "response": "x"} for k in range(300)])
        run = jb.score(store, rubric="story-quality", jury=["busy/one,concurrency=64"], run=name)
        assert run.status == "finished" and run.counts["ok"] == 300
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

    async def counted(self: Turns) -> None:
        taken.append(1)
        await take(self)

    monkeypatch.setattr(Turns, "take", counted)
    with jb.open(tmp_path / "t.duckdb") as store:
        store.import_items([{"item_id": f"i{k}", "response": "x"} for k in range(5)])
        jb.score(store, rubric="story-quality", jury=["fake/a"], run="offline")
        assert taken == []
        jb.score(store, rubric="story-quality", jury=["busy/one"], run="network")
        assert len(taken) == 5  # one turn a request
