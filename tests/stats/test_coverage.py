"""The jury coverage every statistic reports, read one criterion at a time."""

from __future__ import annotations

from typing import Any

import pytest

from jurybench.jurors import JurorSpec
from jurybench.jury import Jury, register_jury
from jurybench.stats._slices import jury_coverage, run_dimensions


def _store(con: Any) -> None:
    """Two criteria (clarity, depth), jurors a and b, quorum 2, items i1 and i2.
    i1: both jurors valid on both criteria. i2: a valid on both, b invalid on both."""
    con.execute("INSERT INTO rubrics VALUES ('h', 'h', '1', 'pointwise', '{}', current_timestamp)")
    con.executemany("INSERT INTO rubric_dimensions VALUES ('h', ?, ?)", [("depth", 1), ("clarity", 0)])
    con.execute(
        "INSERT INTO runs (run_id, rubric_hash, mode, jurors, status) VALUES ('r', 'h', 'pointwise', '[]', 'finished')"
    )
    specs = (JurorSpec("fake/a"), JurorSpec("fake/b"))
    register_jury(con, "r", Jury(specs, aggregation="mean", quorum=2))
    for name, spec in zip("ab", specs, strict=True):
        con.execute("UPDATE run_jurors SET juror_key = ?, name = ? WHERE juror_key = ?", [name, name, spec.key])
    for item in ("i1", "i2"):
        for juror in "ab":
            key = f"{item}-{juror}"
            con.execute(
                "INSERT INTO calls (call_key, rubric_hash, juror_key, subject_kind, subject_id, sample_index, "
                "messages, status, attempts) VALUES (?, 'h', ?, 'item', ?, 0, '[]', 'ok', 1)",
                [key, juror, item],
            )
            con.execute("INSERT INTO run_calls VALUES ('r', ?)", [key])
            invalid = item == "i2" and juror == "b"
            for criterion in ("clarity", "depth"):
                con.execute(
                    "INSERT INTO pointwise_judgments (call_key, rubric_hash, juror_key, item_id, sample_index, "
                    "criterion, score, status) VALUES (?, 'h', ?, ?, 0, ?, ?, ?)",
                    [key, juror, item, criterion, None if invalid else 4, "invalid" if invalid else "valid"],
                )


def test_coverage_counts_a_subject_below_quorum_once_across_criteria(con: Any) -> None:
    _store(con)
    assert run_dimensions(con, "r") == ["clarity", "depth"]  # the rubric's order, not the insertion order
    got = jury_coverage(con, "r", "jury_pointwise")
    # Rows (item x criterion): i1 has 2 jurors present on each criterion, i2 has 1 -> (2+2+1+1)/4 = 1.5.
    # i2 is below quorum on both criteria but is one subject.
    assert got["n_subjects"] == 2
    assert got["subjects_below_quorum"] == 1
    assert got["mean_jurors_present"] == pytest.approx(1.5)
    assert got["quorum"] == 2


def test_coverage_of_a_run_without_rows(con: Any) -> None:
    _store(con)
    con.execute("DELETE FROM run_calls")
    got = jury_coverage(con, "r", "jury_pointwise")
    assert (got["n_subjects"], got["subjects_below_quorum"], got["mean_jurors_present"]) == (0, 0, None)
