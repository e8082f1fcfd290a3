"""Prediction-powered inference (issue 43, items 1-4): PPI++ against its reference implementation
(ppi-python), lambda by hand, the sample's designs, and stats ppi from the CLI and HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import jurybench as jb
from jurybench.stats.functions import labels_needed, power_tuning, ppi_mean, ppi_mean_weighted
from tests.conftest import run_cli


@pytest.mark.parametrize("seed", range(6))
def test_the_estimate_and_interval_equal_ppi_python(seed: int) -> None:
    """ppi-python (the method's authors' implementation) with the jury's scores of the subjects not
    labelled as its unlabelled predictions: the same point estimate and, for the large-sample
    interval (small_sample=False), the same interval, to 1e-9."""
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    rng = np.random.default_rng(seed)
    big_n, n = int(rng.integers(80, 2000)), int(rng.integers(10, 70))
    truth = rng.normal(3, 1, big_n)
    bias, noise = rng.uniform(-1, 1), rng.uniform(0.1, 3)  # from a good jury to a useless one (lambda clipped)
    f = truth + bias + rng.normal(0, noise, big_n)
    drawn = rng.choice(big_n, n, replace=False)
    y = truth[drawn] + rng.normal(0, 0.3, n)
    rest = np.delete(f, drawn)
    ours = ppi_mean(y, f[drawn], rest, alpha=0.1, small_sample=False)
    assert ours["estimate"] == pytest.approx(float(ppi_mean_pointestimate(y, f[drawn], rest)[0]), abs=1e-9)
    low, high = ppi_mean_ci(y, f[drawn], rest, alpha=0.1)
    assert ours["ci_low"] == pytest.approx(float(low[0]), abs=1e-9)
    assert ours["ci_high"] == pytest.approx(float(high[0]), abs=1e-9)


def test_lambda_and_the_estimate_by_hand() -> None:
    # y = 1, 2, 3 with f = 2, 3, 4 (the jury one point high); all N = 2, 3, 4, 5.
    # cov_n(y, f) = 2/3; var(f over 2,3,4 and 2,3,4,5, ddof 1) = (52/7) / 6 = 1.238095 (mean
    # 23/7); lambda = (2/3) / ((1 + 3/4) x 1.238095) = 4/13 = 0.307692.
    y, f_lab, f_all = np.array([1.0, 2.0, 3.0]), np.array([2.0, 3.0, 4.0]), np.array([2.0, 3.0, 4.0, 5.0])
    assert power_tuning(y, f_lab, f_all) == pytest.approx(4 / 13)
    # theta = lambda mean(f_all) + mean(y - lambda f) = 3.5 lambda + 2 - 3 lambda = 2 + 2/13
    out = ppi_mean(y, f_lab, f_all)  # f_all here: the four subjects not labelled
    assert out["estimate"] == pytest.approx(2 + 2 / 13)
    assert out["human_only"] == 2.0 and out["jury_only"] == pytest.approx(23 / 7)  # all seven
    # Equal inclusion probabilities: the weighted form gives the same estimate.
    same = ppi_mean_weighted(y, f_lab, np.full(3, 0.75), f_all)
    assert same["estimate"] == pytest.approx(out["estimate"]) and same["lambda"] == pytest.approx(4 / 13)
    # var(y) = 1: ceil(1 / (0.25 / 1.959964)^2) = 62 labels alone, more than the N = 4 subjects there are:
    # the plan says to label all 4 (issue 57: --plan never asks for more than the run has).
    plan = labels_needed(0.5, y, f_lab, f_all)
    assert plan["labels_without_jury"] == 4 and plan["labels_with_jury"] == 4 and plan["label_everything"]
    many = np.tile(f_all, 250)  # N = 1,000: room for the 62
    assert labels_needed(0.5, y, f_lab, many)["labels_without_jury"] == int(np.ceil(1.0 / (0.25 / 1.959964) ** 2))


def test_the_small_sample_interval_by_hand() -> None:
    # lambda = 0 (the labels alone), y = 1, 2, 3 on a 1..5 scale: pseudo-labels 1 and 5 of weight
    # w = 0.03 sqrt(3) = 0.051962; total weight W = 3.103923; centre (6 + 6w) / W = 2.033481;
    # variance (sum of squares 2.003377 + w x 9.063891) / (W - 1) = 1.195926; se = sqrt(v / 3) =
    # 0.631381; t(0.975, 2) = 4.302653: the interval 2 -+ 2.716613.
    y = np.array([1.0, 2.0, 3.0])
    f = np.array([2.0, 2.0, 2.0])
    out = ppi_mean(y, f, np.array([2.0, 3.0]), lam=0.0, scale=(1, 5))
    assert out["se"] == pytest.approx(0.6313810, abs=1e-6)
    assert out["ci_low"] == pytest.approx(2 - 4.302653 * 0.6313810, abs=1e-5) and out["df"] == 2
    # Without the scale: the plain t interval, sd 1 -> se 1/sqrt(3).
    plain = ppi_mean(y, f, np.array([2.0, 3.0]), lam=0.0)
    assert plain["se"] == pytest.approx(1 / np.sqrt(3))


def test_the_labelled_subjects_are_not_counted_twice() -> None:
    """Issue 57: with the labelled subjects inside the jury's mean too, the variance left out
    their covariance (13 % too narrow here: 500 of 1,000 labelled, lambda 0.3); the unlabelled ones
    alone make the parts independent, so the se matches the estimate's spread over repeated samples."""
    rng = np.random.default_rng(5)
    estimates, ses = [], []
    for _ in range(3000):
        truth = rng.normal(3, 1, 1000)
        f = truth + 0.5 + rng.normal(0, 0.5, 1000)
        y = truth + rng.normal(0, 0.3, 1000)
        out = ppi_mean(y[:500], f[:500], f[500:], lam=0.3, small_sample=False)
        estimates.append(out["estimate"])
        ses.append(out["se"])
    # the estimand is the population mean, 3
    assert float(np.std(estimates)) / float(np.mean(ses)) == pytest.approx(1.0, abs=0.04)


@pytest.fixture
def study(tmp_path: Path) -> Path:
    db = tmp_path / "p.duckdb"
    with jb.open(db) as store:
        store.import_items(
            [
                {"item_id": f"i{k:03d}", "response": f"S {k}", "prompt": f"p{k % 30}", "model": f"m{k % 2}"}
                for k in range(200)
            ]
        )
        jb.score(store, rubric="story-quality", jury=["sim/lenient,leniency=0.8,noise=0.4", "sim/b,noise=0.8"], run="r")
    return db


def test_stats_ppi_from_a_drawn_sample_beside_the_labels_and_the_jury(study: Path) -> None:
    refused = run_cli("stats", "ppi", "--run", "r", "--db", str(study))
    assert refused.exit_code == 2 and "has no label sample" in refused.stderr and "annotations sample" in refused.stderr
    drawn = run_cli("annotations", "sample", "--run", "r", "--n", "40", "--seed", "2", "--db", str(study))
    assert drawn.exit_code == 0 and "40 of 200 subjects of run r drawn" in drawn.stdout
    missing = run_cli("stats", "ppi", "--run", "r", "--db", str(study))
    assert (
        missing.exit_code == 2 and "of the 40 subjects drawn in sample 'r-sample' have no human label" in missing.stderr
    )
    assert run_cli("annotations", "simulate", "-r", "story-quality", "--db", str(study)).exit_code == 0
    out = json.loads(
        run_cli("stats", "ppi", "--run", "r", "--criterion", "relevance", "--format", "json", "--db", str(study)).stdout
    )["result"]
    (row,) = out["rows"]
    assert row["n_labelled"] == 40 and row["n_subjects"] == 200 and 0 <= row["lambda"] <= 1
    assert row["ci_low"] < row["estimate"] < row["ci_high"]
    assert row["jury_only"] > row["estimate"]  # the lenient juror pulls the jury up; the labels pull it back
    assert out["design"] == "uniform" and out["predictor"] == "jury" and out["labels"]["unknown"] > 0
    by = json.loads(
        run_cli(
            "stats",
            "ppi",
            "--run",
            "r",
            "--criterion",
            "coherence",
            "--by",
            "model",
            "--format",
            "json",
            "--db",
            str(study),
        ).stdout
    )["result"]
    assert [r["slice"] for r in by["rows"]] == ["m0", "m1"]
    plan = json.loads(
        run_cli(
            "stats",
            "ppi",
            "--run",
            "r",
            "--criterion",
            "relevance",
            "--plan",
            "--width",
            "0.3",
            "--format",
            "json",
            "--db",
            str(study),
        ).stdout
    )["result"]["rows"][0]
    assert plan["labels_with_jury"] <= plan["labels_without_jury"]


def test_a_stratified_sample_is_analysed_with_its_chances(study: Path) -> None:
    """Issue 57: a stratified sample was analysed as a uniform one. 31 of 200 by model gives
    16 of one model's 100 and 15 of the other's (chances 0.16 and 0.15): stats ppi weights each
    label by 1 / chance, as ppi_mean_weighted computes by hand from the recorded chances."""
    with jb.open(study) as store:
        store.sample_labels("r", n=31, seed=2, name="s", design="stratified", stratify="model")
        store.simulate_annotations(rubric="story-quality")
        chances = store.sql("SELECT subject_id, probability FROM label_samples WHERE sample = 's'")
        f = store.sql("SELECT item_id, jury_score FROM jury_pointwise WHERE run_id = 'r' AND criterion = 'relevance'")
        y = store.sql("SELECT subject_id, avg(value) AS y FROM human_labels WHERE criterion = 'relevance' GROUP BY 1")
    assert sorted(set(chances["probability"].round(6))) == [0.15, 0.16]
    scores = dict(zip(f["item_id"], f["jury_score"], strict=True))
    labels = dict(zip(y["subject_id"], y["y"], strict=True))
    drawn = sorted(chances["subject_id"])
    p = dict(zip(chances["subject_id"], chances["probability"], strict=True))
    expected = ppi_mean_weighted(
        np.array([labels[s] for s in drawn]),
        np.array([scores[s] for s in drawn]),
        np.array([p[s] for s in drawn]),
        np.array(list(scores.values())),
        scale=(1, 5),  # the criterion's scale: the small-sample form's pseudo-labels
        pseudo=0.03,  # nearly equal chances n_h / N_h: the uniform design's c, not the active one's 0.05
    )
    row = json.loads(
        run_cli(
            "stats",
            "ppi",
            "--run",
            "r",
            "--criterion",
            "relevance",
            "--sample",
            "s",
            "--format",
            "json",
            "--db",
            str(study),
        ).stdout
    )["result"]["rows"][0]
    assert row["estimate"] == pytest.approx(expected["estimate"])
    assert row["ci_low"] == pytest.approx(expected["ci_low"]) and row["ci_high"] == pytest.approx(expected["ci_high"])


def test_the_sample_designs_record_their_probabilities(study: Path) -> None:
    with jb.open(study) as store:
        strat = store.sample_labels("r", n=30, seed=1, name="s", design="stratified", stratify="model")
        active = store.sample_labels("r", n=30, seed=1, name="a", design="active")
        rows = store.sql("SELECT sample, stratum, probability FROM label_samples")
    assert strat["n_drawn"] == 30 and set(rows[rows["sample"] == "s"]["stratum"]) == {"m0", "m1"}
    assert set(rows[rows["sample"] == "s"]["probability"].round(6)) == {0.15}  # 15 of each model's 100
    probabilities = rows[rows["sample"] == "a"]["probability"]
    assert probabilities.min() >= 30 / 200 / 2 - 1e-12 and probabilities.nunique() > 1  # half uniform at least
    assert 10 <= active["n_drawn"] <= 60
    for args, message in (
        (["--n", "0"], "--n must be a whole number from 1 to the run's 200 subjects"),
        (["--n", "5", "--design", "stratified"], "--stratify and --design stratified go together"),
        (["--n", "5", "--design", "random"], "--design 'random' is not a sampling design"),
        (["--n", "5", "--name", "s"], "a sample named 's' exists"),
    ):
        bad = run_cli("annotations", "sample", "--run", "r", *args, "--db", str(study))
        assert bad.exit_code == 2 and message in bad.stderr and "Traceback" not in bad.stderr


def test_stats_ppi_over_http(study: Path, tmp_path: Path) -> None:
    from tests.service.conftest import make_client

    with jb.open(study) as store:
        store.simulate_annotations(rubric="story-quality")
    with make_client(study) as client:
        drawn = client.post("/v1/annotations/sample", json={"run": "r", "n": 30, "seed": 3})
        assert drawn.status_code == 201 and drawn.json()["n_drawn"] == 30 and len(drawn.json()["subjects"]) == 30
        again = client.post("/v1/annotations/sample", json={"run": "r", "n": 30, "seed": 3})
        assert again.status_code in (400, 409, 422) and "exists" in again.text
        assert client.post("/v1/annotations/sample", json={"run": "r", "n": 0}).status_code == 422
        answer = client.post("/v1/stats/ppi", json={"run": "r", "criterion": "empathy"})
        assert answer.status_code == 200, answer.json()
        assert answer.json()["result"]["rows"][0]["n_labelled"] == 30
        assert client.post("/v1/stats/ppi", json={"run": "r", "alpha": 2}).status_code == 422


def test_a_difference_between_slices_and_a_preference_runs_win_rate(study: Path, tmp_path: Path) -> None:
    with jb.open(study) as store:
        store.sample_labels("r", n=40, seed=4)
        store.simulate_annotations(rubric="story-quality")
    out = json.loads(
        run_cli(
            "stats",
            "ppi",
            "--run",
            "r",
            "--criterion",
            "relevance",
            "--by",
            "model",
            "--compare",
            "m0,m1",
            "--format",
            "json",
            "--db",
            str(study),
        ).stdout
    )["result"]["rows"]
    first, second, diff = out
    assert diff["slice"] == "m0 - m1" and diff["estimate"] == pytest.approx(first["estimate"] - second["estimate"])
    assert diff["se"] == pytest.approx((first["se"] ** 2 + second["se"] ** 2) ** 0.5)
    bad = run_cli("stats", "ppi", "--run", "r", "--compare", "m0,m1", "--db", str(study))
    assert bad.exit_code == 2 and "--compare FIRST,SECOND names two slices of --by" in bad.stderr
    # A preference run: +1 when A is better, -1 when B is; A's win rate is (mean + 1) / 2.
    db = tmp_path / "pref.duckdb"
    with jb.open(db) as store:
        store.import_items(
            [{"item_id": f"{s}{k}", "response": f"{s} {k}", "prompt": f"p{k}"} for k in range(60) for s in "ab"]
        )
        store.import_pairs([{"pair_id": f"q{k}", "item_a": f"a{k}", "item_b": f"b{k}"} for k in range(60)])
        jb.score(store, rubric="preference", jury=["fake/x"], run="pref")
        drawn = store.sample_labels("pref", n=20, seed=1)
        store.import_annotations(
            [
                {"pair_id": s, "annotator": "h", "preference": "A" if i % 3 else "B"}
                for i, s in enumerate(drawn["subjects"])
            ],
            rubric="preference",
        )
    row = json.loads(run_cli("stats", "ppi", "--run", "pref", "--format", "json", "--db", str(db)).stdout)["result"][
        "rows"
    ][0]
    assert row["win_rate"] == pytest.approx((row["estimate"] + 1) / 2)
    assert row["win_low"] == pytest.approx(max(0.0, (row["ci_low"] + 1) / 2))
    assert 0 <= row["win_low"] <= row["win_rate"] <= row["win_high"] <= 1


def test_a_sample_of_whole_prompts_is_analysed_by_its_clusters(study: Path) -> None:
    """--cluster prompt draws whole prompts (the study has 30 prompts of about 7 items) and stats
    ppi then takes its variance from the prompts' totals, t with (prompts drawn - 1) df; a
    plain interval from the same labels is narrower (it takes the items as independent)."""
    drawn = run_cli("annotations", "sample", "--run", "r", "--n", "40", "--cluster", "prompt", "--db", str(study))
    assert drawn.exit_code == 0, drawn.stderr
    with jb.open(study) as store:
        rows = store.sql("SELECT design, stratum, probability FROM label_samples")
        whole = store.sql(
            "SELECT count(*) AS n FROM items WHERE prompt IN (SELECT stratum FROM label_samples) "
            "AND item_id NOT IN (SELECT subject_id FROM label_samples)"
        )["n"][0]
        store.simulate_annotations(rubric="story-quality")
    assert set(rows["design"]) == {"cluster:prompt"} and whole == 0  # every drawn prompt came whole
    assert len(rows) >= 40 and set(rows["probability"].round(9)) == {round(rows["stratum"].nunique() / 30, 9)}
    out = json.loads(
        run_cli("stats", "ppi", "--run", "r", "--criterion", "relevance", "--format", "json", "--db", str(study)).stdout
    )["result"]
    assert out["cluster"] == "prompt"
    clustered = out["rows"][0]
    with jb.open(study, read_only=True) as store:
        f = store.sql("SELECT item_id, jury_score FROM jury_pointwise WHERE run_id = 'r' AND criterion = 'relevance'")
        labels = store.sql(
            "SELECT h.subject_id, avg(h.value) AS y FROM human_labels h JOIN label_samples s USING (subject_id) "
            "WHERE h.criterion = 'relevance' GROUP BY 1"
        )
    scores = dict(zip(f["item_id"], f["jury_score"], strict=True))
    unlabelled = np.array([v for s, v in scores.items() if s not in set(labels["subject_id"])])
    plain = ppi_mean(labels["y"].to_numpy(), np.array([scores[s] for s in labels["subject_id"]]), unlabelled)
    assert clustered["estimate"] == pytest.approx(plain["estimate"])
    assert clustered["ci_high"] - clustered["ci_low"] != pytest.approx(plain["ci_high"] - plain["ci_low"])
    bad = run_cli(
        "annotations", "sample", "--run", "r", "--n", "5", "--cluster", "topic", "--name", "x", "--db", str(study)
    )
    assert bad.exit_code == 2 and "'topic' is not a column to group subjects by" in bad.stderr
    # about six prompts: fewer than the 10 clusters from which make validity's HANNA-like claim holds, said
    assert any("cluster(s), fewer than 10" in w for w in out["warnings"]), out["warnings"]
    # Two prompts (about 14 labels): fewer clusters than make validity checks, said with the figure.
    few = run_cli(
        "annotations", "sample", "--run", "r", "--n", "8", "--cluster", "prompt", "--name", "few", "--db", str(study)
    )
    assert few.exit_code == 0, few.stderr
    with jb.open(study) as store:
        store.simulate_annotations(rubric="story-quality")
    shown = run_cli("stats", "ppi", "--run", "r", "--criterion", "relevance", "--sample", "few", "--db", str(study))
    assert shown.exit_code == 0, shown.stderr
    assert "come from 2 cluster(s), fewer than 10" in shown.stdout + shown.stderr


def test_a_paired_difference_is_taken_within_each_prompt(tmp_path: Path) -> None:
    """Two models answer every prompt (two answers each); whole prompts are drawn and labelled.
    --compare m0,m1 --paired corrects the difference within each prompt, the prompts as units:
    by hand, PPI++ on the prompts' (m0 - m1) differences of labels and of jury scores."""
    db = tmp_path / "pair.duckdb"
    with jb.open(db) as store:
        store.import_items(
            [
                {"item_id": f"i{k:03d}", "response": f"S {k}", "prompt": f"p{k // 4}", "model": f"m{k % 2}"}
                for k in range(200)
            ]
        )
        jb.score(store, rubric="story-quality", jury=["sim/a,noise=0.5"], run="r")
        store.sample_labels("r", n=60, seed=5, cluster="prompt")
        store.simulate_annotations(rubric="story-quality")
        jury = store.sql(
            "SELECT i.prompt, i.model, avg(j.jury_score) AS f FROM jury_pointwise j JOIN items i USING (item_id) "
            "WHERE j.run_id = 'r' AND j.criterion = 'coherence' GROUP BY ALL"
        )
        humans = store.sql(
            "SELECT i.prompt, i.model, avg(h.value) AS y FROM human_labels h JOIN items i ON i.item_id = h.subject_id "
            "JOIN label_samples s ON s.subject_id = h.subject_id WHERE h.criterion = 'coherence' GROUP BY ALL"
        )
    f = jury.pivot(index="prompt", columns="model", values="f")
    y = humans.groupby(["prompt", "model"])["y"].mean().unstack()
    f_diff, y_diff = f["m0"] - f["m1"], y["m0"] - y["m1"]
    expected = ppi_mean(
        y_diff.to_numpy(),
        f_diff[y_diff.index].to_numpy(),
        f_diff.drop(y_diff.index).to_numpy(),  # the prompts not labelled
        scale=(-4, 4),  # differences of two 1..5 scores
    )
    out = json.loads(
        run_cli(
            "stats",
            "ppi",
            "--run",
            "r",
            "--criterion",
            "coherence",
            "--by",
            "model",
            "--compare",
            "m0,m1",
            "--paired",
            "--format",
            "json",
            "--db",
            str(db),
        ).stdout
    )["result"]["rows"]
    paired = out[-1]
    assert paired["slice"] == "m0 - m1 (paired)" and paired["n_labelled"] == len(y_diff) and paired["n_subjects"] == 50
    assert paired["estimate"] == pytest.approx(expected["estimate"]) and paired["ci_low"] == pytest.approx(
        expected["ci_low"]
    )
    with jb.open(db) as store:
        store.sample_labels("r", n=20, seed=1, name="flat")
    flat = run_cli(
        "stats",
        "ppi",
        "--run",
        "r",
        "--sample",
        "flat",
        "--by",
        "model",
        "--compare",
        "m0,m1",
        "--paired",
        "--db",
        str(db),
    )
    assert flat.exit_code == 2 and "--paired needs the unit that pairs the slices" in flat.stderr


def test_unequal_chances_weight_each_label_by_one_over_its_chance() -> None:
    """Issue 57, item 4 (a planted bug only the validity suite caught: weights pi instead of
    1 / pi). y = 1 drawn with chance 0.5 and y = 3 with chance 0.25, lambda 0, N = 4: weights 2 and
    4, the Hajek mean (2 x 1 + 4 x 3) / 6 = 7/3 (with pi as weights it would be 5/3); variance
    sum w^2 (y - 7/3)^2 / N^2 = (4 x 16/9 + 16 x 4/9) / 16 = 8/9."""
    out = ppi_mean_weighted(
        np.array([1.0, 3.0]), np.array([1.0, 2.0]), np.array([0.5, 0.25]), np.array([1.0, 2.0, 2.0, 3.0]), lam=0.0
    )
    assert out["estimate"] == pytest.approx(7 / 3)
    assert out["se"] == pytest.approx(np.sqrt(8 / 9))
    assert out["human_only"] == pytest.approx(7 / 3)


def test_the_clustered_small_sample_interval_by_hand() -> None:
    """Issue 57, item 1 (clusters with few labels). lambda 0, y = 1, 2 (prompt A) and 3, 5 (B) on
    1..5: the clusters' means 1.5 and 4 (sizes 2 and 2, mean size 2: s = 1, 1), and one pseudo-label
    at each end as a cluster of one subject (s = 1/2), weight w = 0.1 sqrt(2) = 0.141421 each.
    Centre: (1.5 + 4 + w (0.5 + 2.5)) / (2 + w) = 2.766504; deviations s (m - centre): -1.266504,
    1.233496, -0.883252, 1.116748; sum w d^2 = 3.125546 + w x 2.027262 = 3.412248; over
    (sum w - 1) = 1.282843 and G = 2: variance 1.329954 (the plain sandwich's was 1.5625), t on 1 df."""
    y = np.array([1.0, 2.0, 3.0, 5.0])
    labels = np.array(["A", "A", "B", "B"])
    both = (labels, np.concatenate([labels, labels]))
    out = ppi_mean(y, y, np.concatenate([y, y]), lam=0.0, clusters=both, scale=(1, 5))
    assert out["se"] ** 2 == pytest.approx(1.329954, abs=1e-5) and out["df"] == 1
    assert out["ci_high"] - out["estimate"] == pytest.approx(12.706205 * np.sqrt(1.329954), abs=1e-4)
    assert ppi_mean(y, y, np.concatenate([y, y]), lam=0.0, clusters=both)["se"] == pytest.approx(1.25)
    # Clusters of one subject each are the unclustered small-sample form (there c = 0.03, here 0.1).
    from jurybench.stats import _ppi

    single = np.array(["a", "b", "c", "d"])
    assert _ppi._clustered_with_pseudo_labels(y, single, (1, 5), 0.0) == pytest.approx(_with_weight(y, (1, 5), 0.1) / 4)


def _with_weight(values: np.ndarray, scale: tuple[int, int], c: float) -> float:
    """The pseudo-labelled variance (ddof 1) of ``values`` with weight c sqrt(n), written out."""
    w = c * np.sqrt(len(values))
    v = np.concatenate([values, scale])
    weights = np.concatenate([np.ones(len(values)), [w, w]])
    centre = np.sum(weights * v) / np.sum(weights)
    return float(np.sum(weights * (v - centre) ** 2) / (np.sum(weights) - 1))


def test_unequal_chances_with_few_labels_take_the_pseudo_labels_by_hand() -> None:
    """Issue 57, item 1 (active and stratified samples with few labels). y = 1 and 3, each drawn
    with chance 0.5 (weights 2 and 2), N = 4, lambda 0, on 1..5: pseudo-labels 1 and 5 of weight 2
    counted c sqrt(2) = 0.070711 times each (c = 0.05). Centre (4 + 0.070711 x 6) / 2.141421 =
    2.066040; sum count x 4 (v - centre)^2 / 16 = (2.008708 + 0.070711 x 9.744196) / 4 = 0.674431,
    times n / (sum count - 1) = 2 / 1.141421: 1.181758 (without the scale 8/16 = 0.5)."""
    args = (np.array([1.0, 3.0]), np.array([1.0, 2.0]), np.array([0.5, 0.5]), np.array([1.0, 2.0, 2.0, 3.0]))
    out = ppi_mean_weighted(*args, lam=0.0, scale=(1, 5))
    assert out["estimate"] == pytest.approx(2.0) and out["se"] ** 2 == pytest.approx(1.181758, abs=1e-5)
    assert ppi_mean_weighted(*args, lam=0.0)["se"] ** 2 == pytest.approx(0.5)
    # Equal chances n / N: the unweighted pseudo-labelled variance over n, at c = 0.05.
    y = np.array([1.0, 2.0, 2.0, 4.0, 5.0])
    equal = ppi_mean_weighted(y, y, np.full(5, 0.5), np.tile(y, 2), lam=0.0, scale=(1, 5))
    assert equal["se"] ** 2 == pytest.approx(_with_weight(y, (1, 5), 0.05) / 5)


def test_votes_take_heavier_pseudo_labels_by_hand() -> None:
    """Issue 57, item 1 (win rates with few labels). Votes y = +1, +1, -1 (lambda 0) on -1..+1,
    c = 0.2 (VOTES_SMALL_SAMPLE): w = 0.2 sqrt(3) = 0.346410, W = 3.692820; centre 1 / W =
    0.270796; squares 2 x 0.531738 + 1.614922 + w x 2.146660 = 3.422024; over W - 1 = 2.692820:
    1.270795; se = sqrt(1.270795 / 3) = 0.650845 (at the default c = 0.03: 0.663871)."""
    from jurybench.stats._ppi import VOTES_SMALL_SAMPLE

    assert VOTES_SMALL_SAMPLE == 0.2
    y = np.array([1.0, 1.0, -1.0])
    out = ppi_mean(y, y, np.array([0.0, 1.0]), lam=0.0, scale=(-1, 1), pseudo=VOTES_SMALL_SAMPLE)
    assert out["se"] == pytest.approx(0.650845, abs=1e-5)
    assert ppi_mean(y, y, np.array([0.0, 1.0]), lam=0.0, scale=(-1, 1))["se"] == pytest.approx(0.663871, abs=1e-5)


def _calibrate(db: Path, tmp_path: Path, name: str) -> None:
    fit = run_cli(
        "calibrate", "--run", "r", "--name", name, "--folds", "3", "--out", str(tmp_path / "cal"), "--db", str(db)
    )
    assert fit.exit_code == 0, fit.stdout + fit.stderr
    applied = run_cli("calibrate", "apply", str(tmp_path / "cal" / f"{name}.json"), "--run", "r", "--db", str(db))
    assert applied.exit_code == 0, applied.stdout + applied.stderr


def _ppi(db: Path) -> dict[str, object]:
    done = run_cli("stats", "ppi", "--run", "r", "--criterion", "relevance", "--format", "json", "--db", str(db))
    assert done.exit_code == 0, done.stdout + done.stderr
    return dict(json.loads(done.stdout)["result"])


def test_a_calibration_fitted_on_the_samples_labels_is_not_ppis_predictor(study: Path, tmp_path: Path) -> None:
    """Issue 82: after calibrate apply, stats ppi took the calibrated jury as its predictor, though
    it was fitted on the very labels PPI then corrects it with (lambda went to 1). The calibration
    file now records the labels it was fitted on; PPI sets a calibration that used any of the
    sample's labels aside for the jury, and says so in its table and its warnings. A calibration
    fitted on other labels of the run stays the predictor."""
    assert run_cli("annotations", "sample", "--run", "r", "--n", "40", "--seed", "2", "--db", str(study)).exit_code == 0
    assert run_cli("annotations", "simulate", "-r", "story-quality", "--db", str(study)).exit_code == 0
    before = _ppi(study)
    _calibrate(study, tmp_path, "every-label")
    saved = json.loads((tmp_path / "cal" / "every-label.json").read_text())
    assert len(saved["labels_used"]["criteria"]["relevance"]) == 200  # every labelled item read by the fit
    out = _ppi(study)
    assert out["predictor"] == "jury" and out["rows"][0]["predictor"] == "jury"
    assert out["rows"][0]["estimate"] == pytest.approx(before["rows"][0]["estimate"], abs=1e-12)
    assert any(
        "fitted calibration 'every-label'" in w and "does not depend on the labelled sample" in w
        for w in out["warnings"]
    )
    table = run_cli("stats", "ppi", "--run", "r", "--criterion", "relevance", "--format", "csv", "--db", str(study))
    assert table.stdout.splitlines()[0].endswith(",predictor") and table.stdout.splitlines()[1].endswith(",jury")

    # A calibration fitted without the sample's labels: applied last, it is the predictor.
    import duckdb

    with duckdb.connect(str(study)) as con:
        drawn = [r[0] for r in con.execute("SELECT subject_id FROM label_samples WHERE run_id = 'r'").fetchall()]
        con.execute(
            "CREATE TABLE kept AS SELECT * FROM human_labels WHERE subject_id IN (SELECT subject_id FROM label_samples)"
        )
        con.execute("DELETE FROM human_labels WHERE subject_id IN (SELECT subject_id FROM label_samples)")
    _calibrate(study, tmp_path, "other-labels")
    saved = json.loads((tmp_path / "cal" / "other-labels.json").read_text())
    assert not set(saved["labels_used"]["criteria"]["relevance"]) & set(drawn)
    with duckdb.connect(str(study)) as con:
        con.execute("INSERT INTO human_labels SELECT * FROM kept")
        con.execute("DROP TABLE kept")
    out = _ppi(study)
    assert out["predictor"] == "calibrated jury (other-labels)" and not any(
        "fitted calibration" in w for w in out["warnings"]
    )
