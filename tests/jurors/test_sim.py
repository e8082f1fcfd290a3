"""Simulated jurors with known truth: the analyses recover what was planted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from jurybench.engine import EngineOptions, score
from jurybench.errors import JurybenchError
from jurybench.jurors import parse_juror
from jurybench.jurors._simulated import SimItem, SimJuror, truth
from jurybench.rubric import load_rubric
from jurybench.store import import_items, import_pairs
from tests.conftest import run_cli, write

QUIET = EngineOptions(progress=False)
PERSUASION = load_rubric("persuasion")
QUALITY = load_rubric("story-quality")


def _pairs_store(con: Any, tmp_path: Path, n: int = 60) -> None:
    """n prompts, each answered for a female and a male recipient; pairs compare the two."""
    items = ["item_id,prompt,response,gender"]
    pairs = ["pair_id,item_a,item_b"]
    for k in range(n):
        items += [f"f{k:03d},Prompt {k},Letter {k} to her,f", f"m{k:03d},Prompt {k},Letter {k} to him,m"]
        pairs.append(f"p{k:03d},f{k:03d},m{k:03d}")
    import_items(con, write(tmp_path / "i.csv", "\n".join(items) + "\n"), treatment_columns=["gender"])
    import_pairs(con, write(tmp_path / "p.csv", "\n".join(pairs) + "\n"))


def test_truth_is_seeded_and_shared() -> None:
    assert truth("i1", "logos") == truth("i1", "logos") != truth("i2", "logos")
    assert truth("i1", "logos", truth_seed=1) != truth("i1", "logos")
    draws = np.array([truth(f"i{k}", "x") for k in range(4000)])
    assert abs(draws.mean()) < 0.05 and abs(draws.std() - 1) < 0.05


def test_planted_position_bias_shows_as_flip_rate_and_vanishes_after_symmetrization(con: Any, tmp_path: Path) -> None:
    _pairs_store(con, tmp_path)
    jurors = [parse_juror("sim/biased,position_bias=2,noise=0.3"), parse_juror("sim/fair,noise=0.3")]
    score(con, PERSUASION, jurors, run_id="pos", options=QUIET)
    rates = dict(con.execute("SELECT juror, flip_rate FROM juror_order_bias").fetchall())
    first = dict(con.execute("SELECT juror, first_position_win_rate FROM juror_position_stats").fetchall())
    assert rates["sim/biased"] > 0.5 and rates["sim/fair"] < 0.2
    assert first["sim/biased"] > 0.85 and 0.3 < first["sim/fair"] < 0.6
    from jurybench.stats.builtin.directional import directional

    # No treatment effect was planted: after symmetrization the biased juror shows none either.
    out = directional.compute(con, "pos", level="juror", where="juror = 'sim/biased'")
    assert all(c["p_holm"] is None or c["p_holm"] > 0.05 for c in out["groups"]["sim/biased"]["categories"])
    assert max(abs(c["D"]) for c in out["groups"]["sim/biased"]["categories"]) < 0.5


def test_planted_treatment_effect_is_found_where_planted_only(con: Any, tmp_path: Path) -> None:
    _pairs_store(con, tmp_path)
    planted = {"logos", "pathos", "communal"}
    juror = parse_juror("sim/j,effect=1,effect_on=logos|pathos|communal,effect_arm=gender=f,noise=0.5")
    score(con, PERSUASION, [juror], run_id="fx", options=QUIET)
    from jurybench.stats.builtin.directional import directional

    categories = directional.compute(con, "fx")["groups"]["all"]["categories"]
    significant = {c["category"] for c in categories if c["p_holm"] is not None and c["p_holm"] < 0.05}
    # Holm keeps the family-wise error at 5%: with this seed, no category without an effect is flagged.
    assert significant == planted
    d = {c["category"]: c["D"] for c in categories}
    # D estimates the planted effect (1 point for the female-recipient item A) plus mean truth differences.
    assert all(0.6 < d[c] < 1.4 for c in planted)


def test_planted_d_lies_inside_its_bootstrap_ci(con: Any, tmp_path: Path) -> None:
    rows = ["item_id,prompt,response,gender"]
    for k in range(150):
        rows += [f"f{k:03d},P{k},Story {k},f", f"m{k:03d},P{k},Story {k}!,m"]
    import_items(con, write(tmp_path / "i.csv", "\n".join(rows) + "\n"), treatment_columns=["gender"])
    spec = "sim/j,effect=0.8,effect_on=relevance,effect_arm=gender=f,noise=0.7"
    score(con, QUALITY, [parse_juror(spec)], run_id="d", options=QUIET)
    from jurybench.stats.builtin.cohens_d import cohens_d

    out = cohens_d.compute(
        con, "d", arm="treatment->>'gender'", arms=("f", "m"), where="criterion = 'relevance'", boot=1000, seed=1
    )
    effect = out["cells"]["all"]["effects"]["relevance"]["d_pooled"]
    # The population d of this juror: the same answer model on 20,000 fresh items per arm.
    juror = SimJuror(parse_juror(spec), QUALITY)
    rng = np.random.default_rng(0)

    def draws(gender: str) -> np.ndarray:
        out = []
        for k in range(20_000):
            item = SimItem(f"pop-{gender}-{k}", "en", 8, {"gender": gender}, {})
            out.append(juror.pointwise(item, juror.rng(k, gender, int(rng.integers(1 << 30))))["relevance"])
        return np.array(out, dtype=float)

    f, m = draws("f"), draws("m")
    population_d = (f.mean() - m.mean()) / np.sqrt((f.var(ddof=1) + m.var(ddof=1)) / 2)
    assert effect["ci_low"] < population_d < effect["ci_high"], (population_d, effect)
    assert effect["ci_low"] > 0


def test_calibration_weights_the_more_accurate_juror(con: Any, tmp_path: Path) -> None:
    # Humans give the noiseless score; juror 'sharp' adds noise 0.3, juror 'blurry' 1.5.
    rows = ["item_id,prompt,response"]
    labels = ["item_id,annotator,relevance"]
    ideal = SimJuror(parse_juror("sim/ideal,noise=0"), QUALITY)
    for k in range(240):
        item_id = f"s{k:03d}"
        rows.append(f"{item_id},Prompt {k // 4},Story {k}")
        value = ideal.pointwise(SimItem(item_id, None, len(f"Story {k}"), {}, {}), ideal.rng(k))["relevance"]
        labels += [f"{item_id},h1,{value}", f"{item_id},h2,{value}"]
    import_items(con, write(tmp_path / "i.csv", "\n".join(rows) + "\n"))
    jurors = [parse_juror("sim/sharp,noise=0.3"), parse_juror("sim/blurry,noise=1.5")]
    score(con, QUALITY, jurors, run_id="cal", options=QUIET)
    from jurybench.calibration import fit_calibration
    from jurybench.imports import import_annotations

    import_annotations(con, write(tmp_path / "l.csv", "\n".join(labels) + "\n"), QUALITY)
    artifact, _ = fit_calibration(con, "cal", criteria=["relevance"], methods=["ols"], n_boot=0, out_dir=tmp_path)
    spec = artifact["criteria"]["relevance"]
    weight = {j["label"]: spec["weights"][j["key"]] for j in artifact["jurors"]}
    assert weight["sim/sharp"] > 3 * max(weight["sim/blurry"], 0.01)
    report = spec["report"]
    assert report["variants"]["ols"]["test"]["rmse"] < report["baselines"]["sim/blurry"]["test"]["rmse"]


def test_language_leniency_shifts_scores_by_language() -> None:
    juror = SimJuror(parse_juror("sim/a,language_leniency=ko:-1|de:0.5,noise=0"), QUALITY)
    # Same item, same truth, noise 0: Korean one point lower, German half a point higher (before rounding).
    scores = {
        lang: [juror.pointwise(SimItem(f"i{k}", lang, 10, {}, {}), juror.rng(k))["coherence"] for k in range(400)]
        for lang in ("en", "ko", "de")
    }
    assert np.mean(scores["en"]) - np.mean(scores["ko"]) == pytest.approx(1.0, abs=0.15)
    assert 0.2 < np.mean(scores["de"]) - np.mean(scores["en"]) < 0.8


def test_sim_jurors_from_the_cli_and_bad_parameters(tmp_path: Path) -> None:
    items = write(tmp_path / "i.csv", "item_id,response,language\ni1,a,en\ni2,b,en\n")
    assert run_cli("items", "import", str(items)).exit_code == 0
    ok = run_cli(
        "score",
        "-r",
        "story-quality",
        "-j",
        "sim/a,language_leniency=ko:-1|en:0.5,refusal_rate=0.5",
        "--run",
        "s",
        "--no-progress",
    )
    assert ok.exit_code == 0, ok.stderr
    statuses = json.loads(run_cli("sql", "SELECT count(*) AS n FROM calls", "--format", "json").stdout)
    assert statuses == [{"n": 2}]
    bad = run_cli("score", "-r", "story-quality", "-j", "sim/a,efect=1", "--no-progress")
    assert bad.exit_code == 2 and "unknown parameter 'efect' (did you mean 'effect'?)" in bad.stderr
    wrong = run_cli("score", "-r", "story-quality", "-j", "sim/a,effect_on=logos", "--no-progress")
    assert wrong.exit_code == 2 and "effect_on names 'logos'" in wrong.stderr
    with pytest.raises(JurybenchError, match="effect_arm takes key=value"):
        SimJuror(parse_juror("sim/a,effect_arm=female"), QUALITY)
