"""Expected scores read from token log probabilities: hand-worked payloads, including a number
split across tokens, a space before it and a sign token."""

from __future__ import annotations

import math
from typing import Any

import pytest

from jurybench.rubric import Token, expected_scores, parse_rubric, tokens_from_logprobs

POINTWISE_1_5 = """
name: five
kind: pointwise
criteria:
  - name: clarity
    description: how clear
    scale: {min: 1, max: 5}
    anchors: {1: a, 2: b, 3: c, 4: d, 5: e}
templates:
  en: {user: "Rate {response}"}
"""
POINTWISE_1_10 = POINTWISE_1_5.replace("max: 5", "max: 10").replace("5: e}", "5: e, 6: f, 7: g, 8: h, 9: i, 10: j}")
PAIRWISE = """
name: pw
kind: pairwise
k: 3
categories:
  - {name: logos, description: reasoning}
templates:
  en: {user: "Compare {response_a} and {response_b}"}
"""
PREFERENCE = """
name: pref
kind: preference
allow_tie: true
templates:
  en: {user: "Which is better, {response_a} or {response_b}?"}
"""

ln = math.log


def _t(text: str, p: float, *top: tuple[str, float]) -> Token:
    return Token(text, ln(p), tuple((t, ln(q)) for t, q in top))


def test_a_single_digit_score_is_weighted_by_its_alternatives() -> None:
    rubric = parse_rubric(POINTWISE_1_5)
    # {"clarity": 4}: at the value, p(4) = 0.6, p(3) = 0.3, p(5) = 0.05, and 0.05 on "x" (no value).
    tokens = [
        _t('{"', 1),
        _t("clarity", 1),
        _t('":', 1),
        _t(" ", 1),
        _t("4", 0.6, ("4", 0.6), ("3", 0.3), ("5", 0.05), ("x", 0.05)),
        _t("}", 1),
    ]
    text = "".join(t.text for t in tokens)
    got = expected_scores(rubric, text, tokens)
    assert got is not None
    dist = got["clarity"]
    # coverage 0.95; renormalised: 4: 0.6/0.95, 3: 0.3/0.95, 5: 0.05/0.95
    # expected = (4*0.6 + 3*0.3 + 5*0.05) / 0.95 = 3.55 / 0.95 = 3.736842105...
    assert dist.coverage == pytest.approx(0.95, abs=1e-12)
    assert dist.expected == pytest.approx(3.55 / 0.95, abs=1e-12)
    assert dist.probabilities == pytest.approx({"4": 0.6 / 0.95, "3": 0.3 / 0.95, "5": 0.05 / 0.95})


def test_a_space_before_the_number_in_the_same_token_and_alternatives_without_it() -> None:
    rubric = parse_rubric(POINTWISE_1_5)
    # The value token is " 2"; " 1" and "3" (no space) are alternatives at the same place.
    tokens = [_t('{"clarity":', 1), _t(" 2", 0.5, (" 2", 0.5), (" 1", 0.25), ("3", 0.25)), _t("}", 1)]
    text = "".join(t.text for t in tokens)
    dist = expected_scores(rubric, text, tokens)["clarity"]  # type: ignore[index]
    # expected = 2*0.5 + 1*0.25 + 3*0.25 = 2.0; all mass on values
    assert dist.expected == pytest.approx(2.0, abs=1e-12)
    assert dist.coverage == pytest.approx(1.0)


def test_a_number_split_across_two_tokens_follows_the_chosen_path() -> None:
    rubric = parse_rubric(POINTWISE_1_10)
    # "10" written as "1" then "0". First position: "1" 0.5 (chosen), "9" 0.3, "8" 0.2.
    # Second position (after "1"): "0" 0.8 -> 10, "}" 0.2 -> the number ended: 1.
    tokens = [
        _t('{"clarity": ', 1),
        _t("1", 0.5, ("1", 0.5), ("9", 0.3), ("8", 0.2)),
        _t("0", 0.8, ("0", 0.8), ("}", 0.2)),
        _t("}", 1),
    ]
    text = "".join(t.text for t in tokens)
    dist = expected_scores(rubric, text, tokens)["clarity"]  # type: ignore[index]
    # p(10) = 0.5*0.8 = 0.4; p(1) = 0.5*0.2 = 0.1; p(9) = 0.3; p(8) = 0.2
    # expected = 4 + 0.1 + 2.7 + 1.6 = 8.4
    assert dist.probabilities == pytest.approx({"10": 0.4, "1": 0.1, "9": 0.3, "8": 0.2})
    assert dist.expected == pytest.approx(8.4, abs=1e-12)


def test_a_sign_token_splits_its_probability_over_the_negative_values() -> None:
    rubric = parse_rubric(PAIRWISE)
    # logos: -2 written as "-" then "2". First position: "-" 0.7 (chosen), "0" 0.2, "1" 0.1.
    # After "-": "2" 0.5, "1" 0.25, "3" 0.25.
    tokens = [
        _t('{"logos": ', 1),
        _t("-", 0.7, ("-", 0.7), ("0", 0.2), ("1", 0.1)),
        _t("2", 0.5, ("2", 0.5), ("1", 0.25), ("3", 0.25)),
        _t("}", 1),
    ]
    text = "".join(t.text for t in tokens)
    dist = expected_scores(rubric, text, tokens)["logos"]  # type: ignore[index]
    # -2: 0.35, -1: 0.175, -3: 0.175, 0: 0.2, 1: 0.1
    # expected = -0.7 - 0.175 - 0.525 + 0 + 0.1 = -1.3
    assert dist.probabilities == pytest.approx({"-2": 0.35, "-1": 0.175, "-3": 0.175, "0": 0.2, "1": 0.1})
    assert dist.expected == pytest.approx(-1.3, abs=1e-12)


def test_a_verdict_with_its_quote_in_the_token_gives_the_preference_expectation() -> None:
    rubric = parse_rubric(PREFERENCE)
    # {"verdict": "B"}: the token ' "B' holds the opening quote; alternatives ' "A' and ' "tie'.
    tokens = [
        _t('{"verdict":', 1),
        _t(' "B', 0.7, (' "B', 0.7), (' "A', 0.2), (' "tie', 0.1)),
        _t('"}', 1),
    ]
    text = "".join(t.text for t in tokens)
    dist = expected_scores(rubric, text, tokens)["preference"]  # type: ignore[index]
    # A = +1, B = -1, tie = 0: expected = 0.2 - 0.7 = -0.5
    assert dist.probabilities == pytest.approx({"B": 0.7, "A": 0.2, "tie": 0.1})
    assert dist.expected == pytest.approx(-0.5, abs=1e-12)


def test_tokens_that_do_not_spell_the_answer_or_carry_no_value_give_nothing() -> None:
    rubric = parse_rubric(POINTWISE_1_5)
    tokens = [_t('{"clarity": 4}', 1)]
    assert expected_scores(rubric, '{"clarity": 3}', tokens) is None  # another text
    only_noise = [_t('{"clarity": ', 1), _t("x", 1, ("x", 0.9), ("y", 0.1)), _t("}", 1)]
    assert expected_scores(rubric, "".join(t.text for t in only_noise), only_noise) is None


def test_the_openai_shape_is_read_from_dicts_and_objects() -> None:
    payload: dict[str, Any] = {
        "content": [
            {
                "token": "4",
                "logprob": -0.1,
                "top_logprobs": [{"token": "4", "logprob": -0.1}, {"token": "5", "logprob": float("-inf")}],
            },
        ]
    }
    tokens = tokens_from_logprobs(payload)
    assert tokens == [Token("4", -0.1, (("4", -0.1),))]  # -inf alternatives are dropped
    assert tokens_from_logprobs(None) is None
    assert tokens_from_logprobs({"content": None}) is None
    assert tokens_from_logprobs({"content": [{"token": 4, "logprob": -1}]}) is None
