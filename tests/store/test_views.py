"""The reporting views, on judgments written by hand."""

from __future__ import annotations

from typing import Any

import pytest


def _judge(con: Any, rows: list[tuple[Any, ...]]) -> None:
    con.executemany(
        "INSERT INTO pointwise_judgments (call_key, rubric_hash, juror_key, item_id, sample_index, criterion, score, status) "
        "VALUES (?, 'h', ?, 'i1', ?, 'clarity', ?, ?)",
        rows,
    )
    con.executemany("INSERT INTO run_calls VALUES ('r', ?)", [(r[0],) for r in rows])
    con.executemany("INSERT OR IGNORE INTO jurors VALUES (?, ?, 'fake/x', '{}')", [(r[1], r[1]) for r in rows])


def test_jury_pointwise_means_of_juror_means_excluding_invalid(con: Any) -> None:
    # juror a: samples 4 and 2 -> mean 3; juror b: 5 and an invalid sample -> mean 5;
    # juror c: refusal only -> no mean. Jury mean = (3 + 5) / 2 = 4, median 4, 2 of 3 jurors valid.
    _judge(
        con,
        [
            ("k1", "a", 0, 4, "valid"),
            ("k2", "a", 1, 2, "valid"),
            ("k3", "b", 0, 5, "valid"),
            ("k4", "b", 1, None, "invalid"),
            ("k5", "c", 0, None, "refusal"),
        ],
    )
    row = con.execute(
        "SELECT jury_mean, jury_median, n_jurors_valid, n_jurors, n_invalid, n_refusal FROM jury_pointwise"
    ).fetchall()[0]
    assert row == (pytest.approx(4.0), pytest.approx(4.0), 2, 3, 1, 1)


def test_symmetrized_needs_both_orders_valid(con: Any) -> None:
    con.executemany(
        "INSERT INTO pairwise_judgments (call_key, rubric_hash, juror_key, pair_id, presented_order, sample_index, category, score, status) "
        "VALUES (?, 'h', 'j', ?, ?, 0, 'logos', ?, ?)",
        [
            ("c1", "p1", "AB", 3, "valid"),
            ("c2", "p1", "BA", 1, "valid"),  # epsilon = (3 - 1) / 2 = 1
            ("c3", "p2", "AB", 2, "valid"),
            ("c4", "p2", "BA", None, "invalid"),  # excluded
            ("c5", "p3", "AB", -2, "valid"),  # BA missing
        ],
    )
    rows = con.execute("SELECT pair_id, epsilon, status FROM pairwise_symmetrized ORDER BY 1").fetchall()
    assert rows == [("p1", 1.0, "valid"), ("p2", None, "invalid"), ("p3", None, "missing_order")]


def test_jury_pairwise_averages_juror_epsilons(con: Any) -> None:
    # Juror j1: epsilon (2 - (-2)) / 2 = 2; juror j2: (1 - 1) / 2 = 0; juror j3: BA invalid.
    # Jury mean = (2 + 0) / 2 = 1 over 2 valid jurors, 1 excluded.
    rows = [
        ("a1", "j1", "AB", 2, "valid"), ("a2", "j1", "BA", -2, "valid"),
        ("b1", "j2", "AB", 1, "valid"), ("b2", "j2", "BA", 1, "valid"),
        ("c1", "j3", "AB", 1, "valid"), ("c2", "j3", "BA", None, "invalid"),
    ]  # fmt: skip
    con.executemany(
        "INSERT INTO pairwise_judgments (call_key, rubric_hash, juror_key, pair_id, presented_order, sample_index, category, score, status) "
        "VALUES (?, 'h', ?, 'p1', ?, 0, 'logos', ?, ?)",
        rows,
    )
    con.executemany("INSERT INTO run_calls VALUES ('r', ?)", [(r[0],) for r in rows])
    got = con.execute("SELECT jury_epsilon, n_jurors_valid, n_jurors, n_excluded FROM jury_pairwise").fetchall()
    assert got == [(1.0, 2, 3, 1)]
