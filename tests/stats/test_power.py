"""Power analysis for paired designs: hand-worked sample sizes, a Monte Carlo check of the power
formula, the jury-size projection, and the store-level figures against the store's scores."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from jurybench.stats.functions import paired_power, pairs_needed, power_summary
from tests.conftest import run_cli, write


def test_pairs_needed_by_hand() -> None:
    # The textbook figures for a two-sided paired t-test at alpha 0.05 and power 0.8:
    # d_z = 0.5 -> 34 pairs, 0.3 -> 90, 0.8 -> 15 (the normal approximation gives 32, 88, 13).
    assert (pairs_needed(0.5), pairs_needed(0.3), pairs_needed(0.8)) == (34, 90, 15)
    assert paired_power(34, 0.5) >= 0.8 > paired_power(33, 0.5)
    assert pairs_needed(0.0) is None and pairs_needed(-0.5) == 34


def test_the_power_formula_against_simulation() -> None:
    """20,000 simulated pilots of 25 pairs with d_z = 0.45: the share rejected by scipy's
    paired t-test matches the computed power within Monte Carlo error."""
    from scipy.stats import ttest_rel

    rng = np.random.default_rng(3)
    n, d, sims = 25, 0.45, 20_000
    a = rng.normal(d, 1.0, size=(sims, n))
    b = np.zeros((sims, n))
    rejected = float(np.mean(ttest_rel(a, b, axis=1).pvalue < 0.05))
    expected = paired_power(n, d)
    assert rejected == pytest.approx(expected, abs=3 * math.sqrt(expected * (1 - expected) / sims) + 0.002)


def test_summary_and_jury_size_projection_by_hand() -> None:
    # Differences 1, 2, 3, 4, 5 (arm a = 1..5 + 10, arm b = 10): mean 3, SD sqrt(2.5) = 1.581;
    # d_z = 1.897. Juror variance 0.5 with 2 jurors: the differences carry 2 * 0.5 / 2 = 0.5 of
    # juror noise; with 4 jurors 0.25, so the SD becomes sqrt(2.5 - 0.5 + 0.25) = 1.5.
    a = np.array([11.0, 12, 13, 14, 15])
    b = np.full(5, 10.0)
    out = power_summary(a, b, juror_variance=0.5, jurors=2)
    assert out["mean_difference"] == 3.0 and out["sd_difference"] == pytest.approx(math.sqrt(2.5))
    assert out["observed_d_z"] == pytest.approx(3 / math.sqrt(2.5))
    assert out["by_jury_size"]["4"]["sd_difference"] == pytest.approx(1.5)
    assert out["by_jury_size"]["4"]["effect_d_z"] == pytest.approx(3 / 1.5)
    shifted = power_summary(a, b, shift=0.79)
    assert shifted["effect_d_z"] == pytest.approx(0.79 / math.sqrt(2.5))
    assert shifted["pairs_needed_t"] == pairs_needed(0.79 / math.sqrt(2.5))
    assert shifted["pairs_needed_wilcoxon"] == math.ceil(shifted["pairs_needed_t"] / (3 / math.pi))


def _pilot(tmp_path: Path, prompts: int, seed: int) -> str:
    rows = ["item_id,prompt,response,model,gender"]
    for p in range(prompts):
        for g in ("f", "m"):
            rows.append(f"i{p}{g},prompt {p},A story for prompt {p} told to {g},m0,{g}")
    db = str(tmp_path / f"pilot{seed}.duckdb")
    assert (
        run_cli(
            "items",
            "import",
            str(write(tmp_path / f"i{seed}.csv", "\n".join(rows) + "\n")),
            "--treatment",
            "gender",
            "--db",
            db,
        ).exit_code
        == 0
    )
    scored = run_cli(
        "score",
        "--rubric",
        "story-quality",
        "--run",
        "pilot",
        "--no-progress",
        "--db",
        db,
        "--juror",
        f"sim/a,effect=0.5,effect_arm=gender=f,noise=0.6,seed={seed},truth_seed={seed}",
        "--juror",
        f"sim/b,effect=0.5,effect_arm=gender=f,noise=0.9,seed={seed + 100},truth_seed={seed}",
    )
    assert scored.exit_code == 0, scored.stderr
    return db


def test_power_from_a_pilot_run_equals_the_store(tmp_path: Path) -> None:
    import json

    import jurybench as jb

    db = _pilot(tmp_path, 16, 1)
    done = run_cli(
        "stats",
        "power",
        "--run",
        "pilot",
        "--arm",
        "treatment->>'gender'",
        "--arms",
        "f,m",
        "--format",
        "json",
        "--db",
        db,
    )
    assert done.exit_code == 0, done.stderr
    result = json.loads(done.stdout)["result"]
    with jb.open(db, read_only=True) as store:
        frame = store.sql(
            "SELECT i.prompt, i.treatment->>'gender' AS g, v.criterion, v.jury_score FROM jury_pointwise v "
            "JOIN items i USING (item_id) WHERE v.run_id = 'pilot'"
        )
    wide = frame.pivot_table(index=["criterion", "prompt"], columns="g", values="jury_score")
    for criterion, block in wide.groupby(level=0):
        diff = (block["f"] - block["m"]).to_numpy()
        got = result["criteria"][criterion]
        assert got["n_pairs"] == 16
        assert got["mean_difference"] == pytest.approx(diff.mean())
        assert got["sd_difference"] == pytest.approx(diff.std(ddof=1))
        assert got["pairs_needed_t"] == pairs_needed(diff.mean() / diff.std(ddof=1))
        assert set(got["by_jury_size"]) == {"1", "2", "4", "8"}
    both = run_cli(
        "stats",
        "power",
        "--run",
        "pilot",
        "--arm",
        "treatment->>'gender'",
        "--arms",
        "f,m",
        "--d",
        "0.3",
        "--shift",
        "1",
        "--db",
        db,
    )
    assert both.exit_code == 2 and "give --d or --shift, not both" in both.stderr
    missing = run_cli("stats", "power", "--run", "pilot", "--arm", "treatment->>'gender'", "--arms", "f,x", "--db", db)
    assert missing.exit_code == 2 and "no subjects in arm 'x'" in missing.stderr


def test_the_planned_size_reaches_its_power_with_simulated_jurors(tmp_path: Path) -> None:
    """Checked by simulation with the sim/ jurors (a planted effect of 0.5 points for one arm):
    a 60-prompt pilot's analysis says how many prompts give 80 % power on one criterion; 30
    fresh studies of that size (new truth, new noise) reject the null at about that rate."""
    from scipy.stats import ttest_rel

    import jurybench as jb

    db = _pilot(tmp_path, 60, 7)
    with jb.open(db) as store:
        plan = jb.stats.power(store, "pilot", arm="treatment->>'gender'", arms="f,m").attrs["result"]
    needed = plan["criteria"]["coherence"]["pairs_needed_t"]
    assert 5 <= needed <= 200
    rejected, studies = 0, 30
    for s in range(studies):
        study = _pilot(tmp_path, needed, 1000 + s)
        with jb.open(study, read_only=True) as store:
            frame = store.sql(
                "SELECT i.prompt, i.treatment->>'gender' AS g, v.jury_score FROM jury_pointwise v "
                "JOIN items i USING (item_id) WHERE v.run_id = 'pilot' AND v.criterion = 'coherence'"
            )
        wide = frame.pivot_table(index="prompt", columns="g", values="jury_score")
        rejected += ttest_rel(wide["f"], wide["m"]).pvalue < 0.05
    # 80 % planned; the pilot's d_z is itself an estimate, and 30 studies give +-0.15 (2 SE).
    print(f"planned {needed} prompts; {rejected} of {studies} studies rejected")
    assert 0.55 <= rejected / studies <= 0.98, (needed, rejected)


def test_no_pairs_across_the_arms_is_one_line_naming_pair_on(tmp_path: Path) -> None:
    # Items without a prompt under the default --pair-on prompt: a KeyError before (issue 27).
    db = str(tmp_path / "np.duckdb")
    rows = ["item_id,response,gender"] + [f"i{k},Story {k},{'f' if k % 2 else 'm'}" for k in range(8)]
    assert (
        run_cli(
            "items",
            "import",
            str(write(tmp_path / "np.csv", "\n".join(rows) + "\n")),
            "--treatment",
            "gender",
            "--db",
            db,
        ).exit_code
        == 0
    )
    assert (
        run_cli(
            "score", "--rubric", "story-quality", "--run", "np", "--no-progress", "--db", db, "--juror", "sim/a,seed=1"
        ).exit_code
        == 0
    )
    done = run_cli("stats", "power", "--run", "np", "--arm", "treatment->>'gender'", "--arms", "f,m", "--db", db)
    assert done.exit_code == 2 and "--pair-on 'prompt'" in done.stderr and done.stderr.count("\n") == 1, done.stderr
