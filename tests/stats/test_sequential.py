"""Sequential judging (issue 31): the confidence sequence by hand, its error rate under optional
stopping by simulation (and the naive fixed-n test's, which looking often inflates), the saving
with a planted effect, and score --until end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import jurybench as jb
from jurybench.stats import anytime as cs
from tests.conftest import run_cli


def test_the_betting_capital_and_the_always_valid_p_by_hand() -> None:
    # Three 5s on 1..5 tested at 3: y = 1, 1, 1 and m = 0.5. Before the first: mu 0.5, s2 0.25,
    # so the bet is 0 and K = (1 + 1) / 2. Before the second: mu = (0.5 + 1) / 2 = 0.75,
    # s2 = (0.25 + 0.0625) / 2 = 0.15625, g = 0.25 / (0.15625 + 0.0625) = 1.143, capped at
    # c / m = 1: K+ = 1.5, K- = 1, K = 1.25. Before the third: mu = 2.5 / 3, s2 = (0.25 + 0.0625
    # + 0.02778) / 3 = 0.11343, g = 0.3333 / 0.22454 = 1.485, capped at 1: K+ = 2.25, K = 1.625.
    path = cs.log_capital([5.0, 5.0, 5.0], 1.0, 5.0, np.array([0.5]))[:, 0]
    assert np.exp(path) == pytest.approx([1.0, 1.25, 1.625], abs=1e-12)
    assert cs.p_value([5.0, 5.0, 5.0], 1.0, 5.0, 3.0) == pytest.approx(1 / 1.625, abs=1e-12)
    assert cs.p_value([], 1.0, 5.0, 3.0) == 1.0
    figure = cs.look([1.0, 5.0], 1.0, 5.0, 0.05)  # two scores decide nothing: the whole scale
    assert figure["mean"] == 3.0 and figure["ci_low"] == 1.0 and figure["ci_high"] == 5.0


def test_the_interval_adapts_to_the_scores_variance() -> None:
    """The old sequence took the range's half (2 on 1..5) as the SD; the betting sequence's width
    follows the scores' own spread: at SD about 1 it is about 1.4 times the fixed-n t interval,
    and at SD about 0.55 about 0.6 times as wide as at SD 1."""
    rng = np.random.default_rng(0)
    wide = np.clip(np.rint(3.3 + rng.normal(0, 1.0, 200)), 1, 5)
    narrow = np.clip(np.rint(3.3 + rng.normal(0, 0.45, 200)), 1, 5)
    w_wide, w_narrow = cs.look(list(wide), 1, 5, 0.05)["width"], cs.look(list(narrow), 1, 5, 0.05)["width"]
    t_wide = 2 * 1.972 * np.std(wide, ddof=1) / np.sqrt(200)
    assert w_wide < 1.6 * t_wide
    assert w_narrow < 0.7 * w_wide
    legacy = cs.legacy_look(list(wide), 1, 5, 0.05, cs.legacy_rho(200, 2.0, 0.05))["width"]
    assert w_wide < 0.6 * legacy


def test_the_old_sequence_spends_more_than_the_fixed_design_of_the_same_power_and_the_new_one_less() -> None:
    """Issue 42: at d = 0.44 the normal-mixture sequence (SD = half the range) judged more
    subjects than a fixed t-test design of the power it reached; the betting sequence fewer."""
    from jurybench.validity import _sequential as v

    rng = np.random.default_rng(4)
    shift = v.shift_for(0.44)
    data = [v.normal_like(rng, v.CAP, shift) for _ in range(60)]
    old = [v.legacy_decision(x, 1.0, 5.0, 0.05, 3.0, v.BATCH) for x in data]
    new = [v.first_decision(x, 1.0, 5.0, 0.05, 3.0, v.BATCH) for x in data]
    fixed_old = v.fixed_n_ttest(0.44, v.matched_power(sum(ok for ok, _ in old), 60))
    fixed_new = v.fixed_n_ttest(0.44, v.matched_power(sum(ok for ok, _ in new), 60))
    assert np.mean([n for _, n in old]) > fixed_old
    assert np.mean([n for _, n in new]) < fixed_new


def test_with_no_effect_stopping_early_decides_falsely_at_most_alpha_of_the_time() -> None:
    from scipy.stats import ttest_1samp

    from jurybench.validity import _sequential as v

    rng = np.random.default_rng(7)
    data = [v.normal_like(rng, 400) for _ in range(400)]
    false_rate = np.mean([v.first_decision(x, 1.0, 5.0, 0.05, 3.0, 20)[0] for x in data])
    naive_rate = np.mean([any(ttest_1samp(x[:k], 3.0).pvalue < 0.05 for k in range(20, 401, 20)) for x in data])
    assert false_rate <= 0.05
    assert naive_rate > 0.15  # a fixed-n test looked at 20 times decides falsely far more often


def test_clustered_items_need_the_cluster_as_the_unit() -> None:
    """Several items per prompt, the question about prompts: observing items as if independent
    decides falsely far above alpha; observing each prompt's mean (--until-cluster prompt) does not."""
    from jurybench.validity import _sequential as v

    rng = np.random.default_rng(8)
    as_items = np.mean(
        [v.first_decision(v.clustered(rng, 400, as_items=True), 1, 5, 0.05, 3.0, 10)[0] for _ in range(150)]
    )
    as_prompts = np.mean([v.first_decision(v.clustered(rng, 400), 1, 5, 0.05, 3.0, 10)[0] for _ in range(150)])
    assert as_items > 0.15 and as_prompts <= 0.05


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
        (["--until", "ci_width(coherence)<1", "--batch-items", "0"], "--batch-items must be at least 1"),
        (["--until", "ci_width(coherence)<1", "--plan"], "--until and --plan do not go together"),
        (
            ["--until", "ci_width(coherence)<1", "--until-alpha", "1.5"],
            "--until-alpha must be at least 1e-10 and less than 1",
        ),
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
        unit = client.post("/v1/jobs", json={**body, "until_cluster": "topic"})
        assert unit.status_code == 422 and "meta.<field>" in unit.text
        # Issue 52: the rule is checked against the rubric at submission, through the same room as
        # score --until (a job with a rule its rubric cannot have was accepted and then failed)
        for rule, why in (("gap_excludes(0)", "pairwise rubric's figure"), ("ci_width(plot)<1", "'plot' is not")):
            wrong = client.post("/v1/jobs", json={**body, "until": rule})
            assert wrong.status_code == 400 and why in wrong.text, wrong.text
        by_item = client.post("/v1/jobs", json={**body, "until_cluster": "item"})
        assert by_item.status_code == 202
        item_job = wait_for(client, by_item.json()["job_id"], timeout=120)
        cluster = client.post(
            "/v1/sql", json={"query": f"SELECT stopping->>'cluster' FROM runs WHERE run_id = '{item_job['run_id']}'"}
        ).json()["rows"]
        assert cluster == [["item"]]
        shown = client.post("/v1/stats/sequential", json={"run": job["run_id"], "criterion": "coherence"})
        assert shown.status_code == 200 and shown.json()["result"]["p_always_valid"] < 0.05


# Two more stopping rules: a leaderboard's ranks settled (separated) and a gap test decided.


def test_separated_and_the_gap_on_plain_cases() -> None:
    figure = cs.look_groups({"b": [1.0] * 60, "a": [5.0] * 60}, 1.0, 5.0, 0.1)
    assert [g["group"] for g in figure["groups"]] == ["a", "b"]  # ranked by mean
    assert figure["separated"] and figure["n"] == 120 and figure["mean"] == 3.0
    (difference,) = figure["differences"]  # a - b, paired in step: every difference is 4
    assert difference["apart"] and difference["mean"] == 4.0 and difference["ci_low"] > 3
    assert not cs.look_groups({"a": [5.0, 1.0] * 5, "b": [1.0, 5.0] * 5}, 1.0, 5.0, 0.1)["separated"]
    gap = cs.look_gap({"logos": [2.0] * 100, "ethos": [1.0, -1.0] * 50}, -3.0, 3.0, 0.1)
    assert gap["gap"] == pytest.approx(2.0)
    logos, ethos = gap["categories"]["logos"], gap["categories"]["ethos"]
    assert ethos["ci_low"] < 0 < ethos["ci_high"]  # ethos's interval holds 0: it adds nothing below
    assert gap["ci_low"] == pytest.approx(logos["ci_low"]) and logos["ci_low"] > 1.5
    assert gap["ci_high"] == pytest.approx(logos["ci_high"] + max(-ethos["ci_low"], ethos["ci_high"]))
    rule = cs.parse_rule("gap_excludes(0)", ["logos", "ethos"], 0.1)
    assert rule.kind == "gap_excludes" and rule.dimension == "" and cs.met(rule, gap)
    assert cs.parse_rule("separated(x)", ["x"]).threshold is None


def test_a_leaderboard_of_equal_models_is_declared_settled_at_most_alpha_of_the_time() -> None:
    from jurybench.validity import _sequential as v

    rng = np.random.default_rng(3)
    runs = [v.separated_decision(np.clip(np.rint(3 + rng.normal(0, 1, (300, 2))), 1, 5), 0.05, 30) for _ in range(300)]
    assert sum(d for d, _ in runs) / len(runs) <= 0.05
    planted = [v.separated_decision(v.leaderboard(rng, 600), 0.05, 20) for _ in range(40)]
    assert sum(d for d, _ in planted) / len(planted) > 0.9
    assert np.mean([s for _, s in planted]) < 0.6 * 600  # before every prompt is judged


def test_a_gap_of_zero_is_declared_decided_at_most_alpha_of_the_time() -> None:
    from jurybench.validity import _sequential as v

    rng = np.random.default_rng(5)
    null = [v.gap_decision(np.clip(np.rint(rng.normal(0, 1.2, (400, 4))), -3, 3), 0.05, 20) for _ in range(400)]
    assert sum(d for d, _ in null) / len(null) <= 0.05
    planted = [v.gap_decision(v.gap_scores(rng, 400), 0.05, 20) for _ in range(100)]
    assert sum(d for d, _ in planted) / len(planted) > 0.9
    assert np.mean([s for _, s in planted]) < 0.4 * 400


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
    assert all(d["apart"] and d["ci_low"] > 0 for d in stopping["final"]["differences"])
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


def test_the_fast_separated_decision_is_the_rules_own() -> None:
    """The validity suite reads separated(...) from precomputed paths; on the same data it
    decides at the same look as cs.look_groups at every look."""
    from jurybench.validity import _sequential as v

    rng = np.random.default_rng(12)
    rule = cs.StoppingRule("separated(x)", "separated", "x", None, 0.05)
    for _ in range(3):
        scores = v.leaderboard(rng, 200)
        slow = (False, len(scores))
        for k in range(20, 201, 20):
            streams = {f"m{j}": list(scores[:k, j]) for j in range(3)}
            if cs.met(rule, cs.look_streams(rule, streams, 1.0, 5.0)):
                slow = (True, k)
                break
        assert v.separated_decision(scores, 0.05, 20) == slow


def test_until_samples_whole_clusters_and_names_the_unit(tmp_path: Path) -> None:
    """Issue 42, item 2: four stories per prompt; each batch takes whole prompts and each look's
    n counts prompts (the sequence covers the mean over prompts); --until-cluster item observes
    every story; a bad unit is one line and exit 2."""
    db = tmp_path / "c.duckdb"
    with jb.open(db) as store:
        store.import_items(
            [
                {
                    "item_id": f"i{p:02d}-{k}",
                    "response": f"S {p} {k}",
                    "prompt": f"p{p}",
                    "metadata": {"topic": f"t{p % 5}"},
                }
                for p in range(40)
                for k in range(4)
            ]
        )
    run = jb.score(
        db, rubric="story-quality", jury=["sim/a,noise=0.5"], run="c", until="ci_width(coherence)<0.01", batch_items=10
    )
    assert run.stopping is not None and run.stopping["cluster"] == "prompt" and run.stopping["clusters_available"] == 40
    looks = run.stopping["looks"]
    assert [k["judged"] for k in looks][:3] == [12, 24, 36]  # whole prompts of four: 3 per batch of >= 10
    assert [k["n"] for k in looks][:3] == [3, 6, 9]  # one observation per prompt
    items = jb.score(
        db,
        rubric="story-quality",
        jury=["sim/a,noise=0.5"],
        run="i",
        until="ci_width(coherence)<0.01",
        batch_items=10,
        until_cluster="item",
    )
    assert items.stopping is not None and [k["n"] for k in items.stopping["looks"]][:2] == [10, 20]
    topics = jb.score(
        db,
        rubric="story-quality",
        jury=["sim/a,noise=0.5"],
        run="t",
        until="ci_width(coherence)<0.01",
        batch_items=10,
        until_cluster="meta.topic",
    )
    assert topics.stopping is not None and topics.stopping["clusters_available"] == 5
    shown = json.loads(
        run_cli(
            "stats", "sequential", "--run", "c", "--criterion", "coherence", "--format", "json", "--db", str(db)
        ).stdout
    )["result"]
    assert shown["cluster"] == "prompt" and shown["n"] == 40
    bad = run_cli(
        "score",
        "-r",
        "story-quality",
        "-j",
        "sim/a",
        "--run",
        "bad",
        "--until",
        "ci_width(coherence)<1",
        "--until-cluster",
        "topic",
        "--no-progress",
        "--db",
        str(db),
    )
    assert bad.exit_code == 2 and "--until-cluster 'topic' is not a cluster" in bad.stderr


def test_a_run_recorded_with_the_old_sequence_is_read_with_it(stories: Path) -> None:
    """Issue 42: runs judged before the betting sequence keep their record (rho, the
    normal-mixture method, looks with running totals); stats sequential reports them with the
    method they name, as it did."""
    jb.score(
        stories,
        rubric="story-quality",
        jury=["sim/lenient,leniency=1,noise=0.3"],
        run="old",
        ids=[f"i{k}" for k in range(60)],
    )
    with jb.open(stories, read_only=True) as store:
        scores = store.sql(
            "SELECT jury_score FROM jury_pointwise WHERE run_id = 'old' AND criterion = 'coherence' ORDER BY item_id"
        )["jury_score"].tolist()
    rho = cs.legacy_rho(60, 2.0, 0.05)
    record = {
        "rule": "excludes(coherence,3)",
        "kind": "excludes",
        "dimension": "coherence",
        "threshold": 3.0,
        "alpha": 0.05,
        "batch_items": 30,
        "seed": 0,
        "subjects_available": 60,
        "scale": [1.0, 5.0],
        "rho": rho,
        "method": cs.LEGACY_METHOD,
        "stopped": "exhausted",
        "judged": 60,
        "looks": [{"judged": 30, "n": 30, "total": sum(scores[:30])}, {"judged": 60, "n": 60, "total": sum(scores)}],
    }
    import duckdb

    with duckdb.connect(str(stories)) as con:
        con.execute("UPDATE runs SET stopping = ? WHERE run_id = 'old'", [json.dumps(record)])
    shown = json.loads(
        run_cli(
            "stats", "sequential", "--run", "old", "--criterion", "coherence", "--format", "json", "--db", str(stories)
        ).stdout
    )["result"]
    assert shown["method"] == cs.LEGACY_METHOD and shown["cluster"] == "item" and shown["n"] == 60
    expected = cs.legacy_look(scores, 1.0, 5.0, 0.05, rho)
    assert shown["ci_low"] == pytest.approx(expected["ci_low"]) and shown["ci_high"] == pytest.approx(
        expected["ci_high"]
    )
    looks = [(sum(scores[:30]), 30), (sum(scores), 60), (sum(scores), 60)]
    assert shown["p_always_valid"] == pytest.approx(cs.legacy_p(looks, 3.0, 1.0, 5.0, rho))


def test_the_fast_decision_for_unpaired_subjects_is_the_rules_own() -> None:
    """The same for subjects that each carry one model's answer (the streams of unequal length)."""
    import jurybench.validity._sequential as v

    rng = np.random.default_rng(13)
    rule = cs.StoppingRule("separated(x)", "separated", "x", None, 0.05)
    for _ in range(3):
        labels, scores = v.unpaired_board(rng, 240)
        slow = (False, len(scores))
        for k in range(30, 241, 30):
            streams = {f"m{j}": list(scores[:k][labels[:k] == j]) for j in range(3)}
            if cs.met(rule, cs.look_streams(rule, streams, 1.0, 5.0)):
                slow = (True, k)
                break
        assert v.streams_decision(labels, scores, 3, 0.05, list(range(30, 241, 30))) == slow
