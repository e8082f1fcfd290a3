"""Two runs writing the same call key: the first answer is kept, each judgment stored once."""

from __future__ import annotations

import threading
from typing import Any

from jurybench.engine import EngineHooks, EngineOptions, score
from jurybench.jurors import parse_juror
from jurybench.rubric import load_rubric

QUIET = EngineOptions(progress=False)


def test_concurrent_runs_over_the_same_calls_store_each_once(small_store: Any) -> None:
    # Four runs of the same job in four threads on cursors of one connection, as the
    # service's workers do: 3 items x 1 juror = 3 call keys shared by all of them.
    lock = threading.RLock()
    rubric = load_rubric("story-quality")
    juror = parse_juror("fake/slow,latency_ms=50")
    errors: list[BaseException] = []

    def run(i: int) -> None:
        cur = small_store.cursor()
        try:
            score(
                cur,
                rubric,
                [juror],
                run_id=f"r{i}",
                options=EngineOptions(progress=False, hooks=EngineHooks(store_lock=lock)),
            )
        except BaseException as exc:
            errors.append(exc)
        finally:
            cur.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    calls = small_store.execute("SELECT count(*), count(DISTINCT call_key), sum(attempts) FROM calls").fetchone()
    assert calls == (3, 3, 3)  # asked once each, stored once each
    judgments = small_store.execute("SELECT count(*) FROM pointwise_judgments").fetchone()[0]
    assert judgments == 3 * 6
    members = small_store.execute("SELECT run_id, count(*) FROM run_calls GROUP BY 1 ORDER BY 1").fetchall()
    assert members == [(f"r{i}", 3) for i in range(4)]
    statuses = small_store.execute("SELECT DISTINCT status FROM runs").fetchall()
    assert statuses == [("finished",)]


def test_an_answer_replaces_an_earlier_error_written_by_another_run(small_store: Any) -> None:
    from jurybench.engine._records import write_batch

    base = {
        "rubric_hash": "h",
        "juror_key": "j",
        "subject_kind": "item",
        "subject_id": "i1",
        "presented_order": None,
        "sample_index": 0,
        "messages": "[]",
        "response_text": None,
        "finish_reason": None,
        "attempts": 1,
        "prompt_tokens": None,
        "completion_tokens": None,
        "cost_usd": None,
        "latency_ms": None,
        "run_id": None,
        "presentation": None,
    }
    judgment = {
        "call_key": "k",
        "rubric_hash": "h",
        "juror_key": "j",
        "subject_id": "i1",
        "presented_order": None,
        "sample_index": 0,
        "dimension": "relevance",
        "score": 4.0,
        "status": "ok",
        "reason": None,
        "rationale": None,
        "label": None,
        "raw_value": None,
        "shown_position": None,
    }
    write_batch(small_store, "a", [{**base, "call_key": "k", "status": "error", "reason": "boom"}], [], [], False)
    write_batch(small_store, "b", [{**base, "call_key": "k", "status": "ok", "reason": None}], [judgment], [], False)
    # A third run's later answer to the same key does not replace the first answer.
    write_batch(
        small_store,
        "c",
        [{**base, "call_key": "k", "status": "ok", "reason": "later"}],
        [{**judgment, "score": 1.0}],
        [],
        False,
    )
    assert small_store.execute("SELECT status, reason FROM calls").fetchall() == [("ok", None)]
    assert small_store.execute("SELECT score FROM pointwise_judgments").fetchall() == [(4.0,)]
    runs = small_store.execute("SELECT run_id FROM run_calls ORDER BY 1").fetchall()
    assert runs == [("a",), ("b",), ("c",)]


def test_a_later_error_replaces_an_earlier_error(small_store: Any) -> None:
    """Only answers are kept first-come; an error is a failed attempt, and the store keeps the
    latest one (its reason is what a user reads to fix the juror)."""
    from jurybench.engine._records import write_batch

    base = {
        "rubric_hash": "h",
        "juror_key": "j",
        "subject_kind": "item",
        "subject_id": "i1",
        "presented_order": None,
        "sample_index": 0,
        "messages": "[]",
        "response_text": None,
        "finish_reason": None,
        "attempts": 1,
        "prompt_tokens": None,
        "completion_tokens": None,
        "cost_usd": None,
        "latency_ms": None,
        "run_id": None,
        "presentation": None,
        "call_key": "k",
        "status": "error",
    }
    write_batch(small_store, "a", [{**base, "reason": "timeout"}], [], [], False)
    write_batch(small_store, "b", [{**base, "reason": "invalid api key"}], [], [], False)
    assert small_store.execute("SELECT status, reason FROM calls").fetchall() == [("error", "invalid api key")]


def test_a_fresh_run_takes_the_store_lock_twice(small_store: Any) -> None:
    """The service's workers share one write lock: a run holds it to open the run and for its
    last flush, never to plan or to look up answered calls (reads), so other jobs' writes
    do not queue behind its reads. A re-run that reuses every answer takes it once more, to
    record the run's membership of those answers."""

    class Counting:
        def __init__(self) -> None:
            self.lock, self.taken, self.depth = threading.RLock(), 0, 0

        def __enter__(self) -> None:
            self.lock.acquire()
            self.depth += 1
            self.taken += self.depth == 1

        def __exit__(self, *exc: object) -> None:
            self.depth -= 1
            self.lock.release()

    rubric = load_rubric("story-quality")
    juror = parse_juror("fake/quick")
    for run_id, expected in (("first", 2), ("again", 3)):
        lock = Counting()
        score(
            small_store,
            rubric,
            [juror],
            run_id=run_id,
            options=EngineOptions(progress=False, hooks=EngineHooks(store_lock=lock)),
        )
        assert lock.taken == expected


def test_a_batch_written_twice_or_with_repeats_is_stored_once(small_store: Any) -> None:
    """No key index keeps the tables unique (migration m010): the writer does. A retried flush
    and a batch that names a call twice leave one call, one row per criterion and one
    membership row per run."""
    from jurybench.engine._records import write_batch

    base = {
        "rubric_hash": "h",
        "juror_key": "j",
        "subject_kind": "item",
        "subject_id": "i1",
        "presented_order": None,
        "sample_index": 0,
        "messages": "[]",
        "response_text": "{}",
        "finish_reason": None,
        "attempts": 1,
        "prompt_tokens": None,
        "completion_tokens": None,
        "cost_usd": None,
        "latency_ms": None,
        "run_id": None,
        "presentation": None,
        "status": "ok",
        "reason": None,
    }
    judgment = {
        "rubric_hash": "h",
        "juror_key": "j",
        "subject_id": "i1",
        "presented_order": None,
        "sample_index": 0,
        "score": 4.0,
        "status": "valid",
        "reason": None,
        "rationale": None,
        "label": None,
        "raw_value": None,
        "shown_position": None,
    }
    calls = [{**base, "call_key": k} for k in ("k1", "k2", "k1")]
    judgments = [{**judgment, "call_key": k, "dimension": d} for k in ("k1", "k2", "k1") for d in ("a", "b")]
    for _ in range(2):
        write_batch(small_store, "r", calls, judgments, ["k0", "k0"], False)
    write_batch(small_store, "r2", [], [], ["k1", "k2"], False)
    assert small_store.execute("SELECT call_key, count(*) FROM calls GROUP BY 1 ORDER BY 1").fetchall() == [
        ("k1", 1),
        ("k2", 1),
    ]
    rows = small_store.execute(
        "SELECT call_key, criterion, count(*) FROM pointwise_judgments GROUP BY 1, 2 ORDER BY 1, 2"
    )
    assert rows.fetchall() == [("k1", "a", 1), ("k1", "b", 1), ("k2", "a", 1), ("k2", "b", 1)]
    members = small_store.execute("SELECT run_id, call_key FROM run_calls ORDER BY 1, 2").fetchall()
    assert members == [("r", "k0"), ("r", "k1"), ("r", "k2"), ("r2", "k1"), ("r2", "k2")]


def test_end_runs_writes_several_runs_ends_in_one_go(small_store: Any) -> None:
    """The service commits the ends of concurrent jobs together: each run's answers, its
    membership and its status, with a call two runs both answered stored once."""
    from datetime import datetime

    from jurybench.engine import RunEnd, end_runs
    from jurybench.engine._records import CALL_COLUMNS, JUDGMENT_COLUMNS

    def batch(keys: list[str], cached: list[str]) -> Any:
        calls: dict[str, list[Any]] = {name: [] for name, _ in CALL_COLUMNS}
        judgments: dict[str, list[Any]] = {name: [] for name, _ in JUDGMENT_COLUMNS}
        for k in keys:
            row = {name: None for name, _ in CALL_COLUMNS} | {
                "call_key": k,
                "rubric_hash": "h",
                "juror_key": "j",
                "subject_kind": "item",
                "subject_id": f"s-{k}",
                "sample_index": 0,
                "messages": "[]",
                "status": "ok",
                "attempts": 1,
            }
            for name, values in calls.items():
                values.append(row[name])
            jrow = {name: None for name, _ in JUDGMENT_COLUMNS} | {
                "call_key": k,
                "rubric_hash": "h",
                "juror_key": "j",
                "subject_id": f"s-{k}",
                "sample_index": 0,
                "dimension": "d",
                "score": 3.0,
                "status": "valid",
            }
            for name, values in judgments.items():
                values.append(jrow[name])
        return calls, judgments, cached

    for run in ("r1", "r2"):
        small_store.execute(
            "INSERT INTO runs (run_id, rubric_hash, mode, jurors, status) VALUES (?, 'h', "
            "'pointwise', '[]', 'running')",
            [run],
        )
    at = datetime(2026, 11, 24, 12, 0)
    ends = [
        RunEnd("r1", False, batch(["k1", "k2"], []), "finished", at),
        RunEnd("r2", False, batch(["k2", "k3"], ["k0"]), "finished_with_errors", at),
    ]
    assert end_runs(small_store, ends) == [None, None]
    assert small_store.execute("SELECT call_key FROM calls ORDER BY 1").fetchall() == [("k1",), ("k2",), ("k3",)]
    assert small_store.execute("SELECT count(*) FROM pointwise_judgments").fetchone() == (3,)
    members = small_store.execute("SELECT run_id, call_key FROM run_calls ORDER BY 1, 2").fetchall()
    assert members == [("r1", "k1"), ("r1", "k2"), ("r2", "k0"), ("r2", "k2"), ("r2", "k3")]
    statuses = small_store.execute("SELECT run_id, status, finished_at FROM runs WHERE run_id LIKE 'r_' ORDER BY 1")
    assert statuses.fetchall() == [("r1", "finished", at), ("r2", "finished_with_errors", at)]


def _huge_store(tmp_path: Any, monkeypatch: Any, pairwise: bool = False) -> Any:
    import json

    from tests.conftest import run_cli, write

    db = tmp_path / "huge.duckdb"
    lines = [{"item_id": f"i{i}", "response": f"Story {i}."} for i in range(6)]
    lines.insert(3, {"item_id": "huge", "response": "x" * 40_000_000})  # in the same vector as the others
    monkeypatch.setenv("JURYBENCH_DUCKDB_MEMORY", "1GB")  # the import itself needs room for it
    items = write(tmp_path / "items.jsonl", "".join(json.dumps(row) + "\n" for row in lines))
    assert run_cli("items", "import", str(items), "--db", str(db)).exit_code == 0
    if pairwise:
        pairs = write(tmp_path / "pairs.csv", "pair_id,item_a,item_b\np1,i0,i1\np2,i2,i4\nph,huge,i5\n")
        assert run_cli("pairs", "import", str(pairs), "--db", str(db)).exit_code == 0
    monkeypatch.delenv("JURYBENCH_DUCKDB_MEMORY")  # back to the engine's 64 MB cap
    return db


def test_one_huge_stored_answer_does_not_stop_runs_that_leave_it_out(tmp_path: Any, monkeypatch: Any) -> None:
    """Issue 40, item 5: with one 40 MB response in the store, every score failed out of memory,
    even with --where leaving it out: DuckDB read whole vectors of texts to select around it."""
    from tests.conftest import run_cli

    db = _huge_store(tmp_path, monkeypatch)
    done = run_cli(
        "score", "-r", "story-quality", "-j", "fake/a", "--where", "item_id <> 'huge'", "--no-progress", "--db", str(db)
    )
    assert done.exit_code == 0, done.stderr
    assert "6 judgments requested" in done.stdout
    db = _huge_store(tmp_path / "pairs", monkeypatch, pairwise=True)
    done = run_cli(
        "score", "-r", "preference", "-j", "fake/a", "--where", "pair_id <> 'ph'", "--no-progress", "--db", str(db)
    )
    assert done.exit_code == 0, done.stderr


def test_a_run_that_needs_the_huge_text_says_so_in_jurybenchs_own_error(tmp_path: Any, monkeypatch: Any) -> None:
    import jurybench as jb

    db = _huge_store(tmp_path, monkeypatch)
    store = jb.open(db)
    try:
        with __import__("pytest").raises(jb.JurybenchError, match="DuckDB ran out of memory"):
            jb.score(store, rubric="story-quality", jury=["fake/a"], where="length(response) < 100")
    finally:
        store.close()


def test_jurors_are_added_renamed_or_left_alone() -> None:
    """A juror stored under the same name is only read; a new one is added; one whose display
    name changed takes the new name (the key, its model and options, is the same)."""
    import duckdb

    from jurybench.engine._records import register_jurors
    from jurybench.store import migrate

    con = duckdb.connect()
    migrate(con)
    first, other = parse_juror("fake/a,name=alpha"), parse_juror("fake/b")
    register_jurors(con, [first])
    register_jurors(con, [first, other])
    renamed = parse_juror("fake/a,name=beta")
    assert renamed.key == first.key
    register_jurors(con, [renamed, other])
    rows = con.execute("SELECT juror_key, name, model FROM jurors ORDER BY model").fetchall()
    assert rows == [(first.key, "beta", "fake/a"), (other.key, "fake/b", "fake/b")]
    register_jurors(con, [])
