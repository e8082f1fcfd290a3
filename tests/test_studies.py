"""Study files and the four shipped demos, run end to end through the CLI."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import duckdb
import pytest

from tests.conftest import run_cli, write


def _sql(db: Path, query: str) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def test_demo_persuasion_finds_the_planted_effect_for_one_writer_only(tmp_path: Path) -> None:
    out = run_cli("demo", "persuasion", "--out", str(tmp_path))
    assert out.exit_code == 0, out.stderr
    db = tmp_path / "persuasion.duckdb"
    rows = _sql(db, "SELECT result FROM stats_results WHERE name = 'directional'")
    groups = json.loads(str(rows[0][0]))["groups"]
    significant = {
        g: {c["category"] for c in v["categories"] if c["p_holm"] is not None and c["p_holm"] < 0.05}
        for g, v in groups.items()
    }
    assert significant["sim/writer-b"] == {"logos", "pathos", "communal"}
    assert significant["sim/writer-a"] == set()
    assert (tmp_path / "persuasion" / "directional.png").stat().st_size > 0
    assert (tmp_path / "persuasion" / "gap.png").stat().st_size > 0


def test_demo_emotion_counts_invalid_answers_and_reports_inequity(tmp_path: Path) -> None:
    out = run_cli("demo", "emotion", "--out", str(tmp_path))
    assert out.exit_code == 0, out.stderr
    db = tmp_path / "emotion.duckdb"
    invalid = dict(_sql(db, "SELECT juror, sum(invalid::INT) FROM classification_outcomes GROUP BY 1"))
    assert invalid["sim/clf-a"] == 0 and invalid["sim/clf-c"] > 0
    result = json.loads(str(_sql(db, "SELECT result FROM stats_results WHERE name = 'disparity'")[0][0]))
    assert set(result["models"]) == {"sim/clf-a", "sim/clf-b", "sim/clf-c"}
    assert result["models"]["sim/clf-a"]["gini"] > 0


def test_demo_inventory_anchors_facets_and_factors(tmp_path: Path) -> None:
    out = run_cli("demo", "inventory", "--out", str(tmp_path))
    assert out.exit_code == 0, out.stderr
    block = out.stdout[out.stdout.index("cell,effect") :].split("\n$ ")[0]  # the CSV, up to the next step
    rows = list(csv.DictReader(io.StringIO(block)))
    by = {(r["cell"], r["effect"]): r for r in rows}
    assert {cell for cell, _ in by} == {f"sim/obs-{m} / {lang}" for m in "ab" for lang in ("de", "en")}
    for lang in ("de", "en"):
        warmth = by[(f"sim/obs-a / {lang}", "facet:warmth")]
        assert float(warmth["d_avg"]) > 0.4  # the planted +1 point of warmth for women
    # Baselines: a language's own value where human-d.csv has one, else the one for every cell.
    assert float(by[("sim/obs-a / de", "facet:warmth")]["d_human"]) == 0.25
    assert float(by[("sim/obs-a / en", "facet:warmth")]["d_human"]) == 0.35
    assert {r["pattern"] for r in rows if r["pattern"]} <= {
        "concordance",
        "suppression",
        "amplification",
        "reorganization",
    }


def test_demo_culture_calibrates_and_ranks_the_models(tmp_path: Path) -> None:
    out = run_cli("demo", "culture", "--out", str(tmp_path))
    assert out.exit_code == 0, out.stderr
    db = tmp_path / "culture.duckdb"
    artifact = json.loads((tmp_path / "culture" / "calibration" / "culture.json").read_text())
    weights = {j["name"]: j for j in artifact["jurors"]}
    assert set(weights) == {"sim/steady", "sim/harsh", "sim/erratic"}
    assert _sql(db, "SELECT aggregation FROM jury_pointwise LIMIT 1") == [("calibrated",)]
    # the target: panel means between the scale's points, imported with --continuous
    ((n, continuous, fractional),) = _sql(
        db, "SELECT count(*), bool_and(continuous), count(*) FILTER (WHERE value <> round(value)) FROM human_labels"
    )
    assert n > 50 and continuous and fractional > 0
    friedman = json.loads(str(_sql(db, "SELECT result FROM stats_results WHERE name = 'friedman'")[0][0]))
    assert friedman["criteria"]["position"]["p"] < 0.01  # writer-high, -mid, -low were planted apart


def test_demo_copy_gives_a_study_a_user_can_run(tmp_path: Path) -> None:
    target = tmp_path / "mine"
    assert run_cli("demo", "emotion", "--copy", str(target)).exit_code == 0
    assert (target / "study.yaml").exists() and (target / "texts.csv").exists()
    again = run_cli("demo", "emotion", "--copy", str(target))
    assert again.exit_code == 2 and "not empty" in again.stderr
    ran = run_cli("study", "run", str(target / "study.yaml"), "--db", str(tmp_path / "s.duckdb"))
    assert ran.exit_code == 0, ran.stderr


def test_bad_study_files_say_which_step(tmp_path: Path) -> None:
    bad = write(tmp_path / "s.yaml", "name: x\nsteps:\n  - score: {rubric: persuasion}\n  - rm: {}\n")
    out = run_cli("study", "run", str(bad), "--db", str(tmp_path / "x.duckdb"))
    assert out.exit_code == 2 and "step 2: 'rm' is not a command a study can run" in out.stderr
    assert run_cli("demo", "nosuch").exit_code == 2


def test_generate_cli_bad_spec_is_one_line_exit_2_and_writes_nothing(tmp_path: Path) -> None:
    spec = write(
        tmp_path / "g.yaml", "name: g\nuser: 'Hi {colour}'\ntreatments: {x: {arms: [a, b]}}\nmodels: [fake/a]\n"
    )
    db = tmp_path / "g.duckdb"
    out = run_cli("generate", str(spec), "--db", str(db))
    assert out.exit_code == 2 and "field 'user'" in out.stderr and "{colour}" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and not db.exists()


def test_baselines_import_validates_and_feeds_the_ttest(tmp_path: Path) -> None:
    db = tmp_path / "b.duckdb"
    bad = write(tmp_path / "bad.csv", "target,value\nfactor:x,high\n")
    out = run_cli("baselines", "import", str(bad), "--name", "h", "--statistic", "d", "--db", str(db))
    assert out.exit_code == 2 and "bad.csv row 2, field 'value': 'high' is not a number" in out.stderr
    good = write(tmp_path / "good.csv", "target,cell,value,statistic\nfactor:x,de,0.3,d\nfactor:x,,0.1,d\n")
    assert run_cli("baselines", "import", str(good), "--name", "h", "--db", str(db)).exit_code == 0
    assert sorted(_sql(db, "SELECT cell, value FROM human_baselines")) == [("", 0.1), ("de", 0.3)]


@pytest.mark.parametrize("name", ["persuasion", "inventory", "culture", "emotion"])
def test_shipped_study_files_validate(name: str, tmp_path: Path) -> None:
    from jurybench.studies import load_steps, shipped_study

    study, steps = load_steps(shipped_study(name), tmp_path, tmp_path / "x.duckdb")
    assert study == name and steps and all("--db" in s.args for s in steps)


@pytest.mark.parametrize(
    ("step", "says"),
    [
        ("score: {rubric: story-quality, juror: ['sim/a,seed=abc']}", "seed must be a whole number"),
        ("score: {rubric: story-quality, juror: ['fake/a,temprature=0']}", "unknown parameter 'temprature'"),
        ("stats gap: {run: x, boot: -5}", "'--boot': -5 is below 0"),
        ("score: {rubric: story-quality, juror: ['fake/a'], concurrency: 0}", "'--concurrency': 0 is below 1"),
    ],
)
def test_a_bad_value_in_a_later_step_stops_the_study_before_step_one(tmp_path: Path, step: str, says: str) -> None:
    # These failed mid-study, after the steps before them had written (issue 27).
    items = write(tmp_path / "i.csv", "item_id,response\na,x\n")
    study = write(tmp_path / "s.yaml", f"name: x\nsteps:\n  - items import: {{_: '{items}'}}\n  - {step}\n")
    db = tmp_path / "x.duckdb"
    out = run_cli("study", "run", str(study), "--db", str(db))
    assert out.exit_code == 2 and "step 2" in out.stderr and says in out.stderr, out.stderr
    assert not db.exists()


@pytest.mark.parametrize("name", ["persuasion", "inventory", "culture", "emotion"])
def test_a_juror_with_no_valid_answer_is_named_by_every_statistic_and_plot(name: str, tmp_path: Path) -> None:
    """Each shipped study with a juror added whose every answer is invalid (as a real judge that
    never writes the rubric's format): every statistic names it beside its table (stderr beside
    CSV), every recorded result carries it for its plot, and nothing else reaches stderr."""
    target = tmp_path / name
    assert run_cli("demo", name, "--copy", str(target)).exit_code == 0
    db = tmp_path / "s.duckdb"
    ran = run_cli(
        "study",
        "run",
        str(target / "study.yaml"),
        "--add-juror",
        "sim/broken,invalid_rate=1.0,seed=7",
        "--db",
        str(db),
        "--out",
        str(tmp_path / "out"),
    )
    assert ran.exit_code == 0, ran.stderr
    steps = ran.stdout.split("\n$ jurybench ")[1:]
    stats = [s for s in steps if s.startswith("stats ")]
    assert stats
    notes = ran.stderr.splitlines()
    for step in stats:
        text = " ".join(step.split())
        if step.startswith("stats disparity"):  # over a query, not a run: its own row says it
            assert "sim/broken (no valid answers)" in text
        elif "--format csv" in step.splitlines()[0]:
            assert notes.pop(0).startswith("note: no valid answers from sim/broken in run")
        else:
            assert "no valid answers from sim/broken in run" in text, step[:400]
    assert notes == []
    recorded = _sql(db, "SELECT name, result FROM stats_results")
    for stat, body in recorded:
        result = json.loads(str(body))
        if stat == "disparity":
            assert result["models"]["sim/broken"]["no_valid_answers"] is True
        else:
            assert [e["juror"] for e in result["without_valid_answers"]] == ["sim/broken"], stat
    assert any(s.startswith("plot ") for s in steps)
