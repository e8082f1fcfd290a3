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
    late = write(tmp_path / "late.csv", "item_id,response\nm0,a\nm1,b\nm2,\n")  # an error in the last chunk
    with pytest.raises(JurybenchError, match=r"late.csv row 4, field 'response': missing value"):
        import_items(con, late)
    assert con.execute("SELECT count(*) FROM items WHERE item_id LIKE 'm%'").fetchall() == [(0,)]
    missing = write(tmp_path / "missing.csv", "item_id,text\nx,a\n")
    with pytest.raises(JurybenchError, match="missing column"):
        import_items(con, missing)
