"""The engine plans, checks the cache and judges a chunk of subjects at a time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jurybench.engine import EngineHooks, EngineOptions, score
from jurybench.jurors import parse_juror
from jurybench.rubric import load_rubric
from tests.conftest import run_cli, write

ITEMS = "item_id,prompt,response\n" + "".join(f"i{i},Prompt {i},Story {i}\n" for i in range(7))


def test_chunks_cover_every_subject_once_and_resume_from_the_cache(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jurybench.engine._run as engine

    monkeypatch.setattr(engine, "CHUNK", 2)  # 7 items x 2 jurors in chunks of 2 items: 4 chunks
    seen: list[tuple[int, int]] = []
    assert run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS)), "--db", str(db_path)).exit_code == 0
    jurors = [parse_juror("fake/a"), parse_juror("fake/b,samples=2")]
    first = score(
        db_path,
        load_rubric("story-quality"),
        jurors,
        where="item_id < 'i4'",
        run_id="r",
        options=EngineOptions(progress=False),
    )
    assert (first.n_tasks, first.n_cached, first.n_called) == (4 * 3, 0, 12)
    options = EngineOptions(
        progress=False, hooks=EngineHooks(on_plan=lambda total, cached: seen.append((total, cached)))
    )
    second = score(db_path, load_rubric("story-quality"), jurors, run_id="r2", options=options)
    # i0..i3 answered before (12 calls), i4..i6 new (9); the cache is counted chunk by chunk.
    assert (second.n_tasks, second.n_cached, second.n_called, second.status) == (21, 12, 9, "finished")
    assert seen == [(21, 6), (21, 12), (21, 12), (21, 12)]
    from jurybench.store import connect

    con = connect(db_path, read_only=True)
    rows: Any = con.execute("SELECT count(*), count(DISTINCT call_key) FROM run_calls WHERE run_id = 'r2'").fetchone()
    con.close()
    assert rows == (21, 21)


def test_score_works_inside_a_running_event_loop(db_path: Path, tmp_path: Path) -> None:
    """As in Jupyter: the engine runs on its own loop in a worker thread."""
    import asyncio

    assert run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS)), "--db", str(db_path)).exit_code == 0

    async def notebook_cell() -> Any:
        return score(
            db_path,
            load_rubric("story-quality"),
            [parse_juror("fake/a")],
            run_id="nb",
            options=EngineOptions(progress=False),
        )

    result = asyncio.run(notebook_cell())
    assert (result.status, result.n_called) == ("finished", 7)


def test_a_failure_inside_the_engine_leaves_the_run_resumable_not_finished(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jurybench.engine._run as engine

    assert run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS)), "--db", str(db_path)).exit_code == 0

    async def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(engine, "_execute", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        score(
            db_path,
            load_rubric("story-quality"),
            [parse_juror("fake/a")],
            run_id="r",
            options=EngineOptions(progress=False),
        )
    from jurybench.store import connect

    con = connect(db_path, read_only=True)
    assert con.execute("SELECT status FROM runs WHERE run_id = 'r'").fetchall() == [("interrupted",)]
    con.close()


def test_a_library_call_is_quiet_by_default(db_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS)), "--db", str(db_path)).exit_code == 0
    capsys.readouterr()
    result = score(db_path, load_rubric("story-quality"), [parse_juror("fake/a")])
    assert result.n_called == 7
    assert capsys.readouterr() == ("", "")  # no progress bar unless asked for (EngineOptions(progress=True))


def test_selection_reads_subjects_a_page_at_a_time_and_holds_only_ids(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--where runs in the sandbox over pages of 3 candidates (keyset pages in id order): the
    selected ids are exactly those of one pass over everything, for items and for pairs."""
    import jurybench.rubric._subjects as store_io
    from jurybench.store import connect

    items = "item_id,prompt,response,model\n" + "".join(f"i{i:02d},P,Story {i},m{i % 2}\n" for i in range(10))
    pairs = "pair_id,item_a,item_b\n" + "".join(f"p{i},i{i:02d},i{i + 1:02d}\n" for i in range(0, 9, 2))
    assert run_cli("items", "import", str(write(tmp_path / "i.csv", items)), "--db", str(db_path)).exit_code == 0
    assert run_cli("pairs", "import", str(write(tmp_path / "p.csv", pairs)), "--db", str(db_path)).exit_code == 0
    con = connect(db_path)
    pointwise, pairwise = load_rubric("story-quality"), load_rubric("persuasion")
    whole = [
        store_io.subject_table(con, r, w).column(0).to_pylist()
        for r, w in ((pointwise, "model = 'm1'"), (pairwise, "model_b = 'm1'"))
    ]
    monkeypatch.setattr(store_io, "SELECT_CHUNK", 3)
    assert store_io.subject_ids(con, pointwise, "model = 'm1'") == whole[0] == ["i01", "i03", "i05", "i07", "i09"]
    assert store_io.subject_ids(con, pairwise, "model_b = 'm1'") == whole[1] == ["p0", "p2", "p4", "p6", "p8"]
    assert store_io.subject_ids(con, pointwise, "model = 'm1'", ids=["i09", "i01", "i02"]) == ["i01", "i09"]
    assert store_io.subject_ids(con, pointwise, None) == [f"i{i:02d}" for i in range(10)]
    rows = store_io.subject_rows(con, pointwise, ["i03", "i01"])
    assert [(r["item_id"], r["response"]) for r in rows] == [("i01", "Story 1"), ("i03", "Story 3")]
    con.close()


def test_the_next_chunk_waits_for_the_store_write_in_progress(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flusher writes on a worker thread; a chunk's end must wait for that write before the
    loop touches the connection again (the next chunk's subjects), or DuckDB refuses the second
    use ('connection is busy with another call': 3,000 items with a fake juror hit it). The
    first write here is held until the loop touches the store or 2 s pass: with the write
    awaited nobody touches it (the wait runs out), without it the next chunk's read comes in
    while the write is in progress."""
    import threading

    import jurybench.engine._run as engine
    from jurybench.engine._writer import _Released, _Writer

    monkeypatch.setattr(engine, "CHUNK", 4)  # 7 items: two chunks
    monkeypatch.setattr(_Writer.__init__, "__defaults__", (2, 1.0))  # a write once 2 answers wait
    assert run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS)), "--db", str(db_path)).exit_code == 0
    writing: list[int] = []  # the thread of the write in progress
    touched, overlaps, held = threading.Event(), [], [False]
    commit, opened = _Writer.commit, _Released.open

    def slow_commit(self: _Writer, batch: Any, wait_s: float = 0.05) -> bool:
        writing.append(threading.get_ident())
        try:
            if not held[0]:  # the first write waits for the loop to come in, or for 2 s
                held[0] = True
                touched.wait(2.0)
            return commit(self, batch, wait_s)
        finally:
            writing.clear()

    def watched(self: _Released, wait_s: float) -> Any:
        if writing and writing[0] != threading.get_ident():
            overlaps.append(threading.get_ident())
            touched.set()
        return opened(self, wait_s)

    monkeypatch.setattr(_Writer, "commit", slow_commit)
    monkeypatch.setattr(_Released, "open", watched)
    # One call at a time, 60 ms each: the flusher (every 50 ms) writes two answers while two
    # more are being asked (the loop's timers fire in order, whatever the machine's load).
    juror = parse_juror("fake/a,latency_ms=60,concurrency=1")
    result = score(db_path, load_rubric("story-quality"), [juror], run_id="r", options=EngineOptions(progress=False))
    assert held == [True]  # a write did run off the loop
    assert overlaps == []
    assert (result.status, result.n_called) == ("finished", 7)
