"""report classification (issue 45, item 5): a classification run's answers as written, matched
only after normalisation, and invalid by why, read again with the rubric's own matching."""

from __future__ import annotations

import json
from pathlib import Path

from tests.annotations.conftest import classify_queued
from tests.conftest import run_cli, write


def test_answers_as_written_after_normalisation_and_invalid_by_why(tmp_path: Path) -> None:
    """Five queued answers: 'joy' (as written), '- Fear' (a list marker and a capital: only after
    normalisation), '1. sadness' (the same), 'nostalgia' (no label) and '' (empty)."""
    db = str(tmp_path / "cls.duckdb")
    items = write(
        tmp_path / "i.csv",
        "item_id,response,language\nt1,so happy,en\nt2,so scared,en\nt3,so sad,en\nt4,so wistful,en\nt5,hmm,en\n",
    )
    assert run_cli("items", "import", str(items), "--db", db).exit_code == 0
    classify_queued(db, "answers", "joy", "- Fear", "1. sadness", "nostalgia", "")
    out = run_cli("report", "classification", "--run", "c", "--format", "json", "--db", db)
    assert out.exit_code == 0, out.stderr
    (row,) = json.loads(out.stdout)
    assert row["answers"] == 5 and row["language"] == "en"
    assert (row["as_written"], row["normalised"], row["no_label"], row["empty"]) == (1, 2, 1, 1)
    table = run_cli("report", "classification", "--run", "c", "--db", db)
    assert table.exit_code == 0 and "normalised" in table.stdout
    refused = run_cli("report", "classification", "--run", "nope", "--db", db)
    assert refused.exit_code == 2
