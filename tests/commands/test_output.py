"""What commands print into a pipe or a log: tables as wide as their values, numbers readable."""

from __future__ import annotations

import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

from jurybench.store._query import _fmt
from tests.conftest import ITEMS_CSV, write

QUERY = (
    "SELECT 'ChatGPT-0301-with-a-rather-long-name' AS juror, 'ChatGPT' AS other, 0.123456789 AS x, "
    "123456.123456789::DOUBLE AS big, 'a long text value for a column, long enough to be squeezed' AS t, "
    "'another column of text, also long enough to be folded' AS u"
)


def test_a_table_in_a_pipe_keeps_names_whole_and_numbers_on_one_line(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    env = {**os.environ, "COLUMNS": "80"}
    cli = [sys.executable, "-m", "jurybench.cli"]
    subprocess.run(
        [*cli, "items", "import", str(write(tmp_path / "i.csv", ITEMS_CSV)), "--db", str(db)],
        check=True,
        capture_output=True,
        env=env,
    )
    done = subprocess.run([*cli, "sql", QUERY, "--db", str(db)], capture_output=True, text=True, env=env, check=True)
    rows = [line for line in done.stdout.splitlines() if "ChatGPT" in line]
    assert len(rows) == 1, done.stdout  # one line per row: nothing folded
    for cell in (
        "ChatGPT-0301-with-a-rather-long-name",
        "ChatGPT",
        "0.1235",
        "123456.1",
        "a long text value for a column, long enough to be squeezed",
    ):
        assert cell in rows[0], rows[0]
    assert "…" not in done.stdout


def test_numbers_have_four_significant_digits_and_no_exponent_when_large() -> None:
    assert [_fmt(v) for v in (0.123456789, 2.0, 123456.123456789, 123456.0, 1.5e-7, 12.3456)] == [
        "0.1235",
        "2",
        "123456.1",
        "123456",
        "1.5e-07",
        "12.35",
    ]
    assert [_fmt(v) for v in (Decimal("0.123456789"), Decimal("42.000"), "text", None)] == [
        "0.1235",
        "42",
        "text",
        "None",
    ]
