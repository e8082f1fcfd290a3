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
from jurybench.stats import anytime as cs
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


def _study(
    rng: np.random.Generator,
    mean: float,
    n: int = 400,
    batch: int = 20,
    alpha: float = 0.05,
) -> tuple[bool, int, bool]:
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
    done = run_cli(
        "score",
        "-r",
        "story-quality",
        "-j",
        "sim/lenient,leniency=1,noise=0.3",
        "--run",
        "seq",
        "--until",
        "excludes(coherence,3)",
        "--batch-items",
        "30",
        "--no-progress",
        "--db",
        str(stories),
    )
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
    shown = json.loads(
        run_cli(
            "stats", "sequential", "--run", "seq", "--criterion", "coherence", "--format", "json", "--db", str(stories)
        ).stdout
    )["result"]
    assert shown["stopped"] == "met" and shown["value"] == 3 and shown["p_always_valid"] < 0.05
    assert shown["ci_low"] == pytest.approx(final["ci_low"])
    other = json.loads(
        run_cli(
            "stats",
            "ttest",
            "--run",
            "seq",
            "--by",
            "'all'",
            "--baseline",
            "3",
            "--format",
            "json",
            "--db",
            str(stories),
        ).stdout
    )["result"]
    assert other["stopping"]["rule"] == "excludes(coherence,3)" and "do not correct" in other["stopping"]["note"]


def test_a_rule_never_met_judges_every_subject_in_a_seeded_order(stories: Path) -> None:
    run = jb.score(
        stories,
        rubric="story-quality",
        jury=["sim/a,noise=0.5"],
        run="all",
        until="ci_width(coherence)<0.01",
        batch_items=100,
        until_seed=3,
    )
    assert run.stopping is not None and run.stopping["stopped"] == "exhausted" and run.stopping["judged"] == 300
    again = jb.score(
        stories,
        rubric="story-quality",
        jury=["sim/a,noise=0.5"],
        run="again",
        until="ci_width(coherence)<0.01",
        batch_items=100,
        until_seed=3,
    )
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
    done = run_cli(
        "score", "-r", "story-quality", "-j", "sim/a", "--run", "bad", *args, "--no-progress", "--db", str(stories)
    )
    assert done.exit_code == 2 and message in done.stderr and "Traceback" not in done.stderr
    with jb.open(stories, read_only=True) as store:
        assert store.sql("SELECT count(*) AS n FROM runs")["n"][0] == 0  # nothing written


def test_over_http_a_job_judges_until_the_rule_is_met(tmp_path: Path) -> None:
    from tests.service.conftest import make_client, wait_for

    items = [{"item_id": f"h{k}", "response": f"S {k}", "prompt": f"p{k}"} for k in range(300)]
    with make_client(tmp_path / "served.duckdb") as client:
        body = {
            "rubric": "story-quality",
            "items": items,
            "jury": {"jurors": ["sim/lenient,leniency=1,noise=0.3"]},
            "until": "excludes(coherence,3)",
            "batch_items": 30,
        }
        r = client.post("/v1/jobs", json=body)
        assert r.status_code == 202, r.json()
        job = wait_for(client, r.json()["job_id"], timeout=120)
        assert job["status"] == "finished", job
        assert any(n.startswith("until excludes(coherence,3): met after") for n in job["notes"]), job["notes"]
        rows = client.post(
            "/v1/sql",
            json={
                "query": "SELECT stopping->>'stopped', CAST(stopping->>'judged' AS INT) "
                f"FROM runs WHERE run_id = '{job['run_id']}'"
            },
        ).json()["rows"]
        assert rows[0][0] == "met" and rows[0][1] < 300
        assert client.post("/v1/jobs", json={**body, "until": "separated(coherence)"}).status_code == 202
        refused = client.post("/v1/jobs", json={**body, "until": "nonsense"})
        assert refused.status_code == 422 and "ci_width(CRITERION)<WIDTH" in refused.text
        shown = client.post("/v1/stats/sequential", json={"run": job["run_id"], "criterion": "coherence"})
        assert shown.status_code == 200 and shown.json()["result"]["p_always_valid"] < 0.05


# Two more stopping rules: a leaderboard's ranks settled (separated) and a gap test decided.


def test_separated_and_the_gap_by_hand() -> None:
    # 200 fives and 200 ones on 1..5 (sigma 2), alpha 0.1 split over two models (0.05 each),
    # rho 1: V + rho = 801, log(801 / 0.0025) = 12.67733, sqrt(801 x 12.67733) / 200 = 0.503848.
    figure = cs.look_groups({"b": [1.0] * 200, "a": [5.0] * 200}, 1.0, 5.0, 0.1, 1.0)
    assert [g["group"] for g in figure["groups"]] == ["a", "b"]  # ranked by mean
    assert figure["groups"][0]["ci_low"] == pytest.approx(5 - 0.503848, abs=1e-6)
    assert figure["groups"][1]["ci_high"] == pytest.approx(1 + 0.503848, abs=1e-6)
    assert figure["separated"] and figure["n"] == 400 and figure["mean"] == 3.0
    assert not cs.look_groups({"a": [5.0, 1.0] * 5, "b": [1.0, 5.0] * 5}, 1.0, 5.0, 0.1, 1.0)["separated"]
    # The gap on -3..3 (sigma 3), alpha 0.1 over two categories, rho 100, 100 scores each:
    # sqrt(1000 x log(1000 / (100 x 0.0025))) / 100 = sqrt(1000 x 8.29405) / 100 = 0.910716.
    gap = cs.look_gap({"logos": [2.0] * 100, "ethos": [1.0, -1.0] * 50}, -3.0, 3.0, 0.1, 100.0)
    r = 0.910716
    assert gap["gap"] == pytest.approx(2.0)
    assert gap["ci_low"] == pytest.approx(2 - r, abs=1e-5)  # ethos's interval holds 0: it adds nothing
    assert gap["ci_high"] == pytest.approx((2 + r) + r, abs=1e-5)
    rule = cs.parse_rule("gap_excludes(0)", ["logos", "ethos"], 0.1)
    assert rule.kind == "gap_excludes" and rule.dimension == "" and cs.met(rule, gap)
    assert cs.parse_rule("separated(x)", ["x"]).threshold is None


def _leaderboard_study(
    rng: np.random.Generator, means: list[float], n: int = 1500, batch: int = 50, alpha: float = 0.05
) -> tuple[bool, int]:
    """Scores on 1..5 for models with the given true means, judged in batches: (the ranks were
    declared separated, subjects judged when it stopped)."""
    rule = cs.StoppingRule("separated(x)", "separated", "x", None, alpha)
    models = rng.integers(0, len(means), size=n)
    scores = np.clip(np.rint(np.array(means)[models] + rng.normal(0, 1, n)), 1, 5)
    rho = cs.rho_for(n, 2.0, alpha)
    for k in range(batch, n + 1, batch):
        groups: dict[str, list[float]] = {}
        for m, s in zip(models[:k], scores[:k], strict=True):
            groups.setdefault(f"m{m}", []).append(float(s))
        if cs.met(rule, cs.look_groups(groups, 1.0, 5.0, alpha, rho)):
            return True, k
    return False, n


def test_a_leaderboard_of_equal_models_is_declared_settled_at_most_alpha_of_the_time() -> None:
    rng = np.random.default_rng(3)
    runs = [_leaderboard_study(rng, [3.0, 3.0]) for _ in range(400)]
    assert sum(d for d, _ in runs) / len(runs) <= 0.05
    planted = [_leaderboard_study(rng, [2.0, 3.0, 4.0]) for _ in range(100)]
    assert sum(d for d, _ in planted) / len(planted) > 0.9
    assert np.mean([s for _, s in planted]) < 0.8 * 1500  # before every subject is judged


def _gap_study(
    rng: np.random.Generator, effect: float, n: int = 400, batch: int = 20, alpha: float = 0.05
) -> tuple[bool, int]:
    """Symmetrized scores on -3..3 in four categories, one with a true mean of ``effect``."""
    rule = cs.StoppingRule("gap_excludes(0)", "gap_excludes", "", 0.0, alpha)
    true = np.array([effect, 0.0, 0.0, 0.0])
    scores = np.clip(np.rint(true + rng.normal(0, 1.2, (n, 4))), -3, 3)
    rho = cs.rho_for(n, 3.0, alpha)
    for k in range(batch, n + 1, batch):
        figure = cs.look_gap({f"c{j}": list(scores[:k, j]) for j in range(4)}, -3.0, 3.0, alpha, rho)
        if cs.met(rule, figure):
            return True, k
    return False, n


def test_a_gap_of_zero_is_declared_decided_at_most_alpha_of_the_time() -> None:
    rng = np.random.default_rng(5)
    runs = [_gap_study(rng, 0.0) for _ in range(400)]
    assert sum(d for d, _ in runs) / len(runs) <= 0.05
    planted = [_gap_study(rng, 1.0) for _ in range(100)]
    assert sum(d for d, _ in planted) / len(planted) > 0.9
    assert np.mean([s for _, s in planted]) < 0.6 * 400


def test_score_until_separated_ranks_the_items_models(tmp_path: Path) -> None:
    db = tmp_path / "lb.duckdb"
    truth = {"m-good": 2.0, "m-mid": 0.0, "m-poor": -2.0}  # scores near 5, 3 and 1
    with jb.open(db) as store:
        store.import_items(
            [
                {
                    "item_id": f"i{k:03d}",
                    "response": f"S {k}",
                    "prompt": f"p{k}",
                    "model": list(truth)[k % 3],
                    "true_coherence": list(truth.values())[k % 3],
                }
                for k in range(300)
            ]
        )
    done = run_cli(
        "score",
        "-r",
        "story-quality",
        "-j",
        "sim/a,noise=0.4",
        "--run",
        "lb",
        "--until",
        "separated(coherence)",
        "--batch-items",
        "30",
        "--no-progress",
        "--db",
        str(db),
    )
    assert done.exit_code == 0, done.stderr
    with jb.open(db, read_only=True) as store:
        stopping = json.loads(store.sql("SELECT stopping FROM runs WHERE run_id = 'lb'")["stopping"][0])
    assert stopping["stopped"] == "met" and stopping["judged"] < 300
    ranked = stopping["final"]["groups"]
    assert [g["group"] for g in ranked] == ["m-good", "m-mid", "m-poor"]
    assert ranked[0]["ci_low"] > ranked[1]["ci_high"] and ranked[1]["ci_low"] > ranked[2]["ci_high"]
    shown = json.loads(
        run_cli(
            "stats", "sequential", "--run", "lb", "--criterion", "coherence", "--format", "json", "--db", str(db)
        ).stdout
    )["result"]
    assert [g["group"] for g in shown["rule_figure"]["groups"]] == ["m-good", "m-mid", "m-poor"]
    assert shown["rule_figure"]["separated"] and shown["stopped"] == "met"
    pairwise = run_cli(
        "score",
        "-r",
        "persuasion",
        "-j",
        "sim/a",
        "--run",
        "no",
        "--until",
        "separated(logos)",
        "--no-progress",
        "--db",
        str(db),
    )
    assert pairwise.exit_code == 2 and "a leaderboard ranks the items' models" in pairwise.stderr


def test_score_until_gap_excludes_decides_a_planted_category(tmp_path: Path) -> None:
    db = tmp_path / "gap.duckdb"
    with jb.open(db) as store:
        store.import_items(
            [
                {
                    "item_id": f"{side}{k:03d}",
                    "response": f"{side} {k}",
                    "prompt": f"p{k}",
                    "true_logos": 1.0 if side == "a" else -1.0,
                }
                for k in range(150)
                for side in "ab"
            ]
        )
        store.import_pairs([{"pair_id": f"p{k:03d}", "item_a": f"a{k:03d}", "item_b": f"b{k:03d}"} for k in range(150)])
    done = run_cli(
        "score",
        "-r",
        "persuasion",
        "-j",
        "sim/a,noise=0.5",
        "--run",
        "gap",
        "--until",
        "gap_excludes(0)",
        "--batch-items",
        "15",
        "--no-progress",
        "--db",
        str(db),
    )
    assert done.exit_code == 0, done.stderr
    with jb.open(db, read_only=True) as store:
        stopping = json.loads(store.sql("SELECT stopping FROM runs WHERE run_id = 'gap'")["stopping"][0])
    assert stopping["stopped"] == "met" and stopping["judged"] < 150
    final = stopping["final"]
    assert final["ci_low"] > 0 and final["categories"]["logos"]["ci_low"] > 0
    table = run_cli("stats", "sequential", "--run", "gap", "--criterion", "logos", "--db", str(db)).stdout
    assert "gap" in table and "logos" in table
    shown = json.loads(
        run_cli(
            "stats", "sequential", "--run", "gap", "--criterion", "logos", "--format", "json", "--db", str(db)
        ).stdout
    )["result"]
    assert shown["rule_figure"]["ci_low"] > 0 and shown["gap_value"] == 0
    pointwise = run_cli(
        "score",
        "-r",
        "story-quality",
        "-j",
        "sim/a",
        "--run",
        "no",
        "--until",
        "gap_excludes(0)",
        "--no-progress",
        "--db",
        str(db),
    )
    assert pointwise.exit_code == 2 and "the treatment gap is a pairwise rubric's figure" in pointwise.stderr


def test_looks_are_kept_as_they_are_taken_and_a_resumed_run_takes_them_up(
    stories: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 40, item 6: a kill -9 during --until lost the looks taken so far (the record was
    written only at the end). Each look is now committed as it is taken: an interruption in the
    fourth batch leaves three looks in runs.stopping, and the same command takes them up without
    judging those batches again."""
    from jurybench.engine import _run as engine_run

    real = engine_run.score
    batches: list[int] = []
    interrupt = [True]

    def interrupted_in_the_fourth(*args: object, **kwargs: object) -> object:
        batches.append(len(kwargs.get("ids") or []))  # type: ignore[arg-type]
        if interrupt[0] and len(batches) == 4:
            raise KeyboardInterrupt  # as a kill during the batch: nothing after it is written
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine_run, "score", interrupted_in_the_fourth)
    monkeypatch.setattr("jurybench.engine.score", interrupted_in_the_fourth)
    arguments = {
        "rubric": "story-quality",
        "jury": ["sim/a,noise=0.5"],
        "run": "k",
        "until": "ci_width(coherence)<0.01",
        "batch_items": 40,
        "until_seed": 5,
    }
    with pytest.raises(KeyboardInterrupt):
        jb.score(stories, **arguments)  # type: ignore[arg-type]
    with jb.open(stories, read_only=True) as store:
        kept = json.loads(store.sql("SELECT stopping FROM runs WHERE run_id = 'k'")["stopping"][0])
    assert kept["stopped"] is None and [look["judged"] for look in kept["looks"]] == [40, 80, 120]
    batches.clear()
    interrupt[0] = False
    resumed = jb.score(stories, **arguments)  # type: ignore[arg-type]
    # The third batch again (from the cache, for its result), then the fourth on: not the first two.
    assert batches == [40, 40, 40, 40, 40, 20]
    assert resumed.stopping is not None and resumed.stopping["stopped"] == "exhausted"
    looks = resumed.stopping["looks"]
    assert [look["judged"] for look in looks] == [40, 80, 120, 160, 200, 240, 280, 300]
    assert looks[:3] == kept["looks"]  # the looks taken before, as they were
    with jb.open(stories, read_only=True) as store:
        assert int(store.sql("SELECT n_subjects FROM runs WHERE run_id = 'k'")["n_subjects"][0]) == 300
    other = jb.score(stories, **{**arguments, "batch_items": 50})  # type: ignore[arg-type]
    assert [look["judged"] for look in other.stopping["looks"]][:2] == [50, 100]  # another design: afresh
