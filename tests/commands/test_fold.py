"""Issue 86, item 1: a table never crops. In a terminal narrower than a table, the table wraps
text between words, keeps short values whole, and folds into blocks of columns (the key columns
repeated) or one record a block: every column name and every value is printed, every line fits
the terminal, and a header never breaks inside a word."""

from __future__ import annotations

import io
import re
import sys
from contextlib import redirect_stderr
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.stats.test_order import _files, _store, commands

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
BOX = re.compile("[\u2500-\u257f]")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _in_terminal(columns: int, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    """What a command prints into a terminal ``columns`` wide (in-process, as run_cli)."""
    from jurybench.cli import main

    monkeypatch.setenv("COLUMNS", str(columns))
    out, err = _Terminal(), io.StringIO()
    old_argv, old_stdout = sys.argv, sys.stdout
    sys.argv, sys.stdout = ["jurybench", *args], out
    code = 0
    try:
        with redirect_stderr(err):
            main()
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.argv, sys.stdout = old_argv, old_stdout
    assert code == 0, err.getvalue()
    return code, ANSI.sub("", out.getvalue())


# what differs between two runs of one command: a recorded result's id, a time
FRESH = re.compile(r"^[0-9a-f]{32}$|^\d{4}-\d\d-\d\d[T ]?|^\d\d:\d\d:\d\d")


def _words(text: str) -> set[str]:
    return {word for word in BOX.sub(" ", text).split() if not FRESH.match(word)}


def _table_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if BOX.search(line)]


def _folded(word: str, text: str) -> bool:
    """A word too long to keep whole (a hash, a URL) printed in pieces on consecutive lines."""
    lines = [BOX.sub(" ", line).split() for line in text.splitlines()]
    for start, tokens in enumerate(lines):
        for token in tokens:
            if len(token) >= 8 and word.startswith(token):
                rest, at = word[len(token) :], start + 1
                while rest and at < len(lines):
                    piece = next((t for t in lines[at] if rest.startswith(t) and len(t) >= min(8, len(rest))), None)
                    if piece is None:
                        break
                    rest, at = rest[len(piece) :], at + 1
                if not rest:
                    return True
    return False


def _check(wide: str, narrow: str, columns: int) -> None:
    from jurybench.commands._fold import LONGEST_WHOLE_WORD

    lost = {
        word for word in _words(wide) - _words(narrow) if len(word) <= LONGEST_WHOLE_WORD or not _folded(word, narrow)
    }
    assert not lost, (sorted(lost)[:20], narrow)
    too_long = [line for line in _table_lines(narrow) if len(line) > columns]
    assert not too_long, too_long[:3]


# --- the layout itself, on a table made here -------------------------------------------------


def _table(columns: int) -> Any:
    from rich.table import Table

    table = Table(title="ppi (qual)")
    names = ["criterion", "juror", "estimate", "ci_low", "ci_high", "human_estimate", "n_labelled", "method", "note"]
    for name in names[:columns]:
        table.add_column(name, overflow="fold")
    for row in range(3):
        values = [
            "coherence",
            f"fake/a,seed={row}",
            "3.142",
            "2.9",
            "3.4",
            "3.05",
            "24",
            "ppi++ clustered by prompt",
            "labels used once only; the rest of this note is long enough to wrap",
        ]
        table.add_row(*values[:columns])
    return table


def _render(table: Any, columns: int, monkeypatch: pytest.MonkeyPatch) -> str:
    from jurybench.commands._output import console

    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setattr(sys, "stdout", _Terminal())
    console().print(table)
    shown = ANSI.sub("", sys.stdout.getvalue())  # type: ignore[attr-defined]
    monkeypatch.undo()
    return shown


@pytest.mark.parametrize("columns", [40, 60, 80, 100])
def test_a_table_wider_than_the_terminal_is_folded_with_nothing_cut(
    columns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown = _render(_table(9), columns, monkeypatch)
    for name in (
        "criterion",
        "juror",
        "estimate",
        "ci_low",
        "ci_high",
        "human_estimate",
        "n_labelled",
        "method",
        "note",
    ):
        assert name in shown.split() or name in _words(shown), (name, shown)
    for value in ("fake/a,seed=0", "fake/a,seed=2", "3.142", "2.9", "3.4", "3.05", "24", "ppi++", "clustered"):
        assert value in _words(shown), (value, shown)
    assert all(len(line) <= columns for line in shown.splitlines()), shown
    # every block repeats the key column, so a value can be read against the row it belongs to
    blocks = re.findall(r"\(part (\d+) of (\d+)\)", shown)
    if blocks:
        assert shown.count("criterion") == len(blocks)


def test_a_header_breaks_between_words_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """'estim/ate' was printed for a header squeezed by its neighbours."""
    from rich.table import Table

    table = Table()
    for name in ("estimate", "interval low", "interval high", "clusters", "labelled items"):
        table.add_column(name)
    table.add_row("0.5", "0.25", "0.75", "12", "240")
    shown = _render(table, 44, monkeypatch)
    for word in ("estimate", "interval", "low", "high", "clusters", "labelled", "items"):
        assert word in _words(shown), (word, shown)


def test_a_table_that_fits_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = _render(_table(3), 100, monkeypatch)
    assert "part 1" not in shown
    assert len(_table_lines(shown)) == 7  # top, header, rule, 3 rows, bottom


def test_rows_too_wide_for_any_block_are_shown_one_record_a_block(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = _render(_table(9), 26, monkeypatch)
    assert "part 1" not in shown
    lines = [BOX.sub(" ", line).split() for line in shown.splitlines()]
    assert ["criterion", "coherence"] in lines
    assert ["estimate", "3.142"] in lines


# --- every built-in statistic's and report's table --------------------------------------------


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = _store(tmp_path_factory.mktemp("fold") / "s", False)
    _files(root)
    return root


def _commands(root: Path) -> dict[str, list[str]]:
    return commands(root) | {
        "report-preference": ["report", "preference", "--run", "pref"],
        "run_summary": ["sql", "SELECT * FROM run_summary ORDER BY run_id, juror"],
    }


@pytest.mark.parametrize("name", sorted(_commands(Path("."))))
def test_every_statistic_and_report_prints_every_column_and_value_at_80_and_100_columns(
    name: str, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command = [*_commands(store)[name], "--db", str(store / "s.duckdb")]
    wide = run_cli(*command)
    assert wide.exit_code == 0, wide.stderr
    assert _table_lines(wide.stdout), wide.stdout  # the command printed a table
    for columns in (80, 100):
        _code, narrow = _in_terminal(columns, monkeypatch, *command)
        _check(wide.stdout, narrow, columns)
