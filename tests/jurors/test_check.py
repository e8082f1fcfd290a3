"""check/tool-match (issue 85, item 2): a rater computed without any model from a conversation's
tool calls and its reference actions, stored as a juror's answers are. Hand-worked figures for
each documented rule, the released tau-bench trials, and its bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from jurybench.jurors._kind_check import matched_count, on_scale, tool_match
from jurybench.store import connect
from tests.conftest import run_cli, write

TAU = Path(__file__).resolve().parents[1] / "fixtures" / "released" / "tau_bench" / "gpt-4o-airline.json"


def call(tool: str, **arguments: object) -> dict[str, object]:
    return {"tool": tool, "arguments": arguments}


REFERENCE = [call("find", city="Lyon"), call("book", seat=12)]


def test_figures_worked_by_hand() -> None:
    # the two reference actions made, in order, with one look-up between: 2 matched of 2 and of 3
    made = [call("find", city="Lyon"), call("weather", city="Lyon"), call("book", seat=12)]
    assert tool_match(made, REFERENCE) == {"matched": 2.0, "recall": 1.0, "precision": 2 / 3, "f1": 0.8, "exact": 0.0}
    # the same calls in the other order: in strict order only one can be matched (either), in any order both
    swapped = [call("book", seat=12), call("find", city="Lyon")]
    assert matched_count(swapped, REFERENCE, "strict", "equal") == 1
    assert matched_count(swapped, REFERENCE, "any", "equal") == 2
    assert tool_match(swapped, REFERENCE, order="any")["exact"] == 1.0
    # numbers by value (12 == 12.0), not a boolean as 1; other arguments or another tool do not match
    assert tool_match([call("find", city="Lyon"), call("book", seat=12.0)], REFERENCE)["exact"] == 1.0
    assert tool_match([call("find", city="Lyon"), call("book", seat=True)], REFERENCE)["matched"] == 1.0
    assert tool_match([call("find", city="Paris"), call("reserve", seat=12)], REFERENCE)["matched"] == 0.0
    # contains: every argument the reference gives, with more allowed; equal: not
    more = [call("find", city="Lyon", days=2), call("book", seat=12)]
    assert tool_match(more, REFERENCE)["recall"] == 0.5
    assert tool_match(more, REFERENCE, arguments="contains")["recall"] == 1.0
    # nothing to make and nothing made: every figure 1; something to make and nothing made: 0
    assert tool_match([], []) == {"matched": 0.0, "recall": 1.0, "precision": 1.0, "f1": 1.0, "exact": 1.0}
    assert tool_match([], REFERENCE) == {"matched": 0.0, "recall": 0.0, "precision": 1.0, "f1": 0.0, "exact": 0.0}


def test_any_order_finds_the_largest_matching_not_the_first() -> None:
    # contains: the first call fits both references, the second only the first; a greedy pass
    # would give the first call to the first reference and match one; the largest matching is 2
    reference = [call("pay", amount=5), call("pay", amount=5, card="x")]
    made = [call("pay", amount=5, card="x"), call("pay", amount=5, note="n")]
    assert matched_count(made, reference, "any", "contains") == 2


def test_a_figure_on_a_scale() -> None:
    assert [on_scale(f, 0, 1) for f in (0.0, 0.49, 0.5, 1.0)] == [0, 0, 1, 1]
    assert [on_scale(f, 1, 5) for f in (0.0, 0.3, 0.375, 2 / 3, 1.0)] == [1, 2, 3, 4, 5]  # 1 + 4f, half up


def _tau(tmp_path: Path) -> Path:
    db = tmp_path / "tau.duckdb"
    assert run_cli("items", "import", str(TAU), "--format", "tau-bench", "--db", str(db)).exit_code == 0
    return db


def test_on_the_released_trials_it_is_stored_as_a_juror_and_follows_the_rewards(tmp_path: Path) -> None:
    db = _tau(tmp_path)
    done = run_cli("score", "-r", "task-completion", "-j", "check/tool-match", "--run", "chk", "--db", str(db))
    assert done.exit_code == 0, done.stderr
    exact = run_cli(
        "score", "-r", "task-completion", "-j", "check/tool-match,score=exact", "--run", "exact", "--db", str(db)
    )
    assert exact.exit_code == 0, exact.stderr
    con = connect(db, read_only=True)
    try:
        rows = con.execute(
            "SELECT j.run_id, j.item_id, j.juror_score, c.outcome FROM juror_pointwise j "
            "JOIN conversations c USING (item_id) ORDER BY 1, 2"
        ).fetchall()
        rationale = con.execute(
            "SELECT rationale FROM pointwise_judgments WHERE item_id = 'gpt-4o-airline/task2/trial0' LIMIT 1"
        ).fetchall()[0][0]
    finally:
        con.close()
    recall = {i: s for r, i, s, _ in rows if r == "chk"}
    reward = {i: o for r, i, _, o in rows if r == "chk"}
    # counted from the file: task 1 trial 1 and task 2 trials 1 and 2 make every reference action
    # with its arguments; task 2 trial 1 makes 27 calls and still earns 0 (it also changed what it
    # should not), so exact agrees with all 12 rewards and recall with 11
    assert sorted(i for i, s in recall.items() if s == 1) == [
        "gpt-4o-airline/task1/trial1",
        "gpt-4o-airline/task2/trial1",
        "gpt-4o-airline/task2/trial2",
    ]
    assert sum(recall[i] == reward[i] for i in recall) == 11
    exact_scores = {i: s for r, i, s, _ in rows if r == "exact"}
    assert exact_scores["gpt-4o-airline/task2/trial1"] == 0
    assert rationale.startswith("2 of 5 reference actions matched (strict order, arguments equal) among 7 calls")


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    db = _tau(tmp_path)
    runs = write(
        tmp_path / "runs.jsonl",
        '{"id": "r1", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}\n',
    )
    assert run_cli("items", "import", str(runs), "--format", "openai-chat", "--db", str(db)).exit_code == 0
    cases = {
        ("-j", "check/tool-match"): "juror 'check/tool-match': 1 of the 13 selected subjects have no reference actions "
        "(the first: 'r1').",
        ("-j", "check/tool-match,order=loose"): "order=loose is not one of strict, any.",
        ("-j", "check/tool-watch"): "there is no check named 'tool-watch'.",
    }
    for args, message in cases.items():
        refused = run_cli("score", "-r", "task-completion", *args, "--db", str(db))
        assert refused.exit_code == 2, (args, refused.stderr)
        assert message in refused.stderr and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    pairs = write(
        tmp_path / "p.csv", "pair_id,item_a,item_b\np0,gpt-4o-airline/task0/trial0,gpt-4o-airline/task0/trial1\n"
    )
    assert run_cli("pairs", "import", str(pairs), "--db", str(db)).exit_code == 0
    refused = run_cli("score", "-r", "trajectory-preference", "-j", "check/tool-match", "--db", str(db))
    assert refused.exit_code == 2 and "rubric 'trajectory-preference' is kind pairwise" in refused.stderr
    con = connect(db, read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM calls").fetchall() == [(0,)]
    finally:
        con.close()


@pytest.mark.parametrize("face", ["python"])
def test_the_python_face_takes_it(tmp_path: Path, face: str) -> None:
    import jurybench as jb

    db = _tau(tmp_path)
    with jb.Store(db) as store:
        run = jb.score(store, rubric="task-completion", jury=["check/tool-match,score=exact"], run="py")
        assert run.run_id == "py"
