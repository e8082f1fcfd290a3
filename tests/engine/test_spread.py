"""The pieces a run on Ray is made of, without Ray: the rows a worker builds are the rows the
driver's writer builds from the same answers (journal lines included), calls shared between runs
of a process are handed over only when someone waits for them, and the budget says when an
admission would wait for calls in flight."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jurybench.engine._calls import _InFlight
from jurybench.engine._plan import Task
from jurybench.engine._records import CALL_COLUMNS
from jurybench.engine._writer import RowKeys, Rows, _Released, _Writer
from jurybench.jurors import parse_juror
from jurybench.rubric import Outcome, load_rubric


def _call(key: str, status: str) -> dict[str, object]:
    row: dict[str, object] = {name: None for name, _ in CALL_COLUMNS}
    row.update(call_key=key, status=status, run_id="r", cost_usd=0.001, messages="[]")
    return row


def _answers() -> list[tuple[Task, dict[str, object], Outcome | None]]:
    juror = parse_juror("fake/f")
    task = [Task(f"k{i}", juror, f"i{i}", "", 0, [{"role": "user", "content": "x"}]) for i in range(3)]
    scores = {"relevance": 4, "coherence": 5, "empathy": 3, "surprise": 5, "engagement": 2, "complexity": 4}
    return [
        (task[0], _call("k0", "ok"), Outcome("valid", scores, "fine", None)),
        (task[1], _call("k1", "ok"), Outcome("invalid", None, None, "no JSON")),
        (task[2], _call("k2", "error"), None),
    ]


def test_a_workers_rows_are_the_rows_the_writer_builds_from_the_same_answers(tmp_path: Path) -> None:
    rubric = load_rubric("story-quality")
    writer = _Writer(_Released(tmp_path / "s.duckdb"), "r", rubric)
    built = Rows(RowKeys.of(rubric), journaled=True)
    for task, call, outcome in _answers():
        writer.add(task, call, outcome)
        built.add(task, call, outcome)
    assert built.calls == writer.calls and built.judgments == writer.judgments
    # 6 rows for the valid answer, 6 for the invalid one (status invalid, no scores), none for the error
    assert len(built.judgments["call_key"]) == 12 and built.spans == [(0, 6), (6, 12), (12, 12)]
    assert built.judgments["score"][:6] == [4, 5, 3, 5, 2, 4] and built.judgments["status"][6:] == ["invalid"] * 6
    # The journal's lines are those the driver would have written itself (outside an event loop
    # each is appended at once).
    assert writer.journal is not None and built.lines is not None and len(built.lines) == 3
    assert writer.journal.path.read_text() == "".join(built.lines)

    other = _Writer(_Released(tmp_path / "t.duckdb"), "r", rubric)
    other.extend(built)  # the driver's side: appended as they come
    assert other.calls == writer.calls and other.judgments == writer.judgments
    assert other.journal is not None and other.journal.path.read_text() == "".join(built.lines)
    # One call's row and judgment rows, as a waiting run takes them
    call, judgments = built.row(1)
    assert call["call_key"] == "k1" and judgments["status"] == ["invalid"] * 6
    writer.journal.remove()
    other.journal.remove()


def test_answers_are_handed_over_only_for_keys_another_run_waits_for() -> None:
    flight = _InFlight()
    mine = flight.claim_many(["a", "b", "c"])
    assert [owner for owner, _ in mine] == [True, True, True]
    waiting = flight.claim("b")  # another run plans call b too
    assert waiting[0] is False and waiting[1] is mine[1][1]  # it waits on b's box
    asked: list[int] = []

    def result(i: int) -> Any:
        asked.append(i)
        return ({"status": "ok"}, {"score": [1]})

    flight.release_many(["a", "b", "c"], result)
    assert asked == [1]  # only b's answer was built
    assert mine[0][1] == [None] and mine[1][1] == [({"status": "ok"}, {"score": [1]})] and mine[2][1] == [None]
    assert flight.calls == {} and flight.waited == set()
    assert flight.claim("b")[0] is True  # settled: the next run makes it itself


def test_the_budget_says_when_an_admission_would_wait_for_calls_in_flight() -> None:
    """A budget of $1.00, calls reserved at $0.40: two fit; the third would wait while those are
    open; with nothing open it would not wait (it is admitted or the budget is reached)."""
    from jurybench.engine._budget import Budget

    class Flat(Budget):
        def expected(self, task: Any, *, batch: bool = False, probe: bool = False) -> float:
            return 0.40

    budget = Flat(1.0, 0.0, {}, {})
    assert not budget.would_wait(None)
    budget.reserved, budget.open = 0.80, 2  # two admitted
    assert budget.would_wait(None)  # 0.80 + 0.40 > 1.00 while two are open
    budget.reserved, budget.open = 0.40, 1
    assert not budget.would_wait(None)
    budget.reserved, budget.open, budget.reached = 0.80, 2, True
    assert not budget.would_wait(None)  # reached: admit refuses at once
