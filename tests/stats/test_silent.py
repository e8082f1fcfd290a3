"""A juror with no valid answer in a run is named, with its calls counted by outcome, beside
every statistic over the run: in the recorded result, the CLI's table (stderr for CSV), the
plots' captions and the viewer; and a run with no valid score at all says whose answers failed."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.conftest import run_cli, write

# 6 prompts x 3 models x 2 arms; pairs set each prompt's three models against each other.
ITEMS = "item_id,prompt,response,model,gender\n" + "".join(
    f"{m}-{p}-{g},prompt {p},Answer {p} by {m} for {g}.,{m},{g}\n"
    for p in range(6)
    for m in ("m1", "m2", "m3")
    for g in ("f", "m")
)
PAIRS = "pair_id,item_a,item_b\n" + "".join(
    f"p{p}-{g}-{a}{b},{a}-{p}-{g},{b}-{p}-{g}\n"
    for p in range(6)
    for g in ("f", "m")
    for a, b in (("m1", "m2"), ("m2", "m3"), ("m1", "m3"))
)
BROKEN = "sim/broken,invalid_rate=1.0,seed=7"
SHY = "sim/shy,refusal_rate=1.0,seed=8"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Runs 'qual' (pointwise) and 'pref' (preference) judged by a working juror, one whose every
    answer is invalid and one who refuses every call; 'pref-ok' by the working juror alone."""
    folder = tmp_path_factory.mktemp("silent")
    db = str(folder / "s.duckdb")
    steps = [
        ("items", "import", str(write(folder / "i.csv", ITEMS)), "--treatment", "gender"),
        ("pairs", "import", str(write(folder / "p.csv", PAIRS))),
        ("score", "-r", "story-quality", "--run", "qual", "-j", "sim/good,noise=0.5,seed=1", "-j", BROKEN, "-j", SHY),
        ("score", "-r", "preference", "--run", "pref", "-j", "sim/good,noise=0.5,seed=1", "-j", BROKEN, "-j", SHY),
        ("score", "-r", "preference", "--run", "pref-ok", "-j", "sim/good,noise=0.5,seed=1"),
        ("score", "-r", "story-quality", "--run", "dead", "-j", BROKEN, "-j", SHY),
    ]
    for step in steps:
        done = run_cli(*step, *(("--no-progress",) if step[0] == "score" else ()), "--db", db)
        assert done.exit_code == 0, done.stderr
    return folder


def _expected(run: str, calls_each: int) -> list[dict[str, Any]]:
    return [
        {"run": run, "juror": "sim/broken", "calls": calls_each, "invalid": calls_each, "refusal": 0, "error": 0},
        {"run": run, "juror": "sim/shy", "calls": calls_each, "invalid": 0, "refusal": calls_each, "error": 0},
    ]


# Every statistic over one run, with the arguments it needs here (ppi is below: it needs labels).
STATS = [
    ("qual", ["friedman", "--by", "model", "--block", "prompt"]),
    ("qual", ["ttest", "--by", "model", "--baseline", "3"]),
    ("qual", ["welch", "--by", "model", "--groups", "m1,m2"]),
    ("qual", ["mannwhitney", "--by", "model", "--groups", "m1,m2"]),
    ("qual", ["cohens-d", "--arm", "treatment->>'gender'", "--arms", "f,m", "--boot", "50"]),
    ("qual", ["item-spearman", "--arm", "treatment->>'gender'", "--arms", "f,m", "--by", "model"]),
    ("qual", ["power", "--arm", "treatment->>'gender'", "--arms", "f,m"]),
    ("qual", ["sequential", "--criterion", "relevance"]),
    ("pref", ["directional", "--by", "model_a"]),
    ("pref", ["gap", "--by", "model_a", "--boot", "50"]),
    ("pref", ["consistency"]),
    ("pref", ["leaderboard", "--boot", "50"]),
    ("pref", ["winrate", "--reference", "m1"]),
]


@pytest.mark.parametrize(("run", "args"), STATS, ids=[a[0] for _, a in STATS])
def test_every_statistic_names_the_jurors_without_a_valid_answer(store: Path, run: str, args: list[str]) -> None:
    db = str(store / "s.duckdb")
    name, options = args[0], args[1:]
    calls = 36 if run == "qual" else 36 * 2  # 36 items; 36 pairs judged in both orders
    shown = run_cli("stats", name, "--run", run, *options, "--format", "json", "--db", db)
    assert shown.exit_code == 0, shown.stderr
    assert json.loads(shown.stdout)["result"]["without_valid_answers"] == _expected(run, calls)
    table = run_cli("stats", name, "--run", run, *options, "--db", db)
    assert table.exit_code == 0, table.stderr
    note = (
        f"no valid answers from sim/broken in run {run} ({calls} calls: {calls} invalid, 0 refused); "
        f"sim/shy in run {run} ({calls} calls: 0 invalid, {calls} refused): they gave no score and are left out of every "
        "figure here."
    )
    assert note in " ".join(table.stdout.split()), table.stdout[-800:]
    assert not table.stderr


def test_csv_keeps_the_data_alone_on_stdout_and_the_note_on_stderr(store: Path) -> None:
    db = str(store / "s.duckdb")
    csv = run_cli("stats", "ttest", "--run", "qual", "--by", "model", "--baseline", "3", "--format", "csv", "--db", db)
    assert csv.exit_code == 0
    assert csv.stdout.splitlines()[0].startswith("criterion,group,") and "no valid answers" not in csv.stdout
    assert csv.stderr.startswith("note: no valid answers from sim/broken in run qual (36 calls: 36 invalid, 0 refused)")


def test_a_run_where_every_juror_answered_carries_no_note(store: Path) -> None:
    db = str(store / "s.duckdb")
    shown = run_cli("stats", "directional", "--run", "pref-ok", "--by", "model_a", "--format", "json", "--db", db)
    assert "without_valid_answers" not in json.loads(shown.stdout)["result"]
    assert "no valid answers" not in run_cli("stats", "directional", "--run", "pref-ok", "--db", db).stdout


def test_two_runs_are_named_apart(store: Path) -> None:
    db = str(store / "s.duckdb")
    shown = run_cli("stats", "robustness", "--run", "pref-ok", "--other-run", "pref", "--db", db)
    assert shown.exit_code == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert (
        "no valid answers from sim/broken in run pref (72 calls: 72 invalid, 0 refused); sim/shy in run pref "
        "(72 calls: 0 invalid, 72 refused): they gave no score" in text
    ), text


def test_a_run_with_no_valid_score_says_whose_answers_failed(store: Path) -> None:
    db = str(store / "s.duckdb")
    for args in (["ttest", "--baseline", "3"], ["friedman", "--block", "prompt"]):
        failed = run_cli("stats", *args, "--run", "dead", "--db", db)
        assert failed.exit_code == 2
        assert failed.stderr.strip().splitlines() == [
            "error: run 'dead' has no valid pointwise scores. No valid answers from sim/broken (36 calls: 36 "
            "invalid, 0 refused); sim/shy (36 calls: 0 invalid, 36 refused)."
        ]


def test_ppi_names_them_too(store: Path, tmp_path: Path) -> None:
    db = tmp_path / "ppi.duckdb"
    shutil.copy(store / "s.duckdb", db)
    drawn = run_cli("annotations", "sample", "--run", "qual", "--n", "12", "--seed", "2", "--db", str(db))
    assert drawn.exit_code == 0, drawn.stderr
    con = duckdb.connect(str(db))
    try:
        subjects = [r[0] for r in con.execute("SELECT subject_id FROM label_samples").fetchall()]
    finally:
        con.close()
    labels = "item_id,criterion,value,annotator\n" + "".join(
        f"{s},relevance,{1 + k % 5},h1\n" for k, s in enumerate(subjects)
    )
    done = run_cli(
        "annotations", "import", str(write(tmp_path / "l.csv", labels)), "-r", "story-quality", "--db", str(db)
    )
    assert done.exit_code == 0, done.stderr
    out = run_cli("stats", "ppi", "--run", "qual", "--criterion", "relevance", "--format", "json", "--db", str(db))
    assert out.exit_code == 0, out.stderr
    assert json.loads(out.stdout)["result"]["without_valid_answers"] == _expected("qual", 36)


def test_plots_and_the_viewer_say_it(store: Path) -> None:
    from fastapi.testclient import TestClient

    from jurybench.plots import svg
    from jurybench.viewer import create_viewer_app

    db = store / "s.duckdb"
    assert run_cli("stats", "gap", "--run", "pref", "--boot", "50", "--db", str(db)).exit_code == 0
    assert run_cli("stats", "consistency", "--run", "pref", "--db", str(db)).exit_code == 0
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT name, result_id, result FROM stats_results WHERE run_id = 'pref'").fetchall()
    finally:
        con.close()
    gap = next(json.loads(r) for n, _, r in rows if n == "gap")
    text = " ".join(re.sub(r"<[^>]+>", " ", svg("gap", gap)).split())
    assert "No valid answers from sim/broken in run pref (72 calls: 72 invalid, 0 refused)" in text
    consistency = next(i for n, i, _ in rows if n == "consistency")  # a statistic without a plot
    with TestClient(create_viewer_app(db)) as client:
        page = client.get(f"/stats/{consistency}").text
    assert '<p class="silent">no valid answers from sim/broken in run pref (72 calls: 72 invalid, 0 refused)' in page


def test_agreement_and_the_preference_report_name_them(store: Path, tmp_path: Path) -> None:
    """Against human labels, a juror without a valid answer gets '(no valid answers)' and dashes,
    not figures of nothing ('nan', or LLMBar's 'consistent' counting no verdict twice as agreement)."""
    db = str(tmp_path / "h.duckdb")
    shutil.copy(store / "s.duckdb", db)
    pairs = [line.split(",")[0] for line in PAIRS.splitlines()[1:]]
    prefs = "pair_id,preference,annotator\n" + "".join(f"{p},{'AB'[k % 2]},h1\n" for k, p in enumerate(pairs))
    items = [line.split(",")[0] for line in ITEMS.splitlines()[1:]]
    scores = "item_id,criterion,value,annotator\n" + "".join(
        f"{i},relevance,{1 + (k * 7 + h) % 5},h{h}\n" for k, i in enumerate(items) for h in (1, 2)
    )
    for file, rubric in (
        (write(tmp_path / "p.csv", prefs), "preference"),
        (write(tmp_path / "s.csv", scores), "story-quality"),
    ):
        done = run_cli("annotations", "import", str(file), "-r", rubric, "--db", db)
        assert done.exit_code == 0, done.stderr
    silent = {"sim/broken", "sim/shy"}
    for args in (
        ["agreement", "--run", "pref"],
        ["agreement", "--run", "qual"],
        ["report", "preference", "--run", "pref"],
    ):
        shown = run_cli(*args, "--format", "json", "--db", db)
        assert shown.exit_code == 0, shown.stderr
        body = json.loads(shown.stdout)
        blocks = body if isinstance(body, list) else [body]
        for block in blocks:
            flagged = {r["juror"] for r in block["jurors"] if r["no_valid_answers"]}
            assert flagged == silent, (args, flagged)
        table = run_cli(*args, "--db", db)
        assert table.exit_code == 0, table.stderr
        lines = [line for line in table.stdout.splitlines() if "sim/" in line]
        for name in silent:
            (line,) = [line for line in lines if f"{name} (no valid answers)" in line]
            assert "nan" not in line and ("%" not in line or args[0] == "report"), line
        assert "sim/good (no valid answers)" not in table.stdout
    page = tmp_path / "r.html"  # the viewer's agreement tables, as report html writes them
    assert run_cli("report", "html", "--run", "qual", "--run", "pref", "-o", str(page), "--db", db).exit_code == 0
    text = page.read_text()
    assert text.count("sim/broken (no valid answers)") == 2 and text.count("sim/shy (no valid answers)") == 2


def test_the_ci_gate_names_them_and_says_why_a_run_has_nothing_to_check(store: Path) -> None:
    db = str(store / "s.duckdb")
    gate = run_cli("check", "--run", "qual", "--min", "relevance>=1", "--db", db)
    assert gate.exit_code == 0, gate.stderr
    assert "no valid answers from sim/broken in run qual (36 calls: 36 invalid, 0 refused); sim/shy" in gate.stdout
    body = json.loads(run_cli("check", "--run", "qual", "--min", "relevance>=1", "-f", "json", "--db", db).stdout)
    assert body["without_valid_answers"] == _expected("qual", 36)
    dead = run_cli("check", "--run", "dead", "--min", "relevance>=1", "--db", db)
    assert dead.exit_code == 2
    assert dead.stderr.strip() == (
        "error: run 'dead' has no jury scores to check. No valid answers from sim/broken (36 calls: 36 invalid, "
        "0 refused); sim/shy (36 calls: 0 invalid, 36 refused)."
    )


def test_the_note_counts_every_outcome_by_hand() -> None:
    from jurybench.stats import no_valid_answers_note

    assert no_valid_answers_note({}) is None and no_valid_answers_note({"without_valid_answers": []}) is None
    entries = [
        {"run": "r", "juror": "a", "calls": 10, "invalid": 3, "refusal": 2, "error": 4},  # 1 answered, no valid score
        {"run": "r", "juror": "b", "calls": 0, "invalid": 0, "refusal": 0, "error": 0},
    ]
    assert no_valid_answers_note({"without_valid_answers": entries}) == (
        "no valid answers from a in run r (10 calls: 3 invalid, 2 refused, 4 in error, 1 without a valid score); "
        "b in run r (no calls in the run): they gave no score and are left out of every figure here."
    )
