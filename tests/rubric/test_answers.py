from __future__ import annotations

import json

from jurybench.rubric import extract_json, load_rubric, parse_answer
from jurybench.rubric._answers import parse_with_rules
from tests.conftest import FULL as FULL_ANSWER

QUALITY = load_rubric("story-quality")
PREF = load_rubric("preference")
FULL = json.dumps(FULL_ANSWER)


def test_valid_json_in_prose_or_fences() -> None:
    for text in (FULL, f"Here you go:\n```json\n{FULL}\n```", f"Scores: {FULL} -- done"):
        outcome = parse_answer(QUALITY, text, "stop", None)
        assert outcome.status == "valid"
        assert outcome.scores == {
            "relevance": 5,
            "coherence": 4,
            "empathy": 3,
            "surprise": 2,
            "engagement": 1,
            "complexity": 3,
        }


def test_out_of_scale_is_invalid_never_clipped() -> None:
    outcome = parse_answer(QUALITY, FULL.replace('"relevance": 5', '"relevance": 7'), "stop", None)
    assert outcome.status == "invalid" and outcome.scores is None
    assert outcome.reason is not None and outcome.reason.startswith(
        "relevance: Input should be less than or equal to 5"
    )


def test_missing_field_and_no_json_are_invalid() -> None:
    assert parse_answer(QUALITY, '{"relevance": 5}', "stop", None).reason == "coherence: Field required"
    outcome = parse_answer(QUALITY, "They are both good.", "stop", None)
    assert (outcome.status, outcome.reason) == ("invalid", "no JSON object found in the answer")


def test_refusals_are_recognised_only_when_unparseable() -> None:
    assert parse_answer(QUALITY, "I'm sorry, but I can't rate this text.", "stop", None).status == "refusal"
    assert parse_answer(QUALITY, "anything", "content_filter", None).status == "refusal"
    # A parseable answer that mentions inability is still a valid answer.
    assert parse_answer(QUALITY, "I cannot be sure, but: " + FULL, "stop", None).status == "valid"


def test_preference_verdict_maps_to_signed_score() -> None:
    assert parse_answer(PREF, '{"verdict": "A"}', "stop", None).scores == {"preference": 1}
    assert parse_answer(PREF, '{"verdict": "B"}', "stop", None).scores == {"preference": -1}
    assert parse_answer(PREF, '{"verdict": "tie"}', "stop", None).status == "invalid"  # allow_tie is false


def test_rules_first_matching_rule_wins_in_rule_order() -> None:
    # The A rule is listed first, so it decides even though "(b)" is said first.
    text = "Output (b) is better. On reflection, Output (a) is better."
    assert parse_with_rules(PREF, "stated_winner", text, "stop").scores == {"preference": 1}
    assert parse_with_rules(PREF, "stated_winner", "Output (b) is better.", "stop").scores == {"preference": -1}


def test_verdict_line_rule_needs_the_verdict_at_a_line_start() -> None:
    assert parse_with_rules(PREF, "verdict_line", "  Output (b)", "stop").scores == {"preference": -1}
    assert parse_with_rules(PREF, "verdict_line", "Reasons...\nOutput (a) wins", "stop").scores == {"preference": 1}
    mid = parse_with_rules(PREF, "verdict_line", "I prefer Output (a) here", "stop")
    assert (mid.status, mid.reason) == ("invalid", "no 'verdict_line' verdict rule matched")


def test_extract_json_prefers_whole_text() -> None:
    assert extract_json(' {"a": 1} ') == {"a": 1}


def test_only_json_integers_within_the_scale_are_valid() -> None:
    # Strict: a boolean, a numeric string, a float (even 4.0) or null is not an integer answer.
    for bad, why in (
        ("true", "relevance: Input should be a valid integer"),
        ('"4"', "relevance: Input should be a valid integer"),
        ("4.0", "relevance: Input should be a valid integer"),
        ("4.5", "relevance: Input should be a valid integer"),
        ("null", "relevance: Input should be a valid integer"),
    ):
        text = FULL.replace('"relevance": 5', f'"relevance": {bad}')
        outcome = parse_answer(QUALITY, text, "stop", None)
        assert outcome.status == "invalid", bad
        assert outcome.scores is None
        assert outcome.reason is not None and outcome.reason.startswith(why), (bad, outcome.reason)
    assert parse_answer(QUALITY, FULL, "stop", None).status == "valid"


def test_preference_verdict_must_be_an_exact_string() -> None:
    assert parse_answer(PREF, '{"verdict": "A"}', "stop", None).scores == {"preference": 1}
    for bad in ('{"verdict": "a"}', '{"verdict": 1}', '{"verdict": true}', '{"verdict": ["A"]}'):
        assert parse_answer(PREF, bad, "stop", None).status == "invalid", bad
    # A rationale, where the rubric asks for one, must be a string.
    with_number = json.dumps({**FULL_ANSWER, "rationale": 3})
    assert parse_answer(QUALITY, with_number, "stop", None).reason == "rationale: Input should be a valid string"
