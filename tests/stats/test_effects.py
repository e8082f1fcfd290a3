from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from jurybench.stats.functions import (
    AnchorThresholds,
    anchor,
    cohens_d,
    cohens_d_cells,
    factor_pattern,
    item_level_spearman,
    mean_within_group_sd,
)
from tests.conftest import run_cli, write


def test_three_forms_by_hand() -> None:
    # a: M 2, SD 1; b: M 4, SD 2; d_avg = -2 / 1.5; pooled SD = sqrt((2*1 + 2*4) / 4) = sqrt(2.5)
    d = cohens_d(np.array([1.0, 2, 3]), np.array([2.0, 4, 6]))
    assert d["d_avg"] == pytest.approx(-2 / 1.5)
    assert d["d_pooled"] == pytest.approx(-2 / np.sqrt(2.5))
    assert d["raw"] == pytest.approx(-2.0)


def test_cells_point_values_equal_the_single_cell_formula() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(50, 3)), rng.normal(0.5, 1.5, size=(60, 3))
    got = cohens_d_cells(a, b, n_boot=200, seed=1)
    for c in range(3):
        single = cohens_d(a[:, c], b[:, c])
        for form in ("d_avg", "d_pooled", "raw"):
            assert got[form]["value"][c] == pytest.approx(single[form])
            assert got[form]["low"][c] < got[form]["value"][c] < got[form]["high"][c]


def test_planted_d_is_recovered_within_its_ci_and_coverage_is_near_95() -> None:
    # Two normal arms, SD 1 each, means 0.5 apart: every form of d is 0.5.
    covered = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        a, b = rng.normal(0.5, 1, size=(400, 1)), rng.normal(0.0, 1, size=(400, 1))
        got = cohens_d_cells(a, b, n_boot=400, seed=seed)["d_avg"]
        covered += got["low"][0] <= 0.5 <= got["high"][0]
    assert covered / 60 >= 0.85


def test_anchor_patterns() -> None:
    assert anchor(0.45, 0.30, 0.60, 0.5)["pattern"] == "concordance"
    assert anchor(0.10, 0.00, 0.20, 0.5)["pattern"] == "suppression"
    reversed_effect = anchor(-0.3, -0.4, -0.2, 0.5)
    assert reversed_effect["pattern"] == "suppression" and reversed_effect["reversed"]
    assert anchor(0.9, 0.8, 1.0, 0.5)["pattern"] == "amplification"
    # Negative baselines: "above" means further from zero in the baseline's direction.
    assert anchor(-0.9, -1.0, -0.8, -0.5)["pattern"] == "amplification"
    assert anchor(-0.1, -0.2, 0.0, -0.5)["pattern"] == "suppression"
    got = anchor(0.6, 0.55, 0.65, 0.5)
    assert got["ratio"] == pytest.approx(1.2) and not got["baseline_in_ci"]
    assert anchor(0.6, 0.55, 0.65, 0.5, AnchorThresholds(min_gap=0.2))["pattern"] == "concordance"


def test_reorganization() -> None:
    factor = anchor(0.5, 0.3, 0.7, 0.5)
    subs = [{"d": 0.9, "d_human": 0.5}, {"d": 0.1, "d_human": 0.5}, {"d": 0.5, "d_human": 0.5}]
    assert factor_pattern(factor, subs) == "reorganization"
    assert factor_pattern(factor, subs, AnchorThresholds(reorganization_gap=0.5)) == "concordance"
    assert factor_pattern(anchor(0.1, 0.0, 0.2, 0.5), subs) == "suppression"


def test_item_level_spearman_and_within_sd() -> None:
    got = item_level_spearman(
        {"en": np.array([1.0, 2, 3, 4]), "ko": np.array([2.0, 1, 4, 3]), "zh": np.array([4.0, 3, 2, 1])}
    )
    by = {(r["first"], r["second"]): r for r in got}
    assert by[("en", "ko")]["spearman"] == pytest.approx(0.6) and by[("en", "zh")]["spearman"] == pytest.approx(-1.0)
    # SDs (ddof 1): [1, 2, 3] -> 1; [2, 4, 6] -> 2; mean 1.5
    assert mean_within_group_sd({"a": np.array([1.0, 2, 3]), "b": np.array([2.0, 4, 6])}) == pytest.approx(1.5)


def test_item_spearman_keeps_exact_ties_that_floating_point_would_break() -> None:
    # Item 1's difference 7/3 - 4/3 is exactly 1, like item 2's 2 - 1, but in floating point it is
    # 1.0000000000000002. Tied ranks: x -> (1.5, 1.5, 3, 4) against y -> (1, 2, 3, 4).
    # rho = sum dx dy / sqrt(sum dx^2 sum dy^2) = 4.5 / sqrt(4.5 * 5) = 0.948683...
    # (broken ties would give ranks (2, 1, 3, 4) and rho = 1 - 6 * 2 / (4 * 15) = 0.8).
    from scipy.stats import spearmanr

    from jurybench.stats._effects import item_level_spearman

    x = np.array([7 / 3 - 4 / 3, 2.0 - 1.0, 1.5, 3.0])
    assert x[0] != x[1]  # the floating-point difference the statistic must not see
    out = item_level_spearman({"en": x, "de": np.array([1.0, 2.0, 3.0, 4.0])})[0]
    assert out["spearman"] == pytest.approx(4.5 / np.sqrt(4.5 * 5), abs=1e-12)
    assert out["spearman"] == pytest.approx(spearmanr([1.0, 1.0, 1.5, 3.0], [1, 2, 3, 4]).statistic, abs=1e-12)


def test_pooled_sd_uses_n_minus_one_with_unequal_arms() -> None:
    # a: n 3, M 2, SD^2 1; b: n 4, M 5, SD^2 = (9 + 1 + 1 + 9) / 3 = 20/3.
    # pooled SD^2 = (2 * 1 + 3 * 20/3) / (3 + 4 - 2) = 22 / 5 = 4.4, so d_pooled = -3 / sqrt(4.4).
    # (With n in place of n - 1, unequal arms give (3 + 80/3) / 7 = 4.238..., and the test fails;
    # equal arms cannot tell the two apart.)
    d = cohens_d(np.array([1.0, 2, 3]), np.array([2.0, 4, 6, 8]))
    assert d["d_pooled"] == pytest.approx(-3 / np.sqrt(4.4), abs=1e-12)
    # d_avg: the mean of the two SDs, (1 + sqrt(20/3)) / 2.
    assert d["d_avg"] == pytest.approx(-3 / ((1 + np.sqrt(20 / 3)) / 2), abs=1e-12)
    cells = cohens_d_cells(np.array([[1.0], [2], [3]]), np.array([[2.0], [4], [6], [8]]), n_boot=50, seed=0)
    assert cells["d_pooled"]["value"][0] == pytest.approx(-3 / np.sqrt(4.4), abs=1e-12)


def test_cluster_bootstrap_keeps_the_arms_paired_by_hand() -> None:
    """Two prompts, one item per arm each: prompt a scores 0 (arm 1) and 1 (arm 2), prompt b 2
    and 3. Drawing prompts keeps each prompt's two items together, so every replicate has
    M1 - M2 = -1 and the raw difference's interval is exactly [-1, -1]; drawing each arm's items
    alone mixes prompts (e.g. arm 1 draws b twice, arm 2 draws a twice: +1)."""
    from jurybench.stats.functions import cohens_d_cells

    arm1, arm2 = np.array([[0.0], [2.0]]), np.array([[1.0], [3.0]])
    paired = cohens_d_cells(arm1, arm2, n_boot=400, seed=0, clusters=(["a", "b"], ["a", "b"]))
    assert (paired["raw"]["low"][0], paired["raw"]["high"][0]) == (-1.0, -1.0)
    alone = cohens_d_cells(arm1, arm2, n_boot=400, seed=0)
    assert alone["raw"]["low"][0] < -1.0 < 0.0 < alone["raw"]["high"][0]


def test_cohens_d_resample_from_the_cli(tmp_path: Path) -> None:
    import json

    rows = ["item_id,prompt,response,model,gender"]
    for p in range(10):
        for g in ("f", "m"):
            rows.append(f"i{p}{g},prompt {p},A story for prompt {p} told to {g},m0,{g}")
    db = str(tmp_path / "d.duckdb")
    assert (
        run_cli(
            "items",
            "import",
            str(write(tmp_path / "i.csv", "\n".join(rows) + "\n")),
            "--treatment",
            "gender",
            "--db",
            db,
        ).exit_code
        == 0
    )
    assert (
        run_cli(
            "score",
            "--rubric",
            "story-quality",
            "--run",
            "r",
            "--no-progress",
            "--db",
            db,
            "--juror",
            "sim/a,effect=0.5,effect_arm=gender=f,noise=0.6",
        ).exit_code
        == 0
    )
    args = ("stats", "cohens-d", "--run", "r", "--arm", "treatment->>'gender'", "--arms", "f,m", "--boot", "200")
    done = run_cli(*args, "--resample", "clusters:prompt", "--format", "json", "--db", db)
    assert done.exit_code == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["params"]["resample"] == "clusters:prompt"
    assert result["result"]["cells"]["all"]["n_clusters"] == 10
    bad = run_cli(*args, "--resample", "prompts", "--db", db)
    assert bad.exit_code == 2 and "--resample 'prompts' is not valid" in bad.stderr
