"""stats pass-k (issue 85, item 4 and 6): the estimator worked out by hand, equal to what
tau-bench's own run.py computes from its released trials, the jury's gap from the verified
outcomes, and bad input in one line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from jurybench.stats.functions import pass_k, pass_k_gap
from tests.conftest import run_cli

TAU = Path(__file__).resolve().parents[1] / "fixtures" / "released" / "tau_bench" / "gpt-4o-airline.json"
GOAL = Path(__file__).resolve().parents[1] / "fixtures" / "rubrics" / "goal-met.yaml"


def test_four_trials_two_successes_give_one_sixth_at_k_2() -> None:
    """C(2,2)/C(4,2) = 1/6. With a second task that succeeded 4 of 4: pass^1 = (2/4 + 1)/2 = 3/4,
    pass^2 = (1/6 + 1)/2 = 7/12, pass^3 = (0 + 1)/2 = 1/2, pass^4 = 1/2. The interval of pass^1
    over the two tasks: 0.75 +- t(1; .975) * sd / sqrt(2), sd = 0.5 / sqrt(2): 0.75 +- 3.18, cut
    to [0, 1]."""
    one = pass_k({"a": [True, False, True, False]}, [2])
    assert one[0]["pass_k"] == pytest.approx(1 / 6) and one[0]["ci_low"] is None  # one task: no interval
    rows = pass_k({"a": [True, False, True, False], "b": [True] * 4}, [1, 2, 3, 4])
    assert [r["pass_k"] for r in rows] == pytest.approx([3 / 4, 7 / 12, 1 / 2, 1 / 2])
    assert (rows[0]["ci_low"], rows[0]["ci_high"]) == (0.0, 1.0)
    three = pass_k({"a": [True, False], "b": [True, True], "c": [False, False]}, [1])[0]
    # values 0.5, 1, 0: mean 0.5, sd 0.5, t(2; .975) = 4.303: 0.5 +- 1.242, cut
    assert three["pass_k"] == pytest.approx(0.5) and (three["ci_low"], three["ci_high"]) == (0.0, 1.0)
    same = pass_k({"a": [False, False], "b": [False, False]}, [1])[0]
    assert same["pass_k"] == 0 and same["ci_low"] is None  # every task alike: no interval claims certainty


def test_the_gap_is_paired_by_task() -> None:
    """Rater: a 2/2, b 1/2; truth: a 1/2, b 0/2. pass^1 gaps 0.5 and 0.5: mean 0.5, sd 0: none."""
    gap = pass_k_gap({"a": [True, True], "b": [True, False]}, {"a": [True, False], "b": [False, False]}, [1, 2])
    assert [g["gap"] for g in gap] == pytest.approx([0.5, 0.5]) and gap[0]["gap_low"] is None


def _tau_bench_pass_hat_ks(path: Path) -> dict[int, float]:
    """tau-bench's display_metrics (tau_bench/run.py at 59a200c), step for step, on its released file."""
    results = json.loads(path.read_text(encoding="utf-8"))

    def is_successful(reward: float) -> bool:
        return (1 - 1e-6) <= reward <= (1 + 1e-6)

    num_trials = len({r["trial"] for r in results})
    c_per_task_id: dict[int, int] = {}
    for r in results:
        c_per_task_id[r["task_id"]] = c_per_task_id.get(r["task_id"], 0) + (1 if is_successful(r["reward"]) else 0)
    return {
        k: sum(math.comb(c, k) / math.comb(num_trials, k) for c in c_per_task_id.values()) / len(c_per_task_id)
        for k in range(1, num_trials + 1)
    }


def test_the_released_trials_give_what_tau_bench_prints(tmp_path: Path) -> None:
    db = tmp_path / "tau.duckdb"
    assert run_cli("items", "import", str(TAU), "--format", "tau-bench", "--db", str(db)).exit_code == 0
    done = run_cli("stats", "pass-k", "--format", "json", "--db", str(db))
    assert done.exit_code == 0, done.stderr
    block = json.loads(done.stdout)["result"]["agents"]["gpt-4o"]
    ours = {row["k"]: row["pass_k"] for row in block["verified"]}
    theirs = _tau_bench_pass_hat_ks(TAU)
    assert ours == pytest.approx(theirs) and set(ours) == {1, 2, 3, 4}
    assert ours[1] == pytest.approx(1 / 6) and ours[2] == 0  # tasks 1 and 2 succeeded once each, task 0 never
    assert (block["n_tasks"], block["n_trials"], block["n_successes"]) == (3, 12, 2)
    shown = run_cli("stats", "pass-k", "--db", str(db))
    assert "gpt-4o: 3 tasks, 4 trials each, 2 of 12 trials succeeded" in " ".join(shown.stdout.split())


def test_a_jurys_verdicts_beside_the_verified_outcomes(tmp_path: Path) -> None:
    db = tmp_path / "tau.duckdb"
    assert run_cli("items", "import", str(TAU), "--format", "tau-bench", "--db", str(db)).exit_code == 0
    assert run_cli("score", "--rubric", str(GOAL), "--juror", "sim/a", "--run", "g", "--db", str(db)).exit_code == 0
    done = run_cli(
        "stats", "pass-k", "--run", "g", "--criterion", "goal", "--threshold", "3", "--format", "json", "--db", str(db)
    )
    assert done.exit_code == 0, done.stderr
    block = json.loads(done.stdout)["result"]["agents"]["gpt-4o"]
    from jurybench.store import connect

    con = connect(db, read_only=True)
    rows = con.execute(
        "SELECT c.task_id, j.jury_score >= 3, c.outcome_passed FROM conversations c JOIN jury_pointwise j "
        "USING (item_id) WHERE j.run_id = 'g' AND j.criterion = 'goal'"
    ).fetchall()
    con.close()
    rater: dict[str, list[bool]] = {}
    truth: dict[str, list[bool]] = {}
    for task, verdict, passed in rows:
        rater.setdefault(task, []).append(bool(verdict))
        truth.setdefault(task, []).append(bool(passed))
    expected = [r["pass_k"] for r in pass_k(rater, [1, 2, 3, 4])]
    assert [r["pass_k"] for r in block["rater"]] == pytest.approx(expected)
    assert [g["gap"] for g in block["gap"]] == pytest.approx(
        [e - v["pass_k"] for e, v in zip(expected, block["verified"], strict=True)]
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--k", "5"], "pass^5 needs at least 5 trials of every task; 3 task(s) have fewer"),
        (["--run", "g"], "--run needs --criterion and --threshold"),
        (["--where", "agent_model = 'nobody'"], "no conversation with a task where agent_model = 'nobody'"),
        (["--k", "0"], "--k must be at least 1"),
    ],
)
def test_bad_input_is_one_line(tmp_path: Path, args: list[str], says: str) -> None:
    db = tmp_path / "tau.duckdb"
    assert run_cli("items", "import", str(TAU), "--format", "tau-bench", "--db", str(db)).exit_code == 0
    done = run_cli("stats", "pass-k", *args, "--db", str(db))
    assert done.exit_code == 2 and says in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) <= 2


def test_trials_without_outcomes_are_said(tmp_path: Path) -> None:
    db = tmp_path / "chat.duckdb"
    rows = tmp_path / "runs.jsonl"
    rows.write_text(
        json.dumps({"id": "a", "task_id": "t", "messages": [{"role": "user", "content": "hi"}]}) + "\n",
        encoding="utf-8",
    )
    assert run_cli("items", "import", str(rows), "--format", "openai-chat", "--db", str(db)).exit_code == 0
    done = run_cli("stats", "pass-k", "--db", str(db))
    assert done.exit_code == 2 and "(unknown)'s 1 trial has no verified outcome" in done.stderr


def test_the_service_and_python_give_the_same(tmp_path: Path) -> None:
    """Declared once: POST /v1/stats/pass-k and jurybench.stats.pass_k give the command line's figures."""
    import jurybench as jb
    from tests.service.conftest import make_client

    db = tmp_path / "tau.duckdb"
    assert run_cli("items", "import", str(TAU), "--format", "tau-bench", "--db", str(db)).exit_code == 0
    with make_client(db) as client:
        served = client.post("/v1/stats/pass-k", json={"k": 1})
        assert served.status_code == 200, served.text
        assert served.json()["result"]["agents"]["gpt-4o"]["verified"][0]["pass_k"] == pytest.approx(1 / 6)
        bad = client.post("/v1/stats/pass-k", json={"k": 9})
        assert bad.status_code in (400, 422) and "pass^9 needs at least 9 trials" in bad.text
    with jb.open(db) as store:
        frame = jb.stats.pass_k(store, k=2)
    assert frame.attrs["result"]["agents"]["gpt-4o"]["verified"][0]["pass_k"] == 0
