"""Per-juror and jury figures against human labels, on a hand-made store."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jurybench.annotations import preference_accuracy
from jurybench.engine import EngineOptions, score
from jurybench.errors import JurybenchError
from jurybench.jurors import FakeBackend, parse_juror
from jurybench.rubric import load_rubric

QUIET = EngineOptions(progress=False, concurrency=1)
A, B = json.dumps({"verdict": "A"}), json.dumps({"verdict": "B"})


def _label(con: Any, pair: str, value: float, annotator: str = "h1") -> None:
    con.execute(
        "INSERT INTO human_labels (subject_kind, subject_id, criterion, annotator, value, label) "
        "VALUES ('pair', ?, 'preference', ?, ?, ?)",
        [pair, annotator, value, "A" if value > 0 else "B"],
    )


def test_figures_by_hand(small_store: Any) -> None:
    # Humans prefer A in p1 and B in p2. Answers are per shown position: "A" = first shown.
    _label(small_store, "p1", 1)
    _label(small_store, "p2", -1)
    # Juror x (pairs in order p1, p2; orders AB then BA within a pair, concurrency 1):
    #   p1 AB "A" -> item A (correct); p1 BA "A" -> item B (wrong)
    #   p2 AB "B" -> item B (correct); p2 BA "A" -> item B (correct)
    FakeBackend.enqueue("x", A, A, B, A)
    # Juror y: p1 AB "A" (A, correct), p1 BA "B" (A, correct), p2 AB "A" (A, wrong), p2 BA unparseable.
    FakeBackend.enqueue("y", A, B, A, "no idea", "still no idea")
    score(small_store, load_rubric("preference"), [parse_juror("fake/x")], run_id="rx", options=QUIET)
    score(small_store, load_rubric("preference"), [parse_juror("fake/y")], run_id="ry", options=QUIET)
    rx = preference_accuracy(small_store, "rx").jurors[0].counts
    assert (rx["correct_ab"], rx["correct_ba"], rx["both_correct"], rx["consistent"]) == (2, 1, 1, 1)
    # AB verdicts A, B vs gold A, B: perfect agreement, kappa 1. BA verdicts B, B vs gold A, B:
    # p_o = 1/2, p_e = (0 * 1/2) + (1 * 1/2) = 1/2, kappa = 0.
    kappas = preference_accuracy(small_store, "rx").jurors[0].kappa
    assert kappas == {"kappa_ab": pytest.approx(1.0), "kappa_ba": pytest.approx(0.0)}
    ry = preference_accuracy(small_store, "ry").jurors[0].counts
    # p2 BA has no verdict: counted as invalid, never correct, never consistent.
    assert (ry["correct_ab"], ry["correct_ba"], ry["both_correct"], ry["consistent"], ry["invalid_ba"]) == (
        1,
        1,
        1,
        1,
        1,
    )


def test_jury_majority_counts_ties(small_store: Any) -> None:
    _label(small_store, "p1", 1)
    _label(small_store, "p2", 1)
    # Two jurors: p1 both say first-shown in AB -> A wins 2-0; in BA, x says "A"(=item B), y "B"(=item A): tie.
    FakeBackend.enqueue("x", A, A, A, A)
    FakeBackend.enqueue("y", A, B, B, B)
    score(
        small_store,
        load_rubric("preference"),
        [parse_juror("fake/x"), parse_juror("fake/y")],
        run_id="j",
        options=EngineOptions(progress=False, concurrency=1),
    )
    report = preference_accuracy(small_store, "j")
    jury = report.jury.counts
    assert report.n_pairs == 2
    assert jury["tie_ba"] >= 1 and jury["correct_ab"] + jury.get("tie_ab", 0) <= 2


def test_human_majority_and_ties_are_reported(small_store: Any) -> None:
    _label(small_store, "p1", 1, "h1")
    _label(small_store, "p1", -1, "h2")  # humans split: left out as a tie
    _label(small_store, "p2", -1, "h1")
    score(small_store, load_rubric("preference"), [parse_juror("fake/z")], run_id="z", options=QUIET)
    report = preference_accuracy(small_store, "z")
    assert (report.n_pairs, report.n_reference_ties, report.n_without_reference) == (1, 1, 0)
    assert preference_accuracy(small_store, "z", annotator="h1").n_pairs == 2


def test_report_needs_a_preference_run(small_store: Any) -> None:
    score(small_store, load_rubric("story-quality"), [parse_juror("fake/q")], run_id="q", options=QUIET)
    with pytest.raises(JurybenchError, match="needs a preference rubric"):
        preference_accuracy(small_store, "q")
