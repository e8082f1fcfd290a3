"""One jury definition, one aggregation rule: every place that reports a jury figure agrees."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from jurybench.engine import EngineOptions, score
from jurybench.errors import JurybenchError
from jurybench.jurors import FakeBackend, parse_juror
from jurybench.jury import Jury, load_jury_file
from jurybench.rubric import load_rubric
from tests.conftest import FULL, ITEMS_CSV, run_cli, write

QUIET = EngineOptions(progress=False, retry_base_s=0.001, retry_max_s=0.001)
QUALITY = load_rubric("story-quality")


def _answer(relevance: int) -> str:
    return json.dumps({**FULL, "relevance": relevance})


def test_every_place_gives_the_mean_of_juror_means(small_store: Any) -> None:
    # Item i1: juror a answers 5, 5, 5 (three samples, mean 5); juror b answers 1 (mean 1).
    # Mean of juror means = (5 + 1) / 2 = 3.0; a sample-weighted mean would be (5+5+5+1)/4 = 4.0.
    FakeBackend.enqueue("a", *[_answer(5)] * 3)
    FakeBackend.enqueue("b", _answer(1))
    jurors = [parse_juror("fake/a,samples=3,concurrency=1"), parse_juror("fake/b")]
    score(small_store, QUALITY, jurors, where="item_id = 'i1'", run_id="r", options=QUIET)
    view = small_store.execute(
        "SELECT jury_score, n_jurors_present, n_jurors_expected FROM jury_pointwise WHERE criterion = 'relevance'"
    ).fetchall()
    assert view == [(3.0, 2, 2)]
    from jurybench.stats.sql import item_scores

    rows = item_scores(small_store, "r", where="criterion = 'relevance'", by="'all'")
    assert [r[-1] for r in rows] == [3.0]
    small_store.execute(
        "INSERT INTO human_labels (subject_kind, subject_id, criterion, annotator, value) VALUES "
        "('item', 'i1', 'relevance', 'h', 2)"
    )
    from jurybench.annotations._data import pointwise_data

    block = pointwise_data(small_store, "r", ["relevance"])[0]
    assert block.jury.tolist() == [3.0]
    assert block.juror_scores.tolist() == [[5.0, 1.0]]
    assert block.jury_summary()["n_jurors_expected"] == 2


def test_juror_level_statistics_use_each_jurors_mean(small_store: Any) -> None:
    FakeBackend.enqueue("a", *[_answer(5)] * 3)
    FakeBackend.enqueue("b", _answer(1))
    jurors = [parse_juror("fake/a,samples=3,concurrency=1"), parse_juror("fake/b")]
    score(small_store, QUALITY, jurors, where="item_id = 'i1'", run_id="r", options=QUIET)
    from jurybench.stats.sql import item_scores

    rows = item_scores(small_store, "r", where="criterion = 'relevance'", by=None, level="juror")
    assert sorted((r[0], r[-1]) for r in rows) == [("fake/a", 5.0), ("fake/b", 1.0)]


def test_a_juror_whose_calls_all_failed_stays_in_the_panel(tmp_path: Path, db_path: Path) -> None:
    assert run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS_CSV))).exit_code == 0
    result = run_cli(
        "score",
        "-r",
        "story-quality",
        "-j",
        "fake/ok",
        "-j",
        "fake/broken,error_rate=1,retries=0",
        "--quorum",
        "2",
        "--run",
        "r",
        "--no-progress",
    )
    assert result.exit_code == 3
    figures = run_cli(
        "sql",
        "SELECT DISTINCT n_jurors_expected, n_jurors_present, below_quorum, jury_score FROM jury_pointwise",
        "--format",
        "json",
    )
    assert json.loads(figures.stdout) == [
        {"n_jurors_expected": 2, "n_jurors_present": 1, "below_quorum": True, "jury_score": None}
    ]


def test_cli_aggregation_options_define_the_runs_jury(tmp_path: Path) -> None:
    assert run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS_CSV))).exit_code == 0
    args = [
        "score",
        "-r",
        "story-quality",
        "-j",
        "fake/a",
        "-j",
        "fake/b",
        "-j",
        "fake/c",
        "--run",
        "r",
        "--no-progress",
    ]
    assert run_cli(*args, "--aggregate", "median", "--quorum", "3").exit_code == 0
    check = "SELECT count(*) FILTER (WHERE jury_score = jury_median) = count(*) AS same, any_value(aggregation) AS a FROM jury_pointwise"
    assert json.loads(run_cli("sql", check, "--format", "json").stdout) == [{"same": True, "a": "median"}]
    # Re-defining the rule on the same run makes no call and changes the figures.
    again = run_cli(*args, "--aggregate", "mean")
    assert again.exit_code == 0 and "0 called" in again.stdout
    assert json.loads(run_cli("sql", check.replace("jury_median", "jury_mean"), "--format", "json").stdout) == [
        {"same": True, "a": "mean"}
    ]
    bad = run_cli(*args, "--aggregate", "majority")
    assert bad.exit_code == 2 and "majority' needs a pairwise or preference rubric" in bad.stderr
    assert run_cli(*args, "--quorum", "4").exit_code == 2


def test_weighted_jury_from_a_file(tmp_path: Path) -> None:
    assert run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS_CSV))).exit_code == 0
    jury = write(
        tmp_path / "jury.yaml", "aggregation: weighted\njurors:\n  - {model: fake/a, weight: 3}\n  - {model: fake/b}\n"
    )
    assert run_cli("score", "-r", "story-quality", "--jury", str(jury), "--run", "w", "--no-progress").exit_code == 0
    rows = json.loads(
        run_cli("sql", "SELECT item_id, criterion, juror, juror_score FROM juror_pointwise", "--format", "json").stdout
    )
    jury_rows = json.loads(
        run_cli("sql", "SELECT item_id, criterion, jury_score FROM jury_pointwise", "--format", "json").stdout
    )
    by = {(r["item_id"], r["criterion"], r["juror"]): r["juror_score"] for r in rows}
    for r in jury_rows:
        a, b = by[(r["item_id"], r["criterion"], "fake/a")], by[(r["item_id"], r["criterion"], "fake/b")]
        assert r["jury_score"] == pytest.approx((3 * a + 1 * b) / 4)


def test_jury_files_are_validated(tmp_path: Path) -> None:
    with pytest.raises(JurybenchError, match=r"line 1: unknown key 'aggregate'.*Valid: name, aggregation"):
        load_jury_file(write(tmp_path / "a.yaml", "aggregate: mean\njurors: [fake/a]\n"))
    with pytest.raises(JurybenchError, match="quorum must be a whole number"):
        load_jury_file(write(tmp_path / "b.yaml", "quorum: two\njurors: [fake/a]\n"))
    jury = load_jury_file(write(tmp_path / "c.yaml", "quorum: 3\njurors: [fake/a, fake/b]\n"))
    with pytest.raises(JurybenchError, match="quorum 3 is not between 1 and the 2 juror"):
        jury.resolved(QUALITY)
    with pytest.raises(JurybenchError, match="needs a calibration file"):
        Jury((parse_juror("fake/a"),), aggregation="calibrated").resolved(QUALITY)
    with pytest.raises(JurybenchError, match="tie rule 'coin' is not valid"):
        Jury((parse_juror("fake/a"),), tie="coin").resolved(load_rubric("preference"))
    assert Jury((parse_juror("fake/a"),)).resolved(load_rubric("preference")).aggregation == "majority"


def test_display_name_is_kept_per_run(tmp_path: Path) -> None:
    assert run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS_CSV))).exit_code == 0
    base = ["score", "-r", "story-quality", "--no-progress"]
    assert run_cli(*base, "-j", "fake/a,name=first", "--run", "r1").exit_code == 0
    assert run_cli(*base, "-j", "fake/a,name=second", "--run", "r2").exit_code == 0
    names = json.loads(
        run_cli("sql", "SELECT DISTINCT run_id, juror FROM run_summary ORDER BY 1", "--format", "json").stdout
    )
    assert names == [{"run_id": "r1", "juror": "first"}, {"run_id": "r2", "juror": "second"}]
    latest = json.loads(run_cli("sql", "SELECT name FROM jurors", "--format", "json").stdout)
    assert latest == [{"name": "second"}]


def test_calibrated_jury_scores_a_new_run(tmp_path: Path) -> None:
    from jurybench.calibration import fit_calibration
    from jurybench.store import connect
    from tests.calibration.test_fit import simulate

    con = connect()
    simulate(con, "sim")
    _, path = fit_calibration(con, "sim", criteria=["relevance"], methods=["ols"], n_boot=0, out_dir=tmp_path)
    # A new run with the same jurors (fake/j0..j2 as the simulation named them) scored by the engine.
    jury = Jury(
        tuple(parse_juror(f"fake/j{i},name=j{i}") for i in range(3)), aggregation="calibrated", calibration=str(path)
    )
    with pytest.raises(JurybenchError, match="has not been checked"):  # the engine applies only what it is given
        score(con, QUALITY, jury, where="item_id LIKE 'sim-p000-%' AND language = 'en'", run_id="cal", options=QUIET)
    import jurybench as jb

    jb.score(con, rubric=QUALITY, jury=jury, where="item_id LIKE 'sim-p000-%' AND language = 'en'", run="cal")
    rows = con.execute(
        "SELECT j.jury_score, c.score FROM jury_pointwise j JOIN calibrated_scores c ON c.run_id = j.run_id "
        "AND c.subject_id = j.item_id AND c.criterion = j.criterion WHERE j.run_id = 'cal'"
    ).fetchall()
    con.close()
    assert len(rows) == 2 and all(a == b for a, b in rows)  # 2 English items; only relevance was calibrated


def test_a_misspelt_aggregation_or_key_names_the_file_and_line(tmp_path: Path, db_path: Path) -> None:
    """Issue 40, item 7: 'meen' was refused without the file or the line."""
    run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS_CSV)), "--db", str(db_path))
    cases = [
        (
            "jurors:\n  - fake/a\n  - fake/b\naggregation: meen\n",
            "line 4, field 'aggregation': 'meen'",
            "Did you mean 'mean'?",
        ),
        (
            "name: j\njurors:\n  - fake/a\naggregaton: mean\n",
            "line 4: unknown key 'aggregaton'",
            "Did you mean 'aggregation'?",
        ),
    ]
    for text, says, hint in cases:
        path = write(tmp_path / "jury.yaml", text)
        out = run_cli("score", "-r", "story-quality", "--jury", str(path), "--no-progress", "--db", str(db_path))
        assert out.exit_code == 2 and f"{path} {says}" in out.stderr and hint in out.stderr, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
    from jurybench.store import connect

    assert connect(db_path, read_only=True).execute("SELECT count(*) FROM runs").fetchone() == (0,)


def test_a_calibrated_jurys_row_leaves_out_the_labels_its_calibration_was_fitted_on(tmp_path: Path) -> None:
    """Issue 82: a jury whose rule is a calibration, measured against the labels that fitted it,
    counts them twice. agreement's and stats bias's jury rows leave them out (and agreement says
    so); the jurors' own rows keep every label (their scores do not depend on the calibration)."""
    import jurybench as jb
    from jurybench.annotations import pointwise_data
    from jurybench.calibration import fit_calibration
    from jurybench.store import connect
    from tests.calibration.test_fit import simulate

    con = connect()
    simulate(con, "sim")
    _, path = fit_calibration(con, "sim", criteria=["relevance"], methods=["ols"], n_boot=0, out_dir=tmp_path)
    jury = Jury(
        tuple(parse_juror(f"fake/j{i},name=j{i}") for i in range(3)), aggregation="calibrated", calibration=str(path)
    )
    where = "item_id LIKE 'sim-p00%' AND language = 'en'"  # every one's labels fitted the calibration
    jb.score(con, rubric=QUALITY, jury=jury, where=where, run="cal")
    n = con.execute(f"SELECT count(*) FROM items WHERE {where}").fetchone()[0]
    (block,) = [b for b in pointwise_data(con, "cal") if b.criterion == "relevance"]
    assert n >= 10 and len(block.items) == n and bool(np.isnan(block.jury).all())  # the jury's row: none of them
    assert not np.isnan(block.juror_scores).all()  # the jurors' rows keep them
    assert block.left_out is not None and f"{n} labels fitted calibration" in block.left_out
    from jurybench.stats._bias import read_scores

    scores, _ = read_scores(con, "cal")
    assert ("jury", "relevance") not in scores and len(scores[("j0", "relevance")]) == n
    con.close()
