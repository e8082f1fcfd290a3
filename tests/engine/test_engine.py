from __future__ import annotations

import json
from typing import Any

import pytest

from jurybench.engine import EngineOptions, score
from jurybench.errors import JurybenchError
from jurybench.jurors import FakeBackend, parse_juror
from jurybench.jurors._spec import JurorSpec
from jurybench.rubric import load_rubric

QUIET = EngineOptions(progress=False, retry_base_s=0.001)
FULL = {
    "relevance": 5,
    "coherence": 4,
    "empathy": 3,
    "surprise": 2,
    "engagement": 1,
    "complexity": 3,
}


def _rows(con: Any, sql: str) -> list[tuple[Any, ...]]:
    return con.execute(sql).fetchall()


def test_invalid_answer_is_reasked_then_stored_valid(small_store: Any) -> None:
    FakeBackend.enqueue("q", "not json", json.dumps(FULL))
    result = score(
        small_store,
        load_rubric("story-quality"),
        [parse_juror("fake/q")],
        where="item_id = 'i1'",
        options=QUIET,
    )
    assert result.status_counts == {"ok": 1}
    attempts, status, text = _rows(small_store, "SELECT attempts, status, response_text FROM calls")[0]
    assert (attempts, status, text) == (2, "ok", json.dumps(FULL))
    scores = dict(_rows(small_store, "SELECT criterion, score FROM pointwise_judgments"))
    assert scores == FULL


def test_answer_still_invalid_after_reasks_is_stored_as_invalid(small_store: Any) -> None:
    FakeBackend.enqueue("q", "nope", '{"relevance": 9}')
    score(
        small_store,
        load_rubric("story-quality"),
        [parse_juror("fake/q,parse_retries=1")],
        where="item_id = 'i1'",
        options=QUIET,
    )
    call = _rows(small_store, "SELECT status, reason, response_text, attempts FROM calls")[0]
    assert call[0] == "invalid" and call[1].startswith("relevance: Input should be less than or equal to 5")
    assert call[2:] == ('{"relevance": 9}', 2)
    rows = _rows(small_store, "SELECT DISTINCT score, status, reason IS NOT NULL FROM pointwise_judgments")
    assert rows == [(None, "invalid", True)]
    # Aggregates exclude it and say so.
    jury = _rows(
        small_store,
        "SELECT jury_score, n_jurors_present, n_jurors_expected, below_quorum, n_invalid FROM jury_pointwise "
        "WHERE criterion = 'relevance'",
    )
    assert jury == [(None, 0, 1, True, 1)]


def test_refusal_is_stored_as_refusal(small_store: Any) -> None:
    FakeBackend.enqueue("r", "I'm sorry, but I can't help with that.")
    score(
        small_store,
        load_rubric("story-quality"),
        [parse_juror("fake/r")],
        where="item_id = 'i1'",
        options=QUIET,
    )
    assert _rows(small_store, "SELECT status, reason FROM calls") == [("refusal", "the juror declined to answer")]


def test_pairwise_both_orders_and_hand_worked_symmetrized_score(small_store: Any) -> None:
    rubric = load_rubric("persuasion")
    zero = dict.fromkeys(rubric.dimensions, 0)
    # Order AB: logos +2 (A shown first has more). Order BA: logos -1 (B, shown first, has
    # less than A). Symmetrized: epsilon = (2 - (-1)) / 2 = 1.5, i.e. A has more logos.
    # ethos: AB +1, BA +1 -> epsilon 0 and the preferred item flips with the order.
    FakeBackend.enqueue(
        "p",
        json.dumps({**zero, "logos": 2, "ethos": 1}),
        json.dumps({**zero, "logos": -1, "ethos": 1}),
    )
    score(
        small_store,
        rubric,
        [parse_juror("fake/p,concurrency=1")],
        where="pair_id = 'p1'",
        options=QUIET,
    )
    orders = _rows(
        small_store,
        "SELECT presented_order, score FROM pairwise_judgments WHERE category = 'logos' ORDER BY 1",
    )
    assert orders == [("AB", 2), ("BA", -1)]
    eps = dict(_rows(small_store, "SELECT category, epsilon FROM pairwise_symmetrized"))
    assert eps["logos"] == 1.5 and eps["ethos"] == 0.0 and eps["pathos"] == 0.0
    # flip: sign(score_ab) <> sign(-score_ba). logos: 1 vs 1 no; ethos: 1 vs -1 yes; 17 zeros: no.
    flip = _rows(small_store, "SELECT flip_rate, n_valid FROM juror_order_bias")[0]
    assert flip == (pytest.approx(1 / 19), 19)
    position = _rows(small_store, "SELECT first_position_win_rate, tie_rate FROM juror_position_stats")[0]
    # 38 single-order rows: positive are logos AB, ethos AB, ethos BA = 3; zero = 35 - 1 (logos BA < 0) = 34.
    assert position == (pytest.approx(3 / 38), pytest.approx(34 / 38))


def test_rerun_is_served_from_cache_without_calls(small_store: Any) -> None:
    rubric = load_rubric("story-quality")
    jurors = [parse_juror("fake/a,samples=2"), parse_juror("fake/b,temperature=0.5")]
    first = score(small_store, rubric, jurors, options=QUIET)
    assert (first.n_tasks, first.n_cached, first.n_called) == (9, 0, 9)
    FakeBackend.enqueue("a", "this would be used if a call were made")
    second = score(small_store, rubric, jurors, options=QUIET)
    assert (second.n_tasks, second.n_cached, second.n_called) == (9, 9, 0)
    assert len(FakeBackend._queues["a"]) == 1
    # Both runs see the same 9 calls; the second made none of them.
    assert set(_rows(small_store, "SELECT run_id, count(*) FROM run_calls GROUP BY 1")) == {
        (first.run_id, 9),
        (second.run_id, 9),
    }


def test_juror_identity_counts_answer_changing_params_only() -> None:
    base = parse_juror("openai/gpt-4o-mini,temperature=0")
    assert parse_juror("openai/gpt-4o-mini,temperature=0,concurrency=3,name=x,timeout=9").key == base.key
    assert parse_juror("openai/gpt-4o-mini,temperature=0.7").key != base.key
    assert parse_juror("openai/gpt-4o-mini,temperature=0,seed=1").key != base.key
    assert parse_juror("openai/gpt-4o-mini,samples=3").samples == 3


def test_transient_errors_are_retried_then_recorded_as_errors(small_store: Any) -> None:
    rubric = load_rubric("story-quality")
    # error_rate=1: every attempt fails; 2 retries -> 3 tries, stored as an error.
    score(
        small_store,
        rubric,
        [parse_juror("fake/e,error_rate=1,retries=2")],
        where="item_id = 'i1'",
        options=QUIET,
    )
    status, reason = _rows(small_store, "SELECT status, reason FROM calls")[0]
    assert status == "error" and reason.startswith("gave up after 3 tries")
    assert _rows(small_store, "SELECT count(*) FROM pointwise_judgments") == [(0,)]


def test_errors_are_tried_again_on_rerun(small_store: Any) -> None:
    rubric = load_rubric("story-quality")
    score(
        small_store,
        rubric,
        [JurorSpec("fake/e", params={"error_rate": 1.0}, options={"retries": 0})],
        where="item_id = 'i1'",
        options=QUIET,
    )
    assert _rows(small_store, "SELECT status FROM calls") == [("error",)]
    # Same juror key, but the queue now answers: the error call is replaced by a valid one.
    FakeBackend.enqueue("e", json.dumps(FULL))
    again = score(
        small_store,
        rubric,
        [JurorSpec("fake/e", params={"error_rate": 1.0}, options={"retries": 0})],
        where="item_id = 'i1'",
        options=QUIET,
    )
    assert again.n_cached == 0 and again.status_counts == {"ok": 1}
    assert _rows(small_store, "SELECT status FROM calls") == [("ok",)]


def test_fake_juror_with_some_transient_errors_recovers(small_store: Any) -> None:
    result = score(
        small_store,
        load_rubric("story-quality"),
        [parse_juror("fake/f,error_rate=0.5,retries=10")],
        options=QUIET,
    )
    assert result.status_counts == {"ok": 3}


def test_bad_jury_and_selection_are_user_errors(small_store: Any) -> None:
    rubric = load_rubric("story-quality")
    with pytest.raises(JurybenchError, match="no jurors given"):
        score(small_store, rubric, [], options=QUIET)
    with pytest.raises(JurybenchError, match="listed twice"):
        score(small_store, rubric, [parse_juror("fake/a"), parse_juror("fake/a")], options=QUIET)
    with pytest.raises(JurybenchError, match="no items to judge where item_id = 'zz'"):
        score(small_store, rubric, [parse_juror("fake/a")], where="item_id = 'zz'", options=QUIET)
    with pytest.raises(JurybenchError, match=r"--where 'nonsense ==' (is not one SQL expression|: Catalog Error)"):
        score(small_store, rubric, [parse_juror("fake/a")], where="nonsense ==", options=QUIET)
    with pytest.raises(JurybenchError, match="verdicts= applies to preference rubrics only"):
        score(small_store, rubric, [parse_juror("fake/a,verdicts=verdict_line")], options=QUIET)
    with pytest.raises(JurybenchError, match=r"no verdict rule set 'x'.*Valid: letter, stated_winner, verdict_line"):
        score(
            small_store,
            load_rubric("preference"),
            [parse_juror("fake/a,verdicts=x")],
            options=QUIET,
        )
    with pytest.raises(JurybenchError, match="no recordings named 'missing'"):
        score(small_store, rubric, [parse_juror("replay/missing")], options=QUIET)


def test_unknown_litellm_model_is_refused(small_store: Any) -> None:
    with pytest.raises(JurybenchError, match="unknown juror model 'nosuchprovider/x'"):
        score(
            small_store,
            load_rubric("story-quality"),
            [parse_juror("nosuchprovider/x")],
            options=QUIET,
        )
    assert _rows(small_store, "SELECT count(*) FROM runs") == [(0,)]


def test_resuming_a_named_run_with_another_jury_is_refused(small_store: Any) -> None:
    rubric = load_rubric("story-quality")
    score(small_store, rubric, [parse_juror("fake/a")], run_id="r1", options=QUIET)
    with pytest.raises(JurybenchError, match="run 'r1' exists with another rubric or jury"):
        score(small_store, rubric, [parse_juror("fake/b")], run_id="r1", options=QUIET)


def test_replay_of_a_recorded_run_reproduces_it(small_store: Any) -> None:
    from jurybench.engine._records import record_run

    rubric = load_rubric("story-quality")
    original = score(small_store, rubric, [parse_juror("fake/a,invalid_rate=0.3,parse_retries=0")], options=QUIET)
    assert record_run(small_store, original.run_id, "fake/a", "rec") == 3
    score(small_store, rubric, [parse_juror("replay/rec")], run_id="replayed", options=QUIET)
    compare = _rows(
        small_store,
        """SELECT count(*) FROM pointwise_scores a JOIN pointwise_scores b
           USING (item_id, criterion, sample_index)
           WHERE a.juror = 'fake/a' AND b.juror = 'replay/rec'
             AND a.status = b.status AND a.score IS NOT DISTINCT FROM b.score""",
    )
    assert compare == [(18,)]
