"""Statistics through the store adapters and the CLI, against values worked by hand.

Each store is filled by the engine with queued fake answers, so every number below
follows from the answers written here. A planted bug in an adapter (D from one order
only, Cohen's d with its sign flipped, a shifted t-test baseline, a reversed Kendall
ranking, a flipped consistency sign, an inverted jury-beats-best-juror verdict)
changes one of these numbers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from jurybench.jurors import FakeBackend
from jurybench.rubric import load_rubric
from tests.conftest import FULL, run_cli, write

CATEGORIES = load_rubric("persuasion").dimensions
# Juror x: logos in order AB and BA per pair; epsilon = (AB - BA) / 2.
X_LOGOS = {"p1": (3, -1), "p2": (2, 0), "p3": (1, 1), "p4": (2, -2), "p5": (-1, 1), "p6": (3, -3)}
X_EPS = [2.0, 1.0, 0.0, 2.0, -1.0, 3.0]


def _pairwise_answer(logos: int) -> str:
    return json.dumps({c: (logos if c == "logos" else 0) for c in CATEGORIES})


def _json(*args: str) -> dict[str, Any]:
    result = run_cli(*args, "--format", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


@pytest.fixture
def pairwise(tmp_path: Path) -> Path:
    """Six pairs judged by x (the logos scores above) and y (logos +1 in both orders: epsilon 0)."""
    items = ["item_id,prompt,response,model,gender"]
    pairs = ["pair_id,item_a,item_b"]
    for k in range(1, 7):
        items += [f"a{k},Prompt {k},Text for her {k},m,f", f"b{k},Prompt {k},Text for him {k},m,m"]
        pairs.append(f"p{k},a{k},b{k}")
    assert (
        run_cli(
            "items", "import", str(write(tmp_path / "i.csv", "\n".join(items) + "\n")), "--treatment", "gender"
        ).exit_code
        == 0
    )
    assert run_cli("pairs", "import", str(write(tmp_path / "p.csv", "\n".join(pairs) + "\n"))).exit_code == 0
    for pid in sorted(X_LOGOS):
        FakeBackend.enqueue("x", *(_pairwise_answer(s) for s in X_LOGOS[pid]))
        FakeBackend.enqueue("y", _pairwise_answer(1), _pairwise_answer(1))
    result = run_cli(
        "score",
        "-r",
        "persuasion",
        "-j",
        "fake/x,concurrency=1",
        "-j",
        "fake/y,concurrency=1",
        "--run",
        "pers",
        "--no-progress",
    )
    assert result.exit_code == 0, result.stderr
    return tmp_path


def test_directional_d_uses_both_orders(pairwise: Path) -> None:
    from scipy.stats import wilcoxon

    # Juror x alone: D = mean epsilon = (2 + 1 + 0 + 2 - 1 + 3) / 6 = 7/6 (AB alone would give 10/6).
    out = _json("stats", "directional", "--run", "pers", "--level", "juror", "--where", "juror = 'fake/x'")
    logos = next(c for c in out["result"]["groups"]["fake/x"]["categories"] if c["category"] == "logos")
    assert logos["D"] == pytest.approx(7 / 6, abs=1e-12)
    # Nonzero epsilons 2, 1, 2, -1, 3: |ranks| 3.5, 1.5, 3.5, 1.5, 5 -> W+ = 13.5, W- = 1.5; ties -> normal approx.
    expected = wilcoxon(X_EPS, zero_method="wilcox", method="approx")
    assert logos["p"] == pytest.approx(expected.pvalue, abs=1e-12)
    assert min(13.5, 1.5) == pytest.approx(expected.statistic)
    # The jury (mean of juror means): x's epsilon with y's 0 -> D = (7/6 + 0) / 2 = 7/12.
    jury = _json("stats", "directional", "--run", "pers")
    logos = next(c for c in jury["result"]["groups"]["all"]["categories"] if c["category"] == "logos")
    assert logos["D"] == pytest.approx(7 / 12, abs=1e-12)
    assert jury["result"]["jury"]["n_jurors_expected"] == 2 and jury["result"]["jury"]["subjects_below_quorum"] == 0
    # G = sum |D_j|: only logos differs from 0.
    gap = _json("stats", "gap", "--run", "pers", "--boot", "200")
    assert gap["result"]["gaps"][0]["gap"] == pytest.approx(7 / 12, abs=1e-12)


def test_consistency_counts_verdicts_naming_the_same_response(pairwise: Path) -> None:
    # Juror x on logos: consistent when sign(AB) == sign(-BA): p1 (3,-1) yes, p2 (2,0) no, p3 (1,1) no,
    # p4 (2,-2) yes, p5 (-1,1) yes, p6 (3,-3) yes -> 4/6. Juror y (1,1) six times -> 0/6.
    out = _json("stats", "consistency", "--run", "pers", "--where", "category = 'logos'")
    shares = out["result"]["positional_consistency"]
    assert shares["fake/x"]["consistency"] == pytest.approx(4 / 6, abs=1e-12)
    assert shares["fake/y"]["consistency"] == 0.0
    # Over all 19 categories x has 18 x 6 ties in both orders (consistent): (108 + 4) / 114.
    everything = _json("stats", "consistency", "--run", "pers")["result"]["positional_consistency"]
    assert everything["fake/x"]["consistency"] == pytest.approx(112 / 114, abs=1e-12)
    assert everything["fake/x"]["both_zero"] == pytest.approx(108 / 114, abs=1e-12)


# Relevance per item (other criteria 3): model, gender, relevance.
POINTWISE = [
    ("m1", "f", 5),
    ("m1", "f", 4),
    ("m1", "m", 3),
    ("m1", "m", 4),
    ("m2", "f", 2),
    ("m2", "f", 3),
    ("m2", "m", 1),
    ("m2", "m", 2),
    ("m3", "f", 4),
    ("m3", "f", 3),
    ("m3", "m", 2),
    ("m3", "m", 3),
]


@pytest.fixture
def pointwise(tmp_path: Path) -> Path:
    rows = ["item_id,prompt,response,model,gender"]
    for n, (model, gender, relevance) in enumerate(POINTWISE):
        rows.append(f"q{n:02d},Prompt {n % 2},Story {n},{model},{gender}")
        FakeBackend.enqueue("s", json.dumps({**{k: 3 for k in FULL}, "relevance": relevance}))
    assert (
        run_cli(
            "items", "import", str(write(tmp_path / "i.csv", "\n".join(rows) + "\n")), "--treatment", "gender"
        ).exit_code
        == 0
    )
    result = run_cli("score", "-r", "story-quality", "-j", "fake/s,concurrency=1", "--run", "q", "--no-progress")
    assert result.exit_code == 0, result.stderr
    return tmp_path


def test_one_sample_t_against_the_baseline(pointwise: Path) -> None:
    # m1: 5, 4, 3, 4 -> mean 4, sd sqrt(2/3), t = (4 - 3) / (sd / 2) = sqrt(6); m2 mean 2 -> -sqrt(6); m3 -> 0.
    out = _json(
        "stats", "ttest", "--run", "q", "--by", "model", "--baseline", "3", "--where", "criterion = 'relevance'"
    )
    t = {g: v["t"] for g, v in out["result"]["criteria"]["relevance"].items()}
    assert t == pytest.approx({"m1": math.sqrt(6), "m2": -math.sqrt(6), "m3": 0.0}, abs=1e-12)
    assert {g: v["baseline"] for g, v in out["result"]["criteria"]["relevance"].items()} == {"m1": 3, "m2": 3, "m3": 3}
    # Per-group baselines from a file: m1 against 4 gives t = 0 exactly.
    baselines = write(pointwise / "b.csv", "group,value\nm1,4\nm2,2\nm3,2\n")
    out = _json(
        "stats",
        "ttest",
        "--run",
        "q",
        "--by",
        "model",
        "--baseline-file",
        str(baselines),
        "--where",
        "criterion = 'relevance'",
    )
    t = {g: v["t"] for g, v in out["result"]["criteria"]["relevance"].items()}
    assert t == pytest.approx({"m1": 0.0, "m2": 0.0, "m3": math.sqrt(6)}, abs=1e-12)


def test_kendall_tau_against_a_reference_ranking(pointwise: Path) -> None:
    # Means m1 4, m2 2, m3 3 against reference 3, 1, 2: the same order, tau = 1; reversed reference: -1.
    same = write(pointwise / "same.csv", "group,value\nm1,3\nm2,1\nm3,2\n")
    reverse = write(pointwise / "reverse.csv", "group,value\nm1,1\nm2,3\nm3,2\n")
    args = ("stats", "kendall", "--run", "q", "--by", "model", "--where", "criterion = 'relevance'")
    assert _json(*args, "--baseline-file", str(same))["result"]["criteria"]["relevance"]["tau"] == pytest.approx(1.0)
    assert _json(*args, "--baseline-file", str(reverse))["result"]["criteria"]["relevance"]["tau"] == pytest.approx(
        -1.0
    )


def test_cohens_d_sign_and_size(pointwise: Path) -> None:
    # Relevance f: 5, 4, 2, 3, 4, 3 (mean 3.5, var 5.5/5 = 1.1); m: 3, 4, 1, 2, 2, 3 (mean 2.5, var 1.1).
    # d = (3.5 - 2.5) / sqrt(1.1) = 0.953463 in every form (equal SDs); raw = 1.0. f - m is positive.
    out = _json(
        "stats",
        "cohens-d",
        "--run",
        "q",
        "--arm",
        "treatment->>'gender'",
        "--arms",
        "f,m",
        "--boot",
        "200",
        "--where",
        "criterion = 'relevance'",
    )
    effect = out["result"]["cells"]["all"]["effects"]["relevance"]
    assert effect["d_pooled"]["value"] == pytest.approx(1 / math.sqrt(1.1), abs=1e-12)
    assert effect["d_avg"]["value"] == pytest.approx(1 / math.sqrt(1.1), abs=1e-12)
    assert effect["raw"]["value"] == pytest.approx(1.0, abs=1e-12)
    flipped = _json(
        "stats",
        "cohens-d",
        "--run",
        "q",
        "--arm",
        "treatment->>'gender'",
        "--arms",
        "m,f",
        "--boot",
        "200",
        "--where",
        "criterion = 'relevance'",
    )
    assert flipped["result"]["cells"]["all"]["effects"]["relevance"]["raw"]["value"] == pytest.approx(-1.0)


def _agreement_store(tmp_path: Path, juror_noise: list[float], seed: int) -> dict[str, Any]:
    """200 items with true relevance t in 1..5 (both annotators say t); juror j answers t + N(0, noise_j)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, 200)
    rows = ["item_id,prompt,response"]
    labels = ["item_id,annotator,relevance"]
    for n, t in enumerate(truth):
        rows.append(f"s{n:03d},Prompt {n},Story {n}")
        labels += [f"s{n:03d},h1,{t}", f"s{n:03d},h2,{t}"]
        for j, noise in enumerate(juror_noise):
            value = int(np.clip(np.rint(t + rng.normal(0, noise)) if noise < 9 else rng.integers(1, 6), 1, 5))
            FakeBackend.enqueue(f"j{j}", json.dumps({**{k: 3 for k in FULL}, "relevance": value}))
    assert run_cli("items", "import", str(write(tmp_path / "i.csv", "\n".join(rows) + "\n"))).exit_code == 0
    jurors = [a for j in range(len(juror_noise)) for a in ("-j", f"fake/j{j},concurrency=1")]
    assert run_cli("score", "-r", "story-quality", *jurors, "--run", "a", "--no-progress").exit_code == 0
    assert (
        run_cli(
            "annotations",
            "import",
            str(write(tmp_path / "l.csv", "\n".join(labels) + "\n")),
            "--rubric",
            "story-quality",
        ).exit_code
        == 0
    )
    return _json("agreement", "--run", "a", "--criterion", "relevance", "--boot", "300")[0]  # type: ignore[index]


def test_jury_beats_its_best_juror_when_jurors_err_independently(tmp_path: Path) -> None:
    # Three jurors with independent noise (sd 1.2): the mean of three has sd 1.2 / sqrt(3), so its
    # Pearson with the truth is clearly higher than any single juror's.
    block = _agreement_store(tmp_path, [1.2, 1.2, 1.2], seed=5)
    jury = block["jury"]["pearson"]
    assert all(jury > r["pearson"] + 0.05 for r in block["jurors"])
    assert block["jury_beats_best_juror"] is True
    assert block["jury_rule"]["n_jurors_expected"] == 3 and block["jury_rule"]["items_below_quorum"] == 0


def test_jury_does_not_beat_a_perfect_juror(tmp_path: Path) -> None:
    # Juror 0 answers the truth exactly; jurors 1 and 2 answer at random: averaging only adds noise.
    block = _agreement_store(tmp_path, [0.0, 99.0, 99.0], seed=6)
    best = next(r for r in block["jurors"] if r["juror"] == block["best_juror"])
    assert best["pearson"] == pytest.approx(1.0) and block["best_juror"] == "fake/j0"
    assert block["jury"]["pearson"] < 0.95
    assert block["jury_beats_best_juror"] is False


def test_table_output_reports_the_jury(pairwise: Path) -> None:
    table = run_cli("stats", "directional", "--run", "pers")
    assert table.exit_code == 0, table.stderr
    assert (
        "jury level; jury rule mean, quorum 1: 2 jurors expected, 2.0 present per subject on average, "
        "0 of 6 subjects below quorum"
    ) in table.stdout
