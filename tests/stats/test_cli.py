"""Statistics from the command line over a store filled by the engine with fake jurors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli, write


@pytest.fixture
def study(tmp_path: Path) -> Path:
    """12 prompts x 4 models x 2 recipient genders; pairs compare the genders per prompt and model."""
    items = ["item_id,prompt,response,model,language,gender,region"]
    pairs = ["pair_id,item_a,item_b"]
    for p in range(12):
        for m in ("m1", "m2", "m3", "m4"):
            for g in ("f", "m"):
                items.append(f"p{p}-{m}-{g},Prompt {p},Reply {p} {m} {g},{m},en,{g},{'north' if p % 2 else 'south'}")
            pairs.append(f"p{p}-{m},p{p}-{m}-f,p{p}-{m}-m")
    assert (
        run_cli(
            "items", "import", str(write(tmp_path / "i.csv", "\n".join(items) + "\n")), "--treatment", "gender"
        ).exit_code
        == 0
    )
    assert run_cli("pairs", "import", str(write(tmp_path / "p.csv", "\n".join(pairs) + "\n"))).exit_code == 0
    r = run_cli(
        "score", "-r", "persuasion", "-j", "fake/a,position_bias=0.5", "-j", "fake/b", "--run", "pers", "--no-progress"
    )
    assert r.exit_code == 0, r.stderr
    r = run_cli("score", "-r", "story-quality", "-j", "fake/a", "-j", "fake/b", "--run", "qual", "--no-progress")
    assert r.exit_code == 0, r.stderr
    return tmp_path


def _json(*args: str) -> dict:  # type: ignore[type-arg]
    result = run_cli(*args, "--format", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_pairwise_statistics(study: Path) -> None:
    out = _json("stats", "directional", "--run", "pers", "--by", "model_a")
    groups = out["result"]["groups"]
    assert set(groups) == {"m1", "m2", "m3", "m4"} and groups["m1"]["n_pairs"] == 12
    assert len(groups["m1"]["categories"]) == 19
    gap = _json("stats", "gap", "--run", "pers", "--by", "model_a", "--boot", "300", "--seed", "3")
    assert {g["group"] for g in gap["result"]["gaps"]} == {"m1", "m2", "m3", "m4"}
    assert gap["params"]["boot"] == 300
    consistency = _json("stats", "consistency", "--run", "pers")
    assert set(consistency["result"]["positional_consistency"]) == {"fake/a", "fake/b"}
    shares = consistency["result"]["no_difference_share"]
    assert set(shares) == {"fake/a", "fake/b"} and all(0 <= v <= 1 for v in shares.values())
    filtered = _json(
        "stats",
        "directional",
        "--run",
        "pers",
        "--where",
        "pair_metadata IS NULL AND treatment_a->>'gender' = 'f' AND prompt LIKE 'Prompt 1%'",
    )
    # Prompts 1, 10, 11 x 4 models.
    assert filtered["result"]["groups"]["all"]["n_pairs"] == 12
    csv = run_cli("stats", "directional", "--run", "pers", "--format", "csv").stdout
    assert csv.startswith("group,category,n,n_zero,D,wilcoxon_statistic,p,p_holm,p_bh\nall,")


def test_pointwise_statistics(study: Path) -> None:
    fried = _json("stats", "friedman", "--run", "qual", "--by", "model", "--block", "prompt || (treatment->>'gender')")
    assert set(fried["result"]["criteria"]) == {
        "relevance",
        "coherence",
        "empathy",
        "surprise",
        "engagement",
        "complexity",
    }
    assert fried["result"]["criteria"]["relevance"]["n_blocks"] == 24
    t = _json("stats", "ttest", "--run", "qual", "--by", "model", "--baseline", "3")
    assert set(t["result"]["criteria"]["relevance"]) == {"m1", "m2", "m3", "m4"}
    welch = _json("stats", "welch", "--run", "qual", "--by", "treatment->>'gender'", "--groups", "f,m")
    assert welch["result"]["criteria"]["empathy"]["n_a"] == 48
    write(study / "ranking.csv", "group,value\nm1,1\nm2,2\nm3,3\nm4,4\n")
    k = _json("stats", "kendall", "--run", "qual", "--baseline-file", str(study / "ranking.csv"))
    assert -1 <= k["result"]["criteria"]["relevance"]["tau"] <= 1


def test_cohens_d_with_baselines_and_factors(study: Path) -> None:
    write(study / "human.csv", "criterion,d_human\nempathy,0.4\nrelevance,-0.2\nfactor:affect,0.3\n")
    write(study / "factors.csv", "criterion,factor\nempathy,affect\nengagement,affect\n")
    out = _json(
        "stats",
        "cohens-d",
        "--run",
        "qual",
        "--arm",
        "treatment->>'gender'",
        "--arms",
        "f,m",
        "--by",
        "metadata->>'region'",
        "--baseline-file",
        str(study / "human.csv"),
        "--factor-file",
        str(study / "factors.csv"),
        "--boot",
        "300",
    )
    cells = out["result"]["cells"]
    assert set(cells) == {"north", "south"} and cells["north"]["n"] == [24, 24]
    effects = cells["north"]["effects"]
    assert {"d_avg", "d_pooled", "raw", "mean_within_arm_sd", "anchor"} <= set(effects["empathy"])
    assert effects["empathy"]["anchor"]["pattern"] in {"concordance", "suppression", "amplification"}
    assert effects["factor:affect"]["anchor"]["pattern"] in {
        "concordance",
        "suppression",
        "amplification",
        "reorganization",
    }
    assert "anchor" not in effects["coherence"]


def test_item_level_spearman(study: Path) -> None:
    write(study / "keys.csv", "criterion,key\nsurprise,-1\n")
    out = _json(
        "stats",
        "item-spearman",
        "--run",
        "qual",
        "--arm",
        "treatment->>'gender'",
        "--arms",
        "f,m",
        "--by",
        "metadata->>'region'",
        "--key-file",
        str(study / "keys.csv"),
    )
    result = out["result"]
    assert result["conditions"] == ["north", "south"] and len(result["items"]) == 6
    assert len(result["correlations"]) == 1 and -1 <= result["correlations"][0]["spearman"] <= 1
    # Recompute one keyed difference from the store: surprise is reverse-keyed.
    from jurybench.store import connect

    con = connect(study / "test.duckdb")
    rows = con.execute(
        """SELECT i.treatment->>'gender', avg(s) FROM (
               SELECT item_id, avg(score) AS s FROM pointwise_judgments WHERE criterion = 'surprise' GROUP BY 1
           ) JOIN items i USING (item_id) WHERE i.metadata->>'region' = 'north' GROUP BY 1"""
    ).fetchall()
    con.close()
    means = dict(rows)
    index = result["items"].index("surprise")
    assert result["keyed_differences"]["north"][index] == pytest.approx(-(means["f"] - means["m"]))


def test_disparity_and_results_and_plots(study: Path) -> None:
    rows = ["grp,category,correct,invalid"] + [
        f"{g},{c},{int(i % 3 != 0)},{int(g == 'sw' and i % 4 == 0)}"
        for g in ("en", "ko", "sw")
        for c in ("joy", "anger")
        for i in range(12)
    ]
    write(study / "cls.csv", "\n".join(rows) + "\n")
    out = _json("stats", "disparity", "--file", str(study / "cls.csv"), "--reference", "en", "--boot", "200")
    assert out["result"]["excluded_for_invalid_rate"] == ["sw"]
    assert out["result"]["gini"] == pytest.approx(0.0)
    multi = ["model,grp,category,correct,invalid"] + [
        f"{m},{g},joy,{int((i + k) % 4 != 0)},0"
        for k, m in enumerate(("mA", "mB"))
        for g in ("en", "ko", "sw")
        for i in range(8 + 4 * k * (g == "en"))
    ]
    write(study / "multi.csv", "\n".join(multi) + "\n")
    per_model = _json("stats", "disparity", "--file", str(study / "multi.csv"), "--boot", "100")
    assert set(per_model["result"]["models"]) == {"mA", "mB"}
    assert run_cli("plot", "disparity", "-o", str(study / "per-model.png")).exit_code == 0
    run_cli("stats", "disparity", "--file", str(study / "cls.csv"), "--reference", "en", "--boot", "200")
    run_cli("stats", "directional", "--run", "pers", "--by", "model_a")
    run_cli("stats", "gap", "--run", "pers", "--by", "model_a", "--boot", "200")
    run_cli("stats", "friedman", "--run", "qual")
    run_cli("stats", "cohens-d", "--run", "qual", "--arm", "treatment->>'gender'", "--arms", "f,m", "--boot", "100")
    listed = run_cli("stats", "results").stdout
    assert listed.count("\n") >= 5 and "disparity" in listed
    for name, suffix in (
        ("directional", "png"),
        ("gap", "svg"),
        ("posthoc", "png"),
        ("cohens-d", "png"),
        ("disparity", "png"),
    ):
        target = study / f"{name}.{suffix}"
        result = run_cli("plot", name, "-o", str(target))
        assert result.exit_code == 0, result.stderr
        assert target.stat().st_size > 5000


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["stats", "directional", "--run", "nope"], "no run 'nope'"),
        (
            ["stats", "directional", "--run", "pers", "--by", "no_such_column"],
            "reading symmetrized scores: Binder Error",
        ),
        (["stats", "friedman", "--run", "qual", "--by", "treatment->>'gender'"], "Friedman needs at least 3 groups"),
        (["stats", "welch", "--run", "qual", "--groups", "m1"], "--groups needs two comma-separated values"),
        (["stats", "ttest", "--run", "qual"], "ttest needs --baseline"),
        (["stats", "disparity"], "exactly one of --sql QUERY or --file FILE"),
        (["plot", "pie", "-o", "x.png"], "unknown plot 'pie'"),
        (["plot", "gap", "-o", "x.png"], "no stored gap result"),
    ],
)
def test_bad_statistics_input_exits_2(study: Path, args: list[str], message: str) -> None:
    result = run_cli(*args)
    assert result.exit_code == 2 and message in result.stderr, result.stderr


def test_gap_resamples_clusters_from_the_cli(tmp_path: Path) -> None:
    """--resample clusters:<expression> is recorded with the result and counts the clusters; a
    malformed unit is one line, exit 2."""
    import json

    for args in (
        ("datasets", "example", "--out", str(tmp_path / "ex")),
        ("items", "import", str(tmp_path / "ex" / "items.csv"), "--dataset", "example"),
        ("pairs", "import", str(tmp_path / "ex" / "pairs.csv"), "--dataset", "example"),
        (
            "score",
            "--rubric",
            "persuasion",
            "--where",
            "dataset = 'example'",
            "--run",
            "p",
            "--no-progress",
            "--juror",
            "fake/biased,position_bias=1",
            "--juror",
            "fake/fair",
        ),
    ):
        assert run_cli(*args).exit_code == 0
    done = run_cli("stats", "gap", "--run", "p", "--boot", "100", "--resample", "clusters:prompt", "--format", "json")
    assert done.exit_code == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["params"]["resample"] == "clusters:prompt"
    assert result["result"]["n_clusters"] == {"all": 6}  # six prompts, one pair each in the example set
    bad = run_cli("stats", "gap", "--run", "p", "--resample", "prompts")
    assert bad.exit_code == 2 and "--resample 'prompts' is not valid" in bad.stderr and "Traceback" not in bad.stderr


def test_stats_gap_tests_by_permutation_by_default_and_by_bootstrap_by_name(study: Path) -> None:
    """Issue 42, item 5: the default test of G_a = G_b is the permutation test (its p-values in
    ``p`` and ``permutation_p``), with the sign-flip p of G = 0 per group; --test bootstrap keeps
    the former test under its name."""
    default = _json("stats", "gap", "--run", "pers", "--by", "model_a", "--boot", "300")["result"]
    assert default["test"] == "permutation" and default["p"] == default["permutation_p"]
    assert all(0 < g["p_zero"] <= 1 for g in default["gaps"])
    boot = _json("stats", "gap", "--run", "pers", "--by", "model_a", "--boot", "300", "--test", "bootstrap")["result"]
    assert boot["test"] == "bootstrap" and boot["p"] == boot["bootstrap_p"]
    bad = run_cli("stats", "gap", "--run", "pers", "--test", "wald")
    assert bad.exit_code == 2 and "Traceback" not in bad.stderr
