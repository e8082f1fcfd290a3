"""A first try on a few subjects (issue 56, item 2): score --limit N judges a seeded random N of
what --where chooses (a pair whole, in both orders), says so in runs.selection, and a later full
run reuses those answers; generate --limit N and study run --limit N do the same for prompts and
for every score step."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

from tests.conftest import run_cli


def _example(tmp_path: Path) -> str:
    db = str(tmp_path / "t.duckdb")
    assert run_cli("datasets", "example", "--out", str(tmp_path / "example")).exit_code == 0
    assert (
        run_cli("items", "import", str(tmp_path / "example" / "items.csv"), "--dataset", "s", "--db", db).exit_code == 0
    )
    assert (
        run_cli("pairs", "import", str(tmp_path / "example" / "pairs.csv"), "--dataset", "s", "--db", db).exit_code == 0
    )
    return db


def test_a_first_try_then_the_full_run_reuses_it(tmp_path: Path) -> None:
    db = _example(tmp_path)
    first = run_cli(
        "score",
        "-r",
        "story-quality",
        "--where",
        "dataset = 's'",
        "--limit",
        "4",
        "--run",
        "try",
        "-j",
        "sim/a",
        "--no-progress",
        "--db",
        db,
    )
    assert first.exit_code == 0, first.stderr
    assert "4 judgments requested, 0 from cache, 4 called" in first.stdout
    full = run_cli(
        "score",
        "-r",
        "story-quality",
        "--where",
        "dataset = 's'",
        "--run",
        "all",
        "-j",
        "sim/a",
        "--no-progress",
        "--db",
        db,
    )
    assert "12 judgments requested, 4 from cache, 8 called" in full.stdout
    with duckdb.connect(db, read_only=True) as con:
        selection = con.execute("SELECT selection FROM runs WHERE run_id = 'try'").fetchall()[0][0]
        tried = {r[0] for r in con.execute("SELECT subject_id FROM run_subjects WHERE run_id = 'try'").fetchall()}
    assert selection == "dataset = 's'; a first try: 4 of 12 drawn at random (--limit-seed 0)"
    # the same seed draws the same subjects; another seed others
    again = run_cli(
        "score",
        "-r",
        "story-quality",
        "--where",
        "dataset = 's'",
        "--limit",
        "4",
        "--run",
        "try2",
        "-j",
        "sim/a",
        "--no-progress",
        "--db",
        db,
    )
    assert "4 from cache, 0 called" in again.stdout
    other = run_cli(
        "score",
        "-r",
        "story-quality",
        "--where",
        "dataset = 's'",
        "--limit",
        "4",
        "--limit-seed",
        "7",
        "--run",
        "try3",
        "-j",
        "sim/b",
        "--no-progress",
        "--db",
        db,
    )
    with duckdb.connect(db, read_only=True) as con:
        drawn = {r[0] for r in con.execute("SELECT subject_id FROM run_subjects WHERE run_id = 'try3'").fetchall()}
    assert other.exit_code == 0 and len(drawn) == 4 and drawn != tried


def test_pairs_stay_whole_and_bad_limits_are_one_line(tmp_path: Path) -> None:
    db = _example(tmp_path)
    done = run_cli(
        "score",
        "-r",
        "persuasion",
        "--where",
        "true",
        "--limit",
        "2",
        "--run",
        "p",
        "-j",
        "sim/a",
        "--no-progress",
        "--db",
        db,
    )
    assert done.exit_code == 0, done.stderr
    with duckdb.connect(db, read_only=True) as con:
        orders = con.execute(
            "SELECT subject_id, count(DISTINCT presented_order) FROM calls WHERE run_id = 'p' GROUP BY 1"
        ).fetchall()
    assert len(orders) == 2 and all(n == 2 for _, n in orders)  # two pairs, each in both orders
    for bad, said in (("0", "--limit"), ("x", "--limit")):
        out = run_cli("score", "-r", "persuasion", "--where", "true", "--limit", bad, "-j", "sim/a", "--db", db)
        assert out.exit_code == 2 and said in out.stderr and "Traceback" not in out.stderr
    until = run_cli(
        "score",
        "-r",
        "story-quality",
        "--where",
        "true",
        "--limit",
        "2",
        "--until",
        "ci_width(coherence)<0.5",
        "-j",
        "sim/a",
        "--db",
        db,
    )
    assert until.exit_code == 2 and "--limit and --until do not go together" in until.stderr


def test_generate_and_a_study_take_a_first_try(tmp_path: Path) -> None:
    copy = tmp_path / "gen"
    assert run_cli("demo", "persuasion", "--copy", str(copy)).exit_code == 0
    db = str(tmp_path / "g.duckdb")
    done = run_cli("generate", str(copy / "study.yaml"), "--limit", "2", "--no-progress", "--db", db)
    assert done.exit_code == 0, done.stderr
    with duckdb.connect(db, read_only=True) as con:
        prompts = con.execute("SELECT count(DISTINCT metadata->>'prompt_id') FROM items").fetchall()[0][0]
    assert prompts == 2
    study = run_cli("study", "run", str(copy / "study.yaml"), "--limit", "3", "--db", str(tmp_path / "s.duckdb"))
    assert study.exit_code == 0, study.stderr
    assert re.search(r"\$ jurybench score .*--limit 3", study.stdout)


def test_check_writes_junit_for_ci_reports(tmp_path: Path) -> None:
    """Issue 56: a check's verdict where CI systems already look: JUnit XML, one test case per
    criterion, the failed one carrying the check's reason; the exit code is the check's."""
    from xml.etree import ElementTree as ET

    db = _example(tmp_path)
    done = run_cli(
        "score",
        "-r",
        "story-quality",
        "--where",
        "dataset = 's'",
        "--run",
        "r",
        "-j",
        "sim/a",
        "--no-progress",
        "--db",
        db,
    )
    assert done.exit_code == 0
    out = run_cli(
        "check", "--run", "r", "--min", "coherence>=5", "--min", "relevance>=1", "--format", "junit", "--db", db
    )
    assert out.exit_code == 1
    suite = ET.fromstring(out.stdout.split("\n", 1)[1])
    assert suite.tag == "testsuite" and suite.get("tests") == "2" and suite.get("failures") == "1"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == {"coherence", "relevance"}
    failure = cases["coherence"].find("failure")
    assert failure is not None and failure.get("message", "").startswith("coherence: mean ")
    assert cases["relevance"].find("failure") is None
    means = {p.get("name"): p.get("value") for p in cases["relevance"].iter("property")}
    assert float(means["mean"]) >= 1 and means["n"] == "12"
    report = tmp_path / "check.xml"  # --junit FILE: the table printed, the same XML written
    beside = run_cli(
        "check", "--run", "r", "--min", "coherence>=5", "--min", "relevance>=1", "--junit", str(report), "--db", db
    )
    assert beside.exit_code == 1 and "FAIL" in beside.stdout
    assert report.read_text(encoding="utf-8").strip() == out.stdout.strip()
