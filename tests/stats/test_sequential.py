"""Sequential judging (issue 31): the confidence sequence by hand, its error rate under optional
stopping by simulation (and the naive fixed-n test's, which looking often inflates), the saving
with a planted effect, and score --until end to end."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import jurybench as jb
from jurybench.stats import sequential as cs
from tests.conftest import run_cli


def test_the_radius_and_the_always_valid_p_by_hand() -> None:
    # n = 100 scores on 1..5 (sigma = 2), alpha 0.05, rho 100: V + rho = 400 + 100 = 500,
    # log(500 / (100 x 0.0025)) = log 2000 = 7.6009; sqrt(500 x 7.6009) / 100 = 0.61648.
    assert cs.radius(100, 2.0, 0.05, 100.0) == pytest.approx(0.61648, abs=1e-5)
    assert cs.radius(0, 2.0, 0.05, 100.0) == math.inf
    # log M at a sum 50 above the value: 0.5 log(100 / 500) + 50^2 / (2 x 500) = -0.80472 + 2.5.
    assert cs.log_martingale(350.0, 100, 3.0, 2.0, 100.0) == pytest.approx(1.69528, abs=1e-5)
    assert cs.always_valid_p([(350.0, 100)], 3.0, 1.0, 5.0, 100.0) == pytest.approx(math.exp(-1.69528), abs=1e-5)
    figure = cs.look([1.0, 5.0], 1.0, 5.0, 0.05, 100.0)  # clipped to the scale
    assert figure["mean"] == 3.0 and figure["ci_low"] == 1.0 and figure["ci_high"] == 5.0


def _study(rng: np.random.Generator, mean: float, n: int = 400, batch: int = 20, alpha: float = 0.05,
           ) -> tuple[bool, int, bool]:  # fmt: skip
    """One simulated sequential study of scores on 1..5: (decided by the confidence sequence,
    subjects judged when it stopped, decided by a fixed-n t-test looked at after every batch)."""
    from scipy.stats import ttest_1samp

    p = np.clip(np.array([1, 2, 3, 2, 1], dtype=float) + (mean - 3) * np.array([-1, -1, 0, 1, 1]), 0.01, None)
    scores = rng.choice([1.0, 2.0, 3.0, 4.0, 5.0], size=n, p=p / p.sum())
    rule = cs.StoppingRule("excludes(x,3)", "excludes", "x", 3.0, alpha)
    rho = cs.rho_for(n, 2.0, alpha)
    decided, stopped, naive = False, n, False
    for k in range(batch, n + 1, batch):
        if not decided and cs.met(rule, cs.look(list(scores[:k]), 1.0, 5.0, alpha, rho)):
            decided, stopped = True, k
        naive = naive or bool(ttest_1samp(scores[:k], 3.0).pvalue < alpha)
    return decided, stopped, naive


def test_with_no_effect_stopping_early_decides_falsely_at_most_alpha_of_the_time() -> None:
    rng = np.random.default_rng(7)
    runs = [_study(rng, 3.0) for _ in range(1000)]
    false_rate = sum(d for d, _, _ in runs) / len(runs)
    naive_rate = sum(n for _, _, n in runs) / len(runs)
    assert false_rate <= 0.05
    assert naive_rate > 0.05  # a fixed-n test looked at 20 times decides falsely far more often


def test_with_a_planted_effect_it_decides_and_stops_early() -> None:
    rng = np.random.default_rng(11)
    runs = [_study(rng, 4.0) for _ in range(300)]  # a mean of 3.66
    assert sum(d for d, _, _ in runs) / len(runs) > 0.9
    assert np.mean([s for _, s, _ in runs]) < 0.6 * 400  # judged on average well under the fixed design's 400


@pytest.fixture
def stories(tmp_path: Path) -> Path:
    db = tmp_path / "s.duckdb"
    with jb.open(db) as store:
        store.import_items([{"item_id": f"i{k}", "response": f"S {k}", "prompt": f"p{k}"} for k in range(300)])
    return db


def test_score_until_stops_when_the_rule_is_met_and_records_its_looks(stories: Path) -> None:
    done = run_cli("score", "-r", "story-quality", "-j", "sim/lenient,leniency=1,noise=0.3", "--run", "seq",
                   "--until", "excludes(coherence,3)", "--batch-items", "30", "--no-progress", "--db", str(stories))  # fmt: skip
    assert done.exit_code == 0, done.stderr
    assert "stopped: excludes(coherence,3) met" in done.stdout and "look 1: 30 of 300 judged" in done.stdout
    with jb.open(stories, read_only=True) as store:
        stopping = json.loads(store.sql("SELECT stopping FROM runs WHERE run_id = 'seq'")["stopping"][0])
        judged = int(store.sql("SELECT count(*) AS n FROM run_subjects WHERE run_id = 'seq'")["n"][0])
    assert stopping["stopped"] == "met" and stopping["judged"] == judged < 300
    with jb.open(stories, read_only=True) as store:  # the run counts every batch's subjects, not the last one's
        assert int(store.sql("SELECT n_subjects FROM runs WHERE run_id = 'seq'")["n_subjects"][0]) == judged
    assert [look["judged"] for look in stopping["looks"]] == list(range(30, judged + 1, 30))
    final = stopping["final"]
    assert final["ci_low"] > 3 and final["n"] == judged  # the interval excludes 3, at the subjects judged
    shown = json.loads(run_cli("stats", "sequential", "--run", "seq", "--criterion", "coherence", "--format", "json",
                               "--db", str(stories)).stdout)["result"]  # fmt: skip
    assert shown["stopped"] == "met" and shown["value"] == 3 and shown["p_always_valid"] < 0.05
    assert shown["ci_low"] == pytest.approx(final["ci_low"])
    other = json.loads(run_cli("stats", "ttest", "--run", "seq", "--by", "'all'", "--baseline", "3", "--format",
                               "json", "--db", str(stories)).stdout)["result"]  # fmt: skip
    assert other["stopping"]["rule"] == "excludes(coherence,3)" and "do not correct" in other["stopping"]["note"]


def test_a_rule_never_met_judges_every_subject_in_a_seeded_order(stories: Path) -> None:
    run = jb.score(stories, rubric="story-quality", jury=["sim/a,noise=0.5"], run="all",
                   until="ci_width(coherence)<0.01", batch_items=100, until_seed=3)  # fmt: skip
    assert run.stopping is not None and run.stopping["stopped"] == "exhausted" and run.stopping["judged"] == 300
    again = jb.score(stories, rubric="story-quality", jury=["sim/a,noise=0.5"], run="again",
                     until="ci_width(coherence)<0.01", batch_items=100, until_seed=3)  # fmt: skip
    assert again.counts["cached"] == 100  # the same seed, the same order: every batch is answered already


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--until", "width(coherence)<1"], "is not a stopping rule"),
        (["--until", "ci_width(charm)<1"], "'charm' is not a criterion"),
        (["--until", "ci_width(coherence)<1", "--batch-items", "0"], "--batch-items must be a whole number >= 1"),
        (["--until", "ci_width(coherence)<1", "--plan"], "--until and --plan do not go together"),
        (["--until", "ci_width(coherence)<1", "--until-alpha", "1.5"], "--until-alpha must be between 0 and 1"),
    ],
)
def test_bad_stopping_rules_are_one_line_and_exit_2(stories: Path, args: list[str], message: str) -> None:
    done = run_cli("score", "-r", "story-quality", "-j", "sim/a", "--run", "bad", *args, "--no-progress",
                   "--db", str(stories))  # fmt: skip
    assert done.exit_code == 2 and message in done.stderr and "Traceback" not in done.stderr
    with jb.open(stories, read_only=True) as store:
        assert store.sql("SELECT count(*) AS n FROM runs")["n"][0] == 0  # nothing written


def test_over_http_a_job_judges_until_the_rule_is_met(tmp_path: Path) -> None:
    from tests.service.conftest import make_client, wait_for

    items = [{"item_id": f"h{k}", "response": f"S {k}", "prompt": f"p{k}"} for k in range(300)]
    with make_client(tmp_path / "served.duckdb") as client:
        body = {"rubric": "story-quality", "items": items, "jury": {"jurors": ["sim/lenient,leniency=1,noise=0.3"]},
                "until": "excludes(coherence,3)", "batch_items": 30}  # fmt: skip
        r = client.post("/v1/jobs", json=body)
        assert r.status_code == 202, r.json()
        job = wait_for(client, r.json()["job_id"], timeout=120)
        assert job["status"] == "finished", job
        assert any(n.startswith("until excludes(coherence,3): met after") for n in job["notes"]), job["notes"]
        rows = client.post("/v1/sql", json={"query": "SELECT stopping->>'stopped', CAST(stopping->>'judged' AS INT) "
                                                     f"FROM runs WHERE run_id = '{job['run_id']}'"}).json()["rows"]  # fmt: skip
        assert rows[0][0] == "met" and rows[0][1] < 300
        refused = client.post("/v1/jobs", json={**body, "until": "nonsense"})
        assert refused.status_code == 422 and "ci_width(CRITERION)<WIDTH" in refused.text
        shown = client.post("/v1/stats/sequential", json={"run": job["run_id"], "criterion": "coherence"})
        assert shown.status_code == 200 and shown.json()["result"]["p_always_valid"] < 0.05
