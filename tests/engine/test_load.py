"""Back-pressure (issue 27, item 8): while the run's own event loop lags, fewer calls are in
flight, so fewer paid answers wait in the process where a kill -9 would lose them."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

import jurybench as jb
from jurybench.engine._load import DECREASE, FASTEST, HIGH_LAG_S, MIN_SHARE, STEP_S, LoadControl, LoadGate, monitor
from jurybench.jurors import Completion, JurorKind
from tests.conftest import registered_kind


def test_the_share_falls_by_a_step_per_interval_and_grows_back_a_call_a_tick() -> None:
    assert (HIGH_LAG_S, DECREASE, FASTEST) == (0.02, 0.85, 0.5)
    control = LoadControl(largest=10)
    # A smoothed lag of 0.3 * 0.1 = 0.03 s is 1.5 times the mark: the share falls to 1 / 1.5.
    control.observe(0.1, now=0.0)
    assert control.lag == pytest.approx(0.03) and control.share == pytest.approx(2 / 3)
    control.observe(0.1, now=STEP_S / 2)  # within the same interval: no second step
    assert control.share == pytest.approx(2 / 3)
    # Now 0.3 * 0.1 + 0.7 * 0.051 = 0.0657 s: over three times the mark, so halved at most.
    control.observe(0.1, now=STEP_S)
    assert control.lag == pytest.approx(0.0657) and control.share == pytest.approx(1 / 3)
    control.observe(0.0, now=2 * STEP_S)  # 0.046 s, a step later: still high, halved again
    assert control.share == pytest.approx(1 / 6)
    control = LoadControl(largest=10, lag=0.02)
    control.observe(0.022, now=0.0)  # 0.0206 s, just above: the gentlest step, 0.85
    assert control.share == pytest.approx(DECREASE)
    # Idle ticks: the average decays (0.7 a tick) below 0.008 s, then each tick adds 1/10.
    for tick in range(30):
        control.observe(0.0, now=1.0 + tick)
    assert control.share == 1.0 and control.lag < 0.005
    for tick in range(200):  # however long the loop lags, some calls still go
        control.observe(1.0, now=100.0 + tick)
    assert control.share == MIN_SHARE


def test_a_gate_admits_its_share_of_the_concurrency_and_never_less_than_one() -> None:
    control = LoadControl(share=0.5)
    gate = LoadGate(4, control)
    assert gate.limit == 2
    control.share = 0.01
    assert gate.limit == 1

    async def scenario() -> list[str]:
        control.share = 0.5
        order: list[str] = []

        async def call(name: str) -> None:
            await gate.enter()
            order.append(f"in {name}")
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            order.append(f"out {name}")
            gate.leave()

        await asyncio.gather(call("a"), call("b"), call("c"))
        return order

    order = asyncio.run(scenario())
    # c enters only after one of a and b has left
    assert order.index("in c") > min(order.index("out a"), order.index("out b"))


def test_a_freed_place_lets_one_waiting_call_in_not_all_of_them() -> None:
    """64 workers waiting on a cap of a few: each call that ends wakes one (a woken herd of
    every waiter per call cost the engine about 7 % of its throughput)."""

    async def scenario() -> tuple[int, int, int]:
        gate = LoadGate(4, LoadControl(share=0.25))  # a limit of 1
        await gate.enter()
        waiters = [asyncio.create_task(gate.enter()) for _ in range(3)]
        await asyncio.sleep(0)
        gate.leave()
        await asyncio.sleep(0)
        done = sum(w.done() for w in waiters)
        left = len(gate.waiting)
        for w in waiters:
            w.cancel()
        await asyncio.gather(*waiters, return_exceptions=True)
        return done, left, gate.active

    done, left, active = asyncio.run(scenario())
    assert (done, left, active) == (1, 2, 1)  # the one let in holds its place


def test_a_loop_kept_busy_lowers_the_share() -> None:
    async def scenario() -> float:
        control = LoadControl(largest=8)
        watcher = asyncio.create_task(monitor(control, [LoadGate(8, control)]))
        while control.share == 1.0:
            time.sleep(0.05)  # the loop is held: the monitor's next tick is at least this late
            await asyncio.sleep(0)
        watcher.cancel()
        return control.share

    assert asyncio.run(scenario()) < 1.0


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


def test_answers_wait_less_in_a_lagging_process_with_back_pressure(
    busy: JurorKind, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without back-pressure 64 calls are in flight while the loop can serve about 12 in the
    answer delay, so each answer waits for the CPU work of the calls ahead of it (about
    (64 - 12) x 4 ms); with it the calls in flight shrink to what the loop keeps up with."""
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
