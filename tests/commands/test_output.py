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


def _in_a_terminal(args: list[str], columns: int, env: dict[str, str]) -> str:
    """What a command prints into a terminal ``columns`` wide (a pseudo-terminal of that size)."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES")}
    done = subprocess.Popen(
        [sys.executable, "-m", "jurybench.cli", *args], stdout=follower, stderr=subprocess.PIPE, env=env
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the command ended and closed its side
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert done.wait() == 0, done.stderr.read() if done.stderr else ""
    os.close(leader)
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", b"".join(chunks).decode()).replace("\r\n", "\n")


def test_a_table_in_a_100_column_terminal_fits_it_and_cuts_nothing(tmp_path: Path) -> None:
    """Issue 56, item 6: in a 100-column terminal a table was truncated (``ChatGPT…``, ``0.427/0…``).
    Now it fits: long text wraps onto more lines, short values stay whole; ``--wide`` gives the
    whole rows back."""
    db = tmp_path / "s.duckdb"
    cli = [sys.executable, "-m", "jurybench.cli"]
    subprocess.run(
        [*cli, "items", "import", str(write(tmp_path / "i.csv", ITEMS_CSV)), "--db", str(db)],
        check=True,
        capture_output=True,
    )
    wide_query = QUERY + ", '0.427/0.512' AS ratio, 'ChatGPT-0301' AS again"
    shown = _in_a_terminal(["sql", wide_query, "--db", str(db)], 100, dict(os.environ))
    lines = shown.splitlines()
    assert lines and max(len(line) for line in lines) <= 100, shown
    assert "…" not in shown
    flat = " ".join(shown.split())
    for whole in ("0.1235", "123456.1", "0.427/0.512", "ChatGPT-0301", "ChatGPT"):
        assert whole in flat, (whole, shown)  # short values on one line, never cut
    wide = _in_a_terminal(["--wide", "sql", wide_query, "--db", str(db)], 100, dict(os.environ))
    assert any("ChatGPT-0301-with-a-rather-long-name" in line and "0.427/0.512" in line for line in wide.splitlines())
