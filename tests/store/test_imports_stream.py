"""Items import in chunks: any size in little memory, still all or nothing, same errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jurybench.errors import JurybenchError
from jurybench.store import import_items
from tests.conftest import write


def test_chunks_find_a_duplicate_across_chunks_and_write_nothing(
    con: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jurybench.store._imports as imports

    monkeypatch.setattr(imports, "IMPORT_CHUNK", 2)
    good = write(tmp_path / "good.csv", "item_id,response\n" + "".join(f"i{k},text {k}\n" for k in range(5)))
    assert str(import_items(con, good)) == "5 inserted, 0 already present"
    again = import_items(con, good)  # three chunks, each already present
    assert (again.inserted, again.unchanged) == (0, 5)
    # rows are numbered by line: i1 on line 3, again on line 6 (the third chunk)
    bad = write(tmp_path / "bad.csv", "item_id,response\nn0,a\nn1,b\nn2,c\nn3,d\nn1,e\n")
    with pytest.raises(JurybenchError, match=r"bad.csv row 6, field 'item_id': duplicate id 'n1' \(first at row 3\)"):
        import_items(con, bad)
    assert con.execute("SELECT count(*) FROM items WHERE item_id LIKE 'n%'").fetchall() == [(0,)]
    late = write(tmp_path / "late.csv", "item_id,response\nm0,a\nm1,b\n,c\n")  # an error in the last chunk
    with pytest.raises(JurybenchError, match=r"late.csv row 4, field 'item_id': missing value"):
        import_items(con, late)
    assert con.execute("SELECT count(*) FROM items WHERE item_id LIKE 'm%'").fetchall() == [(0,)]
    missing = write(tmp_path / "missing.csv", "item_id,text\nx,a\n")
    with pytest.raises(JurybenchError, match="missing column"):
        import_items(con, missing)


def test_checks_run_before_any_chunk_is_written_and_each_chunk_commits_alone(
    con: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every check (including a stored id with other content, found in the last chunk) runs on
    the staged file before the first write; then chunks are written in transactions of their
    own (one transaction held a 600k-row file in DuckDB's memory), so a write cut short is
    finished by importing again."""
    import jurybench.store._imports as imports

    monkeypatch.setattr(imports, "IMPORT_CHUNK", 2)
    import_items(con, write(tmp_path / "old.csv", "item_id,response\nz,stored\n"))
    clash = write(tmp_path / "clash.csv", "item_id,response\na,1\nb,2\nc,3\nz,other\n")
    with pytest.raises(JurybenchError, match=r"clash.csv row 5, field 'item_id': 'z' already exists"):
        import_items(con, clash)
    assert con.execute("SELECT count(*) FROM items").fetchall() == [(1,)]
    commits: list[int] = []
    real = imports.transaction

    def counting(c: Any) -> Any:
        commits.append(1)
        return real(c)

    monkeypatch.setattr(imports, "transaction", counting)
    good = write(tmp_path / "good.csv", "item_id,response,dataset\na,1,\nb,2,\nc,3,\nz,stored,renamed\n")
    assert str(import_items(con, good)) == "3 inserted, 0 already present, 1 updated (dataset)"
    assert len(commits) == 1 + 2  # the dataset update, then two chunks of two rows
    # A write cut short after the first chunk: importing again writes the rest.
    con.execute("DELETE FROM items WHERE item_id IN ('c')")
    assert str(import_items(con, good)) == "1 inserted, 3 already present"
    assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = '_jb_import'").fetchall() == [(0,)]


def test_every_row_is_written_up_to_the_last_line(con: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CSV's rows are numbered from line 2: the chunks written must reach the last line (the
    first chunked version stopped one short and lost the file's last row)."""
    import jurybench.store._imports as imports

    monkeypatch.setattr(imports, "IMPORT_CHUNK", 2)
    for n in (1, 2, 3, 4, 5):
        ids = [f"n{n}-{k}" for k in range(n)]
        done = import_items(con, write(tmp_path / f"{n}.csv", "item_id,response\n" + "".join(f"{i},t\n" for i in ids)))
        assert (done.inserted, done.unchanged) == (n, 0)
        stored = con.execute("SELECT item_id FROM items WHERE item_id LIKE ? ORDER BY 1", [f"n{n}-%"]).fetchall()
        assert [r[0] for r in stored] == ids
    jsonl = write(tmp_path / "j.jsonl", "".join(f'{{"item_id": "j{k}", "response": "t"}}\n' for k in range(3)))
    assert import_items(con, jsonl).inserted == 3
