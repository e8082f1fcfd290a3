"""Each rubric kind says what a human label of it may be (issue 28: kinds with behaviour, not
isinstance ladders in their callers): the choices the viewer's form offers, and the check the
form and `annotations import` share."""

from __future__ import annotations

import pytest

from jurybench.rubric import LabelRefused, load_rubric


def test_each_kind_offers_its_own_choices() -> None:
    assert load_rubric("story-quality").human_choices("coherence") == ["1", "2", "3", "4", "5"]
    assert load_rubric("persuasion").human_choices("logos") == ["-3", "-2", "-1", "0", "1", "2", "3"]
    preference = load_rubric("preference")
    # A person may call it a tie even where jurors must choose (allow_tie is the jurors' rule).
    assert not preference.allow_tie and preference.human_choices("preference") == ["A", "B", "tie"]
    emotion = load_rubric("emotion-label")
    assert emotion.human_choices("label") == [lb.name for lb in emotion.labels] and len(emotion.labels) >= 2


def test_each_kind_checks_a_label_its_own_way() -> None:
    quality = load_rubric("story-quality")
    assert quality.human_label("coherence", "4") == (4.0, "4")
    assert quality.human_label("coherence", "3.5", continuous=True) == (3.5, "3.5")
    for text, message in (
        ("6", "outside the rubric's scale 1..5"),
        ("3.5", "not a whole number"),
        ("x", "not a number"),
        ("inf", "not a finite number"),
    ):
        with pytest.raises(LabelRefused, match=message):
            quality.human_label("coherence", text)
    assert load_rubric("persuasion").human_label("logos", "-3") == (-3.0, "-3")
    preference = load_rubric("preference")
    assert preference.human_label("preference", "b") == (-1.0, "B")
    assert preference.human_label("preference", "1") == (1.0, "A")
    with pytest.raises(LabelRefused, match="'C' is not a preference"):
        preference.human_label("preference", "C")
    emotion = load_rubric("emotion-label")
    first = emotion.labels[0].name
    assert emotion.human_label("label", first.upper()) == (None, first)  # normalised to the canonical name
    with pytest.raises(LabelRefused, match="is not a label of rubric"):
        emotion.human_label("label", "no-such-feeling")
    assert quality.continuous_labels and not preference.continuous_labels and not emotion.continuous_labels
