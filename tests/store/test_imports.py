from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jurybench.errors import JurybenchError
from jurybench.store import import_items, import_pairs
from tests.conftest import ITEMS_CSV, write


def _count(con: Any, table: str) -> int:
    return int(con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0])


def test_csv_import_keeps_treatment_and_metadata(con: Any, tmp_path: Path) -> None:
    path = write(
        tmp_path / "items.csv",
        ITEMS_CSV.replace("gender\n", "gender,extra\n").replace(",f\n", ",f,x\n", 1),
    )
    result = import_items(con, path, treatment_columns=["gender"], dataset="d")
    assert (result.inserted, result.unchanged) == (3, 0)
    row = con.execute("SELECT treatment, metadata, dataset, language FROM items WHERE item_id = 'i1'").fetchall()[0]
    assert json.loads(row[0]) == {"gender": "f"} and json.loads(row[1]) == {"extra": "x"}
    assert row[2:] == ("d", "en")


def test_reimport_is_idempotent_and_conflicts_are_refused(con: Any, tmp_path: Path) -> None:
    path = write(tmp_path / "items.csv", ITEMS_CSV)
    import_items(con, path)
    again = import_items(con, path)
    assert (again.inserted, again.unchanged) == (0, 3)
    changed = write(tmp_path / "changed.csv", ITEMS_CSV.replace("A dog ran.", "A dog slept."))
    with pytest.raises(JurybenchError, match=r"changed.csv row 3, field 'item_id': 'i2' already exists"):
        import_items(con, changed)


def test_jsonl_and_parquet(con: Any, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    jsonl = write(
        tmp_path / "a.jsonl",
        '{"item_id": "j1", "response": "r", "metadata": {"k": 1}}\n\n{"item_id": "j2", "response": "s"}\n',
    )
    assert import_items(con, jsonl).inserted == 2
    pq.write_table(pa.table({"item_id": ["p1"], "response": ["t"], "language": ["ko"]}), tmp_path / "b.parquet")
    assert import_items(con, tmp_path / "b.parquet").inserted == 1
    assert json.loads(con.execute("SELECT metadata FROM items WHERE item_id = 'j1'").fetchall()[0][0]) == {"k": 1}


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.csv", "item_id,prompt\ni1,p\n", r"missing.csv: missing column\(s\) response"),
        (
            "dup.csv",
            "item_id,response\na,x\nb,y\na,z\n",
            r"dup.csv row 4, field 'item_id': duplicate id 'a' \(first at row 2\)",
        ),
        (  # an empty CSV cell is an empty response (data); a JSON null is no response
            "null.jsonl",
            '{"item_id": "a", "response": "x"}\n{"item_id": "b", "response": null}\n',
            r"null.jsonl row 2, field 'response': missing value",
        ),
        (
            "bytes.csv",
            b"item_id,response\na,x\nb,caf\xe9\n",
            r"bytes.csv line 3: bytes that are not valid UTF-8",
        ),
        (
            "types.jsonl",
            '{"item_id": "a", "response": "x"}\n{"item_id": "b", "response": {"t": 1}}\n',
            r"types.jsonl row 2, field 'response': expected text, got dict",
        ),
        (
            "broken.jsonl",
            '{"item_id": "a", "response": "x"}\n{"item_id": \n',
            r"broken.jsonl line 2: not valid JSON",
        ),
        (
            "wide.csv",
            "item_id,response\na,x,extra\n",
            r"wide.csv line 2: more fields than the header has",
        ),
        ("data.txt", "x", r"data.txt: cannot tell the file format"),
    ],
)
def test_bad_item_files_write_nothing(con: Any, tmp_path: Path, name: str, content: str | bytes, message: str) -> None:
    path = write(tmp_path / name, content)
    with pytest.raises(JurybenchError, match=message):
        import_items(con, path)
    assert _count(con, "items") == 0


def test_pairs_need_known_items_and_are_transactional(con: Any, tmp_path: Path) -> None:
    import_items(con, write(tmp_path / "items.csv", ITEMS_CSV))
    bad = write(tmp_path / "pairs.csv", "pair_id,item_a,item_b\np1,i1,i2\np2,i1,zz\n")
    with pytest.raises(JurybenchError, match=r"pairs.csv row 3, field 'item_b': no item 'zz' in the store"):
        import_pairs(con, bad)
    assert _count(con, "pairs") == 0
    same = write(tmp_path / "same.csv", "pair_id,item_a,item_b\np1,i1,i1\n")
    with pytest.raises(JurybenchError, match="a pair needs two different items"):
        import_pairs(con, same)
    good = write(tmp_path / "good.csv", "pair_id,item_a,item_b\np1,i1,i2\n")
    assert import_pairs(con, good).inserted == 1


def test_unclosed_quote_is_rejected_with_its_row(con: Any, tmp_path: Path) -> None:
    # Row 3 (line 3) opens a quote that never closes: the rest of the file would become one response.
    text = 'item_id,response\ni1,fine\ni2,"never closed\ni3,third\ni4,fourth\n'
    with pytest.raises(JurybenchError, match=r"bad.csv line 3: a quoted field opened here never closes"):
        import_items(con, write(tmp_path / "bad.csv", text))
    stray = 'item_id,response\ni1,fine\ni2,"closed" too early\n'
    with pytest.raises(JurybenchError, match=r"stray.csv line 3: text after a closing quote"):
        import_items(con, write(tmp_path / "stray.csv", stray))
    assert _count(con, "items") == 0


def test_quoted_newlines_are_still_fine(con: Any, tmp_path: Path) -> None:
    text = 'item_id,response\ni1,"two\nlines, and ""quotes"""\ni2,x\n'
    assert import_items(con, write(tmp_path / "ok.csv", text)).inserted == 2
    assert con.execute("SELECT response FROM items WHERE item_id = 'i1'").fetchall() == [('two\nlines, and "quotes"',)]


def test_reimport_never_moves_items_to_another_dataset(con: Any, tmp_path: Path) -> None:
    """Issue 40, item 8: importing the same items under another --dataset moved them (runs and
    statistics select by dataset). A move is refused, nothing written; filling in a dataset the
    stored items lack is allowed and said."""
    from jurybench.errors import JurybenchError

    path = write(tmp_path / "items.csv", ITEMS_CSV)
    first = import_items(con, path)  # no dataset
    assert first.inserted == 3
    named = import_items(con, path, dataset="first")
    assert (named.inserted, named.unchanged, named.updated) == (0, 0, 3) and "3 updated (dataset)" in str(named)
    with pytest.raises(JurybenchError, match=r"item 'i1' is in dataset 'first'; this import would move it to 'second'"):
        import_items(con, path, dataset="second")
    assert con.execute("SELECT DISTINCT dataset FROM items").fetchall() == [("first",)]
    # Without --dataset the stored name stays (the file has no dataset column).
    assert import_items(con, path).unchanged == 3


def test_pairs_take_dataset_like_items(con: Any, tmp_path: Path) -> None:
    from jurybench.errors import JurybenchError

    import_items(con, write(tmp_path / "items.csv", ITEMS_CSV))
    pairs = write(tmp_path / "pairs.csv", "pair_id,item_a,item_b,topic\np1,i1,i2,t\n")
    import_pairs(con, pairs)
    row = con.execute("SELECT dataset, metadata FROM pairs").fetchall()[0]
    assert row[0] is None and json.loads(row[1]) == {"topic": "t"}
    assert import_pairs(con, pairs, dataset="flag").updated == 1
    assert con.execute("SELECT dataset FROM pairs").fetchall() == [("flag",)]
    with pytest.raises(JurybenchError, match="pair 'p1' is in dataset 'flag'"):
        import_pairs(con, pairs, dataset="other")


def test_infinity_in_an_extra_column_is_refused_and_nan_is_missing(tmp_path: Path) -> None:
    # Stored as {"big": Infinity}, which is not JSON any other reader accepts (issue 27).
    import json as _json

    from tests.conftest import run_cli, write

    db = tmp_path / "n.duckdb"
    bad = write(tmp_path / "inf.jsonl", '{"item_id": "a", "response": "x", "big": Infinity}\n')
    refused = run_cli("items", "import", str(bad), "--db", str(db))
    assert (
        refused.exit_code == 2 and "row 1, field 'big'" in refused.stderr and "JSON has no infinity" in refused.stderr
    )
    ok = write(tmp_path / "nan.jsonl", '{"item_id": "b", "response": "y", "score": NaN, "k": 1}\n')
    assert run_cli("items", "import", str(ok), "--db", str(db)).exit_code == 0
    out = run_cli("sql", "SELECT metadata FROM items", "--format", "json", "--db", str(db)).stdout
    assert _json.loads(_json.loads(out)[0]["metadata"]) == {"k": 1}


def test_empty_responses_are_data_and_null_is_not(con: Any, tmp_path: Path) -> None:
    """An empty CSV cell, "" in JSONL, white space and zero-width characters are empty responses
    (imported, flagged empty); a JSON null or a missing key is an error naming the row."""
    from jurybench.errors import JurybenchError
    from jurybench.store import import_items, is_blank
    from tests.conftest import write

    csv_file = write(tmp_path / "e.csv", "item_id,response\ne1,\ne2,   \ne3,\u200b\ne4,ok\n")
    import_items(con, csv_file)
    jsonl = write(
        tmp_path / "e.jsonl", '{"item_id": "e5", "response": ""}\n{"item_id": "e6", "response": "\\u2060 "}\n'
    )
    import_items(con, jsonl)
    rows = con.execute("SELECT item_id, response, empty FROM items ORDER BY 1").fetchall()
    assert rows == [
        ("e1", "", True),
        ("e2", "   ", True),
        ("e3", "\u200b", True),
        ("e4", "ok", False),
        ("e5", "", True),
        ("e6", "\u2060 ", True),
    ]
    assert [is_blank(r[1]) for r in rows] == [r[2] for r in rows]  # one rule in SQL and in Python
    for text, row in (
        ('{"item_id": "n1", "response": null}\n', 1),
        ('{"item_id": "n2"}\n{"item_id": "n3", "response": "x"}\n', 1),
    ):
        bad = write(tmp_path / f"n{row}{len(text)}.jsonl", text)
        with pytest.raises(JurybenchError, match=rf"row {row}, field 'response': missing value"):
            import_items(con, bad)
    assert con.execute("SELECT count(*) FROM items").fetchone() == (6,)
