"""The journal of answers not yet stored: one append a pass of the event loop, not one a call."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from jurybench.engine._writer import _Journal


def _call(key: str) -> dict[str, object]:
    return {"call_key": key, "messages": '[{"role": "user", "content": "naïve"}]'}


def _counting_writes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    sizes: list[int] = []
    real = os.write

    def write(fd: int, data: Any) -> int:
        sizes.append(len(data))
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    return sizes


def test_answers_of_one_pass_go_in_one_append_at_the_next_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    journal = _Journal(tmp_path / "s.duckdb", "run")
    writes = _counting_writes(monkeypatch)

    async def main() -> tuple[int, int]:
        for k in range(3):
            journal.append(_call(f"k{k}"), {"call_key": [f"k{k}"], "score": [k + 1]})
        before = len(writes)  # nothing written within the pass that recorded them
        await asyncio.sleep(0)  # the next pass
        return before, len(writes)

    before, after = asyncio.run(main())
    assert (before, after) == (0, 1)
    calls, judgments = journal.pending()
    assert [c["call_key"] for c in calls] == ["k0", "k1", "k2"]
    assert calls[0]["messages"] == _call("k0")["messages"]  # kept as given, non-ASCII included
    assert judgments["score"] == [1, 2, 3]
    journal.remove()


def test_a_flush_that_stored_everything_drops_lines_not_yet_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = _Journal(tmp_path / "s.duckdb", "run")
    writes = _counting_writes(monkeypatch)

    async def main() -> None:
        journal.append(_call("k0"), {"call_key": ["k0"]})
        await asyncio.sleep(0)
        journal.append(_call("k1"), {"call_key": ["k1"]})
        journal.clear()  # the store holds both now
        await asyncio.sleep(0)

    asyncio.run(main())
    assert len(writes) == 1  # k1's line was never written: it is stored
    assert journal.pending() == ([], journal.pending()[1]) and not journal.path.read_text()
    journal.remove()


def test_outside_an_event_loop_an_answer_is_written_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    journal = _Journal(tmp_path / "s.duckdb", "run")
    writes = _counting_writes(monkeypatch)
    journal.append(_call("k0"), {"call_key": ["k0"]})
    assert len(writes) == 1
    assert [c["call_key"] for c in journal.pending()[0]] == ["k0"]
    journal.remove()
    assert not journal.path.exists()
