"""stats bias: what a judge's scores lean on. The regression against a reference implementation
(statsmodels), the features counted by hand, and planted biases found (and nulls not) on runs
of simulated jurors whose distortions are known."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from jurybench.errors import JurybenchError
from jurybench.stats._bias import (
    TEXT_FEATURES,
    centred_within,
    cluster_ols,
    family_of,
    independent_columns,
    parse_families,
    tokens,
)
from tests.conftest import run_cli

# -- the pieces, by hand ------------------------------------------------------------------------


def test_features_are_counted_as_written() -> None:
    text = "## Plan\n\nSome **bold** words, and __more__.\n\n- one\n- two\n1. three\n\n```\ncode\n```\n"
    assert tokens("Hello, world!") == 4  # Hello , world !
    counts = {name: f.count(text) for name, f in TEXT_FEATURES.items()}
    assert counts["headers"] == 1 and counts["lists"] == 3 and counts["bold"] == 2 and counts["code"] == 1
    assert counts["chars"] == len(text) / 1000
    assert TEXT_FEATURES["tokens"].count("a b c d") == 0.04  # per 100 tokens
    assert TEXT_FEATURES["headers"].count("#hashtag, not a header") == 0


def test_families_by_name_start_and_by_the_users_map() -> None:
    assert family_of("openai/gpt-4o-mini", {}) == "openai"
    assert family_of("anthropic/claude-3-5-sonnet", {}) == "anthropic"
    assert family_of("ollama/llama3.1:8b", {}) == "meta"
    assert family_of("sim/b", {}) is None
    mine = parse_families(["sim/b=acme", "acme=acme"])
    assert family_of("sim/b", mine) == "acme" and family_of("acme-7b", mine) == "acme"
    assert family_of("gpt-4o", {"gpt-4o": "mine"}) == "mine"  # the user's entry before the defaults
    with pytest.raises(JurybenchError, match="expected NAME=FAMILY"):
        parse_families(["acme"])


def test_cluster_robust_fit_is_statsmodels_cr1() -> None:
    """Against the humans (an intercept): the coefficients and CR1 standard errors statsmodels
    gives (OLS, cov_type='cluster', its small-sample correction G/(G-1) (N-1)/(N-K))."""
    import statsmodels.api as sm

    rng = np.random.default_rng(4)
    n, groups = 90, 15
    g = rng.integers(0, groups, n)
    x = np.column_stack([np.ones(n), rng.normal(size=n), rng.poisson(2, n)])
    y = x @ np.array([0.2, 0.5, -0.1]) + rng.normal(size=groups)[g] + rng.normal(size=n)
    fit = cluster_ols(y, x, [str(v) for v in g], absorbed=False)
    assert fit is not None
    ref = sm.OLS(y, x).fit(cov_type="cluster", cov_kwds={"groups": g})
    np.testing.assert_allclose(fit.beta, ref.params, rtol=1e-10)
    np.testing.assert_allclose(fit.se, ref.bse, rtol=1e-10)
    assert fit.df == groups - 1 and fit.n_clusters == groups


def test_within_prompts_is_prompt_dummies_with_the_absorbed_ones_not_counted() -> None:
    """Centring within prompts gives the coefficients of a fit with a dummy per prompt
    (Frisch-Waugh-Lovell); the CR1 correction counts the features alone (the dummies are nested
    in the clusters), so its SE is statsmodels' times sqrt((N - K_dummies) / (N - K))."""
    import statsmodels.api as sm

    rng = np.random.default_rng(5)
    n, groups = 120, 20
    g = np.repeat(np.arange(groups), n // groups)
    x = rng.normal(size=(n, 2))
    y = x @ np.array([0.3, -0.2]) + rng.normal(size=groups)[g] * 2 + rng.normal(size=n)
    labels = [str(v) for v in g]
    fit = cluster_ols(centred_within(y[:, None], labels)[:, 0], centred_within(x, labels), labels, absorbed=True)
    assert fit is not None
    dummies = (g[:, None] == np.arange(groups)).astype(float)
    ref = sm.OLS(y, np.column_stack([x, dummies])).fit(cov_type="cluster", cov_kwds={"groups": g})
    np.testing.assert_allclose(fit.beta, ref.params[:2], rtol=1e-9)
    np.testing.assert_allclose(fit.se, ref.bse[:2] * math.sqrt((n - 2 - groups) / (n - 2)), rtol=1e-9)


def test_collinear_features_are_named_not_fitted() -> None:
    x = np.column_stack([[1.0, 2, 3, 4], [2.0, 4, 6, 8], [1.0, 0, 0, 1]])
    assert independent_columns(x, [0, 1, 2], base=[np.ones(4)]) == ([0, 2], [1])
    assert independent_columns(x, [2], base=[np.ones(4), np.array([1.0, 0, 0, 1])]) == ([], [2])
    assert cluster_ols(np.arange(4.0), x, ["a", "a", "b", "b"], absorbed=False) is None  # rank 2 of 3


# -- whole runs of simulated jurors ---------------------------------------------------------------


def _store(folder: Path, *, humans_like_length: bool = False, jurors: list[str] | None = None) -> Path:
    """60 prompts x 4 responses of varied length (some with markdown), by three models; human
    labels from the known truth, which (``humans_like_length``) rises with the length."""
    import random

    from jurybench.annotations import simulate_human_labels
    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.rubric import load_rubric
    from jurybench.store import connect, import_items

    rng = random.Random(7)
    rows = []
    for k in range(240):
        words = rng.randint(10, 400)
        text = " ".join("word" for _ in range(words))
        if rng.random() < 0.3:
            text = "## Title\n- a point\n" + text
        meta: dict[str, Any] = {"reviewed": bool(k % 2), "constant": 1}
        if humans_like_length:  # the truth itself rises with length, for humans and jurors alike
            for c in ("relevance", "coherence"):
                meta[f"true_{c}"] = (words - 205) / 113 + rng.gauss(0, 0.5)
        rows.append(
            {
                "item_id": f"i{k:03d}",
                "prompt": f"p{k // 4}",
                "response": text,
                "model": ["gpt-4o", "claude-3", "llama-3"][k % 3],
                "metadata": meta,
            }
        )
    (folder / "items.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    db = folder / "s.duckdb"
    con = connect(db)
    import_items(con, folder / "items.jsonl")
    rubric = load_rubric("story-quality")
    panel = [parse_juror(j) for j in jurors or ["sim/a,noise=0.5", "sim/b,noise=0.5,verbosity_bias=1.5"]]
    score(con, rubric, panel, run_id="r", options=EngineOptions(progress=False), where="TRUE")
    simulate_human_labels(con, rubric, annotators=2)
    con.close()
    return db


@pytest.fixture(scope="module")
def biased(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sim/a (no distortion) and sim/b (1.5 points per 1,000 characters) with human labels."""
    return _store(tmp_path_factory.mktemp("biased"))


def _effects(frame: Any) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(e["rater"], e["criterion"], e["feature"]): e for e in frame.attrs["result"]["effects"]}


def test_a_planted_length_bias_is_found_against_the_humans_and_only_there(biased: Path) -> None:
    """sim/b adds 1.5 points per 1,000 characters (0.75 per 100 tokens of 'word '; less after
    rounding and the scale's ends), sim/a none: sim/b's length effect is found on every
    criterion, sim/a's on none after the correction, and nothing else is."""
    import jurybench as jb

    db = biased
    frame = jb.stats.bias(db, "r", feature=["tokens", "headers"], against="humans")
    effects = _effects(frame)
    criteria = jb.load_rubric("story-quality").dimensions
    for c in criteria:
        b, a = effects[("sim/b", c, "tokens")], effects[("sim/a", c, "tokens")]
        assert b["significant"] and 0.3 < b["estimate"] < 0.8 and b["ci_low"] > 0, (c, b)
        assert not a["significant"] and a["p_adjusted"] > 0.05, (c, a)
    found = {k for k, e in effects.items() if e["significant"]}
    assert {k[0] for k in found} <= {"sim/b", "jury"} and {k[2] for k in found} == {"tokens"}
    readings = frame.attrs["result"]["readings"]
    assert any(
        r.startswith("sim/b scores 0.") and "higher per 100 tokens, with the humans' verdict held fixed" in r
        for r in readings
    )
    assert frame.attrs["result"]["against"] == dict.fromkeys(criteria, "humans")
    assert set(frame.columns) >= {"rater", "feature", "estimate", "ci_low", "ci_high", "p_adjusted"}


def test_a_length_the_humans_reward_as_much_is_no_bias(tmp_path: Path) -> None:
    """The truth rises with length and sim/a follows the truth: against the humans no length
    effect is reported; within prompts (no labels) the effect shows, and the reading says it
    may be quality."""
    import jurybench as jb

    db = _store(tmp_path, humans_like_length=True, jurors=["sim/a,noise=0.5"])
    against = _effects(jb.stats.bias(db, "r", feature=["tokens"], against="humans"))
    assert not any(e["significant"] for e in against.values()), against
    within = jb.stats.bias(db, "r", feature=["tokens"], against="prompts")
    assert all(
        e["significant"] and e["estimate"] > 0
        for e in _effects(within).values()
        if e["criterion"] in ("relevance", "coherence")
    )
    assert "may be quality rather than bias" in within.attrs["result"]["readings"][0]


def test_self_preference_is_found_with_the_family_map(tmp_path: Path) -> None:
    """sim/judge adds a point to responses of its family (models starting 'gpt'); named a
    family with --family, its self effect is found and sim/a's is not asked (no family)."""
    db = _store(tmp_path, jurors=["sim/a,noise=0.5", "sim/judge,noise=0.5,self_preference=1,family=gpt"])
    out = run_cli(
        "stats",
        "bias",
        "--run",
        "r",
        "--feature",
        "self",
        "--family",
        "sim/judge=openai",
        "--db",
        str(db),
        "-f",
        "json",
    )
    assert out.exit_code == 0, out.stderr
    result = json.loads(out.stdout)["result"]
    judge = [e for e in result["effects"] if e["rater"] == "sim/judge"]
    assert judge and all(e["feature"] == "self" and e["significant"] and 0.6 < e["estimate"] < 1.3 for e in judge)
    assert not any(e["rater"] == "sim/a" for e in result["effects"])
    assert result["families"]["jurors"] == {"sim/a": None, "sim/judge": "openai"}
    table = run_cli("stats", "bias", "--run", "r", "--feature", "self", "--family", "sim/judge=openai", "--db", str(db))
    assert (
        "sim/judge scores" in table.stdout
        and "higher on responses from its own family, with the humans' verdict held fixed" in table.stdout
    )


def test_user_features_from_metadata_and_sql(biased: Path) -> None:
    import jurybench as jb

    db = biased
    frame = jb.stats.bias(
        db, "r", feature=["meta.reviewed", "sql:length(response) > 1000"], against="prompts", raters="jurors"
    )
    names = {e["feature"] for e in frame.attrs["result"]["effects"]}
    assert names == {"meta.reviewed", "sql:length(response) > 1000"}
    assert {e["unit"] for e in frame.attrs["result"]["effects"]} == {  # yes/no features read as such
        "where meta.reviewed is true",
        "where length(response) > 1000",
    }
    counted = jb.stats.bias(db, "r", feature=["sql:length(response) / 100"], against="prompts", raters="jury")
    assert {e["unit"] for e in counted.attrs["result"]["effects"]} == {"per unit of sql:length(response) / 100"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--feature", "meta.constant"],
            "error: --feature meta.constant: it has one value (1.0) on every item of run 'r'",
        ),
        (["--feature", "loudness"], "error: --feature 'loudness' is not known. Valid: tokens, chars, headers"),
        (["--feature", "language"], "error: --feature language: run 'r' has one language; nothing to compare."),
        (["--feature", "meta.model_note"], "error: --feature meta.model_note: it has one value (none)"),
        (["--feature", "sql:model"], "error: --feature sql:model: item 'i000' has 'gpt-4o', not a number."),
        (["--feature", "self"], "error: --feature self: no response comes from a juror's family."),
        (["--correction", "bonferroni"], "error: --correction 'bonferroni' is not valid. Valid: holm, bh."),
        (["--family", "x"], "error: --family 'x': expected NAME=FAMILY."),
        (["--where", "nosuch > 1"], "error:"),
    ],
)
def test_bad_input_is_one_line(biased: Path, args: list[str], message: str) -> None:
    out = run_cli("stats", "bias", "--run", "r", *args, "--db", str(biased))
    assert out.exit_code == 2, out.stdout
    assert out.stderr.startswith(message) and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_no_labels_and_other_kinds_are_one_line(biased: Path, tmp_path: Path) -> None:
    import shutil

    from jurybench.store import connect

    db = tmp_path / "copy.duckdb"
    shutil.copy(biased, db)
    con = connect(db)
    con.execute("DELETE FROM human_labels")
    con.close()
    out = run_cli("stats", "bias", "--run", "r", "--against", "humans", "--db", str(db))
    assert out.exit_code == 2 and "has no human labels on 'relevance'" in out.stderr
    auto = run_cli("stats", "bias", "--run", "r", "--feature", "tokens", "--db", str(db), "-f", "json")
    assert set(json.loads(auto.stdout)["result"]["against"].values()) == {"prompts"}  # auto: no labels
    assert "no run 'nosuch'" in run_cli("stats", "bias", "--run", "nosuch", "--db", str(db)).stderr


def test_hanna_what_the_readme_says(tmp_path: Path) -> None:
    """HANNA's real ratings (../shared/datasets/hanna), the README's two commands, with the three
    raters' mean held fixed (corrected for their disagreement): ChatGPT scores GPT-family stories
    lower on empathy, engagement and complexity (the only findings of the defaults: no story
    texts, so no length); coherence cannot be held (its raters disagree more than its stories
    differ: reliability below 0); on human-written stories ChatGPT is higher on four criteria and
    Llama-13B lower on complexity."""
    import jurybench as jb
    from jurybench.datasets import import_hanna
    from jurybench.store import connect
    from tests.conftest import DATA

    if not (DATA / "hanna" / "hanna_metric_scores_llm.csv").exists():
        pytest.skip(f"HANNA not found under {DATA} (set JURYBENCH_DATA)")
    db = tmp_path / "h.duckdb"
    con = connect(db)
    import_hanna(con, DATA)
    con.close()
    result = jb.stats.bias(db, "hanna").attrs["result"]
    found = {(e["rater"], e["criterion"]): e["estimate"] for e in result["effects"] if e["significant"]}
    assert set(found) == {("ChatGPT", c) for c in ("empathy", "engagement", "complexity")}
    assert all(-0.4 < v < -0.1 for v in found.values())
    assert result["held"]["coherence"]["reliability"] < 0 < result["held"]["complexity"]["reliability"] < 0.6
    assert any("coherence" in n and "too noisy to hold fixed" in n for n in result["notes"])
    human = jb.stats.bias(db, "hanna", feature=["sql:model = 'Human'"]).attrs["result"]["effects"]
    chatgpt = {e["criterion"]: e["estimate"] for e in human if e["rater"] == "ChatGPT" and e["significant"]}
    llama = {e["criterion"]: e["estimate"] for e in human if e["rater"] == "Llama-13B" and e["significant"]}
    assert set(chatgpt) == {"empathy", "surprise", "engagement", "complexity"} and min(chatgpt.values()) > 0.5
    assert set(llama) == {"complexity"} and -1.0 < llama["complexity"] < -0.5


def test_the_html_report_says_what_the_judge_leans_on(biased: Path, tmp_path: Path) -> None:
    from jurybench.viewer import report_html

    out = report_html(biased, ["r"], tmp_path / "report.html")
    import html as markup

    html = markup.unescape(out.read_text(encoding="utf-8"))
    assert "What the judge leans on" in html and 'id="leaning-effects"' in html
    assert "sim/b scores 0." in html and "per 100 tokens, with the humans' verdict held fixed" in html


# -- pairwise runs ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pairwise(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 pairs (two responses to one prompt, lengths varied), both orders, human preferences
    from the known truth; sim/a faithful, sim/b 2 points per 1,000 characters, sim/c +1 toward the
    response shown first."""
    import random

    from jurybench.api import Store
    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.jurors._simulated import truth
    from jurybench.rubric import load_rubric
    from jurybench.store import connect, import_items, import_pairs

    folder = tmp_path_factory.mktemp("pairwise")
    rng = random.Random(3)
    items, pairs, labels = [], ["pair_id,item_a,item_b"], ["pair_id,annotator,preference"]
    for k in range(300):
        for side in "ab":
            text = " ".join(["word"] * rng.randint(10, 400))
            items.append({"item_id": f"i{k}{side}", "prompt": f"p{k // 3}", "response": text, "model": "m"})
        pairs.append(f"q{k},i{k}a,i{k}b")
        diff = truth(f"i{k}a", "preference") - truth(f"i{k}b", "preference")
        labels += [f"q{k},h{h},{'A' if diff + rng.gauss(0, 0.5) > 0 else 'B'}" for h in range(2)]
    (folder / "items.jsonl").write_text("\n".join(json.dumps(i) for i in items) + "\n")
    (folder / "pairs.csv").write_text("\n".join(pairs) + "\n")
    (folder / "labels.csv").write_text("\n".join(labels) + "\n")
    db = folder / "s.duckdb"
    con = connect(db)
    import_items(con, folder / "items.jsonl")
    import_pairs(con, folder / "pairs.csv")
    jurors = [parse_juror("sim/a"), parse_juror("sim/b,verbosity_bias=2"), parse_juror("sim/c,position_bias=1")]
    score(con, load_rubric("preference"), jurors, run_id="pw", options=EngineOptions(progress=False))
    con.close()
    with Store(db) as store:
        store.import_annotations(folder / "labels.csv", rubric="preference")
    return db


def test_a_pairwise_run_shows_its_length_and_order_effects(pairwise: Path) -> None:
    """On symmetrized verdicts: sim/b leans toward the longer response beyond the humans, sim/c
    toward the response shown first, sim/a toward neither."""
    import jurybench as jb

    result = jb.stats.bias(pairwise, "pw").attrs["result"]
    found = {(e["rater"], e["feature"]) for e in result["effects"] if e["significant"]}
    assert {("sim/b", "tokens"), ("sim/c", "position")} <= found
    assert not any(r == "sim/a" for r, _ in found) and ("sim/b", "position") not in found
    effects = {(e["rater"], e["feature"]): e for e in result["effects"]}
    assert 0.2 < effects[("sim/b", "tokens")]["estimate"] < 0.5 and effects[("sim/c", "position")]["ci_low"] > 0.1
    assert result["kind"] == "pairwise" and result["against"] == {"preference": "humans"}
    said = "\n".join(result["readings"])
    assert (
        "sim/b leans +0." in said
        and "toward the response 100 tokens longer, with the humans' verdict held fixed" in said
    )
    assert "sim/c leans +0." in said and "toward the response shown first" in said
    out = run_cli("stats", "bias", "--run", "pw", "--feature", "language", "--db", str(pairwise))
    assert out.exit_code == 2 and "it is asked of pointwise runs" in out.stderr


def test_llmbar_what_the_readme_says(tmp_path: Path) -> None:
    """LLMBar's Natural set (../shared/datasets/llmbar) with the judges' recorded answers
    replayed: five of the six judges lean toward the response shown first (Falcon most, GPT-4 not
    beyond chance); with the gold label held fixed, ChatGPT leans toward the longer response and
    PaLM2 toward the one with more list items (the error-based figure of before found neither)."""
    from tests.conftest import DATA

    if not (DATA / "llmbar" / "Natural").exists():
        pytest.skip(f"LLMBar not found under {DATA} (set JURYBENCH_DATA)")
    db = tmp_path / "l.duckdb"
    assert run_cli("datasets", "import", "llmbar", "--data", str(DATA), "--db", str(db)).exit_code == 0
    scored = run_cli(
        "score",
        "--rubric",
        "preference",
        "--jury",
        "llmbar-natural-cot",
        "--where",
        "dataset = 'llmbar-Natural'",
        "--run",
        "natural-cot",
        "--no-progress",
        "--db",
        str(db),
    )
    assert scored.exit_code == 0, scored.stderr
    import jurybench as jb

    result = jb.stats.bias(db, "natural-cot").attrs["result"]
    found = {(e["rater"], e["feature"]) for e in result["effects"] if e["significant"]}
    leaning_first = {r for r, f in found if f == "position" and r != "jury"}
    assert len(leaning_first) == 5 and "GPT-4" not in leaning_first and "Falcon" in leaning_first
    # with the gold label held fixed: ChatGPT toward the longer response, PaLM2 toward more list items
    assert {(r, f) for r, f in found if f != "position"} == {("ChatGPT", "tokens"), ("PaLM2", "lists")}
    chatgpt = next(e for e in result["effects"] if e["rater"] == "ChatGPT" and e["feature"] == "tokens")
    assert 0.15 < chatgpt["estimate"] < 0.35 and result["held"]["preference"]["labelled_twice"] == 0
    falcon = next(e for e in result["effects"] if e["rater"] == "Falcon" and e["feature"] == "position")
    assert 0.8 < falcon["estimate"] < 0.9


def test_a_plot_per_juror(biased: Path, tmp_path: Path) -> None:
    """plot bias: a panel per rater, the findings red (drawn, not empty)."""
    import jurybench as jb

    jb.stats.bias(biased, "r", feature=["tokens", "headers"])
    out = run_cli("plot", "bias", "-o", str(tmp_path / "bias.png"), "--db", str(biased))
    assert out.exit_code == 0, out.stderr
    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(tmp_path / "bias.png").convert("RGB")).astype(int)
    red = (pixels[..., 0] > 150) & (pixels[..., 1] < 90) & (pixels[..., 2] < 90)
    assert red.sum() > 200  # sim/b's and the jury's length effects


def test_a_paired_treatment_design_gives_the_treatment_contrast(tmp_path: Path) -> None:
    """No labels: 60 prompts, each answered twice with the same text but for the arm (gender f
    or m). Named as a feature and compared within prompts, the arm's effect is the treatment
    contrast: sim/a adds 0.6 points for f (found), sim/b nothing (not)."""
    import jurybench as jb
    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.rubric import load_rubric
    from jurybench.store import connect, import_items

    rows = ["item_id,prompt,response,model,gender"]
    for p in range(60):
        for g in ("f", "m"):
            rows.append(f"p{p}-{g},prompt {p},A story about {'Anna' if g == 'f' else 'Karl'} number {p},m,{g}")
    (tmp_path / "items.csv").write_text("\n".join(rows) + "\n")
    db = tmp_path / "s.duckdb"
    con = connect(db)
    try:
        import_items(con, tmp_path / "items.csv", treatment_columns=["gender"])
        jurors = [parse_juror("sim/a,effect=0.6,effect_arm=gender=f,noise=0.4"), parse_juror("sim/b,noise=0.4")]
        score(con, load_rubric("story-quality"), jurors, run_id="t", options=EngineOptions(progress=False))
    finally:
        con.close()
    arm = "sql:treatment->>'gender' = 'f'"
    result = jb.stats.bias(db, "t", feature=[arm], against="prompts", raters="jurors").attrs["result"]
    a = [e for e in result["effects"] if e["rater"] == "sim/a"]
    b = [e for e in result["effects"] if e["rater"] == "sim/b"]
    assert len(a) == 6 and sum(e["significant"] for e in a) >= 5 and 0.3 < np.mean([e["estimate"] for e in a]) < 0.8
    assert not any(e["significant"] for e in b)
    assert a[0]["unit"] == "where treatment->>'gender' = 'f'" and result["against"]["relevance"] == "prompts"


def _llmbar_pairs(judge: str) -> list[tuple[int, int, float]]:
    """Natural's released files read directly: (gold label 1 or 2, A's tokens minus B's, the
    judge's symmetrized verdict over its two orders in the A frame: +1, 0 or -1)."""
    from jurybench.stats._bias import tokens
    from tests.conftest import DATA

    folder = DATA / "llmbar" / "Natural"
    data = json.loads((folder / "dataset.json").read_text())
    answers = json.loads((folder / "evaluators" / judge / "CoT" / "result.json").read_text())
    out = []
    for record, answer in zip(data, answers, strict=True):
        both = answer["results"][0]
        votes = [
            1 if both[k]["winner"] == "1" else -1 if both[k]["winner"] == "2" else 0
            for k in ("swap = False", "swap = True")
        ]
        out.append((int(record["label"]), tokens(record["output_1"]) - tokens(record["output_2"]), sum(votes) / 2))
    return out


def _by_hand(pairs: list[tuple[int, int, float]]) -> tuple[float, float]:
    """Within each gold class, a 2 x 2 count: A the longer or B the longer, by which one the
    judge chose in both orders (inconsistent verdicts and equal lengths left out); the
    Mantel-Haenszel odds ratio over the two classes (above 1: it chooses the longer one more,
    whatever gold says) and the Cochran-Mantel-Haenszel test's p-value."""
    from scipy.stats import chi2

    tables = {1: [[0, 0], [0, 0]], 2: [[0, 0], [0, 0]]}
    for gold, difference, verdict in pairs:
        if verdict != 0 and difference != 0:
            tables[gold][0 if difference > 0 else 1][0 if verdict > 0 else 1] += 1
    excess = variance = top = bottom = 0.0
    for (a, b), (c, d) in tables.values():
        n = a + b + c + d
        excess += a - (a + b) * (a + c) / n
        variance += (a + b) * (c + d) * (a + c) * (b + d) / (n * n * (n - 1))
        top, bottom = top + a * d / n, bottom + b * c / n
    return (top / bottom if bottom else math.inf), float(chi2.sf(excess * excess / variance, 1))


def test_a_length_lean_counted_by_hand_within_each_gold_class_agrees_with_stats_bias(tmp_path: Path) -> None:
    """Issue 83: on LLMBar's Natural set, the judge's preference for the longer output within
    each gold class, counted by hand from the released files, agrees in sign and significance
    with what stats bias reports with the gold label held fixed: ChatGPT chooses the longer one
    far more whatever gold says (odds ratio 21, CMH p 0.001; stats bias +0.25 per 100 tokens, p <
    0.001); GPT-4 does not (CMH p 0.27; stats bias p 0.40)."""
    from tests.conftest import DATA

    if not (DATA / "llmbar" / "Natural").exists():
        pytest.skip(f"LLMBar not found under {DATA} (set JURYBENCH_DATA)")
    db = tmp_path / "l.duckdb"
    assert run_cli("datasets", "import", "llmbar", "--data", str(DATA), "--db", str(db)).exit_code == 0
    scored = run_cli(
        "score",
        "--rubric",
        "preference",
        "--jury",
        "llmbar-natural-cot",
        "--where",
        "dataset = 'llmbar-Natural'",
        "--run",
        "cot",
        "--no-progress",
        "--db",
        str(db),
    )
    assert scored.exit_code == 0, scored.stderr
    import jurybench as jb

    effects = {
        e["rater"]: e
        for e in jb.stats.bias(db, "cot", feature=["tokens"]).attrs["result"]["effects"]
        if e["feature"] == "tokens"
    }
    for judge, leans in (("ChatGPT", True), ("GPT-4", False)):
        odds, p = _by_hand(_llmbar_pairs(judge))
        e = effects[judge]
        assert (p < 0.05) is leans and (e["p"] < 0.05) is leans, (judge, p, e["p"])
        if leans:
            assert odds > 1 and e["estimate"] > 0
    assert _by_hand(_llmbar_pairs("ChatGPT"))[1] == pytest.approx(0.00111, abs=5e-5)
