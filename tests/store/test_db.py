from __future__ import annotations

from pathlib import Path

import pytest

from jurybench.errors import JurybenchError
from jurybench.store import MIGRATIONS, connect, pending_migrations
from tests.conftest import REPO


def test_migrations_are_recorded_once_in_order(db_path: Path) -> None:
    con = connect(db_path)
    names = [r[0] for r in con.execute("SELECT name FROM migrations ORDER BY name").fetchall()]
    assert names == [name for name, _ in MIGRATIONS] and names[0] == "m001_initial"
    con.close()
    again = connect(db_path)  # reopening applies nothing new
    assert pending_migrations(again) == []
    assert again.execute("SELECT count(*) FROM migrations").fetchall()[0][0] == len(MIGRATIONS)


def test_read_only_needs_an_existing_store(tmp_path: Path) -> None:
    with pytest.raises(JurybenchError, match="no judgment store at"):
        connect(tmp_path / "absent.duckdb", read_only=True)


def test_schema_doc_is_current() -> None:
    from jurybench.store._schema_doc import schema_markdown

    committed = (REPO / "docs" / "schema.md").read_text(encoding="utf-8")
    assert committed.strip() == schema_markdown().strip(), "run 'make schema-doc'"


def test_every_column_of_the_judgment_tables_is_documented() -> None:
    from jurybench.store._schema_doc import describe_schema

    for entry in describe_schema():
        assert entry["doc"], f"{entry['name']} has no description"
