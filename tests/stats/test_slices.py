"""stats friedman reads a big run a slice of its subjects at a time (flat memory): the sliced
answer is the whole-run answer, to the last digit, whatever is in the store beside the run."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from jurybench.stats import _pointwise, _slices
from jurybench.store import connect
from tests.conftest import run_cli, write

# the module of the friedman statistic (the package's 'friedman' is the statistic itself)
FRIEDMAN = importlib.import_module("jurybench.stats.builtin.friedman")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """12 prompts x 4 models x 2 genders. Run 'qual': two jurors and a third that fails a third
    of its calls (error rows, subjects below the quorum of 3). Run 'other' judges the same
    items with one of the same jurors and the same rubric, so its rows share the run's
    rubric and juror keys and must not leak into the run's figures."""
    items = ["item_id,prompt,response,model,gender"]
    for p in range(12):
        for m in ("m1", "m2", "m3", "m4"):
            for g in ("f", "m"):
                items.append(f"p{p}-{m}-{g},Prompt {p},Reply {p} {m} {g},{m},{g}")
    assert (
        run_cli(
            "items", "import", str(write(tmp_path / "i.csv", "\n".join(items) + "\n")), "--treatment", "gender"
        ).exit_code
        == 0
    )
    jury = write(tmp_path / "jury.yaml", "jurors: [fake/a, fake/b, 'fake/c,error_rate=0.3,retries=0']\nquorum: 3\n")
    r = run_cli("score", "-r", "story-quality", "--jury", str(jury), "--run", "qual", "--no-progress")
    assert r.exit_code in (0, 3), r.stderr
    r = run_cli(
        "score", "-r", "story-quality", "-j", "fake/a", "--run", "other", "--where", "model <> 'm4'", "--no-progress"
    )
    assert r.exit_code == 0, r.stderr
    return tmp_path


def _friedman(db: Path, slice_rows: int, monkeypatch: Any, **kwargs: Any) -> tuple[int, str]:
    monkeypatch.setattr(_slices, "SLICE_ROWS", slice_rows)
    con = connect(db / "test.duckdb", read_only=True)
    try:
        parts = _slices.slices_of(con, "qual", 6)
        result = FRIEDMAN.friedman.compute(con, "qual", **kwargs)
        left = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_catalog = 'temp'").fetchall()[0][
            0
        ]
        views = con.execute("SELECT count(*) FROM duckdb_views() WHERE temporary AND NOT internal").fetchall()[0][0]
        assert (left, views) == (0, 0)  # the slices' tables and views are gone
    finally:
        con.close()
    return parts, json.dumps(result, sort_keys=True, default=str)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"level": "juror"},
        {"by": "model", "block": "prompt || '/' || (treatment->>'gender')", "where": "model <> 'm2' OR prompt < 'P'"},
    ],
)
def test_sliced_friedman_equals_the_whole_run(store: Path, monkeypatch: Any, kwargs: dict[str, Any]) -> None:
    whole_parts, whole = _friedman(store, 10**9, monkeypatch, **kwargs)
    sliced_parts, sliced = _friedman(store, 100, monkeypatch, **kwargs)
    assert (whole_parts, sliced_parts) == (1, 96 * 3 * 6 // 100 + 1)  # 96 items x 3 jurors x 6 criteria
    assert sliced == whole
    coverage = json.loads(whole)["jury"]
    assert coverage["n_subjects"] == 96 and coverage["subjects_below_quorum"] > 0  # fake/c's errors count


def test_coverage_is_the_same_in_slices(store: Path, monkeypatch: Any) -> None:
    con = connect(store / "test.duckdb", read_only=True)
    try:
        whole = _slices.jury_coverage(con, "qual", "jury_pointwise")
        monkeypatch.setattr(_slices, "SLICE_ROWS", 50)
        assert _slices.jury_coverage(con, "qual", "jury_pointwise") == whole
    finally:
        con.close()


def test_the_cli_path_reads_under_the_cap_and_falls_back_when_it_is_too_small(store: Path, monkeypatch: Any) -> None:
    """A store by path is read with DuckDB held to JURYBENCH_DUCKDB_MEMORY on one thread;
    should a slice not fit, the statistic is computed again under DuckDB's own limit."""
    from jurybench.stats import friedman

    _, whole = _friedman(store, 10**9, monkeypatch)
    monkeypatch.setattr(_slices, "SLICE_ROWS", 100)
    seen: list[tuple[str, str]] = []
    real = FRIEDMAN.friedman.compute

    too_small = [False]

    def watched(con: Any, **kwargs: Any) -> dict[str, Any]:
        import duckdb

        seen.append(con.execute("SELECT current_setting('memory_limit'), current_setting('threads')").fetchall()[0])
        if too_small[0] and len(seen) == 1:  # as DuckDB says when a slice does not fit the cap
            raise duckdb.OutOfMemoryException("Out of Memory Error: could not allocate block")
        return real(con, **kwargs)

    monkeypatch.setattr(FRIEDMAN.friedman, "compute", watched)
    monkeypatch.setenv("JURYBENCH_DUCKDB_MEMORY", "64MB")
    db = str(store / "test.duckdb")
    for small, tries in ((False, 1), (True, 2)):
        too_small[0] = small
        seen.clear()
        result = friedman(db, "qual").attrs["result"]
        # every recorded statistic says which scores and which design it rests on
        assert (result.pop("scores"), result.pop("orders")) == ("discrete", "both")
        assert json.dumps(result, sort_keys=True, default=str) == whole
        assert len(seen) == tries
        assert seen[0] == (shown("64MB"), 1)
        if tries == 2:  # the second try: DuckDB's own limit and threads
            assert seen[1][0] == shown(None)


def shown(limit: str | None) -> str:
    """memory_limit as DuckDB shows it for a connection opened with ``limit``."""
    import duckdb

    with duckdb.connect(config={"memory_limit": limit} if limit else {}) as con:
        return str(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])


def test_the_server_computes_the_sliced_statistic_on_its_locked_connection(store: Path, monkeypatch: Any) -> None:
    """The server's connection is hardened (configuration locked, no file access) and its
    statistics run in a transaction that is rolled back: the slices' temporary tables work
    there too, and nothing of them is left."""
    from tests.service.conftest import make_client

    _, whole = _friedman(store, 10**9, monkeypatch)
    monkeypatch.setattr(_slices, "SLICE_ROWS", 100)
    with make_client(store / "test.duckdb") as client:
        answer = client.post("/v1/stats/friedman", json={"run": "qual"})
        assert answer.status_code == 200, answer.text
        served = answer.json()["result"]
        assert (served.pop("scores"), served.pop("orders")) == ("discrete", "both")
        assert json.dumps(served, sort_keys=True, default=str) == whole
        left = client.post(
            "/v1/sql", json={"query": "SELECT count(*) FROM information_schema.tables WHERE table_catalog = 'temp'"}
        )
        assert left.json()["rows"] == [[0]]


def test_the_cell_sums_hold_one_row_per_cell_however_many_slices(store: Path, monkeypatch: Any) -> None:
    """A block's subjects fall in many slices; the (criterion, block, group) sums are folded
    after each slice, so they hold one row per cell, not one per cell and slice (which grew
    with the run times its blocks). A cell is a criterion x prompt x model with at least one
    jury score (fake/c's errors leave some below quorum): counted here from the view itself."""
    con = connect(store / "test.duckdb", read_only=True)
    cells = con.execute(
        "SELECT count(*) FROM (SELECT DISTINCT v.criterion, i.prompt, i.model FROM jury_pointwise v "
        "JOIN items i USING (item_id) WHERE v.run_id = 'qual' AND v.jury_score IS NOT NULL)"
    ).fetchall()[0][0]
    seen: list[int] = []
    real = _pointwise.friedman_posthoc

    def counted(matrix: Any, models: list[str]) -> Any:
        seen.append(con.execute("SELECT count(*) FROM temp.main._jb_cells").fetchall()[0][0])
        return real(matrix, models)

    monkeypatch.setattr(_pointwise, "friedman_posthoc", counted)
    monkeypatch.setattr(_slices, "SLICE_ROWS", 100)
    try:
        assert _slices.slices_of(con, "qual", 6) == 18
        FRIEDMAN.friedman.compute(con, "qual")
    finally:
        con.close()
    assert 200 < cells <= 6 * 12 * 4
    assert seen == [cells] * 6


def test_coverage_in_slices_keeps_no_subject_ids(store: Path, monkeypatch: Any) -> None:
    """Subjects below quorum are counted per slice (a subject falls in one slice) instead of
    gathered into a set that grows with the run; the count is the whole run's."""
    con = connect(store / "test.duckdb", read_only=True)
    try:
        whole = _slices.Coverage(con, "qual", "jury_pointwise")
        whole.add(con, whole=True)
        monkeypatch.setattr(_slices, "SLICE_ROWS", 50)
        sliced = _slices.Coverage(con, "qual", "jury_pointwise")
        parts = _slices.slices_of(con, "qual", 6)
        with _slices.run_slices(con, "qual", parts) as only:
            for part in range(parts):
                with only(part):
                    sliced.add(con, whole=False)
    finally:
        con.close()
    assert parts > 1 and sliced.below == set()
    assert sliced.below_in_slices == len(whole.below) > 0
