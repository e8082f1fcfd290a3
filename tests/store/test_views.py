"""The reporting views, on judgments written by hand: one jury rule, expected vs present jurors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jurybench.jurors import JurorSpec
from jurybench.jury import Jury, register_jury


def _run(con: Any, run_id: str, kind: str, dims: list[str], jurors: list[str], **jury: Any) -> None:
    """A run of a hand-made rubric 'h' with jurors named by their keys, and its jury."""
    con.execute("INSERT OR IGNORE INTO rubrics VALUES ('h', 'h', '1', ?, '{}', current_timestamp)", [kind])
    con.executemany("INSERT OR IGNORE INTO rubric_dimensions VALUES ('h', ?, ?)", [(d, i) for i, d in enumerate(dims)])
    mode = "pointwise" if kind == "pointwise" else "pairwise"
    con.execute(
        "INSERT INTO runs (run_id, rubric_hash, mode, jurors, status) VALUES (?, 'h', ?, '[]', 'finished')",
        [run_id, mode],
    )
    specs = tuple(JurorSpec(f"fake/{k}", options={"weight": jury.pop(f"weight_{k}", 1.0)}) for k in jurors)
    definition = Jury(specs, **{**jury, "aggregation": jury.get("aggregation", "mean")})
    register_jury(con, run_id, definition)
    # The views key jurors by juror_key: use the spec keys for the hand-written rows.
    for k, spec in zip(jurors, specs, strict=True):
        con.execute(
            "UPDATE run_jurors SET juror_key = ?, name = ? WHERE run_id = ? AND juror_key = ?", [k, k, run_id, spec.key]
        )


def _call(con: Any, run_id: str, key: str, juror: str, subject: str, kind: str, status: str = "ok") -> None:
    con.execute(
        "INSERT INTO calls (call_key, rubric_hash, juror_key, subject_kind, subject_id, sample_index, messages, status, "
        "attempts) VALUES (?, 'h', ?, ?, ?, 0, '[]', ?, 1)",
        [key, juror, kind, subject, status],
    )
    con.execute("INSERT INTO run_calls VALUES (?, ?)", [run_id, key])


def _judge(con: Any, run_id: str, rows: list[tuple[Any, ...]]) -> None:
    for key, juror, sample, score, status in rows:
        _call(con, run_id, key, juror, "i1", "item")
        con.execute(
            "INSERT INTO pointwise_judgments (call_key, rubric_hash, juror_key, item_id, sample_index, criterion, "
            "score, status) VALUES (?, 'h', ?, 'i1', ?, 'clarity', ?, ?)",
            [key, juror, sample, score, status],
        )


POINTWISE = [
    ("k1", "a", 0, 4, "valid"),
    ("k2", "a", 1, 2, "valid"),
    ("k3", "b", 0, 5, "valid"),
    ("k4", "b", 1, None, "invalid"),
    ("k5", "c", 0, None, "refusal"),
]


def test_jury_pointwise_mean_of_juror_means_excluding_invalid(con: Any) -> None:
    # juror a: samples 4 and 2 -> mean 3; juror b: 5 and an invalid sample -> 5; juror c: refusal only.
    # Jury mean = (3 + 5) / 2 = 4 (not the sample-weighted (4 + 2 + 5) / 3 = 3.67); 2 of 3 present.
    _run(con, "r", "pointwise", ["clarity"], ["a", "b", "c"])
    _judge(con, "r", POINTWISE)
    row = con.execute(
        "SELECT jury_score, jury_mean, jury_median, n_jurors_present, n_jurors_expected, below_quorum, n_invalid, "
        "n_refusal FROM jury_pointwise"
    ).fetchall()[0]
    assert row == (pytest.approx(4.0), pytest.approx(4.0), pytest.approx(4.0), 2, 3, False, 1, 1)


def test_a_juror_whose_calls_errored_is_still_expected(con: Any) -> None:
    # Juror d's only call ended in error: no judgment rows, but it stays in the panel.
    _run(con, "r", "pointwise", ["clarity"], ["a", "d"], quorum=2)
    _judge(con, "r", POINTWISE[:2])
    _call(con, "r", "k9", "d", "i1", "item", status="error")
    got = con.execute(
        "SELECT jury_score, n_jurors_present, n_jurors_expected, below_quorum, n_error FROM jury_pointwise"
    ).fetchall()
    assert got == [(None, 1, 2, True, 1)]  # quorum 2 not met: no jury score
    jurors = con.execute("SELECT juror, juror_score, n_error FROM juror_pointwise ORDER BY juror").fetchall()
    assert jurors == [("a", 3.0, 0), ("d", None, 1)]


def test_median_and_weighted_rules(con: Any) -> None:
    # Juror means a = 3, b = 5 (c refused). Median of (3, 5) = 4; weighted with a = 3, b = 1:
    # (3 * 3 + 1 * 5) / (3 + 1) = 14 / 4 = 3.5 (c's weight does not count: it has no score).
    _run(con, "med", "pointwise", ["clarity"], ["a", "b", "c"], aggregation="median")
    _judge(con, "med", POINTWISE)
    assert con.execute("SELECT jury_score FROM jury_pointwise").fetchall() == [(4.0,)]
    con.execute("DELETE FROM run_calls")
    con.execute("DELETE FROM calls")
    con.execute("DELETE FROM pointwise_judgments")
    _run(con, "w", "pointwise", ["clarity"], ["a", "b", "c"], aggregation="weighted", weight_a=3.0, weight_c=5.0)
    _judge(con, "w", POINTWISE)
    assert con.execute("SELECT jury_score FROM jury_pointwise WHERE run_id = 'w'").fetchall() == [(3.5,)]


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


def _pairwise(con: Any, run_id: str, rows: list[tuple[Any, ...]], jurors: list[str], **jury: Any) -> None:
    _run(con, run_id, "pairwise", ["logos"], jurors, **jury)
    for key, juror, order, score, status in rows:
        _call(con, run_id, key, juror, "p1", "pair")
        con.execute(
            "INSERT INTO pairwise_judgments (call_key, rubric_hash, juror_key, pair_id, presented_order, sample_index, "
            "category, score, status) VALUES (?, 'h', ?, 'p1', ?, 0, 'logos', ?, ?)",
            [key, juror, order, score, status],
        )


PAIRWISE = [
    ("a1", "j1", "AB", 2, "valid"),
    ("a2", "j1", "BA", -2, "valid"),  # epsilon (2 - (-2)) / 2 = 2
    ("b1", "j2", "AB", 1, "valid"),
    ("b2", "j2", "BA", 1, "valid"),  # epsilon (1 - 1) / 2 = 0
    ("c1", "j3", "AB", 1, "valid"),
    ("c2", "j3", "BA", None, "invalid"),  # excluded
]


def test_jury_pairwise_mean_of_juror_epsilons(con: Any) -> None:
    # Jury mean = (2 + 0) / 2 = 1 over 2 present jurors of 3; one excluded order pair.
    _pairwise(con, "r", PAIRWISE, ["j1", "j2", "j3"])
    got = con.execute(
        "SELECT jury_score, n_jurors_present, n_jurors_expected, n_excluded, votes_a, votes_b, votes_tie FROM jury_pairwise"
    ).fetchall()
    assert got == [(1.0, 2, 3, 1, 1, 0, 1)]


@pytest.mark.parametrize(("tie", "expected"), [("tie", 0.0), ("abstain", None)])
def test_majority_tie_rule(con: Any, tie: str, expected: float | None) -> None:
    # Votes: j1 epsilon +2 (A), j4 epsilon -1 (B), j2 0 (present, votes for neither): 1 A vs 1 B.
    rows = [*PAIRWISE[:4], ("d1", "j4", "AB", -1, "valid"), ("d2", "j4", "BA", 1, "valid")]
    _pairwise(con, "r", rows, ["j1", "j2", "j4"], aggregation="majority", tie=tie)
    assert con.execute("SELECT jury_score, votes_a, votes_b, votes_tie FROM jury_pairwise").fetchall() == [
        (expected, 1, 1, 1)
    ]


def test_majority_per_order_and_quorum(con: Any) -> None:
    # Per order, first-shown wins when positive. AB: j1 +2, j2 +1, j3 +1 -> 3 votes for the first shown.
    # BA: j1 -2, j2 +1 (j3 invalid) -> 1 each: a tie. Quorum 3: BA has 2 present -> no verdict.
    _pairwise(con, "r", PAIRWISE, ["j1", "j2", "j3"], aggregation="majority", quorum=3)
    rows = con.execute(
        "SELECT presented_order, jury_score, n_jurors_present, below_quorum FROM jury_pairwise_orders ORDER BY 1"
    ).fetchall()
    assert rows == [("AB", 1.0, 3, False), ("BA", None, 2, True)]


def test_run_jurors_keep_each_runs_display_name(con: Any) -> None:
    from jurybench.engine._records import register_jurors

    first = JurorSpec("fake/x", name="old")
    register_jurors(con, [first])
    register_jurors(con, [JurorSpec("fake/x", name="new")])
    assert con.execute("SELECT name FROM jurors").fetchall() == [("new",)]
    con.execute(
        "INSERT INTO runs (run_id, rubric_hash, mode, jurors, status) VALUES ('r', 'h', 'pointwise', ?, 'x')",
        [json.dumps([first.key])],
    )
    register_jury(con, "r", Jury((first,), aggregation="mean"))
    assert con.execute("SELECT name FROM run_jurors").fetchall() == [("old",)]


def test_juror_views_list_each_juror_per_run_with_its_rubric(small_store: Any) -> None:
    import jurybench as jb

    con = small_store
    jb.score(con, rubric="persuasion", jury=["fake/judge,position_bias=1"], run="first", where="pair_id = 'p1'")
    jb.score(con, rubric="persuasion", jury=["fake/judge,position_bias=1"], run="second")  # p1 reused, p2 new
    rows = con.execute(
        "SELECT run_id, rubric, juror, n_valid + n_excluded FROM juror_order_bias ORDER BY run_id"
    ).fetchall()
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("first", "persuasion", "fake/judge"),
        ("second", "persuasion", "fake/judge"),
    ]
    # 'second' judged both pairs (one reused from 'first'): twice the symmetrized rows of 'first'
    assert rows[0][3] > 0 and rows[1][3] == 2 * rows[0][3]
    position = con.execute("SELECT run_id, n_valid + n_excluded FROM juror_position_stats ORDER BY run_id").fetchall()
    assert [r[0] for r in position] == ["first", "second"] and position[1][1] == 2 * position[0][1]
