"""Issue 57, items 1 and 4: what the red team found in stats ppi and annotations sample, each
refused in one line (CLI exit 2, HTTP 422) or answered honestly, and the clustered interval's t
quantile worked by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import jurybench as jb
from jurybench.stats.functions import ppi_mean
from tests.conftest import run_cli


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """12 stories judged by one simulated juror; 3 drawn and labelled 3 by one annotator, so
    the labels do not vary."""
    db = tmp_path_factory.mktemp("ppi") / "small.duckdb"
    with jb.open(db) as store:
        store.import_items([{"item_id": f"i{k:02d}", "response": f"S {k}", "prompt": f"p{k}"} for k in range(12)])
        jb.score(store, rubric="story-quality", jury=["sim/a,noise=0.5"], run="r")
        drawn = store.sample_labels("r", n=3, seed=1)
        store.import_annotations(
            [{"item_id": s, "annotator": "h", "criterion": "coherence", "value": 3} for s in drawn["subjects"]],
            rubric="story-quality",
            criterion=None,
        )
    return db


def _ppi(db: Path, *args: str) -> object:
    return run_cli("stats", "ppi", "--run", "r", "--criterion", "coherence", *args, "--db", str(db))


def test_labels_that_agree_give_the_exact_interval_not_a_zero_width_one(small: Path) -> None:
    """Three labels of 3 on 1..5 (K = 5 points), alpha 0.05: q = (0.05 / 5)^(1/3) = 0.215443, so
    the interval is [3 - 0.784557 x 2, 3 + 0.784557 x 2] = [1.430886, 4.569114]; before, [3, 3]."""
    shown = _ppi(small, "--format", "json")
    assert shown.exit_code == 0, shown.stderr
    result = json.loads(shown.stdout)["result"]
    row = result["rows"][0]
    q = (0.05 / 5) ** (1 / 3)
    assert (
        row["estimate"] == 3
        and row["ci_low"] == pytest.approx(3 - (1 - q) * 2)
        and row["ci_low"] == pytest.approx(1.430886, abs=1e-6)
    )
    assert row["ci_high"] == pytest.approx(4.569114, abs=1e-6)
    assert any("all 3 labels are 3" in w for w in result["warnings"])
    assert any("fewer than 10" in w for w in result["warnings"])
    table = _ppi(small)
    assert table.exit_code == 0 and "warning: 'coherence': 3 labels, fewer than 10" in " ".join(table.stdout.split())


def test_a_plan_from_labels_that_agree_is_refused_and_a_plan_never_asks_for_more_than_the_run(small: Path) -> None:
    refused = _ppi(small, "--plan", "--width", "0.5")
    assert refused.exit_code == 2 and "are all 3" in refused.stderr and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) <= 2


@pytest.mark.parametrize("alpha", ["0", "1", "-1", "nan", "inf"])
def test_an_alpha_outside_0_1_is_one_line(small: Path, alpha: str) -> None:
    shown = _ppi(small, "--alpha", alpha)
    assert shown.exit_code == 2, shown.stdout
    assert "--alpha must be" in shown.stderr and "jurybench bug" not in shown.stderr


@pytest.mark.parametrize("width", ["-1", "0", "nan", "inf"])
def test_a_width_that_is_no_width_is_one_line(small: Path, width: str) -> None:
    shown = _ppi(small, "--plan", "--width", width)
    assert shown.exit_code == 2 and "--width must be" in shown.stderr and "jurybench bug" not in shown.stderr


@pytest.mark.parametrize("seed", ["-1", str(2**63), str(10**30)])
def test_a_seed_out_of_range_is_one_line(small: Path, seed: str) -> None:
    shown = run_cli(
        "annotations", "sample", "--run", "r", "--n", "2", "--seed", seed, "--name", "s", "--db", str(small)
    )
    assert shown.exit_code == 2 and "--seed must be a whole number from 0 to 2^63 - 1" in shown.stderr
    stat = run_cli("stats", "gap", "--run", "r", "--seed", seed, "--db", str(small))
    assert stat.exit_code == 2 and "--seed must be" in stat.stderr and "jurybench bug" not in stat.stderr


def test_a_cluster_field_no_subject_has_is_refused(small: Path, tmp_path: Path) -> None:
    shown = _ppi(small, "--cluster", "meta.nowhere")
    assert shown.exit_code == 2 and "no subject of the run has a value of 'meta.nowhere'" in shown.stderr
    drawn = run_cli(
        "annotations",
        "sample",
        "--run",
        "r",
        "--n",
        "5",
        "--cluster",
        "meta.nowhere",
        "--name",
        "c",
        "--db",
        str(small),
    )
    assert drawn.exit_code == 2 and "no subject of the run has a value" in drawn.stderr
    db = tmp_path / "until.duckdb"
    with jb.open(db) as store:
        store.import_items([{"item_id": f"i{k}", "response": f"S {k}", "prompt": f"p{k}"} for k in range(20)])
    until = run_cli(
        "score", "-r", "story-quality", "-j", "sim/a", "--until", "ci_width(coherence)<0.5",
        "--until-cluster", "meta.nowhere", "--run", "u", "--no-progress", "--db", str(db),
    )  # fmt: skip
    assert until.exit_code == 2 and "every subject would be a cluster of its own" in until.stderr


def test_labels_on_another_scale_are_not_averaged_in(tmp_path: Path) -> None:
    """A 1..10 rubric's labels under the run's criterion name (coherence) beside a 1..5 run."""
    import yaml

    ten = tmp_path / "ten.yaml"
    shipped = Path(jb.__file__).parent / "rubrics" / "story-quality.yaml"
    data = yaml.safe_load(shipped.read_text())
    data["name"] = "ten"
    for c in data["criteria"]:
        c["scale"] = {"min": 1, "max": 10}
        c["anchors"] = {k: f"Level {k} of ten." for k in range(1, 11)}
    ten.write_text(yaml.safe_dump(data))
    db = tmp_path / "mixed.duckdb"
    with jb.open(db) as store:
        store.import_items([{"item_id": f"i{k:02d}", "response": f"S {k}", "prompt": f"p{k}"} for k in range(30)])
        jb.score(store, rubric="story-quality", jury=["sim/a,noise=0.5"], run="r")
        drawn = store.sample_labels("r", n=12, seed=1)
        store.import_annotations(
            [
                {"item_id": s, "annotator": "h", "criterion": "coherence", "value": 8.0 if k % 2 else 3.0}
                for k, s in enumerate(drawn["subjects"])
            ],
            rubric=str(ten),
        )
    shown = _ppi(db)
    assert shown.exit_code == 2 and "outside the run's scale 1..5" in shown.stderr


def test_over_http_the_same_numbers_are_422(small: Path) -> None:
    from tests.service.conftest import make_client

    with make_client(small) as client:
        for bad in (
            {"alpha": 0},
            {"alpha": -1},
            {"alpha": 1},
            {"plan": True, "width": -1.0},
            {"plan": True, "width": 0},
        ):
            answer = client.post("/v1/stats/ppi", json={"run": "r", **bad})
            assert answer.status_code == 422, (bad, answer.text)
        for seed in (-1, 2**63, 10**30):
            assert client.post("/v1/stats/gap", json={"run": "r", "seed": seed}).status_code == 422
            assert client.post("/v1/annotations/sample", json={"run": "r", "n": 2, "seed": seed}).status_code == 422
        # JSON has no NaN or infinity; Python's json writes them, and the body is refused, never a 500.
        raw = '{"run": "r", "plan": true, "width": Infinity}'
        answer = client.post("/v1/stats/ppi", content=raw, headers={"content-type": "application/json"})
        assert answer.status_code == 422


def test_the_clustered_interval_uses_t_with_clusters_less_one_df() -> None:
    """lambda fixed at 0: the labels alone, y = 1, 2 (cluster A) and 3, 5 (cluster B). Mean 2.75;
    deviations -1.75, -0.75, 0.25, 2.25; cluster totals -2.5 and 2.5, squares 12.5; the mean's
    variance 12.5 / 4^2 x 2 / 1 = 1.5625 (SE 1.25). With 2 clusters, t with 1 df: 12.706205 x
    1.25 = 15.882756 each side (a normal quantile would give 2.449980: 6.5 x too narrow)."""
    y = np.array([1.0, 2.0, 3.0, 5.0])
    labels = np.array(["A", "A", "B", "B"])
    out = ppi_mean(y, y, np.concatenate([y, y]), lam=0.0, clusters=(labels, np.concatenate([labels, labels])))
    assert out["estimate"] == pytest.approx(2.75) and out["se"] == pytest.approx(1.25)
    assert out["ci_high"] - out["estimate"] == pytest.approx(15.882756, abs=1e-5)
    assert math.isclose(out["ci_low"], 2.75 - 15.882756, abs_tol=1e-5)


def test_a_difference_of_slices_whose_labels_agree_is_finite(tmp_path: Path) -> None:
    """Six labels of 5 on two models (three each): each slice's exact interval at alpha / 2 (two
    slices), q = (0.025 / 5)^(1/3) = 0.170998, so [5 - 0.829002 x 4, 5] = [1.683990, 5]; their
    difference's interval is the intervals' extremes, [1.683990 - 5, 5 - 1.683990]."""
    db = tmp_path / "two.duckdb"
    with jb.open(db) as store:
        store.import_items(
            [{"item_id": f"i{k:02d}", "response": f"S {k}", "prompt": f"p{k}", "model": f"m{k % 2}"} for k in range(12)]
        )
        jb.score(store, rubric="story-quality", jury=["sim/a,noise=0.5"], run="r")
        store.sample_labels("r", n=6, seed=1, design="stratified", stratify="model")
        drawn = store.sql("SELECT subject_id FROM label_samples")["subject_id"].tolist()
        store.import_annotations(
            [{"item_id": s, "annotator": "h", "criterion": "coherence", "value": 5} for s in drawn],
            rubric="story-quality",
        )
    shown = _ppi(db, "--by", "model", "--compare", "m0,m1", "--format", "json")
    assert shown.exit_code == 0, shown.stderr
    diff = json.loads(shown.stdout)["result"]["rows"][-1]
    assert diff["slice"] == "m0 - m1" and diff["estimate"] == 0
    assert diff["ci_low"] == pytest.approx(1.683990 - 5, abs=1e-6) and diff["ci_high"] == pytest.approx(
        5 - 1.683990, abs=1e-6
    )


def test_ten_skewed_labels_keep_the_level_where_the_large_sample_interval_did_not() -> None:
    """Issue 57, item 1: 10 labels of a skewed 1..5 scale (60 % at 5), a jury 0.5 too high. The
    large-sample interval (normal quantile, population variance: what stats ppi printed before)
    covers about 87 %; the small-sample form (t, pseudo-labels at the scale's ends) about 94 %.
    800 studies: the binomial sd is under 1 point, so the two cannot be confused."""
    from jurybench.validity._ppi import SHAPES, few_label_study

    rng = np.random.default_rng(11)
    truth = float(np.dot(SHAPES["skewed"], np.arange(1, 6)))
    covered = sum(
        (out := few_label_study(rng, "skewed", 0.5, 10))["ci_low"] <= truth <= out["ci_high"] for _ in range(800)
    )
    assert 0.915 <= covered / 800 <= 0.975
