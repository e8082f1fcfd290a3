"""Judgments made elsewhere, imported as a run: AlpacaEval's leaderboard figures reproduced from
released-style annotations through the CLI, pointwise and pairwise imports, single-order designs,
re-imports and conflicts, recordings, the Python face and HTTP, and bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.conftest import run_cli, write

# AlpacaEval's annotations: output_1 is the reference (generator_1), output_2 the model;
# preference in [1, 2] where 2 means the model's output is preferred.
REFERENCE = "gpt4_1106_preview"
ANNOTATIONS = [
    # instruction, model, model output, preference
    ("Name a prime.", "model-x", "Seven.", 1.9),
    ("Name a colour.", "model-x", "Blue, the colour of the sky on a clear day.", 1.25),
    ("Say hi.", "model-x", "Hi!", 1.5),
    ("Count to three.", "model-x", "One, two, three.", 2.0),
    ("Name a fruit.", "model-x", "", 1.0),  # an empty generation: judged, and lost
    ("Name a prime.", "model-y", "Two is the only even prime number.", 1.6),
    ("Name a colour.", "model-y", "Red.", 1.1),
    ("Say hi.", "model-y", "Hello there, how are you doing today?", 1.75),
]
REFERENCE_OUTPUTS = {
    "Name a prime.": "Three.",
    "Name a colour.": "Green.",
    "Say hi.": "Hello.",
    "Count to three.": "1, 2, 3.",
    "Name a fruit.": "An apple.",
}


def _alpaca_files(folder: Path) -> tuple[Path, Path, Path, Path]:
    """AlpacaEval-shaped annotations, and the items, pairs and judgments a user makes of them:
    item_a = the reference's output, item_b = the model's, p_b = preference - 1."""
    annotations = [
        {
            "instruction": i,
            "output_1": REFERENCE_OUTPUTS[i],
            "generator_1": REFERENCE,
            "output_2": out,
            "generator_2": model,
            "annotator": "weighted_alpaca_eval_gpt4_turbo",
            "preference": pref,
        }
        for i, model, out, pref in ANNOTATIONS
    ]
    source = write(folder / "annotations.json", json.dumps(annotations))
    items, pairs, judgments = [], [], []
    prompts = sorted(REFERENCE_OUTPUTS)
    for a in json.loads(source.read_text()):
        k = prompts.index(a["instruction"])
        ref_id, model_id = f"ref-{k}", f"{a['generator_2']}-{k}"
        items.append(
            {"item_id": ref_id, "prompt": a["instruction"], "response": a["output_1"], "model": a["generator_1"]}
        )
        items.append(
            {"item_id": model_id, "prompt": a["instruction"], "response": a["output_2"], "model": a["generator_2"]}
        )
        pairs.append({"pair_id": f"{model_id}-vs-ref", "item_a": ref_id, "item_b": model_id})
        judgments.append({"pair_id": f"{model_id}-vs-ref", "p_b": a["preference"] - 1})
    unique = list({i["item_id"]: i for i in items}.values())
    lines = lambda rows: "".join(json.dumps(r) + "\n" for r in rows)  # noqa: E731
    return (
        source,
        write(folder / "items.jsonl", lines(unique)),
        write(folder / "pairs.jsonl", lines(pairs)),
        write(folder / "judgments.jsonl", lines(judgments)),
    )


def _hand_worked(model: str) -> dict[str, float]:
    """AlpacaEval's get_winrate, by hand: p = preference - 1; win_rate = 100 mean(p);
    standard_error = 100 sd(p, ddof=1)/sqrt(n); n_wins p > .5, n_wins_base p < .5, n_draws p = .5;
    discrete_win_rate = 100 (n_wins + n_draws/2)/n."""
    p = [pref - 1 for _, m, _, pref in ANNOTATIONS if m == model]
    n = len(p)
    mean = sum(p) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in p) / (n - 1))
    wins, base, draws = sum(x > 0.5 for x in p), sum(x < 0.5 for x in p), sum(x == 0.5 for x in p)
    return {
        "n_total": n,
        "n_wins": wins,
        "n_wins_base": base,
        "n_draws": draws,
        "win_rate": 100 * mean,
        "standard_error": 100 * sd / math.sqrt(n),
        "discrete_win_rate": 100 * (wins + draws / 2) / n,
    }


def test_alpacaeval_figures_are_reproduced_from_imported_probabilistic_preferences(tmp_path: Path) -> None:
    # model-x: p = .9, .25, .5, 1, 0 -> mean .53, n_wins 2, n_wins_base 2, n_draws 1, discrete 50
    # model-y: p = .6, .1, .75 -> mean .48333..., n_wins 2, n_wins_base 1, discrete 66.67
    _, items, pairs, judgments = _alpaca_files(tmp_path)
    db = str(tmp_path / "alpaca.duckdb")
    for command in (("items", "import", str(items)), ("pairs", "import", str(pairs))):
        done = run_cli(*command, "--db", db)
        assert done.exit_code == 0, done.stderr
    done = run_cli(
        "judgments",
        "import",
        str(judgments),
        "--run",
        "alpaca",
        "-r",
        "preference",
        "-j",
        "weighted_alpaca_eval_gpt4_turbo",
        "--db",
        db,
    )
    assert done.exit_code == 0, done.stderr
    assert "8 judgments in 8 calls" in done.stdout and "position bias cannot be measured" in done.stdout
    stat = run_cli("stats", "winrate", "--run", "alpaca", "--reference", REFERENCE, "--format", "json", "--db", db)
    assert stat.exit_code == 0, stat.stderr
    models = {m["model"]: m for m in json.loads(stat.stdout)["result"]["boards"]["jury"]["models"]}
    assert set(models) == {"model-x", "model-y"}
    for model, got in models.items():
        want = _hand_worked(model)
        for key, value in want.items():
            assert got[key] == pytest.approx(value, abs=1e-9), (model, key)
    assert models["model-x"]["win_rate"] == pytest.approx(53.0, abs=1e-9)
    assert models["model-y"]["discrete_win_rate"] == pytest.approx(200 / 3, abs=1e-9)
    # the empty generation was imported as an item flagged empty, and judged like any other
    from jurybench.store import connect

    con = connect(Path(db), read_only=True)
    assert con.execute("SELECT count(*) FROM items WHERE empty").fetchone() == (1,)
    assert con.execute("SELECT orders FROM runs WHERE run_id = 'alpaca'").fetchone() == ("unknown",)
    con.close()


def test_the_length_controlled_win_rate_is_the_raw_one_without_length_differences_and_50_for_pure_length() -> None:
    import numpy as np

    from jurybench.stats.functions import length_controlled

    p = np.array([0.9, 0.25, 0.5, 1.0, 0.0, 0.6])
    same = length_controlled(p, np.zeros(6))
    # no length differences: logit P = bias only, whose MLE is logit(mean p): LC = raw = 100 * 3.25/6
    assert same["lc_win_rate"] == pytest.approx(100 * p.mean(), abs=1e-9) and same["length_slope"] is None
    # preferences that follow length alone, symmetric around 0: the bias is 0, LC = 50
    d = np.array([-300.0, -100.0, -20.0, 20.0, 100.0, 300.0])
    feature = np.tanh(d / d.std(ddof=1))
    p_len = 1 / (1 + np.exp(-2.0 * feature))
    pure = length_controlled(p_len, d)
    assert pure["lc_win_rate"] == pytest.approx(50.0, abs=1e-6)
    assert pure["length_slope"] == pytest.approx(2.0, abs=1e-6)  # soft labels from the model itself: recovered


@pytest.fixture
def pointwise_db(tmp_path: Path) -> str:
    db = str(tmp_path / "point.duckdb")
    items = write(tmp_path / "items.csv", "item_id,response,model\ni1,A cat sat.,m1\ni2,A dog ran.,m2\ni3,,m1\n")
    assert run_cli("items", "import", str(items), "--db", db).exit_code == 0
    return db


GOOD = "item_id,criterion,score,raw\ni1,relevance,4,r1\ni1,coherence,5,r1\ni2,relevance,2.5,r2\ni3,relevance,,r3\n"


def test_pointwise_judgments_become_a_run_and_a_reimport_changes_nothing(pointwise_db: str, tmp_path: Path) -> None:
    from jurybench.store import connect

    bad_status = GOOD.replace("i3,relevance,,r3", "i3,relevance,,r3").replace("score,raw", "score,raw,status")
    text = bad_status.replace(",r1\n", ",r1,ok\n").replace(",r2\n", ",r2,ok\n").replace(",r3\n", ",r3,invalid\n")
    file = write(tmp_path / "point.csv", text)
    first = run_cli(
        "judgments",
        "import",
        str(file),
        "--run",
        "human",
        "-r",
        "story-quality",
        "-j",
        "panel",
        "--continuous",
        "--db",
        pointwise_db,
    )
    assert first.exit_code == 0, first.stderr
    assert "4 judgments in 3 calls (3 calls inserted, 0 already present)" in first.stdout
    assert "1 invalid or refusals kept as such" in first.stdout
    again = run_cli(
        "judgments",
        "import",
        str(file),
        "--run",
        "human",
        "-r",
        "story-quality",
        "-j",
        "panel",
        "--continuous",
        "--db",
        pointwise_db,
    )
    assert again.exit_code == 0 and "0 calls inserted, 3 already present" in again.stdout
    con = connect(Path(pointwise_db), read_only=True)
    rows = con.execute(
        "SELECT item_id, criterion, juror, juror_score, n_invalid FROM juror_pointwise "
        "WHERE run_id = 'human' AND juror_score IS NOT NULL OR n_invalid > 0 ORDER BY 1, 2"
    ).fetchall()
    assert rows == [
        ("i1", "coherence", "panel", 5.0, 0),
        ("i1", "relevance", "panel", 4.0, 0),
        ("i2", "relevance", "panel", 2.5, 0),
        ("i3", "relevance", "panel", None, 1),
    ]
    model, structured = con.execute(
        "SELECT j.model, c.structured FROM calls c JOIN jurors j USING (juror_key) LIMIT 1"
    ).fetchone()
    assert (model, structured) == ("import/panel", "imported")
    con.close()
    changed = write(tmp_path / "changed.csv", "item_id,criterion,score\ni1,relevance,3\n")
    refused = run_cli(
        "judgments",
        "import",
        str(changed),
        "--run",
        "human",
        "-r",
        "story-quality",
        "-j",
        "panel",
        "--db",
        pointwise_db,
    )
    assert refused.exit_code == 2 and "row 2" in refused.stderr and "--replace" in refused.stderr
    replaced = run_cli(
        "judgments",
        "import",
        str(changed),
        "--run",
        "human",
        "-r",
        "story-quality",
        "-j",
        "panel",
        "--replace",
        "--db",
        pointwise_db,
    )
    assert replaced.exit_code == 0 and "1 replaced" in replaced.stdout


@pytest.mark.parametrize(
    ("content", "rubric", "message"),
    [
        (
            "item_id,criterion,score,extra\ni1,relevance,4,x\n",
            "story-quality",
            "column 'extra' is not a judgment column",
        ),
        ("item_id,criterion,score\ni9,relevance,4\n", "story-quality", "row 2, field 'item_id': no item 'i9'"),
        ("item_id,criterion,score\ni1,charm,4\n", "story-quality", "row 2, field 'criterion': 'charm' is not in"),
        ("item_id,criterion,score\ni1,relevance,9\n", "story-quality", "row 2, field 'score': 9 is outside 1..5"),
        ("item_id,criterion,score\ni1,relevance,nan\n", "story-quality", "row 2, field 'score': 'nan' is not a number"),
        ("item_id,criterion,score,status\ni1,relevance,4,invalid\n", "story-quality", "status invalid has no value"),
        ("item_id,criterion,score,status\ni1,relevance,4,maybe\n", "story-quality", "'maybe' is not a status"),
        ("item_id,criterion,score,sample\ni1,relevance,4,-1\n", "story-quality", "field 'sample'"),
        ("item_id,criterion,score\ni1,relevance,4\ni1,relevance,5\n", "story-quality", "row 3: a second judgment"),
        ("item_id,criterion,score,shown\ni1,relevance,4,AB\n", "story-quality", "'shown' is for pairs"),
        ("item_id,criterion\ni1,relevance\n", "story-quality", "missing column(s) score"),
        # Issue 40, item 7: stored as given before (annotations import refused both).
        ("item_id,criterion,score\ni1,relevance,3.5\n", "story-quality", "row 2, field 'score': 3.5 is not a whole"),
        ("item_id,criterion,score\ni1,relevance,३\n", "story-quality", "row 2, field 'score': '३' is not a number"),
        ("item_id,criterion,score,sample\ni1,relevance,4,१\n", "story-quality", "field 'sample': '१'"),
    ],
)
def test_bad_judgment_files_are_one_line_and_write_nothing(
    pointwise_db: str, tmp_path: Path, content: str, rubric: str, message: str
) -> None:
    from jurybench.store import connect

    file = write(tmp_path / "bad.csv", content)
    done = run_cli("judgments", "import", str(file), "--run", "r", "-r", rubric, "-j", "panel", "--db", pointwise_db)
    assert done.exit_code == 2, done.stdout
    assert message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) <= 2
    con = connect(Path(pointwise_db), read_only=True)
    assert con.execute("SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM calls)").fetchone() == (0, 0)
    con.close()


@pytest.fixture
def pairs_db(tmp_path: Path) -> str:
    db = str(tmp_path / "pairs.duckdb")
    items = write(tmp_path / "items.csv", "item_id,response,model\na1,x,m1\nb1,y,m2\na2,z,m1\nb2,w,m2\n")
    pairs = write(tmp_path / "pairs.csv", "pair_id,item_a,item_b\np1,a1,b1\np2,a2,b2\n")
    assert run_cli("items", "import", str(items), "--db", db).exit_code == 0
    assert run_cli("pairs", "import", str(pairs), "--db", db).exit_code == 0
    return db


def test_verdicts_in_both_orders_are_symmetrized_and_one_order_is_its_own_design(pairs_db: str, tmp_path: Path) -> None:
    from jurybench.store import connect

    # p1: shown AB the judge chose A (item_a), shown BA it chose A again (item_a): epsilon +1.
    # p2: shown AB it chose A (item_a), shown BA it chose B (item_b): a position flip, epsilon 0.
    both = write(tmp_path / "both.csv", "pair_id,verdict,shown\np1,A,AB\np1,A,BA\np2,A,AB\np2,B,BA\n")
    done = run_cli(
        "judgments", "import", str(both), "--run", "both", "-r", "preference", "-j", "judge", "--db", pairs_db
    )
    assert done.exit_code == 0, done.stderr
    one = write(tmp_path / "one.csv", "pair_id,verdict,shown\np1,B,BA\np2,A,AB\n")
    done = run_cli(
        "judgments", "import", str(one), "--run", "one", "-r", "preference", "-j", "judge1", "--db", pairs_db
    )
    assert done.exit_code == 0 and "one order per pair" in done.stdout
    con = connect(Path(pairs_db), read_only=True)
    eps = dict(con.execute("SELECT run_id || ':' || pair_id, juror_epsilon FROM juror_pairwise ORDER BY 1").fetchall())
    # stored in the order shown: p1 shown BA, verdict B (item_b) = first shown better: stored +1
    assert con.execute(
        "SELECT score FROM pairwise_judgments j JOIN run_calls USING (call_key) WHERE run_id = 'one' AND pair_id = 'p1'"
    ).fetchone() == (1,)
    con.close()
    assert eps == {"both:p1": 1.0, "both:p2": 0.0, "one:p1": -1.0, "one:p2": 1.0}
    mixed = write(tmp_path / "mixed.csv", "pair_id,verdict,shown\np1,A,AB\np1,A,BA\np2,A,AB\n")
    refused = run_cli(
        "judgments", "import", str(mixed), "--run", "mixed", "-r", "preference", "-j", "judge", "--db", pairs_db
    )
    assert refused.exit_code == 2 and "a run has one design" in refused.stderr


def test_imported_judgments_replay_through_a_new_jury_as_recordings(pairs_db: str, tmp_path: Path) -> None:
    file = write(tmp_path / "v.csv", "pair_id,verdict,shown\np1,A,AB\np1,B,BA\np2,B,AB\np2,A,BA\n")
    done = run_cli(
        "judgments",
        "import",
        str(file),
        "--run",
        "imp",
        "-r",
        "preference",
        "-j",
        "judge",
        "--as-recording",
        "judge-rec",
        "--db",
        pairs_db,
    )
    assert done.exit_code == 0 and "recorded as replay/judge-rec" in done.stdout, done.stderr
    replay = run_cli(
        "score", "-r", "preference", "-j", "replay/judge-rec", "--run", "again", "--no-progress", "--db", pairs_db
    )
    assert replay.exit_code == 0 and "ok 4" in replay.stdout, replay.stderr
    asked = run_cli("score", "-r", "preference", "-j", "import/judge", "--run", "ask", "--db", pairs_db)
    assert asked.exit_code == 2 and "cannot be asked" in asked.stderr


def test_python_and_http_import_the_same_rows(pairs_db: str, tmp_path: Path) -> None:
    import jurybench as jb
    from tests.service.conftest import make_client

    rows = [{"pair_id": "p1", "p_b": 0.2}, {"pair_id": "p2", "p_b": 0.7, "cost_usd": 0.001}]
    with jb.open(pairs_db) as store:
        result = store.import_judgments(rows, run="py", rubric="preference", juror="soft")
    assert result.probabilistic and result.calls == 2
    with make_client(Path(pairs_db)) as client:
        answer = client.post(
            "/v1/judgments", json={"run": "http", "rubric": "preference", "juror": "soft", "judgments": rows}
        )
        assert answer.status_code == 201, answer.text
        assert answer.json()["probabilistic"] is True
        bad = client.post(
            "/v1/judgments",
            json={"run": "bad", "rubric": "preference", "juror": "soft", "judgments": [{"pair_id": "p1", "p_b": 1.5}]},
        )
        assert bad.status_code == 400 and "not a probability" in bad.text
        assert "judgments row 1" in bad.text  # the body's rows are named as the body names them
        scores = client.post(
            "/v1/sql", json={"query": "SELECT run_id, pair_id, jury_score FROM jury_pairwise ORDER BY 1, 2"}
        ).json()["rows"]
    # p_b = .2 -> 1 - 2(.2) = +0.6 for item_a; p_b = .7 -> -0.4; the same from both faces
    assert [(r[0], r[1], round(r[2], 9)) for r in scores] == [
        ("http", "p1", 0.6),
        ("http", "p2", -0.4),
        ("py", "p1", 0.6),
        ("py", "p2", -0.4),
    ]


def test_score_orders_one_and_random_make_one_call_per_pair_and_say_so(pairs_db: str) -> None:
    from jurybench.engine import orders_of
    from jurybench.store import connect

    one = run_cli(
        "score",
        "-r",
        "preference",
        "-j",
        "fake/a",
        "--orders",
        "one",
        "--run",
        "one",
        "--no-progress",
        "--db",
        pairs_db,
    )
    assert one.exit_code == 0 and "2 judgments requested" in one.stdout, one.stderr + one.stdout
    rand = run_cli(
        "score",
        "-r",
        "preference",
        "-j",
        "fake/b",
        "--orders",
        "random",
        "--order-seed",
        "7",
        "--run",
        "rand",
        "--no-progress",
        "--db",
        pairs_db,
    )
    assert rand.exit_code == 0, rand.stderr
    con = connect(Path(pairs_db), read_only=True)
    shown = dict(
        con.execute(
            "SELECT c.subject_id, c.presented_order FROM calls c JOIN run_calls rc USING (call_key) "
            "WHERE rc.run_id = 'rand'"
        ).fetchall()
    )
    assert shown == {p: orders_of(p, "random", 7)[0] for p in ("p1", "p2")}  # drawn from the seed and the pair
    orders = dict(con.execute("SELECT run_id, orders || coalesce(':' || order_seed, '') FROM runs").fetchall())
    assert orders == {"one": "one", "rand": "random:7"}
    # with one order, a juror's epsilon is that order's score in the pair's frame, never excluded
    rows = con.execute(
        "SELECT s.pair_id, s.juror_epsilon, j.score, j.presented_order FROM juror_pairwise s "
        "JOIN pairwise_judgments j ON j.pair_id = s.pair_id JOIN run_calls rc ON rc.call_key = j.call_key "
        "AND rc.run_id = s.run_id WHERE s.run_id = 'rand'"
    ).fetchall()
    con.close()
    assert rows and all(eps == (score if order == "AB" else -score) for _, eps, score, order in rows)
    again = run_cli("score", "-r", "preference", "-j", "fake/a", "--run", "one", "--db", pairs_db)
    assert again.exit_code == 2 and "was judged with --orders one, not both" in again.stderr
    items = run_cli("score", "-r", "story-quality", "-j", "fake/a", "--orders", "one", "--db", pairs_db)
    assert items.exit_code == 2 and "orders are for pairwise" in items.stderr
    assert {orders_of("p9", "random", s)[0] for s in range(20)} == {"AB", "BA"}  # both orders occur


def test_a_weighted_leaderboard_reads_probabilities_as_outcomes(tmp_path: Path) -> None:
    """Two models, B against the reference A on 4 prompts with p_b = .9, .6, .3, .8. Weighted,
    each battle's outcome for B is its p_b, and Bradley-Terry's MLE for two models solves
    s(b_B - b_A) = mean outcome = 0.65: b_B = ln(0.65/0.35) = 0.619039, Elo 1000 + 400 b / ln 10
    = 1107.536 with A (the anchor) at 1000. Unweighted, the signs give B 3 wins of 4: ln 3."""
    db = str(tmp_path / "w.duckdb")
    items = "item_id,prompt,response,model\n" + "".join(f"a{k},q{k},x,A\nb{k},q{k},y,B\n" for k in range(4))
    pairs = "pair_id,item_a,item_b\n" + "".join(f"p{k},a{k},b{k}\n" for k in range(4))
    judgments = "pair_id,p_b\np0,0.9\np1,0.6\np2,0.3\np3,0.8\n"
    for kind, text in (("items", items), ("pairs", pairs)):
        assert run_cli(kind, "import", str(write(tmp_path / f"{kind}.csv", text)), "--db", db).exit_code == 0
    done = run_cli(
        "judgments",
        "import",
        str(write(tmp_path / "j.csv", judgments)),
        "--run",
        "w",
        "-r",
        "preference",
        "-j",
        "soft",
        "--db",
        db,
    )
    assert done.exit_code == 0, done.stderr

    def rating(*extra: str) -> float:
        out = run_cli("stats", "leaderboard", "--run", "w", "--boot", "20", *extra, "--format", "json", "--db", db)
        assert out.exit_code == 0, out.stderr
        models = {m["model"]: m for m in json.loads(out.stdout)["result"]["boards"]["jury"]["models"]}
        assert models["A"]["rating"] == pytest.approx(1000.0)
        return float(models["B"]["rating"])

    assert rating("--weighted") == pytest.approx(1000 + 400 * math.log(0.65 / 0.35) / math.log(10), abs=1e-6)
    assert rating() == pytest.approx(1000 + 400 * math.log(3) / math.log(10), abs=1e-6)


def test_an_empty_response_is_judged_shown_empty_and_counted(pointwise_db: str) -> None:
    from jurybench.store import connect

    done = run_cli("score", "-r", "story-quality", "-j", "fake/a", "--run", "e", "--no-progress", "--db", pointwise_db)
    assert done.exit_code == 0, done.stderr
    assert "note: 1 of the run's 3 items have an empty response" in done.stderr
    con = connect(Path(pointwise_db), read_only=True)
    shown = dict(con.execute("SELECT subject_id, messages FROM calls").fetchall())
    con.close()
    # the same template, the response shown as it is: i1's prompt without its text is i3's
    first, empty = (json.loads(shown[k])[-1]["content"] for k in ("i1", "i3"))
    assert "A cat sat." in first and first.replace("A cat sat.", "") == empty


def test_the_judge_model_named_in_the_rows_is_the_jurors_and_two_models_are_two_jurors(
    pairs_db: str, tmp_path: Path
) -> None:
    from jurybench.store import connect

    one = write(tmp_path / "one.csv", "pair_id,verdict,model\np1,A,gpt-4-turbo\np2,B,gpt-4-turbo\n")
    done = run_cli(
        "judgments", "import", str(one), "--run", "m", "-r", "preference", "-j", "annotator", "--db", pairs_db
    )
    assert done.exit_code == 0, done.stderr
    con = connect(Path(pairs_db), read_only=True)
    assert json.loads(con.execute("SELECT params FROM jurors WHERE name = 'annotator'").fetchone()[0]) == {
        "judge_model": "gpt-4-turbo"
    }
    con.close()
    two = write(tmp_path / "two.csv", "pair_id,verdict,model\np1,A,gpt-4-turbo\np2,B,claude\n")
    refused = run_cli(
        "judgments", "import", str(two), "--run", "m2", "-r", "preference", "-j", "annotator", "--db", pairs_db
    )
    assert refused.exit_code == 2 and "one juror is one judge" in refused.stderr


def test_a_one_order_run_says_position_bias_cannot_be_measured(pairs_db: str) -> None:
    done = run_cli(
        "score", "-r", "preference", "-j", "fake/a", "--orders", "one", "--run", "o", "--no-progress", "--db", pairs_db
    )
    assert done.exit_code == 0 and "position bias cannot be measured" in done.stderr


def test_winrate_over_http_is_the_clis(tmp_path: Path) -> None:
    from tests.service.conftest import make_client

    _, items, pairs, judgments = _alpaca_files(tmp_path)
    db = tmp_path / "http.duckdb"
    for command in (
        ("items", "import", str(items)),
        ("pairs", "import", str(pairs)),
        ("judgments", "import", str(judgments), "--run", "alpaca", "-r", "preference", "-j", "gpt4t"),
    ):
        assert run_cli(*command, "--db", str(db)).exit_code == 0
    cli = json.loads(
        run_cli(
            "stats", "winrate", "--run", "alpaca", "--reference", REFERENCE, "--format", "json", "--db", str(db)
        ).stdout
    )["result"]
    with make_client(db) as client:
        answer = client.post("/v1/stats/winrate", json={"run": "alpaca", "reference": REFERENCE})
        assert answer.status_code == 200, answer.text
        served = answer.json()["result"]
        bad = client.post("/v1/stats/winrate", json={"run": "alpaca", "reference": "nobody"})
        assert bad.status_code == 400 and "is not a model of run 'alpaca'" in bad.text
    assert served["boards"] == cli["boards"] and served["scores"] == "expected" and served["orders"] == "unknown"


def test_two_judges_imported_into_one_run_make_its_jury(pairs_db: str, tmp_path: Path) -> None:
    """p1: judge one says A (+1), judge two says B (-1); p2 both say A. A mean jury of the two:
    p1 0, p2 +1 (preference runs default to majority: p1 is then a tie, 0, as well)."""
    from jurybench.store import connect

    for name, text in (("one", "pair_id,verdict\np1,A\np2,A\n"), ("two", "pair_id,verdict\np1,B\np2,A\n")):
        done = run_cli(
            "judgments",
            "import",
            str(write(tmp_path / f"{name}.csv", text)),
            "--run",
            "two",
            "-r",
            "preference",
            "-j",
            name,
            "--db",
            pairs_db,
        )
        assert done.exit_code == 0, done.stderr
    con = connect(Path(pairs_db), read_only=True)
    panel = [r[0] for r in con.execute("SELECT name FROM run_jurors WHERE run_id = 'two' ORDER BY 1").fetchall()]
    scores = dict(con.execute("SELECT pair_id, jury_score FROM jury_pairwise WHERE run_id = 'two'").fetchall())
    con.close()
    assert panel == ["one", "two"] and scores == {"p1": 0.0, "p2": 1.0}


def test_a_key_typed_as_the_judges_name_is_refused_and_never_shown(pointwise_db: str, tmp_path: Path) -> None:
    from jurybench.store import connect

    file = write(tmp_path / "j.csv", "item_id,criterion,score\ni1,relevance,4\n")
    key = "sk-proj-0123456789abcdefABCDEF"
    done = run_cli(
        "judgments", "import", str(file), "--run", "r", "-r", "story-quality", "-j", key, "--db", pointwise_db
    )
    assert done.exit_code == 2 and "looks like a credential" in done.stderr
    assert key not in done.stdout + done.stderr
    con = connect(Path(pointwise_db), read_only=True)
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (0,)
    con.close()


def test_report_preference_on_a_one_order_import_reports_the_orders_that_exist(pairs_db: str, tmp_path: Path) -> None:
    """Issue 44, item 4 (fails before: the absent order was counted as an invalid answer, its
    kappa 0). p1 shown BA, the judge chose B (item_b); p2 shown AB, it chose A (item_a). The
    humans prefer B on p1 and A on p2: both verdicts correct, one in each order; nothing is
    invalid, and no both-order figure is given."""
    one = write(tmp_path / "one.csv", "pair_id,verdict,shown\np1,B,BA\np2,A,AB\n")
    assert (
        run_cli(
            "judgments", "import", str(one), "--run", "one", "-r", "preference", "-j", "judge", "--db", pairs_db
        ).exit_code
        == 0
    )
    labels = write(tmp_path / "h.csv", "pair_id,annotator,preference\np1,h,B\np2,h,A\n")
    assert run_cli("annotations", "import", str(labels), "--rubric", "preference", "--db", pairs_db).exit_code == 0
    report = json.loads(run_cli("report", "preference", "--run", "one", "--format", "json", "--db", pairs_db).stdout)
    (judge,) = report["jurors"]
    assert report["orders"] == "one" and "position bias cannot be measured" in report["note"]
    assert judge["shown_ab"] == 1 and judge["shown_ba"] == 1 and judge["correct"] == 2 and judge["correct_rate"] == 1.0
    assert judge.get("invalid_ab", 0) == 0 and judge.get("invalid_ba", 0) == 0
    assert judge["correct_ab_rate"] == 1.0 and judge["consistent_rate"] is None and judge["both_correct_rate"] is None
    table = run_cli("report", "preference", "--run", "one", "--db", pairs_db).stdout
    assert "correct AB (shown)" in table and "consistent" not in table.split("jury rule")[0]
    assert "position bias cannot be measured" in table
    # Positional consistency cannot be measured on one order: one line, exit 2 (was an empty table).
    refused = run_cli("stats", "consistency", "--run", "one", "--db", pairs_db)
    assert refused.exit_code == 2 and "positional consistency needs both orders" in refused.stderr


def test_a_variant_of_a_judges_judgments_goes_into_a_new_run_beside_the_first(
    pointwise_db: str, tmp_path: Path
) -> None:
    """Issue 44, item 5: a judgment belongs to the run it was imported into. Before, a second file
    of the same judge (another prompt's scores) into a new run was refused unless --replace, which
    overwrote the first run's judgments."""
    from jurybench.store import connect

    first = write(tmp_path / "v1.csv", "item_id,criterion,score\ni1,relevance,4\ni2,relevance,2\n")
    variant = write(tmp_path / "v2.csv", "item_id,criterion,score\ni1,relevance,1\ni2,relevance,2\n")

    def load(file: Path, run: str, *extra: str) -> object:
        return run_cli(
            "judgments",
            "import",
            str(file),
            "--run",
            run,
            "-r",
            "story-quality",
            "-j",
            "judge",
            *extra,
            "--db",
            pointwise_db,
        )

    assert load(first, "prompt-1").exit_code == 0  # type: ignore[attr-defined]
    second = load(variant, "prompt-2")
    assert second.exit_code == 0, second.stderr  # type: ignore[attr-defined]
    assert "2 calls inserted" in second.stdout  # type: ignore[attr-defined]
    assert load(first, "prompt-1").exit_code == 0  # a re-import into the first run: unchanged
    refused = load(variant, "prompt-1")
    assert refused.exit_code == 2 and "stored in run 'prompt-1'" in refused.stderr  # type: ignore[attr-defined]
    con = connect(Path(pointwise_db), read_only=True)
    rows = con.execute(
        "SELECT run_id, item_id, juror_score FROM juror_pointwise WHERE criterion = 'relevance' "
        "AND run_id LIKE 'prompt-%' ORDER BY 1, 2"
    ).fetchall()
    jurors = con.execute(
        "SELECT count(DISTINCT c.juror_key) FROM calls c JOIN run_calls rc USING (call_key) WHERE rc.run_id LIKE 'prompt-%'"
    ).fetchone()
    con.close()
    assert rows == [("prompt-1", "i1", 4.0), ("prompt-1", "i2", 2.0), ("prompt-2", "i1", 1.0), ("prompt-2", "i2", 2.0)]
    assert jurors == (1,)  # one judge: a calibration fitted on one run applies to the other
    replaced = load(variant, "prompt-1", "--replace")
    assert replaced.exit_code == 0 and "1 replaced" in replaced.stdout  # type: ignore[attr-defined]
    con = connect(Path(pointwise_db), read_only=True)
    assert con.execute(
        "SELECT count(*) FROM juror_pointwise WHERE run_id = 'prompt-2' AND juror_score IS NOT NULL"
    ).fetchone() == (2,)
    con.close()
