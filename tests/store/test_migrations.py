"""m004_jury on a store written before it: rubric dimensions and a default jury per run are backfilled."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from jurybench.jurors import JurorSpec
from jurybench.rubric import load_rubric
from jurybench.store import migrate
from jurybench.store._migrations import MIGRATIONS


def _old_store(path: Path) -> duckdb.DuckDBPyConnection:
    """The schema as of m003, with one pointwise run of two jurors (a sampled twice)."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP DEFAULT current_timestamp)")
    for name, fn in MIGRATIONS[:3]:
        fn(con)
        con.execute("INSERT INTO migrations (name) VALUES (?)", [name])
    rubric = load_rubric("story-quality")
    a, b = JurorSpec("fake/a", name="A"), JurorSpec("fake/b")
    con.execute(
        "INSERT INTO rubrics (rubric_hash, name, version, kind, body) VALUES (?, ?, '1', 'pointwise', ?)",
        [rubric.content_hash, rubric.name, rubric.model_dump_json()],
    )
    con.executemany("INSERT INTO jurors VALUES (?, ?, ?, '{}')", [(a.key, "A", a.model), (b.key, b.model, b.model)])
    con.execute(
        "INSERT INTO runs (run_id, rubric_hash, mode, jurors, status) VALUES ('old', ?, 'pointwise', ?, 'finished')",
        [rubric.content_hash, json.dumps(sorted([a.key, b.key]))],
    )
    con.execute("INSERT INTO items (item_id, response) VALUES ('i1', 'text')")
    # a: relevance 4 and 2 (mean 3); b: relevance 5. Mean of juror means = 4.
    for key, juror, sample, value in (("k1", a, 0, 4), ("k2", a, 1, 2), ("k3", b, 0, 5)):
        con.execute(
            "INSERT INTO calls (call_key, rubric_hash, juror_key, subject_kind, subject_id, sample_index, messages, "
            "status, attempts) VALUES (?, ?, ?, 'item', 'i1', ?, '[]', 'ok', 1)",
            [key, rubric.content_hash, juror.key, sample],
        )
        con.execute("INSERT INTO run_calls VALUES ('old', ?)", [key])
        con.execute(
            "INSERT INTO pointwise_judgments (call_key, rubric_hash, juror_key, item_id, sample_index, criterion, "
            "score, status) VALUES (?, ?, ?, 'i1', ?, 'relevance', ?, 'valid')",
            [key, rubric.content_hash, juror.key, sample, value],
        )
    return con


def test_m004_backfills_dimensions_and_a_default_jury(tmp_path: Path) -> None:
    con = _old_store(tmp_path / "old.duckdb")
    assert migrate(con) == [
        "m004_jury",
        "m005_studies",
        "m006_service",
        "m007_calibrated_join",
        "m008_batches",
        "m009_juror_views_by_run",
        "m010_unindexed_growing_tables",
        "m011_judgments_from_anywhere",
        "m012_sequential_runs",
        "m013_label_notes",
        "m014_label_blindness",
        "m015_label_samples",
        "m016_saw_jury_by_cookie",
        "m017_anchor_sets",
        "m018_alignments",
        "m019_run_executor",
        "m020_conversations",
    ]
    assert [r[0] for r in con.execute("SELECT dimension FROM rubric_dimensions ORDER BY position").fetchall()] == (
        load_rubric("story-quality").dimensions
    )
    panel = con.execute("SELECT name, weight FROM run_jurors ORDER BY position").fetchall()
    assert sorted(panel) == [("A", 1.0), ("fake/b", 1.0)]
    row = con.execute(
        "SELECT aggregation, jury_score, n_jurors_present, n_jurors_expected FROM jury_pointwise "
        "WHERE criterion = 'relevance'"
    ).fetchall()
    assert row == [("mean", pytest.approx(4.0), 2, 2)]
    # Criteria nobody scored are there, with no jury score.
    assert con.execute("SELECT count(*) FROM jury_pointwise WHERE jury_score IS NULL").fetchall() == [(5,)]
    con.close()


def test_m005_keeps_old_calls_and_judgments_and_new_writes_name_their_columns(tmp_path: Path) -> None:
    con = _old_store(tmp_path / "old.duckdb")
    migrate(con)
    assert con.execute("SELECT count(*) FROM calls WHERE presentation IS NULL").fetchall() == [(3,)]
    assert con.execute("SELECT count(*) FROM pointwise_judgments WHERE label IS NULL").fetchall() == [(3,)]
    # calls gained a column after created_at: the engine's inserts must name columns, not rely on order.
    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror

    score(
        con, load_rubric("story-quality"), [parse_juror("fake/c")], run_id="new", options=EngineOptions(progress=False)
    )
    stamped = con.execute("SELECT count(*) FROM calls WHERE created_at IS NOT NULL AND run_id = 'new'").fetchall()
    assert stamped == [(1,)]
    con.close()


def test_m010_drops_the_growing_tables_keys_and_keeps_rows_not_null_and_comments(tmp_path: Path) -> None:
    con = _old_store(tmp_path / "old.duckdb")
    before = {
        t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall()
        for t in ("calls", "run_calls", "pointwise_judgments")
    }
    migrate(con)
    for table, rows in before.items():
        # m005 added columns to calls and judgments (NULL for old rows): compare the old columns.
        width = len(rows[0])
        assert [r[:width] for r in con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()] == rows
    kinds = con.execute(
        "SELECT table_name, constraint_type, constraint_column_names FROM duckdb_constraints() "
        "WHERE table_name IN ('items', 'pairs', 'calls', 'run_calls', 'pointwise_judgments', 'pairwise_judgments')"
    ).fetchall()
    assert not [k for k in kinds if k[1] in ("PRIMARY KEY", "UNIQUE")]
    not_null = {(t, c[0]) for t, kind, c in kinds if kind == "NOT NULL"}
    assert {
        ("items", "item_id"),
        ("pairs", "pair_id"),
        ("run_calls", "run_id"),
        ("run_calls", "call_key"),
        ("calls", "call_key"),
        ("pointwise_judgments", "criterion"),
        ("pairwise_judgments", "category"),
    } <= not_null
    assert con.execute("SELECT count(*) FROM duckdb_indexes()").fetchone() == (0,)
    comments = dict(
        con.execute(
            "SELECT column_name, comment FROM duckdb_columns() WHERE table_name = 'calls' AND comment IS NOT NULL"
        ).fetchall()
    )
    assert comments["call_key"].startswith("sha256")
    assert con.execute("SELECT comment FROM duckdb_tables() WHERE table_name = 'run_calls'").fetchone()[0]
    # The views over them still answer.
    assert con.execute("SELECT count(*) FROM jury_pointwise WHERE jury_score IS NOT NULL").fetchone() == (1,)
    con.close()


def test_views_are_defined_once_and_every_migration_names_the_views_it_changed(tmp_path: Path) -> None:
    """Issue 41: six views were defined twice (a later migration copied the SQL forward). Now each
    has one definition (store/_views.py), no migration holds view SQL, and a store migrated from
    m003 ends with the same views as a new one."""
    import inspect
    import re

    from jurybench.store import connect
    from jurybench.store._migrations import NAMED_VIEWS
    from jurybench.store._views import views

    defined = [name for name, _ in views()]
    assert len(defined) == len(set(defined)) == 19
    named = {view for names in NAMED_VIEWS.values() for view in names}
    assert named == set(defined)
    for name, fn in MIGRATIONS:
        source = inspect.getsource(inspect.getmodule(fn))  # type: ignore[arg-type]
        assert not re.search(r"CREATE (OR REPLACE )?VIEW|DROP VIEW", source), name

    def catalog(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
        rows = con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal").fetchall()
        return {name: " ".join(sql.split()) for name, sql in rows}

    old = _old_store(tmp_path / "old.duckdb")
    migrate(old)
    fresh = connect(tmp_path / "new.duckdb")
    try:
        assert catalog(old) == catalog(fresh) and sorted(catalog(fresh)) == sorted(defined)
        # the views read the old run: mean of juror means (a: 3, b: 5) = 4
        assert old.execute(
            "SELECT jury_score FROM jury_pointwise WHERE run_id = 'old' AND criterion = 'relevance'"
        ).fetchall() == [(4.0,)]
    finally:
        fresh.close()
        old.close()


def test_m016_names_the_cookie_in_saw_jurys_description(tmp_path: Path) -> None:
    """Issue 57: the column's description says the annotator may be the one the browser's signed
    cookie names (before, only the form's name and --show-jury)."""
    from jurybench.store import connect

    con = connect(tmp_path / "s.duckdb")
    try:
        (text,) = con.execute(
            "SELECT comment FROM duckdb_columns() WHERE table_name = 'human_labels' AND column_name = 'saw_jury'"
        ).fetchone()
    finally:
        con.close()
    assert "jurybench_annotator" in text and "serve --show-jury" in text
