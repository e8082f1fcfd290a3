"""stats drift: the judge's shift between two runs on their anchors, the headline change and the
rest, by hand and on simulated jurors whose leniency changed; check --max-drift as a CI gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from jurybench.stats._drift import agreement, anchors, parts
from tests.conftest import run_cli


def test_the_three_figures_by_hand() -> None:
    """Before: a 3, b 4 (prompt 1), c 2, e 2 (prompt 2); after: a 4, b 4 (prompt 1), d 5, f 3 (prompt
    2); anchors a and b. Shift (1 + 0) / 2 = 0.5; headline 4 - 2.75 = 1.25; rest 0.75. The shift's
    influence per prompt: u = ((1 - 0.5 * 2) / 2, 0) = (0, 0), so its interval is a point; the
    headline's: after (8 - 4 * 2) / 4 = 0 and (8 - 4 * 2) / 4 = 0, before (7 - 2.75 * 2) / 4 =
    0.375 and (4 - 5.5) / 4 = -0.375, so u = (-0.375, 0.375), V = 2 * 0.28125 = 0.5625, se 0.75,
    and t(0.975, 1) = 12.706 makes it 1.25 +- 9.53."""
    before = {"a": 3.0, "b": 4.0, "c": 2.0, "e": 2.0}
    after = {"a": 4.0, "b": 4.0, "d": 5.0, "f": 3.0}
    prompts = {"a": "p1", "b": "p1", "c": "p2", "e": "p2", "d": "p2", "f": "p2"}
    found = parts(before, after, [("a", "a"), ("b", "b")], prompts).intervals(0.95)
    shift, headline, rest = found["shift"], found["headline"], found["rest"]
    assert shift == (0.5, 0.5, 0.5, 0.0)
    assert headline[0] == 1.25 and headline[3] == pytest.approx(0.75)
    assert headline[2] - headline[0] == pytest.approx(12.7062 * 0.75, rel=1e-4)
    assert rest[0] == 0.75 and rest[3] == pytest.approx(0.75)
    assert agreement(before, after, [("a", "a"), ("b", "b")]) == {"exact": 0.5, "within_one": 1.0, "mae": 0.5}


def test_anchors_are_identical_content_under_any_id() -> None:
    before = {"x": ("p", "h1"), "y": ("p", "h2"), "y2": ("p", "h2")}
    after = {"x": ("p", "h1"), "z": ("p", "h2"), "w": ("p", "h3")}
    assert anchors(before, after) == [("x", "x"), ("y", "z")]  # z is y imported again


@pytest.fixture(scope="module")
def drifted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run A: sim/a and sim/b on 120 answers of a system (30 prompts). Run B, a month later:
    sim/a half a point more lenient, sim/b unchanged, on 60 of those answers (the anchors) and
    60 new answers of a better system (relevance 1 SD higher)."""
    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.rubric import load_rubric
    from jurybench.store import connect, import_items

    folder = tmp_path_factory.mktemp("drift")
    rows: list[dict[str, Any]] = [
        {"item_id": f"v1-{k:03d}", "prompt": f"p{k % 30}", "response": f"answer one {k}", "model": "sys"}
        for k in range(120)
    ]
    rows += [
        {
            "item_id": f"v2-{k:03d}",
            "prompt": f"p{k % 30}",
            "response": f"answer two {k}",
            "model": "sys",
            "metadata": {"true_relevance": 1.0},
        }
        for k in range(60)
    ]
    (folder / "items.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    db = folder / "s.duckdb"
    con = connect(db)
    import_items(con, folder / "items.jsonl")
    rubric, quiet = load_rubric("story-quality"), EngineOptions(progress=False)
    score(
        con,
        rubric,
        [parse_juror("sim/a,noise=0.5"), parse_juror("sim/b,noise=0.5")],
        run_id="A",
        where="item_id LIKE 'v1-%'",
        options=quiet,
    )
    later = [parse_juror("sim/a,noise=0.5,leniency=0.5,seed=3"), parse_juror("sim/b,noise=0.5,seed=3")]
    score(con, rubric, later, run_id="B", where="item_id < 'v1-060' OR item_id LIKE 'v2-%'", options=quiet)
    con.close()
    return db


def test_a_planted_leniency_change_is_the_judges_shift(drifted: Path) -> None:
    import jurybench as jb

    result = jb.stats.drift(drifted, "B", other_run="A").attrs["result"]
    rows = {(r["rater"], r["criterion"]): r for r in result["rows"]}
    assert result["n_anchors"] == 60 and result["from"] == "A" and result["to"] == "B"
    criteria = jb.load_rubric("story-quality").dimensions

    def mean(rater: str, key: str) -> float:
        return float(np.mean([rows[(rater, c)][key] for c in criteria]))

    # Half a point for sim/a (less after rounding and clipping), none for sim/b, their mean for
    # the jury: over the six criteria, and each criterion's own interval mostly covering it.
    assert 0.3 < mean("sim/a", "shift") < 0.6 and abs(mean("sim/b", "shift")) < 0.1
    assert 0.15 < mean("jury", "shift") < 0.3
    assert sum(rows[("sim/a", c)]["shift_significant"] for c in criteria) >= 5
    assert sum(rows[("jury", c)]["shift_low"] < 0.22 < rows[("jury", c)]["shift_high"] for c in criteria) >= 5
    for c in criteria:
        jury = rows[("jury", c)]
        assert jury["n_anchors"] == 60 and 0 <= jury["exact"] <= jury["within_one"] <= 1
        assert jury["rest"] == pytest.approx(jury["headline"] - jury["shift"])
    # The better system shows in the rest on relevance only.
    assert rows[("jury", "relevance")]["rest_low"] > 0.2
    assert rows[("jury", "coherence")]["rest_low"] < 0 < rows[("jury", "coherence")]["rest_high"]
    assert result["readings"][0].startswith("jury, relevance: the judge ")
    assert "the rest is the larger part" in result["readings"][0]


def test_no_shift_when_nothing_changed(drifted: Path) -> None:
    """The same jurors and seeds on the same items: every anchor's score is identical."""
    import jurybench as jb
    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.rubric import load_rubric
    from jurybench.store import connect

    con = connect(drifted)
    try:
        jurors = [parse_juror("sim/a,noise=0.5"), parse_juror("sim/b,noise=0.5")]
        score(
            con,
            load_rubric("story-quality"),
            jurors,
            run_id="A-again",
            where="item_id LIKE 'v1-%'",
            options=EngineOptions(progress=False),
        )
    finally:
        con.close()
    rows = jb.stats.drift(drifted, "A-again", other_run="A").attrs["result"]["rows"]
    assert all(r["shift"] == 0 and r["headline"] == 0 and r["exact"] == 1 for r in rows)


def test_check_max_drift_is_a_gate(drifted: Path) -> None:
    moved = run_cli(
        "check", "--run", "B", "--baseline-run", "A", "--max-drift", "0.1", "--max-drop", "5", "--db", str(drifted)
    )
    assert moved.exit_code == 1, moved.stdout + moved.stderr
    assert "the judge moved +0." in moved.stdout and "on 60 shared subjects (more than 0.1" in moved.stdout
    calm = run_cli(
        "check", "--run", "B", "--baseline-run", "A", "--max-drift", "0.8", "--max-drop", "5", "--db", str(drifted)
    )
    assert calm.exit_code == 0 and "judge drift +0." in calm.stdout
    alone = run_cli("check", "--run", "B", "--max-drift", "0.5", "--db", str(drifted))
    assert alone.exit_code == 2 and alone.stderr.startswith("error: --max-drift needs --baseline-run")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--to", "A", "--from", "A"], "error: --from and --to are both 'A'"),
        (["--to", "B", "--from", "nosuch"], "error: no run 'nosuch'."),
        (["--to", "B", "--from", "other-rubric"], "error: runs 'other-rubric' and 'B' used different rubrics"),
        (["--to", "B", "--from", "elsewhere"], "error: runs 'elsewhere' and 'B' share no subject"),
        (["--to", "B", "--from", "A", "--alpha", "1.5"], "error: --alpha must be at least 1e-10 and less than 1"),
    ],
)
def test_bad_input_is_one_line(drifted: Path, tmp_path: Path, args: list[str], message: str) -> None:
    import shutil

    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.rubric import load_rubric
    from jurybench.store import connect, import_items

    db = tmp_path / "copy.duckdb"
    shutil.copy(drifted, db)
    con = connect(db)
    try:
        (tmp_path / "more.jsonl").write_text(json.dumps({"item_id": "new-1", "prompt": "q", "response": "r"}) + "\n")
        import_items(con, tmp_path / "more.jsonl")
        quiet = EngineOptions(progress=False)
        score(
            con, load_rubric("story-quality"), [parse_juror("sim/a")], run_id="elsewhere", ids=["new-1"], options=quiet
        )
        score(
            con,
            load_rubric("single-grade"),
            [parse_juror("sim/a")],
            run_id="other-rubric",
            ids=["v1-000"],
            options=quiet,
        )
    finally:
        con.close()
    out = run_cli("stats", "drift", *args, "--db", str(db))
    assert out.exit_code == 2, out.stdout
    assert out.stderr.startswith(message) and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_drift_over_http_is_what_python_gives(drifted: Path, tmp_path: Path) -> None:
    import shutil

    import jurybench as jb
    from tests.service.conftest import make_client

    db = tmp_path / "copy.duckdb"
    shutil.copy(drifted, db)
    with make_client(db) as client:
        r = client.post("/v1/stats/drift", json={"run": "B", "other_run": "A", "alpha": 0.1})
        assert r.status_code == 200, r.json()
        assert client.post("/v1/stats/drift", json={"run": "B", "other_run": "B"}).status_code == 400
    python = jb.stats.drift(db, "B", other_run="A", alpha=0.1).attrs["result"]
    assert r.json()["result"]["rows"] == json.loads(json.dumps(python["rows"]))


def test_anchors_fixed_once_are_judged_again_and_measured(drifted: Path, tmp_path: Path) -> None:
    """anchors add fixes 20 of run A's subjects (seeded); a later run of new answers judges them
    again with --anchors; stats drift then finds exactly those 20 anchors. Refusals are one line."""
    import shutil

    import jurybench as jb

    db = tmp_path / "copy.duckdb"
    shutil.copy(drifted, db)
    added = run_cli("anchors", "add", "--run", "A", "--n", "20", "--seed", "1", "--db", str(db))
    assert added.exit_code == 0 and added.stdout.startswith("anchor set A-anchors: 20 of 120 subjects of run A")
    with jb.open(db) as store:
        fixed = store.sql("SELECT subject_id FROM anchor_sets WHERE name = 'A-anchors' ORDER BY 1")["subject_id"]
        again = store.add_anchors("A", n=20, seed=1, name="same-draw")["subjects"]
    assert list(fixed) == again  # the seed fixes the draw
    scored = run_cli(
        "score",
        "--rubric",
        "story-quality",
        "--juror",
        "sim/a,noise=0.5,leniency=1,seed=9",
        "--where",
        "item_id LIKE 'v2-%'",
        "--anchors",
        "A-anchors",
        "--run",
        "C",
        "--no-progress",
        "--db",
        str(db),
    )
    assert scored.exit_code == 0 and "run C: 80 judgments requested" in scored.stdout  # 60 new + 20 anchors
    result = jb.stats.drift(db, "C", other_run="A").attrs["result"]
    assert result["n_anchors"] == 20 and {r["rater"] for r in result["rows"]} == {"sim/a", "jury"}
    only = run_cli(
        "score",
        "--rubric",
        "story-quality",
        "--juror",
        "sim/a",
        "--anchors",
        "A-anchors",
        "--run",
        "D",
        "--no-progress",
        "--db",
        str(db),
    )
    assert "run D: 20 judgments requested" in only.stdout  # the anchors alone
    for args, message in [
        (["anchors", "add", "--run", "A", "--n", "5"], "error: an anchor set 'A-anchors' exists already."),
        (["anchors", "add", "--run", "A", "--n", "500", "--name", "x"], "error: --n 500: run 'A' has 120 subjects"),
        (["anchors", "add", "--run", "A", "--n", "0", "--name", "x"], "error: --n must be at least 1 (got 0)."),
        (["score", "--rubric", "story-quality", "--juror", "sim/a", "--anchors", "nosuch"], "error: no anchor set"),
    ]:
        out = run_cli(*args, "--db", str(db))
        assert out.exit_code == 2 and message in out.stderr, (args, out.stderr)


def test_anchors_over_http(drifted: Path, tmp_path: Path) -> None:
    import shutil

    from tests.service.conftest import make_client

    db = tmp_path / "copy.duckdb"
    shutil.copy(drifted, db)
    with make_client(db) as client:
        r = client.post("/v1/anchors", json={"run": "A", "n": 10, "seed": 2, "name": "weekly"})
        assert r.status_code == 201 and r.json()["n_drawn"] == 10 and len(r.json()["subjects"]) == 10
        assert client.post("/v1/anchors", json={"run": "A", "n": 10, "name": "weekly"}).status_code == 400
        assert client.post("/v1/anchors", json={"run": "A", "n": 0}).status_code == 422
        plan = client.post(
            "/v1/plan", json={"rubric": "story-quality", "jury": {"jurors": ["sim/c"]}, "anchors": "weekly"}
        )
        assert plan.status_code == 200 and plan.json()["n_calls"] == 10, plan.json()  # the anchors, judged again


def test_a_pairwise_run_drifts_on_its_anchor_pairs(tmp_path: Path) -> None:
    """A preference run judged twice: the later judge rewards length (3 points per 1,000
    characters) and every pair's A is the longer response, so on the 80 anchor pairs the verdicts
    move toward A; the verdicts' kappa between the runs says how many changed."""
    import jurybench as jb
    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.rubric import load_rubric
    from jurybench.store import connect, import_items, import_pairs

    items = []
    for k in range(80):
        items.append({"item_id": f"a{k}", "prompt": f"p{k // 2}", "response": "long " * 300 + str(k), "model": "m"})
        items.append({"item_id": f"b{k}", "prompt": f"p{k // 2}", "response": "short " + str(k), "model": "m"})
    (tmp_path / "items.jsonl").write_text("\n".join(json.dumps(i) for i in items) + "\n")
    (tmp_path / "pairs.csv").write_text("pair_id,item_a,item_b\n" + "".join(f"q{k},a{k},b{k}\n" for k in range(80)))
    db = tmp_path / "s.duckdb"
    con = connect(db)
    try:
        import_items(con, tmp_path / "items.jsonl")
        import_pairs(con, tmp_path / "pairs.csv")
        quiet, rubric = EngineOptions(progress=False), load_rubric("preference")
        score(con, rubric, [parse_juror("sim/j")], run_id="P1", options=quiet)
        score(con, rubric, [parse_juror("sim/j,verbosity_bias=3")], run_id="P2", options=quiet)
    finally:
        con.close()
    result = jb.stats.drift(db, "P2", other_run="P1").attrs["result"]
    jury = next(r for r in result["rows"] if r["rater"] == "jury")
    assert result["kind"] == "pairwise" and jury["n_anchors"] == 80
    assert jury["shift_low"] > 0.2 and jury["rest"] == 0 and jury["kappa"] < 0.8
    table = run_cli("stats", "drift", "--from", "P1", "--to", "P2", "--db", str(db))
    assert table.exit_code == 0 and "kappa" in table.stdout


def test_a_classification_run_drifts_in_accuracy_and_labels(tmp_path: Path) -> None:
    """A labeller judged twice on the same 120 texts with gold labels: 0.9 accurate, then 0.6;
    on the anchors its accuracy moves by about -0.3 and its labels agree less than fully."""
    import jurybench as jb
    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.rubric import load_rubric
    from jurybench.store import connect, import_items

    rows = ["item_id,prompt,response,language,reference"]
    rows += [f"e{k},q{k // 3},text {k},en,{'joy' if k % 3 else 'fear'}" for k in range(120)]
    (tmp_path / "texts.csv").write_text("\n".join(rows) + "\n")
    db = tmp_path / "s.duckdb"
    con = connect(db)
    try:
        import_items(con, tmp_path / "texts.csv")
        quiet, rubric = EngineOptions(progress=False), load_rubric("emotion-label")
        score(con, rubric, [parse_juror("sim/clf,accuracy=0.9")], run_id="E1", options=quiet)
        score(con, rubric, [parse_juror("sim/clf,accuracy=0.6,seed=2")], run_id="E2", options=quiet)
    finally:
        con.close()
    result = jb.stats.drift(db, "E2", other_run="E1").attrs["result"]
    (row,) = result["rows"]
    assert result["kind"] == "classification" and row["rater"] == "sim/clf" and row["n_anchors"] == 120
    assert -0.45 < row["shift"] < -0.15 and row["shift_high"] < 0 and row["rest"] == 0 and row["kappa"] < 0.7
    assert result["readings"][0].startswith("sim/clf: the same label on ")
    table = run_cli("stats", "drift", "--from", "E1", "--to", "E2", "--db", str(db))
    assert table.exit_code == 0 and "kappa" in table.stdout


def test_a_shift_with_no_spread_over_a_few_prompts_is_not_shown_as_certain() -> None:
    """Issue 82: six anchors (six prompts), each scored exactly half a point higher, printed
    '+0.50 [0.50, 0.50]' and 'the judge moved'. Now the interval is empty (no spread) and the
    shift is judged by the sign test over the anchor prompts: all 6 moved up, p = 2 * 0.5^6 =
    0.03125 (<= 0.05, so it moved), and a warning says 6 prompts are fewer than 10. With 4
    prompts, p = 0.125: not beyond chance."""
    from jurybench.stats._drift import few_anchor_prompts, figure_fields, reading

    def row_for(n: int) -> dict[str, object]:
        before = {f"a{k}": 3.0 for k in range(n)}
        after = {f"a{k}": 3.5 for k in range(n)}
        prompts = {f"a{k}": f"p{k}" for k in range(n)}
        p = parts(before, after, [(f"a{k}", f"a{k}") for k in range(n)], prompts)
        row: dict[str, object] = {"rater": "jury", "criterion": "relevance", "n_anchors": n}
        row |= figure_fields(p, 0.05, None) | agreement(before, after, [(f"a{k}", f"a{k}") for k in range(n)])
        return row | {"n_before": n, "n_after": n}

    six = row_for(6)
    assert six["shift"] == 0.5 and six["shift_low"] is None and six["shift_high"] is None
    assert six["p_sign"] == pytest.approx(0.03125) and six["shift_significant"] is True
    text = reading(six)
    assert "+0.50 (no spread: no interval)" in text and "sign test p = 0.031" in text and "[0.50, 0.50]" not in text
    assert "6 prompt(s), fewer than 10" in (few_anchor_prompts(six) or "")
    four = row_for(4)
    assert four["p_sign"] == pytest.approx(0.125) and four["shift_significant"] is False
    assert "did not move beyond chance" in reading(four)
    assert few_anchor_prompts(row_for(10)) is None
