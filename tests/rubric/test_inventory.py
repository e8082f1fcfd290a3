"""Questionnaire instruments: presentation, mapping back to canonical scores, parsing."""

from __future__ import annotations

from typing import Any

import pytest

from jurybench.errors import JurybenchError
from jurybench.rubric import Presentation, load_rubric, parse_inventory, parse_rubric, presentation, render_inventory
from jurybench.rubric._inventory import score_numeral

INSTRUMENT = load_rubric("social-style")

SIX_POINT = """
name: six
kind: inventory
rotation: true
shuffle: true
scale:
  points: 6
  reference_points: 5
  labels: {en: [l1, l2, l3, l4, l5, l6]}
facets: [{name: f, factor: big}]
items:
  - {id: a, facet: f, text: {en: "A statement."}}
  - {id: b, facet: f, reverse: true, text: {en: "B statement."}}
templates: {en: {user: "{scale}\\n{items}\\n{answer_format}"}}
"""


def test_rotation_maps_numerals_back_to_canonical_scores_rescaled_and_reversed() -> None:
    rubric: Any = parse_rubric(SIX_POINT)
    # Numeral 1 stands for label l4 (index 3), numeral 2 for l1, ... (a hand-picked rotation).
    shown = Presentation(order=("b", "a"), rotation=(3, 0, 5, 1, 2, 4))
    # Item a (shown second) answered numeral 1 -> label l4 -> s = 4 on 1..6 -> 1 + 3 * 4/5 = 3.4.
    assert score_numeral(rubric, "a", 1, shown) == pytest.approx(3.4)
    # Item b is reverse keyed: numeral 3 -> l6 -> s = 6 -> 5.0 -> 5 + 1 - 5 = 1.0.
    assert score_numeral(rubric, "b", 3, shown) == pytest.approx(1.0)
    answers = {a.item: a for a in parse_inventory(rubric, "1. 3\n2. 1\n", shown, "en")}
    assert (answers["b"].position, answers["b"].raw, answers["b"].label, answers["b"].score) == (1, 3, "l6", 1.0)
    assert (answers["a"].position, answers["a"].raw, answers["a"].label) == (2, 1, "l4")
    assert answers["a"].score == pytest.approx(3.4)


def test_even_point_rescaling_endpoints_match_the_reference_scale() -> None:
    rubric: Any = parse_rubric(SIX_POINT)
    identity = Presentation(order=("a", "b"), rotation=tuple(range(6)))
    values = [score_numeral(rubric, "a", n, identity) for n in range(1, 7)]
    assert values == pytest.approx([1.0, 1.8, 2.6, 3.4, 4.2, 5.0])  # 1 + (s - 1) * 4/5


def test_missing_out_of_range_and_conflicting_answers_are_invalid_per_item() -> None:
    shown = presentation(INSTRUMENT, "call-1")
    text = "1. 4\n2. 9\n3. 2\n3. 5\n4) 2\n5: x\n"  # 6..12 missing
    answers = {a.position: a for a in parse_inventory(INSTRUMENT, text, shown, "en")}
    assert answers[1].status == "valid" and answers[1].raw == 4
    assert answers[2].status == "invalid" and "outside the scale 1..5" in (answers[2].reason or "")
    assert answers[3].status == "invalid" and "more than once" in (answers[3].reason or "")
    assert answers[4].status == "valid" and answers[4].raw == 2
    assert answers[5].status == "invalid" and "not a scale number" in (answers[5].reason or "")
    assert all(
        answers[n].status == "invalid" and answers[n].reason == f"statement {n}: no answer" for n in range(6, 13)
    )


def test_structured_answers_are_read_too() -> None:
    shown = Presentation(order=tuple(i.id for i in INSTRUMENT.items), rotation=(0, 1, 2, 3, 4))  # type: ignore[attr-defined]
    answers = parse_inventory(INSTRUMENT, '{"answers": {"1": 5, "2": "5", "3": 2.5}}', shown, "en")  # type: ignore[arg-type]
    by_pos = {a.position: a for a in answers}
    assert by_pos[1].status == "valid" and by_pos[1].score == 5
    assert by_pos[2].status == "invalid"  # a string is not a scale number in JSON
    assert by_pos[3].status == "invalid"


def test_presentation_is_drawn_from_the_call_key_and_stated_in_the_prompt() -> None:
    a, b = presentation(INSTRUMENT, "k1"), presentation(INSTRUMENT, "k1")  # type: ignore[arg-type]
    assert a == b and a != presentation(INSTRUMENT, "k2")  # type: ignore[arg-type]
    assert sorted(a.order) == sorted(i.id for i in INSTRUMENT.items)  # type: ignore[attr-defined]
    item = {"item_id": "t1", "response": "a colleague", "language": "de", "treatment": '{"gender": "female"}'}
    text = render_inventory(INSTRUMENT, item, a)[-1]["content"]  # type: ignore[arg-type]
    labels = INSTRUMENT.scale.labels["de"]  # type: ignore[attr-defined]
    for numeral, index in enumerate(a.rotation, start=1):
        assert f"{numeral} = {labels[index]}" in text
    first = next(i for i in INSTRUMENT.items if i.id == a.order[0])  # type: ignore[attr-defined]
    opening = first.text["de"].replace("{they}", "sie").split("{")[0]
    assert "1. " + opening[:1].upper() + opening[1:] in text
    assert "stimme" in text and "{" not in text


def test_placeholders_need_the_arm() -> None:
    shown = presentation(INSTRUMENT, "k")  # type: ignore[arg-type]
    item = {"item_id": "t1", "response": "x", "language": "en", "treatment": '{"gender": "other"}'}
    with pytest.raises(JurybenchError, match="treatment 'gender'"):
        render_inventory(INSTRUMENT, item, shown)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("facet: f, text", "facet: g, text"), "facet 'g' is not declared"),
        (("l6]", "l5]"), "repeats a label"),
        (('"A statement."', '"{they} says."'), "does not define"),
    ],
)
def test_instrument_errors_name_the_problem(edit: tuple[str, str], message: str) -> None:
    with pytest.raises(JurybenchError, match=message):
        parse_rubric(SIX_POINT.replace(*edit, 1))
