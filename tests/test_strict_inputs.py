"""Inputs that used to half-run, drop data or pass unchecked: each now one line, exit 2, nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jurybench.errors import JurybenchError
from jurybench.imports import import_annotations
from jurybench.rubric import load_rubric, parse_rubric
from tests.conftest import ITEMS_CSV, REPO, run_cli, write


def _labels(con: Any) -> list[tuple[Any, ...]]:
    return con.execute(
        "SELECT subject_id, criterion, annotator, value, label FROM human_labels ORDER BY 1, 2, 3"
    ).fetchall()


# -- annotations -----------------------------------------------------------------------------
def test_a_wide_column_that_is_no_criterion_is_refused_not_dropped(small_store: Any, tmp_path: Path) -> None:
    wide = write(tmp_path / "wide.csv", "item_id,annotator,relevance,fluency\ni1,a,4,5\n")
    with pytest.raises(
        JurybenchError, match=r"wide.csv: column 'fluency' is not a criterion of rubric 'story-quality'"
    ):
        import_annotations(small_store, wide, load_rubric("story-quality"))
    assert _labels(small_store) == []


def test_a_fraction_on_a_whole_point_scale_is_refused(small_store: Any, tmp_path: Path) -> None:
    long = write(tmp_path / "l.csv", "item_id,annotator,criterion,value\ni1,a,relevance,4\ni2,a,relevance,3.5\n")
    with pytest.raises(JurybenchError, match=r"l.csv row 3, field 'value': 3.5 is not a whole number"):
        import_annotations(small_store, long, load_rubric("story-quality"))
    assert _labels(small_store) == []
    ok = write(tmp_path / "ok.csv", "item_id,annotator,criterion,value\ni1,a,relevance,4.0\n")
    assert import_annotations(small_store, ok, load_rubric("story-quality")).inserted == 1


def test_classification_labels_import_by_any_accepted_name(small_store: Any, tmp_path: Path) -> None:
    rubric = load_rubric("emotion-label")
    labels = write(tmp_path / "e.csv", "item_id,annotator,label\ni1,a,joy\ni2,a,Freude\ni3,a,happiness\ni1,b,Wut\n")
    assert import_annotations(small_store, labels, rubric).inserted == 4
    assert _labels(small_store) == [
        ("i1", "label", "a", None, "joy"),
        ("i1", "label", "b", None, "anger"),
        ("i2", "label", "a", None, "joy"),
        ("i3", "label", "a", None, "joy"),
    ]
    again = import_annotations(small_store, labels, rubric)
    assert (again.inserted, again.unchanged) == (0, 4)
    changed = write(tmp_path / "c.csv", "item_id,annotator,label\ni1,a,sadness\n")
    with pytest.raises(JurybenchError, match=r"already gave 'label' of 'i1' the value 'joy', not 'sadness'"):
        import_annotations(small_store, changed, rubric)
    bad = write(tmp_path / "b.csv", "item_id,annotator,label\ni1,c,nostalgia\n")
    with pytest.raises(JurybenchError, match=r"b.csv row 2, field 'label': 'nostalgia' is not a label"):
        import_annotations(small_store, bad, rubric)


# -- baselines -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("target,value\nwarmth,nan\n", "row 2, field 'value': 'nan' is not a finite number"),
        ("target,value\nwarmth,inf\n", "row 2, field 'value': 'inf' is not a finite number"),
        ("target,value\nwhat:ever,0.3\n", "row 2, field 'target': 'what:ever' is not a criterion"),
        ("target,value,source\nwarmth,0.3,paper\n", "column 'source' is not a baselines column"),
    ],
)
def test_bad_baselines_are_refused(tmp_path: Path, content: str, message: str) -> None:
    db = tmp_path / "b.duckdb"
    result = run_cli(
        "baselines",
        "import",
        str(write(tmp_path / "h.csv", content)),
        "--name",
        "h",
        "--statistic",
        "d",
        "--db",
        str(db),
    )
    assert result.exit_code == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    ok = run_cli(
        "baselines",
        "import",
        str(write(tmp_path / "g.csv", "target,value,statistic\nfacet:warmth,0.3,d\n")),
        "--name",
        "h",
        "--db",
        str(db),
    )
    assert ok.exit_code == 0, ok.stderr


# -- items -------------------------------------------------------------------------------------
@pytest.mark.parametrize("field", ["response", "prompt", "reference"])
def test_jsonl_text_that_is_a_number_is_refused(con: Any, tmp_path: Path, field: str) -> None:
    from jurybench.store import import_items

    row = {"item_id": 1, "response": "a story", field: 42}
    path = write(tmp_path / "i.jsonl", json.dumps(row) + "\n")
    with pytest.raises(JurybenchError, match=rf"i.jsonl row 1, field '{field}': expected text, got int"):
        import_items(con, path)
    assert con.execute("SELECT count(*) FROM items").fetchone() == (0,)


# -- rubrics -----------------------------------------------------------------------------------
def test_a_classification_alias_that_names_another_label_is_refused() -> None:
    text = (REPO / "rubrics" / "emotion-label.yaml").read_text(encoding="utf-8")
    clash = text.replace("aliases: {en: [happiness], es: [felicidad]}", "aliases: {en: [happiness, sadness]}", 1)
    assert clash != text
    with pytest.raises(
        JurybenchError,
        match=r"label 'sadness': name 'sadness' is also aliases.en of label 'joy' \(en\); an answer must name one label",
    ):
        parse_rubric(clash)


def test_an_inventory_placeholder_language_without_an_arm_is_refused(tmp_path: Path) -> None:
    text = (REPO / "rubrics" / "social-style.yaml").read_text(encoding="utf-8")
    data = __import__("yaml").safe_load(text)
    languages = sorted(data["placeholders"])
    arms = sorted(data["placeholders"][languages[0]])
    del data["placeholders"][languages[-1]][arms[-1]]
    path = write(tmp_path / "broken.yaml", __import__("yaml").safe_dump(data, allow_unicode=True))
    result = run_cli("rubrics", "check", str(path))
    assert result.exit_code == 2
    assert f"placeholders.{languages[-1]} has no arm '{arms[-1]}'" in result.stderr, result.stderr


# -- jurors --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("juror", "message"),
    [
        ("sim/a,seed=abc", "juror 'sim/a': seed must be a whole number (got 'abc')"),
        ("sim/a,truth_seed=1.5", "juror 'sim/a': truth_seed must be a whole number (got 1.5)"),
        ("fake/a,seed=x", "juror 'fake/a': seed must be a whole number"),
        ("fake/a,n=3", "juror 'fake/a': parameter 'n' is not supported by jurybench. Use samples=N."),
    ],
)
def test_bad_simulated_juror_parameters_stop_before_anything_runs(
    small_store: Any, db_path: Path, juror: str, message: str
) -> None:
    small_store.close()
    result = run_cli("score", "--rubric", "story-quality", "--juror", juror, "--db", str(db_path))
    assert result.exit_code == 2 and message in result.stderr, result.stderr


# -- statistics over a file in a fresh folder ----------------------------------------------------
def test_disparity_over_a_file_creates_the_store_it_records_into(tmp_path: Path) -> None:
    rows = ["grp,category,correct,invalid"] + [
        f"{g},c{k},{int((k + i) % 3 > 0)},0" for i, g in enumerate(["en", "de"]) for k in range(12)
    ]
    data = write(tmp_path / "d.csv", "\n".join(rows) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("JURYBENCH_")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "jurybench.cli",
            "stats",
            "disparity",
            "--file",
            str(data),
            "--boot",
            "50",
            "--format",
            "json",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["name"] == "disparity"
    assert (tmp_path / "jurybench.duckdb").exists()


# -- the preference report's table ----------------------------------------------------------------
def test_preference_table_has_one_header_per_value() -> None:
    from types import SimpleNamespace

    from jurybench.commands import preference_rows

    row = SimpleNamespace(juror="j", counts={"correct_ab": 1}, kappa={"kappa_ab": 0.5, "kappa_ba": 0.25})
    report = SimpleNamespace(n_pairs=2, jurors=[row], jury=SimpleNamespace(juror="jury", counts={}, kappa={}))
    columns, rows = preference_rows(report)
    assert all(len(r) == len(columns) for r in rows)
    assert rows[0][columns.index("kappa AB/BA")] == "0.500/0.250"
    assert rows[0][columns.index("correct AB")] == "1 (50.0%)"


def test_items_cli_still_imports_the_example(tmp_path: Path) -> None:
    result = run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS_CSV)), "--db", str(tmp_path / "x.duckdb"))
    assert result.exit_code == 0, result.stderr


# -- study files -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("      rubric: persuasion", "      rubrc: persuasion"), "step 2 ('score'): No such option: --rubrc"),
        (
            ("stats gap: {run: persuasion, by: model_a, boot: 1000}", "stats gap: {run: persuasion, boot: many}"),
            "step 5 ('stats gap'): Invalid value for '--boot'",
        ),
        (
            ("stats consistency: {run: persuasion}", "stats consistency: {}"),
            "step 6 ('stats consistency'): Missing option '--run'",
        ),
    ],
)
def test_a_study_is_checked_whole_before_its_first_step(tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    copy = tmp_path / "study"
    assert run_cli("demo", "persuasion", "--copy", str(copy)).exit_code == 0
    study = copy / "study.yaml"
    text = study.read_text(encoding="utf-8")
    assert edit[0] in text
    study.write_text(text.replace(edit[0], edit[1]), encoding="utf-8")
    db = tmp_path / "s.duckdb"
    result = run_cli("study", "run", str(study), "--db", str(db))
    assert result.exit_code == 2, result.stdout + result.stderr
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not db.exists() and result.stdout == ""  # nothing ran, nothing written


def test_a_baselines_file_without_a_statistic_column_is_refused(tmp_path: Path) -> None:
    # Read as effect sizes (d) by default before: a file of means was taken for d (issue 27).
    db = tmp_path / "b.duckdb"
    path = write(tmp_path / "h.csv", "target,value\nwarmth,3.2\n")
    refused = run_cli("baselines", "import", str(path), "--name", "h", "--db", str(db))
    assert refused.exit_code == 2 and "no 'statistic' column" in refused.stderr and "--statistic" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert (
        run_cli("baselines", "import", str(path), "--name", "h", "--statistic", "mean", "--db", str(db)).exit_code == 0
    )
