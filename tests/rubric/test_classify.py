"""Closed label sets: documented normalisation, exactly one label or invalid."""

from __future__ import annotations

from typing import Any

import pytest

from jurybench.rubric import gold_label, load_rubric, match_label, normalise_label

EMOTION: Any = load_rubric("emotion-label")


@pytest.mark.parametrize(
    ("answer", "language", "label"),
    [
        ("joy", "en", "joy"),
        ("  Joy. ", "en", "joy"),
        ('"FREUDE"', "de", "joy"),
        ("Label: Traurigkeit", "de", "sadness"),
        ("happiness", "en", "joy"),  # an alias
        ("anger", "de", "anger"),  # the canonical name is accepted in every language
        ("ｉｒａ", "es", "anger"),  # NFKC folds full-width letters
        ("怒り。", "ja", "anger"),
        # Issue 45, item 5: SmolLM2 copied the prompt's list marker ("- joy") and was refused
        ("- joy", "en", "joy"),
        ("* Freude", "de", "joy"),
        ("• sadness", "en", "sadness"),
        ("3. fear", "en", "fear"),
        ("2) anger", "en", "anger"),
    ],
)
def test_answers_that_name_one_label(answer: str, language: str, label: str) -> None:
    assert match_label(EMOTION, answer, language).label == label


@pytest.mark.parametrize(
    ("answer", "language"),
    [
        ("joyful", "en"),
        ("joy and sadness", "en"),
        ("Freude", "es"),
        ("", "en"),
        ("I think it is fear.", "en"),
        ("- joy\n- fear", "en"),  # two list items: two labels, still invalid
        ("-joy", "en"),  # a marker is followed by a space
    ],
)
def test_anything_else_is_invalid_with_a_reason(answer: str, language: str) -> None:
    found = match_label(EMOTION, answer, language)
    assert found.label is None and found.reason


def test_normalisation_and_gold_labels() -> None:
    assert normalise_label("  «Überraschung»!  ") == "überraschung"
    assert gold_label(EMOTION, "Überraschung", "de") == "surprise"
    assert gold_label(EMOTION, "nostalgia", "en") is None


def test_rubrics_show_prints_labels_structure_and_an_example_prompt() -> None:
    from tests.conftest import run_cli

    shown = run_cli("rubrics", "show", "emotion-label", "--language", "de")
    assert shown.exit_code == 0 and "joy (Freude)" in shown.stdout and "- Traurigkeit" in shown.stdout
    inventory = run_cli("rubrics", "show", "social-style", "--language", "en")
    assert inventory.exit_code == 0, inventory.stderr
    assert "soc2: facet sociability, factor outgoing, reversed" in inventory.stdout
    assert "ord1: facet orderliness, factor (interstitial)" in inventory.stdout
    assert "She " in inventory.stdout or "He " in inventory.stdout
